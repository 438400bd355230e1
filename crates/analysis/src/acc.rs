//! Streaming accumulators with constant memory per GPU and per host: value histograms (exact
//! percentiles), moments, and the sample-spacing histogram that yields interval, gaps, coverage and
//! power-integrated energy without keeping the rows.
//!
//! What is kept of each field follows the catalogue's `summary` column ([`inputs`], [`FieldAcc`]);
//! the rest feeds the statistics derived from several fields (memory total, throttle reasons,
//! input-bound rows).
//!
//! Two ways to combine: `append` joins a later stretch of the same series (the step across the
//! boundary is counted), `pool` adds a different series (for the over-all figures).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::LazyLock;

use crate::diag::DiagAcc;
use crate::stat::{Scope, summarised};
use gpumon_schema::catalog::{Field, Reduce, Ty};
use gpumon_schema::cols::NO_I64;

/// Spacing histogram: exact below 128 µs, then 128 log-linear sub-buckets per power of two
/// (relative width 1/128 ≈ 0.8 %), up to 2^42 µs (51 days); longer steps share the last bucket.
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
const MAX_EXP: u32 = 42;
const SPACING_BUCKETS: usize = (SUB + (MAX_EXP - SUB_BITS + 1) as u64 * SUB) as usize;
/// Longest gaps remembered per series (the rest are only counted).
pub const TOP_GAPS: usize = 64;

fn bucket(dt: u64) -> usize {
    if dt < SUB {
        return dt as usize;
    }
    let e = (63 - dt.leading_zeros()).min(MAX_EXP);
    let sub = if e == MAX_EXP && dt >> MAX_EXP > 1 { SUB - 1 } else { (dt >> (e - SUB_BITS)) & (SUB - 1) };
    (SUB + u64::from(e - SUB_BITS) * SUB + sub) as usize
}

fn bucket_lo(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let k = (i - SUB) / SUB;
    let sub = (i - SUB) % SUB;
    (SUB + sub) << k
}

#[derive(Debug, Clone, Copy, Default)]
struct SpBucket {
    n: u64,
    dt: u64,
    /// Power × spacing of the steps in this bucket, joules.
    joules: f64,
}

/// A gap in the data: no sample between `start` and `end` (UTC µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Gap {
    pub start: i64,
    pub end: i64,
}

/// Timing of one series: steps between consecutive samples, energy from power and from the counter.
#[derive(Debug, Clone)]
pub struct Timing {
    prev: Option<i64>,
    prev_counter: f64,
    /// The first sample of this stretch (ts, power), for `append`.
    first: Option<(i64, f64)>,
    /// The first reading of the counter in this stretch (NaN before one), for `append`: the step
    /// that joins two stretches is from the last reading of the earlier to the first of the later,
    /// whichever rows they are on.
    first_counter: f64,
    buckets: Vec<SpBucket>,
    /// The last step and its bucket (steps repeat: the bucket is computed once per new step).
    last_step: (u64, usize),
    top: BinaryHeap<Reverse<(u64, i64)>>,
    /// Steps that went back in time (inputs out of order); not counted.
    pub backwards: u64,
    counter_j: f64,
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
            counter_j: 0.0,
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
    pub covered_s: f64,
    pub gaps: u64,
    pub gap_s: f64,
    /// The longest gaps (at most [`TOP_GAPS`]), in time order.
    pub listed: Vec<Gap>,
    /// Power integrated over the spacing of the samples, gaps left out, joules.
    pub integrated_j: Option<f64>,
    /// Sum of the non-negative steps of `energy.total`, joules.
    pub counter_j: Option<f64>,
}

impl Timing {
    /// One sample of the series, in time order. `power` / `counter` are NaN when missing.
    #[inline]
    pub fn step(&mut self, ts: i64, power: f64, counter: f64) {
        match self.prev {
            None => self.first = Some((ts, power)),
            Some(p) if ts < p => self.backwards += 1,
            Some(p) if ts > p => {
                let dt = (ts - p) as u64;
                if self.buckets.is_empty() {
                    self.buckets = vec![SpBucket::default(); SPACING_BUCKETS];
                }
                if self.last_step.0 != dt {
                    self.last_step = (dt, bucket(dt));
                }
                let b = &mut self.buckets[self.last_step.1];
                b.n += 1;
                b.dt += dt;
                if !power.is_nan() {
                    b.joules += power * dt as f64 * 1e-6;
                }
                self.top_gap(dt, p);
            }
            Some(_) => {}
        }
        self.counter_step(counter);
        self.prev = Some(ts);
    }

