//! The command line: clap definitions, validation into configs, dispatch. The only module that knows clap.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

use crate::catalog::{CATALOG, Field, suggest};
use crate::doctor::{self, DoctorConfig, DoctorFormat};
use crate::error::{UsageError, code_for, exit};
use crate::record::{self, RecordConfig};
use crate::sample::Selection;
use crate::sink::{Format, Target};
use crate::source::gpu::{DEFAULT_NVML_LIB, GpuSelector};
use crate::source::visible::{self, Visible};
use crate::warn::warn;

#[derive(Debug, Parser)]
#[command(
    name = "gpumon",
    version,
    about = "Record GPU and host metrics next to a training job, and make sense of them afterwards"
)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Sample GPU (NVML) and host metrics on a fixed schedule into CSV or Parquet.
    #[command(after_help = RECORD_EXAMPLES)]
    Record(Box<RecordArgs>),
    /// List every field gpumon can record (like `nvidia-smi --help-query-gpu`).
    Fields,
    /// Check that NVML and the GPUs are usable here and show what `record` would record: driver,
    /// GPUs and the fields each supports, visible-devices variables, container and cgroup limits.
    Doctor(DoctorArgs),
    /// What happened and what to fix, from gpumon files and nvidia-smi logs: per-GPU and host
    /// statistics, gaps, energy, throttling, findings with fixes, and --fail-if checks for CI.
    #[command(after_help = SUMMARIZE_EXAMPLES)]
    Summarize(Box<SummarizeArgs>),
    /// One self-contained HTML report: the summary's tables and findings, a utilization heatmap
    /// (one row per GPU) and per-GPU/host charts, for the same inputs and windows as summarize.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(Box<ReportArgs>),
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
  gpumon record -i 1 --format nvidia-smi -o gpu.log  same bytes as nvidia-smi --format=csv -l 1";

#[derive(Debug, clap::Args)]
struct RecordArgs {
    /// Time between ticks: a bare number is seconds (like nvidia-smi -l), or 250ms, 1m, 1h. 100ms or more
    /// for meaningful GPU columns (down to 1ms is accepted with a warning, for benchmarks).
    #[arg(short, long, default_value = "1", value_parser = parse_interval)]
    interval: Duration,
    /// Output file (format from the extension: .csv, .parquet), or - for CSV on stdout.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Serve the latest tick as Prometheus metrics on ADDR:PORT (e.g. 127.0.0.1:9400). Binding a
    /// non-loopback address exposes host and GPU metrics to the network: your choice to make.
    #[arg(long)]
    listen: Option<std::net::SocketAddr>,
    /// Output format: csv, parquet, or nvidia-smi[,noheader][,nounits].
    #[arg(long, value_parser = parse_format)]
    format: Option<Format>,
    /// Comma-separated fields to record, by name or nvidia-smi alias (see `gpumon fields`).
    #[arg(long, visible_alias = "query-gpu", value_delimiter = ',')]
    fields: Vec<String>,
    /// Stop after this long (e.g. 30s, 2h).
    #[arg(long, value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Stop after this many ticks.
    #[arg(long)]
    count: Option<u64>,
    /// GPUs to record, by index or UUID (comma-separated). Default: every GPU, or the ones
    /// CUDA_VISIBLE_DEVICES (else NVIDIA_VISIBLE_DEVICES) selects when set.
    #[arg(long, value_delimiter = ',')]
    gpus: Vec<String>,
    /// NVML library to load.
    #[arg(long, env = "GPUMON_NVML_LIB", default_value = DEFAULT_NVML_LIB)]
    nvml_lib: String,
    /// Fail (exit 1) instead of recording host-only rows when NVML or a GPU is missing.
    #[arg(long)]
    require_gpu: bool,
    /// Sample this often and write one row per --interval summarising the sub-samples
    /// (means, last values of counters, `.max` columns). Default: 1s, or the interval if shorter.
    #[arg(long, value_parser = parse_interval)]
    sample_every: Option<Duration>,
    /// Longest time written data may wait in memory before it is written and fsynced:
    /// at most this much is lost to a crash or power cut.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    flush: Duration,
    /// Start a new file when the current one reaches this size (e.g. 256MiB).
    #[arg(long, value_parser = parse_size)]
    rotate_size: Option<u64>,
    /// Start a new file on wall-clock boundaries of this period (e.g. 1h, 1d). SIGHUP rotates at once.
    #[arg(long, value_parser = parse_duration)]
    rotate_every: Option<Duration>,
    /// Keep at most this many files of the set; the oldest are deleted first.
    #[arg(long)]
    keep: Option<usize>,
    /// Keep the files of the set under this total size (e.g. 10GiB); the oldest are deleted first.
    #[arg(long, value_parser = parse_size)]
    max_total: Option<u64>,
    /// Rows held in memory while the output cannot be written (disk full, I/O errors); later ticks
    /// are dropped and counted in `missed`.
    #[arg(long, default_value_t = 100_000)]
    max_backlog: usize,
    /// Follow this running process and all its descendants (job.* columns); recording ends when
    /// the tree is gone unless --keep-going.
    #[arg(long, conflicts_with = "command")]
    pid: Option<u32>,
    /// With --pid: keep recording after the followed processes have exited.
    #[arg(long, requires = "pid")]
    keep_going: bool,
    /// Also write one row per (tick, GPU, process) for every process NVML reports on a GPU, to
    /// RUN.procs.parquet/.csv beside the output: who is using which GPU, and whether it is the job.
    #[arg(long)]
    processes: bool,
    /// Command to start and record (after --): recording ends when it exits, and gpumon exits with its code.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
    /// No live status line.
    #[arg(short, long)]
    quiet: bool,
    /// Print debug detail (GPUs found, files written).
    #[arg(short, long)]
    verbose: bool,
}

