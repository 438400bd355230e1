//! gpumon CSV (and what pandas, polars or DuckDB write back of it): `name [unit]` headers, RFC 3339
//! timestamps (and other writers' forms of them), a cut last line skipped with a warning.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use arrow_array::RecordBatch;
use chrono::{DateTime, NaiveDateTime};

use super::usage;
use crate::input::Input;
use crate::values::BadValues;
use gpumon_schema::catalog::{Field, Table, Ty};
use gpumon_schema::{BATCH_ROWS, Row, RowBatcher, Value};
use gpumon_util::ReadMeter;
use gpumon_util::show;
use gpumon_util::{ReadError, ReadErrorKind};

/// What a CSV read found.
#[derive(Debug, Default)]
pub(crate) struct CsvInfo {
    pub rows: u64,
    pub fields: Vec<Field>,
    pub ignored: Vec<String>,
    pub warnings: Vec<String>,
    /// Bad indexes and out-of-range values, set to null.
    pub values: BadValues,
}

fn ends_with_newline(path: &Path) -> bool {
    let Ok(mut f) = File::open(path) else { return true };
    if f.seek(SeekFrom::End(-1)).is_err() {
        return true;
    }
    let mut b = [0u8; 1];
    f.read_exact(&mut b).is_err() || b[0] == b'\n'
}

/// A CSV timestamp in UTC µs: RFC 3339 (gpumon's own), the same with an offset written without its
/// colon (polars: `+0000`) or without minutes (DuckDB: `+00`), a space or a `T` before the time; a
/// time without an offset is UTC.
pub(crate) fn parse_ts(cell: &str) -> Option<i64> {
    if let Ok(t) = DateTime::parse_from_rfc3339(cell) {
        return Some(t.timestamp_micros());
    }
    for f in ["%Y-%m-%d %H:%M:%S%.f%#z", "%Y-%m-%dT%H:%M:%S%.f%#z"] {
        if let Ok(t) = DateTime::parse_from_str(cell, f) {
            return Some(t.timestamp_micros());
        }
    }
    ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(cell, f).ok())
        .map(|n| n.and_utc().timestamp_micros())
}

fn parse_cell(f: Field, cell: &str, cache: &mut Option<(String, Arc<str>)>) -> Option<Value> {
    if cell.is_empty() {
        return Some(Value::Null);
    }
    match f.def().ty {
        Ty::Str => {
            if let Some((s, a)) = cache
                && s == cell
            {
                return Some(Value::S(a.clone()));
            }
            let a: Arc<str> = Arc::from(cell);
            *cache = Some((cell.to_string(), a.clone()));
            Some(Value::S(a))
        }
        Ty::F64 => cell.parse::<f64>().ok().filter(|v| v.is_finite()).map(Value::F),
        Ty::Bool => match cell {
            "true" | "True" | "1" => Some(Value::U(1)),
            "false" | "False" | "0" => Some(Value::U(0)),
            _ => None,
        },
        Ty::Timestamp => parse_ts(cell).map(|t| Value::U(t as u64)),
        _ => {
            if let Ok(v) = cell.parse::<u64>() {
                return Some(Value::U(v));
            }
            if let Some(h) = cell.strip_prefix("0x") {
                return u64::from_str_radix(h, 16).ok().map(Value::U);
            }
            // A whole number written as a float (`3.0`) reads; a fraction is rounded, except in the
            // GPU index, where 0.5 names no GPU.
            cell.parse::<f64>()
                .ok()
                .filter(|v| *v >= 0.0 && v.is_finite() && (f != Field::Index || v.fract() == 0.0))
                .map(|v| Value::U(v.round() as u64))
        }
    }
}

/// The columns of a gpumon CSV header that are read: the timestamp's, and (index, field) of the others.
struct CsvColumns {
    ts: usize,
    used: Vec<(usize, Field)>,
    /// The work counters' columns (`progress.KEY`): position and name.
    counters: Vec<(usize, String)>,
}

/// The work counters' cells of the rows of a batch, added to it as float64 columns.
struct CsvCounters {
    cols: Vec<(usize, String)>,
    values: Vec<arrow_array::builder::Float64Builder>,
}

