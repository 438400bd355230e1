//! Time-bucketed envelopes for the report's charts: the report's time span is cut into
//! [`BUCKETS`] × [`FINE`] equal buckets (the interactive charts; [`Collected::coarsen`] merges them
//! into [`BUCKETS`], about one per pixel column, for the static ones), and every charted field of every GPU and host keeps the
//! min, max, sum and count of its values per bucket. Memory is bounded by buckets × fields × series,
//! whatever the length of the recording; a spike survives as the top of its bucket's band.
//!
//! Rows are keyed like the summary's collector (host, then `index`, or `uuid` without an index), so
//! series line up with the summary's GPUs. Host fields are taken once per tick (the first row of each
//! new timestamp of a host). Per bucket and series the first and last sample time are kept: a line is
//! broken between two buckets when the step between them is a gap, or when a bucket in between has
//! rows but no value of the field (missing is missing, not interpolated).

use anyhow::Result;
use arrow_array::{Array, RecordBatch};

use crate::acc::Timing;
use crate::keys::{GpuKey, Keyer, NONE, RowKeys, group_by_slot};
use gpumon_schema::catalog::Field;
use gpumon_schema::cols::{self, NO_TS};

/// Buckets across the report's time span.
pub const BUCKETS: usize = 1200;
/// Buckets of the report's interactive charts per bucket of its static ones: the data is collected
/// into `BUCKETS × FINE` buckets (what a zoomed view draws from), and merged back into [`BUCKETS`]
/// for the static charts ([`Collected::coarsen`]).
pub const FINE: usize = 4;
/// GPUs and hosts charted at most (in order of first appearance); the rest are counted, so that
/// thousands of inputs cost a bounded page and bounded memory (their figures stay in the tables).
pub const MAX_CHARTED: usize = 64;

/// A charted field and the `.max` companion column whose values raise the top of its band.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Metric {
    pub(crate) field: Field,
    pub(crate) max_col: Option<Field>,
}

/// The [`Metric`] of `field`, its band raised by `max_col`.
const fn metric(field: Field, max_col: Option<Field>) -> Metric {
    Metric { field, max_col }
}

/// Per-GPU fields, in slot order of [`Track::env`].
pub(crate) const GPU_METRICS: [Metric; 11] = [
    metric(Field::UtilGpu, Some(Field::UtilGpuMax)),
    metric(Field::MemUsed, Some(Field::MemUsedMax)),
    metric(Field::MemTotal, None),
    metric(Field::JobGpuMemory, None),
    metric(Field::PowerDraw, Some(Field::PowerDrawMax)),
    metric(Field::PowerLimit, None),
    metric(Field::TempGpu, Some(Field::TempGpuMax)),
    metric(Field::ClockSm, None),
    metric(Field::SmActive, Some(Field::SmActiveMax)),
    metric(Field::TensorActive, Some(Field::TensorActiveMax)),
    metric(Field::DramActive, Some(Field::DramActiveMax)),
];

/// Per-tick host fields, in slot order of [`Track::env`].
pub(crate) const HOST_METRICS: [Metric; 6] = [
    metric(Field::CpuUtil, None),
    metric(Field::CpuUtilMaxCore, Some(Field::CpuMaxCoreMax)),
    metric(Field::HostMemUsed, None),
    metric(Field::HostMemTotal, None),
    metric(Field::JobCpu, None),
    metric(Field::JobRss, None),
];

/// Every column the series pass reads.
pub fn wanted() -> Vec<Field> {
    let mut v = vec![Field::Timestamp, Field::Host, Field::Index, Field::Uuid, Field::MigGi];
    for x in GPU_METRICS.iter().chain(&HOST_METRICS) {
        v.push(x.field);
        v.extend(x.max_col);
    }
    v
}

/// The time span cut into `n` buckets; instants are UTC µs, both ends included.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    /// The first instant.
    pub start: i64,
    /// The last instant.
    pub end: i64,
    /// The number of buckets.
    pub n: usize,
}

impl Grid {
    /// `n` buckets (at least one) from `start` to `end` (at least `start`).
    pub fn new(start: i64, end: i64, n: usize) -> Grid {
        Grid { start, end: end.max(start), n: n.max(1) }
    }

    /// Length of the span, µs (at least 1).
    pub fn span(&self) -> f64 {
        (self.end - self.start) as f64 + 1.0
    }

