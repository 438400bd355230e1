//! The sample-spacing histogram of a series: interval, gaps, coverage and power-integrated energy
//! without keeping the rows.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Fsum;

/// Spacing histogram: exact below 128 µs, then 128 log-linear sub-buckets per power of two
/// (relative width 1/128 ≈ 0.8 %), up to 2^42 µs (51 days); longer steps share the last bucket.
pub(super) const SUB_BITS: u32 = 7;
pub(super) const SUB: u64 = 1 << SUB_BITS;
pub(super) const MAX_EXP: u32 = 42;
pub(super) const SPACING_BUCKETS: usize = (SUB + (MAX_EXP - SUB_BITS + 1) as u64 * SUB) as usize;
/// Longest gaps remembered per series (the rest are only counted).
pub(crate) const TOP_GAPS: usize = 64;

pub(super) fn bucket(dt: u64) -> usize {
    if dt < SUB {
        return dt as usize;
    }
    let e = (63 - dt.leading_zeros()).min(MAX_EXP);
    let sub = if e == MAX_EXP && dt >> MAX_EXP > 1 {
        SUB - 1
    } else {
        (dt >> (e - SUB_BITS)) & (SUB - 1)
    };
    (SUB + u64::from(e - SUB_BITS) * SUB + sub) as usize
}

pub(super) fn bucket_lo(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let k = (i - SUB) / SUB;
    let sub = (i - SUB) % SUB;
    (SUB + sub) << k
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SpBucket {
    pub(super) n: u64,
    pub(super) dt: u64,
    /// Power × spacing of the steps in this bucket, joules (independent of the order of the steps).
    pub(super) joules: Fsum,
}

/// A gap in the data: no sample between `start` and `end` (UTC µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Gap {
    /// Where the gap starts.
    pub start: i64,
    /// Where it ends.
    pub end: i64,
}

/// Timing of one series: steps between consecutive samples, energy from power and from the counter.
#[derive(Debug, Clone)]
pub struct Timing {
    pub(super) prev: Option<i64>,
    prev_counter: f64,
    /// The first sample of this stretch (ts, power), for `append`.
    first: Option<(i64, f64)>,
    /// The first reading of the counter in this stretch (NaN before one), for `append`: the step
    /// that joins two stretches is from the last reading of the earlier to the first of the later,
    /// whichever rows they are on.
    first_counter: f64,
    /// The spacing histogram's buckets that hold a step, by bucket index (sorted; a series has a
    /// few distinct steps, not the 4,736 buckets: 24 bytes each, 110 KiB a GPU when dense).
    pub(super) buckets: Vec<(u32, SpBucket)>,
    /// The last step and its bucket (steps repeat: the bucket is computed once per new step).
    last_step: (u64, usize),
    top: BinaryHeap<Reverse<(u64, i64)>>,
    /// Steps that went back in time (inputs out of order); not counted.
    pub backwards: u64,
    counter_j: Fsum,
    counter_steps: u64,
    /// Counter steps that went down (driver reload): not counted.
    pub resets: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            prev: None,
            prev_counter: f64::NAN,
            first: None,
            first_counter: f64::NAN,
            buckets: Vec::new(),
            last_step: (0, 0),
            top: BinaryHeap::new(),
            backwards: 0,
            counter_j: Fsum::default(),
            counter_steps: 0,
            resets: 0,
        }
    }
}

/// What [`Timing::finish`] derives.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimingStats {
    /// Median of the positive spacings, seconds.
    pub interval_s: Option<f64>,
    /// Time between samples not counting gaps, seconds.
    pub(crate) covered_s: f64,
    pub(crate) gaps: u64,
    pub(crate) gap_s: f64,
    /// The longest gaps (at most [`TOP_GAPS`]), in time order.
    pub listed: Vec<Gap>,
    /// Power integrated over the spacing of the samples, gaps left out, joules.
    pub(crate) integrated_j: Option<f64>,
    /// Sum of the non-negative steps of `energy.total`, joules.
    pub(crate) counter_j: Option<f64>,
}

