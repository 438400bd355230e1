//! The statistic ids ([`Stat`]; their values are [`crate::stat_values`]): every statistic `summarize` reports, with its name (the key in the JSON and
//! CSV reports and what `--fail-if` takes), unit and scope, and the report order of each scope.
//!
//! Most are statistics of a catalogue field ([`Stat::Field`]): the catalogue's `summary` column says
//! which ones a field gets, so a field added there is summarised, reported and checkable with no edit
//! here (it is reported after the fixed statistics of its scope, in catalogue order). The rest are
//! derived from several fields or from the sample timing and are listed here.

use std::fmt;
use std::sync::LazyLock;

use crate::acc::{REASONS, Reason};
use gpumon_schema::catalog::{CATALOG, Field, Reduce, Source};

/// Which statistics a statistic belongs to: one GPU's (also pooled over all GPUs) or one host's
/// (taken once per tick; also pooled over all hosts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// A GPU's.
    Gpu = 0,
    /// A host's.
    Host = 1,
}

/// A statistic; its `Display` is its name in the JSON and CSV reports and in `--fail-if`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stat {
    /// A statistic of a catalogue field, declared in its `summary`: `utilization.gpu.p95`.
    Field(Field, Reduce),
    /// GPU rows inside the window.
    Samples,
    /// Last minus first sample.
    SpanS,
    /// Median step between samples.
    IntervalS,
    /// Share of the span not in gaps.
    CoveragePct,
    /// Steps longer than `gap_intervals` times the interval.
    Gaps,
    /// Their total length.
    GapS,
    /// Share of samples with utilization.gpu below `idle_util`.
    IdlePct,
    /// `memory.total`, or the largest `memory.used + memory.free`.
    MemoryTotal,
    /// Peak `memory.used` as a share of the total.
    MemoryUsedMaxPct,
    /// Energy used, from the energy counter or `power.draw` integrated.
    EnergyWh,
    /// Share of samples with a thermal clock event reason.
    ThrottleThermalPct,
    /// Share of samples with a power clock event reason.
    ThrottlePowerPct,
    /// Share of samples with this clock event reason.
    Throttle(Reason),
    /// Share of samples that were input-bound (work on the GPU, the GPU not busy, the CPU saturated).
    InputBoundPct,
    /// Share of samples with memory.used at or above `held_mem_mib` while idle.
    HeldIdlePct,
    /// Rows whose GPU readings were all empty (the GPU did not answer): gaps, not samples.
    EmptyRows,
    /// Mean clocks.sm over the samples with utilization.gpu at or above `busy_util`.
    BusyClock,
    /// Rise of the uncorrected ECC counter over the run (largest minus smallest value).
    EccIncrease,
    /// Largest value of a memory-health field (`remapped_rows.*`, `retired_pages.*`).
    HealthMax(Field),
    /// Largest minus smallest host swap.used: swap that moved during the run.
    SwapRange,
    /// Ticks with host data.
    Ticks,
    /// Host `mem.total`.
    MemTotal,
    /// Peak host `mem.used` as a share of `mem.total`.
    MemUsedMaxPct,
}

impl Stat {
    /// The mean of `f`.
    pub const fn mean(f: Field) -> Stat {
        Stat::Field(f, Reduce::Mean)
    }

    /// The median of `f`.
    pub const fn p50(f: Field) -> Stat {
        Stat::Field(f, Reduce::P50)
    }

    /// The 95th percentile of `f`.
    pub const fn p95(f: Field) -> Stat {
        Stat::Field(f, Reduce::P95)
    }

    /// The largest value of `f`.
    pub const fn max(f: Field) -> Stat {
        Stat::Field(f, Reduce::Max)
    }

