//! Value histograms with exact percentiles.

use gpumon_schema::cols::NO_I64;

use super::*;

/// A percent histogram: 0..=100 in steps of `1/scale` (values rounded to the step, clamped).
#[derive(Debug, Clone)]
pub(crate) struct Hist {
    pub(super) counts: Vec<u64>,
    scale: f64,
    pub(super) n: u64,
}

impl Hist {
    /// `scale` buckets per percentage point: 1 for integer percents, 10 for 0.1 % resolution.
    pub(crate) fn new(scale: u32) -> Hist {
        Hist { counts: vec![0; 100 * scale as usize + 1], scale: f64::from(scale), n: 0 }
    }

    /// Count one value in its bucket.
    #[cfg(test)]
    #[inline]
    pub(crate) fn add(&mut self, v: f64) {
        let last = self.counts.len() - 1;
        self.counts[Self::bucket(v, self.scale, last)] += 1;
        self.n += 1;
    }

    /// Round half up (values are percentages, never negative in practice); cheaper than f64::round.
    #[inline]
    fn bucket(v: f64, scale: f64, last: usize) -> usize {
        (((v * scale).max(0.0) + 0.5) as usize).min(last)
    }

    /// Count every whole number of `vals` in its bucket (`NO_I64` = missing; at most 32 bits): the
    /// buckets of [`Hist::add_slice`] without a float conversion.
    #[inline]
    pub(crate) fn add_ints(&mut self, vals: &[i64]) {
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
    pub(crate) fn add_counts(&mut self, lo: i64, counts: &[u32]) {
        let (scale, last) = (self.scale as i64, self.counts.len() as i64 - 1);
        for (k, &c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            if let Some(b) = self.counts.get_mut(((lo + k as i64) * scale).clamp(0, last) as usize)
            {
                *b += u64::from(c);
            }
            self.n += u64::from(c);
        }
    }

    /// Count every value of `vals` that is not NaN in its bucket (rounded half up).
    #[inline]
    pub(crate) fn add_slice(&mut self, vals: &[f64]) {
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

    pub(crate) fn pool(&mut self, o: &Hist) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.n += o.n;
    }

    /// Nearest-rank percentile: the smallest value with at least `ceil(p/100 × n)` values at or below it.
    pub(crate) fn percentile(&self, p: f64) -> Option<f64> {
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
    pub(crate) fn pct_below(&self, x: f64) -> Option<f64> {
        let n = self.n;
        if n == 0 {
            return None;
        }
        let below: u64 = self
            .counts
            .iter()
            .enumerate()
            .filter(|(i, _)| (*i as f64) / self.scale < x)
            .map(|(_, c)| c)
            .sum();
        Some(100.0 * below as f64 / n as f64)
    }
}

pub(super) fn max2(a: &Moments, b: &Moments) -> Option<f64> {
    match (a.max(), b.max()) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}
