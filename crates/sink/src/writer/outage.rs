//! Write errors (disk full, EIO, a removed directory): the outage, its bounded backlog, retries, and
//! the unflushed ticks requeued from the sink's own rows.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::error::Result;
use arrow_array::RecordBatch;
use chrono::{DateTime, Utc};

use crate::Sink;
use crate::error::{SinkError, SinkErrorKind};
use gpumon_schema::{Row, Tick, rows_of_batch};
use gpumon_util::warn;

use super::*;

impl State {
    pub(super) fn enter_outage(&mut self, e: &SinkError) {
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
                o.kind = e.kind();
            }
            None => {
                let kind = e.kind();
                self.outage =
                    Some(Outage { since: Instant::now(), next_retry, error, kind, lost: 0 })
            }
        }
    }

    /// Try to leave an outage: settle abandoned pieces, open a new one, write the backlog.
    pub(super) fn retry(&mut self, force: bool) {
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
                let (since, lost) =
                    self.outage.take().map(|o| (o.since.elapsed(), o.lost)).unwrap_or_default();
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
    pub(super) fn write_backlog(&mut self) -> Result<()> {
        let Some(piece) = self.piece.as_mut() else {
            return Err(SinkError::internal("no open output"));
        };
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
    pub(super) fn requeue(&mut self, held: Option<Vec<RecordBatch>>) {
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
}

impl Unflushed {
    /// `t`, just handed to `sink`.
    pub(super) fn new(t: Tick, sink: &dyn Sink) -> Unflushed {
        if sink.keeps_unflushed() {
            Unflushed::InSink { ts: t.ts, seq: t.seq, rows: t.rows.len() }
        } else {
            Unflushed::copy(t)
        }
    }

    /// `t` kept whole, less its process list.
    pub(super) fn copy(t: Tick) -> Unflushed {
        Unflushed::Copy(Tick { procs: Vec::new(), ..t })
    }

    pub(super) fn ts(&self) -> DateTime<Utc> {
        match self {
            Unflushed::InSink { ts, .. } => *ts,
            Unflushed::Copy(t) => t.ts,
        }
    }
}

/// Whether the piece's files are gone (the outage's message says its ticks are lost and waits for the
/// directory to come back), or the disk refused the data (full, an I/O error, a moved partial: the
/// files keep what was flushed and the writer retries).
pub(super) fn is_removed(e: &SinkError) -> bool {
    match e.kind() {
        SinkErrorKind::Removed => true,
        SinkErrorKind::Full
        | SinkErrorKind::Io
        | SinkErrorKind::Moved
        | SinkErrorKind::NameTaken
        | SinkErrorKind::Format
        | SinkErrorKind::Locked
        | SinkErrorKind::Refused
        | SinkErrorKind::Internal => false,
    }
}
