//! The reading pipeline shared by `summarize`, `report`, `compare` and `watch`: inputs found and
//! sorted by table, a relative window resolved (one cheap pass over the timestamps), every input
//! collected, the summary built and the checks evaluated. The commands that go on from there have
//! a module each: `report`'s HTML page, `convert`'s rows written again by a sink, `watch`'s live
//! view, the job view, `compare`'s runs.
//!
//! Order of work: checks are parsed first (a bad `--fail-if` is exit 2 before anything is read), the
//! inputs are discovered and sniffed (with the companion files beside a recording: per-process rows and
//! events, told apart by their columns) and put in time order, a relative window is resolved, every
//! input is collected.
//!
//! With `--by phase` (or `--phase` windows, or in the report when the inputs carry marks) the same
//! pass feeds one collector per phase ([`PhaseCollector`]), and the whole run's collector is joined
//! from the phases' stretches (an input whose stretches cannot be joined exactly is read again with
//! a collector of its own); the phases are summarised like the whole run and compared, and
//! `--fail-if` may then check the changes (`energy_per_hour.delta_pct > 10`).
//!
//! The modules are private: the crate's API is this root, what the commands use. The pipeline
//! ([`SummarizeConfig`], [`summarize`], [`find_inputs`], [`summarize_found`], [`parse_checks`]);
//! one summary per job ([`summarize_jobs`]); `compare`'s runs ([`CompareRuns`], [`compare_runs`]);
//! the report's chart series ([`series_span`], [`collect_series`]); the report page
//! ([`ReportConfig`], [`render_report`], [`write_out`]); `convert` ([`ConvertConfig`],
//! [`convert()`]); `watch`'s live view ([`WatchConfig`], [`watch_view`], [`last_tick`],
//! [`findings_so_far`]).

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod convert;
mod job;
mod report;
mod runs;
mod series;
mod watch;

pub use crate::convert::{ConvertConfig, convert};
pub use crate::job::summarize_jobs;
pub use crate::report::{
    ReportConfig, check_output, default_output, render as render_report, write_out,
};
pub use crate::runs::{CompareRuns, RunSpec, compare_runs, parse_run};
pub use crate::series::{collect as collect_series, span as series_span};
pub use crate::watch::{WatchConfig, findings as findings_so_far, last_tick, view as watch_view};

use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::Result;

use gpumon_analysis::{
    Check, CheckResult, CollectConfig, Collector, Companions, EventCollector, Stat, Summary,
    Thresholds, UsageCollector, build, evaluate, parse_check, resolve_check, wanted_fields,
};
use gpumon_analysis::{
    Measure, Part, evaluate_comparison_check, is_comparison_check, resolve_comparison_check,
};
use gpumon_analysis::{PhaseCollector, PhaseReport, PhaseWindow, Split, WindowSpec, build_phases};
use gpumon_read::in_time_order;
use gpumon_read::take_in_turn;
use gpumon_read::{Discovered, discover_recording};
use gpumon_read::{Input, Kind};
use gpumon_read::{ReadOptions, by_table, probe_fields, scan};
use gpumon_schema::InputInfo;
use gpumon_schema::catalog::Field;
use gpumon_schema::cols::{self, NO_TS};
use gpumon_util::ReadMeter;
use gpumon_util::UsageError;

/// What to read and how to summarize it (a `summarize` command line without its output format;
/// `report`, `compare` and `watch` build one too).
#[derive(Debug, Clone, Default)]
pub struct SummarizeConfig {
    /// The paths as given: files, directories, globs.
    pub inputs: Vec<PathBuf>,
    /// How to read the inputs (columns, time zone, the read meter).
    pub read: ReadOptions,
    /// The time window to summarize.
    pub window: WindowSpec,
    /// The thresholds of the findings.
    pub thresholds: Thresholds,
    /// `--fail-if` expressions as given.
    pub checks: Vec<String>,
    /// Allow the read meter, a bar on stderr (stderr a terminal, reading slow).
    pub meter: bool,
    /// Print the inputs' warnings on stderr (`watch` keeps its screen clean).
    pub warnings: bool,
    /// Whether to split the data by phase.
    pub phases: PhaseMode,
    /// `--phase NAME=SINCE..UNTIL`: phases as time windows, for inputs without marks.
    pub phase_windows: Vec<PhaseWindow>,
    /// `--baseline LABEL`: the phase the others are compared with (default: the first).
    pub baseline: Option<String>,
}