impl Timing {
    /// One sample of the series, in time order. `power` / `counter` are NaN when missing.
    #[inline]
    pub(crate) fn step(&mut self, ts: i64, power: f64, counter: f64) {
        match self.prev {
            None => self.first = Some((ts, power)),
            Some(p) if ts < p => self.backwards += 1,
            Some(p) if ts > p => {
                let dt = (ts - p) as u64;
                if self.last_step.0 != dt {
                    self.last_step = (dt, bucket(dt));
                }
                let at = self.slot(self.last_step.1);
                let b = &mut self.buckets[at].1;
                b.n += 1;
                b.dt += dt;
                if !power.is_nan() {
                    b.joules.add(power * dt as f64 * 1e-6);
                }
                self.top_gap(dt, p);
            }
            Some(_) => {}
        }
        self.counter_step(counter);
        self.prev = Some(ts);
    }

    /// The position of bucket `index` in the sparse histogram, made (empty) when missing.
    fn slot(&mut self, index: usize) -> usize {
        let key = index as u32;
        match self.buckets.binary_search_by_key(&key, |(i, _)| *i) {
            Ok(at) => at,
            Err(at) => {
                self.buckets.insert(at, (key, SpBucket::default()));
                at
            }
        }
    }

    /// [`Timing::step`] for consecutive samples of the series (`power` and `counter` as long as
    /// `ts`; no counter column is the same as NaN counters). A run of equal steps is counted with
    /// its bucket held in registers, its joules added in the same order: the same figures as one
    /// `step` each.
    pub(crate) fn steps(&mut self, ts: &[i64], power: &[f64], counter: Option<&[f64]>) {
        match counter {
            Some(c) => self.steps_with::<true>(ts, power, c),
            None => self.steps_with::<false>(ts, power, &[]),
        }
    }

    /// [`Timing::steps`], with (`C`) or without a counter column.
    fn steps_with<const C: bool>(&mut self, ts: &[i64], power: &[f64], counter: &[f64]) {
        let n = if C {
            ts.len().min(power.len()).min(counter.len())
        } else {
            ts.len().min(power.len())
        };
        let counter_at = |k: usize| if C { counter[k] } else { f64::NAN };
        let mut k = 0;
        while k < n {
            let (t, prev) = (ts[k], self.prev.unwrap_or(i64::MAX));
            if t <= prev || self.buckets.is_empty() {
                // The first sample, a step back, a repeated stamp, the first step: one at a time.
                self.step(t, power[k], counter_at(k));
                k += 1;
                continue;
            }
            let dt = (t - prev) as u64;
            if self.last_step.0 != dt {
                self.last_step = (dt, bucket(dt));
            }
            let at = self.slot(self.last_step.1);
            let mut b = self.buckets[at].1;
            let mut last = prev;
            // While the longest steps kept are all at least this one, the run leaves them alone.
            let mut quiet = false;
            while k < n && ts[k].wrapping_sub(last) as u64 == dt {
                b.n += 1;
                b.dt += dt;
                if !power[k].is_nan() {
                    b.joules.add(power[k] * dt as f64 * 1e-6);
                }
                if !quiet {
                    self.top_gap(dt, last);
                    quiet = self.top.len() >= TOP_GAPS
                        && self.top.peek().is_some_and(|Reverse((m, _))| dt <= *m);
                }
                if C {
                    self.counter_step(counter[k]);
                }
                last = ts[k];
                k += 1;
            }
            self.buckets[at].1 = b;
            self.prev = Some(last);
        }
    }

    /// Remember a step among the longest ones.
    #[inline]
    fn top_gap(&mut self, dt: u64, start: i64) {
        if self.top.len() < TOP_GAPS {
            self.top.push(Reverse((dt, start)));
        } else if self.top.peek().is_some_and(|Reverse((m, _))| dt > *m) {
            self.top.pop();
            self.top.push(Reverse((dt, start)));
        }
    }

