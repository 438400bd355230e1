//! `gpumon record`: turn the parsed arguments into a [`RecordConfig`] (output, format, interval,
//! options checked against each other; the job, the output template, the field selection and the
//! GPUs by `gpumon_record`'s option helpers) and run the recorder.

use std::time::Duration;

use anyhow::Result;

use crate::cli::{MIN_USEFUL_INTERVAL, RecordArgs};
use gpumon_record::{self as record, RecordConfig, fill_template, gpus_or_env, job_of, selection};
use gpumon_schema::Format;
use gpumon_sink::Target;
use gpumon_source::visible_env_source;
use gpumon_util::{UsageError, exit};

/// Record until the count, duration, a signal or the job's end; the exit code is the job's.
pub fn run(args: RecordArgs) -> Result<i32> {
    gpumon_record::alloc::settle_for_recording();
    let cfg = args.into_config()?;
    let outcome = record::run(&cfg)?;
    Ok(outcome.job_exit.unwrap_or(exit::OK))
}

/// A list option given only empty values (`--fields ''`) is a mistake, not "the default".
fn non_empty(what: &str, given: &[String]) -> Result<()> {
    if !given.is_empty() && given.iter().all(|g| g.trim().is_empty()) {
        return Err(UsageError(format!("{what} is empty; leave it out for the default")).into());
    }
    Ok(())
}

impl RecordArgs {
    /// Whether the run records the `phase` column: by default every run that takes marks (a file
    /// output or a wrapped command, unless it names its fields or has `--no-marks`), so a mark from
    /// anywhere reaches the file; any run with `--phases`; never the nvidia-smi format.
    fn phases(&self, format: Format, to_file: bool) -> Result<bool> {
        let nvsmi = matches!(format, Format::NvidiaSmi { .. });
        if self.phases && nvsmi {
            return Err(UsageError("--phases needs the csv or parquet format".into()).into());
        }
        let named = self.fields.iter().chain(&self.query_gpu).any(|f| !f.trim().is_empty());
        let takes_marks = !self.no_marks && (to_file || !self.command.is_empty());
        Ok(!nvsmi && (self.phases || (takes_marks && !named)))
    }

    /// The work counters of `--progress`, checked: valid names, a format with room for their columns,
    /// and a control socket the job can reach (a file output or a wrapped command).
    fn counters(&self, format: Format, to_file: bool) -> Result<Vec<String>> {
        let keys = gpumon_schema::progress::parse_declared(&self.progress)
            .map_err(|why| UsageError(format!("--progress: {why}")))?;
        if keys.is_empty() {
            return Ok(keys);
        }
        if matches!(format, Format::NvidiaSmi { .. }) {
            return Err(UsageError("--progress needs the csv or parquet format".into()).into());
        }
        if !to_file && self.command.is_empty() {
            return Err(UsageError(
                "--progress needs a control socket the job can reach: an output file (-o FILE) or a wrapped command"
                    .into(),
            )
            .into());
        }
        Ok(keys)
    }

    /// Where the rows go and in which format: `-o` (its extension), stdout for `-o -` or for
    /// nvidia-smi's `--query-gpu` without `-o`, none with `--listen` alone.
    fn target_and_format(&self, host: &str) -> Result<(Option<Target>, Format)> {
        let target = match &self.output {
            Some(o) if o.as_os_str() == "-" => Some(Target::Stdout),
            Some(o) => {
                let path = fill_template(o, host, chrono::Utc::now())?;
                crate::cmd::check_output_dir(&path)?;
                Some(Target::File(path))
            }
            None if self.listen.is_some() => None,
            // nvidia-smi --query-gpu prints to stdout.
            None if !self.query_gpu.is_empty() => Some(Target::Stdout),
            None => {
                return Err(UsageError(
                    "record needs -o/--output PATH (use - for stdout) or --listen ADDR:PORT".into(),
                )
                .into());
            }
        };
        let format = match (self.format, &target) {
            // `--query-gpu ... --format=csv` is nvidia-smi's command line: its output.
            (Some(Format::Csv), _) if !self.query_gpu.is_empty() => Format::NvidiaSmi { header: true, units: true },
            (Some(f), _) => f,
            (None, Some(Target::Stdout) | None) => Format::Csv,
            (None, Some(Target::File(p))) => Format::from_path(p).ok_or_else(|| {
                UsageError(format!(
                    "cannot tell the format of {} from its extension; use .csv or .parquet, or --format",
                    p.display()
                ))
            })?,
        };
        Ok((target, format))
    }