/// When the data is split by phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PhaseMode {
    /// Never.
    #[default]
    Off,
    /// When an input carries a `phase` column or `--phase` windows are given (the report).
    IfMarked,
    /// Always (`--by phase`, `--phase`).
    On,
}

/// A `--fail-if` check: on a statistic, or on a comparison of the phases.
#[derive(Debug, Clone)]
pub enum ParsedCheck {
    /// A check on a statistic of a field.
    Stat(Check, Stat),
    /// A check on a comparison of the phases (or of the runs).
    Compare(Check, Measure, Part),
}

/// Parse and resolve the checks of a summary; errors are usage errors.
pub fn parse_checks(exprs: &[String]) -> Result<Vec<ParsedCheck>> {
    exprs.iter().map(|e| parse_one(e, false)).collect()
}

/// Parse and resolve the checks of `gpumon compare`, where every check is on the comparison of the
/// runs (a plain statistic is its value in each run); errors are usage errors.
pub(crate) fn parse_comparison_checks(exprs: &[String]) -> Result<Vec<ParsedCheck>> {
    exprs.iter().map(|e| parse_one(e, true)).collect()
}

fn parse_one(e: &str, comparison: bool) -> Result<ParsedCheck> {
    let c = parse_check(e).map_err(UsageError)?;
    if comparison || is_comparison_check(&c) {
        let (m, part) = resolve_comparison_check(&c).map_err(UsageError)?;
        return Ok(ParsedCheck::Compare(c, m, part));
    }
    let stat = resolve_check(&c).map_err(UsageError)?;
    Ok(ParsedCheck::Stat(c, stat))
}

impl ParsedCheck {
    /// Evaluate the check: a statistic on `s`, a comparison on the compared summaries `cols`
    /// (label, summary) against the column `baseline`. The one evaluation of `--fail-if`, for
    /// summarize, report and compare.
    pub fn evaluate(
        &self,
        s: &Summary,
        cols: &[(String, &Summary)],
        baseline: usize,
    ) -> CheckResult {
        match self {
            ParsedCheck::Stat(c, stat) => evaluate(c, *stat, s),
            ParsedCheck::Compare(c, m, part) => {
                evaluate_comparison_check(c, *m, *part, cols, baseline)
            }
        }
    }
}

