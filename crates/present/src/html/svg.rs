//! Hand-written inline SVG: time-series charts (a min–max band and a mean line per series, dashed
//! limits) and the utilization heatmap (one row per GPU, one cell per time bucket). No script: the
//! browser draws them as they are, on screen and in print.
//!
//! Plot data is written in bucket units (x: half buckets, so centres are integers; y: 0..1000 of the
//! plot height) under one `transform`, with relative path steps: a point costs about five bytes.
//! Strokes use `vector-effect: non-scaling-stroke` so the stretch does not distort line widths.

use std::fmt::Write;

use crate::html::axis::{ValueAxis, label, value_axis};
use crate::html::escape::esc;
use gpumon_analysis::{Envelope, Grid};

/// Which buckets may be joined by a line: a series' rows and first/last sample per bucket, and the
/// longest step that is not a gap (µs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Joinable<'a> {
    pub rows: &'a [u32],
    pub first: &'a [i64],
    pub last: &'a [i64],
    pub gap_us: f64,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Band from each bucket's min to its max, line through the means.
    Envelope,
    /// The means only.
    Line,
    /// A dashed line through each bucket's max (totals and limits).
    Limit,
}

/// One series of a chart.
#[derive(Debug, Clone)]
pub(crate) struct Plot<'a> {
    pub label: String,
    pub env: &'a Envelope,
    pub style: Style,
    /// Colour slot 0..=3 (CSS classes `c0`.. for lines, `b0`.. for bands).
    pub(crate) color: u8,
}

/// A chart to draw.
#[derive(Debug, Clone)]
pub(crate) struct Chart<'a> {
    /// Unique id prefix for `aria-labelledby`.
    pub id: String,
    /// What it shows (`data-chart`): `gpu-util`, `host-cpu`...
    pub kind: &'static str,
    /// Whose it is (`data-series`): `host/GPU 0`.
    pub key: String,
    pub title: String,
    /// Y axis title with its unit.
    pub(crate) y_label: String,
    pub unit: &'static str,
    pub(crate) plots: Vec<Plot<'a>>,
    /// Values the y axis always covers (e.g. 0 and 100 for percentages).
    pub include: Vec<f64>,
    /// Events marked on the time axis: (UTC µs, what happened), drawn as red vertical lines.
    pub marks: Vec<(i64, String)>,
}

/// The time axis shared by every chart.
#[derive(Debug, Clone)]
pub(crate) struct TimeAxis {
    pub grid: Grid,
    /// Tick instants (UTC µs) and labels for the charts and for the wider heatmap.
    pub ticks: Vec<(i64, String)>,
    pub(crate) wide_ticks: Vec<(i64, String)>,
    /// The experiment phases, shaded under every chart.
    pub bands: Vec<Band>,
}

/// A phase shaded on the time axis: `[start, end)` UTC µs, colour slot `color` (one per label).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Band {
    pub label: String,
    pub start: i64,
    pub end: i64,
    pub(crate) color: usize,
}

/// The phase bands over a plot area (translucent, over a heatmap's cells too), each with its label
/// at the top where it fits.
fn bands(s: &mut String, axis: &TimeAxis, left: f64, width: f64, top: f64, height: f64) {
    for b in &axis.bands {
        let x0 = x_px(axis, b.start, left, width).clamp(left, left + width);
        let x1 = x_px(axis, b.end, left, width).clamp(left, left + width);
        if x1 <= x0 {
            continue;
        }
        let _ = write!(
            s,
            r#"<rect class="ph p{}" data-phase="{}" x="{}" y="{top}" width="{}" height="{height}"><title>phase {}</title></rect>"#,
            b.color % 4,
            esc(&b.label),
            px(x0),
            px(x1 - x0),
            esc(&b.label)
        );
        let fits = ((x1 - x0 - 4.0) / 6.0).floor().max(0.0) as usize;
        if fits >= 3 {
            let text: String = if b.label.chars().count() <= fits {
                b.label.clone()
            } else {
                format!("{}…", b.label.chars().take(fits - 1).collect::<String>())
            };
            let _ = write!(
                s,
                r#"<text class="pl" x="{}" y="{}">{}</text>"#,
                px(x0 + 3.0),
                px(top + 11.0),
                esc(&text)
            );
        }
    }
}

