//! A comparison of runs or phases (`gpumon compare`, `summarize --by phase`, the report): one line
//! per key statistic, one column per run or phase with its change against the baseline, then the
//! verdicts; as aligned text, markdown or JSON.

use std::fmt::Write;

use serde_json::{Map, Value, json};

use crate::compact::{Group, gpu_list, group};
use crate::{count, num, rfc3339, wrap};
use gpumon_analysis::Summary;
use gpumon_analysis::compare::{Comparison, Measure, change};
use gpumon_analysis::findings::Thresholds;

/// A value as the table shows it, in the measure's unit.
fn value(m: Measure, v: Option<f64>) -> String {
    match m.unit() {
        "MiB" => count(v),
        "C" => num(v, 0),
        // Work rates (`/s`, `/GPU-h`, `/Wh`): whole numbers from 100 up.
        u if u.starts_with('/') && v.is_some_and(|x| x.abs() >= 100.0) => count(v),
        _ => num(v, 1),
    }
}

/// The cells of row `i`: the value, and beside it the change against the baseline.
pub fn cells(c: &Comparison, i: usize) -> Vec<String> {
    let m = c.measures[i];
    (0..c.columns.len())
        .map(|col| {
            let v = value(m, c.columns[col].values[i]);
            let (d, pct) = c.delta(i, col);
            match change(m, d, pct).filter(|_| col != c.baseline) {
                Some(ch) => format!("{v} ({ch})"),
                None => v,
            }
        })
        .collect()
}

/// Row labels: statistic name and unit.
pub fn label(m: Measure) -> String {
    if m.unit().is_empty() { m.name() } else { format!("{} {}", m.name(), m.unit()) }
}

