//! GPM (GPU Performance Monitoring, Hopper and newer): the profiling counters DCGM exposes as
//! `DCGM_FI_PROF_*`, read straight from NVML with no daemon. Each sub-sample takes one GPM sample
//! per GPU and reports the metrics between it and the previous one, so the first sub-sample of a
//! run has no value. A GPU without GPM gets `[Not Supported]` (empty) GPM fields and no GPM calls.

use nvml_wrapper::Device;
use nvml_wrapper::Nvml;
use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::gpm::{GpmSample, gpm_metrics_get};

use crate::nvml::device::{GpuInfo, Lost};
use gpumon_schema::catalog::{Field, NvmlRead};
use gpumon_schema::{Row, Selection, Value};
use gpumon_util::warn_once;

/// The GPM metric behind each GPM field.
pub(super) const METRICS: [(Field, GpmMetricId); 11] = [
    (Field::SmActive, GpmMetricId::SmUtil),
    (Field::SmOccupancy, GpmMetricId::SmOccupancy),
    (Field::TensorActive, GpmMetricId::AnyTensorUtil),
    (Field::DramActive, GpmMetricId::DramBwUtil),
    (Field::Fp16Active, GpmMetricId::Fp16Util),
    (Field::Fp32Active, GpmMetricId::Fp32Util),
    (Field::Fp64Active, GpmMetricId::Fp64Util),
    (Field::PcieTxBytes, GpmMetricId::PcieTxPerSec),
    (Field::PcieRxBytes, GpmMetricId::PcieRxPerSec),
    (Field::NvlinkTxBytes, GpmMetricId::NvlinkTotalTxPerSec),
    (Field::NvlinkRxBytes, GpmMetricId::NvlinkTotalRxPerSec),
];

/// Whether NVML says the GPU supports GPM; the error when it cannot tell.
pub(super) fn supported(dev: &Device<'_>) -> Result<bool, NvmlError> {
    match dev.gpm_support() {
        Err(NvmlError::NotSupported | NvmlError::FailedToLoadSymbol(_)) => Ok(false),
        r => r,
    }
}

/// The GPM state of one GPU's worker: the selected metrics and the previous sample.
pub(super) struct Gpm<'n> {
    nvml: &'n Nvml,
    fields: Vec<Field>,
    ids: Vec<GpmMetricId>,
    /// Asked once, at the first read.
    supported: Option<bool>,
    prev: Option<GpmSample<'n>>,
    /// The MIG GPU instance sampled (`nvmlGpmMigSampleGet` on its GPU), or None: the whole GPU.
    gi: Option<u32>,
}

impl<'n> Gpm<'n> {
    /// GPM reading of the GPM fields in `sel` (none selected: no GPM call is ever made).
    pub(super) fn new(nvml: &'n Nvml, sel: &Selection) -> Gpm<'n> {
        let (fields, ids) =
            METRICS.iter().filter(|(f, _)| sel.fields().any(|s| s == *f)).copied().unzip();
        debug_assert!(METRICS.iter().all(|(f, _)| f.def().read == Some(NvmlRead::Gpm)));
        Gpm { nvml, fields, ids, supported: None, prev: None, gi: None }
    }

    /// GPM reading of one MIG GPU instance of a GPU (read with the GPU's handle).
    pub(super) fn for_instance(nvml: &'n Nvml, sel: &Selection, gi: u32) -> Gpm<'n> {
        Gpm { gi: Some(gi), ..Gpm::new(nvml, sel) }
    }

    fn set_all(&self, row: &mut Row, v: &Value) {
        for &f in &self.fields {
            row.set(f, v.clone());
        }
    }

    /// Take this sub-sample's GPM sample and set the selected fields from the metrics since the
    /// previous one (empty on the first, or after a failed sample with none before it).
    pub(super) fn read(
        &mut self,
        dev: &Device<'n>,
        info: &GpuInfo,
        row: &mut Row,
    ) -> Result<(), Lost> {
        if self.fields.is_empty() {
            return Ok(());
        }
        if !self.is_supported(dev, info)? {
            self.set_all(row, &Value::Unsupported);
            return Ok(());
        }
        let sample = match self.gi {
            Some(gi) => dev.gpm_mig_sample(gi),
            None => dev.gpm_sample(),
        };
        let cur = match sample {
            Ok(s) => s,
            Err(NvmlError::GpuLost) => return Err(Lost),
            Err(e) => {
                // The previous sample stays: the next value then spans both intervals.
                warn_once(
                    &format!("gpm-sample-{}-{e:?}", info.index),
                    &format!(
                        "GPU {}: taking a GPM sample failed: {e}; GPM fields are empty for now",
                        info.index
                    ),
                );
                self.set_all(row, &Value::Null);
                return Ok(());
            }
        };
        let got = self.prev.as_ref().map(|prev| gpm_metrics_get(self.nvml, prev, &cur, &self.ids));
        self.prev = Some(cur);
        match got {
            None => self.set_all(row, &Value::Null),
            Some(Ok(results)) => {
                for (&f, r) in self.fields.iter().zip(results) {
                    row.set(f, metric_value(info, f, r));
                }
            }
            Some(Err(NvmlError::GpuLost)) => return Err(Lost),
            Some(Err(e)) => {
                warn_once(
                    &format!("gpm-metrics-{}-{e:?}", info.index),
                    &format!(
                        "GPU {}: reading GPM metrics failed: {e}; GPM fields are empty for now",
                        info.index
                    ),
                );
                self.set_all(row, &Value::Null);
            }
        }
        Ok(())
    }

    fn is_supported(&mut self, dev: &Device<'n>, info: &GpuInfo) -> Result<bool, Lost> {
        if let Some(s) = self.supported {
            return Ok(s);
        }
        let s = match supported(dev) {
            Ok(s) => s,
            Err(NvmlError::GpuLost) => return Err(Lost),
            Err(e) => {
                warn_once(
                    &format!("gpm-support-{}", info.index),
                    &format!(
                        "GPU {}: cannot tell whether it has GPM ({e}); GPM fields stay empty",
                        info.index
                    ),
                );
                false
            }
        };
        self.supported = Some(s);
        Ok(s)
    }
}

/// One metric's value: a per-metric error costs that field only.
fn metric_value(
    info: &GpuInfo,
    f: Field,
    r: Result<nvml_wrapper::struct_wrappers::gpm::GpmMetricResult, NvmlError>,
) -> Value {
    match r {
        Ok(m) if m.value.is_finite() => Value::F(m.value),
        Ok(_) => Value::Null,
        Err(NvmlError::NotSupported) => Value::Unsupported,
        Err(e) => {
            warn_once(
                &format!("gpm-{}-{f}-{e:?}", info.index),
                &format!(
                    "GPU {}: GPM metric for {f} failed: {e}; recording it as empty",
                    info.index
                ),
            );
            Value::Null
        }
    }
}
