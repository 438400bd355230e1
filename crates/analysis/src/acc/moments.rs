//! Count, sum, extremes and variance of a field's values (integers exact).

use gpumon_schema::cols::NO_I64;

use super::Fsum;

/// Count, sum, min and max of a value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Moments {
    pub n: u64,
    /// Independent of the order of the values ([`Fsum`]).
    pub sum: Fsum,
    pub min: f64,
    pub max: f64,
}

impl Default for Moments {
    fn default() -> Self {
        Moments { n: 0, sum: Fsum::default(), min: f64::INFINITY, max: f64::NEG_INFINITY }
    }
}

impl Moments {
    #[inline]
    pub(crate) fn add(&mut self, v: f64) {
        self.n += 1;
        self.sum.add(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Add every value of `vals` that is not NaN, in order (the same sums as one [`Moments::add`]
    /// each, with the running figures kept in registers).
    #[inline]
    pub(crate) fn add_slice(&mut self, vals: &[f64]) {
        let (mut n, mut sum, mut min, mut max) = (self.n, self.sum, self.min, self.max);
        for &v in vals.iter().filter(|v| !v.is_nan()) {
            n += 1;
            sum.add(v);
            min = min.min(v);
            max = max.max(v);
        }
        *self = Moments { n, sum, min, max };
    }

    /// [`Moments::add_slice`] for whole numbers (`NO_I64` = missing) of at most 32 bits, added
    /// exactly: the same figures as one f64 add each while the sum stays below 2^53.
    #[inline]
    pub(crate) fn add_ints(&mut self, vals: &[i64]) {
        let (n, sum, min, max) = int_moments(vals);
        self.add_int_moments(n, sum, min, max);
    }

    /// [`Moments::add_ints`] of the values counted in `counts` (`counts[k]` values equal to
    /// `lo + k`): the same figures.
    pub(crate) fn add_counts(&mut self, lo: i64, counts: &[u32]) {
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
            self.sum.add_int(sum);
            self.min = self.min.min(min as f64);
            self.max = self.max.max(max as f64);
        }
    }

    pub(crate) fn pool(&mut self, o: &Moments) {
        self.n += o.n;
        self.sum.pool(&o.sum);
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    pub(crate) fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum.value() / self.n as f64)
    }

    pub(crate) fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }
}

/// Count, sum, min and max of whole numbers (`NO_I64` = missing); the sum is exact (i128).
#[inline]
pub(super) fn int_moments(vals: &[i64]) -> (u64, i128, i64, i64) {
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
