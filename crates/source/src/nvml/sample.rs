//! One GPU's reading for one tick: each selected field by the NVML reader its catalogue row names,
//! the rows of its MIG instances, its processes with their utilization.
//!
//! Each reading thread keeps, per GPU it reads, what spans sub-samples ([`DeviceState`]): the previous
//! GPM sample (`gpm.rs`), the once-a-minute health readings (`health.rs`) and where per-process
//! utilization left off.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, PcieUtilCounter, TemperatureSensor,
};
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::{Device, Nvml};

use crate::host::job::PidSet;
use crate::nvml::device::{GpuInfo, Lost, ProcList, gpu_proc, memory, to_value};
use crate::nvml::gpm::Gpm;
use crate::nvml::health::Health;
use crate::nvml::mig::MigState;
use gpumon_schema::catalog::{CATALOG, Field, NvmlRead};
use gpumon_schema::{GpuProc, ProcUtil, Row, Selection, Value};
use gpumon_util::warn_once;

/// What reading a GPU needs.
pub(super) struct Ctx {
    pub(super) nvml: Arc<Nvml>,
    pub(super) sel: Selection,
    /// [`row_capacity`] of `sel`.
    pub(super) row_cap: usize,
    pub(super) procs: bool,
    pub(super) job: Option<PidSet>,
}

/// What one GPU's reading holds for one tick.
pub(super) struct Reading {
    /// The GPU's row.
    pub(super) row: Row,
    /// Its processes (none for a GPU in MIG mode: NVML lists them on its instances).
    pub(super) procs: ProcList,
    /// The rows of its MIG instances, each with its processes.
    pub(super) instances: Vec<(Row, ProcList)>,
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
    Ok(Reading { row, procs: own, instances })
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
pub(super) fn row_capacity(sel: &Selection) -> usize {
    let maxes =
        CATALOG.iter().filter(|d| d.max_of.is_some_and(|b| sel.fields().any(|f| f == b))).count();
    sel.len() + 3 + maxes
}

/// A row holding only the GPU's cached identity, with room for `cap` values.
pub(super) fn identity_row(info: &GpuInfo, cap: usize) -> Row {
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
            // A value the driver did not give (an error, a lost read, a function an older driver
            // lacks) is asked for again next tick, without gathering the reader's fields.
            if matches!(row.get(f), Value::Null) {
                continue;
            }
            let values: Vec<(Field, Value)> = gpumon_schema::catalog::CATALOG
                .iter()
                .filter(|d| d.read == Some(read))
                .map(|d| (d.field, row.get(d.field).clone()))
                .collect();
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
        NvmlRead::Temperature => to_value(info, f, dev.temperature(TemperatureSensor::Gpu), u)?,
        NvmlRead::Power => to_value(info, f, dev.power_usage(), watts)?,
        NvmlRead::PowerLimit => to_value(info, f, dev.enforced_power_limit(), watts)?,
        NvmlRead::Energy => {
            to_value(info, f, dev.total_energy_consumption(), |mj| Value::F(mj as f64 / 1000.0))?
        }
        NvmlRead::ClockSm => to_value(info, f, dev.clock_info(Clock::SM), u)?,
        NvmlRead::ClockMem => to_value(info, f, dev.clock_info(Clock::Memory), u)?,
        NvmlRead::ClockGr => to_value(info, f, dev.clock_info(Clock::Graphics), u)?,
        NvmlRead::ClockVideo => to_value(info, f, dev.clock_info(Clock::Video), u)?,
        NvmlRead::MaxClockGr => to_value(info, f, dev.max_clock_info(Clock::Graphics), u)?,
        NvmlRead::MaxClockSm => to_value(info, f, dev.max_clock_info(Clock::SM), u)?,
        NvmlRead::MaxClockMem => to_value(info, f, dev.max_clock_info(Clock::Memory), u)?,
        NvmlRead::MemoryTemp => to_value(info, f, field_value(dev, 82), Value::U)?,
        NvmlRead::PowerInstant => {
            to_value(info, f, field_value(dev, 186), |mw| Value::F(mw as f64 / 1000.0))?
        }
        NvmlRead::PowerAverage => {
            to_value(info, f, field_value(dev, 185), |mw| Value::F(mw as f64 / 1000.0))?
        }
        NvmlRead::EccCorrected => to_value(
            info,
            f,
            dev.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile),
            Value::U,
        )?,
        NvmlRead::Persistence => to_value(info, f, dev.is_in_persistent_mode(), |on| {
            Value::S(Arc::from(if on { "Enabled" } else { "Disabled" }))
        })?,
        NvmlRead::Fan => to_value(info, f, dev.fan_speed(0), u)?,
        NvmlRead::Pstate => to_value(info, f, dev.performance_state(), |p| pstate_name(p.as_c()))?,
        NvmlRead::EventReasons => {
            to_value(info, f, dev.current_throttle_reasons(), |r| Value::U(r.bits()))?
        }
        NvmlRead::Encoder => to_value(info, f, dev.encoder_utilization(), |e| u(e.utilization))?,
        NvmlRead::Decoder => to_value(info, f, dev.decoder_utilization(), |e| u(e.utilization))?,
        NvmlRead::PcieTx => to_value(info, f, dev.pcie_throughput(PcieUtilCounter::Send), u)?,
        NvmlRead::PcieRx => to_value(info, f, dev.pcie_throughput(PcieUtilCounter::Receive), u)?,
        NvmlRead::EccUncorrected => to_value(
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
            let v = to_value(info, Field::UtilGpu, Err::<(), _>(e), |_| Value::Null)?;
            row.set(Field::UtilGpu, v.clone());
            row.set(Field::UtilMemory, v);
        }
    }
    Ok(())
}
