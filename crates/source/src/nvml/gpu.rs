//! GPU metrics through NVML (nvml-wrapper): one `Nvml` for the run, each query independent.
//!
//! A failing call costs one field of one GPU for one tick: `NotSupported` becomes
//! [`Value::Unsupported`], any other error `Null`, each warned about once. A GPU that
//! reports `GpuLost` gets null rows (warned once) and is probed again on later ticks.
//! Each reading thread keeps, per GPU it reads, what spans sub-samples ([`DeviceState`]): the previous
//! GPM sample (`gpm.rs`), the once-a-minute health readings (`health.rs`) and where per-process
//! utilization left off; NVML events are watched on a thread of their own (`events.rs`).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, PcieUtilCounter, TemperatureSensor,
};
use nvml_wrapper::enums::device::{SampleValue, UsedGpuMemory};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::{Device, Nvml};

use crate::host::job::PidSet;
use crate::nvml::events::EventWatcher;
use crate::nvml::gpm::Gpm;
use crate::nvml::health::Health;
use crate::nvml::mig::MigState;
use crate::nvml::readers::{Ctx, GpuReads};
use gpumon_schema::catalog::{CATALOG, Field, NvmlRead};
use gpumon_schema::row::{GpuEvent, GpuProc, ProcUtil, Row, Selection, Value};
use gpumon_util::warn::{warn, warn_once};

const MIB: u64 = 1024 * 1024;

/// Static identity of one GPU, read once at start.
#[derive(Debug, Clone)]
pub struct GpuInfo {
    pub index: u32,
    pub uuid: Arc<str>,
    pub name: Arc<str>,
    pub bus_id: Arc<str>,
    /// The driver's version (the same for every GPU; `[N/A]` when NVML does not say).
    pub driver: Arc<str>,
    /// In MIG mode when the run started: each tick also reads its MIG instances.
    pub mig: bool,
}

/// Why NVML could not be used at all.
#[derive(Debug, thiserror::Error)]
#[error("cannot use NVML from {lib}: {source}")]
pub struct NvmlUnavailable {
    pub lib: String,
    #[source]
    pub source: NvmlError,
}

pub use gpumon_schema::gpus::GpuSelector;

/// Whether selector `s` names `g` (index, full UUID / UUID prefix, or PCI bus id as nvidia-smi's
/// `-i` takes it: `00000000:17:00.0`, `17:00.0`).
pub fn selects(s: &GpuSelector, g: &GpuInfo) -> bool {
    s.matches_gpu(Some(u64::from(g.index)), Some(&g.uuid))
        || matches!(s, GpuSelector::Uuid(b) if b.contains(':')
            && (g.bus_id.eq_ignore_ascii_case(b)
                || g.bus_id.to_ascii_lowercase().ends_with(&format!(":{}", b.to_ascii_lowercase()))))
}

/// Samples the selected GPUs. The record loop's thread reads them itself (a `GpuReader` of
/// [`GpuSource::reads`]), then makes the rows with [`GpuSource::collect`]; a standby thread takes
/// the loop over when a read overruns, so a hanging driver call costs that GPU's row for the
/// tick, not the tick itself, and the GPU is read by a worker thread of its own from then on
/// (`readers.rs`).
pub struct GpuSource {
    nvml: Arc<Nvml>,
    reads: Arc<GpuReads>,
    /// Per GPU: reported lost (warned once until it answers again).
    lost: Vec<bool>,
    /// The NVML event thread, when events are watched and some GPU can report them.
    events: Option<EventWatcher>,
    /// `xid.events` is selected: each row counts its GPU's Xid events.
    count_xid: bool,
    /// The selectors asked for that name no GPU NVML sees.
    unmatched: Vec<GpuSelector>,
}

/// Compute processes of one GPU (their `row` is set when the reading joins the tick).
pub(super) type ProcList = Vec<GpuProc>;

/// What one GPU's reading holds for one tick: its row, its processes, the rows of its MIG instances
/// with theirs.
pub(super) type Reading = (Row, ProcList, Vec<(Row, ProcList)>);

impl Drop for GpuSource {
    fn drop(&mut self) {
        self.reads.quit();
    }
}

/// One GPU's row for a tick (and its processes when asked for).
pub(super) fn read_gpu<'n>(
    ctx: &'n Ctx,
    info: &GpuInfo,
    state: &mut DeviceState<'n>,
) -> Result<Reading, Lost> {
    let r = read_gpu_with(ctx, info, state);
    if r.is_err() {
        // A lost GPU's handle is asked for again when it answers again.
        state.dev = None;
    }
    r
}

