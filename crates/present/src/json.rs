//! The JSON report: the stable shape documented in docs/summary-json.md (`"schema": "gpumon.summary/1"`).
//! Statistic keys are the names `--fail-if` takes; missing values are `null`, never 0.
//!
//! The document is the [`Report`] struct and the structs it holds: their fields are the contract.
//! It is written through a [`serde_json::Value`], whose objects keep their keys sorted (the
//! documented order), whatever the order the fields are declared in.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::compact::{Group, group};
use crate::rfc3339;
use gpumon_analysis::{
    CheckResult, EventRecord, Finding, GpuSummary, HostSummary, RULES, RoutineCount, Rule,
    StatValues, Summary, UserUsage,
};
use gpumon_schema::{InputInfo, JobInfo, RecordingGroup};

/// Version tag of the shape; bumped only on incompatible changes.
pub(crate) const SCHEMA: &str = "gpumon.summary/1";

/// A figure written as a JSON integer when it is whole (`"samples": 1518`), else as a float.
#[derive(Clone, Copy)]
pub(crate) struct Num(pub(crate) f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        if x.fract() == 0.0 && x.abs() < 9.0e15 {
            s.serialize_i64(x as i64)
        } else {
            s.serialize_f64(x)
        }
    }
}

/// A statistics object, `name -> number or null` (the names `--fail-if` takes).
pub(crate) struct StatsJson<'a>(&'a StatValues);

impl Serialize for StatsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k.to_string(), v.map(Num))))
    }
}

/// The whole `gpumon.summary/1` document.
#[derive(Serialize)]
pub(crate) struct Report<'a> {
    /// `gpumon.summary/1`.
    schema: &'static str,
    /// The version of the gpumon that wrote the report.
    gpumon_version: &'static str,
    /// First GPU sample inside the window, over all hosts.
    pub(crate) start: Option<String>,
    /// Last GPU sample inside the window, over all hosts.
    pub(crate) end: Option<String>,
    /// The window applied and the rows it left out.
    window: Window,
    /// How percentiles are taken: `nearest-rank`.
    percentiles: &'static str,
    /// Every finding threshold in force, `name -> number`.
    thresholds: BTreeMap<&'static str, f64>,
    /// Every rule the findings come from.
    rules: Vec<RuleJson>,
    /// One per file read, in reading order.
    inputs: Vec<Input<'a>>,
    /// One per recording when the inputs hold several of a host; empty otherwise.
    recordings: Vec<Recording>,
    /// Files found but not read.
    skipped: Vec<Skipped<'a>>,
    /// One per host, in order of first appearance.
    pub(crate) hosts: Vec<Host<'a>>,
    /// The statistics over every GPU, and over every host.
    pub(crate) all: All<'a>,
    /// One per `--fail-if`.
    checks: Vec<CheckJson<'a>>,
    /// NVML events, in time order (the routine ones only counted, per GPU).
    events: Vec<Event<'a>>,
    /// Events beyond those listed.
    events_not_listed: u64,
    /// Per-user totals from the per-process files, the busiest user first.
    users: Vec<User<'a>>,
    /// The job's work counters, `KEY -> rates`.
    pub(crate) progress: BTreeMap<&'a str, crate::progress::Rates>,
}

/// `window`: the window applied, `[since, until)`.
#[derive(Serialize)]
struct Window {
    /// Start of the window, or null.
    since: Option<String>,
    /// End of the window, or null.
    until: Option<String>,
    /// Rows outside it.
    rows_left_out: u64,
}

/// `rules[]` (and the job view's): one rule of the findings.
#[derive(Serialize)]
pub(crate) struct RuleJson {
    /// Its name.
    rule: &'static str,
    /// Its usual severity.
    severity: &'static str,
    /// The condition, naming its thresholds.
    when: &'static str,
    /// What to do about it.
    fix: &'static str,
}

impl From<&Rule> for RuleJson {
    fn from(r: &Rule) -> Self {
        RuleJson { rule: r.id, severity: r.severity.label(), when: r.when, fix: r.fix }
    }
}

