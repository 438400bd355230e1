//! `gpumon summarize`: read the inputs, compute the summary, print it, run the checks.
//!
//! Order of work: checks are parsed first (a bad `--fail-if` is exit 2 before anything is read), the
//! inputs are discovered and sniffed (with the companion files beside a recording: per-process rows and
//! events, told apart by their columns), a relative window is resolved (one cheap pass over the
//! timestamps), every input is collected, then the report goes to stdout and input warnings and failed
//! checks to stderr. Exit 3 when a check failed.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::Result;

use crate::analysis::checks::{Check, parse_check, resolve};
use crate::analysis::collect::{CollectConfig, Collector, wanted_fields};
use crate::analysis::events::EventCollector;
use crate::analysis::findings::Thresholds;
use crate::analysis::stat::Stat;
use crate::analysis::usage::UsageCollector;
use crate::analysis::window::WindowSpec;
use crate::analysis::{CheckResult, Companions, Summary, build, evaluate};
use crate::cli::{InputArgs, LogArgs, SummarizeArgs, SummaryFormatArg};
use crate::present::{SummaryFormat, render};
use crate::read::inputs::{Discovered, Input, discover_recording};
use crate::read::scan::{ReadOptions, scan, table_of};
use crate::schema::catalog::{Field, Table};
use crate::schema::cols::{self, NO_TS};
use crate::schema::run::InputInfo;
use crate::util::error::{UsageError, exit};
use crate::util::progress::Progress;

/// A validated `summarize` command line.
#[derive(Debug, Clone)]
pub struct SummarizeConfig {
    pub inputs: Vec<PathBuf>,
    pub read: ReadOptions,
    pub window: WindowSpec,
    pub thresholds: Thresholds,
    /// `--fail-if` expressions as given.
    pub checks: Vec<String>,
    pub format: SummaryFormat,
    /// Allow a progress bar (stderr a terminal, reading slow).
    pub progress: bool,
}

/// Parse and resolve the checks; errors are usage errors.
pub fn parse_checks(exprs: &[String]) -> Result<Vec<(Check, Stat)>> {
    exprs
        .iter()
        .map(|e| {
            let c = parse_check(e).map_err(UsageError)?;
            let stat = resolve(&c).map_err(UsageError)?;
            Ok((c, stat))
        })
        .collect()
}

