//! The control protocol of a recording, shared by the recorder's socket and `gpumon mark`: one
//! request line in, one reply line out. Requests are `mark LABEL`, `end` and `progress KEY=N ...`
//! (`schema::progress`); replies `ok ...` or
//! `error: WHY`. Lines and labels are bounded; anything else is rejected, never acted on.

/// The environment variable a wrapped job gets: the path of its recording's control socket.
pub const ENV: &str = "GPUMON_CONTROL";
/// Longest request line, newline included; longer ones are rejected and the connection closed.
pub const MAX_LINE: usize = 512;
/// Longest phase label, bytes.
pub(crate) const MAX_LABEL: usize = 200;

/// A request on the control socket.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Start the phase `LABEL` (free text, or `key=value` such as `bs=64`).
    Mark(String),
    /// Close the current phase: rows are unmarked (null phase) until the next mark.
    End,
    /// Add amounts to the job's work counters (`samples=512`), each key once.
    Progress(Vec<(String, f64)>),
}

impl Request {
    /// The request as a line for the socket, newline included.
    pub fn line(&self) -> String {
        match self {
            Request::Mark(l) => format!("mark {l}\n"),
            Request::End => "end\n".to_string(),
            Request::Progress(pairs) => crate::progress::request_line(pairs),
        }
    }
}

/// Why `label` cannot be a phase label, if it cannot: empty, too long, or with control characters.
pub fn check_label(label: &str) -> Result<(), String> {
    if label.trim().is_empty() {
        return Err("empty label".into());
    }
    if label.len() > MAX_LABEL {
        return Err(format!("label longer than {MAX_LABEL} bytes"));
    }
    // Bidirectional overrides would reorder the label (and the text after it) in every report.
    if label.chars().any(gpumon_util::is_unsafe) {
        return Err("label with control or bidirectional-override characters".into());
    }
    Ok(())
}

/// Parse one request line (without its newline); the error is the reply's reason.
pub fn parse(line: &[u8]) -> Result<Request, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|_| "not UTF-8".to_string())?;
    let (verb, rest) = text.split_once(' ').unwrap_or((text, ""));
    match verb {
        "mark" => {
            let label = rest.trim();
            check_label(label)?;
            Ok(Request::Mark(label.to_string()))
        }
        "end" if rest.trim().is_empty() => Ok(Request::End),
        "progress" => crate::progress::parse_request(rest).map(Request::Progress),
        _ => Err("unknown request; expected 'mark LABEL', 'end' or 'progress KEY=N'".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_garbage_is_rejected() {
        for r in [Request::Mark("bs=64".into()), Request::Mark("epoch 3 eval".into()), Request::End]
        {
            let line = r.line();
            assert_eq!(parse(line.trim_end_matches('\n').as_bytes()), Ok(r));
        }
        assert_eq!(parse(b"mark  bs=32 \r"), Ok(Request::Mark("bs=32".into())));
        for bad in [
            &b""[..],
            b"mark",
            b"mark   ",
            b"end now",
            b"MARK x",
            b"\xff\xfe",
            b"mark a\x07b",
            b"rm -rf /",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!(parse(format!("mark {}", "x".repeat(MAX_LABEL + 1)).as_bytes()).is_err());
        assert!(parse(format!("mark {}", "é".repeat(MAX_LABEL / 2)).as_bytes()).is_ok());
    }
}
