//! What utilization.gpu hides, through the real binary and the fake NVML: GPM counters in CSV,
//! Parquet and Prometheus (null on a GPU without GPM), Xid events in the events file and explained
//! by `summarize`, per-process utilization and per-user totals, the findings that use them, the
//! doctor's GPM line and the report's GPM chart with its event marks.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::*;
use crate::prom::{Recorder, listen_cmd};

/// GPU 0 an H100 with scripted GPM (a sample failing at GPM tick 3, the metrics call at tick 6);
/// GPU 1 without GPM.
const GPM_TWO: &str = "
init = ok
[device]
name = NVIDIA H100 80GB HBM3
memory.total = 81559
memory.used = 1000
utilization.gpu = 90
gpm.sm_util = 0, 10.5, 20.25, 30, 40, 50, 60, 70, 80
gpm.sm_occupancy = 0, 5
gpm.any_tensor_util = 0, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5
gpm.dram_bw_util = 0, 33.5
gpm.fp16_util = 0, 11
gpm.fp32_util = 0, 12
gpm.fp64_util = 0, 0.5
gpm.pcie_tx_per_sec = 0, 100.25
gpm.pcie_rx_per_sec = 0, 2048.5
gpm.nvlink_total_tx_per_sec = 0, 300
gpm.nvlink_total_rx_per_sec = 0, 400
gpm.fail_at = 3
gpm.metrics_fail_at = 6
[device]
name = NVIDIA A100-SXM4-80GB
memory.total = 81920
memory.used = 500
utilization.gpu = 40
gpm = unsupported
";

fn ok(o: &Output) {
    assert!(o.status.success(), "gpumon failed: {}", String::from_utf8_lossy(&o.stderr));
}

fn record(dir: &Path, scenario: &str, out: &str, extra: &[&str]) -> Output {
    let o = gpumon_fake(dir, scenario)
        .args(["record", "-q", "-i", "200ms", "-o"])
        .arg(dir.join(out))
        .args(extra)
        .output()
        .unwrap();
    ok(&o);
    o
}

/// A column by field name (older CSV headers carried the unit: `sm.active [%]`).
fn column<'a>(cols: &'a Value, col: &str) -> &'a Vec<Value> {
    let m = cols.as_object().unwrap();
    let key = m
        .keys()
        .find(|k| *k == col || k.strip_prefix(col).is_some_and(|r| r.starts_with(" [")))
        .unwrap_or_else(|| panic!("no column {col} in {:?}", m.keys()));
    m[key].as_array().unwrap()
}

/// The values of `col` on the rows of GPU `gpu`, from readback's column lists.
fn gpu_column(cols: &Value, col: &str, gpu: u64) -> Vec<Value> {
    let idx = column(cols, "index");
    column(cols, col)
        .iter()
        .zip(idx)
        .filter(|(_, i)| i.as_u64() == Some(gpu))
        .map(|(v, _)| v.clone())
        .collect()
}

fn nums(v: &[Value]) -> Vec<Option<f64>> {
    v.iter().map(Value::as_f64).collect()
}

/// Row t gets element t of each GPM sequence (metrics of GPM samples t-1 and t); row 0 has no
/// interval; the failed sample at tick 3 empties row 3 and row 4 spans ticks 2..4; the failed
/// metrics call empties row 6.
fn expected_sm() -> Vec<Option<f64>> {
    vec![None, Some(10.5), Some(20.25), None, Some(40.0), Some(50.0), None, Some(70.0)]
}