    /// [`Timing::step`] for consecutive samples of the series (`power` and `counter` as long as
    /// `ts`; no counter column is the same as NaN counters). A run of equal steps is counted with
    /// its bucket held in registers, its joules added in the same order: the same figures as one
    /// `step` each.
    pub fn steps(&mut self, ts: &[i64], power: &[f64], counter: Option<&[f64]>) {
        match counter {
            Some(c) => self.steps_with::<true>(ts, power, c),
            None => self.steps_with::<false>(ts, power, &[]),
        }
    }

    /// [`Timing::steps`], with (`C`) or without a counter column.
    fn steps_with<const C: bool>(&mut self, ts: &[i64], power: &[f64], counter: &[f64]) {
        let n = if C { ts.len().min(power.len()).min(counter.len()) } else { ts.len().min(power.len()) };
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
            let at = self.last_step.1;
            let mut b = self.buckets[at];
            let mut last = prev;
            // While the longest steps kept are all at least this one, the run leaves them alone.
            let mut quiet = false;
            while k < n && ts[k].wrapping_sub(last) as u64 == dt {
                b.n += 1;
                b.dt += dt;
                if !power[k].is_nan() {
                    b.joules += power[k] * dt as f64 * 1e-6;
                }
                if !quiet {
                    self.top_gap(dt, last);
                    quiet = self.top.len() >= TOP_GAPS && self.top.peek().is_some_and(|Reverse((m, _))| dt <= *m);
                }
                if C {
                    self.counter_step(counter[k]);
                }
                last = ts[k];
                k += 1;
            }
            self.buckets[at] = b;
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
                    self.counter_j += d;
                    self.counter_steps += 1;
                } else {
                    self.resets += 1;
                }
            }
            self.prev_counter = counter;
        }
    }

    fn add_counts(&mut self, other: &Timing) {
        if !other.buckets.is_empty() {
            if self.buckets.is_empty() {
                self.buckets = other.buckets.clone();
            } else {
                for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
                    a.n += b.n;
                    a.dt += b.dt;
                    a.joules += b.joules;
                }
            }
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
        self.counter_j += other.counter_j;
        self.counter_steps += other.counter_steps;
        self.resets += other.resets;
    }

    /// Join the stretch that follows this one in time.
    pub fn append(&mut self, later: Timing) {
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
    pub fn pool(&mut self, other: &Timing) {
        self.add_counts(other);
    }

    /// Interval, gaps (steps longer than `gap_k` × the interval), coverage and energy.
    pub fn finish(&self, gap_k: f64) -> TimingStats {
        let mut st =
            TimingStats { counter_j: (self.counter_steps > 0).then_some(self.counter_j), ..Default::default() };
        let total: u64 = self.buckets.iter().skip(1).map(|b| b.n).sum();
        if total == 0 {
            return st;
        }
        // Median of the positive steps (nearest rank), as the mean step inside its bucket.
        let rank = total.div_ceil(2);
        let mut cum = 0u64;
        let mut median = 0.0;
        for b in self.buckets.iter().skip(1) {
            cum += b.n;
            if cum >= rank && b.n > 0 {
                median = b.dt as f64 / b.n as f64;
                break;
            }
        }
        st.interval_s = Some(median.round() / 1e6);
        let thr = median * gap_k;
        let mut joules = 0.0;
        let (mut covered, mut gap_us) = (0u64, 0u64);
        for (i, b) in self.buckets.iter().enumerate().skip(1) {
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
                joules += b.joules;
            }
        }
        st.covered_s = covered as f64 / 1e6;
        st.gap_s = gap_us as f64 / 1e6;
        st.integrated_j = Some(joules);
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

/// Count, sum, min and max of a value.
#[derive(Debug, Clone, Copy)]
pub struct Moments {
    pub n: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
}

impl Default for Moments {
    fn default() -> Self {
        Moments { n: 0, sum: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY }
    }
}

impl Moments {
    #[inline]
    pub fn add(&mut self, v: f64) {
        self.n += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Add every value of `vals` that is not NaN, in order (the same sums as one [`Moments::add`]
    /// each, with the running figures kept in registers).
    #[inline]
    pub fn add_slice(&mut self, vals: &[f64]) {
        let (mut n, mut sum, mut min, mut max) = (self.n, self.sum, self.min, self.max);
        for &v in vals.iter().filter(|v| !v.is_nan()) {
            n += 1;
            sum += v;
            min = min.min(v);
            max = max.max(v);
        }
        *self = Moments { n, sum, min, max };
    }

    /// [`Moments::add_slice`] for whole numbers (`NO_I64` = missing) of at most 32 bits, added
    /// exactly: the same figures as one f64 add each while the sum stays below 2^53.
    #[inline]
    pub fn add_ints(&mut self, vals: &[i64]) {
        let (n, sum, min, max) = int_moments(vals);
        self.add_int_moments(n, sum, min, max);
    }

    /// [`Moments::add_ints`] of the values counted in `counts` (`counts[k]` values equal to
    /// `lo + k`): the same figures.
    pub fn add_counts(&mut self, lo: i64, counts: &[u32]) {
        let (mut n, mut sum, mut min, mut max) = (0u64, 0i128, i64::MAX, i64::MIN);
        for (k, &c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            let v = lo + k as i64;
            n += u64::from(c);
            sum += i128::from(v) * i128::from(c);
            min = min.min(v);
            max = max.max(v);
        }
        self.add_int_moments(n, sum, min, max);
    }

    fn add_int_moments(&mut self, n: u64, sum: i128, min: i64, max: i64) {
        if n > 0 {
            self.n += n;
            self.sum += sum as f64;
            self.min = self.min.min(min as f64);
            self.max = self.max.max(max as f64);
        }
    }

    pub fn pool(&mut self, o: &Moments) {
        self.n += o.n;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    pub fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }
}

/// Count, sum, min and max of whole numbers (`NO_I64` = missing); the sum is exact (i128).
#[inline]
fn int_moments(vals: &[i64]) -> (u64, i128, i64, i64) {
    let (mut n, mut sum, mut min, mut max) = (0u64, 0i128, i64::MAX, i64::MIN);
    // Without branches: a missing value (`NO_I64` = i64::MIN) adds nothing and never wins the
    // maximum. Values of at most 32 bits: a chunk of 2^20 of them sums exactly in an i64.
    for chunk in vals.chunks(1 << 20) {
        let mut s = 0i64;
        for &v in chunk {
            let ok = v != NO_I64;
            n += u64::from(ok);
            s += if ok { v } else { 0 };
            min = min.min(if ok { v } else { i64::MAX });
            max = max.max(v);
        }
        sum += i128::from(s);
    }
    (n, sum, min, max)
}

/// A percent histogram: 0..=100 in steps of `1/scale` (values rounded to the step, clamped).
#[derive(Debug, Clone)]
pub struct Hist {
    counts: Vec<u64>,
    scale: f64,
    n: u64,
}

impl Hist {
    /// `scale` buckets per percentage point: 1 for integer percents, 10 for 0.1 % resolution.
    pub fn new(scale: u32) -> Hist {
        Hist { counts: vec![0; 100 * scale as usize + 1], scale: f64::from(scale), n: 0 }
    }

    #[inline]
    pub fn add(&mut self, v: f64) {
        let last = self.counts.len() - 1;
        self.counts[Self::bucket(v, self.scale, last)] += 1;
        self.n += 1;
    }

    /// Round half up (values are percentages, never negative in practice); cheaper than f64::round.
    #[inline]
    fn bucket(v: f64, scale: f64, last: usize) -> usize {
        (((v * scale).max(0.0) + 0.5) as usize).min(last)
    }

    /// [`Hist::add`] every whole number of `vals` (`NO_I64` = missing; at most 32 bits): the same
    /// buckets without a float conversion.
    #[inline]
    pub fn add_ints(&mut self, vals: &[i64]) {
        let (scale, last) = (self.scale as i64, self.counts.len() as i64 - 1);
        let counts = &mut self.counts[..];
        let mut n = 0;
        for &v in vals.iter().filter(|&&v| v != NO_I64) {
            if let Some(c) = counts.get_mut((v * scale).clamp(0, last) as usize) {
                *c += 1;
            }
            n += 1;
        }
        self.n += n;
    }

    /// [`Hist::add_ints`] of the values counted in `counts` (`counts[k]` values equal to `lo + k`).
    pub fn add_counts(&mut self, lo: i64, counts: &[u32]) {
        let (scale, last) = (self.scale as i64, self.counts.len() as i64 - 1);
        for (k, &c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            if let Some(b) = self.counts.get_mut(((lo + k as i64) * scale).clamp(0, last) as usize) {
                *b += u64::from(c);
            }
            self.n += u64::from(c);
        }
    }

    /// [`Hist::add`] every value of `vals` that is not NaN.
    #[inline]
    pub fn add_slice(&mut self, vals: &[f64]) {
        let (scale, last) = (self.scale, self.counts.len() - 1);
        let counts = &mut self.counts[..];
        let mut n = 0;
        for &v in vals.iter().filter(|v| !v.is_nan()) {
            if let Some(c) = counts.get_mut(Self::bucket(v, scale, last)) {
                *c += 1;
            }
            n += 1;
        }
        self.n += n;
    }

    pub fn pool(&mut self, o: &Hist) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.n += o.n;
    }

    /// Nearest-rank percentile: the smallest value with at least `ceil(p/100 × n)` values at or below it.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        let n = self.n;
        if n == 0 {
            return None;
        }
        let rank = ((p / 100.0 * n as f64).ceil() as u64).clamp(1, n);
        let mut cum = 0u64;
        for (i, c) in self.counts.iter().enumerate() {
            cum += c;
            if cum >= rank {
                return Some(i as f64 / self.scale);
            }
        }
        None
    }

    /// Share (%) of the values below `x` (compared after rounding to the histogram's step).
    pub fn pct_below(&self, x: f64) -> Option<f64> {
        let n = self.n;
        if n == 0 {
            return None;
        }
        let below: u64 =
            self.counts.iter().enumerate().filter(|(i, _)| (*i as f64) / self.scale < x).map(|(_, c)| c).sum();
        Some(100.0 * below as f64 / n as f64)
    }
}

fn max2(a: &Moments, b: &Moments) -> Option<f64> {
    match (a.max(), b.max()) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// What is kept of one summarised field (the catalogue's `summary`): moments, the maxima of its
/// `.max` companion column, and a percent histogram when percentiles are declared (whole points for
/// integer fields, 0.1 for floats).
#[derive(Debug, Clone)]
pub struct FieldAcc {
    pub m: Moments,
    pub max_col: Moments,
    pub hist: Option<Hist>,
}

impl FieldAcc {
    pub fn new(f: Field) -> FieldAcc {
        let d = f.def();
        let scale = if d.ty == Ty::F64 { 10 } else { 1 };
        let hist = d.summary.iter().any(|r| r.percentile().is_some()).then(|| Hist::new(scale));
        FieldAcc { m: Moments::default(), max_col: Moments::default(), hist }
    }

    #[inline]
    pub fn add(&mut self, v: f64) {
        self.m.add(v);
        if let Some(h) = &mut self.hist {
            h.add(v);
        }
    }

    /// [`FieldAcc::add`] every value of `vals` that is not NaN.
    #[inline]
    pub fn add_slice(&mut self, vals: &[f64]) {
        self.m.add_slice(vals);
        if let Some(h) = &mut self.hist {
            h.add_slice(vals);
        }
    }

    /// [`FieldAcc::add_slice`] for whole numbers ([`Moments::add_ints`]).
    #[inline]
    pub fn add_ints(&mut self, vals: &[i64]) {
        self.m.add_ints(vals);
        if let Some(h) = &mut self.hist {
            h.add_ints(vals);
        }
    }

    /// [`FieldAcc::add_ints`] of the values counted in `counts` ([`Moments::add_counts`]).
    pub fn add_counts(&mut self, lo: i64, counts: &[u32]) {
        self.m.add_counts(lo, counts);
        if let Some(h) = &mut self.hist {
            h.add_counts(lo, counts);
        }
    }

    fn pool(&mut self, o: &FieldAcc) {
        self.m.pool(&o.m);
        self.max_col.pool(&o.max_col);
        if let (Some(a), Some(b)) = (&mut self.hist, &o.hist) {
            a.pool(b);
        }
    }

    /// The statistic; the maximum includes the companion column's.
    pub fn reduce(&self, r: Reduce) -> Option<f64> {
        match r {
            Reduce::Mean => self.m.mean(),
            Reduce::Max => max2(&self.m, &self.max_col),
            Reduce::P50 | Reduce::P95 => self.hist.as_ref().and_then(|h| h.percentile(r.percentile()?)),
        }
    }
}

/// Where a column's values go in the accumulators of its scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The k-th summarised field of the scope ([`summarised`]).
    Value(usize),
    /// The `.max` companion column of the k-th summarised field.
    MaxCol(usize),
    /// `memory.total` (GPU) or `mem.total` (host).
    Total,
}

/// The columns that feed the accumulators of a scope and where they go: every summarised field,
/// its `.max` companion, and the total memory.
pub fn inputs(scope: Scope) -> &'static [(Field, Slot)] {
    static INPUTS: LazyLock<[Vec<(Field, Slot)>; 2]> =
        LazyLock::new(|| [make_inputs(Scope::Gpu), make_inputs(Scope::Host)]);
    &INPUTS[scope as usize]
}