#[derive(Debug, clap::Args)]
struct DoctorArgs {
    /// NVML library to load.
    #[arg(long, env = "GPUMON_NVML_LIB", default_value = DEFAULT_NVML_LIB)]
    nvml_lib: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DoctorFormatArg::Text)]
    format: DoctorFormatArg,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum DoctorFormatArg {
    Text,
    Json,
}

/// Minimum supported interval.
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);
/// Shortest interval whose every column is meaningful (NVML averages utilization over ≥ 1/6 s).
pub const MIN_USEFUL_INTERVAL: Duration = Duration::from_millis(100);

/// A bare number is seconds; otherwise a humantime duration (`250ms`, `1m`, `1h30m`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).map_err(|_| format!("'{s}' is not a valid duration"));
    }
    humantime::parse_duration(s).map_err(|e| format!("'{s}' is not a duration ({e}); use e.g. 1, 0.5, 250ms, 1m, 1h"))
}

fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d < MIN_INTERVAL {
        return Err(format!("{s} is shorter than the minimum interval of 1ms"));
    }
    Ok(d)
}

fn parse_size(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("'{s}' is not a size ({e}); use e.g. 256MiB, 1GiB, 500MB"))
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s).ok_or_else(|| format!("unknown format '{s}': use csv, parquet or nvidia-smi[,noheader][,nounits]"))
}

/// Resolve `--fields` names. gpumon's own formats always carry the identity keys and `missed`;
/// aggregated runs add `samples` and the `.max` companion of each selected field that has one.
fn selection(names: &[String], format: Format, aggregated: bool, job: bool) -> Result<Selection> {
    let mut cols: Vec<Field> = if names.is_empty() { Selection::defaults().fields().collect() } else { Vec::new() };
    if names.is_empty() && crate::source::cgroup::CgroupSource::detect().is_some_and(|c| c.has_limits()) {
        // Under a cgroup with limits (a container), its memory and CPU are what can OOM-kill the job.
        cols.extend(CATALOG.iter().filter(|d| d.name.starts_with("cgroup.")).map(|d| d.field));
    }
    if job && names.is_empty() {
        // A wrapped or followed job adds its columns (job.gpu_memory sits next to memory.used).
        cols.extend(CATALOG.iter().filter(|d| d.name.starts_with("job.")).map(|d| d.field));
    }
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let Some(f) = Field::lookup(name) else {
            let hint = suggest(name);
            let hint = if hint.is_empty() { String::new() } else { format!(" (did you mean {}?)", hint.join(", ")) };
            return Err(UsageError(format!("unknown field '{name}'{hint}; `gpumon fields` lists them all")).into());
        };
        if !cols.contains(&f) {
            cols.push(f);
        }
    }
    if aggregated {
        let extra: Vec<Field> = CATALOG
            .iter()
            .filter(|d| d.max_of.is_some_and(|b| cols.contains(&b)))
            .map(|d| d.field)
            .chain([Field::Samples])
            .filter(|f| !cols.contains(f))
            .collect();
        cols.extend(extra);
    }
    if !matches!(format, Format::NvidiaSmi { .. }) {
        let keys = [Field::Timestamp, Field::Host, Field::Index, Field::Uuid, Field::Missed];
        let missing: Vec<Field> = keys.into_iter().filter(|k| !cols.contains(k)).collect();
        cols.extend(missing);
        cols.sort();
    }
    Ok(Selection::new(cols))
}

