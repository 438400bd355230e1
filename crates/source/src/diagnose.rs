//! What `gpumon doctor` concludes from the probes: the state of NVML, each GPU, the visible-device
//! variables and the container, with each problem's usual fix and the notes worth reading. The
//! probing lives in `probe.rs`; [`text`] renders a [`Diagnosis`] as the text report (its JSON is
//! its serde form).

pub(crate) mod text;

use std::path::Path;

use nvml_wrapper::error::NvmlError;
use serde::Serialize;

use crate::host::cgroup::{CgroupSource, CgroupVersion};
use crate::nvml::device::{self, GpuInfo};
use crate::nvml::probe::{self, GpuProbe, NvmlProbe};
pub(crate) use crate::nvml::probe::{Container, DeviceNode};
use crate::visible::{self, CUDA_VAR, NVIDIA_VAR, Visible};
use gpumon_schema::GpuSelector;
use gpumon_schema::catalog::Field;

/// What `gpumon doctor` found: its verdict, and each part it examined (its `--json` document).
#[derive(Debug, Serialize)]
pub struct Diagnosis {
    /// Whether `record` can sample at least one GPU.
    pub ok: bool,
    /// The one-line verdict.
    pub verdict: String,
    /// The NVML library and driver.
    pub nvml: NvmlState,
    /// Every GPU NVML lists.
    pub gpus: Vec<GpuState>,
    /// The visible-devices variables and the GPUs they select.
    pub visible: VisibleState,
    /// The container gpumon runs in, if any.
    pub container: Container,
    /// The cgroup's limits, when gpumon can read them.
    pub cgroup: Option<CgroupState>,
    /// The `/dev/nvidia*` devices.
    pub device_nodes: Vec<DeviceNode>,
    /// What stops or limits recording, each with its fix.
    pub problems: Vec<Problem>,
    /// Remarks that need no fix.
    pub notes: Vec<String>,
}

/// The NVML library: where it loaded from, or why not, and the versions it reports.
#[derive(Debug, Serialize, Default)]
pub struct NvmlState {
    /// The library asked for (`--nvml-lib`).
    pub library: String,
    /// The file actually mapped, when it loaded.
    pub loaded_from: Option<String>,
    /// Why it could not be loaded or initialised.
    pub error: Option<String>,
    /// The NVIDIA driver's version.
    pub driver_version: Option<String>,
    /// The CUDA version the driver supports (`major.minor`).
    pub cuda_driver_version: Option<String>,
    /// NVML's own version.
    pub nvml_version: Option<String>,
    /// NVML functions this driver lacks (older than nvml-wrapper), each with the GPU fields it
    /// reads: those stay empty on every GPU.
    pub missing_functions: Vec<MissingFunction>,
}

/// A function the loaded NVML lacks.
#[derive(Debug, Serialize)]
pub struct MissingFunction {
    /// The NVML function's name.
    pub function: String,
    /// The GPU fields it reads.
    pub fields: Vec<&'static str>,
}

/// One GPU as NVML lists it, and which fields it can record.
#[derive(Debug, Serialize)]
pub struct GpuState {
    /// Its NVML index.
    pub index: u32,
    /// Its product name.
    pub name: String,
    /// Its UUID.
    pub uuid: String,
    /// Its PCI bus id.
    pub pci_bus_id: String,
    /// Its total memory, MiB.
    pub memory_total_mib: Option<u64>,
    /// Whether persistence mode is on.
    pub persistence_mode: Option<bool>,
    /// Whether MIG mode is on.
    pub mig_mode: Option<bool>,
    /// The MIG mode after the next GPU reset, when NVML says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mig_mode_pending: Option<bool>,
    /// The MIG devices the GPU is split into (record writes a row per instance).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mig_instances: Vec<MigState>,
    /// The GPU answered GPU_IS_LOST.
    pub lost: bool,
    /// GPM (Hopper and newer) supported: the `sm.active` family is recorded; null when unknown.
    pub gpm: Option<bool>,
    /// NVML's name for the architecture (`Hopper`, `Ampere`), null when NVML does not say.
    pub architecture: Option<String>,
    /// The fields NVML reads for it.
    pub supported: Vec<&'static str>,
    /// NVML says NOT_SUPPORTED: these columns stay empty for this GPU.
    pub unsupported: Vec<&'static str>,
    /// Another error (a warning on stderr says which, when `warned`).
    pub failed: Vec<&'static str>,
    /// Read by a function this driver lacks (`nvml.missing_functions`).
    pub not_in_driver: Vec<&'static str>,
    /// Probing it printed a warning on stderr.
    #[serde(skip)]
    pub warned: bool,
    /// In the set `record` samples without `--gpus`.
    pub recorded: bool,
    /// Memory-health readings (`remapped_rows.*`, `retired_pages.*`, uncorrected ECC), by field name.
    pub memory_health: std::collections::BTreeMap<&'static str, u64>,
}

