//! Pieces of the output set: opened at the first flush, cut by size, time or SIGHUP, closed and
//! renamed into place, old ones retired.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::error::{Context, Result};
use chrono::{DateTime, Utc};

use crate::error::SinkErrorKind;
use crate::files;
use crate::piece::{PieceFiles, Settled};
use crate::{self as sink, Target};
use gpumon_schema::{Format, journal_path, partial_path};

use super::outage::is_removed;
use super::*;

impl State {
    /// Whether the open piece must be closed before a tick stamped `ts` (size or time rotation, or
    /// the sink is full: Parquet's bounded footer metadata).
    /// A piece without rows is never closed: its time boundary moves instead.
    pub(super) fn cut_due(&mut self, ts: DateTime<Utc>) -> bool {
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

    pub(super) fn open_piece(&mut self, start: DateTime<Utc>) -> Result<()> {
        let boundary = self.cfg.rotate_every.and_then(|every| next_boundary(start, every));
        let piece = match &self.set {
            None => Piece {
                sink: sink::open(
                    self.cfg.format,
                    &Target::Stdout,
                    None,
                    &self.cfg.selection,
                    &self.cfg.meta,
                )?,
                files: None,
                boundary: None,
                ticks: 0,
            },
            Some(set) => {
                let path = set.next_piece(
                    start,
                    self.opened == 0 || self.base_free,
                    self.last_piece.as_deref(),
                );
                let (data, journal) = if self.cfg.format == Format::Parquet {
                    (partial_path(&path), Some(journal_path(&path)))
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
                    let files =
                        PieceFiles::new(path.clone(), data.clone(), journal.clone(), s.files())?;
                    Ok((s, files))
                });
                let (sink, files) = match opened {
                    Ok(s) => s,
                    Err(e) => {
                        // Nothing valid was written: leave no empty or half-made file behind (but
                        // never remove what another program put at the name meanwhile).
                        let theirs = e.kind() == SinkErrorKind::NameTaken;
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
    pub(super) fn close_piece(&mut self) -> Result<()> {
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
    pub(super) fn renamed_away(&mut self, path: &Path) {
        if self.set.as_ref().is_some_and(|s| s.base() == path) {
            self.base_free = true;
        }
        if self.cfg.verbose {
            eprintln!("gpumon: {} was renamed; the next tick starts a new file", path.display());
        }
    }

    pub(super) fn has_other_files(&self, path: &Path) -> bool {
        !self.closed.is_empty()
            || self
                .set
                .as_ref()
                .is_some_and(|s| s.members().is_ok_and(|m| m.iter().any(|f| f != path)))
    }

    /// Close the open piece and apply retention; the next tick opens a new piece.
    pub(super) fn rotate(&mut self) -> Result<()> {
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
    pub(super) fn abandon(&mut self, files: PieceFiles, removed: bool) -> u64 {
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
    pub(super) fn settle_abandoned(&mut self, rebuild: bool) -> Result<()> {
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
}

/// The first multiple of `every` since the Unix epoch after `t` (wall-clock aligned cuts).
pub(super) fn next_boundary(t: DateTime<Utc>, every: Duration) -> Option<DateTime<Utc>> {
    let every_us = i64::try_from(every.as_micros()).ok().filter(|e| *e > 0)?;
    let now_us = t.timestamp_micros();
    let next = (now_us / every_us + 1) * every_us;
    DateTime::from_timestamp_micros(next)
}