/// First and last timestamp of all inputs (one pass over the timestamp column only).
pub(crate) fn time_range(
    inputs: &[Input],
    read: &ReadOptions,
    meter: &ReadMeter,
) -> Result<Option<(i64, i64)>> {
    let mut range: Option<(i64, i64)> = None;
    for input in inputs {
        let init = || (i64::MAX, i64::MIN);
        let visit = |st: &mut (i64, i64), b: &arrow_array::RecordBatch, _: &str| -> Result<()> {
            let mut ts = Vec::new();
            if let Some(c) = b
                .schema()
                .fields()
                .iter()
                .position(|f| Field::lookup(f.name()) == Some(Field::Timestamp))
                && cols::ts_micros(b.column(c).as_ref(), &mut ts)
            {
                for t in ts.into_iter().filter(|&t| t != NO_TS) {
                    st.0 = st.0.min(t);
                    st.1 = st.1.max(t);
                }
            }
            Ok(())
        };
        let (parts, _) = scan(input, read, &[Field::Timestamp], meter, &init, &visit)?;
        for (a, b) in parts.into_iter().filter(|p| p.0 <= p.1) {
            range = Some(range.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
        }
    }
    Ok(range)
}

/// The inputs of a summary by table: the metrics (with what was skipped), per-process rows, events.
pub struct Inputs {
    /// The metrics inputs, with what discovery skipped.
    pub metrics: Discovered,
    /// The per-process inputs.
    pub(crate) procs: Vec<Input>,
    /// The events inputs.
    pub(crate) events: Vec<Input>,
}

/// Discover the inputs with the companion files beside them, put them in time order and sort them
/// by table.
pub fn find_inputs(paths: &[PathBuf], read: &ReadOptions) -> Result<Inputs> {
    let found = in_time_order(discover_recording(paths)?);
    let mut t = by_table(found.inputs, read);
    // Several recordings of one host are numbered: said in every output, their phases kept apart.
    gpumon_read::number_recordings(&mut t.metrics);
    Ok(Inputs {
        metrics: Discovered { inputs: t.metrics, skipped: found.skipped },
        procs: t.procs,
        events: t.events,
    })
}

/// Events and per-user totals from the companion inputs, inside `window`.
fn companions(
    inputs: &Inputs,
    read: &ReadOptions,
    window: gpumon_analysis::TimeWindow,
    meter: &ReadMeter,
    reports: &mut Vec<InputInfo>,
) -> Result<Companions> {
    // One collector each over every file, fed in file order (one part per file keeps the rows' order).
    let read = ReadOptions { threads: 1, ..read.clone() };
    let keys = [Field::Timestamp, Field::Host, Field::Index, Field::Uuid];
    let events = Mutex::new(EventCollector::new(window));
    let want: Vec<Field> =
        keys.into_iter().chain([Field::EventKind, Field::EventCode, Field::EventDetail]).collect();
    for input in &inputs.events {
        let visit = |_: &mut (), b: &arrow_array::RecordBatch, host: &str| match events.lock() {
            Ok(mut c) => c.visit(b, host),
            Err(_) => Ok(()),
        };
        reports.push(scan(input, &read, &want, meter, &|| (), &visit)?.1);
    }
    let usage = Mutex::new(UsageCollector::new(window));
    let want: Vec<Field> = keys
        .into_iter()
        .chain([Field::ProcPid, Field::ProcUser, Field::ProcGpuMemory, Field::ProcSm])
        .chain([Field::ProcJob, Field::ProcCommand])
        .collect();
    for input in &inputs.procs {
        let visit = |_: &mut (), b: &arrow_array::RecordBatch, host: &str| match usage.lock() {
            Ok(mut c) => c.visit(b, host),
            Err(_) => Ok(()),
        };
        reports.push(scan(input, &read, &want, meter, &|| (), &visit)?.1);
    }
    let gpumon_analysis::Gathered { events, more: events_more, routine: routine_events } =
        events.into_inner().map(EventCollector::finish).unwrap_or_default();
    let (users, sharing) = usage.into_inner().map(UsageCollector::finish).unwrap_or_default();
    Ok(Companions { events, events_more, routine_events, users, sharing })
}

/// What `summarize` found: the summary, the per-phase report when asked for, the checks' outcomes.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The summary of the whole window.
    pub summary: Summary,
    /// The per-phase report, when phases were asked for.
    pub phases: Option<PhaseReport>,
    /// The outcome of each `--fail-if` check.
    pub checks: Vec<CheckResult>,
}

/// The state of one part of the data: the whole run's collector and, split by phase, the phases'.
struct Parts {
    all: Collector,
    phases: Option<PhaseCollector>,
}

/// How rows are split by phase: windows when given, else the `phase` column when asked for or, for
/// the report, when an input has one.
fn phase_split(
    cfg: &SummarizeConfig,
    found: &Discovered,
    range: Option<(i64, i64)>,
) -> Option<Split> {
    if !cfg.phase_windows.is_empty() {
        let w: Vec<_> = cfg.phase_windows.iter().map(|w| w.resolve(range)).collect();
        return Some(Split::Windows(w.into()));
    }
    let marked = || {
        found
            .inputs
            .iter()
            .filter(|i| i.kind != Kind::Nvsmi)
            .any(|i| probe_fields(i, &cfg.read).is_ok_and(|f| f.contains(&Field::Phase)))
    };
    match cfg.phases {
        PhaseMode::Off => None,
        PhaseMode::On => Some(Split::Column),
        PhaseMode::IfMarked => marked().then_some(Split::Column),
    }
}

/// Inputs read side by side per reading thread before their states are merged: enough to keep the
/// threads busy on many small files, few enough that the states held stay small.
const INPUTS_PER_THREAD: usize = 4;

