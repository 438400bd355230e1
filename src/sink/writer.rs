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
use chrono::{DateTime, Utc};
use crossbeam_channel::{Receiver, Sender, TryRecvError, TrySendError, bounded};

use crate::schema::catalog::Field;
use crate::schema::files::Format;
use crate::schema::files::{self as names, OutputSet};
use crate::schema::row::{Selection, Tick, Value};
use crate::schema::run::RunMeta;
use crate::sink::files;
use crate::sink::{self, Sink, Target};
use crate::util::warn::warn;

/// Ticks that may wait in the channel for the writer.
const QUEUE_TICKS: usize = 1024;
/// Ticks queued before the sampler wakes the writer (otherwise it wakes to flush): one wake-up per
/// batch instead of one per tick.
const WAKE_TICKS: usize = 32;
/// Ticks written but not yet flushed before a flush is forced whatever `--flush` says.
const MAX_UNFLUSHED_TICKS: usize = 1024;
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
    /// Every piece closed during the run, in order.
    pub files: Vec<PathBuf>,
    /// Ticks that could not be kept (backlog full during an outage, or still unwritten at exit).
    pub lost: u64,
}

enum Msg {
    Tick(Tick),
    Rotate,
    Meta(String, String),
}

/// Handle to the writer thread.
pub struct Writer {
    tx: Sender<Msg>,
    handle: thread::JoinHandle<Result<WriterReport>>,
    pub stats: Arc<WriterStats>,
    /// Queued ticks that wake the writer (1 when every tick is flushed at once).
    wake_at: usize,
}

impl Writer {
    /// Open the first piece (errors here are the caller's: a bad path fails the run at once)
    /// and start the thread.
    pub fn spawn(cfg: WriterConfig) -> Result<Writer> {
        let stats = Arc::new(WriterStats::default());
        let set = match &cfg.target {
            Target::File(p) => Some(OutputSet::new(p)),
            Target::Stdout => None,
        };
        let wake_at = if cfg.flush.is_zero() || cfg.target == Target::Stdout { 1 } else { WAKE_TICKS };
        let mut state = State::new(cfg, set, stats.clone());
        state.open_piece(Utc::now())?;
        let (tx, rx) = bounded(QUEUE_TICKS);
        let handle = thread::Builder::new()
            .name("writer".into())
            .spawn(move || state.run(&rx))
            .context("starting the writer thread")?;
        Ok(Writer { tx, handle, stats, wake_at })
    }

    /// Queue a tick; `Err` when the queue is full (the tick is dropped by the caller and counted).
    pub fn send(&self, tick: Tick) -> Result<(), Tick> {
        match self.tx.try_send(Msg::Tick(tick)) {
            Ok(()) => {
                if self.tx.len() >= self.wake_at {
                    self.handle.thread().unpark();
                }
                Ok(())
            }
            Err(TrySendError::Full(Msg::Tick(t)) | TrySendError::Disconnected(Msg::Tick(t))) => Err(t),
            Err(_) => Ok(()),
        }
    }

    /// Close the current piece and start a new one (SIGHUP).
    pub fn rotate(&self) {
        let _ = self.tx.try_send(Msg::Rotate);
        self.handle.thread().unpark();
    }

    /// Add a key/value to the metadata of the open piece (Parquet footer; other formats have none).
    pub fn add_metadata(&self, key: &str, value: &str) {
        let _ = self.tx.send(Msg::Meta(key.to_string(), value.to_string()));
        self.handle.thread().unpark();
    }

    pub fn finish(self) -> Result<WriterReport> {
        drop(self.tx);
        self.handle.thread().unpark();
        match self.handle.join() {
            Ok(r) => r,
            Err(_) => bail!("the writer thread panicked"),
        }
    }
}

/// One open output file.
struct Piece {
    sink: Box<dyn Sink>,
    /// The visible name the piece gets (for Parquet: once closed).
    path: Option<PathBuf>,
    /// Parquet only: where the data is written while open.
    partial: Option<PathBuf>,
    journal: Option<PathBuf>,
    boundary: Option<DateTime<Utc>>,
    /// Ticks written to this piece.
    ticks: u64,
}

