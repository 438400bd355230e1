//! Facts about a run and its inputs that several rooms share: the recorder's counters
//! ([`RunStats`]), the metadata stored with each file ([`RunMeta`]), and what a reader found in one
//! input ([`InputInfo`]).

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use crate::catalog::Field;

/// What a finished run reports.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunStats {
    pub ticks: u64,
    pub late: u64,
    pub missed: u64,
    pub dropped: u64,
}

/// Facts about the run stored with its files (Parquet key/value metadata).
#[derive(Debug, Clone)]
pub struct RunMeta {
    pub hostname: String,
    pub interval_s: f64,
    pub command: String,
    pub start: DateTime<Utc>,
    pub driver_version: Option<String>,
}

/// What one input held: rows, recognised fields, ignored columns, warnings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputInfo {
    pub path: PathBuf,
    pub kind: &'static str,
    pub rows: u64,
    /// Host of rows without a host column or value.
    pub default_host: String,
    /// Catalogue fields the file has, canonical names.
    pub fields: Vec<Field>,
    pub ignored_columns: Vec<String>,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}
