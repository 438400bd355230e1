//! Setting up a run: leftovers of a crashed run recovered, the sources the selection needs
//! opened, the outputs (writer, `--processes` writer, metrics endpoint) started, then the job.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use chrono::Utc;

use crate::child::Job;
use crate::clock::Stamper;
use crate::control::Control;
use crate::fanout::{Outputs, companion_target, events_selection, procs_selection};
use crate::live::Live;
use crate::rundir::RunDir;
use crate::tick::{Emitter, Rows, Sources};
use crate::{RecordConfig, Recorder};
use gpumon_schema::catalog::{Field, Source, Table};
use gpumon_schema::{
    Format, GpuSelector, LIVE_SCHEMA, LiveStatus, OutputSet, RunMeta, Selection, status_path,
};
use gpumon_sink::Exporter;
use gpumon_sink::Target;
use gpumon_sink::recover_set;
use gpumon_sink::{Writer, WriterConfig};
use gpumon_source::CgroupSource;
use gpumon_source::GpuSource;
use gpumon_source::HostSource;
use gpumon_source::PidSet;
use gpumon_util::UsageError;
use gpumon_util::status;
use gpumon_util::warn;

impl<'a> Recorder<'a> {
    /// Everything a run needs before its first tick. The job starts last, so nothing it does
    /// goes unrecorded for lack of a ready writer.
    pub(crate) fn open(cfg: &'a RecordConfig) -> Result<Recorder<'a>> {
        if let Some(Target::File(p)) = &cfg.target {
            let set = OutputSet::new(p);
            recover_leftovers(&set)?;
            continue_or_refuse(cfg, &set, p)?;
        }
        let (host, cgroup) = open_host_sources(cfg)?;
        let job_pids: Option<PidSet> =
            (!cfg.wrap.is_empty() || cfg.pid.is_some()).then(PidSet::default);
        let gpu = open_gpus(cfg, job_pids.clone())?;
        // A GPU in MIG mode at start adds the instance identity columns; a run without one
        // writes the same columns as before MIG was known.
        let selection = if gpu.as_ref().is_some_and(GpuSource::has_mig) {
            cfg.selection.clone().with_mig()
        } else {
            cfg.selection.clone()
        };
        let hostname: Arc<str> = cfg.host.as_str().into();
        let meta = RunMeta {
            hostname: hostname.to_string(),
            interval_s: cfg.interval.as_secs_f64(),
            command: cfg.command_line.clone(),
            start: Utc::now(),
            driver_version: gpu.as_ref().and_then(GpuSource::driver_version),
            job: cfg.job.clone(),
        };
        let dir = run_dir(cfg);
        let control = open_control(cfg, dir.as_ref());
        let outputs = open_outputs(cfg, &selection, &meta, control.as_ref(), dir)?;
        let mut job = match (&cfg.wrap[..], cfg.pid) {
            ([], None) => None,
            ([], Some(pid)) => Some(Job::follow(pid)?),
            (argv, _) => Some(Job::spawn(argv, control.as_ref().map(|c| c.path.as_path()))?),
        };
        if let (Some(j), Some(p)) = (job.as_mut(), job_pids.as_ref()) {
            j.share_pids(p.clone());
        }
        let show_status =
            status::enable(cfg.quiet || job.as_ref().is_some_and(Job::shares_terminal));
        let per_row = (cfg.interval.as_nanos() / cfg.sample_every.as_nanos().max(1)).max(1) as u64;
        Ok(Recorder {
            cfg,
            sources: Sources {
                host,
                cgroup,
                job,
                gpu,
                clock: Stamper::new(cfg.sample_every),
                host_cap: 0,
            },
            hostname,
            rows: Rows::new(per_row, &selection),
            out: Emitter::new(outputs, job_pids, control.as_ref().map(Control::clock))
                .with_progress(declare_progress(cfg, control.as_ref())),
            control,
            target_name: cfg
                .target
                .as_ref()
                .map_or_else(|| "metrics only".to_string(), ToString::to_string),
            show_status,
        })
    }
}

/// The host and cgroup sources, when something selected comes from them.
fn open_host_sources(cfg: &RecordConfig) -> Result<(Option<HostSource>, Option<CgroupSource>)> {
    let needs_host = cfg.selection.fields().any(|f| f.def().source == Source::Host);
    let host = if needs_host { Some(HostSource::new()?) } else { None };
    let needs_cgroup = cfg.selection.fields().any(|f| f.def().source == Source::Cgroup);
    let cgroup = if needs_cgroup { CgroupSource::detect() } else { None };
    if needs_cgroup && cgroup.is_none() {
        warn("no cgroup found for gpumon: cgroup.* columns stay empty");
    }
    if cfg.verbose
        && let Some(c) = &cgroup
    {
        eprintln!("gpumon: {}", c.describe());
    }
    Ok((host, cgroup))
}

/// The run's private directory, for the status file of a run writing a file and the control socket.
fn run_dir(cfg: &RecordConfig) -> Option<Arc<RunDir>> {
    let wanted = matches!(cfg.target, Some(Target::File(_))) || (cfg.marks && !cfg.wrap.is_empty());
    if !wanted {
        return None;
    }
    RunDir::create()
        .map_err(|e| {
            warn(&format!(
                "no private directory for the control socket and status file ({e}): marks disabled"
            ))
        })
        .ok()
}

/// The control socket for phase marks, for a run writing a file (its status file says where the
/// socket is) or wrapping a job (`$GPUMON_CONTROL`); none with `--no-marks`.
fn open_control(cfg: &RecordConfig, dir: Option<&Arc<RunDir>>) -> Option<Control> {
    let reachable = matches!(cfg.target, Some(Target::File(_))) || !cfg.wrap.is_empty();
    let control = dir.filter(|_| cfg.marks && reachable).and_then(Control::open)?;
    // A mark the file has no column for would be answered and lost: refuse it, saying how to keep marks.
    if !cfg.selection.fields().any(|f| f == Field::Phase) {
        let why = if matches!(cfg.format, Format::NvidiaSmi { .. }) {
            "this recording writes nvidia-smi's format, which has no phase column: marks would be lost; \
             record in csv or parquet to mark phases"
        } else {
            "this recording has no phase column (its --fields leave it out): marks would be lost; \
             start record with --phases (or add phase to --fields) to mark phases"
        };
        control.marks.refuse(why.to_string());
    }
    Some(control)
}

/// The work counters of a run declaring them (`--progress`), declared on its control socket.
fn declare_progress(
    cfg: &RecordConfig,
    control: Option<&Control>,
) -> Option<Arc<crate::control::Marks>> {
    let keys = cfg.selection.progress();
    let c = control.filter(|_| !keys.is_empty())?;
    c.marks.progress.declare(keys);
    Some(c.marks.clone())
}

/// The live status file of a run writing a file (`gpumon watch`).
fn open_live(
    cfg: &RecordConfig,
    sel: &Selection,
    meta: &RunMeta,
    control: Option<&Control>,
    dir: Option<Arc<RunDir>>,
) -> Result<Option<Live>> {
    let Some(Target::File(p)) = &cfg.target else { return Ok(None) };
    let job = match (&cfg.wrap[..], cfg.pid) {
        ([], None) => None,
        ([], Some(pid)) => Some(format!("pid {pid}")),
        (argv, _) => Some(argv.join(" ")),
    };
    let base = LiveStatus {
        schema: LIVE_SCHEMA.to_string(),
        pid: std::process::id(),
        // The machine's own name (not --host): `watch` and `recover` tell a live recorder by it.
        host: gpumon_source::hostname(),
        output: p.display().to_string(),
        control: control.map(|c| c.path.display().to_string()),
        interval_s: meta.interval_s,
        started: meta.start.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        job,
        ..LiveStatus::default()
    };
    Ok(Some(Live::start(status_path(p), dir, base, sel.clone(), control.map(|c| c.marks.clone()))?))
}

/// The status file first (a name another user holds stops the run before any file is made), then
/// the main writer, the per-process writer beside it (Parquet or CSV like the main file) and the
/// metrics endpoint, each when asked for.
fn open_outputs(
    cfg: &RecordConfig,
    sel: &Selection,
    meta: &RunMeta,
    control: Option<&Control>,
    dir: Option<Arc<RunDir>>,
) -> Result<Outputs> {
    let live = open_live(cfg, sel, meta, control, dir)?;
    match open_writers(cfg, sel, meta) {
        Ok(Writers { writer, procs, events, exporter }) => {
            Ok(Outputs::new(writer, procs, events, exporter, live))
        }
        Err(e) => {
            if let Some(l) = live {
                l.finish();
            }
            Err(e)
        }
    }
}

/// The outputs [`open_writers`] opens, each when asked for.
struct Writers {
    /// The main file's writer.
    writer: Option<Writer>,
    /// The per-process file's writer (`--processes`).
    procs: Option<Writer>,
    /// The events writer's settings: it starts with the first event.
    events: Option<WriterConfig>,
    /// The metrics endpoint (`--listen`).
    exporter: Option<Exporter>,
}

/// The writers and the metrics endpoint of [`open_outputs`].
fn open_writers(cfg: &RecordConfig, sel: &Selection, meta: &RunMeta) -> Result<Writers> {
    let writer = cfg
        .target
        .as_ref()
        .map(|t| Writer::spawn(writer_config(cfg, t, cfg.format, sel, meta)))
        .transpose()?;
    let procs_format = if cfg.format == Format::Parquet { Format::Parquet } else { Format::Csv };
    let procs = cfg
        .target
        .as_ref()
        .filter(|_| cfg.processes)
        .and_then(|t| companion_target(t, Table::Procs))
        .map(|t| {
            Writer::spawn(writer_config(cfg, &t, procs_format, &procs_selection_for(sel), meta))
        })
        .transpose()?;
    // Events are rare and matter after a crash: each is flushed as it comes.
    let events = cfg.target.as_ref().and_then(|t| companion_target(t, Table::Events)).map(|t| {
        WriterConfig {
            flush: Duration::ZERO,
            ..writer_config(cfg, &t, procs_format, &events_selection(), meta)
        }
    });
    let exporter = cfg.listen.map(|addr| Exporter::start(addr, sel, meta)).transpose()?;
    Ok(Writers { writer, procs, events, exporter })
}

/// The `--processes` columns: with the MIG instance columns when the run's columns have them.
fn procs_selection_for(sel: &Selection) -> Selection {
    let mig = sel.fields().any(|f| f == gpumon_schema::catalog::Field::MigGi);
    if mig { procs_selection().with_mig() } else { procs_selection() }
}

/// The writer settings of one output of this run.
fn writer_config(
    cfg: &RecordConfig,
    target: &Target,
    format: Format,
    selection: &Selection,
    meta: &RunMeta,
) -> WriterConfig {
    WriterConfig {
        format,
        target: target.clone(),
        selection: selection.clone(),
        meta: meta.clone(),
        flush: if *target == Target::Stdout { Duration::ZERO } else { cfg.flush },
        rotate_size: cfg.rotate_size,
        rotate_every: cfg.rotate_every,
        keep: cfg.keep,
        max_total: cfg.max_total,
        backlog_rows: cfg.max_backlog,
        verbose: cfg.verbose,
    }
}

/// Turn what an earlier crash left in this output set into valid files before writing new ones.
fn recover_leftovers(set: &OutputSet) -> Result<()> {
    let done = recover_set(set).with_context(|| format!("recovering {}", set.base().display()))?;
    for m in done.messages() {
        warn(&format!("a previous run's leftovers: {m}"));
    }
    for w in done.warnings() {
        warn(&w);
    }
    Ok(())
}

/// A set that already holds files is continued only when asked: `--append`, or rotation or
/// retention (a long-running recorder restarted into its set), and then said so. Otherwise the run
/// is refused before it writes anything, naming the file and the ways out: a second recording
/// silently added beside the first would be read as one run with it.
fn continue_or_refuse(cfg: &RecordConfig, set: &OutputSet, given: &std::path::Path) -> Result<()> {
    let members = set.members().unwrap_or_default();
    let Some(last) = members.last() else { return Ok(()) };
    let name = gpumon_util::show(given);
    let continues = cfg.append
        || cfg.rotate_size.is_some()
        || cfg.rotate_every.is_some()
        || cfg.keep.is_some()
        || cfg.max_total.is_some();
    if !continues {
        let what = if members.len() == 1 {
            format!(
                "{} already exists",
                gpumon_util::show(&given.with_file_name(last.file_name().unwrap_or_default()))
            )
        } else {
            format!("{name} already holds {} files", members.len())
        };
        return Err(UsageError(format!(
            "{what}: a second recording is not added to it unasked; record to another name \
             (-o {}), move or remove it, or pass --append to continue the set (readers then list \
             each recording)",
            gpumon_util::show(&another_name(set, given))
        ))
        .into());
    }
    eprintln!(
        "gpumon: continuing {name}: {} file(s) already there; this recording's files are added \
         beside them (summarize lists each recording)",
        members.len()
    );
    Ok(())
}

/// A free name to suggest beside a taken one: `run-2.parquet`, `run-3.parquet`, ...
fn another_name(set: &OutputSet, given: &std::path::Path) -> std::path::PathBuf {
    let base = set.base();
    let stem = base.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    (2..1000)
        .map(|n| given.with_file_name(format!("{stem}-{n}{}", set.ext())))
        .find(|p| !p.exists())
        .unwrap_or_else(|| given.to_path_buf())
}

/// The GPU source, or None when the run records host metrics only (no GPU, or NVML unusable
/// without `--require-gpu`).
fn open_gpus(cfg: &RecordConfig, job: Option<PidSet>) -> Result<Option<GpuSource>> {
    let events_file = matches!(cfg.target, Some(Target::File(_)));
    match GpuSource::open(&cfg.nvml_lib, &cfg.gpus, &cfg.selection, cfg.processes, job, events_file)
    {
        Ok(src) => {
            let found: Vec<_> = src.gpus().collect();
            if found.is_empty() {
                return no_gpu_found(cfg);
            }
            if !cfg.gpus_from_env && !src.unmatched().is_empty() {
                let seen: Vec<u32> = found.iter().map(|g| g.index).collect();
                return Err(UsageError(format!(
                    "--gpus {} names no GPU NVML sees (the others name {}); give indices, UUIDs or \
                     PCI bus ids as `gpumon doctor` lists them",
                    gpumon_schema::show_gpu_list(src.unmatched()),
                    gpumon_source::gpu_ranges(&seen)
                ))
                .into());
            }
            if cfg.verbose {
                for g in &found {
                    eprintln!(
                        "gpumon: recording GPU {} {} {} ({})",
                        g.index, g.name, g.uuid, g.bus_id
                    );
                }
            }
            Ok(Some(src))
        }
        // The message once: its Display already names the cause (not the chain again).
        Err(e) if cfg.require_gpu => bail!("--require-gpu: {e}"),
        Err(e) => {
            warn(&format!("{e}; recording host metrics only (GPU columns stay empty)"));
            Ok(None)
        }
    }
}

/// NVML works but the GPU selection is empty: an error where the user asked for GPUs, else a
/// host-only run.
fn no_gpu_found(cfg: &RecordConfig) -> Result<Option<GpuSource>> {
    if cfg.gpus == [GpuSelector::None] {
        return Ok(None);
    }
    if !cfg.gpus.is_empty() && cfg.gpus_from_env {
        warn(
            "CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES name no GPU NVML sees; recording host metrics only",
        );
        return Ok(None);
    }
    if !cfg.gpus.is_empty() {
        return Err(UsageError(format!(
            "--gpus {} matches no GPU NVML sees; give indices, UUIDs or PCI bus ids as `gpumon doctor` lists them",
            gpumon_schema::show_gpu_list(&cfg.gpus)
        ))
        .into());
    }
    if cfg.require_gpu {
        bail!("--require-gpu: NVML loaded from {} but reports no GPU", cfg.nvml_lib);
    }
    warn("NVML reports no GPU; recording host metrics only");
    Ok(None)
}
