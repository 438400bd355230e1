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
