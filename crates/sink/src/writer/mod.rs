//! The writer thread: owns the open piece of the output set; flushes on schedule, rotates by size,
//! time or SIGHUP, retires old pieces, and rides out write errors (disk full, EIO, a removed
//! directory) with a bounded backlog, never blocking the sampler.
//!
//! This module holds the handle the loop talks to and the thread's start-up; `state` is the thread's
//! loop, `rotate` the pieces (open, close, rotation, retention), `outage` write errors and the backlog.

mod outage;
mod rotate;
mod state;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{Context, Result, SinkError, SinkErrorKind};
use arrow_array::RecordBatch;
use chrono::{DateTime, Utc};
use crossbeam_channel::{Sender, TrySendError, bounded};

use crate::piece::{Abandoned, PieceFiles};
use crate::{Sink, Target};
use gpumon_schema::{Format, OutputSet, RunMeta, Selection, Tick};

/// Ticks that may wait in the channel for the writer.
const QUEUE_TICKS: usize = 1024;
/// Ticks queued before the sampler wakes the writer (otherwise it wakes to flush): one wake-up per
/// batch instead of one per tick.
const WAKE_TICKS: usize = 32;
/// Rows written but not yet flushed before a flush is forced whatever `--flush` says: bounds what is
/// kept to requeue them (copies of about 1 KiB a row for CSV; Parquet keeps its own Arrow batches),
/// e.g. 512 ticks of 2 GPUs, 2 flushes a second at 1 ms.
const MAX_UNFLUSHED_ROWS: usize = 1024;
/// How often writing is retried during an outage.
const RETRY_EVERY: Duration = Duration::from_secs(2);

/// What the writer needs to know (built by the record layer).
#[derive(Debug, Clone)]
pub struct WriterConfig {
    /// The output's format.
    pub format: Format,
    /// Where the first piece goes (rotated pieces are named after it).
    pub target: Target,
    /// The fields each row holds.
    pub selection: Selection,
    /// The run's metadata, written into each piece where the format has a place for it.
    pub meta: RunMeta,
    /// Longest time data waits before it is flushed and fsynced; zero flushes every tick.
    pub flush: Duration,
    /// Start a new piece once the open one holds this many bytes (`--rotate-size`).
    pub rotate_size: Option<u64>,
    /// Start a new piece on wall-clock boundaries of this period (`--rotate-every`).
    pub rotate_every: Option<Duration>,
    /// Pieces of the set kept at most; the oldest are deleted first (`--keep`).
    pub keep: Option<usize>,
    /// Bytes the set's pieces may hold together; the oldest are deleted first (`--max-total`).
    pub max_total: Option<u64>,
    /// Rows kept in memory while the output cannot be written; later ticks are dropped and counted.
    pub backlog_rows: usize,
    /// Say on stderr when a piece is opened or a rotation is skipped.
    pub verbose: bool,
}

/// Live figures the sampler reads for its status line.
#[derive(Debug, Default)]
pub struct WriterStats {
    /// Bytes the open piece holds so far.
    pub bytes: AtomicU64,
    /// Ticks lost so far (backlog full during an outage).
    pub lost: AtomicU64,
    /// The writer gave up: nothing more can be written.
    pub fatal: AtomicBool,
    /// The open piece's path.
    pub file: Mutex<String>,
}

/// What a finished writer reports.
#[derive(Debug, Default, Clone)]
pub struct WriterReport {
    /// Every piece closed during the run that is still at its path, in order.
    pub files: Vec<PathBuf>,
    /// Ticks written to files (or stdout) and closed there; ticks in files someone removed under
    /// the writer are not among them.
    pub written: u64,
    /// Ticks that could not be kept (backlog full during an outage, or still unwritten at exit).
    pub lost: u64,
}

enum Msg {
    Tick(Tick),
    Rotate,
    Meta(String, String),
}

