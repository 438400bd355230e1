//! One tick of the record loop: sampling every source once ([`Sources`]), folding sub-samples
//! into output rows ([`Rows`]) and handing rows to the outputs with the `missed` count ([`Emitter`]).

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SubsecRound, Utc};

use crate::agg::{Aggregator, OnePlan};
use crate::child::Job;
use crate::clock::Stamper;
use crate::control::PhaseClock;
use crate::fanout::Outputs;
use gpumon_schema::catalog::{Field, Source};
use gpumon_schema::{GpuEvent, GpuProc, Row, RunStats, Selection, Tick, Value};
use gpumon_source::CgroupSource;
use gpumon_source::GpuSource;
use gpumon_source::HostSource;
use gpumon_source::PidSet;
use gpumon_util::warn_once;

/// The sources a run reads, each present only when something selected needs it.
pub(crate) struct Sources {
    pub host: Option<HostSource>,
    pub cgroup: Option<CgroupSource>,
    pub job: Option<Job>,
    pub gpu: Option<GpuSource>,
    /// Wall-clock stamps that never repeat or go back, whatever the clock does.
    pub clock: Stamper,
    /// Room for a host row: the values the sources set in the last one, plus what the loop adds to
    /// a host-only row after them. It never grows (it grew four times a tick).
    pub host_cap: usize,
}

/// What a sample holds before its GPUs are read: its stamp and the host's values.
pub(crate) struct Begun {
    ts: DateTime<Utc>,
    host_row: Row,
}

impl Sources {
    /// The first part of a sample: the stamp, and the host, cgroup and job values, read once
    /// (they are repeated on each GPU row by [`Sources::finish`]). `added`: how many fields the loop
    /// sets on a host-only row after the sources ([`Rows::fields_added`]).
    pub(crate) fn begin(&mut self, hostname: &Arc<str>, added: usize) -> Begun {
        // To the millisecond, the precision CSV and the nvidia-smi style write, so a CSV and a Parquet
        // recording hold the same instants (stamps are at least 1 ms apart, so they stay distinct).
        let ts = self.clock.now().trunc_subsecs(3);
        let mut host_row = Row::with_capacity(self.host_cap);
        host_row.set(Field::Host, Value::S(hostname.clone()));
        if let Some(h) = &mut self.host {
            h.sample(&mut host_row);
        }
        if let Some(c) = &mut self.cgroup {
            c.sample(&mut host_row);
        }
        // The job's tree is read before the GPUs so `job.gpu_memory` uses this tick's PIDs.
        if let Some(j) = &mut self.job {
            j.sample(&mut host_row);
        }
        self.host_cap = self.host_cap.max(host_row.set_count() + added);
        Begun { ts, host_row }
    }

    /// The sample once its GPUs were read (by the loop's thread, between `begin` and this): one
    /// row per GPU with the host values, or the host row alone. NVML events that arrived since
    /// the last sample go to `events`.
    pub(crate) fn finish(
        &mut self,
        sel: &Selection,
        b: Begun,
        seq: u64,
        budget: Duration,
        events: &mut Vec<GpuEvent>,
    ) -> Tick {
        let Begun { ts, host_row } = b;
        let mut rows = Vec::with_capacity(self.gpu.as_ref().map_or(1, |g| g.gpus().count()));
        let mut procs: Vec<GpuProc> = Vec::new();
        if let Some(g) = &mut self.gpu {
            g.collect(seq, budget, &mut rows, &mut procs, events);
        }
        if rows.is_empty() {
            rows.push(host_row);
        } else {
            // GPU rows hold no host field yet: an unset field already reads null.
            let host = sel
                .fields()
                .filter(|f| f.def().source != Source::Gpu && *host_row.get(*f) != Value::Null);
            for f in host {
                let v = host_row.get(f);
                for r in &mut rows {
                    r.set(f, v.clone());
                }
            }
        }
        Tick { ts, seq, rows, procs }
    }
}