    /// Position of `t` in bucket units (0 at `start`, `n` just after `end`).
    pub fn position(&self, t: i64) -> f64 {
        (t - self.start) as f64 / self.span() * self.n as f64
    }

    /// The bucket of `t`, None outside the span.
    pub fn bucket(&self, t: i64) -> Option<usize> {
        if t < self.start || t > self.end {
            return None;
        }
        Some((self.position(t) as usize).min(self.n - 1))
    }

    /// Length of one bucket, seconds.
    pub fn bucket_s(&self) -> f64 {
        self.span() / self.n as f64 / 1e6
    }
}

/// One bucket's values of a field ([`Envelope::at`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketValues {
    /// The lowest value.
    pub min: f64,
    /// The mean of the values.
    pub mean: f64,
    /// The highest value.
    pub max: f64,
}

/// Min, max, sum and count of one field per bucket (allocated at its first value).
#[derive(Debug, Clone, Default)]
pub struct Envelope {
    /// The smallest value of each bucket.
    pub min: Vec<f64>,
    /// The largest.
    pub max: Vec<f64>,
    /// Their sum.
    pub sum: Vec<f64>,
    /// Their count.
    pub n: Vec<u32>,
}

impl Envelope {
    fn ensure(&mut self, n: usize) {
        if self.n.is_empty() {
            self.min = vec![f64::INFINITY; n];
            self.max = vec![f64::NEG_INFINITY; n];
            self.sum = vec![0.0; n];
            self.n = vec![0; n];
        }
    }

    fn add(&mut self, b: usize, v: f64) {
        self.min[b] = self.min[b].min(v);
        self.max[b] = self.max[b].max(v);
        self.sum[b] += v;
        self.n[b] += 1;
    }

    /// [`Envelope::add`] the values of `rows` (of one GPU, in order; NaN skipped) into their buckets, or
    /// with `widen` raise only the bands' maxima. Rows in one bucket follow each other (rows are
    /// in time order): a bucket's figures are held in registers while its rows last, and the sum
    /// adds the same values in the same order.
    fn add_rows(&mut self, rows: &[u32], vals: &[f64], bucket: &[usize], widen: bool) {
        let mut cur: Option<(usize, f64, f64, f64, u32)> = None;
        let store = |e: &mut Envelope, (b, mn, mx, sm, n): (usize, f64, f64, f64, u32)| {
            if let (Some(a), Some(c), Some(d), Some(e_n)) =
                (e.min.get_mut(b), e.max.get_mut(b), e.sum.get_mut(b), e.n.get_mut(b))
            {
                (*a, *c, *d, *e_n) = (mn, mx, sm, n);
            }
        };
        for &i in rows {
            let (Some(&v), Some(&b)) = (vals.get(i as usize), bucket.get(i as usize)) else {
                continue;
            };
            if v.is_nan() {
                continue;
            }
            let at = match cur {
                Some(c) if c.0 == b => c,
                _ => {
                    if let Some(c) = cur {
                        store(self, c);
                    }
                    let (Some(&mn), Some(&mx), Some(&sm), Some(&n)) =
                        (self.min.get(b), self.max.get(b), self.sum.get(b), self.n.get(b))
                    else {
                        cur = None;
                        continue;
                    };
                    (b, mn, mx, sm, n)
                }
            };
            cur = Some(if widen {
                (b, at.1, at.2.max(v), at.3, at.4)
            } else {
                (b, at.1.min(v), at.2.max(v), at.3 + v, at.4 + 1)
            });
        }
        if let Some(c) = cur {
            store(self, c);
        }
    }

    /// Every `k` buckets merged into one.
    fn coarsen(&self, k: usize) -> Envelope {
        if self.n.is_empty() {
            return Envelope::default();
        }
        let mut e = Envelope::default();
        e.ensure(self.n.len().div_ceil(k));
        for b in 0..self.n.len() {
            let c = b / k;
            e.min[c] = e.min[c].min(self.min[b]);
            e.max[c] = e.max[c].max(self.max[b]);
            e.sum[c] += self.sum[b];
            e.n[c] += self.n[b];
        }
        e
    }

    fn merge(&mut self, o: &Envelope) {
        if o.n.is_empty() {
            return;
        }
        self.ensure(o.n.len());
        for b in 0..self.n.len().min(o.n.len()) {
            self.min[b] = self.min[b].min(o.min[b]);
            self.max[b] = self.max[b].max(o.max[b]);
            self.sum[b] += o.sum[b];
            self.n[b] += o.n[b];
        }
    }

