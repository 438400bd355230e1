//! One entry point over every input kind: [`scan`] streams a file as Arrow batches (catalogue column
//! names, UTC timestamps) into caller-made states, and reports what the file held and what was wrong
//! with it. nvidia-smi logs and gpumon CSV are batched from parsed rows; Parquet is read in parallel.
//! `--gpus` is applied here, to the batches of every kind, so every command sees only those GPUs.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use anyhow::Result;
use arrow_array::{BooleanArray, RecordBatch};

use crate::gpumon;
use crate::input::{Input, Kind};
use crate::smilog::{NvsmiOptions, read_nvsmi_file};
use crate::values::{self, BadValues};
use gpumon_schema::catalog::{Field, Table};
use gpumon_schema::cols::{self, Interner, NO_U64};
use gpumon_schema::{BATCH_ROWS, GpuSelector, InputInfo, RowBatcher};
use gpumon_util::ReadMeter;
use gpumon_util::Zone;
use gpumon_util::show;
use gpumon_util::{ReadError, ReadErrorKind};

/// How to read the inputs.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// `--columns`, `--interleaved-gpus` and the zone for nvidia-smi logs (its `tz` is derived from
    /// `zone`: see [`Zone::as_tz`]).
    pub nvsmi: NvsmiOptions,
    /// `--tz`: the zone of wall-clock times without one (nvidia-smi logs, `--since`).
    pub zone: Zone,
    /// `--gpus`: keep only these GPUs' rows (every row when empty).
    pub gpus: Vec<GpuSelector>,
    /// Host name for inputs that carry none (nvidia-smi logs); default: the file's name.
    pub host: Option<String>,
    /// Threads for reading one Parquet file.
    pub threads: usize,
}

/// The rows of the GPUs `--gpus` selects. A batch without a uuid column is matched by the indexes
/// that earlier batches of the file showed the selected UUIDs to have.
struct GpuFilter<'a> {
    sel: &'a [GpuSelector],
    learned: Mutex<HashSet<u64>>,
}

impl GpuFilter<'_> {
    fn by_uuid(&self) -> bool {
        self.sel.iter().any(|s| matches!(s, GpuSelector::Uuid(_)))
    }

    /// The batch with only the selected GPUs' rows; None when no row is left.
    fn apply<'b>(&self, b: &'b RecordBatch) -> Result<Option<Cow<'b, RecordBatch>>> {
        if self.sel.is_empty() {
            return Ok(Some(Cow::Borrowed(b)));
        }
        let col = |want: Field| {
            b.schema().fields().iter().position(|f| Field::lookup(f.name()) == Some(want))
        };
        let mut index = Vec::with_capacity(b.num_rows());
        if !col(Field::Index).is_some_and(|c| cols::u64_values(b.column(c).as_ref(), &mut index)) {
            index = vec![NO_U64; b.num_rows()];
        }
        let mut ids = Interner::default();
        let mut uuid = Vec::new();
        let has_uuid = col(Field::Uuid)
            .is_some_and(|c| cols::str_ids(b.column(c).as_ref(), &mut ids, u32::MAX, &mut uuid));
        let uuid_ok: Vec<bool> = (0..ids.len() as u32)
            .map(|id| {
                self.sel.iter().any(|s| {
                    matches!(s, GpuSelector::Uuid(_)) && s.matches_gpu(None, Some(ids.name(id)))
                })
            })
            .collect();
        let mut learned = self.learned.lock().unwrap_or_else(PoisonError::into_inner);
        let keep: Vec<bool> = (0..b.num_rows())
            .map(|r| {
                let idx = (index[r] != NO_U64).then_some(index[r]);
                let by_uuid = if has_uuid {
                    let hit = uuid
                        .get(r)
                        .and_then(|&id| uuid_ok.get(id as usize))
                        .copied()
                        .unwrap_or(false);
                    if let (true, Some(i)) = (hit, idx) {
                        learned.insert(i);
                    }
                    hit
                } else {
                    idx.is_some_and(|i| learned.contains(&i))
                };
                by_uuid
                    || self
                        .sel
                        .iter()
                        .any(|s| matches!(s, GpuSelector::Index(_)) && s.matches_gpu(idx, None))
            })
            .collect();
        if keep.iter().all(|&k| k) {
            return Ok(Some(Cow::Borrowed(b)));
        }
        if !keep.iter().any(|&k| k) {
            return Ok(None);
        }
        let mask = BooleanArray::from(keep);
        Ok(Some(Cow::Owned(arrow_select::filter::filter_record_batch(b, &mask)?)))
    }
}

