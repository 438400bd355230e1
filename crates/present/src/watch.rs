//! One frame of `gpumon watch`: the recording's state, its job and phase, one line per GPU with bars
//! and numbers (utilization, SM active where recorded, memory, power, temperature), the host's CPU and
//! RAM, and the findings so far; fitted to a terminal of `width` x `height` (80x24 and up), plain
//! ASCII so that any terminal and `tmux capture-pane` show it alike.

use chrono::{DateTime, Utc};

use crate::{count, dur};
use gpumon_analysis::Finding;
use gpumon_schema::LiveStatus;
use gpumon_util::escape;

/// Whether the recording is going on, as far as `watch` can tell.
#[derive(Debug, Clone, PartialEq)]
pub enum Liveness {
    /// Its recorder is alive and wrote lately.
    Recording,
    /// Its process is alive but the file has not changed for this many seconds.
    Stale(f64),
    /// Not being recorded, and why (the run ended; the recorder is gone).
    Gone(String),
}

impl Liveness {
    /// Whether the recording of `st` is going on: its recorder alive (seen from `host`) and writing
    /// lately (at `now`).
    pub fn of(st: &LiveStatus, host: &str, now: DateTime<Utc>) -> Liveness {
        if !st.recorder_alive(host) {
            return Liveness::Gone(format!(
                "its recorder (pid {}) is gone: killed or crashed",
                st.pid
            ));
        }
        let age = DateTime::parse_from_rfc3339(&st.updated).map_or(f64::INFINITY, |t| {
            (now - t.with_timezone(&Utc)).num_milliseconds() as f64 / 1000.0
        });
        if age > (5.0 * st.interval_s).max(5.0) {
            Liveness::Stale(age)
        } else {
            Liveness::Recording
        }
    }
}

/// What a frame shows besides the status document.
#[derive(Debug, Clone)]
pub struct View<'a> {
    /// The recording's path, as the title shows it.
    pub path: &'a str,
    /// Whether it is being recorded.
    pub live: Liveness,
    /// The findings so far, or why there are none to show; None while the first look at the data
    /// is under way.
    pub findings: Option<Result<&'a [Finding], &'a str>>,
    /// When the frame is drawn.
    pub now: DateTime<Utc>,
    /// The key line at the bottom (interactive only).
    pub keys: bool,
    /// The document is the last tick read from the data (no counters, no marks to tell).
    pub from_file: bool,
}

fn hms(rfc: Option<&str>) -> String {
    rfc.and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map_or_else(|| "-".into(), |t| t.format("%H:%M:%S").to_string())
}

fn since(rfc: &str, now: DateTime<Utc>) -> Option<f64> {
    DateTime::parse_from_rfc3339(rfc)
        .ok()
        .map(|t| (now - t.with_timezone(&Utc)).num_milliseconds() as f64 / 1000.0)
}

/// `[####......]` for `v` of `max` in `w` cells.
fn bar(v: Option<f64>, max: Option<f64>, w: usize) -> String {
    let fill = match (v, max) {
        (Some(v), Some(m)) if m > 0.0 => ((v / m).clamp(0.0, 1.0) * w as f64).round() as usize,
        _ => 0,
    };
    format!("[{}{}]", "#".repeat(fill), ".".repeat(w - fill))
}

/// `v` rounded to a whole number, `-` when missing.
fn whole_number(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.0}"))
}

/// `v` with one decimal, `-` when missing.
fn one_decimal(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.1}"))
}

/// Control and bidirectional characters escaped (every text of the frame comes from a file another
/// program wrote), then cut to `w` characters.
fn fit(s: String, w: usize) -> String {
    let s = match escape(&s) {
        std::borrow::Cow::Borrowed(_) => s,
        std::borrow::Cow::Owned(e) => e,
    };
    if s.chars().count() <= w { s } else { s.chars().take(w).collect() }
}

/// Like [`fit`], but a line too long is cut at the last space that fits and ends with `…`, so no
/// word is cut in two (a single word wider than the line is cut where it must).
fn fit_words(s: String, w: usize) -> String {
    let s = fit(s, usize::MAX);
    if s.chars().count() <= w {
        return s;
    }
    let head: String = s.chars().take(w.saturating_sub(1)).collect();
    // The cut already falls between words when the next character is a space; else back to the
    // last space, unless that leaves less than a third of the line (one long token: cut it).
    let cut = if s[head.len()..].starts_with(' ') {
        head.len()
    } else {
        head.rfind(' ').filter(|&i| i > head.len() / 3).unwrap_or(head.len())
    };
    format!("{}…", head[..cut].trim_end())
}