    /// Name of a statistic that is not a field's.
    fn fixed_name(self) -> Option<&'static str> {
        Some(match self {
            Stat::Samples => "samples",
            Stat::SpanS => "span_s",
            Stat::IntervalS => "interval_s",
            Stat::CoveragePct => "coverage_pct",
            Stat::Gaps => "gaps",
            Stat::GapS => "gap_s",
            Stat::IdlePct => "utilization.gpu.idle_pct",
            Stat::MemoryTotal => "memory.total",
            Stat::MemoryUsedMaxPct => "memory.used.max_pct",
            Stat::EnergyWh => "energy_wh",
            Stat::ThrottleThermalPct => "throttle.thermal_pct",
            Stat::ThrottlePowerPct => "throttle.power_pct",
            Stat::InputBoundPct => "input_bound_pct",
            Stat::HeldIdlePct => "memory.held_idle_pct",
            Stat::EmptyRows => "empty_rows",
            Stat::BusyClock => "clocks.sm.busy_mean",
            Stat::EccIncrease => "ecc.errors.uncorrected.volatile.total.increase",
            Stat::SwapRange => "swap.used.range",
            Stat::Ticks => "ticks",
            Stat::MemTotal => "mem.total",
            Stat::MemUsedMaxPct => "mem.used.max_pct",
            Stat::Field(..) | Stat::Throttle(_) | Stat::HealthMax(_) => return None,
        })
    }

    /// Unit, for the CSV report.
    pub fn unit(self) -> &'static str {
        match self {
            Stat::Field(f, _) => f.def().unit,
            Stat::SpanS | Stat::IntervalS | Stat::GapS => "s",
            Stat::CoveragePct
            | Stat::IdlePct
            | Stat::MemoryUsedMaxPct
            | Stat::ThrottleThermalPct
            | Stat::ThrottlePowerPct
            | Stat::Throttle(_)
            | Stat::InputBoundPct
            | Stat::HeldIdlePct
            | Stat::MemUsedMaxPct => "%",
            Stat::BusyClock => "MHz",
            Stat::EnergyWh => "Wh",
            Stat::SwapRange => "MiB",
            // The CSV report has always left these two empty (docs/summary-json.md says MiB).
            Stat::MemoryTotal | Stat::MemTotal => "",
            Stat::Samples
            | Stat::Gaps
            | Stat::Ticks
            | Stat::EmptyRows
            | Stat::EccIncrease
            | Stat::HealthMax(_) => "",
        }
    }

    /// Whose statistic it is.
    pub fn scope(self) -> Scope {
        match self {
            Stat::Field(f, _) => field_scope(f),
            Stat::Ticks | Stat::MemTotal | Stat::MemUsedMaxPct | Stat::SwapRange => Scope::Host,
            _ => Scope::Gpu,
        }
    }

    /// The statistic `--fail-if` names `name`, of either scope.
    pub fn lookup(name: &str) -> Option<Stat> {
        [Scope::Gpu, Scope::Host]
            .into_iter()
            .flat_map(|s| layout(s).iter().copied())
            .find(|s| s.to_string() == name)
    }
}

impl fmt::Display for Stat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Stat::Field(field, r) => write!(f, "{}.{}", field.name(), r.suffix()),
            Stat::Throttle(r) => write!(f, "throttle.{}_pct", r.name()),
            Stat::HealthMax(field) => write!(f, "{}.max", field.name()),
            s => f.write_str(s.fixed_name().unwrap_or_default()),
        }
    }
}

/// Scope of a field's statistics: GPU fields per GPU, host, job and cgroup fields per host tick.
pub(crate) fn field_scope(f: Field) -> Scope {
    if f.def().source == Source::Gpu { Scope::Gpu } else { Scope::Host }
}

/// The fields with declared statistics in a scope, in catalogue order.
pub(crate) fn summarised(scope: Scope) -> &'static [Field] {
    static FIELDS: LazyLock<[Vec<Field>; 2]> = LazyLock::new(|| {
        let of = |scope| {
            CATALOG.iter().filter(move |d| !d.summary.is_empty() && field_scope(d.field) == scope)
        };
        [of(Scope::Gpu).map(|d| d.field).collect(), of(Scope::Host).map(|d| d.field).collect()]
    });
    &FIELDS[scope as usize]
}

