//! Analysis of recorded metrics: per-GPU and per-host statistics, findings, checks.
//!
//! [`Collector`] accumulates batches; [`build`] turns the finished collector into a
//! [`Summary`] (statistics, gaps, findings per host, over-all figures); [`evaluate`] runs the
//! `--fail-if` checks against it. Presenters only read the `Summary`.
//!
//! The modules are private: the crate's API is the list re-exported below, what the reading
//! pipeline, the presenters and the fuzz harness use. Collecting ([`Collector`], [`PhaseCollector`],
//! [`EventCollector`], [`UsageCollector`]); the summary and its statistics ([`Summary`], [`Stat`]
//! (a statistic's id), [`StatValues`] (a scope's values, one per `Stat`), [`Finding`]); checks
//! ([`parse_check`], [`evaluate`]); windows ([`WindowSpec`]); comparisons ([`compare()`],
//! [`Comparison`]); work rates ([`ProgressStat`]); the report's series ([`Grid`], [`Series`]); the
//! job view ([`build_job_view`], [`JobView`]); the last tick ([`LastTick`]).

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod acc;
mod checks;
mod collect;
mod compare;
mod events;
mod facts;
mod findings;
mod job;
mod keys;
mod last;
mod phases;
mod progress;
mod rowfacts;
mod series;
mod stat;
mod stat_values;
mod stretch;
mod usage;
mod window;
mod xid;

pub use crate::acc::{REASONS, Reason};
pub use crate::checks::{Check, parse_check, resolve as resolve_check};
pub use crate::collect::{CollectConfig, Collector, wanted_fields};
pub use crate::compare::{
    Comparison, Measure, Part, change as comparison_change, compare,
    evaluate as evaluate_comparison_check, is_comparison_check,
    resolve as resolve_comparison_check,
};
pub use crate::events::{EventCollector, EventRecord, Gathered, RoutineCount};
pub use crate::findings::{Finding, RULES, Rule, Severity, Thresholds};
pub use crate::job::{JOB_RULES, JobHost, JobView, NodeOf, build as build_job_view};
pub use crate::last::LastTick;
pub use crate::phases::{PhaseCollector, PhaseReport, PhaseSummary, Split, build_phases};
pub use crate::progress::ProgressStat;
pub use crate::series::{
    BUCKETS, Collected, Envelope, FINE, Grid, MAX_CHARTED, Series, Track, wanted as charted_fields,
};
pub use crate::stat::{Scope, Stat};
pub use crate::stat_values::StatValues;
pub use crate::usage::{UsageCollector, UserUsage};
pub use crate::window::{PhaseWindow, TimeWindow, WindowSpec, parse_phase_window, parse_time};

use std::path::PathBuf;

use crate::acc::{Gap, GpuAcc, TimingStats};
use crate::collect::GpuKey;
use crate::findings::{GpuView, diagnose, job_failed, shared_gpu};
use crate::stat_values::{all_gpu_stats, gpu_stats, has_host_data, host_stats};
use gpumon_schema::InputInfo;

/// One GPU of a host.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSummary {
    /// `index`, or the uuid for files without an index column.
    pub label: String,
    /// The GPU's `index`, where the input has one.
    pub index: Option<u32>,
    /// The GPU instance id of a MIG instance (a unit of its own, grouped under its GPU `index`).
    pub mig_gi: Option<u32>,
    /// The GPU's `uuid`, where recorded.
    pub uuid: Option<String>,
    /// The board's `name` (`NVIDIA H100 80GB HBM3`), where recorded.
    pub name: Option<String>,
    /// First and last sample in the window, UTC µs.
    pub start: i64,
    /// See `start`.
    pub end: i64,
    /// The longest gaps (at most 64), in time order; the `gaps` statistic counts them all.
    pub gaps: Vec<Gap>,
    /// How `energy_wh` was found: `counter` (energy.total steps) or `power` (power.draw integrated).
    pub energy_method: Option<&'static str>,
    /// The GPU's statistics.
    pub stats: StatValues,
}

