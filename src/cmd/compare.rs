//! `gpumon compare A B [C ...]`: the key statistics of runs (gpumon files or rotated sets, nvidia-smi
//! logs, directories) or of one phase of a run (`run.parquet@bs=64`) side by side, each against the
//! baseline (the first, or `--baseline RUN`), as table, markdown or JSON. `--fail-if` checks on the
//! values or their changes (`energy_per_hour.delta_pct > 10`) exit 3 when one holds.
//!
//! The runs are summarised, compared and checked by the summary crate (`runs`); the report, in
//! each format, is present's (`compare`, `compare_json`: the `gpumon.compare/1` document).

use std::io::Write;

use anyhow::Result;

use crate::cli::{CompareArgs, CompareFormatArg};
use crate::cmd::summarize::report_checks;
use gpumon_analysis::Thresholds;
use gpumon_present::{CompareFormat, render_comparison};
use gpumon_summary::{CompareRuns, RunSpec, compare_runs, parse_run};
use gpumon_util::UsageError;

/// A validated `compare` command line.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    pub compare: CompareRuns,
    pub format: CompareFormat,
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
        let format = match self.format {
            CompareFormatArg::Table => CompareFormat::Table,
            CompareFormatArg::Markdown => CompareFormat::Markdown,
            CompareFormatArg::Json => CompareFormat::Json,
        };
        let checks = self.fail_if;
        let compare = CompareRuns { runs, read, thresholds, checks, baseline, meter: !self.quiet };
        Ok(CompareConfig { compare, format })
    }
}

/// Run the command; exit 3 when a check failed.
pub fn run(cfg: &CompareConfig) -> Result<i32> {
    let done = compare_runs(&cfg.compare)?;
    let th = &cfg.compare.thresholds;
    let text = render_comparison(cfg.format, &done.columns(), &done.comparison, th, &done.results);
    let mut out = std::io::stdout().lock();
    // Labels and names come from files: none of their control or bidirectional characters reach a terminal.
    let text = if cfg.format == CompareFormat::Table || std::io::IsTerminal::is_terminal(&out) {
        gpumon_util::for_terminal(&text).into_owned()
    } else {
        text
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(report_checks(&done.results))
}