/// The comparison as aligned text: a header naming the baseline, the table, the verdicts.
pub fn table(c: &Comparison, th: &Thresholds) -> String {
    let mut out = String::new();
    let Some(base) = c.columns.get(c.baseline) else { return out };
    let _ = writeln!(out, "Compared with {} (the baseline):", base.label);
    let labels: Vec<String> = c.measures.iter().map(|&m| label(m)).collect();
    let rows: Vec<Vec<String>> = (0..c.measures.len()).map(|i| cells(c, i)).collect();
    let lw = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..c.columns.len())
        .map(|k| {
            rows.iter()
                .map(|r| r[k].chars().count())
                .chain([c.columns[k].label.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut head = format!("  {:lw$}", "");
    for (col, w) in c.columns.iter().zip(&widths) {
        let _ = write!(head, "  {:>w$}", col.label);
    }
    let _ = writeln!(out, "{}", head.trim_end());
    for (l, r) in labels.iter().zip(&rows) {
        let mut line = format!("  {l:lw$}");
        for (cell, w) in r.iter().zip(&widths) {
            let _ = write!(line, "  {cell:>w$}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    for v in c.verdicts(th) {
        out.push_str(&crate::wrap(&format!("  {v}"), 80, 4));
        out.push('\n');
    }
    out
}

/// The comparison as a markdown table and a list of verdicts.
pub fn markdown(c: &Comparison, th: &Thresholds) -> String {
    use crate::markdown::{code, esc};
    let mut o = String::new();
    let Some(base) = c.columns.get(c.baseline) else { return o };
    let _ = writeln!(o, "Compared with {} (the baseline).\n", code(&base.label));
    let _ = writeln!(
        o,
        "| statistic | {} |",
        c.columns.iter().map(|x| esc(&x.label)).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(o, "|---|{}", "--:|".repeat(c.columns.len()));
    for (i, &m) in c.measures.iter().enumerate() {
        let _ = writeln!(o, "| `{}` | {} |", label(m), cells(c, i).join(" | "));
    }
    o.push('\n');
    for v in c.verdicts(th) {
        let _ = writeln!(o, "- {}", esc(&v));
    }
    o.push('\n');
    o
}

/// The comparison as JSON: per run or phase its statistics, their changes against the baseline
/// (`delta`, `delta_pct`; empty for the baseline itself) and the verdicts.
pub fn json(c: &Comparison, th: &Thresholds) -> Value {
    let runs: Vec<Value> = c
        .columns
        .iter()
        .enumerate()
        .map(|(k, col)| {
            let (mut stats, mut d, mut p) = (Map::new(), Map::new(), Map::new());
            for (i, &m) in c.measures.iter().enumerate() {
                stats.insert(m.name(), col.values[i].map_or(Value::Null, |v| json!(v)));
                if k != c.baseline {
                    let (dv, pv) = c.delta(i, k);
                    d.insert(m.name(), dv.map_or(Value::Null, |v| json!(v)));
                    p.insert(m.name(), pv.map_or(Value::Null, |v| json!(v)));
                }
            }
            json!({
                "label": col.label,
                "baseline": k == c.baseline,
                "start": col.start.map(rfc3339),
                "end": col.end.map(rfc3339),
                "stats": stats,
                "delta": d,
                "delta_pct": p,
            })
        })
        .collect();
    let units: Map<String, Value> =
        c.measures.iter().map(|m| (m.name(), json!(m.unit()))).collect();
    json!({
        "baseline": c.columns.get(c.baseline).map(|b| b.label.clone()),
        "units": units,
        "runs": runs,
        "verdicts": c.verdicts(th),
    })
}

/// The findings of a run or phase, each rule once with its GPUs.
fn groups(s: &Summary) -> Vec<Group<'_>> {
    s.hosts.iter().flat_map(|h| group(&h.findings)).collect()
}

/// `[warning] oom_risk (node1 GPUs 0-3)`.
fn short(g: &Group<'_>, hosts: usize) -> String {
    let host = if hosts > 1 { format!("{} ", g.host) } else { String::new() };
    let who =
        if g.gpus.is_empty() { g.host.to_string() } else { format!("{host}{}", gpu_list(&g.gpus)) };
    format!("[{}] {} ({who})", g.severity.label(), g.rule)
}

/// Each run's (or phase's) findings, one line per run: the rules and the GPUs they hold for.
pub fn findings_table(cols: &[(String, &Summary)]) -> String {
    let mut out = String::from("\nFindings (details: gpumon summarize RUN):\n");
    for (label, s) in cols {
        let list: Vec<String> = groups(s).iter().map(|g| short(g, s.hosts.len())).collect();
        let text = if list.is_empty() { "none".to_string() } else { list.join("; ") };
        out.push_str(&wrap(&format!("  {label}: {text}"), 80, 4));
        out.push('\n');
    }
    out
}

/// Each run's (or phase's) findings as a markdown list.
pub fn findings_markdown(cols: &[(String, &Summary)]) -> String {
    use crate::markdown::esc;
    let mut o = String::from("## Findings\n\n");
    for (label, s) in cols {
        let list: Vec<String> = groups(s).iter().map(|g| short(g, s.hosts.len())).collect();
        let text = if list.is_empty() { "none".to_string() } else { list.join("; ") };
        let _ = writeln!(o, "- `{}`: {}", esc(label), esc(&text));
    }
    o.push('\n');
    o
}

/// Each run's (or phase's) findings, `label -> [{rule, severity, host, gpus, evidence, fix}]`.
pub fn findings_json(cols: &[(String, &Summary)]) -> Value {
    let mut m = Map::new();
    for (label, s) in cols {
        let list: Vec<Value> = groups(s)
            .iter()
            .map(|g| {
                json!({"rule": g.rule, "severity": g.severity.label(), "host": g.host, "gpus": g.gpus,
                       "evidence": g.evidence, "fix": g.fix})
            })
            .collect();
        m.insert(label.clone(), json!(list));
    }
    Value::Object(m)
}

/// Each run's (or phase's) wrapped commands, `label -> [{command, exit_code, end}]`.
pub fn jobs_json(cols: &[(String, &Summary)]) -> Value {
    let m: Map<String, Value> = (cols.iter())
        .map(|(label, s)| {
            let jobs: Vec<Value> =
                s.inputs.iter().filter_map(|i| i.job.as_ref()).map(crate::json::job).collect();
            (label.clone(), json!(jobs))
        })
        .collect();
    Value::Object(m)
}