fn make_inputs(scope: Scope) -> Vec<(Field, Slot)> {
    let fields = summarised(scope);
    let mut v: Vec<(Field, Slot)> = fields.iter().enumerate().map(|(k, &f)| (f, Slot::Value(k))).collect();
    for f in Field::all() {
        if let Some(k) = f.def().max_of.and_then(|b| fields.iter().position(|&x| x == b)) {
            v.push((f, Slot::MaxCol(k)));
        }
    }
    v.push((if scope == Scope::Gpu { Field::MemTotal } else { Field::HostMemTotal }, Slot::Total));
    v
}

/// Clock event (throttle) reasons: NVML's `nvmlClocksEventReason*` bits (nvml.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    GpuIdle,
    ApplicationsClocksSetting,
    SwPowerCap,
    HwSlowdown,
    SyncBoost,
    SwThermalSlowdown,
    HwThermalSlowdown,
    HwPowerBrakeSlowdown,
    DisplayClockSetting,
}

/// Every reason, in bit order.
pub const REASONS: [Reason; 9] = [
    Reason::GpuIdle,
    Reason::ApplicationsClocksSetting,
    Reason::SwPowerCap,
    Reason::HwSlowdown,
    Reason::SyncBoost,
    Reason::SwThermalSlowdown,
    Reason::HwThermalSlowdown,
    Reason::HwPowerBrakeSlowdown,
    Reason::DisplayClockSetting,
];

