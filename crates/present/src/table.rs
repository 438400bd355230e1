//! The default report: aligned plain text that fits 80 columns. One block per host (GPU table, GPM
//! activity, gaps, clock events, host figures, findings grouped over GPUs), then the over-all line, the NVML events with what each Xid
//! means, GPU use per user, and what was read.

use std::fmt::Write;

use crate::compact::{group, routine_lines};
use crate::{count, dur, num, throttle_list, ts, wrap};
use gpumon_analysis::{Finding, GpuSummary, HostSummary, RoutineCount, Stat, StatValues, Summary};
use gpumon_schema::catalog::{Field, Reduce, Source};

const WIDTH: usize = 80;

struct Col {
    group: &'static str,
    head: &'static str,
    left: bool,
    cells: Vec<String>,
}

fn col(group: &'static str, head: &'static str, cells: Vec<String>) -> Col {
    Col { group, head, left: false, cells }
}

fn grid(cols: &[Col]) -> String {
    let mut widths: Vec<usize> = cols
        .iter()
        .map(|c| c.cells.iter().map(|s| s.chars().count()).chain([c.head.len()]).max().unwrap_or(0))
        .collect();
    let gap = |i: usize| if i > 0 && cols[i].group != cols[i - 1].group { 2 } else { 1 };
    // Widen the first column of a group whose label is wider than its columns.
    for i in 0..cols.len() {
        if cols[i].group.trim().is_empty() || (i > 0 && cols[i - 1].group == cols[i].group) {
            continue;
        }
        let span: usize = (i..cols.len())
            .take_while(|&j| cols[j].group == cols[i].group)
            .map(|j| widths[j] + if j > i { gap(j) } else { 0 })
            .sum();
        if span < cols[i].group.len() {
            widths[i] += cols[i].group.len() - span;
        }
    }
    let mut out = String::new();
    // Group line: each group label starts over its first column.
    let mut line = String::new();
    let mut pos = 0;
    for (i, c) in cols.iter().enumerate() {
        let start = pos + if i > 0 { gap(i) } else { 0 };
        if !c.group.is_empty() && (i == 0 || cols[i - 1].group != c.group) {
            let span: usize = (i..cols.len())
                .take_while(|&j| cols[j].group == c.group)
                .map(|j| widths[j] + if j > i { gap(j) } else { 0 })
                .sum();
            while line.chars().count() < start {
                line.push(' ');
            }
            let label: String = c.group.chars().take(span).collect();
            line.push_str(&format!("{label:^span$}"));
        }
        pos = start + widths[i];
    }
    if !line.trim().is_empty() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let row = |get: &dyn Fn(&Col) -> String| -> String {
        let mut l = String::new();
        for (i, c) in cols.iter().enumerate() {
            if i > 0 {
                l.push_str(&" ".repeat(gap(i)));
            }
            let v = get(c);
            let w = widths[i];
            if c.left {
                let _ = write!(l, "{v:<w$}");
            } else {
                let _ = write!(l, "{v:>w$}");
            }
        }
        l.trim_end().to_string()
    };
    out.push_str(&row(&|c| c.head.to_string()));
    out.push('\n');
    let n = cols.first().map_or(0, |c| c.cells.len());
    for r in 0..n {
        out.push_str(&row(&|c| c.cells[r].clone()));
        out.push('\n');
    }
    out
}

fn gpu_table(h: &HostSummary) -> String {
    let g = |stat: Stat, d: usize| -> Vec<String> {
        h.gpus.iter().map(|x| num(x.stats.get(stat), d)).collect()
    };
    let mut gpu =
        col("", "GPU", h.gpus.iter().map(|x| x.label.chars().take(12).collect()).collect());
    gpu.left = true;
    let cols = vec![
        gpu,
        col("utilization %", "mean", g(Stat::mean(Field::UtilGpu), 1)),
        col("utilization %", "p50", g(Stat::p50(Field::UtilGpu), 0)),
        col("utilization %", "p95", g(Stat::p95(Field::UtilGpu), 0)),
        col("utilization %", "max", g(Stat::max(Field::UtilGpu), 0)),
        col("utilization %", "idle", g(Stat::IdlePct, 1)),
        col(
            "memory MiB",
            "peak",
            h.gpus.iter().map(|x| count(x.stats.get(Stat::max(Field::MemUsed)))).collect(),
        ),
        col("memory MiB", "%", g(Stat::MemoryUsedMaxPct, 1)),
        col("power W", "mean", g(Stat::mean(Field::PowerDraw), 1)),
        col("power W", "max", g(Stat::max(Field::PowerDraw), 1)),
        col("", "Wh", h.gpus.iter().map(|x| energy(x.stats.get(Stat::EnergyWh))).collect()),
        col(" ", "temp C", g(Stat::max(Field::TempGpu), 0)),
    ];
    grid(&cols)
}

