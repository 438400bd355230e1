//! The markdown report: the same content as the table, as GitHub-flavoured markdown (for PR comments,
//! wikis, notebooks), with the input warnings listed.

use std::fmt::Write;

use crate::analysis::stat::Stat;
use crate::analysis::{HostSummary, Summary};
use crate::present::{count, dur, num, throttle_list, ts};
use crate::schema::catalog::Field;

/// Text for a table cell (a `|` would end it).
pub fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Title, span and window.
fn header(o: &mut String, s: &Summary) {
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
}

/// One row per GPU of a host.
fn gpu_table(o: &mut String, h: &HostSummary) {
    o.push_str(
        "| GPU | name | samples | interval | coverage % | util mean % | p50 | p95 | max | idle % \
         | mem peak MiB | mem % | power mean W | power max W | energy Wh | temp max C |\n",
    );
    o.push_str("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for g in &h.gpus {
        let st = &g.stats;
        let cells = [
            esc(&g.label),
            esc(g.name.as_deref().unwrap_or("")),
            count(st.get(Stat::Samples)),
            st.get(Stat::IntervalS).map_or("-".into(), dur),
            num(st.get(Stat::CoveragePct), 1),
            num(st.get(Stat::mean(Field::UtilGpu)), 1),
            num(st.get(Stat::p50(Field::UtilGpu)), 0),
            num(st.get(Stat::p95(Field::UtilGpu)), 0),
            num(st.get(Stat::max(Field::UtilGpu)), 0),
            num(st.get(Stat::IdlePct), 1),
            count(st.get(Stat::max(Field::MemUsed))),
            num(st.get(Stat::MemoryUsedMaxPct), 1),
            num(st.get(Stat::mean(Field::PowerDraw)), 1),
            num(st.get(Stat::max(Field::PowerDraw)), 1),
            num(st.get(Stat::EnergyWh), 1),
            num(st.get(Stat::max(Field::TempGpu)), 0),
        ];
        let _ = writeln!(o, "| {} |", cells.join(" | "));
    }
    o.push('\n');
}

/// Gaps and clock events of each GPU of a host.
fn gpu_notes(o: &mut String, h: &HostSummary) {
    for g in &h.gpus {
        if g.stats.get(Stat::Gaps).unwrap_or(0.0) > 0.0 {
            let longest = g.gaps.iter().max_by_key(|x| x.end - x.start);
            let _ = writeln!(
                o,
                "- GPU {}: {} gap(s), {} in total; longest: {}",
                g.label,
                count(g.stats.get(Stat::Gaps)),
                dur(g.stats.get(Stat::GapS).unwrap_or(0.0)),
                longest.map_or("-".into(), |x| format!(
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

/// Every host statistic with a value.
fn host_table(o: &mut String, h: &HostSummary) {
    o.push_str("| host statistic | value |\n|---|--:|\n");
    for (stat, v) in h.stats.iter() {
        if v.is_some() {
            let _ = writeln!(o, "| `{stat}` | {} |", num(v, 1));
        }
    }
    o.push('\n');
}

fn findings(o: &mut String, h: &HostSummary) {
    if h.findings.is_empty() {
        o.push_str("No findings.\n\n");
        return;
    }
    o.push_str("### Findings\n\n");
    for f in &h.findings {
        let who = f.gpu.as_ref().map_or(String::new(), |g| format!("GPU {g}: "));
        let _ = writeln!(o, "- **{}** ({}): {who}{}  \n  Fix: {}", f.rule, f.severity.label(), f.evidence, f.fix);
    }
    o.push('\n');
}

/// Events listed in the markdown report; the JSON report has them all.
const EVENTS_SHOWN: usize = 100;

/// The NVML events of the recording, each Xid with its meaning and usual action.
fn events(o: &mut String, s: &Summary) {
    if s.events.is_empty() {
        return;
    }
    o.push_str(
        "## NVML events\n\n| time (UTC) | host | GPU | event | meaning | usual action |\n|---|---|--:|---|---|---|\n",
    );
    for e in s.events.iter().take(EVENTS_SHOWN) {
        let gpu = e.gpu.map_or_else(|| "-".to_string(), |g| g.to_string());
        let _ = writeln!(
            o,
            "| {} | {} | {gpu} | {} | {} | {} |",
            ts(e.ts),
            esc(&e.host),
            e.label(),
            esc(&e.meaning()),
            esc(e.action().unwrap_or(""))
        );
    }
    let total = s.events.len() as u64 + s.events_more;
    if total > EVENTS_SHOWN as u64 {
        let _ = writeln!(o, "\n{} more events (all in `--format json`).", total - EVENTS_SHOWN as u64);
    }
    o.push('\n');
}

/// GPU use per user from the per-process rows.
fn users(o: &mut String, s: &Summary) {
    if s.users.is_empty() {
        return;
    }
    o.push_str(
        "## GPU use by user\n\nFrom the `--processes` rows; SM % and memory are the user's processes added up per tick.\n\n\
         | host | GPU | user | processes | from | to | SM mean % | memory mean MiB | memory peak MiB |\n\
         |---|--:|---|--:|---|---|--:|--:|--:|\n",
    );
    for u in &s.users {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            esc(&u.host),
            u.gpu.map_or_else(|| "-".to_string(), |g| g.to_string()),
            esc(&u.user),
            u.procs,
            ts(u.first),
            ts(u.last),
            num(u.sm_mean, 1),
            count(u.mem_mean),
            count(u.mem_max)
        );
    }
    o.push('\n');
}

/// The files read, their warnings, and the files skipped.
fn inputs(o: &mut String, s: &Summary) {
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
}

pub fn render(s: &Summary) -> String {
    let mut o = String::new();
    header(&mut o, s);
    work(&mut o, s);
    host_sections(&mut o, s, "##");
    events(&mut o, s);
    users(&mut o, s);
    inputs(&mut o, s);
    o
}

/// The job's work counters, a line each (`gpumon progress`).
fn work(o: &mut String, s: &Summary) {
    for l in crate::present::progress::lines(&s.progress) {
        let _ = writeln!(o, "{l}\n");
    }
}

/// A section per host (GPU table, notes, host figures, findings) under `level` headings.
pub fn host_sections(o: &mut String, s: &Summary, level: &str) {
    for h in &s.hosts {
        let _ = writeln!(o, "{level} Host `{}`\n", h.name);
        if !h.gpus.is_empty() {
            gpu_table(o, h);
            gpu_notes(o, h);
        }
        if h.has_host_data {
            host_table(o, h);
        }
        findings(o, h);
    }
}
