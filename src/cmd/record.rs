//! `gpumon record`: turn the parsed arguments into a [`RecordConfig`] (output, format, field
//! selection, GPUs from --gpus or the visible-devices variables) and run the recorder.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use crate::cli::{MIN_USEFUL_INTERVAL, RecordArgs};
use gpumon_record::{self as record, RecordConfig};
use gpumon_schema::catalog::{CATALOG, Field, suggest};
use gpumon_schema::{Format, GpuSelector, JOB_ID_MAX, JobId, Selection};
use gpumon_sink::Target;
use gpumon_source::{Visible, visible_env_source, visible_from_env};
use gpumon_util::show;
use gpumon_util::warn;
use gpumon_util::{UsageError, exit};

/// Fill `{host}` and `{date}` (UTC, YYYY-MM-DD) in an output path and make the directories the
/// filled-in parts name (a fleet tree such as `host={host}/date={date}/run.parquet`). A path
/// without placeholders is returned as it is: its directory must exist, as for any output.
/// The job of this recording: `--job-id` (checked), else the launcher's environment (the
/// environment a wrapped command inherits: gpumon adds only its own control variable to it), else,
/// with `--pid`, the environment of the process followed (a recorder started beside the job).
fn job_of(option: Option<&str>, pid: Option<u32>) -> Result<Option<JobId>> {
    if let Some(o) = option {
        let o = o.trim();
        if o.is_empty() || o.len() > JOB_ID_MAX || o.chars().any(char::is_control) {
            return Err(UsageError(format!(
                "--job-id {o:?}: a job id is 1 to {JOB_ID_MAX} bytes without control characters"
            ))
            .into());
        }
    }
    let mut job = JobId::from_env(option.map(str::trim), |k| std::env::var(k).ok());
    if job.is_none()
        && let Some(pid) = pid
    {
        let environ = followed_environ(pid);
        job =
            JobId::from_env(None, |k| environ.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()));
    }
    // An id from the environment is not the user's to fix: cut to size, control characters dropped.
    for j in job.iter_mut() {
        j.id = j.id.chars().filter(|c| !c.is_control()).collect();
        while j.id.len() > JOB_ID_MAX {
            j.id.pop();
        }
    }
    Ok(job.filter(|j| !j.id.is_empty()))
}

