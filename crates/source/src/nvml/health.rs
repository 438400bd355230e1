//! Memory health of one GPU, read once a minute and repeated on the rows between: row remapping
//! (A100 and newer; nvml-wrapper has no safe call, so the raw symbol is used) and retired pages
//! (older GPUs). Names follow nvidia-smi (`remapped_rows.*`, `retired_pages.*`).

use std::time::{Duration, Instant};

use nvml_wrapper::Device;
use nvml_wrapper::enum_wrappers::device::RetirementCause;
use nvml_wrapper::error::{NvmlError, nvml_try};

use crate::nvml::device::{GpuInfo, Lost, to_value};
use gpumon_schema::catalog::{Field, NvmlRead};
use gpumon_schema::{Row, Value};

/// How often the health counters are read.
pub(super) const EVERY: Duration = Duration::from_secs(60);

const REMAPPED: [Field; 4] = [
    Field::RemappedCorrectable,
    Field::RemappedUncorrectable,
    Field::RemappedPending,
    Field::RemappedFailure,
];
const RETIRED: [Field; 3] = [Field::RetiredSbe, Field::RetiredDbe, Field::RetiredPending];

/// The last reading of one reader and when it was taken.
#[derive(Default)]
struct Cached {
    at: Option<Instant>,
    values: Vec<(Field, Value)>,
}

impl Cached {
    fn due(&self, now: Instant) -> bool {
        self.at.is_none_or(|t| now.duration_since(t) >= EVERY)
    }

    fn copy_to(&self, row: &mut Row) {
        for (f, v) in &self.values {
            row.set(*f, v.clone());
        }
    }
}

/// Health readings of one GPU's worker.
#[derive(Default)]
pub(super) struct Health {
    remapped: Cached,
    retired: Cached,
}

impl Health {
    /// Set the fields of `read` (remapped rows or retired pages), reading NVML when a minute has
    /// passed since the last reading.
    pub(super) fn read(
        &mut self,
        dev: &Device<'_>,
        info: &GpuInfo,
        read: NvmlRead,
        row: &mut Row,
    ) -> Result<(), Lost> {
        let now = Instant::now();
        let cached = match read {
            NvmlRead::RemappedRows => &mut self.remapped,
            _ => &mut self.retired,
        };
        if cached.due(now) {
            cached.values = match read {
                NvmlRead::RemappedRows => remapped_rows(dev, info)?,
                _ => retired_pages(dev, info)?,
            };
            cached.at = Some(now);
        }
        cached.copy_to(row);
        Ok(())
    }
}

/// `nvmlDeviceGetRemappedRows` through the raw symbol: (correctable, uncorrectable, pending, failure).
fn raw_remapped_rows(dev: &Device<'_>) -> Result<[u32; 4], NvmlError> {
    let sym =
        dev.nvml().lib().nvmlDeviceGetRemappedRows.as_ref().map_err(|_| NvmlError::NotSupported)?;
    let (mut corr, mut unc, mut pending, mut failure) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: the handle belongs to this device of the loaded library, and the four out-pointers
    // are valid for the call.
    let code = unsafe { sym(dev.handle(), &mut corr, &mut unc, &mut pending, &mut failure) };
    nvml_try(code)?;
    Ok([corr, unc, pending, failure])
}

fn remapped_rows(dev: &Device<'_>, info: &GpuInfo) -> Result<Vec<(Field, Value)>, Lost> {
    let field = Field::RemappedCorrectable;
    match raw_remapped_rows(dev) {
        Ok(v) => Ok(REMAPPED.iter().zip(v).map(|(f, x)| (*f, Value::U(u64::from(x)))).collect()),
        Err(e) => {
            let v = to_value(info, field, Err::<(), _>(e), |_| Value::Null)?;
            Ok(REMAPPED.iter().map(|f| (*f, v.clone())).collect())
        }
    }
}

fn retired_pages(dev: &Device<'_>, info: &GpuInfo) -> Result<Vec<(Field, Value)>, Lost> {
    let count = |pages: Vec<_>| Value::U(pages.len() as u64);
    let sbe = to_value(
        info,
        Field::RetiredSbe,
        dev.retired_pages(RetirementCause::MultipleSingleBitEccErrors),
        count,
    )?;
    let dbe = to_value(
        info,
        Field::RetiredDbe,
        dev.retired_pages(RetirementCause::DoubleBitEccError),
        count,
    )?;
    let pending = to_value(info, Field::RetiredPending, dev.are_pages_pending_retired(), |p| {
        Value::U(u64::from(p))
    })?;
    Ok(RETIRED.into_iter().zip([sbe, dbe, pending]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_cover_their_catalogue_fields() {
        for (fields, read) in
            [(&REMAPPED[..], NvmlRead::RemappedRows), (&RETIRED[..], NvmlRead::RetiredPages)]
        {
            let want: Vec<Field> = Field::all().filter(|f| f.def().read == Some(read)).collect();
            assert_eq!(fields, &want[..]);
        }
    }
}
