//! The command line as clap sees it: subcommands, flags, help texts and value parsers. The only
//! module that knows clap; it touches neither the filesystem nor the environment (`cmd/` turns
//! these arguments into configs and runs them).
// The doc comments below are clap's help text, printed as written: `[,noheader]` is an optional
// part of a value there, not a link.
#![allow(rustdoc::broken_intra_doc_links)]

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use gpumon_schema::Format;
use gpumon_util::Zone;

#[derive(Debug, Parser)]
#[command(
    name = "gpumon",
    version,
    about = "Record GPU and host metrics next to a training job, and make sense of them afterwards"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) cmd: Cmd,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Cmd {
    /// Sample GPU (NVML) and host metrics on a fixed schedule into CSV or Parquet.
    #[command(after_help = RECORD_EXAMPLES)]
    Record(Box<RecordArgs>),
    /// List every field gpumon can record (like `nvidia-smi --help-query-gpu`); --format json|csv for scripts.
    Fields(FieldsArgs),
    /// Check that NVML and the GPUs are usable here and show what `record` would record: driver,
    /// GPUs and the fields each supports, visible-devices variables, container and cgroup limits.
    Doctor(DoctorArgs),
    /// What happened and what to fix, from gpumon files and nvidia-smi logs: per-GPU and host
    /// statistics, gaps, energy, throttling, findings with fixes, and --fail-if checks for CI.
    #[command(after_help = SUMMARIZE_EXAMPLES)]
    Summarize(Box<SummarizeArgs>),
    /// One self-contained HTML report: the summary's tables and findings, a utilization heatmap
    /// (one row per GPU) and per-GPU/host charts, for the same inputs and windows as summarize. In a
    /// browser the charts are interactive (hover for values, drag to zoom them all, toggle GPUs);
    /// without scripts and in print they are static SVG. No request leaves the page.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(Box<ReportArgs>),
    /// Mark a phase of a running recording (`bs=64`, `eval`): rows from now on carry it in their
    /// `phase` column until the next mark or --end.
    #[command(after_help = MARK_EXAMPLES)]
    Mark(MarkArgs),
    /// Report work the job did (`samples=512`) to a running recording that counts it (`record
    /// --progress samples`): rows carry the amount added during their interval in `progress.KEY`, and
    /// summarize/compare give work per second, per GPU-hour and per Wh.
    #[command(after_help = PROGRESS_EXAMPLES)]
    Progress(ProgressArgs),
    /// Compare runs, or phases of runs, by their key statistics (utilization, memory, power, energy
    /// per hour, ...): each against the first, with --fail-if checks on the changes for CI.
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(Box<CompareArgs>),
    /// A live view of a recording being written, from another shell: per-GPU bars and numbers, host
    /// CPU/RAM, the job, the current phase and the findings so far (read from the recorder's status
    /// file; no second NVML poller). q or Ctrl-C quits.
    Watch(WatchArgs),
    /// Convert gpumon files or nvidia-smi logs to gpumon CSV or typed Parquet.
    Convert(Box<ConvertArgs>),
    /// Turn what a crash left of a recording (journals, a torn last CSV line) into valid files.
    Recover {
        /// The output path given to `record` (finds the whole set), or one of its files.
        path: PathBuf,
    },
    /// Print a shell completion script.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

const RECORD_EXAMPLES: &str = "Examples:
  gpumon record -i 60 -o run.parquet                 one row per GPU per minute, until Ctrl-C
  gpumon record -i 250ms --duration 10m -o run.csv   4 rows per GPU per second for 10 minutes
  gpumon record -o - --fields utilization.gpu,memory.used | tee log.csv
  gpumon record -i 1 --format nvidia-smi -o gpu.log  same bytes as nvidia-smi --format=csv -l 1
  gpumon record --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 5
                                                     nvidia-smi's own flags: its output, on stdout";

#[derive(Debug, clap::Args)]
pub(crate) struct RecordArgs {
    /// Time between ticks (default 1s): a bare number is seconds (like nvidia-smi -l), or 250ms, 1m, 1h.
    /// 100ms or more for meaningful GPU columns (down to 1ms is accepted with a warning, for
    /// benchmarks). nvidia-smi's -l SEC / --loop SEC are accepted too. With --query-gpu the command
    /// line is nvidia-smi's: -i is its --id (GPUs), -l / -lms the interval, and without either one
    /// sample is printed, as nvidia-smi does.
    #[arg(short, long, visible_short_alias = 'l', visible_alias = "loop", value_parser = parse_interval)]
    pub(crate) interval: Option<Duration>,
    /// The interval in milliseconds, as nvidia-smi's -lms MS / --loop-ms MS (-lms works too).
    #[arg(long = "loop-ms", value_name = "MS", conflicts_with = "interval", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) loop_ms: Option<u64>,
    /// Output file (format from the extension: .csv, .parquet), or - for CSV on stdout. `{host}` and
    /// `{date}` (the run's UTC start date) are filled in and missing directories below them made, for
    /// one tree over a fleet: -o /shared/gpumon/host={host}/date={date}/run.parquet.
    /// nvidia-smi's -f FILE / --filename FILE are accepted too.
    #[arg(short, long, visible_short_alias = 'f', visible_alias = "filename")]
    pub(crate) output: Option<PathBuf>,
    /// Host name written in the `host` column and metrics (default: the system's host name; in a
    /// Kubernetes pod pass the node's, e.g. --host "$NODE_NAME").
    #[arg(long, value_name = "NAME")]
    pub(crate) host: Option<String>,
    /// The job this recording belongs to, in the file's footer and as the `job_id` label of every
    /// metric; the recordings of a job's nodes share it (`summarize --by job`). Default: from the
    /// launcher's environment, which a wrapped command inherits: SLURM_JOB_ID, TORCHELASTIC_RUN_ID,
    /// JOB_NAME (a Kubernetes Job's pod template; POD_NAMESPACE/JOB_NAME), else those of the --pid
    /// process; none when none is set.
    #[arg(long, value_name = "NAME")]
    pub(crate) job_id: Option<String>,
    /// Serve the latest tick as Prometheus metrics on [HOST]:PORT, as exporters take it: :9400 (all
    /// interfaces), localhost:9400, 127.0.0.1:9400, [::1]:9400. Binding a non-loopback address
    /// exposes host and GPU metrics to the network: your choice to make.
    #[arg(long, value_name = "[HOST]:PORT", value_parser = parse_listen)]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// Output format: csv, parquet, or nvidia-smi[,noheader][,nounits]. nvidia-smi's csv,noheader /
    /// csv,nounits, and csv with --query-gpu, give the nvidia-smi style.
    #[arg(long, value_parser = parse_format)]
    pub(crate) format: Option<Format>,
    /// Comma-separated fields to record, by name or nvidia-smi alias (see `gpumon fields`).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub(crate) fields: Vec<String>,
    /// nvidia-smi's spelling of --fields: with --format=csv the output is nvidia-smi's (headers with
    /// units, `, ` separators), on stdout unless -o is given.
    #[arg(long, value_delimiter = ',', value_name = "LIST", conflicts_with = "fields")]
    pub(crate) query_gpu: Vec<String>,
    /// Stop after this long (e.g. 30s, 10m, 2h; units ms, s, m, h, d, w).
    #[arg(long, value_parser = parse_nonzero_duration)]
    pub(crate) duration: Option<Duration>,
    /// Stop after this many ticks.
    #[arg(long, value_parser = parse_positive::<u64>)]
    pub(crate) count: Option<u64>,
    /// GPUs to record, by index or UUID (prefix), comma-separated. Default: every GPU, or the ones
    /// CUDA_VISIBLE_DEVICES (else NVIDIA_VISIBLE_DEVICES) selects when set. With --query-gpu,
    /// nvidia-smi's -i LIST is this option.
    #[arg(long, visible_alias = "id", value_delimiter = ',', value_name = "LIST")]
    pub(crate) gpus: Vec<String>,
    /// NVML library to load.
    #[arg(long, env = "GPUMON_NVML_LIB", default_value = "libnvidia-ml.so.1")]
    pub(crate) nvml_lib: String,
    /// Fail (exit 1) instead of recording host-only rows when NVML or a GPU is missing.
    #[arg(long)]
    pub(crate) require_gpu: bool,
    /// Sample this often and write one row per --interval summarising the sub-samples
    /// (means, last values of counters, `.max` columns). Default: 1s, or the interval if shorter.
    #[arg(long, value_parser = parse_interval)]
    pub(crate) sample_every: Option<Duration>,
    /// Longest time written data may wait in memory before it is written and fsynced:
    /// at most this much is lost to a crash or power cut.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub(crate) flush: Duration,
    /// Start a new file when the current one reaches this size (e.g. 256MiB).
    #[arg(long, value_parser = parse_nonzero_size)]
    pub(crate) rotate_size: Option<u64>,
    /// Start a new file on wall-clock boundaries of this period (e.g. 1h, 1d). SIGHUP rotates at once.
    #[arg(long, value_parser = parse_nonzero_duration)]
    pub(crate) rotate_every: Option<Duration>,
    /// Keep at most this many files of the set; the oldest are deleted first.
    #[arg(long, value_parser = parse_positive::<usize>)]
    pub(crate) keep: Option<usize>,
    /// Keep the files of the set under this total size (e.g. 10GiB); the oldest are deleted first.
    #[arg(long, value_parser = parse_nonzero_size)]
    pub(crate) max_total: Option<u64>,
    /// Rows held in memory while the output cannot be written (disk full, I/O errors); later ticks
    /// are dropped and counted in `missed`.
    #[arg(long, default_value_t = 100_000)]
    pub(crate) max_backlog: usize,
    /// Follow this running process and all its descendants (job.* columns); recording ends when
    /// the tree is gone unless --keep-going.
    #[arg(long, conflicts_with = "command")]
    pub(crate) pid: Option<u32>,
    /// With --pid: keep recording after the followed processes have exited.
    #[arg(long, requires = "pid")]
    pub(crate) keep_going: bool,
    /// Also write one row per (tick, GPU, process) for every process NVML reports on a GPU, to
    /// RUN.procs.parquet/.csv beside the output: who is using which GPU, and whether it is the job.
    #[arg(long)]
    pub(crate) processes: bool,
    /// Add the `phase` column (set by `gpumon mark LABEL`) to a run that names its --fields; every
    /// run that takes marks (a file output or a wrapped command) has it by default.
    #[arg(long, conflicts_with = "no_marks")]
    pub(crate) phases: bool,
    /// Continue the output set when it already holds files (a restarted recorder): this run's files
    /// are added beside them. Without it (and without rotation or retention options) an existing
    /// output is refused (exit 2), so two recordings are never read as one by accident.
    #[arg(long)]
    pub(crate) append: bool,
    /// No control socket: `gpumon mark` cannot reach this run (and a wrapped command gets no
    /// $GPUMON_CONTROL nor `phase` column).
    #[arg(long)]
    pub(crate) no_marks: bool,
    /// Work counters the job reports with `gpumon progress KEY=N` (comma-separated names [a-z_]+, at
    /// most 64): one float column `progress.KEY` each, the amount added during the row's interval
    /// (null before the first report). Needs the control socket (a file output or a wrapped command).
    #[arg(long, value_name = "KEY,...", conflicts_with = "no_marks")]
    pub(crate) progress: Vec<String>,
    /// Command to start and record (after --): recording ends when it exits, and gpumon exits with its code.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
    /// No live status line, and no closing line saying what was written.
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Print debug detail (GPUs found, files written).
    #[arg(short, long)]
    pub(crate) verbose: bool,
}

const MARK_EXAMPLES: &str = "Examples:
  gpumon record -i 1 -o run.parquet -- python train.py   and inside train.py (or any shell it starts):
  gpumon mark bs=64                                       uses $GPUMON_CONTROL, set by record
  gpumon mark --run run.parquet eval                      from another shell of the same user
  gpumon mark --run run.parquet --end                     rows are unmarked again";

const PROGRESS_EXAMPLES: &str = "Examples:
  gpumon record -i 1 --progress samples -o run.parquet -- python train.py   and inside train.py:
  gpumon progress samples=512                             adds 512 (uses $GPUMON_CONTROL)
  gpumon progress --run run.parquet samples=512 tokens=9000   from another shell of the same user
  gpumon summarize run.parquet --by phase                 samples/s, per GPU-hour, per Wh";

#[derive(Debug, clap::Args)]
pub(crate) struct ProgressArgs {
    /// Amounts to add: KEY=N with KEY a counter the recording declared with --progress ([a-z_]+) and
    /// N a number of at least 0.
    #[arg(required = true, value_name = "KEY=N")]
    pub(crate) amounts: Vec<String>,
    /// The recording: the -o path given to `gpumon record`. Default: $GPUMON_CONTROL, which a
    /// command started by `gpumon record ... -- CMD` inherits.
    #[arg(long, value_name = "PATH")]
    pub(crate) run: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct MarkArgs {
    /// Phase label: free text or key=value, e.g. bs=64 (several words are joined with spaces).
    #[arg(required_unless_present = "end", conflicts_with = "end", value_name = "LABEL")]
    pub(crate) label: Vec<String>,
    /// Close the current phase: rows carry no phase until the next mark.
    #[arg(long)]
    pub(crate) end: bool,
    /// The recording: the -o path given to `gpumon record`. Default: $GPUMON_CONTROL, which a
    /// command started by `gpumon record ... -- CMD` inherits.
    #[arg(long, value_name = "PATH")]
    pub(crate) run: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct FieldsArgs {
    /// Output format: text (like nvidia-smi --help-query-gpu), or json / csv for scripts: name,
    /// aliases, unit, type (integer, float, string, timestamp, boolean), aggregation, default, help.
    #[arg(long, value_enum, default_value_t = FieldsFormatArg::Text)]
    pub(crate) format: FieldsFormatArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FieldsFormatArg {
    Text,
    Json,
    Csv,
}

#[derive(Debug, clap::Args)]
pub(crate) struct DoctorArgs {
    /// NVML library to load.
    #[arg(long, env = "GPUMON_NVML_LIB", default_value = "libnvidia-ml.so.1")]
    pub(crate) nvml_lib: String,
    /// Output format (json has every list in full).
    #[arg(long, value_enum, default_value_t = DoctorFormatArg::Text)]
    pub(crate) format: DoctorFormatArg,
    /// Every GPU in its own block with its full lists of unsupported and failed fields (by default
    /// GPUs alike share a block and long lists are cut, to fit a screen).
    #[arg(short, long)]
    pub(crate) verbose: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum DoctorFormatArg {
    Text,
    Json,
}

/// Minimum supported interval.
pub(crate) const MIN_INTERVAL: Duration = Duration::from_millis(1);
/// Shortest interval whose every column is meaningful (NVML averages utilization over ≥ 1/6 s).
pub(crate) const MIN_USEFUL_INTERVAL: Duration = Duration::from_millis(100);

/// The units a duration may use, in words for messages.
const DURATION_UNITS: &str = "ms, s, m, h, d or w (e.g. 250ms, 30s, 10m, 2h)";

/// Unit spellings accepted in durations: humantime's, less months and years (`1M` would be a
/// month where a minute was likely meant).
const UNITS: &[&str] = &[
    "ns", "nsec", "us", "usec", "µs", "ms", "msec", "s", "sec", "secs", "second", "seconds", "m",
    "min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour", "hours", "d", "day", "days", "w",
    "week", "weeks",
];

/// A bare number is seconds; otherwise a humantime duration (`250ms`, `1m`, `1h30m`) in the
/// [`UNITS`].
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<f64>() {
        return Duration::try_from_secs_f64(secs)
            .map_err(|_| format!("'{s}' is not a valid duration"));
    }
    let bad = s
        .split(|c: char| c.is_ascii_digit() || c.is_whitespace() || c == '.')
        .find(|u| !u.is_empty() && !UNITS.contains(u));
    if let Some(unit) = bad {
        let month = if unit == "M" || unit.starts_with("month") { " (a month?)" } else { "" };
        return Err(format!("'{s}': unknown unit '{unit}'{month}; use {DURATION_UNITS}"));
    }
    humantime::parse_duration(s)
        .map_err(|e| format!("'{s}' is not a duration ({e}); use {DURATION_UNITS}"))
}

pub(crate) fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s).map_err(|e| e + &id_hint(s))?;
    if d < MIN_INTERVAL {
        return Err(format!("{s} is shorter than the minimum interval of 1ms{}", id_hint(s)));
    }
    Ok(d)
}

/// For an interval that looks like nvidia-smi's `-i` (a GPU index, a list of them, a UUID): how
/// to say that in gpumon.
fn id_hint(s: &str) -> String {
    let index = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    let gpu = |x: &str| index(x) || x.starts_with("GPU-") || x.starts_with("MIG-");
    let looks = s.parse::<u32>().is_ok_and(|n| n == 0)
        || (s.contains(',') && s.split(',').all(gpu))
        || gpu(s) && !index(s);
    if looks {
        format!(
            "; gpumon's -i is the interval (nvidia-smi's -l): to pick GPUs as nvidia-smi's -i does, use --id {s}"
        )
    } else {
        String::new()
    }
}

pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("'{s}' is not a size ({e}); use e.g. 256MiB, 1GiB, 500MB"))
}

