//! The writer thread: owns the open piece of the output set; flushes on schedule, rotates by size,
//! time or SIGHUP, retires old pieces, and rides out write errors (disk full, EIO, a removed
//! directory) with a bounded backlog, never blocking the sampler.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use arrow_array::RecordBatch;
use chrono::{DateTime, Utc};
use crossbeam_channel::{Receiver, Sender, TryRecvError, TrySendError, bounded};

use crate::files;
use crate::piece::{Abandoned, PieceFiles, Removed, Settled};
use crate::{self as sink, Sink, Target};
use gpumon_schema::batch::rows_of_batch;
use gpumon_schema::catalog::Field;
use gpumon_schema::files::Format;
use gpumon_schema::files::{self as names, OutputSet};
use gpumon_schema::row::{Row, Selection, Tick, Value};
use gpumon_schema::run::RunMeta;
use gpumon_util::warn::warn;

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
    pub format: Format,
    pub target: Target,
    pub selection: Selection,
    pub meta: RunMeta,
    /// Longest time data waits before it is flushed and fsynced; zero flushes every tick.
    pub flush: Duration,
    pub rotate_size: Option<u64>,
    pub rotate_every: Option<Duration>,
    pub keep: Option<usize>,
    pub max_total: Option<u64>,
    /// Rows kept in memory while the output cannot be written; later ticks are dropped and counted.
    pub backlog_rows: usize,
    pub verbose: bool,
}

/// Live figures the sampler reads for its status line.
#[derive(Debug, Default)]
pub struct WriterStats {
    pub bytes: AtomicU64,
    pub lost: AtomicU64,
    pub fatal: AtomicBool,
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
    pub stats: Arc<WriterStats>,
    /// Queued ticks that wake the writer (1 when every tick is flushed at once).
    wake_at: usize,
}

enum Inner {
    /// Not started: the state and what was sent to it so far (one tick at most, metadata).
    Waiting(Box<State>, Vec<Msg>),
    Running(Sender<Msg>, thread::JoinHandle<Result<WriterReport>>),
    /// The thread could not be started (the run stops: `stats.fatal`).
    Failed(String),
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
        let wake_at = if cfg.flush.is_zero() || cfg.target == Target::Stdout { 1 } else { WAKE_TICKS };
        let sparse = Duration::try_from_secs_f64(cfg.meta.interval_s).map_or(true, |i| i > cfg.flush);
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
        let Inner::Waiting(state, queued) = std::mem::replace(inner, Inner::Failed(String::new())) else { return };
        *inner = match launch(state, queued) {
            Ok((tx, handle)) => Inner::Running(tx, handle),
            Err(e) => {
                self.stats.fatal.store(true, Ordering::Relaxed);
                Inner::Failed(format!("{e:#}"))
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
            Err(TrySendError::Full(Msg::Tick(t)) | TrySendError::Disconnected(Msg::Tick(t))) => Err(t),
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
                    Err(_) => bail!("the writer thread panicked"),
                }
            }
            Inner::Failed(e) => bail!("{e}"),
        }
    }

    #[cfg(test)]
    fn started(&self) -> bool {
        matches!(&*self.inner(), Inner::Running(..))
    }
}

