//! What `gpumon convert` does: any readable input (gpumon Parquet/CSV/journal, nvidia-smi logs) to gpumon CSV or
//! Parquet, written by the existing sinks (`gpumon_sink::open`) with a selection of the fields the
//! inputs have.
//!
//! Rows become ticks again (`gpumon_sink::TickWriter`). The output is written to a hidden temporary file beside it and renamed into place when complete.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};

use gpumon_read::{Input, ReadOptions, by_table, discover, in_time_order, probe_fields, scan};
use gpumon_schema::catalog::{Field, Source, Table};
use gpumon_schema::{Format, Selection, Value, rows_of_batch};
use gpumon_sink::TickWriter;
use gpumon_util::{ReadMeter, UsageError, show, warn};

/// Rows turned from Arrow into catalogue rows at once.
const CHUNK_ROWS: usize = 4096;

/// A validated `convert` command line.
#[derive(Debug, Clone)]
pub struct ConvertConfig {
    /// The paths as given: files, directories, globs.
    pub inputs: Vec<PathBuf>,
    /// The file to write.
    pub output: PathBuf,
    /// `--format`; None: from the output's extension.
    pub format: Option<Format>,
    /// How to read the inputs.
    pub read: ReadOptions,
    /// Allow the read meter (a bar on stderr for long reads).
    pub meter: bool,
    /// gpumon's own command line, kept in the output's metadata.
    pub command_line: String,
}

fn tmp_path(out: &Path) -> PathBuf {
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    out.with_file_name(format!(".{name}.converting"))
}

/// The columns of the output: timestamp, host, index, then every field the inputs have, in catalogue order.
fn selection(fields: &[Field]) -> Selection {
    let mut cols = vec![Field::Timestamp, Field::Host, Field::Index];
    for &f in fields {
        if !cols.contains(&f) && f.def().source != Source::Process {
            cols.push(f);
        }
    }
    cols.sort();
    Selection::new(cols)
}

/// Feed the rows of one input to the writer; rows without a timestamp are counted and warned about.
fn convert_input(
    input: &gpumon_read::Input,
    read: &ReadOptions,
    want: &[Field],
    meter: &ReadMeter,
    w: &Mutex<TickWriter>,
) -> Result<()> {
    let no_ts = std::sync::atomic::AtomicU64::new(0);
    let visit = |_: &mut (), b: &arrow_array::RecordBatch, host: &str| -> Result<()> {
        let mut w = w.lock().map_err(|_| anyhow::anyhow!("writer lock poisoned"))?;
        let host: Arc<str> = Arc::from(host);
        let keep = w.keeps_counters(gpumon_schema::counter_names(b));
        // A catalogue row is ~1 KiB: convert a big batch a slice at a time.
        let mut rows = Vec::with_capacity(CHUNK_ROWS);
        for off in (0..b.num_rows()).step_by(CHUNK_ROWS) {
            rows.clear();
            let n = CHUNK_ROWS.min(b.num_rows() - off);
            rows_of_batch(&b.slice(off, n), &mut rows);
            no_ts.fetch_add((n - rows.len()) as u64, std::sync::atomic::Ordering::Relaxed);
            for (ts, mut row) in rows.drain(..) {
                if row.get(Field::Host).is_missing() {
                    row.set(Field::Host, Value::S(host.clone()));
                }
                if !keep {
                    row.set_progress(None);
                }
                w.push_row(ts, row)?;
            }
        }
        Ok(())
    };
    let (_, rep) = scan(input, read, want, meter, &|| (), &visit)?;
    for warning in &rep.warnings {
        gpumon_util::warn(&format!("{}: {warning}", rep.path.display()));
    }
    let no_ts = no_ts.into_inner();
    if no_ts > 0 {
        gpumon_util::warn(&format!(
            "{}: {no_ts} row(s) without a timestamp cannot be placed in time; not converted",
            rep.path.display()
        ));
    }
    Ok(())
}

/// `--format`, else the output's extension.
fn output_format(cfg: &ConvertConfig) -> Result<Format> {
    match cfg.format {
        Some(f) => Ok(f),
        None => Format::from_path(&cfg.output).ok_or_else(|| {
            UsageError(format!(
                "cannot tell the format of {} from its extension; use .csv or .parquet, or --format",
                show(&cfg.output)
            ))
            .into()
        }),
    }
}