    /// One reading of the energy counter (NaN when missing).
    #[inline]
    fn counter_step(&mut self, counter: f64) {
        if !counter.is_nan() {
            if self.prev_counter.is_nan() {
                self.first_counter = counter;
            } else {
                let d = counter - self.prev_counter;
                if d >= 0.0 {
                    self.counter_j.add(d);
                    self.counter_steps += 1;
                } else {
                    self.resets += 1;
                }
            }
            self.prev_counter = counter;
        }
    }

    fn add_counts(&mut self, other: &Timing) {
        for &(index, b) in &other.buckets {
            let at = self.slot(index as usize);
            let a = &mut self.buckets[at].1;
            a.n += b.n;
            a.dt += b.dt;
            a.joules.pool(&b.joules);
        }
        for &Reverse(g) in &other.top {
            if self.top.len() < TOP_GAPS {
                self.top.push(Reverse(g));
            } else if self.top.peek().is_some_and(|Reverse(m)| g > *m) {
                self.top.pop();
                self.top.push(Reverse(g));
            }
        }
        self.backwards += other.backwards;
        self.counter_j.pool(&other.counter_j);
        self.counter_steps += other.counter_steps;
        self.resets += other.resets;
    }

    /// Join the stretch that follows this one in time.
    pub(crate) fn append(&mut self, later: Timing) {
        if let Some((ts, p)) = later.first {
            if self.prev.is_some() {
                self.step(ts, p, f64::NAN);
            } else {
                self.first = later.first;
            }
        }
        if self.prev_counter.is_nan() {
            self.first_counter = later.first_counter;
        } else {
            self.counter_step(later.first_counter);
        }
        self.add_counts(&later);
        if later.prev.is_some() {
            self.prev = later.prev;
        }
        if !later.prev_counter.is_nan() {
            self.prev_counter = later.prev_counter;
        }
    }

    /// Add another series' steps (for figures over several GPUs).
    pub(crate) fn pool(&mut self, other: &Timing) {
        self.add_counts(other);
    }

    /// Interval, gaps (steps longer than `gap_k` × the interval), coverage and energy.
    pub fn finish(&self, gap_k: f64) -> TimingStats {
        let mut st = TimingStats {
            counter_j: (self.counter_steps > 0).then(|| self.counter_j.value()),
            ..Default::default()
        };
        // Bucket 0 holds no positive step.
        let positive = || self.buckets.iter().filter(|(i, _)| *i > 0);
        let total: u64 = positive().map(|(_, b)| b.n).sum();
        if total == 0 {
            return st;
        }
        // Median of the positive steps (nearest rank), as the mean step inside its bucket.
        let rank = total.div_ceil(2);
        let mut cum = 0u64;
        let mut median = 0.0;
        for (_, b) in positive() {
            cum += b.n;
            if cum >= rank && b.n > 0 {
                median = b.dt as f64 / b.n as f64;
                break;
            }
        }
        st.interval_s = Some(median.round() / 1e6);
        let thr = median * gap_k;
        let mut joules = Fsum::default();
        let (mut covered, mut gap_us) = (0u64, 0u64);
        for (i, b) in positive().map(|(i, b)| (*i as usize, b)) {
            if b.n == 0 {
                continue;
            }
            // A bucket straddling the threshold is judged by its mean step.
            let gap = if (bucket_lo(i) as f64) > thr {
                true
            } else if i + 1 < SPACING_BUCKETS && (bucket_lo(i + 1) as f64) <= thr {
                false
            } else {
                b.dt as f64 / b.n as f64 > thr
            };
            if gap {
                st.gaps += b.n;
                gap_us += b.dt;
            } else {
                covered += b.dt;
                joules.pool(&b.joules);
            }
        }
        st.covered_s = covered as f64 / 1e6;
        st.gap_s = gap_us as f64 / 1e6;
        st.integrated_j = Some(joules.value());
        let mut listed: Vec<Gap> = self
            .top
            .iter()
            .filter(|Reverse((dt, _))| *dt as f64 > thr)
            .map(|Reverse((dt, start))| Gap { start: *start, end: start + *dt as i64 })
            .collect();
        listed.sort();
        st.listed = listed;
        st
    }
}