/// `--gpus`, or without it the GPUs CUDA_VISIBLE_DEVICES (else NVIDIA_VISIBLE_DEVICES) selects
/// (see `source::visible`). Empty means every GPU.
fn gpus_or_env(given: &[String], verbose: bool) -> Vec<GpuSelector> {
    let given: Vec<GpuSelector> =
        given.iter().filter(|g| !g.trim().is_empty()).map(|g| GpuSelector::parse(g)).collect();
    if !given.is_empty() {
        return given;
    }
    let source = visible::env_source();
    match visible::from_env() {
        Visible::All => Vec::new(),
        Visible::Only(sel) => {
            if verbose && let Some((var, value)) = &source {
                eprintln!("gpumon: GPUs from {var}={value:?} (pass --gpus to choose others)");
            }
            sel
        }
        Visible::None => {
            if let Some((var, value)) = source {
                warn(&format!("{var}={value:?} selects no GPU; recording host metrics only (pass --gpus to choose)"));
            }
            vec![GpuSelector::None]
        }
    }
}

impl RecordArgs {
    fn into_config(self) -> Result<RecordConfig> {
        let target = match self.output {
            Some(o) if o.as_os_str() == "-" => Some(Target::Stdout),
            Some(o) => Some(Target::File(o)),
            None if self.listen.is_some() => None,
            None => {
                return Err(UsageError(
                    "record needs -o/--output PATH (use - for stdout) or --listen ADDR:PORT".into(),
                )
                .into());
            }
        };
        let format = match (self.format, &target) {
            (Some(f), _) => f,
            (None, Some(Target::Stdout) | None) => Format::Csv,
            (None, Some(Target::File(p))) => Format::from_path(p).ok_or_else(|| {
                UsageError(format!(
                    "cannot tell the format of {} from its extension; use .csv or .parquet, or --format",
                    p.display()
                ))
            })?,
        };
        let sample_every = self.sample_every.unwrap_or(self.interval.min(Duration::from_secs(1)));
        if sample_every > self.interval || !self.interval.as_nanos().is_multiple_of(sample_every.as_nanos()) {
            return Err(UsageError(format!(
                "--interval {:?} must be a whole multiple of --sample-every {:?}",
                self.interval, sample_every
            ))
            .into());
        }
        let aggregated = sample_every < self.interval;
        if sample_every < MIN_USEFUL_INTERVAL {
            crate::warn::warn(&format!(
                "sampling every {sample_every:?}: below 100ms GPU utilization repeats NVML's own averaging window; \
                 such rates are meant for benchmarks"
            ));
        }
        let to_file = matches!(target, Some(Target::File(_)));
        if !to_file && (self.rotate_size.is_some() || self.rotate_every.is_some()) {
            return Err(UsageError("rotation needs an output file".into()).into());
        }
        if self.processes && !to_file {
            return Err(
                UsageError("--processes writes a second file beside -o FILE; it needs an output file".into()).into()
            );
        }
        if format == Format::Parquet && target == Some(Target::Stdout) {
            return Err(
                UsageError("Parquet cannot stream to stdout; use -o FILE.parquet or --format csv".into()).into()
            );
        }
        Ok(RecordConfig {
            interval: self.interval,
            sample_every,
            selection: selection(&self.fields, format, aggregated, !self.command.is_empty() || self.pid.is_some())?,
            target,
            listen: self.listen,
            format,
            duration: self.duration,
            count: self.count,
            gpus_from_env: self.gpus.iter().all(|g| g.trim().is_empty()) && visible::env_source().is_some(),
            gpus: gpus_or_env(&self.gpus, self.verbose),
            nvml_lib: self.nvml_lib,
            require_gpu: self.require_gpu,
            flush: self.flush,
            rotate_size: self.rotate_size,
            rotate_every: self.rotate_every,
            keep: self.keep,
            max_total: self.max_total,
            max_backlog: self.max_backlog,
            quiet: self.quiet,
            verbose: self.verbose,
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            wrap: self.command,
            pid: self.pid,
            keep_going: self.keep_going,
            processes: self.processes,
        })
    }
}