impl Reason {
    pub fn bit(self) -> u64 {
        1 << self as u32
    }

    /// The name in `throttle.<name>_pct` (nvidia-smi's `clocks_event_reasons.<name>`).
    pub fn name(self) -> &'static str {
        gpumon_schema::catalog::CLOCK_EVENT_REASONS[self as usize].1
    }
}

/// Thermal throttling.
pub const THERMAL: [Reason; 2] = [Reason::SwThermalSlowdown, Reason::HwThermalSlowdown];
/// Power throttling.
pub const POWER: [Reason; 3] = [Reason::SwPowerCap, Reason::HwSlowdown, Reason::HwPowerBrakeSlowdown];

fn any_of(bits: u64, reasons: &[Reason]) -> bool {
    reasons.iter().any(|r| bits & r.bit() != 0)
}

/// Everything summarised about one GPU.
#[derive(Debug, Clone)]
pub struct GpuAcc {
    pub rows: u64,
    pub first_ts: i64,
    pub last_ts: i64,
    pub timing: Timing,
    /// The summarised GPU fields, in the order of [`summarised`].
    pub fields: Vec<FieldAcc>,
    pub mem_total: Moments,
    /// memory.used + memory.free, for files without memory.total.
    pub mem_sum: Moments,
    pub reasons: [u64; 9],
    pub reasons_n: u64,
    pub thermal_n: u64,
    pub power_n: u64,
    /// Rows with both utilization.gpu and cpu.util.max_core, and those of them input-bound.
    pub ib_both: u64,
    pub ib_n: u64,
    pub uuid: Option<String>,
    pub name: Option<String>,
    /// Per-row facts for the findings (empty rows, memory held while idle, memory health).
    pub diag: DiagAcc,
}

