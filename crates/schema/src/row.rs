//! The row model: one [`Tick`] holds one row per GPU (or one host-only row), all stamped alike.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::catalog::{FIELD_COUNT, Field};

/// One recorded value. Every sink renders `Null` and `Unsupported` as missing.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// No value this tick (error, GPU lost, not measured).
    #[default]
    Null,
    /// The device says it cannot report this field (nvidia-smi prints `[Not Supported]`).
    Unsupported,
    /// An unsigned integer (booleans as 0 or 1).
    U(u64),
    /// A float.
    F(f64),
    /// A string.
    S(Arc<str>),
}

impl Value {
    /// Whether there is no value (null or not supported).
    pub fn is_missing(&self) -> bool {
        matches!(self, Value::Null | Value::Unsupported)
    }

    /// The value as a float, when it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::U(v) => Some(*v as f64),
            Value::F(v) => Some(*v),
            _ => None,
        }
    }

    /// The value as an unsigned integer, when it is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::U(v) => Some(*v),
            Value::F(v) if *v >= 0.0 => Some(v.round() as u64),
            _ => None,
        }
    }

    /// The value as a string, when it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::S(s) => Some(s),
            _ => None,
        }
    }
}

/// One output row: a value for every catalogue field, indexed by [`Field`]. Only the fields that
/// were set are stored, each in the order it was first set; any other field reads as `Null`. A
/// row is built per GPU per tick and kept by the writer until it is flushed, so its size is the
/// recorder's heap churn: a GPU row of the default fields holds about 55 of the 86 fields, one of
/// 21 GPU fields about 25 (the dense row held all 86, 2 KiB).
#[derive(Debug, Clone)]
pub struct Row {
    /// Position in `values` of each field, [`UNSET`] when it was never set.
    slot: [u8; FIELD_COUNT],
    values: Vec<Value>,
    /// The work counters' amounts of the tick (`progress.KEY`, in the selection's key order; NaN:
    /// null), shared by the tick's rows. None: every counter column null.
    progress: Option<Arc<[f64]>>,
}

/// `Row::slot` of a field that was never set.
const UNSET: u8 = u8::MAX;

const _: () = assert!(FIELD_COUNT < UNSET as usize, "a row's slots are bytes");

static NULL: Value = Value::Null;

impl Default for Row {
    fn default() -> Self {
        Row { slot: [UNSET; FIELD_COUNT], values: Vec::new(), progress: None }
    }
}

impl PartialEq for Row {
    /// Rows are equal when every field reads the same (an explicit `Null` equals an unset field).
    fn eq(&self, other: &Row) -> bool {
        (0..FIELD_COUNT).all(|i| self.at(i) == other.at(i)) && self.progress_eq(other)
    }
}

impl Row {
    /// An empty row with room for `n` fields before it reallocates.
    pub fn with_capacity(n: usize) -> Row {
        Row { slot: [UNSET; FIELD_COUNT], values: Vec::with_capacity(n), progress: None }
    }

    /// The amount of work counter `k` (in the selection's key order) in this row's interval; None: null.
    #[inline]
    pub fn progress(&self, k: usize) -> Option<f64> {
        self.progress.as_ref().and_then(|p| p.get(k).copied()).filter(|v| !v.is_nan())
    }

    /// Set the work counters' amounts of the row's tick (NaN: null).
    pub fn set_progress(&mut self, amounts: Option<Arc<[f64]>>) {
        self.progress = amounts;
    }

    fn progress_eq(&self, other: &Row) -> bool {
        let n = self
            .progress
            .as_ref()
            .map_or(0, |p| p.len())
            .max(other.progress.as_ref().map_or(0, |p| p.len()));
        (0..n).all(|k| self.progress(k) == other.progress(k))
    }

    /// How many fields were set.
    pub fn set_count(&self) -> usize {
        self.values.len()
    }

    #[inline]
    fn at(&self, i: usize) -> &Value {
        match self.slot[i] {
            UNSET => &NULL,
            k => &self.values[usize::from(k)],
        }
    }

    /// The field's value (null when unset).
    #[inline]
    pub fn get(&self, f: Field) -> &Value {
        self.at(f as usize)
    }

    /// Set the field's value.
    #[inline]
    pub fn set(&mut self, f: Field, v: Value) {
        let i = f as usize;
        match self.slot[i] {
            UNSET => {
                // FIELD_COUNT < UNSET, so a row never holds more values than a byte can index.
                self.slot[i] = self.values.len() as u8;
                self.values.push(v);
            }
            k => self.values[usize::from(k)] = v,
        }
    }
}

/// Everything sampled at one deadline.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// Wall-clock time of the tick, shared by all its rows.
    pub ts: DateTime<Utc>,
    /// Sequence number from the start of the run (1 for the first tick).
    pub seq: u64,
    /// One row per GPU, or a single row with GPU fields null on a machine without one.
    pub rows: Vec<Row>,
    /// Compute processes NVML reported on the GPUs of this tick (when asked for).
    pub procs: Vec<GpuProc>,
}

