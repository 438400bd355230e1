//! The record loop of a run with GPUs: it runs on a thread that reads the GPUs itself (one wake-up
//! a tick, no hand-off), beside a standby thread that takes the loop over when a read overruns
//! (source/readers.rs); the caller's thread only waits for the run's end. A thread stuck in a
//! driver call is left behind, never waited for, so a hung GPU costs its rows and nothing else.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;

use anyhow::{Result, anyhow};
use crossbeam_channel::Sender;

use crate::fanout::Locks;
use crate::signals::Signals;
use crate::{Cursor, Pending, Recorder};
use gpumon_source::{GpuReader, GpuReads, TickReads};

/// The stack of a thread that runs the loop: the main thread's, where the loop ran before.
const LOOP_STACK: usize = 8 << 20;

/// The loop's state, handed from thread to thread under [`Shared::state`].
struct Loop {
    rec: Recorder<'static>,
    signals: Signals,
    locks: Locks,
    cur: Cursor,
    /// The sub-sample whose GPUs are being read.
    pending: Option<Pending>,
    /// How the loop ended, once it has.
    result: Option<Result<()>>,
}

/// What the loop's threads share. The state's lock is held for a tick's work except its GPU reads,
/// so a standby taking over can finish the tick.
struct Shared {
    state: Mutex<Option<Loop>>,
    reads: Arc<GpuReads>,
    /// Tells the caller's thread that the loop ended (or a loop thread panicked).
    done: Sender<()>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Option<Loop>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The loop is over with `r`: the rows still aggregating are emitted, the standby and the
    /// workers end, the caller's thread is told.
    fn end(&self, l: &mut Loop, r: Result<()>) {
        if r.is_ok() {
            l.rec.close_rows();
        }
        l.result = Some(r);
        self.reads.quit();
        let _ = self.done.try_send(());
    }
}

/// Run the loop of `rec` until the run ends; returns the recorder (to finish) and the locks.
pub(super) fn run(
    rec: Recorder<'static>,
    signals: Signals,
    locks: Locks,
    reads: Arc<GpuReads>,
) -> Result<(Recorder<'static>, Locks)> {
    let cur = rec.cursor(&signals);
    let (done, ended) = crossbeam_channel::bounded(1);
    let l = Loop { rec, signals, locks, cur, pending: None, result: None };
    let sh = Arc::new(Shared { state: Mutex::new(Some(l)), reads, done });
    if !spawn(&sh, true) {
        sh.reads.without_standby();
    }
    if !spawn(&sh, false) {
        // No thread for the loop: it runs here, every GPU on a worker of its own (nothing here
        // can hang in a driver call).
        sh.reads.without_standby();
        let reads = sh.reads.clone();
        lead(&sh, &mut reads.reader(), 0);
    }
    let _ = ended.recv();
    let l = sh.lock().take().ok_or_else(|| anyhow!("the record loop's state is gone"))?;
    l.result.unwrap_or_else(|| Err(anyhow!("the record loop stopped unexpectedly")))?;
    Ok((l.rec, l.locks))
}

/// Start a thread that leads the loop (`standby`: that waits to take it over); false when none
/// could be started.
fn spawn(sh: &Arc<Shared>, standby: bool) -> bool {
    let sh = sh.clone();
    let name = if standby { "gpumon-standby" } else { "gpumon-loop" };
    let started =
        thread::Builder::new().name(name.into()).stack_size(LOOP_STACK).spawn(move || {
            let _note = PanicNote(&sh);
            let reads = sh.reads.clone();
            let mut reader = reads.reader();
            if standby {
                take_over(&sh, &mut reader);
            } else {
                lead(&sh, &mut reader, 0);
            }
        });
    started.is_ok()
}

/// Tells the caller's thread when a loop thread panics (it would otherwise wait for good).
struct PanicNote<'a>(&'a Shared);

impl Drop for PanicNote<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            let _ = self.0.done.try_send(());
        }
    }
}

/// Lead the loop under `epoch` until the run ends or this thread is deposed.
fn lead(sh: &Shared, reader: &mut GpuReader<'_>, epoch: u64) {
    loop {
        let t = {
            let mut g = sh.lock();
            let Some(l) = g.as_mut() else { return };
            match l.rec.begin_tick(&mut l.cur, &l.signals) {
                Some(p) => {
                    let t = TickReads { seq: p.m, at: p.at, budget: l.cur.budget };
                    l.pending = Some(p);
                    t
                }
                None => return sh.end(l, Ok(())),
            }
        };
        if !reader.read_tick(epoch, t, false) || !finish_tick(sh) {
            return;
        }
    }
}

/// Wait as the standby; on an overrun, start the next standby, read the GPUs the deposed thread
/// did not reach, finish its tick and lead the loop from there.
fn take_over(sh: &Arc<Shared>, reader: &mut GpuReader<'_>) {
    let Some(epoch) = sh.reads.stand_by() else { return };
    if !spawn(sh, true) {
        sh.reads.without_standby();
    }
    let t = {
        let g = sh.lock();
        g.as_ref().and_then(|l| {
            l.pending.as_ref().map(|p| TickReads { seq: p.m, at: p.at, budget: l.cur.budget })
        })
    };
    let Some(t) = t else { return };
    if reader.read_tick(epoch, t, true) && finish_tick(sh) {
        lead(sh, reader, epoch);
    }
}

/// The rest of the pending tick after its GPU reads; false when the run is over.
fn finish_tick(sh: &Shared) -> bool {
    let mut g = sh.lock();
    let Some(l) = g.as_mut() else { return false };
    let Some(p) = l.pending.take() else { return true };
    match l.rec.end_tick(p, &l.cur, &mut l.locks) {
        Ok(true) => true,
        r => {
            sh.end(l, r.map(|_| ()));
            false
        }
    }
}
