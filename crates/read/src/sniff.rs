//! What a file holds, told by its first bytes ([`sniff`]): Parquet, an Arrow IPC journal, gpumon
//! CSV or an nvidia-smi CSV log; anything else is refused with why (nvidia-smi's other outputs, a
//! spreadsheet's separators, binary data).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::gpumon::csv::{header_name, parse_ts};
use crate::input::Kind;
use crate::smilog::{dmon, head_text, looks_like_nvsmi, table};
use gpumon_schema::catalog::Field;
use gpumon_util::{ReadError, ReadErrorKind, show};

/// Bytes read from the head of a file to tell its kind.
pub(crate) const SNIFF_BYTES: u64 = 64 * 1024;

/// The first bytes of `data` (the file named `name`); an error naming it when it cannot be read.
pub(crate) fn read_head(name: &Path, data: &Path) -> Result<Vec<u8>, ReadError> {
    let disp = show(name);
    let f = File::open(data).map_err(|e| {
        ReadError::new(ReadErrorKind::of_open(&e), disp.clone(), format_args!("cannot open: {e}"))
    })?;
    let mut head = Vec::new();
    f.take(SNIFF_BYTES).read_to_end(&mut head).map_err(|e| {
        ReadError::new(ReadErrorKind::Unreadable, disp.clone(), format_args!("cannot read: {e}"))
    })?;
    Ok(head)
}

/// Read the head of `data` (the file named `name`) and tell its kind; the error names the file.
pub(crate) fn sniff_file(name: &Path, data: &Path) -> Result<Kind, ReadError> {
    let head = read_head(name, data)?;
    sniff(&head).map_err(|why| ReadError::new(ReadErrorKind::Unsupported, show(name), why))
}

/// nvidia-smi's other outputs people log (`pmon`, `-q`), by their first lines: named in the error
/// instead of "no known header". (`dmon -o DT` logs and the default table are read: [`dmon`],
/// [`table`].)
fn other_nvidia_smi_output(head: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let words: Vec<&str> = first.trim_start_matches('#').split_whitespace().collect();
    if first.starts_with('#') && words.first() == Some(&"gpu") {
        return Some(if words.contains(&"pid") {
            "`nvidia-smi pmon` output"
        } else {
            "`nvidia-smi dmon` output"
        });
    }
    if text.contains("==============NVSMI LOG==============") {
        return Some("`nvidia-smi -q` output");
    }
    None
}

/// Kind of a file from its first bytes, or why it is not one gpumon reads.
pub(crate) fn sniff(head: &[u8]) -> std::result::Result<Kind, String> {
    if head.is_empty() {
        return Err("file is empty".into());
    }
    if head.starts_with(b"PAR1") {
        return Ok(Kind::Parquet);
    }
    if head.starts_with(&[0xFF, 0xFF, 0xFF, 0xFF]) {
        return Ok(Kind::Journal);
    }
    let gpumon_csv = looks_like_gpumon_csv(head);
    if gpumon_csv && rows_are_gpumon_csv(head) && !has_unknown_names(head) {
        return Ok(Kind::GpumonCsv);
    }
    if looks_like_nvsmi(head) {
        return Ok(Kind::Nvsmi);
    }
    let lead = head_text(&head[..head.len().min(8192)]);
    if dmon::is_dmon(&lead) {
        return dmon::without_time(&lead).map_or(Ok(Kind::Nvsmi), Err);
    }
    if table::is_table(&lead) {
        return Ok(Kind::Nvsmi);
    }
    if gpumon_csv {
        return Ok(Kind::GpumonCsv);
    }
    let text = head.iter().take(4096).all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || b >= 0x20);
    if head.iter().all(|&b| b == 0) {
        Err("holds only NUL bytes".into())
    } else if text {
        if let Some(what) = other_nvidia_smi_output(head) {
            return Err(format!(
                "this is {what}, which gpumon does not read; log with `nvidia-smi \
                 --query-gpu=timestamp,index,utilization.gpu,memory.used,power.draw --format=csv -l 1` \
                 (or record with `gpumon record`)"
            ));
        }
        // A spreadsheet's export (`;`) or a tab-separated file: say which separator it holds.
        let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
        let other = [(b';', "semicolons"), (b'\t', "tabs")]
            .into_iter()
            .find(|(c, _)| !first.contains(&b',') && first.contains(c));
        Err(match other {
            Some((_, sep)) => format!(
                "not a gpumon CSV/Parquet file or an nvidia-smi --format=csv log: its cells are separated \
                 by {sep}, not commas (a spreadsheet's export?); write it with commas (e.g. `tr` or \
                 the spreadsheet's CSV export) and read that"
            ),
            None => {
                "not a gpumon CSV/Parquet file or an nvidia-smi --format=csv log (no known header)"
                    .into()
            }
        })
    } else {
        Err("not a gpumon CSV/Parquet file or an nvidia-smi --format=csv log (binary data)".into())
    }
}