/// One MIG device of a GPU.
#[derive(Debug, Serialize)]
pub struct MigState {
    /// Its index among the GPU's MIG devices.
    pub index: u32,
    /// Its GPU instance id, when NVML says.
    pub gpu_instance_id: Option<u32>,
    /// Its compute instance id, when NVML says.
    pub compute_instance_id: Option<u32>,
    /// Its profile name (`3g.40gb`).
    pub profile: String,
    /// Its UUID.
    pub uuid: String,
    /// Its total memory, MiB.
    pub memory_total_mib: Option<u64>,
}

/// One visible-devices variable.
#[derive(Debug, Serialize)]
pub struct VarState {
    /// The variable's name.
    pub name: &'static str,
    /// Its value, when set.
    pub value: Option<String>,
    /// What the value means to its consumer (CUDA, the container runtime).
    pub selects: String,
    /// NVML indices of the GPUs it names.
    pub gpus: Vec<u32>,
}

/// The visible-devices variables and the GPUs `record` samples without `--gpus`.
#[derive(Debug, Serialize)]
pub struct VisibleState {
    /// `CUDA_VISIBLE_DEVICES` and `NVIDIA_VISIBLE_DEVICES`.
    pub variables: Vec<VarState>,
    /// The variable that restricts `record` without `--gpus`, if any.
    pub decided_by: Option<&'static str>,
    /// NVML indices `record` samples without `--gpus`.
    pub record_gpus: Vec<u32>,
}

/// The cgroup gpumon runs in.
#[derive(Debug, Serialize)]
pub struct CgroupState {
    /// cgroup version, 1 or 2.
    pub version: u8,
    /// Its path.
    pub path: String,
    /// Its memory limit, MiB; None when unlimited.
    pub memory_limit_mib: Option<u64>,
    /// Its CPU limit, cores; None when unlimited.
    pub cpu_limit_cores: Option<f64>,
    /// The limits in words.
    pub description: String,
}

/// Something that stops or limits recording.
#[derive(Debug, Serialize)]
pub struct Problem {
    /// What is wrong.
    pub problem: String,
    /// How to fix it.
    pub fix: String,
}

fn problem(p: impl Into<String>, fix: impl Into<String>) -> Problem {
    Problem { problem: p.into(), fix: fix.into() }
}

