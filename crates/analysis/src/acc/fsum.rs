//! A sum of floats that does not depend on the order of its terms: the summary of a file must be the
//! same whatever the threads, row groups or files it was read in, and f64 addition is not
//! associative (a mean of 358.98441616512 W came out 358.98441616512326 on one CPU and
//! 358.9844161651224 on two).

/// Fraction bits: each term's fraction is kept to 2^-40 (about 1e-12).
const FRAC_BITS: i32 = 40;
/// 2^40.
const SCALE: f64 = (1u64 << FRAC_BITS) as f64;
/// Terms below this magnitude (2^22) are scaled by 2^40 into one 64-bit integer, exactly.
const SCALED_MAX: f64 = (1u64 << 22) as f64;
/// Terms below this magnitude split into a whole part and a fraction exactly.
const SPLIT_MAX: f64 = 9.0e18;

/// The terms in units of 2^-40 (or, from 2^22 up, their whole parts and fractions apart), added as
/// integers: any order of adding, and any grouping (partial sums joined with [`Fsum::pool`]), gives
/// the same sum. A term's fraction beyond 2^-40 is dropped (toward zero); terms of 9e18 and more are
/// added whole.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Fsum {
    whole: i128,
    frac: i128,
}

impl Fsum {
    #[inline]
    pub(crate) fn add(&mut self, v: f64) {
        if v.abs() < SCALED_MAX {
            // The common case (percentages, watts, MiB): one conversion, truncated toward zero.
            self.frac += i128::from((v * SCALE) as i64);
        } else if v.abs() < SPLIT_MAX {
            // Truncation toward zero: the fraction `v - w` is exact in f64, and so is its scaling
            // (the same sum as the scaled case would give).
            let w = v as i64;
            self.whole += i128::from(w);
            self.frac += i128::from(((v - w as f64) * SCALE) as i64);
        } else if v.is_finite() {
            self.whole = self.whole.saturating_add(v as i128);
        }
    }

    /// A whole number, exactly.
    #[inline]
    pub(crate) fn add_int(&mut self, n: i128) {
        self.whole = self.whole.saturating_add(n);
    }

    /// Add another sum.
    pub(crate) fn pool(&mut self, o: &Fsum) {
        self.whole = self.whole.saturating_add(o.whole);
        self.frac += o.frac;
    }

    /// The sum, rounded once: the same whichever of the two parts held the terms.
    pub(crate) fn value(&self) -> f64 {
        match self.whole.checked_mul(1 << FRAC_BITS).and_then(|w| w.checked_add(self.frac)) {
            Some(units) => units as f64 / SCALE,
            None => self.whole as f64 + self.frac as f64 / SCALE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_order_and_grouping_gives_the_same_sum() {
        let vals: Vec<f64> =
            (0..10_000).map(|i| 300.0 + (i as f64 * 0.618_033_988_7).sin() * 97.31).collect();
        let sum = |it: &mut dyn Iterator<Item = &f64>| {
            let mut s = Fsum::default();
            it.for_each(|&v| s.add(v));
            s
        };
        let forward = sum(&mut vals.iter());
        assert_eq!(forward, sum(&mut vals.iter().rev()));
        let (mut a, b) = (sum(&mut vals[..3333].iter()), sum(&mut vals[3333..].iter()));
        a.pool(&b);
        assert_eq!(a, forward);
        // Plain f64 addition differs between the two orders here; the fixed sum is close to it.
        let naive: f64 = vals.iter().sum();
        assert!((forward.value() - naive).abs() < 1e-6 * naive.abs());
        // Negative terms, whole numbers and huge terms.
        let mut s = Fsum::default();
        for v in [-2.75, 1.25, 1e20, -1e20, f64::NAN, f64::INFINITY] {
            s.add(v);
        }
        s.add_int(3);
        assert_eq!(s.value(), 1.5);
        // The same total held in whole parts or in fractions is the same sum, rounded once.
        let split = Fsum { whole: 3_000_000, frac: 1_234_567_891 };
        let scaled = Fsum { whole: 0, frac: 3_000_000 * (1 << FRAC_BITS) + 1_234_567_891 };
        assert_eq!(split.value(), scaled.value());
        let mut c = Fsum::default();
        c.add(5_000_000.5);
        c.add(-1_000_000.25);
        assert_eq!(c.value(), 4_000_000.25);
    }
}
