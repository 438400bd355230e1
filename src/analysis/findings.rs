//! Diagnosis: documented rules over the statistics, each with its thresholds, the evidence it found
//! and the usual fix. All thresholds live in [`Thresholds`] (overridable with `--threshold NAME=VALUE`);
//! [`RULES`] is the single description used by the reports and the README.

use std::fmt::Write;

use crate::analysis::acc::{POWER, Reason, THERMAL};
use crate::analysis::stat::Stat;
use crate::analysis::stats::Stats;
use crate::schema::catalog::Field;

/// Every threshold the rules use, with defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    pub idle_util: f64,
    pub unused_idle_pct: f64,
    pub input_bound_util: f64,
    pub pegged_core: f64,
    pub input_bound_pct: f64,
    pub oom_mem_pct: f64,
    pub headroom_mem_pct: f64,
    pub headroom_util: f64,
    pub throttle_pct: f64,
    pub imbalance_util: f64,
    pub swap_mib: f64,
    pub gap_intervals: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            idle_util: 5.0,
            unused_idle_pct: 99.0,
            input_bound_util: 50.0,
            pegged_core: 90.0,
            input_bound_pct: 30.0,
            oom_mem_pct: 95.0,
            headroom_mem_pct: 30.0,
            headroom_util: 80.0,
            throttle_pct: 5.0,
            imbalance_util: 20.0,
            swap_mib: 64.0,
            gap_intervals: 3.0,
        }
    }
}

type Slot = fn(&mut Thresholds) -> &mut f64;

/// (name, meaning, field) of every threshold.
pub static THRESHOLDS: [(&str, &str, Slot); 12] = [
    ("idle_util", "utilization.gpu below this (%) counts as idle", |t| &mut t.idle_util),
    ("unused_idle_pct", "a GPU idle in at least this share (%) of its samples is unused", |t| &mut t.unused_idle_pct),
    ("input_bound_util", "utilization.gpu below this (%) while a core is pegged counts as input-bound", |t| {
        &mut t.input_bound_util
    }),
    ("pegged_core", "cpu.util.max_core at or above this (%) counts as a pegged core", |t| &mut t.pegged_core),
    ("input_bound_pct", "input-bound in at least this share (%) of samples fires input_bound", |t| {
        &mut t.input_bound_pct
    }),
    ("oom_mem_pct", "memory.used peak at or above this share (%) of memory.total fires oom_risk", |t| {
        &mut t.oom_mem_pct
    }),
    ("headroom_mem_pct", "memory.used peak below this share (%) of memory.total may fire batch_headroom", |t| {
        &mut t.headroom_mem_pct
    }),
    ("headroom_util", "...when mean utilization.gpu is at least this (%)", |t| &mut t.headroom_util),
    ("throttle_pct", "throttled in more than this share (%) of samples fires a throttling rule", |t| {
        &mut t.throttle_pct
    }),
    ("imbalance_util", "GPUs of one host whose mean utilization differs by more than this (points)", |t| {
        &mut t.imbalance_util
    }),
    ("swap_mib", "host swap.used peak above this (MiB) fires host_swap", |t| &mut t.swap_mib),
    ("gap_intervals", "a step longer than this many intervals (median spacing) is a gap", |t| &mut t.gap_intervals),
];

impl Thresholds {
    /// Apply `NAME=VALUE`; the error lists the valid names.
    pub fn set(&mut self, spec: &str) -> Result<(), String> {
        let Some((name, value)) = spec.split_once('=') else {
            return Err(format!("--threshold '{spec}': expected NAME=VALUE, e.g. idle_util=10"));
        };
        let (name, value) = (name.trim(), value.trim().trim_end_matches('%'));
        let Some((_, _, slot)) = THRESHOLDS.iter().find(|(n, _, _)| *n == name) else {
            let names: Vec<&str> = THRESHOLDS.iter().map(|t| t.0).collect();
            return Err(format!("--threshold: unknown name '{name}'; known: {}", names.join(", ")));
        };
        let v: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("--threshold {name}: '{value}' is not a non-negative number"))?;
        *slot(self) = v;
        Ok(())
    }

    /// (name, value) pairs in table order.
    pub fn values(&self) -> Vec<(&'static str, f64)> {
        let mut t = self.clone();
        THRESHOLDS.iter().map(|(n, _, slot)| (*n, *slot(&mut t))).collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Info,
    Warning,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
        }
    }
}

