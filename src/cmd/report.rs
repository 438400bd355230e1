//! `gpumon report`: the HTML page of the inputs (`gpumon_summary::report`), written to `-o` (else
//! beside the first input); exit 3 when a `--fail-if` check failed.

use anyhow::Result;

use crate::cli::ReportArgs;
use crate::cmd::summarize::report_checks;
use gpumon_summary::PhaseMode;
use gpumon_summary::{ReportConfig, default_output, render_report as render, write_out};
use gpumon_util::show;

/// Run the command; returns the exit code (3 when a `--fail-if` check failed; the report is written).
pub fn run(cfg: &ReportConfig) -> Result<i32> {
    let (page, results) = render(cfg)?;
    write_out(&cfg.output, &page)?;
    if cfg.summarize.meter && cfg.output.as_os_str() != "-" {
        eprintln!("gpumon: wrote {} ({:.1} MB)", show(&cfg.output), page.len() as f64 / 1e6);
    }
    Ok(report_checks(&results))
}

impl ReportArgs {
    pub fn into_config(self) -> Result<ReportConfig> {
        let output = match self.output {
            Some(o) => o,
            None => default_output(&self.input.inputs)?,
        };
        let summarize = self.input.into_config(PhaseMode::IfMarked)?;
        Ok(ReportConfig { summarize, output, job: self.job })
    }
}