impl CsvCounters {
    fn new(cols: Vec<(usize, String)>) -> CsvCounters {
        let values = cols.iter().map(|_| arrow_array::builder::Float64Builder::new()).collect();
        CsvCounters { cols, values }
    }

    /// The cells of one row kept (an empty or unreadable cell is null).
    fn push(&mut self, rec: &csv::StringRecord) {
        for ((i, _), b) in self.cols.iter().zip(&mut self.values) {
            b.append_option(rec.get(*i).and_then(|c| c.trim().parse::<f64>().ok()));
        }
    }

    /// `batch` with the counters' columns of its rows after its own.
    fn attach(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        if self.cols.is_empty() {
            return Ok(batch);
        }
        let schema = batch.schema();
        let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
        let mut arrays = batch.columns().to_vec();
        for ((_, name), b) in self.cols.iter().zip(&mut self.values) {
            fields.push(Arc::new(arrow_schema::Field::new(
                name.as_str(),
                arrow_schema::DataType::Float64,
                true,
            )));
            arrays.push(Arc::new(b.finish()));
        }
        Ok(RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), arrays)?)
    }
}

/// Map a header to catalogue fields, noting every field and ignored name in `rep`; the columns read
/// are those of `want` plus the host and GPU keys. A header gpumon cannot use is a [`ReadError`].
fn csv_columns(
    path: &Path,
    header: &csv::StringRecord,
    want: &[Field],
    rep: &mut CsvInfo,
) -> Result<CsvColumns> {
    let mut ts_col = None;
    let mut used: Vec<(usize, Field)> = Vec::new();
    let mut counters: Vec<(usize, String)> = Vec::new();
    let keys = [Field::Host, Field::Index, Field::Uuid, Field::Name];
    for (i, cell) in header.iter().enumerate() {
        let name = header_name(cell.trim_start_matches('\u{feff}'));
        match Field::lookup(name) {
            Some(Field::Timestamp) if ts_col.is_none() => ts_col = Some(i),
            Some(f) if !rep.fields.contains(&f) => {
                rep.fields.push(f);
                if want.contains(&f) || keys.contains(&f) {
                    used.push((i, f));
                }
            }
            None if gpumon_schema::progress::column_key(name).is_some()
                && counters.len() < gpumon_schema::progress::MAX_KEYS
                && !counters.iter().any(|(_, n)| n == name) =>
            {
                counters.push((i, name.to_string()));
            }
            _ => rep.ignored.push(name.to_string()),
        }
    }
    let Some(ts) = ts_col else {
        return Err(ReadError::new(
            ReadErrorKind::Malformed,
            show(path),
            "no timestamp column in the CSV header",
        )
        .into());
    };
    if rep.fields.is_empty() {
        return Err(ReadError::new(
            ReadErrorKind::Malformed,
            show(path),
            "no gpumon metrics columns in the CSV header",
        )
        .into());
    }
    let (found, table) = (Table::of(rep.fields.iter().copied()), Table::of(want.iter().copied()));
    if found != table {
        return Err(ReadError::new(
            ReadErrorKind::Unsupported,
            show(path),
            format_args!("{}, not {}", found.describe(), table.describe()),
        )
        .into());
    }
    rep.fields.insert(0, Field::Timestamp);
    Ok(CsvColumns { ts, used, counters })
}

/// Cells of the columns read into a row: a string cache, and per column the unreadable cells.
struct CsvCells {
    cache: Vec<Option<(String, Arc<str>)>>,
    bad: Vec<BadCells>,
}

/// The unreadable cells of one column.
#[derive(Debug, Clone, Default)]
struct BadCells {
    /// How many.
    count: u64,
    /// The first one (its first 40 characters).
    first: String,
    /// The file line of the first.
    line: u64,
}

impl CsvCells {
    fn new(n: usize) -> CsvCells {
        CsvCells { cache: vec![None; n], bad: vec![BadCells::default(); n] }
    }

