//! `gpumon doctor` through the real binary (no NVML, the fake NVML healthy and broken, visible-devices
//! variables), and `record`'s default GPU set following CUDA_VISIBLE_DEVICES.

use std::process::{Command, Output};

use crate::common::*;

const VARS: [&str; 3] = ["CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"];

/// Run `cmd` with the visible-devices variables cleared, then `set` applied.
fn run(mut cmd: Command, set: &[(&str, &str)]) -> Output {
    for v in VARS {
        cmd.env_remove(v);
    }
    for (k, v) in set {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn doctor_text(dir: &std::path::Path, scenario: &str, set: &[(&str, &str)]) -> (i32, String) {
    let mut c = gpumon_fake(dir, scenario);
    c.arg("doctor");
    let o = run(c, set);
    let text = String::from_utf8(o.stdout).unwrap();
    assert_fits_80(&text);
    (o.status.code().unwrap(), text)
}

fn doctor_json(
    dir: &std::path::Path,
    scenario: &str,
    set: &[(&str, &str)],
) -> (i32, serde_json::Value) {
    let mut c = gpumon_fake(dir, scenario);
    c.args(["doctor", "--format", "json"]);
    let o = run(c, set);
    (o.status.code().unwrap(), serde_json::from_slice(&o.stdout).unwrap())
}

fn assert_fits_80(text: &str) {
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "line longer than 80 columns: {l:?}");
    }
}

fn strs(v: &serde_json::Value) -> Vec<&str> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect()
}

#[test]
fn no_nvml_exits_1_with_reason_and_fix() {
    let mut c = gpumon();
    c.arg("doctor").env("GPUMON_NVML_LIB", "/nonexistent/libnvidia-ml.so.1");
    let o = run(c, &[]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_fits_80(&text);
    assert!(text.contains("cannot load the NVML library /nonexistent/libnvidia-ml.so.1"), "{text}");
    assert!(text.contains("    fix: "), "{text}");
    // The fix names the NVIDIA driver check on a host and in a container alike.
    assert!(text.contains("nvidia-smi"), "{text}");
    assert!(
        text.contains("\n\nNOT OK: cannot load the NVML library"),
        "the verdict comes last: {text}"
    );
    // The other sections still help: visible devices, container, cgroup.
    assert!(text.contains("CUDA_VISIBLE_DEVICES: not set"), "{text}");
    assert!(text.contains("  cgroup "), "{text}");
}

#[test]
fn healthy_fake_lists_both_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text) = doctor_text(dir.path(), TWO_GPUS, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("  driver       550.54.15\n"), "{text}");
    assert!(text.contains("  CUDA driver  12.4\n"), "{text}");
    assert!(text.contains("GPUs (2)"), "{text}");
    assert!(text.contains("  0  NVIDIA H100 80GB HBM3\n"), "{text}");
    assert!(text.contains("  1  NVIDIA H100 80GB HBM3\n"), "{text}");
    assert!(text.contains("uuid         GPU-00000000-0000-0000-0000-000000000000"), "{text}");
    assert!(text.contains("uuid         GPU-11111111-1111-1111-1111-111111111111"), "{text}");
    assert!(text.contains("memory       81559 MiB"), "{text}");
    assert!(
        text.ends_with("OK: 2 GPUs usable; record without --gpus samples all 2 GPUs (0, 1)\n"),
        "{text}"
    );

    let (code, j) = doctor_json(dir.path(), TWO_GPUS, &[]);
    assert_eq!(code, 0);
    assert_eq!(j["ok"], true);
    assert_eq!(j["nvml"]["driver_version"], "550.54.15");
    assert_eq!(j["nvml"]["cuda_driver_version"], "12.4");
    assert!(
        j["nvml"]["loaded_from"].as_str().unwrap().ends_with("libnvidia_ml.so"),
        "{}",
        j["nvml"]
    );
    let gpus = j["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 2);
    assert_eq!(gpus[1]["uuid"], "GPU-11111111-1111-1111-1111-111111111111");
    assert_eq!(gpus[0]["pci_bus_id"], "00000000:17:00.0");
    assert_eq!(j["visible"]["record_gpus"], serde_json::json!([0, 1]));
    assert!(j["problems"].as_array().unwrap().is_empty());
}

#[test]
fn init_failure_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text) = doctor_text(dir.path(), "init = DRIVER_NOT_LOADED\n", &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("the NVIDIA kernel driver is not running"), "{text}");
    assert!(text.contains("    fix: "), "{text}");
    assert!(!text.contains("GPUs ("), "no GPU section without NVML: {text}");
    let (code, j) = doctor_json(dir.path(), "init = NO_PERMISSION\n", &[]);
    assert_eq!(code, 1);
    assert_eq!(j["ok"], false);
    let p = &j["problems"][0];
    assert!(p["problem"].as_str().unwrap().contains("no permission"), "{p}");
    assert!(p["fix"].as_str().unwrap().contains("video"), "{p}");
}

