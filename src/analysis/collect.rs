//! The collector: feeds Arrow batches into per-GPU and per-host accumulators column by column
//! (typed arrays to scratch vectors, then one tight loop per field), and joins the collectors of
//! consecutive parts of the data.
//!
//! Rows are keyed by host (the `host` column, or the input's default host) and GPU (`index`, or
//! `uuid` when there is no index). Host fields are taken once per tick: from the first row of each
//! new timestamp of a host. Windowed-out rows are skipped before anything is counted.

use anyhow::Result;
use arrow_array::{Array, RecordBatch};

use crate::analysis::acc::{GpuAcc, HostAcc, hm};
use crate::schema::catalog::{CATALOG, Field, Source};
use crate::schema::cols::{self, NO_TS, NO_U64};

use super::keys::{Keyer, NONE, RowKeys};

pub use super::keys::GpuKey;

/// What the collector needs to know before the first row.
#[derive(Debug, Clone, Default)]
pub struct CollectConfig {
    /// Rows at or after this instant (UTC µs)...
    pub since: Option<i64>,
    /// ...and before this one are counted.
    pub until: Option<i64>,
    /// Input-bound rule: utilization.gpu below this while cpu.util.max_core is at or above `pegged_core`.
    pub input_bound_util: f64,
    pub pegged_core: f64,
}

/// Job and cgroup fields (any catalogue field named `job.*` / `cgroup.*`), GPU-scoped or per tick.
pub fn extra_fields() -> (Vec<Field>, Vec<Field>) {
    let mut gpu = Vec::new();
    let mut host = Vec::new();
    for d in &CATALOG {
        let numeric = !matches!(d.ty, crate::schema::catalog::Ty::Str | crate::schema::catalog::Ty::Timestamp);
        if numeric && (d.name.starts_with("job.") || d.name.starts_with("cgroup.")) {
            if d.source == Source::Gpu { gpu.push(d.field) } else { host.push(d.field) }
        }
    }
    (gpu, host)
}

/// Every field the analysis reads.
pub fn wanted_fields() -> Vec<Field> {
    let mut v = vec![
        Field::Timestamp,
        Field::Host,
        Field::Index,
        Field::Uuid,
        Field::Name,
        Field::UtilGpu,
        Field::UtilGpuMax,
        Field::UtilMemory,
        Field::MemUsed,
        Field::MemUsedMax,
        Field::MemTotal,
        Field::MemFree,
        Field::TempGpu,
        Field::TempGpuMax,
        Field::PowerDraw,
        Field::PowerDrawMax,
        Field::EnergyTotal,
        Field::EventReasons,
        Field::CpuUtil,
        Field::CpuUtilMaxCore,
        Field::CpuMaxCoreMax,
        Field::HostMemUsed,
        Field::HostMemTotal,
        Field::SwapUsed,
    ];
    let (g, h) = extra_fields();
    v.extend(g);
    v.extend(h);
    v
}

/// Host metric position of a field.
fn host_metric(f: Field, host_extra: &[Field]) -> Option<usize> {
    Some(match f {
        Field::CpuUtil => hm::CPU,
        Field::CpuUtilMaxCore => hm::CORE,
        Field::CpuMaxCoreMax => hm::CORE_MAX,
        Field::HostMemUsed => hm::MEM,
        Field::HostMemTotal => hm::MEM_TOTAL,
        Field::SwapUsed => hm::SWAP,
        _ => hm::FIXED + host_extra.iter().position(|&x| x == f)?,
    })
}

#[derive(Default)]
struct Scratch {
    ts: Vec<i64>,
    keys: RowKeys,
    slot: Vec<u32>,
    hrow: Vec<bool>,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    u: Vec<u64>,
}

/// Accumulators for one part of the data.
pub struct Collector {
    cfg: CollectConfig,
    gpu_extra: Vec<Field>,
    host_extra: Vec<Field>,
    pub keys: Keyer,
    pub gpus: Vec<(u32, GpuKey, GpuAcc)>,
    pub host_accs: Vec<HostAcc>,
    /// Held-back first tick of each host in this part: (host, row) of the current batch.
    pending_rows: Vec<(u32, usize)>,
    s: Scratch,
    /// Rows outside the window.
    pub windowed_out: u64,
}

impl Collector {
    pub fn new(cfg: CollectConfig) -> Collector {
        let (gpu_extra, host_extra) = extra_fields();
        Collector {
            cfg,
            gpu_extra,
            host_extra,
            keys: Keyer::default(),
            gpus: Vec::new(),
            host_accs: Vec::new(),
            pending_rows: Vec::new(),
            s: Scratch::default(),
            windowed_out: 0,
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
            self.host_accs.push(HostAcc::new(self.host_extra.len()));
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
            self.gpus.push((host, key, GpuAcc::new(self.gpu_extra.len())));
        }
    }

