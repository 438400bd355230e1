//! The markdown report: the same content as the table, as GitHub-flavoured markdown (for PR comments,
//! wikis, notebooks), with the input warnings listed.

use std::fmt::Write;

use crate::analysis::Summary;
use crate::present::{count, dur, num, throttle_list, ts};

fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn render(s: &Summary) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# gpumon summary\n");
    if let (Some(a), Some(b)) = (s.start, s.end) {
        let _ = writeln!(
            o,
            "{} host(s), {} GPU(s), {} to {} UTC ({}).\n",
            s.hosts.len(),
            s.gpu_count(),
            ts(a),
            ts(b),
            dur((b - a) as f64 * 1e-6)
        );
    }
    if s.window.0.is_some() || s.window.1.is_some() {
        let _ = writeln!(
            o,
            "Window: {} to {} UTC ({} rows left out).\n",
            s.window.0.map_or("start".into(), ts),
            s.window.1.map_or("end".into(), ts),
            s.windowed_out
        );
    }
    for h in &s.hosts {
        let _ = writeln!(o, "## Host `{}`\n", h.name);
        if !h.gpus.is_empty() {
            o.push_str(
                "| GPU | name | samples | interval | coverage % | util mean % | p50 | p95 | max | idle % \
                 | mem peak MiB | mem % | power mean W | power max W | energy Wh | temp max C |\n",
            );
            o.push_str("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
            for g in &h.gpus {
                let st = &g.stats;
                let _ = writeln!(
                    o,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    esc(&g.label),
                    esc(g.name.as_deref().unwrap_or("")),
                    count(st.get("samples")),
                    st.get("interval_s").map_or("-".into(), dur),
                    num(st.get("coverage_pct"), 1),
                    num(st.get("utilization.gpu.mean"), 1),
                    num(st.get("utilization.gpu.p50"), 0),
                    num(st.get("utilization.gpu.p95"), 0),
                    num(st.get("utilization.gpu.max"), 0),
                    num(st.get("utilization.gpu.idle_pct"), 1),
                    count(st.get("memory.used.max")),
                    num(st.get("memory.used.max_pct"), 1),
                    num(st.get("power.draw.mean"), 1),
                    num(st.get("power.draw.max"), 1),
                    num(st.get("energy_wh"), 1),
                    num(st.get("temperature.gpu.max"), 0),
                );
            }
            o.push('\n');
            for g in &h.gpus {
                if g.stats.get("gaps").unwrap_or(0.0) > 0.0 {
                    let _ = writeln!(
                        o,
                        "- GPU {}: {} gap(s), {} in total; longest: {}",
                        g.label,
                        count(g.stats.get("gaps")),
                        dur(g.stats.get("gap_s").unwrap_or(0.0)),
                        g.gaps.iter().max_by_key(|x| x.end - x.start).map_or("-".into(), |x| format!(
                            "{} from {}",
                            dur((x.end - x.start) as f64 * 1e-6),
                            ts(x.start)
                        ))
                    );
                }
                let thr = throttle_list(&g.stats);
                if !thr.is_empty() {
                    let _ = writeln!(o, "- GPU {} clock events (share of samples): {}", g.label, thr.join(", "));
                }
            }
            o.push('\n');
        }
        if h.has_host_data {
            o.push_str("| host statistic | value |\n|---|--:|\n");
            for (n, v) in &h.stats.0 {
                if v.is_some() {
                    let _ = writeln!(o, "| `{n}` | {} |", num(*v, 1));
                }
            }
            o.push('\n');
        }
        if h.findings.is_empty() {
            o.push_str("No findings.\n\n");
        } else {
            o.push_str("### Findings\n\n");
            for f in &h.findings {
                let who = f.gpu.as_ref().map_or(String::new(), |g| format!("GPU {g}: "));
                let _ =
                    writeln!(o, "- **{}** ({}): {who}{}  \n  Fix: {}", f.rule, f.severity.label(), f.evidence, f.fix);
            }
            o.push('\n');
        }
    }
    o.push_str("## Inputs\n\n");
    for i in &s.inputs {
        let _ =
            writeln!(o, "- `{}` ({}, {} rows)", crate::util::text::show(&i.path), i.kind, count(Some(i.rows as f64)));
        for w in &i.warnings {
            let _ = writeln!(o, "  - warning: {w}");
        }
    }
    for (p, why) in &s.skipped {
        let _ = writeln!(o, "- skipped `{}`: {why}", p.display());
    }
    o
}
