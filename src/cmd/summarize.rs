//! `gpumon summarize`: the summary of the inputs (`gpumon_summary`) printed in the asked format,
//! input warnings and failed checks on stderr; exit 3 when a check failed.

use std::io::Write;

use anyhow::Result;

use crate::cli::{ByArg, InputArgs, LogArgs, SummarizeArgs, SummaryFormatArg};
use gpumon_analysis::{CheckResult, WindowSpec};
use gpumon_present::{SummaryFormat, render};
use gpumon_summary::{PhaseMode, SummarizeConfig, summarize};
use gpumon_util::{UsageError, exit};
use gpumon_util::{escape, for_terminal};

/// A validated `summarize` command line: what to summarize and the output format.
#[derive(Debug, Clone)]
pub struct SummarizeCmd {
    pub summary: SummarizeConfig,
    pub format: SummaryFormat,
    /// The job view (`--by job`), of every job or of the one `--job` names.
    pub jobs: Option<Option<String>>,
}

/// Print the failed checks to stderr; the exit code of the checks.
pub fn report_checks(results: &[CheckResult]) -> i32 {
    let mut failed = false;
    for r in results.iter().filter(|r| !r.failures.is_empty()) {
        failed = true;
        eprintln!("gpumon: check failed: {}: {}", r.check, escape(&r.failures.join("; ")));
    }
    if failed { exit::CHECK_FAILED } else { exit::OK }
}

/// Run the command; returns the exit code.
pub fn run(cmd: &SummarizeCmd) -> Result<i32> {
    let (cfg, format) = (&cmd.summary, cmd.format);
    if let Some(only) = &cmd.jobs {
        return run_jobs(cfg, only.as_deref(), format);
    }
    let o = summarize(cfg)?;
    let text = match &o.phases {
        Some(p) => gpumon_present::render_phases(&o.summary, &o.checks, p, format),
        None => render(&o.summary, &o.checks, format),
    };
    print(&text, format)?;
    Ok(report_checks(&o.checks))
}

/// `summarize --by job` / `--job ID`: the job view of each job; exit 3 when a check failed on one.
fn run_jobs(cfg: &SummarizeConfig, only: Option<&str>, format: SummaryFormat) -> Result<i32> {
    let jobs = gpumon_summary::summarize_jobs(cfg, only)?;
    let parts: Vec<gpumon_present::JobPart<'_>> = jobs
        .jobs
        .iter()
        .map(|j| gpumon_present::JobPart {
            view: &j.view,
            summary: &j.outcome.summary,
            checks: &j.outcome.checks,
            sources: &j.sources,
        })
        .collect();
    print(&gpumon_present::render_jobs(&parts, &jobs.without_job, format), format)?;
    let checks: Vec<CheckResult> = jobs.jobs.into_iter().flat_map(|j| j.outcome.checks).collect();
    Ok(report_checks(&checks))
}

/// Print a report on stdout.
fn print(text: &str, format: SummaryFormat) -> Result<()> {
    let mut out = std::io::stdout().lock();
    // Names and labels come from files: the table (a terminal's format) and anything bound for a
    // terminal get no control or bidirectional character of theirs.
    let text = if format == gpumon_present::SummaryFormat::Table
        || std::io::IsTerminal::is_terminal(&out)
    {
        for_terminal(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

impl LogArgs {
    pub fn read_options(&self) -> gpumon_read::ReadOptions {
        // An empty name skips a column (`--columns ,timestamp,...` for pandas' index column).
        let columns: Vec<String> = self.columns.iter().map(|c| c.trim().to_string()).collect();
        let nvsmi = gpumon_read::NvsmiOptions {
            columns: columns.iter().any(|c| !c.is_empty()).then_some(columns),
            gpus: self.interleaved_gpus,
            tz: self.tz.as_tz().0,
        };
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        gpumon_read::ReadOptions {
            nvsmi,
            zone: self.tz.clone(),
            gpus: gpumon_schema::GpuSelector::parse_list(&self.gpus),
            host: self.host.clone(),
            threads,
        }
    }
}

impl SummarizeArgs {
    pub fn into_config(self) -> Result<SummarizeCmd> {
        let format = match self.format {
            SummaryFormatArg::Table => gpumon_present::SummaryFormat::Table,
            SummaryFormatArg::Markdown => gpumon_present::SummaryFormat::Markdown,
            SummaryFormatArg::Json => gpumon_present::SummaryFormat::Json,
            SummaryFormatArg::Csv => gpumon_present::SummaryFormat::Csv,
        };
        let by_job = matches!(self.by, Some(ByArg::Job)) || self.job.is_some();
        if by_job && format == gpumon_present::SummaryFormat::Csv {
            return Err(
                UsageError("--by job: formats table, markdown and json (not csv)".into()).into()
            );
        }
        let phases =
            if matches!(self.by, Some(ByArg::Phase)) { PhaseMode::On } else { PhaseMode::Off };
        let jobs = by_job.then_some(self.job);
        Ok(SummarizeCmd { summary: self.input.into_config(phases)?, format, jobs })
    }
}

impl InputArgs {
    /// The config; `phases` says when to split by phase (`--phase` windows always do).
    pub fn into_config(self, phases: PhaseMode) -> Result<SummarizeConfig> {
        use gpumon_analysis::{parse_phase_window, parse_time};
        let read = self.logs.read_options();
        let time = |s: &Option<String>, what: &str| -> Result<_> {
            s.as_deref()
                .map(|t| {
                    parse_time(t, &read.zone).map_err(|e| UsageError(format!("{what}: {e}")).into())
                })
                .transpose()
        };
        let window = WindowSpec {
            since: time(&self.since, "--since")?,
            until: time(&self.until, "--until")?,
            skip_warmup: self.skip_warmup,
        };
        let mut thresholds = gpumon_analysis::Thresholds::default();
        for t in &self.thresholds {
            thresholds.set(t).map_err(UsageError)?;
        }
        let phase_windows = self
            .phase_windows
            .iter()
            .map(|w| parse_phase_window(w, &read.zone).map_err(UsageError))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SummarizeConfig {
            inputs: self.inputs,
            read,
            window,
            thresholds,
            checks: self.fail_if,
            meter: !self.quiet,
            warnings: true,
            phases: if phase_windows.is_empty() { phases } else { PhaseMode::On },
            phase_windows,
            baseline: self.baseline,
        })
    }
}
