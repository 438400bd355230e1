//! The facts: per-row facts the findings need beyond the catalogue's statistics, kept per GPU in
//! constant memory ([`FactsAcc`]; counted from the columns by `rowfacts`): rows whose GPU fields
//! are all empty (the GPU did not answer), rows with device memory held while the GPU is idle, the
//! SM clock while busy, the rows that look like a hung collective (by their power draw, see
//! [`PowerBins`]), and the memory-health fields (ECC, row remapping, page retirement).

use gpumon_schema::catalog::Field;

/// The memory-health fields whose largest value is kept, in the order of [`FactsAcc::health_max`].
pub(crate) const HEALTH: [Field; 6] = [
    Field::RemappedUncorrectable,
    Field::RemappedPending,
    Field::RemappedFailure,
    Field::RetiredSbe,
    Field::RetiredDbe,
    Field::RetiredPending,
];

/// Configuration fields whose smallest and largest values are kept, in the order of
/// [`FactsAcc::config`]: the PCIe link's width and generation now and at most, the power limit and
/// its default, and the highest SM clock.
pub(crate) const CONFIG: [Field; 7] = [
    Field::PcieLinkWidthCurrent,
    Field::PcieLinkWidthMax,
    Field::PowerLimit,
    Field::PowerDefaultLimit,
    Field::PcieLinkGenCurrent,
    Field::PcieLinkGenMax,
    Field::ClockMaxSm,
];

/// Milliseconds from this instant (2020-01-01 UTC, in µs) are the time axis of [`Trend`].
const TREND_EPOCH_US: i64 = 1_577_836_800_000_000;

/// A least-squares line through memory.used over time, from integer sums (time in ms, memory in
/// whole MiB: exact, so any split of the rows gives the same line), and the highest value with the
/// first time it was seen.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Trend {
    pub n: u64,
    pub t: i128,
    pub(crate) tt: i128,
    pub m: i128,
    pub(crate) tm: i128,
    pub mm: i128,
    pub max: f64,
    pub(crate) max_ts: i64,
}

impl Default for Trend {
    fn default() -> Self {
        Trend { n: 0, t: 0, tt: 0, m: 0, tm: 0, mm: 0, max: f64::NEG_INFINITY, max_ts: i64::MAX }
    }
}

/// The terms of a [`Trend`] for the rows of one batch, their times taken from the batch's first
/// (`base`): products of 64-bit integers (128-bit only where one would overflow), folded into the
/// trend's sums by exact integer identities, so the trend is the one the rows added one by one give.
#[derive(Debug, Clone)]
pub(crate) struct TrendBatch {
    base: i64,
    n: u64,
    d: i128,
    dd: i128,
    m: i128,
    dm: i128,
    mm: i128,
    max: f64,
    max_ts: i64,
}

/// `a · b` exactly: in 64 bits where it fits.
#[inline]
fn mul(a: i64, b: i64) -> i128 {
    a.checked_mul(b).map_or_else(|| i128::from(a) * i128::from(b), i128::from)
}

impl TrendBatch {
    /// One value `v` at `ts` (NaN: none); the trend of the rows one by one, once folded.
    #[inline]
    pub(crate) fn add(&mut self, ts: i64, v: f64) {
        if !v.is_finite() {
            return;
        }
        let t = Trend::axis_ms(ts);
        if self.n == 0 {
            self.base = t;
        }
        // A whole value (memory in MiB mostly is) needs no rounding call: the same integer.
        let whole = v as i64;
        let m = if whole as f64 == v { whole } else { v.round() as i64 };
        let d = t.wrapping_sub(self.base);
        self.n += 1;
        self.d += i128::from(d);
        self.dd += mul(d, d);
        self.m += i128::from(m);
        self.dm += mul(d, m);
        self.mm += mul(m, m);
        if v > self.max || (v == self.max && ts < self.max_ts) {
            self.max = v;
            self.max_ts = ts;
        }
    }