impl Default for GpuAcc {
    fn default() -> Self {
        GpuAcc {
            rows: 0,
            first_ts: i64::MAX,
            last_ts: i64::MIN,
            timing: Timing::default(),
            fields: summarised(Scope::Gpu).iter().map(|&f| FieldAcc::new(f)).collect(),
            mem_total: Moments::default(),
            mem_sum: Moments::default(),
            reasons: [0; 9],
            reasons_n: 0,
            thermal_n: 0,
            power_n: 0,
            ib_both: 0,
            ib_n: 0,
            uuid: None,
            name: None,
            diag: DiagAcc::default(),
        }
    }
}

impl GpuAcc {
    /// The accumulator of a summarised field.
    pub fn field(&self, f: Field) -> Option<&FieldAcc> {
        summarised(Scope::Gpu).iter().position(|&x| x == f).and_then(|k| self.fields.get(k))
    }

    /// Add every value of `vals` that is not NaN to the accumulator of the column with `slot`.
    #[inline]
    pub fn add_slice(&mut self, slot: Slot, vals: &[f64]) {
        match slot {
            Slot::Value(k) => self.fields[k].add_slice(vals),
            Slot::MaxCol(k) => self.fields[k].max_col.add_slice(vals),
            Slot::Total => self.mem_total.add_slice(vals),
        }
    }

