//! The record loop: absolute deadlines on a monotonic clock, sources sampled in the loop,
//! ticks handed to a writer thread over a bounded queue, signals handled between ticks.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::Utc;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError, bounded};

use crate::catalog::{Field, Source};
use crate::error::UsageError;
use crate::sample::{Row, Selection, Tick};
use crate::sink::{self, Format, RunMeta, Target};
use crate::source::gpu::{GpuSelector, GpuSource};
use crate::source::host::HostSource;
use crate::status;
use crate::warn::{warn, warn_once};

/// Validated settings of one `gpumon record` run (built by the CLI layer).
#[derive(Debug, Clone)]
pub struct RecordConfig {
    pub interval: Duration,
    pub target: Target,
    pub format: Format,
    pub selection: Selection,
    pub duration: Option<Duration>,
    pub count: Option<u64>,
    pub gpus: Vec<GpuSelector>,
    pub nvml_lib: String,
    pub require_gpu: bool,
    pub flush: Duration,
    pub quiet: bool,
    pub verbose: bool,
    pub command_line: String,
}

/// Ticks that may wait for the writer before new ones are dropped (and counted).
const QUEUE_TICKS: usize = 1024;

/// What a finished run reports.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunStats {
    pub ticks: u64,
    pub late: u64,
    pub missed: u64,
    pub dropped: u64,
}

/// Record until the count or duration is reached or a signal arrives. Returns the run's figures.
pub fn run(cfg: &RecordConfig) -> Result<RunStats> {
    let stop_rx = install_signal_handlers()?;
    let needs_host = cfg.selection.fields().any(|f| f.def().source == Source::Host);
    let mut host = if needs_host { Some(HostSource::new()?) } else { None };
    let mut gpu = open_gpus(cfg)?;
    let hostname: Arc<str> = sysinfo::System::host_name().unwrap_or_else(|_| "unknown".into()).into();

    let start_wall = Utc::now();
    let meta = RunMeta {
        hostname: hostname.to_string(),
        interval_s: cfg.interval.as_secs_f64(),
        command: cfg.command_line.clone(),
        start: start_wall,
        driver_version: gpu.as_ref().and_then(GpuSource::driver_version),
    };
    let sink = sink::open(cfg.format, &cfg.target, &cfg.selection, &meta)?;
    let stream = cfg.target == Target::Stdout;
    let writer = Writer::spawn(sink, if stream { Duration::ZERO } else { cfg.flush });
    let show_status = status::enable(cfg.quiet);

    let mut stats = RunStats::default();
    let start = Instant::now();
    let mut n: u64 = 0;
    loop {
        n += 1;
        let deadline = start + cfg.interval.mul_f64(n as f64);
        if let Some(d) = cfg.duration
            && deadline.duration_since(start) > d
        {
            break;
        }
        let now = Instant::now();
        if deadline > now {
            match stop_rx.recv_timeout(deadline - now) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
        } else if stop_rx.try_recv().is_ok() {
            break;
        }
        let woke = Instant::now();
        let lateness = woke.saturating_duration_since(deadline);
        if lateness > cfg.interval / 2 {
            stats.late += 1;
            // Skip the deadlines that already passed instead of bunching ticks together.
            let skipped = (lateness.as_nanos() / cfg.interval.as_nanos().max(1)) as u64;
            stats.missed += skipped;
            n += skipped;
            warn_once(
                "late-tick",
                &format!(
                    "tick {} started {} ms late (the machine or a GPU query was slow); later ticks keep their schedule, late ticks are counted",
                    stats.ticks + 1,
                    lateness.as_millis()
                ),
            );
        }

        let tick = sample_tick(&cfg.selection, &hostname, host.as_mut(), gpu.as_mut(), n);
        let util_now = status_util(&tick);
        stats.ticks += 1;
        if let Err(e) = writer.send(tick) {
            match e {
                TrySendError::Full(_) => {
                    stats.dropped += 1;
                    warn_once("queue-full", "the writer is falling behind; ticks are being dropped and counted");
                }
                TrySendError::Disconnected(_) => break,
            }
        }
        if writer.failed() {
            break;
        }
        if show_status {
            status::draw(&format!(
                "gpumon {}  ticks {}  late {}  {} {}  {}",
                fmt_elapsed(start.elapsed()),
                stats.ticks,
                stats.late,
                cfg.target,
                fmt_bytes(writer.bytes()),
                util_now
            ));
        }
        if cfg.count.is_some_and(|c| stats.ticks >= c) {
            break;
        }
    }
    status::clear_line();
    writer.finish().with_context(|| format!("finishing {}", cfg.target))?;
    if stats.late > 0 || stats.dropped > 0 {
        warn(&format!(
            "{} ticks recorded, {} late, {} deadlines missed, {} dropped",
            stats.ticks, stats.late, stats.missed, stats.dropped
        ));
    }
    if cfg.verbose {
        eprintln!("gpumon: {} ticks written to {}", stats.ticks, cfg.target);
    }
    Ok(stats)
}