/// Gather everything; `cuda`, `nvidia` and `order` are the environment variables' values.
pub fn examine(
    lib: &str,
    cuda: Option<String>,
    nvidia: Option<String>,
    order: Option<String>,
) -> Diagnosis {
    let (cuda, nvidia, order) = (cuda.as_deref(), nvidia.as_deref(), order.as_deref());
    let container = probe::container();
    let in_container = container.kind.is_some();
    let cgroup = CgroupSource::detect().map(|c| cgroup_state(&c));
    let device_nodes = probe::device_nodes(Path::new("/dev"));
    let mut problems = Vec::new();
    let (nvml, found) = examine_nvml(lib, in_container, &device_nodes, &mut problems);
    let infos: Vec<GpuInfo> = found.iter().map(|g| g.info.clone()).collect();
    let visible = examine_visible(cuda, nvidia, &infos);
    let gpus: Vec<GpuState> = found.iter().map(|g| gpu_state(g, &visible.record_gpus)).collect();
    problems.extend(gpus.iter().filter_map(health_problem));
    if !gpus.is_empty() && visible.record_gpus.is_empty() {
        let var = visible.decided_by.unwrap_or(CUDA_VAR);
        let value = if var == CUDA_VAR { cuda } else { nvidia }.unwrap_or_default();
        problems.push(problem(
            format!("{var}={value:?} hides every GPU from the job"),
            format!(
                "unset {var}, or set it to indices 0..{} or UUIDs listed above",
                gpus.len().saturating_sub(1)
            ),
        ));
    }
    let mut notes = visible_notes(cuda, nvidia, order, &infos);
    notes.extend(cuda_stop_note(&visible));
    notes.extend(gpus.iter().flat_map(gpu_notes));
    notes.extend(failed_notes(&gpus));
    if nvml.error.is_some() && !device_nodes.is_empty() && device_nodes.iter().all(|d| !d.access) {
        problems.push(problem(
            "no permission on the /dev/nvidia* device nodes",
            "run as a user in the group that owns them (often `video`), or fix their permissions \
             (`ls -l /dev/nvidia*`)",
        ));
    }
    let ok = problems.is_empty();
    let verdict = if ok {
        format!(
            "OK: {} usable; record without --gpus samples {}",
            plural(gpus.len(), "GPU"),
            list_gpus(&visible.record_gpus, gpus.len())
        )
    } else {
        format!("NOT OK: {}", problems.first().map_or("", |p| p.problem.as_str()))
    };
    Diagnosis { ok, verdict, nvml, gpus, visible, container, cgroup, device_nodes, problems, notes }
}

/// NVML and the GPUs it lists; each problem met on the way goes to `problems`.
fn examine_nvml(
    lib: &str,
    in_container: bool,
    nodes: &[DeviceNode],
    problems: &mut Vec<Problem>,
) -> (NvmlState, Vec<GpuProbe>) {
    let mut report = NvmlState { library: lib.to_string(), ..NvmlState::default() };
    let nvml = match NvmlProbe::load(lib) {
        Ok(n) => n,
        Err(e) => {
            report.error = Some(e.to_string());
            problems.push(init_problem(&e, lib, in_container, nodes));
            return (report, Vec::new());
        }
    };
    report.loaded_from = nvml.loaded_from.clone();
    report.driver_version = nvml.driver_version.clone();
    report.cuda_driver_version = nvml.cuda_driver_version.clone();
    report.nvml_version = nvml.nvml_version.clone();
    let gpus = examine_gpus(&nvml, in_container, problems);
    report.missing_functions = crate::nvml::missing::all()
        .into_iter()
        .map(|(function, fields)| MissingFunction {
            function,
            fields: fields.iter().map(|f| f.name()).collect(),
        })
        .collect();
    (report, gpus)
}

/// Every GPU NVML lists, probed; each problem met on the way goes to `problems`.
fn examine_gpus(
    nvml: &NvmlProbe,
    in_container: bool,
    problems: &mut Vec<Problem>,
) -> Vec<GpuProbe> {
    let mut gpus = Vec::new();
    match nvml.gpu_count() {
        Err(e) => problems.push(gpu_problem("NVML cannot count the GPUs", &e, in_container)),
        Ok(0) => problems.push(problem(
            "NVML loaded but reports no GPU",
            if in_container {
                "the container was given no GPU: start it with `docker run --gpus all` (NVIDIA Container \
                 Toolkit on the host), or on Kubernetes request nvidia.com/gpu"
            } else {
                "check `nvidia-smi -L`; GPUs bound to vfio-pci (passthrough) or disabled are not listed"
            },
        )),
        Ok(n) => {
            for index in 0..n {
                match nvml.gpu(index) {
                    Ok(g) => {
                        if g.lost {
                            problems.push(problem(
                                format!("GPU {index} ({}) is lost: it fell off the bus or hangs", g.info.uuid),
                                "check `dmesg` for Xid errors (79: fallen off the bus); reset it with \
                                 `nvidia-smi -r -i INDEX` or reboot",
                            ));
                        }
                        gpus.push(g);
                    }
                    Err(e) => problems.push(gpu_problem(&format!("GPU {index}"), &e, in_container)),
                }
            }
        }
    }
    gpus
}

