//! Prometheus names derived from the field catalogue: metric name, base unit and scale, labels.
//!
//! One rule set, applied to every [`FieldDef`], so new catalogue rows get a metric without a
//! hand-written list:
//!
//! * prefix `gpumon_`, then a namespace from the field's source (`gpu_`, `host_`, `job_`,
//!   `cgroup_`; a `.max` companion takes its base field's), then the canonical name with `.` as
//!   `_` (a leading namespace word is not repeated, and `gpu` is dropped under `gpu_`:
//!   `utilization.gpu` -> `gpumon_gpu_utilization_ratio`);
//! * the catalogue unit becomes a base unit suffix and a scale factor ([`unit()`]): `%` -> `_ratio`
//!   (0-1), `MiB` -> `_bytes`, `MHz` -> `_hertz`, `W` -> `_watts`, `C` -> `_celsius`, `J` -> `_joules`;
//! * counters end in `_total` (a trailing `total` in the field name is not doubled), and a trailing
//!   word the unit suffix already says is not doubled (`pcie.tx.bytes` in MiB/s -> `..._bytes_per_second`);
//! * a gauge drops a trailing `count` (`_count` is a histogram's or summary's series, which promtool
//!   rejects on a gauge): `retired_pages.double_bit.count` -> `gpumon_gpu_retired_pages_double_bit`;
//! * GPM fields that would take an older field's name get `gpm_` after the namespace ([`GPM_QUALIFIED`]).
//!
//! Fields of kind [`PromKind::Label`] are labels, not metrics: per-GPU identity fields label every
//! per-GPU series (`index` is spelled `gpu`, as dcgm-exporter does), `host` labels every series.
//!
//! HELP texts speak in the exposed unit ([`help`]): a percent field's catalogue help is replaced by
//! its ratio wording ([`RATIO_HELP`]), other helps name the base unit when they do not already.
//! The clock-event bitmask also gets one 0/1 series per reason ([`REASON_FAMILY`]), and the Xid
//! events of the run a counter per GPU and Xid ([`XID_FAMILY`]).

#[cfg(test)]
use gpumon_schema::catalog::{CATALOG, CLOCK_EVENT_REASONS};
use gpumon_schema::catalog::{Field, FieldDef, PromKind, Source, Ty};

/// Metric kind on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Gauge,
    Counter,
    /// A constant-1 series whose labels carry the information (`*_info`).
    Info,
}

/// A catalogue unit in Prometheus terms: the base-unit suffix and the factor from the stored value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Unit {
    /// Name suffix without the leading `_` (`bytes`), or None for unitless values.
    pub suffix: Option<&'static str>,
    /// Stored value times `mul` divided by `div` gives the base unit (a division keeps 70 % exact as 0.7).
    pub mul: f64,
    pub div: f64,
}

impl Unit {
    const fn new(suffix: Option<&'static str>, mul: f64, div: f64) -> Unit {
        Unit { suffix, mul, div }
    }

    pub(crate) fn apply(&self, v: f64) -> f64 {
        v * self.mul / self.div
    }
}

/// The base unit for a catalogue unit string, or None when the unit is unknown (a unit test
/// checks that every catalogue unit is known, so a new one cannot slip through unconverted).
pub(crate) fn unit(catalogue_unit: &str) -> Option<Unit> {
    const MIB: f64 = 1024.0 * 1024.0;
    Some(match catalogue_unit {
        "" => Unit::new(None, 1.0, 1.0),
        "%" => Unit::new(Some("ratio"), 1.0, 100.0),
        "B" => Unit::new(Some("bytes"), 1.0, 1.0),
        "KiB" => Unit::new(Some("bytes"), 1024.0, 1.0),
        "MiB" => Unit::new(Some("bytes"), MIB, 1.0),
        "GiB" => Unit::new(Some("bytes"), MIB * 1024.0, 1.0),
        "B/s" => Unit::new(Some("bytes_per_second"), 1.0, 1.0),
        "KiB/s" => Unit::new(Some("bytes_per_second"), 1024.0, 1.0),
        "MiB/s" => Unit::new(Some("bytes_per_second"), MIB, 1.0),
        "W" => Unit::new(Some("watts"), 1.0, 1.0),
        "J" => Unit::new(Some("joules"), 1.0, 1.0),
        "C" => Unit::new(Some("celsius"), 1.0, 1.0),
        "Hz" => Unit::new(Some("hertz"), 1.0, 1.0),
        "MHz" => Unit::new(Some("hertz"), 1e6, 1.0),
        "s" => Unit::new(Some("seconds"), 1.0, 1.0),
        "ms" => Unit::new(Some("seconds"), 1.0, 1e3),
        "us" | "µs" => Unit::new(Some("seconds"), 1.0, 1e6),
        "cores" => Unit::new(Some("cores"), 1.0, 1.0),
        _ => return None,
    })
}