/// The name an input without a host column is filed under: `--host`, the recorder's host name from
/// a gpumon footer, or the file's name without its extension (so logs of several machines, named
/// after them, come out as separate hosts).
pub(crate) fn default_host(path: &Path, opts: &ReadOptions, recorded: Option<&str>) -> String {
    if let Some(h) = &opts.host {
        return h.clone();
    }
    if let Some(h) = recorded.filter(|h| !h.is_empty()) {
        return h.to_string();
    }
    let name = path.file_name().map(|n| show(Path::new(n))).unwrap_or_default();
    let name = name.trim_start_matches('.').trim_end_matches(".journal");
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    if stem.is_empty() { "-".to_string() } else { stem.to_string() }
}

/// Batch visitor: the state of the current part, the batch, and the host of rows without one.
pub type Visit<'a, S> = &'a (dyn Fn(&mut S, &RecordBatch, &str) -> Result<()> + Sync);

/// Read `input`, handing batches of the fields in `want` (plus timestamp, host and GPU keys) to
/// `visit`. Parquet files are split into parts read in parallel, one state each, returned in file
/// order; other kinds give one state. Every batch passes the value checks first
/// ([`values::check`]: bad indexes and percentages become null and are counted). Problems with the
/// file are [`ReadError`]s naming it; errors from `visit` pass through unchanged.
pub fn scan<S: Send>(
    input: &Input,
    opts: &ReadOptions,
    want: &[Field],
    meter: &ReadMeter,
    init: &(dyn Fn() -> S + Sync),
    visit: Visit<'_, S>,
) -> Result<(Vec<S>, InputInfo)> {
    let filter = GpuFilter { sel: &opts.gpus, learned: Mutex::new(HashSet::new()) };
    // A UUID selector needs the uuid column, whatever the caller wants.
    let with_uuid: Vec<Field> = want.iter().copied().chain([Field::Uuid]).collect();
    let want = if filter.by_uuid() { &with_uuid[..] } else { want };
    let path = &input.path;
    meter.set_file(&path.file_name().map(|n| show(Path::new(n))).unwrap_or_default());
    let mut rep = InputInfo { path: path.clone(), kind: input.kind.label(), ..Default::default() };
    let table = Table::of(want.iter().copied());
    let found = Mutex::new(BadValues::default());
    // The --gpus filter first, then the value checks, on the batches of every kind.
    // Marks kept only in the footer (no phase column) give the rows their phases.
    let marks =
        want.contains(&Field::Phase).then(|| crate::recordings::footer_marks(input)).flatten();
    let checked = |s: &mut S, b: &RecordBatch, host: &str| -> Result<()> {
        let Some(b) = filter.apply(b)? else { return Ok(()) };
        let b = match &marks {
            Some(m) => crate::recordings::add_footer_phases(b.into_owned(), m),
            None => b.into_owned(),
        };
        let n = input.recording.as_ref().and_then(|r| r.ordinal).unwrap_or(0);
        let b = crate::recordings::relabel_phases(b, n);
        let (b, f) = values::check(b)?;
        if f != BadValues::default() {
            found.lock().map_err(|_| ReadError::internal("value checks poisoned"))?.merge(f);
        }
        visit(s, &b, host)
    };
    let states = match input.kind {
        Kind::Parquet => {
            rep.recording = crate::recordings::recording(input);
            let pf = gpumon::parquet::open_parquet(input, table)?;
            // Read now: the footer is not needed again.
            input.keep_footer(None);
            rep.default_host = default_host(path, opts, pf.hostname.as_deref());
            rep.rows = pf.rows;
            rep.job = pf.job.clone();
            rep.fields = pf.fields.iter().map(|(_, f)| *f).collect();
            rep.ignored_columns = pf.mistyped();
            let host = rep.default_host.clone();
            pf.scan(want, opts.threads, meter, init, &|s, b, one| {
                checked(s, b, one.unwrap_or(&host))
            })?
        }
        Kind::Journal => {
            let mut state = init();
            scan_journal(input, opts, table, &mut rep, &mut |b, host| {
                checked(&mut state, b, host)
            })?;
            meter.inc(input.size());
            vec![state]
        }
        Kind::GpumonCsv => {
            let mut state = init();
            let f = scan_csv(input, opts, table, want, meter, &mut rep, &mut |b, host| {
                checked(&mut state, b, host)
            })?;
            found.lock().map_err(|_| ReadError::internal("value checks poisoned"))?.merge(f);
            vec![state]
        }
        Kind::Nvsmi => {
            rep.default_host = default_host(path, opts, None);
            let host = rep.default_host.clone();
            let mut state = init();
            let f =
                scan_nvsmi(input, opts, want, &mut rep, &mut |b| checked(&mut state, b, &host))?;
            found.lock().map_err(|_| ReadError::internal("value checks poisoned"))?.merge(f);
            meter.inc(input.size());
            vec![state]
        }
    };
    let found = found.into_inner().map_err(|_| ReadError::internal("value checks poisoned"))?;
    rep.warnings.extend(found.warnings());
    // A column named after a field in a type that cannot hold it is left out, and said so.
    if matches!(input.kind, Kind::Parquet | Kind::Journal) {
        for c in &rep.ignored_columns {
            rep.warnings.push(format!("column {c} cannot be read: left out"));
        }
    }
    Ok((states, rep))
}

