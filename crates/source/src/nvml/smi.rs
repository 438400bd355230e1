//! nvidia-smi's other `--query-gpu` names (docs/query-gpu.md): identity strings, PCI and PCIe link,
//! modes, power-limit range, applications clocks, encoder statistics, each clock event reason and
//! ECC errors by memory location, read through nvml-wrapper when selected. A name NVML does not
//! give gpumon is always null (written `[N/A]`); a call the device does not support is
//! `[Not Supported]`, as nvidia-smi writes them.

use std::sync::Arc;

use nvml_wrapper::Device;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{
    Clock, ComputeMode, EccCounter, MemoryError, MemoryLocation, OperationMode,
};
use nvml_wrapper::error::NvmlError;

use super::gpu::{GpuInfo, Lost, val};
use gpumon_schema::catalog::{Field, NvmlRead};
use gpumon_schema::row::{Row, Value};

fn text(s: impl Into<Arc<str>>) -> Value {
    Value::S(s.into())
}

fn enabled(on: bool) -> Value {
    text(if on { "Enabled" } else { "Disabled" })
}

fn watts(mw: u32) -> Value {
    Value::F(f64::from(mw) / 1000.0)
}

fn mhz(v: u32) -> Value {
    Value::U(u64::from(v))
}

/// Read `f` (or every field of its shared reader) into `row`.
pub(super) fn read(
    dev: &Device,
    info: &GpuInfo,
    read: NvmlRead,
    f: Field,
    row: &mut Row,
) -> Result<(), Lost> {
    let v = match read {
        NvmlRead::Serial => val(info, f, dev.serial(), text)?,
        NvmlRead::Vbios => val(info, f, dev.vbios_version(), text)?,
        NvmlRead::InforomImg => val(info, f, dev.info_rom_image_version(), text)?,
        NvmlRead::PcieGenCurrent => val(info, f, dev.current_pcie_link_gen(), mhz)?,
        NvmlRead::PcieGenMax => val(info, f, dev.max_pcie_link_gen(), mhz)?,
        NvmlRead::PcieWidthCurrent => val(info, f, dev.current_pcie_link_width(), mhz)?,
        NvmlRead::PcieWidthMax => val(info, f, dev.max_pcie_link_width(), mhz)?,
        NvmlRead::DisplayMode => val(info, f, dev.is_display_connected(), enabled)?,
        NvmlRead::DisplayActive => val(info, f, dev.is_display_active(), enabled)?,
        NvmlRead::AccountingMode => val(info, f, dev.is_accounting_enabled(), enabled)?,
        // nvidia-smi still prints power.management from this call, which NVML marks deprecated.
        #[allow(deprecated)]
        NvmlRead::PowerManagement => val(info, f, dev.is_power_management_algo_active(), enabled)?,
        NvmlRead::PowerDefaultLimit => val(info, f, dev.power_management_limit_default(), watts)?,
        NvmlRead::ComputeMode => val(info, f, dev.compute_mode(), |m| text(compute_mode(m)))?,
        NvmlRead::ComputeCap => val(info, f, dev.cuda_compute_capability(), |c| {
            text(format!("{}.{}", c.major, c.minor))
        })?,
        NvmlRead::AppClockGr => val(info, f, dev.applications_clock(Clock::Graphics), mhz)?,
        NvmlRead::AppClockMem => val(info, f, dev.applications_clock(Clock::Memory), mhz)?,
        NvmlRead::DefaultAppClockGr => {
            val(info, f, dev.default_applications_clock(Clock::Graphics), mhz)?
        }
        NvmlRead::DefaultAppClockMem => {
            val(info, f, dev.default_applications_clock(Clock::Memory), mhz)?
        }
        NvmlRead::EventReason => val(info, f, dev.current_throttle_reasons(), |r| reason(f, r))?,
        NvmlRead::EventReasonsSupported => val(info, f, dev.supported_throttle_reasons(), |r| {
            text(format!("0x{:016X}", r.bits()))
        })?,
        NvmlRead::EccLocation => match location(f) {
            Some((kind, counter, at)) => {
                val(info, f, dev.memory_error_counter(kind, counter, at), Value::U)?
            }
            None => Value::Null,
        },
        NvmlRead::EccAggregate => {
            let kind = if f == Field::EccErrorsCorrectedAggregateTotal {
                MemoryError::Corrected
            } else {
                MemoryError::Uncorrected
            };
            val(info, f, dev.total_ecc_errors(kind, EccCounter::Aggregate), Value::U)?
        }
        _ => return shared(dev, info, read, f, row),
    };
    row.set(f, v);
    Ok(())
}