/// Which columns of a GPU line get a bar (the narrowest terminals leave some out).
const BAR_UTIL: u8 = 1;
const BAR_MEM: u8 = 2;
const BAR_POWER: u8 = 4;

/// One GPU line; the columns in `bars` get bars of `b` cells (SM active shares utilization's).
fn gpu_line(st: &LiveStatus, i: usize, b: usize, bars: u8, sm: bool) -> String {
    let bar_if =
        |on: u8, v, m| if bars & on != 0 { format!("{} ", bar(v, m, b)) } else { String::new() };
    let mut label = st
        .text(i, "index")
        .or_else(|| st.text(i, "uuid").map(|u| u.chars().take(8).collect()))
        .unwrap_or_default();
    // A MIG instance's row: its GPU instance and profile after its GPU's index.
    if let Some(gi) = st.text(i, "mig.gi") {
        label = format!("{label}/gi{gi} {}", st.text(i, "mig.profile").unwrap_or_default());
    }
    let util = st.num(i, "utilization.gpu");
    let mut s = format!(
        "GPU {label:<2} util {}{:>3}%",
        bar_if(BAR_UTIL, util, Some(100.0)),
        whole_number(util)
    );
    if sm {
        let a = st.num(i, "sm.active");
        s.push_str(&format!("  SM {}{:>3}%", bar_if(BAR_UTIL, a, Some(100.0)), whole_number(a)));
    }
    let (used, total) = (st.num(i, "memory.used"), st.num(i, "memory.total"));
    s.push_str(&format!(
        "  mem {}{}/{} MiB",
        bar_if(BAR_MEM, used, total),
        whole_number(used),
        whole_number(total)
    ));
    let (p, limit) = (st.num(i, "power.draw"), st.num(i, "power.limit"));
    s.push_str(&format!(
        "  power {}{}/{} W",
        bar_if(BAR_POWER, p, limit),
        one_decimal(p),
        whole_number(limit)
    ));
    s.push_str(&format!("  {} C", whole_number(st.num(i, "temperature.gpu"))));
    s
}

/// The GPU lines with the widest bars that fit `width` (3 to 30 cells); a narrow terminal drops the
/// power bar, then the memory bar. SM active is shown where recorded.
fn gpu_lines(st: &LiveStatus, width: usize) -> Vec<String> {
    let gpus: Vec<usize> = (0..st.rows.len())
        .filter(|&i| st.text(i, "index").is_some() || st.text(i, "uuid").is_some())
        .collect();
    let sm = gpus.iter().any(|&i| st.num(i, "sm.active").is_some());
    let widest = |b: usize, bars: u8| {
        gpus.iter().map(|&i| gpu_line(st, i, b, bars, sm).chars().count()).max()
    };
    let choice = [BAR_UTIL | BAR_MEM | BAR_POWER, BAR_UTIL | BAR_MEM, BAR_UTIL]
        .into_iter()
        .find(|&bars| widest(3, bars).is_some_and(|w| w <= width))
        .unwrap_or(0);
    let n = (choice.count_ones() + u32::from(sm && choice & BAR_UTIL != 0)) as usize;
    let b = match widest(0, choice) {
        Some(w) if n > 0 => (width.saturating_sub(w) / n).clamp(3, 30),
        _ => 3,
    };
    gpus.iter().map(|&i| fit(gpu_line(st, i, b, choice, sm), width)).collect()
}