fn read_gpu_with<'n>(
    ctx: &'n Ctx,
    info: &GpuInfo,
    state: &mut DeviceState<'n>,
) -> Result<Reading, Lost> {
    let mut row = identity_row(info, ctx.row_cap);
    sample_device(&ctx.nvml, info, state, &mut row)?;
    let instances = match (&state.dev, info.mig) {
        (Some(dev), true) => state.mig.rows((&ctx.nvml, dev), info, &row, (&ctx.sel, ctx.procs))?,
        _ => Vec::new(),
    };
    let list = ctx.procs || ctx.job.is_some();
    let ps = if list { running_processes(&ctx.nvml, info, ctx.procs, state)? } else { None };
    if let (Some(job), Some(ps)) = (&ctx.job, &ps) {
        let mib: u64 = match job.read() {
            Ok(pids) => {
                ps.iter().filter(|p| pids.contains(&p.pid)).filter_map(|p| p.used_mib).sum()
            }
            Err(_) => 0,
        };
        row.set(Field::JobGpuMemory, Value::U(mib));
    }
    // NVML lists a MIG GPU's processes on its instances (on the GPU itself, all of them again).
    let own = if ctx.procs && instances.is_empty() { ps.unwrap_or_default() } else { Vec::new() };
    Ok((row, own, instances))
}

impl GpuSource {
    /// Load NVML from `lib` and resolve the GPU selection (all visible GPUs when empty).
    /// With `procs`, each tick also lists the GPU's running compute processes with their
    /// utilization; with `job`, each row gets `job.gpu_memory`, the memory of the processes in
    /// that PID set. With `watch_events` (or `xid.events` selected) NVML events are watched.
    pub fn open(
        lib: &str,
        select: &[GpuSelector],
        sel: &Selection,
        procs: bool,
        job: Option<PidSet>,
        watch_events: bool,
    ) -> Result<GpuSource, NvmlUnavailable> {
        let unavailable = |source| NvmlUnavailable { lib: lib.to_string(), source };
        let nvml = Arc::new(Nvml::builder().lib_path(OsStr::new(lib)).init().map_err(unavailable)?);
        let count = nvml.device_count().map_err(unavailable)?;
        let mut all = Vec::new();
        for index in 0..count {
            match read_info(&nvml, index) {
                Ok(info) => all.push(info),
                Err(e) => {
                    warn(&format!("GPU {index}: cannot read its identity ({e}); skipping it"))
                }
            }
        }
        let unmatched: Vec<GpuSelector> =
            select.iter().filter(|s| !all.iter().any(|g| selects(s, g))).cloned().collect();
        let infos: Vec<GpuInfo> = if select.is_empty() {
            all
        } else {
            all.into_iter().filter(|g| select.iter().any(|s| selects(s, g))).collect()
        };
        let ctx =
            Ctx { nvml: nvml.clone(), sel: sel.clone(), row_cap: row_capacity(sel), procs, job };
        let count_xid = sel.fields().any(|f| f == Field::XidEvents);
        let events = if (watch_events || count_xid) && !infos.is_empty() {
            EventWatcher::start(nvml.clone(), &infos)
        } else {
            None
        };
        let lost = vec![false; infos.len()];
        let reads = Arc::new(GpuReads::new(ctx, infos));
        Ok(GpuSource { nvml, reads, lost, events, count_xid, unmatched })
    }

    /// The selectors given to [`GpuSource::open`] that name no GPU NVML sees.
    pub fn unmatched(&self) -> &[GpuSelector] {
        &self.unmatched
    }

    /// Whether a recorded GPU was in MIG mode at start (its instances get rows of their own).
    pub fn has_mig(&self) -> bool {
        self.gpus().any(|g| g.mig)
    }

    /// The GPUs being recorded.
    pub fn gpus(&self) -> impl Iterator<Item = &GpuInfo> {
        self.reads.gpus.iter().map(|g| &g.info)
    }

    pub fn driver_version(&self) -> Option<String> {
        self.nvml.sys_driver_version().ok()
    }

    /// The readers' shared state, for the threads that read the GPUs.
    pub fn reads(&self) -> Arc<GpuReads> {
        self.reads.clone()
    }

