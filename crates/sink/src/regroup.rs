//! Rows regrouped into ticks and written by a sink (`gpumon convert`): consecutive rows of one host
//! belong to one tick while their GPU has not appeared in it yet and they lie within 2 s of its first
//! row (nvidia-smi queries GPUs one after another, a few ms apart); a tick is stamped with its first
//! row's time, as gpumon's own rows are. The run's interval is estimated from the first ticks.

use std::path::PathBuf;

use crate::error::Result;
use chrono::{DateTime, Utc};

use crate::{self as sink, Sink, Target};
use gpumon_schema::catalog::Field;
use gpumon_schema::{Format, Row, RunMeta, Selection, Tick};

/// Rows of one tick may spread this far (µs).
const TICK_SPREAD_US: i64 = 2_000_000;
/// Ticks held back to estimate the interval for the file's metadata.
const HEAD_TICKS: usize = 64;
/// Rows in, ticks out to a sink of the output's format.
pub struct TickWriter {
    format: Format,
    tmp: PathBuf,
    sel: Selection,
    command: String,
    job: Option<gpumon_schema::JobId>,
    sink: Option<Box<dyn Sink>>,
    head: Vec<Tick>,
    cur: Option<Tick>,
    seq: u64,
    rows: u64,
    /// The work counters' columns (`progress.KEY`) written: those of the first batch read.
    counters: Option<Vec<String>>,
}

impl TickWriter {
    /// A writer of `format` into `tmp` (created at the first flush), with the columns of `sel`;
    /// `command` is the metadata's command line.
    pub fn new(format: Format, tmp: PathBuf, sel: Selection, command: String) -> TickWriter {
        TickWriter {
            format,
            tmp,
            sel,
            command,
            job: None,
            sink: None,
            head: Vec::new(),
            cur: None,
            seq: 0,
            rows: 0,
            counters: None,
        }
    }

    /// The job the output belongs to, written in its footer (`gpumon.job.*`) as `record` writes it.
    pub fn with_job(mut self, job: Option<gpumon_schema::JobId>) -> TickWriter {
        self.job = job;
        self
    }

    /// Whether the rows of a batch with these counter columns can keep them (the columns written are
    /// those of the first batch; another set is left out, with a warning).
    pub fn keeps_counters(&mut self, names: Vec<String>) -> bool {
        match &self.counters {
            None if self.sink.is_none() && self.head.is_empty() => {
                self.counters = Some(names);
                true
            }
            Some(c) if *c == names => true,
            None if names.is_empty() => true,
            _ => {
                gpumon_util::warn_once(
                    "convert-counters",
                    "the inputs have different progress.* columns; only the first input's are converted",
                );
                false
            }
        }
    }

    /// Add one row read back with its timestamp; a new timestamp closes the tick before it.
    pub fn push_row(&mut self, ts: i64, row: Row) -> Result<()> {
        let gpu = row.get(Field::Index).as_u64();
        let host = row.get(Field::Host).clone();
        let same = self.cur.as_ref().is_some_and(|t| {
            let first = &t.rows[0];
            let t0 = t.ts.timestamp_micros();
            first.get(Field::Host) == &host
                && (ts == t0
                    || (gpu.is_some()
                        && ts >= t0
                        && ts - t0 < TICK_SPREAD_US
                        && !t.rows.iter().any(|r| r.get(Field::Index).as_u64() == gpu)))
        });
        if !same {
            self.flush_tick()?;
            self.seq += 1;
            let when = DateTime::<Utc>::from_timestamp_micros(ts).unwrap_or_default();
            self.cur = Some(Tick { ts: when, seq: self.seq, rows: Vec::new(), procs: Vec::new() });
        }
        if let Some(t) = &mut self.cur {
            t.rows.push(row);
        }
        self.rows += 1;
        Ok(())
    }

    fn flush_tick(&mut self) -> Result<()> {
        let Some(t) = self.cur.take() else { return Ok(()) };
        match &mut self.sink {
            Some(s) => s.write_tick(&t),
            None => {
                self.head.push(t);
                if self.head.len() >= HEAD_TICKS { self.open() } else { Ok(()) }
            }
        }
    }

    /// Open the sink with metadata from the first ticks, and write them.
    fn open(&mut self) -> Result<()> {
        let Some(first) = self.head.first() else { return Ok(()) };
        let mut steps: Vec<i64> = self
            .head
            .windows(2)
            .map(|w| (w[1].ts - w[0].ts).num_microseconds().unwrap_or(0))
            .collect();
        steps.retain(|&s| s > 0);
        steps.sort_unstable();
        let interval_s = steps.get(steps.len() / 2).map_or(0.0, |&s| s as f64 * 1e-6);
        let meta = RunMeta {
            hostname: first
                .rows
                .first()
                .and_then(|r| r.get(Field::Host).as_str())
                .unwrap_or("-")
                .to_string(),
            interval_s,
            command: self.command.clone(),
            start: first.ts,
            driver_version: None,
            job: self.job.clone(),
        };
        let keys: Vec<String> = (self.counters.iter().flatten())
            .filter_map(|n| gpumon_schema::progress::column_key(n).map(str::to_string))
            .collect();
        let sel = self.sel.clone().with_progress(&keys);
        let mut s = sink::open(self.format, &Target::File(self.tmp.clone()), None, &sel, &meta)?;
        for t in self.head.drain(..) {
            s.write_tick(&t)?;
        }
        self.sink = Some(s);
        Ok(())
    }

    /// Write the last tick and close the output; returns the rows written.
    pub fn finish(mut self) -> Result<u64> {
        self.flush_tick()?;
        if self.sink.is_none() {
            self.open()?;
        }
        if let Some(s) = self.sink.take() {
            s.finish()?;
        }
        Ok(self.rows)
    }
}