/// The host's CPU and RAM, and the job's figures, from the first row.
fn host_lines(st: &LiveStatus, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let cpu = st.num(0, "cpu.util");
    if cpu.is_some() || st.num(0, "mem.used").is_some() {
        let (used, total) = (st.num(0, "mem.used"), st.num(0, "mem.total"));
        let b = (width.saturating_sub(60) / 2).clamp(3, 30);
        out.push(format!(
            "host CPU {} {}%  busiest core {}%  RAM {} {}/{} MiB",
            bar(cpu, Some(100.0), b),
            one_decimal(cpu),
            whole_number(st.num(0, "cpu.util.max_core")),
            bar(used, total, b),
            whole_number(used),
            whole_number(total)
        ));
    }
    if let Some(c) = st.num(0, "job.cpu") {
        out.push(format!(
            "job  CPU {c:.0}% of a core  RSS {} MiB  processes {}  threads {}",
            count(st.num(0, "job.rss")),
            whole_number(st.num(0, "job.procs")),
            whole_number(st.num(0, "job.threads"))
        ));
    }
    let job_gpu: Vec<f64> =
        (0..st.rows.len()).filter_map(|i| st.num(i, "job.gpu_memory")).collect();
    if !job_gpu.is_empty() {
        out.push(format!("job  GPU memory {} MiB", whole_number(Some(job_gpu.iter().sum()))));
    }
    out.into_iter().map(|l| fit(l, width)).collect()
}

/// Most GPU processes listed: the rest are counted on one line.
const PROCS_SHOWN: usize = 4;

/// The GPU processes of the latest row (`record --processes`), the largest GPU memory first, the
/// job's marked with `*`; nothing when none was recorded.
fn proc_lines(st: &LiveStatus, width: usize) -> Vec<String> {
    if st.procs.is_empty() {
        return Vec::new();
    }
    let mut procs: Vec<_> = st.procs.iter().collect();
    procs.sort_by_key(|p| std::cmp::Reverse(p.memory_mib.unwrap_or(0)));
    let mut out = vec!["     pid  user          GPU   memory MiB   SM %".to_string()];
    let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |x| x.to_string());
    for p in procs.iter().take(PROCS_SHOWN) {
        out.push(format!(
            "{}{:>7}  {:<12}  {:>3}  {:>11}  {:>5}",
            if p.job { '*' } else { ' ' },
            p.pid,
            p.user.as_deref().unwrap_or("?").chars().take(12).collect::<String>(),
            opt(p.gpu),
            opt(p.memory_mib),
            opt(p.sm_pct)
        ));
    }
    if procs.len() > PROCS_SHOWN {
        out.push(format!("  ... {} more process(es)", procs.len() - PROCS_SHOWN));
    }
    if procs.iter().any(|p| p.job) {
        out.push("  (* in the recorded job)".to_string());
    }
    out.into_iter().map(|l| fit(l, width)).collect()
}

/// The first lines: what is watched and whether it is being recorded, the job, the phase, the counters.
fn head(st: &LiveStatus, v: &View<'_>, width: usize) -> Vec<String> {
    let state = match &v.live {
        Liveness::Recording => {
            format!("recording (pid {} on {}), interval {}", st.pid, st.host, dur(st.interval_s))
        }
        Liveness::Stale(s) => {
            format!(
                "STALE: no update for {} (pid {} on {} is alive but silent)",
                dur(*s),
                st.pid,
                st.host
            )
        }
        Liveness::Gone(why) => {
            format!("NOT BEING RECORDED: {why}; last frame from {} UTC", hms(st.ts.as_deref()))
        }
    };
    let phase = match (&st.phase, &st.phase_since) {
        _ if v.from_file => {
            format!("phase {} (of the last row)", st.phase.as_deref().unwrap_or("-"))
        }
        (Some(p), Some(t)) => {
            let long = since(t, v.now).map_or(String::new(), |s| format!(" ({})", dur(s.max(0.0))));
            format!("phase {p} since {} UTC{long}; {} mark(s)", hms(Some(t)), st.marks)
        }
        (Some(p), None) => format!("phase {p}"),
        (None, _) if st.control.is_some() => {
            format!("phase - (none marked; {} mark(s) so far)", st.marks)
        }
        (None, _) => "phase - (this run takes no marks)".to_string(),
    };
    let phase = match st.marks_dropped {
        0 => phase,
        n => format!("{phase}; {n} refused (too many or too fast)"),
    };
    let counters = if v.from_file {
        format!("last row {} UTC, read from the file", hms(st.ts.as_deref()))
    } else {
        format!(
            "ticks {}  late {}  missed {}  dropped {}  last row {} UTC",
            count(Some(st.ticks as f64)),
            st.late,
            st.missed,
            st.dropped,
            hms(st.ts.as_deref())
        )
    };
    let mut lines = vec![
        format!("gpumon watch {}", v.path),
        state,
        phase,
        format!("job {}", st.job.as_deref().unwrap_or("-")),
        counters,
    ];
    lines.extend(crate::progress::watch_line(&st.progress));
    lines.into_iter().map(|l| fit(l, width)).collect()
}

