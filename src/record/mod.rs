//! The record loop: sub-sample deadlines on a monotonic clock, sources sampled in the loop,
//! sub-samples aggregated into one row per interval, rows handed to the writer thread,
//! signals handled between ticks.

pub mod agg;
mod child;
mod fanout;
mod signals;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::Utc;
use crossbeam_channel::RecvTimeoutError;

use crate::record::agg::Aggregator;
use crate::schema::catalog::{Field, Source};
use crate::schema::files::Format;
use crate::schema::files::OutputSet;
use crate::schema::row::{GpuProc, Row, Selection, Tick, Value};
use crate::schema::run::{RunMeta, RunStats};
use crate::sink::Target;
use crate::sink::files;
use crate::sink::prom::Exporter;
use crate::sink::writer::{Writer, WriterConfig};
use crate::source::cgroup::CgroupSource;
use crate::source::gpu::{GpuSelector, GpuSource};
use crate::source::host::HostSource;
use crate::source::job::PidSet;
use crate::util::error::UsageError;
use crate::util::status;
use crate::util::warn::{warn, warn_once};
use child::Job;
use fanout::{Outputs, procs_selection, procs_target};
use signals::Signal;

/// Validated settings of one `gpumon record` run (built by the CLI layer).
#[derive(Debug, Clone)]
pub struct RecordConfig {
    /// Time between output rows.
    pub interval: Duration,
    /// Time between sub-samples; `interval` is a whole multiple of it.
    pub sample_every: Duration,
    /// Output file or stdout; None when only serving metrics (`--listen` without `-o`).
    pub target: Option<Target>,
    /// Serve the latest tick as Prometheus metrics on this address.
    pub listen: Option<std::net::SocketAddr>,
    pub format: Format,
    pub selection: Selection,
    pub duration: Option<Duration>,
    pub count: Option<u64>,
    pub gpus: Vec<GpuSelector>,
    pub nvml_lib: String,
    pub require_gpu: bool,
    pub flush: Duration,
    pub rotate_size: Option<u64>,
    pub rotate_every: Option<Duration>,
    pub keep: Option<usize>,
    pub max_total: Option<u64>,
    /// Rows kept in memory while the output cannot be written.
    pub max_backlog: usize,
    pub quiet: bool,
    pub verbose: bool,
    pub command_line: String,
    /// The GPU selection came from CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES, not `--gpus`.
    pub gpus_from_env: bool,
    /// Command to start and record (`record -- CMD ARGS`).
    pub wrap: Vec<String>,
    /// Already running process to follow with its descendants.
    pub pid: Option<u32>,
    /// With `--pid`: keep recording after the followed tree is gone.
    pub keep_going: bool,
    /// Write one row per (tick, GPU, process) beside the main output.
    pub processes: bool,
}

/// How a run ended.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    pub stats: RunStats,
    /// The wrapped command's exit code (128 + signal when killed), which gpumon exits with.
    pub job_exit: Option<i32>,
}