fn print_fields() -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "Fields gpumon can record (pass to --fields / --query-gpu, comma-separated).")?;
    writeln!(out, "Fields marked 'off' are only recorded when asked for.\n")?;
    for d in &CATALOG {
        let unit = if d.unit.is_empty() { String::new() } else { format!(" [{}]", d.unit) };
        let default = if d.default { "" } else { ", off by default" };
        writeln!(out, "\"{}\"{unit}  ({:?}, {:?}{default})", d.name, d.source, d.ty)?;
        if !d.aliases.is_empty() {
            writeln!(out, "    aliases: {}", d.aliases.join(", "))?;
        }
        writeln!(out, "    {}", d.help)?;
    }
    Ok(())
}

fn dispatch(cli: Cli) -> Result<i32> {
    match cli.cmd {
        Cmd::Record(args) => {
            let args = *args;
            let cfg = args.into_config()?;
            let outcome = record::run(&cfg)?;
            Ok(outcome.job_exit.unwrap_or(exit::OK))
        }
        Cmd::Fields => {
            print_fields()?;
            Ok(exit::OK)
        }
        Cmd::Doctor(a) => {
            let format = match a.format {
                DoctorFormatArg::Text => DoctorFormat::Text,
                DoctorFormatArg::Json => DoctorFormat::Json,
            };
            doctor::run(&DoctorConfig { nvml_lib: a.nvml_lib, format })
        }
        Cmd::Summarize(a) => crate::summarize::run(&a.into_config()?),
        Cmd::Report(a) => crate::report::run(&a.into_config()?),
        Cmd::Convert(a) => crate::convert::run(&a.into_config()?),
        Cmd::Recover { path } => recover(&path),
        Cmd::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "gpumon", &mut std::io::stdout());
            Ok(exit::OK)
        }
    }
}

fn recover(path: &std::path::Path) -> Result<i32> {
    let set = crate::output::OutputSet::new(path);
    if !set.dir().is_dir() {
        return Err(UsageError(format!("{}: no such directory", set.dir().display())).into());
    }
    let done = crate::output::recover_set(&set)?;
    let mut out = std::io::stdout().lock();
    for (p, rows) in &done.rebuilt {
        writeln!(out, "rebuilt {} from its journal ({rows} rows)", p.display())?;
    }
    for (p, cut) in &done.trimmed {
        writeln!(out, "cut a torn last line ({cut} bytes) from {}", p.display())?;
    }
    for p in &done.removed {
        writeln!(out, "removed {}: empty (killed before its header was written)", p.display())?;
    }
    if done.is_empty() {
        writeln!(out, "nothing to recover for {}", set.base().display())?;
    }
    Ok(exit::OK)
}

const SUMMARIZE_EXAMPLES: &str = "Examples:
  gpumon summarize run.parquet                  the whole rotated set, and what a crash left
  gpumon summarize logs/ --format markdown      every gpumon file and nvidia-smi log in logs/
  gpumon summarize gpu.log --tz Europe/Berlin --skip-warmup 5m
  gpumon summarize run.parquet --fail-if 'utilization.gpu.mean < 50' --fail-if 'all.energy_wh > 5000'";