/// How one catalogue field appears on the endpoint.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Exposure {
    /// A metric family of its own.
    Metric(MetricSpec),
    /// A label on other series (identity fields).
    Label(String),
    /// Not exported; the reason is shown in docs/prometheus.md.
    Omitted(&'static str),
}

/// A field's metric family.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSpec {
    /// Name without unit and `_total` (what OpenMetrics calls the family name before the unit).
    pub(crate) base: String,
    pub(crate) unit: Unit,
    pub(crate) kind: Kind,
    /// One series per GPU (labelled gpu/uuid/name/pci_bus_id) rather than one per host.
    pub(crate) per_gpu: bool,
}

impl MetricSpec {
    /// The name as scraped: base, unit suffix, `_total` for counters, `_info` for info metrics.
    pub fn name(&self) -> String {
        let mut n = self.base.clone();
        if let Some(u) = self.unit.suffix {
            n.push('_');
            n.push_str(u);
        }
        match self.kind {
            Kind::Counter => n.push_str("_total"),
            Kind::Info => n.push_str("_info"),
            Kind::Gauge => {}
        }
        n
    }
}

/// Whether the field's value differs between the GPU rows of one tick: GPU-sourced fields
/// (including a job's per-GPU share, `job.gpu_memory`) and the `.max` companions of GPU fields.
/// Host, cgroup and job values are the same on every row and are exported once per host.
pub(crate) fn per_gpu(def: &FieldDef) -> bool {
    match def.source {
        Source::Gpu => true,
        Source::Derived => def.max_of.is_some_and(|b| per_gpu(b.def())),
        Source::Meta
        | Source::Host
        | Source::Job
        | Source::Cgroup
        | Source::Process
        | Source::Event => false,
    }
}

/// GPM fields whose plain name is an older field's metric (`pcie.tx` is NVML's 20 ms PCIe counter).
const GPM_QUALIFIED: [Field; 2] = [Field::PcieTxBytes, Field::PcieRxBytes];

/// Words that name a namespace when a field name starts with one (`job.gpu_memory` is a job
/// metric although NVML reports it per GPU).
const NAMESPACES: [&str; 5] = ["gpu", "host", "job", "cgroup", "proc"];

/// The namespace word after `gpumon_`: the field name's own first word when it is one, else the source's.
fn namespace(def: &FieldDef) -> &'static str {
    if let Some(ns) = NAMESPACES.iter().find(|ns| words(def.name).first().is_some_and(|w| w == *ns))
    {
        return ns;
    }
    source_namespace(def)
}

fn source_namespace(def: &FieldDef) -> &'static str {
    match def.source {
        Source::Gpu => "gpu",
        Source::Host => "host",
        Source::Job => "job",
        Source::Cgroup => "cgroup",
        Source::Process => "proc",
        Source::Event => "event",
        Source::Derived => def.max_of.map_or("", |b| source_namespace(b.def())),
        Source::Meta => "",
    }
}