/// One host.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSummary {
    /// The host name the rows carry.
    pub name: String,
    /// Its GPUs, in order of index (or label).
    pub gpus: Vec<GpuSummary>,
    /// The host's statistics (host-level fields).
    pub stats: StatValues,
    /// Whether any host-level field was recorded (nvidia-smi logs have none).
    pub has_host_data: bool,
    /// The findings of the host and its GPUs, errors first, then warnings, then info.
    pub findings: Vec<Finding>,
}

/// Everything a report shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Each host of the inputs.
    pub hosts: Vec<HostSummary>,
    /// Over-all figures: GPUs of all hosts pooled.
    pub all_gpus: StatValues,
    /// Over-all host figures: hosts pooled.
    pub all_hosts: StatValues,
    /// First sample read, UTC µs (None when no row was read).
    pub start: Option<i64>,
    /// Last sample read, UTC µs.
    pub end: Option<i64>,
    /// What each input held.
    pub inputs: Vec<InputInfo>,
    /// Files found beside the inputs but not read, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
    /// The window applied.
    pub window: window::TimeWindow,
    /// Rows left out by the window.
    pub windowed_out: u64,
    /// The thresholds the findings were made with.
    pub thresholds: Thresholds,
    /// NVML events of the recording's events file, in time order (at most `events::MAX_LISTED`).
    pub events: Vec<EventRecord>,
    /// Events beyond those listed.
    pub events_more: u64,
    /// Routine clock and P-state changes per GPU (counted, never listed as events).
    pub routine_events: Vec<RoutineCount>,
    /// Per-user totals from the per-process rows (`record --processes`).
    pub users: Vec<UserUsage>,
    /// The job's work counters (`progress.KEY` columns): totals and rates, in order of first appearance.
    pub progress: Vec<progress::ProgressStat>,
}

impl Default for Summary {
    /// A summary of nothing: no host, empty statistics, default thresholds.
    fn default() -> Summary {
        Summary {
            hosts: Vec::new(),
            all_gpus: StatValues::empty(Scope::Gpu),
            all_hosts: StatValues::empty(Scope::Host),
            start: None,
            end: None,
            inputs: Vec::new(),
            skipped: Vec::new(),
            window: TimeWindow::default(),
            windowed_out: 0,
            thresholds: Thresholds::default(),
            events: Vec::new(),
            events_more: 0,
            routine_events: Vec::new(),
            users: Vec::new(),
            progress: Vec::new(),
        }
    }
}

/// What the companion files of the inputs held: events and per-user totals.
#[derive(Debug, Clone, Default)]
pub struct Companions {
    /// The events listed ([`Summary::events`]).
    pub events: Vec<EventRecord>,
    /// Events beyond those listed.
    pub events_more: u64,
    /// Routine clock and P-state changes per GPU.
    pub routine_events: Vec<RoutineCount>,
    /// Per-user totals.
    pub users: Vec<UserUsage>,
    /// Who shared each GPU (from the same per-process rows).
    pub sharing: Vec<usage::Sharing>,
}

impl Summary {
    /// Whole GPUs (a GPU split into MIG instances counts once).
    pub fn gpu_count(&self) -> usize {
        self.hosts.iter().flat_map(|h| &h.gpus).filter(|g| g.mig_gi.is_none()).count()
    }

    /// MIG instances, each a unit of its own.
    pub fn mig_count(&self) -> usize {
        self.hosts.iter().flat_map(|h| &h.gpus).filter(|g| g.mig_gi.is_some()).count()
    }
}

