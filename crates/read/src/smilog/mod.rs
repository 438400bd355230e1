//! nvidia-smi `--query-gpu=… --format=csv` logs: sniffing, a streaming parser into catalogue rows, and GPU-count inference for logs that carry no index/uuid/pci.bus_id column.
//!
//! The parser reads line by line with bounded memory (one reused [`Row`], lines capped at
//! 64 KiB, at most ~1000 lines buffered while the GPU count of an interleaved log is inferred).
//! It copes with what real logs contain: `[N/A]` / `[Not Supported]` cells, values with and
//! without units, the timestamp column anywhere, headerless logs (`--columns`), repeated or
//! changed header lines (appended runs), a header before every row, a cut last line and the
//! NUL bytes a killed logger leaves behind; and with what other people's scripts write around
//! nvidia-smi: plain or padded or quoted cells, headers of their own names (`--columns` names them),
//! a time column of their own in front, epoch / ISO 8601 / `date` times, `date` lines between
//! samples, an index column that does not tell the GPUs apart.

mod cells;
pub(crate) mod dmon;
mod header;
pub(crate) mod hostprefix;
mod interleave;
mod lines;
mod machine;
#[cfg(test)]
mod shapes;
pub(crate) mod table;
#[cfg(test)]
mod tests;
mod time;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use cells::has_timestamp_cell;
use gpumon_schema::Row;
use header::parse_header;
use lines::{LineReader, Pending};
use machine::{Parser, Step};

/// Lines buffered to infer the GPU count of an interleaved log.
const INFER_LINES: usize = 1024;
/// Bytes buffered at most for the inference.
const INFER_BYTES: usize = 8 * 1024 * 1024;
/// Cap on the number of warning / note messages.
const MAX_MESSAGES: usize = 100;

/// How to read an nvidia-smi log.
#[derive(Debug, Clone, Default)]
pub struct NvsmiOptions {
    /// Column names when the file has no header (`--columns`), in order, nvidia-smi names.
    pub columns: Option<Vec<String>>,
    /// Number of GPUs interleaved when there is no index/uuid/pci.bus_id column; None = infer.
    pub gpus: Option<usize>,
    /// Zone of the log's local timestamps; None = the machine's local zone.
    pub tz: Option<gpumon_util::NamedZone>,
}

/// One data row of the log, handed to the caller's callback.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NvsmiRow<'a> {
    /// The row's own timestamp, converted from the log's local time to UTC.
    pub ts: DateTime<Utc>,
    /// Values by catalogue field; `Field::Index` is set to `gpu`, `Field::Timestamp` is not set.
    pub row: &'a Row,
    /// The timestamp named an instant (an offset, `Z`, epoch time), not a wall-clock time in the
    /// log's zone: no `--tz` applies to it.
    pub instant: bool,
}

/// What [`read_nvsmi_file`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SmiLogInfo {
    /// Data rows handed to the callback.
    pub rows: u64,
    /// Distinct GPUs among those rows.
    pub gpus: usize,
    /// Problems with the file (skipped lines, unreadable cells, NUL bytes, a cut last line).
    pub warnings: Vec<String>,
    /// Recognised columns, canonical names, in order of first appearance.
    pub columns: Vec<String>,
    /// Columns not in the catalogue (as written in the header), ignored.
    pub ignored_columns: Vec<String>,
    /// Information that is not a problem: how the GPU count was decided, repeated headers.
    pub notes: Vec<String>,
    /// How rows were told apart by GPU: `the index column`, `the uuid column`, `interleaving`.
    pub gpus_by: String,
}

/// Cheap sniff: does this look like an nvidia-smi CSV log (or a log of the same shape another
/// script wrote)?
///
/// True when one of the first lines is a header of nvidia-smi query names (at least one name
/// known, e.g. `timestamp`; whitespace around the commas does not matter), or a headerless data
/// line one of whose cells is a timestamp gpumon reads (nvidia-smi's, ISO 8601, epoch seconds or
/// milliseconds, `date`'s), or `date` lines among comma-separated rows. gpumon's own CSV is told apart before this is asked (its rows carry
/// RFC 3339 timestamps).
pub(crate) fn looks_like_nvsmi(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xFF\xFE").unwrap_or(head);
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let text = String::from_utf8_lossy(head);
    // pdsh/clush output: the lines without their `host: ` prefix are what is judged.
    let text: Cow<'_, str> = if hostprefix::prefixed(&text) {
        Cow::Owned(hostprefix::unprefixed_head(&text))
    } else {
        text
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let n = lines.len();
    let (mut rows, mut dates) = (false, false);
    for (i, line) in lines.iter().enumerate().take(20) {
        // The last piece of a head without a final newline may be cut; use it only when alone.
        if i + 1 == n && n > 1 {
            break;
        }
        let clean: Cow<'_, str> = if line.contains('\0') {
            Cow::Owned(line.replace('\0', ""))
        } else {
            Cow::Borrowed(line)
        };
        let l = clean.trim();
        if l.is_empty() {
            continue;
        }
        if parse_header(l).is_some() {
            return true;
        }
        if l.contains(',') {
            if has_timestamp_cell(l) {
                return true;
            }
            rows = true;
        } else if time::parse_stamp(l).is_some() {
            // A `date` line before each sample of rows without a timestamp of their own.
            dates = true;
        }
        if rows && dates {
            return true;
        }
    }
    false
}

