//! `summarize --by phase`: after the whole run's report, each phase's summary (per host and GPU, with
//! its findings), then the comparison of the marked phases; as text, markdown, JSON (the summary's
//! shape with `phases` and `comparison` added) or CSV (a leading `phase` column).

use std::fmt::Write;

use serde_json::{Value, json};

use crate::analysis::phases::PhaseReport;
use crate::analysis::{CheckResult, Summary};
use crate::present::{SummaryFormat, compare, dur, json as js, markdown, table, ts};

/// A phase's name for people: its label, or `(unmarked)`.
fn name(label: Option<&str>) -> String {
    label.map_or_else(|| "(unmarked)".to_string(), str::to_string)
}

fn span(s: &Summary) -> String {
    match (s.start, s.end) {
        (Some(a), Some(b)) => format!("{} to {} UTC ({})", ts(a), ts(b), dur((b - a) as f64 * 1e-6)),
        _ => "-".into(),
    }
}

fn text(s: &Summary, p: &PhaseReport) -> String {
    let mut out = table::render(s);
    let names: Vec<String> = p.phases.iter().map(|x| name(x.label.as_deref())).collect();
    out.push('\n');
    if p.labels().is_empty() {
        table::line(&mut out, "No phases: no row is marked (gpumon mark) and no --phase window was given.");
        return out;
    }
    table::line(&mut out, &format!("Phases: {}", names.join(", ")));
    for ph in &p.phases {
        let _ = writeln!(out, "\n== Phase {}: {}", name(ph.label.as_deref()), span(&ph.summary));
        for l in crate::present::progress::lines(&ph.summary.progress) {
            table::line(&mut out, &l);
        }
        for h in &ph.summary.hosts {
            table::host_block(&mut out, h);
        }
    }
    if let Some(c) = &p.comparison {
        out.push('\n');
        out.push_str(&compare::table(c, &s.thresholds));
    }
    out
}

fn md(s: &Summary, p: &PhaseReport) -> String {
    let mut o = markdown::render(s);
    o.push_str("\n## Phases\n\n");
    if p.labels().is_empty() {
        o.push_str("No phases: no row is marked (gpumon mark) and no --phase window was given.\n");
        return o;
    }
    for ph in &p.phases {
        let _ = writeln!(o, "### Phase `{}`\n\n{}.\n", markdown::esc(&name(ph.label.as_deref())), span(&ph.summary));
        for l in crate::present::progress::lines(&ph.summary.progress) {
            let _ = writeln!(o, "{l}\n");
        }
        markdown::host_sections(&mut o, &ph.summary, "####");
    }
    if let Some(c) = &p.comparison {
        o.push_str("### Comparison\n\n");
        o.push_str(&compare::markdown(c, &s.thresholds));
    }
    o
}

/// The JSON report with `phases` (each with its span, per-host statistics and findings and over-all
/// figures, the keys of the summary) and `comparison` added.
pub fn json_value(s: &Summary, checks: &[CheckResult], p: &PhaseReport) -> Value {
    let mut v = js::value(s, checks);
    let phases: Vec<Value> = p
        .phases
        .iter()
        .map(|ph| {
            let inner = js::value(&ph.summary, &[]);
            json!({
                "phase": ph.label,
                "start": inner["start"],
                "end": inner["end"],
                "hosts": inner["hosts"],
                "all": inner["all"],
                "progress": inner["progress"],
            })
        })
        .collect();
    let spans: Vec<Value> = p
        .spans
        .iter()
        .map(|x| json!({"phase": x.phase, "start": crate::present::rfc3339(x.start), "end": crate::present::rfc3339(x.end)}))
        .collect();
    if let Some(o) = v.as_object_mut() {
        o.insert("phases".into(), json!(phases));
        o.insert("phase_spans".into(), json!(spans));
        o.insert("comparison".into(), p.comparison.as_ref().map_or(Value::Null, |c| compare::json(c, &s.thresholds)));
    }
    v
}

/// The `--by phase` report in format `f`.
pub fn render(s: &Summary, checks: &[CheckResult], p: &PhaseReport, f: SummaryFormat) -> String {
    match f {
        SummaryFormat::Table => text(s, p),
        SummaryFormat::Markdown => md(s, p),
        SummaryFormat::Csv => crate::present::csv::render_phases(s, p),
        SummaryFormat::Json => {
            let mut out = serde_json::to_string_pretty(&json_value(s, checks, p)).unwrap_or_else(|_| "{}".into());
            out.push('\n');
            out
        }
    }
}
