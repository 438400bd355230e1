//! One GPU's accumulator: its fields, throttle reasons and the facts the findings need.

use crate::facts::FactsAcc;
use crate::stat::{Scope, summarised};
use gpumon_schema::catalog::Field;

use super::*;

/// Clock event (throttle) reasons: NVML's `nvmlClocksEventReason*` bits (nvml.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Nothing runs on the GPU.
    GpuIdle,
    /// Clocks held at the applications clocks setting.
    ApplicationsClocksSetting,
    /// The software power cap (the power limit).
    SwPowerCap,
    /// Hardware slowdown (high temperature, or the power brake).
    HwSlowdown,
    /// Clocks kept in step with other GPUs (sync boost).
    SyncBoost,
    /// Software thermal slowdown (GPU or memory above its target temperature).
    SwThermalSlowdown,
    /// Hardware thermal slowdown.
    HwThermalSlowdown,
    /// Hardware power brake (an external signal).
    HwPowerBrakeSlowdown,
    /// Clocks held at the display clock setting.
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
    /// The reason's bit in `clocks_event_reasons.active`.
    pub fn bit(self) -> u64 {
        1 << self as u32
    }

    /// The name in `throttle.<name>_pct` (nvidia-smi's `clocks_event_reasons.<name>`).
    pub fn name(self) -> &'static str {
        gpumon_schema::catalog::CLOCK_EVENT_REASONS[self as usize].1
    }
}

/// Thermal throttling.
pub(crate) const THERMAL: [Reason; 2] = [Reason::SwThermalSlowdown, Reason::HwThermalSlowdown];
/// Power throttling.
pub(crate) const POWER: [Reason; 3] =
    [Reason::SwPowerCap, Reason::HwSlowdown, Reason::HwPowerBrakeSlowdown];

pub(super) fn any_of(bits: u64, reasons: &[Reason]) -> bool {
    reasons.iter().any(|r| bits & r.bit() != 0)
}

/// Everything summarised about one GPU.
#[derive(Debug, Clone)]
pub(crate) struct GpuAcc {
    pub rows: u64,
    pub first_ts: i64,
    pub last_ts: i64,
    pub timing: Timing,
    /// The summarised GPU fields, in the order of [`summarised`].
    pub fields: Vec<FieldAcc>,
    pub mem_total: Moments,
    /// memory.used + memory.free, for files without memory.total.
    pub(crate) mem_sum: Moments,
    pub reasons: [u64; 9],
    pub(crate) reasons_n: u64,
    pub(crate) thermal_n: u64,
    pub(crate) power_n: u64,
    /// Rows with both utilization.gpu and cpu.util.max_core, and those of them input-bound.
    pub(crate) ib_both: u64,
    pub(crate) ib_n: u64,
    pub uuid: Option<String>,
    pub name: Option<String>,
    /// Per-row facts for the findings (empty rows, memory held while idle, memory health).
    pub(crate) facts: FactsAcc,
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
            facts: FactsAcc::default(),
        }
    }
}

impl GpuAcc {
    /// The accumulator of a summarised field.
    pub(crate) fn field(&self, f: Field) -> Option<&FieldAcc> {
        summarised(Scope::Gpu).iter().position(|&x| x == f).and_then(|k| self.fields.get(k))
    }

    /// Add every value of `vals` that is not NaN to the accumulator of the column with `slot`.
    #[inline]
    pub(crate) fn add_slice(&mut self, slot: Slot, vals: &[f64]) {
        match slot {
            Slot::Value(k) => self.fields[k].add_slice(vals),
            Slot::MaxCol(k) => self.fields[k].max_col.add_slice(vals),
            Slot::Total => self.mem_total.add_slice(vals),
        }
    }

    /// [`GpuAcc::add_slice`] for whole numbers ([`Moments::add_ints`]).
    #[inline]
    pub(crate) fn add_ints(&mut self, slot: Slot, vals: &[i64]) {
        match slot {
            Slot::Value(k) => self.fields[k].add_ints(vals),
            Slot::MaxCol(k) => self.fields[k].max_col.add_ints(vals),
            Slot::Total => self.mem_total.add_ints(vals),
        }
    }

    /// [`GpuAcc::add_ints`] of the values counted in `counts` ([`Moments::add_counts`]).
    pub(crate) fn add_counts(&mut self, slot: Slot, lo: i64, counts: &[u32]) {
        match slot {
            Slot::Value(k) => self.fields[k].add_counts(lo, counts),
            Slot::MaxCol(k) => self.fields[k].max_col.add_counts(lo, counts),
            Slot::Total => self.mem_total.add_counts(lo, counts),
        }
    }

    #[inline]
    pub(crate) fn add_reasons(&mut self, bits: u64) {
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
        self.facts.pool(&o.facts);
        if self.uuid.is_none() {
            self.uuid.clone_from(&o.uuid);
        }
        if self.name.is_none() {
            self.name.clone_from(&o.name);
        }
    }

    /// Join the later stretch of the same GPU.
    pub(crate) fn append(&mut self, later: GpuAcc) {
        self.add_values(&later);
        self.timing.append(later.timing);
    }

    /// Add another GPU (over-all figures).
    pub(crate) fn pool(&mut self, other: &GpuAcc) {
        self.add_values(other);
        self.timing.pool(&other.timing);
    }
}