#[test]
fn gpm_values_come_out_exactly_and_a_gpu_without_gpm_is_null() {
    let dir = tempfile::tempdir().unwrap();
    for out in ["run.csv", "run.parquet"] {
        record(dir.path(), GPM_TWO, out, &["--count", "8"]);
        let r = readback(&dir.path().join(out));
        let cols =
            if out.ends_with(".csv") { &r["pandas"]["columns"] } else { &r["pyarrow"]["columns"] };
        assert_eq!(nums(&gpu_column(cols, "sm.active", 0)), expected_sm(), "{out}");
        let tensor = nums(&gpu_column(cols, "tensor.active", 0));
        assert_eq!(
            tensor,
            vec![None, Some(1.5), Some(2.5), None, Some(4.5), Some(5.5), None, Some(7.5)],
            "{out}"
        );
        for (col, want) in [
            ("sm.occupancy", 5.0),
            ("dram.active", 33.5),
            ("fp16.active", 11.0),
            ("fp32.active", 12.0),
            ("fp64.active", 0.5),
            ("pcie.tx.bytes", 100.25),
            ("pcie.rx.bytes", 2048.5),
            ("nvlink.tx.bytes", 300.0),
            ("nvlink.rx.bytes", 400.0),
        ] {
            assert_eq!(gpu_column(cols, col, 0)[1].as_f64(), Some(want), "{out} {col}");
            let gpu1 = gpu_column(cols, col, 1);
            assert!(
                gpu1.len() == 8 && gpu1.iter().all(Value::is_null),
                "{out} {col}: no GPM on GPU 1, never 0: {gpu1:?}"
            );
        }
        assert!(
            gpu_column(cols, "utilization.gpu", 1).iter().all(|v| v.as_f64() == Some(40.0)),
            "GPU 1 otherwise intact"
        );
        if out.ends_with(".parquet") {
            assert_eq!(r["pyarrow"]["types"]["sm.active"], "double");
            assert_eq!(r["pyarrow"]["field_meta"]["pcie.rx.bytes"]["unit"], "MiB/s");
        } else {
            assert_eq!(r["pandas"]["dtypes"]["sm.active"], "float64");
        }
        let _ = std::fs::remove_file(dir.path().join("scenario.txt"));
    }
}

#[test]
fn gpm_aggregates_like_other_gauges_with_a_max_companion() {
    let dir = tempfile::tempdir().unwrap();
    // Five sub-samples per row: row 0 holds GPM ticks 0..4 (values of ticks 1..4), row 1 ticks 5..9.
    let s = "init = ok\n[device]\nname = NVIDIA H100 80GB HBM3\nutilization.gpu = 50\n\
             gpm.sm_util = 0, 10, 20, 30, 40, 50, 60, 70, 80, 90\n";
    let o = gpumon_fake(dir.path(), s)
        .args(["record", "-q", "-i", "1s", "--sample-every", "200ms", "--count", "2", "-o"])
        .arg(dir.path().join("agg.csv"))
        .output()
        .unwrap();
    ok(&o);
    let r = readback(&dir.path().join("agg.csv"));
    let c = &r["pandas"]["columns"];
    assert_eq!(nums(&gpu_column(c, "sm.active", 0)), vec![Some(25.0), Some(70.0)]);
    assert_eq!(nums(&gpu_column(c, "sm.active.max", 0)), vec![Some(40.0), Some(90.0)]);
}

/// Scrape `/metrics` of a recorder until it has served `ticks` ticks.
fn scrape(dir: &Path, scenario: &str, ticks: u64) -> String {
    let rec = Recorder::start(listen_cmd(dir, scenario, "200ms", &["--duration", "30s"]));
    let body = rec.wait_ticks(ticks);
    rec.finish();
    body
}

#[test]
fn prometheus_serves_gpm_in_base_units_and_nothing_for_a_gpu_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let s = "init = ok\n[device]\nname = NVIDIA H100 80GB HBM3\nutilization.gpu = 90\n\
             gpm.sm_util = 0, 42.5\ngpm.any_tensor_util = 0, 12.5\ngpm.pcie_rx_per_sec = 0, 2048\n\
             events = none\n\
             [device]\nname = NVIDIA A100-SXM4-80GB\nutilization.gpu = 40\ngpm = unsupported\n";
    let body = scrape(dir.path(), s, 3);
    let line = |name: &str, gpu: &str| {
        body.lines()
            .find(|l| l.starts_with(&format!("{name}{{")) && l.contains(&format!("gpu=\"{gpu}\"")))
            .map(|l| l.rsplit(' ').next().unwrap().to_string())
    };
    assert_eq!(line("gpumon_gpu_sm_active_ratio", "0").as_deref(), Some("0.425"), "{body}");
    assert_eq!(line("gpumon_gpu_tensor_active_ratio", "0").as_deref(), Some("0.125"));
    assert_eq!(line("gpumon_gpu_gpm_pcie_rx_bytes_per_second", "0").as_deref(), Some("2147483648"));
    assert_eq!(line("gpumon_gpu_xid_events", "0").as_deref(), Some("0"), "watched, none seen");
    assert_eq!(
        line("gpumon_gpu_sm_active_ratio", "1"),
        None,
        "no GPM on GPU 1: no sample, never 0"
    );
    assert_eq!(line("gpumon_gpu_xid_events", "1"), None, "GPU 1 cannot report events");
    assert!(line("gpumon_gpu_utilization_ratio", "1").is_some());
}

