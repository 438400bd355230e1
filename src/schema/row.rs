//! The row model: one [`Tick`] holds one row per GPU (or one host-only row), all stamped alike.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::schema::catalog::{FIELD_COUNT, Field};

/// One recorded value. Every sink renders `Null` and `Unsupported` as missing.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// No value this tick (error, GPU lost, not measured).
    #[default]
    Null,
    /// The device says it cannot report this field (nvidia-smi prints `[Not Supported]`).
    Unsupported,
    U(u64),
    F(f64),
    S(Arc<str>),
}

impl Value {
    pub fn is_missing(&self) -> bool {
        matches!(self, Value::Null | Value::Unsupported)
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::U(v) => Some(*v as f64),
            Value::F(v) => Some(*v),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::U(v) => Some(*v),
            Value::F(v) if *v >= 0.0 => Some(v.round() as u64),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::S(s) => Some(s),
            _ => None,
        }
    }
}

/// One output row: a value for every catalogue field, indexed by [`Field`].
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    values: Vec<Value>,
}

impl Default for Row {
    fn default() -> Self {
        Row { values: vec![Value::Null; FIELD_COUNT] }
    }
}

impl Row {
    pub fn get(&self, f: Field) -> &Value {
        &self.values[f as usize]
    }

    pub fn set(&mut self, f: Field, v: Value) {
        self.values[f as usize] = v;
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
}

/// The columns an output carries, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    fields: Vec<Field>,
}

impl Selection {
    pub fn new(fields: Vec<Field>) -> Self {
        Selection { fields }
    }

    /// Every default field.
    pub fn defaults() -> Self {
        Selection::new(crate::schema::catalog::CATALOG.iter().filter(|d| d.default).map(|d| d.field).collect())
    }

    pub fn fields(&self) -> impl Iterator<Item = Field> + '_ {
        self.fields.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }
}