/// One probed GPU as reported; `recorded` when it is among `record_gpus`.
fn gpu_state(g: &GpuProbe, record_gpus: &[u32]) -> GpuState {
    let names = |fields: &[Field]| fields.iter().map(|f| f.name()).collect();
    GpuState {
        index: g.info.index,
        name: g.info.name.to_string(),
        uuid: g.info.uuid.to_string(),
        pci_bus_id: g.info.bus_id.to_string(),
        memory_total_mib: g.memory_total_mib,
        persistence_mode: g.persistence_mode,
        mig_mode: g.mig_mode,
        mig_mode_pending: g.mig_pending,
        mig_instances: g
            .mig_instances
            .iter()
            .map(|(i, mem)| MigState {
                index: i.slot,
                gpu_instance_id: i.gi,
                compute_instance_id: i.ci,
                profile: i.profile.to_string(),
                uuid: i.uuid.to_string(),
                memory_total_mib: *mem,
            })
            .collect(),
        lost: g.lost,
        gpm: g.gpm,
        supported: names(&g.supported),
        unsupported: names(&g.unsupported),
        failed: names(&g.failed),
        not_in_driver: names(&g.lacking),
        warned: g.warned,
        architecture: g.architecture.clone(),
        recorded: record_gpus.contains(&g.info.index),
        memory_health: g.health.iter().map(|(f, v)| (f.name(), *v)).collect(),
    }
}

/// A GPU whose memory needs a reset or service: a failed or pending row remap, a pending page
/// retirement. Uncorrected ECC errors alone are a note ([`gpu_notes`]).
fn health_problem(g: &GpuState) -> Option<Problem> {
    let at = |f: Field| g.memory_health.get(f.name()).copied().unwrap_or(0);
    let who = format!("GPU {} ({})", g.index, g.uuid);
    if at(Field::RemappedFailure) > 0 {
        return Some(problem(
            format!("{who}: a row remap failed (remapped_rows.failure = 1): its memory is damaged"),
            "drain the node, reset the GPU (nvidia-smi -r) and have it serviced (RMA) if it recurs",
        ));
    }
    let pending: Vec<&str> = [Field::RemappedPending, Field::RetiredPending]
        .into_iter()
        .filter(|&f| at(f) > 0)
        .map(|f| f.name())
        .collect();
    (!pending.is_empty()).then(|| {
        problem(
            format!(
                "{who}: memory repair pending ({} = 1) until the GPU is reset",
                pending.join(", ")
            ),
            format!("drain the node and reset the GPU (nvidia-smi -r -i {}) or reboot", g.index),
        )
    })
}

fn cgroup_state(c: &CgroupSource) -> CgroupState {
    let l = c.limits();
    CgroupState {
        version: match c.version() {
            CgroupVersion::V1 => 1,
            CgroupVersion::V2 => 2,
        },
        path: c.path().to_string(),
        memory_limit_mib: l.memory_mib,
        cpu_limit_cores: l.cpu_cores,
        description: c.describe(),
    }
}

/// What each visible-devices variable means, and what record samples by default.
fn examine_visible(cuda: Option<&str>, nvidia: Option<&str>, infos: &[GpuInfo]) -> VisibleState {
    let mut variables = Vec::new();
    for (name, value) in [(CUDA_VAR, cuda), (NVIDIA_VAR, nvidia)] {
        let Some(v) = value else {
            variables.push(VarState {
                name,
                value: None,
                selects: "not set".into(),
                gpus: Vec::new(),
            });
            continue;
        };
        let (selects, picked) =
            if name == CUDA_VAR { cuda_meaning(v, infos) } else { runtime_meaning(v, infos) };
        variables.push(VarState { name, value: Some(v.to_string()), selects, gpus: picked });
    }
    let (restriction, decided_by) = visible::from_vars(cuda, nvidia);
    let record_gpus: Vec<u32> = match &restriction {
        Visible::All => infos.iter().map(|g| g.index).collect(),
        Visible::None => Vec::new(),
        Visible::Only(sel) => infos
            .iter()
            .filter(|g| sel.iter().any(|s| device::selects(s, g)))
            .map(|g| g.index)
            .collect(),
    };
    VisibleState { variables, decided_by, record_gpus }
}

