//! One published tick as metric families and their two encodings: OpenMetrics 1.0 by
//! `prometheus-client`, and the Prometheus text format 0.0.4 (`text`: HELP, TYPE and sample lines,
//! which that crate does not write).
//!
//! Both encodings read the same [`Family`] list, so the two formats always carry the same series.
//! The library's registry is not used: gpumon's values are a snapshot, not live counters.

use std::fmt;
use std::sync::Arc;

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit as PcUnit};

use super::names::{self, Exposure, Kind, MetricSpec, RUN_METRICS};
use gpumon_schema::catalog::{CATALOG, CLOCK_EVENT_REASONS, Field, FieldDef, PromKind, Source};
use gpumon_schema::{Row, RunMeta, RunStats, Selection, Tick, Value};

/// Content type of the Prometheus text format.
pub(crate) const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// Content type of OpenMetrics text.
pub(crate) const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// What the sampler published: the latest tick and the run's counters.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    /// 0 before the first tick; bumped by every publish (keys the encoded-text cache).
    pub generation: u64,
    pub tick: Option<Tick>,
    pub stats: RunStats,
    /// Xid events since the start, per GPU and Xid.
    pub xids: Vec<XidCount>,
    /// The job's work counters (`record --progress`): per key, the amount reported since the start
    /// and in the last tick's interval.
    pub progress: Vec<ProgressCount>,
}

/// One work counter: the total since the run started and the amount of the last interval.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProgressCount {
    pub key: Arc<str>,
    pub total: f64,
    pub last: f64,
}

/// Add the amounts `row` carries for `keys` (a tick's rows all carry the same) to `counts`.
pub(crate) fn count_progress(
    counts: &mut Vec<ProgressCount>,
    keys: &[Arc<str>],
    row: Option<&Row>,
) {
    if counts.len() != keys.len() {
        *counts =
            keys.iter().map(|k| ProgressCount { key: k.clone(), total: 0.0, last: 0.0 }).collect();
    }
    for (k, c) in counts.iter_mut().enumerate() {
        c.last = row.and_then(|r| r.progress(k)).unwrap_or(0.0);
        c.total += c.last;
    }
}

/// How many Xid events of one code a GPU reported since the run started.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct XidCount {
    /// NVML index (`u32::MAX` when the event named no GPU).
    pub index: u32,
    pub uuid: Arc<str>,
    pub code: u64,
    pub n: u64,
}

/// Count `events`' Xids into `counts`.
pub(crate) fn count_xids(counts: &mut Vec<XidCount>, events: &[gpumon_schema::GpuEvent]) {
    for e in events.iter().filter(|e| e.kind == "xid") {
        let Some(code) = e.code else { continue };
        match counts.iter_mut().find(|c| c.index == e.index && c.code == code) {
            Some(c) => c.n += 1,
            None => counts.push(XidCount { index: e.index, uuid: e.uuid.clone(), code, n: 1 }),
        }
    }
}