fn energy(wh: Option<f64>) -> String {
    match wh {
        Some(v) if v >= 1000.0 => count(Some(v)),
        v => num(v, 1),
    }
}

/// A line wrapped to the report's width.
pub(crate) fn line(out: &mut String, text: &str) {
    out.push_str(&wrap(text, WIDTH, 4));
    out.push('\n');
}

fn host_lines(out: &mut String, s: &StatValues) {
    let cpu = format!(
        "  CPU: mean {}%, p95 {}%, max {}%; busiest core mean {}%, p95 {}%",
        num(s.get(Stat::mean(Field::CpuUtil)), 1),
        num(s.get(Stat::p95(Field::CpuUtil)), 1),
        num(s.get(Stat::max(Field::CpuUtil)), 1),
        num(s.get(Stat::mean(Field::CpuUtilMaxCore)), 1),
        num(s.get(Stat::p95(Field::CpuUtilMaxCore)), 1)
    );
    line(out, &cpu);
    let ram = format!(
        "  RAM: peak {} MiB ({}% of {} MiB); swap peak {} MiB",
        count(s.get(Stat::max(Field::HostMemUsed))),
        num(s.get(Stat::MemUsedMaxPct), 1),
        count(s.get(Stat::MemTotal)),
        count(s.get(Stat::max(Field::SwapUsed)))
    );
    line(out, &ram);
    let jobs: Vec<String> = s
        .iter()
        .filter_map(|(stat, v)| match stat {
            Stat::Field(f, Reduce::Mean)
                if v.is_some() && matches!(f.def().source, Source::Job | Source::Cgroup) =>
            {
                let unit = f.def().unit;
                let (mean, max) = (in_unit(v, unit), in_unit(s.get(Stat::max(f)), unit));
                Some(format!("{f} mean {mean} max {max}"))
            }
            _ => None,
        })
        .collect();
    if !jobs.is_empty() {
        line(out, &format!("  Job: {}", jobs.join("; ")));
    }
}

/// A figure in its catalogue unit, for people: `12.5%`, `2.7 MiB` / `3.1 GiB`, `8.0 KiB/s`,
/// `1.5 cores`; a count (no unit) whole when it is whole (`2`, `1.7`).
pub(crate) fn in_unit(v: Option<f64>, unit: &str) -> String {
    let Some(x) = v else { return "-".into() };
    let scaled = |x: f64, units: &[&str]| {
        let (mut x, mut k) = (x, 0);
        while x.abs() >= 1024.0 && k + 1 < units.len() {
            x /= 1024.0;
            k += 1;
        }
        format!("{x:.1} {}", units[k])
    };
    match unit {
        "%" => format!("{x:.1}%"),
        "MiB" => scaled(x, &["MiB", "GiB", "TiB"]),
        "B/s" => scaled(x, &["B/s", "KiB/s", "MiB/s", "GiB/s"]),
        "" if x.fract() == 0.0 => count(Some(x)),
        "" => num(Some(x), 1),
        u => format!("{x:.1} {u}"),
    }
}

/// The GPUs of a host: span, models, the table, how energy was found.
fn gpu_block(out: &mut String, h: &HostSummary) {
    let samples: f64 = h.gpus.iter().filter_map(|g| g.stats.get(Stat::Samples)).sum();
    let intervals: Vec<f64> = h.gpus.iter().filter_map(|g| g.stats.get(Stat::IntervalS)).collect();
    let interval = intervals.iter().copied().fold(f64::NAN, f64::min);
    let start = h.gpus.iter().map(|g| g.start).min().unwrap_or(0);
    let end = h.gpus.iter().map(|g| g.end).max().unwrap_or(0);
    line(
        out,
        &format!(
            "  {} GPU(s){}, {} samples, {} to {} UTC ({}), interval {}",
            h.gpus.iter().filter(|g| g.mig_gi.is_none()).count(),
            match h.gpus.iter().filter(|g| g.mig_gi.is_some()).count() {
                0 => String::new(),
                n => format!(" and {n} MIG instance(s)"),
            },
            count(Some(samples)),
            ts(start),
            ts(end),
            dur((end - start) as f64 * 1e-6),
            if interval.is_nan() { "-".into() } else { dur(interval) }
        ),
    );
    let whole: Vec<&GpuSummary> = h.gpus.iter().filter(|g| g.mig_gi.is_none()).collect();
    let names: Vec<&str> = whole.iter().filter_map(|g| g.name.as_deref()).collect();
    if !names.is_empty() {
        if names.iter().all(|n| *n == names[0]) && names.len() == whole.len() {
            line(out, &format!("  {} x {}", names.len(), names[0]));
        } else {
            for g in &whole {
                if let Some(n) = &g.name {
                    line(out, &format!("  GPU {}: {n}", g.label));
                }
            }
        }
    }
    let profiles: Vec<String> = h
        .gpus
        .iter()
        .filter(|g| g.mig_gi.is_some())
        .map(|g| {
            format!(
                "{} {}",
                g.label,
                g.name.as_deref().and_then(|n| n.rsplit_once(" MIG ")).map_or("", |p| p.1)
            )
        })
        .collect();
    if !profiles.is_empty() {
        line(out, &format!("  MIG instances: {}", profiles.join(", ")));
    }
    out.push('\n');
    for l in gpu_table(h).lines() {
        let _ = writeln!(out, "  {l}");
    }
    if let Some(t) = activity_table(h) {
        out.push('\n');
        for l in t.lines() {
            let _ = writeln!(out, "  {l}");
        }
    }
    let methods: Vec<&str> = h.gpus.iter().filter_map(|g| g.energy_method).collect();
    if methods.contains(&"power") {
        line(out, "  Wh: power.draw integrated over the sample spacing, gaps left out");
    } else if !methods.is_empty() {
        line(out, "  Wh: from the energy.total counter");
    }
}

