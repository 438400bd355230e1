//! Statistics from finished accumulators, as ordered `name → value` lists. The names are the ones
//! the JSON and CSV reports carry and `--fail-if` checks address; the list of valid names is made by
//! the same code from an empty accumulator, so names cannot drift apart.
//!
//! Percentiles are nearest-rank (the smallest value with at least ⌈p/100·n⌉ samples at or below it):
//! exact for integer percents, exact to 0.1 point for `cpu.util` (values rounded to 0.1 first).

use crate::analysis::acc::{GpuAcc, HostAcc, Moments, REASONS, TimingStats};
use crate::schema::catalog::Field;

/// An ordered list of statistics; `None` where the data lacks what the statistic needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats(pub Vec<(String, Option<f64>)>);

impl Stats {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| n == name).and_then(|(_, v)| *v)
    }

    fn push(&mut self, name: impl Into<String>, v: Option<f64>) {
        self.0.push((name.into(), v.filter(|x| x.is_finite())));
    }

    fn set(&mut self, name: &str, v: Option<f64>) {
        if let Some(slot) = self.0.iter_mut().find(|(n, _)| n == name) {
            slot.1 = v.filter(|x| x.is_finite());
        }
    }
}

fn max2(a: &Moments, b: &Moments) -> Option<f64> {
    match (a.max(), b.max()) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

fn pct(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| 100.0 * part as f64 / whole as f64)
}

/// Energy of one GPU (Wh) and how it was found: the energy counter's steps when it has any, else
/// power integrated over the sample spacing.
pub fn energy(acc: &GpuAcc, t: &TimingStats) -> (Option<f64>, Option<&'static str>) {
    if let Some(j) = t.counter_j {
        return (Some(j / 3600.0), Some("counter"));
    }
    if acc.power.n > 0
        && let Some(j) = t.integrated_j
    {
        return (Some(j / 3600.0), Some("power"));
    }
    (None, None)
}

/// The per-GPU statistics. `idle_util`: utilization below it counts as idle.
pub fn gpu_stats(acc: &GpuAcc, t: &TimingStats, idle_util: f64, extra: &[Field]) -> Stats {
    let mut s = Stats::default();
    let span = (acc.rows > 0).then(|| (acc.last_ts - acc.first_ts) as f64 / 1e6);
    s.push("samples", Some(acc.rows as f64));
    s.push("span_s", span);
    s.push("interval_s", t.interval_s);
    s.push("coverage_pct", span.filter(|&x| x > 0.0).map(|x| (100.0 * t.covered_s / x).min(100.0)));
    s.push("gaps", t.interval_s.map(|_| t.gaps as f64));
    s.push("gap_s", t.interval_s.map(|_| t.gap_s));
    let u = &acc.util;
    s.push("utilization.gpu.mean", u.m.mean());
    s.push("utilization.gpu.p50", u.percentile(50.0));
    s.push("utilization.gpu.p95", u.percentile(95.0));
    s.push("utilization.gpu.max", max2(&u.m, &acc.util_max_col));
    s.push("utilization.gpu.idle_pct", u.pct_below(idle_util));
    s.push("utilization.memory.mean", acc.umem.mean());
    let used = max2(&acc.mem_used, &acc.mem_used_max_col);
    let total = acc.mem_total.max().or(acc.mem_sum.max()).filter(|&t| t > 0.0);
    s.push("memory.used.max", used);
    s.push("memory.total", total);
    s.push("memory.used.max_pct", used.zip(total).map(|(u, t)| 100.0 * u / t));
    s.push("power.draw.mean", acc.power.mean());
    s.push("power.draw.max", max2(&acc.power, &acc.power_max_col));
    s.push("energy_wh", energy(acc, t).0);
    s.push("temperature.gpu.max", max2(&acc.temp, &acc.temp_max_col));
    s.push("throttle.thermal_pct", pct(acc.thermal_n, acc.reasons_n));
    s.push("throttle.power_pct", pct(acc.power_n, acc.reasons_n));
    for (k, (_, name)) in REASONS.iter().enumerate() {
        s.push(format!("throttle.{name}_pct"), pct(acc.reasons[k], acc.reasons_n));
    }
    s.push("input_bound_pct", pct(acc.ib_n, acc.ib_both));
    for (f, m) in extra.iter().zip(&acc.extra) {
        s.push(format!("{}.mean", f.name()), m.mean());
        s.push(format!("{}.max", f.name()), m.max());
    }
    s
}