/// A Parquet file's journal (a recording still being written) as batches handed to `visit` with
/// their host; fills in what the journal held.
fn scan_journal(
    input: &Input,
    opts: &ReadOptions,
    table: Table,
    rep: &mut InputInfo,
    visit: &mut dyn FnMut(&RecordBatch, &str) -> Result<()>,
) -> Result<()> {
    let path = &input.path;
    let j = gpumon::journal::open_journal(input)?;
    let schema = j.schema();
    rep.default_host =
        default_host(path, opts, schema.metadata().get("gpumon.hostname").map(String::as_str));
    rep.ignored_columns = values::mistyped(&schema);
    let host = rep.default_host.clone();
    let (rows, fields) =
        gpumon::journal::read_journal(&j, path, table, &mut rep.warnings, &mut |b| {
            visit(b, &host)
        })?;
    rep.rows = rows;
    rep.fields = fields;
    Ok(())
}

/// A gpumon CSV file as batches of `want` handed to `visit` with their host; fills in what the
/// file held and returns the values its reader found bad.
fn scan_csv(
    input: &Input,
    opts: &ReadOptions,
    table: Table,
    want: &[Field],
    meter: &ReadMeter,
    rep: &mut InputInfo,
    visit: &mut dyn FnMut(&RecordBatch, &str) -> Result<()>,
) -> Result<BadValues> {
    rep.default_host = default_host(&input.path, opts, None);
    let host = rep.default_host.clone();
    let c = gpumon::csv::read_csv(input, table != Table::Metrics, want, meter, &mut |b| {
        visit(b, &host)
    })?;
    rep.rows = c.rows;
    rep.fields = c.fields;
    rep.ignored_columns = c.ignored;
    rep.warnings = c.warnings;
    Ok(c.values)
}

/// An nvidia-smi log as batches of `want` (plus GPU identity) handed to `visit`, its parsed rows
/// checked by [`BadValues::check_row`]; fills in what the log held.
fn scan_nvsmi(
    input: &Input,
    opts: &ReadOptions,
    want: &[Field],
    rep: &mut InputInfo,
    visit: &mut dyn FnMut(&RecordBatch) -> Result<()>,
) -> Result<BadValues> {
    let path = &input.path;
    // A `hostname` / `host` column (a fleet's logs gathered by a script) names each row's host.
    let mut fields: Vec<Field> = vec![Field::Index, Field::Uuid, Field::Name, Field::Host];
    fields.extend(
        want.iter().copied().filter(|f| f.def().source != gpumon_schema::catalog::Source::Meta),
    );
    let mut batcher = RowBatcher::new(&fields);
    let mut found = BadValues::default();
    let mut failed: Option<anyhow::Error> = None;
    // A fixed-offset --tz is read as UTC by the log reader and shifted here.
    let (_, shift) = opts.zone.as_tz();
    let r = read_nvsmi_file(path, input.open()?, &opts.nvsmi, &mut |row| {
        if failed.is_some() {
            return;
        }
        let ts = row.ts.timestamp_micros() - if row.instant { 0 } else { shift };
        match found.check_row(row.row, &fields) {
            Some(fixed) => batcher.push(ts, &fixed),
            None => batcher.push(ts, row.row),
        }
        if batcher.len() >= BATCH_ROWS
            && let Err(e) = batcher.finish().and_then(|b| visit(&b))
        {
            failed = Some(e);
        }
    });
    let r = r.map_err(|e| nvsmi_error(path, &e))?;
    if let Some(e) = failed {
        return Err(e);
    }
    if !batcher.is_empty() {
        visit(&batcher.finish()?)?;
    }
    rep.rows = r.rows;
    rep.fields = r.columns.iter().filter_map(|c| Field::lookup(c)).collect();
    rep.ignored_columns = r.ignored_columns;
    rep.warnings = r.warnings;
    rep.notes = r.notes;
    rep.notes.insert(0, format!("{} GPU(s), told apart by {}", r.gpus, r.gpus_by));
    Ok(found)
}

