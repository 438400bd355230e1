//! The JSON report: the stable shape documented in docs/summary-json.md (`"schema": "gpumon.summary/1"`).
//! Statistic keys are the names `--fail-if` takes; missing values are `null`, never 0.

use serde_json::{Map, Value, json};

use crate::compact::group;
use crate::rfc3339;
use gpumon_analysis::events::{EventRecord, RoutineCount};
use gpumon_analysis::findings::RULES;
use gpumon_analysis::stats::Stats;
use gpumon_analysis::usage::UserUsage;
use gpumon_analysis::{CheckResult, GpuSummary, HostSummary, Summary};
use gpumon_schema::run::{InputInfo, JobInfo};

/// Version tag of the shape; bumped only on incompatible changes.
pub const SCHEMA: &str = "gpumon.summary/1";

fn stats(s: &Stats) -> Value {
    let mut m = Map::new();
    for (k, v) in s.iter() {
        m.insert(k.to_string(), v.map_or(Value::Null, number));
    }
    Value::Object(m)
}

/// Whole values as JSON integers (`"samples": 1518`), others as floats.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 { json!(x as i64) } else { json!(x) }
}

fn time(us: Option<i64>) -> Value {
    us.map_or(Value::Null, |t| json!(rfc3339(t)))
}

/// A GPU's routine event counts, `kind -> count` (`{"clock": 12}`).
fn routine(host: &str, g: &GpuSummary, counts: &[RoutineCount]) -> Value {
    let m: Map<String, Value> = counts
        .iter()
        .filter(|c| c.host == host && c.gpu.is_some() && c.gpu == g.index)
        .map(|c| (c.kind.clone(), json!(c.count)))
        .collect();
    Value::Object(m)
}

fn gpu(g: &GpuSummary, host: &str, counts: &[RoutineCount]) -> Value {
    let gaps: Vec<Value> = g
        .gaps
        .iter()
        .map(|gap| {
            json!({
                "start": rfc3339(gap.start),
                "end": rfc3339(gap.end),
                "duration_s": (gap.end - gap.start) as f64 / 1e6,
            })
        })
        .collect();
    let mut v = json!({
        "gpu": g.label,
        "index": g.index,
        "uuid": g.uuid,
        "name": g.name,
        "start": rfc3339(g.start),
        "end": rfc3339(g.end),
        "energy_method": g.energy_method,
        "stats": stats(&g.stats),
        "gaps": gaps,
        "routine_events": routine(host, g, counts),
    });
    // A MIG instance (dcgm-exporter's GPU_I_ID and GPU_I_PROFILE); whole GPUs keep their keys.
    if let (Some(gi), Some(o)) = (g.mig_gi, v.as_object_mut()) {
        o.insert("gpu_instance".into(), json!(gi));
        let profile = g.name.as_deref().and_then(|n| n.rsplit_once(" MIG ")).map(|p| p.1);
        o.insert("profile".into(), json!(profile));
    }
    v
}

/// The findings grouped over the GPUs they hold for, as the text reports show them.
fn groups(h: &HostSummary) -> Value {
    let v: Vec<Value> = group(&h.findings)
        .iter()
        .map(|g| {
            json!({
                "rule": g.rule,
                "severity": g.severity.label(),
                "gpus": g.gpus,
                "evidence": g.evidence,
                "fix": g.fix,
            })
        })
        .collect();
    json!(v)
}

fn host(h: &HostSummary, counts: &[RoutineCount]) -> Value {
    let findings: Vec<Value> = h
        .findings
        .iter()
        .map(|f| {
            json!({
                "rule": f.rule,
                "severity": f.severity.label(),
                "host": f.host,
                "gpu": f.gpu,
                "evidence": f.evidence,
                "fix": f.fix,
            })
        })
        .collect();
    json!({
        "host": h.name,
        "gpus": h.gpus.iter().map(|g| gpu(g, &h.name, counts)).collect::<Vec<_>>(),
        "stats": if h.has_host_data { stats(&h.stats) } else { Value::Null },
        "findings": findings,
        "finding_groups": groups(h),
    })
}

