//! The job view (`summarize --by job`): per job its hosts and GPUs, each node's span and skew, the
//! totals over all its GPUs, work rates, the per-host table and the findings across hosts; as text
//! (table and markdown) or JSON (`"schema": "gpumon.jobs/1"`, docs/summary-json.md).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

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

/// `jobs[].hosts[]`: one host of the job.
#[derive(Serialize)]
struct HostJson<'a> {
    /// The host.
    host: &'a str,
    /// Its node number in the job, where the launcher said.
    node: Option<&'a str>,
    /// Its GPUs.
    gpus: usize,
    /// Its first sample.
    start: String,
    /// Its last sample.
    end: String,
    /// Seconds after the job's first host started.
    start_skew_s: f64,
    /// Seconds before the job's last host ended.
    end_skew_s: f64,
    /// Mean utilization over its GPUs.
    #[serde(rename = "utilization.gpu.mean")]
    utilization: Option<f64>,
    /// The largest memory used of its GPUs.
    #[serde(rename = "memory.used.max")]
    memory_max: Option<f64>,
    /// Mean power draw of its GPUs.
    #[serde(rename = "power.draw.mean")]
    power_mean: Option<f64>,
    /// Energy of its GPUs.
    energy_wh: Option<f64>,
    /// Mean SM clock while busy.
    #[serde(rename = "clocks.sm.busy_mean")]
    busy_clock: Option<f64>,
    /// The rules that fired on it.
    findings: &'a [&'static str],
}

impl<'a> From<&'a JobHost> for HostJson<'a> {
    fn from(h: &'a JobHost) -> Self {
        HostJson {
            host: &h.name,
            node: h.node.as_deref(),
            gpus: h.gpus,
            start: rfc3339(h.start),
            end: rfc3339(h.end),
            start_skew_s: h.start_skew_s,
            end_skew_s: h.end_skew_s,
            utilization: h.utilization,
            memory_max: h.memory_max,
            power_mean: h.power_mean,
            energy_wh: h.energy_wh,
            busy_clock: h.busy_clock,
            findings: &h.findings,
        }
    }
}

/// `jobs[].findings[]`: a finding across the job's hosts.
#[derive(Serialize)]
struct FindingJson<'a> {
    /// The rule that fired.
    rule: &'static str,
    /// `error`, `warning` or `info`.
    severity: &'static str,
    /// The host it holds for; null for a finding of the whole job.
    host: Option<&'a str>,
    /// The GPU's label, or null.
    gpu: Option<&'a str>,
    /// The numbers that fired it.
    evidence: &'a str,
    /// What to do about it.
    fix: &'static str,
}

/// `jobs[]`: one job.
#[derive(Serialize)]
struct JobJson<'a> {
    /// The job's id.
    job: &'a str,
    /// Where the id came from.
    sources: &'a [String],
    /// Its hosts.
    hosts_count: usize,
    /// Its GPUs.
    gpus: usize,
    /// Its first sample.
    start: Option<String>,
    /// Its last sample.
    end: Option<String>,
    /// Last minus first sample.
    span_s: Option<f64>,
    /// The totals over all its GPUs.
    all: BTreeMap<&'static str, Option<f64>>,
    /// Its work counters.
    progress: BTreeMap<&'a str, crate::progress::Rates>,
    /// One per host.
    hosts: Vec<HostJson<'a>>,
    /// The findings across its hosts.
    findings: Vec<FindingJson<'a>>,
    /// The summary of its inputs (`gpumon.summary/1`).
    summary: crate::json::Report<'a>,
}

impl<'a> JobJson<'a> {
    fn new(p: &JobPart<'a>) -> Self {
        let v = p.view;
        JobJson {
            job: &v.id,
            sources: p.sources,
            hosts_count: v.hosts.len(),
            gpus: v.gpus,
            start: v.start.map(rfc3339),
            end: v.end.map(rfc3339),
            span_s: v.start.zip(v.end).map(|(a, b)| (b - a) as f64 / 1e6),
            all: totals(p.summary).into_iter().collect(),
            progress: crate::progress::json(&p.summary.progress),
            hosts: v.hosts.iter().map(HostJson::from).collect(),
            findings: (v.findings.iter())
                .map(|f| FindingJson {
                    rule: f.rule,
                    severity: f.severity.label(),
                    host: (!f.host.is_empty()).then_some(f.host.as_str()),
                    gpu: f.gpu.as_deref(),
                    evidence: &f.evidence,
                    fix: f.fix,
                })
                .collect(),
            summary: crate::json::Report::new(p.summary, p.checks),
        }
    }
}

/// The `gpumon.jobs/1` document.
#[derive(Serialize)]
struct JobsDoc<'a> {
    /// `gpumon.jobs/1`.
    schema: &'static str,
    /// One per job.
    jobs: Vec<JobJson<'a>>,
    /// Inputs whose footers name no job.
    without_job: Vec<String>,
    /// The job view's rules.
    rules: Vec<crate::json::RuleJson>,
}

fn json(jobs: &[JobPart<'_>], without_job: &[PathBuf]) -> String {
    crate::json::pretty(&JobsDoc {
        schema: SCHEMA,
        jobs: jobs.iter().map(JobJson::new).collect(),
        without_job: without_job.iter().map(|p| p.display().to_string()).collect(),
        rules: JOB_RULES.iter().map(crate::json::RuleJson::from).collect(),
    })
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