    /// One row per GPU with the selected GPU fields the readers posted for tick `seq`. GPUs that
    /// did not answer within `budget` get a row with only their identity. NVML events that
    /// arrived meanwhile go to `events` (and are counted in `xid.events`).
    pub fn collect(
        &mut self,
        seq: u64,
        budget: Duration,
        rows: &mut Vec<Row>,
        procs: &mut Vec<GpuProc>,
        events: &mut Vec<GpuEvent>,
    ) {
        let first = rows.len();
        for (g, lost) in self.reads.gpus.iter().zip(&mut self.lost) {
            // A late answer to an older tick is dropped.
            let row = match g.slot.lock().ok().and_then(|mut s| s.take()) {
                Some((s, r)) if s == seq => Some(r),
                _ => None,
            };
            let info = &g.info;
            let row = match row {
                Some(Ok((row, ps, instances))) => {
                    let at = rows.len();
                    procs.extend(ps.into_iter().map(|p| GpuProc { row: at, ..p }));
                    if *lost {
                        *lost = false;
                        warn(&format!("GPU {} ({}) answers again", info.index, info.uuid));
                    }
                    rows.push(row);
                    for (r, ps) in instances {
                        let at = rows.len();
                        procs.extend(ps.into_iter().map(|p| GpuProc { row: at, ..p }));
                        rows.push(r);
                    }
                    continue;
                }
                Some(Err(Lost)) => {
                    if !*lost {
                        *lost = true;
                        warn(&format!(
                            "GPU {} ({}) is lost (fallen off the bus or driver reset); its fields are empty until it answers again",
                            info.index, info.uuid
                        ));
                    }
                    identity_row(info, 0)
                }
                None => {
                    warn_once(
                        &format!("nvml-timeout-{}", info.index),
                        &format!(
                            "GPU {}: NVML did not answer within {:?}; its fields are empty while it hangs",
                            info.index, budget
                        ),
                    );
                    identity_row(info, 0)
                }
            };
            rows.push(row);
        }
        self.take_events(&mut rows[first..], events);
    }

    /// Move the events that arrived to `events`; count each GPU's Xid events in its row.
    fn take_events(&self, rows: &mut [Row], events: &mut Vec<GpuEvent>) {
        let Some(w) = &self.events else { return };
        let start = events.len();
        w.drain(events);
        if !self.count_xid {
            return;
        }
        let gpu_rows = rows.iter_mut().filter(|r| r.get(Field::MigUuid).is_missing());
        for (row, gpu) in gpu_rows.zip(self.gpus()) {
            let index = gpu.index;
            if w.watches_xid(index) {
                let n =
                    events[start..].iter().filter(|e| e.kind == "xid" && e.index == index).count();
                row.set(Field::XidEvents, Value::U(n as u64));
            }
        }
    }
}

/// What a reading thread keeps for one GPU between sub-samples.
pub(super) struct DeviceState<'n> {
    gpm: Gpm<'n>,
    health: Health,
    /// Timestamp (µs) of the newest per-process utilization sample seen.
    proc_seen: Option<u64>,
    /// The NVML reader of each selected GPU field, once per reader (with its first field).
    reads: Vec<(NvmlRead, Field)>,
    /// The GPU's handle, got at the first reading and kept; got again after the GPU was lost.
    dev: Option<Device<'n>>,
    /// The MIG layout last read and its instances' GPM (a GPU in MIG mode at start).
    mig: MigState<'n>,
    /// The values of the fixed readers ([`NvmlRead::is_fixed`]) once read, repeated on every row.
    fixed: Vec<(NvmlRead, Vec<(Field, Value)>)>,
}