/// The text of a log's first bytes, as the line reader will see it: without a UTF-8 or UTF-16LE
/// byte order mark, and without the NUL bytes that UTF-16 (PowerShell 5's `>`) puts between ASCII
/// characters.
pub(crate) fn head_text(head: &[u8]) -> String {
    let utf16 = head.starts_with(b"\xFF\xFE");
    let b = head.strip_prefix(b"\xFF\xFE").unwrap_or(head);
    let b = b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b);
    if utf16 {
        let ascii: Vec<u8> = b.iter().copied().filter(|&c| c != 0).collect();
        String::from_utf8_lossy(&ascii).into_owned()
    } else {
        String::from_utf8_lossy(b).into_owned()
    }
}

/// Whether `cell` is a timestamp the log reader reads (nvidia-smi's, ISO 8601, epoch, `date`'s).
pub(crate) fn is_log_timestamp(cell: &str) -> bool {
    time::parse_stamp(cell).is_some()
}

/// Parse `path`, calling `on_row` for each data row in file order.
///
/// Errors (file name in the message): unreadable file, empty file, data without a header
/// and no `--columns`, no data rows.
#[cfg(test)]
pub(crate) fn read_nvsmi(
    path: &Path,
    opts: &NvsmiOptions,
    on_row: &mut dyn FnMut(NvsmiRow<'_>),
) -> Result<SmiLogInfo> {
    let file =
        File::open(path).with_context(|| format!("cannot open {}", gpumon_util::show(path)))?;
    read_nvsmi_file(path, file, opts, on_row)
}

/// Parse the log `file` (named `name` in messages), calling `on_row` for each data row in file order.
pub(crate) fn read_nvsmi_file(
    name: &Path,
    file: File,
    opts: &NvsmiOptions,
    on_row: &mut dyn FnMut(NvsmiRow<'_>),
) -> Result<SmiLogInfo> {
    let disp = gpumon_util::show(name);
    let (file, head) = head_of(file).with_context(|| format!("cannot read {disp}"))?;
    let (prefixed, dmon) = (hostprefix::prefixed(&head), dmon::is_dmon(&head));
    let mut table = table::is_table(&head).then(table::TableLog::default);
    if let Some(why) = dmon.then(|| dmon::without_time(&head)).flatten() {
        anyhow::bail!("{disp}: {why}");
    }
    // pdsh/clush output: a `hostname` column stands for each line's `host: ` prefix, also in
    // the `--columns` a user names for nvidia-smi's own cells.
    let mut opts = opts.clone();
    if prefixed
        && let Some(cols) = opts.columns.as_mut()
        && !cols.first().is_some_and(|c| c.trim().starts_with("hostname"))
    {
        cols.insert(0, "hostname".into());
    }
    let opts = &opts;
    let mut lines = LineReader::new(BufReader::with_capacity(1 << 16, file));
    let mut p = Parser::new(disp.clone(), opts)?;
    let mut pending: VecDeque<Pending> = VecDeque::new();
    let mut pending_bytes = 0usize;
    let mut buffering = false;

    while let Some(info) = lines.next_line().with_context(|| format!("cannot read {disp}"))? {
        if info.overlong {
            p.overlong(info.no);
            continue;
        }
        if buffering {
            let text = lines.text();
            let text =
                if prefixed { hostprefix::unprefix(&text).into_owned() } else { text.into_owned() };
            let text = if dmon { dmon::as_csv(&text).into_owned() } else { text };
            let text = if let Some(t) = table.as_mut() { t.line(&text) } else { text };
            pending_bytes += text.len();
            pending.push_back(Pending { no: info.no, text, terminated: info.terminated });
            if pending.len() >= INFER_LINES || pending_bytes >= INFER_BYTES {
                p.resolve_gpus(&pending, false);
                p.replay(&mut pending, on_row)?;
                pending_bytes = 0;
                buffering = false;
            }
            continue;
        }
        let text = lines.text();
        let text =
            if prefixed { Cow::Owned(hostprefix::unprefix(&text).into_owned()) } else { text };
        let text = if dmon { Cow::Owned(dmon::as_csv(&text).into_owned()) } else { text };
        let text = if let Some(t) = table.as_mut() { Cow::Owned(t.line(&text)) } else { text };
        if let Step::NeedGpus = p.process(info.no, &text, info.terminated, on_row)? {
            buffering = true;
            let text = text.into_owned();
            pending_bytes = text.len();
            pending.push_back(Pending { no: info.no, text, terminated: info.terminated });
        }
    }
    if buffering {
        p.resolve_gpus(&pending, true);
        p.replay(&mut pending, on_row)?;
    }
    p.finish(&lines)
}

/// The log's first 64 KiB, to tell its shape (lines prefixed `host: ` by pdsh/clush, `nvidia-smi
/// dmon` output); the file is given back at its start.
fn head_of(mut file: File) -> std::io::Result<(File, String)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut head = Vec::new();
    (&mut file).take(64 << 10).read_to_end(&mut head)?;
    file.seek(SeekFrom::Start(0))?;
    Ok((file, head_text(&head)))
}

/// Add a warning or note unless there are too many already.
fn push_capped(v: &mut Vec<String>, msg: String) {
    if v.len() < MAX_MESSAGES {
        v.push(msg);
    }
}