/// A documented rule.
pub struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    /// When it fires, naming the thresholds.
    pub when: &'static str,
    pub fix: &'static str,
}

pub static RULES: [Rule; 8] = [
    Rule {
        id: "input_bound",
        severity: Severity::Warning,
        when: "in at least input_bound_pct (30) % of a GPU's samples, utilization.gpu < input_bound_util (50) % while \
               cpu.util.max_core >= pegged_core (90) %: the GPU waits for a pegged CPU core",
        fix: "feed the GPU faster: raise DataLoader num_workers, set pin_memory=True and persistent_workers=True, \
              prefetch, move decoding/augmentation out of the main process",
    },
    Rule {
        id: "oom_risk",
        severity: Severity::Warning,
        when: "memory.used peak >= oom_mem_pct (95) % of memory.total",
        fix: "leave headroom: smaller batch with gradient accumulation, mixed precision (bf16/fp16), activation \
              checkpointing",
    },
    Rule {
        id: "batch_headroom",
        severity: Severity::Info,
        when: "memory.used peak < headroom_mem_pct (30) % of memory.total while mean utilization.gpu >= \
               headroom_util (80) %",
        fix: "room for a bigger batch (scale the learning rate with it) or a bigger model on this GPU",
    },
    Rule {
        id: "thermal_throttling",
        severity: Severity::Warning,
        when: "sw_thermal_slowdown or hw_thermal_slowdown active in > throttle_pct (5) % of samples",
        fix: "cool the GPU: airflow, fan speed, dusty or blocked intakes, ambient temperature, hot neighbours",
    },
    Rule {
        id: "power_throttling",
        severity: Severity::Warning,
        when: "sw_power_cap, hw_slowdown or hw_power_brake_slowdown active in > throttle_pct (5) % of samples",
        fix: "clocks held down by power: normal at full load for sw_power_cap; check power.limit against the \
              board default (nvidia-smi -q -d POWER), and the PSU / rack power for hw_* reasons",
    },
    Rule {
        id: "imbalance",
        severity: Severity::Warning,
        when: "mean utilization.gpu of two GPUs of one host differs by > imbalance_util (20) points (GPUs unused \
               the whole run left out)",
        fix: "spread the work evenly: data sharding (DistributedSampler), DistributedDataParallel instead of \
              DataParallel, balanced pipeline stages, stragglers",
    },
    Rule {
        id: "unused_gpu",
        severity: Severity::Warning,
        when: "utilization.gpu < idle_util (5) % in >= unused_idle_pct (99) % of the samples: allocated but unused",
        fix: "check CUDA_VISIBLE_DEVICES, the launcher's world size (--nproc_per_node) and device placement; or \
              release the GPU",
    },
    Rule {
        id: "host_swap",
        severity: Severity::Warning,
        when: "host swap.used peak > swap_mib (64) MiB: host memory pressure",
        fix: "fewer DataLoader workers or smaller prefetch buffers, memory-map the dataset, look for a leak \
              (job.rss), or add RAM",
    },
];

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    pub host: String,
    /// GPU label (index, or uuid), or None for a host-wide finding.
    pub gpu: Option<String>,
    pub evidence: String,
    pub fix: &'static str,
}

fn rule(id: &str) -> &'static Rule {
    RULES.iter().find(|r| r.id == id).unwrap_or(&RULES[0])
}

fn f(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

/// What the rules need of one GPU.
pub struct GpuView<'a> {
    pub label: String,
    pub stats: &'a Stats,
}

const UTIL_MEAN: Stat = Stat::mean(Field::UtilGpu);

/// The findings of one host, as the rules add them.
struct Findings<'a> {
    host: &'a str,
    list: Vec<Finding>,
}

impl Findings<'_> {
    fn push(&mut self, id: &'static str, gpu: Option<&str>, evidence: String) {
        let r = rule(id);
        self.list.push(Finding {
            rule: r.id,
            severity: r.severity,
            host: self.host.to_string(),
            gpu: gpu.map(str::to_string),
            evidence,
            fix: r.fix,
        });
    }
}

