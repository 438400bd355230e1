//! MIG (Multi-Instance GPU): a GPU's MIG mode and the MIG devices it is split into, read through
//! NVML, and one row per MIG device per tick beside its GPU's row.
//!
//! nvml-wrapper 0.13 enumerates MIG devices (`mig_device_count`, `mig_device_by_index`) but has no
//! getter for their GPU and compute instance ids: those are read through the raw symbols. The
//! profile (`3g.40gb`) is taken from the MIG device's name (`NVIDIA H100 80GB HBM3 MIG 3g.40gb`),
//! as nvidia-smi and nvitop show it.

use std::collections::HashMap;
use std::sync::Arc;

use nvml_wrapper::error::{NvmlError, nvml_try};
use nvml_wrapper::{Device, Nvml};

use crate::nvml::device::{GpuInfo, Lost, ProcList};
use crate::nvml::gpm::Gpm;
use gpumon_schema::catalog::{Field, MIG_MEASURED};
use gpumon_schema::{Row, Selection, Value};
use gpumon_util::warn;

/// One MIG device of a GPU, as NVML lists it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MigInstance {
    /// Its index among the GPU's MIG devices (`nvmlDeviceGetMigDeviceHandleByIndex`).
    pub slot: u32,
    /// GPU instance id; None when NVML does not say.
    pub gi: Option<u32>,
    /// Compute instance id; None when NVML does not say.
    pub ci: Option<u32>,
    /// Profile name (`3g.40gb`); empty when the name does not hold one.
    pub profile: Arc<str>,
    /// The MIG device's UUID.
    pub uuid: Arc<str>,
}

impl MigInstance {
    /// `0/gi1 3g.40gb`: the GPU's index, the GPU instance and the profile, for messages.
    pub(crate) fn label(&self, index: u32) -> String {
        let gi = self.gi.map_or_else(|| format!("mig{}", self.slot), |g| format!("gi{g}"));
        if self.profile.is_empty() {
            format!("{index}/{gi}")
        } else {
            format!("{index}/{gi} {}", self.profile)
        }
    }
}

/// MIG mode of a GPU: (current, pending); None when NVML cannot say (no MIG on this GPU).
pub(crate) fn mode(dev: &Device<'_>) -> Option<(bool, bool)> {
    dev.mig_mode().ok().map(|m| (m.current != 0, m.pending != 0))
}

/// The profile in a MIG device's name: the word after ` MIG ` (`3g.40gb`).
pub(crate) fn profile_of(name: &str) -> &str {
    name.rsplit_once(" MIG ").map_or("", |(_, p)| p.split_whitespace().next().unwrap_or(""))
}

/// The MIG devices of a GPU now, with their handles; empty when it is not in MIG mode.
pub(crate) fn instances<'n>(dev: &Device<'n>) -> Result<Vec<(MigInstance, Device<'n>)>, NvmlError> {
    let max = match dev.mig_device_count() {
        Ok(n) => n,
        Err(NvmlError::NotSupported) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for slot in 0..max {
        let mig = match dev.mig_device_by_index(slot) {
            Ok(m) => m,
            Err(NvmlError::NotFound | NvmlError::InvalidArg) => continue,
            Err(e) => return Err(e),
        };
        let name = mig.name().unwrap_or_default();
        let inst = MigInstance {
            slot,
            gi: instance_id(&mig, false).ok(),
            ci: instance_id(&mig, true).ok(),
            profile: Arc::from(profile_of(&name)),
            uuid: Arc::from(mig.uuid()?),
        };
        out.push((inst, mig));
    }
    Ok(out)
}

/// The GPU instance id (or, with `compute`, the compute instance id) of a MIG device handle.
fn instance_id(mig: &Device<'_>, compute: bool) -> Result<u32, NvmlError> {
    let lib = mig.nvml().lib();
    let sym =
        if compute { &lib.nvmlDeviceGetComputeInstanceId } else { &lib.nvmlDeviceGetGpuInstanceId };
    let sym = sym.as_ref().map_err(|_| NvmlError::NotSupported)?;
    let mut id = 0u32;
    // SAFETY: the handle belongs to a device of the loaded library and the out-pointer is valid.
    nvml_try(unsafe { sym(mig.handle(), &mut id) })?;
    Ok(id)
}

/// What a reading thread keeps of one GPU's MIG layout between ticks.
#[derive(Default)]
pub(super) struct MigState<'n> {
    /// The UUIDs of the layout last read (a change is warned about once).
    layout: Option<Vec<Arc<str>>>,
    /// GPM of each GPU instance (`nvmlGpmMigSampleGet`), by GPU instance id: the only activity
    /// NVML gives per instance.
    gpm: HashMap<u32, Gpm<'n>>,
}