/// Sub-samples on their way to output rows: sub-sample m (from 1) belongs to output row
/// `(m - 1) / per_row`. A late skip may leave the pending row incomplete (emitted as is, with
/// fewer `samples`) and whole rows empty (counted in `missed`).
pub(crate) struct Rows {
    per_row: u64,
    /// How a row of one sub-sample is finished (the selection's `.max` and typed fields).
    one: OnePlan,
    agg: Aggregator,
    /// The output row that the aggregator's pending sub-samples belong to.
    pending_row: Option<u64>,
    /// The next output row expected; rows skipped over are counted as missed.
    next_row: u64,
    last_sub: Option<Tick>,
}

impl Rows {
    pub(crate) fn new(per_row: u64, sel: &Selection) -> Rows {
        Rows {
            per_row,
            one: OnePlan::new(sel),
            agg: Aggregator::new(),
            pending_row: None,
            next_row: 0,
            last_sub: None,
        }
    }

    /// How many fields an output row may get after its sources filled it: `samples`, the
    /// selection's `.max` columns, and the emitter's `missed` and `phase`.
    pub(crate) fn fields_added(&self) -> usize {
        self.one.fields_added() + 2
    }

    /// The output row sub-sample `m` belongs to.
    pub(crate) fn row_of(&self, m: u64) -> u64 {
        (m - 1) / self.per_row
    }

    /// A sub-sample of `row` is about to be taken: returns the pending earlier row, complete as
    /// it is, and the number of whole rows skipped over before `row`.
    pub(crate) fn enter(&mut self, row: u64) -> (Option<Tick>, u64) {
        let mut left = None;
        if self.pending_row.is_some_and(|p| p != row) {
            left = self.last_sub.as_ref().and_then(|last| self.agg.take(last));
            self.next_row = self.pending_row.map_or(self.next_row, |p| p + 1);
        }
        let mut missed = 0;
        if row > self.next_row {
            missed = row - self.next_row;
            self.next_row = row;
        }
        (left, missed)
    }

    /// Add sub-sample `m` of `row`; returns the output row when `m` is its last sub-sample.
    pub(crate) fn push(&mut self, sub: Tick, row: u64, m: u64) -> Option<Tick> {
        // One sub-sample per row (no --sample-every): the row is the sub-sample, nothing pends.
        if self.per_row == 1 && self.pending_row.is_none() {
            self.next_row = row + 1;
            return Some(Aggregator::rows_of_one_sample(sub, &self.one));
        }
        self.agg.push(&sub);
        self.pending_row = Some(row);
        let mut done = None;
        if m.is_multiple_of(self.per_row) {
            self.next_row = row + 1;
            done = self.agg.take(&sub);
            self.pending_row = None;
        }
        self.last_sub = Some(sub);
        done
    }

    /// The partial interval at the end of the run (still data).
    pub(crate) fn rest(&mut self) -> Option<Tick> {
        self.last_sub.as_ref().and_then(|last| self.agg.take(last))
    }
}

/// The outputs of a run with its counters: rows handed on, ticks missed, dropped, late.
pub(crate) struct Emitter {
    pub outputs: Outputs,
    pub stats: RunStats,
    /// The phase marks of a run with a control channel, stamped on every row (`phase`).
    phase: Option<PhaseClock>,
    /// The job's PID set, for `proc.job` of the per-process rows.
    job: Option<PidSet>,
    /// The marks of a run with a control channel, for the work counters (`progress.KEY`).
    progress: Option<Arc<crate::control::Marks>>,
    /// Ticks missed since the last row handed on; carried by the next row's `missed`.
    pending_missed: u64,
}

impl Emitter {
    pub(crate) fn new(outputs: Outputs, job: Option<PidSet>, phase: Option<PhaseClock>) -> Emitter {
        Emitter {
            outputs,
            stats: RunStats::default(),
            phase,
            job,
            progress: None,
            pending_missed: 0,
        }
    }

