//! `gpumon record`: turn the parsed arguments into a [`RecordConfig`] (output, format, field
//! selection, GPUs from --gpus or the visible-devices variables) and run the recorder.

use std::time::Duration;

use anyhow::Result;

use crate::cli::{MIN_USEFUL_INTERVAL, RecordArgs};
use crate::record::{self, RecordConfig};
use crate::schema::catalog::{CATALOG, Field, suggest};
use crate::schema::files::Format;
use crate::schema::row::Selection;
use crate::sink::Target;
use crate::source::gpu::GpuSelector;
use crate::source::visible::{self, Visible};
use crate::util::error::{UsageError, exit};
use crate::util::warn::warn;

/// Record until the count, duration, a signal or the job's end; the exit code is the job's.
pub fn run(args: RecordArgs) -> Result<i32> {
    let cfg = args.into_config()?;
    let outcome = record::run(&cfg)?;
    Ok(outcome.job_exit.unwrap_or(exit::OK))
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

/// A list option given only empty values (`--fields ''`) is a mistake, not "the default".
fn non_empty(what: &str, given: &[String]) -> Result<()> {
    if !given.is_empty() && given.iter().all(|g| g.trim().is_empty()) {
        return Err(UsageError(format!("{what} is empty; leave it out for the default")).into());
    }
    Ok(())
}

impl RecordArgs {
    /// Lists given only empty values, and an output in a missing directory, are usage errors.
    fn check(&self) -> Result<()> {
        non_empty("--fields", &self.fields)?;
        non_empty("--gpus", &self.gpus)?;
        match self.output.as_ref().filter(|o| o.as_os_str() != "-") {
            Some(o) => crate::cmd::report::check_output_dir(o),
            None => Ok(()),
        }
    }

    fn into_config(self) -> Result<RecordConfig> {
        self.check()?;
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
            crate::util::warn::warn(&format!(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::error::code_for;

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