    /// [`GpuAcc::add_slice`] for whole numbers ([`Moments::add_ints`]).
    #[inline]
    pub fn add_ints(&mut self, slot: Slot, vals: &[i64]) {
        match slot {
            Slot::Value(k) => self.fields[k].add_ints(vals),
            Slot::MaxCol(k) => self.fields[k].max_col.add_ints(vals),
            Slot::Total => self.mem_total.add_ints(vals),
        }
    }

    /// [`GpuAcc::add_ints`] of the values counted in `counts` ([`Moments::add_counts`]).
    pub fn add_counts(&mut self, slot: Slot, lo: i64, counts: &[u32]) {
        match slot {
            Slot::Value(k) => self.fields[k].add_counts(lo, counts),
            Slot::MaxCol(k) => self.fields[k].max_col.add_counts(lo, counts),
            Slot::Total => self.mem_total.add_counts(lo, counts),
        }
    }

    #[inline]
    pub fn add_reasons(&mut self, bits: u64) {
        self.reasons_n += 1;
        if bits == 0 {
            return;
        }
        for (k, r) in REASONS.iter().enumerate() {
            if bits & r.bit() != 0 {
                self.reasons[k] += 1;
            }
        }
        self.thermal_n += u64::from(any_of(bits, &THERMAL));
        self.power_n += u64::from(any_of(bits, &POWER));
    }

    fn add_values(&mut self, o: &GpuAcc) {
        self.rows += o.rows;
        self.first_ts = self.first_ts.min(o.first_ts);
        self.last_ts = self.last_ts.max(o.last_ts);
        for (a, b) in self.fields.iter_mut().zip(&o.fields) {
            a.pool(b);
        }
        self.mem_total.pool(&o.mem_total);
        self.mem_sum.pool(&o.mem_sum);
        for (a, b) in self.reasons.iter_mut().zip(&o.reasons) {
            *a += b;
        }
        self.reasons_n += o.reasons_n;
        self.thermal_n += o.thermal_n;
        self.power_n += o.power_n;
        self.ib_both += o.ib_both;
        self.ib_n += o.ib_n;
        self.diag.pool(&o.diag);
        if self.uuid.is_none() {
            self.uuid.clone_from(&o.uuid);
        }
        if self.name.is_none() {
            self.name.clone_from(&o.name);
        }
    }

    /// Join the later stretch of the same GPU.
    pub fn append(&mut self, later: GpuAcc) {
        self.add_values(&later);
        self.timing.append(later.timing);
    }

    /// Add another GPU (over-all figures).
    pub fn pool(&mut self, other: &GpuAcc) {
        self.add_values(other);
        self.timing.pool(&other.timing);
    }
}