impl<'n> MigState<'n> {
    /// One row per MIG device of `dev` now: `base`'s identity plus the instance's identity and the
    /// measured fields of `sel` NVML answers on a MIG device (memory).
    pub(super) fn rows(
        &mut self,
        (nvml, dev): (&'n Nvml, &Device<'n>),
        info: &GpuInfo,
        base: &Row,
        (sel, procs): (&Selection, bool),
    ) -> Result<Vec<(Row, ProcList)>, Lost> {
        let list = match instances(dev) {
            Ok(l) => l,
            Err(NvmlError::GpuLost) => return Err(Lost),
            Err(e) => {
                gpumon_util::warn_once(
                    &format!("nvml-mig-{}", info.index),
                    &format!(
                        "GPU {}: cannot list its MIG instances ({e}); its instance rows are missing",
                        info.index
                    ),
                );
                return Ok(Vec::new());
            }
        };
        self.note_layout(info, &list);
        let memory = MIG_MEASURED.iter().any(|f| sel.fields().any(|s| s == *f));
        // Instances that left the layout lose their GPM samples.
        self.gpm.retain(|gi, _| list.iter().any(|(i, _)| i.gi == Some(*gi)));
        let mut rows = Vec::with_capacity(list.len());
        for (inst, mig) in &list {
            let mut row = identity_of(base);
            set_identity(&mut row, inst);
            if memory {
                super::device::memory(mig, info, &mut row)?;
            }
            if let Some(gi) = inst.gi {
                let gpm = self.gpm.entry(gi).or_insert_with(|| Gpm::for_instance(nvml, sel, gi));
                gpm.read(dev, info, &mut row)?;
            }
            let ps = if procs { processes(mig, info)? } else { Vec::new() };
            rows.push((row, ps));
        }
        Ok(rows)
    }

    /// Warn once when the layout differs from the one read before (instances made or destroyed).
    fn note_layout(&mut self, info: &GpuInfo, list: &[(MigInstance, Device<'_>)]) {
        let now: Vec<Arc<str>> = list.iter().map(|(i, _)| i.uuid.clone()).collect();
        if let Some(before) = &self.layout
            && *before != now
        {
            let names: Vec<String> = list.iter().map(|(i, _)| i.label(info.index)).collect();
            let names = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            warn(&format!(
                "GPU {}: its MIG layout changed ({} instances now: {names})",
                info.index,
                now.len()
            ));
        }
        self.layout = Some(now);
    }
}

/// The compute processes of one MIG device (`--processes`).
fn processes(mig: &Device<'_>, info: &GpuInfo) -> Result<ProcList, Lost> {
    match mig.running_compute_processes() {
        Ok(ps) => Ok(ps.iter().map(super::device::gpu_proc).collect()),
        Err(NvmlError::GpuLost) => Err(Lost),
        Err(e) => {
            gpumon_util::warn_once(
                &format!("nvml-mig-procs-{}", info.index),
                &format!(
                    "GPU {}: cannot list the processes of its MIG instances ({e})",
                    info.index
                ),
            );
            Ok(Vec::new())
        }
    }
}

/// A new row with the GPU identity columns of `base`.
fn identity_of(base: &Row) -> Row {
    let mut row = Row::with_capacity(12);
    for f in [Field::Index, Field::Uuid, Field::Name, Field::PciBusId, Field::DriverVersion] {
        let v = base.get(f);
        if !v.is_missing() {
            row.set(f, v.clone());
        }
    }
    row
}

/// The instance's identity columns.
fn set_identity(row: &mut Row, inst: &MigInstance) {
    let opt = |v: Option<u32>| v.map_or(Value::Null, |x| Value::U(u64::from(x)));
    row.set(Field::MigGi, opt(inst.gi));
    row.set(Field::MigCi, opt(inst.ci));
    row.set(
        Field::MigProfile,
        if inst.profile.is_empty() { Value::Null } else { Value::S(inst.profile.clone()) },
    );
    row.set(Field::MigUuid, Value::S(inst.uuid.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_is_the_word_after_mig() {
        assert_eq!(profile_of("NVIDIA H100 80GB HBM3 MIG 3g.40gb"), "3g.40gb");
        assert_eq!(profile_of("NVIDIA A100-SXM4-40GB MIG 1g.5gb+me"), "1g.5gb+me");
        assert_eq!(profile_of("NVIDIA H100 80GB HBM3"), "");
    }
}
