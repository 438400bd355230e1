//! Work counters: `gpumon progress KEY=N` and `gpumon.progress()` from a wrapped job, the
//! `progress.KEY` columns read back by pandas, and work per second, per GPU-hour and per Wh in
//! `summarize --by phase`, `compare` (with a `--fail-if` on the change), the report and `watch`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// One GPU at a steady 300 W with an energy counter (joules, +60 per 200 ms tick).
fn scenario() -> String {
    let energy: Vec<String> = (0..400).map(|i| (1_000 + i * 60).to_string()).collect();
    format!(
        "[device]\nname = NVIDIA H100 80GB HBM3\nmemory.total = 81920\nmemory.used = 10240\nutilization.gpu = 90\n\
         power.draw = 300\npower.limit = 700\ntemperature.gpu = 50\nenergy.total = {}\n",
        energy.join(", ")
    )
}

/// The job: marks bs=32 and reports 1,000 samples/s for 15 ticks, then bs=64 at 2,000 samples/s
/// for 30 (`gpumon watch` looks in after 25: the status file's rate is over its last 2 s); the marks land just after a tick's GPU read (counted in the fake NVML's log), so each
/// tick's interval holds the work of one phase. Amounts are what is due by the clock, so the rate
/// does not depend on how often the loop runs. Then the bad reports, each refused.
const JOB: &str = r#"
import json, os, subprocess, sys, time
import gpumon

def reads():
    try:
        with open(sys.argv[1]) as f:
            return sum(1 for l in f if l.startswith("nvmlDeviceGetUtilizationRates "))
    except FileNotFoundError:
        return 0

def report(rate, until):
    t0, done = time.monotonic(), 0
    while reads() < until:
        k = int(rate * (time.monotonic() - t0)) - done
        if k > 0:
            gpumon.progress(samples=k)
            done += k
        time.sleep(0.003)

while reads() < 8:
    time.sleep(0.005)
