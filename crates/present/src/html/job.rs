//! The job's part of the report (`report --job ID`): the job's totals, the per-host table and the
//! findings across hosts above the usual page, and the stragglers marked on the heatmap's rows.

use std::fmt::Write;

use crate::html::escape::esc;
use crate::job::{JobPart, host_rows};
use gpumon_analysis::JobView;

/// The heatmap row of a straggler: outlined in red, its label bold.
const STYLE: &str = "<style>.hm-row[data-straggler]>rect{stroke:#c00;stroke-width:2}\
.hm-row[data-straggler] text{fill:#c00;font-weight:bold}tr.straggler td{background:#fde8e8}</style>";

/// Whether a host holds a straggler finding (all of it, or one of its GPUs).
fn straggles(v: &JobView, host: &str) -> bool {
    v.findings.iter().any(|f| f.rule == "straggler" && f.host == host)
}

/// The job's section: heading, totals, per-host table (stragglers' rows marked), findings.
pub fn section(p: &JobPart<'_>) -> String {
    let v = p.view;
    let mut out = String::from(STYLE);
    let span = v.start.zip(v.end);
    let _ = write!(
        out,
        r#"<h2 id="job">Job {}</h2><p class="note">Its id from {}: {} hosts, {} GPUs, {} to {}. The heatmap below has every GPU of the job, grouped by host; a straggler's row is outlined in red.</p>"#,
        esc(&v.id),
        esc(&p.sources.join(", ")),
        v.hosts.len(),
        v.gpus,
        span.map_or("-".into(), |s| crate::ts(s.0)),
        span.map_or("-".into(), |s| crate::ts(s.1)),
    );
    let rows = host_rows(v);
    out.push_str(r#"<table class="job-hosts"><thead><tr>"#);
    for h in rows.first().into_iter().flatten() {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for (r, h) in rows.iter().skip(1).zip(&v.hosts) {
        let class = if straggles(v, &h.name) { r#" class="straggler""# } else { "" };
        let cells: String = r.iter().map(|c| format!("<td>{}</td>", esc(c))).collect();
        let _ = write!(out, "<tr{class}>{cells}</tr>");
    }
    out.push_str("</tbody></table>");
    if v.findings.is_empty() {
        out.push_str(r#"<p class="note">No finding across hosts.</p>"#);
        return out;
    }
    out.push_str(r#"<ul class="job-findings">"#);
    for f in &v.findings {
        let _ = write!(
            out,
            "<li><b>{} {}</b>: {}<br><i>fix:</i> {}</li>",
            f.severity.label(),
            f.rule,
            esc(&f.evidence),
            esc(f.fix)
        );
    }
    out.push_str("</ul>");
    out
}

/// `body` with the heatmap rows of the stragglers marked (`data-straggler`): a straggler GPU's row,
/// or every row of a host named as a whole.
pub fn mark_stragglers(body: &str, v: &JobView) -> String {
    let mut out = body.to_string();
    for f in v.findings.iter().filter(|f| f.rule == "straggler") {
        let row = format!(r#"<g class="hm-row" data-host="{}" data-gpu=""#, esc(&f.host));
        let from = match &f.gpu {
            Some(g) => format!(r#"{row}{}""#, esc(g)),
            None => row,
        };
        let marked =
            from.replacen(r#"<g class="hm-row" "#, r#"<g class="hm-row" data-straggler="1" "#, 1);
        out = out.replace(&from, &marked);
    }
    out
}