/// The readers whose one call yields several fields: every field of it is set.
fn shared(
    dev: &Device,
    info: &GpuInfo,
    read: NvmlRead,
    f: Field,
    row: &mut Row,
) -> Result<(), Lost> {
    let set: Vec<(Field, Value)> = match read {
        NvmlRead::PciInfo => pci(dev, info, f)?,
        NvmlRead::PowerConstraints => match dev.power_management_limit_constraints() {
            Ok(c) => vec![
                (Field::PowerMinLimit, watts(c.min_limit)),
                (Field::PowerMaxLimit, watts(c.max_limit)),
            ],
            Err(e) => failed(info, f, e, &[Field::PowerMinLimit, Field::PowerMaxLimit])?,
        },
        NvmlRead::EncoderStats => match dev.encoder_stats() {
            Ok(s) => vec![
                (Field::EncoderStatsSessionCount, mhz(s.session_count)),
                (Field::EncoderStatsAverageFps, mhz(s.average_fps)),
                (Field::EncoderStatsAverageLatency, mhz(s.average_latency)),
            ],
            Err(e) => failed(
                info,
                f,
                e,
                &[
                    Field::EncoderStatsSessionCount,
                    Field::EncoderStatsAverageFps,
                    Field::EncoderStatsAverageLatency,
                ],
            )?,
        },
        NvmlRead::EccMode => match dev.is_ecc_enabled() {
            Ok(m) => vec![
                (Field::EccModeCurrent, enabled(m.currently_enabled)),
                (Field::EccModePending, enabled(m.pending_enabled)),
            ],
            Err(e) => failed(info, f, e, &[Field::EccModeCurrent, Field::EccModePending])?,
        },
        NvmlRead::GomMode => match dev.gpu_operation_mode() {
            Ok(m) => vec![
                (Field::GomCurrent, text(gom(m.current))),
                (Field::GomPending, text(gom(m.pending))),
            ],
            Err(e) => failed(info, f, e, &[Field::GomCurrent, Field::GomPending])?,
        },
        NvmlRead::MigModes => match dev.mig_mode() {
            Ok(m) => {
                vec![
                    (Field::MigModeCurrent, enabled(m.current == 1)),
                    (Field::MigModePending, enabled(m.pending == 1)),
                ]
            }
            Err(e) => failed(info, f, e, &[Field::MigModeCurrent, Field::MigModePending])?,
        },
        _ => vec![(f, Value::Null)],
    };
    for (field, v) in set {
        row.set(field, v);
    }
    Ok(())
}

/// The PCI fields from one `nvmlDeviceGetPciInfo`, in hex as nvidia-smi prints them.
fn pci(dev: &Device, info: &GpuInfo, f: Field) -> Result<Vec<(Field, Value)>, Lost> {
    const FIELDS: [Field; 5] = [
        Field::PciDomain,
        Field::PciBus,
        Field::PciDevice,
        Field::PciDeviceId,
        Field::PciSubDeviceId,
    ];
    match dev.pci_info() {
        Ok(p) => Ok(vec![
            (Field::PciDomain, text(format!("0x{:04X}", p.domain))),
            (Field::PciBus, text(format!("0x{:02X}", p.bus))),
            (Field::PciDevice, text(format!("0x{:02X}", p.device))),
            (Field::PciDeviceId, text(format!("0x{:08X}", p.pci_device_id))),
            (
                Field::PciSubDeviceId,
                p.pci_sub_system_id.map_or(Value::Null, |s| text(format!("0x{s:08X}"))),
            ),
        ]),
        Err(e) => failed(info, f, e, &FIELDS),
    }
}

/// Every field of a shared reader whose call failed: the same empty value (or the GPU is lost).
fn failed(
    info: &GpuInfo,
    f: Field,
    e: NvmlError,
    fields: &[Field],
) -> Result<Vec<(Field, Value)>, Lost> {
    let v = val(info, f, Err::<(), _>(e), |()| Value::Null)?;
    Ok(fields.iter().map(|&x| (x, v.clone())).collect())
}

fn compute_mode(m: ComputeMode) -> &'static str {
    match m {
        ComputeMode::Default => "Default",
        ComputeMode::ExclusiveThread => "Exclusive_Thread",
        ComputeMode::Prohibited => "Prohibited",
        ComputeMode::ExclusiveProcess => "Exclusive_Process",
    }
}

fn gom(m: OperationMode) -> &'static str {
    match m {
        OperationMode::AllOn => "All On",
        OperationMode::Compute => "Compute",
        OperationMode::LowDP => "Low Double Precision",
    }
}

/// `Active` / `Not Active` for the clock event reason field `f` names.
fn reason(f: Field, r: ThrottleReasons) -> Value {
    let bit = match f {
        Field::ClocksEventReasonsGpuIdle => ThrottleReasons::GPU_IDLE,
        Field::ClocksEventReasonsApplicationsClocksSetting => {
            ThrottleReasons::APPLICATIONS_CLOCKS_SETTING
        }
        Field::ClocksEventReasonsSwPowerCap => ThrottleReasons::SW_POWER_CAP,
        Field::ClocksEventReasonsHwSlowdown => ThrottleReasons::HW_SLOWDOWN,
        Field::ClocksEventReasonsHwThermalSlowdown => ThrottleReasons::HW_THERMAL_SLOWDOWN,
        Field::ClocksEventReasonsHwPowerBrakeSlowdown => ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN,
        Field::ClocksEventReasonsSwThermalSlowdown => ThrottleReasons::SW_THERMAL_SLOWDOWN,
        Field::ClocksEventReasonsSyncBoost => ThrottleReasons::SYNC_BOOST,
        _ => return Value::Null,
    };
    text(if r.contains(bit) { "Active" } else { "Not Active" })
}

/// The error kind, counter and memory location `ecc.errors.KIND.COUNTER.LOCATION` names (`dram`
/// has no location in nvml-wrapper: None).
fn location(f: Field) -> Option<(MemoryError, EccCounter, MemoryLocation)> {
    let mut parts = f.def().name.split('.').skip(2);
    let kind = match parts.next()? {
        "corrected" => MemoryError::Corrected,
        _ => MemoryError::Uncorrected,
    };
    let counter = match parts.next()? {
        "volatile" => EccCounter::Volatile,
        _ => EccCounter::Aggregate,
    };
    let at = match parts.next()? {
        "device_memory" => MemoryLocation::Device,
        "register_file" => MemoryLocation::RegisterFile,
        "l1_cache" => MemoryLocation::L1Cache,
        "l2_cache" => MemoryLocation::L2Cache,
        "texture_memory" => MemoryLocation::Texture,
        "cbu" => MemoryLocation::Cbu,
        "sram" => MemoryLocation::SRAM,
        _ => return None,
    };
    Some((kind, counter, at))
}
