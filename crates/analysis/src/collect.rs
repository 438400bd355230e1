//! The collector: feeds Arrow batches into per-GPU and per-host accumulators column by column
//! (typed arrays to scratch vectors, then one tight loop per field), and joins the collectors of
//! consecutive parts of the data.
//!
//! Rows are keyed by host (the `host` column, or the input's default host) and GPU (`index`, or
//! `uuid` when there is no index). Host fields are taken once per tick: from the first row of each
//! new timestamp of a host. Windowed-out rows are skipped before anything is counted. The columns
//! read are those the catalogue declares statistics for ([`inputs`]) and the inputs of the derived
//! statistics ([`DERIVED_INPUTS`]).

use anyhow::Result;
use arrow_array::{Array, RecordBatch};

use crate::acc::{GpuAcc, HostAcc, Slot, inputs};
use crate::facts::HEALTH;
use crate::rowfacts;
use crate::rowfacts::RowRules;
use crate::stat::Scope;
use gpumon_schema::catalog::Field;
use gpumon_schema::cols::{self, NO_TS, NO_U64};

use super::keys::{Keyer, NONE, RowKeys, group_by_slot};

pub(crate) use super::keys::GpuKey;

/// What the collector needs to know before the first row.
#[derive(Debug, Clone, Default)]
pub struct CollectConfig {
    /// The rows counted: those inside this window.
    pub window: crate::window::TimeWindow,
    /// Input-bound rule: utilization.gpu (and sm.active where present) below this, with work on the
    /// GPU, while the job's CPU (else the busiest core) is at or above `pegged_core`.
    pub input_bound_util: f64,
    /// The CPU share (% of one core) that counts as saturated for the input-bound rule.
    pub pegged_core: f64,
    /// What idle, busy and memory held mean for the per-row facts of the findings.
    pub rows: RowRules,
}

/// Columns read for the statistics derived from several fields (memory total from used + free, the
/// energy counter, throttle reasons, input-bound rows, the SM clock while busy, the power limit of
/// a hung collective, memory health), besides the keys and [`inputs`].
const DERIVED_INPUTS: [Field; 21] = [
    Field::MemFree,
    Field::EnergyTotal,
    Field::EventReasons,
    Field::PowerDraw,
    Field::CpuUtilMaxCore,
    Field::ClockSm,
    Field::EccUncorrected,
    Field::RemappedUncorrectable,
    Field::RemappedPending,
    Field::RemappedFailure,
    Field::RetiredSbe,
    Field::RetiredDbe,
    Field::RetiredPending,
    Field::PowerLimit,
    Field::EccCorrected,
    Field::PcieLinkWidthCurrent,
    Field::PcieLinkWidthMax,
    Field::PowerDefaultLimit,
    Field::PcieLinkGenCurrent,
    Field::PcieLinkGenMax,
    Field::ClockMaxSm,
];

/// The GPU readings of a row: when the batch has some of them and all are null in a row, the GPU did
/// not answer (lost, hung) and the row is a gap, not a sample.
const READINGS: [Field; 4] = [Field::UtilGpu, Field::MemUsed, Field::TempGpu, Field::PowerDraw];

/// Every field the analysis reads.
pub fn wanted_fields() -> Vec<Field> {
    let mut v = vec![Field::Timestamp, Field::Host, Field::Index, Field::Uuid, Field::Name];
    v.extend([Field::MigGi, Field::MigUuid, Field::MigProfile]);
    let fed = [Scope::Gpu, Scope::Host].into_iter().flat_map(|s| inputs(s).iter().map(|(f, _)| *f));
    for f in fed.chain(DERIVED_INPUTS) {
        if !v.contains(&f) {
            v.push(f);
        }
    }
    v
}

/// The batch's catalogue columns.
type Cols<'a> = [(Field, &'a dyn Array)];

fn find<'a>(cols: &Cols<'a>, f: Field) -> Option<&'a dyn Array> {
    cols.iter().find(|(g, _)| *g == f).map(|(_, c)| *c)
}

