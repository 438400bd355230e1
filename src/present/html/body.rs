//! The report's body: header with the time span in UTC and in the report's time zone, findings,
//! tables, the utilization heatmap, then per host its CPU/RAM/job charts and per GPU its
//! utilization, memory, power, temperature and SM clock charts.

use std::fmt::Write;

use chrono::{DateTime, TimeZone, Utc};
use serde_json::Value;

use crate::analysis::series::{Collected, Env, Track};
use crate::present::html::axis::{group, time_ticks};
use crate::present::html::markup::esc;
use crate::present::html::svg::{Chart, Conn, HeatRow, Plot, Style, TimeAxis, chart, heatmap};
use crate::present::html::tables;

/// Where the charts' numbers come from, for one GPU or host.
struct Ctx<'a> {
    axis: &'a TimeAxis,
    charts: usize,
    /// Whether the inputs carry `.max` companion columns (the band then reaches the sub-sample peak).
    has_max: bool,
}

impl Ctx<'_> {
    fn draw(&mut self, out: &mut String, c: Chart<'_>, conn: &Conn<'_>) {
        if let Some(svg) = chart(&c, self.axis, conn) {
            self.charts += 1;
            let _ = write!(out, "<figure>{svg}</figure>");
        }
    }
}

fn plot<'a>(label: &str, env: &'a Env, style: Style, color: u8) -> Plot<'a> {
    Plot { label: label.to_string(), env, style, color }
}

fn conn(t: &Track, interval_s: Option<f64>, gap_k: f64) -> Conn<'_> {
    let gap_us = interval_s.filter(|&i| i > 0.0).map_or(f64::INFINITY, |i| i * gap_k * 1e6);
    Conn { rows: &t.rows, first: &t.first, last: &t.last, gap_us }
}

fn stat(v: &Value, key: &str) -> Option<f64> {
    v.get("stats").and_then(|s| s.get(key)).and_then(Value::as_f64)
}

/// The start and end in UTC and in the report's time zone (`--tz`, else this machine's).
fn time_line(start: i64, end: i64, tz: Option<chrono_tz::Tz>) -> String {
    let utc = |us: i64| {
        DateTime::<Utc>::from_timestamp_micros(us)
            .map_or_else(|| "-".into(), |d| d.format("%Y-%m-%d %H:%M:%S").to_string())
    };
    let local = |us: i64| -> String {
        match tz {
            Some(z) => z.timestamp_micros(us).single().map(|d| d.format("%Y-%m-%d %H:%M:%S %Z (UTC%:z)").to_string()),
            None => {
                chrono::Local.timestamp_micros(us).single().map(|d| d.format("%Y-%m-%d %H:%M:%S (UTC%:z)").to_string())
            }
        }
        .unwrap_or_else(|| "-".into())
    };
    let zone = match tz {
        Some(z) => z.name().to_string(),
        None => std::env::var("TZ")
            .ok()
            .filter(|t| !t.is_empty())
            .map_or("this machine's time zone".into(), |t| format!("this machine's time zone, {t}")),
    };
    format!(
        "Time axes are in UTC. Start <b>{} UTC</b> = {} in {}; end <b>{} UTC</b> = {}; {} long.",
        utc(start),
        esc(&local(start)),
        esc(&zone),
        utc(end),
        esc(&local(end)),
        crate::present::dur((end - start) as f64 / 1e6)
    )
}

/// A chart of `key` (its id is set when drawn).
fn spec<'a>(
    kind: &'static str,
    key: &str,
    title: String,
    axis: (&str, &'static str),
    plots: Vec<Plot<'a>>,
    include: Vec<f64>,
) -> Chart<'a> {
    Chart {
        id: String::new(),
        kind,
        key: key.to_string(),
        title,
        y_label: axis.0.to_string(),
        unit: axis.1,
        plots,
        include,
    }
}

impl Ctx<'_> {
    fn draw_all(&mut self, out: &mut String, charts: Vec<Chart<'_>>, conn: &Conn<'_>) {
        for mut c in charts {
            c.id = format!("c{}-{}", self.charts, c.kind);
            self.draw(out, c, conn);
        }
    }
}