/// The findings so far, one line each.
fn finding_lines(v: &View<'_>, width: usize) -> Vec<String> {
    match v.findings {
        None => vec!["findings so far: (reading the recording...)".into()],
        Some(Err(why)) => vec![fit(format!("findings so far: none yet ({why})"), width)],
        Some(Ok([])) => vec!["findings so far: none".into()],
        Some(Ok(list)) => std::iter::once(format!("findings so far: {}", list.len()))
            .chain(list.iter().map(|f| {
                let who = f.gpu.as_ref().map_or(String::new(), |g| format!("GPU {g}: "));
                fit_words(
                    format!("  [{}] {} - {who}{}", f.severity.label(), f.rule, f.evidence),
                    width,
                )
            }))
            .collect(),
    }
}

/// The frame while there is nothing to show yet of the recording at `path` (no status file at
/// `status`, no recorded rows), its lines cut to `width` characters.
pub fn waiting(path: &str, status: &str, width: usize) -> Vec<String> {
    let lines = vec![
        format!("gpumon watch {path}"),
        format!("waiting for the recording: no {status} yet"),
        format!("(start it with gpumon record -o {path} ...)"),
        String::new(),
        "q or Ctrl-C quits".into(),
    ];
    lines.into_iter().map(|l| l.chars().take(width).collect()).collect()
}