/// GPU 0 reports Xid 79 at tick 3 and a double-bit ECC error at tick 4; GPU 1 is watched and quiet;
/// GPU 2 cannot report events.
const EVENTS: &str = "
init = ok
[device]
name = NVIDIA H100 80GB HBM3
utilization.gpu = 90
memory.total = 81559
memory.used = 1000
events = xid:79@3, dbe@4
[device]
name = NVIDIA H100 80GB HBM3
utilization.gpu = 90
memory.total = 81559
memory.used = 1000
events = none
[device]
name = NVIDIA H100 80GB HBM3
utilization.gpu = 90
memory.total = 81559
memory.used = 1000
";

#[test]
fn xid_events_land_in_the_events_file_and_summarize_explains_them() {
    let dir = tempfile::tempdir().unwrap();
    let o = record(dir.path(), EVENTS, "run.csv", &["--count", "8"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("GPU 0") && err.contains("Xid 79"),
        "one warning names the GPU and the Xid: {err}"
    );

    let main = readback(&dir.path().join("run.csv"));
    let c = &main["pandas"]["columns"];
    let ts: Vec<String> =
        gpu_column(c, "timestamp", 0).iter().map(|v| v.as_str().unwrap().to_string()).collect();
    let xid0 = nums(&gpu_column(c, "xid.events", 0));
    assert_eq!(xid0.iter().flatten().sum::<f64>(), 1.0, "one Xid on GPU 0: {xid0:?}");
    let row = xid0.iter().position(|v| *v == Some(1.0)).unwrap();
    assert!(
        row == 3 || row == 4,
        "the Xid due at tick 3 is counted in row 3 (or 4 if it arrived after the row's sample): {xid0:?}"
    );
    assert!(
        gpu_column(c, "xid.events", 1).iter().all(|v| v.as_f64() == Some(0.0)),
        "watched and quiet: 0"
    );
    assert!(
        gpu_column(c, "xid.events", 2).iter().all(Value::is_null),
        "cannot report events: empty, not 0"
    );

    let ev = readback(&dir.path().join("run.events.csv"));
    let e = &ev["pandas"]["columns"];
    assert_eq!(e["kind"], serde_json::json!(["xid", "dbe"]));
    assert_eq!((e["code"][0].as_f64(), &e["code"][1]), (Some(79.0), &Value::Null));
    assert_eq!(nums(e["index"].as_array().unwrap()), vec![Some(0.0), Some(0.0)]);
    assert_eq!(e["uuid"][0], "GPU-00000000-0000-0000-0000-000000000000");
    let when = e["timestamp"][0].as_str().unwrap();
    assert!(
        when > ts[2].as_str() && when < ts[5].as_str(),
        "stamped when it arrived: {when} in ({}, {})",
        ts[2],
        ts[5]
    );

    // summarize run.csv finds the events file beside it and explains the Xid.
    let o = gpumon().args(["summarize", "-q"]).arg(dir.path().join("run.csv")).output().unwrap();
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("NVML events (2, from the events file"), "{text}");
    assert!(text.contains(", GPU 0: Xid 79\n      GPU has fallen off the bus"), "{text}");
    assert!(text.contains("action: drain the node and reboot"), "{text}");
    assert!(text.contains("[error] xid - GPU 0: Xid 79 at "), "{text}");
    let o = gpumon()
        .args(["summarize", "-q", "--format", "json"])
        .arg(dir.path().join("run.csv"))
        .output()
        .unwrap();
    ok(&o);
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let events = j["events"].as_array().unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(
        (events[0]["kind"].as_str(), events[0]["code"].as_u64(), events[0]["gpu"].as_u64()),
        (Some("xid"), Some(79), Some(0))
    );
    assert!(events[0]["meaning"].as_str().unwrap().contains("fallen off the bus"));
    assert!(events[1]["meaning"].as_str().unwrap().contains("double-bit"));
    let f = j["hosts"][0]["findings"].as_array().unwrap();
    let x: Vec<&Value> = f.iter().filter(|f| f["rule"] == "xid").collect();
    assert_eq!(x.len(), 1, "{f:?}");
    assert_eq!((x[0]["severity"].as_str(), x[0]["gpu"].as_str()), (Some("error"), Some("0")));
    assert!(
        x[0]["evidence"].as_str().unwrap().contains(&when[..19].replace('T', " ")),
        "names the time: {}",
        x[0]
    );

    // Parquet: the events file is Parquet too, with typed columns.
    record(dir.path(), EVENTS, "run.parquet", &["--count", "8"]);
    let ev = readback(&dir.path().join("run.events.parquet"));
    assert_eq!(ev["pyarrow"]["rows"], 2);
    assert_eq!(ev["pyarrow"]["types"]["timestamp"], "timestamp[us, tz=UTC]");
    assert_eq!(ev["pyarrow"]["columns"]["code"], serde_json::json!([79, null]));
    assert_eq!(ev["duckdb"]["rows"], 2);

    // A run without events leaves no events file.
    record(dir.path(), &EVENTS.replace("xid:79@3, dbe@4", "none"), "quiet.csv", &["--count", "3"]);
    assert!(!dir.path().join("quiet.events.csv").exists());
}