/// First and last timestamp of all inputs (one pass over the timestamp column only).
pub fn time_range(inputs: &[Input], read: &ReadOptions, progress: &Progress) -> Result<Option<(i64, i64)>> {
    let mut range: Option<(i64, i64)> = None;
    for input in inputs {
        let init = || (i64::MAX, i64::MIN);
        let visit = |st: &mut (i64, i64), b: &arrow_array::RecordBatch, _: &str| -> Result<()> {
            let mut ts = Vec::new();
            if let Some(c) = b.schema().fields().iter().position(|f| Field::lookup(f.name()) == Some(Field::Timestamp))
                && cols::ts_micros(b.column(c).as_ref(), &mut ts)
            {
                for t in ts.into_iter().filter(|&t| t != NO_TS) {
                    st.0 = st.0.min(t);
                    st.1 = st.1.max(t);
                }
            }
            Ok(())
        };
        let (parts, _) = scan(input, read, &[Field::Timestamp], progress, &init, &visit)?;
        for (a, b) in parts.into_iter().filter(|p| p.0 <= p.1) {
            range = Some(range.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
        }
    }
    Ok(range)
}

/// The inputs of a summary by table: the metrics (with what was skipped), per-process rows, events.
pub struct Inputs {
    pub metrics: Discovered,
    pub procs: Vec<Input>,
    pub events: Vec<Input>,
}

/// Discover the inputs with the companion files beside them and sort them by table.
pub fn find_inputs(paths: &[PathBuf], read: &ReadOptions) -> Result<Inputs> {
    let found = discover_recording(paths)?;
    let mut out = Inputs {
        metrics: Discovered { inputs: Vec::new(), skipped: found.skipped },
        procs: Vec::new(),
        events: Vec::new(),
    };
    for input in found.inputs {
        match table_of(&input, read) {
            Table::Metrics => out.metrics.inputs.push(input),
            Table::Procs => out.procs.push(input),
            Table::Events => out.events.push(input),
        }
    }
    Ok(out)
}

/// Events and per-user totals from the companion inputs, inside `window`.
fn companions(
    inputs: &Inputs,
    read: &ReadOptions,
    window: (Option<i64>, Option<i64>),
    progress: &Progress,
    reports: &mut Vec<InputInfo>,
) -> Result<Companions> {
    // One collector each over every file, fed in file order (one part per file keeps the rows' order).
    let read = ReadOptions { threads: 1, ..read.clone() };
    let keys = [Field::Timestamp, Field::Host, Field::Index, Field::Uuid];
    let events = Mutex::new(EventCollector::new(window));
    let want: Vec<Field> = keys.into_iter().chain([Field::EventKind, Field::EventCode, Field::EventDetail]).collect();
    for input in &inputs.events {
        let visit = |_: &mut (), b: &arrow_array::RecordBatch, host: &str| match events.lock() {
            Ok(mut c) => c.visit(b, host),
            Err(_) => Ok(()),
        };
        reports.push(scan(input, &read, &want, progress, &|| (), &visit)?.1);
    }
    let usage = Mutex::new(UsageCollector::new(window));
    let want: Vec<Field> =
        keys.into_iter().chain([Field::ProcPid, Field::ProcUser, Field::ProcGpuMemory, Field::ProcSm]).collect();
    for input in &inputs.procs {
        let visit = |_: &mut (), b: &arrow_array::RecordBatch, host: &str| match usage.lock() {
            Ok(mut c) => c.visit(b, host),
            Err(_) => Ok(()),
        };
        reports.push(scan(input, &read, &want, progress, &|| (), &visit)?.1);
    }
    let (events, events_more) = events.into_inner().map(EventCollector::finish).unwrap_or_default();
    let users = usage.into_inner().map(UsageCollector::finish).unwrap_or_default();
    Ok(Companions { events, events_more, users })
}

/// Read the inputs, compute the summary and evaluate the checks; input warnings go to stderr. What
/// [`run`] prints.
pub fn summarize(cfg: &SummarizeConfig) -> Result<(Summary, Vec<CheckResult>)> {
    parse_checks(&cfg.checks)?;
    let inputs = find_inputs(&cfg.inputs, &cfg.read)?;
    summarize_found(cfg, &inputs)
}

impl Inputs {
    /// Every input, whatever its table.
    pub fn all(&self) -> Discovered {
        let all = self.metrics.inputs.iter().chain(&self.procs).chain(&self.events).cloned().collect();
        Discovered { inputs: all, ..Default::default() }
    }
}

/// [`summarize`] over inputs already found (each input is discovered once: a pipe can be read only
/// once). What `gpumon report` renders.
pub fn summarize_found(cfg: &SummarizeConfig, inputs: &Inputs) -> Result<(Summary, Vec<CheckResult>)> {
    let checks = parse_checks(&cfg.checks)?;
    let found = &inputs.metrics;
    let size = found.bytes();
    let passes = if cfg.window.needs_range() { 2 } else { 1 };
    let progress = Progress::new(size * passes, cfg.progress);
    let range = if cfg.window.needs_range() { time_range(&found.inputs, &cfg.read, &progress)? } else { None };
    let window = cfg.window.resolve(range);
    let ccfg = CollectConfig {
        since: window.0,
        until: window.1,
        input_bound_util: cfg.thresholds.input_bound_util,
        pegged_core: cfg.thresholds.pegged_core,
    };
    let want = wanted_fields();
    let mut all = Collector::new(ccfg.clone());
    let mut reports = Vec::new();
    for input in &found.inputs {
        let init = || Collector::new(ccfg.clone());
        let visit = |c: &mut Collector, b: &arrow_array::RecordBatch, host: &str| c.visit(b, host);
        let (parts, rep) = scan(input, &cfg.read, &want, &progress, &init, &visit)?;
        for p in parts {
            all.append(p);
        }
        reports.push(rep);
    }
    let companions = companions(inputs, &cfg.read, window, &progress, &mut reports)?;
    progress.finish();
    for r in &reports {
        for w in &r.warnings {
            crate::util::warn::warn(&format!("{}: {w}", r.path.display()));
        }
    }
    let summary = build(all, &cfg.thresholds, reports, found.skipped.clone(), window, companions);
    if summary.hosts.is_empty() && summary.users.is_empty() {
        let why = if summary.windowed_out > 0 {
            "no rows inside the window"
        } else if !cfg.read.gpus.is_empty() {
            "no rows of the GPUs --gpus selects"
        } else {
            "no GPU or host metrics"
        };
        return Err(UsageError(format!("{}: nothing to summarize: {why}", inputs.all().names())).into());
    }
    let results: Vec<CheckResult> = checks.iter().map(|(c, stat)| evaluate(c, *stat, &summary)).collect();
    Ok((summary, results))
}

/// Print the failed checks to stderr; the exit code of the checks.
pub fn report_checks(results: &[CheckResult]) -> i32 {
    let mut failed = false;
    for r in results.iter().filter(|r| !r.failures.is_empty()) {
        failed = true;
        eprintln!("gpumon: check failed: {}: {}", r.check, r.failures.join("; "));
    }
    if failed { exit::CHECK_FAILED } else { exit::OK }
}

/// Run the command; returns the exit code.
pub fn run(cfg: &SummarizeConfig) -> Result<i32> {
    let (summary, results) = summarize(cfg)?;
    let text = render(&summary, &results, cfg.format);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(report_checks(&results))
}

impl LogArgs {
    pub fn read_options(&self) -> crate::read::scan::ReadOptions {
        let columns: Vec<String> =
            self.columns.iter().map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
        let nvsmi = crate::read::smilog::NvsmiOptions {
            columns: (!columns.is_empty()).then_some(columns),
            gpus: self.interleaved_gpus,
            tz: self.tz.as_tz().0,
        };
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        crate::read::scan::ReadOptions {
            nvsmi,
            zone: self.tz,
            gpus: crate::schema::gpus::GpuSelector::parse_list(&self.gpus),
            host: self.host.clone(),
            threads,
        }
    }
}

impl SummarizeArgs {
    pub fn into_config(self) -> Result<crate::cmd::summarize::SummarizeConfig> {
        let format = match self.format {
            SummaryFormatArg::Table => crate::present::SummaryFormat::Table,
            SummaryFormatArg::Markdown => crate::present::SummaryFormat::Markdown,
            SummaryFormatArg::Json => crate::present::SummaryFormat::Json,
            SummaryFormatArg::Csv => crate::present::SummaryFormat::Csv,
        };
        self.input.into_config(format)
    }
}

impl InputArgs {
    pub fn into_config(self, format: crate::present::SummaryFormat) -> Result<crate::cmd::summarize::SummarizeConfig> {
        use crate::analysis::window::{WindowSpec, parse_time};
        let read = self.logs.read_options();
        let time = |s: &Option<String>, what: &str| -> Result<_> {
            s.as_deref()
                .map(|t| parse_time(t, &read.zone).map_err(|e| UsageError(format!("{what}: {e}")).into()))
                .transpose()
        };
        let window = WindowSpec {
            since: time(&self.since, "--since")?,
            until: time(&self.until, "--until")?,
            skip_warmup: self.skip_warmup,
        };
        let mut thresholds = crate::analysis::findings::Thresholds::default();
        for t in &self.thresholds {
            thresholds.set(t).map_err(UsageError)?;
        }
        Ok(crate::cmd::summarize::SummarizeConfig {
            inputs: self.inputs,
            read,
            window,
            thresholds,
            checks: self.fail_if,
            format,
            progress: !self.quiet,
        })
    }
}