/// A chart's width and height (px of its viewBox), the plot's margins left, right and top, and the
/// plot's own height and width.
const CHART_W: f64 = 600.0;
const CHART_H: f64 = 214.0;
const CHART_LEFT: f64 = 62.0;
const CHART_RIGHT: f64 = 12.0;
const CHART_TOP: f64 = 30.0;
const PLOT_H: f64 = 140.0;
const PLOT_W: f64 = CHART_W - CHART_LEFT - CHART_RIGHT;

/// A coordinate of the SVG: one decimal, none when it is whole.
fn px(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

/// Append a relative step to a path: `dx dy` with the separator SVG needs.
fn step(d: &mut String, dx: i64, dy: i64) {
    for v in [dx, dy] {
        if v >= 0 && !d.ends_with(['l', 'M', 'h', 'v']) {
            d.push(' ');
        }
        let _ = write!(d, "{v}");
    }
}

/// One point of a plot: a bucket with a value.
#[derive(Debug, Clone, Copy)]
pub(super) struct Point {
    /// The bucket's index.
    pub(super) bucket: usize,
    /// The lowest value in the bucket.
    pub(super) min: f64,
    /// The mean of its values.
    pub(super) mean: f64,
    /// The highest value in it.
    pub(super) max: f64,
}

/// Runs of joined points of one plot.
pub(super) fn runs(env: &Envelope, conn: &Joinable<'_>) -> Vec<Vec<Point>> {
    let mut out: Vec<Vec<Point>> = Vec::new();
    let mut prev: Option<usize> = None;
    let mut rows_between = false;
    for b in 0..env.n.len() {
        match env.at(b) {
            Some(v) => {
                let joined = prev.is_some_and(|p| {
                    !rows_between
                        && (conn.first.get(b).copied().unwrap_or(0)
                            - conn.last.get(p).copied().unwrap_or(0))
                            as f64
                            <= conn.gap_us
                });
                if !joined || out.is_empty() {
                    out.push(Vec::new());
                }
                if let Some(r) = out.last_mut() {
                    r.push(Point { bucket: b, min: v.min, mean: v.mean, max: v.max });
                }
                prev = Some(b);
                rows_between = false;
            }
            None => rows_between |= conn.rows.get(b).is_some_and(|&r| r > 0),
        }
    }
    out
}

/// The height of `v` on the axis in thousandths of the plot, from its top (0) to its bottom (1000);
/// values off the axis are held just outside it.
fn plot_y(ax: &ValueAxis, v: f64) -> i64 {
    let span = (ax.hi - ax.lo).max(f64::MIN_POSITIVE);
    (((ax.hi - v) / span) * 1000.0).round().clamp(-50.0, 1050.0) as i64
}

/// Path data of a line through `pick` of each point, one subpath per run.
fn line_path(runs: &[Vec<Point>], ax: &ValueAxis, pick: fn(&Point) -> f64) -> String {
    let mut d = String::new();
    for run in runs {
        let Some(p0) = run.first() else { continue };
        let (mut x, mut y) = (2 * p0.bucket as i64 + 1, plot_y(ax, pick(p0)));
        let _ = write!(d, "M{x} {y}");
        if run.len() == 1 {
            d.push_str("h0");
            continue;
        }
        d.push('l');
        for p in &run[1..] {
            let (nx, ny) = (2 * p.bucket as i64 + 1, plot_y(ax, pick(p)));
            step(&mut d, nx - x, ny - y);
            (x, y) = (nx, ny);
        }
    }
    d
}

/// Path data of the min–max band: along the tops, back along the bottoms.
fn band_path(runs: &[Vec<Point>], ax: &ValueAxis) -> String {
    let mut d = String::new();
    for run in runs {
        let Some(p0) = run.first() else { continue };
        if run.len() == 1 {
            let (top, bot) = (plot_y(ax, p0.max), plot_y(ax, p0.min));
            let _ = write!(d, "M{} {top}h2v{}h-2z", 2 * p0.bucket, (bot - top).max(1));
            continue;
        }
        let (mut x, mut y) = (2 * p0.bucket as i64 + 1, plot_y(ax, p0.max));
        let _ = write!(d, "M{x} {y}l");
        for p in &run[1..] {
            let (nx, ny) = (2 * p.bucket as i64 + 1, plot_y(ax, p.max));
            step(&mut d, nx - x, ny - y);
            (x, y) = (nx, ny);
        }
        for p in run.iter().rev() {
            let (nx, ny) = (2 * p.bucket as i64 + 1, plot_y(ax, p.min));
            step(&mut d, nx - x, ny - y);
            (x, y) = (nx, ny);
        }
        d.push('z');
    }
    d
}

fn x_px(axis: &TimeAxis, t: i64, left: f64, width: f64) -> f64 {
    left + axis.grid.position(t) / axis.grid.n as f64 * width
}

/// The value axis spanning every plot's values and the values `include` asks for.
fn value_axis_of(plots: &[&Plot<'_>], include: &[f64]) -> ValueAxis {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (a, b) in plots.iter().filter_map(|p| p.env.range()).chain(include.iter().map(|&v| (v, v)))
    {
        lo = lo.min(a);
        hi = hi.max(b);
    }
    value_axis(lo, hi)
}

/// One chart as an `<svg class="chart">`; None when none of its series has a value.
#[allow(clippy::too_many_lines)]
pub(super) fn chart(c: &Chart<'_>, axis: &TimeAxis, conn: &Joinable<'_>) -> Option<String> {
    let plots: Vec<&Plot<'_>> = c.plots.iter().filter(|p| !p.env.is_empty()).collect();
    if plots.is_empty() {
        return None;
    }
    let ax = value_axis_of(&plots, &c.include);
    // The legend sits right of the title, or on a row of its own when they would overlap.
    let title_w = 7.6 * c.title.chars().count() as f64;
    let legend_w: f64 = plots.iter().map(|p| legend_width(p)).sum();
    let (top, legend_y) = if CHART_LEFT + title_w + 16.0 > CHART_W - CHART_RIGHT - legend_w {
        (CHART_TOP + 16.0, 33.0)
    } else {
        (CHART_TOP, 17.0)
    };
    let h = CHART_H + top - CHART_TOP;
    let mut s = String::with_capacity(16 * 1024);
    let id = esc(&c.id);
    let _ = write!(
        s,
        r#"<svg class="chart" data-chart="{}" data-series="{}" viewBox="0 0 {CHART_W} {h}" role="img" aria-labelledby="{id}-t {id}-d"><title id="{id}-t">{}</title><desc id="{id}-d">{}</desc>"#,
        c.kind,
        esc(&c.key),
        esc(&c.title),
        esc(&describe(c, &plots, axis)),
    );
    let _ = write!(s, r#"<text class="t" x="{CHART_LEFT}" y="16">{}</text>"#, esc(&c.title));
    legend(&mut s, &plots, legend_y);
    // Y grid and labels.
    let step = ax.ticks.get(1).zip(ax.ticks.first()).map_or(1.0, |(b, a)| b - a);
    for &v in &ax.ticks {
        let y = top + f64::from(plot_y(&ax, v) as i32) / 1000.0 * PLOT_H;
        let _ = write!(
            s,
            r#"<path class="g" d="M{CHART_LEFT} {y}h{PLOT_W}"/><text class="yl" x="{}" y="{}">{}</text>"#,
            CHART_LEFT - 5.0,
            px(y + 4.0),
            label(v, step)
        );
    }
    let _ = write!(
        s,
        r#"<text class="at" transform="translate(13 {}) rotate(-90)">{}</text>"#,
        top + PLOT_H / 2.0,
        esc(&c.y_label)
    );
    time_axis(&mut s, axis, &axis.ticks, CHART_LEFT, PLOT_W, top, PLOT_H);
    bands(&mut s, axis, CHART_LEFT, PLOT_W, top, PLOT_H);
    // Data.
    let (sx, sy) = (PLOT_W / (2.0 * axis.grid.n as f64), PLOT_H / 1000.0);
    let _ = write!(s, r#"<g transform="translate({CHART_LEFT} {top}) scale({sx:.6} {sy})">"#);
    for p in &plots {
        let r = runs(p.env, conn);
        match p.style {
            Style::Envelope => {
                let _ = write!(s, r#"<path class="b b{}" d="{}"/>"#, p.color, band_path(&r, &ax));
                let _ = write!(
                    s,
                    r#"<path class="l c{}" d="{}"/>"#,
                    p.color,
                    line_path(&r, &ax, |p| p.mean)
                );
            }
            Style::Line => {
                let _ = write!(
                    s,
                    r#"<path class="l c{}" d="{}"/>"#,
                    p.color,
                    line_path(&r, &ax, |p| p.mean)
                );
            }
            Style::Limit => {
                let _ = write!(
                    s,
                    r#"<path class="l k c{}" d="{}"/>"#,
                    p.color,
                    line_path(&r, &ax, |p| p.max)
                );
            }
        }
    }
    s.push_str("</g>");
    for (t, what) in c.marks.iter().filter(|(t, _)| axis.grid.bucket(*t).is_some()) {
        let x = px(x_px(axis, *t, CHART_LEFT, PLOT_W));
        let _ = write!(
            s,
            r#"<g class="ev"><title>{}</title><path d="M{x} {top}v{PLOT_H}"/><path class="evm" d="M{x} {}l-4 -6h8z"/></g>"#,
            esc(what),
            top
        );
    }
    let _ = write!(
        s,
        r#"<rect class="fr" x="{CHART_LEFT}" y="{top}" width="{PLOT_W}" height="{PLOT_H}"/></svg>"#
    );
    Some(s)
}

/// Vertical grid lines, tick labels and the axis title under a plot area.
fn time_axis(
    s: &mut String,
    axis: &TimeAxis,
    ticks: &[(i64, String)],
    left: f64,
    width: f64,
    top: f64,
    height: f64,
) {
    let bottom = top + height;
    for (t, lab) in ticks {
        let x = px(x_px(axis, *t, left, width));
        let _ = write!(
            s,
            r#"<path class="g" d="M{x} {top}v{height}"/><text class="xl" x="{x}" y="{}">{}</text>"#,
            bottom + 15.0,
            esc(lab)
        );
    }
    let _ = write!(
        s,
        r#"<text class="at" x="{}" y="{}">time (UTC)</text>"#,
        left + width / 2.0,
        bottom + 34.0
    );
}

/// Estimated width of a legend entry: swatch, gap, 6.6 px per character at 11 px.
fn legend_width(p: &Plot<'_>) -> f64 {
    28.0 + 6.6 * p.label.chars().count() as f64
}

fn legend(s: &mut String, plots: &[&Plot<'_>], y: f64) {
    let widths: Vec<f64> = plots.iter().map(|p| legend_width(p)).collect();
    let mut x = CHART_W - CHART_RIGHT - widths.iter().sum::<f64>();
    for (p, w) in plots.iter().zip(widths) {
        let xs = px(x);
        let swatch = match p.style {
            Style::Envelope => format!(
                r#"<rect class="b{}" x="{xs}" y="{}" width="18" height="8"/><path class="sw c{}" d="M{xs} {}h18"/>"#,
                p.color,
                y - 8.0,
                p.color,
                y - 4.0
            ),
            Style::Line => format!(r#"<path class="sw c{}" d="M{xs} {}h18"/>"#, p.color, y - 4.0),
            Style::Limit => {
                format!(r#"<path class="sw k c{}" d="M{xs} {}h18"/>"#, p.color, y - 4.0)
            }
        };
        let _ = write!(
            s,
            r#"{swatch}<text class="lg" x="{}" y="{y}">{}</text>"#,
            px(x + 22.0),
            esc(&p.label)
        );
        x += w;
    }
}

/// The chart's text alternative: what each series did, in numbers.
fn describe(c: &Chart<'_>, plots: &[&Plot<'_>], axis: &TimeAxis) -> String {
    let mut parts = Vec::new();
    for p in plots {
        let unit = if c.unit.is_empty() { String::new() } else { format!(" {}", c.unit) };
        let (lo, hi) = p.env.range().unwrap_or((f64::NAN, f64::NAN));
        match (p.style, p.env.mean()) {
            (Style::Limit, _) => parts.push(format!("{} up to {}{unit}", p.label, px(hi))),
            (_, Some(m)) => parts.push(format!(
                "{}: mean {}{unit}, from {} to {}{unit}",
                p.label,
                px(m),
                px(lo),
                px(hi)
            )),
            _ => {}
        }
    }
    let b = axis.grid.bucket_s();
    let per = crate::dur(b);
    format!(
        "{}. Band: lowest to highest value per {per}; line: mean per {per}. Gaps in the data are left blank.",
        parts.join("; ")
    )
}

/// A heatmap row: one GPU's utilization per bucket.
#[derive(Debug, Clone)]
pub(crate) struct HeatRow<'a> {
    pub host: String,
    pub gpu: String,
    pub label: String,
    pub env: &'a Envelope,
    pub conn: Joinable<'a>,
}

/// Colour level per bucket. Where samples are sparser than buckets, a sample fills the empty buckets
/// back to the previous sample it is joined to (a row describes the interval that ends at it).
fn levels(env: &Envelope, conn: &Joinable<'_>, n: usize) -> Vec<Option<usize>> {
    let mut out = vec![None; n];
    for run in runs(env, conn) {
        let mut from = run.first().map_or(0, |p| p.bucket);
        for &Point { bucket: b, mean, .. } in &run {
            for slot in out.iter_mut().take(b + 1).skip(from) {
                *slot = Some(level(mean));
            }
            from = b + 1;
        }
    }
    out
}

/// Colour level 0..=9 of a utilization (10 % steps, 100 % in the top one).
fn level(v: f64) -> usize {
    ((v / 10.0).floor().max(0.0) as usize).min(9)
}

/// The heatmap's width, its label column on the left and legend on the right, and one GPU row's
/// height (px).
const HEAT_W: f64 = 1240.0;
const HEAT_LEFT: f64 = 170.0;
const HEAT_RIGHT: f64 = 86.0;
const HEAT_ROW: f64 = 22.0;

/// The utilization heatmap as an `<svg class="heatmap">`, one `<g class="hm-row">` per GPU.
#[allow(clippy::too_many_lines)]
pub(super) fn heatmap(rows: &[HeatRow<'_>], axis: &TimeAxis) -> String {
    let pw = HEAT_W - HEAT_LEFT - HEAT_RIGHT;
    let top = 6.0;
    let h = top + rows.len() as f64 * HEAT_ROW + 78.0;
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        r#"<svg class="heatmap" viewBox="0 0 {HEAT_W} {h}" role="img" aria-labelledby="hm-t hm-d"><title id="hm-t">GPU utilization over time, one row per GPU</title><desc id="hm-d">{}</desc>"#,
        esc(&heat_desc(rows))
    );
    s.push_str(r##"<defs><pattern id="hm-nd" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f3f3f3"/><path d="M0 0v6" stroke="#c8c8c8" stroke-width="2"/></pattern></defs>"##);
    // Time axis first: its grid lines run under the cells.
    let bottom_rows = rows.len() as f64 * HEAT_ROW - 3.0;
    time_axis(&mut s, axis, &axis.wide_ticks, HEAT_LEFT, pw, top, bottom_rows);
    let n = axis.grid.n;
    for (r, row) in rows.iter().enumerate() {
        let y = top + r as f64 * HEAT_ROW;
        let mean = row.env.mean();
        let _ = write!(
            s,
            r#"<g class="hm-row" data-host="{}" data-gpu="{}" data-mean="{}"><title>{}: mean utilization {}</title>"#,
            esc(&row.host),
            esc(&row.gpu),
            mean.map_or(String::new(), |m| format!("{m:.1}")),
            esc(&row.label),
            mean.map_or("-".into(), |m| format!("{m:.1} %")),
        );
        let _ = write!(
            s,
            r#"<rect x="{HEAT_LEFT}" y="{y}" width="{pw}" height="{}" fill="url(#hm-nd)"/>"#,
            HEAT_ROW - 3.0
        );
        let _ = write!(
            s,
            r#"<g transform="translate({HEAT_LEFT} {y}) scale({:.6} {})">"#,
            pw / n as f64,
            HEAT_ROW - 3.0
        );
        let mut paths: Vec<String> = vec![String::new(); 10];
        let lvs = levels(row.env, &row.conn, n);
        let mut b = 0;
        while b < n {
            let Some(lv) = lvs[b] else {
                b += 1;
                continue;
            };
            let mut e = b + 1;
            while e < n && lvs[e] == Some(lv) {
                e += 1;
            }
            let _ = write!(paths[lv], "M{b} 0h{}v1h-{}z", e - b, e - b);
            b = e;
        }
        for (lv, d) in paths.iter().enumerate().filter(|(_, d)| !d.is_empty()) {
            let _ = write!(s, r#"<path class="h{lv}" d="{d}"/>"#);
        }
        s.push_str("</g>");
        let _ = write!(
            s,
            r#"<text class="hl" x="{}" y="{}">{}</text>"#,
            HEAT_LEFT - 8.0,
            y + 14.0,
            esc(&row.label)
        );
        let _ = write!(
            s,
            r#"<text class="hm" x="{}" y="{}">{}</text></g>"#,
            HEAT_LEFT + pw + 8.0,
            y + 14.0,
            mean.map_or("-".into(), |m| format!("mean {m:.0} %"))
        );
    }
    bands(&mut s, axis, HEAT_LEFT, pw, top, bottom_rows);
    // Legend: the ten levels and "no data".
    let ly = top + rows.len() as f64 * HEAT_ROW + 46.0;
    for lv in 0..10 {
        let x = HEAT_LEFT + lv as f64 * 72.0;
        let _ = write!(
            s,
            r#"<rect class="h{lv}" x="{x}" y="{ly}" width="20" height="12"/><text class="lg" x="{}" y="{}">{}–{}%</text>"#,
            x + 24.0,
            ly + 10.0,
            lv * 10,
            if lv == 9 { 100 } else { lv * 10 + 10 }
        );
    }
    let x = HEAT_LEFT + 10.0 * 72.0 + 10.0;
    let _ = write!(
        s,
        r#"<rect x="{x}" y="{ly}" width="20" height="12" fill="url(#hm-nd)"/><text class="lg" x="{}" y="{}">no data</text></svg>"#,
        x + 24.0,
        ly + 10.0
    );
    s
}

fn heat_desc(rows: &[HeatRow<'_>]) -> String {
    let parts: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{}: mean {}",
                r.label,
                r.env.mean().map_or("-".into(), |m| format!("{m:.1} %"))
            )
        })
        .collect();
    format!("Mean utilization per time bucket, darker is busier. {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vals: &[Option<f64>]) -> Envelope {
        let n = vals.len();
        let mut e =
            Envelope { min: vec![0.0; n], max: vec![0.0; n], sum: vec![0.0; n], n: vec![0; n] };
        for (b, v) in vals.iter().enumerate() {
            if let Some(v) = v {
                e.min[b] = *v - 1.0;
                e.max[b] = *v + 1.0;
                e.sum[b] = *v;
                e.n[b] = 1;
            }
        }
        e
    }

    #[test]
    fn lines_break_at_gaps_and_missing_values() {
        let e = env(&[Some(10.0), Some(20.0), None, Some(30.0), None, None, Some(40.0)]);
        let rows = [1, 1, 1, 1, 0, 0, 1];
        let first: Vec<i64> = (0..7).map(|b| b * 10).collect();
        let last = first.clone();
        // Bucket 2 has a row but no value: broken; 4 and 5 are empty: joined unless the step is a gap.
        let c = Joinable { rows: &rows, first: &first, last: &last, gap_us: 30.0 };
        let r = runs(&e, &c);
        assert_eq!(r.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2]);
        let c = Joinable { gap_us: 29.0, ..c };
        assert_eq!(runs(&e, &c).iter().map(Vec::len).collect::<Vec<_>>(), [2, 1, 1]);
        let ax = value_axis(0.0, 100.0);
        let d = line_path(&runs(&e, &c), &ax, |p| p.mean);
        assert_eq!(d, "M1 900l2-100M7 700h0M13 600h0");
        let b = band_path(&runs(&e, &c), &ax);
        assert!(b.starts_with("M1 890l2-100 0 20-2 100z"), "{b}");
    }

    #[test]
    fn sparse_samples_fill_the_heatmap_back_to_the_previous_one() {
        let e = env(&[Some(10.0), None, None, Some(55.0), None, None, Some(95.0), None]);
        let rows = [1, 0, 0, 1, 0, 0, 1, 0];
        let t: Vec<i64> = (0..8).map(|b| b * 10).collect();
        let conn = Joinable { rows: &rows, first: &t, last: &t, gap_us: 30.0 };
        let l = levels(&e, &conn, 8);
        assert_eq!(l, [Some(1), Some(5), Some(5), Some(5), Some(9), Some(9), Some(9), None]);
        let conn = Joinable { gap_us: 29.0, ..conn };
        assert_eq!(
            levels(&e, &conn, 8),
            [Some(1), None, None, Some(5), None, None, Some(9), None],
            "gaps stay empty"
        );
    }

    #[test]
    fn charts_and_heatmap_escape_their_text() {
        let e = env(&[Some(10.0), Some(20.0)]);
        let grid = Grid::new(0, 1_999_999, 2);
        let band = Band { label: "bs=<64>".into(), start: 1_000_000, end: 1_999_999, color: 5 };
        let axis = TimeAxis {
            grid,
            ticks: vec![(0, "00:00:00".into())],
            wide_ticks: vec![],
            bands: vec![band],
        };
        let rows = [1, 1];
        let ts = [0, 1_000_000];
        let conn = Joinable { rows: &rows, first: &ts, last: &ts, gap_us: 3e6 };
        let c = Chart {
            id: "x".into(),
            kind: "gpu-util",
            key: "<h>/0".into(),
            title: "GPU 0 on <h> & co".into(),
            y_label: "utilization (%)".into(),
            unit: "%",
            plots: vec![Plot { label: "util".into(), env: &e, style: Style::Envelope, color: 0 }],
            include: vec![0.0, 100.0],
            marks: vec![(1_000_000, "Xid 79 <bus>".into()), (9_000_000, "outside".into())],
        };
        let s = chart(&c, &axis, &conn).unwrap();
        assert!(s.contains("GPU 0 on &lt;h&gt; &amp; co"));
        assert_eq!(
            s.matches(r#"<g class="ev">"#).count(),
            1,
            "marks outside the span are left out"
        );
        assert!(s.contains("<title>Xid 79 &lt;bus&gt;</title>"), "{s}");
        assert!(!s.contains("<h>"));
        assert!(s.contains("mean 15 %"), "{s}");
        assert!(
            s.contains(
                r#"<rect class="ph p1" data-phase="bs=&lt;64&gt;" x="325" y="30" width="263""#
            ),
            "{s}"
        );
        assert!(s.contains(r#"<text class="pl" x="328" y="41">bs=&lt;64&gt;</text>"#), "{s}");
        let empty = Envelope::default();
        let c2 = Chart {
            plots: vec![Plot { label: "x".into(), env: &empty, style: Style::Line, color: 0 }],
            ..c
        };
        assert!(chart(&c2, &axis, &conn).is_none());
        let row =
            HeatRow { host: "h\"1".into(), gpu: "0".into(), label: "GPU 0".into(), env: &e, conn };
        let h = heatmap(&[row], &axis);
        assert!(h.contains(r#"data-host="h&quot;1""#));
        assert!(
            h.contains(r#"<path class="h1" d="M0 0h1v1h-1z"/><path class="h2" d="M1 0h1v1h-1z"/>"#),
            "{h}"
        );
    }
}
