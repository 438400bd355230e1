//! The report's body: header with the time span in UTC and in the report's time zone, findings,
//! tables, the utilization heatmap, then per host its CPU/RAM/job charts and per GPU its
//! utilization, GPM activity (sm.active, tensor.active, dram.active), memory, power, temperature and
//! SM clock charts, with the GPU's NVML events marked on their time axes.

use std::fmt::Write;

use chrono::{DateTime, Utc};

use crate::html::axis::{group, time_ticks};
use crate::html::escape::esc;
use crate::html::live;
use crate::html::phases as html_phases;
use crate::html::svg::{Chart, HeatRow, Joinable, Plot, Style, TimeAxis, chart, heatmap};
use crate::html::tables;
use gpumon_analysis::{
    CheckResult, Collected, Envelope, EventRecord, FINE, GpuSummary, HostSummary, PhaseReport,
    Stat, Summary, Track,
};
use gpumon_util::Zone;

/// Where the charts' numbers come from, for one GPU or host.
struct Ctx<'a> {
    axis: &'a TimeAxis,
    /// The summary's NVML events, marked on each GPU's charts.
    events: &'a [EventRecord],
    charts: usize,
    /// Whether the inputs carry `.max` companion columns (the band then reaches the sub-sample peak).
    has_max: bool,
    /// Whose charts are being drawn (the interactive read-out names it).
    who: String,
    /// The drawn charts' series for the interactive layer.
    live: Vec<serde_json::Value>,
}

/// A series at both resolutions: the static chart's buckets and the interactive chart's.
#[derive(Clone, Copy)]
struct Both<'a> {
    coarse: &'a Track,
    fine: &'a Track,
    /// The fine grid's bucket count.
    n: usize,
}

impl Ctx<'_> {
    /// Draw `c` (static) and keep `f`, the same chart from the fine buckets, for the script.
    fn draw(&mut self, out: &mut String, c: Chart<'_>, conn: &Joinable<'_>, f: Fine<'_, '_>) {
        if let Some(svg) = chart(&c, self.axis, conn) {
            self.charts += 1;
            let fc = Chart { id: c.id.clone(), ..f.chart };
            self.live.push(live::chart(&fc, &f.conn, &self.who, f.n));
            let _ = write!(out, "<figure>{svg}</figure>");
        }
    }
}

/// A chart from the fine buckets, with their joins and their count.
struct Fine<'a, 'b> {
    chart: Chart<'a>,
    /// Which of the fine buckets are joined.
    conn: Joinable<'b>,
    /// The fine grid's bucket count.
    n: usize,
}

fn plot<'a>(label: &str, env: &'a Envelope, style: Style, color: u8) -> Plot<'a> {
    Plot { label: label.to_string(), env, style, color }
}

fn conn(t: &Track, interval_s: Option<f64>, gap_k: f64) -> Joinable<'_> {
    let gap_us = interval_s.filter(|&i| i > 0.0).map_or(f64::INFINITY, |i| i * gap_k * 1e6);
    Joinable { rows: &t.rows, first: &t.first, last: &t.last, gap_us }
}

/// The start and end in UTC and in the report's time zone (`--tz`, else this machine's).
fn time_line(start: i64, end: i64, tz: &Zone) -> String {
    let utc = |us: i64| {
        DateTime::<Utc>::from_timestamp_micros(us)
            .map_or_else(|| "-".into(), |d| d.format("%Y-%m-%d %H:%M:%S").to_string())
    };
    let fmt = match tz {
        Zone::Named(_) => "%Y-%m-%d %H:%M:%S %Z (UTC%:z)",
        Zone::Local | Zone::Fixed(_) => "%Y-%m-%d %H:%M:%S (UTC%:z)",
    };
    let local = |us: i64| -> String { tz.format(us, fmt).unwrap_or_else(|| "-".into()) };
    let zone = match tz.name() {
        Some(z) => z,
        None => std::env::var("TZ")
            .ok()
            .filter(|t| !t.is_empty())
            .map_or("this machine's time zone".into(), |t| {
                format!("this machine's time zone, {t}")
            }),
    };
    format!(
        "Time axes are in UTC. Start <b>{} UTC</b> = {} in {}; end <b>{} UTC</b> = {}; {} long.",
        utc(start),
        esc(&local(start)),
        esc(&zone),
        utc(end),
        esc(&local(end)),
        crate::dur((end - start) as f64 / 1e6)
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
        marks: Vec::new(),
    }
}