#[test]
fn unsupported_field_listed_for_that_gpu_only() {
    // TWO_GPUS: fan.speed is NOT_SUPPORTED on GPU 1 only.
    let dir = tempfile::tempdir().unwrap();
    let (_, j) = doctor_json(dir.path(), TWO_GPUS, &[]);
    let g0 = &j["gpus"][0];
    let g1 = &j["gpus"][1];
    assert!(strs(&g1["unsupported"]).contains(&"fan.speed"), "{g1}");
    assert!(!strs(&g0["unsupported"]).contains(&"fan.speed"), "{g0}");
    assert!(strs(&g0["supported"]).contains(&"fan.speed"), "{g0}");
    assert!(strs(&g0["supported"]).contains(&"utilization.gpu"), "{g0}");
    let (_, text) = doctor_text(dir.path(), TWO_GPUS, &[]);
    let (gpu0, gpu1) = text.split_once("\n  1  ").unwrap();
    let gpu0 = gpu0.split_once("GPUs (2)").unwrap().1;
    let gpu1 = gpu1.split_once("\n\n").unwrap().0;
    assert!(gpu1.contains("fan.speed"), "{gpu1}");
    assert!(!gpu0.contains("fan.speed"), "{gpu0}");
}

#[test]
fn modes_and_failed_fields() {
    let scenario = "
[device]
name = NVIDIA A100-SXM4-80GB
memory.total = 81920
memory.used = 10
utilization.gpu = 5
persistence_mode = 1
mig_mode = 1
power.draw = NO_PERMISSION
";
    let dir = tempfile::tempdir().unwrap();
    let (code, text) = doctor_text(dir.path(), scenario, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("modes        persistence on, MIG on"), "{text}");
    assert!(text.contains("failed       power.draw"), "{text}");
    assert!(text.contains("MIG is on"), "{text}");
}

#[test]
fn cuda_visible_devices_selects() {
    let dir = tempfile::tempdir().unwrap();
    let set = [("CUDA_VISIBLE_DEVICES", "1")];
    let (code, text) = doctor_text(dir.path(), TWO_GPUS, &set);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("CUDA_VISIBLE_DEVICES=\"1\": GPU 1 (CUDA's device 0)"), "{text}");
    assert!(text.contains("samples GPU 1 (from CUDA_VISIBLE_DEVICES)"), "{text}");
    assert!(text.contains("  0  NVIDIA H100 80GB HBM3  (not recorded by default)"), "{text}");
    let (_, j) = doctor_json(dir.path(), TWO_GPUS, &set);
    assert_eq!(j["visible"]["decided_by"], "CUDA_VISIBLE_DEVICES");
    assert_eq!(j["visible"]["record_gpus"], serde_json::json!([1]));
    assert_eq!(j["visible"]["variables"][0]["gpus"], serde_json::json!([1]));
    assert_eq!(j["gpus"][0]["recorded"], false);
    assert_eq!(j["gpus"][1]["recorded"], true);

    // By UUID prefix, through the container runtime's variable.
    let (_, j) = doctor_json(dir.path(), TWO_GPUS, &[("NVIDIA_VISIBLE_DEVICES", "GPU-1111")]);
    assert_eq!(j["visible"]["decided_by"], "NVIDIA_VISIBLE_DEVICES");
    assert_eq!(j["visible"]["record_gpus"], serde_json::json!([1]));
}

#[test]
fn cuda_visible_devices_hiding_every_gpu_is_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    for value in ["", "-1", "7"] {
        let (code, text) = doctor_text(dir.path(), TWO_GPUS, &[("CUDA_VISIBLE_DEVICES", value)]);
        assert_eq!(code, 1, "CUDA_VISIBLE_DEVICES={value:?}: {text}");
        assert!(text.contains("hides every GPU from the job"), "{text}");
    }
}