/// Record until the count or duration is reached, a signal arrives, or the job ends.
pub fn run(cfg: &RecordConfig) -> Result<Outcome> {
    let signals = signals::install()?;
    if let Some(Target::File(p)) = &cfg.target {
        recover_leftovers(&OutputSet::new(p))?;
    }
    let needs_host = cfg.selection.fields().any(|f| f.def().source == Source::Host);
    let mut host = if needs_host { Some(HostSource::new()?) } else { None };
    let needs_cgroup = cfg.selection.fields().any(|f| f.def().source == Source::Cgroup);
    let mut cgroup = if needs_cgroup { CgroupSource::detect() } else { None };
    if needs_cgroup && cgroup.is_none() {
        warn("no cgroup found for gpumon: cgroup.* columns stay empty");
    }
    if cfg.verbose
        && let Some(c) = &cgroup
    {
        eprintln!("gpumon: {}", c.describe());
    }
    let job_pids: Option<PidSet> = (!cfg.wrap.is_empty() || cfg.pid.is_some()).then(PidSet::default);
    let mut gpu = open_gpus(cfg, job_pids.clone())?;
    let hostname: Arc<str> = sysinfo::System::host_name().unwrap_or_else(|_| "unknown".into()).into();

    let meta = RunMeta {
        hostname: hostname.to_string(),
        interval_s: cfg.interval.as_secs_f64(),
        command: cfg.command_line.clone(),
        start: Utc::now(),
        driver_version: gpu.as_ref().and_then(GpuSource::driver_version),
    };
    let writer = cfg
        .target
        .as_ref()
        .map(|t| Writer::spawn(writer_config(cfg, t, cfg.format, &cfg.selection, &meta)))
        .transpose()?;
    // Per-process rows go beside the main file, Parquet or CSV like it.
    let procs_format = if cfg.format == Format::Parquet { Format::Parquet } else { Format::Csv };
    let procs = cfg
        .target
        .as_ref()
        .filter(|_| cfg.processes)
        .and_then(procs_target)
        .map(|t| Writer::spawn(writer_config(cfg, &t, procs_format, &procs_selection(), &meta)))
        .transpose()?;
    let exporter = cfg.listen.map(|addr| Exporter::start(addr, &cfg.selection, &meta)).transpose()?;
    let mut outputs = Outputs::new(writer, procs, exporter);
    // Start the job last, so nothing it does goes unrecorded for lack of a ready writer.
    let mut job = match (&cfg.wrap[..], cfg.pid) {
        ([], None) => None,
        ([], Some(pid)) => Some(Job::follow(pid)?),
        (argv, _) => Some(Job::spawn(argv)?),
    };
    if let (Some(j), Some(p)) = (job.as_mut(), job_pids.as_ref()) {
        j.share_pids(p.clone());
    }
    let target_name = cfg.target.as_ref().map_or_else(|| "metrics only".to_string(), ToString::to_string);
    let show_status = status::enable(cfg.quiet);

    let per_row = (cfg.interval.as_nanos() / cfg.sample_every.as_nanos().max(1)).max(1) as u64;
    let mut agg = Aggregator::new();
    // The output row that the aggregator's pending sub-samples belong to.
    let mut pending_row: Option<u64> = None;
    // The next output row expected; rows skipped over are counted as missed.
    let mut next_row: u64 = 0;
    let mut pending_missed: u64 = 0;
    let mut last_sub: Option<Tick> = None;
    let budget = cfg.sample_every.mul_f64(0.8);

    let mut stats = RunStats::default();
    let start = Instant::now();
    let mut m: u64 = 0;
    'run: loop {
        m += 1;
        let deadline = start + cfg.sample_every.mul_f64(m as f64);
        if cfg.duration.is_some_and(|d| deadline.duration_since(start) > d) {
            break;
        }
        loop {
            let now = Instant::now();
            let sig = if deadline > now {
                match signals.recv_timeout(deadline - now) {
                    Ok(s) => Some(s),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => {
                        Some(Signal::Stop { signo: libc::SIGTERM, from_terminal: false })
                    }
                }
            } else {
                signals.try_recv().ok()
            };
            match sig {
                // A wrapped command is asked to stop first; the run ends when it has.
                Some(Signal::Stop { signo, from_terminal }) => match job.as_mut().filter(|j| j.is_wrapped()) {
                    Some(j) => j.forward(signo, from_terminal),
                    None => break 'run,
                },
                Some(Signal::Rotate) => outputs.rotate(),
                None => break,
            }
        }
        let lateness = Instant::now().saturating_duration_since(deadline);
        if lateness > cfg.sample_every / 2 {
            stats.late += 1;
            // Skip the deadlines that already passed instead of bunching samples together.
            m += (lateness.as_nanos() / cfg.sample_every.as_nanos().max(1)) as u64;
            warn_once(
                "late-tick",
                &format!(
                    "a sample started {} ms late (the machine or a GPU query was slow); later samples keep their schedule, late ones are counted",
                    lateness.as_millis()
                ),
            );
        }

        // Sub-sample m belongs to output row (m - 1) / per_row. A skip may leave the pending row
        // incomplete (emitted as is, with fewer `samples`) and whole rows empty (counted in `missed`).
        let row = (m - 1) / per_row;
        if pending_row.is_some_and(|p| p != row) {
            if let Some(last) = &last_sub
                && let Some(t) = agg.take(last)
            {
                emit(t, &mut outputs, job_pids.as_ref(), &mut pending_missed, &mut stats);
            }
            next_row = pending_row.map_or(next_row, |p| p + 1);
        }
        if row > next_row {
            pending_missed += row - next_row;
            stats.missed += row - next_row;
            next_row = row;
        }
        let sub = sample_tick(
            &cfg.selection,
            &hostname,
            Sources { host: host.as_mut(), cgroup: cgroup.as_mut(), job: job.as_mut(), gpu: gpu.as_mut() },
            m,
            budget,
        );
        agg.push(&sub);
        pending_row = Some(row);
        if m.is_multiple_of(per_row) {
            next_row = row + 1;
            if let Some(t) = agg.take(&sub) {
                let util = status_util(&t);
                emit(t, &mut outputs, job_pids.as_ref(), &mut pending_missed, &mut stats);
                if show_status {
                    let (file, bytes) = outputs.file_status();
                    status::draw(&format!(
                        "gpumon {}  ticks {}  late {}  {} {}  {}",
                        fmt_elapsed(start.elapsed()),
                        stats.ticks,
                        stats.late,
                        if file.is_empty() { target_name.clone() } else { file },
                        fmt_bytes(bytes),
                        util
                    ));
                }
            }
            pending_row = None;
        }
        last_sub = Some(sub);
        if outputs.fatal() {
            break;
        }
        if cfg.count.is_some_and(|c| stats.ticks >= c) {
            break;
        }
        if let Some(j) = job.as_mut()
            && j.finished()?
            && (!cfg.keep_going || j.is_wrapped())
        {
            break;
        }
    }
    // A partial interval at the end is still data.
    if let Some(last) = &last_sub
        && let Some(t) = agg.take(last)
    {
        emit(t, &mut outputs, job_pids.as_ref(), &mut pending_missed, &mut stats);
    }
    status::clear_line();
    // A wrapped command outlives the recording only when the count or duration ran out first;
    // gpumon then waits for it, as a wrapper should.
    let job_exit = match job.as_mut() {
        Some(j) => j.wait()?,
        None => None,
    };
    if let Some(code) = job_exit {
        outputs.add_metadata("gpumon.job.exit_code", &code.to_string());
    }
    if !cfg.wrap.is_empty() {
        outputs.add_metadata("gpumon.job.command", &cfg.wrap.join(" "));
    }
    let report = outputs.finish().with_context(|| format!("finishing {target_name}"))?;
    if stats.late > 0 || stats.dropped > 0 || report.lost > 0 {
        warn(&format!(
            "{} ticks recorded, {} samples late, {} ticks missed, {} dropped by a full queue, {} lost to write errors",
            stats.ticks, stats.late, stats.missed, stats.dropped, report.lost
        ));
    }
    if cfg.verbose {
        let files: Vec<String> = report.files.iter().map(|f| f.display().to_string()).collect();
        eprintln!(
            "gpumon: {} ticks written to {}",
            stats.ticks,
            if files.is_empty() { target_name.clone() } else { files.join(", ") }
        );
    }
    Ok(Outcome { stats, job_exit })
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