/// A size above zero (a zero rotation size or total would rotate or delete without end).
pub(crate) fn parse_nonzero_size(s: &str) -> Result<u64, String> {
    match parse_size(s)? {
        0 => Err(format!("'{s}' is zero; give a size above 0, e.g. 256MiB")),
        n => Ok(n),
    }
}

/// A duration above zero.
pub(crate) fn parse_nonzero_duration(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err(format!("'{s}' is zero; give a length above 0 in {DURATION_UNITS}"));
    }
    Ok(d)
}

/// A listen address as Prometheus exporters take it: `HOST:PORT` with an IP address or a host name
/// (`localhost` is loopback; another name is resolved, its first address used), or `:PORT` for
/// every interface.
pub(crate) fn parse_listen(s: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
    let s = s.trim();
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    let hint = "give [HOST]:PORT, e.g. :9400 (all interfaces), localhost:9400 or 127.0.0.1:9400";
    let Some((host, port)) = s.rsplit_once(':') else {
        return Err(format!("'{s}' is not [HOST]:PORT; {hint}"));
    };
    let port: u16 = port.parse().map_err(|_| format!("'{s}': '{port}' is not a port; {hint}"))?;
    match host {
        "" | "*" => Ok(SocketAddr::from((Ipv4Addr::UNSPECIFIED, port))),
        "localhost" => Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port))),
        _ => (host, port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| format!("'{s}': cannot resolve host '{host}'; {hint}")),
    }
}

