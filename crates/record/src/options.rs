//! What `gpumon record`'s options turn into (the parts of a [`RecordConfig`](crate::RecordConfig)
//! the command line cannot give as they are): the job's id from the option or the launcher's
//! environment, an output path's `{host}`/`{date}` filled in, the field selection, the GPUs from
//! `--gpus` or the visible-devices variables.

use std::path::{Path, PathBuf};

use anyhow::Result;

use gpumon_schema::catalog::{CATALOG, Field, suggest};
use gpumon_schema::{Format, GpuSelector, JOB_ID_MAX, JobId, Selection};
use gpumon_source::{Visible, visible_env_source, visible_from_env};
use gpumon_util::{UsageError, show, warn};

/// The job of this recording: `--job-id` (checked), else the launcher's environment (the
/// environment a wrapped command inherits: gpumon adds only its own control variable to it), else,
/// with `--pid`, the environment of the process followed (a recorder started beside the job).
pub fn job_of(option: Option<&str>, pid: Option<u32>) -> Result<Option<JobId>> {
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

/// Fill `{host}` and `{date}` (UTC, YYYY-MM-DD) in an output path and make the directories the
/// filled-in parts name (a fleet tree such as `host={host}/date={date}/run.parquet`). A path
/// without placeholders is returned as it is: its directory must exist, as for any output.
pub fn fill_template(
    path: &Path,
    host: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<PathBuf> {
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

/// Resolve `--fields` names. gpumon's own formats always carry the identity keys and `missed`;
/// aggregated runs add `samples` and the `.max` companion of each selected field that has one;
/// `phases` adds `phase`.
pub fn selection(
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
pub fn gpus_or_env(given: &[String], verbose: bool) -> Vec<GpuSelector> {
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
    use gpumon_util::{code_for, exit};

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
        assert_eq!(code_for(&e, &[]), exit::USAGE);
        assert!(e.to_string().contains("utilization.gpu"), "{e}");
    }
}