/// A place in the report order: one statistic, or every declared statistic of a field.
enum Place {
    One(Stat),
    Of(Field),
    Reasons,
    /// The memory-health maxima.
    Health,
}

use Place::{Of, One};

/// Report order of the GPU statistics; the fields not named follow in catalogue order.
const GPU_ORDER: &[Place] = &[
    One(Stat::Samples),
    One(Stat::SpanS),
    One(Stat::IntervalS),
    One(Stat::CoveragePct),
    One(Stat::Gaps),
    One(Stat::GapS),
    Of(Field::UtilGpu),
    One(Stat::IdlePct),
    Of(Field::UtilMemory),
    Of(Field::MemUsed),
    One(Stat::MemoryTotal),
    One(Stat::MemoryUsedMaxPct),
    Of(Field::PowerDraw),
    One(Stat::EnergyWh),
    Of(Field::TempGpu),
    One(Stat::ThrottleThermalPct),
    One(Stat::ThrottlePowerPct),
    Place::Reasons,
    One(Stat::InputBoundPct),
    // Placed so that fields added to the catalogue before it are reported after it (names only grow).
    Of(Field::JobGpuMemory),
];

/// GPU statistics reported after the catalogue fields (added later: names only grow).
const GPU_TAIL: &[Place] = &[
    One(Stat::HeldIdlePct),
    One(Stat::EmptyRows),
    One(Stat::BusyClock),
    One(Stat::EccIncrease),
    Place::Health,
];

/// Host statistics reported after the catalogue fields.
const HOST_TAIL: &[Place] = &[One(Stat::SwapRange)];

/// Report order of the host statistics; the fields not named follow in catalogue order.
const HOST_ORDER: &[Place] = &[
    One(Stat::Ticks),
    Of(Field::CpuUtil),
    Of(Field::CpuUtilMaxCore),
    Of(Field::HostMemUsed),
    One(Stat::MemTotal),
    One(Stat::MemUsedMaxPct),
    Of(Field::SwapUsed),
];

fn expand(scope: Scope, order: &[Place], tail: &[Place]) -> Vec<Stat> {
    let mut named = Vec::new();
    let mut out = Vec::new();
    let of = |f: Field| f.def().summary.iter().map(move |&r| Stat::Field(f, r));
    let place = |p: &Place, named: &mut Vec<Field>, out: &mut Vec<Stat>| match *p {
        One(s) => out.push(s),
        Of(f) => {
            named.push(f);
            out.extend(of(f));
        }
        Place::Reasons => out.extend(REASONS.iter().map(|&r| Stat::Throttle(r))),
        Place::Health => out.extend(crate::facts::HEALTH.iter().map(|&f| Stat::HealthMax(f))),
    };
    for p in order {
        place(p, &mut named, &mut out);
    }
    for &f in summarised(scope).iter().filter(|f| !named.contains(f)) {
        out.extend(of(f));
    }
    for p in tail {
        place(p, &mut named, &mut out);
    }
    out
}

