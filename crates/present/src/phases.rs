//! `summarize --by phase`: after the whole run's report, each phase with what its findings change
//! against the whole run's (the unmarked rows are context, not judged), then the comparison of the
//! marked phases' key statistics; as text, markdown, JSON (the summary's
//! shape with `phases` and `comparison` added) or CSV (a leading `phase` column).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;
use serde_json::Value;

use crate::compact::{gpu_list, group};
use crate::compare_json::ComparisonJson;
use crate::{SummaryFormat, compare, dur, json as js, markdown, table, ts};
use gpumon_analysis::{CheckResult, Finding, PhaseReport, PhaseSummary, Summary};

/// A phase's name for people: its label, or `(unmarked)`.
fn name(label: Option<&str>) -> String {
    label.map_or_else(|| "(unmarked)".to_string(), str::to_string)
}

fn span(s: &Summary) -> String {
    match (s.start, s.end) {
        (Some(a), Some(b)) => {
            format!("{} to {} UTC ({})", ts(a), ts(b), dur((b - a) as f64 * 1e-6))
        }
        _ => "-".into(),
    }
}

/// A phase's findings against the whole run's, by host, rule and GPU.
struct Diff {
    /// The phase's findings the whole run has too.
    same: Vec<Finding>,
    /// The phase's findings the whole run does not have.
    new: Vec<Finding>,
    /// The whole run's findings the phase does not have.
    gone: Vec<Finding>,
}

fn diff(run: &Summary, phase: &Summary, host: &str) -> Diff {
    let of = |s: &Summary| -> Vec<Finding> {
        s.hosts.iter().filter(|h| h.name == host).flat_map(|h| h.findings.iter().cloned()).collect()
    };
    let (all, mine) = (of(run), of(phase));
    let key = |f: &Finding| (f.rule, f.gpu.clone());
    let in_run = |f: &Finding| all.iter().any(|x| key(x) == key(f));
    let same: Vec<Finding> = mine.iter().filter(|f| in_run(f)).cloned().collect();
    let new: Vec<Finding> = mine.iter().filter(|f| !in_run(f)).cloned().collect();
    let gone: Vec<Finding> =
        all.iter().filter(|f| !mine.iter().any(|x| key(x) == key(f))).cloned().collect();
    Diff { same, new, gone }
}

