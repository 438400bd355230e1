//! `gpumon compare A B [C ...]`: the key statistics of runs (gpumon files or rotated sets, nvidia-smi
//! logs, directories) or of one phase of a run (`run.parquet@bs=64`) side by side, each against the
//! baseline (the first, or `--baseline RUN`), as table, markdown or JSON. `--fail-if` checks on the
//! values or their changes (`energy_per_hour.delta_pct > 10`) exit 3 when one holds.
//!
//! Each run is summarised by the summarize pipeline on its own ([`summarize`]); a phase is picked from
//! that run's per-phase summaries. The report, in each format, is present's (`compare`,
//! `compare_json`: the `gpumon.compare/1` document).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::cli::{CompareArgs, CompareFormatArg};
use crate::cmd::summarize::report_checks;
use gpumon_analysis::compare;
use gpumon_analysis::findings::Thresholds;
use gpumon_analysis::window::WindowSpec;
use gpumon_analysis::{CheckResult, Summary};
use gpumon_present::compare::{self as show, CompareFormat};
use gpumon_read::scan::ReadOptions;
use gpumon_summary::{PhaseMode, SummarizeConfig, parse_comparison_checks, summarize};
use gpumon_util::error::UsageError;

/// One run to compare, as given: a path, and the phase of it to take.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub label: String,
    pub path: PathBuf,
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

/// A validated `compare` command line.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    pub runs: Vec<RunSpec>,
    pub read: ReadOptions,
    pub thresholds: Thresholds,
    pub checks: Vec<String>,
    pub format: CompareFormatArg,
    /// Index of the baseline run.
    pub baseline: usize,
    pub progress: bool,
}

impl CompareArgs {
    pub fn into_config(self) -> Result<CompareConfig> {
        let read = self.logs.read_options();
        let runs: Vec<RunSpec> = self.runs.iter().map(|r| parse_run(r)).collect();
        let baseline = match &self.baseline {
            None => 0,
            Some(b) => runs.iter().position(|r| r.label == *b).ok_or_else(|| {
                UsageError(format!(
                    "--baseline {b}: not one of the runs given ({})",
                    self.runs.join(", ")
                ))
            })?,
        };
        let mut thresholds = Thresholds::default();
        for t in &self.thresholds {
            thresholds.set(t).map_err(UsageError)?;
        }
        Ok(CompareConfig {
            runs,
            read,
            thresholds,
            checks: self.fail_if,
            format: self.format,
            baseline,
            progress: !self.quiet,
        })
    }
}

/// The summary of one run, or of its phase.
fn summary_of(run: &RunSpec, cfg: &CompareConfig) -> Result<Summary> {
    let scfg = SummarizeConfig {
        inputs: vec![run.path.clone()],
        read: cfg.read.clone(),
        window: WindowSpec::default(),
        thresholds: cfg.thresholds.clone(),
        checks: Vec::new(),
        progress: cfg.progress,
        warnings: true,
        phases: if run.phase.is_some() { PhaseMode::On } else { PhaseMode::Off },
        phase_windows: Vec::new(),
        baseline: None,
    };
    let mut o = summarize(&scfg)?;
    let Some(label) = &run.phase else { return Ok(o.summary) };
    let phases = o.phases.take().unwrap_or_else(|| gpumon_analysis::phases::PhaseReport {
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

/// Run the command; exit 3 when a check failed.
pub fn run(cfg: &CompareConfig) -> Result<i32> {
    // Bad checks are usage errors before anything is read.
    let checks = parse_comparison_checks(&cfg.checks)?;
    let summaries: Vec<Summary> =
        cfg.runs.iter().map(|r| summary_of(r, cfg)).collect::<Result<_>>()?;
    let cols: Vec<(String, &Summary)> =
        cfg.runs.iter().map(|r| r.label.clone()).zip(&summaries).collect();
    let c = compare::compare(&cols, cfg.baseline);
    let results: Vec<CheckResult> = match cols.get(cfg.baseline) {
        Some(&(_, base)) => checks.iter().map(|c| c.evaluate(base, &cols, cfg.baseline)).collect(),
        None => Vec::new(),
    };
    let format = match cfg.format {
        CompareFormatArg::Table => CompareFormat::Table,
        CompareFormatArg::Markdown => CompareFormat::Markdown,
        CompareFormatArg::Json => CompareFormat::Json,
    };
    let text = show::render(format, &cols, &c, &cfg.thresholds, &results);
    let mut out = std::io::stdout().lock();
    // Labels and names come from files: none of their control or bidirectional characters reach a terminal.
    let text = if format == CompareFormat::Table || std::io::IsTerminal::is_terminal(&out) {
        gpumon_util::text::for_terminal(&text).into_owned()
    } else {
        text
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(report_checks(&results))
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
