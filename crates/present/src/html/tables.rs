//! The report's tables and findings, rendered from the [`Summary`] (the same one `summarize` prints),
//! not from a second analysis. Columns that are empty for every row (a log without temperatures)
//! are left out.

use std::fmt::Write;

use crate::compact::{self, Group, gpu_list};
use crate::html::axis::group;
use crate::html::escape::esc;
use crate::ts;
use gpumon_analysis::{CheckResult, GpuSummary, HostSummary, Stat, StatValues, Summary};
use gpumon_schema::InputInfo;
use gpumon_schema::catalog::Field;

fn fmt(v: Option<f64>, digits: usize) -> Option<String> {
    v.map(|x| group(&format!("{x:.digits$}")))
}

type Cell<'a, T> = Box<dyn Fn(&T) -> Option<String> + 'a>;

/// A column of a [`table`].
struct Col<'a, T> {
    head: &'a str,
    /// The header's title attribute.
    title: &'a str,
    /// Left-aligned (text), else right-aligned (numbers).
    left: bool,
    cell: Cell<'a, T>,
}

/// A column: header, title attribute, left-aligned, cell.
fn col<'a, T>(head: &'a str, title: &'a str, left: bool, cell: Cell<'a, T>) -> Col<'a, T> {
    Col { head, title, left, cell }
}