/// Start the writer thread on `state`, `queued` first.
fn launch(state: Box<State>, queued: Vec<Msg>) -> Result<(Sender<Msg>, thread::JoinHandle<Result<WriterReport>>)> {
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

impl State {
    fn new(cfg: WriterConfig, set: Option<OutputSet>, stats: Arc<WriterStats>) -> State {
        State {
            cfg,
            set,
            stats,
            piece: None,
            unflushed: Vec::new(),
            closing: None,
            flush_due: false,
            backlog: VecDeque::new(),
            backlog_rows: 0,
            abandoned: Vec::new(),
            outage: None,
            pending_missed: 0,
            lost: 0,
            gone: 0,
            last_flush: Instant::now(),
            closed: Vec::new(),
            written: 0,
            opened: 0,
            last_piece: None,
            base_free: false,
            meta: Vec::new(),
        }
    }

    fn run(mut self, rx: &Receiver<Msg>) -> Result<WriterReport> {
        loop {
            // Parked until due (flush, retry) or woken by the sender: a batch of ticks, a control
            // message, or the end. Then everything queued is taken at once.
            if rx.is_empty() {
                thread::park_timeout(self.next_wakeup().saturating_duration_since(Instant::now()));
            }
            let mut ended = false;
            loop {
                match rx.try_recv() {
                    Ok(m) => self.on_msg(m),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        ended = true;
                        break;
                    }
                }
            }
            if ended {
                break;
            }
            if self.stats.fatal.load(Ordering::Relaxed) {
                // stdout went away: nothing more can be written.
                while rx.recv().is_ok() {}
                break;
            }
            if self.outage.is_some() {
                self.retry(false);
            } else if !self.unflushed.is_empty()
                && (self.flush_due || self.last_flush.elapsed() >= self.cfg.flush)
                && let Err(e) = self.flush()
            {
                self.enter_outage(&e);
            }
        }
        self.close()
    }

    fn on_msg(&mut self, m: Msg) {
        match m {
            Msg::Tick(t) => self.on_tick(t),
            Msg::Rotate => self.on_hup(),
            Msg::Meta(k, v) => {
                if let Some(p) = self.piece.as_mut() {
                    p.sink.add_metadata(&k, &v);
                } else {
                    self.meta.push((k, v));
                }
            }
        }
    }

    fn next_wakeup(&self) -> Instant {
        match &self.outage {
            Some(o) => o.next_retry,
            None if !self.unflushed.is_empty() => self.last_flush + self.cfg.flush,
            // Ticks may be queued unseen: look at least once per flush interval.
            None if !self.cfg.flush.is_zero() => Instant::now() + self.cfg.flush,
            None => Instant::now() + Duration::from_secs(3600),
        }
    }

    fn on_tick(&mut self, mut tick: Tick) {
        if let Some(o) = self.outage.as_mut() {
            if self.backlog_rows + tick.rows.len() > self.cfg.backlog_rows {
                o.lost += 1;
                self.lost += 1;
                self.pending_missed += 1;
                self.stats.lost.store(self.lost, Ordering::Relaxed);
                return;
            }
            self.stamp_missed(&mut tick);
            self.backlog_rows += tick.rows.len();
            self.backlog.push_back(tick);
            return;
        }
        self.stamp_missed(&mut tick);
        if let Err(e) = self.write(tick) {
            self.enter_outage(&e);
        }
    }

    /// Add the ticks dropped since the last kept one to this kept tick's `missed`.
    fn stamp_missed(&mut self, tick: &mut Tick) {
        if self.pending_missed > 0 {
            for r in &mut tick.rows {
                let prev = r.get(Field::Missed).as_u64().unwrap_or(0);
                r.set(Field::Missed, Value::U(prev + self.pending_missed));
            }
            self.pending_missed = 0;
        }
    }

    /// SIGHUP: close the piece if it holds rows; the next tick opens a new one.
    fn on_hup(&mut self) {
        if self.outage.is_some() {
            return;
        }
        if self.piece.as_ref().is_none_or(|p| p.ticks == 0) {
            if self.cfg.verbose {
                eprintln!("gpumon: SIGHUP: nothing written since the last rotation, nothing to rotate");
            }
            return;
        }
        if let Err(e) = self.rotate() {
            self.enter_outage(&e);
        }
    }

    fn write(&mut self, tick: Tick) -> Result<()> {
        let file = self.set.is_some();
        let ts = tick.ts;
        let rows = tick.rows.len().max(1);
        if self.cut_due(ts)
            && let Err(e) = self.rotate()
        {
            self.unflushed.push(Unflushed::copy(tick));
            return Err(e);
        }
        if self.piece.is_none()
            && let Err(e) = self.open_piece(ts)
        {
            self.unflushed.push(Unflushed::copy(tick));
            return Err(e);
        }
        let Some(piece) = self.piece.as_mut() else { bail!("no open output") };
        let written = piece.sink.write_tick(&tick);
        // Until the next successful flush this tick is only in memory: kept to requeue it.
        if file {
            self.unflushed.push(Unflushed::new(tick, piece.sink.as_ref()));
        }
        if let Err(e) = written {
            if !file {
                self.stats.fatal.store(true, Ordering::Relaxed);
            }
            return Err(e);
        }
        piece.ticks += 1;
        // A piece's first tick is flushed as soon as the ticks queued with it are written, so a
        // piece on disk always holds a row (at the end of the run, closing the piece makes it
        // durable instead: a 1-tick run syncs no journal); the copies kept for requeueing are
        // bounded too: a long --flush flushes early instead.
        if self.cfg.flush.is_zero() || piece.ticks == 1 {
            self.flush_due = true;
        }
        if !file || self.unflushed.len() * rows >= MAX_UNFLUSHED_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    /// Whether the open piece must be closed before a tick stamped `ts` (size or time rotation, or
    /// the sink is full: Parquet's bounded footer metadata).
    /// A piece without rows is never closed: its time boundary moves instead.
    fn cut_due(&mut self, ts: DateTime<Utc>) -> bool {
        let every = self.cfg.rotate_every;
        let max = self.cfg.rotate_size;
        let Some(p) = self.piece.as_mut() else { return false };
        if let (Some(b), Some(e)) = (p.boundary, every) {
            // Also after the clock stepped back by more than a period: the boundary follows it.
            let stepped_back = chrono::Duration::from_std(e).is_ok_and(|e| b - ts > e);
            if (ts >= b && p.ticks == 0) || stepped_back {
                p.boundary = next_boundary(ts, e);
            }
        }
        p.ticks > 0
            && (p.boundary.is_some_and(|b| ts >= b)
                || max.is_some_and(|m| p.sink.bytes_written() >= m)
                || p.sink.full())
    }

    fn flush(&mut self) -> Result<()> {
        if let Some(p) = self.piece.as_mut() {
            if let Err(e) = p.sink.flush() {
                if p.files.is_none() {
                    self.stats.fatal.store(true, Ordering::Relaxed);
                }
                return Err(e);
            }
            self.stats.bytes.store(p.sink.bytes_written(), Ordering::Relaxed);
            let moved = match p.files.as_mut() {
                Some(f) => f.flushed(p.ticks, || p.sink.files())?,
                None => false,
            };
            if moved && let Some(Piece { sink, files: Some(files), .. }) = self.piece.take() {
                let _ = sink.finish();
                self.renamed_away(&files.path);
            }
        }
        self.note_durable();
        self.unflushed.clear();
        self.flush_due = false;
        self.last_flush = Instant::now();
        Ok(())
    }

    /// With -v, say which tick everything up to is now on disk (the crash tests rely on it).
    fn note_durable(&self) {
        if self.cfg.verbose
            && let Some(t) = self.unflushed.last()
        {
            eprintln!("gpumon: flushed through {} µs", t.ts().timestamp_micros());
        }
    }

    fn stats_file(&self) -> String {
        self.stats.file.lock().map(|f| f.clone()).unwrap_or_default()
    }

    fn open_piece(&mut self, start: DateTime<Utc>) -> Result<()> {
        let boundary = self.cfg.rotate_every.and_then(|every| next_boundary(start, every));
        let piece = match &self.set {
            None => Piece {
                sink: sink::open(self.cfg.format, &Target::Stdout, None, &self.cfg.selection, &self.cfg.meta)?,
                files: None,
                boundary: None,
                ticks: 0,
            },
            Some(set) => {
                let path = set.next_piece(start, self.opened == 0 || self.base_free, self.last_piece.as_deref());
                let (data, journal) = if self.cfg.format == Format::Parquet {
                    (names::partial_path(&path), Some(names::journal_path(&path)))
                } else {
                    (path.clone(), None)
                };
                let opened = sink::open(
                    self.cfg.format,
                    &Target::File(data.clone()),
                    journal.as_deref(),
                    &self.cfg.selection,
                    &self.cfg.meta,
                )
                .and_then(|s| {
                    let files = PieceFiles::new(path.clone(), data.clone(), journal.clone(), s.files())?;
                    Ok((s, files))
                });
                let (sink, files) = match opened {
                    Ok(s) => s,
                    Err(e) => {
                        // Nothing valid was written: leave no empty or half-made file behind (but
                        // never remove what another program put at the name meanwhile).
                        let theirs = e.chain().any(|c| {
                            c.downcast_ref::<std::io::Error>()
                                .is_some_and(|io| io.kind() == std::io::ErrorKind::AlreadyExists)
                        });
                        if !theirs {
                            let _ = std::fs::remove_file(&data);
                            if let Some(j) = &journal {
                                let _ = std::fs::remove_file(j);
                            }
                        }
                        return Err(e);
                    }
                };
                // The directory is synced with the piece's first flush or at its close (PieceFiles).
                if let Ok(mut f) = self.stats.file.lock() {
                    *f = path.display().to_string();
                }
                if self.cfg.verbose {
                    eprintln!("gpumon: writing {}", path.display());
                }
                self.opened += 1;
                self.base_free = false;
                self.last_piece = Some(path);
                Piece { sink, files: Some(files), boundary, ticks: 0 }
            }
        };
        self.piece = Some(piece);
        if let Some(p) = self.piece.as_mut() {
            for (k, v) in self.meta.drain(..) {
                p.sink.add_metadata(&k, &v);
            }
        }
        self.stats.bytes.store(0, Ordering::Relaxed);
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Close the open piece so it is a complete file under its visible name. A piece without a
    /// row is removed instead when the set has other files (no 0-row file is left behind).
    fn close_piece(&mut self) -> Result<()> {
        let Some(p) = self.piece.take() else { return Ok(()) };
        let Piece { mut sink, files, ticks, .. } = p;
        let Some(mut files) = files else {
            sink.finish().context("closing <stdout>")?;
            self.written += ticks;
            return Ok(());
        };
        if ticks == 0 && self.has_other_files(&files.path) {
            drop(sink);
            files.discard();
            return Ok(());
        }
        let what = files.path.display().to_string();
        // Requeued if the close fails (the sink goes with `finish`).
        let held = if self.unflushed.is_empty() { None } else { sink.unflushed() };
        match sink.finish().and_then(|()| files.publish()) {
            Ok(moved) => {
                self.note_durable();
                self.unflushed.clear();
                if moved {
                    self.renamed_away(&files.path);
                } else {
                    self.written += ticks;
                    self.closed.push((files.path, ticks));
                }
                Ok(())
            }
            Err(e) => {
                let removed = is_removed(&e);
                self.abandon(files, removed);
                self.closing = held;
                Err(e.context(format!("closing {what}")))
            }
        }
    }

    /// A CSV renamed away (logrotate without copytruncate): its ticks stay under the new name, and
    /// the next tick starts a new file, under the name given when that was the one renamed (as
    /// nginx and rsyslog reopen their logs).
    fn renamed_away(&mut self, path: &Path) {
        if self.set.as_ref().is_some_and(|s| s.base() == path) {
            self.base_free = true;
        }
        if self.cfg.verbose {
            eprintln!("gpumon: {} was renamed; the next tick starts a new file", path.display());
        }
    }

    fn has_other_files(&self, path: &Path) -> bool {
        !self.closed.is_empty()
            || self.set.as_ref().is_some_and(|s| s.members().is_ok_and(|m| m.iter().any(|f| f != path)))
    }

    /// Close the open piece and apply retention; the next tick opens a new piece.
    fn rotate(&mut self) -> Result<()> {
        self.close_piece()?;
        if let Some(set) = &self.set {
            for gone in files::retain(set, self.cfg.keep, self.cfg.max_total, None)? {
                if self.cfg.verbose {
                    eprintln!("gpumon: retention removed {}", gone.display());
                }
            }
        }
        Ok(())
    }

    /// Put a piece a write error hit aside, cut back to its last durable batch.
    fn abandon(&mut self, files: PieceFiles, removed: bool) -> u64 {
        if removed && self.set.as_ref().is_some_and(|s| s.base() == files.path) {
            self.base_free = true;
        }
        let durable = files.durable_ticks;
        self.abandoned.push(files.abandon(removed));
        // A full disk still lets a file shrink: CSV pieces are settled at once, Parquet on resume.
        let _ = self.settle_abandoned(false);
        durable
    }

    /// Make abandoned pieces valid files (or nothing), oldest first; `rebuild`: Parquet too.
    fn settle_abandoned(&mut self, rebuild: bool) -> Result<()> {
        while let Some(a) = self.abandoned.first_mut() {
            match a.settle(rebuild)? {
                // A Parquet piece waits, cut back, for the room to rebuild it.
                None => return Ok(()),
                Some(Settled::Kept(path, ticks)) => {
                    self.written += ticks;
                    self.closed.push((path, ticks));
                }
                Some(Settled::Empty) => {}
                Some(Settled::Lost(ticks)) => self.gone += ticks,
            }
            self.abandoned.remove(0);
        }
        Ok(())
    }

    fn enter_outage(&mut self, e: &anyhow::Error) {
        if self.set.is_none() {
            self.stats.fatal.store(true, Ordering::Relaxed);
            return;
        }
        let removed = is_removed(e);
        let (in_removed, held) = match self.piece.take() {
            Some(Piece { mut sink, files: Some(files), .. }) => {
                let held = sink.unflushed();
                // Dropping the sink first lets its buffers reach the file before the cut back.
                drop(sink);
                (self.abandon(files, removed), held)
            }
            _ => (0, self.closing.take()),
        };
        let error = format!("{e:#}");
        if self.outage.is_none() {
            let dir = self.set.as_ref().map_or_else(String::new, |s| s.dir().display().to_string());
            warn(&if removed {
                format!(
                    "{error}: the {in_removed} ticks it held are gone; keeping up to {} rows in memory and \
                     writing again when {dir} is back (retrying every {} s)",
                    self.cfg.backlog_rows,
                    RETRY_EVERY.as_secs()
                )
            } else {
                format!(
                    "{error}; files already closed are intact; keeping up to {} rows in memory and retrying every {} s",
                    self.cfg.backlog_rows,
                    RETRY_EVERY.as_secs()
                )
            });
        }
        self.requeue(held);
        let next_retry = Instant::now() + RETRY_EVERY;
        match self.outage.as_mut() {
            Some(o) => {
                o.next_retry = next_retry;
                o.error = error;
            }
            None => self.outage = Some(Outage { since: Instant::now(), next_retry, error, lost: 0 }),
        }
    }

    /// Try to leave an outage: settle abandoned pieces, open a new one, write the backlog.
    fn retry(&mut self, force: bool) {
        let Some(o) = &self.outage else { return };
        if !force && Instant::now() < o.next_retry {
            return;
        }
        let attempt = (|| -> Result<()> {
            self.settle_abandoned(true)?;
            if self.piece.is_none() {
                // Named after its first row, the oldest one waiting.
                self.open_piece(self.backlog.front().map_or_else(Utc::now, |t| t.ts))?;
            }
            self.write_backlog()?;
            self.flush()
        })();
        match attempt {
            Ok(()) => {
                let (since, lost) = self.outage.take().map(|o| (o.since.elapsed(), o.lost)).unwrap_or_default();
                warn(&format!(
                    "writing resumed after {} s into {}; {lost} ticks could not be kept",
                    since.as_secs(),
                    self.stats_file()
                ));
            }
            Err(e) => self.enter_outage(&e),
        }
    }

    /// Write the backlog into the open piece: every tick is then only in memory and in this piece,
    /// and requeued if the flush after this fails.
    fn write_backlog(&mut self) -> Result<()> {
        let Some(piece) = self.piece.as_mut() else { bail!("no open output") };
        self.backlog_rows = 0;
        let mut ticks = std::mem::take(&mut self.backlog).into_iter();
        while let Some(t) = ticks.next() {
            let written = piece.sink.write_tick(&t);
            self.unflushed.push(Unflushed::new(t, piece.sink.as_ref()));
            if let Err(e) = written {
                // The ticks after it never reached the sink.
                self.unflushed.extend(ticks.map(Unflushed::copy));
                return Err(e);
            }
            piece.ticks += 1;
        }
        Ok(())
    }

    /// Put the ticks not flushed back in front of the backlog, in order: the copies kept, and the
    /// ticks the sink held, from its rows (`held`, [`Sink::unflushed`]).
    fn requeue(&mut self, held: Option<Vec<RecordBatch>>) {
        let mut rows = Vec::new();
        for b in held.iter().flatten() {
            rows_of_batch(b, &mut rows);
        }
        let mut rows = rows.into_iter().map(|(_, r)| r);
        let mut ticks = Vec::with_capacity(self.unflushed.len());
        for u in self.unflushed.drain(..) {
            match u {
                Unflushed::Copy(t) => ticks.push(t),
                Unflushed::InSink { ts, seq, rows: n } => {
                    let rows: Vec<Row> = rows.by_ref().take(n).collect();
                    if rows.len() < n {
                        // Not handed back by the sink (cannot happen): counted, not invented.
                        self.lost += 1;
                        continue;
                    }
                    ticks.push(Tick { ts, seq, rows, procs: Vec::new() });
                }
            }
        }
        for t in ticks.into_iter().rev() {
            self.backlog_rows += t.rows.len();
            self.backlog.push_front(t);
        }
    }

    fn close(mut self) -> Result<WriterReport> {
        // Two tries: a piece found removed at close is written again from memory into a new one.
        for _ in 0..2 {
            if self.outage.is_some() {
                self.retry(true);
            }
            if self.outage.is_some() {
                break;
            }
            match self.close_piece() {
                Ok(()) => break,
                Err(e) => self.enter_outage(&e),
            }
        }
        if let Some(o) = &self.outage {
            let unwritten = self.backlog.len() as u64;
            let lost = self.lost + unwritten;
            bail!(
                "could not write the output ({}); {lost} ticks lost; files already closed are intact{}",
                o.error,
                if self.abandoned.is_empty() {
                    String::new()
                } else {
                    format!("; run `gpumon recover {}` once space is back", self.cfg.target)
                }
            );
        }
        if let Some(set) = &self.set {
            let current = self.closed.last().map(|c| c.0.clone());
            files::retain(set, self.cfg.keep, self.cfg.max_total, current.as_deref())?;
        }
        let files = self.closed.into_iter().map(|c| c.0).filter(|p| p.exists()).collect();
        Ok(WriterReport { files, written: self.written, lost: self.lost })
    }
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

impl Unflushed {
    /// `t`, just handed to `sink`.
    fn new(t: Tick, sink: &dyn Sink) -> Unflushed {
        if sink.keeps_unflushed() {
            Unflushed::InSink { ts: t.ts, seq: t.seq, rows: t.rows.len() }
        } else {
            Unflushed::copy(t)
        }
    }

    /// `t` kept whole, less its process list.
    fn copy(t: Tick) -> Unflushed {
        Unflushed::Copy(Tick { procs: Vec::new(), ..t })
    }

    fn ts(&self) -> DateTime<Utc> {
        match self {
            Unflushed::InSink { ts, .. } => *ts,
            Unflushed::Copy(t) => t.ts,
        }
    }
}

fn is_removed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Removed>())
}

/// The first multiple of `every` since the Unix epoch after `t` (wall-clock aligned cuts).
fn next_boundary(t: DateTime<Utc>, every: Duration) -> Option<DateTime<Utc>> {
    let every_us = i64::try_from(every.as_micros()).ok().filter(|e| *e > 0)?;
    let now_us = t.timestamp_micros();
    let next = (now_us / every_us + 1) * every_us;
    DateTime::from_timestamp_micros(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_are_wall_clock_aligned() {
        let t = DateTime::parse_from_rfc3339("2026-12-02T14:17:59.5Z").unwrap().with_timezone(&Utc);
        let b = next_boundary(t, Duration::from_secs(3600)).unwrap();
        assert_eq!(b.to_rfc3339(), "2026-12-02T15:00:00+00:00");
        let b = next_boundary(t, Duration::from_secs(60)).unwrap();
        assert_eq!(b.to_rfc3339(), "2026-12-02T14:18:00+00:00");
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn state(dir: &Path, every: Duration) -> State {
        let meta = RunMeta {
            hostname: "h".into(),
            interval_s: 0.1,
            command: "test".into(),
            start: Utc::now(),
            driver_version: None,
        };
        let target = Target::File(dir.join("t.csv"));
        let cfg = WriterConfig {
            format: Format::Csv,
            target: target.clone(),
            selection: Selection::new(vec![Field::Timestamp, Field::Host, Field::Index, Field::Missed]),
            meta,
            flush: Duration::from_secs(10),
            rotate_size: None,
            rotate_every: Some(every),
            keep: None,
            max_total: None,
            backlog_rows: 100,
            verbose: false,
        };
        State::new(cfg, Some(OutputSet::new(&dir.join("t.csv"))), Arc::new(WriterStats::default()))
    }

    fn tick(ts: DateTime<Utc>) -> Tick {
        Tick { ts, seq: 0, rows: vec![gpumon_schema::row::Row::default()], procs: Vec::new() }
    }

    /// A row of host `h` with `missed` = `i`.
    fn host_row(i: u64) -> Row {
        let mut r = Row::default();
        r.set(Field::Host, Value::S("h".into()));
        r.set(Field::Missed, Value::U(i));
        r
    }

    #[test]
    fn a_failed_parquet_flush_requeues_its_ticks_from_the_sinks_own_rows() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = state(dir.path(), Duration::from_secs(3600));
        let path = dir.path().join("t.parquet");
        s.cfg.format = Format::Parquet;
        s.cfg.target = Target::File(path.clone());
        s.cfg.backlog_rows = 10_000;
        s.set = Some(OutputSet::new(&path));
        let start = at("2026-12-02T14:00:00Z");
        let mut sent = Vec::new();
        for i in 0..700u64 {
            let r = host_row(i);
            let mut r1 = r.clone();
            r1.set(Field::Index, Value::U(1));
            let ts = start + chrono::Duration::milliseconds(i as i64);
            let t = Tick { ts, seq: i, rows: vec![r, r1], procs: Vec::new() };
            sent.push(t.clone());
            s.on_tick(t);
        }
        // Flushed at 512 ticks (1,024 rows); the 188 after it are kept by the sink alone.
        assert_eq!(s.unflushed.len(), 188);
        assert!(s.unflushed.iter().all(|u| matches!(u, Unflushed::InSink { .. })));
        s.enter_outage(&anyhow::anyhow!("no space left"));
        let back: Vec<Tick> = s.backlog.iter().cloned().collect();
        assert_eq!(back, sent[512..]);
        assert_eq!(s.backlog_rows, 376);
    }

    #[test]
    fn a_failed_csv_flush_requeues_its_ticks_whole_less_their_process_lists() {
        use gpumon_schema::row::GpuProc;
        let dir = tempfile::tempdir().unwrap();
        let mut s = state(dir.path(), Duration::from_secs(3600));
        let start = at("2026-12-02T14:00:00Z");
        let mut sent = Vec::new();
        for i in 0..5u64 {
            let mut r = host_row(i);
            // Not selected: kept as it came (sinks write only the selected fields).
            r.set(Field::PowerDraw, Value::F(1.5));
            let procs = vec![GpuProc { row: 0, pid: 7, used_mib: Some(1), util: None }];
            let t = Tick { ts: start + chrono::Duration::seconds(i as i64), seq: i, rows: vec![r], procs };
            sent.push(Tick { procs: Vec::new(), ..t.clone() });
            s.on_tick(t);
        }
        // Written, none flushed yet (the first tick's flush waits for the queue to drain).
        assert_eq!(s.unflushed.len(), 5);
        assert!(s.unflushed.iter().all(|u| matches!(u, Unflushed::Copy(_))));
        s.enter_outage(&anyhow::anyhow!("no space left"));
        let back: Vec<Tick> = s.backlog.iter().cloned().collect();
        assert_eq!(back, sent);
    }

    #[test]
    fn time_rotation_recomputes_its_boundary_after_a_step_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = state(dir.path(), Duration::from_secs(1));
        s.open_piece(at("2026-12-02T14:00:00.5Z")).unwrap();
        s.write(tick(at("2026-12-02T14:00:00.6Z"))).unwrap();
        // 30 s back: the 14:00:01 cut would stall rotation for 30 s; it follows the step instead.
        assert!(!s.cut_due(at("2026-12-02T13:59:30.1Z")));
        assert!(s.cut_due(at("2026-12-02T13:59:31.1Z")));
        // An empty piece is never cut: its boundary moves.
        let mut s = state(dir.path(), Duration::from_secs(1));
        s.open_piece(at("2026-12-02T15:00:00.5Z")).unwrap();
        assert!(!s.cut_due(at("2026-12-02T15:00:05.0Z")));
        assert_eq!(s.piece.as_ref().unwrap().boundary, Some(at("2026-12-02T15:00:06Z")));
    }

    fn rows_in(path: &Path) -> usize {
        std::fs::read_to_string(path).unwrap().lines().count().saturating_sub(1)
    }

    #[test]
    fn the_thread_starts_with_the_second_tick_and_a_1_tick_run_never_starts_it() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = state(dir.path(), Duration::from_secs(3600)).cfg;
        let now = Utc::now();
        // One tick: written and closed by `finish` on this thread, metadata included.
        let w = Writer::spawn(cfg.clone()).unwrap();
        w.send(tick(now)).unwrap();
        w.add_metadata("k", "v");
        assert!(!w.started());
        let r = w.finish().unwrap();
        assert_eq!((r.written, r.files.len()), (1, 1));
        assert_eq!(rows_in(&r.files[0]), 1);
        // The second tick starts the thread (it comes within --flush of the first).
        let w = Writer::spawn(WriterConfig { target: Target::File(dir.path().join("u.csv")), ..cfg.clone() }).unwrap();
        w.send(tick(now)).unwrap();
        w.send(tick(now + chrono::Duration::milliseconds(100))).unwrap();
        assert!(w.started());
        let r = w.finish().unwrap();
        assert_eq!(r.written, 2);
        assert_eq!(rows_in(&r.files[0]), 2);
        // Ticks further apart than --flush, or --flush 0: started at once.
        for (interval_s, flush) in [(20.0, Duration::from_secs(10)), (0.1, Duration::ZERO)] {
            let meta = RunMeta { interval_s, ..cfg.meta.clone() };
            let path = dir.path().join(format!("v{interval_s}.csv"));
            let w = Writer::spawn(WriterConfig { target: Target::File(path), meta, flush, ..cfg.clone() }).unwrap();
            assert!(w.started());
            w.finish().unwrap();
        }
    }

    #[test]
    fn a_sighup_with_nothing_new_makes_no_file_and_ticks_dropped_by_a_full_backlog_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = state(dir.path(), Duration::from_secs(3600));
        s.open_piece(at("2026-12-02T14:00:00Z")).unwrap();
        s.on_hup();
        assert!(s.piece.as_ref().is_some_and(|p| p.ticks == 0), "nothing to rotate");
        s.on_tick(tick(at("2026-12-02T14:00:01Z")));
        s.on_hup();
        assert!(s.piece.is_none() && s.closed.len() == 1, "a piece with a row is closed");
        s.on_hup();
        assert_eq!(s.closed.len(), 1);
        // An outage with room for 2 rows: ticks 4..=6 are dropped, and counted on tick 7 once the
        // backlog has room again.
        s.cfg.backlog_rows = 2;
        s.outage = Some(Outage { since: Instant::now(), next_retry: Instant::now(), error: "x".into(), lost: 0 });
        for i in 2..=7 {
            s.on_tick(tick(at(&format!("2026-12-02T14:00:0{i}Z"))));
            if i == 6 {
                s.backlog.clear();
                s.backlog_rows = 0;
            }
        }
        let missed: Vec<u64> = s.backlog.iter().map(|t| t.rows[0].get(Field::Missed).as_u64().unwrap_or(0)).collect();
        assert_eq!(missed, [3], "the next kept row counts every tick the full backlog dropped");
        assert_eq!(s.outage.as_ref().unwrap().lost, 3);
    }
}
