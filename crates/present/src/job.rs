//! The job view (`summarize --by job`): per job its hosts and GPUs, each node's span and skew, the
//! totals over all its GPUs, work rates, the per-host table and the findings across hosts; as text
//! (table and markdown) or JSON (`"schema": "gpumon.jobs/1"`, docs/summary-json.md).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::{SummaryFormat, dur, num, rfc3339, ts, wrap};
use gpumon_analysis::{CheckResult, JOB_RULES, JobHost, JobView, Stat, Summary};
use gpumon_schema::catalog::Field;

/// Version tag of the job view's JSON; bumped only on incompatible changes.
pub(crate) const SCHEMA: &str = "gpumon.jobs/1";

/// One job to render: its view, the summary of its inputs, its checks, where its id came from.
pub struct JobPart<'a> {
    /// The job across its hosts.
    pub view: &'a JobView,
    /// The summary of the job's inputs.
    pub summary: &'a Summary,
    /// The `--fail-if` checks evaluated on that summary.
    pub checks: &'a [CheckResult],
    /// Where the job's id came from.
    pub sources: &'a [String],
}

/// The job view in `format` (CSV is refused by the command line before).
pub fn render(jobs: &[JobPart<'_>], without_job: &[PathBuf], format: SummaryFormat) -> String {
    match format {
        SummaryFormat::Json => json(jobs, without_job),
        SummaryFormat::Markdown => text(jobs, without_job, true),
        SummaryFormat::Table | SummaryFormat::Csv => text(jobs, without_job, false),
    }
}

/// The job's totals: means over its GPUs, memory the largest, energy the sum.
fn totals(s: &Summary) -> [(&'static str, Option<f64>); 4] {
    [
        ("utilization.gpu.mean", s.all_gpus.get(Stat::mean(Field::UtilGpu))),
        ("memory.used.max", s.all_gpus.get(Stat::max(Field::MemUsed))),
        ("power.draw.mean", s.all_gpus.get(Stat::mean(Field::PowerDraw))),
        ("energy_wh", s.all_gpus.get(Stat::EnergyWh)),
    ]
}

fn host_json(h: &JobHost) -> Value {
    json!({
        "host": h.name,
        "node": h.node,
        "gpus": h.gpus,
        "start": rfc3339(h.start),
        "end": rfc3339(h.end),
        "start_skew_s": h.start_skew_s,
        "end_skew_s": h.end_skew_s,
        "utilization.gpu.mean": h.utilization,
        "memory.used.max": h.memory_max,
        "power.draw.mean": h.power_mean,
        "energy_wh": h.energy_wh,
        "clocks.sm.busy_mean": h.busy_clock,
        "findings": h.findings,
    })
}

fn job_json(p: &JobPart<'_>) -> Value {
    let v = p.view;
    let all: serde_json::Map<String, Value> =
        totals(p.summary).iter().map(|(k, x)| (k.to_string(), json!(x))).collect();
    let progress: serde_json::Map<String, Value> = p
        .summary
        .progress
        .iter()
        .map(|s| {
            let v = json!({"total": s.total, "per_s": s.per_s, "per_gpu_hour": s.per_gpu_hour, "per_wh": s.per_wh});
            (s.key.clone(), v)
        })
        .collect();
    let findings: Vec<Value> = v
        .findings
        .iter()
        .map(|f| json!({"rule": f.rule, "severity": f.severity.label(), "host": (!f.host.is_empty()).then_some(&f.host), "gpu": f.gpu, "evidence": f.evidence, "fix": f.fix}))
        .collect();
    let summary: Value =
        serde_json::from_str(&crate::json::render(p.summary, p.checks)).unwrap_or(Value::Null);
    json!({
        "job": v.id,
        "sources": p.sources,
        "hosts_count": v.hosts.len(),
        "gpus": v.gpus,
        "start": v.start.map(rfc3339),
        "end": v.end.map(rfc3339),
        "span_s": v.start.zip(v.end).map(|(a, b)| (b - a) as f64 / 1e6),
        "all": all,
        "progress": progress,
        "hosts": v.hosts.iter().map(host_json).collect::<Vec<_>>(),
        "findings": findings,
        "summary": summary,
    })
}

fn json(jobs: &[JobPart<'_>], without_job: &[PathBuf]) -> String {
    let v = json!({
        "schema": SCHEMA,
        "jobs": jobs.iter().map(job_json).collect::<Vec<_>>(),
        "without_job": without_job.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "rules": JOB_RULES
            .iter()
            .map(|r| json!({"rule": r.id, "severity": r.severity.label(), "when": r.when, "fix": r.fix}))
            .collect::<Vec<_>>(),
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// The per-host table's rows (a header row first).
pub(crate) fn host_rows(v: &JobView) -> Vec<Vec<String>> {
    let mut rows = vec![
        [
            "host",
            "node",
            "GPUs",
            "start",
            "end",
            "start skew",
            "end skew",
            "util %",
            "mem max MiB",
            "power W",
            "energy Wh",
            "busy SM MHz",
            "findings",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for h in &v.hosts {
        rows.push(vec![
            h.name.clone(),
            h.node.clone().unwrap_or_else(|| "-".into()),
            h.gpus.to_string(),
            ts(h.start),
            ts(h.end),
            dur(h.start_skew_s),
            dur(h.end_skew_s),
            num(h.utilization, 1),
            num(h.memory_max, 0),
            num(h.power_mean, 1),
            num(h.energy_wh, 1),
            num(h.busy_clock, 0),
            if h.findings.is_empty() { "-".into() } else { dedup(&h.findings).join(", ") },
        ]);
    }
    rows
}

fn dedup(rules: &[&'static str]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in rules {
        if !out.contains(r) {
            out.push(r);
        }
    }
    out
}

/// Rows as aligned columns, or as a markdown table.
fn table(rows: &[Vec<String>], markdown: bool) -> String {
    let mut out = String::new();
    if markdown {
        for (i, r) in rows.iter().enumerate() {
            let cells: Vec<String> = r.iter().map(|c| crate::markdown::esc(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
            if i == 0 {
                out.push_str(&format!("|{}\n", "---|".repeat(r.len())));
            }
        }
        return out;
    }
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len))
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for r in rows {
        let cells: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn job_text(p: &JobPart<'_>, markdown: bool, out: &mut String) {
    let v = p.view;
    let id = if markdown { crate::markdown::esc(&v.id) } else { v.id.clone() };
    let head = format!("job {id} ({})", p.sources.join(", "));
    out.push_str(&if markdown { format!("## {head}\n\n") } else { format!("{head}\n") });
    // Markdown joins consecutive lines into one paragraph: a line break ends each of these there.
    let br = if markdown { "  " } else { "" };
    let span = v.start.zip(v.end);
    out.push_str(&format!(
        "{} hosts, {} GPUs, {} to {} ({}){br}\n",
        v.hosts.len(),
        v.gpus,
        span.map_or("-".into(), |s| ts(s.0)),
        span.map_or("-".into(), |s| ts(s.1)),
        span.map_or("-".into(), |s| dur((s.1 - s.0) as f64 / 1e6)),
    ));
    let t = totals(p.summary);
    out.push_str(&format!(
        "all GPUs: utilization {} %, memory max {} MiB, power {} W mean, energy {} Wh{br}\n",
        num(t[0].1, 1),
        num(t[1].1, 0),
        num(t[2].1, 1),
        num(t[3].1, 1)
    ));
    for s in &p.summary.progress {
        out.push_str(&format!(
            "work {}: {} in all, {}/s across nodes, {}/GPU-hour{br}\n",
            s.key,
            num(Some(s.total), 0),
            num(s.per_s, 2),
            num(s.per_gpu_hour, 1)
        ));
    }
    out.push('\n');
    out.push_str(&table(&host_rows(v), markdown));
    out.push('\n');
    if v.findings.is_empty() {
        out.push_str("no finding across hosts\n");
    }
    for f in &v.findings {
        let evidence =
            if markdown { crate::markdown::esc(&f.evidence) } else { f.evidence.clone() };
        let line = format!("{} {}: {evidence}", f.severity.label(), f.rule);
        out.push_str(&wrap(&if markdown { format!("- {line}") } else { line }, 100, 2));
        out.push('\n');
        out.push_str(&wrap(&format!("  fix: {}", f.fix), 100, 2));
        out.push('\n');
    }
    out.push('\n');
}

fn text(jobs: &[JobPart<'_>], without_job: &[PathBuf], markdown: bool) -> String {
    let mut out = String::new();
    for p in jobs {
        job_text(p, markdown, &mut out);
    }
    if !without_job.is_empty() {
        out.push_str(&format!("{} input(s) of no job left out\n", without_job.len()));
    }
    out
}