/// `unused_gpu`; whether the GPU is unused.
fn unused_gpu(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) -> bool {
    let s = g.stats;
    let idle = s.get(Stat::IdlePct);
    let unused = idle.is_some_and(|i| i >= th.unused_idle_pct);
    if unused {
        let evidence = format!(
            "utilization.gpu < {}% in {}% of {} samples (max {}%), memory.used peak {} MiB",
            th.idle_util,
            f(idle, 1),
            f(s.get(Stat::Samples), 0),
            f(s.get(Stat::max(Field::UtilGpu)), 0),
            f(s.get(Stat::max(Field::MemUsed)), 0)
        );
        out.push("unused_gpu", Some(&g.label), evidence);
    }
    unused
}

fn input_bound(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    if let Some(ib) = s.get(Stat::InputBoundPct)
        && ib >= th.input_bound_pct
    {
        let evidence = format!(
            "in {}% of samples utilization.gpu < {}% while the busiest CPU core was >= {}% (mean utilization {}%)",
            f(Some(ib), 0),
            th.input_bound_util,
            th.pegged_core,
            f(s.get(UTIL_MEAN), 1)
        );
        out.push("input_bound", Some(&g.label), evidence);
    }
}

/// `oom_risk` and `batch_headroom`.
fn memory(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    let mem_pct = s.get(Stat::MemoryUsedMaxPct);
    if let Some(p) = mem_pct
        && p >= th.oom_mem_pct
    {
        let evidence = format!(
            "memory.used peak {} MiB = {}% of {} MiB",
            f(s.get(Stat::max(Field::MemUsed)), 0),
            f(Some(p), 1),
            f(s.get(Stat::MemoryTotal), 0)
        );
        out.push("oom_risk", Some(&g.label), evidence);
    }
    if let (Some(p), Some(u)) = (mem_pct, s.get(UTIL_MEAN))
        && p < th.headroom_mem_pct
        && u >= th.headroom_util
    {
        let evidence =
            format!("memory.used peak {}% of memory.total at mean utilization {}%", f(Some(p), 1), f(Some(u), 1));
        out.push("batch_headroom", Some(&g.label), evidence);
    }
}

/// The reasons among `reasons` a GPU had, with their shares.
fn reason_list(s: &Stats, reasons: &[Reason]) -> String {
    let mut e = String::new();
    for &r in reasons {
        if let Some(v) = s.get(Stat::Throttle(r)).filter(|&v| v > 0.0) {
            let _ = write!(e, "{}{} {}%", if e.is_empty() { "" } else { ", " }, r.name(), f(Some(v), 1));
        }
    }
    e
}

/// `thermal_throttling` and `power_throttling`.
fn throttling(out: &mut Findings<'_>, g: &GpuView<'_>, th: &Thresholds) {
    let s = g.stats;
    if let Some(t) = s.get(Stat::ThrottleThermalPct)
        && t > th.throttle_pct
    {
        let evidence = format!(
            "thermal slowdown in {}% of samples ({}); temperature.gpu max {} C",
            f(Some(t), 1),
            reason_list(s, &THERMAL),
            f(s.get(Stat::max(Field::TempGpu)), 0)
        );
        out.push("thermal_throttling", Some(&g.label), evidence);
    }
    if let Some(t) = s.get(Stat::ThrottlePowerPct)
        && t > th.throttle_pct
    {
        let evidence = format!(
            "power slowdown in {}% of samples ({}); power.draw mean {} W, max {} W",
            f(Some(t), 1),
            reason_list(s, &POWER),
            f(s.get(Stat::mean(Field::PowerDraw)), 0),
            f(s.get(Stat::max(Field::PowerDraw)), 0)
        );
        out.push("power_throttling", Some(&g.label), evidence);
    }
}

/// `imbalance` between the GPUs in use: (label, mean utilization).
fn imbalance(out: &mut Findings<'_>, used: &[(&str, f64)], th: &Thresholds) {
    if used.len() < 2 {
        return;
    }
    let hi = used.iter().copied().fold(("", f64::MIN), |a, b| if b.1 > a.1 { b } else { a });
    let lo = used.iter().copied().fold(("", f64::MAX), |a, b| if b.1 < a.1 { b } else { a });
    if hi.1 - lo.1 > th.imbalance_util {
        let evidence = format!(
            "mean utilization.gpu: GPU {} {}% vs GPU {} {}% ({} points apart)",
            hi.0,
            f(Some(hi.1), 1),
            lo.0,
            f(Some(lo.1), 1),
            f(Some(hi.1 - lo.1), 1)
        );
        out.push("imbalance", None, evidence);
    }
}