#[derive(Default)]
struct Scratch {
    ts: Vec<i64>,
    keys: RowKeys,
    slot: Vec<u32>,
    /// The slot of each row whose GPU was seen before this batch ([`Keyer::known`]).
    known: Vec<u32>,
    hrow: Vec<bool>,
    /// The rows of each GPU slot, in batch order: `order[lo..hi]` of each (slot, lo, hi).
    order: Vec<u32>,
    groups: Vec<(u32, usize, usize)>,
    /// The rows that start a new tick of their host.
    hrows: Vec<u32>,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    i: Vec<i64>,
    u: Vec<u64>,
    /// A narrow whole-number column's counts per GPU slot and value.
    cnt: Vec<u32>,
    /// Rows whose GPU readings are all null.
    empty: Vec<bool>,
    /// The per-row facts ([`Collector::row_facts`]).
    facts: rowfacts::Words,
}

impl Scratch {
    /// Sort the rows by GPU slot (a counting sort, stable: each slot's rows stay in batch order),
    /// and list the rows that start a host tick.
    fn group(&mut self, slots: usize) {
        group_by_slot(&self.slot, slots, &mut self.order, &mut self.groups);
        self.hrows.clear();
        self.hrows.extend(self.hrow.iter().enumerate().filter(|(_, h)| **h).map(|(i, _)| i as u32));
    }
}