/// One frame, at most `height` lines of at most `width` characters.
pub fn frame(st: &LiveStatus, v: &View<'_>, width: usize, height: usize) -> Vec<String> {
    let width = width.max(20);
    let mut top = head(st, v, width);
    top.push(String::new());
    let gpus = gpu_lines(st, width);
    let mut bottom = vec![String::new()];
    bottom.extend(host_lines(st, width));
    bottom.extend(proc_lines(st, width));
    let mut found = finding_lines(v, width);
    // Room for the GPUs first, then the findings; each list says what it left out.
    let fixed = top.len() + bottom.len() + 1 + 2 * usize::from(v.keys);
    let room = height.saturating_sub(fixed);
    let (gpu_room, rest) = if gpus.len() <= room {
        (gpus.len(), room - gpus.len())
    } else {
        (room.saturating_sub(1), 0)
    };
    let mut out = top;
    out.extend(gpus.iter().take(gpu_room).cloned());
    if gpu_room < gpus.len() {
        out.push(format!(
            "... {} more GPU(s): a taller terminal shows them",
            gpus.len() - gpu_room
        ));
    }
    out.extend(bottom);
    if found.len() > rest + 1 {
        // The first line is the count; the findings that fit follow it.
        let shown = rest.max(1) - 1;
        found.truncate(shown + 1);
        if let Some(first) = found.first_mut() {
            first.push_str(&match shown {
                0 => " (a taller terminal lists them)".to_string(),
                n => format!(" ({n} shown; a taller terminal shows all)"),
            });
        }
    }
    out.extend(found);
    if v.keys {
        out.push(String::new());
        out.push("q or Ctrl-C quits".into());
    }
    out.truncate(height);
    out.into_iter().map(|l| fit(l, width)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn status(gpus: usize) -> LiveStatus {
        let rows = (0..gpus)
            .map(|i| {
                let mut r = BTreeMap::new();
                r.insert("index".to_string(), serde_json::json!(i));
                r.insert("utilization.gpu".to_string(), serde_json::json!(55));
                r.insert("memory.used".to_string(), serde_json::json!(20480));
                r.insert("memory.total".to_string(), serde_json::json!(81920));
                r.insert("power.draw".to_string(), serde_json::json!(260.5));
                r.insert("power.limit".to_string(), serde_json::json!(700.0));
                r.insert("temperature.gpu".to_string(), serde_json::json!(61));
                r.insert("cpu.util".to_string(), serde_json::json!(40.0));
                r.insert("mem.used".to_string(), serde_json::json!(12000));
                r.insert("mem.total".to_string(), serde_json::json!(24000));
                r
            })
            .collect();
        LiveStatus {
            pid: 42,
            host: "vm".into(),
            interval_s: 1.0,
            phase: Some("bs=64".into()),
            phase_since: Some("2026-01-05T10:00:00.000Z".into()),
            control: Some("/x/.run.parquet.ctl".into()),
            marks: 2,
            updated: "2026-01-05T10:02:00.000Z".into(),
            ts: Some("2026-01-05T10:02:00.000Z".into()),
            rows,
            ..Default::default()
        }
    }

    fn view(live: Liveness) -> View<'static> {
        let now = DateTime::parse_from_rfc3339("2026-01-05T10:02:09Z").unwrap().with_timezone(&Utc);
        View {
            path: "run.parquet",
            live,
            findings: Some(Ok(&[])),
            now,
            keys: true,
            from_file: false,
        }
    }

    #[test]
    fn long_lines_are_cut_between_words() {
        let l =
            "  [info] batch_headroom - GPU 0: memory.used peak 1.2% of memory.total".to_string();
        assert_eq!(fit_words(l.clone(), 80), l);
        assert_eq!(fit_words(l.clone(), 40), "  [info] batch_headroom - GPU 0:…");
        assert_eq!(fit_words(l.clone(), 34), "  [info] batch_headroom - GPU 0:…");
        assert_eq!(fit_words("x".repeat(30), 10), format!("{}…", "x".repeat(9)));
    }

    #[test]
    fn frames_fit_the_terminal_and_show_the_latest_row() {
        let st = status(2);
        for (w, h) in [(80, 24), (200, 50)] {
            let f = frame(&st, &view(Liveness::Recording), w, h);
            assert!(f.len() <= h && f.iter().all(|l| l.chars().count() <= w), "{f:#?}");
            let text = f.join("\n");
            assert!(text.contains("phase bs=64 since 10:00:00 UTC (2m 09s)"), "{text}");
            assert!(text.contains("GPU 1 "), "{text}");
            for v in [" 55%", "20480/81920 MiB", "260.5/700 W", "61 C", "40.0%", "12000/24000 MiB"]
            {
                assert!(text.contains(v), "{v} in\n{text}");
            }
        }
        let many = frame(&status(40), &view(Liveness::Recording), 80, 24);
        assert_eq!(many.len(), 24);
        assert!(many.iter().any(|l| l.contains("more GPU(s)")), "{many:#?}");
        let mut mig = status(2);
        mig.rows[1].insert("index".to_string(), serde_json::json!(0));
        mig.rows[1].insert("mig.gi".to_string(), serde_json::json!(13));
        mig.rows[1].insert("mig.profile".to_string(), serde_json::json!("1g.10gb"));
        let text = frame(&mig, &view(Liveness::Recording), 200, 50).join("\n");
        assert!(text.contains("GPU 0/gi13 1g.10gb util"), "a MIG instance's line names it: {text}");
        let gone = frame(&st, &view(Liveness::Gone("the run ended".into())), 80, 24);
        assert_eq!(gone[1], "NOT BEING RECORDED: the run ended; last frame from 10:02:00 UTC");
    }

    #[test]
    fn liveness_from_the_recorder_and_the_age_of_the_document() {
        let now = DateTime::parse_from_rfc3339("2026-01-05T10:01:00Z").unwrap().to_utc();
        let mut st = LiveStatus {
            host: "here".into(),
            pid: std::process::id(),
            interval_s: 1.0,
            updated: "2026-01-05T10:00:58Z".into(),
            ..LiveStatus::default()
        };
        assert_eq!(Liveness::of(&st, "here", now), Liveness::Recording);
        st.updated = "2026-01-05T10:00:00Z".into();
        assert_eq!(Liveness::of(&st, "here", now), Liveness::Stale(60.0));
        st.interval_s = 30.0;
        assert_eq!(Liveness::of(&st, "here", now), Liveness::Recording, "5 intervals allowed");
        st.pid = u32::MAX;
        assert!(
            matches!(Liveness::of(&st, "here", now), Liveness::Gone(why) if why.contains("gone"))
        );
        assert_eq!(Liveness::of(&st, "elsewhere", now), Liveness::Recording, "no pid to check");
    }

    #[test]
    fn the_waiting_frame_is_cut_to_the_width() {
        let lines = waiting("runs/a-long-name.parquet", "runs/.a-long-name.parquet.status", 30);
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0], "gpumon watch runs/a-long-name.");
        assert!(lines.iter().all(|l| l.chars().count() <= 30));
    }
}
