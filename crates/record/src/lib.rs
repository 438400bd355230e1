//! The record loop: sub-sample deadlines on a monotonic clock, sources sampled in the loop,
//! sub-samples aggregated into one row per interval, rows handed to the writer thread,
//! signals handled between ticks. setup.rs opens a run, tick.rs holds one tick's pieces; the
//! loop and the run's end are here.

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod agg;
pub mod alloc;
mod child;
mod clock;
mod control;
mod fanout;
mod live;
mod options;
mod progress;
mod relay;
mod rundir;
mod setup;
mod signals;
mod tick;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossbeam_channel::RecvTimeoutError;

use control::{MARKS_PER_S, MAX_MARK_BYTES, MAX_MARKS};
use gpumon_schema::catalog::Field;
use gpumon_schema::{
    Format, GpuSelector, JOB_COMMAND_KEY, JOB_END_KEY, JOB_EXIT_CODE_KEY, JOB_LEFT_RUNNING_KEY,
    RunStats, Selection, Tick,
};
use gpumon_sink::MARKS_KEY;
use gpumon_sink::Target;
use gpumon_source::GpuSource;
use gpumon_util::status;
use gpumon_util::{warn, warn_once};
use signals::{Signal, Signals};
use tick::{Begun, Emitter, Rows, Sources};

pub use options::{fill_template, gpus_or_env, job_of, selection};

/// Validated settings of one `gpumon record` run (built by the CLI layer).
#[derive(Debug, Clone)]
pub struct RecordConfig {
    /// Time between output rows.
    pub interval: Duration,
    /// Time between sub-samples; `interval` is a whole multiple of it.
    pub sample_every: Duration,
    /// Output file or stdout; None when only serving metrics (`--listen` without `-o`).
    pub target: Option<Target>,
    /// The `host` value of every row (`--host`, else the system's host name).
    pub host: String,
    /// Serve the latest tick as Prometheus metrics on this address.
    pub listen: Option<std::net::SocketAddr>,
    /// The output's format.
    pub format: Format,
    /// The fields each row holds.
    pub selection: Selection,
    /// Stop after this long (`--duration`).
    pub duration: Option<Duration>,
    /// Stop after this many ticks (`--count`).
    pub count: Option<u64>,
    /// Only these GPUs, by index or UUID (empty: all).
    pub gpus: Vec<GpuSelector>,
    /// The NVML library to load.
    pub nvml_lib: String,
    /// Fail instead of recording host-only rows when NVML or a GPU is missing.
    pub require_gpu: bool,
    /// Longest time written data waits in memory before it is written and fsynced.
    pub flush: Duration,
    /// Start a new file when the current one reaches this size.
    pub rotate_size: Option<u64>,
    /// Start a new file on wall-clock boundaries of this period.
    pub rotate_every: Option<Duration>,
    /// Keep at most this many files of the set; the oldest are deleted first.
    pub keep: Option<usize>,
    /// Keep the files of the set under this total size; the oldest are deleted first.
    pub max_total: Option<u64>,
    /// Rows kept in memory while the output cannot be written.
    pub max_backlog: usize,
    /// No live status line, and no closing line saying what was written.
    pub quiet: bool,
    /// Debug detail on stderr (GPUs found, files written).
    pub verbose: bool,
    /// gpumon's own command line, kept in the file's metadata.
    pub command_line: String,
    /// The job this recording belongs to (`--job-id` or the launcher's environment).
    pub job: Option<gpumon_schema::JobId>,
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
    /// Listen for phase marks (`gpumon mark`) on a control socket; off with `--no-marks`.
    pub marks: bool,
    /// Continue an output set that already holds files (`--append`) instead of refusing it.
    pub append: bool,
}

/// How a run ended.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    /// What the run recorded (ticks, rows, missed deadlines, ...).
    pub stats: RunStats,
    /// The wrapped command's exit code (128 + signal when killed), which gpumon exits with.
    pub job_exit: Option<i32>,
}