/// A problem with an nvidia-smi log as a [`ReadError`] that names the file once.
fn nvsmi_error(path: &Path, e: &anyhow::Error) -> ReadError {
    let msg = format!("{e:#}");
    let disp = show(path);
    // The parser's own kind where it gave one.
    let kind = e
        .chain()
        .find_map(|c| c.downcast_ref::<ReadError>())
        .map_or(ReadErrorKind::Malformed, ReadError::kind);
    if msg.contains(&disp) {
        ReadError::naming(kind, disp, msg)
    } else {
        ReadError::new(kind, disp, msg)
    }
}

/// The catalogue fields an input has, without reading its data where the format allows (an
/// nvidia-smi log is parsed once: its header may change along the way).
pub fn probe_fields(input: &Input, opts: &ReadOptions) -> Result<Vec<Field>, ReadError> {
    let path = &input.path;
    match input.kind {
        Kind::Parquet => {
            let mut fields: Vec<Field> = gpumon::parquet::open_parquet(input, Table::Metrics)?
                .fields
                .into_iter()
                .map(|(_, f)| f)
                .collect();
            // Marks kept only in the footer are phases too.
            if crate::recordings::footer_marks(input).is_some() {
                fields.push(Field::Phase);
            }
            Ok(fields)
        }
        Kind::Journal => {
            let j = gpumon::journal::open_journal(input)?;
            Ok(gpumon::schema_fields(&j.schema()).into_iter().map(|(_, f)| f).collect())
        }
        Kind::GpumonCsv => {
            use std::io::{BufRead, Read};
            let mut first = Vec::new();
            std::io::BufReader::new(input.open()?.take(1 << 20))
                .read_until(b'\n', &mut first)
                .map_err(|e| {
                    ReadError::new(
                        ReadErrorKind::Unreadable,
                        show(path),
                        format_args!("cannot read: {e}"),
                    )
                })?;
            let line = String::from_utf8_lossy(&first);
            let mut out: Vec<Field> = Vec::new();
            for cell in line.trim_end_matches('\r').split(',') {
                if let Some(f) =
                    Field::lookup(gpumon::csv::header_name(cell.trim_start_matches('\u{feff}')))
                    && !out.contains(&f)
                {
                    out.push(f);
                }
            }
            Ok(out)
        }
        Kind::Nvsmi => {
            let r = read_nvsmi_file(path, input.open()?, &opts.nvsmi, &mut |_| {})
                .map_err(|e| nvsmi_error(path, &e))?;
            let mut out: Vec<Field> = r.columns.iter().filter_map(|c| Field::lookup(c)).collect();
            out.push(Field::Index);
            Ok(out)
        }
    }
}

/// Which table an input holds, from its columns (an unreadable one counts as metrics: reading it
/// as such reports the problem).
fn table_of(input: &Input, opts: &ReadOptions) -> Table {
    let fields = match input.kind {
        Kind::Nvsmi => return Table::Metrics,
        Kind::Parquet => gpumon::parquet::parquet_fields(input),
        Kind::Journal | Kind::GpumonCsv => probe_fields(input, opts),
    };
    fields.map_or(Table::Metrics, Table::of)
}