    /// Add the batch to `into`: Σt = n·b + Σd, Σt² = n·b² + 2b·Σd + Σd², Σtm = b·Σm + Σdm.
    pub(crate) fn fold_into(&self, into: &mut Trend) {
        if self.n == 0 {
            return;
        }
        let (b, n) = (i128::from(self.base), i128::from(self.n));
        into.pool(&Trend {
            n: self.n,
            t: n * b + self.d,
            tt: n * b * b + 2 * b * self.d + self.dd,
            m: self.m,
            tm: b * self.m + self.dm,
            mm: self.mm,
            max: self.max,
            max_ts: self.max_ts,
        });
    }
}

/// A fitted [`Trend`]: slope (MiB per second), the line's value at the epoch of the time axis, and
/// r².
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fit {
    pub(crate) slope: f64,
    pub(crate) intercept: f64,
    pub r2: f64,
}

impl Fit {
    /// The line's value at `ts` (UTC µs).
    pub(crate) fn at(&self, ts: i64) -> f64 {
        self.intercept + self.slope * (ts - TREND_EPOCH_US) as f64 / 1e6
    }
}

impl Trend {
    /// `ts` in milliseconds of the time axis (from its epoch).
    fn axis_ms(ts: i64) -> i64 {
        (ts - TREND_EPOCH_US).div_euclid(1000)
    }

    /// One value `v` at `ts` (NaN: none): the row-by-row definition the tests hold
    /// [`TrendBatch`] to (the collector adds a batch at a time).
    #[cfg(test)]
    pub(crate) fn add(&mut self, ts: i64, v: f64) {
        if !v.is_finite() {
            return;
        }
        let (t, m) = (i128::from(Self::axis_ms(ts)), v.round() as i64 as i128);
        self.n += 1;
        self.t += t;
        self.tt += t * t;
        self.m += m;
        self.tm += t * m;
        self.mm += m * m;
        if v > self.max || (v == self.max && ts < self.max_ts) {
            self.max = v;
            self.max_ts = ts;
        }
    }

    /// A batch's terms for this trend, taken from a base time ([`TrendBatch`]).
    pub(crate) fn batch() -> TrendBatch {
        TrendBatch {
            base: 0,
            n: 0,
            d: 0,
            dd: 0,
            m: 0,
            dm: 0,
            mm: 0,
            max: f64::NEG_INFINITY,
            max_ts: i64::MAX,
        }
    }

    pub(crate) fn pool(&mut self, o: &Trend) {
        self.n += o.n;
        self.t += o.t;
        self.tt += o.tt;
        self.m += o.m;
        self.tm += o.tm;
        self.mm += o.mm;
        if o.max > self.max || (o.max == self.max && o.max_ts < self.max_ts) {
            self.max = o.max;
            self.max_ts = o.max_ts;
        }
    }

    /// n·Σxy − Σx·Σy: exact in integers where they hold it, else in floats.
    fn centred(n: i128, xy: i128, x: i128, y: i128) -> f64 {
        let exact = n.checked_mul(xy).zip(x.checked_mul(y)).and_then(|(a, b)| a.checked_sub(b));
        exact.map_or_else(|| n as f64 * xy as f64 - x as f64 * y as f64, |v| v as f64)
    }

    /// The least-squares line (None: fewer than three values, or no spread in time).
    pub(crate) fn fit(&self) -> Option<Fit> {
        let n = i128::from(self.n);
        let sxx = Self::centred(n, self.tt, self.t, self.t);
        let sxy = Self::centred(n, self.tm, self.t, self.m);
        let syy = Self::centred(n, self.mm, self.m, self.m);
        if self.n < 3 || sxx <= 0.0 {
            return None;
        }
        let slope = sxy / sxx;
        let r2 = if syy > 0.0 { (sxy * sxy / (sxx * syy)).min(1.0) } else { 0.0 };
        let (nf, t, m) = (n as f64, self.t as f64, self.m as f64);
        // Per millisecond internally; per second outside.
        Some(Fit { slope: slope * 1000.0, intercept: (m - slope * t) / nf, r2 })
    }
}

