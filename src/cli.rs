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
    Record(RecordArgs),
    /// List every field gpumon can record (like `nvidia-smi --help-query-gpu`).
    Fields,
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
    /// Longest time written data may wait in memory before reaching the file.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    flush: Duration,
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

fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s).ok_or_else(|| format!("unknown format '{s}': use csv, parquet or nvidia-smi[,noheader][,nounits]"))
}

/// Resolve `--fields` names. gpumon's own formats always lead with the identity keys.
fn selection(names: &[String], format: Format) -> Result<Selection> {
    if names.is_empty() {
        return Ok(Selection::defaults());
    }
    let mut cols: Vec<Field> = Vec::new();
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
    if !matches!(format, Format::NvidiaSmi { .. }) {
        let keys = [Field::Timestamp, Field::Host, Field::Index, Field::Uuid];
        let missing: Vec<Field> = keys.into_iter().filter(|k| !cols.contains(k)).collect();
        cols.extend(missing);
        cols.sort();
    }
    Ok(Selection::new(cols))
}

impl RecordArgs {
    fn into_config(self) -> Result<RecordConfig> {
        let Some(output) = self.output else {
            return Err(UsageError("record needs -o/--output PATH (use - for stdout)".into()).into());
        };
        let target = if output.as_os_str() == "-" { Target::Stdout } else { Target::File(output) };
        let format = match (self.format, &target) {
            (Some(f), _) => f,
            (None, Target::Stdout) => Format::Csv,
            (None, Target::File(p)) => Format::from_path(p).ok_or_else(|| {
                UsageError(format!(
                    "cannot tell the format of {} from its extension; use .csv or .parquet, or --format",
                    p.display()
                ))
            })?,
        };
        if format == Format::Parquet && target == Target::Stdout {
            return Err(
                UsageError("Parquet cannot stream to stdout; use -o FILE.parquet or --format csv".into()).into()
            );
        }
        Ok(RecordConfig {
            interval: self.interval,
            selection: selection(&self.fields, format)?,
            target,
            format,
            duration: self.duration,
            count: self.count,
            gpus: self.gpus.iter().filter(|g| !g.trim().is_empty()).map(|g| GpuSelector::parse(g)).collect(),
            nvml_lib: self.nvml_lib,
            require_gpu: self.require_gpu,
            flush: self.flush,
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
            let cfg = args.into_config()?;
            record::run(&cfg)?;
            Ok(exit::OK)
        }
        Cmd::Fields => {
            print_fields()?;
            Ok(exit::OK)
        }
        Cmd::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "gpumon", &mut std::io::stdout());
            Ok(exit::OK)
        }
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
        assert!(parse_interval("50ms").is_err());
        assert!(parse_interval("fast").is_err());
        assert!(parse_interval("-1").is_err());
    }

    #[test]
    fn field_selection_adds_keys_and_resolves_aliases() {
        let s = selection(&["clocks.current.sm".into()], Format::Csv).unwrap();
        let names: Vec<&str> = s.fields().map(Field::name).collect();
        assert_eq!(names, ["timestamp", "host", "index", "uuid", "clocks.sm"]);
        let s = selection(&["clocks.current.sm".into()], Format::NvidiaSmi { header: true, units: true }).unwrap();
        assert_eq!(s.fields().collect::<Vec<_>>(), [Field::ClockSm]);
        assert_eq!(Field::ClockSm.def().nvsmi_header(), "clocks.current.sm [MHz]");
        assert_eq!(Field::TempGpu.def().nvsmi_header(), "temperature.gpu");
        let e = selection(&["utilisation.gpu".into()], Format::Csv).unwrap_err();
        assert_eq!(code_for(&e), exit::USAGE);
        assert!(e.to_string().contains("utilization.gpu"), "{e}");
    }
}
