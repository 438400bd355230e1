//! Work counters in the analysis (`progress.KEY` columns, `gpumon progress`): per counter the work
//! done in the rows summarised (a run, a phase), and its rates per second, per GPU-hour and per Wh.
//!
//! A counter's cell is the amount added during its row's interval, repeated on every GPU row of a
//! tick: it is counted once per tick of a host. The time the work took is the ticks that carry a
//! value times the recording's interval (the median spacing of the ticks), so a phase that recurs,
//! and the time before the job's first report, add no time.

use arrow_array::{Array, RecordBatch};

use gpumon_schema::cols;
use gpumon_schema::progress::{MAX_KEYS, column_key};

/// Spacings kept for the interval (their median): enough for a steady recording, bounded.
const MAX_SPACINGS: usize = 4096;

/// One counter of one host.
#[derive(Debug, Clone, PartialEq)]
struct Sum {
    host: String,
    key: String,
    total: f64,
    /// Ticks with a value (the job had reported by then).
    ticks: u64,
}

/// The counters of one part of the data.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProgressAcc {
    sums: Vec<Sum>,
    /// The first and the last tick seen of each host, UTC µs.
    first: Vec<(String, i64)>,
    last: Vec<(String, i64)>,
    /// Positive spacings between ticks of a host, µs (at most [`MAX_SPACINGS`]).
    spacings: Vec<i64>,
}

/// One counter's figures in a summary.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressStat {
    /// The counter's name (`KEY` of its `progress.KEY` column).
    pub key: String,
    /// The work counted.
    pub total: f64,
    /// Work per second.
    pub per_s: Option<f64>,
    /// Work per GPU-hour.
    pub per_gpu_hour: Option<f64>,
    /// Work per watt-hour of the GPUs' energy.
    pub per_wh: Option<f64>,
}

