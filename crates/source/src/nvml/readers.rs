//! Who reads the GPUs: the record loop's thread of the moment reads them itself (one wake-up a
//! tick); a standby thread sleeps on a [`Watchdog`] armed for each tick's reads and takes the loop
//! over when a read overruns; a GPU that hung is read by a worker thread of its own from then on.
//!
//! The hand-over is decided by one word, `phase` (`epoch << 2 | state`): the reading thread sets
//! `READING` under its epoch and ends its reads by swapping it to `DONE`; the standby, woken by the
//! alarm, swaps it to the next epoch's `TAKEN`. Exactly one of the two swaps succeeds, so exactly
//! one thread goes on with the tick. A deposed thread, back from its call, posts its late answer
//! (used only if its tick is still being collected) and leaves; the GPU it was stuck on goes to a
//! worker, unless the call came back within the budget (a slow moment, not a hang).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use crate::nvml::device::{GpuInfo, Lost};
use crate::nvml::sample::{Ctx, DeviceState, Reading, read_gpu};
use crate::nvml::watchdog::Watchdog;
use gpumon_util::warn;

/// A GPU's answer: the tick it answers and the reading.
pub(super) type Slot = Mutex<Option<(u64, Result<Reading, Lost>)>>;

const READING: u64 = 1;
const DONE: u64 = 2;
const TAKEN: u64 = 3;

/// One GPU as every reading thread sees it.
pub(super) struct Gpu {
    pub(super) info: GpuInfo,
    pub(super) slot: Slot,
    /// A thread is inside an NVML call for this GPU.
    in_call: AtomicBool,
    /// Read by a worker of its own: it hung once, or no standby could be had.
    on_worker: AtomicBool,
    worker: Mutex<Option<Arc<Worker>>>,
}

/// The selected GPUs and the threads' shared state; [`GpuReads::reader`] reads them.
pub struct GpuReads {
    pub(super) ctx: Ctx,
    pub(super) gpus: Vec<Gpu>,
    gate: Gate,
    /// None: no alarm could be made, so every GPU is read by a worker.
    watchdog: Option<Watchdog>,
    phase: AtomicU64,
    /// Position of the GPU the reading thread is in, and when its alarm is due (ns from `origin`).
    reading: AtomicU64,
    alarm_ns: AtomicU64,
    origin: Instant,
    quit: AtomicBool,
    /// Some GPU has been put on a worker (the workers are looked at only then).
    any_worker: AtomicBool,
}

/// One tick's reads: its number, when it started, and how long its GPUs may take.
#[derive(Debug, Clone, Copy)]
pub struct TickReads {
    /// The tick's number.
    pub seq: u64,
    /// When the tick started.
    pub at: Instant,
    /// How long its GPUs may take.
    pub budget: Duration,
}

impl GpuReads {
    pub(super) fn new(ctx: Ctx, infos: Vec<GpuInfo>) -> GpuReads {
        let watchdog = Watchdog::new()
            .map_err(|e| {
                warn(&format!("no timer for the GPU standby thread ({e}); each GPU is read by a thread of its own"))
            })
            .ok();
        let watchdog_missing = watchdog.is_none();
        let gpus = infos
            .into_iter()
            .map(|info| Gpu {
                info,
                slot: Mutex::new(None),
                in_call: AtomicBool::new(false),
                on_worker: AtomicBool::new(watchdog_missing),
                worker: Mutex::new(None),
            })
            .collect();
        GpuReads {
            ctx,
            gpus,
            gate: Gate { state: AtomicU64::new(0), sampler: Mutex::new(None) },
            watchdog,
            phase: AtomicU64::new(0),
            reading: AtomicU64::new(0),
            alarm_ns: AtomicU64::new(u64::MAX),
            origin: Instant::now(),
            quit: AtomicBool::new(false),
            any_worker: AtomicBool::new(watchdog_missing),
        }
    }