    /// Whether the field has any value.
    pub fn is_empty(&self) -> bool {
        !self.n.iter().any(|&c| c > 0)
    }

    /// The values of bucket `b`, None without a value.
    pub fn at(&self, b: usize) -> Option<BucketValues> {
        let c = *self.n.get(b)?;
        (c > 0).then(|| BucketValues {
            min: self.min[b],
            mean: self.sum[b] / f64::from(c),
            max: self.max[b],
        })
    }

    /// Lowest and highest value over all buckets.
    pub fn range(&self) -> Option<(f64, f64)> {
        let buckets = (0..self.n.len()).filter_map(|b| self.at(b));
        buckets.fold(None, |acc, BucketValues { min: lo, max: hi, .. }| {
            Some(acc.map_or((lo, hi), |(a, z): (f64, f64)| (a.min(lo), z.max(hi))))
        })
    }

    /// Mean over all values.
    pub fn mean(&self) -> Option<f64> {
        let n: u64 = self.n.iter().map(|&c| u64::from(c)).sum();
        (n > 0).then(|| self.sum.iter().sum::<f64>() / n as f64)
    }
}

/// One series (a GPU, or a host's per-tick fields): rows and their first/last time per bucket, one
/// envelope per field.
#[derive(Debug, Clone)]
pub struct Track {
    /// Rows per bucket.
    pub rows: Vec<u32>,
    /// The first row's time per bucket, UTC µs.
    pub first: Vec<i64>,
    /// The last row's time per bucket, UTC µs.
    pub last: Vec<i64>,
    /// One envelope per charted field.
    pub env: Vec<Envelope>,
    /// Steps between ticks (hosts only: a GPU's interval comes from the summary).
    pub timing: Timing,
    last_ts: i64,
    /// The job's work per second of each counter (`progress.KEY` over its tick's step; hosts only).
    pub work: Vec<(String, Envelope)>,
}

impl Track {
    fn new(n: usize, fields: usize) -> Track {
        Track {
            rows: vec![0; n],
            first: vec![i64::MAX; n],
            last: vec![i64::MIN; n],
            env: vec![Envelope::default(); fields],
            timing: Timing::default(),
            last_ts: NO_TS,
            work: Vec::new(),
        }
    }

    /// The work envelope of counter `key` (at most [`gpumon_schema::progress::MAX_KEYS`]).
    fn work_env(&mut self, key: &str, n: usize) -> Option<&mut Envelope> {
        let i = match self.work.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None if self.work.len() < gpumon_schema::progress::MAX_KEYS => {
                let mut e = Envelope::default();
                e.ensure(n);
                self.work.push((key.to_string(), e));
                self.work.len() - 1
            }
            None => return None,
        };
        self.work.get_mut(i).map(|(_, e)| e)
    }

    fn row(&mut self, b: usize, t: i64) {
        self.rows[b] += 1;
        self.first[b] = self.first[b].min(t);
        self.last[b] = self.last[b].max(t);
    }

    /// Every `k` buckets merged into one.
    fn coarsen(&self, k: usize) -> Track {
        let n = self.rows.len().div_ceil(k);
        let mut t = Track::new(n, 0);
        for b in 0..self.rows.len() {
            let c = b / k;
            t.rows[c] += self.rows[b];
            t.first[c] = t.first[c].min(self.first[b]);
            t.last[c] = t.last[c].max(self.last[b]);
        }
        t.env = self.env.iter().map(|e| e.coarsen(k)).collect();
        t.work = self.work.iter().map(|(key, e)| (key.clone(), e.coarsen(k))).collect();
        t.timing = self.timing.clone();
        t.last_ts = self.last_ts;
        t
    }

    /// Join the track of a later part of the data.
    fn append(&mut self, later: Track) {
        for b in 0..self.rows.len().min(later.rows.len()) {
            self.rows[b] += later.rows[b];
            self.first[b] = self.first[b].min(later.first[b]);
            self.last[b] = self.last[b].max(later.last[b]);
        }
        for (a, o) in self.env.iter_mut().zip(&later.env) {
            a.merge(o);
        }
        for (k, o) in &later.work {
            if let Some(e) = self.work_env(k, o.n.len()) {
                e.merge(o);
            }
        }
        self.timing.append(later.timing);
    }
}