/// Lower-case `[a-z0-9_]` words of a dotted field name.
fn words(name: &str) -> Vec<String> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The label name of an identity field: `index` is `gpu` (dcgm-exporter's spelling), others
/// their canonical name with `.` as `_` (`pci.bus_id` -> `pci_bus_id`).
/// A MIG instance's series carry dcgm-exporter's names for it: `gpu_instance` (its GPU_I_ID),
/// `profile` (GPU_I_PROFILE), and `compute_instance`.
pub(crate) fn label_name(def: &FieldDef) -> String {
    match def.field {
        Field::Index => "gpu".to_string(),
        Field::MigGi => "gpu_instance".to_string(),
        Field::MigCi => "compute_instance".to_string(),
        Field::MigProfile => "profile".to_string(),
        _ => words(def.name).join("_"),
    }
}

/// How `def` appears on the endpoint.
pub(crate) fn exposure(def: &FieldDef) -> Exposure {
    if def.source == Source::Process {
        return Exposure::Omitted(
            "per-process rows (`--processes`) are not exported: every PID would be a new series",
        );
    }
    if def.source == Source::Event {
        return Exposure::Omitted(
            "event rows are in the events file; `xid.events` counts Xid events per GPU",
        );
    }
    let kind = match def.prom {
        PromKind::None if def.ty == Ty::Timestamp => {
            return Exposure::Omitted(
                "Prometheus stamps samples itself; see `gpumon_last_tick_timestamp_seconds`",
            );
        }
        PromKind::None if def.source == Source::Derived => {
            return Exposure::Omitted(
                "row bookkeeping; the run counters `gpumon_ticks_*` cover it",
            );
        }
        PromKind::None if def.source == Source::Meta => {
            return Exposure::Omitted(
                "the experiment phase: a text column of the files, not a measurement",
            );
        }
        PromKind::None => {
            return Exposure::Omitted(
                "one of nvidia-smi's other `--query-gpu` values (docs/query-gpu.md): in the files only",
            );
        }
        PromKind::Label if def.source == Source::Meta || per_gpu(def) => {
            return Exposure::Label(label_name(def));
        }
        PromKind::Label => Kind::Info,
        PromKind::Gauge => Kind::Gauge,
        PromKind::Counter => Kind::Counter,
    };
    let ns = namespace(def);
    let mut w = words(def.name);
    if !ns.is_empty() && w.first().is_some_and(|f| f == ns) {
        w.remove(0);
    }
    if ns == "gpu" {
        // utilization.gpu, temperature.gpu: the namespace already says it.
        w.retain(|t| t != "gpu");
    }
    if kind == Kind::Counter && w.len() > 1 && w.last().is_some_and(|t| t == "total") {
        w.pop();
    }
    if kind == Kind::Gauge && w.len() > 1 && w.last().is_some_and(|t| t == "count") {
        w.pop();
    }
    let unit = if kind == Kind::Info { unit("") } else { unit(def.unit) };
    let Some(unit) = unit else {
        return Exposure::Omitted(
            "unit without a Prometheus base unit (add it to prom::names::unit)",
        );
    };
    // `pcie.tx.bytes` in MiB/s: the unit suffix already says bytes.
    if let Some(first) = unit.suffix.and_then(|u| u.split('_').next())
        && w.len() > 1
        && w.last().is_some_and(|t| t == first)
    {
        w.pop();
    }
    if GPM_QUALIFIED.contains(&def.field) {
        w.insert(0, "gpm".into());
    }
    let mut base = String::from("gpumon");
    for part in std::iter::once(ns).chain(w.iter().map(String::as_str)).filter(|p| !p.is_empty()) {
        base.push('_');
        base.push_str(part);
    }
    Exposure::Metric(MetricSpec { base, unit, kind, per_gpu: per_gpu(def) })
}

/// The metric spec of a field, if it has its own family.
pub fn metric(def: &FieldDef) -> Option<MetricSpec> {
    match exposure(def) {
        Exposure::Metric(m) => Some(m),
        _ => None,
    }
}

/// Number from a string gauge: the digits after a letter prefix (`P2` -> 2, the P-state index).
pub(crate) fn str_number(s: &str) -> Option<f64> {
    s.trim().trim_start_matches(|c: char| c.is_ascii_alphabetic()).parse().ok()
}

/// HELP of the fields whose catalogue unit is `%`, in their exposed unit (a ratio, 1 = 100 %).
/// A unit test makes sure every exported percent field has one.
const RATIO_HELP: &[(&str, &str)] = &[
    (
        "sm.active",
        "Fraction (0-1) of time at least one warp was resident on an SM, averaged over all SMs (GPM SM_UTIL; \
         DCGM_FI_PROF_SM_ACTIVE). Hopper and newer.",
    ),
    (
        "sm.occupancy",
        "Resident warps as a fraction (0-1) of the SMs' maximum (GPM SM_OCCUPANCY; DCGM_FI_PROF_SM_OCCUPANCY).",
    ),
    (
        "tensor.active",
        "Fraction (0-1) of time any tensor core pipe was busy (GPM ANY_TENSOR_UTIL; DCGM_FI_PROF_PIPE_TENSOR_ACTIVE).",
    ),
    (
        "dram.active",
        "Device memory bandwidth in use, as a fraction (0-1) of the peak (GPM DRAM_BW_UTIL; DCGM_FI_PROF_DRAM_ACTIVE).",
    ),
    (
        "fp16.active",
        "Fraction (0-1) of time the FP16 pipe was busy (GPM FP16_UTIL; DCGM_FI_PROF_PIPE_FP16_ACTIVE).",
    ),
    (
        "fp32.active",
        "Fraction (0-1) of time the FP32 pipe was busy (GPM FP32_UTIL; DCGM_FI_PROF_PIPE_FP32_ACTIVE).",
    ),
    (
        "fp64.active",
        "Fraction (0-1) of time the FP64 pipe was busy (GPM FP64_UTIL; DCGM_FI_PROF_PIPE_FP64_ACTIVE).",
    ),
    (
        "sm.active.max",
        "Highest sm.active among the sub-samples of the interval (with --sample-every), as a ratio 0-1.",
    ),
    (
        "tensor.active.max",
        "Highest tensor.active among the sub-samples of the interval (with --sample-every), as a ratio 0-1.",
    ),
    (
        "dram.active.max",
        "Highest dram.active among the sub-samples of the interval (with --sample-every), as a ratio 0-1.",
    ),
    (
        "utilization.gpu",
        "Fraction (0-1) of the past sample period during which one or more kernels ran on the GPU.",
    ),
    (
        "utilization.memory",
        "Fraction (0-1) of the past sample period during which device memory was read or written.",
    ),
    (
        "fan.speed",
        "Intended fan speed as a fraction (0-1) of maximum (absent on passively cooled boards).",
    ),
    ("utilization.encoder", "Video encoder utilization, as a ratio 0-1."),
    ("utilization.decoder", "Video decoder utilization, as a ratio 0-1."),
    ("cpu.util", "Host CPU utilization over the tick, as a fraction (0-1) of all cores."),
    (
        "cpu.util.max_core",
        "Utilization of the busiest single core over the tick, as a ratio 0-1 (a pegged core next to an idle GPU \
         means input-bound).",
    ),
    (
        "utilization.gpu.max",
        "Highest utilization.gpu among the sub-samples of the interval (with --sample-every), as a ratio 0-1.",
    ),
    (
        "cpu.util.max_core.max",
        "Highest cpu.util.max_core among the sub-samples of the interval (with --sample-every), as a ratio 0-1.",
    ),
    ("job.cpu", "CPU used by the job's process tree as a ratio of one core (4 = four cores busy)."),
    (
        "cgroup.cpu.util",
        "CPU used by the cgroup over the tick, as a fraction (0-1) of its limit (of all cores when unlimited).",
    ),
];

/// The base unit in words, for HELP texts.
fn unit_words(suffix: &str) -> String {
    suffix.replace('_', " ")
}

/// The HELP text of a field's metric, in the exposed unit.
pub(crate) fn help(def: &FieldDef, spec: &MetricSpec) -> String {
    if let Some((_, h)) = RATIO_HELP.iter().find(|(n, _)| *n == def.name) {
        return (*h).to_string();
    }
    let mut h = def.help.to_string();
    if let Some(words) = spec.unit.suffix.map(unit_words)
        && !h.to_ascii_lowercase().contains(&words)
    {
        h.push_str(&format!(" Unit: {words}."));
    }
    h
}

/// One 0/1 series per clock-event reason, next to the bitmask (`reason` label: the names of
/// [`gpumon_schema::catalog::CLOCK_EVENT_REASONS`], as nvidia-smi's `clocks_event_reasons.<name>` fields spell them).
pub(crate) const REASON_FAMILY: &str = "gpumon_gpu_clocks_event_reason";
/// Xid events since the run started, per GPU and Xid (dcgm-exporter's `xid` label): a counter, so a
/// scrape every 15 s of 1 s rows misses none (`xid.events` is a gauge of one row's interval).
pub(crate) const XID_FAMILY: &str = "gpumon_gpu_xid_errors";
pub(crate) const XID_HELP: &str = "Xid critical error events NVML reported for this GPU since the run started, per Xid \
                            (label xid); see `gpumon summarize` for what each means.";
pub(crate) const REASON_HELP: &str = "1 while this clock event (throttle) reason is active, else 0; one series per \
     reason (label `reason`), decoded from clocks_event_reasons.active.";

/// Metrics that describe the run rather than a catalogue field: (name, kind, help).
pub(crate) const RUN_METRICS: &[(&str, Kind, &str)] = &[
    ("gpumon_up", Kind::Gauge, "1 while gpumon is recording and serving."),
    ("gpumon_build", Kind::Info, "gpumon version and NVML driver version (constant 1)."),
    ("gpumon_interval_seconds", Kind::Gauge, "Time between output rows (--interval)."),
    (
        "gpumon_start_time_seconds",
        Kind::Gauge,
        "When the recording started, seconds since the Unix epoch.",
    ),
    (
        "gpumon_last_tick_timestamp_seconds",
        Kind::Gauge,
        "Wall-clock time of the tick these values come from, seconds since the Unix epoch; \
         time() minus this is the age of the data.",
    ),
    ("gpumon_ticks", Kind::Counter, "Output rows (ticks) recorded since the start."),
    (
        "gpumon_ticks_late",
        Kind::Counter,
        "Samples that started more than half an interval late (slow machine or GPU query).",
    ),
    (
        "gpumon_ticks_missed",
        Kind::Counter,
        "Ticks skipped because the scheduler was late (deadlines are not bunched up).",
    ),
    (
        "gpumon_ticks_dropped",
        Kind::Counter,
        "Ticks dropped because the file writer's queue was full.",
    ),
];

#[cfg(test)]
/// The scraped name of a run metric.
pub(crate) fn run_metric_name(base: &str, kind: Kind) -> String {
    match kind {
        Kind::Gauge => base.to_string(),
        Kind::Counter => format!("{base}_total"),
        Kind::Info => format!("{base}_info"),
    }
}

#[cfg(test)]
/// dcgm-exporter / node_exporter / cAdvisor equivalents, by canonical field name (for the docs).
const EQUIVALENTS: &[(&str, &str)] = &[
    ("utilization.gpu", "`DCGM_FI_DEV_GPU_UTIL` (%)"),
    ("utilization.memory", "`DCGM_FI_DEV_MEM_COPY_UTIL` (%)"),
    ("memory.used", "`DCGM_FI_DEV_FB_USED` (MiB)"),
    ("memory.total", "`DCGM_FI_DEV_FB_TOTAL` (MiB)"),
    ("memory.free", "`DCGM_FI_DEV_FB_FREE` (MiB)"),
    ("temperature.gpu", "`DCGM_FI_DEV_GPU_TEMP` (C)"),
    ("power.draw", "`DCGM_FI_DEV_POWER_USAGE` (W)"),
    ("power.limit", "`DCGM_FI_DEV_ENFORCED_POWER_LIMIT` (W)"),
    ("energy.total", "`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` (mJ)"),
    ("clocks.sm", "`DCGM_FI_DEV_SM_CLOCK` (MHz)"),
    ("clocks.mem", "`DCGM_FI_DEV_MEM_CLOCK` (MHz)"),
    ("fan.speed", "`DCGM_FI_DEV_FAN_SPEED` (%)"),
    ("clocks_event_reasons.active", "`DCGM_FI_DEV_CLOCK_THROTTLE_REASONS`"),
    ("utilization.encoder", "`DCGM_FI_DEV_ENC_UTIL` (%)"),
    ("utilization.decoder", "`DCGM_FI_DEV_DEC_UTIL` (%)"),
    ("pcie.tx", "`DCGM_FI_PROF_PCIE_TX_BYTES` (B/s)"),
    ("pcie.rx", "`DCGM_FI_PROF_PCIE_RX_BYTES` (B/s)"),
    ("ecc.errors.uncorrected.volatile.total", "`DCGM_FI_DEV_ECC_DBE_VOL_TOTAL`"),
    ("sm.active", "`DCGM_FI_PROF_SM_ACTIVE` (ratio)"),
    ("sm.occupancy", "`DCGM_FI_PROF_SM_OCCUPANCY` (ratio)"),
    ("tensor.active", "`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE` (ratio)"),
    ("dram.active", "`DCGM_FI_PROF_DRAM_ACTIVE` (ratio)"),
    ("fp16.active", "`DCGM_FI_PROF_PIPE_FP16_ACTIVE` (ratio)"),
    ("fp32.active", "`DCGM_FI_PROF_PIPE_FP32_ACTIVE` (ratio)"),
    ("fp64.active", "`DCGM_FI_PROF_PIPE_FP64_ACTIVE` (ratio)"),
    ("pcie.tx.bytes", "`DCGM_FI_PROF_PCIE_TX_BYTES` (B/s)"),
    ("pcie.rx.bytes", "`DCGM_FI_PROF_PCIE_RX_BYTES` (B/s)"),
    ("nvlink.tx.bytes", "`DCGM_FI_PROF_NVLINK_TX_BYTES` (B/s)"),
    ("nvlink.rx.bytes", "`DCGM_FI_PROF_NVLINK_RX_BYTES` (B/s)"),
    ("xid.events", "`DCGM_FI_DEV_XID_ERRORS` (last Xid, not a count)"),
    ("remapped_rows.correctable", "`DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS`"),
    ("remapped_rows.uncorrectable", "`DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS`"),
    ("remapped_rows.failure", "`DCGM_FI_DEV_ROW_REMAP_FAILURE`"),
    ("remapped_rows.pending", "`DCGM_FI_DEV_ROW_REMAP_PENDING`"),
    ("retired_pages.single_bit_ecc.count", "`DCGM_FI_DEV_RETIRED_SBE`"),
    ("retired_pages.double_bit.count", "`DCGM_FI_DEV_RETIRED_DBE`"),
    ("retired_pages.pending", "`DCGM_FI_DEV_RETIRED_PENDING`"),
    ("cpu.util", "`1 - avg(rate(node_cpu_seconds_total{mode=\"idle\"}[1m]))`"),
    ("load.1", "`node_load1`"),
    ("mem.total", "`node_memory_MemTotal_bytes`"),
    ("mem.used", "`node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes`"),
    ("mem.available", "`node_memory_MemAvailable_bytes`"),
    ("swap.used", "`node_memory_SwapTotal_bytes - node_memory_SwapFree_bytes`"),
    ("job.cpu", "`rate(namedprocess_namegroup_cpu_seconds_total[1m])` (process-exporter)"),
    ("job.rss", "`namedprocess_namegroup_memory_bytes{memtype=\"resident\"}` (process-exporter)"),
    ("job.procs", "`namedprocess_namegroup_num_procs` (process-exporter)"),
    ("job.threads", "`namedprocess_namegroup_num_threads` (process-exporter)"),
    ("job.read", "`rate(namedprocess_namegroup_read_bytes_total[1m])` (process-exporter)"),
    ("job.write", "`rate(namedprocess_namegroup_write_bytes_total[1m])` (process-exporter)"),
    ("cgroup.mem.used", "`container_memory_usage_bytes` (cAdvisor)"),
    ("cgroup.mem.limit", "`container_spec_memory_limit_bytes` (cAdvisor)"),
    ("cgroup.cpu.limit", "`container_spec_cpu_quota / container_spec_cpu_period` (cAdvisor)"),
    ("cgroup.cpu.util", "`rate(container_cpu_usage_seconds_total[1m])` (cAdvisor, in cores)"),
    ("cgroup.oom_kills", "`container_oom_events_total` (cAdvisor)"),
];

#[cfg(test)]
/// The generated field table of docs/prometheus.md.
pub(crate) fn doc_table() -> String {
    use std::fmt::Write;
    let mut out = String::from(
        "| field | metric | type | series | scale | dcgm-exporter / node_exporter equivalent |\n|---|---|---|---|---|---|\n",
    );
    for def in &CATALOG {
        let eq = EQUIVALENTS.iter().find(|(n, _)| *n == def.name).map_or("", |(_, e)| *e);
        let (metric, kind, series, scale) = match exposure(def) {
            Exposure::Metric(m) => {
                let kind = match m.kind {
                    Kind::Gauge if def.ty == Ty::Str => "gauge (number in the string)",
                    Kind::Gauge => "gauge",
                    Kind::Counter => "counter",
                    Kind::Info => "info (value as label)",
                };
                let series = if m.per_gpu { "per GPU" } else { "per host" };
                (
                    format!("`{}`", m.name()),
                    kind.to_string(),
                    series.to_string(),
                    scale_text(def.unit, m.unit),
                )
            }
            Exposure::Label(l) => {
                let on = if def.source == Source::Meta { "every series" } else { "per-GPU series" };
                (format!("label `{l}`"), "label".into(), on.into(), String::new())
            }
            Exposure::Omitted(why) => {
                ("not exported".into(), String::new(), why.to_string(), String::new())
            }
        };
        let _ = writeln!(out, "| `{}` | {metric} | {kind} | {series} | {scale} | {eq} |", def.name);
    }
    let reasons: Vec<String> = CLOCK_EVENT_REASONS.iter().map(|(_, n)| format!("`{n}`")).collect();
    let _ = writeln!(
        out,
        "\nWith `clocks_event_reasons.active`, also `{REASON_FAMILY}` (gauge, per GPU and reason): {REASON_HELP} \
         Reasons: {}.",
        reasons.join(", ")
    );
    let _ = writeln!(
        out,
        "\nWith events watched, also `{XID_FAMILY}_total` (counter, per GPU and Xid): {XID_HELP}"
    );
    let _ = writeln!(
        out,
        "\nRun metrics (one series per host):\n\n| metric | type | meaning |\n|---|---|---|"
    );
    for &(base, kind, help) in RUN_METRICS {
        let k = match kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Info => "info",
        };
        let _ = writeln!(out, "| `{}` | {k} | {help} |", run_metric_name(base, kind));
    }
    out
}