/// `checks[]`: one `--fail-if`.
#[derive(Serialize)]
pub(crate) struct CheckJson<'a> {
    /// The check, normalised.
    check: &'a str,
    /// Whether no GPU or host met the condition.
    passed: bool,
    /// One string per GPU or host that met it, or why it could not be evaluated.
    failures: &'a [String],
}

impl<'a> From<&'a CheckResult> for CheckJson<'a> {
    fn from(c: &'a CheckResult) -> Self {
        CheckJson { check: &c.check, passed: c.failures.is_empty(), failures: &c.failures }
    }
}

/// `inputs[]`: one file read.
#[derive(Serialize)]
struct Input<'a> {
    /// The file as found.
    path: String,
    /// `parquet`, `journal`, `gpumon-csv`, `nvidia-smi`.
    kind: &'static str,
    /// Data rows it holds.
    rows: u64,
    /// The host of rows without a host value.
    host: &'a str,
    /// Catalogue fields present (canonical names).
    columns: Vec<&'static str>,
    /// Columns not in the catalogue.
    ignored_columns: &'a [String],
    /// Problems that did not stop the read.
    warnings: &'a [String],
    /// Information on how it was read.
    notes: &'a [String],
    /// The command `record` wrapped, or null.
    job: Option<Job<'a>>,
    /// Which of several recordings of its host it belongs to, or null.
    recording: Option<u32>,
}

impl<'a> From<&'a InputInfo> for Input<'a> {
    fn from(i: &'a InputInfo) -> Self {
        Input {
            path: i.path.display().to_string(),
            kind: i.kind,
            rows: i.rows,
            host: &i.default_host,
            columns: i.fields.iter().map(|f| f.name()).collect(),
            ignored_columns: &i.ignored_columns,
            warnings: &i.warnings,
            notes: &i.notes,
            job: i.job.as_ref().map(Job::from),
            recording: i.recording.as_ref().and_then(|r| r.ordinal),
        }
    }
}

/// A wrapped command: `{command, exit_code, end, left_running_pid}` (null where the file does not say).
#[derive(Serialize)]
pub(crate) struct Job<'a> {
    /// The command, shell-quoted.
    command: &'a str,
    /// Its exit code; null when the file was closed before it ended.
    exit_code: Option<i32>,
    /// When it ended.
    end: Option<String>,
    /// Its pid when a second stop ended recording while it ran.
    left_running_pid: Option<u32>,
}

impl<'a> From<&'a JobInfo> for Job<'a> {
    fn from(j: &'a JobInfo) -> Self {
        Job {
            command: &j.command,
            exit_code: j.exit_code,
            end: j.end.map(rfc3339),
            left_running_pid: j.left_running,
        }
    }
}

/// `recordings[]`: one of several recordings of a host among the inputs.
#[derive(Serialize)]
struct Recording {
    /// Its host.
    host: String,
    /// Its number among the host's recordings (1, 2, ...).
    recording: Option<u32>,
    /// When it started, as its footer says.
    start: String,
    /// Its command line.
    command: String,
    /// Its files.
    files: Vec<String>,
    /// Its rows.
    rows: u64,
}

impl From<RecordingGroup> for Recording {
    fn from(g: RecordingGroup) -> Self {
        Recording {
            host: g.of.host,
            recording: g.of.ordinal,
            start: g.of.start,
            command: g.of.command,
            files: g.files.iter().map(|f| f.display().to_string()).collect(),
            rows: g.rows,
        }
    }
}

/// `skipped[]`: a file found but not read.
#[derive(Serialize)]
struct Skipped<'a> {
    /// The file.
    path: String,
    /// Why it was not read.
    reason: &'a str,
}

/// `hosts[]`: one host.
#[derive(Serialize)]
pub(crate) struct Host<'a> {
    /// Host name.
    host: &'a str,
    /// One per GPU, by index.
    gpus: Vec<Gpu<'a>>,
    /// Host statistics, null when the inputs carry no host fields.
    stats: Option<StatsJson<'a>>,
    /// Errors first, then warnings, then info.
    findings: Vec<FindingJson<'a>>,
    /// The findings as the text reports show them, each rule once.
    finding_groups: Vec<GroupJson<'a>>,
}

