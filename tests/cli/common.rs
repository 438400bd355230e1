//! Shared helpers: the binary, the fake NVML library and scenarios, Python read-back.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use assert_cmd::cargo::CommandCargoExt;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

include!("../support/shared_data.rs");

/// A small nvidia-smi log of tests/fixtures/nvidia-smi (written by its make.py in nvidia-smi's format).
pub fn smi_fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/nvidia-smi").join(name)
}

/// A `gpumon` command with a clean environment for NVML.
pub fn gpumon() -> Command {
    let mut c = Command::cargo_bin("gpumon").unwrap();
    c.env_remove("GPUMON_NVML_LIB")
        .env_remove("FAKE_NVML_SCENARIO")
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env_remove("NVIDIA_VISIBLE_DEVICES");
    c
}

/// Path of the fake libnvidia-ml, built once per test run.
pub fn fake_nvml() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "fake-nvml"])
            .current_dir(repo_root())
            .status()
            .expect("running cargo build -p fake-nvml");
        assert!(status.success(), "building the fake NVML failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| repo_root().join("target"), PathBuf::from);
        let lib = target.join("debug").join("libnvidia_ml.so");
        assert!(lib.exists(), "{} missing", lib.display());
        lib
    })
}

/// A copy of the fake NVML in `dir` that lacks the exports `missing`, as an older driver lacks newer
/// functions: each name is changed (same length) in the copy's symbol strings, so the dynamic
/// loader finds no such symbol and nvml-wrapper answers `FailedToLoadSymbol` for that call.
pub fn fake_nvml_lacking(dir: &Path, missing: &[&str]) -> PathBuf {
    let mut lib = std::fs::read(fake_nvml()).unwrap();
    for name in missing {
        let find = format!("\0{name}\0").into_bytes();
        let mut hidden = find.clone();
        hidden[1] = b'X';
        let mut hits = 0;
        let mut at = 0;
        while let Some(p) = lib[at..].windows(find.len()).position(|w| w == find.as_slice()) {
            lib[at + p..at + p + find.len()].copy_from_slice(&hidden);
            at += p + find.len();
            hits += 1;
        }
        assert!(hits > 0, "the fake NVML exports no {name}");
    }
    let path = dir.join("libnvidia_ml_old.so");
    std::fs::write(&path, lib).unwrap();
    path
}

/// A gpumon command pointed at the fake NVML playing `scenario`.
pub fn gpumon_fake(dir: &Path, scenario: &str) -> Command {
    let path = dir.join("scenario.txt");
    std::fs::write(&path, scenario).unwrap();
    let mut c = gpumon();
    c.env("GPUMON_NVML_LIB", fake_nvml()).env("FAKE_NVML_SCENARIO", &path);
    c
}

/// Run tests/py/readback.py on `file` and parse what pyarrow/pandas/polars/DuckDB saw.
pub fn readback(file: &Path) -> serde_json::Value {
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/readback.py"))
        .arg(file)
        .output()
        .expect("running python3");
    assert!(
        out.status.success(),
        "readback.py failed on {}:\n{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Run tests/py/writers.py `case` into `dir`: the files of the case as other tools write them, and
/// what the script says of them.
pub fn writers(case: &str, dir: &Path) -> serde_json::Value {
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/writers.py"))
        .arg(case)
        .arg(dir)
        .output()
        .expect("running python3");
    assert!(
        out.status.success(),
        "writers.py {case} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Lines of stderr that are gpumon warnings.
pub fn warnings(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains("warning:"))
        .map(str::to_string)
        .collect()
}

/// Two scripted GPUs: GPU 0 a healthy H100 with a fan, GPM counters, watched events and row remapping,
/// GPU 1 without a fan (NOT_SUPPORTED), GPM or events, and lost from the 5th tick on.
pub const TWO_GPUS: &str = "
init = ok
driver_version = 550.54.15
cuda_version = 12040

[device]
name = NVIDIA H100 80GB HBM3
uuid = GPU-00000000-0000-0000-0000-000000000000
pci.bus_id = 00000000:17:00.0
memory.total = 81559
memory.used = 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000
utilization.gpu = 0, 10, 20, 30, 40, 50, 60, 70, 80, 90
utilization.memory = 5
temperature.gpu = 30, 31, 32, 33, 34, 35, 36, 37, 38, 39
power.draw = 70.5, 100, 150.25, 200, 250, 300, 350, 400, 450, 500
power.limit = 700
energy.total = 1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900
clocks.sm = 1410, 1980
clocks.mem = 2619
fan.speed = 30
pstate = 0
clocks_event_reasons.active = 0x1, 0x0, 0x4
utilization.encoder = 0
utilization.decoder = 0
ecc.errors.uncorrected.volatile.total = 0
gpm.sm_util = 0, 60
gpm.sm_occupancy = 0, 30
gpm.any_tensor_util = 0, 25
gpm.dram_bw_util = 0, 40
gpm.fp16_util = 0, 20
gpm.fp32_util = 0, 5
gpm.fp64_util = 0, 0
gpm.pcie_tx_per_sec = 0, 100
gpm.pcie_rx_per_sec = 0, 800
gpm.nvlink_total_tx_per_sec = 0, 5000
gpm.nvlink_total_rx_per_sec = 0, 5000
events = none
remapped_rows.uncorrectable = 0

[device]
name = NVIDIA H100 80GB HBM3
uuid = GPU-11111111-1111-1111-1111-111111111111
pci.bus_id = 00000000:2A:00.0
memory.total = 81559
memory.used = 5000
utilization.gpu = 99, 98, 97, 96, 95, 94, 93, 92, 91, 90
utilization.memory = 50
temperature.gpu = 60
power.draw = 650
power.limit = 700
clocks.sm = 1980
clocks.mem = 2619
fan.speed = NOT_SUPPORTED
pstate = 0
clocks_event_reasons.active = 0
lost_after = 5
";

/// Assert that gpumon exited 0 (its stderr in the message).
pub fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// gpumon's stdout as JSON.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

/// Say that the calling test cannot run its checks here (and why): one `SKIPPED` line on stderr,
/// and, where `GPUMON_SKIP_LOG` names a file (scripts/test sets it), the same line appended there,
/// so that the run's summary lists every test that passed without checking.
pub fn skipped(why: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_string();
    let line = format!("SKIPPED {test}: {why}");
    eprintln!("{line}");
    if let Some(log) = std::env::var_os("GPUMON_SKIP_LOG").filter(|l| !l.is_empty()) {
        use std::io::Write;
        let f = std::fs::OpenOptions::new().create(true).append(true).open(&log);
        f.and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()))
            .unwrap_or_else(|e| panic!("writing {}: {e}", std::path::Path::new(&log).display()));
    }
}