/// `oom_risk (GPUs 0-7); imbalance`.
fn rule_list(list: &[Finding]) -> String {
    group(list)
        .iter()
        .map(|g| {
            if g.gpus.is_empty() {
                g.rule.to_string()
            } else {
                format!("{} ({})", g.rule, gpu_list(&g.gpus))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Hosts of a phase, in the phase's order.
fn hosts(ph: &Summary) -> Vec<&str> {
    ph.hosts.iter().map(|h| h.name.as_str()).collect()
}

/// One phase as text: its span, then per host what its findings change against the whole run's.
fn text_phase(out: &mut String, s: &Summary, ph: &PhaseSummary) {
    let Some(label) = ph.label.as_deref() else {
        let _ = writeln!(out, "\n== {}: {}", name(None), span(&ph.summary));
        table::line(
            out,
            "  rows outside every phase (before the first mark, after the end): context, not judged",
        );
        return;
    };
    let _ = writeln!(out, "\n== Phase {}: {}", gpumon_util::escape(label), span(&ph.summary));
    for l in crate::progress::lines(&ph.summary.progress) {
        table::line(out, &l);
    }
    let many = ph.summary.hosts.len() > 1;
    for host in hosts(&ph.summary) {
        let pre = if many { format!("  {host}: ") } else { "  ".to_string() };
        let Diff { same, new, gone } = diff(s, &ph.summary, host);
        if same.is_empty() && new.is_empty() && gone.is_empty() {
            table::line(out, &format!("{pre}no findings, as in the whole run"));
            continue;
        }
        if !same.is_empty() {
            table::line(out, &format!("{pre}as in the whole run: {}", rule_list(&same)));
        }
        if !gone.is_empty() {
            table::line(out, &format!("{pre}not in this phase: {}", rule_list(&gone)));
        }
        if !new.is_empty() {
            table::line(out, &format!("{pre}only in this phase:"));
            table::findings(out, &new, true);
        }
    }
}

fn text(s: &Summary, p: &PhaseReport) -> String {
    let mut out = table::render(s);
    let names: Vec<String> = p.phases.iter().map(|x| name(x.label.as_deref())).collect();
    out.push('\n');
    if p.labels().is_empty() {
        table::line(
            &mut out,
            "No phases: no row is marked (gpumon mark) and no --phase window was given.",
        );
        return out;
    }
    table::line(
        &mut out,
        &format!(
            "Phases: {} (each: how its findings differ from the whole run's)",
            names.join(", ")
        ),
    );
    for ph in &p.phases {
        text_phase(&mut out, s, ph);
    }
    if let Some(c) = &p.comparison {
        out.push('\n');
        out.push_str(&compare::table(c, &s.thresholds));
    }
    out
}

/// One phase as markdown: its span, then per host what its findings change against the whole run's.
fn md_phase(o: &mut String, s: &Summary, ph: &PhaseSummary) {
    let _ = writeln!(
        o,
        "### Phase {}\n\n{}.\n",
        markdown::code(&name(ph.label.as_deref())),
        span(&ph.summary)
    );
    if ph.label.is_none() {
        o.push_str("Rows outside every phase (before the first mark, after the end): context, not judged.\n\n");
        return;
    }
    for l in crate::progress::lines(&ph.summary.progress) {
        let _ = writeln!(o, "{l}\n");
    }
    for host in hosts(&ph.summary) {
        let Diff { same, new, gone } = diff(s, &ph.summary, host);
        let _ = writeln!(o, "Host {}:\n", markdown::code(host));
        if same.is_empty() && new.is_empty() && gone.is_empty() {
            o.push_str("- no findings, as in the whole run\n");
        }
        if !same.is_empty() {
            let _ = writeln!(o, "- as in the whole run: {}", markdown::esc(&rule_list(&same)));
        }
        if !gone.is_empty() {
            let _ = writeln!(o, "- not in this phase: {}", markdown::esc(&rule_list(&gone)));
        }
        if !new.is_empty() {
            o.push_str("- only in this phase:\n");
            markdown::finding_items(o, &new, "  ");
        }
        o.push('\n');
    }
}

fn md(s: &Summary, p: &PhaseReport) -> String {
    let mut o = markdown::render(s);
    o.push_str("\n## Phases\n\n");
    if p.labels().is_empty() {
        o.push_str("No phases: no row is marked (gpumon mark) and no --phase window was given.\n");
        return o;
    }
    o.push_str("Each phase: how its findings differ from the whole run's.\n\n");
    for ph in &p.phases {
        md_phase(&mut o, s, ph);
    }
    if let Some(c) = &p.comparison {
        o.push_str("### Comparison\n\n");
        o.push_str(&compare::markdown(c, &s.thresholds));
    }
    o
}

/// `phases[]`: one phase, with the keys of the summary that hold for it alone.
#[derive(Serialize)]
struct PhaseJson<'a> {
    /// The phase's label; null for the unmarked rows.
    phase: Option<&'a str>,
    /// Its first GPU sample.
    start: Option<String>,
    /// Its last GPU sample.
    end: Option<String>,
    /// Its per-host statistics and findings.
    hosts: Vec<js::Host<'a>>,
    /// Its statistics over all GPUs and hosts.
    all: js::All<'a>,
    /// Its work counters.
    progress: BTreeMap<&'a str, crate::progress::Rates>,
}

impl<'a> PhaseJson<'a> {
    fn new(ph: &'a PhaseSummary) -> Self {
        let inner = js::Report::new(&ph.summary, &[]);
        PhaseJson {
            phase: ph.label.as_deref(),
            start: inner.start,
            end: inner.end,
            hosts: inner.hosts,
            all: inner.all,
            progress: inner.progress,
        }
    }
}

/// `phase_spans[]`: one stretch of a phase.
#[derive(Serialize)]
struct SpanJson<'a> {
    /// The phase's label; null for unmarked rows.
    phase: Option<&'a str>,
    /// Where the stretch starts.
    start: String,
    /// Where it ends.
    end: String,
}

/// The `--by phase` document: the summary's keys with `phases`, `phase_spans` and `comparison`.
#[derive(Serialize)]
struct PhasesDoc<'a> {
    /// The whole run's report.
    #[serde(flatten)]
    report: js::Report<'a>,
    /// One per phase.
    phases: Vec<PhaseJson<'a>>,
    /// The stretches of the phases, in time order.
    phase_spans: Vec<SpanJson<'a>>,
    /// The phases compared, or null.
    comparison: Option<ComparisonJson<'a>>,
}

impl<'a> PhasesDoc<'a> {
    fn new(s: &'a Summary, checks: &'a [CheckResult], p: &'a PhaseReport) -> Self {
        PhasesDoc {
            report: js::Report::new(s, checks),
            phases: p.phases.iter().map(PhaseJson::new).collect(),
            phase_spans: (p.spans.iter())
                .map(|x| SpanJson {
                    phase: x.phase.as_deref(),
                    start: crate::rfc3339(x.start),
                    end: crate::rfc3339(x.end),
                })
                .collect(),
            comparison: p.comparison.as_ref().map(|c| ComparisonJson::new(c, &s.thresholds)),
        }
    }
}

/// The JSON report with `phases` (each with its span, per-host statistics and findings and over-all
/// figures, the keys of the summary) and `comparison` added.
pub fn json_value(s: &Summary, checks: &[CheckResult], p: &PhaseReport) -> Value {
    js::to_value(&PhasesDoc::new(s, checks, p))
}

/// The `--by phase` report in format `f`.
pub fn render(s: &Summary, checks: &[CheckResult], p: &PhaseReport, f: SummaryFormat) -> String {
    match f {
        SummaryFormat::Table => text(s, p),
        SummaryFormat::Markdown => md(s, p),
        SummaryFormat::Csv => crate::csv::render_phases(s, p),
        SummaryFormat::Json => js::pretty(&PhasesDoc::new(s, checks, p)),
    }
}