/// Record until the count or duration is reached, a signal arrives, or the job ends.
pub fn run(cfg: &RecordConfig) -> Result<Outcome> {
    if let Some(prog) = cfg.wrap.first() {
        child::check_startable(prog)?;
    }
    let signals = signals::install()?;
    // One writer per output, held until the run ends (sink::lock), before anything is touched.
    let mut locks = fanout::lock_outputs(cfg.target.as_ref(), cfg.processes)?;
    // With GPUs the loop moves between threads (relay.rs), and a thread stuck in a driver call is
    // left behind when the run ends, not waited for: what the loop holds must live as long as the
    // process, so the run's settings do (one small copy per process).
    let cfg: &'static RecordConfig = Box::leak(Box::new(cfg.clone()));
    let mut rec = Recorder::open(cfg)?;
    let _locks = match rec.sources.gpu.as_ref().map(GpuSource::reads) {
        Some(reads) => {
            let (r, locks) = relay::run(rec, signals, locks, reads)?;
            rec = r;
            locks
        }
        None => {
            rec.run_ticks(&signals, &mut locks)?;
            locks
        }
    };
    // The outputs are closed before the locks go.
    rec.finish()
}

/// Where the loop stands (it moves with the loop from thread to thread): the last sub-sample
/// number, the schedule's origin, and how long a tick's GPU reads may take.
struct Cursor {
    m: u64,
    start: Instant,
    budget: Duration,
}

/// A sub-sample between its two halves: taken before its GPU reads, finished after them.
struct Pending {
    m: u64,
    /// The output row it belongs to.
    row: u64,
    /// When its GPU reads start (their budget runs from here).
    at: Instant,
    begun: Begun,
    /// The run's last sub-sample, taken when a stop arrived between deadlines: the partial interval
    /// since the last row (and the work the job reported in it) is data too.
    last: bool,
}

/// One run in progress: its sources, the rows being aggregated, and the outputs with the
/// run's counters. Made by [`Recorder::open`] (setup.rs).
struct Recorder<'a> {
    cfg: &'a RecordConfig,
    sources: Sources,
    hostname: Arc<str>,
    rows: Rows,
    out: Emitter,
    /// The control socket for phase marks, when the run has one.
    control: Option<control::Control>,
    /// The output as the user named it, for messages.
    target_name: String,
    show_status: bool,
}