#[test]
fn record_without_gpus_follows_cuda_visible_devices() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.csv");
    let mut c = gpumon_fake(dir.path(), TWO_GPUS);
    c.args(["record", "-q", "-i", "100ms", "--count", "2", "--fields", "utilization.gpu", "-o"])
        .arg(&out);
    let o = run(c, &[("CUDA_VISIBLE_DEVICES", "GPU-11111111")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows.iter().all(|r| r.split(',').nth(2) == Some("1")), "only GPU 1: {csv}");

    // --gpus wins over the variable.
    let out = dir.path().join("run0.csv");
    let mut c = gpumon_fake(dir.path(), TWO_GPUS);
    c.args([
        "record",
        "-q",
        "-i",
        "100ms",
        "--count",
        "1",
        "--gpus",
        "0",
        "--fields",
        "utilization.gpu",
        "-o",
    ])
    .arg(&out);
    let o = run(c, &[("CUDA_VISIBLE_DEVICES", "1")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.lines().skip(1).all(|r| r.split(',').nth(2) == Some("0")), "{csv}");
}

/// Memory health: a pending row remap makes doctor NOT OK and names the GPU; the readings are in
/// the JSON.
#[test]
fn a_pending_row_remap_is_a_problem_naming_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = TWO_GPUS.replacen(
        "remapped_rows.uncorrectable = 0\n",
        "remapped_rows.uncorrectable = 3\nremapped_rows.pending = 1\nremapped_rows.failure = 0\n",
        1,
    );
    let (code, text) = doctor_text(dir.path(), &scenario, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("GPU 0 (GPU-00000000-0000-0000-0000-000000000000): memory repair pending"),
        "{text}"
    );
    assert!(text.contains("remapped_rows.pending 1"), "{text}");
    let (_, j) = doctor_json(dir.path(), &scenario, &[]);
    assert_eq!(j["gpus"][0]["memory_health"]["remapped_rows.uncorrectable"], 3, "{j}");
    assert_eq!(j["gpus"][0]["memory_health"]["remapped_rows.pending"], 1, "{j}");
    // A failed remap is the first thing said.
    let failed = scenario.replacen("remapped_rows.failure = 0", "remapped_rows.failure = 1", 1);
    let (_, j) = doctor_json(dir.path(), &failed, &[]);
    assert!(j["verdict"].as_str().unwrap().contains("a row remap failed"), "{j}");
    // The healthy scenario stays OK.
    let (code, text) = doctor_text(dir.path(), &TWO_GPUS.replace("lost_after = 5\n", ""), &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("remapped_rows.pending 0"), "{text}");
}

/// Eight alike H100s, as on a DGX node: `n` sections of one GPU each.
fn eight_gpus(extra: &str) -> String {
    let gpu = "[device]\nname = NVIDIA H100 80GB HBM3\narchitecture = 9\nmemory.total = 81559\n\
               memory.used = 100\nutilization.gpu = 50\ntemperature.gpu = 40\npower.draw = 300\n\
               power.limit = 700\nclocks.sm = 1980\nclocks.mem = 2619\npstate = 0\npersistence_mode = 1\n\
               mig_mode = 0\npcie.tx = 1000\npcie.rx = 2000\ntemperature.memory = 45\n\
               ecc.errors.uncorrected.volatile.total = 0\nremapped_rows.uncorrectable = 0\n\
               gpm.sm_util = 0, 60\n";
    format!("init = ok\n{extra}{}", gpu.repeat(8))
}

/// Eight GPUs fit a screen: alike GPUs share one block and long lists are cut; `--verbose` and
/// the JSON have every list in full.
#[test]
fn eight_gpus_fit_sixty_lines_and_verbose_has_the_full_lists() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = eight_gpus("");
    let (code, text) = doctor_text(dir.path(), &scenario, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.lines().count() <= 60, "{} lines:\n{text}", text.lines().count());
    assert!(text.contains("\n  GPUs 0-7\n     memory       81559 MiB\n"), "{text}");
    assert_eq!(text.matches("modes        persistence on, MIG off").count(), 1, "{text}");
    for i in 0..8 {
        assert!(text.contains(&format!("  {i}  NVIDIA H100 80GB HBM3\n")), "GPU {i}: {text}");
        assert!(text.contains(&format!("GPU-00000000-0000-0000-0000-00000000000{i}")), "{text}");
    }
    assert!(text.contains("(--verbose lists them)"), "{text}");
    assert!(!text.contains("pcie.link.gen.max"), "a long list is cut: {text}");
    assert!(text.ends_with("record without --gpus samples all 8 GPUs (0-7)\n"), "{text}");

    let mut c = gpumon_fake(dir.path(), &scenario);
    c.args(["doctor", "--verbose"]);
    let verbose = String::from_utf8(run(c, &[]).stdout).unwrap();
    assert_fits_80(&verbose);
    assert_eq!(verbose.matches("modes        persistence on, MIG off").count(), 8, "{verbose}");
    assert_eq!(verbose.matches("pcie.link.gen.max").count(), 8, "{verbose}");
    assert!(!verbose.contains("--verbose lists"), "{verbose}");

    let (_, j) = doctor_json(dir.path(), &scenario, &[]);
    let gpus = j["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 8);
    assert!(gpus.iter().all(|g| strs(&g["unsupported"]).contains(&"pcie.link.gen.max")), "{j}");
}