/// Everything summarised about one host (one value per tick).
#[derive(Debug, Clone)]
pub struct HostAcc {
    pub ticks: u64,
    /// Timestamp of the latest tick seen (ticks are told apart by their timestamp; a row at or
    /// before it is not a new tick).
    pub last_ts: i64,
    /// The first tick of this stretch (one value per [`inputs`] column), held back so that `append`
    /// can drop it when the earlier stretch ended inside the same tick.
    pub pending: Option<(i64, Vec<f64>)>,
    /// The summarised host fields, in the order of [`summarised`].
    pub fields: Vec<FieldAcc>,
    pub mem_total: Moments,
}

impl Default for HostAcc {
    fn default() -> Self {
        HostAcc {
            ticks: 0,
            last_ts: i64::MIN,
            pending: None,
            fields: summarised(Scope::Host).iter().map(|&f| FieldAcc::new(f)).collect(),
            mem_total: Moments::default(),
        }
    }
}

impl HostAcc {
    /// The accumulator of a summarised field.
    pub fn field(&self, f: Field) -> Option<&FieldAcc> {
        summarised(Scope::Host).iter().position(|&x| x == f).and_then(|k| self.fields.get(k))
    }

    /// Add the value of one tick of the column with `slot` (NaN = missing).
    #[inline]
    pub fn add(&mut self, slot: Slot, v: f64) {
        if v.is_nan() {
            return;
        }
        match slot {
            Slot::Value(k) => self.fields[k].add(v),
            Slot::MaxCol(k) => self.fields[k].max_col.add(v),
            Slot::Total => self.mem_total.add(v),
        }
    }

    fn add_sample(&mut self, s: &[f64]) {
        self.ticks += 1;
        for (&(_, slot), &v) in inputs(Scope::Host).iter().zip(s) {
            self.add(slot, v);
        }
    }

    fn add_values(&mut self, o: &HostAcc) {
        self.ticks += o.ticks;
        for (a, b) in self.fields.iter_mut().zip(&o.fields) {
            a.pool(b);
        }
        self.mem_total.pool(&o.mem_total);
    }

    /// Join the later stretch of the same host.
    pub fn append(&mut self, later: HostAcc) {
        if let Some((ts, s)) = &later.pending
            && *ts > self.last_ts
        {
            self.add_sample(s);
        }
        self.add_values(&later);
        self.last_ts = self.last_ts.max(later.last_ts);
    }

    /// Count the held-back first tick (the stretch is the first of its host).
    pub fn settle(&mut self) {
        if let Some((_, s)) = self.pending.take() {
            self.add_sample(&s);
        }
    }