impl<'n> DeviceState<'n> {
    pub(super) fn new(nvml: &'n Nvml, sel: &Selection) -> DeviceState<'n> {
        let mut reads: Vec<(NvmlRead, Field)> = Vec::new();
        for f in sel.fields() {
            if let Some(read) = f.def().read
                && (read.per_field() || !reads.iter().any(|(r, _)| *r == read))
            {
                reads.push((read, f));
            }
        }
        DeviceState {
            gpm: Gpm::new(nvml, sel),
            health: Health::default(),
            proc_seen: None,
            reads,
            dev: None,
            mig: MigState::default(),
            fixed: Vec::new(),
        }
    }
}

/// Compute processes on one GPU with their memory and, with `util`, their utilization since the
/// last call; None when NVML cannot list them.
fn running_processes(
    nvml: &Nvml,
    info: &GpuInfo,
    util: bool,
    state: &mut DeviceState<'_>,
) -> Result<Option<ProcList>, Lost> {
    let fresh;
    let dev = match &state.dev {
        Some(d) => d,
        None => match nvml.device_by_index(info.index) {
            Ok(d) => {
                fresh = d;
                &fresh
            }
            Err(NvmlError::GpuLost) => return Err(Lost),
            Err(_) => return Ok(None),
        },
    };
    match dev.running_compute_processes() {
        Ok(ps) => {
            let shares = if util { process_util(dev, info, &mut state.proc_seen)? } else { None };
            Ok(Some(
                ps.into_iter()
                    .map(|p| {
                        let util =
                            shares.as_ref().map(|m| m.get(&p.pid).copied().unwrap_or_default());
                        GpuProc { util, ..gpu_proc(&p) }
                    })
                    .collect(),
            ))
        }
        Err(NvmlError::GpuLost) => Err(Lost),
        Err(e) if super::missing::noted(&e, None, "the process list (job.gpu_memory)") => Ok(None),
        Err(e) => {
            warn_once(
                &format!("nvml-procs-{}", info.index),
                &format!(
                    "GPU {}: cannot list its processes ({e}); job.gpu_memory stays empty",
                    info.index
                ),
            );
            Ok(None)
        }
    }
}

/// A process NVML lists, with its memory in MiB (no utilization).
pub(super) fn gpu_proc(p: &nvml_wrapper::struct_wrappers::device::ProcessInfo) -> GpuProc {
    let used_mib = match p.used_gpu_memory {
        UsedGpuMemory::Used(b) => Some(b / MIB),
        UsedGpuMemory::Unavailable => None,
    };
    GpuProc { row: 0, pid: p.pid, used_mib, util: None }
}

/// Per-process utilization since the newest sample seen (`seen`, moved on): the mean of each PID's
/// samples. NVML lists only processes that were busy, so an empty answer (`NotFound`) means all
/// idle; None when the GPU cannot report it.
fn process_util(
    dev: &Device<'_>,
    info: &GpuInfo,
    seen: &mut Option<u64>,
) -> Result<Option<HashMap<u32, ProcUtil>>, Lost> {
    let samples = match dev.process_utilization_stats(*seen) {
        Ok(s) => s,
        Err(NvmlError::NotFound) => Vec::new(),
        Err(NvmlError::GpuLost) => return Err(Lost),
        Err(NvmlError::NotSupported) => return Ok(None),
        Err(e) if super::missing::noted(&e, None, "per-process utilization (proc.sm and co.)") => {
            return Ok(None);
        }
        Err(e) => {
            warn_once(
                &format!("nvml-procutil-{}", info.index),
                &format!(
                    "GPU {}: cannot read per-process utilization ({e}); proc.sm and co. stay empty",
                    info.index
                ),
            );
            return Ok(None);
        }
    };
    let mut sums: HashMap<u32, (ProcUtil, f64)> = HashMap::new();
    for s in samples {
        *seen = Some(seen.map_or(s.timestamp, |t| t.max(s.timestamp)));
        let e = sums.entry(s.pid).or_default();
        e.0.sm += f64::from(s.sm_util);
        e.0.mem += f64::from(s.mem_util);
        e.0.enc += f64::from(s.enc_util);
        e.0.dec += f64::from(s.dec_util);
        e.1 += 1.0;
    }
    Ok(Some(
        sums.into_iter()
            .map(|(pid, (u, n))| {
                (pid, ProcUtil { sm: u.sm / n, mem: u.mem / n, enc: u.enc / n, dec: u.dec / n })
            })
            .collect(),
    ))
}

/// Values a GPU row of `sel` ends up holding: the selected fields and those the loop adds
/// (`samples`, `missed`, `phase`, the `.max` column of each selected base), so the row is
/// allocated once.
fn row_capacity(sel: &Selection) -> usize {
    let maxes =
        CATALOG.iter().filter(|d| d.max_of.is_some_and(|b| sel.fields().any(|f| f == b))).count();
    sel.len() + 3 + maxes
}

/// A row holding only the GPU's cached identity, with room for `cap` values.
fn identity_row(info: &GpuInfo, cap: usize) -> Row {
    let mut row = Row::with_capacity(cap.max(4));
    row.set(Field::Index, Value::U(u64::from(info.index)));
    row.set(Field::Uuid, Value::S(info.uuid.clone()));
    row.set(Field::Name, Value::S(info.name.clone()));
    row.set(Field::PciBusId, Value::S(info.bus_id.clone()));
    if !info.driver.is_empty() {
        row.set(Field::DriverVersion, Value::S(info.driver.clone()));
    }
    row
}

pub(super) fn read_info(nvml: &Nvml, index: u32) -> Result<GpuInfo, NvmlError> {
    let dev = nvml.device_by_index(index)?;
    let uuid = dev.uuid()?;
    let name = dev.name().unwrap_or_else(|_| "Unknown GPU".into());
    let bus_id = dev.pci_info().map(|p| p.bus_id).unwrap_or_default();
    let driver = nvml.sys_driver_version().unwrap_or_default();
    let mig = crate::nvml::mig::mode(&dev).is_some_and(|(current, _)| current);
    Ok(GpuInfo {
        index,
        uuid: uuid.into(),
        name: name.into(),
        bus_id: bus_id.into(),
        driver: driver.into(),
        mig,
    })
}

/// The device answered `GpuLost`.
pub(super) struct Lost;

/// Turn one NVML result into a value; `Err(Lost)` aborts the GPU's row.
pub(super) fn val<T>(
    info: &GpuInfo,
    field: Field,
    r: Result<T, NvmlError>,
    conv: impl FnOnce(T) -> Value,
) -> Result<Value, Lost> {
    match r {
        Ok(v) => Ok(conv(v)),
        Err(NvmlError::GpuLost) => Err(Lost),
        Err(NvmlError::NotSupported) => Ok(Value::Unsupported),
        Err(e)
            if super::missing::noted(
                &e,
                Some(field),
                &format!("{field} and any other field it reads"),
            ) =>
        {
            Ok(Value::Null)
        }
        Err(e) => {
            warn_once(
                &format!("nvml-{}-{field}-{e:?}", info.index),
                &format!("GPU {}: reading {field} failed: {e}; recording it as empty", info.index),
            );
            Ok(Value::Null)
        }
    }
}

/// One reading of the GPU fields of `sel` on one GPU, with the same calls `record` makes (for
/// `gpumon doctor`); None when the GPU is lost.
pub(super) fn probe(nvml: &Nvml, info: &GpuInfo, sel: &Selection) -> Option<Row> {
    let mut row = identity_row(info, row_capacity(sel));
    let mut state = DeviceState::new(nvml, sel);
    sample_device(nvml, info, &mut state, &mut row).ok().map(|()| row)
}

/// Read the GPU fields selected for `state` into `row`: each field by the reader its catalogue
/// row names, one NVML call per reader (fields of the same reader share it).
fn sample_device<'n>(
    nvml: &'n Nvml,
    info: &GpuInfo,
    state: &mut DeviceState<'n>,
    row: &mut Row,
) -> Result<(), Lost> {
    let DeviceState { gpm, health, reads, dev, fixed, .. } = state;
    let dev = match dev {
        Some(d) => d,
        None => match nvml.device_by_index(info.index) {
            Ok(d) => dev.insert(d),
            Err(NvmlError::GpuLost) => return Err(Lost),
            Err(e) => {
                warn_once(
                    &format!("nvml-handle-{}", info.index),
                    &format!("GPU {}: no handle: {e}", info.index),
                );
                return Ok(());
            }
        },
    };
    for &(read, f) in reads.iter() {
        if !read.is_fixed() {
            read_field(dev, info, read, f, (gpm, health), row)?;
        } else if let Some((_, values)) = fixed.iter().find(|(r, _)| *r == read) {
            for (g, v) in values {
                row.set(*g, v.clone());
            }
        } else {
            read_field(dev, info, read, f, (gpm, health), row)?;
            let values: Vec<(Field, Value)> = gpumon_schema::catalog::CATALOG
                .iter()
                .filter(|d| d.read == Some(read))
                .map(|d| (d.field, row.get(d.field).clone()))
                .collect();
            // A value the driver did not give (an error, a lost read) is asked for again next tick.
            if values.iter().all(|(_, v)| !matches!(v, Value::Null)) {
                fixed.push((read, values));
            }
        }
    }
    Ok(())
}