    /// Set `row` from the cells of record `rec` (file line `line`); an unreadable cell is null.
    fn fill(&mut self, used: &[(usize, Field)], rec: &csv::StringRecord, line: u64, row: &mut Row) {
        for (k, &(i, f)) in used.iter().enumerate() {
            let cell = rec.get(i).unwrap_or("");
            let v = match parse_cell(f, cell, &mut self.cache[k]) {
                Some(v) => v,
                None => {
                    let bad = &mut self.bad[k];
                    if bad.count == 0 {
                        *bad = BadCells { count: 0, first: cell.chars().take(40).collect(), line };
                    }
                    bad.count += 1;
                    Value::Null
                }
            };
            row.set(f, v);
        }
    }

    /// One warning per column with unreadable cells.
    fn report(&self, used: &[(usize, Field)], warnings: &mut Vec<String>) {
        let columns = used.iter().zip(&self.bad).filter(|(_, b)| b.count > 0);
        for ((_, f), BadCells { count: n, first, line }) in columns {
            warnings.push(format!(
                "column {}: {n} cell(s) cannot be read (first: `{first}`, line {line}); they are left empty",
                f.name()
            ));
        }
    }
}

/// Stream a gpumon CSV file as batches of the fields in `want` (plus timestamp, host and GPU keys).
/// A file of no rows is an error unless `empty_ok` (a companion, such as `run.procs.csv` of a run
/// where no process used a GPU: a header and nothing else is an empty companion).
pub(crate) fn read_csv(
    input: &Input,
    empty_ok: bool,
    want: &[Field],
    meter: &ReadMeter,
    on_batch: &mut dyn FnMut(&RecordBatch) -> Result<()>,
) -> Result<CsvInfo> {
    let path = &input.path;
    let file = input.open()?;
    // Whitespace around cells is never significant (`2026-01-01T00:00:00Z, 0, 50`).
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(false)
        .trim(csv::Trim::All)
        .from_reader(BufReader::new(file));
    let mut header = csv::StringRecord::new();
    if !rdr.read_record(&mut header).map_err(|e| usage(path, "cannot read", e))? {
        return Err(ReadError::new(ReadErrorKind::Malformed, show(path), "file is empty").into());
    }
    let mut rep = CsvInfo::default();
    let cols = csv_columns(path, &header, want, &mut rep)?;
    let batch_fields: Vec<Field> = cols.used.iter().map(|(_, f)| *f).collect();
    let mut batcher = RowBatcher::new(&batch_fields);
    let mut cells = CsvCells::new(cols.used.len());
    let mut counters = CsvCounters::new(cols.counters);
    let mut row = Row::default();
    let mut skipped = Skipped::default();
    let complete = ends_with_newline(input.data());
    let ncols = header.len();
    let mut cur = csv::StringRecord::new();
    let mut next = csv::StringRecord::new();
    let mut have = rdr.read_record(&mut cur).map_err(|e| usage(path, "cannot read", e))?;
    let mut last_pos = 0u64;
    while have {
        let more = rdr.read_record(&mut next).map_err(|e| usage(path, "cannot read", e))?;
        let line = cur.position().map_or(0, |p| p.line());
        if !more && !complete {
            rep.warnings.push(format!(
                "line {line} is cut short (no final newline: a crash mid-write?); skipped"
            ));
            break;
        }
        if cur.len() != ncols {
            if !(cur.len() == 1 && cur.get(0).is_some_and(str::is_empty)) {
                skipped.shape(line);
            }
        } else if let Some(ts) = cur.get(cols.ts).and_then(parse_ts) {
            cells.fill(&cols.used, &cur, line, &mut row);
            match rep.values.check_row(&row, &batch_fields) {
                Some(fixed) => batcher.push(ts, &fixed),
                None => batcher.push(ts, &row),
            }
            counters.push(&cur);
            rep.rows += 1;
            if batcher.len() >= BATCH_ROWS {
                on_batch(&counters.attach(batcher.finish()?)?)?;
                let pos = cur.position().map_or(0, |p| p.byte());
                meter.inc(pos.saturating_sub(last_pos));
                last_pos = pos;
            }
        } else {
            skipped.timestamp(cur.get(cols.ts).unwrap_or(""), line);
        }
        std::mem::swap(&mut cur, &mut next);
        have = more;
    }
    if !batcher.is_empty() {
        on_batch(&counters.attach(batcher.finish()?)?)?;
    }
    skipped.report(ncols, &mut rep.warnings);
    cells.report(&cols.used, &mut rep.warnings);
    skipped.no_rows(path, rep.rows, empty_ok)?;
    Ok(rep)
}