struct Outage {
    since: Instant,
    next_retry: Instant,
    error: String,
}

struct State {
    cfg: WriterConfig,
    set: Option<OutputSet>,
    stats: Arc<WriterStats>,
    piece: Option<Piece>,
    /// Ticks written to the open piece since its last successful flush (requeued if it fails).
    unflushed: Vec<Tick>,
    backlog: VecDeque<Tick>,
    backlog_rows: usize,
    /// Pieces a write error left open: recovered (journal replay / torn-line cut) on resume.
    abandoned: Vec<PathBuf>,
    outage: Option<Outage>,
    /// Ticks dropped since the last kept one; stamped into the next kept tick's `missed`.
    pending_missed: u64,
    lost: u64,
    last_flush: Instant,
    report: WriterReport,
    /// Pieces opened so far in this run.
    opened: u64,
}

impl State {
    fn new(cfg: WriterConfig, set: Option<OutputSet>, stats: Arc<WriterStats>) -> State {
        State {
            cfg,
            set,
            stats,
            piece: None,
            unflushed: Vec::new(),
            backlog: VecDeque::new(),
            backlog_rows: 0,
            abandoned: Vec::new(),
            outage: None,
            pending_missed: 0,
            lost: 0,
            last_flush: Instant::now(),
            report: WriterReport::default(),
            opened: 0,
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
                    Ok(Msg::Tick(t)) => self.on_tick(t),
                    Ok(Msg::Rotate) => {
                        if self.outage.is_none()
                            && let Err(e) = self.rotate(Utc::now())
                        {
                            self.enter_outage(&e);
                        }
                    }
                    Ok(Msg::Meta(k, v)) => {
                        if let Some(p) = self.piece.as_mut() {
                            p.sink.add_metadata(&k, &v);
                        }
                    }
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
                && self.last_flush.elapsed() >= self.cfg.flush
                && let Err(e) = self.flush()
            {
                self.enter_outage(&e);
            }
        }
        self.close()
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
        if self.pending_missed > 0 {
            for r in &mut tick.rows {
                let prev = r.get(Field::Missed).as_u64().unwrap_or(0);
                r.set(Field::Missed, Value::U(prev + self.pending_missed));
            }
            self.pending_missed = 0;
        }
        if self.outage.is_some() {
            self.enqueue(tick);
            return;
        }
        if let Err(e) = self.write(&tick) {
            self.enter_outage(&e);
        }
    }

