//! The command line: clap definitions, validation into configs, dispatch. The only module that knows clap.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

use crate::catalog::{CATALOG, Field, suggest};
use crate::error::{UsageError, code_for, exit};
use crate::record::{self, RecordConfig};
use crate::sample::Selection;
use crate::sink::{Format, Target};
use crate::source::gpu::{DEFAULT_NVML_LIB, GpuSelector};

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
    /// Time between ticks: a bare number is seconds (like nvidia-smi -l), or 250ms, 1m, 1h. At least 100ms.
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
    /// GPUs to record, by index or UUID (comma-separated). Default: every visible GPU.
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
    /// No live status line.
    #[arg(short, long)]
    quiet: bool,
    /// Print debug detail (GPUs found, files written).
    #[arg(short, long)]
    verbose: bool,
}

/// Minimum supported interval.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

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
        return Err(format!("{s} is shorter than the minimum interval of 100ms"));
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
fn selection(names: &[String], format: Format, aggregated: bool) -> Result<Selection> {
    let mut cols: Vec<Field> = if names.is_empty() { Selection::defaults().fields().collect() } else { Vec::new() };
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
        let to_file = matches!(target, Some(Target::File(_)));
        if !to_file && (self.rotate_size.is_some() || self.rotate_every.is_some()) {
            return Err(UsageError("rotation needs an output file".into()).into());
        }
        if format == Format::Parquet && target == Some(Target::Stdout) {
            return Err(
                UsageError("Parquet cannot stream to stdout; use -o FILE.parquet or --format csv".into()).into()
            );
        }
        Ok(RecordConfig {
            interval: self.interval,
            sample_every,
            selection: selection(&self.fields, format, aggregated)?,
            target,
            listen: self.listen,
            format,
            duration: self.duration,
            count: self.count,
            gpus: self.gpus.iter().filter(|g| !g.trim().is_empty()).map(|g| GpuSelector::parse(g)).collect(),
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
            record::run(&cfg)?;
            Ok(exit::OK)
        }
        Cmd::Fields => {
            print_fields()?;
            Ok(exit::OK)
        }
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
        assert!(parse_interval("50ms").is_err());
        assert!(parse_interval("fast").is_err());
        assert!(parse_interval("-1").is_err());
    }

    #[test]
    fn field_selection_adds_keys_and_resolves_aliases() {
        let s = selection(&["clocks.current.sm".into()], Format::Csv, false).unwrap();
        let names: Vec<&str> = s.fields().map(Field::name).collect();
        assert_eq!(names, ["timestamp", "host", "index", "uuid", "clocks.sm", "missed"]);
        let s = selection(&["utilization.gpu".into()], Format::Parquet, true).unwrap();
        let names: Vec<&str> = s.fields().map(Field::name).collect();
        assert_eq!(
            names,
            ["timestamp", "host", "index", "uuid", "utilization.gpu", "utilization.gpu.max", "samples", "missed"]
        );
        let s =
            selection(&["clocks.current.sm".into()], Format::NvidiaSmi { header: true, units: true }, false).unwrap();
        assert_eq!(s.fields().collect::<Vec<_>>(), [Field::ClockSm]);
        assert_eq!(Field::ClockSm.def().nvsmi_header(), "clocks.current.sm [MHz]");
        assert_eq!(Field::TempGpu.def().nvsmi_header(), "temperature.gpu");
        let e = selection(&["utilisation.gpu".into()], Format::Csv, false).unwrap_err();
        assert_eq!(code_for(&e), exit::USAGE);
        assert!(e.to_string().contains("utilization.gpu"), "{e}");
    }
}