/// One reader's NVML call on one GPU: sets `f`, or every field of a shared reader.
fn read_field<'n>(
    dev: &Device<'n>,
    info: &GpuInfo,
    read: NvmlRead,
    f: Field,
    (gpm, health): (&mut Gpm<'n>, &mut Health),
    row: &mut Row,
) -> Result<(), Lost> {
    let u = |v: u32| Value::U(u64::from(v));
    let watts = |mw: u32| Value::F(f64::from(mw) / 1000.0);
    let v = match read {
        // Cached at start (identity_row) / computed by the worker from the process list / counted
        // from the event thread by `GpuSource::sample`.
        NvmlRead::Identity | NvmlRead::Processes | NvmlRead::Events => return Ok(()),
        NvmlRead::Gpm => return gpm.read(dev, info, row),
        NvmlRead::RemappedRows | NvmlRead::RetiredPages => {
            return health.read(dev, info, read, row);
        }
        NvmlRead::Utilization => return utilization(dev, info, row),
        NvmlRead::Memory => return memory(dev, info, row),
        NvmlRead::Temperature => val(info, f, dev.temperature(TemperatureSensor::Gpu), u)?,
        NvmlRead::Power => val(info, f, dev.power_usage(), watts)?,
        NvmlRead::PowerLimit => val(info, f, dev.enforced_power_limit(), watts)?,
        NvmlRead::Energy => {
            val(info, f, dev.total_energy_consumption(), |mj| Value::F(mj as f64 / 1000.0))?
        }
        NvmlRead::ClockSm => val(info, f, dev.clock_info(Clock::SM), u)?,
        NvmlRead::ClockMem => val(info, f, dev.clock_info(Clock::Memory), u)?,
        NvmlRead::ClockGr => val(info, f, dev.clock_info(Clock::Graphics), u)?,
        NvmlRead::ClockVideo => val(info, f, dev.clock_info(Clock::Video), u)?,
        NvmlRead::MaxClockGr => val(info, f, dev.max_clock_info(Clock::Graphics), u)?,
        NvmlRead::MaxClockSm => val(info, f, dev.max_clock_info(Clock::SM), u)?,
        NvmlRead::MaxClockMem => val(info, f, dev.max_clock_info(Clock::Memory), u)?,
        NvmlRead::MemoryTemp => val(info, f, field_value(dev, 82), Value::U)?,
        NvmlRead::PowerInstant => {
            val(info, f, field_value(dev, 186), |mw| Value::F(mw as f64 / 1000.0))?
        }
        NvmlRead::PowerAverage => {
            val(info, f, field_value(dev, 185), |mw| Value::F(mw as f64 / 1000.0))?
        }
        NvmlRead::EccCorrected => val(
            info,
            f,
            dev.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile),
            Value::U,
        )?,
        NvmlRead::Persistence => val(info, f, dev.is_in_persistent_mode(), |on| {
            Value::S(Arc::from(if on { "Enabled" } else { "Disabled" }))
        })?,
        NvmlRead::Fan => val(info, f, dev.fan_speed(0), u)?,
        NvmlRead::Pstate => val(info, f, dev.performance_state(), |p| pstate_name(p.as_c()))?,
        NvmlRead::EventReasons => {
            val(info, f, dev.current_throttle_reasons(), |r| Value::U(r.bits()))?
        }
        NvmlRead::Encoder => val(info, f, dev.encoder_utilization(), |e| u(e.utilization))?,
        NvmlRead::Decoder => val(info, f, dev.decoder_utilization(), |e| u(e.utilization))?,
        NvmlRead::PcieTx => val(info, f, dev.pcie_throughput(PcieUtilCounter::Send), u)?,
        NvmlRead::PcieRx => val(info, f, dev.pcie_throughput(PcieUtilCounter::Receive), u)?,
        NvmlRead::EccUncorrected => val(
            info,
            f,
            dev.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile),
            Value::U,
        )?,
        NvmlRead::NotAvailable => Value::Null,
        _ => return super::smi::read(dev, info, read, f, row),
    };
    row.set(f, v);
    Ok(())
}