thread_local! {
    /// The scratch of the collectors on this thread: one per reading thread, not one per part of
    /// the data (a part's collector is kept until the parts are joined).
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

/// One GPU's place in a [`Collector`]: its host (the keyer's host number), its key and its state.
#[derive(Clone)]
pub(crate) struct GpuSlot {
    pub(crate) host: u32,
    pub(crate) key: GpuKey,
    pub(crate) acc: GpuAcc,
}

/// Accumulators for one part of the data.
#[derive(Clone)]
pub struct Collector {
    cfg: CollectConfig,
    pub(crate) keys: Keyer,
    pub(crate) gpus: Vec<GpuSlot>,
    pub(crate) host_accs: Vec<HostAcc>,
    /// Held-back first tick of each host in this part: (host, row) of the current batch.
    pending_rows: Vec<(u32, usize)>,
    /// Rows outside the window.
    pub windowed_out: u64,
    /// The job's work counters (`progress.KEY` columns).
    pub(crate) progress: crate::progress::ProgressAcc,
}

impl Collector {
    /// An empty collector.
    pub fn new(cfg: CollectConfig) -> Collector {
        Collector {
            cfg,
            keys: Keyer::default(),
            gpus: Vec::new(),
            host_accs: Vec::new(),
            pending_rows: Vec::new(),
            windowed_out: 0,
            progress: Default::default(),
        }
    }

    fn host_id(&mut self, name: &str) -> u32 {
        let id = self.keys.host_id(name);
        self.grow_hosts();
        id
    }

    /// One host accumulator per known host.
    fn grow_hosts(&mut self) {
        while self.host_accs.len() < self.keys.hosts.len() {
            let press_pct = self.cfg.rows.host_mem_pct;
            self.host_accs.push(HostAcc { press_pct, ..HostAcc::default() });
        }
    }

    fn slot_for(&mut self, host: u32, key: GpuKey) -> u32 {
        let (s, new) = self.keys.slot_for(host, key);
        self.add_gpu(host, new);
        s
    }

    /// Per-GPU state for a slot the keyer has just created.
    fn add_gpu(&mut self, host: u32, new: Option<GpuKey>) {
        if let Some(key) = new {
            self.gpus.push(GpuSlot { host, key, acc: GpuAcc::default() });
        }
    }

    /// Count one batch; rows without a host value belong to `default_host`.
    pub fn visit(&mut self, batch: &RecordBatch, default_host: &str) -> Result<()> {
        self.visit_rows(batch, default_host, None)
    }

    /// Count the rows of a batch that `keep` selects (all without it); the others are passed over
    /// as if they were not there (one phase of a batch that holds several).
    pub(crate) fn visit_rows(
        &mut self,
        batch: &RecordBatch,
        default_host: &str,
        keep: Option<&[bool]>,
    ) -> Result<()> {
        let n = batch.num_rows();
        if n == 0 {
            return Ok(());
        }
        let cols = cols::catalogue_columns(batch);
        let mut s = SCRATCH.take();
        s.ts.clear();
        if find(&cols, Field::Timestamp).is_some_and(|c| cols::ts_micros(c, &mut s.ts)) {
            empty_rows(&cols, n, &mut s.empty);
            self.rows(&cols, default_host, n, keep, &mut s);
            s.group(self.gpus.len());
            self.timing(&cols, &mut s);
            self.gpu_columns(&cols, &mut s);
            self.memory_sum(&cols, &mut s);
            self.reasons(&cols, &mut s);
            self.row_facts(&cols, &mut s);
            self.health(&cols, &mut s);
            self.identity(&cols, &s);
            self.host_columns(&cols, &mut s);
            self.host_pressure(&cols, &mut s);
            self.counters(batch, &s);
        }
        SCRATCH.set(s);
        Ok(())
    }

    /// Key every row: its GPU slot ([`NONE`] outside the window, and for an empty row, which is only
    /// counted as one), and whether it is the first row of a new tick of its host (the first tick of
    /// a host in this part is held back).
    fn rows(
        &mut self,
        cols: &Cols<'_>,
        default_host: &str,
        n: usize,
        keep: Option<&[bool]>,
        s: &mut Scratch,
    ) {
        let (h, i, u) =
            (find(cols, Field::Host), find(cols, Field::Index), find(cols, Field::Uuid));
        self.keys.read(h, i, u, default_host, n, keep, &mut s.keys);
        self.keys.read_mig(find(cols, Field::MigGi), &mut s.keys);
        self.grow_hosts();
        // The slots of GPUs seen before; rows left NONE are keyed (or found keyless) below.
        self.keys.known(&s.keys, &mut s.known);
        s.slot.clear();
        s.slot.resize(n, NONE);
        s.hrow.clear();
        s.hrow.resize(n, false);
        self.pending_rows.clear();
        let window = self.cfg.window;
        if keep.is_none() && self.known_rows(n, s) {
            return;
        }
        // (host, timestamp) of the last row counted: the rows after it in the same tick are not new.
        let mut last = (u32::MAX, NO_TS);
        for i in 0..n {
            let t = s.ts[i];
            if keep.is_some_and(|k| !k.get(i).copied().unwrap_or(false)) {
                continue;
            }
            if t == NO_TS || !window.contains(t) {
                if t != NO_TS {
                    self.windowed_out += 1;
                }
                continue;
            }
            let h = s.keys.host[i];
            s.slot[i] = match s.known[i] {
                NONE => {
                    let (slot, new) = self.keys.slot(&s.keys, i);
                    self.add_gpu(h, new);
                    slot
                }
                slot => slot,
            };
            if s.empty.get(i).copied().unwrap_or(false) {
                self.empty_row(t, &mut s.slot[i]);
            }
            if (h, t) != last {
                last = (h, t);
                self.tick(h, t, i, &mut s.hrow);
            }
        }
    }

    /// [`Collector::rows`] of a batch whose rows are all kept, inside the window and of GPUs seen
    /// before (nearly every batch of a file): the slots are those known, and only the rows where
    /// host or timestamp changes can start a tick. The same as the general loop; false (nothing
    /// done) for any other batch.
    fn known_rows(&mut self, n: usize, s: &mut Scratch) -> bool {
        let w = self.cfg.window;
        let inside = if w.is_bounded() {
            let (lo, hi) =
                s.ts.iter().fold((i64::MAX, i64::MIN), |(l, h), &t| (l.min(t), h.max(t)));
            lo != NO_TS && lo >= w.since.unwrap_or(i64::MIN) && hi < w.until.unwrap_or(i64::MAX)
        } else {
            !s.ts.contains(&NO_TS)
        };
        if !inside || s.known.contains(&NONE) {
            return false;
        }
        s.slot.copy_from_slice(&s.known);
        for (i, _) in s.empty.iter().enumerate().filter(|(_, e)| **e) {
            self.empty_row(s.ts[i], &mut s.slot[i]);
        }
        let (hs, ts) = (&s.keys.host, &s.ts);
        for i in 0..n {
            if i == 0 || hs[i] != hs[i - 1] || ts[i] != ts[i - 1] {
                self.tick(hs[i], ts[i], i, &mut s.hrow);
            }
        }
        true
    }

    /// A keyed row at `t` without GPU readings: counted as empty, and nothing else.
    fn empty_row(&mut self, t: i64, slot: &mut u32) {
        if let Some(g) = self.gpus.get_mut(*slot as usize) {
            g.acc.facts.add_empty(t);
            *slot = NONE;
        }
    }

    /// Row `i` is the first of its tick (host `h`, timestamp `t`) in the batch.
    fn tick(&mut self, h: u32, t: i64, i: usize, hrow: &mut [bool]) {
        let ha = &mut self.host_accs[h as usize];
        // A tick is new when it is later than every tick of the host so far: rows that go back
        // (the rows of the next GPU when a file is grouped by GPU) belong to ticks counted.
        if t > ha.last_ts {
            ha.last_ts = t;
            ha.first_ts = ha.first_ts.min(t);
            if ha.pending.is_none() && ha.ticks == 0 {
                ha.pending = Some((t, vec![f64::NAN; inputs(Scope::Host).len()]));
                self.pending_rows.push((h, i));
                return;
            }
            ha.ticks += 1;
            hrow[i] = true;
        }
    }

    /// Timing: one step per GPU row, with power and the energy counter (slot by slot, each slot's
    /// rows in order).
    /// The power column's own statistics are fed here too, from the same gather, when it holds
    /// floats (see [`float_power`]).
    fn timing(&mut self, cols: &Cols<'_>, s: &mut Scratch) {
        let (power, energy) = (find(cols, Field::PowerDraw), find(cols, Field::EnergyTotal));
        let power_slot = float_power(cols);
        for &(sl, lo, hi) in &s.groups {
            let rows = &s.order[lo..hi];
            gather(power, rows, &mut s.a);
            if energy.is_some() {
                gather(energy, rows, &mut s.b);
            }
            let g = &mut self.gpus[sl as usize].acc;
            // The timestamps of the slot's rows, with their extremes taken on the way.
            let (mut first, mut last) = (g.first_ts, g.last_ts);
            s.i.clear();
            s.i.extend(rows.iter().map(|&i| {
                let t = s.ts[i as usize];
                first = first.min(t);
                last = last.max(t);
                t
            }));
            (g.first_ts, g.last_ts) = (first, last);
            g.rows += rows.len() as u64;
            g.timing.steps(&s.i, &s.a, energy.is_some().then_some(&s.b[..]));
            if let Some(slot) = power_slot {
                g.add_slice(slot, &s.a);
            }
        }
    }

    /// The columns of the GPU accumulators ([`inputs`]), slot by slot.
    fn gpu_columns(&mut self, cols: &Cols<'_>, s: &mut Scratch) {
        let power_done = float_power(cols).is_some();
        for &(f, slot) in inputs(Scope::Gpu) {
            let Some(c) = find(cols, f) else { continue };
            if f == Field::PowerDraw && power_done {
                continue;
            }
            if self.count_column(c, slot, s) {
                continue;
            }
            for &(sl, lo, hi) in &s.groups {
                let (rows, g) = (&s.order[lo..hi], &mut self.gpus[sl as usize].acc);
                s.i.clear();
                s.a.clear();
                if cols::i64_at(c, rows, &mut s.i) {
                    g.add_ints(slot, &s.i);
                } else if cols::f64_at(c, rows, &mut s.a) {
                    g.add_slice(slot, &s.a);
                } else {
                    break;
                }
            }
        }
    }

    /// A whole-number column whose values span a narrow range (percentages, temperatures, clocks),
    /// counted per GPU slot and value in one pass over the rows, without gathering them: the same
    /// figures as [`GpuAcc::add_ints`]. False (nothing counted) for any other column.
    fn count_column(&mut self, c: &dyn Array, slot: Slot, s: &mut Scratch) -> bool {
        // The counts of every slot at most as many as the rows of the batch (and 256 KiB).
        let slots = self.gpus.len().max(1);
        let max_span = (s.slot.len() / slots).min((1 << 16) / slots);
        // Rows outside the window ([`NONE`]) are not counted.
        let Some((lo, span)) = cols::count_by_key(c, &s.slot, slots, max_span, &mut s.cnt) else {
            return false;
        };
        for &(sl, _, _) in &s.groups {
            let at = sl as usize * span;
            if let Some(counts) = s.cnt.get(at..at + span) {
                self.gpus[sl as usize].acc.add_counts(slot, lo, counts);
            }
        }
        true
    }

    /// memory.used + memory.free, for files without memory.total. Not summed where every row of
    /// the batch has a whole-number memory.total: a GPU with one never uses the sum (see
    /// [`crate::stat_values`]).
    fn memory_sum(&mut self, cols: &Cols<'_>, s: &mut Scratch) {
        let (Some(uc), Some(fc)) = (find(cols, Field::MemUsed), find(cols, Field::MemFree)) else {
            return;
        };
        if find(cols, Field::MemTotal)
            .is_some_and(|t| t.null_count() == 0 && t.data_type().is_integer())
        {
            return;
        }
        s.a.clear();
        s.b.clear();
        if cols::f64_values(uc, &mut s.a) && cols::f64_values(fc, &mut s.b) {
            for (i, &sl) in s.slot.iter().enumerate() {
                let sum = s.a[i] + s.b[i];
                if sl != NONE && !sum.is_nan() {
                    self.gpus[sl as usize].acc.mem_sum.add(sum);
                }
            }
        }
    }

    /// Input-bound rows and the per-row facts of [`crate::facts`]. A row is input-bound
    /// when the GPU has work on it (the job's memory on it where the row has `job.gpu_memory`, else
    /// memory.used at or above `held_mem_mib`), is not busy (utilization.gpu, and sm.active where
    /// recorded, below `input_bound_util`) and the CPU is saturated (job.cpu where the row has a
    /// job, else cpu.util.max_core or cpu.util, at or above `pegged_core`).
    fn row_facts(&mut self, cols: &Cols<'_>, s: &mut Scratch) {
        let c = rowfacts::Columns {
            util: find(cols, Field::UtilGpu),
            sm: find(cols, Field::SmActive),
            mem_used: find(cols, Field::MemUsed),
            clock: find(cols, Field::ClockSm),
            reasons: &s.u,
            job_cpu: find(cols, Field::JobCpu),
            host_cpu: [find(cols, Field::CpuUtilMaxCore), find(cols, Field::CpuUtil)],
            job_mem: find(cols, Field::JobGpuMemory),
            power: find(cols, Field::PowerDraw),
            power_limit: find(cols, Field::PowerLimit),
            temp: find(cols, Field::TempGpu),
        };
        s.facts.read(&c, &self.facts_rules(), s.slot.len());
        for &(sl, lo, hi) in &s.groups {
            let Some(GpuSlot { acc: g, .. }) = self.gpus.get_mut(sl as usize) else { continue };
            let n = s.facts.count(&s.order[lo..hi], &s.ts);
            n.add_to(&mut g.facts);
            g.ib_both += n.both;
            g.ib_n += n.bound;
        }
    }

    fn facts_rules(&self) -> rowfacts::Rules {
        rowfacts::Rules {
            rows: self.cfg.rows,
            input_bound_util: self.cfg.input_bound_util,
            pegged_core: self.cfg.pegged_core,
        }
    }

    /// The memory-health columns: the largest value of each, and the ECC counter's range; the
    /// configuration columns and the corrected-error counter.
    fn health(&mut self, cols: &Cols<'_>, s: &mut Scratch) {
        let ecc = std::iter::once((Field::EccUncorrected, None));
        for (f, k) in ecc.chain(HEALTH.iter().enumerate().map(|(k, &f)| (f, Some(k)))) {
            self.each_value(cols, f, s, |d, v| d.add_health(k, v));
        }
        for (k, &f) in crate::facts::CONFIG.iter().enumerate() {
            self.each_value(cols, f, s, |d, v| d.add_config(k, v));
        }
        self.each_value(cols, Field::EccCorrected, s, |d, v| d.add_corrected(v));
    }

    /// Hand each GPU row's value of column `f` (as a number) to that GPU's per-row facts.
    fn each_value(
        &mut self,
        cols: &Cols<'_>,
        f: Field,
        s: &mut Scratch,
        mut add: impl FnMut(&mut crate::facts::FactsAcc, f64),
    ) {
        let Some(c) = find(cols, f) else { return };
        s.a.clear();
        if !cols::f64_values(c, &mut s.a) {
            return;
        }
        for (&sl, &v) in s.slot.iter().zip(&s.a) {
            if let Some(GpuSlot { acc: g, .. }) = self.gpus.get_mut(sl as usize) {
                add(&mut g.facts, v);
            }
        }
    }

    /// The clock event reasons of each GPU row; the batch's values are left in `s.u` (empty
    /// without the column) for the per-row facts.
    fn reasons(&mut self, cols: &Cols<'_>, s: &mut Scratch) {
        s.u.clear();
        let Some(c) = find(cols, Field::EventReasons) else { return };
        if cols::u64_values(c, &mut s.u) {
            for (i, &sl) in s.slot.iter().enumerate() {
                if sl != NONE && s.u[i] != NO_U64 {
                    self.gpus[sl as usize].acc.add_reasons(s.u[i]);
                }
            }
        }
    }

    /// Identity text, once per GPU. A MIG instance's is its own: its `MIG-` uuid and NVML's name
    /// for a MIG device (`NVIDIA H100 80GB HBM3 MIG 3g.40gb`).
    fn identity(&mut self, cols: &Cols<'_>, s: &Scratch) {
        let (mig_uuid, profile) = (find(cols, Field::MigUuid), find(cols, Field::MigProfile));
        for (f, is_uuid) in [(Field::Uuid, true), (Field::Name, false)] {
            let Some(c) = find(cols, f) else { continue };
            // Nothing to learn when every GPU of the batch has its text.
            let has = |sl: u32| {
                let g = &self.gpus[sl as usize].acc;
                if is_uuid { g.uuid.is_some() } else { g.name.is_some() }
            };
            if s.groups.iter().all(|&(sl, _, _)| has(sl)) {
                continue;
            }
            for (i, &sl) in s.slot.iter().enumerate() {
                if sl == NONE {
                    continue;
                }
                let GpuSlot { key, acc: g, .. } = &mut self.gpus[sl as usize];
                let slot = if is_uuid { &mut g.uuid } else { &mut g.name };
                if slot.is_some() {
                    continue;
                }
                *slot = match (matches!(key, GpuKey::Mig(..)), is_uuid) {
                    (false, _) => cols::str_at(c, i),
                    (true, true) => mig_uuid.and_then(|m| cols::str_at(m, i)),
                    (true, false) => {
                        let p = profile.and_then(|p| cols::str_at(p, i)).unwrap_or_default();
                        cols::str_at(c, i).map(|n| format!("{n} MIG {p}"))
                    }
                };
            }
        }
    }

    /// Host memory pressure, once per tick (the held-back first tick is counted with its sample).
    fn host_pressure(&mut self, cols: &Cols<'_>, s: &mut Scratch) {
        let (Some(u), Some(t)) = (find(cols, Field::HostMemUsed), find(cols, Field::HostMemTotal))
        else {
            return;
        };
        s.a.clear();
        s.b.clear();
        if !(cols::f64_at(u, &s.hrows, &mut s.a) && cols::f64_at(t, &s.hrows, &mut s.b)) {
            return;
        }
        for (k, &i) in s.hrows.iter().enumerate() {
            let h = s.keys.host[i as usize] as usize;
            if let (Some(ha), Some(&used), Some(&total)) =
                (self.host_accs.get_mut(h), s.a.get(k), s.b.get(k))
            {
                ha.add_pressure(used, total);
            }
        }
    }

    /// The columns of the host accumulators ([`inputs`]), once per tick.
    fn host_columns(&mut self, cols: &Cols<'_>, s: &mut Scratch) {
        let pending: Vec<u32> = self.pending_rows.iter().map(|&(_, i)| i as u32).collect();
        for &(f, c) in cols {
            let Some(m) = inputs(Scope::Host).iter().position(|(x, _)| *x == f) else { continue };
            let slot = inputs(Scope::Host)[m].1;
            s.a.clear();
            if !cols::f64_at(c, &s.hrows, &mut s.a) {
                continue;
            }
            // Each run of ticks of one host (a file of one host: the whole batch) in one call.
            let host = |k: usize| s.keys.host[s.hrows[k] as usize];
            let mut from = 0;
            while from < s.hrows.len() {
                let h = host(from);
                let to = (from + 1..s.hrows.len()).find(|&k| host(k) != h).unwrap_or(s.hrows.len());
                self.host_accs[h as usize].add_slice(slot, &s.a[from..to]);
                from = to;
            }
            s.c.clear();
            cols::f64_at(c, &pending, &mut s.c);
            for (&(h, _), &x) in self.pending_rows.iter().zip(&s.c) {
                if let Some((_, sample)) = &mut self.host_accs[h as usize].pending
                    && let Some(v) = sample.get_mut(m)
                {
                    *v = x;
                }
            }
        }
    }

    /// A collector whose hosts have had ticks up to the given stamps (host name, last tick): the
    /// rows of its data up to them are not new ticks. For data read after other data whose ticks
    /// it goes back into ([`Collector::goes_back`]).
    pub fn after(cfg: CollectConfig, last_ticks: &[(String, i64)]) -> Collector {
        let mut c = Collector::new(cfg);
        for (name, ts) in last_ticks {
            let h = c.host_id(name);
            c.host_accs[h as usize].last_ts = *ts;
        }
        c
    }

    /// Per host: its name and the stamp of its last tick.
    pub fn last_ticks(&self) -> Vec<(String, i64)> {
        let hosts = (0..self.keys.hosts.len() as u32).map(|h| self.keys.hosts.name(h).to_string());
        hosts.zip(&self.host_accs).map(|(n, a)| (n, a.last_ts)).collect()
    }

    /// Whether the ticks of the parts `later` (in order, after this collector's data) go back into
    /// ticks before them: joined, their host figures would count the ticks they share twice (data
    /// grouped by GPU or by host instead of by time, split into parts). Such data is read again
    /// in one part, after this collector's ([`Collector::after`]).
    pub fn goes_back<'a>(&self, later: impl IntoIterator<Item = &'a Collector>) -> bool {
        let mut last: std::collections::HashMap<String, i64> =
            self.last_ticks().into_iter().collect();
        for part in later {
            for (h, acc) in part.host_accs.iter().enumerate() {
                let name = part.keys.hosts.name(h as u32);
                let before = last.get(name).copied().unwrap_or(i64::MIN);
                if acc.pending.as_ref().is_some_and(|(first, _)| *first < before) {
                    return true;
                }
                last.insert(name.to_string(), before.max(acc.last_ts));
            }
        }
        false
    }

    /// The work counters, once per tick of a host (the held-back first ticks too).
    fn counters(&mut self, batch: &RecordBatch, s: &Scratch) {
        let mut rows: Vec<u32> = self.pending_rows.iter().map(|&(_, i)| i as u32).collect();
        rows.extend_from_slice(&s.hrows);
        rows.sort_unstable();
        let keys = &self.keys;
        self.progress.visit(batch, &rows, &s.ts, |r| keys.hosts.name(s.keys.host[r as usize]));
    }

    /// Join the collector of the data that follows this one's.
    pub fn append(&mut self, later: Collector) {
        self.windowed_out += later.windowed_out;
        self.progress.append(later.progress);
        let host_map: Vec<u32> = (0..later.keys.hosts.len())
            .map(|h| self.host_id(later.keys.hosts.name(h as u32)))
            .collect();
        for (h, acc) in later.host_accs.into_iter().enumerate() {
            if let Some(&mine) = host_map.get(h) {
                self.host_accs[mine as usize].append(acc);
            }
        }
        for GpuSlot { host: h, key, acc } in later.gpus {
            let Some(&mine) = host_map.get(h as usize) else { continue };
            let slot = self.slot_for(mine, key);
            let target = &mut self.gpus[slot as usize].acc;
            if target.rows == 0 {
                // Empty rows only so far: keep them.
                let empty = std::mem::take(&mut target.facts);
                *target = acc;
                target.facts.pool(&empty);
            } else {
                target.append(acc);
            }
        }
    }

    /// Settle the held-back first ticks (this collector holds the whole data).
    pub fn settle(&mut self) {
        for h in &mut self.host_accs {
            h.settle();
        }
    }
}