impl<'a> Host<'a> {
    fn new(h: &'a HostSummary, counts: &'a [RoutineCount]) -> Self {
        Host {
            host: &h.name,
            gpus: h.gpus.iter().map(|g| Gpu::new(g, &h.name, counts)).collect(),
            stats: h.has_host_data.then_some(StatsJson(&h.stats)),
            findings: h.findings.iter().map(FindingJson::from).collect(),
            finding_groups: group(&h.findings).into_iter().map(GroupJson::from).collect(),
        }
    }
}

/// `hosts[].findings[]`: one finding.
#[derive(Serialize)]
struct FindingJson<'a> {
    /// The rule that fired.
    rule: &'static str,
    /// `error`, `warning` or `info`.
    severity: &'static str,
    /// The host it holds for.
    host: &'a str,
    /// The GPU's label, or null for a host-wide finding.
    gpu: Option<&'a str>,
    /// The numbers that fired it.
    evidence: &'a str,
    /// What to do about it.
    fix: &'static str,
}

impl<'a> From<&'a Finding> for FindingJson<'a> {
    fn from(f: &'a Finding) -> Self {
        FindingJson {
            rule: f.rule,
            severity: f.severity.label(),
            host: &f.host,
            gpu: f.gpu.as_deref(),
            evidence: &f.evidence,
            fix: f.fix,
        }
    }
}

/// `hosts[].finding_groups[]` (and, with `host`, a comparison's `findings`): a rule's findings
/// over the GPUs they hold for.
#[derive(Serialize)]
pub(crate) struct GroupJson<'a> {
    /// The rule.
    rule: &'static str,
    /// `error`, `warning` or `info`.
    severity: &'static str,
    /// The host, where the group is listed apart from its host.
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<&'a str>,
    /// GPU labels; empty for a host-wide finding.
    gpus: Vec<&'a str>,
    /// One string when the GPUs' evidence folds into one, else one per GPU.
    evidence: Vec<String>,
    /// What to do about it.
    fix: &'static str,
}

impl<'a> From<Group<'a>> for GroupJson<'a> {
    fn from(g: Group<'a>) -> Self {
        GroupJson {
            rule: g.rule,
            severity: g.severity.label(),
            host: None,
            gpus: g.gpus,
            evidence: g.evidence,
            fix: g.fix,
        }
    }
}

impl<'a> GroupJson<'a> {
    /// The group with its host named.
    pub(crate) fn with_host(g: Group<'a>) -> Self {
        let host = g.host;
        GroupJson { host: Some(host), ..GroupJson::from(g) }
    }
}

/// `hosts[].gpus[]`: one GPU (or MIG instance).
#[derive(Serialize)]
struct Gpu<'a> {
    /// Its label: the index, `0/gi1` for a MIG instance, or the uuid.
    gpu: &'a str,
    /// NVML index (a MIG instance's is its GPU's).
    index: Option<u32>,
    /// A MIG instance's GPU instance id; absent for a whole GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu_instance: Option<u32>,
    /// A MIG instance's profile (`3g.40gb`) or null; absent for a whole GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<Option<&'a str>>,
    /// From the data, when present.
    uuid: Option<&'a str>,
    /// From the data, when present.
    name: Option<&'a str>,
    /// First sample inside the window.
    start: String,
    /// Last sample inside the window.
    end: String,
    /// `counter` or `power`, or null.
    energy_method: Option<&'static str>,
    /// GPU statistics.
    stats: StatsJson<'a>,
    /// The longest gaps, in time order.
    gaps: Vec<GapJson>,
    /// Routine NVML events counted by kind.
    routine_events: BTreeMap<&'a str, u64>,
}