/// Inputs sorted by the table they hold, each group in the given order: per-GPU metrics,
/// per-process rows, events.
pub struct ByTable {
    /// Inputs of per-GPU metric rows.
    pub metrics: Vec<Input>,
    /// Inputs of per-process rows.
    pub procs: Vec<Input>,
    /// Inputs of event rows.
    pub events: Vec<Input>,
}

/// Sort `inputs` by [`table_of`].
pub fn by_table(inputs: Vec<Input>, opts: &ReadOptions) -> ByTable {
    let mut out = ByTable { metrics: Vec::new(), procs: Vec::new(), events: Vec::new() };
    for input in inputs {
        match table_of(&input, opts) {
            Table::Metrics => out.metrics.push(input),
            Table::Procs => out.procs.push(input),
            Table::Events => out.events.push(input),
        }
    }
    out
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::{Int32Array, StringArray};
    use arrow_schema::{DataType, Field as AField, Schema};

    fn batch(index: &[i32], uuid: Option<&[&str]>) -> RecordBatch {
        let mut fields = vec![AField::new("index", DataType::Int32, true)];
        let mut cols: Vec<Arc<dyn arrow_array::Array>> =
            vec![Arc::new(Int32Array::from(index.to_vec()))];
        if let Some(u) = uuid {
            fields.push(AField::new("uuid", DataType::Utf8, true));
            cols.push(Arc::new(StringArray::from(u.to_vec())));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
    }

    fn kept(f: &GpuFilter<'_>, b: &RecordBatch) -> Vec<i32> {
        match f.apply(b).unwrap() {
            None => Vec::new(),
            Some(b) => {
                let mut v = Vec::new();
                cols::u64_values(b.column(0).as_ref(), &mut v);
                v.into_iter().map(|x| x as i32).collect()
            }
        }
    }

    #[test]
    fn gpu_filter_by_index_and_uuid_prefix() {
        let sel = GpuSelector::parse_list(&["0".into(), "GPU-bb".into()]);
        let f = GpuFilter { sel: &sel, learned: Mutex::new(HashSet::new()) };
        assert!(f.by_uuid());
        let first = batch(
            &[0, 1, 2, 0, 1, 2],
            Some(&["GPU-aa", "GPU-bb1", "GPU-cc", "GPU-aa", "GPU-bb1", "GPU-cc"]),
        );
        assert_eq!(kept(&f, &first), [0, 1, 0, 1]);
        // A later row group without its uuid column: GPU 1 was learned to be GPU-bb1.
        assert_eq!(kept(&f, &batch(&[0, 1, 2], None)), [0, 1]);
        assert_eq!(kept(&f, &batch(&[2, 2], None)), Vec::<i32>::new());
        let none: Vec<GpuSelector> = Vec::new();
        let all = GpuFilter { sel: &none, learned: Mutex::new(HashSet::new()) };
        assert_eq!(kept(&all, &batch(&[2, 2], None)), [2, 2]);
    }

    #[test]
    fn default_host_names() {
        let o = ReadOptions::default();
        assert_eq!(default_host(Path::new("/x/node7.csv"), &o, None), "node7");
        assert_eq!(default_host(Path::new("/x/.run.parquet.journal"), &o, None), "run");
        assert_eq!(default_host(Path::new("/x/run.parquet"), &o, Some("vm1")), "vm1");
        let o = ReadOptions { host: Some("h".into()), ..Default::default() };
        assert_eq!(default_host(Path::new("/x/node7.csv"), &o, Some("vm1")), "h");
    }
}

#[cfg(test)]
mod error_tests {
    use super::*;

    #[test]
    fn an_nvsmi_error_keeps_the_parsers_kind_and_names_the_file_once() {
        let path = Path::new("x.csv");
        let given = ReadError::new(ReadErrorKind::Usage, "x.csv", "--columns is empty");
        let e = nvsmi_error(path, &given.into());
        let r = &e;
        assert_eq!(
            (r.kind(), r.to_string().as_str()),
            (ReadErrorKind::Usage, "x.csv: --columns is empty")
        );
        let e = nvsmi_error(path, &anyhow::anyhow!("bad row"));
        let r = &e;
        assert_eq!(
            (r.kind(), r.to_string().as_str()),
            (ReadErrorKind::Malformed, "x.csv: bad row")
        );
    }
}