impl Recorder<'_> {
    /// The tick loop on the calling thread (a run without GPUs): sub-sample m is due at
    /// start + m * sample_every on the monotonic clock, whatever earlier ticks cost; signals are
    /// handled while waiting for it.
    fn run_ticks(&mut self, signals: &Signals, locks: &mut fanout::Locks) -> Result<()> {
        let mut cur = self.cursor(signals);
        while let Some(p) = self.begin_tick(&mut cur, signals) {
            if !self.end_tick(p, &cur, locks)? {
                break;
            }
        }
        self.close_rows();
        Ok(())
    }

    /// The loop's starting point (now); the signal wait also watches the idle control socket.
    fn cursor(&self, signals: &Signals) -> Cursor {
        signals.watch(self.control.as_ref().and_then(control::Control::idle_fd));
        Cursor { m: 0, start: Instant::now(), budget: self.cfg.sample_every.mul_f64(0.8) }
    }

    /// Wait for the next sub-sample's deadline and take its part before the GPU reads: the rows
    /// it completes or skips are emitted, the host is read. None when the run is over.
    fn begin_tick(&mut self, cur: &mut Cursor, signals: &Signals) -> Option<Pending> {
        cur.m += 1;
        let deadline = cur.start + self.cfg.sample_every.mul_f64(cur.m as f64);
        if self.cfg.duration.is_some_and(|d| deadline.duration_since(cur.start) > d) {
            return None;
        }
        let stopped = !self.wait_until(deadline, signals);
        // A stop before the first deadline has no interval to finish.
        if stopped && cur.m == 1 {
            return None;
        }
        if !stopped {
            cur.m = self.skip_late(deadline, cur.m);
        }
        let row = self.rows.row_of(cur.m);
        let (left, missed) = self.rows.enter(row);
        if let Some(t) = left {
            self.out.emit(t);
        }
        self.out.miss(missed);
        let begun = self.sources.begin(&self.hostname, self.rows.fields_added());
        Some(Pending { m: cur.m, row, at: Instant::now(), begun, last: stopped })
    }

    /// The rest of sub-sample `p` once its GPUs were read: its rows made, aggregated and emitted.
    /// False when the run is over after it.
    fn end_tick(&mut self, p: Pending, cur: &Cursor, locks: &mut fanout::Locks) -> Result<bool> {
        let mut events = Vec::new();
        let sub = self.sources.finish(&self.cfg.selection, p.begun, p.m, cur.budget, &mut events);
        if !events.is_empty() {
            self.out.outputs.send_events(events, &self.hostname);
        }
        if let Some(t) = self.rows.push(sub, p.row, p.m) {
            // Only a status line shows it (not with -q or off a terminal).
            let util = if self.show_status { status_util(&t) } else { String::new() };
            self.out.emit(t);
            if self.show_status {
                self.draw_status(cur.start, &util);
            }
        }
        locks.check();
        Ok(!p.last && !self.should_end()?)
    }

    /// A partial interval at the end is still data.
    fn close_rows(&mut self) {
        if let Some(t) = self.rows.rest() {
            self.out.emit(t);
        }
    }

    /// Wait for `deadline`, acting on signals meanwhile; false when a stop ends the run now.
    fn wait_until(&mut self, deadline: Instant, signals: &Signals) -> bool {
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
                // A wrapped command is asked to stop first; the run ends when it has. A second stop
                // while it runs ends the recording (the file is finished) and leaves the job, said so.
                Some(Signal::Stop { signo, from_terminal }) => {
                    match self.sources.job.as_mut().filter(|j| j.is_wrapped()) {
                        Some(j) if j.stopping => {
                            j.abandon(signo);
                            return false;
                        }
                        Some(j) => {
                            j.forward(signo, from_terminal);
                            signals.waiting_for_job();
                            if let Some(pid) = j.pid() {
                                eprintln!(
                                    "gpumon: waiting for the job (pid {pid}) to exit; recording until it does \
                                     (a second Ctrl-C or SIGTERM stops recording now)"
                                );
                            }
                        }
                        None => return false,
                    }
                }
                Some(Signal::Rotate) => self.out.outputs.rotate(),
                // Somebody connected to the idle control socket: its thread starts now.
                None if signals.take_extra() => {
                    signals.watch(None);
                    if let Some(c) = &mut self.control {
                        c.serve();
                    }
                }
                None => return true,
            }
        }
    }

    /// Count a sample that starts late and skip the deadlines that already passed instead of
    /// bunching samples together; returns the sub-sample number to take now.
    fn skip_late(&mut self, deadline: Instant, m: u64) -> u64 {
        let every = self.cfg.sample_every;
        let lateness = Instant::now().saturating_duration_since(deadline);
        if lateness <= every / 2 {
            return m;
        }
        self.out.stats.late += 1;
        warn_once(
            "late-tick",
            &format!(
                "a sample started {} ms late (the machine or a GPU query was slow); later samples keep their schedule, late ones are counted",
                lateness.as_millis()
            ),
        );
        m + (lateness.as_nanos() / every.as_nanos().max(1)) as u64
    }

    fn draw_status(&self, start: Instant, util: &str) {
        // Most telling first: the line is cut at the terminal's width.
        let (file, bytes) = self.out.outputs.file_status();
        let file =
            std::path::Path::new(&file).file_name().map(|n| n.to_string_lossy().into_owned());
        status::draw(&format!(
            "gpumon {}  ticks {}  late {}  {}  {} {}",
            fmt_elapsed(start.elapsed()),
            self.out.stats.ticks,
            self.out.stats.late,
            util,
            file.unwrap_or_else(|| self.target_name.clone()),
            // Until the first flush there is nothing on disk: the ticks held are what there is.
            if bytes == 0 {
                format!("{} ticks buffered", self.out.stats.ticks)
            } else {
                fmt_bytes(bytes)
            },
        ));
    }

    /// Whether the run is over after this tick: the writer failed for good, the count is
    /// reached, or the job ended (a followed one only without `--keep-going`).
    fn should_end(&mut self) -> Result<bool> {
        if self.out.outputs.fatal() || self.cfg.count.is_some_and(|c| self.out.stats.ticks >= c) {
            return Ok(true);
        }
        Ok(match self.sources.job.as_mut() {
            Some(j) => j.finished()? && (!self.cfg.keep_going || j.is_wrapped()),
            None => false,
        })
    }

    /// Wait for a wrapped command, close the outputs, and report how the run went.
    fn finish(mut self) -> Result<Outcome> {
        status::clear_line();
        // A wrapped command outlives the recording only when the count or duration ran out first;
        // gpumon then waits for it, as a wrapper should.
        let job_exit = match self.sources.job.as_mut() {
            Some(j) => j.wait()?,
            None => None,
        };
        let left_running = self.sources.job.as_ref().and_then(child::Job::left_running);
        let gpus = self.sources.gpu.as_ref().map_or(0, |g| g.gpus().count());
        let (cfg, outputs, stats) = (self.cfg, self.out.outputs, self.out.stats);
        if let Some(c) = self.control.take() {
            if let Some(marks) = c.marks.json() {
                outputs.add_main_metadata(MARKS_KEY, &marks);
            }
            let dropped = c.marks.dropped();
            if dropped > 0 {
                outputs.add_main_metadata("gpumon.marks_dropped", &dropped.to_string());
                warn(&format!(
                    "{dropped} marks refused (too many or too fast: {} kept; at most {MAX_MARKS} and {} KiB a run, \
                     {MARKS_PER_S} a second)",
                    c.marks.count(),
                    MAX_MARK_BYTES >> 10
                ));
            }
            drop(c);
        }
        match (job_exit, left_running) {
            (_, Some(pid)) => outputs.add_metadata(JOB_LEFT_RUNNING_KEY, &pid.to_string()),
            (Some(code), None) => {
                outputs.add_metadata(JOB_EXIT_CODE_KEY, &code.to_string());
                let end = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
                outputs.add_metadata(JOB_END_KEY, &end);
            }
            (None, None) => {}
        }
        if !cfg.wrap.is_empty() {
            // Quoted as a shell takes it back (`sh -c 'sleep 1; exit 3'`), the words joined when a word
            // cannot be quoted (a NUL).
            let words = cfg.wrap.iter().map(String::as_str);
            let command = shlex::try_join(words).unwrap_or_else(|_| cfg.wrap.join(" "));
            outputs.add_metadata(JOB_COMMAND_KEY, &command);
        }
        let target_name = self.target_name;
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
                report.written,
                if files.is_empty() { target_name.clone() } else { files.join(", ") }
            );
        }
        if !cfg.quiet {
            eprintln!("{}", wrote_line(&target_name, &report.files, &stats, gpus));
        }
        Ok(Outcome { stats, job_exit })
    }
}