#[cfg(test)]
fn scale_text(catalogue_unit: &str, u: Unit) -> String {
    if u.mul == 1.0 && u.div == 1.0 {
        return if catalogue_unit.is_empty() {
            String::new()
        } else {
            format!("{catalogue_unit} as is")
        };
    }
    if u.div != 1.0 {
        format!("{catalogue_unit} ÷ {}", u.div)
    } else {
        format!("{catalogue_unit} × {}", u.mul)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn valid_metric_name(n: &str) -> bool {
        let mut c = n.chars();
        c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
            && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
    }

    #[test]
    fn every_catalogue_field_has_a_valid_unique_name_or_a_reason() {
        let mut seen = HashSet::from([REASON_FAMILY.to_string()]);
        for &(base, kind, _) in RUN_METRICS {
            assert!(seen.insert(run_metric_name(base, kind)));
        }
        for def in &CATALOG {
            match exposure(def) {
                Exposure::Metric(m) => {
                    let n = m.name();
                    assert!(valid_metric_name(&n), "{}: invalid metric name {n}", def.name);
                    assert!(n.starts_with("gpumon_"), "{n}");
                    assert!(seen.insert(n.clone()), "{}: metric name {n} is not unique", def.name);
                    assert_eq!(m.kind == Kind::Counter, n.ends_with("_total"), "{n}");
                    assert!(!n.contains("__"), "{n}");
                }
                Exposure::Label(l) => {
                    assert!(
                        valid_metric_name(&l) && !l.starts_with("__"),
                        "{}: invalid label {l}",
                        def.name
                    )
                }
                Exposure::Omitted(why) => {
                    assert!(
                        !why.contains("unit without"),
                        "{}: unit {:?} has no base unit",
                        def.name,
                        def.unit
                    )
                }
            }
        }
    }

    #[test]
    fn help_speaks_in_the_exposed_unit() {
        for def in &CATALOG {
            let Some(m) = metric(def) else { continue };
            let h = help(def, &m);
            if def.unit == "%" {
                assert!(
                    RATIO_HELP.iter().any(|(n, _)| *n == def.name),
                    "{}: add its ratio HELP to RATIO_HELP",
                    def.name
                );
                let l = h.to_ascii_lowercase();
                assert!(!l.contains("percent") && !l.contains('%'), "{}: {h}", def.name);
                assert!(l.contains("ratio") || l.contains("fraction"), "{}: {h}", def.name);
            } else if let Some(s) = m.unit.suffix {
                assert!(h.to_ascii_lowercase().contains(&unit_words(s)), "{}: {h}", def.name);
            }
        }
        assert!(
            RATIO_HELP.iter().all(|(n, _)| Field::lookup(n).is_some_and(|f| f.def().unit == "%"))
        );
        let mem = help(Field::MemUsed.def(), &metric(Field::MemUsed.def()).unwrap());
        assert!(mem.ends_with("Unit: bytes."), "{mem}");
    }

    #[test]
    fn every_catalogue_unit_has_a_base_unit() {
        for def in &CATALOG {
            assert!(
                unit(def.unit).is_some(),
                "{}: add unit {:?} to prom::names::unit",
                def.name,
                def.unit
            );
        }
    }

    #[test]
    fn names_follow_the_conventions() {
        let n = |f: Field| metric(f.def()).unwrap().name();
        assert_eq!(n(Field::UtilGpu), "gpumon_gpu_utilization_ratio");
        assert_eq!(n(Field::MemUsed), "gpumon_gpu_memory_used_bytes");
        assert_eq!(n(Field::PowerDraw), "gpumon_gpu_power_draw_watts");
        assert_eq!(n(Field::TempGpu), "gpumon_gpu_temperature_celsius");
        assert_eq!(n(Field::EnergyTotal), "gpumon_gpu_energy_joules_total");
        assert_eq!(n(Field::ClockSm), "gpumon_gpu_clocks_sm_hertz");
        assert_eq!(n(Field::Pstate), "gpumon_gpu_pstate");
        assert_eq!(n(Field::EccUncorrected), "gpumon_gpu_ecc_errors_uncorrected_volatile_total");
        assert_eq!(n(Field::UtilGpuMax), "gpumon_gpu_utilization_max_ratio");
        assert_eq!(n(Field::CpuUtil), "gpumon_host_cpu_util_ratio");
        assert_eq!(n(Field::HostMemUsed), "gpumon_host_mem_used_bytes");
        assert_eq!(n(Field::JobRss), "gpumon_job_rss_bytes");
        assert_eq!(n(Field::JobGpuMemory), "gpumon_job_gpu_memory_bytes");
        assert_eq!(n(Field::CgroupOomKills), "gpumon_cgroup_oom_kills_total");
        assert_eq!(n(Field::SmActive), "gpumon_gpu_sm_active_ratio");
        assert_eq!(n(Field::SmActiveMax), "gpumon_gpu_sm_active_max_ratio");
        assert_eq!(n(Field::PcieRx), "gpumon_gpu_pcie_rx_bytes_per_second");
        assert_eq!(n(Field::PcieRxBytes), "gpumon_gpu_gpm_pcie_rx_bytes_per_second");
        assert_eq!(n(Field::NvlinkTxBytes), "gpumon_gpu_nvlink_tx_bytes_per_second");
        assert_eq!(n(Field::XidEvents), "gpumon_gpu_xid_events");
        assert_eq!(n(Field::RemappedPending), "gpumon_gpu_remapped_rows_pending");
        assert_eq!(n(Field::RetiredSbe), "gpumon_gpu_retired_pages_single_bit_ecc");
        assert_eq!(n(Field::RetiredDbe), "gpumon_gpu_retired_pages_double_bit");
        assert_eq!(n(Field::RetiredPending), "gpumon_gpu_retired_pages_pending");
        assert!(matches!(exposure(Field::EventKind.def()), Exposure::Omitted(_)));
        assert_eq!(exposure(Field::Index.def()), Exposure::Label("gpu".into()));
        assert_eq!(exposure(Field::PciBusId.def()), Exposure::Label("pci_bus_id".into()));
        assert_eq!(exposure(Field::Host.def()), Exposure::Label("host".into()));
        assert!(matches!(exposure(Field::Timestamp.def()), Exposure::Omitted(_)));
        assert!(matches!(exposure(Field::ProcPid.def()), Exposure::Omitted(_)));
    }

    #[test]
    fn per_gpu_split() {
        assert!(per_gpu(Field::UtilGpu.def()));
        assert!(per_gpu(Field::TempGpuMax.def()));
        assert!(per_gpu(Field::JobGpuMemory.def()));
        assert!(!per_gpu(Field::JobRss.def()));
        assert!(!per_gpu(Field::CpuUtil.def()));
        assert!(!per_gpu(Field::CpuMaxCoreMax.def()));
        assert!(!per_gpu(Field::CgroupMemUsed.def()));
    }

    #[test]
    fn scales_are_exact() {
        let pct = unit("%").unwrap();
        assert_eq!(pct.apply(70.0), 0.7);
        assert_eq!(pct.apply(30.0), 0.3);
        assert_eq!(unit("MiB").unwrap().apply(81559.0), 81559.0 * 1048576.0);
        assert_eq!(unit("MHz").unwrap().apply(1410.0), 1.41e9);
        assert_eq!(str_number("P8"), Some(8.0));
        assert_eq!(str_number("P"), None);
    }

    /// docs/prometheus.md carries the generated table; `GPUMON_BLESS=1 cargo test -p gpumon-sink prom::`
    /// rewrites it after a catalogue change.
    #[test]
    fn docs_table_is_current() {
        const BEGIN: &str = "<!-- BEGIN generated by prom::names::doc_table -->\n";
        const END: &str = "<!-- END generated -->";
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/prometheus.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let start = doc.find(BEGIN).expect("BEGIN marker") + BEGIN.len();
        let end = doc.find(END).expect("END marker");
        let want = doc_table();
        if doc[start..end] != want {
            if std::env::var_os("GPUMON_BLESS").is_some() {
                std::fs::write(&path, format!("{}{want}{}", &doc[..start], &doc[end..])).unwrap();
            } else {
                panic!(
                    "docs/prometheus.md is out of date with the catalogue; run `GPUMON_BLESS=1 cargo test -p gpumon-sink prom::` to regenerate its table"
                );
            }
        }
        for def in &CATALOG {
            assert!(
                doc.contains(&format!("| `{}` |", def.name))
                    || std::env::var_os("GPUMON_BLESS").is_some()
            );
        }
    }
}
