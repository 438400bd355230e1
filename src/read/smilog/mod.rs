//! nvidia-smi `--query-gpu=… --format=csv` logs: sniffing, a streaming parser into catalogue rows, and GPU-count inference for logs that carry no index/uuid/pci.bus_id column.
//!
//! The parser reads line by line with bounded memory (one reused [`Row`], lines capped at
//! 64 KiB, at most ~1000 lines buffered while the GPU count of an interleaved log is inferred).
//! It copes with what real logs contain: `[N/A]` / `[Not Supported]` cells, values with and
//! without units, the timestamp column anywhere, headerless logs (`--columns`), repeated or
//! changed header lines (appended runs), a header before every row, a cut last line and the
//! NUL bytes a killed logger leaves behind.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, MappedLocalTime, NaiveDate, NaiveDateTime, Offset, TimeDelta, TimeZone, Timelike, Utc};

use crate::schema::catalog::{FIELD_COUNT, Field, Ty};
use crate::schema::row::{Row, Value};

/// Longest line kept; longer lines are skipped (an nvidia-smi row with every field is ~2 KiB).
const MAX_LINE: usize = 64 * 1024;
/// Lines buffered to infer the GPU count of an interleaved log.
const INFER_LINES: usize = 1024;
/// Bytes buffered at most for the inference.
const INFER_BYTES: usize = 8 * 1024 * 1024;
/// Largest GPU count the inference considers.
const MAX_K: usize = 64;
/// Largest GPU number accepted (index column, distinct uuids, `--gpus`).
const MAX_GPUS: usize = 65_536;
/// Cap on the number of warning / note messages.
const MAX_MESSAGES: usize = 100;
/// Cap on the number of distinct ignored column names remembered.
const MAX_IGNORED: usize = 256;

/// How to read an nvidia-smi log.
#[derive(Debug, Clone, Default)]
pub struct NvsmiOptions {
    /// Column names when the file has no header (`--columns`), in order, nvidia-smi names.
    pub columns: Option<Vec<String>>,
    /// Number of GPUs interleaved when there is no index/uuid/pci.bus_id column; None = infer.
    pub gpus: Option<usize>,
    /// Zone of the log's local timestamps; None = the machine's local zone.
    pub tz: Option<chrono_tz::Tz>,
}

/// One data row of the log, handed to the caller's callback.
#[derive(Debug, Clone, Copy)]
pub struct NvsmiRow<'a> {
    /// The row's own timestamp, converted from the log's local time to UTC.
    pub ts: DateTime<Utc>,
    /// Values by catalogue field; `Field::Index` is set to `gpu`, `Field::Timestamp` is not set.
    pub row: &'a Row,
}

/// What [`read_nvsmi`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadReport {
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
}

/// Cheap sniff: does this look like an nvidia-smi CSV log?
///
/// True when one of the first lines is a header of nvidia-smi query names separated by `", "`
/// (at least one name known, e.g. `timestamp`), or a headerless data line of `", "`-separated
/// cells one of which is a `YYYY/MM/DD HH:MM:SS.mmm` timestamp. gpumon's own CSV (`,` without
/// a space, RFC 3339 timestamps) does not match.
pub fn looks_like_nvsmi(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let text = String::from_utf8_lossy(head);
    let lines: Vec<&str> = text.split('\n').collect();
    let n = lines.len();
    for (i, line) in lines.iter().enumerate().take(20) {
        // The last piece of a head without a final newline may be cut; use it only when alone.
        if i + 1 == n && n > 1 {
            break;
        }
        let clean: Cow<'_, str> =
            if line.contains('\0') { Cow::Owned(line.replace('\0', "")) } else { Cow::Borrowed(line) };
        let l = clean.trim();
        if l.is_empty() {
            continue;
        }
        if !comma_space_separated(l) {
            continue;
        }
        if parse_header(l).is_some() {
            return true;
        }
        if l.split(',').any(|c| is_nvsmi_timestamp(c.trim())) {
            return true;
        }
    }
    false
}

/// Parse `path`, calling `on_row` for each data row in file order.
///
/// Errors (file name in the message): unreadable file, empty file, data without a header
/// and no `--columns`, no data rows.
pub fn read_nvsmi(path: &Path, opts: &NvsmiOptions, on_row: &mut dyn FnMut(NvsmiRow<'_>)) -> Result<ReadReport> {
    let disp = path.display().to_string();
    let file = File::open(path).with_context(|| format!("cannot open {disp}"))?;
    let mut lines = LineReader::new(BufReader::with_capacity(1 << 16, file));
    let mut p = Parser::new(disp.clone(), opts)?;
    let mut pending: VecDeque<Pending> = VecDeque::new();
    let mut pending_bytes = 0usize;
    let mut buffering = false;

    while let Some(info) = lines.next_line().with_context(|| format!("cannot read {disp}"))? {
        if info.overlong {
            p.tally.overlong.bump(info.no);
            continue;
        }
        if buffering {
            let text = lines.text().into_owned();
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

// ---------------------------------------------------------------------------------------------
// Line reading

/// Reads `\n`-terminated lines with bounded memory, dropping NUL bytes and a trailing `\r`.
struct LineReader<R> {
    r: R,
    buf: Vec<u8>,
    no: u64,
    bytes: u64,
    /// NUL bytes removed from inside the file (not the trailing run).
    inner_nuls: u64,
    inner_nul_lines: u64,
    first_nul_line: u64,
    /// NUL bytes at the very end of the file.
    trailing_nuls: u64,
}

struct LineInfo {
    no: u64,
    terminated: bool,
    overlong: bool,
}

impl<R: BufRead> LineReader<R> {
    fn new(r: R) -> Self {
        LineReader {
            r,
            buf: Vec::new(),
            no: 0,
            bytes: 0,
            inner_nuls: 0,
            inner_nul_lines: 0,
            first_nul_line: 0,
            trailing_nuls: 0,
        }
    }

    fn next_line(&mut self) -> io::Result<Option<LineInfo>> {
        self.buf.clear();
        let mut any = false;
        let mut nuls = 0u64;
        let mut trailing = 0u64;
        let mut overlong = false;
        let terminated = loop {
            let chunk = match self.r.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break false;
            }
            any = true;
            let (part, nl) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], true),
                None => (chunk, false),
            };
            if part.contains(&0) {
                for &b in part {
                    if b == 0 {
                        nuls += 1;
                        trailing += 1;
                    } else {
                        trailing = 0;
                        if self.buf.len() < MAX_LINE {
                            self.buf.push(b);
                        } else {
                            overlong = true;
                        }
                    }
                }
            } else if !part.is_empty() {
                trailing = 0;
                let room = MAX_LINE.saturating_sub(self.buf.len());
                if part.len() > room {
                    overlong = true;
                }
                self.buf.extend_from_slice(&part[..part.len().min(room)]);
            }
            let used = part.len() + usize::from(nl);
            self.bytes += used as u64;
            self.r.consume(used);
            if nl {
                break true;
            }
        };
        if !any {
            return Ok(None);
        }
        self.no += 1;
        if !terminated && trailing > 0 {
            self.trailing_nuls = trailing;
            nuls -= trailing;
        }
        if nuls > 0 {
            self.inner_nuls += nuls;
            self.inner_nul_lines += 1;
            if self.first_nul_line == 0 {
                self.first_nul_line = self.no;
            }
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Some(LineInfo { no: self.no, terminated, overlong }))
    }

    /// Text of the line last returned by `next_line`.
    fn text(&self) -> Cow<'_, str> {
        let b = if self.no == 1 { self.buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&self.buf) } else { &self.buf };
        String::from_utf8_lossy(b)
    }
}

/// A line held back while the GPU count is inferred.
struct Pending {
    no: u64,
    text: String,
    terminated: bool,
}

// ---------------------------------------------------------------------------------------------
// Header / layout

#[derive(Debug, Clone, Copy, PartialEq)]
enum ColKind {
    Ts,
    Field(Field),
    Ignored,
}

#[derive(Debug, Clone)]
struct Col {
    kind: ColKind,
    /// Name as written (without the unit).
    name: String,
    /// Unit from the header (`[MiB]`), used for cells written without one (`nounits`).
    unit: Option<String>,
}

/// How rows are assigned to GPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ident {
    /// An `index` column.
    Index(usize),
    /// A `uuid` or `pci.bus_id` column: GPUs numbered in order of first appearance.
    Key(usize),
    /// Neither: GPUs are interleaved in a fixed order within each tick.
    Interleaved,
}

#[derive(Debug, Clone)]
struct Layout {
    /// Header cells as written (trimmed), to recognise a repeated header.
    header: Vec<String>,
    cols: Vec<Col>,
    ts_col: Option<usize>,
    ident: Ident,
}