impl Ctx<'_> {
    /// Draw the charts made by `make` from the coarse track, with the same from the fine one.
    fn draw_all<'t>(
        &mut self,
        out: &mut String,
        t: Both<'t>,
        make: impl Fn(&'t Track) -> Vec<Chart<'t>>,
        joins: impl Fn(&'t Track) -> Joinable<'t>,
    ) {
        let (conn, fconn) = (joins(t.coarse), joins(t.fine));
        for (mut c, f) in make(t.coarse).into_iter().zip(make(t.fine)) {
            c.id = format!("c{}-{}", self.charts, c.kind);
            self.draw(out, c, &conn, Fine { chart: f, conn: fconn, n: t.n });
        }
    }
}

/// The events of one GPU as chart marks.
fn gpu_marks(events: &[EventRecord], host: &str, g: &GpuSummary) -> Vec<(i64, String)> {
    events
        .iter()
        .filter(|e| e.host == host && e.gpu.is_some() && e.gpu == g.index)
        .map(|e| (e.ts, format!("{} at {} UTC: {}", e.label(), crate::ts(e.ts), e.meaning())))
        .collect()
}

fn gpu_charts(
    ctx: &mut Ctx<'_>,
    out: &mut String,
    host: &str,
    g: &GpuSummary,
    t: Both<'_>,
    gap_k: f64,
) {
    let marks = gpu_marks(ctx.events, host, g);
    let has_max = ctx.has_max;
    let make = |t| {
        let charts = gpu_specs(host, g, t, has_max);
        charts.into_iter().map(|c| Chart { marks: marks.clone(), ..c }).collect()
    };
    let interval = g.stats.get(Stat::IntervalS);
    ctx.draw_all(out, t, make, |t| conn(t, interval, gap_k));
}

/// A GPU's charts from one of its tracks.
fn gpu_specs<'a>(host: &str, g: &GpuSummary, t: &'a Track, has_max: bool) -> Vec<Chart<'a>> {
    let label = &g.label;
    let key = format!("{host}/{label}");
    let e = &t.env;
    let who = format!("GPU {label}");
    let util = if has_max { "utilization.gpu (band up to .max)" } else { "utilization.gpu" };
    let mem_total = g.stats.get(Stat::MemoryTotal);
    let of_total =
        mem_total.map_or(String::new(), |m| format!(" of {} MiB", group(&format!("{m:.0}"))));
    vec![
        spec(
            "gpu-util",
            &key,
            format!("{who}: utilization"),
            ("utilization (%)", "%"),
            vec![plot(util, &e[0], Style::Envelope, 0)],
            vec![0.0, 100.0],
        ),
        spec(
            "gpu-gpm",
            &key,
            format!("{who}: SM, tensor core and DRAM activity"),
            ("activity (%)", "%"),
            vec![
                plot("sm.active", &e[8], Style::Envelope, 0),
                plot("tensor.active", &e[9], Style::Line, 2),
                plot("dram.active", &e[10], Style::Line, 1),
            ],
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
            vec![
                plot("power.draw", &e[4], Style::Envelope, 1),
                plot("power.limit", &e[5], Style::Limit, 3),
            ],
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
    ]
}

fn host_charts(
    ctx: &mut Ctx<'_>,
    out: &mut String,
    host: &str,
    h: &HostSummary,
    t: Both<'_>,
    gap_k: f64,
) {
    let interval = t.coarse.timing.finish(gap_k).interval_s;
    let make = |t| host_specs(host, h, t);
    ctx.draw_all(out, t, make, |t| conn(t, interval, gap_k));
}

