//! One entry point over every input kind: [`scan`] streams a file as Arrow batches (catalogue column
//! names, UTC timestamps) into caller-made states, and reports what the file held and what was wrong
//! with it. nvidia-smi logs and gpumon CSV are batched from parsed rows; Parquet is read in parallel.

use std::path::Path;
use std::sync::Mutex;

use anyhow::Result;
use arrow_array::RecordBatch;

use crate::read::gpumon;
use crate::read::inputs::{Input, Kind};
use crate::read::smilog::{NvsmiOptions, read_nvsmi_file};
use crate::read::values::{self, Found};
use crate::schema::batch::{BATCH_ROWS, RowBatcher};
use crate::schema::catalog::Field;
use crate::schema::run::InputInfo;
use crate::util::error::UsageError;
use crate::util::progress::Progress;
use crate::util::text::show;

/// How to read the inputs.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// `--columns`, `--gpus`, `--tz` for nvidia-smi logs.
    pub nvsmi: NvsmiOptions,
    /// Host name for inputs that carry none (nvidia-smi logs); default: the file's name.
    pub host: Option<String>,
    /// Threads for reading one Parquet file.
    pub threads: usize,
}

/// The name an input without a host column is filed under: `--host`, the recorder's host name from
/// a gpumon footer, or the file's name without its extension (so logs of several machines, named
/// after them, come out as separate hosts).
pub fn default_host(path: &Path, opts: &ReadOptions, recorded: Option<&str>) -> String {
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
/// file are [`UsageError`]s naming it; errors from `visit` pass through unchanged.
pub fn scan<S: Send>(
    input: &Input,
    opts: &ReadOptions,
    want: &[Field],
    progress: &Progress,
    init: &(dyn Fn() -> S + Sync),
    visit: Visit<'_, S>,
) -> Result<(Vec<S>, InputInfo)> {
    let path = &input.path;
    progress.set_file(&path.file_name().map(|n| show(Path::new(n))).unwrap_or_default());
    let mut rep = InputInfo { path: path.clone(), kind: input.kind.label(), ..Default::default() };
    let found = Mutex::new(Found::default());
    let checked = |s: &mut S, b: &RecordBatch, host: &str| -> Result<()> {
        let (b, f) = values::check(b.clone())?;
        if f != Found::default() {
            found.lock().map_err(|_| anyhow::anyhow!("value checks poisoned"))?.merge(f);
        }
        visit(s, &b, host)
    };
    let states = match input.kind {
        Kind::Parquet => {
            let pf = gpumon::open_parquet(input)?;
            rep.default_host = default_host(path, opts, pf.hostname.as_deref());
            rep.rows = pf.rows;
            rep.fields = pf.fields.iter().map(|(_, f)| *f).collect();
            rep.ignored_columns = pf.mistyped();
            let host = rep.default_host.clone();
            pf.scan(want, opts.threads, progress, init, &|s, b| checked(s, b, &host))?
        }
        Kind::Journal => {
            let j = gpumon::open_journal(input)?;
            let schema = j.schema();
            rep.default_host = default_host(path, opts, schema.metadata().get("gpumon.hostname").map(String::as_str));
            rep.ignored_columns = values::mistyped(&schema);
            let mut state = init();
            let host = rep.default_host.clone();
            let (rows, fields) =
                gpumon::read_journal(&j, path, &mut rep.warnings, &mut |b| checked(&mut state, b, &host))?;
            progress.inc(input.len());
            rep.rows = rows;
            rep.fields = fields;
            vec![state]
        }
        Kind::GpumonCsv => {
            rep.default_host = default_host(path, opts, None);
            let mut state = init();
            let host = rep.default_host.clone();
            let c = gpumon::read_csv(input, want, progress, &mut |b| checked(&mut state, b, &host))?;
            rep.rows = c.rows;
            rep.fields = c.fields;
            rep.ignored_columns = c.ignored;
            rep.warnings = c.warnings;
            found.lock().map_err(|_| anyhow::anyhow!("value checks poisoned"))?.merge(c.values);
            vec![state]
        }
        Kind::Nvsmi => {
            rep.default_host = default_host(path, opts, None);
            let (state, f) = scan_nvsmi(input, opts, want, init, &checked, &mut rep)?;
            found.lock().map_err(|_| anyhow::anyhow!("value checks poisoned"))?.merge(f);
            progress.inc(input.len());
            vec![state]
        }
    };
    let found = found.into_inner().map_err(|_| anyhow::anyhow!("value checks poisoned"))?;
    rep.warnings.extend(found.warnings());
    Ok((states, rep))
}

/// Read an nvidia-smi log into one state, batching its parsed rows (checked by
/// [`Found::check_row`]); fills `rep` from the reader's report.
fn scan_nvsmi<S>(
    input: &Input,
    opts: &ReadOptions,
    want: &[Field],
    init: &(dyn Fn() -> S + Sync),
    visit: Visit<'_, S>,
    rep: &mut InputInfo,
) -> Result<(S, Found)> {
    let path = &input.path;
    let host = rep.default_host.clone();
    let mut state = init();
    let mut fields: Vec<Field> = vec![Field::Index, Field::Uuid, Field::Name];
    fields.extend(want.iter().copied().filter(|f| f.def().source != crate::schema::catalog::Source::Meta));
    let mut batcher = RowBatcher::new(&fields);
    let mut found = Found::default();
    let mut failed: Option<anyhow::Error> = None;
    let r = read_nvsmi_file(path, input.open()?, &opts.nvsmi, &mut |row| {
        if failed.is_some() {
            return;
        }
        match found.check_row(row.row, &fields) {
            Some(fixed) => batcher.push(row.ts.timestamp_micros(), &fixed),
            None => batcher.push(row.ts.timestamp_micros(), row.row),
        }
        if batcher.len() >= BATCH_ROWS
            && let Err(e) = batcher.finish().and_then(|b| visit(&mut state, &b, &host))
        {
            failed = Some(e);
        }
    })
    .map_err(|e| nvsmi_error(path, &e))?;
    if let Some(e) = failed {
        return Err(e);
    }
    if !batcher.is_empty() {
        visit(&mut state, &batcher.finish()?, &host)?;
    }
    rep.rows = r.rows;
    rep.fields = r.columns.iter().filter_map(|c| Field::lookup(c)).collect();
    rep.ignored_columns = r.ignored_columns;
    rep.warnings = r.warnings;
    rep.notes = r.notes;
    rep.notes.insert(0, format!("{} GPU(s)", r.gpus));
    Ok((state, found))
}

/// A problem with an nvidia-smi log as a [`UsageError`] that names the file once.
fn nvsmi_error(path: &Path, e: &anyhow::Error) -> anyhow::Error {
    let msg = format!("{e:#}");
    let disp = show(path);
    UsageError(if msg.contains(&disp) { msg } else { format!("{disp}: {msg}") }).into()
}

/// The catalogue fields an input has, without reading its data where the format allows (an
/// nvidia-smi log is parsed once: its header may change along the way).
pub fn probe_fields(input: &Input, opts: &ReadOptions) -> Result<Vec<Field>> {
    let path = &input.path;
    match input.kind {
        Kind::Parquet => Ok(gpumon::open_parquet(input)?.fields.into_iter().map(|(_, f)| f).collect()),
        Kind::Journal => {
            let j = gpumon::open_journal(input)?;
            Ok(gpumon::schema_fields(&j.schema()).into_iter().map(|(_, f)| f).collect())
        }
        Kind::GpumonCsv => {
            use std::io::{BufRead, Read};
            let mut first = Vec::new();
            std::io::BufReader::new(input.open()?.take(1 << 20))
                .read_until(b'\n', &mut first)
                .map_err(|e| UsageError(format!("{}: cannot read: {e}", show(path))))?;
            let line = String::from_utf8_lossy(&first);
            let mut out: Vec<Field> = Vec::new();
            for cell in line.trim_end_matches('\r').split(',') {
                if let Some(f) = Field::lookup(crate::read::inputs::header_name(cell.trim_start_matches('\u{feff}')))
                    && !out.contains(&f)
                {
                    out.push(f);
                }
            }
            Ok(out)
        }
        Kind::Nvsmi => {
            let r =
                read_nvsmi_file(path, input.open()?, &opts.nvsmi, &mut |_| {}).map_err(|e| nvsmi_error(path, &e))?;
            let mut out: Vec<Field> = r.columns.iter().filter_map(|c| Field::lookup(c)).collect();
            out.push(Field::Index);
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
