//! The work counters of a recording (`gpumon progress samples=512`): amounts the control thread adds
//! as requests arrive, taken by the record loop once per output row (the amount added during the
//! row's interval, null for a counter before its first report). A report costs one compare-and-swap
//! per key; a row one swap per key: the tick's cost does not grow with the report rate.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use gpumon_schema::LiveCounter;

/// One declared counter.
#[derive(Debug)]
struct Counter {
    key: Arc<str>,
    /// The amount added since the last row, f64 bits.
    pending: AtomicU64,
    /// Everything added since the start, f64 bits (the live status).
    total: AtomicU64,
    /// Whether the job reported it at least once.
    seen: AtomicBool,
}

/// The counters a recording declared (`record --progress`); none until [`Counters::declare`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    declared: OnceLock<Box<[Counter]>>,
}

/// `v` added to the f64 held in `a`.
fn add_f64(a: &AtomicU64, v: f64) {
    let _ = a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| {
        Some((f64::from_bits(b) + v).to_bits())
    });
}

impl Counters {
    /// Declare the counters (once; a second call is ignored).
    pub(crate) fn declare(&self, keys: &[Arc<str>]) {
        let counters = keys
            .iter()
            .map(|k| Counter {
                key: k.clone(),
                pending: AtomicU64::new(0f64.to_bits()),
                total: AtomicU64::new(0f64.to_bits()),
                seen: AtomicBool::new(false),
            })
            .collect();
        let _ = self.declared.set(counters);
    }

    fn all(&self) -> &[Counter] {
        self.declared.get().map_or(&[], |c| &c[..])
    }

    /// Add a request's amounts; every key must be declared, else nothing is added and the error says
    /// how to declare it.
    pub(crate) fn add(&self, pairs: &[(String, f64)]) -> Result<(), String> {
        let all = self.all();
        let find = |k: &str| all.iter().find(|c| &*c.key == k);
        if let Some((k, _)) = pairs.iter().find(|(k, _)| find(k).is_none()) {
            let declared: Vec<&str> = all.iter().map(|c| &*c.key).collect();
            return Err(if declared.is_empty() {
                format!(
                    "this recording counts no work; start it with `gpumon record --progress {k} ...` to record \
                     progress.{k}"
                )
            } else if let Some(near) = closest(k, &declared) {
                format!(
                    "counter '{k}' was not declared; did you mean '{near}'? This recording counts {}",
                    declared.join(", ")
                )
            } else {
                format!(
                    "counter '{k}' was not declared; this recording counts {} (`gpumon record --progress {},{k}`)",
                    declared.join(", "),
                    declared.join(",")
                )
            });
        }
        for (k, v) in pairs {
            if let Some(c) = find(k) {
                add_f64(&c.pending, *v);
                add_f64(&c.total, *v);
                c.seen.store(true, Ordering::Release);
            }
        }
        Ok(())
    }

    /// The amounts added since the last call, in declaration order (NaN: not reported yet); None
    /// without counters.
    pub(crate) fn take(&self) -> Option<Arc<[f64]>> {
        let all = self.all();
        if all.is_empty() {
            return None;
        }
        Some(
            all.iter()
                .map(|c| {
                    // `seen` first: an amount added after the load is in the next row, never lost.
                    let seen = c.seen.load(Ordering::Acquire);
                    let v = f64::from_bits(c.pending.swap(0f64.to_bits(), Ordering::AcqRel));
                    if seen { v } else { f64::NAN }
                })
                .collect(),
        )
    }

    /// Each counter's total so far (None before its first report), in declaration order.
    pub(crate) fn totals(&self) -> Vec<(Arc<str>, Option<f64>)> {
        self.all()
            .iter()
            .map(|c| {
                let seen = c.seen.load(Ordering::Acquire);
                (c.key.clone(), seen.then(|| f64::from_bits(c.total.load(Ordering::Acquire))))
            })
            .collect()
    }
}

/// The counters' rates for the status file: each total's growth since the previous reading.
#[derive(Debug, Default)]
pub(crate) struct Meter {
    last: Option<(Instant, Vec<Option<f64>>)>,
}

impl Meter {
    /// The counters now, with their rates since the last call (null at the first).
    pub(crate) fn read(&mut self, c: &Counters) -> Vec<LiveCounter> {
        let totals = c.totals();
        if totals.is_empty() {
            return Vec::new();
        }
        let now = Instant::now();
        let out = totals
            .iter()
            .enumerate()
            .map(|(i, (key, total))| {
                let before = self
                    .last
                    .as_ref()
                    .map(|(at, t)| (now.duration_since(*at).as_secs_f64(), t.get(i)));
                let per_s = match (before, total) {
                    (Some((dt, Some(b))), Some(t)) if dt > 0.0 => Some((t - b.unwrap_or(0.0)) / dt),
                    _ => None,
                };
                LiveCounter { key: key.to_string(), total: *total, per_s }
            })
            .collect();
        self.last = Some((now, totals.into_iter().map(|(_, t)| t).collect()));
        out
    }
}

/// The declared counter a mistyped key most likely meant (`sampels` for `samples`), if one is close.
fn closest<'a>(key: &str, declared: &[&'a str]) -> Option<&'a str> {
    declared
        .iter()
        .map(|d| (strsim::normalized_damerau_levenshtein(key, d), *d))
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, d)| d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_per_interval_and_undeclared_keys_add_nothing() {
        let c = Counters::default();
        assert!(c.take().is_none(), "no counters, no columns");
        assert!(c.add(&[("samples".into(), 1.0)]).unwrap_err().contains("--progress samples"));
        c.declare(&["samples".into(), "tokens".into()]);
        let t = c.take().unwrap();
        assert!(t.iter().all(|v| v.is_nan()), "null before the first report");
        c.add(&[("samples".into(), 32.0)]).unwrap();
        c.add(&[("samples".into(), 32.0)]).unwrap();
        let e = c.add(&[("samples".into(), 1.0), ("steps".into(), 1.0)]).unwrap_err();
        assert!(
            e.contains("'steps' was not declared") && e.contains("--progress samples,tokens,steps"),
            "{e}"
        );
        let e = c.add(&[("sampels".into(), 1.0)]).unwrap_err();
        assert!(
            e.contains("did you mean 'samples'?")
                && !e.contains("--progress samples,tokens,sampels"),
            "{e}"
        );
        let t = c.take().unwrap();
        assert_eq!(t[0], 64.0, "the refused request added nothing");
        assert!(t[1].is_nan());
        assert_eq!(
            c.take().unwrap()[0],
            0.0,
            "reported before: zero in an interval without reports"
        );
        assert_eq!(c.totals()[0], ("samples".into(), Some(64.0)));
        assert_eq!(c.totals()[1].1, None);
        let mut m = Meter::default();
        let first = m.read(&c);
        assert_eq!(
            (first[0].total, first[0].per_s),
            (Some(64.0), None),
            "no rate at the first reading"
        );
        c.add(&[("samples".into(), 100.0)]).unwrap();
        let next = m.read(&c);
        assert!(next[0].per_s.is_some_and(|r| r > 100.0), "100 in well under a second: {next:?}");
        assert_eq!(next[1].per_s, None, "never reported: no rate");
    }
}