/// Bins of [`PowerBins`]: below 8 W, then 8 per doubling of the power up to 2048 W (about 9 % wide).
const POWER_BINS: usize = 65;

/// 2^(i/8) for i = 1..=7: the bin edges inside one doubling.
const EIGHTHS: [f64; 7] = [
    1.090_507_732_665_257_7,
    1.189_207_115_002_721,
    1.296_839_554_651_009_6,
    std::f64::consts::SQRT_2,
    1.542_210_825_407_940_8,
    1.681_792_830_507_429,
    1.834_008_086_409_342_5,
];

/// The rows that may be a hung collective (utilization.gpu at or above `hang_util`, sm.active idle
/// where recorded, memory held where recorded), by their power.draw in bins about 9 % wide: per
/// bin the rows and the first and last of them (UTC µs). Which draw is "idle" depends on the board
/// and is only known at the end of the run (a share of its power limit, or of the highest draw seen),
/// so the rows are kept by draw and counted below that draw then. Counts, minima and maxima: any
/// split of the rows gives the same bins.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PowerBins {
    pub n: [u64; POWER_BINS],
    pub first: [i64; POWER_BINS],
    pub last: [i64; POWER_BINS],
}

impl Default for PowerBins {
    fn default() -> Self {
        PowerBins {
            n: [0; POWER_BINS],
            first: [i64::MAX; POWER_BINS],
            last: [i64::MIN; POWER_BINS],
        }
    }
}

impl PowerBins {
    /// Eight bins per doubling from 8 W: `1 + floor(8 · log2(watts / 8))`, at most 64, read off the
    /// float's exponent and its mantissa against 2^(i/8) (no logarithm per row).
    fn bin(watts: f64) -> usize {
        if watts < 8.0 {
            return 0;
        }
        let x = watts / 8.0;
        let bits = x.to_bits();
        let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
        if e >= 8 || !x.is_finite() {
            return 64;
        }
        let m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
        let j = EIGHTHS.iter().filter(|&&t| t <= m).count() as i64;
        (1 + 8 * e + j).clamp(0, 64) as usize
    }

    /// The upper edge (W) of bin `k`.
    fn upper(k: usize) -> f64 {
        8.0 * (k as f64 / 8.0).exp2()
    }

    /// One row with draw `watts` at `ts`.
    pub(crate) fn add(&mut self, watts: f64, ts: i64) {
        if watts.is_nan() {
            return;
        }
        let k = Self::bin(watts);
        self.n[k] += 1;
        self.first[k] = self.first[k].min(ts);
        self.last[k] = self.last[k].max(ts);
    }

    pub(crate) fn pool(&mut self, o: &PowerBins) {
        for k in 0..POWER_BINS {
            self.n[k] += o.n[k];
            self.first[k] = self.first[k].min(o.first[k]);
            self.last[k] = self.last[k].max(o.last[k]);
        }
    }

    /// The rows in the bins wholly below `watts` (None: none).
    pub(crate) fn below(&self, watts: f64) -> Option<RowsBelow> {
        let ks = (0..POWER_BINS).filter(|&k| Self::upper(k) <= watts && self.n[k] > 0);
        ks.fold(None, |acc, k| {
            let r = acc.unwrap_or(RowsBelow { n: 0, first: i64::MAX, last: i64::MIN });
            Some(RowsBelow {
                n: r.n + self.n[k],
                first: r.first.min(self.first[k]),
                last: r.last.max(self.last[k]),
            })
        })
    }
}

/// The rows of [`PowerBins::below`] a power draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowsBelow {
    /// How many.
    pub(crate) n: u64,
    /// The first one's time, UTC µs.
    pub(crate) first: i64,
    /// The last one's time.
    pub(crate) last: i64,
}

