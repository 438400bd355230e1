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
/// Footer key of the PID of a wrapped command still running when a second stop ended recording.
pub const JOB_LEFT_RUNNING_KEY: &str = "gpumon.job.left_running";

/// The wrapped command of a recording, as its file's footer tells it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobInfo {
    pub command: String,
    /// The exit code, when the command ended before the file was closed.
    pub exit_code: Option<i32>,
    /// When it ended, UTC µs (recordings of older versions lack it).
    pub end: Option<i64>,
    /// The PID of a command still running when a second stop ended recording (no exit code then).
    pub left_running: Option<u32>,
}

impl JobInfo {
    /// The job of a footer whose values `get` looks up by key; None when no command was wrapped.
    pub fn from_footer<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<JobInfo> {
        let command = get(JOB_COMMAND_KEY)?.to_string();
        let exit_code = get(JOB_EXIT_CODE_KEY).and_then(|c| c.trim().parse().ok());
        let end = get(JOB_END_KEY)
            .and_then(|t| DateTime::parse_from_rfc3339(t.trim()).ok())
            .map(|t| t.with_timezone(&Utc).timestamp_micros());
        let left_running = get(JOB_LEFT_RUNNING_KEY).and_then(|p| p.trim().parse().ok());
        Some(JobInfo { command, exit_code, end, left_running })
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
    /// The `gpumon record` run a gpumon Parquet file came from (its footer), when it says.
    pub recording: Option<RecordingOf>,
}

/// The `gpumon record` run an input came from: pieces of one run share host and start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordingOf {
    pub host: String,
    /// `gpumon.start` as the footer holds it (RFC 3339).
    pub start: String,
    /// The recorder's command line.
    pub command: String,
    /// Which of several recordings of this host among the inputs (1, 2, ...); None when the inputs
    /// hold one recording of it.
    pub ordinal: Option<u32>,
}

/// One of several recordings of a host among a summary's inputs: where it came from and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingGroup {
    pub of: RecordingOf,
    pub files: Vec<PathBuf>,
    pub rows: u64,
}

/// The recordings of hosts that have more than one among `inputs` (numbered by
/// `read::recordings::number_recordings`), in order of host and number; empty when every host has one.
pub fn several_recordings(inputs: &[InputInfo]) -> Vec<RecordingGroup> {
    let mut out: Vec<RecordingGroup> = Vec::new();
    for i in inputs {
        let Some(r) = i.recording.as_ref().filter(|r| r.ordinal.is_some()) else { continue };
        match out.iter_mut().find(|g| g.of.host == r.host && g.of.ordinal == r.ordinal) {
            Some(g) => {
                g.files.push(i.path.clone());
                g.rows += i.rows;
            }
            None => out.push(RecordingGroup {
                of: r.clone(),
                files: vec![i.path.clone()],
                rows: i.rows,
            }),
        }
    }
    out.sort_by(|a, b| (&a.of.host, a.of.ordinal).cmp(&(&b.of.host, b.of.ordinal)));
    out
}

/// Lines that say the inputs hold several recordings (empty when they do not): one heading, then one
/// line per recording. Every format shows these words.
pub fn recordings_note(inputs: &[InputInfo]) -> Vec<String> {
    let groups = several_recordings(inputs);
    if groups.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "These inputs hold {} separate recordings (not one run; a later recording's phases are \
         labelled \"LABEL (recording N)\"):",
        groups.len()
    )];
    for g in &groups {
        let files = match &g.files[..] {
            [one] => gpumon_util::text::show(one),
            [first, ..] => {
                format!("{} and {} more file(s)", gpumon_util::text::show(first), g.files.len() - 1)
            }
            [] => String::new(),
        };
        out.push(format!(
            "recording {} of {}: started {}, {} rows in {files}; `{}`",
            g.of.ordinal.unwrap_or(0),
            g.of.host,
            g.of.start,
            g.rows,
            g.of.command
        ));
    }
    out
}