/// One pass over every metrics input into the collectors; returns them with what each input held.
fn collect(
    cfg: &SummarizeConfig,
    found: &Discovered,
    ccfg: &CollectConfig,
    split: Option<&Split>,
    meter: &ReadMeter,
) -> Result<(Parts, Vec<InputInfo>)> {
    let mut want = wanted_fields();
    if split.is_some() {
        want.push(Field::Phase);
    }
    // Split by phase, the whole run's collector is joined from the phases' stretches (one pass over
    // each batch); read again below where that join is not exact.
    let init = || Parts {
        all: Collector::new(ccfg.clone()),
        phases: split.map(|s| PhaseCollector::joined(ccfg.clone(), s.clone())),
    };
    let visit = |st: &mut Parts, b: &arrow_array::RecordBatch, host: &str| -> Result<()> {
        match st.phases.as_mut() {
            Some(p) if p.joins() => p.visit(b, host),
            Some(p) => {
                st.all.visit(b, host)?;
                p.visit(b, host)
            }
            None => st.all.visit(b, host),
        }
    };
    let mut all = init();
    let mut reports = Vec::new();
    // Several inputs are read side by side, one thread each, a window of them at a time (their states
    // are held until merged, in input order); a single input uses every thread on its row groups.
    let threads = cfg.read.threads.max(1);
    let each = if found.inputs.len() > 1 {
        ReadOptions { threads: 1, ..cfg.read.clone() }
    } else {
        cfg.read.clone()
    };
    let mut read = Vec::new();
    for (k, input) in found.inputs.iter().enumerate() {
        if read.is_empty() {
            let window = &found.inputs[k..found.inputs.len().min(k + threads * INPUTS_PER_THREAD)];
            let scan_one = |i: usize| scan(&window[i], &each, &want, meter, &init, &visit);
            read = take_in_turn(window.len(), threads, &scan_one)?;
            read.reverse();
        }
        let Some((mut parts, rep)) = read.pop() else { break };
        let mut unjoinable = false;
        for p in &mut parts {
            if let Some(whole) = p.phases.as_mut().and_then(PhaseCollector::take_whole) {
                p.all = whole;
            }
            unjoinable |= p.phases.as_ref().is_some_and(PhaseCollector::unjoinable);
        }
        if unjoinable || all.all.goes_back(parts.iter().map(|p| &p.all)) {
            // Ticks shared between parts or phase stretches (rows grouped by GPU or host): read
            // again in file order, after the data before it, the whole run's collector fed directly.
            let last = all.all.last_ticks();
            let before = all.phases.as_ref();
            let after = || Parts {
                all: Collector::after(ccfg.clone(), &last),
                phases: before.map(PhaseCollector::after),
            };
            let one = ReadOptions { threads: 1, ..cfg.read.clone() };
            parts = scan(input, &one, &want, meter, &after, &visit)?.0;
        }
        for p in parts {
            all.all.append(p.all);
            if let (Some(mine), Some(later)) = (all.phases.as_mut(), p.phases) {
                mine.append(later);
            }
        }
        reports.push(rep);
    }
    Ok((all, reports))
}

/// Read the inputs, compute the summary (and the phases' when asked for) and evaluate the checks;
/// input warnings go to stderr. What `gpumon summarize` prints, and what `gpumon report` renders.
pub fn summarize(cfg: &SummarizeConfig) -> Result<Outcome> {
    parse_checks(&cfg.checks)?;
    let inputs = find_inputs(&cfg.inputs, &cfg.read)?;
    summarize_found(cfg, &inputs)
}

impl Inputs {
    /// Every input, whatever its table.
    pub fn all(&self) -> Discovered {
        let all =
            self.metrics.inputs.iter().chain(&self.procs).chain(&self.events).cloned().collect();
        Discovered { inputs: all, ..Default::default() }
    }
}