fn input(i: &InputInfo) -> Value {
    json!({
        "path": i.path.display().to_string(),
        "kind": i.kind,
        "rows": i.rows,
        "host": i.default_host,
        "columns": i.fields.iter().map(|f| f.name()).collect::<Vec<_>>(),
        "ignored_columns": i.ignored_columns,
        "warnings": i.warnings,
        "notes": i.notes,
        "job": i.job.as_ref().map(job),
        "recording": i.recording.as_ref().and_then(|r| r.ordinal),
    })
}

/// One of several recordings of a host among the inputs.
fn recording(g: &gpumon_schema::run::RecordingGroup) -> Value {
    json!({
        "host": g.of.host,
        "recording": g.of.ordinal,
        "start": g.of.start,
        "command": g.of.command,
        "files": g.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "rows": g.rows,
    })
}

/// A wrapped command: `{command, exit_code, end}` (null where the file does not say).
pub fn job(j: &JobInfo) -> Value {
    json!({"command": j.command, "exit_code": j.exit_code, "end": j.end.map(rfc3339), "left_running_pid": j.left_running})
}

fn event(e: &EventRecord) -> Value {
    json!({
        "time": rfc3339(e.ts),
        "host": e.host,
        "gpu": e.gpu,
        "uuid": e.uuid,
        "kind": e.kind,
        "code": e.code,
        "detail": e.detail,
        "meaning": e.meaning(),
        "action": e.action(),
    })
}

fn user(u: &UserUsage) -> Value {
    json!({
        "host": u.host,
        "gpu": u.gpu,
        "user": u.user,
        "processes": u.procs,
        "ticks": u.ticks,
        "start": rfc3339(u.first),
        "end": rfc3339(u.last),
        "sm_mean_pct": u.sm_mean.map(number),
        "gpu_memory_mean_mib": u.mem_mean.map(number),
        "gpu_memory_max_mib": u.mem_max.map(number),
    })
}

/// Thresholds, the rules and the checks.
fn rules(s: &Summary, checks: &[CheckResult]) -> (Value, Value, Value) {
    let mut th = Map::new();
    for (n, v) in s.thresholds.values() {
        th.insert(n.to_string(), json!(v));
    }
    let rules: Vec<Value> = RULES
        .iter()
        .map(
            |r| json!({"rule": r.id, "severity": r.severity.label(), "when": r.when, "fix": r.fix}),
        )
        .collect();
    let checks: Vec<Value> = checks
        .iter()
        .map(|c| json!({"check": c.check, "passed": c.failures.is_empty(), "failures": c.failures}))
        .collect();
    (Value::Object(th), json!(rules), json!(checks))
}

/// The report as a JSON value.
pub fn value(s: &Summary, checks: &[CheckResult]) -> Value {
    let skipped: Vec<Value> = s
        .skipped
        .iter()
        .map(|(p, why)| json!({"path": p.display().to_string(), "reason": why}))
        .collect();
    let (thresholds, rules, checks) = rules(s, checks);
    json!({
        "schema": SCHEMA,
        "gpumon_version": env!("CARGO_PKG_VERSION"),
        "start": time(s.start),
        "end": time(s.end),
        "window": {
            "since": time(s.window.since),
            "until": time(s.window.until),
            "rows_left_out": s.windowed_out,
        },
        "percentiles": "nearest-rank",
        "thresholds": thresholds,
        "rules": rules,
        "inputs": s.inputs.iter().map(input).collect::<Vec<_>>(),
        "recordings": gpumon_schema::run::several_recordings(&s.inputs).iter().map(recording).collect::<Vec<_>>(),
        "skipped": skipped,
        "hosts": s.hosts.iter().map(|h| host(h, &s.routine_events)).collect::<Vec<_>>(),
        "all": {
            "gpus": stats(&s.all_gpus),
            "hosts": if s.hosts.iter().any(|h| h.has_host_data) { stats(&s.all_hosts) } else { Value::Null },
        },
        "checks": checks,
        "events": s.events.iter().map(event).collect::<Vec<_>>(),
        "events_not_listed": s.events_more,
        "users": s.users.iter().map(user).collect::<Vec<_>>(),
        "progress": crate::progress::json(&s.progress),
    })
}

/// The report as pretty-printed JSON with a final newline.
pub fn render(s: &Summary, checks: &[CheckResult]) -> String {
    let mut out = serde_json::to_string_pretty(&value(s, checks)).unwrap_or_else(|_| "{}".into());
    out.push('\n');
    out
}