/// The accumulator slot of a power column of floats: [`Collector::timing`] gathers it per GPU anyway
/// and feeds its statistics from that gather, the same values in the same order as the gather of
/// [`Collector::gpu_columns`] (which then passes it over). None for a power column of whole numbers
/// (counted or gathered as integers there) or when power is not a single input.
fn float_power(cols: &Cols<'_>) -> Option<Slot> {
    let c = find(cols, Field::PowerDraw)?;
    if !matches!(c.data_type(), arrow_schema::DataType::Float32 | arrow_schema::DataType::Float64) {
        return None;
    }
    let mut slots = inputs(Scope::Gpu).iter().filter(|(f, _)| *f == Field::PowerDraw);
    match (slots.next(), slots.next()) {
        (Some(&(_, slot)), None) => Some(slot),
        _ => None,
    }
}

/// Mark the rows whose GPU readings ([`READINGS`]) are all null; none when the batch has none of
/// those columns.
fn empty_rows(cols: &Cols<'_>, n: usize, out: &mut Vec<bool>) {
    out.clear();
    let present: Vec<&dyn Array> = READINGS.iter().filter_map(|&f| find(cols, f)).collect();
    if present.is_empty() || present.iter().any(|c| c.null_count() == 0) {
        out.resize(n, false);
        return;
    }
    out.extend((0..n).map(|i| present.iter().all(|c| c.is_null(i))));
}