    fn write(&mut self, tick: &Tick) -> Result<()> {
        let due = self.piece.as_ref().and_then(|p| p.boundary).is_some_and(|b| tick.ts >= b);
        if due && let Some(p) = self.piece.as_mut().filter(|p| p.ticks == 0) {
            // Nothing written yet: move the cut instead of leaving an empty file behind.
            p.boundary = self.cfg.rotate_every.and_then(|every| next_boundary(tick.ts, every));
        }
        let due = due && self.piece.as_ref().is_some_and(|p| p.ticks > 0);
        let keep = self.cfg.target != Target::Stdout;
        if due && let Err(e) = self.rotate(tick.ts) {
            self.unflushed.push(tick.clone());
            return Err(e);
        }
        // Until the next successful flush this tick is only in memory: keep a copy to requeue.
        if keep {
            self.unflushed.push(tick.clone());
        }
        let Some(piece) = self.piece.as_mut() else { bail!("no open output") };
        if let Err(e) = piece.sink.write_tick(tick) {
            if self.cfg.target == Target::Stdout {
                self.stats.fatal.store(true, Ordering::Relaxed);
            }
            return Err(e);
        }
        piece.ticks += 1;
        // The copies kept for requeueing are bounded too: a long --flush flushes early instead.
        if self.cfg.flush.is_zero() || self.cfg.target == Target::Stdout || self.unflushed.len() >= MAX_UNFLUSHED_TICKS
        {
            self.flush()?;
        }
        let size = self.piece.as_ref().map_or(0, |p| p.sink.bytes_written());
        let full = self.piece.as_ref().is_some_and(|p| p.sink.full());
        if full || self.cfg.rotate_size.is_some_and(|max| size >= max) {
            self.rotate(tick.ts)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if let Some(p) = self.piece.as_mut() {
            if let Err(e) = p.sink.flush() {
                if self.cfg.target == Target::Stdout {
                    self.stats.fatal.store(true, Ordering::Relaxed);
                }
                return Err(e);
            }
            self.stats.bytes.store(p.sink.bytes_written(), Ordering::Relaxed);
        }
        self.note_durable();
        self.unflushed.clear();
        self.last_flush = Instant::now();
        Ok(())
    }

    /// With -v, say which tick everything up to is now on disk (the crash tests rely on it).
    fn note_durable(&self) {
        if self.cfg.verbose
            && let Some(t) = self.unflushed.last()
        {
            eprintln!("gpumon: flushed through {} µs", t.ts.timestamp_micros());
        }
    }

    fn open_piece(&mut self, start: DateTime<Utc>) -> Result<()> {
        let boundary = self.cfg.rotate_every.and_then(|every| next_boundary(start, every));
        let piece = match &self.set {
            None => Piece {
                sink: sink::open(self.cfg.format, &Target::Stdout, None, &self.cfg.selection, &self.cfg.meta)?,
                path: None,
                partial: None,
                journal: None,
                boundary: None,
                ticks: 0,
            },
            Some(set) => {
                let path = set.next_piece(start, self.opened == 0);
                self.opened += 1;
                let (data, partial, journal) = if self.cfg.format == Format::Parquet {
                    let partial = names::partial_path(&path);
                    (partial.clone(), Some(partial), Some(names::journal_path(&path)))
                } else {
                    (path.clone(), None, None)
                };
                let sink = match sink::open(
                    self.cfg.format,
                    &Target::File(data.clone()),
                    journal.as_deref(),
                    &self.cfg.selection,
                    &self.cfg.meta,
                ) {
                    Ok(s) => s,
                    Err(e) => {
                        // Nothing valid was written: leave no empty or half-made file behind.
                        let _ = std::fs::remove_file(&data);
                        if let Some(j) = &journal {
                            let _ = std::fs::remove_file(j);
                        }
                        return Err(e);
                    }
                };
                names::sync_dir(set.dir());
                if let Ok(mut f) = self.stats.file.lock() {
                    *f = path.display().to_string();
                }
                if self.cfg.verbose {
                    eprintln!("gpumon: writing {}", path.display());
                }
                Piece { sink, path: Some(path), partial, journal, boundary, ticks: 0 }
            }
        };
        self.piece = Some(piece);
        self.stats.bytes.store(0, Ordering::Relaxed);
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Close the open piece so it is a complete file under its visible name.
    fn close_piece(&mut self) -> Result<()> {
        let Some(p) = self.piece.take() else { return Ok(()) };
        let what = p.path.as_ref().map_or_else(|| "<stdout>".to_string(), |p| p.display().to_string());
        if let Err(e) = p.sink.finish() {
            // Left for recovery: the journal (or the CSV itself) holds every flushed tick.
            self.abandoned.extend(p.path);
            return Err(e.context(format!("closing {what}")));
        }
        self.note_durable();
        self.unflushed.clear();
        if let (Some(path), Some(partial)) = (&p.path, &p.partial) {
            std::fs::rename(partial, path)
                .with_context(|| format!("renaming {} to {}", partial.display(), path.display()))?;
            names::sync_dir(path.parent().unwrap_or(Path::new(".")));
        }
        if let Some(j) = &p.journal {
            std::fs::remove_file(j).with_context(|| format!("removing {}", j.display()))?;
        }
        if let Some(path) = p.path {
            self.report.files.push(path);
        }
        Ok(())
    }

    fn rotate(&mut self, now: DateTime<Utc>) -> Result<()> {
        if self.set.is_none() {
            return Ok(());
        }
        self.close_piece()?;
        if let Some(set) = &self.set {
            for gone in files::retain(set, self.cfg.keep, self.cfg.max_total, None)? {
                if self.cfg.verbose {
                    eprintln!("gpumon: retention removed {}", gone.display());
                }
            }
        }
        self.open_piece(now)
    }

    fn enter_outage(&mut self, e: &anyhow::Error) {
        if self.cfg.target == Target::Stdout {
            self.stats.fatal.store(true, Ordering::Relaxed);
            return;
        }
        let error = format!("{e:#}");
        if self.outage.is_none() {
            warn(&format!(
                "{error}; files already closed are intact; keeping up to {} rows in memory and retrying every {} s",
                self.cfg.backlog_rows,
                RETRY_EVERY.as_secs()
            ));
        }
        if let Some(p) = self.piece.take() {
            // Drop the sink without finishing: the journal (or the CSV itself) holds every flushed
            // tick; the unflushed ones go back to the backlog.
            if let Some(path) = p.path {
                self.abandoned.push(path);
            }
        }
        let unflushed: Vec<Tick> = self.unflushed.drain(..).collect();
        for t in unflushed.into_iter().rev() {
            self.backlog_rows += t.rows.len();
            self.backlog.push_front(t);
        }
        let now = Instant::now();
        self.outage.get_or_insert(Outage { since: now, next_retry: now + RETRY_EVERY, error });
    }

    fn enqueue(&mut self, tick: Tick) {
        if self.backlog_rows + tick.rows.len() > self.cfg.backlog_rows {
            self.lost += 1;
            self.pending_missed += 1;
            self.stats.lost.store(self.lost, Ordering::Relaxed);
            return;
        }
        self.backlog_rows += tick.rows.len();
        self.backlog.push_back(tick);
    }

    /// Try to leave an outage: recover abandoned pieces, open a new one, write the backlog.
    fn retry(&mut self, force: bool) {
        let Some(o) = &self.outage else { return };
        if !force && Instant::now() < o.next_retry {
            return;
        }
        let attempt = (|| -> Result<()> {
            while let Some(path) = self.abandoned.first().cloned() {
                if self.cfg.format == Format::Parquet {
                    files::recover_journal(&names::journal_path(&path), &path)?;
                } else {
                    files::trim_torn_line(&path)?;
                }
                self.report.files.push(path);
                self.abandoned.remove(0);
            }
            if self.piece.is_none() {
                self.open_piece(Utc::now())?;
            }
            let Some(piece) = self.piece.as_mut() else { bail!("no open output") };
            for t in &self.backlog {
                piece.sink.write_tick(t)?;
            }
            piece.sink.flush()?;
            Ok(())
        })();
        match attempt {
            Ok(()) => {
                let since = self.outage.take().map(|o| o.since.elapsed()).unwrap_or_default();
                self.backlog.clear();
                self.backlog_rows = 0;
                self.unflushed.clear();
                self.last_flush = Instant::now();
                let file = self.stats.file.lock().map(|f| f.clone()).unwrap_or_default();
                warn(&format!(
                    "writing resumed after {} s into {file}; {} ticks could not be kept",
                    since.as_secs(),
                    self.lost
                ));
            }
            Err(e) => {
                // Whatever was opened is abandoned again; the backlog stays.
                if let Some(p) = self.piece.take()
                    && let Some(path) = p.path
                {
                    self.abandoned.push(path);
                }
                if let Some(o) = self.outage.as_mut() {
                    o.next_retry = Instant::now() + RETRY_EVERY;
                    o.error = format!("{e:#}");
                }
            }
        }
    }

    fn close(mut self) -> Result<WriterReport> {
        if self.outage.is_some() {
            self.retry(true);
        }
        if let Some(o) = &self.outage {
            let unwritten = self.backlog.len() as u64;
            self.report.lost = self.lost + unwritten;
            bail!(
                "could not write the output ({}); {} ticks lost; files already closed are intact{}",
                o.error,
                self.report.lost,
                if self.abandoned.is_empty() {
                    String::new()
                } else {
                    format!("; run `gpumon recover {}` once space is back", self.cfg.target)
                }
            );
        }
        self.close_piece()?;
        if let Some(set) = &self.set {
            let current = self.report.files.last().cloned();
            files::retain(set, self.cfg.keep, self.cfg.max_total, current.as_deref())?;
        }
        self.report.lost = self.lost;
        Ok(self.report)
    }
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
}