/// [`summarize`] over inputs already found (each input is discovered once: a pipe can be read only
/// once). What `gpumon report` renders.
pub fn summarize_found(cfg: &SummarizeConfig, all_inputs: &Inputs) -> Result<Outcome> {
    let checks = parse_checks(&cfg.checks)?;
    if cfg.phases == PhaseMode::Off
        && let Some(ParsedCheck::Compare(c, ..)) =
            checks.iter().find(|c| matches!(c, ParsedCheck::Compare(..)))
    {
        return Err(UsageError(format!(
            "--fail-if '{c}' checks a comparison: add --by phase, or use gpumon compare"
        ))
        .into());
    }
    let found = &all_inputs.metrics;
    let size = found.bytes();
    let needs_range =
        cfg.window.needs_range() || cfg.phase_windows.iter().any(PhaseWindow::needs_range);
    let meter = ReadMeter::new(size * if needs_range { 2 } else { 1 }, cfg.meter);
    let range = if needs_range { time_range(&found.inputs, &cfg.read, &meter)? } else { None };
    let window = cfg.window.resolve(range);
    let ccfg = CollectConfig {
        window,
        input_bound_util: cfg.thresholds.input_bound_util,
        pegged_core: cfg.thresholds.pegged_core,
        rows: cfg.thresholds.row_rules(),
    };
    let split = phase_split(cfg, found, range);
    let (all, mut reports) = collect(cfg, found, &ccfg, split.as_ref(), &meter)?;
    let companions = companions(all_inputs, &cfg.read, window, &meter, &mut reports)?;
    meter.finish();
    for r in reports.iter().filter(|_| cfg.warnings) {
        for w in &r.warnings {
            gpumon_util::warn(&format!("{}: {w}", r.path.display()));
        }
    }
    let events = if all.phases.is_some() { companions.events.clone() } else { Vec::new() };
    let failed: Vec<InputInfo> = if all.phases.is_some() {
        reports.iter().filter(|r| r.job.as_ref().is_some_and(|j| j.failed())).cloned().collect()
    } else {
        Vec::new()
    };
    let summary =
        build(all.all, &cfg.thresholds, reports, found.skipped.clone(), window, companions);
    if summary.hosts.is_empty() && summary.users.is_empty() {
        return Err(UsageError(format!(
            "{}: nothing to summarize: {}",
            all_inputs.all().names(),
            nothing_why(&summary, cfg)
        ))
        .into());
    }
    let phases = all
        .phases
        .map(|p| {
            build_phases(p, &events, &failed, &cfg.thresholds, window, cfg.baseline.as_deref())
        })
        .transpose()
        .map_err(UsageError)?;
    let results = checks.iter().map(|c| check(c, &summary, phases.as_ref())).collect();
    Ok(Outcome { summary, phases, checks: results })
}

/// Why a summary has nothing in it.
fn nothing_why(s: &Summary, cfg: &SummarizeConfig) -> &'static str {
    if s.windowed_out > 0 {
        "no rows inside the window"
    } else if !cfg.read.gpus.is_empty() {
        "no rows of the GPUs --gpus selects"
    } else {
        "no GPU or host metrics"
    }
}

/// Evaluate one check: on the summary, or on the comparison of the marked phases.
fn check(c: &ParsedCheck, s: &Summary, phases: Option<&PhaseReport>) -> CheckResult {
    let cols: Vec<(String, &Summary)> = match (c, phases) {
        (ParsedCheck::Compare(..), Some(p)) => {
            p.phases.iter().filter_map(|x| Some((x.label.clone()?, &x.summary))).collect()
        }
        _ => Vec::new(),
    };
    let base = phases.and_then(|p| p.comparison.as_ref()).map_or(0, |c| c.baseline);
    c.evaluate(s, &cols, base)
}

#[cfg(test)]
use gpumon_present::{SummaryFormat, render};

/// A JSON summary of `inputs` read by `threads` threads, with every other setting at its default.
#[cfg(test)]
fn json_config(inputs: Vec<std::path::PathBuf>, threads: usize) -> SummarizeConfig {
    SummarizeConfig {
        inputs,
        read: ReadOptions { threads, ..Default::default() },
        ..SummarizeConfig::default()
    }
}