    /// A reader for the calling thread (it keeps, per GPU, what spans sub-samples).
    pub fn reader(self: &Arc<Self>) -> GpuReader<'_> {
        GpuReader { reads: self, states: self.gpus.iter().map(|_| None).collect() }
    }

    /// No standby thread could be started: every GPU goes to a worker of its own.
    pub fn without_standby(&self) {
        self.any_worker.store(true, Ordering::SeqCst);
        for g in &self.gpus {
            g.on_worker.store(true, Ordering::SeqCst);
        }
    }

    /// Sleep until the reading thread overruns, then take its place: returns the new epoch to
    /// read under; None once the run is over ([`GpuReads::quit`]) or when there is no alarm.
    pub fn stand_by(&self) -> Option<u64> {
        let w = self.watchdog.as_ref()?;
        loop {
            w.wait();
            if self.quit.load(Ordering::SeqCst) {
                return None;
            }
            let p = self.phase.load(Ordering::SeqCst);
            // An expiry the reader's disarm raced with, from reads already over.
            if p & 3 != READING || self.since_origin() < self.alarm_ns.load(Ordering::SeqCst) {
                continue;
            }
            let epoch = (p >> 2) + 1;
            if self
                .phase
                .compare_exchange(p, epoch << 2 | TAKEN, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                if let Some(g) = self.gpus.get(self.reading.load(Ordering::SeqCst) as usize)
                    && g.in_call.load(Ordering::SeqCst)
                {
                    self.any_worker.store(true, Ordering::SeqCst);
                    g.on_worker.store(true, Ordering::SeqCst);
                }
                return Some(epoch);
            }
        }
    }

    /// The run is over: the standby returns from [`GpuReads::stand_by`]; workers end.
    pub fn quit(&self) {
        self.quit.store(true, Ordering::SeqCst);
        if let Some(w) = &self.watchdog {
            w.arm(Duration::ZERO);
        }
        for g in &self.gpus {
            if let Some(w) = g.worker.lock().ok().and_then(|mut w| w.take()) {
                w.close();
            }
        }
    }

    fn since_origin(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Ask the workers of the GPUs on workers for tick `seq` (starting any missing one, ending
    /// those of GPUs back on the reading thread); returns how many were asked.
    fn request_workers(self: &Arc<Self>, seq: u64) -> usize {
        if !self.any_worker.load(Ordering::SeqCst) {
            self.gate.open(seq, 0);
            return 0;
        }
        let mut asked = Vec::new();
        for (k, g) in self.gpus.iter().enumerate() {
            let Ok(mut w) = g.worker.lock() else { continue };
            if !g.on_worker.load(Ordering::SeqCst) {
                if let Some(w) = w.take() {
                    w.close();
                }
                continue;
            }
            if w.is_none() {
                *w = spawn_worker(self, k);
            }
            // A GPU still inside an older call (its worker, or a deposed reader) is not asked again.
            if let Some(w) = w.as_ref().filter(|w| !w.busy() && !g.in_call.load(Ordering::SeqCst)) {
                asked.push(w.clone());
            }
        }
        self.gate.open(seq, asked.len());
        for w in &asked {
            w.request.store(seq, Ordering::SeqCst);
            w.thread.unpark();
        }
        asked.len()
    }

    /// Wait for the workers' answers to `seq` until `deadline`.
    fn wait_workers(&self, deadline: Instant) {
        if let Ok(mut t) = self.gate.sampler.lock()
            && t.as_ref().is_none_or(|t| t.id() != thread::current().id())
        {
            *t = Some(thread::current());
        }
        while self.gate.missing() > 0 {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            thread::park_timeout(deadline - now);
        }
    }
}

/// A thread's reader of the GPUs, with what it keeps per GPU between sub-samples (a GPU read by
/// another thread for a while starts afresh here: its first GPM sample after that has no values).
pub struct GpuReader<'n> {
    reads: &'n Arc<GpuReads>,
    /// Per GPU (by position), made at its first reading here.
    states: Vec<Option<DeviceState<'n>>>,
}

impl GpuReader<'_> {
    /// Read the GPUs of `t` not yet answered, on this thread, under `epoch`; `rescue`: the tick
    /// was taken over from a deposed thread (its workers were already asked). Then wait for the
    /// workers' answers. False when this thread was deposed meanwhile: another one has the tick.
    pub fn read_tick(&mut self, epoch: u64, t: TickReads, rescue: bool) -> bool {
        let reads = self.reads;
        let end = t.at + t.budget;
        let asked =
            if rescue { reads.gate.missing() as usize } else { reads.request_workers(t.seq) };
        let me = epoch << 2 | READING;
        // The alarm's time before the phase: a standby that sees `READING` sees this tick's alarm.
        let after = (t.budget / 2).min(end.saturating_duration_since(Instant::now()));
        reads
            .alarm_ns
            .store(reads.since_origin().saturating_add(after.as_nanos() as u64), Ordering::SeqCst);
        reads.phase.store(me, Ordering::SeqCst);
        if let Some(w) = &reads.watchdog {
            w.arm(after);
        }
        for (k, g) in reads.gpus.iter().enumerate() {
            if g.on_worker.load(Ordering::SeqCst)
                || g.in_call.load(Ordering::SeqCst)
                || g.slot.lock().is_ok_and(|s| s.as_ref().is_some_and(|a| a.0 == t.seq))
            {
                continue;
            }
            let t0 = Instant::now();
            let Some(state) = self.states.get_mut(k).filter(|_| t0 < end) else { break };
            reads.reading.store(k as u64, Ordering::SeqCst);
            g.in_call.store(true, Ordering::SeqCst);
            let state =
                state.get_or_insert_with(|| DeviceState::new(&reads.ctx.nvml, &reads.ctx.sel));
            let r = read_gpu(&reads.ctx, &g.info, state);
            g.in_call.store(false, Ordering::SeqCst);
            if let Ok(mut s) = g.slot.lock() {
                *s = Some((t.seq, r));
            }
            if reads.phase.load(Ordering::SeqCst) != me {
                // Deposed during that call; one that came back within the budget did not hang.
                if t0.elapsed() < t.budget {
                    g.on_worker.store(false, Ordering::SeqCst);
                }
                return false;
            }
        }
        if reads
            .phase
            .compare_exchange(me, epoch << 2 | DONE, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return false;
        }
        if let Some(w) = &reads.watchdog {
            w.disarm();
        }
        if asked > 0 {
            reads.wait_workers(end);
        }
        true
    }
}