fn status_util(tick: &Tick) -> String {
    let utils: Vec<String> = tick
        .rows
        .iter()
        .filter_map(|r| r.get(Field::UtilGpu).as_u64())
        .map(|u| format!("{u}%"))
        .collect();
    if utils.is_empty() { String::new() } else { format!("GPU {}", utils.join(" ")) }
}

/// The line a run ends with: `gpumon: wrote run.parquet: 20 rows, 2 GPUs, 2026-01-05
/// 10:00:00 to 10:00:09 UTC (9.0 s), 14.2 KiB`; the size is that of the files still at their paths.
fn wrote_line(target: &str, files: &[std::path::PathBuf], stats: &RunStats, gpus: usize) -> String {
    let names: Vec<String> =
        files.iter().map(|f| f.strip_prefix(".").unwrap_or(f).display().to_string()).collect();
    let names = if names.is_empty() { target.to_string() } else { names.join(", ") };
    let bytes: u64 = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let gpus = match gpus {
        0 => "no GPU".to_string(),
        1 => "1 GPU".to_string(),
        n => format!("{n} GPUs"),
    };
    let span = match (stats.first, stats.last) {
        (Some(a), Some(b)) => {
            let secs = (b - a).num_milliseconds() as f64 / 1000.0;
            format!(
                ", {} to {} UTC ({secs:.1} s)",
                a.format("%Y-%m-%d %H:%M:%S"),
                b.format(if a.date_naive() == b.date_naive() {
                    "%H:%M:%S"
                } else {
                    "%Y-%m-%d %H:%M:%S"
                })
            )
        }
        _ => String::new(),
    };
    let size = if files.is_empty() { String::new() } else { format!(", {}", fmt_bytes(bytes)) };
    // Without an output file (`--listen` alone) the rows went to the metrics endpoint only.
    let verb = if has_output(files, target) { "wrote" } else { "served" };
    format!("gpumon: {verb} {names}: {} rows, {gpus}{span}{size}", stats.rows)
}

/// Whether the run had an output (a file or stdout), not the metrics endpoint alone.
fn has_output(files: &[std::path::PathBuf], target: &str) -> bool {
    !files.is_empty() || target != "metrics only"
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