/// A gpumon CSV header: `,`-separated `name [unit]` cells with a `timestamp` and a known field.
fn looks_like_gpumon_csv(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let Some(line) = head.split(|&b| b == b'\n').next() else { return false };
    let Ok(line) = std::str::from_utf8(line) else { return false };
    let names: Vec<&str> =
        line.trim_end_matches('\r').split(',').map(|c| header_name(c.trim())).collect();
    names.contains(&"timestamp") && names.iter().filter(|n| Field::lookup(n).is_some()).count() >= 2
}

/// Under a gpumon CSV header, the first data row (if any) has no timestamp that only the log reader
/// reads: other writers' logs under the same kind of header (nvidia-smi's `YYYY/MM/DD` times, epoch
/// seconds, `date`'s format) are read as nvidia-smi logs; an unreadable one is gpumon CSV's to name.
fn rows_are_gpumon_csv(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split('\n').map(|l| l.trim_end_matches('\r'));
    let Some(header) = lines.next() else { return true };
    let Some(ts) = header.split(',').position(|c| header_name(c) == "timestamp") else {
        return true;
    };
    let Some(row) = lines.find(|l| !l.trim().is_empty()) else { return true };
    // Cells with units (`50 %`, `70.5 W`: nvidia-smi's, kept by a pandas round trip) are a log's.
    let units = row.split(',').any(|c| {
        let c = c.trim().trim_matches('"');
        c.split_once(' ').is_some_and(|(n, u)| {
            n.parse::<f64>().is_ok() && u.chars().all(|ch| ch.is_ascii_alphabetic() || ch == '%')
        })
    });
    let cell = row.split(',').nth(ts).unwrap_or("").trim().trim_matches('"');
    !units && (parse_ts(cell).is_some() || !crate::smilog::is_log_timestamp(cell))
}

/// A header with names gpumon does not know (`timestamp,gpu_index,temperature_C,power_W`; a
/// `progress.<name>` counter is one it knows): a
/// script's log, for the log reader, which names what it cannot use. (gpumon's own CSV, and what
/// pandas, polars or DuckDB write back of it, has none; pandas' unnamed index column is no name.)
fn has_unknown_names(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let Some(line) = head.split(|&b| b == b'\n').next() else { return false };
    let line = String::from_utf8_lossy(line);
    line.trim_end_matches('\r').split(',').map(header_name).any(|n| {
        !n.is_empty()
            && Field::lookup(n).is_none()
            && gpumon_schema::progress::column_key(n).is_none()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"PAR1xxxx"), Ok(Kind::Parquet));
        assert_eq!(
            sniff(b"timestamp,host,index,utilization.gpu [%]\n2026-01-01T00:00:00.000Z,h,0,5\n"),
            Ok(Kind::GpumonCsv)
        );
        assert_eq!(
            sniff(b"timestamp, utilization.gpu [%]\n2026/01/01 00:00:00.000, 5 %\n"),
            Ok(Kind::Nvsmi)
        );
        assert!(sniff(b"").unwrap_err().contains("empty"));
        assert!(sniff(b"a,b,c\n1,2,3\n").unwrap_err().contains("no known header"));
        assert!(
            sniff(b"timestamp;index\n2024;0\n").unwrap_err().contains("separated by semicolons")
        );
        assert!(sniff(b"timestamp\tindex\n2024\t0\n").unwrap_err().contains("separated by tabs"));
        let dmon = b"# gpu    pwr  gtemp  mtemp     sm\n# Idx      W      C      C      %\n    0     75     40      -     10\n";
        assert!(sniff(dmon).unwrap_err().contains("nvidia-smi dmon` output without its date"));
        let dated = b"#Date       Time        gpu    pwr\n#YYYYMMDD   HH:MM:SS    Idx      W\n 20240501   10:00:00      0     71\n";
        assert_eq!(sniff(dated), Ok(Kind::Nvsmi));
        let table = b"Wed May  1 10:00:00 2024\n+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n";
        assert_eq!(sniff(table), Ok(Kind::Nvsmi));
        let q =
            b"\n==============NVSMI LOG==============\n\nTimestamp : Wed May  1 10:00:00 2024\n";
        assert!(sniff(q).unwrap_err().contains("nvidia-smi -q"));
        assert!(sniff(&[0x00, 0x9f, 0x92, 0x96, 0x01]).unwrap_err().contains("binary"));
        assert_eq!(header_name("memory.used [MiB]"), "memory.used");
    }
}
