//! What this machine offers a recorder, probed once (for `gpumon doctor`): NVML and each GPU
//! with one reading of every GPU field through the calls `record` makes (and whether it has GPM,
//! whose fields need two samples), signs of a container, and the `/dev/nvidia*` nodes with this
//! user's access to them.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use nvml_wrapper::Nvml;
use nvml_wrapper::error::NvmlError;
use serde::Serialize;

use crate::nvml::device::GpuInfo;
use crate::nvml::mig::MigInstance;
use crate::nvml::{gpu, sample};
use gpumon_schema::catalog::{CATALOG, Field, NvmlRead};
use gpumon_schema::{Selection, Value};

/// NVML as loaded from a library, with the versions it reports.
pub(crate) struct NvmlProbe {
    nvml: Nvml,
    /// The file actually mapped.
    pub loaded_from: Option<String>,
    /// The NVIDIA driver's version.
    pub driver_version: Option<String>,
    /// `major.minor`.
    pub cuda_driver_version: Option<String>,
    /// NVML's own version.
    pub nvml_version: Option<String>,
}

impl NvmlProbe {
    /// Load NVML from `lib` the way `record` does; the error says why it cannot start.
    pub(crate) fn load(lib: &str) -> Result<NvmlProbe, NvmlError> {
        // Functions the driver lacks are listed in the report, not warned about per field.
        super::missing::quiet();
        let nvml = Nvml::builder().lib_path(OsStr::new(lib)).init()?;
        Ok(NvmlProbe {
            loaded_from: loaded_from(lib),
            driver_version: nvml.sys_driver_version().ok(),
            nvml_version: nvml.sys_nvml_version().ok(),
            cuda_driver_version: nvml.sys_cuda_driver_version().ok().map(|v| {
                format!(
                    "{}.{}",
                    nvml_wrapper::cuda_driver_version_major(v),
                    nvml_wrapper::cuda_driver_version_minor(v)
                )
            }),
            nvml,
        })
    }

    /// How many GPUs NVML sees.
    pub(crate) fn gpu_count(&self) -> Result<u32, NvmlError> {
        self.nvml.device_count()
    }

    /// Identity, static properties and one reading of every GPU field of GPU `index`; the
    /// error when its identity cannot be read.
    pub(crate) fn gpu(&self, index: u32) -> Result<GpuProbe, NvmlError> {
        let info = gpu::read_info(&self.nvml, index)?;
        let dev = self.nvml.device_by_index(index).ok();
        // Identity is read once at start; job.gpu_memory needs a job to attribute processes to.
        let fields: Vec<Field> = CATALOG
            .iter()
            .filter(|d| d.read.is_some_and(NvmlRead::is_query))
            .map(|d| d.field)
            .collect();
        let warnings = gpumon_util::warnings_printed();
        let row = sample::probe(&self.nvml, &info, &Selection::new(fields.clone()));
        let warned = gpumon_util::warnings_printed() > warnings;
        let lacking_all: Vec<Field> =
            super::missing::all().into_iter().flat_map(|(_, f)| f).collect();
        let (mut supported, mut unsupported, mut failed) = (Vec::new(), Vec::new(), Vec::new());
        let mut lacking = Vec::new();
        let health = row.as_ref().map_or_else(Vec::new, |r| {
            MEMORY_HEALTH
                .iter()
                .filter_map(|&f| if let Value::U(v) = r.get(f) { Some((f, *v)) } else { None })
                .collect()
        });
        if let Some(row) = &row {
            for f in fields {
                match row.get(f) {
                    Value::Unsupported => unsupported.push(f),
                    Value::Null if lacking_all.contains(&f) => lacking.push(f),
                    Value::Null => failed.push(f),
                    _ => supported.push(f),
                }
            }
        }
        Ok(GpuProbe {
            gpm: dev.as_ref().and_then(|d| super::gpm::supported(d).ok()),
            architecture: dev.as_ref().and_then(|d| d.architecture().ok()).and_then(|a| {
                (a != nvml_wrapper::enums::device::DeviceArchitecture::Unknown)
                    .then(|| a.to_string())
            }),
            memory_total_mib: dev
                .as_ref()
                .and_then(|d| d.memory_info().ok())
                .map(|m| m.total / (1024 * 1024)),
            persistence_mode: dev.as_ref().and_then(|d| d.is_in_persistent_mode().ok()),
            mig_mode: dev.as_ref().and_then(super::mig::mode).map(|m| m.0),
            mig_pending: dev.as_ref().and_then(super::mig::mode).map(|m| m.1),
            mig_instances: dev.as_ref().map(mig_instances).unwrap_or_default(),
            lost: row.is_none(),
            health,
            info,
            supported,
            unsupported,
            failed,
            lacking,
            warned,
        })
    }
}

/// The MIG devices of a GPU with their memory totals (MiB); empty when it has none.
fn mig_instances(dev: &nvml_wrapper::Device<'_>) -> Vec<(MigInstance, Option<u64>)> {
    super::mig::instances(dev)
        .unwrap_or_default()
        .into_iter()
        .map(|(i, m)| (i, m.memory_info().ok().map(|x| x.total / (1024 * 1024))))
        .collect()
}

