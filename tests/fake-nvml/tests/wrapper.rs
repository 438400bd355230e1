//! Loads the built fake `libnvidia_ml.so` through the real `nvml-wrapper` and
//! checks that scripted scenario values come back as expected.
//!
//! The fake keeps global state and reads a process-wide env var, so everything
//! runs inside one `#[test]` function, section by section.
//!
//! Builds the cdylib with `cargo build -p fake-nvml` if it is missing or stale.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::{CStr, OsStr, c_uint};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, PcieUtilCounter, PerformanceState, RetirementCause,
    TemperatureSensor,
};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::gpm::gpm_metrics_get;
use nvml_wrapper_sys::bindings::{
    NvmlLib, nvmlDevice_t, nvmlEventData_t, nvmlEventSet_t, nvmlGpmMetricsGet_t, nvmlGpmSample_t,
    nvmlGpmSupport_t, nvmlMemory_v2_t, nvmlProcessInfo_t, nvmlProcessUtilizationSample_t,
    nvmlReturn_t,
};

const MIB: u64 = 1024 * 1024;

/// `target/<profile>/libnvidia_ml.so`, next to this test's `deps/` folder.
///
/// `cargo test` does not build a cdylib-only package's library, so when the
/// `.so` is missing or older than `src/lib.rs` this runs
/// `cargo build -p fake-nvml` (same profile) first.
fn lib_path() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir =
        exe.parent().and_then(Path::parent).expect("test binary lives in target/<profile>/deps");
    let so = profile_dir.join("libnvidia_ml.so");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = |so: &Path| matches!((mtime(&src), mtime(so)), (Some(s), Some(o)) if o >= s);
    if !fresh(&so) {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = std::process::Command::new(cargo);
        cmd.args(["build", "-p", "fake-nvml"]);
        if profile_dir.file_name() == Some(OsStr::new("release")) {
            cmd.arg("--release");
        }
        let status = cmd
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("spawn cargo build -p fake-nvml");
        assert!(status.success(), "cargo build -p fake-nvml failed");
    }
    assert!(
        fresh(&so),
        "{} is missing or older than src/lib.rs: run `cargo build -p fake-nvml`",
        so.display()
    );
    so
}

fn set_env(key: &str, value: impl AsRef<OsStr>) {
    // SAFETY: this test binary has a single #[test] and sets env vars only
    // from it, before the fake (which reads them) is called.
    unsafe { std::env::set_var(key, value) };
}