fn host_swap(out: &mut Findings<'_>, host_stats: &Stats, th: &Thresholds) {
    if let Some(sw) = host_stats.get(Stat::max(Field::SwapUsed))
        && sw > th.swap_mib
    {
        let evidence = format!(
            "swap.used peak {} MiB; mem.used peak {}% of mem.total",
            f(Some(sw), 0),
            f(host_stats.get(Stat::MemUsedMaxPct), 1)
        );
        out.push("host_swap", None, evidence);
    }
}

/// Findings for one host, GPUs in report order.
pub fn diagnose(host: &str, gpus: &[GpuView<'_>], host_stats: &Stats, th: &Thresholds) -> Vec<Finding> {
    let mut out = Findings { host, list: Vec::new() };
    let mut used: Vec<(&str, f64)> = Vec::new();
    for g in gpus {
        let unused = unused_gpu(&mut out, g, th);
        if !unused && let Some(m) = g.stats.get(UTIL_MEAN) {
            used.push((g.label.as_str(), m));
        }
        if !unused {
            input_bound(&mut out, g, th);
        }
        memory(&mut out, g, th);
        throttling(&mut out, g, th);
    }
    imbalance(&mut out, &used, th);
    host_swap(&mut out, host_stats, th);
    out.list
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::stat::Scope;

    fn stats(scope: Scope, pairs: &[(Stat, f64)]) -> Stats {
        let mut s = Stats::empty(scope);
        for &(n, v) in pairs {
            s.set(n, Some(v));
        }
        s
    }

    #[test]
    fn thresholds_parse_and_reject() {
        let mut t = Thresholds::default();
        t.set("idle_util=10").unwrap();
        assert_eq!(t.idle_util, 10.0);
        t.set(" oom_mem_pct = 90% ").unwrap();
        assert_eq!(t.oom_mem_pct, 90.0);
        assert!(t.set("nope=1").unwrap_err().contains("idle_util"));
        assert!(t.set("idle_util").is_err());
        assert!(t.set("idle_util=x").is_err());
        assert_eq!(t.values().len(), THRESHOLDS.len());
    }

    #[test]
    fn rules_fire_and_stay_silent() {
        let th = Thresholds::default();
        let healthy = stats(
            Scope::Gpu,
            &[
                (UTIL_MEAN, 90.0),
                (Stat::IdlePct, 2.0),
                (Stat::MemoryUsedMaxPct, 60.0),
                (Stat::ThrottleThermalPct, 0.0),
                (Stat::ThrottlePowerPct, 1.0),
                (Stat::InputBoundPct, 0.0),
            ],
        );
        let g = [GpuView { label: "0".into(), stats: &healthy }, GpuView { label: "1".into(), stats: &healthy }];
        assert!(diagnose("h", &g, &Stats::empty(Scope::Host), &th).is_empty());
        let hot = stats(
            Scope::Gpu,
            &[
                (UTIL_MEAN, 40.0),
                (Stat::IdlePct, 2.0),
                (Stat::MemoryUsedMaxPct, 97.0),
                (Stat::ThrottleThermalPct, 20.0),
                (Stat::Throttle(Reason::SwThermalSlowdown), 20.0),
                (Stat::InputBoundPct, 60.0),
            ],
        );
        let g = [GpuView { label: "0".into(), stats: &healthy }, GpuView { label: "1".into(), stats: &hot }];
        let swap = stats(Scope::Host, &[(Stat::max(Field::SwapUsed), 900.0)]);
        let found = diagnose("h", &g, &swap, &th);
        let ids: Vec<&str> = found.iter().map(|f| f.rule).collect();
        assert_eq!(ids, ["input_bound", "oom_risk", "thermal_throttling", "imbalance", "host_swap"]);
        assert!(found[2].evidence.contains("(sw_thermal_slowdown 20.0%)"), "{}", found[2].evidence);
    }
}
