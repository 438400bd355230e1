//! The report's tables and findings, rendered from the summary's JSON value (the shape of
//! docs/summary-json.md, exactly what `summarize --format json` prints), not from a second analysis.
//! Columns that are empty for every row (a log without temperatures) are left out.

use std::fmt::Write;

use serde_json::Value;

use crate::present::html::axis::group;
use crate::present::html::markup::esc;

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get("stats").and_then(|s| s.get(key)).and_then(Value::as_f64)
}

fn fmt(v: Option<f64>, digits: usize) -> Option<String> {
    v.map(|x| group(&format!("{x:.digits$}")))
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

/// `2026-01-05T10:00:00.000Z` → `2026-01-05 10:00:00`.
pub fn short_time(rfc: &str) -> String {
    rfc.get(..19).map_or_else(|| rfc.to_string(), |s| s.replace('T', " "))
}

type Cell<'a> = Box<dyn Fn(&Value) -> Option<String> + 'a>;

/// A table over `rows`: (header, title attribute, left-aligned, cell) columns, empty ones dropped.
fn table(class: &str, rows: &[Value], cols: Vec<(&str, &str, bool, Cell<'_>)>) -> String {
    let cells: Vec<Vec<Option<String>>> = rows.iter().map(|r| cols.iter().map(|c| (c.3)(r)).collect()).collect();
    let keep: Vec<usize> = (0..cols.len()).filter(|&i| cells.iter().any(|r| r[i].is_some())).collect();
    let mut s = format!(r#"<div class="scroll"><table class="{class}"><thead><tr>"#);
    for &i in &keep {
        let (h, title, left, _) = &cols[i];
        let cls = if *left { r#" class="l""# } else { "" };
        let _ = write!(s, r#"<th{cls} title="{}">{h}</th>"#, esc(title));
    }
    s.push_str("</tr></thead><tbody>");
    for r in &cells {
        s.push_str("<tr>");
        for &i in &keep {
            let cls = if cols[i].2 { r#" class="l""# } else { "" };
            let _ = write!(s, "<td{cls}>{}</td>", r[i].as_deref().map_or_else(|| "–".to_string(), esc));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
    s
}

fn stat<'a>(key: &'a str, digits: usize) -> Cell<'a> {
    Box::new(move |g: &Value| fmt(num(g, key), digits))
}

/// One row per GPU of every host.
pub fn gpu_table(j: &Value) -> String {
    let hosts = j["hosts"].as_array().cloned().unwrap_or_default();
    let multi = hosts.len() > 1;
    let mut rows = Vec::new();
    for h in &hosts {
        for g in h["gpus"].as_array().into_iter().flatten() {
            let mut g = g.clone();
            if let Some(o) = g.as_object_mut() {
                o.insert("_host".into(), h["host"].clone());
            }
            rows.push(g);
        }
    }
    // One model everywhere: said once above the table instead of in every row.
    let mut names: Vec<&str> = rows.iter().filter_map(|g| g["name"].as_str()).collect();
    names.dedup();
    let common = (names.len() == 1 && rows.iter().all(|g| g["name"].is_string())).then(|| names[0].to_string());
    let mut cols: Vec<(&str, &str, bool, Cell<'_>)> = Vec::new();
    if multi {
        cols.push(("host", "", true, Box::new(|g: &Value| Some(text(g, "_host")))));
    }
    cols.extend([
        ("GPU", "index, or uuid", true, Box::new(|g: &Value| Some(text(g, "gpu"))) as Cell<'_>),
        ("name", "", true, Box::new(|g: &Value| g["name"].as_str().filter(|_| common.is_none()).map(str::to_string))),
        ("samples", "", false, stat("samples", 0)),
        ("span", "last minus first sample", false, Box::new(|g: &Value| num(g, "span_s").map(crate::present::dur))),
        ("interval s", "median step between samples", false, stat("interval_s", 3)),
        ("coverage %", "share of the span not in gaps", false, stat("coverage_pct", 1)),
        ("gaps", "steps longer than gap_intervals × the interval", false, stat("gaps", 0)),
        ("util mean %", "utilization.gpu", false, stat("utilization.gpu.mean", 1)),
        ("p50", "", false, stat("utilization.gpu.p50", 0)),
        ("p95", "", false, stat("utilization.gpu.p95", 0)),
        ("max", "", false, stat("utilization.gpu.max", 0)),
        ("idle %", "share of samples below idle_util", false, stat("utilization.gpu.idle_pct", 1)),
        ("mem peak MiB", "memory.used.max", false, stat("memory.used.max", 0)),
        ("of total %", "memory.used.max_pct", false, stat("memory.used.max_pct", 1)),
        ("power mean W", "", false, stat("power.draw.mean", 1)),
        ("max W", "", false, stat("power.draw.max", 1)),
        ("energy Wh", "", false, stat("energy_wh", 1)),
        ("temp max °C", "", false, stat("temperature.gpu.max", 0)),
        ("power-capped %", "throttle.power_pct", false, stat("throttle.power_pct", 1)),
        ("thermal %", "throttle.thermal_pct", false, stat("throttle.thermal_pct", 1)),
        ("input-bound %", "input_bound_pct", false, stat("input_bound_pct", 1)),
        ("job GPU MiB", "job.gpu_memory.max", false, stat("job.gpu_memory.max", 0)),
    ]);
    let caption = common.as_ref().map_or(String::new(), |n| format!(r#"<p class="note">Every GPU: {}</p>"#, esc(n)));
    format!("{caption}{}", table("gpus", &rows, cols))
}

/// One row per host with host fields.
pub fn host_table(j: &Value) -> Option<String> {
    let rows: Vec<Value> =
        j["hosts"].as_array().into_iter().flatten().filter(|h| !h["stats"].is_null()).cloned().collect();
    if rows.is_empty() {
        return None;
    }
    let cols: Vec<(&str, &str, bool, Cell<'_>)> = vec![
        ("host", "", true, Box::new(|h: &Value| Some(text(h, "host")))),
        ("ticks", "", false, stat("ticks", 0)),
        ("CPU mean %", "cpu.util: % of all cores", false, stat("cpu.util.mean", 1)),
        ("p95", "", false, stat("cpu.util.p95", 1)),
        ("max", "", false, stat("cpu.util.max", 1)),
        ("busiest core mean %", "cpu.util.max_core", false, stat("cpu.util.max_core.mean", 1)),
        ("p95", "", false, stat("cpu.util.max_core.p95", 1)),
        ("max", "", false, stat("cpu.util.max_core.max", 1)),
        ("RAM peak MiB", "mem.used.max", false, stat("mem.used.max", 0)),
        ("total MiB", "mem.total", false, stat("mem.total", 0)),
        ("%", "mem.used.max_pct", false, stat("mem.used.max_pct", 1)),
        ("swap max MiB", "", false, stat("swap.used.max", 0)),
        ("job CPU mean %", "job.cpu: % of one core", false, stat("job.cpu.mean", 1)),
        ("max", "", false, stat("job.cpu.max", 1)),
        ("job RSS mean MiB", "job.rss", false, stat("job.rss.mean", 0)),
        ("max", "", false, stat("job.rss.max", 0)),
    ];
    Some(table("hosts", &rows, cols))
}

/// The findings of every host, warnings first.
pub fn findings(j: &Value) -> String {
    let mut all: Vec<&Value> = j["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|h| h["findings"].as_array().into_iter().flatten())
        .collect();
    all.sort_by_key(|f| f["severity"].as_str() != Some("warning"));
    if all.is_empty() {
        return r#"<p class="note" id="no-findings">No findings: nothing in the data met a rule's condition.</p>"#
            .into();
    }
    let mut s = String::from(r#"<ul class="findings">"#);
    for f in all {
        let sev = text(f, "severity");
        let who = match f["gpu"].as_str() {
            Some(g) => format!("{} GPU {g}", text(f, "host")),
            None => text(f, "host"),
        };
        let _ = write!(
            s,
            r#"<li class="{}" data-rule="{}"><span class="sev">{}</span><b>{}</b> · {}: {}<br><span class="fix">Fix: {}</span></li>"#,
            esc(&sev),
            esc(&text(f, "rule")),
            esc(&sev),
            esc(&text(f, "rule")),
            esc(&who),
            esc(&text(f, "evidence")),
            esc(&text(f, "fix")),
        );
    }
    s.push_str("</ul>");
    s
}

/// The `--fail-if` checks, when there are any.
pub fn checks(j: &Value) -> Option<String> {
    let checks = j["checks"].as_array().filter(|c| !c.is_empty())?;
    let mut s = String::from(
        r#"<table class="checks"><thead><tr><th class="l">check</th><th class="l">result</th><th class="l">failures</th></tr></thead><tbody>"#,
    );
    for c in checks {
        let passed = c["passed"].as_bool().unwrap_or(false);
        let failures: Vec<String> =
            c["failures"].as_array().into_iter().flatten().filter_map(Value::as_str).map(esc).collect();
        let _ = write!(
            s,
            r#"<tr><td class="l">{}</td><td class="l {}">{}</td><td class="w">{}</td></tr>"#,
            esc(&text(c, "check")),
            if passed { "pass" } else { "fail" },
            if passed { "passed" } else { "failed" },
            failures.join("<br>")
        );
    }
    s.push_str("</tbody></table>");
    Some(s)
}

/// The files read, what they held and what was wrong with them; files skipped.
/// Inputs listed one by one at most; the rest are counted (all are in the embedded JSON).
const MAX_INPUT_ROWS: usize = 200;

pub fn inputs(j: &Value) -> String {
    let all = j["inputs"].as_array().cloned().unwrap_or_default();
    let rows: Vec<Value> = all.iter().take(MAX_INPUT_ROWS).cloned().collect();
    let cols: Vec<(&str, &str, bool, Cell<'_>)> = vec![
        ("file", "", true, Box::new(|i: &Value| Some(text(i, "path")))),
        ("kind", "", true, Box::new(|i: &Value| Some(text(i, "kind")))),
        ("rows", "", false, Box::new(|i: &Value| fmt(i["rows"].as_f64(), 0))),
        ("host", "host of rows without one", true, Box::new(|i: &Value| Some(text(i, "host")))),
        (
            "columns",
            "catalogue fields present",
            true,
            Box::new(|i: &Value| {
                let c: Vec<&str> = i["columns"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                Some(c.join(", "))
            }),
        ),
        (
            "notes and warnings",
            "",
            true,
            Box::new(|i: &Value| {
                let w: Vec<String> = ["warnings", "notes"]
                    .iter()
                    .flat_map(|k| i[*k].as_array().into_iter().flatten().filter_map(Value::as_str))
                    .map(str::to_string)
                    .collect();
                (!w.is_empty()).then(|| w.join("; "))
            }),
        ),
    ];
    let mut s = table("inputs", &rows, cols).replace("<td class=\"l\">", "<td class=\"l w\">");
    if all.len() > rows.len() {
        let more = all.len() - rows.len();
        let warned =
            all[rows.len()..].iter().filter(|i| i["warnings"].as_array().is_some_and(|w| !w.is_empty())).count();
        let _ = write!(
            s,
            r#"<p class="note" id="more-inputs">… and {more} more input(s), {warned} of them with warnings (all are listed in the embedded JSON).</p>"#
        );
    }
    let skipped = j["skipped"].as_array().cloned().unwrap_or_default();
    if !skipped.is_empty() {
        s.push_str(r#"<p class="note">Not read:</p><ul class="note">"#);
        for k in skipped.iter().take(MAX_INPUT_ROWS) {
            let _ = write!(s, "<li>{}: {}</li>", esc(&text(k, "path")), esc(&text(k, "reason")));
        }
        if skipped.len() > MAX_INPUT_ROWS {
            let _ = write!(s, "<li>… and {} more</li>", skipped.len() - MAX_INPUT_ROWS);
        }
        s.push_str("</ul>");
    }
    s
}

/// Over-all figures under the title.
pub fn overview(j: &Value) -> String {
    let all = &j["all"]["gpus"];
    let stat = |k: &str| all.get(k).and_then(Value::as_f64);
    let hosts = j["hosts"].as_array().map_or(0, Vec::len);
    let gpus: usize =
        j["hosts"].as_array().into_iter().flatten().map(|h| h["gpus"].as_array().map_or(0, Vec::len)).sum();
    let mut s = String::new();
    let mut line = format!("<b>{gpus}</b> GPU(s) on <b>{hosts}</b> host(s)");
    if let Some(n) = stat("samples") {
        let _ = write!(line, ", {} GPU samples", group(&format!("{n:.0}")));
    }
    if let Some(u) = stat("utilization.gpu.mean") {
        let _ = write!(line, "; utilization mean <b>{u:.1} %</b>");
    }
    if let Some(i) = stat("utilization.gpu.idle_pct") {
        let _ = write!(line, ", idle {i:.1} % of samples");
    }
    if let Some(e) = stat("energy_wh") {
        let _ = write!(line, "; energy {} Wh", group(&format!("{e:.0}")));
    }
    let _ = write!(s, r#"<p class="meta">{line}</p>"#);
    let w = &j["window"];
    if !w["since"].is_null() || !w["until"].is_null() {
        let _ = write!(
            s,
            r#"<p class="meta">Window: from {} until {} (UTC); {} rows outside it left out.</p>"#,
            w["since"].as_str().map_or("the start".into(), short_time),
            w["until"].as_str().map_or("the end".into(), short_time),
            group(&w["rows_left_out"].as_u64().unwrap_or(0).to_string())
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_from_json_escape_and_drop_empty_columns() {
        let j = json!({
            "hosts": [{"host": "<n1>", "stats": null, "findings": [
                {"rule": "imbalance", "severity": "warning", "host": "<n1>", "gpu": "3",
                 "evidence": "GPU 3 at 10% vs 90%", "fix": "check the <sampler>"}],
              "gpus": [{"gpu": "0", "name": "H100", "stats": {"samples": 1200, "utilization.gpu.mean": 55.25,
                        "temperature.gpu.max": null}}]}],
            "all": {"gpus": {"samples": 1200}, "hosts": null},
            "inputs": [], "skipped": [], "checks": [], "window": {"since": null, "until": null}
        });
        let t = gpu_table(&j);
        assert!(t.contains("<td>55.2</td>") || t.contains("<td>55.3</td>"), "{t}");
        assert!(!t.contains("temp max"), "an all-null column is dropped");
        assert!(host_table(&j).is_none());
        let f = findings(&j);
        assert!(f.contains("&lt;n1&gt; GPU 3") && f.contains("&lt;sampler&gt;"), "{f}");
        assert!(checks(&j).is_none());
        assert!(overview(&j).contains("<b>1</b> GPU(s)"));
        assert_eq!(short_time("2026-01-05T10:00:00.000Z"), "2026-01-05 10:00:00");
    }
}