fn init(lib: &Path) -> Result<Nvml, NvmlError> {
    Nvml::builder().lib_path(lib.as_os_str()).init()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const MAIN: &str = "\
# global section
init = ok
driver_version = 550.54.15
cuda_version = 12040
nvml_version = 12.550.54.15

[device]                     # GPU 0: fully scripted
name = NVIDIA H100 80GB HBM3
uuid = GPU-11111111-2222-3333-4444-555555555555
pci.bus_id = 00000000:17:00.0
memory.total = 81559
memory.used = 100, 200, 300
utilization.gpu = 0, 50, 100
utilization.memory = 10
temperature.gpu = 35, 36
power.draw = 70.5, 300
power.limit = 700
energy.total = 1000, 1001.5
clocks.sm = 1410
clocks.mem = 1593
pstate = 0
clocks_event_reasons.active = 0x1, 0x0, 0x4
utilization.encoder = 3
utilization.decoder = 4
pcie.tx = 1000
pcie.rx = 2000
ecc.errors.uncorrected.volatile.total = 0
persistence_mode = 1
mig_mode = 0
processes = 1234:1024, 5678:2048

[device]                     # GPU 1: sparse, defaults, errors, lost
memory.total = 24576
memory.used = 1000
memory.free = 20000
utilization.gpu = 5
temperature.gpu = 40, TIMEOUT, 41
power.draw = 100
fan.speed = 30
num_fans = 1
pstate = 8
lost_after = 3
processes_file = @PROCS@
";

fn check_init_failures(lib: &Path, dir: &Path) {
    // SAFETY: see set_env.
    unsafe { std::env::remove_var("FAKE_NVML_SCENARIO") };
    assert!(matches!(init(lib), Err(NvmlError::DriverNotLoaded)));

    set_env("FAKE_NVML_SCENARIO", dir.join("does-not-exist"));
    assert!(matches!(init(lib), Err(NvmlError::DriverNotLoaded)));

    let bad = write(dir, "bad.scenario", "[device]\nmemory.totl = 1\n");
    set_env("FAKE_NVML_SCENARIO", &bad);
    assert!(matches!(init(lib), Err(NvmlError::DriverNotLoaded)));

    let s = write(dir, "dnl.scenario", "init = DRIVER_NOT_LOADED\n[device]\n");
    set_env("FAKE_NVML_SCENARIO", &s);
    assert!(matches!(init(lib), Err(NvmlError::DriverNotLoaded)));

    let s = write(dir, "perm.scenario", "init = NO_PERMISSION\n");
    set_env("FAKE_NVML_SCENARIO", &s);
    assert!(matches!(init(lib), Err(NvmlError::NoPermission)));
}

fn check_main(lib: &Path, dir: &Path) {
    let procs_file = dir.join("procs.txt");
    let log = dir.join("calls.log");
    let _ = std::fs::remove_file(&procs_file);
    let _ = std::fs::remove_file(&log);
    let s = write(dir, "main.scenario", &MAIN.replace("@PROCS@", procs_file.to_str().unwrap()));
    set_env("FAKE_NVML_SCENARIO", &s);
    set_env("FAKE_NVML_LOG", &log);

    let nvml = init(lib).expect("init");
    assert_eq!(nvml.device_count().unwrap(), 2);
    assert_eq!(nvml.sys_driver_version().unwrap(), "550.54.15");
    assert_eq!(nvml.sys_nvml_version().unwrap(), "12.550.54.15");
    assert_eq!(nvml.sys_cuda_driver_version().unwrap(), 12040);
    assert!(matches!(nvml.device_by_index(2), Err(NvmlError::InvalidArg)));

    let d0 = nvml.device_by_index(0).unwrap();
    let d1 = nvml.device_by_index(1).unwrap();

    // identity
    assert_eq!(d0.name().unwrap(), "NVIDIA H100 80GB HBM3");
    assert_eq!(d0.uuid().unwrap(), "GPU-11111111-2222-3333-4444-555555555555");
    let pci = d0.pci_info().unwrap();
    assert_eq!(pci.bus_id, "00000000:17:00.0");
    assert_eq!((pci.domain, pci.bus, pci.device), (0, 0x17, 0));
    assert_eq!(d0.index().unwrap(), 0);
    assert_eq!(d1.name().unwrap(), "Fake GPU 1");
    assert_eq!(d1.uuid().unwrap(), "GPU-00000000-0000-0000-0000-000000000001");
    assert_eq!(d1.pci_info().unwrap().bus_id, "00000000:02:00.0");
    let by_uuid = nvml.device_by_uuid("GPU-00000000-0000-0000-0000-000000000001").unwrap();
    assert_eq!(by_uuid.index().unwrap(), 1);
    assert!(matches!(nvml.device_by_uuid("GPU-nope"), Err(NvmlError::NotFound)));

    // memory: one cursor for used/free/total
    for used in [100, 200, 300, 300] {
        let m = d0.memory_info().unwrap();
        assert_eq!(m.total, 81559 * MIB);
        assert_eq!(m.used, used * MIB);
        assert_eq!(m.free, (81559 - used) * MIB);
        assert_eq!(m.reserved, 0);
    }
    let m = d1.memory_info().unwrap();
    assert_eq!((m.total, m.used, m.free), (24576 * MIB, 1000 * MIB, 20000 * MIB));

    // utilization advances per call, last value repeats
    let seq: Vec<(u32, u32)> = (0..4)
        .map(|_| {
            let u = d0.utilization_rates().unwrap();
            (u.gpu, u.memory)
        })
        .collect();
    assert_eq!(seq, vec![(0, 10), (50, 10), (100, 10), (100, 10)]);

    // temperature, with an error token on GPU 1
    let t = |d: &nvml_wrapper::Device| d.temperature(TemperatureSensor::Gpu);
    assert_eq!(t(&d0).unwrap(), 35);
    assert_eq!(t(&d0).unwrap(), 36);
    assert_eq!(t(&d0).unwrap(), 36);
    assert_eq!(t(&d1).unwrap(), 40);
    assert!(matches!(t(&d1), Err(NvmlError::Timeout)));
    assert_eq!(t(&d1).unwrap(), 41);

    // power in mW, energy in mJ
    assert_eq!(d0.power_usage().unwrap(), 70_500);
    assert_eq!(d0.power_usage().unwrap(), 300_000);
    assert_eq!(d0.enforced_power_limit().unwrap(), 700_000);
    assert_eq!(d0.power_management_limit().unwrap(), 700_000);
    assert!(matches!(d1.enforced_power_limit(), Err(NvmlError::NotSupported)));
    assert_eq!(d0.total_energy_consumption().unwrap(), 1_000_000);
    assert_eq!(d0.total_energy_consumption().unwrap(), 1_001_500);
    assert_eq!(d0.total_energy_consumption().unwrap(), 1_001_500);
    // GPU 1 has no energy.total: accumulates power.draw (100 W) * 1 s per tick
    let e1: Vec<u64> = (0..3).map(|_| d1.total_energy_consumption().unwrap()).collect();
    assert_eq!(e1, vec![0, 100_000, 200_000]);

    // clocks; graphics defaults to SM
    assert_eq!(d0.clock_info(Clock::SM).unwrap(), 1410);
    assert_eq!(d0.clock_info(Clock::Graphics).unwrap(), 1410);
    assert_eq!(d0.clock_info(Clock::Memory).unwrap(), 1593);
    assert!(matches!(d0.clock_info(Clock::Video), Err(NvmlError::NotSupported)));

    // fans: NOT_SUPPORTED on one GPU, a value on the other
    assert!(matches!(d0.fan_speed(0), Err(NvmlError::NotSupported)));
    assert!(matches!(d0.num_fans(), Err(NvmlError::NotSupported)));
    assert_eq!(d1.fan_speed(0).unwrap(), 30);
    assert_eq!(d1.num_fans().unwrap(), 1);
    assert!(matches!(d1.fan_speed(1), Err(NvmlError::InvalidArg)));

    // performance state, clock event reasons
    assert_eq!(d0.performance_state().unwrap(), PerformanceState::Zero);
    assert_eq!(d1.performance_state().unwrap(), PerformanceState::Eight);
    let reasons: Vec<u64> = (0..4).map(|_| d0.current_throttle_reasons().unwrap().bits()).collect();
    assert_eq!(reasons, vec![0x1, 0x0, 0x4, 0x4]);
    assert!(matches!(d1.current_throttle_reasons(), Err(NvmlError::NotSupported)));

    // codecs, PCIe, ECC, modes
    let enc = d0.encoder_utilization().unwrap();
    assert_eq!(enc.utilization, 3);
    assert!(enc.sampling_period > 0);
    assert_eq!(d0.decoder_utilization().unwrap().utilization, 4);
    assert_eq!(d0.pcie_throughput(PcieUtilCounter::Send).unwrap(), 1000);
    assert_eq!(d0.pcie_throughput(PcieUtilCounter::Receive).unwrap(), 2000);
    assert_eq!(d0.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile).unwrap(), 0);
    assert!(matches!(
        d0.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile),
        Err(NvmlError::NotSupported)
    ));
    assert!(d0.is_in_persistent_mode().unwrap());
    let mig = d0.mig_mode().unwrap();
    assert_eq!((mig.current, mig.pending), (0, 0));
    assert!(matches!(d1.mig_mode(), Err(NvmlError::NotSupported)));

    // processes
    let procs = d0.running_compute_processes().unwrap();
    let got: Vec<(u32, UsedGpuMemory)> =
        procs.iter().map(|p| (p.pid, p.used_gpu_memory.clone())).collect();
    assert_eq!(
        got,
        vec![(1234, UsedGpuMemory::Used(1024 * MIB)), (5678, UsedGpuMemory::Used(2048 * MIB)),]
    );
    assert_eq!(procs[0].gpu_instance_id, None);
    assert!(d0.running_graphics_processes().unwrap().is_empty());
    // GPU 1 reads processes_file on every call; missing file = no processes
    assert!(d1.running_compute_processes().unwrap().is_empty());
    std::fs::write(&procs_file, "# pid:MiB\n4242:10\n").unwrap();
    let procs = d1.running_compute_processes().unwrap();
    assert_eq!(procs.len(), 1);
    assert_eq!(procs[0].pid, 4242);
    assert_eq!(procs[0].used_gpu_memory, UsedGpuMemory::Used(10 * MIB));

    // lost_after = 3 on GPU 1: three utilization reads succeed, then it is lost
    for _ in 0..3 {
        assert_eq!(d1.utilization_rates().unwrap().gpu, 5);
    }
    assert!(matches!(d1.utilization_rates(), Err(NvmlError::GpuLost)));
    assert!(matches!(d1.name(), Err(NvmlError::GpuLost)));
    assert!(matches!(d1.memory_info(), Err(NvmlError::GpuLost)));
    assert!(matches!(nvml.device_by_index(1), Err(NvmlError::GpuLost)));
    assert_eq!(nvml.device_count().unwrap(), 2);
    assert_eq!(d0.utilization_rates().unwrap().gpu, 100);

    nvml.shutdown().unwrap();
    // SAFETY: see set_env.
    unsafe { std::env::remove_var("FAKE_NVML_LOG") };

    // call log
    let log = std::fs::read_to_string(&log).unwrap();
    let count = |line: &str| log.lines().filter(|l| *l == line).count();
    assert_eq!(count("nvmlInit_v2 -"), 1);
    assert_eq!(count("nvmlDeviceGetPcieThroughput 0"), 2);
    assert_eq!(count("nvmlDeviceGetUtilizationRates 1"), 4);
    assert_eq!(count("nvmlDeviceGetHandleByIndex_v2 1"), 2);
    assert_eq!(count("nvmlShutdown -"), 1);
}