/// Hand one output row set to the outputs, carrying the count of ticks missed just before it.
fn emit(mut t: Tick, outputs: &mut Outputs, job: Option<&PidSet>, pending_missed: &mut u64, stats: &mut RunStats) {
    for r in &mut t.rows {
        r.set(Field::Missed, Value::U(*pending_missed));
    }
    stats.ticks += 1;
    // A read guard, not a copy: only this thread writes the set, and only between ticks.
    let pids = job.and_then(|j| j.read().ok());
    let in_job = |pid: u32| pids.as_ref().is_some_and(|p| p.contains(&pid));
    let in_job: Option<&dyn Fn(u32) -> bool> = if pids.is_some() { Some(&in_job) } else { None };
    match outputs.send(t, stats, in_job) {
        Ok(()) => *pending_missed = 0,
        Err(_) => {
            stats.dropped += 1;
            *pending_missed += 1;
            warn_once("queue-full", "the writer is falling behind; ticks are being dropped and counted");
        }
    }
}

/// Turn what an earlier crash left in this output set into valid files before writing new ones.
fn recover_leftovers(set: &OutputSet) -> Result<()> {
    let done = files::recover_set(set).with_context(|| format!("recovering {}", set.base().display()))?;
    for (path, rows) in &done.rebuilt {
        warn(&format!("recovered {rows} rows a previous run left in its journal into {}", path.display()));
    }
    for (path, cut) in &done.trimmed {
        warn(&format!("cut a torn last line ({cut} bytes) from {}", path.display()));
    }
    for (path, why) in &done.kept {
        warn(&format!("kept the damaged journal as {}: {why}", path.display()));
    }
    Ok(())
}

