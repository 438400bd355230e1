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
    /// Rows of the ticks handed to the outputs.
    pub rows: u64,
    /// Stamps of the first and the last tick handed to the outputs.
    pub first: Option<DateTime<Utc>>,
    pub last: Option<DateTime<Utc>>,
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

/// Footer key of the wrapped command (`record -- CMD`), its words joined by spaces.
pub const JOB_COMMAND_KEY: &str = "gpumon.job.command";
/// Footer key of the wrapped command's exit code (128 + N when signal N ended it).
pub const JOB_EXIT_CODE_KEY: &str = "gpumon.job.exit_code";
/// Footer key of when gpumon saw the wrapped command end (RFC 3339, UTC).
pub const JOB_END_KEY: &str = "gpumon.job.end";

/// The wrapped command of a recording, as its file's footer tells it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobInfo {
    pub command: String,
    /// The exit code, when the command ended before the file was closed.
    pub exit_code: Option<i32>,
    /// When it ended, UTC µs (recordings of older versions lack it).
    pub end: Option<i64>,
}

impl JobInfo {
    /// The job of a footer whose values `get` looks up by key; None when no command was wrapped.
    pub fn from_footer<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<JobInfo> {
        let command = get(JOB_COMMAND_KEY)?.to_string();
        let exit_code = get(JOB_EXIT_CODE_KEY).and_then(|c| c.trim().parse().ok());
        let end = get(JOB_END_KEY)
            .and_then(|t| DateTime::parse_from_rfc3339(t.trim()).ok())
            .map(|t| t.with_timezone(&Utc).timestamp_micros());
        Some(JobInfo { command, exit_code, end })
    }

    /// Whether the command ended with a non-zero code.
    pub fn failed(&self) -> bool {
        self.exit_code.is_some_and(|c| c != 0)
    }
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
    /// The wrapped command of the recording, from a gpumon Parquet file's footer.
    pub job: Option<JobInfo>,
}