/// When a GPU was in use: its first and last sample with utilization.gpu at or above `idle_util`,
/// and how many samples with utilization.gpu recorded came before the first, after the last, and in
/// all; samples in time order ([`BusySpan::append`] a later stretch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BusySpan {
    pub first: i64,
    pub last: i64,
    pub lead: u64,
    pub(crate) trail: u64,
    pub known: u64,
}

impl Default for BusySpan {
    fn default() -> Self {
        BusySpan { first: i64::MAX, last: i64::MIN, lead: 0, trail: 0, known: 0 }
    }
}

impl BusySpan {
    /// One sample with utilization.gpu recorded, `active` when not idle.
    #[inline]
    pub(crate) fn push(&mut self, active: bool, ts: i64) {
        self.known += 1;
        if active {
            self.first = self.first.min(ts);
            self.last = ts;
            self.trail = 0;
        } else if self.first == i64::MAX {
            self.lead += 1;
        } else {
            self.trail += 1;
        }
    }

    /// `k` samples in a row, all active or all not, the first at `first` and the last at `last`:
    /// the same as pushing them one by one.
    pub(crate) fn push_run(&mut self, active: bool, first: i64, last: i64, k: u64) {
        if k == 0 {
            return;
        }
        self.push(active, first);
        if k > 1 {
            self.known += k - 2;
            if !active {
                // The k - 2 between count where the first went.
                if self.first == i64::MAX { self.lead += k - 2 } else { self.trail += k - 2 }
            }
            self.push(active, last);
        }
    }

    /// The samples of a later stretch.
    pub(crate) fn append(&mut self, o: &BusySpan) {
        self.known += o.known;
        match (self.first == i64::MAX, o.first == i64::MAX) {
            (true, _) => {
                self.lead += o.lead;
                (self.first, self.last, self.trail) = (o.first, o.last, o.trail);
                if o.first == i64::MAX {
                    self.lead += o.trail;
                }
            }
            (false, true) => self.trail += o.lead + o.trail,
            (false, false) => (self.last, self.trail) = (o.last, o.trail),
        }
    }

    /// The first and last active sample (None: never active).
    pub(crate) fn range(&self) -> Option<(i64, i64)> {
        (self.first != i64::MAX).then_some((self.first, self.last))
    }

    /// The share of the samples inside the span, to turn a whole-run mean into the span's (idle
    /// samples outside it count as zero).
    pub(crate) fn inside(&self) -> Option<f64> {
        let n = self.known.saturating_sub(self.lead + self.trail);
        (self.range().is_some() && n > 0).then(|| n as f64 / self.known as f64)
    }
}

/// The per-row facts of one GPU.
#[derive(Debug, Clone)]
pub(crate) struct FactsAcc {
    /// Rows whose GPU fields were all empty, and the first and last of them (UTC µs).
    pub empty_rows: u64,
    pub(crate) empty_first_ts: i64,
    pub(crate) empty_last_ts: i64,
    /// Rows with memory.used known, those with memory held, and those held while idle.
    pub(crate) mem_n: u64,
    pub(crate) held_n: u64,
    pub(crate) held_idle_n: u64,
    /// Sum and count of clocks.sm over the rows with utilization.gpu at or above `busy_util` and no
    /// sw_power_cap (a power-capped clock depends on the load, not on the GPU's health).
    pub(crate) busy_clock_sum: crate::acc::Fsum,
    pub(crate) busy_clock_n: u64,
    /// The rows that may be a hung collective, by power draw; the largest power.limit seen (-inf:
    /// none).
    pub hang: PowerBins,
    pub(crate) power_limit: f64,
    /// Sum and count of temperature.gpu while utilization.gpu >= `busy_util`.
    pub(crate) busy_temp_sum: crate::acc::Fsum,
    pub(crate) busy_temp_n: u64,
    /// Sum and count of temperature.gpu over all samples.
    pub(crate) temp_sum: crate::acc::Fsum,
    pub(crate) temp_n: u64,
    /// memory.used over time.
    pub(crate) mem_trend: Trend,
    /// The stretches of idle samples, in time order.
    pub stretches: crate::stretch::Stretches,
    /// The rows held while idle by power.draw (those without it are `held_idle_n` less these).
    pub(crate) held_idle_power: PowerBins,
    /// When the GPU was in use.
    pub(crate) busy_span: BusySpan,
    /// Largest value of each [`HEALTH`] field (NaN when never recorded).
    pub(crate) health_max: [f64; 6],
    /// Smallest and largest ecc.errors.uncorrected.volatile.total (NaN when never recorded).
    pub(crate) ecc_min: f64,
    pub(crate) ecc_max: f64,
    /// Smallest and largest ecc.errors.corrected.volatile.total (NaN when never recorded).
    pub(crate) corrected_min: f64,
    pub(crate) corrected_max: f64,
    /// Smallest and largest value of each [`CONFIG`] field (NaN when never recorded).
    pub config: [(f64, f64); CONFIG.len()],
}

