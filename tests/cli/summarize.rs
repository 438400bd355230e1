//! `gpumon summarize` and `gpumon convert`: the real nvidia-smi logs against an independent pandas
//! computation, findings on purpose-built recordings, bad inputs, checks, windows, sets and journals.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

/// The headerless log needs its columns; the interleaved ones their GPU count for pandas.
fn log_args(name: &str) -> (Vec<&'static str>, Vec<&'static str>) {
    const COLS: &str = "timestamp,utilization.gpu,memory.used";
    if name.starts_with("dst915") {
        (vec!["--columns", COLS], vec!["--columns", COLS, "--interleaved", "4"])
    } else if name.contains("h100_8gpu") {
        (vec![], vec!["--interleaved", "8"])
    } else if name.contains("titanx") {
        (vec![], vec!["--interleaved", "2"])
    } else {
        (vec![], vec![])
    }
}

fn summarize(args: &[&str], inputs: &[&Path]) -> Output {
    gpumon().arg("summarize").args(inputs).args(args).output().unwrap()
}

fn json_of(o: &Output) -> Value {
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(3),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

fn pandas(log: &Path, extra: &[&str]) -> Value {
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/summary_check.py"))
        .arg(log)
        .args(extra)
        .output()
        .expect("running python3");
    assert!(
        out.status.success(),
        "summary_check.py failed on {}:\n{}",
        log.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-9)
}

fn stat(g: &Value, name: &str) -> Option<f64> {
    g["stats"][name].as_f64()
}

#[test]
fn real_logs_agree_with_pandas() {
    let Some(logs) = shared_smi_logs() else { return };
    let mut names: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 11, "{names:?}");
    for name in &names {
        let log = logs.join(name);
        let (ours, theirs) = log_args(name);
        let mut args = vec!["--format", "json", "--tz", "UTC"];
        args.extend(ours);
        let o = summarize(&args, &[&log]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let j = json_of(&o);
        let p = pandas(&log, &theirs);
        let hosts = j["hosts"].as_array().unwrap();
        assert_eq!(hosts.len(), 1, "{name}");
        let gpus = hosts[0]["gpus"].as_array().unwrap();
        let want = p["gpus"].as_object().unwrap();
        assert_eq!(gpus.len(), want.len(), "{name}: GPU count");
        let expected_gpus = if name.contains("h100_8gpu") {
            8
        } else if name.starts_with("dst915") {
            4
        } else if name.contains("titanx") {
            2
        } else {
            1
        };
        assert_eq!(gpus.len(), expected_gpus, "{name}");
        for g in gpus {
            let label = g["gpu"].as_str().unwrap();
            let w = &want[label];
            let pairs = [
                ("samples", "samples"),
                ("util_mean", "utilization.gpu.mean"),
                ("util_p50", "utilization.gpu.p50"),
                ("util_p95", "utilization.gpu.p95"),
                ("util_max", "utilization.gpu.max"),
                ("idle_pct", "utilization.gpu.idle_pct"),
                ("mem_max", "memory.used.max"),
                ("energy_wh", "energy_wh"),
                ("gaps", "gaps"),
            ];
            for (theirs, ours) in pairs {
                match (w[theirs].as_f64(), stat(g, ours)) {
                    (None, None) => {}
                    // pandas holds timestamps as float seconds: energy agrees to ~1e-9, not exactly.
                    (Some(a), Some(b)) => {
                        assert!(
                            close(a, b, 1e-7),
                            "{name} GPU {label} {ours}: pandas {a}, gpumon {b}"
                        )
                    }
                    (a, b) => panic!("{name} GPU {label} {ours}: pandas {a:?}, gpumon {b:?}"),
                }
            }
            // The interval is the mean step inside the median's 1/128-wide histogram bucket.
            if let Some(a) = w["interval_s"].as_f64() {
                let b = stat(g, "interval_s").unwrap();
                assert!(close(a, b, 0.01), "{name} GPU {label} interval: pandas {a}, gpumon {b}");
            }
            if w.get("energy_wh").is_some() {
                assert_eq!(g["energy_method"], "power", "{name}");
            }
        }
        let warnings = j["inputs"][0]["warnings"].as_array().unwrap();
        if name.starts_with("fridanl") {
            assert!(
                warnings.iter().any(|w| w.as_str().unwrap().contains("cut short")),
                "{name}: {warnings:?}"
            );
            assert!(String::from_utf8_lossy(&o.stderr).contains("warning:"));
        }
        if name.contains("titanx_2gpu") {
            assert!(
                warnings.iter().any(|w| w.as_str().unwrap().contains("NUL bytes")),
                "{name}: {warnings:?}"
            );
        }
    }
}

/// pyarrow-written Parquet in many page layouts (v1 and v2 pages, snappy, zstd and none,
/// dictionaries that fall back to PLAIN, nulls, many pages and row groups) summarizes to the same
/// figures as the same table in LZ4 pages.
#[test]
fn pyarrow_page_layouts_read_the_same_as_the_parquet_crate() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/pqvariants.py"))
        .arg(dir.path())
        .output()
        .expect("running python3");
    assert!(out.status.success(), "pqvariants.py: {}", String::from_utf8_lossy(&out.stderr));
    let names: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    let figures = |name: &str| {
        let mut j = json_of(&summarize(
            &["--host", "h", "--format", "json"],
            &[&dir.path().join(format!("{name}.parquet"))],
        ));
        j.as_object_mut().unwrap().remove("inputs");
        j
    };
    let mut reference = None;
    for name in &names {
        let j = figures(name);
        if name.starts_with("lz4") {
            assert_eq!(j["hosts"][0]["gpus"].as_array().map(Vec::len), Some(8), "{name}: {j}");
            reference = Some((name.clone(), j));
            continue;
        }
        let (rname, r) = reference.as_ref().unwrap();
        assert!(j == *r, "{name} differs from {rname}:\n{j}\n{r}");
    }
}