/// A count of at least 1.
pub(crate) fn parse_positive<
    T: std::str::FromStr<Err = std::num::ParseIntError> + PartialEq + From<u8>,
>(
    s: &str,
) -> Result<T, String> {
    match s.trim().parse::<T>() {
        Ok(n) if n == T::from(0) => Err("0 is not allowed; give at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("'{s}' is not a count ({e})")),
    }
}

pub(crate) fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s).ok_or_else(|| {
        format!("unknown format '{s}': use csv, parquet or nvidia-smi[,noheader][,nounits]")
    })
}

pub(crate) fn parse_tz(s: &str) -> Result<Zone, String> {
    Zone::parse(s)
}

/// nvidia-smi's multi-letter short option `-lms MS` (clap has none) as `--loop-ms MS`, before
/// clap sees the arguments; on a `record` command line with `--query-gpu` (nvidia-smi's own),
/// its `-i LIST` naming GPUs as `--id LIST` (not gpumon's interval). Arguments after `--` (a
/// wrapped command's) are left alone.
pub(crate) fn nvsmi_argv(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let args: Vec<OsString> = args.into_iter().collect();
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let smi = args.get(1).is_some_and(|a| a == "record")
        && args[..end]
            .iter()
            .filter_map(|a| a.to_str())
            .any(|a| a == "--query-gpu" || a.starts_with("--query-gpu="));
    let mut out = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let next = args.get(i + 1).and_then(|n| n.to_str());
        match a.to_str() {
            _ if i >= end => out.push(a.clone()),
            Some("-lms") => out.push("--loop-ms".into()),
            Some(s) if s.starts_with("-lms=") => out.push(format!("--loop-ms={}", &s[5..]).into()),
            Some("-i") if smi && next.is_some_and(names_gpus) => out.push("--id".into()),
            Some(s) if smi && s.len() > 2 && s.starts_with("-i") => {
                let v = s[2..].trim_start_matches('=');
                out.push(if names_gpus(v) { format!("--id={v}").into() } else { a.clone() });
            }
            _ => out.push(a.clone()),
        }
    }
    out
}