/// Raw C-level checks through nvml-wrapper-sys: argument validation, the
/// memory v2 version check, the infoCount protocol, refcounting.
fn check_raw(lib_path: &Path, dir: &Path) {
    let s = write(
        dir,
        "raw.scenario",
        "[device]\nmemory.total = 10\nmemory.used = 4\nprocesses = 1:1, 2:2, 3:NA\n",
    );
    set_env("FAKE_NVML_SCENARIO", &s);
    let lib = unsafe { NvmlLib::new(lib_path) }.unwrap();
    unsafe {
        // not initialized yet
        let mut n: c_uint = 0;
        assert_eq!(lib.nvmlDeviceGetCount_v2(&mut n), 1);
        assert_eq!(lib.nvmlShutdown(), 1);

        // nested init / shutdown refcount
        assert_eq!(lib.nvmlInit_v2(), 0);
        assert_eq!(lib.nvmlInitWithFlags(0), 0);
        assert_eq!(lib.nvmlDeviceGetCount_v2(&mut n), 0);
        assert_eq!(n, 1);
        assert_eq!(lib.nvmlDeviceGetCount_v2(std::ptr::null_mut()), 2);

        let mut dev: nvmlDevice_t = std::ptr::null_mut();
        assert_eq!(lib.nvmlDeviceGetHandleByIndex_v2(0, &mut dev), 0);
        assert_eq!(lib.nvmlDeviceGetHandleByIndex_v2(0, std::ptr::null_mut()), 2);
        let bogus = 77usize as nvmlDevice_t;
        let mut v: c_uint = 0;
        assert_eq!(lib.nvmlDeviceGetPowerUsage(bogus, &mut v), 2);
        assert_eq!(lib.nvmlDeviceGetPowerUsage(dev, std::ptr::null_mut()), 2);
        assert_eq!(lib.nvmlDeviceGetPowerUsage(dev, &mut v), 3);
        assert_eq!(lib.nvmlDeviceGetTemperature(dev, 5, &mut v), 2);

        // memory v2 version check
        let mut mem: nvmlMemory_v2_t = std::mem::zeroed();
        mem.version = 1;
        assert_eq!(lib.nvmlDeviceGetMemoryInfo_v2(dev, &mut mem), 25);
        mem.version = (std::mem::size_of::<nvmlMemory_v2_t>() | (2 << 24)) as u32;
        assert_eq!(lib.nvmlDeviceGetMemoryInfo_v2(dev, &mut mem), 0);
        assert_eq!((mem.total, mem.used, mem.free), (10 * MIB, 4 * MIB, 6 * MIB));

        // infoCount protocol
        let mut count: c_uint = 0;
        let r: nvmlReturn_t =
            lib.nvmlDeviceGetComputeRunningProcesses_v3(dev, &mut count, std::ptr::null_mut());
        assert_eq!((r, count), (7, 3));
        let mut buf: Vec<nvmlProcessInfo_t> = vec![std::mem::zeroed(); 8];
        count = 2;
        let r = lib.nvmlDeviceGetComputeRunningProcesses_v3(dev, &mut count, buf.as_mut_ptr());
        assert_eq!((r, count), (7, 3));
        count = 8;
        let r = lib.nvmlDeviceGetComputeRunningProcesses_v3(dev, &mut count, std::ptr::null_mut());
        assert_eq!(r, 2);
        let r = lib.nvmlDeviceGetComputeRunningProcesses_v3(dev, &mut count, buf.as_mut_ptr());
        assert_eq!((r, count), (0, 3));
        assert_eq!((buf[1].pid, buf[1].usedGpuMemory), (2, 2 * MIB));
        assert_eq!(buf[2].usedGpuMemory, u64::MAX);
        assert_eq!(buf[0].gpuInstanceId, 0xFFFF_FFFF);
        count = 0;
        let r = lib.nvmlDeviceGetGraphicsRunningProcesses_v3(dev, &mut count, std::ptr::null_mut());
        assert_eq!((r, count), (0, 0));

        let msg = CStr::from_ptr(lib.nvmlErrorString(15));
        assert_eq!(msg.to_str().unwrap(), "GPU is lost");

        assert_eq!(lib.nvmlShutdown(), 0);
        assert_eq!(lib.nvmlDeviceGetCount_v2(&mut n), 0); // still one ref
        assert_eq!(lib.nvmlShutdown(), 0);
        assert_eq!(lib.nvmlDeviceGetCount_v2(&mut n), 1);
        assert_eq!(lib.nvmlShutdown(), 1);
    }
}