/// A host's charts from one of its tracks: CPU, RAM, the job's CPU and memory, its work rates.
fn host_specs<'a>(host: &str, h: &HostSummary, t: &'a Track) -> Vec<Chart<'a>> {
    let e = &t.env;
    let ram_total = h.stats.get(Stat::MemTotal);
    let charts = vec![
        spec(
            "host-cpu",
            host,
            format!("{host}: CPU"),
            ("cpu.util (%)", "%"),
            vec![
                plot("mean of all cores", &e[0], Style::Envelope, 0),
                plot("busiest core", &e[1], Style::Envelope, 1),
            ],
            vec![0.0, 100.0],
        ),
        spec(
            "host-mem",
            host,
            format!("{host}: RAM"),
            ("mem.used (MiB)", "MiB"),
            vec![
                plot("mem.used", &e[2], Style::Envelope, 0),
                plot("mem.total", &e[3], Style::Limit, 3),
            ],
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
    charts.into_iter().chain(work_charts(host, t)).collect()
}

/// One chart per work counter the job reported (`gpumon progress`): its rate over time.
fn work_charts<'a>(host: &str, t: &'a Track) -> Vec<Chart<'a>> {
    let with_values = t.work.iter().filter(|(_, e)| !e.is_empty());
    with_values
        .map(|(key, e)| {
            spec(
                "job-work",
                &format!("{host}/{key}"),
                format!("{host}: work ({key} per second)"),
                (&format!("progress.{key} (/s)"), "/s"),
                vec![plot(&format!("{key}/s"), e, Style::Envelope, 2)],
                vec![0.0],
            )
        })
        .collect()
}

/// A label of at most `max` characters (uuids are long).
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// Title of the document: the inputs' file names.
pub fn title(s: &Summary) -> String {
    let names: Vec<String> = s
        .inputs
        .iter()
        .map(|i| {
            i.path
                .file_name()
                .map_or(i.path.display().to_string(), |n| n.to_string_lossy().into_owned())
        })
        .collect();
    let more =
        if names.len() > 3 { format!(" and {} more", names.len() - 3) } else { String::new() };
    format!("gpumon report: {}{more}", names.iter().take(3).cloned().collect::<Vec<_>>().join(", "))
}

/// A note on the GPUs and hosts left without charts (beyond the cap), if any.
fn uncharted(c: &Collected) -> String {
    if c.uncharted.is_empty() {
        return String::new();
    }
    let gpus = c.uncharted.iter().filter(|(_, gpu)| gpu.is_some()).count();
    let hosts = c.uncharted.len() - gpus;
    format!(
        r#"<p class="note" id="uncharted">Charts for the first {} GPUs and hosts only: {gpus} more GPU(s) and {hosts} more host(s) are in the tables above.</p>"#,
        gpumon_analysis::MAX_CHARTED
    )
}

