//! Facts about a run and its inputs that several rooms share: the recorder's counters
//! ([`RunStats`]), the metadata stored with each file ([`RunMeta`]), and what a reader found in one
//! input ([`InputInfo`]).

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use crate::catalog::Field;

/// What a finished run reports.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunStats {
    /// Ticks taken.
    pub ticks: u64,
    /// Ticks taken late.
    pub late: u64,
    /// Ticks missed.
    pub missed: u64,
    /// Ticks dropped.
    pub dropped: u64,
    /// Rows of the ticks handed to the outputs.
    pub rows: u64,
    /// Stamps of the first and the last tick handed to the outputs.
    pub first: Option<DateTime<Utc>>,
    /// The last one.
    pub last: Option<DateTime<Utc>>,
}

/// Facts about the run stored with its files (Parquet key/value metadata).
#[derive(Debug, Clone)]
pub struct RunMeta {
    /// The recording host's name.
    pub hostname: String,
    /// The recording interval, seconds.
    pub interval_s: f64,
    /// The recorder's command line.
    pub command: String,
    /// When the run started.
    pub start: DateTime<Utc>,
    /// The NVIDIA driver's version, when NVML tells it.
    pub driver_version: Option<String>,
    /// The job this recording belongs to (`--job-id` or the launcher's environment).
    pub job: Option<JobId>,
}

/// Footer key of the wrapped command (`record -- CMD`), its words joined by spaces.
pub const JOB_COMMAND_KEY: &str = "gpumon.job.command";
/// Footer key of the wrapped command's exit code (128 + N when signal N ended it).
pub const JOB_EXIT_CODE_KEY: &str = "gpumon.job.exit_code";
/// Footer key of when gpumon saw the wrapped command end (RFC 3339, UTC).
pub const JOB_END_KEY: &str = "gpumon.job.end";
/// Footer key of the PID of a wrapped command still running when a second stop ended recording.
pub const JOB_LEFT_RUNNING_KEY: &str = "gpumon.job.left_running";

/// Footer key of the job a recording belongs to (`--job-id`, `SLURM_JOB_ID`, ...).
pub(crate) const JOB_ID_KEY: &str = "gpumon.job.id";

/// The job a recording belongs to, shared by the recordings of its nodes: from `record --job-id`
/// or the environment a launcher sets (Slurm, torchrun, a Kubernetes Job). `node` and `rank` say
/// where in the job this recorder ran, when the launcher tells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobId {
    /// The job's id.
    pub id: String,
    /// Where the id came from: `option`, `slurm`, `torchrun` or `kubernetes`.
    pub source: String,
    /// The node's number in the job (`SLURM_NODEID`, `GROUP_RANK`, `JOB_COMPLETION_INDEX`).
    pub node: Option<String>,
    /// The process's rank (`SLURM_PROCID`, `RANK`), its rank on the node (`LOCAL_RANK`) and the
    /// job's number of processes (`WORLD_SIZE`, `SLURM_NTASKS`).
    pub rank: Option<String>,
    /// Its rank on the node (`LOCAL_RANK`).
    pub local_rank: Option<String>,
    /// The job's number of processes (`WORLD_SIZE`, `SLURM_NTASKS`).
    pub world_size: Option<String>,
}

/// The footer keys of a [`JobId`]'s parts after the id, in order.
const JOB_PART_KEYS: [&str; 5] = [
    "gpumon.job.source",
    "gpumon.job.node",
    "gpumon.job.rank",
    "gpumon.job.local_rank",
    "gpumon.job.world_size",
];

/// Job ids longer than this are refused (they label every Prometheus series).
pub const JOB_ID_MAX: usize = 256;

