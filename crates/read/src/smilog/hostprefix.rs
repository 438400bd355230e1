//! Logs gathered by pdsh or clush (`pdsh -w node[1-8] nvidia-smi --query-gpu=... --format=csv`):
//! every line starts with the host that wrote it and `: `. Such a line is read as a `hostname`
//! column before nvidia-smi's cells, so one file of many hosts is a fleet.

use std::borrow::Cow;

use super::time::parse_stamp;

/// The host and the rest of a `host: cells` line; None for any other line.
pub(super) fn split(line: &str) -> Option<(&str, &str)> {
    let (host, rest) = line.trim_start().split_once(": ")?;
    let first = host.bytes().next()?;
    let host_like = host.len() <= 253
        && first.is_ascii_alphanumeric()
        && host.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    (host_like && rest.contains(',')).then_some((host, rest))
}

/// Whether the first lines of a log (its head) are all `host: cells` lines.
pub(crate) fn prefixed(head: &str) -> bool {
    let mut lines = head.lines().map(str::trim).filter(|l| !l.is_empty()).take(20).peekable();
    lines.peek().is_some() && lines.all(|l| split(l).is_some())
}

/// A line of such a log as the reader takes it: `host, cells` for a data row, `hostname, names`
/// for a header line; other lines unchanged.
pub(super) fn unprefix(line: &str) -> Cow<'_, str> {
    let Some((host, rest)) = split(line) else { return Cow::Borrowed(line) };
    let first = rest.split(',').next().unwrap_or("").trim();
    let data =
        parse_stamp(first).is_some() || first.parse::<f64>().is_ok() || first.starts_with('[');
    Cow::Owned(if data { format!("{host}, {rest}") } else { format!("hostname, {rest}") })
}

/// The head of a host-prefixed log with each line as the reader takes it.
pub(crate) fn unprefixed_head(head: &str) -> String {
    head.lines().map(|l| unprefix(l).into_owned() + "\n").collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdsh_lines_become_a_hostname_column() {
        let head = "node1: timestamp, index, utilization.gpu [%]\nnode1: 2024/05/01 10:00:00.123, 0, 50 %\n\
                    gpu-07.cluster: 2024/05/01 10:00:00.125, 0, 60 %\n";
        assert!(prefixed(head));
        let got = unprefixed_head(head);
        assert_eq!(
            got,
            "hostname, timestamp, index, utilization.gpu [%]\nnode1, 2024/05/01 10:00:00.123, 0, 50 %\n\
             gpu-07.cluster, 2024/05/01 10:00:00.125, 0, 60 %\n"
        );
        // nvidia-smi's own lines are not host-prefixed: ISO times have no `: `, dates have spaces.
        assert!(!prefixed("2024-05-01T10:00:00Z, 0, 50\n"));
        assert!(!prefixed("timestamp, index\n2024/05/01 10:00:00.123, 0\n"));
        assert!(!prefixed("# gpu: x, y\n"));
    }
}