fn check_delay(lib: &Path, dir: &Path) {
    let s = write(
        dir,
        "delay.scenario",
        "[device]\ndelay_ms = 300\nutilization.gpu = 1\n[device]\nutilization.gpu = 2\n",
    );
    set_env("FAKE_NVML_SCENARIO", &s);
    let nvml = init(lib).unwrap();
    let d0 = nvml.device_by_index(0).unwrap();
    let d1 = nvml.device_by_index(1).unwrap();
    let t = Instant::now();
    assert_eq!(d0.utilization_rates().unwrap().gpu, 1);
    assert!(t.elapsed() >= Duration::from_millis(300));
    let t = Instant::now();
    assert_eq!(d1.utilization_rates().unwrap().gpu, 2);
    assert!(t.elapsed() < Duration::from_millis(300));
}

const GPM: &str = "\
[device]                     # GPU 0: Hopper with GPM
utilization.gpu = 1
gpm.sm_util = 10, 20, 30.5
gpm.any_tensor_util = 40, NOT_SUPPORTED, 41
gpm.pcie_tx_per_sec = 1000
gpm.fail_at = 4
gpm.metrics_fail_at = 5
[device]                     # GPU 1: no gpm.* key -> unsupported
[device]                     # GPU 2: explicitly unsupported
gpm = unsupported
gpm.sm_util = 1
[device]                     # GPU 3: the support query itself fails
gpm = NO_PERMISSION
";

fn check_gpm(lib: &Path, dir: &Path) {
    let log = dir.join("gpm.log");
    let _ = std::fs::remove_file(&log);
    set_env("FAKE_NVML_SCENARIO", write(dir, "gpm.scenario", GPM));
    set_env("FAKE_NVML_LOG", &log);
    let nvml = init(lib).unwrap();
    let d: Vec<_> = (0..4).map(|i| nvml.device_by_index(i).unwrap()).collect();

    assert!(d[0].gpm_support().unwrap());
    assert!(!d[1].gpm_support().unwrap());
    assert!(!d[2].gpm_support().unwrap());
    assert!(matches!(d[3].gpm_support(), Err(NvmlError::NoPermission)));
    assert!(matches!(d[1].gpm_sample(), Err(NvmlError::NotSupported)));
    assert!(matches!(d[2].gpm_sample(), Err(NvmlError::NotSupported)));
    assert!(matches!(d[3].gpm_sample(), Err(NvmlError::NoPermission)));

    let ids = [
        GpmMetricId::SmUtil,
        GpmMetricId::AnyTensorUtil,
        GpmMetricId::PcieTxPerSec,
        GpmMetricId::SmOccupancy,
    ];
    // The n-th nvmlGpmSampleGet on a device is GPM tick n; metrics report sample 2's tick.
    let s0 = d[0].gpm_sample().unwrap();
    let s1 = d[0].gpm_sample().unwrap();
    let m = gpm_metrics_get(&nvml, &s0, &s1, &ids).unwrap();
    assert_eq!(m.len(), 4);
    let sm = m[0].as_ref().unwrap();
    assert_eq!((sm.metric_id, sm.value), (GpmMetricId::SmUtil, 20.0));
    assert_eq!(
        (sm.metric_info.short_name.as_str(), sm.metric_info.unit.as_str()),
        ("sm_util", "%")
    );
    assert!(matches!(m[1], Err(NvmlError::NotSupported))); // scripted NOT_SUPPORTED at tick 1
    assert_eq!(m[2].as_ref().unwrap().value, 1000.0);
    assert_eq!(m[2].as_ref().unwrap().metric_info.unit, "MiB/s");
    assert!(matches!(m[3], Err(NvmlError::NotSupported))); // not scripted at all
    // metrics are a pure function of the two samples
    let again = gpm_metrics_get(&nvml, &s0, &s1, &[GpmMetricId::SmUtil]).unwrap();
    assert_eq!(again[0].as_ref().unwrap().value, 20.0);

    let s2 = d[0].gpm_sample().unwrap();
    let m = gpm_metrics_get(&nvml, &s1, &s2, &ids[..2]).unwrap();
    assert_eq!(m[0].as_ref().unwrap().value, 30.5);
    assert_eq!(m[1].as_ref().unwrap().value, 41.0);
    // samples out of order, or the same sample twice
    assert!(matches!(gpm_metrics_get(&nvml, &s2, &s1, &ids), Err(NvmlError::InvalidArg)));
    assert!(matches!(gpm_metrics_get(&nvml, &s2, &s2, &ids), Err(NvmlError::InvalidArg)));

    let s3 = d[0].gpm_sample().unwrap();
    assert_eq!(gpm_metrics_get(&nvml, &s2, &s3, &ids).unwrap()[0].as_ref().unwrap().value, 30.5); // last repeats
    assert!(matches!(d[0].gpm_sample(), Err(NvmlError::Unknown))); // gpm.fail_at = 4
    let s5 = d[0].gpm_sample().unwrap();
    assert!(matches!(gpm_metrics_get(&nvml, &s3, &s5, &ids), Err(NvmlError::Unknown))); // metrics_fail_at = 5
    let s6 = d[0].gpm_sample().unwrap();
    assert_eq!(gpm_metrics_get(&nvml, &s5, &s6, &ids).unwrap()[0].as_ref().unwrap().value, 30.5);

    // MIG samples: own cursor per GPU instance, not mixable with whole-GPU samples
    let g0 = d[0].gpm_mig_sample(1).unwrap();
    let g1 = d[0].gpm_mig_sample(1).unwrap();
    assert_eq!(gpm_metrics_get(&nvml, &g0, &g1, &ids).unwrap()[0].as_ref().unwrap().value, 20.0);
    assert!(matches!(gpm_metrics_get(&nvml, &s6, &g1, &ids), Err(NvmlError::InvalidArg)));

    for s in [s0, s1, s2, s3, s5, s6, g0] {
        s.free().unwrap();
    }
    drop(g1); // Drop frees too
    drop(d);
    nvml.shutdown().unwrap();
    // SAFETY: see set_env.
    unsafe { std::env::remove_var("FAKE_NVML_LOG") };

    let log = std::fs::read_to_string(&log).unwrap();
    let count = |line: &str| log.lines().filter(|l| *l == line).count();
    assert_eq!(count("nvmlGpmSampleGet 0"), 7);
    assert_eq!(count("nvmlGpmMigSampleGet 0"), 2);
    assert_eq!(count("nvmlGpmSampleAlloc -"), 12);
    assert_eq!(count("nvmlGpmSampleFree -"), 12);
    assert_eq!(count("nvmlGpmQueryDeviceSupport 3"), 1);
    assert_eq!(count("nvmlGpmMetricsGet 0"), 10);
}