/// Every statistic of a scope, in report order.
pub(crate) fn layout(scope: Scope) -> &'static [Stat] {
    static LAYOUT: LazyLock<[Vec<Stat>; 2]> = LazyLock::new(|| {
        [expand(Scope::Gpu, GPU_ORDER, GPU_TAIL), expand(Scope::Host, HOST_ORDER, HOST_TAIL)]
    });
    &LAYOUT[scope as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumon_schema::catalog::Ty;

    fn names(scope: Scope) -> Vec<String> {
        layout(scope).iter().map(|s| s.to_string()).collect()
    }

    /// The names are a contract (docs/summary-json.md, `--fail-if`): this list only grows.
    #[test]
    fn names_in_report_order() {
        assert_eq!(
            names(Scope::Gpu).join(" "),
            "samples span_s interval_s coverage_pct gaps gap_s utilization.gpu.mean utilization.gpu.p50 \
             utilization.gpu.p95 utilization.gpu.max utilization.gpu.idle_pct utilization.memory.mean \
             memory.used.max memory.total memory.used.max_pct power.draw.mean power.draw.max energy_wh \
             temperature.gpu.max throttle.thermal_pct throttle.power_pct throttle.gpu_idle_pct \
             throttle.applications_clocks_setting_pct throttle.sw_power_cap_pct throttle.hw_slowdown_pct \
             throttle.sync_boost_pct throttle.sw_thermal_slowdown_pct throttle.hw_thermal_slowdown_pct \
             throttle.hw_power_brake_slowdown_pct throttle.display_clock_setting_pct input_bound_pct \
             job.gpu_memory.mean job.gpu_memory.max sm.active.mean sm.active.max sm.occupancy.mean \
             tensor.active.mean tensor.active.max dram.active.mean dram.active.max fp16.active.mean \
             fp32.active.mean fp64.active.mean pcie.tx.bytes.mean pcie.tx.bytes.max pcie.rx.bytes.mean \
             pcie.rx.bytes.max nvlink.tx.bytes.mean nvlink.tx.bytes.max nvlink.rx.bytes.mean nvlink.rx.bytes.max \
             memory.held_idle_pct empty_rows clocks.sm.busy_mean ecc.errors.uncorrected.volatile.total.increase \
             remapped_rows.uncorrectable.max remapped_rows.pending.max remapped_rows.failure.max \
             retired_pages.single_bit_ecc.count.max retired_pages.double_bit.count.max retired_pages.pending.max"
        );
        assert_eq!(
            names(Scope::Host).join(" "),
            "ticks cpu.util.mean cpu.util.p95 cpu.util.max cpu.util.max_core.mean cpu.util.max_core.p95 \
             cpu.util.max_core.max mem.used.max mem.total mem.used.max_pct swap.used.max job.cpu.mean job.cpu.max \
             job.rss.mean job.rss.max job.procs.mean job.procs.max job.threads.mean job.threads.max job.read.mean \
             job.read.max job.write.mean job.write.max cgroup.mem.used.mean cgroup.mem.used.max \
             cgroup.mem.limit.mean cgroup.mem.limit.max cgroup.cpu.limit.mean cgroup.cpu.limit.max \
             cgroup.cpu.util.mean cgroup.cpu.util.max cgroup.oom_kills.mean cgroup.oom_kills.max swap.used.range"
        );
    }

    #[test]
    fn names_are_unique_scoped_and_found_again() {
        let all: Vec<Stat> =
            layout(Scope::Gpu).iter().chain(layout(Scope::Host)).copied().collect();
        let mut seen = std::collections::HashSet::new();
        for s in &all {
            assert!(seen.insert(s.to_string()), "duplicate statistic {s}");
            assert_eq!(Stat::lookup(&s.to_string()), Some(*s));
            assert!(layout(s.scope()).contains(s), "{s} is reported in the other scope");
        }
        assert_eq!(Stat::lookup("utilization.gpu.p96"), None);
        assert_eq!(Stat::max(Field::MemUsed).unit(), "MiB");
        assert_eq!(Stat::p95(Field::UtilGpu).unit(), "%");
        assert_eq!(Stat::EnergyWh.unit(), "Wh");
    }

    #[test]
    fn catalogue_summaries_are_well_formed() {
        for d in CATALOG.iter().filter(|d| !d.summary.is_empty()) {
            assert!(
                !matches!(d.ty, Ty::Str | Ty::Timestamp | Ty::Bool),
                "{} is not a number",
                d.name
            );
            assert!(
                matches!(d.source, Source::Gpu | Source::Host | Source::Job | Source::Cgroup),
                "{}: only sampled fields are summarised",
                d.name
            );
            if d.summary.iter().any(|r| r.percentile().is_some()) {
                assert_eq!(d.unit, "%", "{}: percentiles are kept in a percent histogram", d.name);
            }
        }
        for order in [GPU_ORDER, HOST_ORDER] {
            for p in order {
                if let Of(f) = p {
                    assert!(!f.def().summary.is_empty(), "{f} is placed but has no statistics");
                }
            }
        }
    }
}