/// One NVML field value (`nvmlDeviceGetFieldValues`, ids from nvml.h: 82 memory temperature, 185
/// average and 186 instant power in mW), as a whole number.
fn field_value(dev: &Device, id: u32) -> Result<u64, NvmlError> {
    let sample = dev.field_values_for(&[FieldId(id)])?.pop().ok_or(NvmlError::Unknown)??;
    Ok(match sample.value? {
        SampleValue::F64(x) => x.max(0.0).round() as u64,
        SampleValue::U32(x) => u64::from(x),
        SampleValue::U64(x) => x,
        SampleValue::I64(x) => u64::try_from(x).unwrap_or(0),
    })
}

/// `P0`..`P15` for NVML's performance state `n` (one shared string each, not one per reading).
fn pstate_name(n: u32) -> Value {
    static NAMES: OnceLock<Vec<Arc<str>>> = OnceLock::new();
    let names = NAMES.get_or_init(|| (0..16).map(|k| Arc::from(format!("P{k}"))).collect());
    names.get(n as usize).map_or(Value::Null, |s| Value::S(s.clone()))
}

/// utilization.gpu and utilization.memory from one call.
fn utilization(dev: &Device, info: &GpuInfo, row: &mut Row) -> Result<(), Lost> {
    match dev.utilization_rates() {
        Ok(r) => {
            row.set(Field::UtilGpu, Value::U(u64::from(r.gpu)));
            row.set(Field::UtilMemory, Value::U(u64::from(r.memory)));
        }
        Err(e) => {
            let v = val(info, Field::UtilGpu, Err::<(), _>(e), |_| Value::Null)?;
            row.set(Field::UtilGpu, v.clone());
            row.set(Field::UtilMemory, v);
        }
    }
    Ok(())
}