/// One GPU as probed.
pub(crate) struct GpuProbe {
    /// Its identity.
    pub info: GpuInfo,
    /// Its total memory, MiB.
    pub memory_total_mib: Option<u64>,
    /// Whether persistence mode is on.
    pub persistence_mode: Option<bool>,
    /// Whether MIG mode is on.
    pub mig_mode: Option<bool>,
    /// The MIG mode after the next GPU reset.
    pub mig_pending: Option<bool>,
    /// The MIG devices it is split into now, with each one's memory total (MiB).
    pub mig_instances: Vec<(MigInstance, Option<u64>)>,
    /// The GPU answered GPU_IS_LOST.
    pub lost: bool,
    /// Whether NVML says the GPU has GPM (the `sm.active` family); None when it cannot tell.
    pub gpm: Option<bool>,
    /// The fields NVML reads for it.
    pub supported: Vec<Field>,
    /// NVML says NOT_SUPPORTED: these columns stay empty for this GPU.
    pub unsupported: Vec<Field>,
    /// Another error (a warning on stderr says which, when `warned`).
    pub failed: Vec<Field>,
    /// Read by a function this driver lacks (listed once, by [`super::missing`]).
    pub lacking: Vec<Field>,
    /// Probing it printed a warning.
    pub warned: bool,
    /// NVML's name for its architecture (`Hopper`), when NVML tells.
    pub architecture: Option<String>,
    /// The memory-health readings NVML gave ([`MEMORY_HEALTH`]).
    pub health: Vec<(Field, u64)>,
}

/// The fields that say whether a GPU's memory is healthy: uncorrected ECC errors, row remapping,
/// page retirement.
pub(crate) const MEMORY_HEALTH: [Field; 6] = [
    Field::EccUncorrected,
    Field::RemappedUncorrectable,
    Field::RemappedPending,
    Field::RemappedFailure,
    Field::RetiredDbe,
    Field::RetiredPending,
];

/// The file NVML was loaded from: `lib` itself when it is a path, else the mapping the dynamic
/// loader chose (from /proc/self/maps).
fn loaded_from(lib: &str) -> Option<String> {
    if lib.contains('/') {
        return fs::canonicalize(lib).ok().map(|p| p.display().to_string());
    }
    let maps = fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            name.starts_with(lib) || name.contains("nvidia-ml") || name.contains("nvidia_ml")
        })
        .map(str::to_string)
}

/// Signs that gpumon runs in a container.
#[derive(Debug, Serialize, Default)]
pub struct Container {
    /// docker, podman, kubernetes, ... ; None when nothing suggests a container.
    pub kind: Option<String>,
    /// What suggests it (files, environment variables).
    pub evidence: Vec<String>,
}

/// Signs of a container: marker files, the `container` variable, Kubernetes, cgroup path hints.
pub(crate) fn container() -> Container {
    let mut r = Container::default();
    let mut found = |kind: &str, evidence: String| {
        if r.kind.is_none() {
            r.kind = Some(kind.to_string());
        }
        r.evidence.push(evidence);
    };
    if Path::new("/.dockerenv").exists() {
        found("docker", "/.dockerenv exists".into());
    }
    if Path::new("/run/.containerenv").exists() {
        found("podman", "/run/.containerenv exists".into());
    }
    if let Ok(c) = std::env::var("container") {
        found(&c, format!("container={c} in the environment"));
    }
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
        found("kubernetes", "KUBERNETES_SERVICE_HOST is set".into());
    }
    let cg = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for (hint, kind) in [
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("libpod", "podman"),
        ("containerd", "containerd"),
        ("crio", "cri-o"),
        ("lxc", "lxc"),
    ] {
        if let Some(line) =
            cg.lines().find(|l| l.rsplit(':').next().is_some_and(|p| p.contains(hint)))
        {
            found(kind, format!("cgroup path {}", line.rsplit(':').next().unwrap_or_default()));
            break;
        }
    }
    r
}

/// A `/dev/nvidia*` character device.
#[derive(Debug, Serialize)]
pub struct DeviceNode {
    /// The device's path.
    pub path: String,
    /// Readable and writable by this user.
    pub access: bool,
}

/// The `/dev/nvidia*` character devices and whether this user may open them read-write.
pub(crate) fn device_nodes(dev: &Path) -> Vec<DeviceNode> {
    let ids = Ids::of_self();
    let Ok(rd) = fs::read_dir(dev) else { return Vec::new() };
    let mut nodes: Vec<DeviceNode> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("nvidia"))
        .filter_map(|e| {
            let meta = fs::metadata(e.path()).ok()?;
            meta.file_type().is_char_device().then(|| DeviceNode {
                path: e.path().display().to_string(),
                access: ids.may_read_write(meta.mode(), meta.uid(), meta.gid()),
            })
        })
        .collect();
    nodes.sort_by(|a, b| a.path.cmp(&b.path));
    nodes
}

/// Effective user, group and supplementary groups, from /proc/self/status.
struct Ids {
    uid: u32,
    gids: Vec<u32>,
}

impl Ids {
    fn of_self() -> Ids {
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let nums = |key: &str| -> Vec<u32> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|rest| rest.split_whitespace().filter_map(|n| n.parse().ok()).collect())
                .unwrap_or_default()
        };
        let uid = nums("Uid:").get(1).copied().unwrap_or(u32::MAX);
        let mut gids = nums("Groups:");
        gids.extend(nums("Gid:").get(1).copied());
        Ids { uid, gids }
    }

    fn may_read_write(&self, mode: u32, uid: u32, gid: u32) -> bool {
        let rw = |shift: u32| (mode >> shift) & 0o6 == 0o6;
        self.uid == 0 || (uid == self.uid && rw(6)) || (self.gids.contains(&gid) && rw(3)) || rw(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_bits() {
        let ids = Ids { uid: 1000, gids: vec![44] };
        assert!(ids.may_read_write(0o666, 0, 0));
        assert!(ids.may_read_write(0o660, 0, 44), "video group");
        assert!(!ids.may_read_write(0o660, 0, 0));
        assert!(ids.may_read_write(0o600, 1000, 0));
        assert!(!ids.may_read_write(0o644, 0, 0), "read-only is not enough");
        assert!(Ids { uid: 0, gids: vec![] }.may_read_write(0o600, 1, 1), "root");
    }
}