impl Default for FactsAcc {
    fn default() -> Self {
        FactsAcc {
            empty_rows: 0,
            empty_first_ts: i64::MAX,
            empty_last_ts: i64::MIN,
            mem_n: 0,
            held_n: 0,
            held_idle_n: 0,
            busy_clock_sum: Default::default(),
            busy_clock_n: 0,
            hang: PowerBins::default(),
            power_limit: f64::NEG_INFINITY,
            busy_temp_sum: Default::default(),
            busy_temp_n: 0,
            temp_sum: Default::default(),
            temp_n: 0,
            mem_trend: Trend::default(),
            stretches: Default::default(),
            held_idle_power: PowerBins::default(),
            busy_span: BusySpan::default(),
            health_max: [f64::NAN; 6],
            ecc_min: f64::NAN,
            ecc_max: f64::NAN,
            corrected_min: f64::NAN,
            corrected_max: f64::NAN,
            config: [(f64::NAN, f64::NAN); CONFIG.len()],
        }
    }
}

/// Larger / smaller of two values, NaN only when both are.
fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() { b } else { a.max(b) }
}

fn min_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() { b } else { a.min(b) }
}

impl FactsAcc {
    /// A row whose GPU fields are all empty.
    pub(crate) fn add_empty(&mut self, ts: i64) {
        self.empty_rows += 1;
        self.empty_first_ts = self.empty_first_ts.min(ts);
        self.empty_last_ts = self.empty_last_ts.max(ts);
    }

    /// One value of a [`HEALTH`] field (`k` its position) or, with `k` None, of the ECC counter.
    pub(crate) fn add_health(&mut self, k: Option<usize>, v: f64) {
        if v.is_nan() {
            return;
        }
        match k {
            Some(k) => {
                if let Some(m) = self.health_max.get_mut(k) {
                    *m = max_nan(*m, v);
                }
            }
            None => {
                self.ecc_min = min_nan(self.ecc_min, v);
                self.ecc_max = max_nan(self.ecc_max, v);
            }
        }
    }

    /// One value of the corrected ECC counter.
    pub(crate) fn add_corrected(&mut self, v: f64) {
        if !v.is_nan() {
            self.corrected_min = min_nan(self.corrected_min, v);
            self.corrected_max = max_nan(self.corrected_max, v);
        }
    }

    /// One value of the [`CONFIG`] field at `k`.
    pub(crate) fn add_config(&mut self, k: usize, v: f64) {
        if let Some((lo, hi)) = self.config.get_mut(k).filter(|_| !v.is_nan()) {
            *lo = min_nan(*lo, v);
            *hi = max_nan(*hi, v);
        }
    }

    /// Smallest and largest value of a [`CONFIG`] field.
    pub(crate) fn config_range(&self, f: Field) -> Option<(f64, f64)> {
        let k = CONFIG.iter().position(|&c| c == f)?;
        self.config.get(k).copied().filter(|(_, hi)| !hi.is_nan())
    }