/// The environment of process `pid` (`/proc/PID/environ`: readable for one's own processes); empty
/// when it cannot be read.
fn followed_environ(pid: u32) -> Vec<(String, String)> {
    let Ok(bytes) = std::fs::read(format!("/proc/{pid}/environ")) else { return Vec::new() };
    bytes
        .split(|&b| b == 0)
        .filter_map(|kv| {
            let kv = String::from_utf8_lossy(kv);
            kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect()
}

fn fill_template(path: &Path, host: &str, now: chrono::DateTime<chrono::Utc>) -> Result<PathBuf> {
    let Some(text) = path.to_str().filter(|t| t.contains("{host}") || t.contains("{date}")) else {
        return Ok(path.to_path_buf());
    };
    if host.contains('/') || host == "." || host == ".." {
        return Err(
            UsageError(format!("host name {host:?} cannot be a directory name in {text}")).into()
        );
    }
    let filled = PathBuf::from(
        text.replace("{host}", host).replace("{date}", &now.format("%Y-%m-%d").to_string()),
    );
    if let Some(dir) = filled.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Without following a link another user planted (`host=x -> elsewhere`).
        gpumon_util::fsafe::create_dirs(dir)
            .map_err(|e| UsageError(format!("creating {}: {e}", show(dir))))?;
    }
    Ok(filled)
}

/// Record until the count, duration, a signal or the job's end; the exit code is the job's.
pub fn run(args: RecordArgs) -> Result<i32> {
    gpumon_record::alloc::settle_for_recording();
    let cfg = args.into_config()?;
    let outcome = record::run(&cfg)?;
    Ok(outcome.job_exit.unwrap_or(exit::OK))
}

/// Resolve `--fields` names. gpumon's own formats always carry the identity keys and `missed`;
/// aggregated runs add `samples` and the `.max` companion of each selected field that has one;
/// `phases` adds `phase`.
fn selection(
    names: &[String],
    format: Format,
    aggregated: bool,
    job: bool,
    phases: bool,
) -> Result<Selection> {
    let mut cols: Vec<Field> =
        if names.is_empty() { Selection::defaults().fields().collect() } else { Vec::new() };
    if names.is_empty() && gpumon_source::CgroupSource::detect().is_some_and(|c| c.has_limits()) {
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
            let hint = if hint.is_empty() {
                String::new()
            } else {
                format!(" (did you mean {}?)", hint.join(", "))
            };
            return Err(UsageError(format!(
                "unknown field '{name}'{hint}; `gpumon fields` lists them all"
            ))
            .into());
        };
        if !cols.contains(&f) {
            cols.push(f);
        }
    }
    if phases && !cols.contains(&Field::Phase) {
        cols.push(Field::Phase);
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
    let given = GpuSelector::parse_list(given);
    if !given.is_empty() {
        return given;
    }
    let source = visible_env_source();
    match visible_from_env() {
        Visible::All => Vec::new(),
        Visible::Only(sel) => {
            if verbose && let Some((var, value)) = &source {
                eprintln!("gpumon: GPUs from {var}={value:?} (pass --gpus to choose others)");
            }
            sel
        }
        Visible::None => {
            if let Some((var, value)) = source {
                warn(&format!(
                    "{var}={value:?} selects no GPU; recording host metrics only (pass --gpus to choose)"
                ));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_templates_fill_host_and_date_and_make_directories() {
        let dir = tempfile::tempdir().unwrap();
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-03T23:59:00Z").unwrap().to_utc();
        let t = dir.path().join("host={host}/date={date}/run.parquet");
        let p = fill_template(&t, "node7", now).unwrap();
        assert_eq!(p, dir.path().join("host=node7/date=2026-12-03/run.parquet"));
        assert!(p.parent().unwrap().is_dir());
        let plain = dir.path().join("plain.csv");
        assert_eq!(fill_template(&plain, "node7", now).unwrap(), plain);
        assert!(fill_template(&t, "../x", now).is_err());
    }
    use gpumon_util::code_for;

    #[test]
    fn field_selection_adds_keys_and_resolves_aliases() {
        let s = selection(&["clocks.current.sm".into()], Format::Csv, false, false, false).unwrap();
        let names: Vec<&str> = s.fields().map(Field::name).collect();
        assert_eq!(names, ["timestamp", "host", "index", "uuid", "clocks.sm", "missed"]);
        let s =
            selection(&["utilization.gpu".into()], Format::Parquet, true, false, false).unwrap();
        let names: Vec<&str> = s.fields().map(Field::name).collect();
        assert_eq!(
            names,
            [
                "timestamp",
                "host",
                "index",
                "uuid",
                "utilization.gpu",
                "utilization.gpu.max",
                "samples",
                "missed"
            ]
        );
        let s = selection(
            &["clocks.current.sm".into()],
            Format::NvidiaSmi { header: true, units: true },
            false,
            false,
            false,
        )
        .unwrap();
        assert_eq!(s.fields().collect::<Vec<_>>(), [Field::ClockSm]);
        assert_eq!(Field::ClockSm.def().nvsmi_header(), "clocks.current.sm [MHz]");
        assert_eq!(Field::TempGpu.def().nvsmi_header(), "temperature.gpu");
        let e =
            selection(&["utilisation.gpu".into()], Format::Csv, false, false, false).unwrap_err();
        assert_eq!(code_for(&e, super::super::ERROR_TYPES), exit::USAGE);
        assert!(e.to_string().contains("utilization.gpu"), "{e}");
    }
}
