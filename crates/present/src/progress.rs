//! The job's work counters in the reports (`progress.KEY`): per counter its total and its rates per
//! second, per GPU-hour and per Wh, as a JSON object keyed by counter and as one text line.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{count, num};
use gpumon_analysis::ProgressStat;

/// One counter's figures in the JSON reports (`progress.KEY`); null rates where they cannot be told.
#[derive(Serialize)]
pub(crate) struct Rates {
    /// The work done over the run.
    total: f64,
    /// Per second of the run.
    per_s: Option<f64>,
    /// Per GPU-hour.
    per_gpu_hour: Option<f64>,
    /// Per watt-hour of the GPUs' energy.
    per_wh: Option<f64>,
}

/// `{KEY: {total, per_s, per_gpu_hour, per_wh}}`.
pub(crate) fn json(stats: &[ProgressStat]) -> BTreeMap<&str, Rates> {
    (stats.iter())
        .map(|p| {
            let rates = Rates {
                total: p.total,
                per_s: p.per_s,
                per_gpu_hour: p.per_gpu_hour,
                per_wh: p.per_wh,
            };
            (p.key.as_str(), rates)
        })
        .collect()
}

/// A number for people: `1,234`, `13`, `12.3`, `0.052`.
fn amount(v: Option<f64>) -> String {
    match v {
        Some(x) if x.abs() >= 100.0 => count(Some(x)),
        // Counts are whole: 13, not 13.0.
        Some(x) if x.fract() == 0.0 => count(Some(x)),
        Some(x) if x.abs() >= 1.0 => num(Some(x), 1),
        Some(x) => num(Some(x), 3),
        None => "-".into(),
    }
}

/// One line per counter: `Work: samples 30,000 total, 1,998/s, 3,596,400/GPU-hour, 412/Wh`.
pub(crate) fn lines(stats: &[ProgressStat]) -> Vec<String> {
    stats
        .iter()
        .map(|p| {
            format!(
                "Work: {} {} total, {}/s, {}/GPU-hour, {}/Wh",
                p.key,
                amount(Some(p.total)),
                amount(p.per_s),
                amount(p.per_gpu_hour),
                amount(p.per_wh)
            )
        })
        .collect()
}

/// `work samples 1,998/s (30,000 so far)  tokens - (none yet)` for `gpumon watch`; None without counters.
pub(crate) fn watch_line(counters: &[gpumon_schema::LiveCounter]) -> Option<String> {
    if counters.is_empty() {
        return None;
    }
    let parts: Vec<String> = counters
        .iter()
        .map(|c| match c.total {
            None => format!("{} - (none yet)", c.key),
            Some(t) => format!("{} {}/s ({} so far)", c.key, amount(c.per_s), amount(Some(t))),
        })
        .collect();
    Some(format!("work {}", parts.join("  ")))
}