/// Fill `out` with the column's values at `rows` as f64, or NaN when the column is absent or not
/// numeric.
fn gather(c: Option<&dyn Array>, rows: &[u32], out: &mut Vec<f64>) {
    out.clear();
    if let Some(c) = c
        && cols::f64_at(c, rows, out)
    {
        return;
    }
    out.clear();
    out.resize(rows.len(), f64::NAN);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, StringArray, TimestampMicrosecondArray, UInt8Array, UInt32Array};

    use super::*;
    use crate::findings::Thresholds;

    /// Rows of (host, second, GPU index, utilization.gpu): None utilization is a row whose GPU
    /// did not answer.
    fn batch(rows: &[(&str, i64, u32, Option<u8>)]) -> RecordBatch {
        let ts: Vec<i64> = rows.iter().map(|r| r.1 * 1_000_000).collect();
        let cols: Vec<(&str, ArrayRef)> = vec![
            ("timestamp", Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC"))),
            ("host", Arc::new(rows.iter().map(|r| Some(r.0)).collect::<StringArray>())),
            ("index", Arc::new(rows.iter().map(|r| r.2).collect::<UInt32Array>())),
            ("utilization.gpu", Arc::new(rows.iter().map(|r| r.3).collect::<UInt8Array>())),
        ];
        RecordBatch::try_from_iter(cols).unwrap()
    }

    fn summary(c: Collector) -> crate::Summary {
        let th = Thresholds::default();
        crate::build(c, &th, Vec::new(), Vec::new(), Default::default(), Default::default())
    }

    /// A batch of GPUs seen before, every row kept, takes the short way through `rows`; the same
    /// batch with every row selected takes the long way: the same summary. The batch has two
    /// hosts, repeated timestamps, a row without readings and rows that go back in time.
    #[test]
    fn known_gpus_count_alike_either_way() {
        let first = batch(&[("a", 0, 0, Some(10)), ("a", 0, 1, Some(20)), ("b", 0, 0, Some(5))]);
        let rows = [
            ("a", 1, 0, Some(30)),
            ("a", 1, 1, None),
            ("b", 1, 0, Some(40)),
            ("a", 2, 0, Some(50)),
            ("a", 2, 1, Some(60)),
            ("b", 2, 0, Some(70)),
            ("a", 1, 1, Some(80)),
            ("a", 3, 1, Some(90)),
            ("b", 3, 0, None),
        ];
        let second = batch(&rows);
        let all = vec![true; rows.len()];
        let read = |keep: Option<&[bool]>| {
            let mut c = Collector::new(CollectConfig::default());
            c.visit(&first, "x").unwrap();
            c.visit_rows(&second, "x", keep).unwrap();
            c
        };
        let (short, long) = (read(None), read(Some(&all)));
        assert_eq!(
            short.host_accs.iter().map(|h| h.ticks).collect::<Vec<_>>(),
            [3, 3],
            "ticks 1, 2 and 3 after the first, held back"
        );
        assert_eq!(summary(short), summary(long));
    }
}