/// Over-all GPU statistics: the GPUs pooled (histograms merged), with energy, coverage and gaps
/// added up from the per-GPU figures.
pub fn all_gpu_stats(gpus: &[(&GpuAcc, &TimingStats, &Stats)], idle_util: f64, extra: &[Field]) -> Stats {
    let mut pooled = GpuAcc::new(extra.len());
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
    let mut s = gpu_stats(&pooled, &t, idle_util, extra);
    let sum = |name: &str| -> Option<f64> {
        let vals: Vec<f64> = gpus.iter().filter_map(|(_, _, st)| st.get(name)).collect();
        (!vals.is_empty()).then(|| vals.iter().sum())
    };
    s.set("energy_wh", sum("energy_wh"));
    let spans = sum("span_s").unwrap_or(0.0);
    s.set("coverage_pct", (spans > 0.0).then(|| (100.0 * t.covered_s / spans).min(100.0)));
    s
}

/// The per-host statistics (one value per tick).
pub fn host_stats(acc: &HostAcc, extra: &[Field]) -> Stats {
    let mut s = Stats::default();
    s.push("ticks", Some(acc.ticks as f64));
    s.push("cpu.util.mean", acc.cpu.m.mean());
    s.push("cpu.util.p95", acc.cpu.percentile(95.0));
    s.push("cpu.util.max", acc.cpu.m.max());
    s.push("cpu.util.max_core.mean", acc.core.m.mean());
    s.push("cpu.util.max_core.p95", acc.core.percentile(95.0));
    s.push("cpu.util.max_core.max", max2(&acc.core.m, &acc.core_max_col));
    let used = acc.mem.max();
    let total = acc.mem_total.max().filter(|&t| t > 0.0);
    s.push("mem.used.max", used);
    s.push("mem.total", total);
    s.push("mem.used.max_pct", used.zip(total).map(|(u, t)| 100.0 * u / t));
    s.push("swap.used.max", acc.swap.max());
    for (f, m) in extra.iter().zip(&acc.extra) {
        s.push(format!("{}.mean", f.name()), m.mean());
        s.push(format!("{}.max", f.name()), m.max());
    }
    s
}

/// Whether a host has any host-level data worth showing.
pub fn has_host_data(s: &Stats) -> bool {
    s.0.iter().any(|(n, v)| n != "ticks" && v.is_some())
}

/// Every per-GPU statistic name, in report order.
pub fn gpu_stat_names(extra: &[Field]) -> Vec<String> {
    let acc = GpuAcc::new(extra.len());
    gpu_stats(&acc, &TimingStats::default(), 5.0, extra).0.into_iter().map(|(n, _)| n).collect()
}

/// Every per-host statistic name, in report order.
pub fn host_stat_names(extra: &[Field]) -> Vec<String> {
    host_stats(&HostAcc::new(extra.len()), extra).0.into_iter().map(|(n, _)| n).collect()
}

/// Unit of a statistic, for headers and docs.
pub fn unit_of(name: &str) -> &'static str {
    if name.ends_with("_pct") || name.starts_with("utilization.") || name.starts_with("cpu.util") {
        return "%";
    }
    if name.ends_with("_s") {
        return "s";
    }
    if name == "energy_wh" {
        return "Wh";
    }
    let base = name.rsplit_once('.').map_or(name, |(b, _)| b);
    Field::lookup(base).map_or("", |f| f.def().unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_disjoint() {
        let (g, h) = crate::analysis::collect::extra_fields();
        let gn = gpu_stat_names(&g);
        let hn = host_stat_names(&h);
        let mut all: Vec<&String> = gn.iter().chain(&hn).collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "duplicate statistic names");
        assert!(gn.contains(&"utilization.gpu.mean".to_string()));
        assert!(gn.contains(&"throttle.hw_thermal_slowdown_pct".to_string()));
        assert!(hn.contains(&"cpu.util.max_core.p95".to_string()));
        assert_eq!(unit_of("memory.used.max"), "MiB");
        assert_eq!(unit_of("utilization.gpu.p95"), "%");
        assert_eq!(unit_of("energy_wh"), "Wh");
    }

    #[test]
    fn empty_accumulator_gives_nulls_not_zeros() {
        let s = gpu_stats(&GpuAcc::new(0), &TimingStats::default(), 5.0, &[]);
        assert_eq!(s.get("samples"), Some(0.0));
        assert_eq!(s.get("utilization.gpu.mean"), None);
        assert_eq!(s.get("energy_wh"), None);
    }
}