impl ProgressAcc {
    /// Count the ticks of a batch: `rows` the first row of each tick of its host (in batch order),
    /// `ts` every row's time, `host` a row's host.
    pub(crate) fn visit<'h>(
        &mut self,
        batch: &RecordBatch,
        rows: &[u32],
        ts: &[i64],
        host: impl Fn(u32) -> &'h str,
    ) {
        let schema = batch.schema();
        let counters: Vec<(&str, &dyn Array)> = (schema.fields().iter().zip(batch.columns()))
            .filter_map(|(f, c)| column_key(f.name()).map(|k| (k, c.as_ref())))
            .take(MAX_KEYS)
            .collect();
        if counters.is_empty() || rows.is_empty() {
            return;
        }
        self.spacing(rows, ts, &host);
        let mut values = Vec::with_capacity(rows.len());
        for (key, col) in counters {
            values.clear();
            if !cols::f64_at(col, rows, &mut values) {
                continue;
            }
            for (&r, &v) in rows.iter().zip(&values) {
                if v.is_nan() || v < 0.0 {
                    continue;
                }
                let h = host(r);
                let s = self.sum(h, key);
                s.total += v;
                s.ticks += 1;
            }
        }
    }

    fn spacing<'h>(&mut self, rows: &[u32], ts: &[i64], host: &impl Fn(u32) -> &'h str) {
        for &r in rows {
            let (h, t) = (host(r), ts.get(r as usize).copied().unwrap_or(cols::NO_TS));
            match self.last.iter_mut().find(|(x, _)| x == h) {
                Some((_, prev)) => {
                    if t > *prev && self.spacings.len() < MAX_SPACINGS {
                        self.spacings.push(t - *prev);
                    }
                    *prev = t;
                }
                None => {
                    self.first.push((h.to_string(), t));
                    self.last.push((h.to_string(), t));
                }
            }
        }
    }

    fn sum(&mut self, host: &str, key: &str) -> &mut Sum {
        let i = match self.sums.iter().position(|s| s.host == host && s.key == key) {
            Some(i) => i,
            None => {
                self.sums.push(Sum {
                    host: host.to_string(),
                    key: key.to_string(),
                    total: 0.0,
                    ticks: 0,
                });
                self.sums.len() - 1
            }
        };
        &mut self.sums[i]
    }

    /// Join the counters of the data that follows this part's.
    pub(crate) fn append(&mut self, later: ProgressAcc) {
        for s in later.sums {
            let mine = self.sum(&s.host, &s.key);
            mine.total += s.total;
            mine.ticks += s.ticks;
        }
        for (h, first) in later.first {
            match self.last.iter().find(|(x, _)| *x == h) {
                Some((_, prev)) if first > *prev && self.spacings.len() < MAX_SPACINGS => {
                    self.spacings.push(first - *prev);
                }
                Some(_) => {}
                None => self.first.push((h, first)),
            }
        }
        let room = MAX_SPACINGS.saturating_sub(self.spacings.len());
        self.spacings.extend(later.spacings.iter().take(room));
        for (h, t) in later.last {
            match self.last.iter_mut().find(|(x, _)| *x == h) {
                Some((_, prev)) => *prev = t,
                None => self.last.push((h, t)),
            }
        }
    }

    /// The interval of the ticks: the median spacing, seconds.
    fn interval_s(&self) -> Option<f64> {
        let mut s = self.spacings.clone();
        if s.is_empty() {
            return None;
        }
        let mid = s.len() / 2;
        let (_, m, _) = s.select_nth_unstable(mid);
        Some(*m as f64 / 1e6)
    }

    /// Each counter's figures (in order of first appearance), for data of `gpus` GPUs that drew
    /// `energy_rate` Wh per second together.
    pub(crate) fn finish(&self, gpus: usize, energy_rate: Option<f64>) -> Vec<ProgressStat> {
        let interval = self.interval_s();
        let mut out: Vec<ProgressStat> = Vec::new();
        for s in &self.sums {
            let rate = interval.filter(|_| s.ticks > 0).map(|i| s.total / (s.ticks as f64 * i));
            match out.iter_mut().find(|p| p.key == s.key) {
                Some(p) => {
                    p.total += s.total;
                    p.per_s = match (p.per_s, rate) {
                        (Some(a), Some(b)) => Some(a + b),
                        (a, b) => a.or(b),
                    };
                }
                None => out.push(ProgressStat {
                    key: s.key.clone(),
                    total: s.total,
                    per_s: rate,
                    per_gpu_hour: None,
                    per_wh: None,
                }),
            }
        }
        for p in &mut out {
            p.per_gpu_hour = p.per_s.filter(|_| gpus > 0).map(|r| r * 3600.0 / gpus as f64);
            p.per_wh = energy_rate.filter(|e| *e > 0.0).and_then(|e| p.per_s.map(|r| r / e));
        }
        out
    }
}

/// Which figure of a counter a rate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Per {
    /// Per second (`per_s`).
    Second,
    /// Per GPU-hour (`per_gpu_hour`).
    GpuHour,
    /// Per watt-hour (`per_wh`).
    Wh,
}

impl Per {
    const ALL: [Per; 3] = [Per::Second, Per::GpuHour, Per::Wh];

    fn suffix(self) -> &'static str {
        match self {
            Per::Second => "per_s",
            Per::GpuHour => "per_gpu_hour",
            Per::Wh => "per_wh",
        }
    }
}

/// A rate of one counter, as compared and checked: `progress.samples.per_s`. The counter's name is
/// interned (at most [`MAX_INTERNED`] names a process), so the rate is `Copy` like the other measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    key: &'static str,
    /// `samples/s`, for the verdicts.
    per_s_name: &'static str,
    per: Per,
}

/// Most counter names one process interns.
const MAX_INTERNED: usize = 1024;