/// memory.used, memory.total and memory.free from one call, in MiB.
pub(super) fn memory(dev: &Device, info: &GpuInfo, row: &mut Row) -> Result<(), Lost> {
    match dev.memory_info() {
        Ok(m) => {
            row.set(Field::MemUsed, Value::U(m.used / MIB));
            row.set(Field::MemTotal, Value::U(m.total / MIB));
            row.set(Field::MemFree, Value::U(m.free / MIB));
            row.set(Field::MemReserved, Value::U(m.reserved / MIB));
        }
        Err(e) => {
            let v = val(info, Field::MemUsed, Err::<(), _>(e), |_| Value::Null)?;
            for f in [Field::MemUsed, Field::MemTotal, Field::MemFree, Field::MemReserved] {
                row.set(f, v.clone());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::*;
    use crate::nvml::readers::TickReads;
    use gpumon_schema::catalog::Source;

    /// GPU fields the sampler leaves empty on purpose, each with the reason. A GPU field missing
    /// from a reading and not listed here fails `every_gpu_field_is_sampled`.
    const NOT_SAMPLED: &[(Field, &str)] = &[
        (Field::MigGi, "set on MIG instance rows only"),
        (Field::MigCi, "set on MIG instance rows only"),
        (Field::MigProfile, "set on MIG instance rows only"),
        (Field::MigUuid, "set on MIG instance rows only"),
        (Field::EccErrorsCorrectedVolatileDram, "no DRAM location in nvml-wrapper"),
        (Field::EccErrorsCorrectedAggregateDram, "no DRAM location in nvml-wrapper"),
        (Field::EccErrorsUncorrectedVolatileDram, "no DRAM location in nvml-wrapper"),
        (Field::EccErrorsUncorrectedAggregateDram, "no DRAM location in nvml-wrapper"),
    ];

    /// Set in the child process that runs the check (see `every_gpu_field_is_sampled`).
    const CHILD: &str = "GPUMON_TEST_GPU_FIELDS_CHILD";

    /// The fake libnvidia-ml (tests/fake-nvml) beside this test binary's `deps/`, built when
    /// missing or older than its source.
    fn fake_nvml() -> PathBuf {
        let exe = std::env::current_exe().unwrap();
        let so = exe.parent().and_then(Path::parent).unwrap().join("libnvidia_ml.so");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fake-nvml/src/lib.rs");
        let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        if !matches!((mtime(&src), mtime(&so)), (Some(s), Some(o)) if o >= s) {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "--quiet", "-p", "fake-nvml"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .unwrap();
            assert!(status.success(), "cargo build -p fake-nvml failed");
        }
        assert!(so.exists(), "{} missing", so.display());
        so
    }

    /// One GPU whose scenario sets every per-tick GPU field (the fake's keys are the fields'
    /// names, the retired-pages counts are page lists), every GPM metric, an Xid event, and runs
    /// one compute process, PID `pid`, with its utilization.
    fn scenario(pid: u32) -> String {
        let mut s = format!(
            "init = ok\n[device]\nprocesses = {pid}:64\nprocess_util = {pid}:sm=42\nevents = xid:79@0\n"
        );
        // Keys of the fake's scenario: the readers' own field names, less those the fake makes up
        // (strings from the device index, PCI ids) or reads from other keys (below).
        let derived = [
            NvmlRead::Serial,
            NvmlRead::Vbios,
            NvmlRead::InforomImg,
            NvmlRead::PciInfo,
            NvmlRead::EventReason,
            NvmlRead::EventReasonsSupported,
            NvmlRead::EccLocation,
            NvmlRead::MigModes,
        ];
        s.push_str(
            "ecc.errors.by_location = 3\nclocks_event_reasons.supported = 0x1FF\nmig_mode = 0\n",
        );
        for d in
            CATALOG.iter().filter(|d| d.read.is_some_and(|r| r.is_query() && !derived.contains(&r)))
        {
            let line = match d.name.strip_suffix(".count") {
                Some(list) => format!("{list} = 0x1000\n"),
                None => format!("{} = 1\n", d.name),
            };
            s.push_str(&line);
        }
        for key in GPM_KEYS {
            s.push_str(&format!("gpm.{key} = 0, 1\n"));
        }
        s
    }

    /// The fake's key of each GPM metric of [`crate::nvml::gpm::METRICS`] (tests/fake-nvml README).
    const GPM_KEYS: [&str; 11] = [
        "sm_util",
        "sm_occupancy",
        "any_tensor_util",
        "dram_bw_util",
        "fp16_util",
        "fp32_util",
        "fp64_util",
        "pcie_tx_per_sec",
        "pcie_rx_per_sec",
        "nvlink_total_tx_per_sec",
        "nvlink_total_rx_per_sec",
    ];

    /// Every field the catalogue declares as read from the GPU comes back from one sample
    /// through the real nvml-wrapper against the fake NVML, or is listed in [`NOT_SAMPLED`].
    #[test]
    fn every_gpu_field_is_sampled() {
        // The fake reads its scenario from the environment at init, and setting a variable while
        // other tests run on other threads is unsound: the check runs in a child process.
        if std::env::var_os(CHILD).is_none() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("scenario.txt");
            std::fs::write(&path, scenario(4242)).unwrap();
            let name = "nvml::gpu::tests::every_gpu_field_is_sampled";
            let out = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", name, "--nocapture", "--test-threads=1"])
                .env(CHILD, fake_nvml())
                .env("FAKE_NVML_SCENARIO", &path)
                .output()
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(out.status.success() && text.contains("1 passed"), "{text}");
            return;
        }
        let lib = std::env::var(CHILD).unwrap();
        let fields: Vec<Field> =
            CATALOG.iter().filter(|d| d.source == Source::Gpu).map(|d| d.field).collect();
        let job = PidSet::default();
        job.write().unwrap().insert(4242);
        let mut src =
            GpuSource::open(&lib, &[], &Selection::new(fields.clone()), true, Some(job), false)
                .unwrap();
        let (mut rows, mut procs, mut events) = (Vec::new(), Vec::new(), Vec::new());
        let reads = src.reads();
        let mut reader = reads.reader();
        let mut sample =
            |seq, rows: &mut Vec<Row>, procs: &mut Vec<GpuProc>, events: &mut Vec<GpuEvent>| {
                let budget = Duration::from_secs(10);
                assert!(reader.read_tick(
                    0,
                    TickReads { seq, at: std::time::Instant::now(), budget },
                    false
                ));
                src.collect(seq, budget, rows, procs, events);
            };
        // GPM values need two samples (by the same reader): the second reading has them.
        sample(1, &mut rows, &mut procs, &mut events);
        assert!(rows[0].get(Field::SmActive).is_missing(), "no GPM value before a second sample");
        rows.clear();
        procs.clear();
        sample(2, &mut rows, &mut procs, &mut events);
        assert_eq!(rows.len(), 1);
        for f in fields {
            let v = rows[0].get(f);
            if f.def().read == Some(NvmlRead::NotAvailable) {
                assert!(v.is_missing(), "{f} is never available but reads {v:?}");
                continue;
            }
            match NOT_SAMPLED.iter().find(|(n, _)| *n == f) {
                Some((_, why)) => {
                    assert!(v.is_missing(), "{f} is listed as not sampled ({why}) but reads {v:?}")
                }
                None => assert!(
                    !v.is_missing(),
                    "{f} is a GPU field but the sampler leaves it empty ({v:?})"
                ),
            }
        }
        assert_eq!(rows[0].get(Field::JobGpuMemory), &Value::U(64), "the job's process memory");
        assert_eq!(rows[0].get(Field::SmActive), &Value::F(1.0));
        assert_eq!(rows[0].get(Field::RetiredDbe), &Value::U(1), "one retired page");
        assert_eq!(procs.len(), 1);
        assert_eq!(procs[0].util.map(|u| u.sm), Some(42.0));
    }
}