impl Layout {
    fn from_names(names: &[(String, Option<String>)], header: Vec<String>) -> Layout {
        let mut cols = Vec::with_capacity(names.len());
        let mut ts_col = None;
        for (i, (name, unit)) in names.iter().enumerate() {
            let kind = match Field::lookup(name) {
                Some(Field::Timestamp) if ts_col.is_none() => {
                    ts_col = Some(i);
                    ColKind::Ts
                }
                Some(Field::Timestamp) | None => ColKind::Ignored,
                Some(f) => ColKind::Field(f),
            };
            cols.push(Col { kind, name: name.clone(), unit: unit.clone() });
        }
        let find = |f: Field| cols.iter().position(|c| c.kind == ColKind::Field(f));
        let ident = if let Some(i) = find(Field::Index) {
            Ident::Index(i)
        } else if let Some(i) = find(Field::Uuid).or_else(|| find(Field::PciBusId)) {
            Ident::Key(i)
        } else {
            Ident::Interleaved
        };
        Layout { header, cols, ts_col, ident }
    }
}

/// `name [unit]` → (`name`, Some(`unit`)); plain `name` → (`name`, None).
fn split_name_unit(cell: &str) -> (&str, Option<&str>) {
    if let Some(body) = cell.strip_suffix(']')
        && let Some((name, unit)) = body.rsplit_once('[')
        && !unit.contains(']')
    {
        let unit = unit.trim();
        return (name.trim(), (!unit.is_empty()).then_some(unit));
    }
    (cell, None)
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 128
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// A header line: every cell an nvidia-smi style query name (optionally `[unit]`), at least one known.
fn parse_header(line: &str) -> Option<Layout> {
    let mut names = Vec::new();
    let mut header = Vec::new();
    let mut known = false;
    for cell in line.split(',') {
        let cell = cell.trim();
        let (name, unit) = split_name_unit(cell);
        if !valid_name(name) {
            return None;
        }
        known |= Field::lookup(name).is_some();
        names.push((name.to_string(), unit.map(str::to_string)));
        header.push(cell.to_string());
    }
    known.then(|| Layout::from_names(&names, header))
}

fn comma_space_separated(line: &str) -> bool {
    line.split(',').skip(1).all(|c| c.starts_with(' '))
}

// ---------------------------------------------------------------------------------------------
// Timestamps

/// `YYYY/MM/DD HH:MM:SS[.fff]` (also `-` date separators and a `T`) as a naive local time.
fn parse_naive(s: &str) -> Option<NaiveDateTime> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<u32> {
        let mut v = 0u32;
        for &c in b.get(from..to)? {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + u32::from(c - b'0');
        }
        Some(v)
    };
    let sep = b[4];
    if !(sep == b'/' || sep == b'-')
        || b[7] != sep
        || !(b[10] == b' ' || b[10] == b'T')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    let rest = &b[19..];
    let nanos = match rest {
        [] => 0,
        [b'.', digits @ ..] if !digits.is_empty() && digits.len() <= 9 => {
            let mut v = 0u32;
            for &c in digits {
                if !c.is_ascii_digit() {
                    return None;
                }
                v = v * 10 + u32::from(c - b'0');
            }
            v * 10u32.pow(9 - digits.len() as u32)
        }
        _ => return None,
    };
    NaiveDate::from_ymd_opt(y as i32, mo, d)?.and_hms_nano_opt(h, mi, sec, nanos)
}

/// Exactly nvidia-smi's format, `YYYY/MM/DD HH:MM:SS.mmm` (used by the sniff).
fn is_nvsmi_timestamp(s: &str) -> bool {
    s.len() == 23 && s.as_bytes()[4] == b'/' && s.as_bytes()[19] == b'.' && parse_naive(s).is_some()
}

fn has_timestamp_cell(line: &str) -> bool {
    line.split(',').any(|c| parse_naive(c.trim()).is_some())
}

enum Zone {
    Named(chrono_tz::Tz),
    Local,
}

/// Local → UTC conversion with a one-hour cache of the offset (logs are in time order).
struct ZoneCache {
    zone: Zone,
    hour: Option<NaiveDateTime>,
    off: i64,
}

/// Offset (seconds east of UTC) of the earliest instant `n` names, and whether it is unambiguous.
fn offset_in<Z: TimeZone>(z: &Z, n: &NaiveDateTime) -> (Option<i64>, bool) {
    match z.from_local_datetime(n) {
        MappedLocalTime::Single(d) => (Some(i64::from(d.offset().fix().local_minus_utc())), true),
        MappedLocalTime::Ambiguous(a, _) => (Some(i64::from(a.offset().fix().local_minus_utc())), false),
        MappedLocalTime::None => (None, false),
    }
}

fn shift(n: NaiveDateTime, off: i64) -> Option<DateTime<Utc>> {
    Some(n.checked_sub_signed(TimeDelta::try_seconds(off)?)?.and_utc())
}

impl ZoneCache {
    fn new(tz: Option<chrono_tz::Tz>) -> Self {
        ZoneCache { zone: tz.map_or(Zone::Local, Zone::Named), hour: None, off: 0 }
    }

    fn offset(&self, n: &NaiveDateTime) -> (Option<i64>, bool) {
        match &self.zone {
            Zone::Named(tz) => offset_in(tz, n),
            Zone::Local => offset_in(&chrono::Local, n),
        }
    }

