//! Statistic values from finished accumulators (the ids are [`crate::stat`]): [`StatValues`] holds one value per [`Stat`] of a scope, in
//! report order ([`layout`]), so presenters and checks address statistics by id, never by a string.
//!
//! Percentiles are nearest-rank (the smallest value with at least ⌈p/100·n⌉ samples at or below it):
//! exact for integer percents, exact to 0.1 point for `cpu.util` (values rounded to 0.1 first).

use crate::acc::{GpuAcc, HostAcc, REASONS, TimingStats};
use crate::stat::{Scope, Stat, layout};
use gpumon_schema::catalog::Field;

/// The statistics of one GPU or host (or of all of them pooled); `None` where the data lacks what
/// the statistic needs.
#[derive(Debug, Clone, PartialEq)]
pub struct StatValues {
    scope: Scope,
    /// One value per statistic of [`layout`]`(scope)`, in that order.
    values: Vec<Option<f64>>,
}

impl StatValues {
    /// Every statistic of the scope, without a value.
    pub fn empty(scope: Scope) -> StatValues {
        StatValues { scope, values: vec![None; layout(scope).len()] }
    }

    fn index(&self, s: Stat) -> Option<usize> {
        layout(self.scope).iter().position(|&x| x == s)
    }

    /// The value of a statistic. Asking for one the scope does not report (a host's among a GPU's,
    /// a statistic the catalogue does not declare) is a bug: `None`, and a panic in debug builds.
    pub fn get(&self, s: Stat) -> Option<f64> {
        let i = self.index(s);
        debug_assert!(i.is_some(), "{s} is not a statistic of {:?}", self.scope);
        i.and_then(|i| self.values[i])
    }

    /// Set a statistic of this scope (non-finite values are missing).
    pub fn set(&mut self, s: Stat, v: Option<f64>) {
        if let Some(i) = self.index(s) {
            self.values[i] = v.filter(|x| x.is_finite());
        }
    }

    /// Every statistic and its value, in report order.
    pub fn iter(&self) -> impl Iterator<Item = (Stat, Option<f64>)> + '_ {
        layout(self.scope).iter().copied().zip(self.values.iter().copied())
    }

    fn compute(scope: Scope, value: impl Fn(Stat) -> Option<f64>) -> StatValues {
        let mut s = StatValues::empty(scope);
        for (i, &stat) in layout(scope).iter().enumerate() {
            s.values[i] = value(stat).filter(|x| x.is_finite());
        }
        s
    }
}

fn pct(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| 100.0 * part as f64 / whole as f64)
}

/// Energy of one GPU (Wh) and how it was found: the energy counter's steps when it has any, else
/// power integrated over the sample spacing.
pub(crate) fn energy(acc: &GpuAcc, t: &TimingStats) -> (Option<f64>, Option<&'static str>) {
    if let Some(j) = t.counter_j {
        return (Some(j / 3600.0), Some("counter"));
    }
    if acc.field(Field::PowerDraw).is_some_and(|p| p.m.n > 0)
        && let Some(j) = t.integrated_j
    {
        return (Some(j / 3600.0), Some("power"));
    }
    (None, None)
}

/// One per-GPU statistic. `idle_util`: utilization below it counts as idle.
fn gpu_value(stat: Stat, acc: &GpuAcc, t: &TimingStats, idle_util: f64) -> Option<f64> {
    // The span runs from the first to the last row, empty rows included (they are gaps).
    let d = &acc.facts;
    let span = (acc.rows > 0).then(|| {
        (acc.last_ts.max(d.empty_last_ts) - acc.first_ts.min(d.empty_first_ts)) as f64 / 1e6
    });
    let used =
        || acc.field(Field::MemUsed).and_then(|m| m.reduce(gpumon_schema::catalog::Reduce::Max));
    let total = || acc.mem_total.max().or(acc.mem_sum.max()).filter(|&t| t > 0.0);
    match stat {
        Stat::Field(f, r) => acc.field(f).and_then(|a| a.reduce(r)),
        Stat::Samples => Some(acc.rows as f64),
        Stat::SpanS => span,
        Stat::IntervalS => t.interval_s,
        Stat::CoveragePct => {
            span.filter(|&x| x > 0.0).map(|x| (100.0 * t.covered_s / x).min(100.0))
        }
        Stat::Gaps => t.interval_s.map(|_| t.gaps as f64),
        Stat::GapS => t.interval_s.map(|_| t.gap_s),
        Stat::IdlePct => {
            acc.field(Field::UtilGpu).and_then(|u| u.hist.as_ref()?.pct_below(idle_util))
        }
        Stat::MemoryTotal => total(),
        Stat::MemoryUsedMaxPct => used().zip(total()).map(|(u, t)| 100.0 * u / t),
        Stat::EnergyWh => energy(acc, t).0,
        Stat::ThrottleThermalPct => pct(acc.thermal_n, acc.reasons_n),
        Stat::ThrottlePowerPct => pct(acc.power_n, acc.reasons_n),
        Stat::Throttle(r) => {
            let k = REASONS.iter().position(|&x| x == r)?;
            pct(acc.reasons[k], acc.reasons_n)
        }
        Stat::InputBoundPct => pct(acc.ib_n, acc.ib_both),
        Stat::HeldIdlePct => d.held_idle_pct(acc.rows),
        Stat::EmptyRows => Some(d.empty_rows as f64),
        Stat::BusyClock => d.busy_clock(),
        Stat::EccIncrease => d.ecc_increase(),
        Stat::HealthMax(f) => d.health(f),
        Stat::Ticks | Stat::MemTotal | Stat::MemUsedMaxPct | Stat::SwapRange => None,
    }
}

