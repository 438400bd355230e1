//! One host's accumulator.

use crate::stat::{Scope, summarised};
use gpumon_schema::catalog::Field;

use super::*;

/// Everything summarised about one host (one value per tick).
#[derive(Debug, Clone)]
pub(crate) struct HostAcc {
    pub ticks: u64,
    /// Timestamp of the latest tick seen (ticks are told apart by their timestamp; a row at or
    /// before it is not a new tick).
    pub last_ts: i64,
    /// Timestamp of the earliest tick counted (`i64::MAX` before any): with `last_ts`, the host's
    /// span when it has no GPU rows.
    pub first_ts: i64,
    /// The first tick of this stretch (one value per [`inputs`] column), held back so that `append`
    /// can drop it when the earlier stretch ended inside the same tick.
    pub pending: Option<(i64, Vec<f64>)>,
    /// The summarised host fields, in the order of [`summarised`].
    pub fields: Vec<FieldAcc>,
    pub mem_total: Moments,
    /// Ticks with mem.used at or above `press_pct` % of mem.total (host memory pressure).
    pub pressed: u64,
    pub(crate) press_pct: f64,
}

impl Default for HostAcc {
    fn default() -> Self {
        HostAcc {
            ticks: 0,
            last_ts: i64::MIN,
            first_ts: i64::MAX,
            pending: None,
            fields: summarised(Scope::Host).iter().map(|&f| FieldAcc::new(f)).collect(),
            mem_total: Moments::default(),
            pressed: 0,
            press_pct: f64::INFINITY,
        }
    }
}

impl HostAcc {
    /// The accumulator of a summarised field.
    pub(crate) fn field(&self, f: Field) -> Option<&FieldAcc> {
        summarised(Scope::Host).iter().position(|&x| x == f).and_then(|k| self.fields.get(k))
    }

    /// Add the value of one tick of the column with `slot` (NaN = missing).
    pub(crate) fn add(&mut self, slot: Slot, v: f64) {
        self.add_slice(slot, &[v]);
    }

    /// [`HostAcc::add`] each value of `vals`.
    pub(crate) fn add_slice(&mut self, slot: Slot, vals: &[f64]) {
        match slot {
            Slot::Value(k) => self.fields[k].add_slice(vals),
            Slot::MaxCol(k) => self.fields[k].max_col.add_slice(vals),
            Slot::Total => self.mem_total.add_slice(vals),
        }
    }

    /// One tick's mem.used and mem.total: count it when the host's memory is pressed.
    pub(crate) fn add_pressure(&mut self, used: f64, total: f64) {
        self.pressed += u64::from(total > 0.0 && used >= self.press_pct / 100.0 * total);
    }

    fn add_sample(&mut self, s: &[f64]) {
        self.ticks += 1;
        let at = |f: Field, total: bool| {
            let i = inputs(Scope::Host)
                .iter()
                .position(|&(x, sl)| x == f && (sl == Slot::Total) == total);
            i.and_then(|i| s.get(i).copied()).unwrap_or(f64::NAN)
        };
        self.add_pressure(at(Field::HostMemUsed, false), at(Field::HostMemTotal, true));
        for (&(_, slot), &v) in inputs(Scope::Host).iter().zip(s) {
            self.add(slot, v);
        }
    }

    fn add_values(&mut self, o: &HostAcc) {
        self.ticks += o.ticks;
        self.pressed += o.pressed;
        for (a, b) in self.fields.iter_mut().zip(&o.fields) {
            a.pool(b);
        }
        self.mem_total.pool(&o.mem_total);
    }

    /// Join the later stretch of the same host.
    pub(crate) fn append(&mut self, later: HostAcc) {
        if let Some((ts, s)) = &later.pending
            && *ts > self.last_ts
        {
            self.add_sample(s);
        }
        self.add_values(&later);
        self.last_ts = self.last_ts.max(later.last_ts);
        self.first_ts = self.first_ts.min(later.first_ts);
    }

    /// Count the held-back first tick (the stretch is the first of its host).
    pub(crate) fn settle(&mut self) {
        if let Some((_, s)) = self.pending.take() {
            self.add_sample(&s);
        }
    }

    /// Add another host (over-all figures); both settled.
    pub(crate) fn pool(&mut self, other: &HostAcc) {
        self.add_values(other);
        self.first_ts = self.first_ts.min(other.first_ts);
    }
}