/// A failed field points at the warnings only when some were printed.
#[test]
fn failed_fields_point_at_warnings_only_when_there_are_some() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = gpumon_fake(dir.path(), TWO_GPUS);
    c.arg("doctor");
    let o = run(c, &[]);
    let (text, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(err.is_empty(), "{err}");
    assert!(text.contains(" failed ("), "TWO_GPUS has fields without a value: {text}");
    assert!(!text.contains("the warnings above say why"), "there are none: {text}");

    let scenario = TWO_GPUS.replacen("power.draw = 650", "power.draw = UNKNOWN", 1);
    let mut c = gpumon_fake(dir.path(), &scenario);
    c.arg("doctor");
    let o = run(c, &[]);
    let (text, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(err.contains("GPU 1: reading power.draw failed"), "{err}");
    assert!(
        text.contains("GPU 1: reading") && text.contains("(the warnings above say why)"),
        "{text}"
    );
}

/// GPM needs Hopper or newer: an H100 without it is blamed on the driver or setup, an A100 on its
/// architecture.
#[test]
fn gpm_missing_on_a_hopper_gpu_is_not_blamed_on_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let gpu = |name: &str, arch: u32| {
        format!(
            "[device]\nname = {name}\narchitecture = {arch}\nmemory.total = 81559\nmemory.used = 1\n\
             utilization.gpu = 1\ngpm = unsupported\n"
        )
    };
    let scenario =
        format!("{}{}", gpu("NVIDIA H100 80GB HBM3", 9), gpu("NVIDIA A100-SXM4-80GB", 7));
    let (_, text) = doctor_text(dir.path(), &scenario, &[]);
    let gpm: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("GPM ")).collect();
    assert_eq!(gpm.len(), 2, "{text}");
    assert!(gpm[0].contains("NVML reports none on this Hopper GPU"), "{text}");
    assert!(!text.split("\n  1  ").next().unwrap().contains("needs Hopper"), "{text}");
    assert!(gpm[1].contains("not supported (needs Hopper or newer; this GPU is Ampere)"), "{text}");
    let (_, j) = doctor_json(dir.path(), &scenario, &[]);
    assert_eq!(
        (j["gpus"][0]["architecture"].as_str(), j["gpus"][1]["architecture"].as_str()),
        (Some("Hopper"), Some("Ampere"))
    );
}

/// An older driver lacks newer NVML functions: each is named once, with the fields it reads;
/// no warning per field or GPU, and the GPU blocks do not list those fields again.
#[test]
fn a_driver_lacking_functions_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let lacking = ["nvmlDeviceGetPcieThroughput", "nvmlDeviceGetFieldValues"];
    let old = fake_nvml_lacking(dir.path(), &lacking);
    let scenario = eight_gpus("");
    let mut c = gpumon_fake(dir.path(), &scenario);
    c.arg("doctor").env("GPUMON_NVML_LIB", &old);
    let o = run(c, &[]);
    let (text, err) = (String::from_utf8(o.stdout).unwrap(), String::from_utf8(o.stderr).unwrap());
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(err.is_empty(), "no warnings: {err}");
    assert_fits_80(&text);
    assert!(text.lines().count() <= 60, "{} lines:\n{text}", text.lines().count());
    let lacks = text.split("  lacks        ").nth(1).unwrap().split("\n\n").next().unwrap();
    let lacks = lacks.split_whitespace().collect::<Vec<_>>().join(" ");
    for f in lacking {
        assert_eq!(text.matches(f).count(), 1, "{f} named once: {text}");
        assert!(lacks.contains(f), "{lacks}");
    }
    assert!(lacks.contains("not in this driver"), "{lacks}");
    assert!(text.contains("(5 not in this driver)"), "{text}");
    assert!(!text.contains("pcie.tx"), "not listed per GPU: {text}");

    let mut c = gpumon_fake(dir.path(), &scenario);
    c.args(["doctor", "--format", "json"]).env("GPUMON_NVML_LIB", &old);
    let j: serde_json::Value = serde_json::from_slice(&run(c, &[]).stdout).unwrap();
    let missing = j["nvml"]["missing_functions"].as_array().unwrap();
    assert_eq!(missing.len(), 2, "{j}");
    let pcie = missing.iter().find(|m| m["function"] == lacking[0]).unwrap();
    assert_eq!(strs(&pcie["fields"]), ["pcie.tx", "pcie.rx"], "{j}");
    let g = &j["gpus"][7];
    assert!(strs(&g["not_in_driver"]).contains(&"temperature.memory"), "{g}");
    assert!(!strs(&g["failed"]).contains(&"pcie.tx"), "{g}");
    assert!(strs(&g["supported"]).contains(&"utilization.gpu"), "{g}");
}