/// Gaps and clock events of each GPU of a host.
fn gpu_notes(out: &mut String, h: &HostSummary) {
    for g in &h.gpus {
        let gaps = g.stats.get(Stat::Gaps).unwrap_or(0.0);
        if gaps > 0.0 {
            let longest = g.gaps.iter().max_by_key(|x| x.end - x.start);
            let l = longest.map_or(String::new(), |x| {
                format!(", longest {} from {}", dur((x.end - x.start) as f64 * 1e-6), ts(x.start))
            });
            line(
                out,
                &format!(
                    "  GPU {}: {} gap(s) totalling {}{l}; coverage {}%",
                    g.label,
                    count(Some(gaps)),
                    dur(g.stats.get(Stat::GapS).unwrap_or(0.0)),
                    num(g.stats.get(Stat::CoveragePct), 1)
                ),
            );
        }
        let thr = throttle_list(&g.stats);
        if !thr.is_empty() {
            line(
                out,
                &format!("  GPU {} clock events (share of samples): {}", g.label, thr.join(", ")),
            );
        }
    }
}

/// One host: its GPUs, gaps, clock events and routine event counts, host figures and findings.
pub(crate) fn host_block(out: &mut String, h: &HostSummary, routine: &[RoutineCount]) {
    let _ = writeln!(out, "Host {}", h.name);
    if !h.gpus.is_empty() {
        gpu_block(out, h);
        gpu_notes(out, h);
    }
    for l in routine_lines(&h.name, routine) {
        line(out, &format!("  {l}"));
    }
    if h.has_host_data {
        host_lines(out, &h.stats);
    }
    if h.findings.is_empty() {
        out.push_str("  No findings.\n");
    } else {
        out.push_str("  Findings:\n");
        findings(out, &h.findings, true);
    }
}

/// Findings grouped over the GPUs they hold for, each with its fix when `fixes`.
pub(crate) fn findings(out: &mut String, list: &[Finding], fixes: bool) {
    for g in group(list) {
        let head = format!("  [{}] {} - {}", g.severity.label(), g.rule, g.who());
        match &g.evidence[..] {
            [one] => line(out, &format!("{head}{one}")),
            many => {
                line(out, head.trim_end().trim_end_matches(':'));
                for e in many {
                    line(out, &format!("      {e}"));
                }
            }
        }
        if fixes {
            line(out, &format!("      fix: {}", g.fix));
        }
    }
}

/// The GPM activity of each GPU (mean and max of sm.active, tensor.active, dram.active), when recorded.
fn activity_table(h: &HostSummary) -> Option<String> {
    let fields = [Field::SmActive, Field::TensorActive, Field::DramActive];
    if !h.gpus.iter().any(|g| fields.iter().any(|&f| g.stats.get(Stat::mean(f)).is_some())) {
        return None;
    }
    let g =
        |stat: Stat| -> Vec<String> { h.gpus.iter().map(|x| num(x.stats.get(stat), 1)).collect() };
    let mut gpu =
        col("", "GPU", h.gpus.iter().map(|x| x.label.chars().take(12).collect()).collect());
    gpu.left = true;
    let mut cols = vec![gpu];
    for (f, group) in fields.into_iter().zip(["sm.active %", "tensor.active %", "dram.active %"]) {
        cols.push(col(group, "mean", g(Stat::mean(f))));
        cols.push(col(group, "max", g(Stat::max(f))));
    }
    Some(grid(&cols))
}

/// Events listed in the text report; the JSON report has them all.
const EVENTS_SHOWN: usize = 20;