/// Handle to the writer. Its thread starts when it is first needed: at once when every tick is
/// flushed as it comes (`--flush 0`, stdout) or when ticks come further apart than `--flush`;
/// otherwise with the second tick, which comes within `--flush` of the first, so the first is still
/// made durable in time. A 1-tick run never starts it: `finish` writes the tick and closes the
/// piece on the caller's thread (a thread costs 0.3-0.4 ms of CPU to start and join).
pub struct Writer {
    inner: Mutex<Inner>,
    /// Live figures for the status line, updated by the writer.
    pub stats: Arc<WriterStats>,
    /// Queued ticks that wake the writer (1 when every tick is flushed at once).
    wake_at: usize,
}

enum Inner {
    /// Not started: the state and what was sent to it so far (one tick at most, metadata).
    Waiting(Box<State>, Vec<Msg>),
    Running(Sender<Msg>, thread::JoinHandle<Result<WriterReport>>),
    /// The thread could not be started (the run stops: `stats.fatal`).
    Failed(Option<SinkError>),
}

impl Writer {
    /// Open the first piece (errors here are the caller's: a bad path fails the run at once);
    /// the thread starts now or later (see [`Writer`]).
    pub fn spawn(cfg: WriterConfig) -> Result<Writer> {
        let stats = Arc::new(WriterStats::default());
        let set = match &cfg.target {
            Target::File(p) => Some(OutputSet::new(p)),
            Target::Stdout => None,
        };
        let wake_at =
            if cfg.flush.is_zero() || cfg.target == Target::Stdout { 1 } else { WAKE_TICKS };
        let sparse =
            Duration::try_from_secs_f64(cfg.meta.interval_s).map_or(true, |i| i > cfg.flush);
        let mut state = State::new(cfg, set, stats.clone());
        state.open_piece(Utc::now())?;
        let inner = if wake_at == 1 || sparse {
            let (tx, handle) = launch(Box::new(state), Vec::new())?;
            Inner::Running(tx, handle)
        } else {
            Inner::Waiting(Box::new(state), Vec::new())
        };
        Ok(Writer { inner: Mutex::new(inner), stats, wake_at })
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Start the thread if it waits, handing it what was sent so far.
    fn start(&self, inner: &mut Inner) {
        if !matches!(inner, Inner::Waiting(..)) {
            return;
        }
        let Inner::Waiting(state, queued) = std::mem::replace(inner, Inner::Failed(None)) else {
            return;
        };
        *inner = match launch(state, queued) {
            Ok((tx, handle)) => Inner::Running(tx, handle),
            Err(e) => {
                self.stats.fatal.store(true, Ordering::Relaxed);
                Inner::Failed(Some(e))
            }
        };
    }

    /// Queue a tick; `Err` when the queue is full (the tick is dropped by the caller and counted).
    pub fn send(&self, tick: Tick) -> Result<(), Tick> {
        let mut inner = self.inner();
        if let Inner::Waiting(_, queued) = &mut *inner {
            if !queued.iter().any(|m| matches!(m, Msg::Tick(_))) {
                queued.push(Msg::Tick(tick));
                return Ok(());
            }
            self.start(&mut inner);
        }
        let Inner::Running(tx, handle) = &*inner else { return Err(tick) };
        match tx.try_send(Msg::Tick(tick)) {
            Ok(()) => {
                if tx.len() >= self.wake_at {
                    handle.thread().unpark();
                }
                Ok(())
            }
            Err(TrySendError::Full(Msg::Tick(t)) | TrySendError::Disconnected(Msg::Tick(t))) => {
                Err(t)
            }
            Err(_) => Ok(()),
        }
    }

    /// Close the current piece if it holds rows; the next tick starts a new one (SIGHUP).
    pub fn rotate(&self) {
        let mut inner = self.inner();
        self.start(&mut inner);
        if let Inner::Running(tx, handle) = &*inner {
            let _ = tx.try_send(Msg::Rotate);
            handle.thread().unpark();
        }
    }

    /// Add a key/value to the metadata of the open piece (Parquet footer; other formats have none).
    pub fn add_metadata(&self, key: &str, value: &str) {
        let msg = Msg::Meta(key.to_string(), value.to_string());
        match &mut *self.inner() {
            Inner::Waiting(_, queued) => queued.push(msg),
            Inner::Running(tx, handle) => {
                let _ = tx.send(msg);
                handle.thread().unpark();
            }
            Inner::Failed(_) => {}
        }
    }

    /// Write what is queued, close the open piece and stop the thread.
    pub fn finish(self) -> Result<WriterReport> {
        match self.inner.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
            Inner::Waiting(mut state, queued) => {
                for m in queued {
                    state.on_msg(m);
                }
                (*state).close()
            }
            Inner::Running(tx, handle) => {
                drop(tx);
                handle.thread().unpark();
                match handle.join() {
                    Ok(r) => r,
                    Err(_) => Err(SinkError::internal("the writer thread panicked")),
                }
            }
            Inner::Failed(e) => Err(e.unwrap_or_else(|| SinkError::internal("the writer failed"))),
        }
    }