#[derive(Default)]
struct Scratch {
    ts: Vec<i64>,
    keys: RowKeys,
    slot: Vec<u32>,
    bucket: Vec<usize>,
    hrow: Vec<bool>,
    /// Seconds since the host's previous tick, on the row that starts a tick (NaN: not known).
    step: Vec<f64>,
    v: Vec<f64>,
    /// The rows of each GPU slot, in batch order: `order[lo..hi]` of each (slot, lo, hi).
    order: Vec<u32>,
    groups: Vec<(u32, usize, usize)>,
}

/// One GPU's envelopes in a series collector: its host (the keyer's host number), its key and its
/// track.
struct GpuTrack {
    host: u32,
    key: GpuKey,
    track: Track,
}

/// The envelopes of one part of the data (one per Parquet part read in parallel).
pub struct Series {
    grid: Grid,
    window: crate::window::TimeWindow,
    keys: Keyer,
    gpus: Vec<GpuTrack>,
    host_tracks: Vec<Track>,
    s: Scratch,
}

impl Series {
    /// Empty envelopes over `grid`, counting rows inside `window`.
    pub fn new(grid: Grid, window: crate::window::TimeWindow) -> Series {
        Series {
            grid,
            window,
            keys: Keyer::default(),
            gpus: Vec::new(),
            host_tracks: Vec::new(),
            s: Scratch::default(),
        }
    }

    /// One host track per known host.
    fn grow_hosts(&mut self) {
        while self.host_tracks.len() < self.keys.hosts.len() {
            self.host_tracks.push(Track::new(self.grid.n, HOST_METRICS.len()));
        }
    }

    /// Count one batch; rows without a host value belong to `default_host`.
    pub fn visit(&mut self, batch: &RecordBatch, default_host: &str) -> Result<()> {
        let n = batch.num_rows();
        if n == 0 {
            return Ok(());
        }
        let cols = gpumon_schema::cols::catalogue_columns(batch);
        let col = |f: Field| cols.iter().find(|(g, _)| *g == f).map(|(_, c)| *c);
        let Some(tsc) = col(Field::Timestamp) else { return Ok(()) };
        let mut s = std::mem::take(&mut self.s);
        s.ts.clear();
        if !cols::ts_micros(tsc, &mut s.ts) {
            self.s = s;
            return Ok(());
        }
        let ids = [col(Field::Host), col(Field::Index), col(Field::Uuid), col(Field::MigGi)];
        self.keys(&mut s, ids, default_host, n);
        group_by_slot(&s.slot, self.gpus.len(), &mut s.order, &mut s.groups);
        for (k, x) in GPU_METRICS.iter().enumerate() {
            self.field(
                &mut s,
                col(x.field),
                col(x.max_col.unwrap_or(x.field)),
                x.max_col.is_some(),
                k,
                false,
            );
        }
        for (k, x) in HOST_METRICS.iter().enumerate() {
            self.field(
                &mut s,
                col(x.field),
                col(x.max_col.unwrap_or(x.field)),
                x.max_col.is_some(),
                k,
                true,
            );
        }
        self.work(batch, &mut s);
        self.s = s;
        Ok(())
    }

    /// The work counters' rates: each tick's amount over its step, once per tick of a host.
    fn work(&mut self, batch: &RecordBatch, s: &mut Scratch) {
        let schema = batch.schema();
        let n = self.grid.n;
        let counters = schema.fields().iter().zip(batch.columns()).filter_map(|(f, c)| {
            gpumon_schema::progress::column_key(f.name()).map(|k| (k, c.as_ref()))
        });
        for (key, c) in counters.take(gpumon_schema::progress::MAX_KEYS) {
            s.v.clear();
            if !cols::f64_values(c, &mut s.v) {
                continue;
            }
            for i in 0..s.v.len().min(s.hrow.len()).min(s.step.len()) {
                let (v, dt) = (s.v[i], s.step[i]);
                if !s.hrow[i] || v.is_nan() || dt.is_nan() || dt <= 0.0 {
                    continue;
                }
                let b = s.bucket[i];
                if let Some(e) = self.host_tracks[s.keys.host[i] as usize].work_env(key, n) {
                    e.add(b, v / dt);
                }
            }
        }
    }

