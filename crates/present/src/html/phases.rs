//! The report's phases: the bands every time chart shades (one colour per label, the unmarked rows
//! left clear), and the section listing the phases with the comparison of their key statistics.

use std::fmt::Write;

use crate::compact::group;
use crate::compare::{cells, label};
use crate::html::escape::esc;
use crate::html::svg::Band;
use crate::html::tables::finding_item;
use crate::{dur, ts};
use gpumon_analysis::{PhaseReport, Summary, Thresholds};

/// One band per stretch of a marked phase: from its first row to the next stretch's first row (a
/// row describes the interval that ends at it), the last one to its last row.
pub(super) fn bands(p: &PhaseReport) -> Vec<Band> {
    let labels = p.labels();
    p.spans
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let label = s.phase.clone()?;
            let end = p.spans.get(i + 1).map_or(s.end, |n| n.start);
            let color = labels.iter().position(|l| *l == label).unwrap_or(0);
            Some(Band { label, start: s.start, end, color })
        })
        .collect()
}

/// A phase's own findings (each rule once with its GPUs; the fixes are in the run's findings).
fn phase_findings(out: &mut String, s: &Summary) {
    let groups: Vec<_> = s.hosts.iter().flat_map(|h| group(&h.findings)).collect();
    if groups.is_empty() {
        out.push_str(r#"<p class="note">No findings in this phase.</p>"#);
        return;
    }
    out.push_str(r#"<ul class="findings">"#);
    for g in &groups {
        finding_item(out, g, false);
    }
    out.push_str("</ul>");
}

/// The phases with their colours and spans, each with its findings, then the comparison table and its verdicts.
pub(super) fn section(p: &PhaseReport, th: &Thresholds) -> String {
    let mut s = String::from(r#"<h2 id="phases">Phases</h2><ul class="phases">"#);
    for (k, ph) in p.phases.iter().enumerate().filter(|(_, x)| x.label.is_some()) {
        let (a, b) = (ph.summary.start.unwrap_or(0), ph.summary.end.unwrap_or(0));
        let _ = write!(
            s,
            r#"<li data-phase="{}" data-from="{a}" data-to="{b}"><span class="phs p{}"></span><b>{}</b>: {} to {} UTC ({}), {} GPU(s)"#,
            esc(ph.label.as_deref().unwrap_or("")),
            p.labels().iter().position(|l| Some(*l) == ph.label.as_deref()).unwrap_or(k) % 4,
            esc(ph.label.as_deref().unwrap_or("")),
            ts(a),
            ts(b),
            dur((b - a) as f64 * 1e-6),
            ph.summary.gpu_count()
        );
        phase_findings(&mut s, &ph.summary);
        s.push_str("</li>");
    }
    s.push_str("</ul>");
    let Some(c) = &p.comparison else { return s };
    let base = c.columns.get(c.baseline).map_or("", |b| b.label.as_str());
    let _ = write!(
        s,
        r#"<p class="note">Key statistics of each phase (all GPUs together) and their change against <b>{}</b>.</p><div class="scroll"><table class="comparison"><thead><tr><th class="l">statistic</th>"#,
        esc(base)
    );
    for col in &c.columns {
        let _ = write!(s, "<th>{}</th>", esc(&col.label));
    }
    s.push_str("</tr></thead><tbody>");
    for (i, &m) in c.measures.iter().enumerate() {
        let _ = write!(
            s,
            r#"<tr data-stat="{}"><td class="l">{}</td>"#,
            esc(&m.name()),
            esc(&label(m))
        );
        for cell in cells(c, i) {
            let _ = write!(s, "<td>{}</td>", esc(&cell));
        }
        s.push_str("</tr>");
    }
    s.push_str(r#"</tbody></table></div><ul class="verdicts">"#);
    for v in c.verdicts(th) {
        let _ = write!(s, "<li>{}</li>", esc(&v));
    }
    s.push_str("</ul>");
    s
}