/// Title, time span, over-all figures, findings, checks and the tables.
fn summary_part(
    out: &mut String,
    s: &Summary,
    checks: &[CheckResult],
    start: i64,
    end: i64,
    tz: &Zone,
) {
    let _ = write!(out, "<header><h1>{}</h1>", esc(&title(s)));
    let _ = write!(out, r#"<p class="meta" id="times">{}</p>"#, time_line(start, end, tz));
    for l in crate::job_lines(s) {
        let _ = write!(out, r#"<p class="meta job">{}</p>"#, esc(&l));
    }
    out.push_str(&tables::overview(s));
    out.push_str("</header>");
    out.push_str(r#"<h2 id="findings">Findings</h2>"#);
    out.push_str(&tables::findings(s));
    if let Some(t) = tables::checks(checks) {
        let _ = write!(out, "<h3>Checks</h3>{t}");
    }
    let _ = write!(out, r#"<h2 id="gpus">GPUs</h2>{}"#, tables::gpu_table(s));
    if let Some(t) = tables::host_table(s) {
        let _ = write!(out, r#"<h2 id="hosts">Hosts</h2>{t}"#);
    }
    if let Some(t) = tables::events(s) {
        let _ = write!(out, r#"<h2 id="events">NVML events</h2>{t}"#);
    }
    for h in &s.hosts {
        for l in crate::compact::routine_lines(&h.name, &s.routine_events) {
            let _ = write!(out, r#"<p class="note routine">{}: {}</p>"#, esc(&h.name), esc(&l));
        }
    }
    if let Some(t) = tables::users(s) {
        let _ = write!(out, r#"<h2 id="users">GPU use by user</h2>{t}"#);
    }
}

/// The heatmap: one row per GPU of every host.
fn heatmap_part(
    out: &mut String,
    s: &Summary,
    c: &Collected,
    fine: &Collected,
    axis: &TimeAxis,
) -> serde_json::Value {
    let rows = heat_rows(s, c);
    let heat = live::heat(&heat_rows(s, fine), fine.grid.n);
    if !rows.is_empty() {
        let data_s = data_interval(s);
        let _ = write!(
            out,
            r#"<div class="keep"><h2 id="heatmap">Utilization by GPU</h2><p class="note">{}</p><figure>{}</figure></div>"#,
            heat_note(axis.grid.bucket_s(), data_s),
            heatmap(&rows, axis)
        );
    }
    heat
}

/// The heatmap's caption for buckets of `bucket_s` and rows every `data_s`.
fn heat_note(bucket_s: f64, data_s: f64) -> String {
    format!(
        "{}; a row lighter than the others is a GPU that waits (imbalance, a straggler).",
        heat_caption(bucket_s, data_s)
    )
}

/// The heatmap's rows from `c`: one per GPU of every host with a utilization.
fn heat_rows<'a>(s: &Summary, c: &'a Collected) -> Vec<HeatRow<'a>> {
    let gap_k = s.thresholds.gap_intervals;
    let multi = s.hosts.len() > 1;
    let mut rows = Vec::new();
    for h in &s.hosts {
        let host = h.name.as_str();
        for g in &h.gpus {
            let label = g.label.as_str();
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
                    conn: conn(&sr.track, g.stats.get(Stat::IntervalS), gap_k),
                });
            }
        }
    }
    rows
}

/// The longest interval between rows of any GPU (0 when none says).
fn data_interval(s: &Summary) -> f64 {
    s.hosts
        .iter()
        .flat_map(|h| &h.gpus)
        .filter_map(|g| g.stats.get(Stat::IntervalS))
        .fold(0.0, f64::max)
}

/// What a chart's band spans: a bucket's values, or one row when the rows are further apart.
fn band_caption(bucket_s: f64, data_s: f64) -> String {
    let dur = crate::dur;
    if data_s > bucket_s {
        format!(
            "Rows are {} apart, wider than a {} bucket: each bucket holds at most one row",
            dur(data_s),
            dur(bucket_s)
        )
    } else {
        format!("Each band spans the lowest to the highest value in a {} bucket", dur(bucket_s))
    }
}

/// What one heatmap cell stands for: a column narrower than the data's interval holds no more than
/// one row, so the caption gives the rows' interval, not the column's width.
fn heat_caption(bucket_s: f64, data_s: f64) -> String {
    let dur = crate::dur;
    if data_s > bucket_s {
        format!(
            "utilization.gpu per {} row (the data's interval: one row spans several columns)",
            dur(data_s)
        )
    } else if data_s > 0.0 {
        format!("Mean utilization.gpu per {} column (rows every {})", dur(bucket_s), dur(data_s))
    } else {
        format!("Mean utilization.gpu per {} column", dur(bucket_s))
    }
}

/// A host's section: its charts, then each GPU's.
fn host_part(
    out: &mut String,
    ctx: &mut Ctx<'_>,
    h: &HostSummary,
    (c, fine): (&Collected, &Collected),
    gap_k: f64,
) {
    let host = h.name.as_str();
    let _ = write!(
        out,
        r#"<section class="host" data-host="{}"><h2>Host {}</h2>"#,
        esc(host),
        esc(host)
    );
    if let (Some(t), Some(f)) = (c.host(host), fine.host(host)) {
        ctx.who = format!("host {host}");
        let mut g = String::new();
        host_charts(ctx, &mut g, host, h, Both { coarse: t, fine: f, n: fine.grid.n }, gap_k);
        if !g.is_empty() {
            let _ = write!(out, r#"<div class="grid">{g}</div>"#);
        }
    }
    for g in &h.gpus {
        let label = g.label.as_str();
        let (Some(sr), Some(fr)) = (c.gpu(host, label), fine.gpu(host, label)) else { continue };
        let name = g.name.as_deref().map_or(String::new(), |n| format!(" · {n}"));
        let uuid =
            g.uuid.as_deref().filter(|u| *u != label).map_or(String::new(), |u| format!(" · {u}"));
        ctx.who = format!("{host} · GPU {label}{name}");
        let _ = write!(
            out,
            r#"<section class="gpu" data-gpu="{}"><h3>GPU {}{}<span class="note">{}</span></h3><div class="grid">"#,
            esc(label),
            esc(label),
            esc(&name),
            esc(&uuid)
        );
        let t = Both { coarse: &sr.track, fine: &fr.track, n: fine.grid.n };
        gpu_charts(ctx, out, host, g, t, gap_k);
        out.push_str("</div></section>");
    }
    out.push_str("</section>");
}

/// The body of the report, from the summary, its checks, the series and the phases (when marked),
/// and the interactive layer's data (the JSON block `gpumon-series`). `fine` holds the series in
/// [`FINE`] times the static charts' buckets: the script draws from them, the static SVG from
/// them merged back.
pub fn body(
    s: &Summary,
    checks: &[CheckResult],
    fine: &Collected,
    tz: &Zone,
    phases: Option<&PhaseReport>,
) -> (String, serde_json::Value) {
    let coarse = fine.coarsen(FINE);
    let c = &coarse;
    let grid = c.grid;
    let axis = TimeAxis {
        grid,
        ticks: time_ticks(grid.start, grid.end, 6),
        wide_ticks: time_ticks(grid.start, grid.end, 12),
        bands: phases.map(html_phases::bands).unwrap_or_default(),
    };
    let gap_k = s.thresholds.gap_intervals;
    // Inputs with `.max` companion columns: the bands then reach the sub-sample peaks.
    let has_max = s.inputs.iter().any(|i| i.fields.iter().any(|f| f.def().max_of.is_some()));
    let mut out = String::with_capacity(1 << 20);
    summary_part(&mut out, s, checks, grid.start, grid.end, tz);
    let note = gpumon_schema::recordings_note(&s.inputs);
    if let Some((head, rest)) = note.split_first() {
        let items: String = rest.iter().map(|l| format!("<li>{}</li>", esc(l))).collect();
        let _ = write!(
            out,
            r#"<div class="recordings"><p><b>{}</b></p><ul>{items}</ul></div>"#,
            esc(head)
        );
    }
    if let Some(p) = phases.filter(|p| !p.labels().is_empty()) {
        out.push_str(&html_phases::section(p, &s.thresholds));
    }
    let heat = heatmap_part(&mut out, s, c, fine, &axis);
    let charts_note = |bucket_s| {
        format!(
            "{}{}; the line is the bucket's mean. Lines break at gaps (a step longer than {} × the sampling interval) and where a value is missing.",
            band_caption(bucket_s, data_interval(s)),
            if has_max { " (including the sub-sample peaks of .max columns)" } else { "" },
            gap_k
        )
    };
    let _ = write!(
        out,
        r#"<h2 id="charts">Charts</h2><p class="note">{}</p>"#,
        charts_note(grid.bucket_s())
    );
    out.push_str(&uncharted(c));
    let mut ctx = Ctx {
        axis: &axis,
        events: &s.events,
        charts: 0,
        has_max,
        who: String::new(),
        live: vec![],
    };
    for h in &s.hosts {
        host_part(&mut out, &mut ctx, h, (c, fine), gap_k);
    }
    let _ = write!(out, r#"<h2 id="inputs">Inputs</h2>{}"#, tables::inputs(s));
    let _ = write!(
        out,
        "<footer>Written by gpumon {} on {} UTC from the summary <code>gpumon summarize --format json</code> gives for the same inputs and window (embedded below as JSON, id <code>gpumon-summary</code>).</footer>",
        env!("CARGO_PKG_VERSION"),
        Utc::now().format("%Y-%m-%d %H:%M:%S")
    );
    let meta = live::Meta {
        grid: fine.grid,
        interval_s: data_interval(s),
        bands: &axis.bands,
        gpus: charted_gpus(s, c),
        inputs: s.inputs.iter().map(|i| i.path.display().to_string()).collect(),
    };
    // The captions of the interactive heatmap and charts, which draw from the fine buckets.
    let captions = serde_json::json!({
        "heatmap": heat_note(fine.grid.bucket_s(), data_interval(s)),
        "charts": charts_note(fine.grid.bucket_s()),
    });
    let data = live::data(&meta, ctx.live, heat, captions);
    (out, data)
}

/// The charted GPUs as (host, label, what the toggle says), in the page's order.
fn charted_gpus(s: &Summary, c: &Collected) -> Vec<(String, String, String)> {
    let multi = s.hosts.len() > 1;
    s.hosts
        .iter()
        .flat_map(|h| h.gpus.iter().map(move |g| (h, g)))
        .filter(|(h, g)| c.gpu(&h.name, &g.label).is_some())
        .map(|(h, g)| {
            let label = if multi {
                format!("{} · GPU {}", short(&h.name, 14), short(&g.label, 10))
            } else {
                format!("GPU {}", short(&g.label, 22))
            };
            (h.name.clone(), g.label.clone(), label)
        })
        .collect()
}