fn open_gpus(cfg: &RecordConfig, job: Option<PidSet>) -> Result<Option<GpuSource>> {
    match GpuSource::open(&cfg.nvml_lib, &cfg.gpus, &cfg.selection, cfg.processes, job) {
        Ok(src) => {
            let found: Vec<_> = src.gpus().collect();
            if found.is_empty() {
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
                    return Err(UsageError(format!("--gpus {:?} matches no visible GPU", cfg.gpus)).into());
                }
                if cfg.require_gpu {
                    bail!("--require-gpu: NVML loaded from {} but reports no GPU", cfg.nvml_lib);
                }
                warn("NVML reports no GPU; recording host metrics only");
                return Ok(None);
            }
            if cfg.verbose {
                for g in &found {
                    eprintln!("gpumon: recording GPU {} {} {} ({})", g.index, g.name, g.uuid, g.bus_id);
                }
            }
            Ok(Some(src))
        }
        Err(e) if cfg.require_gpu => Err(anyhow::Error::new(e).context("--require-gpu")),
        Err(e) => {
            warn(&format!("{e}; recording host metrics only (GPU columns stay empty)"));
            Ok(None)
        }
    }
}

/// The sources one tick reads, each present only when something selected needs it.
struct Sources<'a> {
    host: Option<&'a mut HostSource>,
    cgroup: Option<&'a mut CgroupSource>,
    job: Option<&'a mut Job>,
    gpu: Option<&'a mut GpuSource>,
}

/// Sample every source once. Host values are read once and repeated on each GPU row.
fn sample_tick(sel: &Selection, hostname: &Arc<str>, src: Sources<'_>, seq: u64, budget: Duration) -> Tick {
    let ts = Utc::now();
    let mut host_row = Row::default();
    host_row.set(Field::Host, Value::S(hostname.clone()));
    if let Some(h) = src.host {
        h.sample(&mut host_row);
    }
    if let Some(c) = src.cgroup {
        c.sample(&mut host_row);
    }
    // The job's tree is read before the GPUs so `job.gpu_memory` uses this tick's PIDs.
    if let Some(j) = src.job {
        j.sample(&mut host_row);
    }
    let mut rows = Vec::new();
    let mut procs: Vec<GpuProc> = Vec::new();
    if let Some(g) = src.gpu {
        g.sample(seq, budget, &mut rows, &mut procs);
    }
    if rows.is_empty() {
        rows.push(host_row);
    } else {
        let host_fields: Vec<Field> = sel.fields().filter(|f| f.def().source != Source::Gpu).collect();
        for r in &mut rows {
            for &f in &host_fields {
                r.set(f, host_row.get(f).clone());
            }
        }
    }
    Tick { ts, seq, rows, procs }
}

fn status_util(tick: &Tick) -> String {
    let utils: Vec<String> =
        tick.rows.iter().filter_map(|r| r.get(Field::UtilGpu).as_u64()).map(|u| format!("{u}%")).collect();
    if utils.is_empty() { String::new() } else { format!("GPU {}", utils.join(" ")) }
}

fn fmt_elapsed(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn fmt_bytes(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30)),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1u32 << 20)),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}