    /// Hosts, GPU slots and buckets of the rows; rows and tick times of the tracks.
    /// `ids`: the host, index, uuid and `mig.gi` columns.
    fn keys(
        &mut self,
        s: &mut Scratch,
        ids: [Option<&dyn Array>; 4],
        default_host: &str,
        n: usize,
    ) {
        let [host, index, uuid, gi] = ids;
        self.keys.read(host, index, uuid, default_host, n, None, &mut s.keys);
        self.keys.read_mig(gi, &mut s.keys);
        self.grow_hosts();
        s.slot.clear();
        s.bucket.clear();
        s.hrow.clear();
        s.step.clear();
        for i in 0..n {
            let t = s.ts[i];
            let b = if t == NO_TS || !self.window.contains(t) { None } else { self.grid.bucket(t) };
            let Some(b) = b else {
                s.slot.push(NONE);
                s.bucket.push(0);
                s.hrow.push(false);
                s.step.push(f64::NAN);
                continue;
            };
            let h = s.keys.host[i];
            let (slot, new) = self.keys.slot(&s.keys, i);
            if let Some(key) = new {
                self.gpus.push(GpuTrack {
                    host: h,
                    key,
                    track: Track::new(self.grid.n, GPU_METRICS.len()),
                });
            }
            if slot != NONE {
                self.gpus[slot as usize].track.row(b, t);
            }
            let ht = &mut self.host_tracks[h as usize];
            let new_tick = ht.last_ts != t;
            let step = if new_tick && ht.last_ts != NO_TS {
                (t - ht.last_ts) as f64 / 1e6
            } else {
                f64::NAN
            };
            if new_tick {
                ht.last_ts = t;
                ht.row(b, t);
                ht.timing.step(t, f64::NAN, f64::NAN);
            }
            s.slot.push(slot);
            s.bucket.push(b);
            s.hrow.push(new_tick);
            s.step.push(step);
        }
    }

    /// Add one field's column (and its `.max` companion) to the envelopes.
    fn field(
        &mut self,
        s: &mut Scratch,
        c: Option<&dyn Array>,
        max_c: Option<&dyn Array>,
        has_max: bool,
        k: usize,
        host: bool,
    ) {
        let n = self.grid.n;
        for (arr, widen) in [(c, false), (if has_max { max_c } else { None }, true)] {
            let Some(arr) = arr else { continue };
            s.v.clear();
            if !cols::f64_values(arr, &mut s.v) {
                continue;
            }
            if !host {
                // Every GPU's envelope exists, rows or not; each GPU's rows go in at once.
                for g in &mut self.gpus {
                    g.track.env[k].ensure(n);
                }
                for &(sl, lo, hi) in &s.groups {
                    if let (Some(g), Some(rows)) =
                        (self.gpus.get_mut(sl as usize), s.order.get(lo..hi))
                    {
                        g.track.env[k].add_rows(rows, &s.v, &s.bucket, widen);
                    }
                }
                continue;
            }
            for t in &mut self.host_tracks {
                t.env[k].ensure(n);
            }
            // A host's value once per tick: on the row that starts it.
            let rows = s.v.len().min(s.hrow.len());
            for i in (0..rows).filter(|&i| s.hrow[i] && !s.v[i].is_nan()) {
                let (e, b, v) =
                    (&mut self.host_tracks[s.keys.host[i] as usize].env[k], s.bucket[i], s.v[i]);
                if widen {
                    // A `.max` column raises the band; the mean stays that of the field itself.
                    e.max[b] = e.max[b].max(v);
                } else {
                    e.add(b, v);
                }
            }
        }
    }
}

/// A GPU's series.
#[derive(Debug, Clone)]
pub struct GpuSeries {
    pub(crate) host: String,
    /// The summary's label: the index, or the uuid for files without an index.
    pub label: String,
    /// Its series.
    pub track: Track,
}

/// Every series of the report, parts joined.
#[derive(Debug, Clone)]
pub struct Collected {
    /// The buckets every track is cut into.
    pub grid: Grid,
    pub(crate) gpus: Vec<GpuSeries>,
    /// Host name and its per-tick track, in order of first appearance.
    pub hosts: Vec<(String, Track)>,
    /// GPUs and hosts seen beyond [`MAX_CHARTED`] (not charted).
    pub uncharted: std::collections::HashSet<(String, Option<String>)>,
}