/// CUDA_VISIBLE_DEVICES decides, and CUDA stops at an entry naming no GPU here where record
/// goes on: the two see different GPUs.
fn cuda_stop_note(v: &VisibleState) -> Option<String> {
    let cuda_var = v.variables.first()?;
    (v.decided_by == Some(CUDA_VAR) && !cuda_var.gpus.is_empty() && cuda_var.gpus != v.record_gpus).then(|| {
        format!(
            "{CUDA_VAR} names a GPU that is not here; CUDA stops there and sees {}, record samples {}",
            list_gpus(&cuda_var.gpus, usize::MAX),
            list_gpus(&v.record_gpus, usize::MAX)
        )
    })
}

/// Notes on one GPU: MIG mode, fields that failed to read.
fn gpu_notes(r: &GpuState) -> Vec<String> {
    let mut notes = Vec::new();
    if r.mig_mode == Some(true) {
        notes.push(format!(
            "GPU {}: MIG is on; record writes a row per MIG instance ({} now: mig.gi, mig.ci, mig.profile, mig.uuid, its memory) beside the GPU's row, whose utilization.gpu NVML leaves empty in MIG mode",
            r.index,
            r.mig_instances.len()
        ));
    }
    if let Some(&n) = r.memory_health.get(Field::EccUncorrected.name()).filter(|&&n| n > 0) {
        notes.push(format!(
            "GPU {}: {n} uncorrected ECC errors since the driver loaded; `gpumon summarize` says if they rise",
            r.index
        ));
    }
    notes
}

/// One note per distinct set of fields that failed to read, naming the GPUs it applies to; the
/// warnings on stderr are pointed to only when some were printed.
fn failed_notes(gpus: &[GpuState]) -> Vec<String> {
    let mut groups: Vec<(&[&str], Vec<u32>, bool)> = Vec::new();
    for g in gpus.iter().filter(|g| !g.failed.is_empty()) {
        match groups.iter_mut().find(|(f, ..)| *f == g.failed.as_slice()) {
            Some((_, idx, warned)) => {
                idx.push(g.index);
                *warned |= g.warned;
            }
            None => groups.push((&g.failed, vec![g.index], g.warned)),
        }
    }
    groups
        .into_iter()
        .map(|(failed, idx, warned)| {
            let why = if warned { "the warnings above say why" } else { "NVML gave no value" };
            let what = if failed.len() <= 2 {
                failed.join(", ")
            } else {
                format!("{} fields", failed.len())
            };
            format!(
                "{}: reading {what} failed ({why}); record leaves these columns empty",
                gpu_ranges(&idx)
            )
        })
        .collect()
}

/// `GPU 3`, `GPUs 0-7`, `GPUs 0, 1`, `GPUs 0, 2-5`.
pub fn gpu_ranges(idx: &[u32]) -> String {
    format!("{} {}", if idx.len() == 1 { "GPU" } else { "GPUs" }, ranges(idx))
}

/// Indices with runs of three or more as ranges: `0-7`, `0, 1`, `0, 2-5`.
fn ranges(idx: &[u32]) -> String {
    let idx: Vec<u64> = idx.iter().map(|&i| u64::from(i)).collect();
    gpumon_util::index_ranges(&idx, 3)
}

/// What CUDA makes of `CUDA_VISIBLE_DEVICES`: it stops at the first entry that names no GPU.
fn cuda_meaning(v: &str, gpus: &[GpuInfo]) -> (String, Vec<u32>) {
    match visible::parse_cuda(v) {
        Visible::All => ("all GPUs".into(), gpus.iter().map(|g| g.index).collect()),
        Visible::None => ("no GPU (CUDA sees none)".into(), Vec::new()),
        Visible::Only(sel) => {
            let mut picked = Vec::new();
            for s in &sel {
                let Some(g) = gpus.iter().find(|g| device::selects(s, g)) else { break };
                picked.push(g.index);
            }
            let text = if picked.is_empty() {
                format!("{}: matches no GPU here, so CUDA sees none", Visible::Only(sel).describe())
            } else {
                let cuda = if picked.len() == 1 {
                    "device 0".into()
                } else {
                    format!("devices 0-{}", picked.len() - 1)
                };
                format!("{} (CUDA's {cuda})", list_gpus(&picked, usize::MAX))
            };
            (text, picked)
        }
    }
}