/// Lines of a gpumon CSV file skipped: a cell count other than the header's, or a timestamp that
/// cannot be read; the first of each kind.
#[derive(Default)]
struct Skipped {
    shape: u64,
    first_shape: u64,
    ts: u64,
    /// The first unreadable timestamp and its line.
    first_ts: Option<(String, u64)>,
}

impl Skipped {
    fn shape(&mut self, line: u64) {
        self.shape += 1;
        self.first_shape = if self.first_shape == 0 { line } else { self.first_shape };
    }

    fn timestamp(&mut self, cell: &str, line: u64) {
        self.ts += 1;
        if self.first_ts.is_none() {
            self.first_ts = Some((cell.chars().take(40).collect(), line));
        }
    }

    fn ts_note(&self) -> String {
        (self.first_ts.as_ref())
            .map(|(cell, line)| format!("first: `{cell}`, line {line}"))
            .unwrap_or_default()
    }

    /// One warning per kind of skipped line.
    fn report(&self, ncols: usize, warnings: &mut Vec<String>) {
        let (n, first) = (self.shape, self.first_shape);
        if n > 0 {
            warnings.push(format!(
                "{n} line(s) with a cell count other than the {ncols} columns of the header skipped (first: line {first})"
            ));
        }
        if self.ts > 0 {
            warnings.push(format!(
                "{} row(s) with an unreadable timestamp skipped ({})",
                self.ts,
                self.ts_note()
            ));
        }
    }

    /// A file of no rows is an error (saying why when every timestamp was unreadable), unless
    /// `empty_ok` and no line was misshapen.
    fn no_rows(&self, path: &Path, rows: u64, empty_ok: bool) -> Result<()> {
        if rows == 0 && self.ts > 0 {
            return Err(ReadError::new(
                ReadErrorKind::Malformed,
                show(path),
                format_args!(
                    "no data rows: the timestamp of every one of the {} row(s) cannot be read ({}; \
                     RFC 3339 or `YYYY-MM-DD HH:MM:SS[.f][+HH[:MM]]` expected)",
                    self.ts,
                    self.ts_note()
                ),
            )
            .into());
        }
        if rows == 0 && !(empty_ok && self.shape == 0) {
            return Err(ReadError::new(ReadErrorKind::Malformed, show(path), "no data rows").into());
        }
        Ok(())
    }
}

/// `name [unit]` → `name`.
pub(crate) fn header_name(cell: &str) -> &str {
    let cell = cell.trim().trim_matches('"');
    match cell.strip_suffix(']').and_then(|b| b.rsplit_once('[')) {
        Some((name, _)) => name.trim(),
        None => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_timestamps_of_other_writers() {
        let want = parse_ts("2026-12-04T14:49:45.209Z").unwrap();
        for s in [
            "2026-12-04T14:49:45.209000+0000",
            "2026-12-04 14:49:45.209+00",
            "2026-12-04 14:49:45.209+00:00",
            "2026-12-04 14:49:45.209",
            "2026-12-04T14:49:45.209",
            "2026-12-04T15:49:45.209+01",
        ] {
            assert_eq!(parse_ts(s), Some(want), "{s}");
        }
        assert_eq!(parse_ts("04/12/2026 14:49"), None);
    }

    #[test]
    fn csv_cut_last_line_is_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        std::fs::write(
            &p,
            "timestamp,host,index,utilization.gpu [%],power.draw [W]\n\
             2026-01-01T00:00:00.000Z,h,0,5,70.5\n\
             2026-01-01T00:00:01.000Z,h,0,7,71\n\
             2026-01-01T00:00:02.000Z,h,0,9,7",
        )
        .unwrap();
        let mut n = 0;
        let input = Input::file(&p, crate::input::Kind::GpumonCsv);
        let rep = read_csv(
            &input,
            false,
            &[Field::UtilGpu, Field::PowerDraw],
            &ReadMeter::none(),
            &mut |b| {
                n += b.num_rows();
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(n, 2);
        assert_eq!(rep.rows, 2);
        assert!(rep.warnings[0].contains("line 4 is cut short"), "{:?}", rep.warnings);
    }
}