gpumon.mark("bs=32")
report(1000, 23)
gpumon.mark("bs=64")
report(2000, 48)
watch = subprocess.run([os.environ["GPUMON_BIN"], "watch", "--once", sys.argv[2]], capture_output=True, text=True).stdout
report(2000, 53)
gpumon.mark(None, end=True)
refused = {"watch": watch}
for args in (["samples=-1"], ["samples=many"], ["Samples=1"], ["steps=1"], ["sampels=3"], ["k%s%s=1" % (chr(97 + i // 26), chr(97 + i % 26)) for i in range(65)]):
    r = subprocess.run([os.environ["GPUMON_BIN"], "progress"] + args, capture_output=True, text=True)
    refused[args[0]] = [r.returncode, r.stderr.strip()]
try:
    gpumon.progress(steps=1)
except gpumon.GpumonError as e:
    refused["python"] = str(e)
print(json.dumps(refused))
"#;

/// Record the wrapped job into `dir/run.parquet` (counting `samples`); returns the file and what
/// the job saw of its refused reports.
fn record(dir: &Path) -> (PathBuf, Value) {
    let run = dir.join("run.parquet");
    let log = dir.join("nvml.log");
    std::fs::write(dir.join("job.py"), JOB).unwrap();
    let o = gpumon_fake(dir, &scenario())
        .env("FAKE_NVML_LOG", &log)
        .env("PYTHONPATH", repo_root().join("python"))
        .env("GPUMON_BIN", assert_cmd::cargo::cargo_bin("gpumon"))
        .args(["record", "-q", "-i", "200ms", "--progress", "samples,tokens", "-o"])
        .arg(&run)
        .args(["--", "python3"])
        .arg(dir.join("job.py"))
        .arg(&log)
        .arg(&run)
        .output()
        .unwrap();
    ok(&o);
    let last = String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or_default().to_string();
    (run, serde_json::from_str(&last).unwrap_or_else(|e| panic!("job said ({e}): {last}")))
}

fn near(v: &Value, want: f64, what: &str) {
    let x = v.as_f64().unwrap_or_else(|| panic!("{what}: no number: {v}"));
    assert!((x - want).abs() <= 0.05 * want, "{what} = {x}, want {want} within 5 %");
}

#[test]
fn progress_reports_become_rates_per_phase_in_summarize_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let (run, refused) = record(dir.path());

    // Bad reports: a clear error to the caller (exit 2), the recording unaffected.
    for (k, why) in [
        ("samples=-1", "at least 0"),
        ("samples=many", "not a number"),
        ("Samples=1", "[a-z_]+"),
        ("steps=1", "--progress samples,tokens,steps"),
        ("sampels=3", "did you mean 'samples'?"),
        ("kaa=1", "more than 64"),
    ] {
        assert_eq!(refused[k][0], 2, "{k}: {refused}");
        assert!(refused[k][1].as_str().unwrap().contains(why), "{k}: {refused}");
    }
    let typo = refused["sampels=3"][1].as_str().unwrap();
    assert!(
        !typo.contains("--progress samples,tokens,sampels"),
        "no restart with the typo: {typo}"
    );
    assert!(refused["python"].as_str().unwrap().contains("'steps' was not declared"), "{refused}");
    // gpumon watch during bs=64 showed the current rate.
    let watch = refused["watch"].as_str().unwrap();
    let line =
        watch.lines().find(|l| l.contains("work samples ")).unwrap_or_else(|| panic!("{watch}"));
    let rate: f64 = line
        .split_whitespace()
        .nth(2)
        .unwrap()
        .trim_end_matches("/s")
        .replace(',', "")
        .parse()
        .unwrap();
    assert!((1500.0..2500.0).contains(&rate), "watch shows about 2,000 samples/s: {line}");

    // The columns: float64 in pandas, null before the first report, the amounts adding up.
    let py = Command::new("python3")
        .args([
            "-c",
            "import sys, json, pandas as pd; d = pd.read_parquet(sys.argv[1]); \
              print(json.dumps({'dtype': str(d['progress.samples'].dtype), 'tokens': str(d['progress.tokens'].dtype), \
              'first_null': bool(d['progress.samples'].isna().iloc[0]), 'sum': float(d['progress.samples'].sum()), \
              'tokens_null': bool(d['progress.tokens'].isna().all())}))",
        ])
        .arg(&run)
        .output()
        .unwrap();
    ok(&py);
    let cols: Value = serde_json::from_slice(&py.stdout).unwrap();
    assert_eq!(cols["dtype"], "float64", "{cols}");
    assert_eq!(cols["tokens"], "float64", "{cols}");
    assert_eq!(cols["first_null"], true, "{cols}");
    assert_eq!(cols["tokens_null"], true, "a counter never reported stays null: {cols}");
    assert!(cols["sum"].as_f64().unwrap() >= 8000.0, "3 s at 1,000/s and 3 s at 2,000/s: {cols}");

    // summarize --by phase: per-phase rates within 5 %.
    let o = gpumon()
        .args(["summarize", "--by", "phase", "--format", "json"])
        .arg(&run)
        .output()
        .unwrap();
    ok(&o);
    let v = json(&o);
    let phase =
        |l: &str| v["phases"].as_array().unwrap().iter().find(|p| p["phase"] == l).unwrap().clone();
    let (a, b) = (phase("bs=32"), phase("bs=64"));
    near(&a["progress"]["samples"]["per_s"], 1000.0, "bs=32 samples/s");
    near(&b["progress"]["samples"]["per_s"], 2000.0, "bs=64 samples/s");
    near(&b["progress"]["samples"]["per_gpu_hour"], 2000.0 * 3600.0, "bs=64 samples/GPU-hour");
    // 300 W: 1 Wh every 12 s, so 2,000 samples/s is 24,000 samples/Wh.
    near(&b["progress"]["samples"]["per_wh"], 24_000.0, "bs=64 samples/Wh");
    let total = b["progress"]["samples"]["total"].as_f64().unwrap();
    near(&b["progress"]["samples"]["total"], 2000.0 * 6.0, "bs=64 samples");
    assert!(
        v["progress"]["samples"]["total"].as_f64().unwrap() > total,
        "the whole run: {}",
        v["progress"]
    );
    let text = gpumon().args(["summarize", "--by", "phase"]).arg(&run).output().unwrap();
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("Work: samples "),
        "a line in the text output"
    );

    // compare: the rates and their change, and a check on it.
    let (p32, p64) = (format!("{}@bs=32", run.display()), format!("{}@bs=64", run.display()));
    let o = gpumon().args(["compare", "--format", "json", &p32, &p64]).output().unwrap();
    ok(&o);
    let c = json(&o);
    near(&c["runs"][0]["stats"]["progress.samples.per_s"], 1000.0, "compare: bs=32 samples/s");
    near(&c["runs"][1]["stats"]["progress.samples.per_s"], 2000.0, "compare: bs=64 samples/s");
    near(
        &c["runs"][1]["delta_pct"]["progress.samples.per_s"],
        100.0,
        "compare: bs=64 vs bs=32 samples/s change",
    );
    assert!(c["verdicts"][0].as_str().unwrap().contains("samples/s +"), "{}", c["verdicts"]);
    let slower = gpumon()
        .args(["compare", &p64, &p32, "--fail-if", "progress.samples.per_s.delta_pct < -5"])
        .output()
        .unwrap();
    assert_eq!(slower.status.code(), Some(3), "{}", String::from_utf8_lossy(&slower.stdout));
    let faster = gpumon()
        .args(["compare", &p32, &p64, "--fail-if", "progress.samples.per_s.delta_pct < -5"])
        .output()
        .unwrap();
    ok(&faster);
}

/// Two GPUs: each tick's counter cells are repeated on both rows.
const TWO_GPUS_STEADY: &str = "[device]\nname = NVIDIA H100 80GB HBM3\nmemory.total = 81920\nmemory.used = 20480\n\
     utilization.gpu = 55\npower.draw = 260\n[device]\nmemory.total = 81920\nmemory.used = 20480\nutilization.gpu = 55\n\
     power.draw = 260\n";

#[test]
fn counters_of_csv_and_parquet_recordings_count_each_tick_once() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("gpumon");
    let job = format!(
        "sleep 0.5; {0} progress samples=100; sleep 0.4; {0} progress samples=50 samples=0.5; sleep 0.4",
        bin.display()
    );
    for name in ["run.csv", "run.parquet"] {
        let run = dir.path().join(name);
        let o = gpumon_fake(dir.path(), TWO_GPUS_STEADY)
            .args(["record", "-q", "-i", "100ms", "--progress", "samples", "-o"])
            .arg(&run)
            .args(["--", "sh", "-c", &job])
            .output()
            .unwrap();
        ok(&o);
        let py = Command::new("python3")
            .args([
                "-c",
                "import sys, pandas as pd; r = pd.read_csv if sys.argv[1].endswith('.csv') else pd.read_parquet; \
                  d = r(sys.argv[1]); print(d['progress.samples'].dtype, d['progress.samples'].sum(), len(d))",
            ])
            .arg(&run)
            .output()
            .unwrap();
        ok(&py);
        let seen = String::from_utf8_lossy(&py.stdout).trim().to_string();
        assert!(
            seen.starts_with("float64 301.0 "),
            "{name}: both GPU rows carry each amount: {seen}"
        );
        let s = json(&gpumon().args(["summarize", "--format", "json"]).arg(&run).output().unwrap());
        assert_eq!(
            s["progress"]["samples"]["total"], 150.5,
            "{name}: each tick counted once: {}",
            s["progress"]
        );
        assert!(
            s["progress"]["samples"]["per_s"].as_f64().unwrap() > 0.0,
            "{name}: {}",
            s["progress"]
        );
        // convert (and so gpumon.read() in Python) keeps the columns.
        let conv = dir.path().join(format!("conv-{name}"));
        ok(&gpumon().args(["convert", "-q", "-o"]).arg(&conv).arg(&run).output().unwrap());
        let s =
            json(&gpumon().args(["summarize", "--format", "json"]).arg(&conv).output().unwrap());
        assert_eq!(s["progress"]["samples"]["total"], 150.5, "converted {name}: {}", s["progress"]);
    }
    let o = gpumon()
        .args(["record", "--progress", "samples", "-o", "-", "--format", "csv", "--count", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "no control socket a job could reach");
    let o = gpumon()
        .args(["record", "--progress", "Bad", "-o"])
        .arg(dir.path().join("x.csv"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--progress: bad counter name 'Bad'"));
}

#[test]
fn the_python_module_reports_progress_over_the_socket() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.txt");
    std::fs::write(&scenario, TWO_GPUS_STEADY).unwrap();
    let o = Command::new("python3")
        .arg(repo_root().join("tests/py/progress_module.py"))
        .arg(dir.path())
        .env("PYTHONPATH", repo_root().join("python"))
        .env("GPUMON_BIN", assert_cmd::cargo::cargo_bin("gpumon"))
        .env("GPUMON_NVML_LIB", fake_nvml())
        .env("FAKE_NVML_SCENARIO", &scenario)
        .env_remove("GPUMON_CONTROL")
        .output()
        .unwrap();
    ok(&o);
    let last = String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or_default().to_string();
    let v: Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("not JSON ({e}): {last}"));
    assert_eq!(v["summary"]["samples"]["total"], 15.0, "{v}");
    assert_eq!(v["summary"]["tokens"]["total"], 2.5, "{v}");
    assert_eq!(v["file_sum"], 5.0, "2.5 on each of the two GPU rows: {v}");
    assert!(v["refused"].as_str().unwrap().contains("'steps' was not declared"), "{v}");
}

#[test]
fn fields_lists_the_work_counter_pattern() {
    let o = gpumon().arg("fields").output().unwrap();
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("\"progress.KEY\""), "{text}");
    assert!(text.contains("record --progress samples,tokens"), "{text}");
}