const EVENTS: &str = "\
[device]                     # GPU 0: events follow its utilization reads
utilization.gpu = 1
events = xid:79@2, dbe@3, xid:94:gi=1:ci=0@3, pstate@1
[device]                     # GPU 1: supports events, none scripted
utilization.gpu = 1
events = none
[device]                     # GPU 2: no events key -> not supported
[device]                     # GPU 3: wall-clock ticks of 300 ms from init
events = xid:13@1
events.tick_ms = 300
[device]                     # GPU 4: only Xid events supported
utilization.gpu = 1
events = xid:31@0
events.supported = 0x8
";

fn check_events(lib: &Path, dir: &Path) {
    set_env("FAKE_NVML_SCENARIO", write(dir, "events.scenario", EVENTS));
    let t_init = Instant::now();
    let nvml = init(lib).unwrap();
    let d: Vec<_> = (0..5).map(|i| nvml.device_by_index(i).unwrap()).collect();

    let all = d[0].supported_event_types().unwrap();
    assert!(all.contains(
        EventTypes::CRITICAL_XID_ERROR
            | EventTypes::DOUBLE_BIT_ECC_ERROR
            | EventTypes::PSTATE_CHANGE
    ));
    assert!(matches!(d[2].supported_event_types(), Err(NvmlError::NotSupported)));
    assert_eq!(d[4].supported_event_types().unwrap(), EventTypes::CRITICAL_XID_ERROR);

    // GPU 3's wall-clock event (due 300 ms after init), on its own set
    let wall = nvml.create_event_set().unwrap();
    let wall = d[3].register_events(EventTypes::CRITICAL_XID_ERROR, wall).unwrap();
    let ev = wall.wait(5_000).unwrap();
    assert!(t_init.elapsed() >= Duration::from_millis(290), "{:?}", t_init.elapsed());
    assert!(t_init.elapsed() < Duration::from_millis(3_000), "{:?}", t_init.elapsed());
    assert_eq!((ev.device.index().unwrap(), ev.event_data), (3, Some(XidError::Value(13))));
    assert!(matches!(wall.wait(0), Err(NvmlError::Timeout)));
    wall.release_events().unwrap();

    // registration: unsupported types are refused (and the wrapper frees the set)
    let set = nvml.create_event_set().unwrap();
    let err = d[4].register_events(EventTypes::DOUBLE_BIT_ECC_ERROR, set).unwrap_err();
    assert!(matches!(err.error, NvmlError::NotSupported));
    let set = nvml.create_event_set().unwrap();
    assert!(
        matches!(d[2].register_events(EventTypes::CRITICAL_XID_ERROR, set), Err(e) if matches!(e.error, NvmlError::NotSupported))
    );

    let set = nvml.create_event_set().unwrap();
    let set = d[0]
        .register_events(EventTypes::CRITICAL_XID_ERROR | EventTypes::DOUBLE_BIT_ECC_ERROR, set)
        .unwrap();
    let set = d[1].register_events(EventTypes::CRITICAL_XID_ERROR, set).unwrap();
    let set = d[4].register_events(EventTypes::CRITICAL_XID_ERROR, set).unwrap();

    // nothing due yet: timeouts return promptly, after about the timeout
    let t = Instant::now();
    assert!(matches!(set.wait(0), Err(NvmlError::Timeout)));
    assert!(t.elapsed() < Duration::from_millis(100));
    let t = Instant::now();
    assert!(matches!(set.wait(200), Err(NvmlError::Timeout)));
    assert!(t.elapsed() >= Duration::from_millis(190), "{:?}", t.elapsed());
    assert!(t.elapsed() < Duration::from_millis(1_500), "{:?}", t.elapsed());

    // GPU 4: xid:31@0 is due once tick 0 was sampled
    d[4].utilization_rates().unwrap();
    let ev = set.wait(0).unwrap();
    assert_eq!((ev.device.index().unwrap(), ev.event_data), (4, Some(XidError::Value(31))));

    // GPU 0: ticks 0 and 1 sampled -> nothing (pstate@1 is not registered); tick 2 -> Xid 79
    d[0].utilization_rates().unwrap();
    d[0].utilization_rates().unwrap();
    assert!(matches!(set.wait(0), Err(NvmlError::Timeout)));
    d[0].utilization_rates().unwrap();
    let ev = set.wait(0).unwrap();
    assert_eq!(ev.event_type, EventTypes::CRITICAL_XID_ERROR);
    assert_eq!((ev.device.index().unwrap(), ev.event_data), (0, Some(XidError::Value(79))));
    assert!(matches!(set.wait(0), Err(NvmlError::Timeout))); // delivered once

    // a waiter wakes as soon as another thread samples tick 3
    std::thread::scope(|scope| {
        let d0 = &d[0];
        scope.spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            d0.utilization_rates().unwrap();
        });
        let t = Instant::now();
        let ev = set.wait(10_000).unwrap();
        assert!(t.elapsed() < Duration::from_millis(3_000), "{:?}", t.elapsed());
        assert_eq!(ev.event_type, EventTypes::DOUBLE_BIT_ECC_ERROR);
        assert_eq!(ev.event_data, None);
    });
    let ev = set.wait(0).unwrap();
    assert_eq!(ev.event_data, Some(XidError::Value(94)));
    assert!(matches!(set.wait(0), Err(NvmlError::Timeout)));
    set.release_events().unwrap();

    drop(d);
    nvml.shutdown().unwrap();
}

