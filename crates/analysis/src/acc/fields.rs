//! What is kept of each summarised field (the catalogue's `summary` column) and which fields feed
//! the GPU and host accumulators.

use std::sync::LazyLock;

use crate::stat::{Scope, summarised};
use gpumon_schema::catalog::{Field, Reduce, Ty};

use super::*;

/// What is kept of one summarised field (the catalogue's `summary`): moments, the maxima of its
/// `.max` companion column, and a percent histogram when percentiles are declared (whole points for
/// integer fields, 0.1 for floats).
#[derive(Debug, Clone)]
pub(crate) struct FieldAcc {
    pub m: Moments,
    pub(crate) max_col: Moments,
    pub(crate) hist: Option<Hist>,
}

impl FieldAcc {
    pub(crate) fn new(f: Field) -> FieldAcc {
        let d = f.def();
        let scale = if d.ty == Ty::F64 { 10 } else { 1 };
        let hist = d.summary.iter().any(|r| r.percentile().is_some()).then(|| Hist::new(scale));
        FieldAcc { m: Moments::default(), max_col: Moments::default(), hist }
    }

    /// Add every value of `vals` that is not NaN (to the moments and, if kept, the histogram).
    #[inline]
    pub(crate) fn add_slice(&mut self, vals: &[f64]) {
        self.m.add_slice(vals);
        if let Some(h) = &mut self.hist {
            h.add_slice(vals);
        }
    }

    /// [`FieldAcc::add_slice`] for whole numbers ([`Moments::add_ints`]).
    #[inline]
    pub(crate) fn add_ints(&mut self, vals: &[i64]) {
        self.m.add_ints(vals);
        if let Some(h) = &mut self.hist {
            h.add_ints(vals);
        }
    }

    /// [`FieldAcc::add_ints`] of the values counted in `counts` ([`Moments::add_counts`]).
    pub(crate) fn add_counts(&mut self, lo: i64, counts: &[u32]) {
        self.m.add_counts(lo, counts);
        if let Some(h) = &mut self.hist {
            h.add_counts(lo, counts);
        }
    }

    pub(super) fn pool(&mut self, o: &FieldAcc) {
        self.m.pool(&o.m);
        self.max_col.pool(&o.max_col);
        if let (Some(a), Some(b)) = (&mut self.hist, &o.hist) {
            a.pool(b);
        }
    }

    /// The statistic; the maximum includes the companion column's.
    pub(crate) fn reduce(&self, r: Reduce) -> Option<f64> {
        match r {
            Reduce::Mean => self.m.mean(),
            Reduce::Max => max2(&self.m, &self.max_col),
            // The histogram rounds to its step and clamps to 0..=100: a percentile is kept within
            // the values seen, so p50 <= p95 <= max holds whatever the values.
            Reduce::P50 | Reduce::P95 => {
                let p = self.hist.as_ref().and_then(|h| h.percentile(r.percentile()?))?;
                Some(p.clamp(self.m.min, self.m.max))
            }
        }
    }
}

/// Where a column's values go in the accumulators of its scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The k-th summarised field of the scope ([`summarised`]).
    Value(usize),
    /// The `.max` companion column of the k-th summarised field.
    MaxCol(usize),
    /// `memory.total` (GPU) or `mem.total` (host).
    Total,
}

/// The columns that feed the accumulators of a scope and where they go: every summarised field,
/// its `.max` companion, and the total memory.
pub(crate) fn inputs(scope: Scope) -> &'static [(Field, Slot)] {
    static INPUTS: LazyLock<[Vec<(Field, Slot)>; 2]> =
        LazyLock::new(|| [make_inputs(Scope::Gpu), make_inputs(Scope::Host)]);
    &INPUTS[scope as usize]
}

pub(super) fn make_inputs(scope: Scope) -> Vec<(Field, Slot)> {
    let fields = summarised(scope);
    let mut v: Vec<(Field, Slot)> =
        fields.iter().enumerate().map(|(k, &f)| (f, Slot::Value(k))).collect();
    for f in Field::all() {
        if let Some(k) = f.def().max_of.and_then(|b| fields.iter().position(|&x| x == b)) {
            v.push((f, Slot::MaxCol(k)));
        }
    }
    v.push((if scope == Scope::Gpu { Field::MemTotal } else { Field::HostMemTotal }, Slot::Total));
    v
}