fn open_gpus(cfg: &RecordConfig) -> Result<Option<GpuSource>> {
    match GpuSource::open(&cfg.nvml_lib, &cfg.gpus) {
        Ok(src) => {
            let found: Vec<_> = src.gpus().collect();
            if found.is_empty() {
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

/// Sample every source once. Host values are read once and repeated on each GPU row.
fn sample_tick(
    sel: &Selection,
    hostname: &Arc<str>,
    host: Option<&mut HostSource>,
    gpu: Option<&mut GpuSource>,
    seq: u64,
) -> Tick {
    let ts = Utc::now();
    let mut host_row = Row::default();
    host_row.set(Field::Host, crate::sample::Value::S(hostname.clone()));
    if let Some(h) = host {
        h.sample(&mut host_row);
    }
    let mut rows = Vec::new();
    if let Some(g) = gpu {
        g.sample(sel, &mut rows);
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
    Tick { ts, seq, rows }
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

/// SIGINT/SIGTERM: the first one ends the run after the current tick (message on the channel);
/// a second one exits at once with 128 + signal number.
fn install_signal_handlers() -> Result<Receiver<()>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let (tx, rx) = bounded(4);
    let seen = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, seen.clone())
            .context("installing signal handlers")?;
        signal_hook::flag::register(sig, seen.clone()).context("installing signal handlers")?;
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).context("installing signal handlers")?;
    thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                let _ = tx.try_send(());
            }
        })
        .context("starting the signal thread")?;
    Ok(rx)
}

/// The writer thread: owns the sink, flushes on its own schedule, never blocks the sampler.
struct Writer {
    tx: Sender<Tick>,
    handle: thread::JoinHandle<Result<()>>,
    bytes: Arc<AtomicU64>,
    failed: Arc<AtomicBool>,
}

impl Writer {
    fn spawn(mut sink: Box<dyn sink::Sink>, flush_every: Duration) -> Writer {
        let (tx, rx) = bounded::<Tick>(QUEUE_TICKS);
        let bytes = Arc::new(AtomicU64::new(0));
        let failed = Arc::new(AtomicBool::new(false));
        let (b, f) = (bytes.clone(), failed.clone());
        let handle = thread::spawn(move || -> Result<()> {
            let r = writer_loop(&mut *sink, &rx, flush_every, &b);
            if r.is_err() {
                f.store(true, Ordering::Relaxed);
                // Keep draining so the sampler never blocks; the error is reported at the end.
                while rx.recv().is_ok() {}
                return r;
            }
            sink.finish()
        });
        Writer { tx, handle, bytes, failed }
    }

    fn send(&self, tick: Tick) -> Result<(), TrySendError<Tick>> {
        self.tx.try_send(tick)
    }

    fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    fn finish(self) -> Result<()> {
        drop(self.tx);
        match self.handle.join() {
            Ok(r) => r,
            Err(_) => bail!("the writer thread panicked"),
        }
    }
}

fn writer_loop(sink: &mut dyn sink::Sink, rx: &Receiver<Tick>, flush_every: Duration, bytes: &AtomicU64) -> Result<()> {
    let mut last_flush = Instant::now();
    let mut pending = false;
    loop {
        let msg = if pending {
            let wait = (last_flush + flush_every).saturating_duration_since(Instant::now());
            rx.recv_timeout(wait)
        } else {
            rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
        };
        match msg {
            Ok(tick) => {
                sink.write_tick(&tick)?;
                pending = true;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        }
        if pending && last_flush.elapsed() >= flush_every {
            sink.flush()?;
            bytes.store(sink.bytes_written(), Ordering::Relaxed);
            last_flush = Instant::now();
            pending = false;
        }
    }
}