/// What the container runtime makes of `NVIDIA_VISIBLE_DEVICES`.
fn runtime_meaning(v: &str, gpus: &[GpuInfo]) -> (String, Vec<u32>) {
    match visible::parse(v) {
        Visible::All => ("all GPUs mounted".into(), gpus.iter().map(|g| g.index).collect()),
        Visible::None => (
            format!(
                "no GPU mounted ({})",
                if v.trim().eq_ignore_ascii_case("none") {
                    "driver only"
                } else {
                    "no NVIDIA runtime"
                }
            ),
            Vec::new(),
        ),
        Visible::Only(sel) => {
            let picked: Vec<u32> = gpus
                .iter()
                .filter(|g| sel.iter().any(|s| device::selects(s, g)))
                .map(|g| g.index)
                .collect();
            (format!("{} mounted", Visible::Only(sel).describe()), picked)
        }
    }
}

fn visible_notes(
    cuda: Option<&str>,
    nvidia: Option<&str>,
    order: Option<&str>,
    gpus: &[GpuInfo],
) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(v) = cuda {
        let uses_index = matches!(visible::parse_cuda(v), Visible::Only(s) if s.iter().any(|s| matches!(s, GpuSelector::Index(_))));
        let mixed = gpus.iter().any(|g| g.name != gpus[0].name);
        if uses_index && mixed && order.is_none_or(|o| o != "PCI_BUS_ID") {
            notes.push(format!(
                "{CUDA_VAR} uses indices and the GPUs differ: CUDA numbers fastest first, NVML by PCI bus; \
                 set CUDA_DEVICE_ORDER=PCI_BUS_ID or use UUIDs"
            ));
        }
        let entries: Vec<&str> = v.split(',').map(str::trim).filter(|e| !e.is_empty()).collect();
        let first_bad = entries.iter().position(|e| visible::parse_cuda(e) == Visible::None);
        if let Some(bad) = first_bad.filter(|i| *i > 0).and_then(|i| entries.get(i)) {
            notes.push(format!("{CUDA_VAR}: CUDA ignores {bad:?} and every entry after it"));
        }
    }
    if let Some(v) = nvidia
        && matches!(visible::parse(v), Visible::Only(s) if s.iter().any(|s| matches!(s, GpuSelector::Index(_))))
    {
        notes.push(format!(
            "{NVIDIA_VAR} uses the host's indices; inside the container NVML numbers the mounted GPUs from 0, \
             so record does not filter by them"
        ));
    }
    notes
}

/// The problem and usual fix for NVML failing to start.
pub(crate) fn init_problem(
    e: &NvmlError,
    lib: &str,
    in_container: bool,
    nodes: &[DeviceNode],
) -> Problem {
    let container_fix = "start the container with `docker run --gpus all` (needs the NVIDIA Container Toolkit \
                         on the host; `nvidia-smi` on the host should list the GPUs), or on Kubernetes request \
                         nvidia.com/gpu";
    match e {
        NvmlError::LibloadingError(_) | NvmlError::LibraryNotFound => problem(
            format!("cannot load the NVML library {lib}: {e}"),
            if in_container {
                container_fix.to_string()
            } else {
                "install the NVIDIA driver (then `nvidia-smi` lists the GPUs), or point --nvml-lib / \
                 GPUMON_NVML_LIB at its libnvidia-ml.so.1"
                    .to_string()
            },
        ),
        NvmlError::DriverNotLoaded => problem(
            "NVML loaded, but the NVIDIA kernel driver is not running",
            if in_container {
                container_fix.to_string()
            } else if nodes.is_empty() {
                "there are no /dev/nvidia* nodes: check `nvidia-smi` and `lsmod | grep nvidia`; after installing \
                 a driver or a new kernel, reboot (or `modprobe nvidia`)"
                    .to_string()
            } else {
                "check `nvidia-smi` and `lsmod | grep nvidia`; after installing a driver or a new kernel, \
                 reboot (or `modprobe nvidia`)"
                    .to_string()
            },
        ),
        NvmlError::NoPermission => problem(
            "NVML: no permission to use the GPUs",
            "run as a user in the group that owns /dev/nvidia* (often `video`), or fix their permissions \
             (`ls -l /dev/nvidia*`)",
        ),
        NvmlError::FailedToLoadSymbol(_) => problem(
            format!("{lib} is not a usable NVML library: {e}"),
            "point --nvml-lib at the driver's libnvidia-ml.so.1; reinstall the driver if it is damaged",
        ),
        _ => problem(
            format!("NVML failed to start: {e}"),
            "run `nvidia-smi`; check `dmesg` for NVRM or Xid messages (a driver/library version mismatch \
             after an upgrade needs a reboot)",
        ),
    }
}