const PROC_UTIL: &str = "\
[device]
process_util = 1234:sm=50:mem=20:enc=1:dec=2; 5678:sm=10, none, 42:sm=7:ts=1000, NOT_SUPPORTED, 42:sm=8
remapped_rows.correctable = 0, 1
remapped_rows.uncorrectable = 0, 0, 2
remapped_rows.pending = 0, 1, 0
remapped_rows.failure = 0, 0, 1
retired_pages.double_bit = none, 0x1000:1700000000; 0x2000
retired_pages.pending = 0, 1
[device]                     # nothing scripted -> NOT_SUPPORTED everywhere
";

fn check_proc_util_and_pages(lib: &Path, dir: &Path) {
    set_env("FAKE_NVML_SCENARIO", write(dir, "procutil.scenario", PROC_UTIL));
    let nvml = init(lib).unwrap();
    let d0 = nvml.device_by_index(0).unwrap();
    let d1 = nvml.device_by_index(1).unwrap();

    // process utilization: one tick per call (the wrapper's size query does not count)
    let now_us = || {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_micros()
            as u64
    };
    let before = now_us();
    let p = d0.process_utilization_stats(None).unwrap();
    let got: Vec<_> =
        p.iter().map(|s| (s.pid, s.sm_util, s.mem_util, s.enc_util, s.dec_util)).collect();
    assert_eq!(got, vec![(1234, 50, 20, 1, 2), (5678, 10, 0, 0, 0)]);
    assert!(p[0].timestamp >= before && p[0].timestamp <= now_us());
    assert!(matches!(d0.process_utilization_stats(None), Err(NvmlError::NotFound))); // `none`
    let p = d0.process_utilization_stats(999).unwrap();
    assert_eq!((p.len(), p[0].pid, p[0].sm_util, p[0].timestamp), (1, 42, 7, 1000));
    assert!(matches!(d0.process_utilization_stats(None), Err(NvmlError::NotSupported)));
    assert_eq!(d0.process_utilization_stats(None).unwrap()[0].sm_util, 8);
    // samples not newer than last_seen_timestamp are left out
    assert!(matches!(d0.process_utilization_stats(u64::MAX), Err(NvmlError::NotFound)));
    assert!(matches!(d1.process_utilization_stats(None), Err(NvmlError::NotSupported)));

    // retired pages: the wrapper sizes with _v1 and fills with _v2 (one tick)
    let dbe = RetirementCause::DoubleBitEccError;
    assert!(d0.retired_pages(dbe).unwrap().is_empty());
    let pages: Vec<_> =
        d0.retired_pages(dbe).unwrap().iter().map(|p| (p.address, p.timestamp)).collect();
    assert_eq!(pages, vec![(0x1000, 1_700_000_000), (0x2000, 0)]);
    assert_eq!(d0.retired_pages(dbe).unwrap().len(), 2);
    assert!(d0.retired_pages(RetirementCause::MultipleSingleBitEccErrors).unwrap().is_empty());
    assert!(!d0.are_pages_pending_retired().unwrap());
    assert!(d0.are_pages_pending_retired().unwrap());
    assert!(matches!(d1.retired_pages(dbe), Err(NvmlError::NotSupported)));
    assert!(matches!(d1.are_pages_pending_retired(), Err(NvmlError::NotSupported)));

    // remapped rows: nvml-wrapper 0.13 has no safe method; call the raw symbol
    let remapped = |d: &nvml_wrapper::Device| {
        let f = nvml.lib().nvmlDeviceGetRemappedRows.as_ref().unwrap();
        let (mut c, mut u, mut p, mut x) = (9, 9, 9, 9);
        // SAFETY: valid handle and out-pointers.
        let r = unsafe { f(d.handle(), &mut c, &mut u, &mut p, &mut x) };
        (r, [c, u, p, x])
    };
    assert_eq!(remapped(&d0), (0, [0, 0, 0, 0]));
    assert_eq!(remapped(&d0), (0, [1, 0, 1, 0]));
    assert_eq!(remapped(&d0), (0, [1, 2, 0, 1]));
    assert_eq!(remapped(&d1).0, 3);

    nvml.shutdown().unwrap();
}