/// A worker thread reading one GPU when asked (a GPU that hung keeps it, not the loop).
struct Worker {
    thread: Thread,
    /// The tick to sample (0: none yet).
    request: AtomicU64,
    /// The last tick it answered.
    done: AtomicU64,
    closed: AtomicBool,
}

impl Worker {
    fn busy(&self) -> bool {
        self.done.load(Ordering::SeqCst) < self.request.load(Ordering::SeqCst)
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// The answers still missing for the current tick, shared by the reading thread and every
/// worker: the tick's number and the count in one word, so a late answer to an older tick never
/// counts.
struct Gate {
    state: AtomicU64,
    sampler: Mutex<Option<Thread>>,
}

const COUNT_BITS: u32 = 16;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

impl Gate {
    fn open(&self, seq: u64, requested: usize) {
        self.state.store(seq << COUNT_BITS | (requested as u64 & COUNT_MASK), Ordering::SeqCst);
    }

    fn missing(&self) -> u64 {
        self.state.load(Ordering::SeqCst) & COUNT_MASK
    }

    /// A GPU answered `seq`: count it if it is the current tick, and wake the sampler on the last.
    fn answered(&self, seq: u64) {
        let mut cur = self.state.load(Ordering::SeqCst);
        while cur >> COUNT_BITS == seq && cur & COUNT_MASK > 0 {
            match self.state.compare_exchange(cur, cur - 1, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => {
                    if cur & COUNT_MASK == 1
                        && let Ok(t) = self.sampler.lock()
                        && let Some(t) = t.as_ref()
                    {
                        t.unpark();
                    }
                    return;
                }
                Err(now) => cur = now,
            }
        }
    }
}

/// A worker's loop: park until a new tick is requested, read its GPU, post the answer.
fn serve(w: &Worker, reads: &GpuReads, k: usize) {
    let Some(g) = reads.gpus.get(k) else { return };
    let mut state = DeviceState::new(&reads.ctx.nvml, &reads.ctx.sel);
    let mut last = 0;
    while !w.closed.load(Ordering::SeqCst) {
        let seq = w.request.load(Ordering::SeqCst);
        if seq == last {
            thread::park();
            continue;
        }
        g.in_call.store(true, Ordering::SeqCst);
        let r = read_gpu(&reads.ctx, &g.info, &mut state);
        g.in_call.store(false, Ordering::SeqCst);
        if let Ok(mut s) = g.slot.lock() {
            *s = Some((seq, r));
        }
        // Done before the answer counts: the reader, woken by it, may ask for the next tick at once.
        w.done.store(seq, Ordering::SeqCst);
        reads.gate.answered(seq);
        last = seq;
    }
}

/// Start a worker for GPU `k`; None (warned) when no thread can be started.
fn spawn_worker(reads: &Arc<GpuReads>, k: usize) -> Option<Arc<Worker>> {
    let name =
        reads.gpus.get(k).map_or_else(|| "gpu".to_string(), |g| format!("gpu{}", g.info.index));
    let reads = reads.clone();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Arc<Worker>>(1);
    let spawned = thread::Builder::new().name(name).stack_size(256 * 1024).spawn(move || {
        if let Ok(w) = rx.recv() {
            serve(&w, &reads, k);
        }
    });
    match spawned {
        Ok(h) => {
            let w = Arc::new(Worker {
                thread: h.thread().clone(),
                request: AtomicU64::new(0),
                done: AtomicU64::new(0),
                closed: AtomicBool::new(false),
            });
            tx.send(w.clone()).ok()?;
            Some(w)
        }
        Err(e) => {
            warn(&format!(
                "cannot start a GPU sampling thread ({e}); that GPU's fields stay empty"
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_counts_only_answers_to_the_current_tick() {
        let g = Gate { state: AtomicU64::new(0), sampler: Mutex::new(None) };
        g.open(5, 2);
        g.answered(4);
        assert_eq!(g.missing(), 2, "a late answer to tick 4 does not count for tick 5");
        g.answered(5);
        g.answered(5);
        assert_eq!(g.missing(), 0);
        g.answered(5);
        assert_eq!(g.missing(), 0, "never below zero");
    }
}
