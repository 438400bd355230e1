//! Axes for the report's charts: "nice" value ticks (1, 2, 5 × 10^k steps), UTC time ticks on
//! round wall-clock steps (seconds to weeks), and number labels.

use chrono::{DateTime, Utc};

/// A value axis from `lo` to `hi` with its tick values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ValueAxis {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
}

/// The 1-2-5 step giving about `target` intervals over `span`.
fn nice_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// An axis covering `[lo, hi]`, its ends rounded out to whole steps (about 4 intervals).
pub(crate) fn value_axis(lo: f64, hi: f64) -> ValueAxis {
    let (mut lo, mut hi) =
        if lo.is_finite() && hi.is_finite() { (lo.min(hi), lo.max(hi)) } else { (0.0, 1.0) };
    if hi - lo < 1e-9 {
        let pad = if hi.abs() > 1e-9 { hi.abs() * 0.1 } else { 1.0 };
        if lo >= 0.0 && lo - pad < 0.0 {
            lo = 0.0;
        } else {
            lo -= pad;
        }
        hi += pad;
    }
    let step = nice_step(hi - lo, 4.0);
    let lo = (lo / step).floor() * step;
    let hi = (hi / step).ceil() * step;
    let mut ticks = Vec::new();
    let mut k = 0.0;
    while lo + k * step <= hi + step * 1e-6 && ticks.len() < 20 {
        ticks.push(lo + k * step);
        k += 1.0;
    }
    ValueAxis { lo, hi, ticks }
}

/// A tick label: thousands grouped, at most the decimals the step needs.
pub(super) fn label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 || step <= 0.0 { 0 } else { (-step.log10().floor()) as usize };
    let v = if v.abs() < step * 1e-6 { 0.0 } else { v };
    let s = format!("{:.*}", decimals.min(6), v);
    group(&s)
}

/// `81559` → `81,559`; `-1234.5` → `-1,234.5`.
pub(super) fn group(s: &str) -> String {
    let (sign, rest) = s.strip_prefix('-').map_or(("", s), |r| ("-", r));
    let (int, frac) = rest.split_once('.').map_or((rest, None), |(i, f)| (i, Some(f)));
    let mut out = String::from(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// Wall-clock steps for time ticks, seconds.
const STEPS: [i64; 22] = [
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
    172800, 345600, 604800, 1209600,
];

/// Time ticks (UTC µs) over `[start, end]` on a round step giving at most `max_ticks`, with labels.
pub(crate) fn time_ticks(start: i64, end: i64, max_ticks: usize) -> Vec<(i64, String)> {
    let span_s = ((end - start) as f64 / 1e6).max(1e-3);
    let step =
        STEPS.iter().copied().find(|&s| span_s / s as f64 <= max_ticks as f64).unwrap_or(2_419_200);
    let step_us = step * 1_000_000;
    let first = start.div_euclid(step_us) * step_us;
    let first = if first < start { first + step_us } else { first };
    let multi_day = end - start >= 86_400_000_000 || day(start) != day(end);
    let mut out = Vec::new();
    let mut t = first;
    while t <= end && out.len() <= max_ticks + 1 {
        out.push((t, time_label(t, step, multi_day)));
        t += step_us;
    }
    out
}

fn day(us: i64) -> Option<chrono::NaiveDate> {
    DateTime::<Utc>::from_timestamp_micros(us).map(|d| d.date_naive())
}

fn time_label(us: i64, step_s: i64, multi_day: bool) -> String {
    let Some(d) = DateTime::<Utc>::from_timestamp_micros(us) else { return String::new() };
    let fmt = if step_s >= 86_400 {
        "%b %d"
    } else if multi_day {
        "%b %d %H:%M"
    } else if step_s >= 60 {
        "%H:%M"
    } else {
        "%H:%M:%S"
    };
    d.format(fmt).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_axes_are_round() {
        let a = value_axis(0.0, 100.0);
        assert_eq!((a.lo, a.hi), (0.0, 100.0));
        assert_eq!(a.ticks, [0.0, 25.0, 50.0, 75.0, 100.0]);
        let a = value_axis(0.0, 81559.0);
        assert_eq!(a.hi, 100000.0);
        let a = value_axis(31.0, 74.0);
        assert_eq!((a.lo, a.hi), (20.0, 80.0));
        let flat = value_axis(5.0, 5.0);
        assert!(flat.lo <= 5.0 && flat.hi > 5.0);
        let zero = value_axis(0.0, 0.0);
        assert_eq!((zero.lo, zero.hi), (0.0, 1.0));
        assert_eq!(label(81559.0, 1.0), "81,559");
        assert_eq!(label(0.25, 0.05), "0.25");
        assert_eq!(group("-1234567.5"), "-1,234,567.5");
    }

    #[test]
    fn time_ticks_on_round_steps() {
        // 2026-01-01T00:00:00Z, 30 days.
        let start = 1_767_225_600_000_000;
        let t = time_ticks(start, start + 30 * 86_400_000_000, 8);
        assert!(t.len() >= 4 && t.len() <= 9, "{t:?}");
        assert!(t[0].1.starts_with("Jan 0") && t[0].1.len() == 6, "{t:?}");
        let t = time_ticks(start + 5_000_000, start + 65_000_000, 8);
        assert_eq!(t[0], (start + 10_000_000, "00:00:10".into()));
        let t = time_ticks(start - 3_600_000_000, start + 3_600_000_000, 8);
        assert!(t.iter().any(|(_, l)| l == "Jan 01 00:00"), "{t:?}");
    }
}