    /// UTC instant of a local time; DST ambiguity takes the earliest; a time in a DST gap is
    /// read with the offset from before the gap (the flag says so).
    fn utc_of(&mut self, n: NaiveDateTime) -> Option<(DateTime<Utc>, bool)> {
        let hour = n.date().and_hms_opt(n.hour(), 0, 0)?;
        if self.hour == Some(hour) {
            return Some((shift(n, self.off)?, false));
        }
        let end = hour.checked_add_signed(TimeDelta::milliseconds(3_599_999))?;
        if let ((Some(a), true), (Some(b), true)) = (self.offset(&hour), self.offset(&end))
            && a == b
        {
            self.hour = Some(hour);
            self.off = a;
            return Some((shift(n, a)?, false));
        }
        self.hour = None;
        match self.offset(&n) {
            (Some(o), _) => Some((shift(n, o)?, false)),
            (None, _) => {
                // In a spring-forward gap: the logger's clock had not moved on yet.
                let before = n.checked_sub_signed(TimeDelta::hours(1))?;
                let o = self.offset(&before).0?;
                Some((shift(n, o)?, true))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Cell values

fn is_missing_marker(cell: &str) -> bool {
    cell.is_empty() || (cell.starts_with('[') && cell.ends_with(']')) || cell.eq_ignore_ascii_case("N/A")
}

fn marker_value(cell: &str) -> Value {
    if cell.eq_ignore_ascii_case("[Not Supported]") { Value::Unsupported } else { Value::Null }
}

/// Factor that converts a value in unit `from` to the catalogue unit `to`.
fn unit_factor(from: &str, to: &str) -> Option<f64> {
    if from == to {
        return Some(1.0);
    }
    let f = match (to, from) {
        ("MiB", "KiB" | "KB" | "kB") => 1.0 / 1024.0,
        ("MiB", "MB" | "mib") => 1.0,
        ("MiB", "GiB" | "GB") => 1024.0,
        ("MiB", "TiB" | "TB") => 1024.0 * 1024.0,
        ("MiB", "B") => 1.0 / (1024.0 * 1024.0),
        ("W", "mW") => 1e-3,
        ("W", "kW") => 1e3,
        ("MHz", "kHz" | "KHz") => 1e-3,
        ("MHz", "GHz") => 1e3,
        ("MHz", "Hz") => 1e-6,
        ("J", "mJ") => 1e-3,
        ("J", "kJ") => 1e3,
        ("KiB/s", "KB/s" | "kB/s") => 1.0,
        ("KiB/s", "MiB/s" | "MB/s") => 1024.0,
        ("KiB/s", "GiB/s" | "GB/s") => 1024.0 * 1024.0,
        ("KiB/s", "B/s") => 1.0 / 1024.0,
        ("C", "°C" | "degC" | "C°") => 1.0,
        _ => return None,
    };
    Some(f)
}

/// `45 %` → (`45`, Some(`%`)); `45%` → same; `0x01` / `45` → (cell, None).
fn split_number_unit(cell: &str) -> (&str, Option<&str>) {
    if let Some((num, unit)) = cell.split_once(' ') {
        let unit = unit.trim();
        return (num, (!unit.is_empty()).then_some(unit));
    }
    if cell.starts_with("0x") || cell.starts_with("0X") {
        return (cell, None);
    }
    match cell.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E'))) {
        Some(i) if i > 0 => (&cell[..i], Some(&cell[i..])),
        _ => (cell, None),
    }
}

/// Typed value of a numeric cell (not a missing marker) for field `f`.
fn numeric_value(f: Field, header_unit: Option<&str>, cell: &str) -> Option<Value> {
    let def = f.def();
    let (num, unit) = split_number_unit(cell);
    let factor = match unit.or(header_unit) {
        None => 1.0,
        Some(u) => unit_factor(u, def.unit)?,
    };
    let max = match def.ty {
        Ty::I16 => u64::from(u8::MAX),
        Ty::Bool => 1,
        Ty::I32 => u64::from(u32::MAX),
        Ty::I64 => u64::MAX,
        Ty::F64 => {
            let x: f64 = num.parse().ok()?;
            let y = x * factor;
            return y.is_finite().then_some(Value::F(y));
        }
        Ty::Str | Ty::Timestamp => return None,
    };
    if let Some(hex) = num.strip_prefix("0x").or_else(|| num.strip_prefix("0X")) {
        let v = u64::from_str_radix(hex, 16).ok()?;
        return (v <= max).then_some(Value::U(v));
    }
    if factor == 1.0
        && let Ok(v) = num.parse::<u64>()
    {
        return (v <= max).then_some(Value::U(v));
    }
    let x: f64 = num.parse().ok()?;
    let y = (x * factor).round();
    (y.is_finite() && y >= 0.0 && y <= max as f64).then_some(Value::U(y as u64))
}

/// Whether a cell can be read for column `col` (used to tell a cut last line).
fn cell_ok(col: &Col, cell: &str) -> bool {
    match col.kind {
        ColKind::Ts => parse_naive(cell).is_some(),
        ColKind::Field(f) => {
            if cell.is_empty() {
                return false;
            }
            if is_missing_marker(cell) || matches!(f.def().ty, Ty::Str | Ty::Timestamp) || f == Field::Index {
                return true;
            }
            numeric_value(f, col.unit.as_deref(), cell).is_some()
        }
        ColKind::Ignored => !cell.is_empty(),
    }
}

/// Cell conversion with a per-column string cache and one warning per field.
struct Conv {
    cache: Vec<Option<Arc<str>>>,
    warned: [bool; FIELD_COUNT],
    warnings: Vec<String>,
}

impl Conv {
    fn value(&mut self, i: usize, col: &Col, f: Field, cell: &str, line: u64) -> Value {
        if is_missing_marker(cell) {
            return marker_value(cell);
        }
        match f.def().ty {
            Ty::Str | Ty::Timestamp => {
                if let Some(Some(s)) = self.cache.get(i)
                    && &**s == cell
                {
                    return Value::S(s.clone());
                }
                let s: Arc<str> = Arc::from(cell);
                if let Some(slot) = self.cache.get_mut(i) {
                    *slot = Some(s.clone());
                }
                Value::S(s)
            }
            _ => match numeric_value(f, col.unit.as_deref(), cell) {
                Some(v) => v,
                None => {
                    if !self.warned[f as usize] {
                        self.warned[f as usize] = true;
                        let shown: String = cell.chars().take(40).collect();
                        let unit = f.def().unit;
                        let want = if unit.is_empty() { String::new() } else { format!(" [{unit}]") };
                        push_capped(
                            &mut self.warnings,
                            format!(
                                "column {}: cannot read `{shown}` as {}{want} (line {line}); such cells are left empty",
                                col.name,
                                f.name()
                            ),
                        );
                    }
                    Value::Null
                }
            },
        }
    }
}

fn push_capped(v: &mut Vec<String>, msg: String) {
    if v.len() < MAX_MESSAGES {
        v.push(msg);
    }
}

// ---------------------------------------------------------------------------------------------
// Per-kind counters of skipped lines

#[derive(Default, Clone, Copy)]
struct Tally {
    n: u64,
    first: u64,
}

impl Tally {
    fn bump(&mut self, line: u64) {
        if self.n == 0 {
            self.first = line;
        }
        self.n += 1;
    }
}

#[derive(Default)]
struct Tallies {
    malformed: Tally,
    garbage: Tally,
    overlong: Tally,
    bad_ts: Tally,
    no_ts_col: Tally,
    no_ident: Tally,
    dst_gap: Tally,
    resync: Tally,
    repeated_header: Tally,
}

// ---------------------------------------------------------------------------------------------
// GPU identity

/// Position of interleaved rows within a tick, kept in step with the tick timing when known.
#[derive(Default)]
struct Phase {
    k: usize,
    /// Gap (ms) above which two consecutive rows belong to different ticks, when the timing shows it.
    thr: Option<f64>,
    pos: usize,
    prev_ms: Option<f64>,
    miss_pos: usize,
    miss_streak: u32,
}

impl Phase {
    fn restart(&mut self) {
        self.pos = 0;
        self.prev_ms = None;
        self.miss_streak = 0;
    }

    /// GPU of the next interleaved row; returns true as second value when it re-synchronised.
    fn slot(&mut self, ms: f64) -> (usize, bool) {
        let k = self.k.max(1);
        let mut resynced = false;
        if let (Some(thr), Some(prev)) = (self.thr, self.prev_ms)
            && ms - prev > thr
        {
            // A tick boundary: it should come when the position wrapped to 0. Two boundaries in a
            // row at the same other position mean a row was lost (or added): restart the tick.
            if self.pos == 0 {
                self.miss_streak = 0;
            } else {
                if self.miss_streak > 0 && self.miss_pos == self.pos {
                    self.miss_streak += 1;
                } else {
                    self.miss_streak = 1;
                    self.miss_pos = self.pos;
                }
                if self.miss_streak >= 2 {
                    self.pos = 0;
                    self.miss_streak = 0;
                    resynced = true;
                }
            }
        }
        let gpu = self.pos;
        self.pos = (self.pos + 1) % k;
        self.prev_ms = Some(ms);
        (gpu, resynced)
    }
}

#[derive(Default)]
struct Ids {
    keys: HashMap<String, u32>,
    seen: Vec<bool>,
    distinct: usize,
}

impl Ids {
    fn key(&mut self, cell: &str) -> Option<u32> {
        if let Some(&g) = self.keys.get(cell) {
            return Some(g);
        }
        if self.keys.len() >= MAX_GPUS {
            return None;
        }
        let g = self.keys.len() as u32;
        self.keys.insert(cell.to_string(), g);
        Some(g)
    }

    fn mark(&mut self, gpu: usize) {
        if gpu >= self.seen.len() {
            self.seen.resize(gpu + 1, false);
        }
        if !self.seen[gpu] {
            self.seen[gpu] = true;
            self.distinct += 1;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// GPU-count inference for interleaved logs

/// Rows sampled for the inference: timestamps per run segment, and the other cells per row.
struct Sample {
    segs: Vec<Vec<f64>>,
    cells: Vec<Vec<String>>,
    /// The sample reaches the end of the file (the last segment is complete).
    eof: bool,
}

fn collect_sample(start: Option<&Layout>, lines: &VecDeque<Pending>, eof: bool) -> Sample {
    let mut layout = start.cloned();
    let mut segs: Vec<Vec<f64>> = vec![Vec::new()];
    let mut cells = Vec::new();
    for l in lines {
        let t = l.text.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(h) = parse_header(t) {
            if segs.last().is_some_and(|s| !s.is_empty()) {
                segs.push(Vec::new());
            }
            if layout.as_ref().is_none_or(|c| c.header != h.header) {
                layout = Some(h);
            }
            continue;
        }
        let Some(lay) = &layout else { continue };
        let Some(tc) = lay.ts_col else { continue };
        if lay.ident != Ident::Interleaved {
            continue;
        }
        let parts: Vec<&str> = t.split(',').map(str::trim).collect();
        if parts.len() != lay.cols.len() || (!l.terminated && !lay.cols.iter().zip(&parts).all(|(c, p)| cell_ok(c, p)))
        {
            continue;
        }
        let Some(ts) = parts.get(tc).and_then(|c| parse_naive(c)) else { continue };
        let ms = ts.and_utc().timestamp_micros() as f64 / 1000.0;
        if let Some(s) = segs.last_mut() {
            s.push(ms);
        }
        cells.push(parts.iter().enumerate().filter(|(i, _)| *i != tc).map(|(_, c)| (*c).to_string()).collect());
    }
    segs.retain(|s| !s.is_empty());
    Sample { segs, cells, eof }
}

struct Inference {
    k: usize,
    thr: Option<f64>,
    phase: usize,
    note: String,
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let m = v.len() / 2;
    let (_, x, _) = v.select_nth_unstable_by(m, f64::total_cmp);
    *x
}

/// Otsu's two-class split of the gaps on a log scale: the threshold between "next GPU of the
/// same sample" gaps and "next sample" gaps.
fn otsu_split(gaps: &[f64]) -> Option<f64> {
    let mut xs: Vec<f64> = gaps.iter().map(|g| (g + 1.0).ln()).collect();
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let total: f64 = xs.iter().sum();
    let mut pre = 0.0;
    let mut best: Option<(f64, usize)> = None;
    for i in 1..n {
        pre += xs[i - 1];
        if xs[i] <= xs[i - 1] {
            continue;
        }
        let w0 = i as f64 / n as f64;
        let m0 = pre / i as f64;
        let m1 = (total - pre) / (n - i) as f64;
        let v = w0 * (1.0 - w0) * (m0 - m1) * (m0 - m1);
        if best.is_none_or(|(bv, _)| v > bv) {
            best = Some((v, i));
        }
    }
    let (_, i) = best?;
    Some(((xs[i - 1] + xs[i]) / 2.0).exp() - 1.0)
}

/// The two gap clusters of a sample and the runs of rows between large gaps.
struct Timing {
    /// Gap (ms) above which consecutive rows belong to different samples.
    thr: f64,
    med_small: f64,
    med_large: f64,
    /// Lengths of the runs of rows between large gaps (the first run of the file and a run cut
    /// by the end of the sample left out).
    runs: Vec<usize>,
    /// Row positions (within the first segment) followed by a large gap, the first few of them:
    /// they tell where the first sample ends when the file starts mid-sample.
    breaks: Vec<usize>,
}

/// Gaps within one sampling tick are a few ms (nvidia-smi queries the GPUs one after another);
/// gaps between ticks are the `-l`/`-lms` interval. Only a clearly two-level timing counts:
/// large gaps at least 5x the small ones and small ones at most 250 ms.
fn timing(sample: &Sample) -> Option<Timing> {
    let gaps: Vec<f64> = sample.segs.iter().flat_map(|s| s.windows(2).map(|w| (w[1] - w[0]).max(0.0))).collect();
    if gaps.len() < 3 {
        return None;
    }
    let split = otsu_split(&gaps)?;
    let (mut small, mut large): (Vec<f64>, Vec<f64>) = gaps.iter().partition(|&&g| g <= split);
    if small.is_empty() || large.is_empty() {
        return None;
    }
    let med_small = median(&mut small);
    let med_large = median(&mut large);
    if med_large / med_small.max(1.0) < 5.0 || med_small > 250.0 {
        return None;
    }
    let thr = (med_small + med_large) / 2.0;
    let mut runs = Vec::new();
    let mut breaks = Vec::new();
    let nseg = sample.segs.len();
    for (si, s) in sample.segs.iter().enumerate() {
        let mut run = 1usize;
        let mut first = true;
        for (j, w) in s.windows(2).enumerate() {
            if w[1] - w[0] > thr {
                if si == 0 && breaks.len() < 32 {
                    breaks.push(j);
                }
                if !(si == 0 && first) {
                    runs.push(run);
                }
                run = 1;
                first = false;
            } else {
                run += 1;
            }
        }
        if !(si == 0 && first) && (si + 1 < nseg || sample.eof) {
            runs.push(run);
        }
    }
    Some(Timing { thr, med_small, med_large, runs, breaks })
}

/// The most common run length, if it covers at least 3/4 of at least two runs.
fn run_mode(runs: &[usize]) -> Option<usize> {
    if runs.len() < 2 {
        return None;
    }
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for &r in runs {
        *counts.entry(r).or_default() += 1;
    }
    let (k, c) = counts.into_iter().max_by_key(|&(k, c)| (c, std::cmp::Reverse(k)))?;
    (c * 4 >= runs.len() * 3 && (2..=MAX_K).contains(&k)).then_some(k)
}

/// Position of the file's first row within its sample: the phase that puts most of the first
/// large gaps after the last GPU of a sample (0, a file starting with GPU 0, wins ties).
fn first_phase(t: &Timing, k: usize) -> usize {
    let fits = |p: usize| t.breaks.iter().filter(|&&j| (j + p + 1).is_multiple_of(k)).count();
    let mut best = (fits(0), 0);
    for p in 1..k.min(MAX_K) {
        let f = fits(p);
        if f > best.0 {
            best = (f, p);
        }
    }
    best.1
}

/// Runs delimited by header lines that all hold the same small number of rows written within a
/// second of each other: a one-shot query appended once per tick.
fn segment_rule(sample: &Sample) -> Option<usize> {
    let n = sample.segs.len();
    let segs = if sample.eof { &sample.segs[..] } else { &sample.segs[..n.saturating_sub(1)] };
    let l = segs.first()?.len();
    let spread = |s: &Vec<f64>| s.iter().copied().fold(f64::MIN, f64::max) - s.iter().copied().fold(f64::MAX, f64::min);
    (segs.len() >= 2 && (2..=MAX_K).contains(&l) && segs.iter().all(|s| s.len() == l && spread(s) <= 1000.0))
        .then_some(l)
}

/// Periodicity of the values: some column repeats with lag k much more than with any shorter
/// lag, and most columns are at least as alike at lag k as at lag 1.
fn value_rule(sample: &Sample) -> Option<usize> {
    let rows = &sample.cells;
    let n = rows.len();
    let ncol = rows.iter().map(Vec::len).min()?;
    if n < 8 || ncol == 0 {
        return None;
    }
    let nonconst: Vec<usize> = (0..ncol).filter(|&c| rows.iter().any(|r| r[c] != rows[0][c])).collect();
    if nonconst.is_empty() {
        return None;
    }
    let maxlag = 16.min(n / 4);
    let sims: Vec<Vec<f64>> = nonconst
        .iter()
        .map(|&c| {
            (1..=maxlag)
                .map(|lag| (lag..n).filter(|&i| rows[i][c] == rows[i - lag][c]).count() as f64 / (n - lag) as f64)
                .collect()
        })
        .collect();
    (2..=maxlag).find(|&k| {
        let strong = sims.iter().any(|s| s[k - 1] >= 0.5 && s[..k - 1].iter().all(|&sj| s[k - 1] >= sj + 0.3));
        let agree = sims.iter().filter(|s| s[k - 1] + 0.05 >= s[0]).count();
        strong && agree * 2 > sims.len()
    })
}

fn infer(sample: &Sample, forced: Option<usize>) -> Inference {
    let timing = timing(sample);
    if let Some(k) = forced {
        let k = k.max(1);
        let note = format!("{k} GPU(s) interleaved, as given with --gpus");
        return match &timing {
            Some(t) if k > 1 => Inference { k, thr: Some(t.thr), phase: first_phase(t, k), note },
            _ => Inference { k, thr: None, phase: 0, note },
        };
    }
    let pre = "no index, uuid or pci.bus_id column";
    if let Some(t) = &timing
        && let Some(k) = run_mode(&t.runs)
    {
        let note = format!(
            "{pre}: {k} GPUs inferred from the row timing (rows of one sample ~{:.0} ms apart, samples ~{:.0} ms apart); pass --gpus to override",
            t.med_small, t.med_large
        );
        return Inference { k, thr: Some(t.thr), phase: first_phase(t, k), note };
    }
    if let Some(k) = segment_rule(sample) {
        let note = format!(
            "{pre}: {k} GPUs inferred from the {k} rows between repeated header lines; pass --gpus to override"
        );
        return Inference { k, thr: None, phase: 0, note };
    }
    if let Some(k) = value_rule(sample) {
        let note = format!("{pre}: {k} GPUs inferred from values repeating every {k} rows; pass --gpus to override");
        return Inference { k, thr: None, phase: 0, note };
    }
    let note =
        format!("{pre}: rows read as one GPU (no interleaving pattern found); pass --gpus N if the log covers N GPUs");
    Inference { k: 1, thr: None, phase: 0, note }
}

// ---------------------------------------------------------------------------------------------
// The parser

enum Step {
    Done,
    /// The line is interleaved data and the GPU count is not known yet: buffer and infer.
    NeedGpus,
}

struct Parser {
    disp: String,
    zone: ZoneCache,
    forced_k: Option<usize>,
    layout: Option<Layout>,
    from_columns: bool,
    gpus_known: bool,
    phase: Phase,
    row: Row,
    conv: Conv,
    ids: Ids,
    rows: u64,
    tally: Tallies,
    warnings: Vec<String>,
    notes: Vec<String>,
    columns: Vec<String>,
    ignored: Vec<String>,
}

impl Parser {
    fn new(disp: String, opts: &NvsmiOptions) -> Result<Parser> {
        if let Some(g) = opts.gpus
            && !(1..=MAX_GPUS).contains(&g)
        {
            bail!("{disp}: --gpus must be between 1 and {MAX_GPUS}, not {g}");
        }
        let mut p = Parser {
            disp,
            zone: ZoneCache::new(opts.tz),
            forced_k: opts.gpus,
            layout: None,
            from_columns: false,
            gpus_known: false,
            phase: Phase::default(),
            row: Row::default(),
            conv: Conv { cache: Vec::new(), warned: [false; FIELD_COUNT], warnings: Vec::new() },
            ids: Ids::default(),
            rows: 0,
            tally: Tallies::default(),
            warnings: Vec::new(),
            notes: Vec::new(),
            columns: Vec::new(),
            ignored: Vec::new(),
        };
        if let Some(cols) = &opts.columns {
            let mut names = Vec::new();
            let mut header = Vec::new();
            for c in cols.iter().flat_map(|c| c.split(',')).map(str::trim).filter(|c| !c.is_empty()) {
                let (name, unit) = split_name_unit(c);
                names.push((name.to_string(), unit.map(str::to_string)));
                header.push(c.to_string());
            }
            if names.is_empty() {
                bail!("{}: --columns is empty", p.disp);
            }
            let layout = Layout::from_names(&names, header);
            if layout.ts_col.is_none() {
                bail!("{}: --columns must include timestamp (nvidia-smi's `timestamp` query field)", p.disp);
            }
            p.set_layout(layout);
            p.from_columns = true;
        }
        Ok(p)
    }

    fn set_layout(&mut self, layout: Layout) {
        for c in &layout.cols {
            match c.kind {
                ColKind::Ts => push_unique(&mut self.columns, Field::Timestamp.name()),
                ColKind::Field(f) => push_unique(&mut self.columns, f.name()),
                ColKind::Ignored => {
                    if self.ignored.len() < MAX_IGNORED {
                        push_unique(&mut self.ignored, &c.name);
                    }
                }
            }
        }
        self.conv.cache = vec![None; layout.cols.len()];
        self.row = Row::default();
        self.phase.restart();
        self.layout = Some(layout);
    }

    fn on_header(&mut self, no: u64, h: Layout) {
        self.phase.restart();
        if self.layout.as_ref().is_some_and(|c| c.header == h.header) {
            self.tally.repeated_header.bump(no);
            return;
        }
        if self.layout.is_some() {
            if self.from_columns && self.rows == 0 {
                push_capped(
                    &mut self.warnings,
                    format!("line {no}: the file has its own header line; it is used instead of --columns"),
                );
            } else {
                push_capped(
                    &mut self.notes,
                    format!("line {no}: a header line with different columns; the rest is read with them"),
                );
            }
        }
        self.from_columns = false;
        self.set_layout(h);
    }

    fn cut_short(&mut self, no: u64) {
        push_capped(
            &mut self.warnings,
            format!("line {no} is cut short (no final newline: the logger stopped mid-write?); skipped"),
        );
    }

    fn process(&mut self, no: u64, text: &str, terminated: bool, emit: &mut dyn FnMut(NvsmiRow<'_>)) -> Result<Step> {
        let t = text.trim();
        if t.is_empty() {
            return Ok(Step::Done);
        }
        if let Some(h) = parse_header(t) {
            self.on_header(no, h);
            return Ok(Step::Done);
        }
        let Some(layout) = &self.layout else {
            if has_timestamp_cell(t) {
                bail!(
                    "{}: line {no} is a data row but the file has no header line (logged with --format=csv,noheader?); \
                     pass --columns with the --query-gpu names in order, e.g. --columns timestamp,utilization.gpu,memory.used",
                    self.disp
                );
            }
            self.tally.garbage.bump(no);
            return Ok(Step::Done);
        };
        let ncols = layout.cols.len();
        let ncells = t.bytes().filter(|&b| b == b',').count() + 1;
        if ncells != ncols {
            if !terminated && ncells < ncols {
                self.cut_short(no);
            } else {
                self.tally.malformed.bump(no);
            }
            return Ok(Step::Done);
        }
        if layout.ident == Ident::Interleaved && !self.gpus_known {
            return Ok(Step::NeedGpus);
        }
        if !terminated && !layout.cols.iter().zip(t.split(',')).all(|(c, cell)| cell_ok(c, cell.trim())) {
            self.cut_short(no);
            return Ok(Step::Done);
        }
        let Some(tc) = layout.ts_col else {
            self.tally.no_ts_col.bump(no);
            return Ok(Step::Done);
        };
        let cell_at = |i: usize| t.split(',').nth(i).map_or("", str::trim);
        let Some((ts, in_gap)) = parse_naive(cell_at(tc)).and_then(|n| self.zone.utc_of(n)) else {
            self.tally.bad_ts.bump(no);
            return Ok(Step::Done);
        };
        if in_gap {
            self.tally.dst_gap.bump(no);
        }
        let gpu = match layout.ident {
            Ident::Index(i) => match cell_at(i).parse::<usize>() {
                Ok(g) if g < MAX_GPUS => g,
                _ => {
                    self.tally.no_ident.bump(no);
                    return Ok(Step::Done);
                }
            },
            Ident::Key(i) => {
                let key = cell_at(i);
                match (!is_missing_marker(key) && key.len() <= 256).then(|| self.ids.key(key)).flatten() {
                    Some(g) => g as usize,
                    None => {
                        self.tally.no_ident.bump(no);
                        return Ok(Step::Done);
                    }
                }
            }
            Ident::Interleaved => {
                let ms = ts.timestamp_micros() as f64 / 1000.0;
                let (g, resynced) = self.phase.slot(ms);
                if resynced {
                    self.tally.resync.bump(no);
                }
                g
            }
        };
        for (i, (col, cell)) in layout.cols.iter().zip(t.split(',')).enumerate() {
            if let ColKind::Field(f) = col.kind
                && f != Field::Index
            {
                let v = self.conv.value(i, col, f, cell.trim(), no);
                self.row.set(f, v);
            }
        }
        self.row.set(Field::Index, Value::U(gpu as u64));
        self.ids.mark(gpu);
        self.rows += 1;
        emit(NvsmiRow { ts, row: &self.row });
        Ok(Step::Done)
    }

    /// Decide the GPU count of the interleaved rows held in `lines` (or take `--gpus`).
    fn resolve_gpus(&mut self, lines: &VecDeque<Pending>, eof: bool) {
        let sample = collect_sample(self.layout.as_ref(), lines, eof);
        let inf = infer(&sample, self.forced_k);
        self.phase.k = inf.k;
        self.phase.thr = inf.thr;
        self.phase.pos = inf.phase % inf.k.max(1);
        self.gpus_known = true;
        push_capped(&mut self.notes, inf.note);
    }

    fn replay(&mut self, pending: &mut VecDeque<Pending>, emit: &mut dyn FnMut(NvsmiRow<'_>)) -> Result<()> {
        while let Some(l) = pending.pop_front() {
            // The GPU count is known now, so no line asks for it again.
            self.process(l.no, &l.text, l.terminated, emit)?;
        }
        Ok(())
    }

    fn finish<R>(mut self, lines: &LineReader<R>) -> Result<ReadReport> {
        let d = &self.disp;
        if lines.bytes == 0 {
            bail!("{d}: file is empty");
        }
        let mut w = std::mem::take(&mut self.warnings);
        let t = &self.tally;
        if lines.trailing_nuls > 0 {
            w.insert(0, format!("file ends in {} NUL bytes (logger killed mid-write?)", lines.trailing_nuls));
        }
        if lines.inner_nuls > 0 {
            w.push(format!(
                "{} NUL bytes removed from {} line(s) (first: line {})",
                lines.inner_nuls, lines.inner_nul_lines, lines.first_nul_line
            ));
        }
        let ncols = self.layout.as_ref().map_or(0, |l| l.cols.len());
        let tallies = [
            (t.malformed, format!("line(s) with a cell count other than the {ncols} columns of the header skipped")),
            (t.garbage, "line(s) before the header that are not nvidia-smi data skipped".to_string()),
            (t.overlong, format!("line(s) longer than {} KiB skipped", MAX_LINE / 1024)),
            (t.bad_ts, "row(s) with an unreadable timestamp skipped".to_string()),
            (t.no_ts_col, "row(s) under a header without a timestamp column skipped".to_string()),
            (t.no_ident, "row(s) without a readable GPU index / uuid / pci.bus_id skipped".to_string()),
            (t.dst_gap, "timestamp(s) fall in a daylight-saving gap; read with the offset from before it".to_string()),
            (
                t.resync,
                "time(s) the GPU order of interleaved rows lost step (a row missing?); re-synchronised on the sample timing"
                    .to_string(),
            ),
        ];
        for (tally, what) in tallies {
            if tally.n > 0 {
                w.push(format!("{} {what} (first: line {})", tally.n, tally.first));
            }
        }
        w.append(&mut self.conv.warnings);
        if t.repeated_header.n > 0 {
            self.notes.push(format!(
                "{} repeated header line(s) skipped (first: line {}); the GPU order restarts after each",
                t.repeated_header.n, t.repeated_header.first
            ));
        }
        if self.layout.is_none() {
            bail!("{d}: no nvidia-smi header line and no data rows found (not an nvidia-smi --format=csv log?)");
        }
        if self.rows == 0 {
            let why = if w.is_empty() { String::new() } else { format!(": {}", w.join("; ")) };
            bail!("{d}: no data rows{why}");
        }
        Ok(ReadReport {
            rows: self.rows,
            gpus: self.ids.distinct,
            warnings: w,
            columns: self.columns,
            ignored_columns: self.ignored,
            notes: self.notes,
        })
    }
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::PathBuf;

    fn data_dir() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/nvidia-smi-logs"))
    }

    fn data(name: &str) -> PathBuf {
        data_dir().join(name)
    }

    struct Got {
        rep: ReadReport,
        rows: Vec<(DateTime<Utc>, u32, Row)>,
    }

    fn read_all(path: &Path, opts: &NvsmiOptions) -> Result<Got> {
        let mut rows = Vec::new();
        let rep = read_nvsmi(path, opts, &mut |r| {
            rows.push((r.ts, r.row.get(Field::Index).as_u64().map_or(u32::MAX, |g| g as u32), r.row.clone()))
        })?;
        Ok(Got { rep, rows })
    }

    fn utc() -> NvsmiOptions {
        NvsmiOptions { tz: Some(chrono_tz::UTC), ..Default::default() }
    }

    fn opts_for(name: &str) -> NvsmiOptions {
        let mut o = utc();
        if name.starts_with("dst915") {
            o.columns = Some(vec!["timestamp".into(), "utilization.gpu".into(), "memory.used".into()]);
        }
        o
    }

    fn write_tmp(content: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        f.flush().unwrap();
        f
    }

    /// Independent count: newline-terminated lines with a cell shaped `dddd/dd/dd dd:dd:dd.ddd`.
    fn count_data_lines(bytes: &[u8]) -> usize {
        let shaped = |c: &[u8]| {
            c.len() == 23
                && c.iter().enumerate().all(|(i, &b)| match i {
                    4 | 7 => b == b'/',
                    10 => b == b' ',
                    13 | 16 => b == b':',
                    19 => b == b'.',
                    _ => b.is_ascii_digit(),
                })
        };
        let mut pieces: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        pieces.pop(); // the part after the last newline is not a terminated line
        pieces.iter().filter(|l| l.split(|&b| b == b',').any(|c| shaped(c.trim_ascii()))).count()
    }

    const TABLE: &[(&str, u64, usize)] = &[
        ("yqg9651_cuda_test__h800_sxm_random_gemm_bf16.csv", 1518, 1),
        ("yqg9651_cuda_test__h20_fp16_half_random.csv", 41645, 1),
        ("yqg9651_cuda_test__a100_pcie_burst_fp16_half_random.csv", 3314, 1),
        ("grantwilkins_training_profile__h100_8gpu_power-trace_2025-07-26-23-32-09.csv", 45632, 8),
        ("grantwilkins_training_profile__titanx_2gpu_power-trace_2025-12-10-16-48-17.csv", 1216, 2),
        ("grantwilkins_training_profile__titanx_log_appended_2runs.csv", 2714, 2),
        ("dst915_llama.cpp__gpu_stats.csv", 388, 4),
        ("fridanl_thesis-mas__nvidia-smi.log", 104, 1),
        ("AkshayRoyal_gpu-usage__gpu_usage.csv", 224, 1),
        ("shougangu_balance-budget__gpu_usage.csv", 1639, 1),
        ("eobo0530_vlm_optimization__gpu_log.csv", 2619, 1),
    ];

    #[test]
    fn every_real_log_parses_with_the_readme_counts() {
        let mut names: Vec<String> = std::fs::read_dir(data_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names.len(), TABLE.len(), "a log without an expectation: {names:?}");
        for name in &names {
            let (_, want_rows, want_gpus) =
                TABLE.iter().find(|t| t.0 == name).unwrap_or_else(|| panic!("no expectation for {name}"));
            let path = data(name);
            let got = read_all(&path, &opts_for(name)).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            let independent = count_data_lines(&std::fs::read(&path).unwrap());
            assert_eq!(got.rep.rows, *want_rows, "{name}: rows; report {:?}", got.rep);
            assert_eq!(got.rep.rows as usize, independent, "{name}: rows vs independent count");
            assert_eq!(got.rows.len() as u64, got.rep.rows, "{name}");
            assert_eq!(got.rep.gpus, *want_gpus, "{name}: gpus; notes {:?}", got.rep.notes);
            // Interleaved logs are in a clean fixed order: the assignment is exactly position modulo k,
            // restarting at the second run's header (none of these logs lost a row).
            assert!(!got.rep.warnings.iter().any(|w| w.contains("lost step")), "{name}: {:?}", got.rep.warnings);
            for (_, gpu, row) in &got.rows {
                assert_eq!(row.get(Field::Index), &Value::U(u64::from(*gpu)), "{name}");
                assert_eq!(row.get(Field::Timestamp), &Value::Null, "{name}");
            }
            if *want_gpus > 1 {
                for (i, (_, gpu, _)) in got.rows.iter().enumerate() {
                    assert_eq!(*gpu as usize, i % want_gpus, "{name}: row {i}");
                }
            }
            let k = *want_gpus;
            for w in got.rows.windows(k + 1).step_by(k).take(500) {
                // rows k apart (same GPU, consecutive ticks) move forward in time
                assert!(w[k].0 >= w[0].0, "{name}: time goes back");
            }
        }
    }

    #[test]
    fn real_logs_are_sniffed_and_gpumon_csv_is_not() {
        for (name, _, _) in TABLE {
            let bytes = std::fs::read(data(name)).unwrap();
            assert!(looks_like_nvsmi(&bytes[..bytes.len().min(4096)]), "{name}");
        }
        assert!(!looks_like_nvsmi(b"timestamp,host,index,utilization.gpu [%]\n2025-01-01T00:00:00.000Z,h,0,5\n"));
        assert!(!looks_like_nvsmi(b"hello, world\nthis is, text\n"));
        assert!(!looks_like_nvsmi(b""));
        assert!(!looks_like_nvsmi(b"\0\0\0\0"));
        assert!(looks_like_nvsmi(b"timestamp, power.draw [W]\n2025/01/0"));
    }

    #[test]
    fn eobo_first_row_values() {
        let got = read_all(&data("eobo0530_vlm_optimization__gpu_log.csv"), &utc()).unwrap();
        let (ts, gpu, row) = &got.rows[0];
        assert_eq!(ts.to_rfc3339(), "2026-01-03T15:36:53.507+00:00");
        assert_eq!(*gpu, 0);
        assert_eq!(row.get(Field::UtilGpu), &Value::U(1));
        assert_eq!(row.get(Field::UtilMemory), &Value::U(2));
        assert_eq!(row.get(Field::MemUsed), &Value::U(1129));
        assert_eq!(row.get(Field::PowerDraw), &Value::F(33.09));
        assert_eq!(row.get(Field::Name).as_str(), Some("NVIDIA GeForce RTX 4090"));
        assert_eq!(
            got.rep.columns,
            ["timestamp", "name", "utilization.gpu", "utilization.memory", "memory.used", "power.draw"]
        );
        assert!(got.rep.warnings.is_empty(), "{:?}", got.rep.warnings);
    }

    #[test]
    fn h800_text_and_hex_columns() {
        let got = read_all(&data("yqg9651_cuda_test__h800_sxm_random_gemm_bf16.csv"), &utc()).unwrap();
        let (_, _, row) = &got.rows[0];
        assert_eq!(row.get(Field::EventReasons), &Value::U(1));
        assert_eq!(row.get(Field::Pstate).as_str(), Some("P0"));
        assert_eq!(row.get(Field::FanSpeed), &Value::Null);
        assert_eq!(row.get(Field::MemTotal), &Value::U(81559));
        assert_eq!(row.get(Field::PowerLimit), &Value::F(700.0));
        assert_eq!(row.get(Field::ClockSm), &Value::U(885));
        assert_eq!(row.get(Field::ClockMem), &Value::U(2619));
        assert_eq!(row.get(Field::TempGpu), &Value::U(37));
        assert_eq!(row.get(Field::Uuid).as_str(), Some("GPU-deb3f1bc-44cc-a622-e825-35a2cfa67c22"));
        let ig = &got.rep.ignored_columns;
        for c in ["clocks_event_reasons.gpu_idle", "vbios_version", "temperature.memory", "power.draw.instant"] {
            assert!(ig.iter().any(|x| x == c), "{c} not in {ig:?}");
        }
        assert!(got.rep.columns.iter().any(|c| c == "clocks_event_reasons.active"));
        assert!(got.rep.columns.iter().any(|c| c == "clocks.sm"));
        assert!(got.rep.warnings.is_empty(), "{:?}", got.rep.warnings);
    }

    #[test]
    fn titanx_killed_log_warns_about_nuls() {
        let name = "grantwilkins_training_profile__titanx_2gpu_power-trace_2025-12-10-16-48-17.csv";
        let got = read_all(&data(name), &utc()).unwrap();
        assert!(
            got.rep.warnings.iter().any(|w| w == "file ends in 2533 NUL bytes (logger killed mid-write?)"),
            "{:?}",
            got.rep.warnings
        );
        assert_eq!(got.rep.gpus, 2);
    }

    #[test]
    fn fridanl_cut_line_is_skipped_with_a_warning() {
        let got = read_all(&data("fridanl_thesis-mas__nvidia-smi.log"), &utc()).unwrap();
        assert!(got.rep.warnings.iter().any(|w| w.starts_with("line 106 is cut short")), "{:?}", got.rep.warnings);
        assert_eq!(got.rep.warnings.len(), 1, "{:?}", got.rep.warnings);
        let (ts, _, row) = got.rows.last().unwrap();
        assert_eq!(ts.to_rfc3339(), "2026-02-25T10:06:20.442+00:00");
        assert_eq!(row.get(Field::Pstate).as_str(), Some("P0"));
        assert_eq!(row.get(Field::MemUsed), &Value::U(90098));
        assert_eq!(row.get(Field::Name).as_str(), Some("NVIDIA H100 NVL"));
    }

    #[test]
    fn appended_runs_are_both_read_and_the_second_header_skipped() {
        let got = read_all(&data("grantwilkins_training_profile__titanx_log_appended_2runs.csv"), &utc()).unwrap();
        assert_eq!(got.rep.rows, 2714);
        assert!(got.rep.notes.iter().any(|n| n.starts_with("1 repeated header line(s) skipped (first: line 1472)")));
        // the second run starts with GPU 0 after the 82 s gap
        let i = got.rows.windows(2).position(|w| (w[1].0 - w[0].0).num_seconds() > 60).unwrap() + 1;
        assert_eq!(got.rows[i].1, 0);
        assert_eq!(got.rows[i].0.to_rfc3339(), "2025-11-21T00:10:33.048+00:00");
        assert_eq!(got.rows[i + 1].1, 1);
    }

    #[test]
    fn headerless_log_needs_columns() {
        let err = read_all(&data("dst915_llama.cpp__gpu_stats.csv"), &utc()).err().unwrap();
        let msg = format!("{err:#}");
        assert!(msg.contains("--columns") && msg.contains("dst915"), "{msg}");
        let got = read_all(&data("dst915_llama.cpp__gpu_stats.csv"), &opts_for("dst915")).unwrap();
        let (_, gpu, row) = &got.rows[3];
        assert_eq!(*gpu, 3);
        assert_eq!(row.get(Field::MemUsed), &Value::U(13325));
        assert_eq!(row.get(Field::UtilGpu), &Value::U(0));
    }

    #[test]
    fn gpus_option_overrides() {
        let name = "grantwilkins_training_profile__titanx_2gpu_power-trace_2025-12-10-16-48-17.csv";
        let opts = NvsmiOptions { gpus: Some(1), ..utc() };
        let got = read_all(&data(name), &opts).unwrap();
        assert_eq!(got.rep.gpus, 1);
        let opts = NvsmiOptions { gpus: Some(4), ..utc() };
        assert_eq!(read_all(&data(name), &opts).unwrap().rep.gpus, 4);
        let opts = NvsmiOptions { gpus: Some(0), ..utc() };
        assert!(read_all(&data(name), &opts).is_err());
    }

    #[test]
    fn errors_name_the_file() {
        let e = read_all(Path::new("/nonexistent/x.csv"), &utc()).err().unwrap();
        assert!(format!("{e:#}").contains("/nonexistent/x.csv"));
        let f = write_tmp(b"");
        let e = read_all(f.path(), &utc()).err().unwrap();
        assert!(format!("{e:#}").contains("is empty"));
        let f = write_tmp(b"timestamp, utilization.gpu [%]\n");
        let e = read_all(f.path(), &utc()).err().unwrap();
        assert!(format!("{e:#}").contains("no data rows"));
        let f = write_tmp(b"hello\nworld\n");
        let e = read_all(f.path(), &utc()).err().unwrap();
        assert!(format!("{e:#}").contains("no nvidia-smi header"));
        let f = write_tmp(b"\0\0\0");
        assert!(read_all(f.path(), &utc()).is_err());
    }

    #[test]
    fn units_markers_and_bad_cells() {
        let f = write_tmp(
            b"timestamp, memory.used [MiB], memory.total [MiB], power.draw [W], utilization.gpu [%], clocks.sm [MHz], fan.speed [%], bogus.col\n\
              2025/01/01 00:00:00.000, 2048 KiB, 2 GiB, 1500 mW, [Not Supported], 1.41 GHz, [Unknown Error], x\n\
              2025/01/01 00:00:01.000, 17 MiB, 80 GiB, 69.5 W, abc, [GPU is lost], 3 %, y\n\
              2025/01/01 00:00:02.000, 18 MiB, 80 GiB, 70 W, def, N/A, 300 %, z\n",
        );
        let got = read_all(f.path(), &utc()).unwrap();
        let r0 = &got.rows[0].2;
        assert_eq!(r0.get(Field::MemUsed), &Value::U(2));
        assert_eq!(r0.get(Field::MemTotal), &Value::U(2048));
        assert_eq!(r0.get(Field::PowerDraw), &Value::F(1.5));
        assert_eq!(r0.get(Field::UtilGpu), &Value::Unsupported);
        assert_eq!(r0.get(Field::ClockSm), &Value::U(1410));
        assert_eq!(r0.get(Field::FanSpeed), &Value::Null);
        let r1 = &got.rows[1].2;
        assert_eq!(r1.get(Field::UtilGpu), &Value::Null);
        assert_eq!(r1.get(Field::ClockSm), &Value::Null);
        assert_eq!(r1.get(Field::FanSpeed), &Value::U(3));
        // 300 does not fit the u8 of fan.speed: null with a warning
        assert_eq!(got.rows[2].2.get(Field::FanSpeed), &Value::Null);
        assert!(got.rep.warnings.iter().any(|w| w.contains("fan.speed")), "{:?}", got.rep.warnings);
        // one warning per column, not per row
        let util: Vec<_> = got.rep.warnings.iter().filter(|w| w.contains("utilization.gpu")).collect();
        assert_eq!(util.len(), 1, "{:?}", got.rep.warnings);
        assert_eq!(got.rep.ignored_columns, ["bogus.col"]);
    }

    #[test]
    fn nounits_header_units_apply() {
        let f = write_tmp(b"timestamp, memory.used [KiB], power.draw [W]\n2025/01/01 00:00:00.000, 4096, 70.5\n");
        let got = read_all(f.path(), &utc()).unwrap();
        assert_eq!(got.rows[0].2.get(Field::MemUsed), &Value::U(4));
        assert_eq!(got.rows[0].2.get(Field::PowerDraw), &Value::F(70.5));
    }

    #[test]
    fn header_switch_changes_the_mapping() {
        let f = write_tmp(
            b"timestamp, index, power.draw [W]\n\
              2025/01/01 00:00:00.000, 0, 50.0 W\n\
              2025/01/01 00:00:00.002, 1, 60.0 W\n\
              timestamp, index, memory.used [MiB], power.draw [W]\n\
              2025/01/01 00:01:00.000, 1, 17 MiB, 61.0 W\n",
        );
        let got = read_all(f.path(), &utc()).unwrap();
        assert_eq!(got.rep.rows, 3);
        assert_eq!(got.rep.gpus, 2);
        let (_, gpu, row) = &got.rows[2];
        assert_eq!(*gpu, 1);
        assert_eq!(row.get(Field::MemUsed), &Value::U(17));
        assert_eq!(row.get(Field::PowerDraw), &Value::F(61.0));
        assert_eq!(got.rep.columns, ["timestamp", "index", "power.draw", "memory.used"]);
        assert!(got.rep.notes.iter().any(|n| n.contains("line 4")), "{:?}", got.rep.notes);
    }

    #[test]
    fn uuid_numbers_gpus_by_first_appearance() {
        let f = write_tmp(
            b"timestamp, uuid, utilization.gpu [%]\n\
              2025/01/01 00:00:00.000, GPU-b, 1 %\n\
              2025/01/01 00:00:00.001, GPU-a, 2 %\n\
              2025/01/01 00:00:01.000, GPU-b, 3 %\n\
              2025/01/01 00:00:01.001, GPU-a, 4 %\n",
        );
        let got = read_all(f.path(), &utc()).unwrap();
        let gpus: Vec<u32> = got.rows.iter().map(|r| r.1).collect();
        assert_eq!(gpus, [0, 1, 0, 1]);
        assert_eq!(got.rep.gpus, 2);
    }

    /// A k-GPU interleaved log, one sample per second, rows of a sample 2 ms apart; rows are
    /// numbered from 1; `skip` rows are left out and `late` rows come 400 ms late.
    fn interleaved_log(k: usize, ticks: usize, skip: &[usize], late: &[usize]) -> String {
        let mut s = String::from("timestamp, power.draw [W], memory.used [MiB]\n");
        let mut n = 0;
        for t in 0..ticks {
            for g in 0..k {
                n += 1;
                if skip.contains(&n) {
                    continue;
                }
                let ms = t * 1000 + g * 2 + if late.contains(&n) { 400 } else { 0 };
                s += &format!(
                    "2025/01/01 00:{:02}:{:02}.{:03}, {}.5 W, {} MiB\n",
                    ms / 60000,
                    ms / 1000 % 60,
                    ms % 1000,
                    60 + g,
                    100 * g
                );
            }
        }
        s
    }

    /// Every row's memory.used is 100 x its GPU in the synthetic logs.
    fn assert_gpus_match_memory(rows: &[(DateTime<Utc>, u32, Row)], skip_first: usize) {
        for (i, (_, gpu, row)) in rows.iter().enumerate().skip(skip_first) {
            assert_eq!(row.get(Field::MemUsed), &Value::U(100 * u64::from(*gpu)), "row {i}");
        }
    }

    #[test]
    fn a_log_starting_mid_sample_and_a_slow_first_sample() {
        let got = read_all(write_tmp(interleaved_log(4, 30, &[1, 2], &[]).as_bytes()).path(), &utc()).unwrap();
        assert_eq!(got.rep.gpus, 4);
        assert_eq!(got.rows[0].1, 2);
        assert_gpus_match_memory(&got.rows, 0);
        // the first sample is slow (GPU 2 and 3 come late): still phase 0, and no resync
        let got = read_all(write_tmp(interleaved_log(4, 30, &[], &[3, 4]).as_bytes()).path(), &utc()).unwrap();
        assert_eq!(got.rep.gpus, 4, "{:?}", got.rep.notes);
        assert_gpus_match_memory(&got.rows, 0);
        assert!(got.rep.warnings.is_empty(), "{:?}", got.rep.warnings);
    }

    #[test]
    fn interleaved_order_resynchronises_after_a_lost_row() {
        let f = write_tmp(interleaved_log(4, 40, &[4 * 10 + 2], &[]).as_bytes());
        let got = read_all(f.path(), &utc()).unwrap();
        assert_eq!(got.rep.gpus, 4);
        assert!(got.rep.warnings.iter().any(|w| w.contains("lost step")), "{:?}", got.rep.warnings);
        // from two samples after the lost row on, the assignment is right again
        assert_gpus_match_memory(&got.rows, 4 * 13);
        // a one-off late row inside a sample does not shift the order
        let got = read_all(write_tmp(interleaved_log(4, 40, &[], &[4 * 7 + 3]).as_bytes()).path(), &utc()).unwrap();
        assert_gpus_match_memory(&got.rows, 0);
    }

    #[test]
    fn one_shot_per_tick_with_headers_infers_from_runs() {
        let mut s = String::new();
        for t in 0..5 {
            s += "timestamp, power.draw [W]\n";
            for g in 0..3 {
                s += &format!("2025/01/01 00:00:{:02}.{:03}, {}.0 W\n", t, g * 3, 50 + g);
            }
        }
        let got = read_all(write_tmp(s.as_bytes()).path(), &utc()).unwrap();
        assert_eq!(got.rep.gpus, 3, "{:?}", got.rep.notes);
        let gpus: Vec<u32> = got.rows.iter().map(|r| r.1).take(6).collect();
        assert_eq!(gpus, [0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn timestamps_use_the_zone_and_take_the_earliest_in_a_fold() {
        let ny = NvsmiOptions { tz: Some(chrono_tz::America::New_York), ..Default::default() };
        let f = write_tmp(
            b"timestamp, power.draw [W]\n\
              2024/11/03 01:30:00.000, 1 W\n\
              2024/03/10 02:30:00.000, 1 W\n\
              2024/07/01 12:00:00.250, 1 W\n",
        );
        let got = read_all(f.path(), &ny).unwrap();
        // 01:30 happens twice: EDT (UTC-4) first
        assert_eq!(got.rows[0].0.to_rfc3339(), "2024-11-03T05:30:00+00:00");
        // 02:30 does not exist: read with EST (UTC-5)
        assert_eq!(got.rows[1].0.to_rfc3339(), "2024-03-10T07:30:00+00:00");
        assert_eq!(got.rows[2].0.to_rfc3339(), "2024-07-01T16:00:00.250+00:00");
        assert!(got.rep.warnings.iter().any(|w| w.contains("daylight-saving gap")));
    }

    #[test]
    fn nuls_inside_and_crlf_are_tolerated() {
        let f = write_tmp(
            b"timestamp, power.draw [W]\r\n2025/01/01 00:00:00.000, 1 W\r\n\0\0\x002025/01/01 00:00:01.000, 2 W\r\n2025/01/01 00:00:02.000, 3 W\n\0\0",
        );
        let got = read_all(f.path(), &utc()).unwrap();
        assert_eq!(got.rep.rows, 3);
        assert!(got.rep.warnings.iter().any(|w| w.starts_with("3 NUL bytes removed")), "{:?}", got.rep.warnings);
        assert!(got.rep.warnings.iter().any(|w| w.starts_with("file ends in 2 NUL")));
    }

    #[test]
    fn columns_option_and_a_header_in_the_file() {
        let opts = NvsmiOptions { columns: Some(vec!["timestamp, power.draw".into()]), ..utc() };
        let f = write_tmp(b"timestamp, power.draw [W]\n2025/01/01 00:00:00.000, 1 W\n");
        let got = read_all(f.path(), &opts).unwrap();
        assert_eq!(got.rep.rows, 1);
        assert!(got.rep.warnings.iter().any(|w| w.contains("instead of --columns")));
        let bad = NvsmiOptions { columns: Some(vec!["power.draw".into()]), ..utc() };
        assert!(read_all(f.path(), &bad).is_err());
    }

    #[test]
    fn parse_naive_accepts_nvsmi_and_rejects_junk() {
        assert!(parse_naive("2025/09/08 14:14:37.120").is_some());
        assert!(parse_naive("2025-09-08T14:14:37").is_some());
        for s in [
            "2025/13/08 14:14:37.120",
            "2025/09/08 14:14:37.",
            "2025/09/08 14:14:37.1234567890",
            "2025/09/08",
            "é025/09/08 14:14:37.120",
        ] {
            assert!(parse_naive(s).is_none(), "{s}");
        }
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        fn line() -> impl Strategy<Value = Vec<u8>> {
            prop_oneof![
                Just(b"timestamp, index, power.draw [W], memory.used [MiB]".to_vec()),
                Just(b"timestamp, power.draw [W], utilization.gpu [%]".to_vec()),
                Just(b"name, pstate, timestamp, clocks_event_reasons.active".to_vec()),
                (0u32..5000, 0u32..3, 0u32..500).prop_map(|(ms, g, w)| format!(
                    "2025/01/01 00:{:02}:{:02}.{:03}, {g}, {w}.5 W, {} MiB",
                    ms / 60000 % 60,
                    ms / 1000 % 60,
                    ms % 1000,
                    w * 3
                )
                .into_bytes()),
                (0u32..5000, 0u32..500).prop_map(|(ms, w)| format!(
                    "2025/01/01 00:00:{:02}.{:03}, {w} W, [N/A]",
                    ms / 1000 % 60,
                    ms % 1000
                )
                .into_bytes()),
                Just(b"NVIDIA H100, P0, 2025/01/01 00:00:00.000, 0xZZ".to_vec()),
                "[ -~]{0,60}".prop_map(String::into_bytes),
                proptest::collection::vec(any::<u8>(), 0..60),
                (1usize..50).prop_map(|n| vec![0u8; n]),
            ]
        }

        fn file() -> impl Strategy<Value = (Vec<u8>, usize)> {
            (proptest::collection::vec(line(), 0..25), 0usize..40).prop_map(|(lines, cut)| {
                let mut out = lines.join(&b'\n');
                out.push(b'\n');
                let keep = out.len().saturating_sub(cut);
                out.truncate(keep);
                (out, cut)
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]
            #[test]
            fn never_panics((bytes, _) in file(), cols in any::<bool>(), gpus in proptest::option::of(0usize..5)) {
                let f = write_tmp(&bytes);
                let columns = cols.then(|| vec!["timestamp".to_string(), "index".into(), "power.draw".into(), "memory.used".into()]);
                let opts = NvsmiOptions { columns, gpus, tz: Some(chrono_tz::Europe::Berlin) };
                let mut n = 0u64;
                if let Ok(rep) = read_nvsmi(f.path(), &opts, &mut |_| n += 1) {
                    prop_assert_eq!(rep.rows, n);
                    prop_assert!(rep.rows > 0);
                }
                let _ = looks_like_nvsmi(&bytes);
            }
        }
    }
}