fn gpu_charts(ctx: &mut Ctx<'_>, out: &mut String, host: &str, g: &Value, t: &Track, gap_k: f64) {
    let label = g["gpu"].as_str().unwrap_or("?");
    let key = format!("{host}/{label}");
    let c = conn(t, stat(g, "interval_s"), gap_k);
    let e = &t.env;
    let who = format!("GPU {label}");
    let util = if ctx.has_max { "utilization.gpu (band up to .max)" } else { "utilization.gpu" };
    let mem_total = stat(g, "memory.total");
    let of_total = mem_total.map_or(String::new(), |m| format!(" of {} MiB", group(&format!("{m:.0}"))));
    let charts = vec![
        spec(
            "gpu-util",
            &key,
            format!("{who}: utilization"),
            ("utilization (%)", "%"),
            vec![plot(util, &e[0], Style::Envelope, 0)],
            vec![0.0, 100.0],
        ),
        spec(
            "gpu-mem",
            &key,
            format!("{who}: memory used{of_total}"),
            ("memory (MiB)", "MiB"),
            vec![
                plot("memory.used", &e[1], Style::Envelope, 0),
                plot("job.gpu_memory", &e[3], Style::Line, 1),
                plot("memory.total", &e[2], Style::Limit, 3),
            ],
            [0.0].into_iter().chain(mem_total).collect(),
        ),
        spec(
            "gpu-power",
            &key,
            format!("{who}: power"),
            ("power (W)", "W"),
            vec![plot("power.draw", &e[4], Style::Envelope, 1), plot("power.limit", &e[5], Style::Limit, 3)],
            vec![0.0],
        ),
        spec(
            "gpu-temp",
            &key,
            format!("{who}: temperature"),
            ("temperature (°C)", "C"),
            vec![plot("temperature.gpu", &e[6], Style::Envelope, 2)],
            vec![],
        ),
        spec(
            "gpu-clock",
            &key,
            format!("{who}: SM clock"),
            ("clocks.sm (MHz)", "MHz"),
            vec![plot("clocks.sm", &e[7], Style::Envelope, 0)],
            vec![0.0],
        ),
    ];
    ctx.draw_all(out, charts, &c);
}

fn host_charts(ctx: &mut Ctx<'_>, out: &mut String, host: &str, h: &Value, t: &Track, gap_k: f64) {
    let interval = t.timing.finish(gap_k).interval_s;
    let c = conn(t, interval, gap_k);
    let e = &t.env;
    let ram_total = stat(h, "mem.total");
    let charts = vec![
        spec(
            "host-cpu",
            host,
            format!("{host}: CPU"),
            ("cpu.util (%)", "%"),
            vec![plot("mean of all cores", &e[0], Style::Envelope, 0), plot("busiest core", &e[1], Style::Envelope, 1)],
            vec![0.0, 100.0],
        ),
        spec(
            "host-mem",
            host,
            format!("{host}: RAM"),
            ("mem.used (MiB)", "MiB"),
            vec![plot("mem.used", &e[2], Style::Envelope, 0), plot("mem.total", &e[3], Style::Limit, 3)],
            [0.0].into_iter().chain(ram_total).collect(),
        ),
        spec(
            "job-cpu",
            host,
            format!("{host}: job CPU"),
            ("job.cpu (% of one core)", "%"),
            vec![plot("job.cpu", &e[4], Style::Envelope, 1)],
            vec![0.0],
        ),
        spec(
            "job-rss",
            host,
            format!("{host}: job memory"),
            ("job.rss (MiB)", "MiB"),
            vec![plot("job.rss", &e[5], Style::Envelope, 1)],
            vec![0.0],
        ),
    ];
    ctx.draw_all(out, charts, &c);
}

/// A label of at most `max` characters (uuids are long).
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max { s.to_string() } else { format!("{}…", s.chars().take(max - 1).collect::<String>()) }
}