    #[cfg(test)]
    fn started(&self) -> bool {
        matches!(&*self.inner(), Inner::Running(..))
    }
}

/// Start the writer thread on `state`, `queued` first.
fn launch(
    state: Box<State>,
    queued: Vec<Msg>,
) -> Result<(Sender<Msg>, thread::JoinHandle<Result<WriterReport>>)> {
    let (tx, rx) = bounded(QUEUE_TICKS);
    let handle = thread::Builder::new()
        .name("writer".into())
        .spawn(move || (*state).run(&rx))
        .context("starting the writer thread")?;
    if !queued.is_empty() {
        for m in queued {
            let _ = tx.send(m);
        }
        handle.thread().unpark();
    }
    Ok((tx, handle))
}

/// One open output: a file piece, or stdout (`files` None).
struct Piece {
    sink: Box<dyn Sink>,
    files: Option<PieceFiles>,
    boundary: Option<DateTime<Utc>>,
    /// Ticks written to this piece.
    ticks: u64,
}

struct Outage {
    since: Instant,
    next_retry: Instant,
    error: String,
    /// The kind of the last error: what the run's error is when the outage outlasts it.
    kind: SinkErrorKind,
    /// Ticks dropped during this outage because the backlog was full.
    lost: u64,
}

struct State {
    cfg: WriterConfig,
    set: Option<OutputSet>,
    stats: Arc<WriterStats>,
    /// The open piece; None between a rotation and the next tick (pieces open when data comes).
    piece: Option<Piece>,
    /// Ticks written to the open piece since its last successful flush (requeued if it fails).
    unflushed: Vec<Unflushed>,
    /// What a piece whose close failed held unflushed ([`Sink::unflushed`]), for the requeue.
    closing: Option<Vec<RecordBatch>>,
    /// A flush is due once the ticks queued now are written (a piece's first tick, `--flush 0`).
    flush_due: bool,
    backlog: VecDeque<Tick>,
    backlog_rows: usize,
    /// Pieces a write error left open: cut back at once, made valid files on resume.
    abandoned: Vec<Abandoned>,
    outage: Option<Outage>,
    /// Ticks dropped since the last kept one; stamped into the next kept tick's `missed`.
    pending_missed: u64,
    lost: u64,
    /// Ticks that were in a piece someone removed under us.
    gone: u64,
    last_flush: Instant,
    /// Closed pieces of this run and their ticks.
    closed: Vec<(PathBuf, u64)>,
    /// Ticks in closed pieces (and to stdout).
    written: u64,
    /// Pieces opened so far in this run, and the last one's name (later names sort after it).
    opened: u64,
    last_piece: Option<PathBuf>,
    /// The piece under the base name was removed: the next piece takes the name again.
    base_free: bool,
    /// Metadata for the open piece, kept for the next one when none is open.
    meta: Vec<(String, String)>,
}

/// A tick written since the last successful flush, kept until that flush succeeds.
enum Unflushed {
    /// The sink holds its rows ([`Sink::keeps_unflushed`]): only their number is kept here.
    InSink { ts: DateTime<Utc>, seq: u64, rows: usize },
    /// The tick itself, without its process list (the sink keeps none, or the tick never reached
    /// it). Moved, not copied: a row holds about the selected fields already (GPU readers read
    /// only those), and sinks write only the selected ones.
    Copy(Tick),
}