impl Collected {
    /// No series yet, on `grid`.
    pub fn new(grid: Grid) -> Collected {
        Collected { grid, gpus: Vec::new(), hosts: Vec::new(), uncharted: Default::default() }
    }

    /// Join the envelopes of the next part of the data (parts in time order).
    pub fn append(&mut self, part: Series) {
        for (h, track) in part.host_tracks.into_iter().enumerate() {
            let name = part.keys.hosts.name(h as u32).to_string();
            let full = self.hosts.len() >= MAX_CHARTED;
            match self.hosts.iter_mut().find(|(n, _)| *n == name) {
                Some((_, t)) => t.append(track),
                None if full => {
                    self.uncharted.insert((name, None));
                }
                None => self.hosts.push((name, track)),
            }
        }
        for GpuTrack { host: h, key, track } in part.gpus {
            let host = part.keys.hosts.name(h).to_string();
            let label = key.label();
            let full = self.gpus.len() >= MAX_CHARTED;
            match self.gpus.iter_mut().find(|g| g.host == host && g.label == label) {
                Some(g) => g.track.append(track),
                None if full => {
                    self.uncharted.insert((host, Some(label)));
                }
                None => self.gpus.push(GpuSeries { host, label, track }),
            }
        }
    }

    /// The same series in `k` times fewer buckets (the grid's bucket count a multiple of `k`).
    pub fn coarsen(&self, k: usize) -> Collected {
        let k = k.max(1);
        Collected {
            grid: Grid::new(self.grid.start, self.grid.end, self.grid.n / k),
            gpus: self
                .gpus
                .iter()
                .map(|g| GpuSeries { track: g.track.coarsen(k), ..g.clone() })
                .collect(),
            hosts: self.hosts.iter().map(|(n, t)| (n.clone(), t.coarsen(k))).collect(),
            uncharted: self.uncharted.clone(),
        }
    }

    /// The series of the GPU of this label on `host`.
    pub fn gpu(&self, host: &str, label: &str) -> Option<&GpuSeries> {
        self.gpus.iter().find(|g| g.host == host && g.label == label)
    }

    /// The per-tick track of the host `name`.
    pub fn host(&self, name: &str) -> Option<&Track> {
        self.hosts.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::TimeWindow;
    use arrow_array::{Float64Array, StringArray, TimestampMicrosecondArray, UInt32Array};
    use arrow_schema::{DataType, Field as AField, Schema, TimeUnit};
    use std::sync::Arc;

    fn batch(
        ts: &[i64],
        index: &[u32],
        util: &[Option<f64>],
        util_max: &[Option<f64>],
    ) -> RecordBatch {
        let schema = Schema::new(vec![
            AField::new(
                "timestamp",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            AField::new("host", DataType::Utf8, true),
            AField::new("index", DataType::UInt32, true),
            AField::new("utilization.gpu", DataType::Float64, true),
            AField::new("utilization.gpu.max", DataType::Float64, true),
            AField::new("cpu.util", DataType::Float64, true),
        ]);
        let n = ts.len();
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(TimestampMicrosecondArray::from(ts.to_vec()).with_timezone("UTC")),
                Arc::new(StringArray::from(vec!["h"; n])),
                Arc::new(UInt32Array::from(index.to_vec())),
                Arc::new(Float64Array::from(util.to_vec())),
                Arc::new(Float64Array::from(util_max.to_vec())),
                Arc::new(Float64Array::from(
                    ts.iter().map(|&t| t as f64 / 1e6).collect::<Vec<_>>(),
                )),
            ],
        )
        .unwrap()
    }

    #[test]
    fn coarsened_buckets_are_the_buckets_of_the_coarser_grid() {
        let (fine, coarse) = (Grid::new(0, 7_999_999, 8), Grid::new(0, 7_999_999, 2));
        let (mut f, mut c) = (Track::new(fine.n, 1), Track::new(coarse.n, 1));
        f.env[0].ensure(fine.n);
        c.env[0].ensure(coarse.n);
        for (t, v) in [(100_000, 5.0), (1_500_000, 7.0), (3_900_000, 1.0), (6_000_000, 9.0)] {
            for (tr, g) in [(&mut f, fine), (&mut c, coarse)] {
                let b = g.bucket(t).unwrap();
                tr.row(b, t);
                tr.env[0].add(b, v);
            }
        }
        let m = f.coarsen(4);
        assert_eq!((m.rows, m.first, m.last), (c.rows.clone(), c.first.clone(), c.last.clone()));
        assert_eq!((m.env[0].at(0), m.env[0].at(1)), (c.env[0].at(0), c.env[0].at(1)));
        assert_eq!(m.env[0].at(0), Some(BucketValues { min: 1.0, mean: 13.0 / 3.0, max: 7.0 }));
        let all = Collected {
            grid: fine,
            gpus: vec![],
            hosts: vec![("h".into(), f)],
            uncharted: Default::default(),
        };
        let back = all.coarsen(4);
        assert_eq!(back.grid, coarse);
        assert_eq!(back.host("h").map(|t| t.rows.clone()), Some(vec![3, 1]));
    }

