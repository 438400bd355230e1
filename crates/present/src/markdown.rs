//! The markdown report: the same content as the table, as GitHub-flavoured markdown (for PR comments,
//! wikis, notebooks), with the input warnings listed.

use std::fmt::Write;

use crate::compact::{group, routine_lines};
use crate::{count, dur, num, throttle_list, ts};
use gpumon_analysis::{Finding, HostSummary, RoutineCount, Stat, Summary};
use gpumon_schema::catalog::Field;
use gpumon_util::escape;

/// Text from a file (a host, user or GPU name, a phase label) as Markdown that shows it as it is,
/// in a table cell or in prose: HTML's `<`, `>` and `&` as entities (no tag reaches a renderer, as
/// in the HTML report), the characters of emphasis, links, code spans and tables backslash-escaped,
/// control and bidirectional characters written as escapes (`\u{202e}`).
pub(crate) fn esc(s: &str) -> String {
    let s = escape(s);
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                o.push('\\');
                o.push(c);
            }
            _ => o.push(c),
        }
    }
    o
}

/// Text from a file as a Markdown code span (shown literally, HTML included): fenced with one
/// backtick more than the longest run of them inside, so none of its own can end the span.
pub(crate) fn code(s: &str) -> String {
    let s = escape(s);
    let (mut run, mut longest) = (0, 0);
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// Generated text that may quote a file's names (findings' evidence): HTML's specials as entities.
fn html(s: &str) -> String {
    escape(s).replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Title, span and window.
fn header(o: &mut String, s: &Summary) {
    let _ = writeln!(o, "# gpumon summary\n");
    if let (Some(a), Some(b)) = (s.start, s.end) {
        let _ = writeln!(
            o,
            "{} host(s), {} GPU(s){}, {} to {} UTC ({}).\n",
            s.hosts.len(),
            s.gpu_count(),
            if s.mig_count() > 0 {
                format!(" ({} MIG instance(s))", s.mig_count())
            } else {
                String::new()
            },
            ts(a),
            ts(b),
            dur((b - a) as f64 * 1e-6)
        );
    }
    if s.window.is_bounded() {
        let _ = writeln!(
            o,
            "Window: {} to {} UTC ({} rows left out).\n",
            s.window.since.map_or("start".into(), ts),
            s.window.until.map_or("end".into(), ts),
            s.windowed_out
        );
    }
}

/// The GPM activity fields a host's GPUs have (their mean is shown).
const ACTIVITY: [Field; 3] = [Field::SmActive, Field::TensorActive, Field::DramActive];

/// One row per GPU of a host; the GPM activity columns when any GPU has them.
fn gpu_table(o: &mut String, h: &HostSummary) {
    let gpm = h.gpus.iter().any(|g| ACTIVITY.iter().any(|&f| g.stats.get(Stat::mean(f)).is_some()));
    o.push_str(
        "| GPU | name | samples | interval | coverage % | util mean % | p50 | p95 | max | idle % \
         | mem peak MiB | mem % | power mean W | power max W | energy Wh | temp max C |",
    );
    if gpm {
        o.push_str(" sm.active mean % | tensor.active mean % | dram.active mean % |");
    }
    o.push_str("\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    o.push_str(if gpm { "--:|--:|--:|\n" } else { "\n" });
    for g in &h.gpus {
        let st = &g.stats;
        let mut cells = vec![
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
        if gpm {
            cells.extend(ACTIVITY.iter().map(|&f| num(st.get(Stat::mean(f)), 1)));
        }
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
                esc(&g.label),
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
            let _ = writeln!(
                o,
                "- GPU {} clock events (share of samples): {}",
                esc(&g.label),
                thr.join(", ")
            );
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
    finding_items(o, &h.findings, "");
    o.push('\n');
}

/// Findings grouped over the GPUs they hold for, as list items indented by `indent`.
pub(crate) fn finding_items(o: &mut String, list: &[Finding], indent: &str) {
    for g in group(list) {
        let _ = write!(o, "{indent}- **{}** ({}): {}", g.rule, g.severity.label(), html(&g.who()));
        match &g.evidence[..] {
            [one] => {
                let _ = write!(o, "{}", html(one));
            }
            many => {
                for e in many {
                    let _ = write!(o, "  \n{indent}  {}", html(e));
                }
            }
        }
        let _ = writeln!(o, "  \n{indent}  Fix: {}", html(g.fix));
    }
}

/// The routine clock and P-state changes of a host, counted.
fn routine(o: &mut String, h: &HostSummary, counts: &[RoutineCount]) {
    let lines = routine_lines(&h.name, counts);
    for l in &lines {
        let _ = writeln!(o, "- {l}");
    }
    if !lines.is_empty() {
        o.push('\n');
    }
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
        let _ =
            writeln!(o, "\n{} more events (all in `--format json`).", total - EVENTS_SHOWN as u64);
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
        let _ = writeln!(
            o,
            "- `{}` ({}, {} rows)",
            gpumon_util::show(&i.path),
            i.kind,
            count(Some(i.rows as f64))
        );
        for w in &i.warnings {
            let _ = writeln!(o, "  - warning: {}", html(w));
        }
    }
    for l in crate::read_as(s) {
        let _ = writeln!(o, "- {}", html(&l));
    }
    for (p, why) in &s.skipped {
        let _ = writeln!(o, "- skipped {}: {}", code(&p.to_string_lossy()), html(why));
    }
}

pub(crate) fn render(s: &Summary) -> String {
    let mut o = String::new();
    header(&mut o, s);
    recordings(&mut o, s);
    work(&mut o, s);
    host_sections(&mut o, s, "##");
    events(&mut o, s);
    users(&mut o, s);
    inputs(&mut o, s);
    o
}

/// Several recordings among the inputs: said before anything is read as one run.
fn recordings(o: &mut String, s: &Summary) {
    let note = gpumon_schema::recordings_note(&s.inputs);
    if let Some((head, rest)) = note.split_first() {
        let _ = writeln!(o, "> **{head}**");
        for l in rest {
            let _ = writeln!(o, "> - {l}");
        }
        o.push('\n');
    }
}

/// The job's work counters, a line each (`gpumon progress`), and its command and exit code.
fn work(o: &mut String, s: &Summary) {
    for l in crate::progress::lines(&s.progress).into_iter().chain(crate::job_lines(s)) {
        let _ = writeln!(o, "{l}\n");
    }
}

/// A section per host (GPU table, notes, host figures, findings) under `level` headings.
pub(crate) fn host_sections(o: &mut String, s: &Summary, level: &str) {
    for h in &s.hosts {
        let _ = writeln!(o, "{level} Host {}\n", code(&h.name));
        if !h.gpus.is_empty() {
            gpu_table(o, h);
            gpu_notes(o, h);
        }
        routine(o, h, &s.routine_events);
        if h.has_host_data {
            host_table(o, h);
        }
        findings(o, h);
    }
}