/// Title of the document: the inputs' file names.
pub fn title(j: &Value) -> String {
    let names: Vec<String> = j["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["path"].as_str())
        .map(|p| std::path::Path::new(p).file_name().map_or(p.to_string(), |n| n.to_string_lossy().into_owned()))
        .collect();
    let more = if names.len() > 3 { format!(" and {} more", names.len() - 3) } else { String::new() };
    format!("gpumon report: {}{more}", names.iter().take(3).cloned().collect::<Vec<_>>().join(", "))
}

/// The body of the report.
/// A note on the GPUs and hosts left without charts (beyond the cap), if any.
fn uncharted(c: &Collected) -> String {
    if c.uncharted.is_empty() {
        return String::new();
    }
    let gpus = c.uncharted.iter().filter(|(_, gpu)| gpu.is_some()).count();
    let hosts = c.uncharted.len() - gpus;
    format!(
        r#"<p class="note" id="uncharted">Charts for the first {} GPUs and hosts only: {gpus} more GPU(s) and {hosts} more host(s) are in the tables above.</p>"#,
        crate::analysis::series::MAX_CHARTED
    )
}

pub fn body(j: &Value, c: &Collected, tz: Option<chrono_tz::Tz>) -> String {
    let grid = c.grid;
    let axis =
        TimeAxis { grid, ticks: time_ticks(grid.start, grid.end, 6), wide_ticks: time_ticks(grid.start, grid.end, 12) };
    let gap_k = j["thresholds"]["gap_intervals"].as_f64().unwrap_or(3.0);
    let has_max = j["inputs"].as_array().into_iter().flatten().any(|i| {
        i["columns"].as_array().into_iter().flatten().any(|c| c.as_str().is_some_and(|s| s.ends_with(".max")))
    });
    let hosts: Vec<&Value> = j["hosts"].as_array().into_iter().flatten().collect();
    let multi = hosts.len() > 1;
    let mut s = String::with_capacity(1 << 20);
    let _ = write!(s, "<header><h1>{}</h1>", esc(&title(j)));
    let _ = write!(s, r#"<p class="meta" id="times">{}</p>"#, time_line(grid.start, grid.end, tz));
    s.push_str(&tables::overview(j));
    s.push_str("</header>");
    s.push_str(r#"<h2 id="findings">Findings</h2>"#);
    s.push_str(&tables::findings(j));
    if let Some(t) = tables::checks(j) {
        let _ = write!(s, "<h3>Checks</h3>{t}");
    }
    let _ = write!(s, r#"<h2 id="gpus">GPUs</h2>{}"#, tables::gpu_table(j));
    if let Some(t) = tables::host_table(j) {
        let _ = write!(s, r#"<h2 id="hosts">Hosts</h2>{t}"#);
    }
    // Heatmap: one row per GPU of every host.
    let mut rows = Vec::new();
    for h in &hosts {
        let host = h["host"].as_str().unwrap_or("");
        for g in h["gpus"].as_array().into_iter().flatten() {
            let label = g["gpu"].as_str().unwrap_or("");
            if let Some(sr) = c.gpu(host, label).filter(|sr| !sr.track.env[0].is_empty()) {
                let name = if multi {
                    format!("{} · GPU {}", short(host, 14), short(label, 10))
                } else {
                    format!("GPU {}", short(label, 22))
                };
                rows.push(HeatRow {
                    host: host.to_string(),
                    gpu: label.to_string(),
                    label: name,
                    env: &sr.track.env[0],
                    conn: conn(&sr.track, stat(g, "interval_s"), gap_k),
                });
            }
        }
    }
    if !rows.is_empty() {
        let _ = write!(
            s,
            r#"<div class="keep"><h2 id="heatmap">Utilization by GPU</h2><p class="note">Mean utilization.gpu per {} column; a row lighter than the others is a GPU that waits (imbalance, a straggler).</p><figure>{}</figure></div>"#,
            crate::present::dur(grid.bucket_s()),
            heatmap(&rows, &axis)
        );
    }
    let _ = write!(
        s,
        r#"<h2 id="charts">Charts</h2><p class="note">Each band spans the lowest to the highest value in a {} bucket{}; the line is the bucket's mean. Lines break at gaps (a step longer than {} × the sampling interval) and where a value is missing.</p>"#,
        crate::present::dur(grid.bucket_s()),
        if has_max { " (including the sub-sample peaks of .max columns)" } else { "" },
        gap_k
    );
    s.push_str(&uncharted(c));
    let mut ctx = Ctx { axis: &axis, charts: 0, has_max };
    for h in &hosts {
        let host = h["host"].as_str().unwrap_or("");
        let _ = write!(s, r#"<section class="host" data-host="{}"><h2>Host {}</h2>"#, esc(host), esc(host));
        if let Some(t) = c.host(host) {
            let mut g = String::new();
            host_charts(&mut ctx, &mut g, host, h, t, gap_k);
            if !g.is_empty() {
                let _ = write!(s, r#"<div class="grid">{g}</div>"#);
            }
        }
        for g in h["gpus"].as_array().into_iter().flatten() {
            let label = g["gpu"].as_str().unwrap_or("");
            let Some(sr) = c.gpu(host, label) else { continue };
            let name = g["name"].as_str().map_or(String::new(), |n| format!(" · {n}"));
            let uuid = g["uuid"].as_str().filter(|u| *u != label).map_or(String::new(), |u| format!(" · {u}"));
            let _ = write!(
                s,
                r#"<section class="gpu"><h3>GPU {}{}<span class="note">{}</span></h3><div class="grid">"#,
                esc(label),
                esc(&name),
                esc(&uuid)
            );
            gpu_charts(&mut ctx, &mut s, host, g, &sr.track, gap_k);
            s.push_str("</div></section>");
        }
        s.push_str("</section>");
    }
    let _ = write!(s, r#"<h2 id="inputs">Inputs</h2>{}"#, tables::inputs(j));
    let _ = write!(
        s,
        "<footer>Written by gpumon {} on {} UTC from the summary <code>gpumon summarize --format json</code> gives for the same inputs and window (embedded below as JSON, id <code>gpumon-summary</code>).</footer>",
        env!("CARGO_PKG_VERSION"),
        Utc::now().format("%Y-%m-%d %H:%M:%S")
    );
    s
}