/// A table over `rows`, empty columns dropped.
fn table<T>(class: &str, rows: &[T], cols: Vec<Col<'_, T>>) -> String {
    let cells: Vec<Vec<Option<String>>> =
        rows.iter().map(|r| cols.iter().map(|c| (c.cell)(r)).collect()).collect();
    let keep: Vec<usize> =
        (0..cols.len()).filter(|&i| cells.iter().any(|r| r[i].is_some())).collect();
    let mut s = format!(r#"<div class="scroll"><table class="{class}"><thead><tr>"#);
    for &i in &keep {
        let Col { head, title, left, .. } = &cols[i];
        let cls = if *left { r#" class="l""# } else { "" };
        let _ = write!(s, r#"<th{cls} title="{}">{head}</th>"#, esc(title));
    }
    s.push_str("</tr></thead><tbody>");
    for r in &cells {
        s.push_str("<tr>");
        for &i in &keep {
            let cls = if cols[i].left { r#" class="l""# } else { "" };
            let _ =
                write!(s, "<td{cls}>{}</td>", r[i].as_deref().map_or_else(|| "–".to_string(), esc));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
    s
}

/// A row of the GPU table: the host's name and the GPU.
type GpuRow<'a> = (&'a str, &'a GpuSummary);

fn gpu_stat<'a>(stat: Stat, digits: usize) -> Cell<'a, GpuRow<'a>> {
    Box::new(move |(_, g): &GpuRow<'_>| fmt(g.stats.get(stat), digits))
}

fn host_stat<'a>(stat: Stat, digits: usize) -> Cell<'a, &'a HostSummary> {
    Box::new(move |h: &&HostSummary| fmt(h.stats.get(stat), digits))
}

/// The GPU table's statistic columns.
fn gpu_stat_cols<'a>() -> Vec<Col<'a, GpuRow<'a>>> {
    vec![
        col("samples", "", false, gpu_stat(Stat::Samples, 0)),
        col(
            "span",
            "last minus first sample",
            false,
            Box::new(|(_, g): &GpuRow<'_>| g.stats.get(Stat::SpanS).map(crate::dur)),
        ),
        col("interval s", "median step between samples", false, gpu_stat(Stat::IntervalS, 3)),
        col("coverage %", "share of the span not in gaps", false, gpu_stat(Stat::CoveragePct, 1)),
        col(
            "gaps",
            "steps longer than gap_intervals × the interval",
            false,
            gpu_stat(Stat::Gaps, 0),
        ),
        col("util mean %", "utilization.gpu", false, gpu_stat(Stat::mean(Field::UtilGpu), 1)),
        col("p50", "", false, gpu_stat(Stat::p50(Field::UtilGpu), 0)),
        col("p95", "", false, gpu_stat(Stat::p95(Field::UtilGpu), 0)),
        col("max", "", false, gpu_stat(Stat::max(Field::UtilGpu), 0)),
        col("idle %", "share of samples below idle_util", false, gpu_stat(Stat::IdlePct, 1)),
        col("mem peak MiB", "memory.used.max", false, gpu_stat(Stat::max(Field::MemUsed), 0)),
        col("of total %", "memory.used.max_pct", false, gpu_stat(Stat::MemoryUsedMaxPct, 1)),
        col("power mean W", "", false, gpu_stat(Stat::mean(Field::PowerDraw), 1)),
        col("max W", "", false, gpu_stat(Stat::max(Field::PowerDraw), 1)),
        col("energy Wh", "", false, gpu_stat(Stat::EnergyWh, 1)),
        col("temp max °C", "", false, gpu_stat(Stat::max(Field::TempGpu), 0)),
        col("power-capped %", "throttle.power_pct", false, gpu_stat(Stat::ThrottlePowerPct, 1)),
        col("thermal %", "throttle.thermal_pct", false, gpu_stat(Stat::ThrottleThermalPct, 1)),
        col("input-bound %", "input_bound_pct", false, gpu_stat(Stat::InputBoundPct, 1)),
        col(
            "job GPU MiB",
            "job.gpu_memory.max",
            false,
            gpu_stat(Stat::max(Field::JobGpuMemory), 0),
        ),
    ]
}

/// One row per GPU of every host.
pub(crate) fn gpu_table(s: &Summary) -> String {
    let multi = s.hosts.len() > 1;
    let rows: Vec<GpuRow<'_>> =
        s.hosts.iter().flat_map(|h| h.gpus.iter().map(|g| (h.name.as_str(), g))).collect();
    // One model everywhere: said once above the table instead of in every row.
    let mut names: Vec<&str> = rows.iter().filter_map(|(_, g)| g.name.as_deref()).collect();
    names.dedup();
    let common = (names.len() == 1 && rows.iter().all(|(_, g)| g.name.is_some()))
        .then(|| names[0].to_string());
    let mut cols: Vec<Col<'_, GpuRow<'_>>> = Vec::new();
    if multi {
        cols.push(col("host", "", true, Box::new(|(h, _): &GpuRow<'_>| Some(h.to_string()))));
    }
    cols.push(col(
        "GPU",
        "index, or uuid",
        true,
        Box::new(|(_, g): &GpuRow<'_>| Some(g.label.clone())),
    ));
    cols.push(col(
        "name",
        "",
        true,
        Box::new(|(_, g): &GpuRow<'_>| g.name.clone().filter(|_| common.is_none())),
    ));
    cols.extend(gpu_stat_cols());
    let caption = common
        .as_ref()
        .map_or(String::new(), |n| format!(r#"<p class="note">Every GPU: {}</p>"#, esc(n)));
    format!("{caption}{}", table("gpus", &rows, cols))
}

/// One row per host with host fields.
pub(crate) fn host_table(s: &Summary) -> Option<String> {
    let rows: Vec<&HostSummary> = s.hosts.iter().filter(|h| h.has_host_data).collect();
    if rows.is_empty() {
        return None;
    }
    let cols: Vec<Col<'_, &HostSummary>> = vec![
        col("host", "", true, Box::new(|h: &&HostSummary| Some(h.name.clone()))),
        col("ticks", "", false, host_stat(Stat::Ticks, 0)),
        col(
            "CPU mean %",
            "cpu.util: % of all cores",
            false,
            host_stat(Stat::mean(Field::CpuUtil), 1),
        ),
        col("p95", "", false, host_stat(Stat::p95(Field::CpuUtil), 1)),
        col("max", "", false, host_stat(Stat::max(Field::CpuUtil), 1)),
        col(
            "busiest core mean %",
            "cpu.util.max_core",
            false,
            host_stat(Stat::mean(Field::CpuUtilMaxCore), 1),
        ),
        col("p95", "", false, host_stat(Stat::p95(Field::CpuUtilMaxCore), 1)),
        col("max", "", false, host_stat(Stat::max(Field::CpuUtilMaxCore), 1)),
        col("RAM peak MiB", "mem.used.max", false, host_stat(Stat::max(Field::HostMemUsed), 0)),
        col("total MiB", "mem.total", false, host_stat(Stat::MemTotal, 0)),
        col("%", "mem.used.max_pct", false, host_stat(Stat::MemUsedMaxPct, 1)),
        col("swap max MiB", "", false, host_stat(Stat::max(Field::SwapUsed), 0)),
        col(
            "job CPU mean %",
            "job.cpu: % of one core",
            false,
            host_stat(Stat::mean(Field::JobCpu), 1),
        ),
        col("max", "", false, host_stat(Stat::max(Field::JobCpu), 1)),
        col("job RSS mean MiB", "job.rss", false, host_stat(Stat::mean(Field::JobRss), 0)),
        col("max", "", false, host_stat(Stat::max(Field::JobRss), 0)),
    ];
    Some(table("hosts", &rows, cols))
}

/// The findings of every host, errors first, then warnings, then info; each rule once with the GPUs
/// it holds for.
pub(super) fn findings(s: &Summary) -> String {
    if s.hosts.iter().all(|h| h.findings.is_empty()) {
        return r#"<p class="note" id="no-findings">No findings: nothing in the data met a rule's condition.</p>"#
            .into();
    }
    let mut out = String::from(r#"<ul class="findings">"#);
    let mut all: Vec<Group<'_>> =
        s.hosts.iter().flat_map(|h| compact::group(&h.findings)).collect();
    all.sort_by_key(|g| std::cmp::Reverse(g.severity as u8));
    for g in &all {
        finding_item(&mut out, g, true);
    }
    out.push_str("</ul>");
    out
}

/// One grouped finding as a list item: severity, rule, host and GPUs, evidence, and its fix when `fix`.
pub(crate) fn finding_item(out: &mut String, g: &Group<'_>, fix: bool) {
    let sev = g.severity.label();
    let who = if g.gpus.is_empty() {
        g.host.to_string()
    } else {
        format!("{} {}", g.host, gpu_list(&g.gpus))
    };
    // The instants the evidence names: the interactive charts zoom to them on a click.
    let span = evidence_span(&g.evidence)
        .map_or(String::new(), |(a, b)| format!(r#" data-from="{a}" data-to="{b}""#));
    let _ = write!(
        out,
        r#"<li class="{}" data-rule="{}"{span}><span class="sev">{}</span><b>{}</b> · {}: {}"#,
        esc(sev),
        esc(g.rule),
        esc(sev),
        esc(g.rule),
        esc(&who),
        g.evidence.iter().map(|e| esc(e)).collect::<Vec<_>>().join("<br>"),
    );
    if fix {
        let _ = write!(out, r#"<br><span class="fix">Fix: {}</span>"#, esc(g.fix));
    }
    out.push_str("</li>");
}

/// The first and last `YYYY-MM-DD HH:MM:SS UTC` instant (UTC µs) the evidence names, if any; one
/// instant is a span of one second.
pub(crate) fn evidence_span(evidence: &[String]) -> Option<(i64, i64)> {
    let mut span: Option<(i64, i64)> = None;
    for e in evidence {
        for (i, _) in e.match_indices(" UTC") {
            let Some(text) = i.checked_sub(19).and_then(|from| e.get(from..i)) else { continue };
            let Ok(t) = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S") else {
                continue;
            };
            let us = t.and_utc().timestamp_micros();
            span = Some(span.map_or((us, us), |(a, b)| (a.min(us), b.max(us))));
        }
    }
    span.map(|(a, b)| (a, b.max(a + 1_000_000)))
}

/// The NVML events of the recording with what each Xid means, when there are any.
pub(super) fn events(s: &Summary) -> Option<String> {
    if s.events.is_empty() {
        return None;
    }
    let mut t = String::from(
        r#"<table class="events"><thead><tr><th class="l">time (UTC)</th><th class="l">host</th><th>GPU</th><th class="l">event</th><th class="l">meaning</th><th class="l">usual action</th></tr></thead><tbody>"#,
    );
    for e in &s.events {
        let _ = write!(
            t,
            r#"<tr data-ts="{}"><td class="l">{}</td><td class="l">{}</td><td>{}</td><td class="l">{}</td><td class="w">{}</td><td class="w">{}</td></tr>"#,
            e.ts,
            crate::ts(e.ts),
            esc(&e.host),
            e.gpu.map_or_else(|| "-".to_string(), |g| g.to_string()),
            esc(&e.label()),
            esc(&e.meaning()),
            esc(e.action().unwrap_or(""))
        );
    }
    t.push_str("</tbody></table>");
    if s.events_more > 0 {
        let _ = write!(t, r#"<p class="note">{} more events are not listed.</p>"#, s.events_more);
    }
    Some(t)
}

/// GPU use per user from the per-process rows, when there are any.
pub(super) fn users(s: &Summary) -> Option<String> {
    if s.users.is_empty() {
        return None;
    }
    let mut t = String::from(
        r#"<table class="users"><thead><tr><th class="l">host</th><th>GPU</th><th class="l">user</th><th>processes</th><th class="l">from (UTC)</th><th class="l">to</th><th>SM mean %</th><th>memory mean MiB</th><th>memory peak MiB</th></tr></thead><tbody>"#,
    );
    for u in &s.users {
        let _ = write!(
            t,
            r#"<tr><td class="l">{}</td><td>{}</td><td class="l">{}</td><td>{}</td><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            esc(&u.host),
            u.gpu.map_or_else(|| "-".to_string(), |g| g.to_string()),
            esc(&u.user),
            u.procs,
            crate::ts(u.first),
            crate::ts(u.last),
            crate::num(u.sm_mean, 1),
            crate::count(u.mem_mean),
            crate::count(u.mem_max)
        );
    }
    t.push_str("</tbody></table>");
    Some(t)
}

/// The `--fail-if` checks, when there are any.
pub(super) fn checks(checks: &[CheckResult]) -> Option<String> {
    if checks.is_empty() {
        return None;
    }
    let mut s = String::from(
        r#"<table class="checks"><thead><tr><th class="l">check</th><th class="l">result</th><th class="l">failures</th></tr></thead><tbody>"#,
    );
    for c in checks {
        let passed = c.failures.is_empty();
        let failures: Vec<String> = c.failures.iter().map(|f| esc(f)).collect();
        let _ = write!(
            s,
            r#"<tr><td class="l">{}</td><td class="l {}">{}</td><td class="w">{}</td></tr>"#,
            esc(&c.check),
            if passed { "pass" } else { "fail" },
            if passed { "passed" } else { "failed" },
            failures.join("<br>")
        );
    }
    s.push_str("</tbody></table>");
    Some(s)
}

/// Inputs listed one by one at most; the rest are counted (all are in the embedded JSON).
const MAX_INPUT_ROWS: usize = 200;

/// The files read, what they held and what was wrong with them; files skipped.
pub(super) fn inputs(s: &Summary) -> String {
    let cols: Vec<Col<'_, InputInfo>> = vec![
        col("file", "", true, Box::new(|i: &InputInfo| Some(i.path.display().to_string()))),
        col("kind", "", true, Box::new(|i: &InputInfo| Some(i.kind.to_string()))),
        col("rows", "", false, Box::new(|i: &InputInfo| fmt(Some(i.rows as f64), 0))),
        col(
            "host",
            "host of rows without one",
            true,
            Box::new(|i: &InputInfo| Some(i.default_host.clone())),
        ),
        col(
            "columns",
            "catalogue fields present",
            true,
            Box::new(|i: &InputInfo| {
                Some(i.fields.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "))
            }),
        ),
        col(
            "notes and warnings",
            "",
            true,
            Box::new(|i: &InputInfo| {
                let w: Vec<&str> = i.warnings.iter().chain(&i.notes).map(String::as_str).collect();
                (!w.is_empty()).then(|| w.join("; "))
            }),
        ),
    ];
    let shown = &s.inputs[..s.inputs.len().min(MAX_INPUT_ROWS)];
    let mut out = table("inputs", shown, cols).replace("<td class=\"l\">", "<td class=\"l w\">");
    if s.inputs.len() > shown.len() {
        let rest = &s.inputs[shown.len()..];
        let warned = rest.iter().filter(|i| !i.warnings.is_empty()).count();
        let _ = write!(
            out,
            r#"<p class="note" id="more-inputs">… and {} more input(s), {warned} of them with warnings (all are listed in the embedded JSON).</p>"#,
            rest.len()
        );
    }
    if !s.skipped.is_empty() {
        out.push_str(r#"<p class="note">Not read:</p><ul class="note">"#);
        for (path, why) in s.skipped.iter().take(MAX_INPUT_ROWS) {
            let _ = write!(out, "<li>{}: {}</li>", esc(&path.display().to_string()), esc(why));
        }
        if s.skipped.len() > MAX_INPUT_ROWS {
            let _ = write!(out, "<li>… and {} more</li>", s.skipped.len() - MAX_INPUT_ROWS);
        }
        out.push_str("</ul>");
    }
    out
}

/// Over-all figures under the title.
pub(crate) fn overview(s: &Summary) -> String {
    let all: &StatValues = &s.all_gpus;
    let mut out = String::new();
    let mut line = format!("<b>{}</b> GPU(s) on <b>{}</b> host(s)", s.gpu_count(), s.hosts.len());
    if let Some(n) = all.get(Stat::Samples) {
        let _ = write!(line, ", {} GPU samples", group(&format!("{n:.0}")));
    }
    if let Some(u) = all.get(Stat::mean(Field::UtilGpu)) {
        let _ = write!(line, "; utilization mean <b>{u:.1} %</b>");
    }
    if let Some(i) = all.get(Stat::IdlePct) {
        let _ = write!(line, ", idle {i:.1} % of samples");
    }
    if let Some(e) = all.get(Stat::EnergyWh) {
        let _ = write!(line, "; energy {} Wh", group(&format!("{e:.0}")));
    }
    let _ = write!(out, r#"<p class="meta">{line}</p>"#);
    let gpumon_analysis::TimeWindow { since, until } = s.window;
    if since.is_some() || until.is_some() {
        let _ = write!(
            out,
            r#"<p class="meta">Window: from {} until {} (UTC); {} rows outside it left out.</p>"#,
            since.map_or("the start".into(), ts),
            until.map_or("the end".into(), ts),
            group(&s.windowed_out.to_string())
        );
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn evidence_span_takes_the_first_and_last_instant() {
        let ev = vec![
            "from 2026-01-02 03:04:05 UTC to 2026-01-02 03:14:05 UTC: stretches".to_string(),
            "peak at 2026-01-02 02:00:00 UTC".to_string(),
        ];
        let t = |s: &str| {
            chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
                .unwrap()
                .and_utc()
                .timestamp_micros()
        };
        assert_eq!(evidence_span(&ev), Some((t("2026-01-02 02:00:00"), t("2026-01-02 03:14:05"))));
        let one = vec!["no reading after 2026-01-02 03:04:05 UTC".to_string()];
        let a = t("2026-01-02 03:04:05");
        assert_eq!(evidence_span(&one), Some((a, a + 1_000_000)));
        assert_eq!(evidence_span(&["GPU 3 is 40 % below the others (UTC)".to_string()]), None);
    }
    use super::*;
    use gpumon_analysis::Scope;
    use gpumon_analysis::{Finding, Severity};

    fn summary() -> Summary {
        let mut gs = StatValues::empty(Scope::Gpu);
        gs.set(Stat::Samples, Some(1200.0));
        gs.set(Stat::mean(Field::UtilGpu), Some(55.25));
        let gpu = GpuSummary {
            label: "0".into(),
            index: Some(0),
            mig_gi: None,
            uuid: None,
            name: Some("H100".into()),
            start: 0,
            end: 1,
            gaps: vec![],
            energy_method: None,
            stats: gs.clone(),
        };
        let finding = Finding {
            rule: "imbalance",
            severity: Severity::Warning,
            host: "<n1>".into(),
            gpu: Some("3".into()),
            evidence: "GPU 3 at 10% vs 90%".into(),
            fix: "check the <sampler>",
        };
        let host = HostSummary {
            name: "<n1>".into(),
            gpus: vec![gpu],
            stats: StatValues::empty(Scope::Host),
            has_host_data: false,
            findings: vec![finding],
        };
        Summary {
            hosts: vec![host],
            all_gpus: gs,
            start: Some(0),
            end: Some(1),
            ..Summary::default()
        }
    }

    #[test]
    fn tables_escape_and_drop_empty_columns() {
        let s = summary();
        let t = gpu_table(&s);
        assert!(t.contains("<td>55.2</td>") || t.contains("<td>55.3</td>"), "{t}");
        assert!(t.contains("Every GPU: H100"), "{t}");
        assert!(!t.contains("temp max"), "an all-null column is dropped");
        assert!(host_table(&s).is_none());
        let f = findings(&s);
        assert!(f.contains("&lt;n1&gt; GPU 3") && f.contains("&lt;sampler&gt;"), "{f}");
        assert!(checks(&[]).is_none());
        let c = checks(&[CheckResult { check: "a < 1".into(), failures: vec!["x <b>".into()] }])
            .unwrap_or_default();
        assert!(c.contains("failed") && c.contains("x &lt;b&gt;"), "{c}");
        assert!(overview(&s).contains("<b>1</b> GPU(s)"));
    }
}