impl JobId {
    /// The job named by `--job-id` (wins when given) or by the environment that `var` reads; None
    /// when neither names one (a recorder beside no job, e.g. a DaemonSet).
    ///
    /// Ids: `--job-id`, else `SLURM_JOB_ID` (an array task's `SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID`),
    /// else `TORCHELASTIC_RUN_ID` (not torchrun's placeholder `none`), else `JOB_NAME` (a Kubernetes
    /// Job's name passed by the pod template, e.g. from the `batch.kubernetes.io/job-name` label
    /// through the downward API), prefixed `NAMESPACE/` when `POD_NAMESPACE` is set. The node and
    /// ranks come from whichever launcher variables are set (Slurm's first).
    pub fn from_env(option: Option<&str>, var: impl Fn(&str) -> Option<String>) -> Option<JobId> {
        let var = |k: &str| var(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let first = |keys: &[&str]| keys.iter().find_map(|k| var(k));
        let slurm = var("SLURM_JOB_ID").map(|id| {
            match (var("SLURM_ARRAY_JOB_ID"), var("SLURM_ARRAY_TASK_ID")) {
                (Some(a), Some(t)) => format!("{a}_{t}"),
                _ => id,
            }
        });
        let torch = var("TORCHELASTIC_RUN_ID").filter(|v| v != "none");
        let kube = var("JOB_NAME").map(|j| match var("POD_NAMESPACE") {
            Some(ns) => format!("{ns}/{j}"),
            None => j,
        });
        let (id, source) = match (option, slurm, torch, kube) {
            (Some(o), ..) => (o.to_string(), "option"),
            (None, Some(s), ..) => (s, "slurm"),
            (None, None, Some(t), _) => (t, "torchrun"),
            (None, None, None, Some(k)) => (k, "kubernetes"),
            (None, None, None, None) => return None,
        };
        Some(JobId {
            id,
            source: source.to_string(),
            node: first(&["SLURM_NODEID", "GROUP_RANK", "JOB_COMPLETION_INDEX"]),
            rank: first(&["SLURM_PROCID", "RANK"]),
            local_rank: first(&["SLURM_LOCALID", "LOCAL_RANK"]),
            world_size: first(&["SLURM_NTASKS", "WORLD_SIZE"]),
        })
    }

    /// The footer's key/value pairs of the job (parts not known left out).
    pub fn footer(&self) -> Vec<(String, String)> {
        let parts = [
            Some(&self.source),
            self.node.as_ref(),
            self.rank.as_ref(),
            self.local_rank.as_ref(),
            self.world_size.as_ref(),
        ];
        let mut kv = vec![(JOB_ID_KEY.to_string(), self.id.clone())];
        for (k, v) in JOB_PART_KEYS.iter().zip(parts) {
            kv.extend(v.map(|v| (k.to_string(), v.clone())));
        }
        kv
    }

    /// The job of a footer whose values `get` looks up by key; None when it names none.
    pub fn from_footer<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<JobId> {
        let id = get(JOB_ID_KEY).map(str::trim).filter(|v| !v.is_empty())?.to_string();
        let part = |i: usize| get(JOB_PART_KEYS[i]).map(str::to_string);
        Some(JobId {
            id,
            source: part(0).unwrap_or_default(),
            node: part(1),
            rank: part(2),
            local_rank: part(3),
            world_size: part(4),
        })
    }
}

/// The wrapped command of a recording, as its file's footer tells it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobInfo {
    /// The wrapped command, its words joined by spaces.
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
    /// The input's path.
    pub path: PathBuf,
    /// What kind of input it is.
    pub kind: &'static str,
    /// Rows read.
    pub rows: u64,
    /// Host of rows without a host column or value.
    pub default_host: String,
    /// Catalogue fields the file has, canonical names.
    pub fields: Vec<Field>,
    /// Columns that are no catalogue field, ignored.
    pub ignored_columns: Vec<String>,
    /// Warnings about the input.
    pub warnings: Vec<String>,
    /// Notes about the input.
    pub notes: Vec<String>,
    /// The wrapped command of the recording, from a gpumon Parquet file's footer.
    pub job: Option<JobInfo>,
    /// The `gpumon record` run a gpumon Parquet file came from (its footer), when it says.
    pub recording: Option<RecordingOf>,
}

/// The `gpumon record` run an input came from: pieces of one run share host and start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordingOf {
    /// The recording's host.
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
    /// The recording.
    pub of: RecordingOf,
    /// Its files among the inputs.
    pub files: Vec<PathBuf>,
    /// Rows in them.
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
            [one] => gpumon_util::show(one),
            [first, ..] => {
                format!("{} and {} more file(s)", gpumon_util::show(first), g.files.len() - 1)
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

#[cfg(test)]
mod job_tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| vars.iter().find(|v| v.0 == k).map(|v| v.1.to_string())
    }

    #[test]
    fn job_from_launchers() {
        let slurm = [("SLURM_JOB_ID", "4242"), ("SLURM_NODEID", "3"), ("SLURM_PROCID", "24")];
        let j = JobId::from_env(None, env(&slurm)).unwrap();
        assert_eq!((j.id.as_str(), j.source.as_str()), ("4242", "slurm"));
        assert_eq!((j.node.as_deref(), j.rank.as_deref()), (Some("3"), Some("24")));
        let torch = [("TORCHELASTIC_RUN_ID", "r1"), ("GROUP_RANK", "1"), ("WORLD_SIZE", "16")];
        let j = JobId::from_env(None, env(&torch)).unwrap();
        assert_eq!(
            (j.id.as_str(), j.source.as_str(), j.node.as_deref()),
            ("r1", "torchrun", Some("1"))
        );
        assert_eq!(j.world_size.as_deref(), Some("16"));
        let placeholder = [("TORCHELASTIC_RUN_ID", "none")];
        assert_eq!(JobId::from_env(None, env(&placeholder)), None);
        let kube = [("JOB_NAME", "train"), ("POD_NAMESPACE", "ml"), ("JOB_COMPLETION_INDEX", "2")];
        let j = JobId::from_env(None, env(&kube)).unwrap();
        assert_eq!((j.id.as_str(), j.node.as_deref()), ("ml/train", Some("2")));
        let j = JobId::from_env(Some("mine"), env(&slurm)).unwrap();
        assert_eq!(
            (j.id.as_str(), j.source.as_str(), j.node.as_deref()),
            ("mine", "option", Some("3"))
        );
        assert_eq!(JobId::from_env(None, env(&[])), None);
        let kv = j.footer();
        let back = JobId::from_footer(|k| kv.iter().find(|p| p.0 == k).map(|p| p.1.as_str()));
        assert_eq!(back, Some(j));
    }
}