#[test]
fn processes_carry_per_process_sm_and_summarize_totals_users() {
    let dir = tempfile::tempdir().unwrap();
    let me = std::process::id();
    let s = format!(
        "init = ok\n[device]\nname = NVIDIA H100 80GB HBM3\nutilization.gpu = 90\nmemory.total = 81559\nmemory.used = 3000\n\
         processes = {me}:1024, 999999:512\nprocess_util = {me}:sm=60:mem=30:enc=1:dec=2; 999999:sm=10\n\
         [device]\nname = NVIDIA H100 80GB HBM3\nutilization.gpu = 0\nprocesses = {me}:256\n"
    );
    record(dir.path(), &s, "run.parquet", &["--count", "5", "--processes"]);
    let p = readback(&dir.path().join("run.procs.parquet"));
    let c = &p["pyarrow"]["columns"];
    let (pids, sm) = (c["proc.pid"].as_array().unwrap(), c["proc.sm"].as_array().unwrap());
    let idx = c["index"].as_array().unwrap();
    for ((pid, sm), gpu) in pids.iter().zip(sm).zip(idx) {
        let want = match (gpu.as_u64(), pid.as_u64()) {
            (Some(0), Some(p)) if p == u64::from(me) => Some(60),
            (Some(0), _) => Some(10),
            _ => None,
        };
        assert_eq!(sm.as_u64(), want, "GPU {gpu} pid {pid}: {c}");
    }
    let mine = pids.iter().position(|p| p.as_u64() == Some(u64::from(me))).unwrap();
    let shares: Vec<Option<u64>> =
        ["proc.mem_util", "proc.enc", "proc.dec"].iter().map(|f| c[f][mine].as_u64()).collect();
    assert_eq!(shares, [Some(30), Some(1), Some(2)]);
    assert_eq!(p["pyarrow"]["types"]["proc.sm"], "int16");

    let o = gpumon()
        .args(["summarize", "-q", "--format", "json"])
        .arg(dir.path().join("run.parquet"))
        .output()
        .unwrap();
    ok(&o);
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let users = j["users"].as_array().unwrap();
    let mine = users
        .iter()
        .find(|u| u["gpu"] == 0 && u["user"] != "?")
        .unwrap_or_else(|| panic!("{users:?}"));
    assert_eq!(
        (mine["sm_mean_pct"].as_f64(), mine["gpu_memory_max_mib"].as_f64()),
        (Some(60.0), Some(1024.0))
    );
    assert_eq!((mine["ticks"].as_u64(), mine["processes"].as_u64()), (Some(5), Some(1)));
    let stranger = users.iter().find(|u| u["gpu"] == 0 && u["user"] == "?").unwrap();
    assert_eq!(stranger["sm_mean_pct"].as_f64(), Some(10.0));
    let other = users.iter().find(|u| u["gpu"] == 1).unwrap();
    assert_eq!(
        (other["sm_mean_pct"].as_f64(), other["gpu_memory_mean_mib"].as_f64()),
        (None, Some(256.0))
    );
    let o =
        gpumon().args(["summarize", "-q"]).arg(dir.path().join("run.parquet")).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("GPU use by user"), "{text}");

    // convert of the recording's directory writes the metrics and says it skipped the companion.
    let out = dir.path().join("out").join("all.csv");
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let o = gpumon().args(["convert", "-o"]).arg(&out).arg(dir.path()).output().unwrap();
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("skipping")
            && err.contains("run.procs.parquet")
            && err.contains("per-process"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap().lines().count(),
        1 + 2 * 5,
        "header and 2 GPUs x 5 ticks"
    );
    // Named alone, the per-process file is still refused: it is not per-GPU metrics.
    let o = gpumon()
        .args(["convert", "-o"])
        .arg(dir.path().join("p.csv"))
        .arg(dir.path().join("run.procs.parquet"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Five H100s, one case each: healthy, launch-bound, FP32 math, memory-bound, PCIe-bound.
const CASES: &str = "
init = ok
[device]
utilization.gpu = 95
memory.total = 81559
memory.used = 40000
gpm.sm_util = 0, 70
gpm.any_tensor_util = 0, 40
gpm.dram_bw_util = 0, 40
gpm.pcie_rx_per_sec = 0, 300
[device]
utilization.gpu = 98
memory.total = 81559
memory.used = 40000
gpm.sm_util = 0, 12
gpm.any_tensor_util = 0, 5
gpm.dram_bw_util = 0, 10
gpm.pcie_rx_per_sec = 0, 100
[device]
utilization.gpu = 98
memory.total = 81559
memory.used = 40000
gpm.sm_util = 0, 80
gpm.any_tensor_util = 0, 0.2
gpm.dram_bw_util = 0, 30
gpm.pcie_rx_per_sec = 0, 100
[device]
utilization.gpu = 98
memory.total = 81559
memory.used = 40000
gpm.sm_util = 0, 60
gpm.any_tensor_util = 0, 20
gpm.dram_bw_util = 0, 85
gpm.pcie_rx_per_sec = 0, 100
[device]
utilization.gpu = 50
memory.total = 81559
memory.used = 40000
gpm.sm_util = 0, 10
gpm.any_tensor_util = 0, 2
gpm.dram_bw_util = 0, 10
gpm.pcie_rx_per_sec = 0, 9000
";

/// The host figures come from this (busy, shared) machine: its rules are switched off here.
const QUIET_HOST: [&str; 4] =
    ["--threshold", "swap_mib=1000000000", "--threshold", "input_bound_pct=101"];

#[test]
fn gpm_findings_fire_on_their_case_and_stay_silent_on_a_healthy_gpu() {
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), CASES, "run.parquet", &["--count", "6"]);
    let o = gpumon()
        .args(["summarize", "-q", "--format", "json"])
        .args(QUIET_HOST)
        .arg(dir.path().join("run.parquet"))
        .output()
        .unwrap();
    ok(&o);
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let found: Vec<(String, String)> = j["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| Some((f["gpu"].as_str()?.to_string(), f["rule"].as_str()?.to_string())))
        .collect();
    let of = |gpu: &str| -> Vec<&str> {
        found.iter().filter(|(g, _)| g == gpu).map(|(_, r)| r.as_str()).collect()
    };
    assert_eq!(of("0"), Vec::<&str>::new(), "healthy: {found:?}");
    assert_eq!(of("1"), ["sm_idle_under_busy"], "{found:?}");
    assert_eq!(of("2"), ["no_tensor_cores"], "{found:?}");
    assert_eq!(of("3"), ["memory_bound"], "{found:?}");
    assert_eq!(of("4"), ["pcie_bound"], "{found:?}");
    // Thresholds are overridable: a stricter sm_idle silences the launch-bound GPU.
    let o = gpumon()
        .args(["summarize", "-q", "--format", "json", "--threshold", "sm_idle=5"])
        .args(QUIET_HOST)
        .arg(dir.path().join("run.parquet"))
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        !j["hosts"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "sm_idle_under_busy")
    );
    assert_eq!(j["thresholds"]["sm_idle"], 5.0);
}