#[test]
fn real_logs_a_directory_of_logs_is_one_host_per_log_and_a_bad_one_fails_all() {
    let Some(logs) = shared_smi_logs() else { return };
    let o = summarize(&["--format", "json", "--tz", "UTC"], &[&logs]);
    assert_eq!(o.status.code(), Some(2), "the headerless log without --columns fails the run");
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("dst915") && e.contains("--columns") && e.lines().count() == 1, "{e}");
    let o = summarize(
        &["--format", "json", "--tz", "UTC", "--columns", "timestamp,utilization.gpu,memory.used"],
        &[&logs],
    );
    let j = json_of(&o);
    assert_eq!(j["hosts"].as_array().unwrap().len(), 11);
    assert_eq!(j["inputs"].as_array().unwrap().len(), 11);
    assert_eq!(
        j["all"]["gpus"]["samples"].as_f64().unwrap() as u64,
        1518 + 41645 + 3314 + 45632 + 1216 + 2714 + 388 + 104 + 224 + 1639 + 2619
    );
    // --host files every log under one name.
    let o = summarize(
        &["--format", "json", "--host", "box"],
        &[&logs.join("eobo0530_vlm_optimization__gpu_log.csv")],
    );
    assert_eq!(json_of(&o)["hosts"][0]["host"], "box");
}

const HEALTHY: &str = "init = ok
[device]
name = NVIDIA H100 80GB HBM3
memory.total = 81559
memory.used = 48000, 49000, 50000
utilization.gpu = 90, 95, 88, 92
temperature.gpu = 60
power.draw = 500
power.limit = 700
clocks_event_reasons.active = 0
[device]
name = NVIDIA H100 80GB HBM3
memory.total = 81559
memory.used = 47000
utilization.gpu = 91, 89, 94
temperature.gpu = 61
power.draw = 510
power.limit = 700
clocks_event_reasons.active = 0
";