/// The per-GPU statistics. `idle_util`: utilization below it counts as idle.
pub(crate) fn gpu_stats(acc: &GpuAcc, t: &TimingStats, idle_util: f64) -> StatValues {
    StatValues::compute(Scope::Gpu, |s| gpu_value(s, acc, t, idle_util))
}

/// Over-all GPU statistics: the GPUs pooled (histograms merged), with energy, coverage and gaps
/// added up from the per-GPU figures.
pub(crate) fn all_gpu_stats(
    gpus: &[(&GpuAcc, &TimingStats, &StatValues)],
    idle_util: f64,
) -> StatValues {
    let mut pooled = GpuAcc::default();
    for (g, _, _) in gpus {
        pooled.pool(g);
    }
    let t = TimingStats {
        interval_s: pooled.timing.finish(1.0).interval_s,
        covered_s: gpus.iter().map(|(_, t, _)| t.covered_s).sum(),
        gaps: gpus.iter().map(|(_, t, _)| t.gaps).sum(),
        gap_s: gpus.iter().map(|(_, t, _)| t.gap_s).sum(),
        ..Default::default()
    };
    let mut s = gpu_stats(&pooled, &t, idle_util);
    // Each GPU's own peak against its own total, the highest of them.
    let peak = gpus.iter().filter_map(|(_, _, st)| st.get(Stat::MemoryUsedMaxPct)).reduce(f64::max);
    s.set(Stat::MemoryUsedMaxPct, peak);
    let sum = |stat: Stat| -> Option<f64> {
        let vals: Vec<f64> = gpus.iter().filter_map(|(_, _, st)| st.get(stat)).collect();
        (!vals.is_empty()).then(|| vals.iter().sum())
    };
    s.set(Stat::EnergyWh, sum(Stat::EnergyWh));
    let spans = sum(Stat::SpanS).unwrap_or(0.0);
    s.set(Stat::CoveragePct, (spans > 0.0).then(|| (100.0 * t.covered_s / spans).min(100.0)));
    s
}

/// One per-host statistic.
fn host_value(stat: Stat, acc: &HostAcc) -> Option<f64> {
    let used = || {
        acc.field(Field::HostMemUsed).and_then(|m| m.reduce(gpumon_schema::catalog::Reduce::Max))
    };
    let total = || acc.mem_total.max().filter(|&t| t > 0.0);
    match stat {
        Stat::Field(f, r) => acc.field(f).and_then(|a| a.reduce(r)),
        Stat::Ticks => Some(acc.ticks as f64),
        Stat::SwapRange => {
            acc.field(Field::SwapUsed).filter(|a| a.m.n > 0).map(|a| a.m.max - a.m.min)
        }
        Stat::MemTotal => total(),
        Stat::MemUsedMaxPct => used().zip(total()).map(|(u, t)| 100.0 * u / t),
        _ => None,
    }
}

/// The per-host statistics (one value per tick).
pub(crate) fn host_stats(acc: &HostAcc) -> StatValues {
    StatValues::compute(Scope::Host, |s| host_value(s, acc))
}

/// Whether a host has any host-level data worth showing.
pub(crate) fn has_host_data(s: &StatValues) -> bool {
    s.iter().any(|(n, v)| n != Stat::Ticks && v.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_accumulator_gives_nulls_not_zeros() {
        let s = gpu_stats(&GpuAcc::default(), &TimingStats::default(), 5.0);
        assert_eq!(s.get(Stat::Samples), Some(0.0));
        assert_eq!(s.get(Stat::mean(Field::UtilGpu)), None);
        assert_eq!(s.get(Stat::EnergyWh), None);
        let h = host_stats(&HostAcc::default());
        assert_eq!(h.get(Stat::Ticks), Some(0.0));
        assert!(!has_host_data(&h));
    }

    #[test]
    #[should_panic(expected = "ticks is not a statistic of Gpu")]
    fn asking_for_another_scope_is_a_bug() {
        let _ = StatValues::empty(Scope::Gpu).get(Stat::Ticks);
    }

    #[test]
    fn field_statistics_follow_the_catalogue() {
        let mut g = GpuAcc::default();
        let mut h = HostAcc::default();
        for (f, slot) in crate::acc::inputs(Scope::Gpu) {
            g.add_slice(*slot, &[if *f == Field::UtilGpuMax { 95.0 } else { 40.0 }]);
        }
        for (_, slot) in crate::acc::inputs(Scope::Host) {
            h.add(*slot, 12.0);
        }
        let s = gpu_stats(&g, &TimingStats::default(), 5.0);
        assert_eq!(s.get(Stat::mean(Field::UtilGpu)), Some(40.0));
        assert_eq!(s.get(Stat::max(Field::UtilGpu)), Some(95.0), ".max takes the companion column");
        assert_eq!(s.get(Stat::max(Field::JobGpuMemory)), Some(40.0));
        assert_eq!(s.get(Stat::MemoryUsedMaxPct), Some(100.0));
        let hs = host_stats(&h);
        assert_eq!(hs.get(Stat::p95(Field::CpuUtil)), Some(12.0));
        assert_eq!(hs.get(Stat::mean(Field::CgroupCpuUtil)), Some(12.0));
        assert!(has_host_data(&hs));
    }
}