#[cfg(test)]
mod props;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::{
        ArrayRef, Float32Array, RecordBatch, StringArray, TimestampMicrosecondArray, UInt8Array,
        UInt32Array, UInt64Array,
    };
    use arrow_schema::{DataType, Field as AField, Schema, TimeUnit};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;

    /// 3 GPUs, 400 ticks at 1 s with a 60 s gap, nulls and an out-of-range percentage, in row groups
    /// of 97 rows (ticks split across row groups).
    fn write_file(path: &std::path::Path) {
        let (gpus, ticks) = (3u32, 400u32);
        let rows: Vec<(u32, u32)> =
            (0..ticks).flat_map(|t| (0..gpus).map(move |g| (t, g))).collect();
        let ts = |t: u32| {
            1_700_000_000_000_000i64
                + i64::from(t) * 1_000_000
                + if t >= 150 { 60_000_000 } else { 0 }
        };
        let col = |f: fn(u32, u32) -> Option<f32>| -> ArrayRef {
            Arc::new(Float32Array::from(rows.iter().map(|&(t, g)| f(t, g)).collect::<Vec<_>>()))
        };
        let util: UInt8Array = rows
            .iter()
            .map(|&(t, g)| match (t * 7 + g * 13) % 50 {
                0 => None,
                1 => Some(150),
                v => Some((v * 2 + g) as u8),
            })
            .collect();
        let cols: Vec<(&str, DataType, ArrayRef)> = vec![
            (
                "timestamp",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                Arc::new(
                    TimestampMicrosecondArray::from_iter_values(rows.iter().map(|&(t, _)| ts(t)))
                        .with_timezone("UTC"),
                ),
            ),
            (
                "host",
                DataType::Utf8,
                Arc::new(StringArray::from_iter_values(rows.iter().map(|_| "h1"))),
            ),
            (
                "index",
                DataType::UInt32,
                Arc::new(UInt32Array::from_iter_values(rows.iter().map(|&(_, g)| g))),
            ),
            ("utilization.gpu", DataType::UInt8, Arc::new(util)),
            (
                "memory.used",
                DataType::UInt32,
                Arc::new(UInt32Array::from_iter_values(
                    rows.iter().map(|&(t, g)| 1000 + t * 3 + g),
                )),
            ),
            (
                "memory.total",
                DataType::UInt32,
                Arc::new(UInt32Array::from_iter_values(rows.iter().map(|_| 81_559))),
            ),
            (
                "power.draw",
                DataType::Float32,
                col(|t, g| (t % 5 != 4).then_some(60.0 + (t % 40) as f32 * 0.25 + g as f32)),
            ),
            ("cpu.util", DataType::Float32, col(|t, _| Some((t % 20) as f32 * 0.5))),
            (
                "mem.used",
                DataType::UInt64,
                Arc::new(UInt64Array::from_iter_values(
                    rows.iter().map(|&(t, _)| 5000 + u64::from(t)),
                )),
            ),
        ];
        let schema = Arc::new(Schema::new(
            cols.iter().map(|(n, d, _)| AField::new(*n, d.clone(), true)).collect::<Vec<_>>(),
        ));
        let batch =
            RecordBatch::try_new(schema.clone(), cols.into_iter().map(|c| c.2).collect()).unwrap();
        let props = WriterProperties::builder().set_max_row_group_row_count(Some(97)).build();
        let mut w = ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema, Some(props))
            .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }

    /// Row groups read by 1 thread and by several (parts joined at row-group boundaries inside
    /// ticks, a gap, nulls, a bad value) give the same summary.
    #[test]
    fn parallel_parts_join_to_the_sequential_summary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rg.parquet");
        write_file(&path);
        let json = |threads: usize| {
            let cfg = json_config(vec![path.clone()], threads);
            let o = summarize(&cfg).unwrap();
            render(&o.summary, &o.checks, SummaryFormat::Json)
        };
        let one = json(1);
        assert!(one.contains("\"samples\": 1200") || one.contains("\"samples\":1200"), "{one}");
        assert!(one.contains("outside 0-100"), "{one}");
        for threads in [2, 3, 5, 13] {
            let many = json(threads);
            let diff = one.lines().zip(many.lines()).find(|(a, b)| a != b);
            assert!(diff.is_none() && one == many, "{threads} threads: {diff:?}");
        }
    }
}