    /// Add another host (over-all figures); both settled.
    pub fn pool(&mut self, other: &HostAcc) {
        self.add_values(other);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_tight() {
        let mut last = 0;
        for dt in [1u64, 127, 128, 255, 256, 1000, 999_999, 1_000_000, 1_000_001, 3_000_000, 1 << 41, 1 << 50] {
            let b = bucket(dt);
            assert!(b >= last, "{dt}");
            assert!(b < SPACING_BUCKETS);
            if dt < 1 << MAX_EXP {
                assert!(
                    bucket_lo(b) <= dt && dt < bucket_lo(b + 1),
                    "{dt} in [{}, {})",
                    bucket_lo(b),
                    bucket_lo(b + 1)
                );
                assert!((bucket_lo(b + 1) - bucket_lo(b)) as f64 <= dt as f64 / 127.0 + 1.0);
            }
            last = b;
        }
    }

    #[test]
    fn timing_interval_gaps_energy_and_counter_resets() {
        let mut t = Timing::default();
        let s = 1_000_000i64;
        // 1 s samples at 100 W, a 10 s gap after the 5th, counter 0,100,...; a reset at the end
        let mut ts = 0;
        for i in 0..10 {
            t.step(ts, 100.0, 100.0 * f64::from(i));
            ts += if i == 4 { 10 * s } else { s };
        }
        t.step(ts, 100.0, 5.0);
        let st = t.finish(3.0);
        assert_eq!(st.interval_s, Some(1.0));
        assert_eq!(st.gaps, 1);
        assert_eq!(st.gap_s, 10.0);
        assert_eq!(st.covered_s, 9.0);
        assert_eq!(st.integrated_j, Some(900.0));
        assert_eq!(st.counter_j, Some(900.0));
        assert_eq!(t.resets, 1);
        assert_eq!(st.listed, vec![Gap { start: 4 * s, end: 14 * s }]);
    }

    #[test]
    fn append_equals_one_pass() {
        let pts: Vec<(i64, f64, f64)> =
            (0..50).map(|i| (i * 1_000_000 + (i % 3) * 1000, 50.0 + i as f64, i as f64 * 60.0)).collect();
        let mut one = Timing::default();
        pts.iter().for_each(|p| one.step(p.0, p.1, p.2));
        let (mut a, mut b) = (Timing::default(), Timing::default());
        pts[..20].iter().for_each(|p| a.step(p.0, p.1, p.2));
        pts[20..].iter().for_each(|p| b.step(p.0, p.1, p.2));
        a.append(b);
        let (x, y) = (a.finish(3.0), one.finish(3.0));
        assert!((x.integrated_j.unwrap() - y.integrated_j.unwrap()).abs() < 1e-6);
        assert_eq!(TimingStats { integrated_j: None, ..x }, TimingStats { integrated_j: None, ..y });
    }

    #[test]
    fn steps_equal_one_step_each() {
        // Runs of equal steps, gaps, a step back, a repeated stamp, missing power, a counter reset,
        // and more than TOP_GAPS distinct steps.
        let mut pts: Vec<(i64, f64, f64)> = Vec::new();
        let mut ts = 5_000_000i64;
        for i in 0..400i64 {
            ts += match i % 97 {
                13 => -2_000_000,
                14 => 0,
                30 => 45_000_000 + i * 1000,
                _ if i % 7 == 0 => 1_000_000 + i,
                _ => 1_000_000,
            };
            let p = if i % 11 == 0 { f64::NAN } else { 100.0 + (i % 5) as f64 * 0.1 };
            let c = if i == 200 { 1.0 } else { i as f64 * 90.0 };
            pts.push((ts, p, c));
        }
        let mut one = Timing::default();
        pts.iter().for_each(|p| one.step(p.0, p.1, p.2));
        let mut many = Timing::default();
        for chunk in pts.chunks(37) {
            let (t, p, c): (Vec<i64>, Vec<f64>, Vec<f64>) = (
                chunk.iter().map(|x| x.0).collect(),
                chunk.iter().map(|x| x.1).collect(),
                chunk.iter().map(|x| x.2).collect(),
            );
            many.steps(&t, &p, Some(&c));
        }
        assert_eq!(one.finish(3.0), many.finish(3.0));
        assert_eq!((one.backwards, one.resets, one.prev), (many.backwards, many.resets, many.prev));
        let bits = |t: &Timing| t.buckets.iter().map(|b| (b.n, b.dt, b.joules.to_bits())).collect::<Vec<_>>();
        assert_eq!(bits(&one), bits(&many));
    }

    #[test]
    fn counted_values_equal_added_ones() {
        let vals: Vec<i64> = (0..500).map(|i| 40 + (i * 37) % 61).chain([NO_I64, 101]).collect();
        let mut counts = vec![0u32; 70];
        vals.iter().filter(|&&v| v != NO_I64).for_each(|&v| counts[(v - 40) as usize] += 1);
        let (mut a, mut b) = (FieldAcc::new(Field::UtilGpu), FieldAcc::new(Field::UtilGpu));
        a.add_ints(&vals);
        b.add_counts(40, &counts);
        assert_eq!((a.m.n, a.m.sum, a.m.min, a.m.max), (b.m.n, b.m.sum, b.m.min, b.m.max));
        for r in [Reduce::Mean, Reduce::Max, Reduce::P50, Reduce::P95] {
            assert_eq!(a.reduce(r), b.reduce(r));
        }
        assert_eq!(a.hist.map(|h| (h.n, h.counts)), b.hist.map(|h| (h.n, h.counts)));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut h = Hist::new(1);
        for v in 1..=20 {
            h.add(f64::from(v));
        }
        assert_eq!(h.percentile(95.0), Some(19.0));
        assert_eq!(h.percentile(50.0), Some(10.0));
        assert_eq!(h.percentile(100.0), Some(20.0));
        assert_eq!(h.pct_below(5.0), Some(20.0));
        let mut f = Hist::new(10);
        f.add(12.34);
        f.add(99.96);
        assert_eq!(f.percentile(50.0), Some(12.3));
        assert_eq!(f.percentile(100.0), Some(100.0));
    }
}
