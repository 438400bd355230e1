//! What a new user types from habit and what gpumon answers: nvidia-smi's `-i` with `--query-gpu`,
//! option spellings from other tools, typos, and units; each answered with the right hint (exit 2)
//! or done as the user meant, never silently something else.

use crate::common::*;

/// stderr of a run that must fail with exit 2.
fn usage_error(o: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    err
}

/// A pasted nvidia-smi line: `-i 1` is GPU 1 and `-l` the interval, without `-l` one sample.
#[test]
fn query_gpu_minus_i_selects_gpus_as_nvidia_smi_does() {
    let dir = tempfile::tempdir().unwrap();
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "--query-gpu=index,utilization.gpu", "--format=csv", "-i", "1"])
        .output()
        .unwrap();
    ok(&o);
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().collect::<Vec<_>>(), ["index, utilization.gpu [%]", "1, 99 %"], "{out}");

    // -i with -l: GPU 1 every -l seconds (here the interval is short, --count ends it).
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "--query-gpu=index", "--format=csv,noheader", "-i", "1", "-l", "0.1"])
        .args(["--count", "3"])
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(String::from_utf8(o.stdout).unwrap(), "1\n1\n1\n");

    // A PCI bus id, as nvidia-smi takes it; and a list.
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "--query-gpu=index", "--format=csv,noheader", "-i", "00000000:2A:00.0"])
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(String::from_utf8(o.stdout).unwrap(), "1\n");
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "--query-gpu=index", "--format=csv,noheader", "-i", "0,1"])
        .output()
        .unwrap();
    ok(&o);
    assert_eq!(String::from_utf8(o.stdout).unwrap(), "0\n1\n");

    // A GPU that is not there fails with a hint, naming it as typed.
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "--query-gpu=index", "--format=csv", "-i", "5"])
        .output()
        .unwrap();
    let err = usage_error(&o);
    assert!(err.contains("--gpus 5 matches no GPU"), "{err}");
    assert!(!err.contains("Index("), "no debug value: {err}");
    // One of the list naming no GPU is not silently left out.
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "--query-gpu=index", "--format=csv", "-i", "0,5"])
        .output()
        .unwrap();
    let err = usage_error(&o);
    assert!(err.contains("--gpus 5 names no GPU NVML sees (the others name GPU 0)"), "{err}");
    assert!(o.stdout.is_empty(), "nothing recorded: {:?}", String::from_utf8_lossy(&o.stdout));
}

/// Without --query-gpu, -i is gpumon's interval: `-i 1 -l 5` says how to pick GPUs.
#[test]
fn minus_i_and_minus_l_without_query_gpu_point_to_id() {
    let o = gpumon().args(["record", "-i", "1", "-l", "5", "-o", "x.csv"]).output().unwrap();
    let err = usage_error(&o);
    assert!(err.contains("tip: -i and -l are both gpumon's interval"), "{err}");
    assert!(err.contains("use --id LIST"), "{err}");
}

#[test]
fn durations_refuse_months_and_zero_with_the_units() {
    let dir = tempfile::tempdir().unwrap();
    for (d, why) in [("1M", "unknown unit 'M'"), ("0s", "is zero"), ("0", "is zero")] {
        let o = gpumon_fake(dir.path(), TWO_GPUS)
            .args(["record", "--duration", d, "-o"])
            .arg(dir.path().join("x.csv"))
            .output()
            .unwrap();
        let err = usage_error(&o);
        assert!(err.contains(why) && err.contains("ms, s, m, h"), "{d}: {err}");
        assert!(!dir.path().join("x.csv").exists(), "{d}: nothing recorded");
    }
}

/// Names other tools use for a field are suggested as gpumon's (nvidia-smi's) name.
#[test]
fn fields_from_other_tools_are_suggested_by_their_gpumon_name() {
    let dir = tempfile::tempdir().unwrap();
    for (typed, want) in [
        ("gpu_util", "utilization.gpu"),
        ("gpu_utilization", "utilization.gpu"),
        ("temp", "temperature.gpu"),
        ("mem_used", "memory.used"),
        ("power", "power.draw"),
    ] {
        let o = gpumon()
            .args(["record", "--count", "1", "--fields", typed, "-o"])
            .arg(dir.path().join("x.csv"))
            .output()
            .unwrap();
        let err = usage_error(&o);
        assert!(err.contains(&format!("(did you mean {want}")), "{typed}: {err}");
    }
}

#[test]
fn by_phase_is_answered_with_by_phase() {
    let o = gpumon().args(["summarize", "--by-phase", "x.csv"]).output().unwrap();
    let err = usage_error(&o);
    assert!(err.contains("use '--by phase'"), "{err}");
    assert!(!err.contains("'--phase'"), "not the window option: {err}");
}