/// The one copy of `key` (and of its `KEY/s`), leaked once; None past [`MAX_INTERNED`] names.
fn intern(key: &str) -> Option<(&'static str, &'static str)> {
    static NAMES: std::sync::Mutex<Vec<(&'static str, &'static str)>> =
        std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().ok()?;
    if let Some(&n) = names.iter().find(|(k, _)| *k == key) {
        return Some(n);
    }
    if names.len() >= MAX_INTERNED {
        return None;
    }
    let n: (&'static str, &'static str) = (
        Box::leak(key.to_string().into_boxed_str()),
        Box::leak(format!("{key}/s").into_boxed_str()),
    );
    names.push(n);
    Some(n)
}

impl Rate {
    fn new(key: &str, per: Per) -> Option<Rate> {
        let (key, per_s_name) = intern(key)?;
        Some(Rate { key, per_s_name, per })
    }

    /// Every rate of the counters in `stats`, counter by counter.
    pub(crate) fn all(stats: &[ProgressStat]) -> Vec<Rate> {
        stats
            .iter()
            .flat_map(|p| Per::ALL.into_iter().filter_map(|per| Rate::new(&p.key, per)))
            .collect()
    }

    /// The rate a name says: `progress.KEY.per_s`, `.per_gpu_hour` or `.per_wh`.
    pub(crate) fn lookup(name: &str) -> Option<Rate> {
        let rest = name.strip_prefix(gpumon_schema::progress::PREFIX)?;
        let (key, suffix) = rest.rsplit_once('.')?;
        gpumon_schema::progress::check_key(key).ok()?;
        let per = Per::ALL.into_iter().find(|p| p.suffix() == suffix)?;
        Rate::new(key, per)
    }

    pub(crate) fn name(self) -> String {
        format!("{}{}.{}", gpumon_schema::progress::PREFIX, self.key, self.per.suffix())
    }

    pub(crate) fn unit(self) -> &'static str {
        match self.per {
            Per::Second => "/s",
            Per::GpuHour => "/GPU-h",
            Per::Wh => "/Wh",
        }
    }

    /// Its value among a summary's counters.
    pub(crate) fn value(self, stats: &[ProgressStat]) -> Option<f64> {
        let p = stats.iter().find(|p| p.key == self.key)?;
        match self.per {
            Per::Second => p.per_s,
            Per::GpuHour => p.per_gpu_hour,
            Per::Wh => p.per_wh,
        }
    }

    /// The short name of a verdict (`samples/s`): work per second only.
    pub(crate) fn verdict(self) -> Option<&'static str> {
        (self.per == Per::Second).then_some(self.per_s_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::{Float64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    fn batch(v: &[Option<f64>]) -> RecordBatch {
        let schema = Schema::new(vec![Field::new("progress.samples", DataType::Float64, true)]);
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(Float64Array::from(v.to_vec()))])
            .unwrap()
    }

    #[test]
    fn rates_count_each_tick_once_and_time_only_where_reported() {
        // Two GPU rows per tick, 0.5 s apart; the job reports from the third tick on, 100 a tick.
        let cells = [None, None, None, None, Some(100.0), Some(100.0), Some(100.0), Some(100.0)];
        let ts: Vec<i64> = (0..8).map(|i| (i / 2) * 500_000).collect();
        let firsts = [0u32, 2, 4, 6];
        let mut a = ProgressAcc::default();
        a.visit(&batch(&cells[..4]), &firsts[..2], &ts, |_| "h");
        let mut b = ProgressAcc::default();
        let later: Vec<i64> = ts[4..].to_vec();
        b.visit(&batch(&cells[4..]), &[0, 2], &later, |_| "h");
        a.append(b);
        let p = &a.finish(2, Some(0.5))[0];
        assert_eq!(p.key, "samples");
        assert_eq!(p.total, 200.0);
        assert_eq!(p.per_s, Some(200.0), "two ticks of 0.5 s with a value");
        assert_eq!(p.per_gpu_hour, Some(200.0 * 3600.0 / 2.0));
        assert_eq!(p.per_wh, Some(400.0), "200/s at 0.5 Wh/s");
        assert!(ProgressAcc::default().finish(1, None).is_empty());
    }
}
