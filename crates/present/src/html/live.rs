//! The report's interactive layer: the charts' bucketed series as JSON (per bucket the min, mean
//! and max, the same envelopes the static SVG draws), which the page's script ([`crate::html::assets`])
//! draws. Without scripts the page keeps its static SVG charts.

use serde_json::{Value, json};

use crate::html::svg::{Band, Chart, HeatRow, Joinable, Style, runs};
use gpumon_analysis::{Envelope, Grid};

/// A value as the page stores it: two decimals, null when missing.
fn num(v: Option<f64>) -> Value {
    match v.filter(|v| v.is_finite()) {
        Some(v) => {
            let r = (v * 100.0).round() / 100.0;
            if r.fract() == 0.0 && r.abs() < 9e15 { json!(r as i64) } else { json!(r) }
        }
        None => Value::Null,
    }
}

/// Each bucket's min, mean and max as three arrays. An empty bucket inside a run of joined
/// buckets (the recording's rows are further apart than a bucket) is `false`, which the script
/// draws across; an empty bucket at a gap, or where the value is missing, is `null`, a break.
fn columns(env: &Envelope, conn: &Joinable<'_>, n: usize) -> [Vec<Value>; 3] {
    let mut out = [vec![Value::Null; n], vec![Value::Null; n], vec![Value::Null; n]];
    for run in runs(env, conn) {
        let (Some(a), Some(z)) = (run.first(), run.last()) else { continue };
        for col in &mut out {
            col[a.bucket..=z.bucket].fill(Value::Bool(false));
        }
        for p in &run {
            for (col, v) in out.iter_mut().zip([p.min, p.mean, p.max]) {
                col[p.bucket] = num(Some(v));
            }
        }
    }
    out
}

/// The buckets from the first to the last that is not null (`at` is the first's index), packed:
/// the leading and trailing nulls are left out, the script puts them back.
fn trimmed(cols: [Vec<Value>; 3]) -> (usize, [Vec<Value>; 3]) {
    let used = |b: &usize| !cols[0][*b].is_null();
    let n = cols[0].len();
    let a = (0..n).find(used).unwrap_or(n);
    let z = (0..n).rev().find(used).map_or(a, |z| z + 1);
    (a, cols.map(|c| packed(&c[a..z.max(a)])))
}

/// Runs of two or more empty buckets as one string: `"uK"` for K joined ones (`false`), `"nK"` for
/// K breaks (`null`): a recording whose rows are further apart than a bucket stays small.
fn packed(col: &[Value]) -> Vec<Value> {
    let mut out = Vec::with_capacity(col.len());
    let mut i = 0;
    while i < col.len() {
        let v = &col[i];
        let run = col[i..].iter().take_while(|x| *x == v).count();
        match v {
            Value::Bool(_) | Value::Null if run >= 2 => {
                let tag = if v.is_null() { 'n' } else { 'u' };
                out.push(Value::String(format!("{tag}{run}")));
                i += run;
            }
            _ => {
                out.push(v.clone());
                i += 1;
            }
        }
    }
    out
}

/// A drawn chart's series: envelopes keep min, mean and max; lines their means; limits their maxima.
pub(super) fn chart(c: &Chart<'_>, conn: &Joinable<'_>, who: &str, n: usize) -> Value {
    let series: Vec<Value> = c
        .plots
        .iter()
        .filter(|p| !p.env.is_empty())
        .map(|p| {
            let mut s = json!({"label": p.label, "color": p.color});
            let (at, [min, mean, max]) = trimmed(columns(p.env, conn, n));
            s["at"] = json!(at);
            match p.style {
                Style::Envelope => {
                    s["style"] = json!("envelope");
                    s["min"] = Value::Array(min);
                    s["mean"] = Value::Array(mean);
                    s["max"] = Value::Array(max);
                }
                Style::Line => {
                    s["style"] = json!("line");
                    s["mean"] = Value::Array(mean);
                }
                Style::Limit => {
                    s["style"] = json!("limit");
                    s["max"] = Value::Array(max);
                }
            }
            s
        })
        .collect();
    json!({
        "id": c.id, "kind": c.kind, "who": who, "title": c.title, "y_label": c.y_label,
        "unit": c.unit, "include": c.include, "series": series,
        "marks": c.marks.iter().map(|(t, w)| json!([t, w])).collect::<Vec<_>>(),
    })
}

/// The heatmap's rows: each GPU's mean utilization per bucket.
pub(super) fn heat(rows: &[HeatRow<'_>], n: usize) -> Value {
    rows.iter()
        .map(|r| {
            let (at, [_, mean, _]) = trimmed(columns(r.env, &r.conn, n));
            json!({"host": r.host, "gpu": r.gpu, "label": r.label, "at": at, "mean": mean})
        })
        .collect()
}

/// Everything the script needs besides the charts: the grid (UTC µs), the data's interval, the
/// phases, the GPUs to toggle and the inputs (for the full-resolution command line it suggests).
pub(super) struct Meta<'a> {
    pub grid: Grid,
    pub interval_s: f64,
    pub bands: &'a [Band],
    pub gpus: Vec<(String, String, String)>,
    pub inputs: Vec<String>,
}

/// The JSON block `gpumon-series`.
pub(super) fn data(m: &Meta<'_>, charts: Vec<Value>, heat: Value, captions: Value) -> Value {
    json!({
        "start": m.grid.start, "end": m.grid.end, "n": m.grid.n, "interval_s": m.interval_s,
        "bands": m.bands.iter().map(|b| json!({"label": b.label, "start": b.start, "end": b.end, "color": b.color})).collect::<Vec<_>>(),
        "gpus": m.gpus.iter().map(|(h, g, l)| json!({"host": h, "gpu": g, "label": l})).collect::<Vec<_>>(),
        "inputs": m.inputs, "charts": charts, "heat": heat, "captions": captions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_and_trailing_nulls_are_left_out() {
        let col = |v: &[Option<f64>]| v.iter().map(|&x| num(x)).collect::<Vec<_>>();
        let c = col(&[None, Some(1.0), None, Some(2.0), None, None]);
        let (at, [a, _, _]) = trimmed([c.clone(), c.clone(), c]);
        assert_eq!((at, a), (1, col(&[Some(1.0), None, Some(2.0)])));
        let runs = [json!(1), Value::Bool(false), Value::Bool(false), Value::Null, Value::Null];
        let p = packed(&[&runs[..], &[Value::Null, json!(2), Value::Bool(false)]].concat());
        assert_eq!(p, vec![json!(1), json!("u2"), json!("n3"), json!(2), Value::Bool(false)]);
        let empty = col(&[None, None]);
        let (at, [a, _, _]) = trimmed([empty.clone(), empty.clone(), empty]);
        assert_eq!((at, a.len()), (2, 0));
    }

    #[test]
    fn numbers_round_and_missing_is_null() {
        assert_eq!(num(Some(61000.0)), json!(61000));
        assert_eq!(num(Some(12.3456)), json!(12.35));
        assert_eq!(num(Some(f64::NAN)), Value::Null);
        assert_eq!(num(None), Value::Null);
    }
}