/// A per-GPU or device-count NVML error and its usual fix.
fn gpu_problem(what: &str, e: &NvmlError, in_container: bool) -> Problem {
    match e {
        NvmlError::NoPermission => problem(
            format!("{what}: no permission"),
            "run as a user in the group that owns /dev/nvidia* (often `video`), or fix their permissions",
        ),
        NvmlError::GpuLost => problem(
            format!("{what} is lost: it fell off the bus or hangs"),
            "check `dmesg` for Xid errors; reset it with `nvidia-smi -r -i INDEX` or reboot",
        ),
        _ if in_container => problem(
            format!("{what}: {e}"),
            "check that the container was started with the GPU (`docker run --gpus ...`)",
        ),
        _ => problem(
            format!("{what}: {e}"),
            "run `nvidia-smi`; check `dmesg` for NVRM or Xid messages",
        ),
    }
}

/// `1 GPU`, `2 GPUs`: a count and its noun.
pub(crate) fn plural(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

/// `GPU 1`, `GPUs 0, 1`, `all 4 GPUs (0-3)`, `no GPU`.
pub(crate) fn list_gpus(idx: &[u32], total: usize) -> String {
    match idx {
        [] => "no GPU".into(),
        [one] => format!("GPU {one}"),
        _ if idx.len() == total => format!("all {total} GPUs ({})", ranges(idx)),
        _ => format!("GPUs {}", ranges(idx)),
    }
}

/// `on`, `off`, or `n/a` for None.
pub(crate) fn on_off(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "on",
        Some(false) => "off",
        None => "n/a",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_lists() {
        assert_eq!(list_gpus(&[], 2), "no GPU");
        assert_eq!(list_gpus(&[1], 2), "GPU 1");
        assert_eq!(list_gpus(&[0, 1], 2), "all 2 GPUs (0, 1)");
        assert_eq!(list_gpus(&[0, 2], 4), "GPUs 0, 2");
        assert_eq!(gpu_ranges(&[3]), "GPU 3");
        assert_eq!(gpu_ranges(&[0, 1, 2, 3, 4, 5, 6, 7]), "GPUs 0-7");
        assert_eq!(gpu_ranges(&[0, 2, 3, 4, 6]), "GPUs 0, 2-4, 6");
        assert_eq!(gpu_ranges(&[0, 1]), "GPUs 0, 1");
        assert_eq!(list_gpus(&[0, 1, 2, 3], 4), "all 4 GPUs (0-3)");
    }

    #[test]
    fn missing_library_reason_and_fix() {
        let e = NvmlError::LibraryNotFound;
        let p = init_problem(&e, "libnvidia-ml.so.1", false, &[]);
        assert!(p.problem.contains("cannot load"), "{}", p.problem);
        assert!(p.fix.contains("install the NVIDIA driver"), "{}", p.fix);
        let p = init_problem(&e, "libnvidia-ml.so.1", true, &[]);
        assert!(p.fix.contains("--gpus all"), "{}", p.fix);
        let p = init_problem(&NvmlError::NoPermission, "x", false, &[]);
        assert!(p.fix.contains("video"), "{}", p.fix);
    }
}