/// The NVML events of the recording, each Xid with its meaning and usual action.
fn events_block(out: &mut String, s: &Summary) {
    if s.events.is_empty() {
        return;
    }
    out.push('\n');
    let total = s.events.len() as u64 + s.events_more;
    line(
        out,
        &format!(
            "NVML events ({}, from the events file beside the recording):",
            count(Some(total as f64))
        ),
    );
    for e in s.events.iter().take(EVENTS_SHOWN) {
        let gpu = e.gpu.map_or_else(|| "GPU ?".to_string(), |g| format!("GPU {g}"));
        line(out, &format!("  {} UTC, {}, {gpu}: {}", ts(e.ts), e.host, e.label()));
        line(out, &format!("      {}", e.meaning()));
        if let Some(a) = e.action() {
            line(out, &format!("      action: {a}"));
        }
    }
    if total > EVENTS_SHOWN as u64 {
        line(
            out,
            &format!(
                "  ... {} more (all in --format json)",
                count(Some((total - EVENTS_SHOWN as u64) as f64))
            ),
        );
    }
}

/// GPU use per user from the per-process rows.
fn users_block(out: &mut String, s: &Summary) {
    if s.users.is_empty() {
        return;
    }
    out.push('\n');
    line(
        out,
        "GPU use by user (--processes rows; SM % and memory are the user's processes added up per tick):",
    );
    let u = &s.users;
    let mut host = col("", "host", u.iter().map(|x| x.host.chars().take(12).collect()).collect());
    host.left = true;
    let mut user = col("", "user", u.iter().map(|x| x.user.chars().take(12).collect()).collect());
    user.left = true;
    let cols = vec![
        host,
        col("", "GPU", u.iter().map(|x| x.gpu.map_or("-".into(), |g| g.to_string())).collect()),
        user,
        col("", "procs", u.iter().map(|x| count(Some(x.procs as f64))).collect()),
        col("", "time", u.iter().map(|x| dur((x.last - x.first) as f64 * 1e-6)).collect()),
        col("SM %", "mean", u.iter().map(|x| num(x.sm_mean, 1)).collect()),
        col("memory MiB", "mean", u.iter().map(|x| count(x.mem_mean)).collect()),
        col("memory MiB", "peak", u.iter().map(|x| count(x.mem_max)).collect()),
    ];
    for l in grid(&cols).lines() {
        let _ = writeln!(out, "  {l}");
    }
}

pub(crate) fn render(s: &Summary) -> String {
    let mut out = String::new();
    let span = match (s.start, s.end) {
        (Some(a), Some(b)) => {
            format!(", {} to {} UTC ({})", ts(a), ts(b), dur((b - a) as f64 * 1e-6))
        }
        _ => String::new(),
    };
    let mig = match s.mig_count() {
        0 => String::new(),
        n => format!(" ({n} MIG instance(s))"),
    };
    line(
        &mut out,
        &format!("gpumon summary: {} host(s), {} GPU(s){mig}{span}", s.hosts.len(), s.gpu_count()),
    );
    for (n, l) in gpumon_schema::recordings_note(&s.inputs).iter().enumerate() {
        line(&mut out, &if n == 0 { l.clone() } else { format!("  {l}") });
    }
    if s.window.is_bounded() {
        line(
            &mut out,
            &format!(
                "window: {} to {} UTC ({} rows left out)",
                s.window.since.map_or("start".into(), ts),
                s.window.until.map_or("end".into(), ts),
                count(Some(s.windowed_out as f64))
            ),
        );
    }
    for l in crate::progress::lines(&s.progress).into_iter().chain(crate::job_lines(s)) {
        line(&mut out, &l);
    }
    for h in &s.hosts {
        out.push('\n');
        host_block(&mut out, h, &s.routine_events);
    }
    if s.gpu_count() > 1 {
        let a = &s.all_gpus;
        out.push('\n');
        line(
            &mut out,
            &format!(
                "All GPUs: utilization mean {}%, p95 {}%, idle {}% of samples; energy {} Wh",
                num(a.get(Stat::mean(Field::UtilGpu)), 1),
                num(a.get(Stat::p95(Field::UtilGpu)), 0),
                num(a.get(Stat::IdlePct), 1),
                energy(a.get(Stat::EnergyWh))
            ),
        );
    }
    events_block(&mut out, s);
    users_block(&mut out, s);
    let rows: u64 = s.inputs.iter().map(|i| i.rows).sum();
    let warnings: usize = s.inputs.iter().map(|i| i.warnings.len()).sum();
    out.push('\n');
    let mut read =
        format!("Read {} input file(s), {} rows", s.inputs.len(), count(Some(rows as f64)));
    if warnings > 0 {
        let _ = write!(read, "; {warnings} warning(s) on stderr");
    }
    if !s.skipped.is_empty() {
        let _ = write!(read, "; {} file(s) skipped", s.skipped.len());
    }
    line(&mut out, &read);
    for l in crate::read_as(s) {
        line(&mut out, &format!("  {l}"));
    }
    out
}