    /// Count one batch; rows without a host value belong to `default_host`.
    pub fn visit(&mut self, batch: &RecordBatch, default_host: &str) -> Result<()> {
        let n = batch.num_rows();
        if n == 0 {
            return Ok(());
        }
        let cols: Vec<(Field, &dyn Array)> = batch
            .schema()
            .fields()
            .iter()
            .zip(batch.columns())
            .filter_map(|(f, c)| Field::lookup(f.name()).map(|field| (field, c.as_ref())))
            .collect();
        let col = |f: Field| cols.iter().find(|(g, _)| *g == f).map(|(_, c)| *c);
        let mut s = std::mem::take(&mut self.s);
        s.ts.clear();
        let Some(tsc) = col(Field::Timestamp) else { return Ok(()) };
        if !cols::ts_micros(tsc, &mut s.ts) {
            self.s = s;
            return Ok(());
        }
        // Hosts and GPUs
        self.keys.read(col(Field::Host), col(Field::Index), col(Field::Uuid), default_host, n, &mut s.keys);
        self.grow_hosts();
        s.slot.clear();
        s.hrow.clear();
        self.pending_rows.clear();
        let (since, until) = (self.cfg.since.unwrap_or(i64::MIN), self.cfg.until.unwrap_or(i64::MAX));
        for i in 0..n {
            let t = s.ts[i];
            if t == NO_TS || t < since || t >= until {
                if t != NO_TS {
                    self.windowed_out += 1;
                }
                s.slot.push(NONE);
                s.hrow.push(false);
                continue;
            }
            let h = s.keys.host[i];
            let (slot, new) = self.keys.slot(&s.keys, i);
            self.add_gpu(h, new);
            s.slot.push(slot);
            let ha = &mut self.host_accs[h as usize];
            let new_tick = ha.last_ts != t;
            if new_tick {
                ha.last_ts = t;
                if ha.pending.is_none() && ha.ticks == 0 {
                    ha.pending = Some((t, vec![f64::NAN; ha.width()]));
                    self.pending_rows.push((h, i));
                    s.hrow.push(false);
                    continue;
                }
                ha.ticks += 1;
            }
            s.hrow.push(new_tick);
        }

        // Timing: one step per GPU row, with power and the energy counter.
        s.a.clear();
        s.b.clear();
        fill(col(Field::PowerDraw), n, &mut s.a);
        fill(col(Field::EnergyTotal), n, &mut s.b);
        for i in 0..n {
            let sl = s.slot[i];
            if sl == NONE {
                continue;
            }
            let g = &mut self.gpus[sl as usize].2;
            let t = s.ts[i];
            g.rows += 1;
            g.first_ts = g.first_ts.min(t);
            g.last_ts = g.last_ts.max(t);
            g.timing.step(t, s.a[i], s.b[i]);
        }
        if col(Field::PowerDraw).is_some() {
            self.gpu_loop(&s.slot, &s.a, |g, v| g.power.add(v));
        }

        // Per-GPU fields.
        macro_rules! gpu_field {
            ($f:expr, $body:expr) => {
                if let Some(c) = col($f) {
                    s.a.clear();
                    if cols::f64_values(c, &mut s.a) {
                        self.gpu_loop(&s.slot, &s.a, $body);
                    }
                }
            };
        }
        gpu_field!(Field::UtilGpuMax, |g, v| g.util_max_col.add(v));
        gpu_field!(Field::UtilMemory, |g, v| g.umem.add(v));
        gpu_field!(Field::MemUsedMax, |g, v| g.mem_used_max_col.add(v));
        gpu_field!(Field::MemTotal, |g, v| g.mem_total.add(v));
        gpu_field!(Field::TempGpu, |g, v| g.temp.add(v));
        gpu_field!(Field::TempGpuMax, |g, v| g.temp_max_col.add(v));
        gpu_field!(Field::PowerDrawMax, |g, v| g.power_max_col.add(v));
        for (k, f) in self.gpu_extra.clone().into_iter().enumerate() {
            gpu_field!(f, |g, v| if let Some(m) = g.extra.get_mut(k) {
                m.add(v)
            });
        }
        // memory.used, and used + free for files without memory.total
        if let Some(c) = col(Field::MemUsed) {
            s.a.clear();
            if cols::f64_values(c, &mut s.a) {
                self.gpu_loop(&s.slot, &s.a, |g, v| g.mem_used.add(v));
                if let Some(fc) = col(Field::MemFree) {
                    s.b.clear();
                    if cols::f64_values(fc, &mut s.b) {
                        for i in 0..n {
                            let sum = s.a[i] + s.b[i];
                            if s.slot[i] != NONE && !sum.is_nan() {
                                self.gpus[s.slot[i] as usize].2.mem_sum.add(sum);
                            }
                        }
                    }
                }
            }
        }
        // utilization.gpu, and the input-bound co-occurrence with the busiest core
        if let Some(c) = col(Field::UtilGpu) {
            s.a.clear();
            if cols::f64_values(c, &mut s.a) {
                self.gpu_loop(&s.slot, &s.a, |g, v| g.util.add(v));
                if let Some(cc) = col(Field::CpuUtilMaxCore) {
                    s.b.clear();
                    if cols::f64_values(cc, &mut s.b) {
                        let (lo, peg) = (self.cfg.input_bound_util, self.cfg.pegged_core);
                        for i in 0..n {
                            let (u, core) = (s.a[i], s.b[i]);
                            if s.slot[i] != NONE && !u.is_nan() && !core.is_nan() {
                                let g = &mut self.gpus[s.slot[i] as usize].2;
                                g.ib_both += 1;
                                g.ib_n += u64::from(u < lo && core >= peg);
                            }
                        }
                    }
                }
            }
        }
        if let Some(c) = col(Field::EventReasons) {
            s.u.clear();
            if cols::u64_values(c, &mut s.u) {
                for i in 0..n {
                    if s.slot[i] != NONE && s.u[i] != NO_U64 {
                        self.gpus[s.slot[i] as usize].2.add_reasons(s.u[i]);
                    }
                }
            }
        }
        // Identity text, once per GPU.
        for (f, is_uuid) in [(Field::Uuid, true), (Field::Name, false)] {
            let Some(c) = col(f) else { continue };
            for i in 0..n {
                let sl = s.slot[i];
                if sl == NONE {
                    continue;
                }
                let g = &mut self.gpus[sl as usize].2;
                let slot = if is_uuid { &mut g.uuid } else { &mut g.name };
                if slot.is_none() {
                    *slot = cols::str_at(c, i);
                }
            }
        }

        // Host fields, once per tick.
        for &(f, c) in &cols {
            let Some(m) = host_metric(f, &self.host_extra) else { continue };
            s.c.clear();
            if !cols::f64_values(c, &mut s.c) {
                continue;
            }
            for i in 0..n {
                if s.hrow[i] {
                    self.host_accs[s.keys.host[i] as usize].add(m, s.c[i]);
                }
            }
            for &(h, i) in &self.pending_rows {
                if let Some((_, sample)) = &mut self.host_accs[h as usize].pending
                    && let Some(slot) = sample.get_mut(m)
                {
                    *slot = s.c[i];
                }
            }
        }
        self.s = s;
        Ok(())
    }