/// What the encoders need besides the snapshot; fixed for the run.
#[derive(Debug)]
pub(crate) struct Plan {
    /// Selected fields that have a metric family, with their spec.
    metrics: Vec<(&'static FieldDef, MetricSpec)>,
    /// Identity fields that label per-GPU series, with their label names.
    gpu_labels: Vec<(&'static FieldDef, String)>,
    /// Identity fields that label every series (`host`).
    host_labels: Vec<(&'static FieldDef, String)>,
    meta: RunMeta,
}

impl Plan {
    pub(crate) fn new(sel: &Selection, meta: &RunMeta) -> Plan {
        let mut gpu_labels = Vec::new();
        let mut host_labels = Vec::new();
        // Labels come from every identity field, selected or not: the rows always carry them.
        for def in &CATALOG {
            if let Exposure::Label(l) = names::exposure(def) {
                if def.source == Source::Meta {
                    host_labels.push((def, l))
                } else {
                    gpu_labels.push((def, l))
                }
            }
        }
        let metrics =
            sel.fields().filter_map(|f| names::metric(f.def()).map(|m| (f.def(), m))).collect();
        Plan { metrics, gpu_labels, host_labels, meta: meta.clone() }
    }

    /// The families for one snapshot, run metrics first, then fields in selection order.
    /// Families without a sample (every value null) are left out.
    pub(crate) fn families(&self, snap: &Snapshot) -> Vec<Family> {
        // Identity of the machine (`host`): the same on every row of a tick; the run's host name
        // before the first tick or when a row lacks it.
        let first = snap.tick.as_ref().and_then(|t| t.rows.first());
        let host: Vec<(String, String)> = match first.map(|r| labels(r, &self.host_labels)) {
            Some(l) if !l.is_empty() => l,
            _ => vec![("host".into(), self.meta.hostname.clone())],
        };
        // The job's id labels every series beside `host` (`job_id`: Prometheus owns `job`).
        let host: Vec<(String, String)> = host
            .into_iter()
            .chain(self.meta.job.as_ref().map(|j| ("job_id".to_string(), j.id.clone())))
            .collect();
        let mut out = Vec::new();
        for &(base, kind, help) in RUN_METRICS {
            let value = match base {
                "gpumon_up" => Some(1.0),
                "gpumon_build" => Some(1.0),
                "gpumon_interval_seconds" => Some(self.meta.interval_s),
                "gpumon_start_time_seconds" => {
                    Some(self.meta.start.timestamp_micros() as f64 / 1e6)
                }
                "gpumon_last_tick_timestamp_seconds" => {
                    snap.tick.as_ref().map(|t| t.ts.timestamp_micros() as f64 / 1e6)
                }
                "gpumon_ticks" => Some(snap.stats.ticks as f64),
                "gpumon_ticks_late" => Some(snap.stats.late as f64),
                "gpumon_ticks_missed" => Some(snap.stats.missed as f64),
                "gpumon_ticks_dropped" => Some(snap.stats.dropped as f64),
                _ => None,
            };
            let mut lb = host.clone();
            if kind == Kind::Info {
                lb.push(("version".into(), env!("CARGO_PKG_VERSION").into()));
                if let Some(d) = &self.meta.driver_version {
                    lb.push(("driver_version".into(), d.clone()));
                }
            }
            let samples = value.map(|value| Sample { labels: lb, value }).into_iter().collect();
            out.push(Family {
                base: base.to_string(),
                unit: None,
                kind,
                help: help.to_string(),
                samples,
            });
        }
        self.progress_families(snap, &host, &mut out);
        let rows: &[Row] = snap.tick.as_ref().map_or(&[], |t| &t.rows);
        for (def, spec) in &self.metrics {
            let mut samples = Vec::new();
            let per_row: &[Row] = if spec.per_gpu { rows } else { rows.get(..1).unwrap_or(&[]) };
            for row in per_row {
                let mut lb = host.clone();
                if spec.per_gpu {
                    if row.get(Field::Index).is_missing() {
                        continue; // the host-only row of a machine without a GPU
                    }
                    lb.extend(labels(row, &self.gpu_labels));
                }
                let v = row.get(def.field);
                if spec.kind == Kind::Info {
                    if let Value::S(s) = v {
                        lb.push((names::label_name(def), s.to_string()));
                        samples.push(Sample { labels: lb, value: 1.0 });
                    }
                } else if let Some(x) = number(v, def) {
                    samples.push(Sample { labels: lb, value: spec.unit.apply(x) });
                }
            }
            let reasons = (def.field == Field::EventReasons).then(|| reason_family(&samples));
            out.push(Family {
                base: spec.base.clone(),
                unit: spec.unit.suffix,
                kind: spec.kind,
                help: names::help(def, spec),
                samples,
            });
            out.extend(reasons);
        }
        out.push(self.xid_family(snap, rows, &host));
        out.retain(|f| !f.samples.is_empty());
        out
    }

    /// The Xid counter: one series per GPU and Xid, labelled like the GPU's other series.
    fn xid_family(&self, snap: &Snapshot, rows: &[Row], host: &[(String, String)]) -> Family {
        let mut samples = Vec::new();
        for x in &snap.xids {
            let mut lb = host.to_vec();
            let row = rows
                .iter()
                .find(|r| matches!(r.get(Field::Index), Value::U(i) if *i == u64::from(x.index)));
            match row {
                Some(r) => lb.extend(labels(r, &self.gpu_labels)),
                None => {
                    if x.index != u32::MAX {
                        lb.push(("gpu".into(), x.index.to_string()));
                    }
                    if !x.uuid.is_empty() {
                        lb.push(("uuid".into(), x.uuid.to_string()));
                    }
                }
            }
            lb.push(("xid".into(), x.code.to_string()));
            samples.push(Sample { labels: lb, value: x.n as f64 });
        }
        Family {
            base: names::XID_FAMILY.to_string(),
            unit: None,
            kind: Kind::Counter,
            help: names::XID_HELP.to_string(),
            samples,
        }
    }
}

/// One 0/1 series per GPU and clock-event reason, from the bitmask's samples (same labels plus
/// `reason`), so PromQL can select a reason without bit arithmetic.
fn reason_family(bitmask: &[Sample]) -> Family {
    let mut samples = Vec::with_capacity(bitmask.len() * CLOCK_EVENT_REASONS.len());
    for s in bitmask {
        let bits = s.value as u64;
        for (bit, name) in CLOCK_EVENT_REASONS {
            let mut labels = s.labels.clone();
            labels.push(("reason".into(), name.to_string()));
            samples.push(Sample { labels, value: if bits & bit != 0 { 1.0 } else { 0.0 } });
        }
    }
    Family {
        base: names::REASON_FAMILY.to_string(),
        unit: None,
        kind: Kind::Gauge,
        help: names::REASON_HELP.to_string(),
        samples,
    }
}

/// A field's value as a number before unit scaling; None when missing (no sample).
fn number(v: &Value, def: &FieldDef) -> Option<f64> {
    match v {
        Value::Null | Value::Unsupported => None,
        Value::U(u) => Some(*u as f64),
        Value::F(f) => Some(*f),
        Value::S(s) if def.prom == PromKind::Gauge => names::str_number(s),
        Value::S(_) => None,
    }
}

fn labels(row: &Row, fields: &[(&'static FieldDef, String)]) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(fields.len());
    for (def, name) in fields {
        let text = match row.get(def.field) {
            Value::S(s) => s.to_string(),
            Value::U(u) => u.to_string(),
            Value::F(f) => f.to_string(),
            Value::Null | Value::Unsupported => continue,
        };
        out.push((name.clone(), text));
    }
    out
}

/// One metric family, format-neutral.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Family {
    /// Name without unit suffix, `_total` or `_info`.
    pub base: String,
    pub unit: Option<&'static str>,
    pub kind: Kind,
    pub help: String,
    pub samples: Vec<Sample>,
}

impl Family {
    /// The name in the Prometheus text format (and of the series Prometheus stores).
    pub(crate) fn name(&self) -> String {
        let mut n = self.base.clone();
        if let Some(u) = self.unit {
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

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sample {
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Plan {
    /// `gpumon_progress_total{key}` (work reported since the start) and `gpumon_progress_rate{key}`
    /// (per second over the last interval), one series per declared work counter.
    fn progress_families(&self, snap: &Snapshot, host: &[(String, String)], out: &mut Vec<Family>) {
        if snap.progress.is_empty() {
            return;
        }
        let series = |value: &dyn Fn(&ProgressCount) -> f64| -> Vec<Sample> {
            (snap.progress.iter())
                .map(|c| {
                    let mut labels = host.to_vec();
                    labels.push(("key".into(), c.key.to_string()));
                    Sample { labels, value: value(c) }
                })
                .collect()
        };
        let interval = self.meta.interval_s;
        out.push(Family {
            base: "gpumon_progress".into(),
            unit: None,
            kind: Kind::Counter,
            help:
                "Work the job reported (gpumon progress KEY=N) since the run started, per counter."
                    .into(),
            samples: series(&|c| c.total),
        });
        if interval > 0.0 {
            out.push(Family {
                base: "gpumon_progress_rate".into(),
                unit: None,
                kind: Kind::Gauge,
                help: "Work the job reported in the last interval, per second, per counter.".into(),
                samples: series(&|c| c.last / interval),
            });
        }
    }
}

/// Prometheus text format 0.0.4 (what `promtool check metrics` and plain `curl` read): HELP and
/// TYPE lines, then one line per sample; HELP escapes `\\` and newlines, label values also `"`.
/// Values print as Rust prints an `f64`.
pub(crate) fn text(families: &[Family]) -> String {
    let mut out = String::new();
    for f in families {
        let name = f.name();
        if !f.help.is_empty() {
            out.push_str(&format!("# HELP {name} {}\n", escape_text(&f.help, false)));
        }
        let ty = if f.kind == Kind::Counter { "counter" } else { "gauge" };
        out.push_str(&format!("# TYPE {name} {ty}\n"));
        for s in &f.samples {
            out.push_str(&name);
            for (i, (k, v)) in s.labels.iter().enumerate() {
                out.push_str(if i == 0 { "{" } else { "," });
                out.push_str(&format!("{k}=\"{}\"", escape_text(v, true)));
            }
            if !s.labels.is_empty() {
                out.push('}');
            }
            out.push_str(&format!(" {}\n", s.value));
        }
    }
    out
}

/// The escapes of both formats: backslash and newline, and the double quote (label values, and
/// OpenMetrics' HELP: prometheus-client writes HELP and label values as given).
fn escape_text(v: &str, quote: bool) -> std::borrow::Cow<'_, str> {
    if !v.contains(['\\', '\n']) && (!quote || !v.contains('"')) {
        return v.into();
    }
    let mut s = String::with_capacity(v.len() + 8);
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '"' if quote => s.push_str("\\\""),
            c => s.push(c),
        }
    }
    s.into()
}

/// OpenMetrics 1.0 text (what Prometheus asks for first), ending in `# EOF`.
pub(crate) fn openmetrics(families: Arc<Vec<Family>>) -> Result<String, fmt::Error> {
    let mut reg = Registry::default();
    reg.register_collector(Box::new(Collected(families)));
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &reg)?;
    Ok(out)
}

#[derive(Debug)]
struct Collected(Arc<Vec<Family>>);

impl prometheus_client::collector::Collector for Collected {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        for f in self.0.iter() {
            let unit = f.unit.map(|u| PcUnit::Other(u.to_string()));
            let ty = match f.kind {
                Kind::Gauge => MetricType::Gauge,
                Kind::Counter => MetricType::Counter,
                Kind::Info => MetricType::Info,
            };
            // prometheus-client writes HELP and label values as given; OpenMetrics wants \\ \" \n escaped.
            let help = escape_text(&f.help, true);
            let mut me = encoder.encode_descriptor(&f.base, &help, unit.as_ref(), ty)?;
            for s in &f.samples {
                let lb: Vec<(&str, String)> = s
                    .labels
                    .iter()
                    .map(|(k, v)| (k.as_str(), escape_text(v, true).into_owned()))
                    .collect();
                encode_sample(&mut me, f.kind, &lb, s.value)?;
            }
        }
        Ok(())
    }
}

fn encode_sample(
    me: &mut MetricEncoder,
    kind: Kind,
    lb: &Vec<(&str, String)>,
    value: f64,
) -> Result<(), fmt::Error> {
    match kind {
        Kind::Gauge => ConstGauge::new(value).encode(me.encode_family(lb)?),
        Kind::Counter => ConstCounter::new(value).encode(me.encode_family(lb)?),
        // An info sample's value is always 1; its labels are the information.
        Kind::Info => me.encode_info(lb),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use gpumon_schema::catalog::Field;

    fn meta() -> RunMeta {
        RunMeta {
            hostname: "node1".into(),
            interval_s: 1.0,
            command: "gpumon record".into(),
            start: Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 0).unwrap(),
            driver_version: Some("550.54.15".into()),
            job: None,
        }
    }

    fn gpu_row(i: u64, util: Value) -> Row {
        let mut r = Row::default();
        r.set(Field::Host, Value::S("node1".into()));
        r.set(Field::Index, Value::U(i));
        r.set(Field::Uuid, Value::S(format!("GPU-{i}").into()));
        r.set(Field::Name, Value::S("NVIDIA \"H100\"\\x".into()));
        r.set(Field::PciBusId, Value::S("00000000:17:00.0".into()));
        r.set(Field::UtilGpu, util);
        r.set(Field::MemUsed, Value::U(100));
        r.set(Field::EnergyTotal, Value::F(1000.5));
        r.set(Field::Pstate, Value::S("P8".into()));
        r.set(Field::CpuUtil, Value::F(12.5));
        r.set(Field::Missed, Value::U(3));
        r.set(Field::EventReasons, Value::U(0x4 | 0x1));
        r
    }

    fn snapshot() -> Snapshot {
        Snapshot {
            generation: 1,
            tick: Some(Tick {
                ts: Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 1).unwrap(),
                seq: 1,
                rows: vec![gpu_row(0, Value::U(70)), gpu_row(1, Value::Unsupported)],
                procs: Vec::new(),
            }),
            stats: RunStats { ticks: 1, late: 2, missed: 3, dropped: 0, ..RunStats::default() },
            xids: Vec::new(),
            progress: Vec::new(),
        }
    }

    #[test]
    fn job_id_labels_every_series() {
        let job = gpumon_schema::JobId { id: "train-42".into(), ..Default::default() };
        let plan = Plan::new(&Selection::defaults(), &RunMeta { job: Some(job), ..meta() });
        let fams = plan.families(&snapshot());
        assert!(!fams.is_empty());
        for s in fams.iter().flat_map(|f| &f.samples) {
            assert_eq!(
                s.labels[1],
                ("job_id".to_string(), "train-42".to_string()),
                "{:?}",
                s.labels
            );
        }
        let plain = Plan::new(&Selection::defaults(), &meta()).families(&snapshot());
        assert!(
            plain.iter().flat_map(|f| &f.samples).all(|s| s.labels.iter().all(|l| l.0 != "job_id"))
        );
    }

    #[test]
    fn families_scale_label_and_drop_nulls() {
        let plan = Plan::new(&Selection::defaults(), &meta());
        let fams = plan.families(&snapshot());
        let get =
            |n: &str| fams.iter().find(|f| f.name() == n).unwrap_or_else(|| panic!("{n} missing"));
        let util = get("gpumon_gpu_utilization_ratio");
        assert_eq!(util.samples.len(), 1, "GPU 1 is unsupported: no sample");
        assert_eq!(util.samples[0].value, 0.7);
        let lb: Vec<&str> = util.samples[0].labels.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(lb, ["host", "gpu", "uuid", "name", "pci_bus_id"]);
        assert_eq!(get("gpumon_gpu_memory_used_bytes").samples[1].value, 100.0 * 1048576.0);
        assert_eq!(get("gpumon_gpu_pstate").samples[0].value, 8.0);
        let cpu = get("gpumon_host_cpu_util_ratio");
        assert_eq!(cpu.samples.len(), 1, "host values once per host, not per GPU");
        assert_eq!(cpu.samples[0].labels, [("host".to_string(), "node1".to_string())]);
        assert_eq!(get("gpumon_ticks_late_total").samples[0].value, 2.0);
        assert_eq!(get("gpumon_last_tick_timestamp_seconds").samples[0].value, 1714564801.0);
        assert!(
            !fams.iter().any(|f| f.name().contains("missed") && f.base != "gpumon_ticks_missed")
        );
        assert!(
            !fams.iter().any(|f| f.name() == "gpumon_gpu_fan_speed_ratio"),
            "all-null family left out"
        );
    }

    /// Xid events become a counter per GPU and Xid, labelled like the GPU's series; one from a GPU
    /// the tick has no row for keeps its index and uuid.
    #[test]
    fn xid_events_are_counted_per_gpu_and_code() {
        use gpumon_schema::GpuEvent;
        let ev = |index: u32, code: u64| GpuEvent {
            ts: Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 1).unwrap(),
            index,
            uuid: Arc::from(format!("GPU-{index}")),
            kind: "xid",
            code: Some(code),
            detail: None,
        };
        let mut snap = snapshot();
        count_xids(&mut snap.xids, &[ev(0, 79), ev(0, 79), ev(0, 48), ev(5, 79)]);
        count_xids(&mut snap.xids, &[GpuEvent { kind: "dbe", code: None, ..ev(0, 0) }]);
        let fams = Plan::new(&Selection::defaults(), &meta()).families(&snap);
        let x = fams.iter().find(|f| f.name() == "gpumon_gpu_xid_errors_total").unwrap();
        assert_eq!(x.kind, Kind::Counter);
        let get = |gpu: &str, xid: &str| {
            x.samples
                .iter()
                .find(|s| {
                    s.labels.contains(&("gpu".into(), gpu.into()))
                        && s.labels.contains(&("xid".into(), xid.into()))
                })
                .map(|s| s.value)
        };
        assert_eq!(
            (get("0", "79"), get("0", "48"), get("5", "79")),
            (Some(2.0), Some(1.0), Some(1.0))
        );
        assert_eq!(x.samples.len(), 3);
        let text = text(&fams);
        assert!(text.contains("# TYPE gpumon_gpu_xid_errors_total counter"), "{text}");
        assert!(
            !Plan::new(&Selection::defaults(), &meta())
                .families(&snapshot())
                .iter()
                .any(|f| f.base.contains("xid_errors"))
        );
    }

    #[test]
    fn text_and_openmetrics_carry_the_same_series() {
        let plan = Plan::new(&Selection::defaults(), &meta());
        let fams = plan.families(&snapshot());
        let t = text(&fams);
        let om = openmetrics(Arc::new(fams)).unwrap();
        assert!(t.contains("# TYPE gpumon_gpu_energy_joules_total counter\n"), "{t}");
        assert!(t.contains("gpumon_gpu_energy_joules_total{"), "{t}");
        assert!(om.contains("# TYPE gpumon_gpu_energy_joules counter\n"), "{om}");
        assert!(om.contains("# UNIT gpumon_gpu_energy_joules joules\n"), "{om}");
        assert!(om.ends_with("# EOF\n"), "{om}");
        assert!(t.contains(r#"name="NVIDIA \"H100\"\\x""#), "{t}");
        assert!(om.contains(r#"name="NVIDIA \"H100\"\\x""#), "{om}");
        assert!(t.contains("gpumon_build_info{host=\"node1\",version="), "{t}");
        assert!(
            om.contains("# TYPE gpumon_build info\n")
                && om.contains("gpumon_build_info{host=\"node1\",version="),
            "{om}"
        );
        assert!(
            t.contains("# HELP gpumon_gpu_utilization_ratio Fraction (0-1) of the past"),
            "{t}"
        );
        assert!(
            t.contains(r#"gpumon_gpu_clocks_event_reason{host="node1",gpu="0",uuid="GPU-0",name="NVIDIA \"H100\"\\x",pci_bus_id="00000000:17:00.0",reason="sw_power_cap"} 1"#),
            "{t}"
        );
        let series = |s: &str| -> Vec<String> {
            let mut v: Vec<String> = s
                .lines()
                .filter(|l| !l.starts_with('#'))
                .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
                .collect();
            v.sort();
            v
        };
        assert_eq!(series(&t), series(&om));
    }

    #[test]
    fn before_the_first_tick() {
        let plan = Plan::new(&Selection::defaults(), &meta());
        let fams = plan.families(&Snapshot::default());
        let t = text(&fams);
        assert!(t.contains("gpumon_up{host=\"node1\"} 1"), "{t}");
        assert!(!t.contains("gpumon_last_tick_timestamp_seconds{"), "{t}");
        assert!(!t.contains("gpumon_gpu_"), "{t}");
    }

    #[test]
    fn work_counters_are_a_total_and_a_rate_per_key() {
        let keys: Vec<Arc<str>> = vec![Arc::from("samples"), Arc::from("tokens")];
        let mut counts = Vec::new();
        let mut row = gpu_row(0, Value::U(70));
        row.set_progress(Some(Arc::from([512.0, f64::NAN])));
        count_progress(&mut counts, &keys, Some(&row));
        row.set_progress(Some(Arc::from([256.0, 1000.0])));
        count_progress(&mut counts, &keys, Some(&row));
        let snap = Snapshot { progress: counts, ..snapshot() };
        let fams = Plan::new(&Selection::defaults(), &meta()).families(&snap);
        let get = |n: &str, key: &str| {
            let f = fams.iter().find(|f| f.name() == n).unwrap_or_else(|| panic!("{n} missing"));
            f.samples
                .iter()
                .find(|s| s.labels.contains(&("key".into(), key.into())))
                .map(|s| s.value)
        };
        assert_eq!(get("gpumon_progress_total", "samples"), Some(768.0));
        assert_eq!(get("gpumon_progress_total", "tokens"), Some(1000.0));
        let interval = meta().interval_s;
        assert_eq!(get("gpumon_progress_rate", "samples"), Some(256.0 / interval));
        let text = text(&fams);
        assert!(text.contains("# TYPE gpumon_progress_total counter"), "{text}");
        assert!(
            !Plan::new(&Selection::defaults(), &meta())
                .families(&snapshot())
                .iter()
                .any(|f| f.base.starts_with("gpumon_progress"))
        );
    }
}
