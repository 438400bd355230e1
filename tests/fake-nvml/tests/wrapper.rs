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
use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, PcieUtilCounter, PerformanceState, TemperatureSensor,
};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper_sys::bindings::{NvmlLib, nvmlDevice_t, nvmlMemory_v2_t, nvmlProcessInfo_t, nvmlReturn_t};

const MIB: u64 = 1024 * 1024;

/// `target/<profile>/libnvidia_ml.so`, next to this test's `deps/` folder.
///
/// `cargo test` does not build a cdylib-only package's library, so when the
/// `.so` is missing or older than `src/lib.rs` this runs
/// `cargo build -p fake-nvml` (same profile) first.
fn lib_path() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe.parent().and_then(Path::parent).expect("test binary lives in target/<profile>/deps");
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
        let status = cmd.current_dir(env!("CARGO_MANIFEST_DIR")).status().expect("spawn cargo build -p fake-nvml");
        assert!(status.success(), "cargo build -p fake-nvml failed");
    }
    assert!(fresh(&so), "{} is missing or older than src/lib.rs: run `cargo build -p fake-nvml`", so.display());
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
    assert!(matches!(d0.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile), Err(NvmlError::NotSupported)));
    assert!(d0.is_in_persistent_mode().unwrap());
    let mig = d0.mig_mode().unwrap();
    assert_eq!((mig.current, mig.pending), (0, 0));
    assert!(matches!(d1.mig_mode(), Err(NvmlError::NotSupported)));

    // processes
    let procs = d0.running_compute_processes().unwrap();
    let got: Vec<(u32, UsedGpuMemory)> = procs.iter().map(|p| (p.pid, p.used_gpu_memory.clone())).collect();
    assert_eq!(got, vec![(1234, UsedGpuMemory::Used(1024 * MIB)), (5678, UsedGpuMemory::Used(2048 * MIB)),]);
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
    let s = write(dir, "raw.scenario", "[device]\nmemory.total = 10\nmemory.used = 4\nprocesses = 1:1, 2:2, 3:NA\n");
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
        let r: nvmlReturn_t = lib.nvmlDeviceGetComputeRunningProcesses_v3(dev, &mut count, std::ptr::null_mut());
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
    let s =
        write(dir, "delay.scenario", "[device]\ndelay_ms = 300\nutilization.gpu = 1\n[device]\nutilization.gpu = 2\n");
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

#[test]
fn fake_nvml_through_nvml_wrapper() {
    let lib = lib_path();
    let dir = tempfile::tempdir().unwrap();
    check_init_failures(&lib, dir.path());
    check_main(&lib, dir.path());
    check_raw(&lib, dir.path());
    check_delay(&lib, dir.path());
    // re-init after a full shutdown re-reads the scenario (fresh cursors)
    check_main(&lib, dir.path());
}