    /// How much the corrected ECC counter rose over the run (largest minus smallest).
    pub(crate) fn corrected_increase(&self) -> Option<f64> {
        (!self.corrected_max.is_nan()).then_some(self.corrected_max - self.corrected_min)
    }

    /// Add a later stretch of the same GPU, or (the idle stretches then mean nothing) another GPU.
    pub(crate) fn pool(&mut self, o: &FactsAcc) {
        self.empty_rows += o.empty_rows;
        self.empty_first_ts = self.empty_first_ts.min(o.empty_first_ts);
        self.empty_last_ts = self.empty_last_ts.max(o.empty_last_ts);
        self.mem_n += o.mem_n;
        self.held_n += o.held_n;
        self.held_idle_n += o.held_idle_n;
        self.busy_clock_sum.pool(&o.busy_clock_sum);
        self.busy_clock_n += o.busy_clock_n;
        self.hang.pool(&o.hang);
        self.power_limit = self.power_limit.max(o.power_limit);
        self.busy_temp_sum.pool(&o.busy_temp_sum);
        self.busy_temp_n += o.busy_temp_n;
        self.temp_sum.pool(&o.temp_sum);
        self.temp_n += o.temp_n;
        self.mem_trend.pool(&o.mem_trend);
        self.stretches.append(&o.stretches);
        self.held_idle_power.pool(&o.held_idle_power);
        self.busy_span.append(&o.busy_span);
        for (a, b) in self.health_max.iter_mut().zip(&o.health_max) {
            *a = max_nan(*a, *b);
        }
        self.ecc_min = min_nan(self.ecc_min, o.ecc_min);
        self.ecc_max = max_nan(self.ecc_max, o.ecc_max);
        self.corrected_min = min_nan(self.corrected_min, o.corrected_min);
        self.corrected_max = max_nan(self.corrected_max, o.corrected_max);
        for (a, b) in self.config.iter_mut().zip(&o.config) {
            *a = (min_nan(a.0, b.0), max_nan(a.1, b.1));
        }
    }

    /// Share (%) of the GPU's rows with memory held while idle; None without memory.used.
    pub(crate) fn held_idle_pct(&self, rows: u64) -> Option<f64> {
        (self.mem_n > 0 && rows > 0).then(|| 100.0 * self.held_idle_n as f64 / rows as f64)
    }

    /// Rows held while idle whose power.draw is below `watts` or not recorded.
    pub(crate) fn held_idle_below(&self, watts: f64) -> u64 {
        let binned: u64 = self.held_idle_power.n.iter().sum();
        let below = self.held_idle_power.below(watts).map_or(0, |b| b.n);
        self.held_idle_n.saturating_sub(binned) + below
    }

    /// Mean clocks.sm while busy.
    pub(crate) fn busy_clock(&self) -> Option<f64> {
        (self.busy_clock_n > 0).then(|| self.busy_clock_sum.value() / self.busy_clock_n as f64)
    }

    /// Mean temperature.gpu while busy, or (`busy` false) over all samples.
    pub(crate) fn temp(&self, busy: bool) -> Option<f64> {
        let (sum, n) = if busy {
            (&self.busy_temp_sum, self.busy_temp_n)
        } else {
            (&self.temp_sum, self.temp_n)
        };
        (n > 0).then(|| sum.value() / n as f64)
    }

    /// Largest value of a [`HEALTH`] field.
    pub(crate) fn health(&self, f: Field) -> Option<f64> {
        let k = HEALTH.iter().position(|&h| h == f)?;
        self.health_max.get(k).copied().filter(|v| !v.is_nan())
    }

