//! One module per subcommand: each turns its parsed arguments into a config, wires the rooms
//! together and returns an exit code. [`main`] parses, dispatches and maps errors to exit codes.

#[cfg(feature = "analyze")]
pub mod compare;
#[cfg(feature = "analyze")]
pub mod convert;
pub mod doctor;
pub mod fields;
pub mod mark;
pub mod progress;
pub mod record;
pub mod recover;
#[cfg(feature = "analyze")]
pub mod report;
#[cfg(feature = "analyze")]
pub mod summarize;
#[cfg(feature = "analyze")]
pub mod watch;

mod analyzer;

use anyhow::Result;
use clap::{CommandFactory, Parser};

use crate::cli::{Cli, Cmd, DoctorFormatArg};
use gpumon_util::{Probe, code_for, exit, probe};

pub use gpumon_util::fsafe::check_output_dir;

/// The recording side, run by the `gpumon` binary itself. The reading commands are passed to the
/// `gpumon-analyze` binary beside it (`analyzer`): a recorder beside a week-long job maps only the
/// code it runs (start-up, resident memory; bench/README.md "Record: current figures").
fn dispatch(cli: Cli) -> Result<i32> {
    match cli.cmd {
        Cmd::Record(args) => record::run(*args),
        Cmd::Fields(a) => {
            fields::print_fields(a.format)?;
            Ok(exit::OK)
        }
        Cmd::Doctor(a) => {
            let format = match a.format {
                DoctorFormatArg::Text => doctor::DoctorFormat::Text,
                DoctorFormatArg::Json => doctor::DoctorFormat::Json,
            };
            doctor::run(&doctor::DoctorConfig { nvml_lib: a.nvml_lib, format, verbose: a.verbose })
        }
        Cmd::Mark(a) => mark::run(&a.into_config()?),
        Cmd::Progress(a) => progress::run(&a.into_config()?),
        Cmd::Recover { path } => recover::run(&path),
        Cmd::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "gpumon", &mut std::io::stdout());
            Ok(exit::OK)
        }
        Cmd::Summarize(_) | Cmd::Report(_) | Cmd::Convert(_) | Cmd::Compare(_) | Cmd::Watch(_) => {
            analyzer::exec()
        }
    }
}

/// The reading side, run by the `gpumon-analyze` binary (which `gpumon` execs for these commands).
#[cfg(feature = "analyze")]
fn dispatch_reading(cli: Cli) -> Result<i32> {
    match cli.cmd {
        Cmd::Summarize(a) => summarize::run(&a.into_config()?),
        Cmd::Report(a) => report::run(&a.into_config()?),
        Cmd::Convert(a) => convert::run(&a.into_config()?),
        Cmd::Compare(a) => compare::run(&a.into_config()?),
        Cmd::Watch(a) => watch::run(&a.into_config()?),
        Cmd::Record(_)
        | Cmd::Fields(_)
        | Cmd::Doctor(_)
        | Cmd::Mark(_)
        | Cmd::Progress(_)
        | Cmd::Recover { .. }
        | Cmd::Completions { .. } => Err(gpumon_util::UsageError(format!(
            "{} runs gpumon's reading commands; run this one as `gpumon`",
            analyzer::NAME
        ))
        .into()),
    }
}

/// Whether the error is stdout going away (`gpumon ... | head`): a normal end, not a failure.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .or_else(|| c.downcast_ref::<gpumon_sink::SinkError>().and_then(|s| s.io_error()))
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Parse the command line, run, and return the process exit code (`gpumon`).
pub fn main() -> i32 {
    run(dispatch)
}

/// The same for `gpumon-analyze`: the reading commands.
#[cfg(feature = "analyze")]
pub fn main_reading() -> i32 {
    run(dispatch_reading)
}

/// The tip (and a better usage line) for a parse error a habit from another tool causes: clap's
/// own "a similar argument exists" names the nearest flag by spelling, which for these misleads.
fn habit_tip(e: &clap::Error) -> Option<(&'static str, Option<&'static str>)> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else { return None };
    let flag = arg.split(['=', ' ']).next().unwrap_or(arg);
    match (e.kind(), flag) {
        (ErrorKind::UnknownArgument, "--by-phase" | "--by-phases") => Some((
            "to split by phase, use '--by phase'",
            Some("Usage: gpumon summarize [OPTIONS] --by phase <INPUT>..."),
        )),
        (ErrorKind::ArgumentConflict, "--interval") => Some((
            "-i and -l are both gpumon's interval; to pick GPUs as nvidia-smi's -i does, use --id LIST \
             (with --query-gpu the command line is nvidia-smi's: -i is the GPUs)",
            None,
        )),
        _ => None,
    }
}

/// clap's message, with the tip of [`habit_tip`] in place of clap's for a known habit.
fn print_parse_error(e: &clap::Error) {
    let Some((tip, usage)) = habit_tip(e) else {
        let _ = e.print();
        return;
    };
    let mut out = String::new();
    let mut tipped = false;
    for line in e.render().to_string().lines() {
        if line.trim_start().starts_with("tip:") {
            out.push_str(&format!("  tip: {tip}\n"));
            tipped = true;
            continue;
        }
        if line.starts_with("Usage:") && !tipped {
            out.push_str(&format!("  tip: {tip}\n\n"));
            tipped = true;
        }
        match usage {
            Some(u) if line.starts_with("Usage:") => out.push_str(u),
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    eprint!("{out}");
}

fn run(dispatch: fn(Cli) -> Result<i32>) -> i32 {
    let cli = match Cli::try_parse_from(crate::cli::nvsmi_argv(std::env::args_os())) {
        Ok(c) => c,
        Err(e) => {
            print_parse_error(&e);
            return if e.use_stderr() { exit::USAGE } else { exit::OK };
        }
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => exit::OK,
        Err(e) => {
            gpumon_util::status::clear_line();
            // One line, whatever a file name or a decoder's message holds.
            eprintln!("gpumon: error: {}", gpumon_util::escape(&format!("{e:#}")));
            code_for(&e, ERROR_TYPES)
        }
    }
}

/// The error types with kinds from crates util cannot name, whose kinds give the exit code.
pub(crate) const ERROR_TYPES: &[Probe] = &[probe::<gpumon_sink::SinkError>];