    #[test]
    fn grid_buckets_cover_the_span() {
        let g = Grid::new(1_000, 1_999, 10);
        assert_eq!(g.bucket(999), None);
        assert_eq!(g.bucket(1_000), Some(0));
        assert_eq!(g.bucket(1_099), Some(0));
        assert_eq!(g.bucket(1_100), Some(1));
        assert_eq!(g.bucket(1_999), Some(9));
        assert_eq!(g.bucket(2_000), None);
        let one = Grid::new(5, 5, 1200);
        assert_eq!(one.bucket(5), Some(0));
    }

    #[test]
    fn envelopes_keep_spikes_and_parts_join() {
        // 2 GPUs, one tick a second for 100 s, 10 buckets of 10 s; GPU 1 spikes once to 100 via .max.
        let grid = Grid::new(0, 99_999_999, 10);
        let mut parts = Vec::new();
        for half in [0..50i64, 50..100] {
            let mut s = Series::new(grid, TimeWindow::default());
            let mut ts = Vec::new();
            let mut ix = Vec::new();
            let mut u = Vec::new();
            let mut um = Vec::new();
            for t in half.clone() {
                for g in 0..2u32 {
                    ts.push(t * 1_000_000);
                    ix.push(g);
                    u.push(Some(if g == 0 { 90.0 } else { 10.0 + (t % 2) as f64 }));
                    um.push(Some(if g == 1 && t == 42 { 100.0 } else { 50.0 }));
                }
            }
            s.visit(&batch(&ts, &ix, &u, &um), "h").unwrap();
            parts.push(s);
        }
        let mut c = Collected::new(grid);
        for p in parts {
            c.append(p);
        }
        assert_eq!(c.gpus.len(), 2);
        let g1 = c.gpu("h", "1").unwrap();
        assert_eq!(g1.track.rows.iter().sum::<u32>(), 100);
        let util = &g1.track.env[0];
        let BucketValues { min: lo, mean, max: hi } = util.at(4).unwrap();
        assert_eq!((lo, mean, hi), (10.0, 10.5, 100.0), "the spike at t=42 s tops bucket 4");
        assert_eq!(util.at(5).unwrap().max, 50.0);
        // Host fields once per tick, not once per GPU row.
        let host = c.host("h").unwrap();
        assert_eq!(host.rows.iter().sum::<u32>(), 100);
        assert_eq!(host.env[0].n.iter().sum::<u32>(), 100);
        assert_eq!(host.timing.finish(3.0).interval_s, Some(1.0));
    }

    #[test]
    fn window_and_nulls() {
        let grid = Grid::new(0, 9_999_999, 10);
        let mut s =
            Series::new(grid, TimeWindow { since: Some(2_000_000), until: Some(8_000_000) });
        let ts: Vec<i64> = (0..10).map(|t| t * 1_000_000).collect();
        let u: Vec<Option<f64>> = (0..10).map(|t| (t != 5).then_some(t as f64)).collect();
        s.visit(&batch(&ts, &[0; 10], &u, &[None; 10]), "h").unwrap();
        let mut c = Collected::new(grid);
        c.append(s);
        let t = &c.gpu("h", "0").unwrap().track;
        assert_eq!(t.rows, [0, 0, 1, 1, 1, 1, 1, 1, 0, 0]);
        assert!(t.env[0].at(5).is_none(), "a null stays missing");
        assert_eq!(t.env[0].at(6), Some(BucketValues { min: 6.0, mean: 6.0, max: 6.0 }));
        assert_eq!(t.env[0].range(), Some((2.0, 7.0)));
    }
}