    /// nvidia-smi's `--query-gpu` without `-l`/`-lms` prints once and exits: so does record when
    /// nothing else (an interval, --count, --duration, --listen, a job) says how long to run.
    fn smi_once(&self) -> bool {
        !self.query_gpu.is_empty()
            && self.interval.is_none()
            && self.loop_ms.is_none()
            && self.duration.is_none()
            && self.listen.is_none()
            && self.command.is_empty()
            && self.pid.is_none()
    }

    /// The output interval and the sampling interval (`--sample-every`), which must divide it.
    fn sampling(&self) -> Result<(Duration, Duration)> {
        let interval = self
            .loop_ms
            .map(Duration::from_millis)
            .or(self.interval)
            .unwrap_or(Duration::from_secs(1));
        let sample_every = self.sample_every.unwrap_or(interval.min(Duration::from_secs(1)));
        if sample_every > interval || !interval.as_nanos().is_multiple_of(sample_every.as_nanos()) {
            return Err(UsageError(format!(
                "--interval {interval:?} must be a whole multiple of --sample-every {sample_every:?}"
            ))
            .into());
        }
        if sample_every < MIN_USEFUL_INTERVAL {
            gpumon_util::warn(&format!(
                "sampling every {sample_every:?}: below 100ms GPU utilization repeats NVML's own averaging window; \
                 such rates are meant for benchmarks"
            ));
        }
        Ok((interval, sample_every))
    }

    /// Rotation and `--processes` are refused without an output file.
    fn file_options_need_a_file(&self, to_file: bool) -> Result<()> {
        if !to_file && (self.rotate_size.is_some() || self.rotate_every.is_some()) {
            return Err(UsageError("rotation needs an output file".into()).into());
        }
        if self.processes && !to_file {
            return Err(UsageError(
                "--processes writes a second file beside -o FILE; it needs an output file".into(),
            )
            .into());
        }
        Ok(())
    }

    fn into_config(self) -> Result<RecordConfig> {
        non_empty("--fields", &self.fields)?;
        non_empty("--gpus", &self.gpus)?;
        let host = match self.host.as_deref().map(str::trim) {
            Some("") => return Err(UsageError("--host: empty host name".into()).into()),
            Some(h) => h.to_string(),
            None => gpumon_source::hostname(),
        };
        let (target, format) = self.target_and_format(&host)?;
        let job = job_of(self.job_id.as_deref(), self.pid)?;
        let (interval, sample_every) = self.sampling()?;
        let aggregated = sample_every < interval;
        let to_file = matches!(target, Some(Target::File(_)));
        self.file_options_need_a_file(to_file)?;
        let phases = self.phases(format, to_file)?;
        let counters = self.counters(format, to_file)?;
        if format == Format::Parquet && target == Some(Target::Stdout) {
            return Err(UsageError(
                "Parquet cannot stream to stdout; use -o FILE.parquet or --format csv".into(),
            )
            .into());
        }
        let fields = if self.query_gpu.is_empty() { &self.fields } else { &self.query_gpu };
        Ok(RecordConfig {
            interval,
            sample_every,
            selection: selection(
                fields,
                format,
                aggregated,
                !self.command.is_empty() || self.pid.is_some(),
                phases,
            )?
            .with_progress(&counters),
            target,
            host,
            job,
            listen: self.listen,
            format,
            duration: self.duration,
            count: self.count.or(self.smi_once().then_some(1)),
            gpus_from_env: self.gpus.iter().all(|g| g.trim().is_empty())
                && visible_env_source().is_some(),
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
            marks: !self.no_marks,
            append: self.append,
        })
    }
}