    #[inline]
    fn gpu_loop(&mut self, slot: &[u32], vals: &[f64], mut body: impl FnMut(&mut GpuAcc, f64)) {
        for (&sl, &v) in slot.iter().zip(vals) {
            if sl != NONE && !v.is_nan() {
                body(&mut self.gpus[sl as usize].2, v);
            }
        }
    }

    /// Join the collector of the data that follows this one's.
    pub fn append(&mut self, later: Collector) {
        self.windowed_out += later.windowed_out;
        let host_map: Vec<u32> =
            (0..later.keys.hosts.len()).map(|h| self.host_id(later.keys.hosts.name(h as u32))).collect();
        for (h, acc) in later.host_accs.into_iter().enumerate() {
            if let Some(&mine) = host_map.get(h) {
                self.host_accs[mine as usize].append(acc);
            }
        }
        for (h, key, acc) in later.gpus {
            let Some(&mine) = host_map.get(h as usize) else { continue };
            let slot = self.slot_for(mine, key);
            let target = &mut self.gpus[slot as usize].2;
            if target.rows == 0 {
                *target = acc;
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

    pub fn gpu_extra(&self) -> &[Field] {
        &self.gpu_extra
    }

    pub fn host_extra(&self) -> &[Field] {
        &self.host_extra
    }
}

/// Fill `out` with the column as f64, or NaN when the column is absent or not numeric.
fn fill(c: Option<&dyn Array>, n: usize, out: &mut Vec<f64>) {
    if let Some(c) = c
        && cols::f64_values(c, out)
    {
        return;
    }
    out.clear();
    out.resize(n, f64::NAN);
}