/// Raw checks of the new symbols: versions, null pointers, bad handles,
/// count protocols, event data MIG ids.
fn check_raw_new(lib_path: &Path, dir: &Path) {
    let s = write(
        dir,
        "rawnew.scenario",
        "[device]\nutilization.gpu = 1\ngpm.sm_util = 5\nevents = xid:94:gi=1:ci=2@0\n\
         process_util = 1:sm=1; 2:sm=2; 3:sm=3\nretired_pages.single_bit_ecc = 0x10:1; 0x20:2\n[device]\ngpm.sm_util = 6\n",
    );
    set_env("FAKE_NVML_SCENARIO", &s);
    let lib = unsafe { NvmlLib::new(lib_path) }.unwrap();
    unsafe {
        let mut sample: nvmlGpmSample_t = std::ptr::null_mut();
        assert_eq!(lib.nvmlGpmSampleAlloc(&mut sample), 1); // uninitialized
        let mut set: nvmlEventSet_t = std::ptr::null_mut();
        assert_eq!(lib.nvmlEventSetCreate(&mut set), 1);
        assert_eq!(lib.nvmlInit_v2(), 0);
        let mut dev: nvmlDevice_t = std::ptr::null_mut();
        let mut dev1: nvmlDevice_t = std::ptr::null_mut();
        assert_eq!(lib.nvmlDeviceGetHandleByIndex_v2(0, &mut dev), 0);
        assert_eq!(lib.nvmlDeviceGetHandleByIndex_v2(1, &mut dev1), 0);

        // GPM
        let mut sup: nvmlGpmSupport_t = std::mem::zeroed();
        assert_eq!(lib.nvmlGpmQueryDeviceSupport(dev, &mut sup), 25); // version 0
        sup.version = 1;
        assert_eq!(lib.nvmlGpmQueryDeviceSupport(dev, &mut sup), 0);
        assert_eq!(sup.isSupportedDevice, 1);
        assert_eq!(lib.nvmlGpmQueryDeviceSupport(dev, std::ptr::null_mut()), 2);
        assert_eq!(lib.nvmlGpmSampleAlloc(std::ptr::null_mut()), 2);
        let (mut a, mut b, mut c) =
            (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(lib.nvmlGpmSampleAlloc(&mut a), 0);
        assert_eq!(lib.nvmlGpmSampleAlloc(&mut b), 0);
        assert_eq!(lib.nvmlGpmSampleAlloc(&mut c), 0);
        assert_eq!(lib.nvmlGpmSampleGet(dev, std::ptr::null_mut()), 2);
        assert_eq!(lib.nvmlGpmSampleGet(dev, dev as nvmlGpmSample_t), 2); // not a sample
        let mut req: Box<nvmlGpmMetricsGet_t> = Box::new(std::mem::zeroed());
        req.version = 1;
        req.numMetrics = 1;
        req.metrics[0].metricId = 2;
        req.sample1 = a;
        req.sample2 = b;
        assert_eq!(lib.nvmlGpmMetricsGet(&mut *req), 2); // samples not filled yet
        assert_eq!(lib.nvmlGpmSampleGet(dev, a), 0);
        assert_eq!(lib.nvmlGpmSampleGet(dev, b), 0);
        assert_eq!(lib.nvmlGpmSampleGet(dev1, c), 0);
        assert_eq!(lib.nvmlGpmMetricsGet(&mut *req), 0);
        assert_eq!((req.metrics[0].nvmlReturn, req.metrics[0].value), (0, 5.0));
        req.sample2 = c; // different devices
        assert_eq!(lib.nvmlGpmMetricsGet(&mut *req), 2);
        req.sample2 = b;
        req.version = 2;
        assert_eq!(lib.nvmlGpmMetricsGet(&mut *req), 25);
        req.version = 1;
        req.numMetrics = 211;
        assert_eq!(lib.nvmlGpmMetricsGet(&mut *req), 2);
        req.numMetrics = 2;
        req.metrics[1].metricId = 0;
        assert_eq!(lib.nvmlGpmMetricsGet(&mut *req), 0);
        assert_eq!(req.metrics[1].nvmlReturn, 2);
        assert_eq!(lib.nvmlGpmMetricsGet(std::ptr::null_mut()), 2);
        for s in [a, b, c] {
            assert_eq!(lib.nvmlGpmSampleFree(s), 0);
        }
        assert_eq!(lib.nvmlGpmSampleFree(a), 2); // double free

        // events: MIG ids, freed sets
        assert_eq!(lib.nvmlEventSetCreate(std::ptr::null_mut()), 2);
        assert_eq!(lib.nvmlEventSetCreate(&mut set), 0);
        assert_eq!(lib.nvmlDeviceRegisterEvents(dev, 8, dev as nvmlEventSet_t), 2); // not a set
        assert_eq!(lib.nvmlDeviceRegisterEvents(dev, 8, set), 0);
        let mut data: nvmlEventData_t = std::mem::zeroed();
        assert_eq!(lib.nvmlEventSetWait_v2(set, &mut data, 0), 10);
        assert_eq!(lib.nvmlEventSetWait_v2(set, std::ptr::null_mut(), 0), 2);
        let mut util = std::mem::zeroed();
        assert_eq!(lib.nvmlDeviceGetUtilizationRates(dev, &mut util), 0);
        assert_eq!(lib.nvmlEventSetWait_v2(set, &mut data, 0), 0);
        assert_eq!((data.device, data.eventType, data.eventData), (dev, 8, 94));
        assert_eq!((data.gpuInstanceId, data.computeInstanceId), (1, 2));
        assert_eq!(lib.nvmlEventSetFree(set), 0);
        assert_eq!(lib.nvmlEventSetWait_v2(set, &mut data, 0), 2); // freed
        assert_eq!(lib.nvmlEventSetFree(set), 2);
        let mut mask = 0u64;
        assert_eq!(lib.nvmlDeviceGetSupportedEventTypes(dev, std::ptr::null_mut()), 2);
        assert_eq!(lib.nvmlDeviceGetSupportedEventTypes(dev1, &mut mask), 3);

        // process utilization count protocol
        let mut count: c_uint = 1;
        let mut buf: Vec<nvmlProcessUtilizationSample_t> = vec![std::mem::zeroed(); 4];
        let r = lib.nvmlDeviceGetProcessUtilization(dev, buf.as_mut_ptr(), &mut count, 0);
        assert_eq!((r, count), (7, 3));
        count = 4;
        assert_eq!(
            lib.nvmlDeviceGetProcessUtilization(dev, std::ptr::null_mut(), &mut count, 0),
            2
        );
        assert_eq!(
            lib.nvmlDeviceGetProcessUtilization(dev, buf.as_mut_ptr(), std::ptr::null_mut(), 0),
            2
        );
        let r = lib.nvmlDeviceGetProcessUtilization(dev, buf.as_mut_ptr(), &mut count, 0);
        assert_eq!((r, count, buf[2].pid, buf[2].smUtil), (0, 3, 3, 3));

        // retired pages count protocol
        count = 0;
        let mut addrs = [0u64; 4];
        let mut stamps = [0u64; 4];
        assert_eq!(lib.nvmlDeviceGetRetiredPages(dev, 0, &mut count, addrs.as_mut_ptr()), 7);
        assert_eq!(count, 2);
        assert_eq!(lib.nvmlDeviceGetRetiredPages(dev, 2, &mut count, addrs.as_mut_ptr()), 2); // bad cause
        assert_eq!(
            lib.nvmlDeviceGetRetiredPages_v2(
                dev,
                0,
                &mut count,
                addrs.as_mut_ptr(),
                std::ptr::null_mut()
            ),
            2
        );
        assert_eq!(
            lib.nvmlDeviceGetRetiredPages_v2(
                dev,
                0,
                &mut count,
                addrs.as_mut_ptr(),
                stamps.as_mut_ptr()
            ),
            0
        );
        assert_eq!((addrs[..2].to_vec(), stamps[..2].to_vec()), (vec![0x10, 0x20], vec![1, 2]));
        count = 4;
        assert_eq!(lib.nvmlDeviceGetRetiredPages(dev, 1, &mut count, addrs.as_mut_ptr()), 0);
        assert_eq!(count, 0); // the other cause is empty
        let mut pending: c_uint = 9;
        assert_eq!(lib.nvmlDeviceGetRetiredPagesPendingStatus(dev, &mut pending), 0);
        assert_eq!(pending, 0);
        let (mut x0, mut x1, mut x2) = (0, 0, 0);
        assert_eq!(
            lib.nvmlDeviceGetRemappedRows(dev, &mut x0, &mut x1, &mut x2, std::ptr::null_mut()),
            2
        );

        assert_eq!(lib.nvmlShutdown(), 0);
    }
}

const MIG: &str = "\
[device]                     # GPU 0: split, one instance destroyed from tick 1
name = NVIDIA H100 80GB HBM3
utilization.gpu = 50
memory.total = 81559
memory.used = 100
mig_mode.pending = 0
mig = 3g.40gb:used=1000:proc=7@500;1g.10gb:gi=13:ci=2:uuid=MIG-x:total=9984, 3g.40gb:used=2000
[device]                     # GPU 1: whole, MIG capable but off
utilization.gpu = 5
mig_mode = 0
";

fn check_mig(lib: &Path, dir: &Path) {
    let s = write(dir, "mig.scenario", MIG);
    set_env("FAKE_NVML_SCENARIO", &s);
    let nvml = init(lib).unwrap();
    let (d0, d1) = (nvml.device_by_index(0).unwrap(), nvml.device_by_index(1).unwrap());
    let mode = d0.mig_mode().unwrap();
    assert_eq!((mode.current, mode.pending), (1, 0));
    assert_eq!(d1.mig_mode().unwrap().current, 0);
    assert_eq!(d0.mig_device_count().unwrap(), 7);
    assert!(matches!(d1.mig_device_count(), Err(NvmlError::NotSupported)));
    let (a, b) = (d0.mig_device_by_index(0).unwrap(), d0.mig_device_by_index(1).unwrap());
    assert!(matches!(d0.mig_device_by_index(2), Err(NvmlError::NotFound)));
    assert!(a.mig_is_mig_device_handle().unwrap() && !d0.mig_is_mig_device_handle().unwrap());
    assert_eq!(a.name().unwrap(), "NVIDIA H100 80GB HBM3 MIG 3g.40gb");
    assert!(a.uuid().unwrap().starts_with("MIG-"));
    assert_eq!(b.uuid().unwrap(), "MIG-x");
    let m = a.memory_info().unwrap();
    assert_eq!((m.total / MIB, m.used / MIB), (40 * 1024, 1000));
    assert_eq!(b.memory_info().unwrap().total / MIB, 9984);
    let ids = |d: &nvml_wrapper::Device<'_>| {
        let lib = nvml.lib();
        let (mut gi, mut ci) = (0, 0);
        // SAFETY: a handle of this library and valid out-pointers.
        unsafe {
            assert_eq!(lib.nvmlDeviceGetGpuInstanceId(d.handle(), &mut gi), 0);
            assert_eq!(lib.nvmlDeviceGetComputeInstanceId(d.handle(), &mut ci), 0);
        }
        (gi, ci)
    };
    assert_eq!((ids(&a), ids(&b)), ((1, 0), (13, 2)));
    assert_eq!(a.mig_parent_device().unwrap().index().unwrap(), 0);
    assert_eq!(
        a.running_compute_processes().unwrap().iter().map(|p| p.pid).collect::<Vec<_>>(),
        [7]
    );
    assert!(d0.running_compute_processes().unwrap().is_empty());
    // In MIG mode the GPU has no utilization; that read is the tick the layout follows.
    assert!(matches!(d0.utilization_rates(), Err(NvmlError::NotSupported)));
    assert!(matches!(d0.utilization_rates(), Err(NvmlError::NotSupported)));
    assert_eq!(a.memory_info().unwrap().used / MIB, 2000);
    assert!(matches!(b.memory_info(), Err(NvmlError::NotFound)), "its instance was destroyed");
    assert!(matches!(d0.mig_device_by_index(1), Err(NvmlError::NotFound)));
    assert_eq!(d1.utilization_rates().unwrap().gpu, 5);
}

#[test]
fn fake_nvml_through_nvml_wrapper() {
    let lib = lib_path();
    let dir = tempfile::tempdir().unwrap();
    check_init_failures(&lib, dir.path());
    check_main(&lib, dir.path());
    check_raw(&lib, dir.path());
    check_delay(&lib, dir.path());
    check_gpm(&lib, dir.path());
    check_events(&lib, dir.path());
    check_proc_util_and_pages(&lib, dir.path());
    check_raw_new(&lib, dir.path());
    check_mig(&lib, dir.path());
    // re-init after a full shutdown re-reads the scenario (fresh cursors)
    check_main(&lib, dir.path());
}
