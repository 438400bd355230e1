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

use super::device::{GpuInfo, Lost, to_value};
use gpumon_schema::catalog::{Field, NvmlRead};
use gpumon_schema::{Row, Value};

fn text(s: impl Into<Arc<str>>) -> Value {
    Value::S(s.into())
}

fn enabled(on: bool) -> Value {
    text(if on { "Enabled" } else { "Disabled" })
}

fn watts(mw: u32) -> Value {
    Value::F(f64::from(mw) / 1000.0)
}

fn uint(v: u32) -> Value {
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
        NvmlRead::Serial => to_value(info, f, dev.serial(), text)?,
        NvmlRead::Vbios => to_value(info, f, dev.vbios_version(), text)?,
        NvmlRead::InforomImg => to_value(info, f, dev.info_rom_image_version(), text)?,
        NvmlRead::PcieGenCurrent => to_value(info, f, dev.current_pcie_link_gen(), uint)?,
        NvmlRead::PcieGenMax => to_value(info, f, dev.max_pcie_link_gen(), uint)?,
        NvmlRead::PcieWidthCurrent => to_value(info, f, dev.current_pcie_link_width(), uint)?,
        NvmlRead::PcieWidthMax => to_value(info, f, dev.max_pcie_link_width(), uint)?,
        NvmlRead::DisplayMode => to_value(info, f, dev.is_display_connected(), enabled)?,
        NvmlRead::DisplayActive => to_value(info, f, dev.is_display_active(), enabled)?,
        NvmlRead::AccountingMode => to_value(info, f, dev.is_accounting_enabled(), enabled)?,
        // nvidia-smi still prints power.management from this call, which NVML marks deprecated.
        #[allow(deprecated)]
        NvmlRead::PowerManagement => {
            to_value(info, f, dev.is_power_management_algo_active(), enabled)?
        }
        NvmlRead::PowerDefaultLimit => {
            to_value(info, f, dev.power_management_limit_default(), watts)?
        }
        NvmlRead::ComputeMode => to_value(info, f, dev.compute_mode(), |m| text(compute_mode(m)))?,
        NvmlRead::ComputeCap => to_value(info, f, dev.cuda_compute_capability(), |c| {
            text(format!("{}.{}", c.major, c.minor))
        })?,
        NvmlRead::AppClockGr => to_value(info, f, dev.applications_clock(Clock::Graphics), uint)?,
        NvmlRead::AppClockMem => to_value(info, f, dev.applications_clock(Clock::Memory), uint)?,
        NvmlRead::DefaultAppClockGr => {
            to_value(info, f, dev.default_applications_clock(Clock::Graphics), uint)?
        }
        NvmlRead::DefaultAppClockMem => {
            to_value(info, f, dev.default_applications_clock(Clock::Memory), uint)?
        }
        NvmlRead::EventReason => {
            to_value(info, f, dev.current_throttle_reasons(), |r| reason(f, r))?
        }
        NvmlRead::EventReasonsSupported => {
            to_value(info, f, dev.supported_throttle_reasons(), |r| {
                text(format!("0x{:016X}", r.bits()))
            })?
        }
        NvmlRead::EccLocation => match location(f) {
            Some((kind, counter, at)) => {
                to_value(info, f, dev.memory_error_counter(kind, counter, at), Value::U)?
            }
            None => Value::Null,
        },
        NvmlRead::EccAggregate => {
            let kind = if f == Field::EccErrorsCorrectedAggregateTotal {
                MemoryError::Corrected
            } else {
                MemoryError::Uncorrected
            };
            to_value(info, f, dev.total_ecc_errors(kind, EccCounter::Aggregate), Value::U)?
        }
        _ => return shared(dev, info, read, f, row),
    };
    row.set(f, v);
    Ok(())
}

/// The readers whose one call yields several fields: every field of it is set (the same empty
/// value on all of them when the call fails).
fn shared(
    dev: &Device,
    info: &GpuInfo,
    read: NvmlRead,
    f: Field,
    row: &mut Row,
) -> Result<(), Lost> {
    use Field::*;
    let hex = |digits: usize, v: u32| text(format!("0x{v:0digits$X}"));
    let (fields, values): (&[Field], Result<Vec<Value>, NvmlError>) = match read {
        NvmlRead::PciInfo => (
            &[PciDomain, PciBus, PciDevice, PciDeviceId, PciSubDeviceId],
            dev.pci_info().map(|p| {
                vec![
                    hex(4, p.domain),
                    hex(2, p.bus),
                    hex(2, p.device),
                    hex(8, p.pci_device_id),
                    p.pci_sub_system_id.map_or(Value::Null, |s| hex(8, s)),
                ]
            }),
        ),
        NvmlRead::PowerConstraints => (
            &[PowerMinLimit, PowerMaxLimit],
            dev.power_management_limit_constraints()
                .map(|c| vec![watts(c.min_limit), watts(c.max_limit)]),
        ),
        NvmlRead::EncoderStats => (
            &[EncoderStatsSessionCount, EncoderStatsAverageFps, EncoderStatsAverageLatency],
            dev.encoder_stats()
                .map(|s| vec![uint(s.session_count), uint(s.average_fps), uint(s.average_latency)]),
        ),
        NvmlRead::EccMode => (
            &[EccModeCurrent, EccModePending],
            dev.is_ecc_enabled()
                .map(|m| vec![enabled(m.currently_enabled), enabled(m.pending_enabled)]),
        ),
        NvmlRead::GomMode => (
            &[GomCurrent, GomPending],
            dev.gpu_operation_mode()
                .map(|m| vec![text(operation_mode(m.current)), text(operation_mode(m.pending))]),
        ),
        NvmlRead::MigModes => (
            &[MigModeCurrent, MigModePending],
            dev.mig_mode().map(|m| vec![enabled(m.current == 1), enabled(m.pending == 1)]),
        ),
        _ => {
            row.set(f, Value::Null);
            return Ok(());
        }
    };
    let values = match values {
        Ok(v) => v,
        Err(e) => vec![to_value(info, f, Err::<(), _>(e), |()| Value::Null)?; fields.len()],
    };
    for (&field, v) in fields.iter().zip(values) {
        row.set(field, v);
    }
    Ok(())
}

fn compute_mode(m: ComputeMode) -> &'static str {
    match m {
        ComputeMode::Default => "Default",
        ComputeMode::ExclusiveThread => "Exclusive_Thread",
        ComputeMode::Prohibited => "Prohibited",
        ComputeMode::ExclusiveProcess => "Exclusive_Process",
    }
}

fn operation_mode(m: OperationMode) -> &'static str {
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