/// A recording's directory also holds its per-process and events files: convert writes the
/// metrics table, so those are skipped with one line each, unless nothing else was given (then
/// reading them says what they are, exit 2).
fn skip_companions(inputs: &mut Vec<Input>, read: &ReadOptions) {
    let t = by_table(std::mem::take(inputs), read);
    if t.metrics.is_empty() {
        // Nothing else given: reading them says what they are (exit 2).
        *inputs = t.procs.into_iter().chain(t.events).collect();
        return;
    }
    for (i, table) in
        t.procs.iter().map(|i| (i, Table::Procs)).chain(t.events.iter().map(|i| (i, Table::Events)))
    {
        warn(&format!(
            "skipping {}: {}; convert writes the per-GPU metrics",
            show(&i.path),
            table.describe()
        ));
    }
    *inputs = t.metrics;
}

/// Convert the inputs of `cfg` into its output; returns the rows written.
pub fn convert(cfg: &ConvertConfig) -> Result<u64> {
    let format = output_format(cfg)?;
    let mut found = in_time_order(discover(&cfg.inputs)?);
    crate::report::check_output(&cfg.output, &found)?;
    skip_companions(&mut found.inputs, &cfg.read);
    // Several recordings of one host are kept apart (their phases relabelled) and said.
    gpumon_read::number_recordings(&mut found.inputs);
    let infos: Vec<gpumon_schema::InputInfo> = found
        .inputs
        .iter()
        .map(|i| gpumon_schema::InputInfo {
            path: i.path.clone(),
            rows: 0,
            recording: i.recording.clone(),
            ..Default::default()
        })
        .collect();
    let note = gpumon_schema::recordings_note(&infos);
    if let Some((head, rest)) = note.split_first() {
        warn(&format!(
            "{head} {}",
            rest.iter().map(|l| l.replace(", 0 rows in", " in")).collect::<Vec<_>>().join("; ")
        ));
    }
    let mut fields = Vec::new();
    for i in &found.inputs {
        for f in probe_fields(i, &cfg.read)? {
            if !fields.contains(&f) {
                fields.push(f);
            }
        }
    }
    let job = common_job(&found.inputs);
    let sel = selection(&fields);
    let want: Vec<Field> = sel.fields().collect();
    let tmp = tmp_path(&cfg.output);
    // What an interrupted conversion left (a link there is removed, never followed): made anew.
    let _ = std::fs::remove_file(&tmp);
    let w = Arc::new(Mutex::new(
        TickWriter::new(format, tmp.clone(), sel, cfg.command_line.clone()).with_job(job),
    ));
    let meter = ReadMeter::new(found.bytes(), cfg.meter);
    let read = ReadOptions { threads: 1, ..cfg.read.clone() };
    let result = (|| -> Result<u64> {
        for input in &found.inputs {
            convert_input(input, &read, &want, &meter, &w)?;
        }
        let w = Arc::try_unwrap(w).map_err(|_| anyhow::anyhow!("writer still shared"))?;
        Ok(w.into_inner().map_err(|_| anyhow::anyhow!("writer lock poisoned"))?.finish()?)
    })();
    meter.finish();
    let rows = match result {
        Ok(0) => {
            let _ = std::fs::remove_file(&tmp);
            let gpus = if cfg.read.gpus.is_empty() { "" } else { " of the GPUs --gpus selects" };
            return Err(UsageError(format!(
                "{}: no rows with a timestamp to convert{gpus}; {} not written",
                found.names(),
                show(&cfg.output)
            ))
            .into());
        }
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, &cfg.output)
        .with_context(|| format!("renaming {} to {}", show(&tmp), show(&cfg.output)))?;
    Ok(rows)
}

/// The job every input names in its footer, kept in the output's: the same job id on every input
/// that has one (its node and ranks kept where they agree too). Inputs of several jobs: none, said.
fn common_job(inputs: &[Input]) -> Option<gpumon_schema::JobId> {
    let jobs: Vec<gpumon_schema::JobId> = inputs.iter().filter_map(gpumon_read::job_of).collect();
    let first = jobs.first()?.clone();
    if jobs.iter().any(|j| j.id != first.id) {
        let mut ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        warn(&format!(
            "the inputs belong to several jobs ({}): the output names none",
            ids.join(", ")
        ));
        return None;
    }
    let agree = |f: fn(&gpumon_schema::JobId) -> &Option<String>| {
        jobs.iter().all(|j| f(j) == f(&first)).then(|| f(&first).clone()).flatten()
    };
    Some(gpumon_schema::JobId {
        node: agree(|j| &j.node),
        rank: agree(|j| &j.rank),
        local_rank: agree(|j| &j.local_rank),
        world_size: agree(|j| &j.world_size),
        ..first.clone()
    })
}