/// Turn a finished collector into the summary.
#[allow(clippy::too_many_lines)]
pub fn build(
    mut c: Collector,
    th: &Thresholds,
    inputs: Vec<InputInfo>,
    skipped: Vec<(PathBuf, String)>,
    window: window::TimeWindow,
    companions: Companions,
) -> Summary {
    c.settle();
    let timings: Vec<TimingStats> = c
        .gpus
        .iter()
        .map(|slot| {
            let g = &slot.acc;
            let mut t = g.timing.finish(th.gap_intervals);
            empty_edges(&mut t, g, th.gap_intervals);
            t
        })
        .collect();
    let mut order: Vec<usize> = (0..c.gpus.len()).filter(|&i| c.gpus[i].acc.rows > 0).collect();
    // A GPU's MIG instances right after it.
    let sort_key = |i: usize| (c.gpus[i].host, c.gpus[i].key.index(), &c.gpus[i].key);
    order.sort_by(|&a, &b| sort_key(a).cmp(&sort_key(b)));
    let per_gpu: Vec<StatValues> =
        c.gpus.iter().zip(&timings).map(|(g, t)| gpu_stats(&g.acc, t, th.idle_util)).collect();
    let mut hosts = Vec::new();
    for h in 0..c.keys.hosts.len() {
        let name = c.keys.hosts.name(h as u32).to_string();
        let hs = host_stats(&c.host_accs[h]);
        let mine: Vec<usize> =
            order.iter().copied().filter(|&i| c.gpus[i].host == h as u32).collect();
        let gpus: Vec<GpuSummary> = mine
            .iter()
            .map(|&i| gpu_summary(&c.gpus[i].key, &c.gpus[i].acc, &timings[i], &per_gpu[i]))
            .collect();
        let has = has_host_data(&hs);
        if gpus.is_empty() && !has {
            continue;
        }
        let views: Vec<GpuView<'_>> = gpus
            .iter()
            .zip(&mine)
            .map(|(g, &i)| {
                let acc = &c.gpus[i].acc;
                GpuView {
                    label: g.label.clone(),
                    stats: &g.stats,
                    name: g.name.clone(),
                    uuid: g.uuid.clone(),
                    last_data: acc.last_ts,
                    last_row: acc.last_ts.max(acc.facts.empty_last_ts),
                    first_data: acc.first_ts,
                    facts: Some(&acc.facts),
                    power_min: acc
                        .field(gpumon_schema::catalog::Field::PowerDraw)
                        .filter(|p| p.m.n > 0)
                        .map(|p| p.m.min),
                }
            })
            .collect();
        let pressed = c.host_accs[h].pressed;
        let mut findings = diagnose(&name, &views, &hs, pressed, &companions.events, th);
        let last_row = mine.iter().map(|&i| c.gpus[i].acc.last_ts).max();
        findings.extend(job_failed(&name, &inputs, last_row));
        findings.extend(shared_gpu(&name, &companions.sharing, th));
        by_severity(&mut findings);
        hosts.push(HostSummary { name, gpus, stats: hs, has_host_data: has, findings });
    }
    // Hosts known only from their events (the events file read on its own).
    for e in &companions.events {
        if !hosts.iter().any(|h| h.name == e.host) {
            let stats = StatValues::empty(Scope::Host);
            let mut findings = diagnose(&e.host, &[], &stats, 0, &companions.events, th);
            by_severity(&mut findings);
            hosts.push(HostSummary {
                name: e.host.clone(),
                gpus: Vec::new(),
                stats,
                has_host_data: false,
                findings,
            });
        }
    }
    // The whole GPUs: a MIG instance's memory and activity are already its GPU's.
    let order: Vec<usize> =
        order.into_iter().filter(|&i| !matches!(c.gpus[i].key, GpuKey::Mig(..))).collect();
    let all: Vec<_> = order.iter().map(|&i| (&c.gpus[i].acc, &timings[i], &per_gpu[i])).collect();
    let all_gpus = all_gpu_stats(&all, th.idle_util);
    let mut pooled = acc::HostAcc::default();
    for h in &c.host_accs {
        pooled.pool(h);
    }
    let all_hosts = host_stats(&pooled);
    // The GPUs' energy per second of the time it was measured over (the same steps as `covered_s`).
    let covered =
        order.iter().map(|&i| timings[i].covered_s).sum::<f64>() / order.len().max(1) as f64;
    let energy_rate = all_gpus.get(Stat::EnergyWh).filter(|_| covered > 0.0).map(|wh| wh / covered);
    let progress = c.progress.finish(order.len(), energy_rate);
    let (start, end) = span(&c, &order);
    Summary {
        hosts,
        all_gpus,
        all_hosts,
        start,
        end,
        inputs,
        skipped,
        window,
        windowed_out: c.windowed_out,
        thresholds: th.clone(),
        events: companions.events,
        events_more: companions.events_more,
        routine_events: companions.routine_events,
        users: companions.users,
        progress,
    }
}