#[test]
fn a_busy_gpu_is_not_input_bound_and_sm_active_counts_where_recorded() {
    let dir = tempfile::tempdir().unwrap();
    // A core is pegged throughout. GPU 0: utilization.gpu 95 % but sm.active 20 % (few SMs busy:
    // launch-bound, not starved). GPU 1: 30 %, no sm.active, judged by utilization.gpu. GPU 2: 30 %
    // with sm.active 60 %: its SMs are busy while a kernel runs, so it is not starved either.
    let mut s = String::from(
        "timestamp,host,index,utilization.gpu [%],sm.active [%],cpu.util.max_core [%],memory.used [MiB],memory.total [MiB]\n",
    );
    for t in 0..60 {
        let ts = format!("2026-01-05T10:00:{t:02}.000Z");
        s += &format!(
            "{ts},n,0,95,20,100,30000,81559\n{ts},n,1,30,,100,30000,81559\n{ts},n,2,30,60,100,30000,81559\n"
        );
    }
    std::fs::write(dir.path().join("n.csv"), s).unwrap();
    let o = gpumon()
        .args(["summarize", "-q", "--format", "json"])
        .arg(dir.path().join("n.csv"))
        .output()
        .unwrap();
    ok(&o);
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = j["hosts"][0]["findings"].as_array().unwrap();
    let of = |rule: &str| -> Vec<&Value> {
        f.iter().filter(|x| x["rule"] == rule).map(|x| &x["gpu"]).collect()
    };
    assert_eq!(of("input_bound"), [&Value::from("1")], "{f:?}");
    assert_eq!(of("sm_idle_under_busy"), [&Value::from("0")], "{f:?}");
    let ib = f.iter().find(|x| x["rule"] == "input_bound").unwrap();
    assert!(ib["evidence"].as_str().unwrap().contains("utilization.gpu < 50%"), "{ib}");
}