/// Whether nvidia-smi's `-i` value names GPUs: indices, UUIDs (`GPU-`, `MIG-`) or PCI bus ids,
/// comma-separated. A value with a unit (`100ms`) is gpumon's interval.
fn names_gpus(v: &str) -> bool {
    let one = |x: &str| {
        let x = x.trim();
        (!x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()))
            || x.starts_with("GPU-")
            || x.starts_with("MIG-")
            || x.contains(':')
    };
    v.split(',').all(one)
}

const SUMMARIZE_EXAMPLES: &str = "Examples:
  gpumon summarize run.parquet                  the whole rotated set, and what a crash left
  gpumon summarize logs/ --format markdown      every gpumon file and nvidia-smi log in logs/
  gpumon summarize gpu.log --tz Europe/Berlin --skip-warmup 5m
  gpumon summarize h100_8gpu.csv --gpus 0,1 --tz UTC    GPUs 0 and 1 only
  gpumon summarize run.parquet --fail-if 'utilization.gpu.mean < 50' --fail-if 'all.energy_wh > 5000'
  gpumon summarize run.parquet --by phase          per phase (gpumon mark) and compared with the first
  gpumon summarize gpu.log --phase bs=32=+0..+10m --phase bs=64=+10m..   phases of an nvidia-smi log
  gpumon summarize /shared/gpumon/ --by job         each job across its hosts: stragglers, skew, totals
  gpumon summarize /shared/gpumon/ --job 4242       one job (SLURM_JOB_ID, TORCHELASTIC_RUN_ID, --job-id)";