const REPORT_EXAMPLES: &str = "Examples:
  gpumon report run.parquet -o run.html          the whole rotated set: tables, heatmap, charts
  gpumon report gpu.log --tz Europe/Berlin --skip-warmup 5m -o gpu.html
  gpumon report logs/ --since -2h -o last-2h.html";

/// How to read nvidia-smi logs (summarize and convert).
#[derive(Debug, clap::Args)]
struct LogArgs {
    /// Column names of a headerless nvidia-smi log (--format=csv,noheader): the --query-gpu list, in order.
    #[arg(long, value_delimiter = ',')]
    columns: Vec<String>,
    /// GPUs interleaved in an nvidia-smi log without index/uuid/pci.bus_id column (default: inferred).
    #[arg(long)]
    gpus: Option<usize>,
    /// Time zone of nvidia-smi log timestamps and of --since/--until given without one: local, UTC, Europe/Berlin...
    #[arg(long, default_value = "local")]
    tz: String,
    /// Host name for inputs that carry none (nvidia-smi logs). Default: each log's file name.
    #[arg(long)]
    host: Option<String>,
}

impl LogArgs {
    fn read_options(&self) -> Result<(crate::read::scan::ReadOptions, Option<chrono_tz::Tz>)> {
        let tz = match self.tz.trim() {
            "local" | "" => None,
            z => Some(z.parse::<chrono_tz::Tz>().map_err(|_| UsageError(format!("--tz: unknown time zone '{z}'")))?),
        };
        let columns: Vec<String> =
            self.columns.iter().map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
        let nvsmi =
            crate::read::nvsmi::NvsmiOptions { columns: (!columns.is_empty()).then_some(columns), gpus: self.gpus, tz };
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        Ok((crate::read::scan::ReadOptions { nvsmi, host: self.host.clone(), threads }, tz))
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ReportFormatArg {
    Table,
    Markdown,
    Json,
    Csv,
}

#[derive(Debug, clap::Args)]
struct SummarizeArgs {
    /// Report format.
    #[arg(long, value_enum, default_value = "table")]
    format: ReportFormatArg,
    #[command(flatten)]
    input: InputArgs,
}

/// Inputs, window, thresholds and checks: the options `summarize` and `report` share (same flags).
#[derive(Debug, clap::Args)]
struct InputArgs {
    /// gpumon Parquet/CSV files (a rotated set by the name given to record), nvidia-smi CSV logs, directories, globs.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// Start of the window: RFC 3339, 'YYYY-MM-DD HH:MM:SS' (in --tz), +DURATION after the data's start or -DURATION before its end.
    #[arg(long, allow_hyphen_values = true)]
    since: Option<String>,
    /// End of the window (exclusive); same forms as --since.
    #[arg(long, allow_hyphen_values = true)]
    until: Option<String>,
    /// Leave out the first DURATION of the data (e.g. 5m).
    #[arg(long, value_parser = parse_duration)]
    skip_warmup: Option<Duration>,
    /// Exit 3 if STATISTIC OP NUMBER holds for any GPU (or host), e.g. 'utilization.gpu.mean < 50'; prefix
    /// 'all.' for the over-all figure. Repeatable.
    #[arg(long = "fail-if", value_name = "CHECK")]
    fail_if: Vec<String>,
    /// Override a finding threshold, e.g. idle_util=10 (see README). Repeatable.
    #[arg(long = "threshold", value_name = "NAME=VALUE")]
    thresholds: Vec<String>,
    #[command(flatten)]
    logs: LogArgs,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

impl SummarizeArgs {
    fn into_config(self) -> Result<crate::summarize::SummarizeConfig> {
        let format = match self.format {
            ReportFormatArg::Table => crate::present::ReportFormat::Table,
            ReportFormatArg::Markdown => crate::present::ReportFormat::Markdown,
            ReportFormatArg::Json => crate::present::ReportFormat::Json,
            ReportFormatArg::Csv => crate::present::ReportFormat::Csv,
        };
        self.input.into_config(format)
    }
}

impl InputArgs {
    fn into_config(self, format: crate::present::ReportFormat) -> Result<crate::summarize::SummarizeConfig> {
        use crate::analysis::window::{WindowSpec, parse_time};
        let (read, tz) = self.logs.read_options()?;
        let time = |s: &Option<String>, what: &str| -> Result<_> {
            s.as_deref().map(|t| parse_time(t, tz).map_err(|e| UsageError(format!("{what}: {e}")).into())).transpose()
        };
        let window = WindowSpec {
            since: time(&self.since, "--since")?,
            until: time(&self.until, "--until")?,
            skip_warmup: self.skip_warmup,
        };
        let mut thresholds = crate::analysis::findings::Thresholds::default();
        for t in &self.thresholds {
            thresholds.set(t).map_err(UsageError)?;
        }
        Ok(crate::summarize::SummarizeConfig {
            inputs: self.inputs,
            read,
            window,
            thresholds,
            checks: self.fail_if,
            format,
            progress: !self.quiet,
        })
    }
}

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// HTML file to write: self-contained (no network needed to view it), or - for stdout.
    #[arg(short, long, value_name = "OUT.html")]
    output: PathBuf,
    #[command(flatten)]
    input: InputArgs,
}

impl ReportArgs {
    fn into_config(self) -> Result<crate::report::ReportConfig> {
        let summarize = self.input.into_config(crate::present::ReportFormat::Json)?;
        Ok(crate::report::ReportConfig { summarize, output: self.output })
    }
}

#[derive(Debug, clap::Args)]
struct ConvertArgs {
    /// Inputs, as for summarize.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// Output file (.csv or .parquet).
    #[arg(short, long)]
    output: PathBuf,
    /// Output format (default: from the extension): csv, parquet or nvidia-smi[,noheader][,nounits].
    #[arg(long, value_parser = parse_format)]
    format: Option<Format>,
    #[command(flatten)]
    logs: LogArgs,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

impl ConvertArgs {
    fn into_config(self) -> Result<crate::convert::ConvertConfig> {
        let (read, _) = self.logs.read_options()?;
        Ok(crate::convert::ConvertConfig {
            inputs: self.inputs,
            output: self.output,
            format: self.format,
            read,
            progress: !self.quiet,
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
        })
    }
}

/// Whether the error is stdout going away (`gpumon ... | head`): a normal end, not a failure.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Parse the command line, run, and return the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { exit::USAGE } else { exit::OK };
        }
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => exit::OK,
        Err(e) => {
            crate::status::clear_line();
            eprintln!("gpumon: error: {e:#}");
            code_for(&e)
        }
    }
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
        assert_eq!(parse_interval("50ms").unwrap(), Duration::from_millis(50), "allowed, with a warning");
        assert!(parse_interval("500us").is_err());
        assert!(parse_interval("fast").is_err());
        assert!(parse_interval("-1").is_err());
    }

    #[test]
    fn field_selection_adds_keys_and_resolves_aliases() {
        let s = selection(&["clocks.current.sm".into()], Format::Csv, false, false).unwrap();
        let names: Vec<&str> = s.fields().map(Field::name).collect();
        assert_eq!(names, ["timestamp", "host", "index", "uuid", "clocks.sm", "missed"]);
        let s = selection(&["utilization.gpu".into()], Format::Parquet, true, false).unwrap();
        let names: Vec<&str> = s.fields().map(Field::name).collect();
        assert_eq!(
            names,
            ["timestamp", "host", "index", "uuid", "utilization.gpu", "utilization.gpu.max", "samples", "missed"]
        );
        let s = selection(&["clocks.current.sm".into()], Format::NvidiaSmi { header: true, units: true }, false, false)
            .unwrap();
        assert_eq!(s.fields().collect::<Vec<_>>(), [Field::ClockSm]);
        assert_eq!(Field::ClockSm.def().nvsmi_header(), "clocks.current.sm [MHz]");
        assert_eq!(Field::TempGpu.def().nvsmi_header(), "temperature.gpu");
        let e = selection(&["utilisation.gpu".into()], Format::Csv, false, false).unwrap_err();
        assert_eq!(code_for(&e), exit::USAGE);
        assert!(e.to_string().contains("utilization.gpu"), "{e}");
    }
}
