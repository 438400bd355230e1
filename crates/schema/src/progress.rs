//! Work counters a job reports (`gpumon progress samples=512`): the key and amount forms, the
//! `progress` request of the control protocol, and the `progress.KEY` column names. Counters are
//! declared when the recording starts (`record --progress samples,tokens`), so every piece of a
//! recording has the same columns; an undeclared key is refused, never added mid-run.

/// Most counters one recording declares (and most keys one request names).
pub const MAX_KEYS: usize = 64;
/// Longest key, bytes.
pub(crate) const MAX_KEY: usize = 64;
/// The prefix of a counter's column: `progress.samples`.
pub const PREFIX: &str = "progress.";

/// Why `key` cannot name a counter, if it cannot: `[a-z_]+`, at most [`MAX_KEY`] bytes.
pub fn check_key(key: &str) -> Result<(), String> {
    if key.is_empty()
        || key.len() > MAX_KEY
        || !key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    {
        return Err(format!(
            "bad counter name '{}': expected [a-z_]+ of at most {MAX_KEY} bytes",
            show(key)
        ));
    }
    Ok(())
}

/// A key as shown in a message: cut short, control characters escaped.
fn show(key: &str) -> String {
    key.chars().take(MAX_KEY + 1).flat_map(char::escape_debug).collect()
}

/// Parse one `KEY=N`: N a finite, non-negative number (`512`, `0.5`, `1e3`).
pub(crate) fn parse_pair(s: &str) -> Result<(String, f64), String> {
    let Some((k, n)) = s.split_once('=') else {
        return Err(format!("'{}': expected KEY=N, e.g. samples=512", show(s)));
    };
    check_key(k)?;
    let v: f64 = n.trim().parse().map_err(|_| format!("{k}={}: N is not a number", show(n)))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{k}={}: N must be a finite number of at least 0", show(n)));
    }
    Ok((k.to_string(), v))
}

/// Parse the pairs of a request or command line: at least one, at most [`MAX_KEYS`]; a key named
/// twice adds up.
pub fn parse_pairs<'a>(
    items: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<(String, f64)>, String> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for item in items {
        let (k, v) = parse_pair(item)?;
        let full = out.len() >= MAX_KEYS;
        match out.iter_mut().find(|(x, _)| *x == k) {
            Some((_, sum)) => *sum += v,
            None if full => return Err(format!("more than {MAX_KEYS} counters in one request")),
            None => out.push((k, v)),
        }
    }
    if out.is_empty() {
        return Err("no counter given; expected KEY=N, e.g. samples=512".into());
    }
    Ok(out)
}

/// Parse the list of `record --progress`: keys separated by commas, each once, at most [`MAX_KEYS`].
pub fn parse_declared(list: &[String]) -> Result<Vec<String>, String> {
    let mut keys: Vec<String> = Vec::new();
    for k in list.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|k| !k.is_empty()) {
        check_key(k)?;
        if !keys.iter().any(|x| x == k) {
            keys.push(k.to_string());
        }
    }
    if keys.len() > MAX_KEYS {
        return Err(format!("{} counters declared; at most {MAX_KEYS}", keys.len()));
    }
    Ok(keys)
}

/// The request line's words after `progress` (`samples=512 tokens=9000`).
pub(crate) fn parse_request(rest: &str) -> Result<Vec<(String, f64)>, String> {
    parse_pairs(rest.split_ascii_whitespace())
}

/// The request as a line for the socket, newline included.
pub(crate) fn request_line(pairs: &[(String, f64)]) -> String {
    let words: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("progress {}\n", words.join(" "))
}

/// The counter a column holds, if it is a counter column (`progress.samples` -> `samples`).
pub fn column_key(name: &str) -> Option<&str> {
    name.strip_prefix(PREFIX).filter(|k| check_key(k).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_parse_and_bad_ones_say_why() {
        assert_eq!(
            parse_request("samples=512 tokens=1e3 samples=0.5").unwrap(),
            [("samples".to_string(), 512.5), ("tokens".to_string(), 1000.0)]
        );
        for (bad, why) in [
            ("samples=-1", "at least 0"),
            ("samples=abc", "not a number"),
            ("samples=inf", "finite"),
            ("Samples=1", "[a-z_]+"),
            ("sam-ples=1", "[a-z_]+"),
            ("samples", "KEY=N"),
            ("", "no counter"),
        ] {
            let e = parse_request(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let letter = |i: usize| char::from(b'a' + (i % 26) as u8);
        let many: Vec<String> =
            (0..=MAX_KEYS).map(|i| format!("k{}{}=1", letter(i / 26), letter(i))).collect();
        assert!(parse_pairs(many.iter().map(String::as_str)).unwrap_err().contains("more than"));
        let line = request_line(&parse_request("samples=512 tokens=0.25").unwrap());
        assert_eq!(line, "progress samples=512 tokens=0.25\n");
        assert_eq!(column_key("progress.samples"), Some("samples"));
        assert_eq!(column_key("progress.Bad"), None);
        assert_eq!(
            parse_declared(&["samples, tokens".into(), "samples".into()]).unwrap(),
            ["samples", "tokens"]
        );
        assert!(parse_declared(&["x-y".into()]).is_err());
    }
}
