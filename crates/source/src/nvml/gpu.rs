//! GPU metrics through NVML (nvml-wrapper): one `Nvml` for the run, each query independent.
//!
//! [`GpuSource`] opens NVML, picks the GPUs and owns what reads them: the reading threads
//! (`readers.rs`; one GPU's reading for a tick is `sample.rs`) and the NVML event thread
//! (`events.rs`); it makes each tick's rows from their answers. A failing call costs one field of
//! one GPU for one tick (`device.rs`). A GPU that reports `GpuLost` gets null rows (warned once)
//! and is probed again on later ticks.

use std::ffi::OsStr;
use std::sync::Arc;
use std::time::Duration;

use nvml_wrapper::Nvml;
use nvml_wrapper::error::NvmlError;

use crate::host::job::PidSet;
pub(crate) use crate::nvml::device::GpuInfo;
use crate::nvml::device::{Lost, selects};
use crate::nvml::events::EventWatcher;
use crate::nvml::readers::GpuReads;
use crate::nvml::sample::{Ctx, identity_row, row_capacity};
use gpumon_schema::catalog::Field;
use gpumon_schema::{GpuEvent, GpuProc, Row, Selection, Value};
use gpumon_util::{warn, warn_once};

/// Why NVML could not be used at all.
#[derive(Debug, thiserror::Error)]
#[error("cannot use NVML from {lib}: {source}")]
pub struct NvmlUnavailable {
    /// The library asked for.
    pub lib: String,
    /// NVML's error.
    #[source]
    pub source: NvmlError,
}

use gpumon_schema::GpuSelector;

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

impl Drop for GpuSource {
    fn drop(&mut self) {
        self.reads.quit();
    }
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

    /// The driver's version, when NVML says.
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
                Some(Ok(crate::nvml::sample::Reading { row, procs: ps, instances })) => {
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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::*;
    use crate::nvml::readers::TickReads;
    use gpumon_schema::catalog::{CATALOG, NvmlRead, Source};

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
