//! A comparison of runs or phases (`gpumon compare`, `summarize --by phase`, the report): one line
//! per key statistic, one column per run or phase with its change against the baseline, then the
//! verdicts; as aligned text or markdown (JSON: [`crate::compare_json`]). `gpumon compare`'s whole
//! report in the format asked for ([`render`]): the runs compared, the comparison, each run's findings.

use std::fmt::Write;

use crate::compact::{Group, gpu_list, groups_of};
use crate::{count, dur, num, ts, wrap};
use gpumon_analysis::{CheckResult, Comparison, Measure, Summary, Thresholds, comparison_change};

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
pub(crate) fn cells(c: &Comparison, i: usize) -> Vec<String> {
    let m = c.measures[i];
    (0..c.columns.len())
        .map(|col| {
            let v = value(m, c.columns[col].values[i]);
            let (d, pct) = c.delta(i, col);
            match comparison_change(m, d, pct).filter(|_| col != c.baseline) {
                Some(ch) => format!("{v} ({ch})"),
                None => v,
            }
        })
        .collect()
}

/// Row labels: statistic name and unit.
pub(crate) fn label(m: Measure) -> String {
    if m.unit().is_empty() { m.name() } else { format!("{} {}", m.name(), m.unit()) }
}

/// The comparison as aligned text: a header naming the baseline, the table, the verdicts.
pub(crate) fn table(c: &Comparison, th: &Thresholds) -> String {
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
pub(crate) fn markdown(c: &Comparison, th: &Thresholds) -> String {
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

/// `[warning] oom_risk (node1 GPUs 0-3)`.
fn short(g: &Group<'_>, hosts: usize) -> String {
    let host = if hosts > 1 { format!("{} ", g.host) } else { String::new() };
    let who =
        if g.gpus.is_empty() { g.host.to_string() } else { format!("{host}{}", gpu_list(&g.gpus)) };
    format!("[{}] {} ({who})", g.severity.label(), g.rule)
}

/// Each run's (or phase's) findings, one line per run: the rules and the GPUs they hold for.
pub(crate) fn findings_table(cols: &[(String, &Summary)]) -> String {
    let mut out = String::from("\nFindings (details: gpumon summarize RUN):\n");
    for (label, s) in cols {
        let list: Vec<String> = groups_of(s).iter().map(|g| short(g, s.hosts.len())).collect();
        let text = if list.is_empty() { "none".to_string() } else { list.join("; ") };
        out.push_str(&wrap(&format!("  {label}: {text}"), 80, 4));
        out.push('\n');
    }
    out
}

/// Each run's (or phase's) findings as a markdown list.
pub(crate) fn findings_markdown(cols: &[(String, &Summary)]) -> String {
    use crate::markdown::esc;
    let mut o = String::from("## Findings\n\n");
    for (label, s) in cols {
        let list: Vec<String> = groups_of(s).iter().map(|g| short(g, s.hosts.len())).collect();
        let text = if list.is_empty() { "none".to_string() } else { list.join("; ") };
        let _ = writeln!(o, "- `{}`: {}", esc(label), esc(&text));
    }
    o.push('\n');
    o
}

/// Format of `gpumon compare`'s report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareFormat {
    /// Aligned text.
    Table,
    /// Markdown.
    Markdown,
    /// The `gpumon.compare/1` JSON document.
    Json,
}

/// `gpumon compare`'s report of the runs `cols` (label, summary), their comparison `c` and the
/// results of its checks, in `format`.
pub fn render(
    format: CompareFormat,
    cols: &[(String, &Summary)],
    c: &Comparison,
    th: &Thresholds,
    results: &[CheckResult],
) -> String {
    match format {
        CompareFormat::Table => runs_text(cols) + &table(c, th) + &findings_table(cols),
        CompareFormat::Markdown => markdown_report(cols, c, th),
        CompareFormat::Json => crate::compare_json::render(cols, c, th, results),
    }
}

/// What was compared: one line per run with its span and GPUs.
fn runs_text(cols: &[(String, &Summary)]) -> String {
    let mut out = format!("gpumon compare: {} runs\n", cols.len());
    let w = cols.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0);
    for (label, s) in cols {
        let span = match (s.start, s.end) {
            (Some(a), Some(b)) => {
                format!("{} to {} UTC ({})", ts(a), ts(b), dur((b - a) as f64 * 1e-6))
            }
            _ => "-".into(),
        };
        out.push_str(&format!(
            "  {label:w$}  {span}, {} host(s), {} GPU(s)\n",
            s.hosts.len(),
            s.gpu_count()
        ));
        for l in gpumon_schema::recordings_note(&s.inputs) {
            out.push_str(&format!("  {:w$}    {l}\n", ""));
        }
        for j in crate::job_lines(s) {
            out.push_str(&format!("  {:w$}  {j}\n", ""));
        }
    }
    out.push('\n');
    out
}

/// The markdown report: the runs whose inputs hold several recordings, the comparison, the findings.
fn markdown_report(cols: &[(String, &Summary)], c: &Comparison, th: &Thresholds) -> String {
    let notes: String = cols
        .iter()
        .flat_map(|(label, s)| {
            gpumon_schema::recordings_note(&s.inputs)
                .into_iter()
                .map(move |l| format!("> {label}: {l}\n"))
        })
        .collect();
    format!(
        "# gpumon compare\n\n{}{}{}",
        if notes.is_empty() { notes } else { notes + "\n" },
        markdown(c, th),
        findings_markdown(cols)
    )
}
