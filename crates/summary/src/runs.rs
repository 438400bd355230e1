//! `gpumon compare`'s pipeline: each run (gpumon files or rotated sets, nvidia-smi logs,
//! directories; or one phase of a run, `run.parquet@bs=64`) summarised on its own by [`summarize`]
//! (a phase picked from that run's per-phase summaries), the summaries compared against the
//! baseline, and the comparison's `--fail-if` checks evaluated.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::{PhaseMode, SummarizeConfig, parse_comparison_checks, summarize};
use gpumon_analysis::{CheckResult, Comparison, PhaseReport, Summary, Thresholds, compare};
use gpumon_read::ReadOptions;
use gpumon_util::UsageError;

/// One run to compare, as given: a path, and the phase of it to take.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// The run as given on the command line.
    pub label: String,
    /// The recording's path.
    pub path: PathBuf,
    /// The phase to take, if any (`RUN@PHASE`).
    pub phase: Option<String>,
}

/// `RUN` or `RUN@LABEL` (a path that exists as given is a path, `@` and all).
pub fn parse_run(arg: &str) -> RunSpec {
    if !Path::new(arg).exists()
        && let Some((path, phase)) = arg.rsplit_once('@')
        && !path.is_empty()
        && !phase.is_empty()
    {
        return RunSpec {
            label: arg.to_string(),
            path: PathBuf::from(path),
            phase: Some(phase.to_string()),
        };
    }
    RunSpec { label: arg.to_string(), path: PathBuf::from(arg), phase: None }
}

/// The runs to compare and how.
#[derive(Debug, Clone)]
pub struct CompareRuns {
    /// The runs, in the order given.
    pub runs: Vec<RunSpec>,
    /// How to read the inputs.
    pub read: ReadOptions,
    /// The thresholds of the findings.
    pub thresholds: Thresholds,
    /// `--fail-if` checks on the values or their changes (`energy_per_hour.delta_pct > 10`).
    pub checks: Vec<String>,
    /// Index of the baseline run.
    pub baseline: usize,
    /// The read meter on stderr.
    pub meter: bool,
}

/// The runs compared: each one's label and summary in the order given, their comparison and the
/// results of the checks.
#[derive(Debug)]
pub struct Compared {
    /// Each run's label.
    pub labels: Vec<String>,
    /// Each run's summary.
    pub summaries: Vec<Summary>,
    /// The runs' values side by side and their changes from the baseline.
    pub comparison: Comparison,
    /// The outcome of each check.
    pub results: Vec<CheckResult>,
}

impl Compared {
    /// Each run's label and summary, as the presenters take them.
    pub fn columns(&self) -> Vec<(String, &Summary)> {
        self.labels.iter().cloned().zip(&self.summaries).collect()
    }
}

/// Summarise each run, compare them against the baseline and evaluate the checks (bad checks are
/// usage errors before anything is read).
pub fn compare_runs(cfg: &CompareRuns) -> Result<Compared> {
    let checks = parse_comparison_checks(&cfg.checks)?;
    let summaries: Vec<Summary> =
        cfg.runs.iter().map(|r| summary_of(r, cfg)).collect::<Result<_>>()?;
    let labels: Vec<String> = cfg.runs.iter().map(|r| r.label.clone()).collect();
    let cols: Vec<(String, &Summary)> = labels.iter().cloned().zip(&summaries).collect();
    let comparison = compare(&cols, cfg.baseline);
    let results: Vec<CheckResult> = match cols.get(cfg.baseline) {
        Some(&(_, base)) => checks.iter().map(|c| c.evaluate(base, &cols, cfg.baseline)).collect(),
        None => Vec::new(),
    };
    Ok(Compared { labels, summaries, comparison, results })
}

/// The summary of one run, or of its phase.
fn summary_of(run: &RunSpec, cfg: &CompareRuns) -> Result<Summary> {
    let scfg = SummarizeConfig {
        inputs: vec![run.path.clone()],
        read: cfg.read.clone(),
        thresholds: cfg.thresholds.clone(),
        meter: cfg.meter,
        warnings: true,
        phases: if run.phase.is_some() { PhaseMode::On } else { PhaseMode::Off },
        ..SummarizeConfig::default()
    };
    let mut o = summarize(&scfg)?;
    let Some(label) = &run.phase else { return Ok(o.summary) };
    let phases = o.phases.take().unwrap_or_else(|| PhaseReport {
        phases: Vec::new(),
        spans: Vec::new(),
        comparison: None,
    });
    phases.get(label).cloned().ok_or_else(|| {
        let known = phases.labels().join(", ");
        let known = if known.is_empty() { "none: no row is marked".to_string() } else { known };
        UsageError(format!("{}: no phase '{label}' (its phases: {known})", run.path.display()))
            .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_phases_of_runs() {
        let dir = tempfile::tempdir().unwrap();
        let odd = dir.path().join("a@b.csv");
        std::fs::write(&odd, "x").unwrap();
        let odd = odd.to_string_lossy().into_owned();
        assert_eq!(parse_run(&odd).phase, None, "a file named with @ is that file");
        let r = parse_run("runs/run.parquet@bs=64");
        assert_eq!(
            (r.path, r.phase.as_deref()),
            (PathBuf::from("runs/run.parquet"), Some("bs=64"))
        );
        assert_eq!(parse_run("x.parquet@").phase, None);
    }
}