#[test]
fn require_gpu_says_the_loader_error_once() {
    let o = gpumon()
        .args(["record", "--require-gpu", "--count", "1", "-o", "-"])
        .env("GPUMON_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("gpumon: error: --require-gpu: cannot use NVML"), "{err}");
    assert_eq!(err.matches("cannot open shared object file").count(), 1, "{err}");
}

/// An older driver lacks newer NVML functions: their fields are empty, every other field is
/// recorded, and each missing function is one line on stderr (not one per field and GPU).
#[test]
fn record_with_a_driver_lacking_functions_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let lacking = ["nvmlDeviceGetPcieThroughput", "nvmlDeviceGetMemoryErrorCounter"];
    let old = fake_nvml_lacking(dir.path(), &lacking);
    let out = dir.path().join("run.csv");
    let fields = "utilization.gpu,temperature.gpu,pcie.tx,pcie.rx,\
                  ecc.errors.corrected.volatile.device_memory,ecc.errors.uncorrected.aggregate.sram";
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .env("GPUMON_NVML_LIB", &old)
        .args(["record", "-q", "-i", "100ms", "--count", "3", "--fields", fields, "-o"])
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 2, "{err}");
    for f in lacking {
        assert_eq!(err.matches(f).count(), 1, "{f}: {err}");
    }
    assert!(err.lines().all(|l| l.contains("is not in this driver")), "{err}");
    let csv = std::fs::read_to_string(&out).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 6, "{csv}");
    for r in &rows {
        assert!(
            !r[col("utilization.gpu")].is_empty() && !r[col("temperature.gpu")].is_empty(),
            "{csv}"
        );
        for f in ["pcie.tx", "pcie.rx", "ecc.errors.corrected.volatile.device_memory"] {
            assert!(r[col(f)].is_empty(), "{f} is null: {csv}");
        }
    }
}

/// The board's configuration is recorded by default: the fixed values (highest SM clock, widest
/// and fastest link, power limits) read once per GPU and repeated on every row, the link's current
/// state every tick; a driver that lacks one of those functions leaves its column empty, says so
/// once, and records the rest.
#[test]
fn the_boards_configuration_is_recorded_by_default_and_fixed_values_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = "init = ok\n[device]\nname = NVIDIA H100 80GB HBM3\nmemory.total = 81559\n\
        memory.used = 1000\nutilization.gpu = 90\npower.draw = 500\npower.limit = 700\n\
        power.default_limit = 700\npower.min_limit = 200\npower.max_limit = 700\n\
        clocks.sm = 1980\nclocks.max.sm = 1980, 1000\npcie.link.gen.current = 1, 5\n\
        pcie.link.gen.max = 5, 1\npcie.link.width.current = 16\npcie.link.width.max = 16\n";
    let log = dir.path().join("calls.log");
    let record = |lib: Option<&std::path::Path>, out: &std::path::Path| {
        let mut c = gpumon_fake(dir.path(), scenario);
        if let Some(l) = lib {
            c.env("GPUMON_NVML_LIB", l);
        }
        let o = c
            .env("FAKE_NVML_LOG", &log)
            .args(["record", "-q", "-i", "100ms", "--count", "5", "-o"])
            .arg(out)
            .output()
            .unwrap();
        ok(&o);
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let out = dir.path().join("run.csv");
    let err = record(None, &out);
    assert!(err.is_empty(), "{err}");
    let csv = std::fs::read_to_string(&out).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}: {csv}"))
    };
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 5, "{csv}");
    for r in &rows {
        // Read once: the scenario's later values (1000 MHz, gen 1) never reach the file.
        assert_eq!(r[col("clocks.max.sm")], "1980", "{csv}");
        assert_eq!(r[col("pcie.link.gen.max")], "5", "{csv}");
        assert_eq!(r[col("pcie.link.width.max")], "16", "{csv}");
        assert_eq!(r[col("pcie.link.width.current")], "16", "{csv}");
        assert_eq!(r[col("power.default_limit")], "700.0", "{csv}");
        assert_eq!(r[col("power.max_limit")], "700.0", "{csv}");
    }
    // Read every tick: the link's generation follows the scenario.
    let gens: Vec<&str> = rows.iter().map(|r| r[col("pcie.link.gen.current")]).collect();
    assert!(gens.contains(&"5"), "{gens:?}");
    let calls = std::fs::read_to_string(&log).unwrap();
    let count = |f: &str| calls.lines().filter(|l| l.split(' ').next() == Some(f)).count();
    assert_eq!(count("nvmlDeviceGetMaxClockInfo"), 1, "{calls}");
    assert_eq!(count("nvmlDeviceGetMaxPcieLinkGeneration"), 1, "{calls}");
    assert_eq!(count("nvmlDeviceGetPowerManagementDefaultLimit"), 1, "{calls}");
    assert!(count("nvmlDeviceGetCurrPcieLinkGeneration") >= 5, "{calls}");

    // An older driver without two of those functions.
    let lacking =
        ["nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetPowerManagementDefaultLimit"];
    let old = fake_nvml_lacking(dir.path(), &lacking);
    let out = dir.path().join("old.csv");
    let err = record(Some(&old), &out);
    assert_eq!(err.lines().count(), 2, "{err}");
    let csv = std::fs::read_to_string(&out).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for l in lines {
        let r: Vec<&str> = l.split(',').collect();
        assert!(
            r[col("pcie.link.gen.max")].is_empty() && r[col("power.default_limit")].is_empty(),
            "{csv}"
        );
        assert_eq!(r[col("clocks.max.sm")], "1980", "{csv}");
    }
}