impl<'a> Gpu<'a> {
    fn new(g: &'a GpuSummary, host: &str, counts: &'a [RoutineCount]) -> Self {
        // A MIG instance (dcgm-exporter's GPU_I_ID and GPU_I_PROFILE); whole GPUs keep their keys.
        let profile =
            g.mig_gi.map(|_| g.name.as_deref().and_then(|n| n.rsplit_once(" MIG ")).map(|p| p.1));
        Gpu {
            gpu: &g.label,
            index: g.index,
            gpu_instance: g.mig_gi,
            profile,
            uuid: g.uuid.as_deref(),
            name: g.name.as_deref(),
            start: rfc3339(g.start),
            end: rfc3339(g.end),
            energy_method: g.energy_method,
            stats: StatsJson(&g.stats),
            gaps: g
                .gaps
                .iter()
                .map(|gap| GapJson {
                    start: rfc3339(gap.start),
                    end: rfc3339(gap.end),
                    duration_s: (gap.end - gap.start) as f64 / 1e6,
                })
                .collect(),
            routine_events: counts
                .iter()
                .filter(|c| c.host == host && c.gpu.is_some() && c.gpu == g.index)
                .map(|c| (c.kind.as_str(), c.count))
                .collect(),
        }
    }
}

/// `hosts[].gpus[].gaps[]`: one gap.
#[derive(Serialize)]
struct GapJson {
    /// Where it starts.
    start: String,
    /// Where it ends.
    end: String,
    /// Its length in seconds.
    duration_s: f64,
}

/// `all`: the statistics pooled over every GPU and over every host.
#[derive(Serialize)]
pub(crate) struct All<'a> {
    /// Over every GPU of every host.
    gpus: StatsJson<'a>,
    /// Over all hosts, or null when no input has host fields.
    hosts: Option<StatsJson<'a>>,
}

/// `events[]`: one NVML event.
#[derive(Serialize)]
struct Event<'a> {
    /// When it happened.
    time: String,
    /// The host that recorded it.
    host: &'a str,
    /// The GPU's index, where known.
    gpu: Option<u32>,
    /// The GPU's uuid, where known.
    uuid: Option<&'a str>,
    /// `xid`, `dbe`, `sbe`, `clock`, `power_source`.
    kind: &'a str,
    /// The Xid number, where it has one.
    code: Option<u64>,
    /// What NVML said besides the code.
    detail: Option<&'a str>,
    /// What it means.
    meaning: String,
    /// What to do, for a known Xid.
    action: Option<&'static str>,
}

impl<'a> From<&'a EventRecord> for Event<'a> {
    fn from(e: &'a EventRecord) -> Self {
        Event {
            time: rfc3339(e.ts),
            host: &e.host,
            gpu: e.gpu,
            uuid: e.uuid.as_deref(),
            kind: &e.kind,
            code: e.code,
            detail: e.detail.as_deref(),
            meaning: e.meaning(),
            action: e.action(),
        }
    }
}

/// `users[]`: one user's totals on one GPU of a host.
#[derive(Serialize)]
struct User<'a> {
    /// The host.
    host: &'a str,
    /// The GPU's index.
    gpu: Option<u32>,
    /// The user.
    user: &'a str,
    /// Processes seen.
    processes: u64,
    /// Ticks with a process of the user.
    ticks: u64,
    /// First tick.
    start: String,
    /// Last tick.
    end: String,
    /// Mean SM utilization of the user's processes.
    sm_mean_pct: Option<Num>,
    /// Mean GPU memory of the user's processes.
    gpu_memory_mean_mib: Option<Num>,
    /// Peak GPU memory of the user's processes.
    gpu_memory_max_mib: Option<Num>,
}

impl<'a> From<&'a UserUsage> for User<'a> {
    fn from(u: &'a UserUsage) -> Self {
        User {
            host: &u.host,
            gpu: u.gpu,
            user: &u.user,
            processes: u.procs,
            ticks: u.ticks,
            start: rfc3339(u.first),
            end: rfc3339(u.last),
            sm_mean_pct: u.sm_mean.map(Num),
            gpu_memory_mean_mib: u.mem_mean.map(Num),
            gpu_memory_max_mib: u.mem_max.map(Num),
        }
    }
}