    /// How much the uncorrected ECC counter rose over the run (largest minus smallest).
    pub(crate) fn ecc_increase(&self) -> Option<f64> {
        (!self.ecc_max.is_nan()).then_some(self.ecc_max - self.ecc_min)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_batch_folds_into_the_trend_rows_give_and_bins_follow_the_logarithm() {
        use super::{PowerBins, Trend};
        // Times a minute apart, then a jump of 40 days (a product beyond 64 bits), memory rising.
        let t0 = 1_767_225_600_000_000i64;
        let rows: Vec<(i64, f64)> = (0..500)
            .map(|i| {
                (
                    t0 + i * 60_000_000 + if i > 400 { 40 * 86_400_000_000 } else { 0 },
                    1000.0 + i as f64 * 3.7,
                )
            })
            .chain([(t0 + 7, f64::NAN), (t0 - 3_000_000_000_000, 5e9)])
            .collect();
        let mut by_row = Trend::default();
        let mut batch = Trend::batch();
        for &(t, v) in &rows {
            by_row.add(t, v);
            batch.add(t, v);
        }
        let mut folded = Trend::default();
        batch.fold_into(&mut folded);
        assert_eq!(folded, by_row);
        for w in [8.0, 8.1, 9.0, 15.99, 16.0, 100.0, 350.0, 699.9, 700.0, 1e4, 1e9, f64::INFINITY] {
            let log = (1.0 + 8.0 * (w / 8.0f64).log2()).min(64.0) as usize;
            assert_eq!(PowerBins::bin(w), log, "{w} W");
        }
        assert_eq!(PowerBins::bin(7.9), 0);
    }

    use super::*;

    /// The hang-like rows by draw: counted below a draw to within one bin, with their first and last
    /// time, the same whatever the split of the rows.
    #[test]
    fn power_bins_count_below_and_pool_alike() {
        let rows: Vec<(f64, i64)> =
            (0..200).map(|k| (f64::from(k) * 3.7 + 2.0, i64::from(k))).collect();
        let mut whole = PowerBins::default();
        rows.iter().for_each(|&(w, t)| whole.add(w, t));
        let (mut a, mut b) = (PowerBins::default(), PowerBins::default());
        rows.iter()
            .rev()
            .enumerate()
            .for_each(|(k, &(w, t))| if k % 3 == 0 { a.add(w, t) } else { b.add(w, t) });
        a.pool(&b);
        assert_eq!(a, whole);
        let b = whole.below(175.0).unwrap();
        let (n, first, last) = (b.n, b.first, b.last);
        // Draws 2.0, 5.7, ... below 175 W are rows 0..=46; the bins wholly below 175 W reach past 160 W.
        assert_eq!(first, 0);
        assert!((42..=46).contains(&last) && n == last as u64 + 1, "{n} {last}");
        assert_eq!(whole.below(7.0), None);
        let mut nan = PowerBins::default();
        nan.add(f64::NAN, 1);
        assert_eq!(nan, PowerBins::default());
    }

    /// The memory trend: the same sums whatever the split, a line through a steady rise, and the
    /// first time the peak was seen.
    #[test]
    fn trend_fits_and_pools_alike() {
        let t0 = 1_772_442_000_000_000_i64;
        let rows: Vec<(i64, f64)> = (0..500)
            .map(|k| (t0 + k * 5_000_000, 40_000.0 + 2.0 * k as f64 + (k % 7) as f64))
            .collect();
        let mut whole = Trend::default();
        rows.iter().for_each(|&(t, v)| whole.add(t, v));
        let (mut a, mut b) = (Trend::default(), Trend::default());
        rows.iter()
            .rev()
            .enumerate()
            .for_each(|(k, &(t, v))| if k % 2 == 0 { a.add(t, v) } else { b.add(t, v) });
        b.pool(&a);
        assert_eq!(b, whole);
        let fit = whole.fit().unwrap();
        // 2 MiB per 5 s sample: 0.4 MiB/s.
        assert!((fit.slope - 0.4).abs() < 1e-3, "{fit:?}");
        assert!(fit.r2 > 0.99, "{fit:?}");
        assert!((fit.at(t0) - 40_003.0).abs() < 5.0, "{fit:?}");
        let (max, at) = (whole.max, whole.max_ts);
        assert_eq!((max, at), (40_000.0 + 2.0 * 499.0 + 2.0, t0 + 499 * 5_000_000));
        let mut flat = Trend::default();
        (0..3).for_each(|_| flat.add(t0, 1.0));
        assert_eq!(flat.fit(), None, "no spread in time");
    }

    #[test]
    fn facts_count_and_pool() {
        let counts = |mem_n, held_n, held_idle_n, clocks: &[f64]| {
            let mut c =
                crate::rowfacts::Counts { mem_n, held_n, held_idle_n, ..Default::default() };
            clocks.iter().for_each(|&v| c.busy_clock_sum.add(v));
            c.busy_clock_n = clocks.len() as u64;
            c
        };
        let mut a = FactsAcc::default();
        counts(3, 2, 1, &[1600.0]).add_to(&mut a);
        a.add_health(Some(2), 0.0);
        a.add_health(None, 3.0);
        let mut b = FactsAcc::default();
        counts(2, 2, 0, &[1700.0]).add_to(&mut b);
        b.add_empty(9);
        b.add_empty(4);
        b.add_health(Some(2), 1.0);
        b.add_health(None, 5.0);
        a.add_corrected(10.0);
        b.add_corrected(250.0);
        a.add_config(0, 8.0);
        b.add_config(0, 16.0);
        b.add_config(0, f64::NAN);
        a.pool(&b);
        assert_eq!((a.mem_n, a.held_n, a.held_idle_n), (5, 4, 1));
        assert_eq!(a.held_idle_pct(5), Some(20.0));
        assert_eq!(a.busy_clock(), Some(1650.0));
        assert_eq!((a.empty_rows, a.empty_first_ts, a.empty_last_ts), (2, 4, 9));
        assert_eq!(a.health(Field::RemappedFailure), Some(1.0));
        assert_eq!(a.health(Field::RetiredPending), None);
        assert_eq!(a.ecc_increase(), Some(2.0));
        assert_eq!(a.corrected_increase(), Some(240.0));
        assert_eq!(FactsAcc::default().corrected_increase(), None);
        assert_eq!(a.config_range(Field::PcieLinkWidthCurrent), Some((8.0, 16.0)));
        assert_eq!(a.config_range(Field::PowerLimit), None);
        assert_eq!(FactsAcc::default().ecc_increase(), None);
        assert_eq!(FactsAcc::default().held_idle_pct(10), None);
    }

    /// A busy span pushed sample by sample, a run at a time, or split anywhere and appended, is the
    /// same; the share inside it turns the whole run's mean into the span's.
    #[test]
    fn busy_span_splits_and_runs_agree() {
        let active = [false, false, true, true, false, true, false, false, false];
        let mut one = BusySpan::default();
        for (t, &a) in active.iter().enumerate() {
            one.push(a, t as i64);
        }
        assert_eq!((one.range(), one.lead, one.trail, one.known), (Some((2, 5)), 2, 3, 9));
        assert_eq!(one.inside(), Some(4.0 / 9.0));
        for cut in 0..=active.len() {
            let (mut a, mut b) = (BusySpan::default(), BusySpan::default());
            for (t, &x) in active.iter().enumerate() {
                if t < cut { a.push(x, t as i64) } else { b.push(x, t as i64) }
            }
            a.append(&b);
            assert_eq!(a, one, "cut at {cut}");
        }
        let mut runs = BusySpan::default();
        for (x, first, last, k) in
            [(false, 0, 1, 2), (true, 2, 3, 2), (false, 4, 4, 1), (true, 5, 5, 1), (false, 6, 8, 3)]
        {
            runs.push_run(x, first, last, k);
        }
        assert_eq!(runs, one);
        assert_eq!(BusySpan::default().inside(), None);
    }
}