const REPORT_EXAMPLES: &str = "Examples:
  gpumon report run.parquet -o run.html          the whole rotated set: tables, heatmap, charts
  gpumon report gpu.log --tz Europe/Berlin --skip-warmup 5m -o gpu.html
  gpumon report logs/ --since -2h -o last-2h.html
  gpumon report run.parquet --since 2026-01-01T03:00:00Z --until 2026-01-01T03:20:00Z -o zoom.html
                                                 one window at the recording's resolution
  gpumon report /shared/gpumon/ --job 4242 -o job.html   one job: every GPU by host, stragglers marked";

/// How to read the inputs (summarize, report and convert): which GPUs, and how to read nvidia-smi logs.
#[derive(Debug, clap::Args)]
pub(crate) struct LogArgs {
    /// Only these GPUs, by index or UUID (prefix), comma-separated (default: all).
    #[arg(long, visible_alias = "id", value_delimiter = ',', value_name = "LIST")]
    pub(crate) gpus: Vec<String>,
    /// Names of an nvidia-smi log's columns, in order, as nvidia-smi query names: the --query-gpu list
    /// it was logged with (headerless, --format=csv,noheader), or names over a header of the writer's
    /// own names of the same width (they replace them; a header of nvidia-smi's names is used as
    /// written). `_` or an empty name skips a column (a script's own time column, pandas' index
    /// column). `--query-gpu` is the same option.
    #[arg(long, visible_alias = "query-gpu", value_delimiter = ',', value_name = "NAMES")]
    pub(crate) columns: Vec<String>,
    /// Number of GPUs interleaved in an nvidia-smi log without index/uuid/pci.bus_id column, or whose
    /// index repeats within a timestamp (default: inferred from the row timing).
    #[arg(long, value_name = "N")]
    pub(crate) interleaved_gpus: Option<usize>,
    /// Time zone of nvidia-smi log timestamps and of --since/--until given without one, in any case:
    /// local, UTC, an IANA name (Europe/Berlin) or an offset (+02:00, -0530).
    #[arg(long, default_value = "local", value_parser = parse_tz, allow_hyphen_values = true)]
    pub(crate) tz: Zone,
    /// Host name for inputs that carry none (nvidia-smi logs). Default: each log's file name.
    #[arg(long)]
    pub(crate) host: Option<String>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum SummaryFormatArg {
    Table,
    Markdown,
    Json,
    Csv,
}

/// What `summarize --by` splits the data by.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum ByArg {
    /// The experiment phases (`gpumon mark`, or --phase windows): a summary per phase and their comparison.
    Phase,
    /// The job each recording names (`record --job-id`, Slurm, torchrun, Kubernetes): per job its
    /// hosts, each node's span, the totals over its GPUs, the per-host table and the rules across
    /// hosts (straggler, imbalance, hang, node_gone).
    Job,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SummarizeArgs {
    /// Report format.
    #[arg(long, value_enum, default_value = "table")]
    pub(crate) format: SummaryFormatArg,
    /// Also summarise each phase (marked with `gpumon mark`, or given with --phase) and compare
    /// them; or, with `job`, view each job the recordings name across its hosts.
    #[arg(long, value_enum, value_name = "phase|job")]
    pub(crate) by: Option<ByArg>,
    /// The job view of this job only (implies --by job): its recordings among the inputs (a fleet
    /// tree, a directory, files).
    #[arg(long, value_name = "ID")]
    pub(crate) job: Option<String>,
    #[command(flatten)]
    pub(crate) input: InputArgs,
}

/// Inputs, window, thresholds and checks: the options `summarize` and `report` share (same flags).
#[derive(Debug, clap::Args)]
pub(crate) struct InputArgs {
    /// gpumon Parquet/CSV files (a rotated set by the name given to record), nvidia-smi logs (`--query-gpu` CSV, `dmon -o DT`, the table logged with -l), directories, globs.
    #[arg(required = true, value_name = "INPUT")]
    pub(crate) inputs: Vec<PathBuf>,
    /// Start of the window: RFC 3339, 'YYYY-MM-DD HH:MM:SS' (in --tz), +DURATION after the data's start or -DURATION before its end.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) since: Option<String>,
    /// End of the window (exclusive); same forms as --since.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) until: Option<String>,
    /// Leave out the first DURATION of the data (e.g. 5m).
    #[arg(long, value_parser = parse_duration)]
    pub(crate) skip_warmup: Option<Duration>,
    /// Exit 3 if STATISTIC OP NUMBER holds for any GPU (or host), e.g. 'utilization.gpu.mean < 50'; prefix
    /// 'all.' for the over-all figure. Repeatable.
    #[arg(long = "fail-if", value_name = "CHECK")]
    pub(crate) fail_if: Vec<String>,
    /// Override a finding threshold, e.g. idle_util=10 (see docs/summarize.md). Repeatable.
    #[arg(long = "threshold", value_name = "NAME=VALUE")]
    pub(crate) thresholds: Vec<String>,
    /// A phase as a time window, for inputs without marks (nvidia-smi logs): NAME=SINCE..UNTIL with
    /// times as for --since (an empty end is the data's start or end). Repeatable; implies --by phase.
    #[arg(long = "phase", value_name = "NAME=SINCE..UNTIL", allow_hyphen_values = true)]
    pub(crate) phase_windows: Vec<String>,
    /// The phase the others are compared with (default: the first).
    #[arg(long, value_name = "LABEL")]
    pub(crate) baseline: Option<String>,
    #[command(flatten)]
    pub(crate) logs: LogArgs,
    /// No progress bar.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

const COMPARE_EXAMPLES: &str = "Examples:
  gpumon compare base.parquet new.parquet              new against base
  gpumon compare run.parquet@bs=32 run.parquet@bs=128  two phases of one run (gpumon mark)
  gpumon compare a.parquet b.parquet --fail-if 'energy_per_hour.delta_pct > 10'   exit 3 on a regression";

/// Output format of `compare`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum CompareFormatArg {
    Table,
    Markdown,
    Json,
}

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// Runs to compare: gpumon files (a rotated set by the name given to record), nvidia-smi logs,
    /// directories; RUN@LABEL for one phase of a run.
    #[arg(required = true, num_args = 2.., value_name = "RUN")]
    pub(crate) runs: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub(crate) format: CompareFormatArg,
    /// Exit 3 if STATISTIC[.delta|.delta_pct] OP NUMBER holds for a run; a change is against the
    /// baseline, e.g. 'energy_per_hour.delta_pct > 10' or 'utilization.gpu.mean.delta < -5'. Repeatable.
    #[arg(long = "fail-if", value_name = "CHECK")]
    pub(crate) fail_if: Vec<String>,
    /// The run the others are compared with, as given (default: the first).
    #[arg(long, value_name = "RUN")]
    pub(crate) baseline: Option<String>,
    /// Override a finding threshold, e.g. oom_mem_pct=90 (the headroom note uses it). Repeatable.
    #[arg(long = "threshold", value_name = "NAME=VALUE")]
    pub(crate) thresholds: Vec<String>,
    #[command(flatten)]
    pub(crate) logs: LogArgs,
    /// No progress bar.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct WatchArgs {
    /// The recording: the -o path given to `gpumon record`.
    #[arg(value_name = "PATH")]
    pub(crate) path: PathBuf,
    /// Print one frame and exit (for scripts); the first lines say whether it is being recorded.
    #[arg(long)]
    pub(crate) once: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// HTML file to write: self-contained (no network needed to view it), or - for stdout
    /// [default: the first input's name with .html: run.parquet -> run.html].
    #[arg(short, long, value_name = "OUT.html")]
    pub(crate) output: Option<PathBuf>,
    /// The report of this job (record --job-id, Slurm, torchrun): its recordings among the inputs,
    /// with a heatmap of every GPU grouped by host, the per-host table and the stragglers marked.
    #[arg(long, value_name = "ID")]
    pub(crate) job: Option<String>,
    #[command(flatten)]
    pub(crate) input: InputArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ConvertArgs {
    /// Inputs, as for summarize (per-process and events files in a directory are skipped).
    #[arg(required = true, value_name = "INPUT")]
    pub(crate) inputs: Vec<PathBuf>,
    /// Output file (.csv or .parquet).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Output format (default: from the extension): csv, parquet or nvidia-smi[,noheader][,nounits].
    #[arg(long, value_parser = parse_format)]
    pub(crate) format: Option<Format>,
    #[command(flatten)]
    pub(crate) logs: LogArgs,
    /// No progress bar.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals() {
        assert_eq!(parse_interval("1").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_interval("0.5").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_interval("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_interval("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_interval("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(
            parse_interval("50ms").unwrap(),
            Duration::from_millis(50),
            "allowed, with a warning"
        );
        assert!(parse_interval("500us").is_err());
        assert!(parse_interval("fast").is_err());
        assert!(parse_interval("-1").is_err());
    }

    fn argv(s: &str) -> Vec<OsString> {
        s.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn lms_becomes_loop_ms_before_the_wrapped_command() {
        assert_eq!(
            nvsmi_argv(argv("gpumon record -lms 100 -o x")),
            argv("gpumon record --loop-ms 100 -o x")
        );
        assert_eq!(nvsmi_argv(argv("gpumon record -lms=250")), argv("gpumon record --loop-ms=250"));
        assert_eq!(
            nvsmi_argv(argv("gpumon record -l 5 -- prog -lms 1")),
            argv("gpumon record -l 5 -- prog -lms 1")
        );
        assert_eq!(nvsmi_argv(argv("gpumon record -lmsx")), argv("gpumon record -lmsx"));
    }

    #[test]
    fn nvidia_smi_flags_parse() {
        let rec = |s: &str| match Cli::try_parse_from(nvsmi_argv(argv(s))).unwrap().cmd {
            Cmd::Record(r) => r,
            other => panic!("{other:?}"),
        };
        let r = rec(
            "gpumon record --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -l 5",
        );
        assert_eq!(r.query_gpu, ["utilization.gpu", "memory.used"]);
        assert_eq!(r.format, Some(Format::NvidiaSmi { header: false, units: false }));
        assert_eq!(r.interval, Some(Duration::from_secs(5)));
        assert_eq!(rec("gpumon record -lms 100 -o x.csv").loop_ms, Some(100));
        assert_eq!(rec("gpumon record --loop 2 -o x.csv").interval, Some(Duration::from_secs(2)));
        assert_eq!(rec("gpumon record -i 60 -o x.csv").interval, Some(Duration::from_secs(60)));
        // With --query-gpu, -i is nvidia-smi's: GPUs; -l the interval.
        let r = rec("gpumon record --query-gpu=index --format=csv -i 1 -l 5");
        assert_eq!((r.gpus, r.interval), (vec!["1".to_string()], Some(Duration::from_secs(5))));
        let r = rec("gpumon record --query-gpu index -i0,1 -o x.csv");
        assert_eq!((r.gpus, r.interval), (vec!["0".to_string(), "1".to_string()], None));
        assert_eq!(rec("gpumon record --query-gpu index -i=GPU-1 -lms 100").gpus, ["GPU-1"]);
        let r = rec("gpumon record --query-gpu index -i 100ms -o x.csv");
        assert_eq!((r.gpus.len(), r.interval), (0, Some(Duration::from_millis(100))));
        assert_eq!(
            rec("gpumon record -i 2 -o x.csv -- prog --query-gpu").gpus,
            Vec::<String>::new()
        );
        assert_eq!(rec("gpumon record --id 0,GPU-1 -o x.csv").gpus, ["0", "GPU-1"]);
        assert_eq!(rec("gpumon record -f x.csv").output, Some(PathBuf::from("x.csv")));
        assert_eq!(rec("gpumon record --filename x.csv").output, Some(PathBuf::from("x.csv")));
        for bad in ["0", "0,1", "GPU-1f2e"] {
            let e = parse_interval(bad).unwrap_err();
            assert!(e.contains(&format!("use --id {bad}")), "{bad}: {e}");
        }
        assert!(!parse_interval("soon").unwrap_err().contains("--id"));
        assert_eq!(rec("gpumon record --format=csv -o x.csv").format, Some(Format::Csv));
        assert!(Cli::try_parse_from(argv("gpumon record -i 1 --loop-ms 100 -o x.csv")).is_err());
        assert!(
            Cli::try_parse_from(argv("gpumon record --fields a --query-gpu b -o x.csv")).is_err()
        );
        let sum = |s: &str| match Cli::try_parse_from(argv(s)).unwrap().cmd {
            Cmd::Summarize(a) => a.input.logs,
            other => panic!("{other:?}"),
        };
        let l = sum("gpumon summarize x.csv --gpus 0,1 --interleaved-gpus 8 --tz utc");
        assert_eq!(
            (l.gpus, l.interleaved_gpus, l.tz),
            (vec!["0".to_string(), "1".to_string()], Some(8), Zone::parse("UTC").unwrap())
        );
        assert_eq!(sum("gpumon summarize x.csv --id GPU-ab --tz +02:00").gpus, ["GPU-ab"]);
        assert_eq!(sum("gpumon summarize x.csv --tz -0530").tz, Zone::parse("-05:30").unwrap());
        assert!(Cli::try_parse_from(argv("gpumon summarize x.csv --tz Mars/Base")).is_err());
    }

    #[test]
    fn months_and_unknown_units_are_refused() {
        let e = parse_duration("1M").unwrap_err();
        assert!(e.contains("unknown unit 'M' (a month?)") && e.contains("ms, s, m, h"), "{e}");
        assert!(parse_duration("2months").is_err());
        assert!(parse_duration("1y").is_err());
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2d"), Ok(Duration::from_secs(2 * 86400)));
        assert!(parse_nonzero_duration("0s").unwrap_err().contains("zero"));
    }

    #[test]
    fn listen_takes_the_exporters_forms() {
        use std::net::SocketAddr;
        let a = |s: &str| parse_listen(s).unwrap();
        assert_eq!(a(":9400"), "0.0.0.0:9400".parse::<SocketAddr>().unwrap());
        assert_eq!(a("localhost:9400"), "127.0.0.1:9400".parse::<SocketAddr>().unwrap());
        assert_eq!(a("[::1]:9400"), "[::1]:9400".parse::<SocketAddr>().unwrap());
        assert!(parse_listen("9400").unwrap_err().contains("is not [HOST]:PORT"));
        assert!(parse_listen(":http").unwrap_err().contains("not a port"));
    }

    #[test]
    fn zero_sizes_periods_and_counts_are_refused() {
        assert!(parse_nonzero_size("0").is_err());
        assert!(parse_nonzero_size("0MiB").is_err());
        assert_eq!(parse_nonzero_size("1KiB"), Ok(1024));
        assert!(parse_nonzero_duration("0").is_err());
        assert!(parse_nonzero_duration("0s").is_err());
        assert_eq!(parse_nonzero_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_positive::<u64>("0").is_err());
        assert!(parse_positive::<usize>("").is_err());
        assert_eq!(parse_positive::<usize>("3"), Ok(3));
    }
}