/// One process using a GPU, as NVML reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuProc {
    /// Index into [`Tick::rows`] of the GPU's row.
    pub row: usize,
    /// PID in the host's namespace.
    pub pid: u32,
    /// GPU memory it uses, MiB (None when NVML cannot tell, e.g. under MIG without permission).
    pub used_mib: Option<u64>,
    /// Its share of the GPU's engines (None when NVML cannot report per-process utilization).
    pub util: Option<ProcUtil>,
}

/// Per-process utilization, percent (NVML `nvmlDeviceGetProcessUtilization`): SM, memory
/// bandwidth, video encoder and decoder.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ProcUtil {
    /// SM, percent.
    pub sm: f64,
    /// Memory bandwidth, percent.
    pub mem: f64,
    /// Video encoder, percent.
    pub enc: f64,
    /// Video decoder, percent.
    pub dec: f64,
}

/// One NVML event as the recorder saw it (a row of the events file).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuEvent {
    /// When the event reached gpumon (NVML events carry no time of their own).
    pub ts: DateTime<Utc>,
    /// The GPU's NVML index.
    pub index: u32,
    /// The GPU's UUID.
    pub uuid: Arc<str>,
    /// `xid`, `dbe`, `sbe`, `clock`, `power_source`, `pstate`.
    pub kind: &'static str,
    /// The Xid of an `xid` event.
    pub code: Option<u64>,
    /// What NVML said about the event, when anything.
    pub detail: Option<String>,
}

/// Event kinds that come with normal operation (the driver changes clocks and P-states as the load
/// changes): counted per GPU, never warned about or listed as faults.
pub(crate) const ROUTINE_EVENT_KINDS: [&str; 2] = ["clock", "pstate"];

/// Whether an event kind is routine ([`ROUTINE_EVENT_KINDS`]).
pub fn routine_event(kind: &str) -> bool {
    ROUTINE_EVENT_KINDS.contains(&kind)
}

/// The columns an output carries, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    fields: Vec<Field>,
    /// The work counters declared (`record --progress`): one `progress.KEY` column each, after the fields.
    progress: Arc<[Arc<str>]>,
}

impl Selection {
    /// The fields given, in order, without work counters.
    pub fn new(fields: Vec<Field>) -> Self {
        Selection { fields, progress: Arc::from([]) }
    }

    /// The same columns and one `progress.KEY` column per key, in order.
    pub fn with_progress(mut self, keys: &[String]) -> Self {
        self.progress = keys.iter().map(|k| Arc::from(k.as_str())).collect();
        self
    }

    /// The declared work counters, in column order.
    pub fn progress(&self) -> &[Arc<str>] {
        &self.progress
    }

    /// Every default field.
    pub fn defaults() -> Self {
        Selection::new(
            crate::catalog::CATALOG.iter().filter(|d| d.default).map(|d| d.field).collect(),
        )
    }

    /// The same columns with the MIG instance identity (`mig.gi`, `mig.ci`, `mig.profile`,
    /// `mig.uuid`) after the GPU identity columns, for a run that sees a GPU in MIG mode.
    pub fn with_mig(mut self) -> Self {
        let ids = [Field::Index, Field::Uuid, Field::Name, Field::PciBusId];
        let at =
            self.fields.iter().rposition(|f| ids.contains(f)).map_or(self.fields.len(), |i| i + 1);
        let add: Vec<Field> =
            crate::catalog::MIG_IDENTITY.into_iter().filter(|f| !self.fields.contains(f)).collect();
        self.fields.splice(at..at, add);
        self
    }

    /// The fields, in order.
    pub fn fields(&self) -> impl Iterator<Item = Field> + '_ {
        self.fields.iter().copied()
    }

    /// The number of fields.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether there is no field.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_fields_read_null_and_rows_compare_by_what_they_read() {
        let mut a = Row::default();
        assert_eq!(a.get(Field::UtilGpu), &Value::Null);
        a.set(Field::UtilGpu, Value::U(7));
        a.set(Field::Pstate, Value::S("P0".into()));
        a.set(Field::UtilGpu, Value::U(8));
        assert_eq!(a.get(Field::UtilGpu), &Value::U(8));
        assert_eq!(a.get(Field::Pstate), &Value::S("P0".into()));
        let mut b = Row::with_capacity(4);
        b.set(Field::Pstate, Value::S("P0".into()));
        b.set(Field::UtilGpu, Value::U(8));
        b.set(Field::MemUsed, Value::Null);
        assert_eq!(a, b, "order of setting and an explicit null do not matter");
        b.set(Field::MemUsed, Value::Unsupported);
        assert_ne!(a, b);
    }
}
