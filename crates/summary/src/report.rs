//! The page `gpumon report` writes: one self-contained HTML file with the summary's tables and findings, a heatmap
//! of utilization per GPU over time, and per-GPU / per-host charts drawn as inline SVG.
//!
//! Pipeline: the summarize pipeline runs unchanged ([`summarize_found`]) and its
//! `Summary` feeds the tables (the page embeds the same summary as `summarize --format json` prints
//! it, docs/summary-json.md, for scripts). The charts need the time span before they can bucket:
//! the summary already holds the first and last GPU sample inside the window (or, with no GPU rows
//! at all, its hosts' first and last tick), so that is the span (no extra pass); only when some
//! hosts have GPU rows and others none is the span widened by one pass over the timestamp column
//! ([`time_range`](crate::time_range)), clipped to the window.
//! Then one streaming pass over the inputs (the same scan machinery, Parquet row groups in
//! parallel) folds every row into [`gpumon_analysis::BUCKETS`] × [`gpumon_analysis::FINE`]
//! min/max/mean buckets per series (the interactive charts' resolution; the static SVG merges them
//! back to `BUCKETS`): memory is bounded by buckets × series, not by rows, and the page stays a few
//! MB for any length of run.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::{PhaseMode, SummarizeConfig, find_inputs, parse_checks, series, summarize_found};
use gpumon_read::Discovered;
use gpumon_util::{UsageError, show};
/// A validated `report` command line.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    /// Inputs, window, thresholds and checks exactly as for `summarize`.
    pub summarize: SummarizeConfig,
    /// The HTML file to write, or `-` for stdout.
    pub output: PathBuf,
    /// `--job ID`: the report of that job's recordings among the inputs.
    pub job: Option<String>,
}

/// Refuse an output that would replace one of the inputs (the same device and inode: a hard or
/// symbolic link, a set member or a journal counts) or that lies in a missing directory.
pub fn check_output(out: &Path, found: &Discovered) -> Result<()> {
    if let Some(i) = found.input_at(out) {
        let same = if i.path == out {
            String::new()
        } else {
            format!(" ({} is the same file)", show(&i.path))
        };
        return Err(UsageError(format!(
            "{}: is also an input{same}; write to another file",
            show(out)
        ))
        .into());
    }
    Ok(gpumon_util::fsafe::check_output_dir(out)?)
}

/// Write `text` to `path` whole (`-` is stdout): a temporary file beside it, renamed into place.
pub fn write_out(path: &Path, text: &str) -> Result<()> {
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        return Ok(out.flush()?);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report.html".into());
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    // Made new: never written through a link someone put at its name.
    let _ = std::fs::remove_file(&tmp);
    gpumon_util::fsafe::create_new(&tmp, false)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .with_context(|| format!("writing {}", show(&tmp)))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", show(&tmp), show(path)))?;
    Ok(())
}

/// The report as HTML (what `run` writes). Inputs are discovered once; an output that is one of
/// them is refused before anything is read.
pub fn render(cfg: &ReportConfig) -> Result<(String, Vec<gpumon_analysis::CheckResult>)> {
    let s = &cfg.summarize;
    parse_checks(&s.checks)?;
    let inputs = find_inputs(&s.inputs, &s.read)?;
    if cfg.output.as_os_str() != "-" {
        check_output(&cfg.output, &inputs.all())?;
    }
    if let Some(id) = &cfg.job {
        return render_job(s, id);
    }
    let o = summarize_found(s, &inputs)?;
    let (summary, results) = (&o.summary, &o.checks);
    let json = match &o.phases {
        Some(p) => gpumon_present::phases_json_value(summary, results, p),
        None => gpumon_present::json_value(summary, results),
    };
    // The charts read the metrics only (the companion files feed the summary's events and users).
    let found = &inputs.metrics;
    let grid = series::span(summary, found, s)?;
    let collected = series::collect(found, s, grid, summary.window)?;
    let (body, live) =
        gpumon_present::html::body(summary, results, &collected, &s.read.zone, o.phases.as_ref());
    let page =
        gpumon_present::html::page(&gpumon_present::html::title(summary), &body, &json, &live);
    Ok((page, o.checks))
}

/// The report of one job: its section (totals, per-host table, findings across hosts) above the
/// page of its inputs' summary, whose heatmap has every GPU of the job grouped by host, the
/// stragglers marked.
fn render_job(
    s: &SummarizeConfig,
    id: &str,
) -> Result<(String, Vec<gpumon_analysis::CheckResult>)> {
    let jobs = crate::job::summarize_jobs(s, Some(id))?;
    let Some(j) = jobs.jobs.into_iter().next() else {
        return Err(UsageError(format!("--job {id:?}: no recording of that job")).into());
    };
    let (summary, results) = (&j.outcome.summary, &j.outcome.checks);
    let part =
        gpumon_present::JobPart { view: &j.view, summary, checks: results, sources: &j.sources };
    let json: serde_json::Value = serde_json::from_str(&gpumon_present::render_jobs(
        &[part],
        &[],
        gpumon_present::SummaryFormat::Json,
    ))?;
    let cfg = SummarizeConfig { phases: PhaseMode::Off, phase_windows: Vec::new(), ..s.clone() };
    let grid = series::span(summary, &j.metrics, &cfg)?;
    let collected = series::collect(&j.metrics, &cfg, grid, summary.window)?;
    let (body, series) =
        gpumon_present::html::body(summary, results, &collected, &s.read.zone, None);
    let part =
        gpumon_present::JobPart { view: &j.view, summary, checks: results, sources: &j.sources };
    let body = format!(
        "{}{}",
        gpumon_present::html::job_section(&part),
        gpumon_present::html::mark_stragglers(&body, &j.view)
    );
    let title = format!("gpumon: job {id}");
    let page = gpumon_present::html::page(&title, &body, &json, &series);
    Ok((page, j.outcome.checks))
}

/// The report's path when `-o` is not given: the first input's name with `.html` (`run.parquet` ->
/// `run.html`, a directory `runs/` -> `runs.html`), as Python's `gpumon.report()` names it.
pub fn default_output(inputs: &[PathBuf]) -> Result<PathBuf> {
    let first = inputs.first().ok_or_else(|| UsageError("report: no input given".into()))?;
    let name = first.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if name.is_empty() || name.contains(['*', '?', '[']) {
        return Err(UsageError(format!(
            "report: cannot name the report after {}: give -o OUT.html",
            show(first)
        ))
        .into());
    }
    Ok(first.with_extension("html"))
}