const TROUBLED: &str = "init = ok
[device]
name = NVIDIA H100 80GB HBM3
memory.total = 81559
memory.used = 79000, 80000, 80500
utilization.gpu = 95
temperature.gpu = 88
power.draw = 690
power.limit = 700
clocks_event_reasons.active = 0x20, 0x40, 0x4, 0x24
[device]
name = NVIDIA H100 80GB HBM3
memory.total = 81559
memory.used = 30000
utilization.gpu = 30, 35, 25
temperature.gpu = 50
power.draw = 200
power.limit = 700
clocks_event_reasons.active = 0
";

/// Record 10 ticks of `scenario` and summarize them as JSON. Host figures come from this machine,
/// so the swap rule is switched off here (it is tested with a fixture below).
fn record_and_summarize(dir: &Path, scenario: &str) -> Value {
    let out = dir.join("run.parquet");
    let o = gpumon_fake(dir, scenario)
        .args(["record", "-q", "-i", "100ms", "--count", "10", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    json_of(&summarize(&["--format", "json", "--threshold", "swap_mib=1000000000"], &[&out]))
}

fn rules(j: &Value) -> Vec<(String, Option<String>)> {
    j["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["findings"].as_array().unwrap().iter())
        .map(|f| (f["rule"].as_str().unwrap().to_string(), f["gpu"].as_str().map(str::to_string)))
        .collect()
}

#[test]
fn findings_fire_on_a_troubled_recording_and_stay_silent_on_a_healthy_one() {
    let dir = tempfile::tempdir().unwrap();
    let j = record_and_summarize(dir.path(), HEALTHY);
    assert_eq!(rules(&j), vec![], "{}", j["hosts"][0]["findings"]);
    let g0 = &j["hosts"][0]["gpus"][0];
    assert_eq!(stat(g0, "samples"), Some(10.0));
    assert_eq!(g0["name"], "NVIDIA H100 80GB HBM3");
    assert!(g0["uuid"].as_str().unwrap().starts_with("GPU-"));

    let dir = tempfile::tempdir().unwrap();
    let j = record_and_summarize(dir.path(), TROUBLED);
    let r = rules(&j);
    for want in [
        ("oom_risk", Some("0")),
        ("thermal_throttling", Some("0")),
        ("power_throttling", None),
        ("imbalance", None),
    ] {
        assert!(
            r.iter().any(|(id, g)| id == want.0 && g.as_deref() == want.1),
            "{want:?} missing from {r:?}"
        );
    }
    assert!(!r.iter().any(|(id, g)| id == "oom_risk" && g.as_deref() == Some("1")), "{r:?}");
    let g0 = &j["hosts"][0]["gpus"][0];
    // 0x20, 0x40, 0x4, 0x24, then 0x24 repeats: thermal in 9 of 10 samples, power cap in 8.
    assert_eq!(stat(g0, "throttle.thermal_pct"), Some(90.0));
    assert_eq!(stat(g0, "throttle.sw_power_cap_pct"), Some(80.0));
    assert_eq!(stat(g0, "throttle.hw_thermal_slowdown_pct"), Some(10.0));
    let f = j["hosts"][0]["findings"].as_array().unwrap();
    // The power cap (sw_power_cap only) is one info line for the host, naming the GPU.
    let cap = f.iter().find(|f| f["rule"] == "power_throttling").unwrap();
    assert_eq!(cap["severity"], "info", "{cap}");
    assert!(cap["evidence"].as_str().unwrap().contains("GPU 0 80.0%"), "{cap}");
    let oom = f.iter().find(|f| f["rule"] == "oom_risk").unwrap();
    assert_eq!(oom["severity"], "warning");
    assert!(oom["evidence"].as_str().unwrap().contains("80500"), "{oom}");
    assert!(oom["fix"].as_str().unwrap().contains("gradient accumulation"));
}

/// A gpumon CSV with host columns, in the header style of older gpumon versions (`name [unit]`, still
/// read): an input-bound GPU 0 (20-40 % while a core is pegged), an unused
/// GPU 1, and swap in use.
fn host_fixture(dir: &Path) -> PathBuf {
    let p = dir.join("node.csv");
    let mut s = String::from(
        "timestamp,host,index,uuid,utilization.gpu [%],memory.used [MiB],memory.total [MiB],power.draw [W],energy.total [J],cpu.util [%],cpu.util.max_core [%],mem.total [MiB],mem.used [MiB],swap.used [MiB],missed\n",
    );
    for t in 0..120 {
        let ts = format!("2026-01-05T10:{:02}:{:02}.000Z", t / 60, t % 60);
        let core = if t % 10 == 0 { 40.0 } else { 100.0 };
        let util = 20 + (t % 3) * 10;
        // energy counter: 150 J per second, reset to 0 at t = 60 (driver reload)
        let e0 = if t < 60 { 1000 + 150 * t } else { 150 * (t - 60) };
        s += &format!(
            "{ts},node7,0,GPU-a,{util},30000,81559,150,{e0},12.5,{core},515000,200000,{},0\n",
            2048 + t
        );
        s += &format!(
            "{ts},node7,1,GPU-b,0,4,81559,60,{},12.5,{core},515000,200000,{},0\n",
            500 * t,
            2048 + t
        );
    }
    std::fs::write(&p, s).unwrap();
    p
}

#[test]
fn input_bound_unused_and_swap_from_a_csv_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let csv = host_fixture(dir.path());
    let j = json_of(&summarize(&["--format", "json"], &[&csv]));
    let r = rules(&j);
    assert!(r.contains(&("input_bound".into(), Some("0".into()))), "{r:?}");
    assert!(r.contains(&("unused_gpu".into(), Some("1".into()))), "{r:?}");
    assert!(r.contains(&("host_swap".into(), None)), "{r:?}");
    assert!(!r.iter().any(|(id, _)| id == "imbalance"), "an unused GPU is not an imbalance: {r:?}");
    let h = &j["hosts"][0];
    assert_eq!(h["host"], "node7");
    assert_eq!(h["stats"]["ticks"], 120.0, "host figures once per tick, not per GPU row");
    assert_eq!(h["stats"]["swap.used.max"], 2048.0 + 119.0);
    assert_eq!(h["stats"]["cpu.util.max_core.p95"], 100.0);
    let g0 = &h["gpus"][0];
    assert_eq!(stat(g0, "input_bound_pct"), Some(90.0));
    // Counter: 59 steps of 150 J, a reset (skipped), 59 more steps of 150 J.
    assert_eq!(g0["energy_method"], "counter");
    assert!(close(stat(g0, "energy_wh").unwrap(), 118.0 * 150.0 / 3600.0, 1e-9), "{}", g0["stats"]);
    // A threshold override silences the rule.
    let j =
        json_of(&summarize(&["--format", "json", "--threshold", "input_bound_pct=95"], &[&csv]));
    assert!(!rules(&j).iter().any(|(id, _)| id == "input_bound"));
    assert_eq!(j["thresholds"]["input_bound_pct"], 95.0);
}

#[test]
fn fail_if_checks_exit_codes() {
    let log = smi_fixture("plain.csv");
    let o = summarize(
        &["-q", "--fail-if", "utilization.gpu.mean < 1", "--fail-if", "all.energy_wh > 1000000"],
        &[&log],
    );
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let o = summarize(
        &["--fail-if", "utilization.gpu.mean > 1", "--fail-if", "memory.used.max < 1"],
        &[&log],
    );
    assert_eq!(o.status.code(), Some(3));
    let e = String::from_utf8_lossy(&o.stderr);
    let failed: Vec<&str> = e.lines().filter(|l| l.contains("check failed")).collect();
    assert_eq!(failed.len(), 1, "one line per failed check: {e}");
    assert!(failed[0].contains("utilization.gpu.mean") && failed[0].contains("GPU 0"), "{e}");
    assert!(!o.stdout.is_empty(), "the report is printed before the checks fail");
    // A statistic the data lacks fails rather than passes.
    let o = summarize(&["--fail-if", "temperature.gpu.max > 90"], &[&log]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not in the data"));
    for bad in
        ["utilization.gpu.mean <", "utilization.gpu.mean ~ 3", "utilisation.gpu.mean < 3", "< 5"]
    {
        let o = summarize(&["--fail-if", bad], &[&log]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--fail-if"), "{bad}");
    }
    let o = summarize(&["--threshold", "nope=3"], &[&log]);
    assert_eq!(o.status.code(), Some(2));
}

fn expect_usage_error(o: &Output, file: &str) {
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{file}: {e}");
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert!(e.contains(file), "the error names {file}: {e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn bad_inputs_are_one_line_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("empty.csv"), b"").unwrap();
    std::fs::write(d.join("garbage.bin"), [0x00u8, 0x9f, 0x92, 0x96, 0xff, 0x01, 0x02].repeat(100))
        .unwrap();
    std::fs::write(d.join("other.csv"), "name,age\nalice,30\nbob,41\n").unwrap();
    std::fs::create_dir(d.join("nothing")).unwrap();
    std::fs::write(d.join("nothing/readme.txt"), "hello\n").unwrap();
    // A real gpumon Parquet file, cut in half.
    let full = d.join("full.parquet");
    let o = gpumon_fake(d, TWO_GPUS)
        .args(["record", "-q", "-i", "100ms", "--count", "5", "-o"])
        .arg(&full)
        .output()
        .unwrap();
    assert!(o.status.success());
    let bytes = std::fs::read(&full).unwrap();
    std::fs::write(d.join("cut.parquet"), &bytes[..bytes.len() / 2]).unwrap();
    for name in
        ["empty.csv", "garbage.bin", "other.csv", "nothing", "cut.parquet", "missing.parquet"]
    {
        expect_usage_error(&summarize(&[], &[&d.join(name)]), name);
    }
    // One bad input among good ones fails the run.
    expect_usage_error(&summarize(&[], &[&full, &d.join("other.csv")]), "other.csv");
    // Unreadable: as root, run as nobody (root reads anything).
    let secret =
        tempfile::Builder::new().prefix("gpumon-perm").tempdir_in(std::env::temp_dir()).unwrap();
    let path = secret.path().join("secret.csv");
    std::fs::copy(smi_fixture("plain.csv"), &path).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(secret.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("gpumon");
    // SAFETY: geteuid only reads this process's user id.
    let o = if unsafe { libc::geteuid() } == 0 {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .arg("summarize")
            .arg(&path)
            .output()
            .unwrap()
    } else {
        Command::new(&bin).arg("summarize").arg(&path).output().unwrap()
    };
    expect_usage_error(&o, "secret.csv");
    assert!(String::from_utf8_lossy(&o.stderr).contains("ermission denied"));
}

#[test]
fn a_rotated_set_and_a_crash_journal_are_read_without_changing_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.parquet");
    // Two runs to the same name: the second (--append) becomes a timestamped piece of the set.
    for _ in 0..2 {
        let o = gpumon_fake(dir.path(), TWO_GPUS)
            .args(["record", "-q", "--append", "-i", "100ms", "--count", "5", "-o"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success());
        std::thread::sleep(Duration::from_millis(1100));
    }
    // A third run killed mid-way leaves a journal and a partial file.
    let child = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-q", "--append", "-i", "100ms", "--flush", "0", "-o"])
        .arg(&out)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill once the journal holds a few flushed ticks (polling, so a slow machine only waits longer).
    let journal_len = || -> u64 {
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".journal"))
            .map(|e| e.metadata().map_or(0, |m| m.len()))
            .sum()
    };
    let t0 = std::time::Instant::now();
    let mut last = 0;
    let mut grew = 0;
    while grew < 4 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
        let now = journal_len();
        grew += u32::from(now > last && last > 0);
        last = now;
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait_with_output();
    let listing = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name() != "scenario.txt")
            .map(|e| {
                (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let before = listing(dir.path());
    let journals = before.iter().filter(|(n, _)| n.ends_with(".journal")).count();
    assert_eq!(journals, 1, "{:?}", before.iter().map(|x| &x.0).collect::<Vec<_>>());
    let j = json_of(&summarize(&["--format", "json"], &[&out]));
    assert_eq!(
        listing(dir.path()),
        before,
        "summarize must not modify, recover or delete anything"
    );
    let kinds: Vec<&str> =
        j["inputs"].as_array().unwrap().iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "parquet").count(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "journal").count(), 1, "{kinds:?}");
    let rows: u64 =
        j["inputs"].as_array().unwrap().iter().map(|i| i["rows"].as_u64().unwrap()).sum();
    // Every row is a sample or, for the GPU that fell off the bus, an empty row (a gap).
    let gpus = j["hosts"][0]["gpus"].as_array().unwrap();
    let samples: f64 =
        gpus.iter().map(|g| stat(g, "samples").unwrap() + stat(g, "empty_rows").unwrap()).sum();
    assert_eq!(samples as u64, rows);
    assert!(rows > 20, "the journal's rows count too ({rows})");
    // The gaps between the runs are seen as gaps.
    assert!(stat(&j["hosts"][0]["gpus"][0], "gaps").unwrap() >= 2.0);
}

#[test]
fn real_logs_windows_cut_the_data() {
    let Some(logs) = shared_smi_logs() else { return };
    let log = logs.join("shougangu_balance-budget__gpu_usage.csv");
    let all = json_of(&summarize(&["--format", "json", "--tz", "UTC"], &[&log]));
    let n = stat(&all["hosts"][0]["gpus"][0], "samples").unwrap();
    assert_eq!(n, 1639.0);
    let w = json_of(&summarize(
        &["--format", "json", "--tz", "UTC", "--since", "+1h", "--until", "+2h"],
        &[&log],
    ));
    let g = &w["hosts"][0]["gpus"][0];
    // 15 s interval: 240 samples in an hour.
    assert!((239.0..=241.0).contains(&stat(g, "samples").unwrap()), "{}", g["stats"]);
    assert!(stat(g, "span_s").unwrap() < 3600.0);
    assert_eq!(w["window"]["since"], "2026-02-02T02:07:37.100Z");
    assert_eq!(w["window"]["rows_left_out"].as_f64().unwrap() + stat(g, "samples").unwrap(), n);
    let w = json_of(&summarize(
        &[
            "--format",
            "json",
            "--tz",
            "UTC",
            "--skip-warmup",
            "10m",
            "--until",
            "2026-02-02 01:27:37",
        ],
        &[&log],
    ));
    assert_eq!(stat(&w["hosts"][0]["gpus"][0], "samples"), Some(40.0));
    let w = json_of(&summarize(&["--format", "json", "--tz", "UTC", "--since", "-30m"], &[&log]));
    assert_eq!(stat(&w["hosts"][0]["gpus"][0], "samples"), Some(120.0));
    let o = summarize(&["--since", "2030-01-01T00:00:00Z"], &[&log]);
    assert_eq!(o.status.code(), Some(2), "an empty window is an error");
    assert_eq!(summarize(&["--since", "soon"], &[&log]).status.code(), Some(2));
}

#[test]
fn real_logs_table_markdown_and_csv_reports() {
    let Some(logs) = shared_smi_logs() else { return };
    let log =
        logs.join("grantwilkins_training_profile__h100_8gpu_power-trace_2025-07-26-23-32-09.csv");
    let o = summarize(&["--tz", "UTC"], &[&log]);
    assert!(o.status.success());
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(t.contains("Host grantwilkins") && t.contains("imbalance"), "{t}");
    for l in t.lines() {
        assert!(l.chars().count() <= 80, "wider than 80 columns: {l:?}");
    }
    let o = summarize(&["--tz", "UTC", "--format", "markdown"], &[&log]);
    let m = String::from_utf8(o.stdout).unwrap();
    assert!(m.contains("| GPU | name | samples") && m.contains("### Findings"), "{m}");
    let o = summarize(&["--tz", "UTC", "--format", "csv"], &[&log]);
    let c = String::from_utf8(o.stdout).unwrap();
    assert!(c.starts_with("scope,host,gpu,statistic,value,unit\n"));
    assert!(
        c.lines().any(|l| l.starts_with("gpu,") && l.contains(",7,utilization.gpu.mean,")),
        "{c}"
    );
    assert!(c.lines().any(|l| l.starts_with("all_gpus,,,energy_wh,")));
}

#[test]
fn real_logs_convert_a_log_to_typed_parquet_and_back() {
    let Some(logs) = shared_smi_logs() else { return };
    let dir = tempfile::tempdir().unwrap();
    let log = logs.join("yqg9651_cuda_test__h800_sxm_random_gemm_bf16.csv");
    let out = dir.path().join("h800.parquet");
    let o = gpumon().args(["convert", "--tz", "UTC", "-o"]).arg(&out).arg(&log).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = readback(&out);
    let pa = &r["pyarrow"];
    assert_eq!(pa["rows"], 1518);
    assert_eq!(pa["types"]["timestamp"], "timestamp[us, tz=UTC]");
    assert_eq!(pa["types"]["utilization.gpu"], "int16");
    assert_eq!(pa["types"]["memory.used"], "int32");
    assert_eq!(pa["types"]["power.draw"], "double");
    assert_eq!(pa["types"]["clocks_event_reasons.active"], "int64");
    assert_eq!(pa["types"]["pstate"], "string");
    assert_eq!(pa["columns"]["host"][0], "yqg9651_cuda_test__h800_sxm_random_gemm_bf16");
    assert_eq!(pa["columns"]["name"][0], "NVIDIA H800");
    assert_eq!(pa["file_meta"]["gpumon.hostname"], "yqg9651_cuda_test__h800_sxm_random_gemm_bf16");
    assert_eq!(r["duckdb"]["types"]["utilization.gpu"], "SMALLINT");
    // The converted file summarizes like the log.
    let a = json_of(&summarize(&["--format", "json", "--tz", "UTC"], &[&log]));
    let b = json_of(&summarize(&["--format", "json"], &[&out]));
    for s in [
        "samples",
        "utilization.gpu.mean",
        "utilization.gpu.p95",
        "memory.used.max",
        "energy_wh",
        "throttle.sw_power_cap_pct",
    ] {
        assert_eq!(
            a["hosts"][0]["gpus"][0]["stats"][s], b["hosts"][0]["gpus"][0]["stats"][s],
            "{s}"
        );
    }
    // The interleaved 8-GPU log becomes ticks of 8 rows sharing one timestamp.
    let log8 =
        logs.join("grantwilkins_training_profile__h100_8gpu_power-trace_2025-07-26-23-32-09.csv");
    let csv = dir.path().join("h100.csv");
    let o = gpumon()
        .args(["convert", "-q", "--tz", "UTC", "-o"])
        .arg(&csv)
        .arg(&log8)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = readback(&csv);
    assert_eq!(r["pandas"]["rows"], 45632);
    let ts = r["pandas"]["columns"]["timestamp"].as_array().unwrap();
    let idx = r["pandas"]["columns"]["index"].as_array().unwrap();
    assert_eq!(
        idx[..8].iter().map(|v| v.as_u64().unwrap()).collect::<Vec<_>>(),
        (0..8).collect::<Vec<_>>()
    );
    assert!(ts[..8].iter().all(|t| t == &ts[0]) && ts[8] != ts[0]);
    // Writing over an input is refused.
    let o = gpumon().args(["convert", "-o"]).arg(&out).arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// `--gpus` selects GPUs in summarize, report and convert; the GPU count of an interleaved
/// nvidia-smi log has its own flag, `--interleaved-gpus`.
#[test]
fn real_logs_gpus_selects_gpus_and_interleaved_gpus_counts_them() {
    let Some(logs) = shared_smi_logs() else { return };
    let log =
        logs.join("grantwilkins_training_profile__h100_8gpu_power-trace_2025-07-26-23-32-09.csv");
    let gpus = |j: &Value| -> Vec<String> {
        j["hosts"][0]["gpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["gpu"].as_str().unwrap().to_string())
            .collect()
    };
    let all = json_of(&summarize(&["--format", "json", "--tz", "UTC"], &[&log]));
    assert_eq!(gpus(&all).len(), 8);
    let two = json_of(&summarize(&["--format", "json", "--tz", "UTC", "--gpus", "0,1"], &[&log]));
    assert_eq!(gpus(&two), ["0", "1"]);
    // The selected GPUs' statistics are those of the full summary.
    for k in 0..2 {
        assert_eq!(two["hosts"][0]["gpus"][k]["stats"], all["hosts"][0]["gpus"][k]["stats"]);
    }
    let three = json_of(&summarize(&["--format", "json", "--tz", "UTC", "--id", "3"], &[&log]));
    assert_eq!(gpus(&three), ["3"]);
    // The interleaving count under its own name still folds the log into that many GPUs.
    let four = json_of(&summarize(
        &["--format", "json", "--tz", "UTC", "--interleaved-gpus", "4"],
        &[&log],
    ));
    assert_eq!(gpus(&four), ["0", "1", "2", "3"]);
    let o = summarize(&["--gpus", "9"], &[&log]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no rows of the GPUs --gpus selects"));

    // convert and report keep the same rows.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gpu1.parquet");
    let o = gpumon()
        .args(["convert", "-q", "--tz", "UTC", "--gpus", "1", "-o"])
        .arg(&out)
        .arg(&log)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = readback(&out);
    let idx = r["pyarrow"]["columns"]["index"].as_array().unwrap();
    assert_eq!(idx.len(), 45632 / 8);
    assert!(idx.iter().all(|i| i == 1), "convert --gpus 1 keeps GPU 1's rows only");
    let html = dir.path().join("r.html");
    let o = gpumon()
        .args(["report", "--tz", "UTC", "--gpus", "0,1", "-o"])
        .arg(&html)
        .arg(&log)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    let start = page.find(r#"id="gpumon-summary">"#).unwrap() + r#"id="gpumon-summary">"#.len();
    let embedded: Value =
        serde_json::from_str(&page[start..start + page[start..].find("</script>").unwrap()])
            .unwrap();
    assert_eq!(gpus(&embedded), ["0", "1"]);
}

/// `--tz` in any case, IANA names, fixed offsets.
#[test]
fn real_logs_tz_accepts_any_case_and_fixed_offsets() {
    let Some(logs) = shared_smi_logs() else { return };
    let log = logs.join("shougangu_balance-budget__gpu_usage.csv");
    let start = |tz: &str| -> i64 {
        let j = json_of(&summarize(&["--format", "json", "--tz", tz], &[&log]));
        chrono::DateTime::parse_from_rfc3339(j["start"].as_str().unwrap()).unwrap().timestamp()
    };
    let utc = start("UTC");
    assert_eq!(start("utc"), utc);
    assert_eq!(start("Z"), utc);
    assert_eq!(start("+02:00"), utc - 7200);
    assert_eq!(start("-0530"), utc + 19800);
    // February: Berlin is UTC+1.
    assert_eq!(start("europe/berlin"), utc - 3600);
    assert_eq!(start("Europe/Berlin"), utc - 3600);
    let o = summarize(&["--tz", "Mars/Olympus_Mons"], &[&log]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown time zone"));
    // --since in the same zone.
    let j = json_of(&summarize(
        &["--format", "json", "--tz", "+02:00", "--since", "2026-02-02 05:00:00"],
        &[&log],
    ));
    assert_eq!(j["window"]["since"], "2026-02-02T03:00:00.000Z", "{}", j["window"]);
}