    /// Stamp every row with the amounts of the run's work counters (`record --progress`).
    pub(crate) fn with_progress(mut self, marks: Option<Arc<crate::control::Marks>>) -> Emitter {
        self.progress = marks;
        self
    }

    /// Count `n` ticks that will never be recorded.
    pub(crate) fn miss(&mut self, n: u64) {
        self.pending_missed += n;
        self.stats.missed += n;
    }

    /// Hand one output row set to the outputs, carrying the count of ticks missed just before it.
    pub(crate) fn emit(&mut self, mut t: Tick) {
        for r in &mut t.rows {
            r.set(Field::Missed, Value::U(self.pending_missed));
        }
        // A row belongs to the phase current at its timestamp, the end of the interval it describes.
        if let Some(clock) = &mut self.phase {
            let p = clock.at(t.ts);
            for r in &mut t.rows {
                r.set(Field::Phase, p.clone());
            }
        }
        // The work done during the row's interval: what the job reported since the last row.
        if let Some(amounts) = self.progress.as_ref().and_then(|m| m.progress.take()) {
            for r in &mut t.rows {
                r.set_progress(Some(amounts.clone()));
            }
        }
        self.stats.ticks += 1;
        self.stats.rows += t.rows.len() as u64;
        self.stats.first.get_or_insert(t.ts);
        self.stats.last = Some(t.ts);
        // A read guard, not a copy: only this thread writes the set, and only between ticks.
        let pids = self.job.as_ref().and_then(|j| j.read().ok());
        let in_job = |pid: u32| pids.as_ref().is_some_and(|p| p.contains(&pid));
        let in_job: Option<&dyn Fn(u32) -> bool> =
            if pids.is_some() { Some(&in_job) } else { None };
        match self.outputs.send(t, &self.stats, in_job) {
            Ok(()) => self.pending_missed = 0,
            Err(()) => {
                self.stats.dropped += 1;
                self.pending_missed += 1;
                warn_once(
                    "queue-full",
                    "the writer is falling behind; ticks are being dropped and counted",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(seq: u64) -> Tick {
        Tick { ts: Utc::now(), seq, rows: vec![Row::default()], procs: Vec::new() }
    }

    /// Feed sub-samples `ms` (three per row) and return (row, samples, missed before it) per emitted row.
    fn feed(ms: &[u64]) -> Vec<(u64, u64, u64)> {
        let mut rows = Rows::new(3, &Selection::defaults());
        let (mut out, mut missed) = (Vec::new(), 0);
        let samples = |t: &Tick| t.rows[0].get(Field::Samples).as_u64().unwrap_or(0);
        for &m in ms {
            let row = rows.row_of(m);
            let (left, skipped) = rows.enter(row);
            if let Some(t) = left {
                out.push((t.seq, samples(&t), missed));
                missed = 0;
            }
            missed += skipped;
            if let Some(t) = rows.push(sub(m), row, m) {
                out.push((t.seq, samples(&t), missed));
                missed = 0;
            }
        }
        if let Some(t) = rows.rest() {
            out.push((t.seq, samples(&t), missed));
        }
        out
    }

    #[test]
    fn whole_rows_on_schedule() {
        assert_eq!(feed(&[1, 2, 3, 4, 5, 6]), [(3, 3, 0), (6, 3, 0)]);
    }

    #[test]
    fn a_skip_emits_the_partial_row_and_counts_the_rows_jumped_over() {
        // Sub-samples 3..7 never happen: row 0 ends short, row 1 is missed, row 2 runs 8 and 9.
        assert_eq!(feed(&[1, 2, 8, 9]), [(2, 2, 0), (9, 2, 1)]);
    }

    #[test]
    fn the_partial_interval_at_the_end_is_kept() {
        assert_eq!(feed(&[1, 2, 3, 4]), [(3, 3, 0), (4, 1, 0)]);
    }
}