impl<'a> Report<'a> {
    /// The document of summary `s` and the results of its checks.
    pub(crate) fn new(s: &'a Summary, checks: &'a [CheckResult]) -> Self {
        let time = |us: Option<i64>| us.map(rfc3339);
        Report {
            schema: SCHEMA,
            gpumon_version: env!("CARGO_PKG_VERSION"),
            start: time(s.start),
            end: time(s.end),
            window: Window {
                since: time(s.window.since),
                until: time(s.window.until),
                rows_left_out: s.windowed_out,
            },
            percentiles: "nearest-rank",
            thresholds: s.thresholds.values().into_iter().collect(),
            rules: RULES.iter().map(RuleJson::from).collect(),
            inputs: s.inputs.iter().map(Input::from).collect(),
            recordings: gpumon_schema::several_recordings(&s.inputs)
                .into_iter()
                .map(Recording::from)
                .collect(),
            skipped: (s.skipped.iter())
                .map(|(p, why)| Skipped { path: p.display().to_string(), reason: why })
                .collect(),
            hosts: s.hosts.iter().map(|h| Host::new(h, &s.routine_events)).collect(),
            all: All {
                gpus: StatsJson(&s.all_gpus),
                hosts: s.hosts.iter().any(|h| h.has_host_data).then_some(StatsJson(&s.all_hosts)),
            },
            checks: checks.iter().map(CheckJson::from).collect(),
            events: s.events.iter().map(Event::from).collect(),
            events_not_listed: s.events_more,
            users: s.users.iter().map(User::from).collect(),
            progress: crate::progress::json(&s.progress),
        }
    }
}

/// `doc` as a JSON value: objects with their keys sorted.
pub(crate) fn to_value(doc: &impl Serialize) -> Value {
    serde_json::to_value(doc).unwrap_or(Value::Null)
}

/// `doc` as pretty-printed JSON with a final newline, its objects' keys sorted.
pub(crate) fn pretty(doc: &impl Serialize) -> String {
    let mut out = serde_json::to_string_pretty(&to_value(doc)).unwrap_or_else(|_| "{}".into());
    out.push('\n');
    out
}

/// The report as a JSON value.
pub fn value(s: &Summary, checks: &[CheckResult]) -> Value {
    to_value(&Report::new(s, checks))
}

/// The report as pretty-printed JSON with a final newline.
pub(crate) fn render(s: &Summary, checks: &[CheckResult]) -> String {
    pretty(&Report::new(s, checks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_figures_are_integers_and_keys_come_out_sorted() {
        #[derive(Serialize)]
        struct Doc {
            samples: Num,
            mean: Num,
            missing: Option<Num>,
            #[serde(skip_serializing_if = "Option::is_none")]
            absent: Option<u32>,
        }
        let d = Doc { samples: Num(1518.0), mean: Num(12.5), missing: None, absent: None };
        assert_eq!(
            pretty(&d),
            "{\n  \"mean\": 12.5,\n  \"missing\": null,\n  \"samples\": 1518\n}\n"
        );
    }

    #[test]
    fn mig_keys_only_on_an_instance_and_its_profile_null_when_unnamed() {
        let gpu = |mig_gi: Option<u32>, name: &str| GpuSummary {
            label: "0".into(),
            index: Some(0),
            mig_gi,
            uuid: None,
            name: Some(name.into()),
            start: 0,
            end: 1_000_000,
            gaps: Vec::new(),
            energy_method: None,
            stats: StatValues::empty(gpumon_analysis::Scope::Gpu),
        };
        let keys = |g: &GpuSummary| to_value(&Gpu::new(g, "h", &[]));
        let whole = keys(&gpu(None, "NVIDIA A100"));
        assert!(whole.get("gpu_instance").is_none() && whole.get("profile").is_none(), "{whole}");
        let inst = keys(&gpu(Some(1), "NVIDIA A100 MIG 3g.40gb"));
        assert_eq!(
            (inst["gpu_instance"].as_u64(), inst["profile"].as_str()),
            (Some(1), Some("3g.40gb"))
        );
        let unnamed = keys(&gpu(Some(5), "NVIDIA A100"));
        assert_eq!(unnamed.get("profile"), Some(&Value::Null), "{unnamed}");
    }
}