/// The first and last GPU sample; without GPU rows (a host-only recording), the hosts' first and
/// last tick.
fn span(c: &Collector, order: &[usize]) -> (Option<i64>, Option<i64>) {
    let start = order.iter().map(|&i| c.gpus[i].acc.first_ts).min();
    let end = order.iter().map(|&i| c.gpus[i].acc.last_ts).max();
    if start.is_some() {
        return (start, end);
    }
    let ticked = || c.host_accs.iter().filter(|h| h.first_ts <= h.last_ts);
    (ticked().map(|h| h.first_ts).min(), ticked().map(|h| h.last_ts).max())
}

/// The stretches of a GPU's empty rows before its first sample and after its last one are gaps (it
/// did not answer) when longer than a gap; the gaps between samples are the timing's own.
fn empty_edges(t: &mut TimingStats, g: &GpuAcc, gap_intervals: f64) {
    let d = &g.facts;
    let Some(iv) = t.interval_s.filter(|_| d.empty_rows > 0 && g.rows > 0) else { return };
    for (start, end) in [(d.empty_first_ts, g.first_ts), (g.last_ts, d.empty_last_ts)] {
        let len = end.saturating_sub(start) as f64 / 1e6;
        if len > gap_intervals * iv {
            t.gaps += 1;
            t.gap_s += len;
            t.listed.push(Gap { start, end });
        }
    }
    t.listed.sort();
}

/// Errors first, then warnings, then info; the rules' order kept within each (every report lists them so).
fn by_severity(findings: &mut [Finding]) {
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity as u8));
}

/// One GPU's part of the summary, from its accumulator, timing and statistics.
fn gpu_summary(key: &GpuKey, g: &GpuAcc, timing: &TimingStats, stats: &StatValues) -> GpuSummary {
    let (label, index) = (key.label(), key.index());
    GpuSummary {
        label,
        index,
        mig_gi: if let GpuKey::Mig(_, gi) = key { Some(*gi) } else { None },
        uuid: g.uuid.clone(),
        name: g.name.clone(),
        start: g.first_ts,
        end: g.last_ts,
        gaps: timing.listed.clone(),
        energy_method: stat_values::energy(g, timing).1,
        stats: stats.clone(),
    }
}

/// Outcome of one check: failed when `failures` is not empty (one line each).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    /// The check as given.
    pub check: String,
    /// Why it failed, one line each (the GPU or host and its figure).
    pub failures: Vec<String>,
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.0}") } else { format!("{v:.3}") }
}

/// Run a check against the summary; `stat` is what [`checks::resolve`] found for it.
pub fn evaluate(c: &Check, stat: Stat, s: &Summary) -> CheckResult {
    let mut failures = Vec::new();
    let mut seen = 0;
    let mut test = |v: Option<f64>, who: String| {
        if let Some(v) = v {
            seen += 1;
            if c.op.holds(v, c.value) {
                failures.push(format!(
                    "{who}{} = {} {} {}",
                    c.stat,
                    num(v),
                    c.op.symbol(),
                    num(c.value)
                ));
            }
        }
    };
    match (c.all, stat.scope()) {
        (true, Scope::Gpu) => test(s.all_gpus.get(stat), "all: ".into()),
        (true, Scope::Host) => test(s.all_hosts.get(stat), "all hosts: ".into()),
        (false, Scope::Gpu) => {
            for h in &s.hosts {
                for g in &h.gpus {
                    test(g.stats.get(stat), format!("{} GPU {}: ", h.name, g.label));
                }
            }
        }
        (false, Scope::Host) => {
            for h in &s.hosts {
                test(h.stats.get(stat), format!("{}: ", h.name));
            }
        }
    }
    if seen == 0 {
        failures.push(format!("{} is not in the data (no value to check)", c.stat));
    }
    CheckResult { check: c.to_string(), failures }
}