#[test]
fn doctor_says_which_gpus_have_gpm() {
    let dir = tempfile::tempdir().unwrap();
    let o = gpumon_fake(dir.path(), GPM_TWO).arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let gpm: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("GPM ")).collect();
    assert_eq!(gpm.len(), 2, "{text}");
    assert!(gpm[0].contains("supported: sm.active"), "{text}");
    assert!(gpm[1].contains("not supported (needs Hopper or newer)"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let o = gpumon_fake(dir.path(), GPM_TWO).args(["doctor", "--format", "json"]).output().unwrap();
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let gpus = j["gpus"].as_array().unwrap();
    assert_eq!((gpus[0]["gpm"].as_bool(), gpus[1]["gpm"].as_bool()), (Some(true), Some(false)));
}

#[test]
fn report_charts_gpm_per_gpu_and_marks_events() {
    let dir = tempfile::tempdir().unwrap();
    let s = GPM_TWO.replace("gpm.fail_at = 3\n", "events = xid:79@3\n");
    record(dir.path(), &s, "run.parquet", &["--count", "8"]);
    let html = dir.path().join("run.html");
    let o = gpumon()
        .args(["report", "-q"])
        .arg(dir.path().join("run.parquet"))
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    ok(&o);
    let page = std::fs::read_to_string(&html).unwrap();
    let gpm_charts: Vec<&str> =
        page.match_indices(r#"data-chart="gpu-gpm""#).map(|(i, _)| &page[i..i + 60]).collect();
    assert_eq!(gpm_charts.len(), 1, "a GPM chart for GPU 0 only: {gpm_charts:?}");
    assert!(gpm_charts[0].contains("/0\""), "{gpm_charts:?}");
    assert!(page.contains("<title>Xid 79 at "), "the event is marked on GPU 0's charts");
    assert!(page.contains(r#"<h2 id="events">NVML events</h2>"#));
    assert!(page.contains("GPU has fallen off the bus"));
}
