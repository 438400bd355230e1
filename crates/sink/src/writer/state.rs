//! The writer thread's loop: messages, ticks, flushes, SIGHUP and the close.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{Result, SinkError};
use crossbeam_channel::{Receiver, TryRecvError};

use crate::files;
use gpumon_schema::catalog::Field;
use gpumon_schema::{OutputSet, Tick, Value};

use super::*;

impl State {
    pub(super) fn new(cfg: WriterConfig, set: Option<OutputSet>, stats: Arc<WriterStats>) -> State {
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

    pub(super) fn run(mut self, rx: &Receiver<Msg>) -> Result<WriterReport> {
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

    pub(super) fn on_msg(&mut self, m: Msg) {
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

    pub(super) fn next_wakeup(&self) -> Instant {
        match &self.outage {
            Some(o) => o.next_retry,
            None if !self.unflushed.is_empty() => self.last_flush + self.cfg.flush,
            // Ticks may be queued unseen: look at least once per flush interval.
            None if !self.cfg.flush.is_zero() => Instant::now() + self.cfg.flush,
            None => Instant::now() + Duration::from_secs(3600),
        }
    }

    pub(super) fn on_tick(&mut self, mut tick: Tick) {
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
    pub(super) fn stamp_missed(&mut self, tick: &mut Tick) {
        if self.pending_missed > 0 {
            for r in &mut tick.rows {
                let prev = r.get(Field::Missed).as_u64().unwrap_or(0);
                r.set(Field::Missed, Value::U(prev + self.pending_missed));
            }
            self.pending_missed = 0;
        }
    }

    /// SIGHUP: close the piece if it holds rows; the next tick opens a new one.
    pub(super) fn on_hup(&mut self) {
        if self.outage.is_some() {
            return;
        }
        if self.piece.as_ref().is_none_or(|p| p.ticks == 0) {
            if self.cfg.verbose {
                eprintln!(
                    "gpumon: SIGHUP: nothing written since the last rotation, nothing to rotate"
                );
            }
            return;
        }
        if let Err(e) = self.rotate() {
            self.enter_outage(&e);
        }
    }

    pub(super) fn write(&mut self, tick: Tick) -> Result<()> {
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
        let Some(piece) = self.piece.as_mut() else {
            return Err(SinkError::internal("no open output"));
        };
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

    pub(super) fn flush(&mut self) -> Result<()> {
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
    pub(super) fn note_durable(&self) {
        if self.cfg.verbose
            && let Some(t) = self.unflushed.last()
        {
            eprintln!("gpumon: flushed through {} µs", t.ts().timestamp_micros());
        }
    }

    pub(super) fn stats_file(&self) -> String {
        self.stats.file.lock().map(|f| f.clone()).unwrap_or_default()
    }

    pub(super) fn close(mut self) -> Result<WriterReport> {
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
            return Err(SinkError::new(
                o.kind,
                format!(
                    "could not write the output ({}); {lost} ticks lost; files already closed are intact{}",
                    o.error,
                    if self.abandoned.is_empty() {
                        String::new()
                    } else {
                        format!("; run `gpumon recover {}` once space is back", self.cfg.target)
                    }
                ),
            ));
        }
        if let Some(set) = &self.set {
            let current = self.closed.last().map(|c| c.0.clone());
            files::retain(set, self.cfg.keep, self.cfg.max_total, current.as_deref())?;
        }
        let files = self.closed.into_iter().map(|c| c.0).filter(|p| p.exists()).collect();
        Ok(WriterReport { files, written: self.written, lost: self.lost })
    }
}
