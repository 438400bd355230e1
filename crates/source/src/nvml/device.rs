//! What the NVML modules share: a GPU's identity ([`GpuInfo`]) and whether a selector names it, how
//! one NVML answer becomes a value ([`to_value`]), and the readings a GPU's row and a MIG instance's row
//! both make (memory, processes). A failing call costs one field of one GPU for one tick:
//! `NotSupported` becomes [`Value::Unsupported`], any other error `Null`, each warned about once;
//! `GpuLost` ([`Lost`]) aborts the GPU's row.

use std::sync::Arc;

use nvml_wrapper::Device;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;

use gpumon_schema::catalog::Field;
use gpumon_schema::{GpuProc, GpuSelector, Row, Value};
use gpumon_util::warn_once;

const MIB: u64 = 1024 * 1024;

/// Static identity of one GPU, read once at start.
#[derive(Debug, Clone)]
pub struct GpuInfo {
    /// NVML index.
    pub index: u32,
    /// UUID.
    pub uuid: Arc<str>,
    /// Product name.
    pub name: Arc<str>,
    /// PCI bus id.
    pub bus_id: Arc<str>,
    /// The driver's version (the same for every GPU; `[N/A]` when NVML does not say).
    pub driver: Arc<str>,
    /// In MIG mode when the run started: each tick also reads its MIG instances.
    pub mig: bool,
}

/// Whether selector `s` names `g` (index, full UUID / UUID prefix, or PCI bus id as nvidia-smi's
/// `-i` takes it: `00000000:17:00.0`, `17:00.0`).
pub(crate) fn selects(s: &GpuSelector, g: &GpuInfo) -> bool {
    s.matches_gpu(Some(u64::from(g.index)), Some(&g.uuid))
        || matches!(s, GpuSelector::Uuid(b) if b.contains(':')
            && (g.bus_id.eq_ignore_ascii_case(b)
                || g.bus_id.to_ascii_lowercase().ends_with(&format!(":{}", b.to_ascii_lowercase()))))
}

/// Compute processes of one GPU (their `row` is set when the reading joins the tick).
pub(super) type ProcList = Vec<GpuProc>;

/// A process NVML lists, with its memory in MiB (no utilization).
pub(super) fn gpu_proc(p: &nvml_wrapper::struct_wrappers::device::ProcessInfo) -> GpuProc {
    let used_mib = match p.used_gpu_memory {
        UsedGpuMemory::Used(b) => Some(b / MIB),
        UsedGpuMemory::Unavailable => None,
    };
    GpuProc { row: 0, pid: p.pid, used_mib, util: None }
}

/// The device answered `GpuLost`.
pub(super) struct Lost;

/// Turn one NVML result into a value; `Err(Lost)` aborts the GPU's row.
pub(super) fn to_value<T>(
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
            let v = to_value(info, Field::MemUsed, Err::<(), _>(e), |_| Value::Null)?;
            for f in [Field::MemUsed, Field::MemTotal, Field::MemFree, Field::MemReserved] {
                row.set(f, v.clone());
            }
        }
    }
    Ok(())
}
