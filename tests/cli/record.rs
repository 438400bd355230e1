//! `gpumon record`: host-only runs, the fake-NVML path, file read-back, signals, nvidia-smi style.

use std::process::Stdio;
use std::time::Duration;

use crate::common::*;

fn col<'a>(v: &'a serde_json::Value, name: &str) -> &'a Vec<serde_json::Value> {
    v["pyarrow"]["columns"][name].as_array().unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn host_only_parquet_five_rows_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.parquet");
    let o = gpumon()
        .args(["record", "-i", "1", "--duration", "5s", "-o"])
        .arg(&out)
        .env("GPUMON_NVML_LIB", dir.path().join("no-such-libnvidia-ml.so"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let w = warnings(&o.stderr);
    assert_eq!(w.len(), 1, "exactly one warning expected: {w:?}");
    assert!(w[0].contains("NVML"), "{w:?}");
    let r = readback(&out);
    assert_eq!(r["pyarrow"]["rows"], 5);
    assert!(
        col(&r, "index").iter().all(serde_json::Value::is_null),
        "GPU columns are null without a GPU"
    );
    assert!(col(&r, "utilization.gpu").iter().all(serde_json::Value::is_null));
    assert!(col(&r, "mem.total").iter().all(|v| v.as_u64().unwrap() > 0));
    assert!(
        col(&r, "cpu.util").iter().all(|v| v.as_f64().is_some()),
        "cpu.util fresh on every tick"
    );
    // The summary of a recording without GPUs still says when it ran (the host's ticks), as a
    // whole and per phase.
    let o = gpumon().args(["summarize", "--format", "json"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let at = |k: &str| {
        let t = s[k].as_str().unwrap_or_else(|| panic!("{k} is {}", s[k]));
        chrono::DateTime::parse_from_rfc3339(t).unwrap().timestamp_millis()
    };
    let span = at("end") - at("start");
    assert!((3_500..=4_500).contains(&span), "5 ticks at 1 s span 4 s, not {span} ms");
    let o = gpumon().arg("summarize").arg(&out).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.lines().next().unwrap().contains(" to "), "{text}");
}

#[test]
fn host_only_csv_five_rows_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.csv");
    let o =
        gpumon().args(["record", "-i", "1", "--duration", "5s", "-o"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(warnings(&o.stderr).len(), 1, "{:?}", warnings(&o.stderr));
    let r = readback(&out);
    let p = &r["pandas"];
    assert_eq!(p["rows"], 5);
    assert_eq!(p["timestamp_parsed"], true);
    for c in ["cpu.util", "cpu.util.max_core", "load.1", "mem.used", "swap.used"] {
        let t = p["dtypes"][c].as_str().unwrap();
        assert!(t == "float64" || t == "int64", "{c} read as {t}");
    }
}

#[test]
fn fast_interval_refreshes_cpu_every_tick() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fast.csv");
    let o = gpumon()
        .args(["record", "-q", "-i", "100ms", "--count", "20", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success());
    let r = readback(&out);
    let ts = r["pandas"]["columns"]["timestamp"].as_array().unwrap();
    assert_eq!(ts.len(), 20);
    let cpu = r["pandas"]["columns"]["cpu.util"].as_array().unwrap();
    assert!(
        cpu.iter().all(|v| v.as_f64().is_some()),
        "a 100 ms tick must not leave cpu.util empty: {cpu:?}"
    );
}

#[test]
fn fake_gpus_values_unsupported_and_lost() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.parquet");
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-i", "200ms", "--count", "10", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let w = warnings(&o.stderr);
    assert_eq!(w.len(), 1, "one warning, for the lost GPU: {w:?}");
    assert!(w[0].contains("GPU 1") && w[0].contains("lost"), "{w:?}");

    let r = readback(&out);
    assert_eq!(r["pyarrow"]["rows"], 20);
    let index = col(&r, "index");
    let util = col(&r, "utilization.gpu");
    let mem = col(&r, "memory.used");
    let power = col(&r, "power.draw");
    let fan = col(&r, "fan.speed");
    let ts = col(&r, "timestamp");
    let energy = col(&r, "energy.total");
    let reasons = col(&r, "clocks_event_reasons.active");
    let pstate = col(&r, "pstate");
    let scripted_power = [70.5, 100.0, 150.25, 200.0, 250.0, 300.0, 350.0, 400.0, 450.0, 500.0];
    for (tick, scripted_power) in scripted_power.into_iter().enumerate() {
        let (g0, g1) = (2 * tick, 2 * tick + 1);
        assert_eq!(index[g0], 0);
        assert_eq!(index[g1], 1);
        assert_eq!(ts[g0], ts[g1], "rows of one tick share one timestamp");
        assert_eq!(util[g0], 10 * tick as u64, "tick {tick}");
        assert_eq!(mem[g0], 100 * (tick as u64 + 1));
        assert_eq!(power[g0].as_f64().unwrap(), scripted_power);
        assert_eq!(energy[g0].as_f64().unwrap(), 1000.0 + 100.0 * tick as f64);
        assert_eq!(fan[g0], 30, "fan supported on GPU 0");
        assert!(fan[g1].is_null(), "NOT_SUPPORTED is null on GPU 1 only");
        assert_eq!(pstate[g0], "P0");
        if tick < 4 {
            assert_eq!(util[g1], 99 - tick as u64);
            assert_eq!(mem[g1], 5000);
        } else {
            assert!(
                util[g1].is_null() && mem[g1].is_null() && power[g1].is_null(),
                "lost GPU is null at tick {tick}"
            );
            assert_eq!(
                col(&r, "uuid")[g1],
                "GPU-11111111-1111-1111-1111-111111111111",
                "identity kept"
            );
        }
    }
    assert_eq!(reasons[0], 1);
    assert_eq!(reasons[2], 0);
    assert_eq!(reasons[4], 4);
    assert_eq!(reasons[18], 4, "the last scripted value repeats");
}

#[test]
fn parquet_types_and_metadata_for_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("typed.parquet");
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-i", "100ms", "--count", "3", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = readback(&out);
    let pa = &r["pyarrow"];
    assert_eq!(pa["types"]["timestamp"], "timestamp[us, tz=UTC]");
    assert_eq!(pa["types"]["utilization.gpu"], "int16");
    assert_eq!(pa["types"]["memory.used"], "int32");
    assert_eq!(pa["types"]["clocks_event_reasons.active"], "int64");
    assert_eq!(pa["types"]["power.draw"], "double");
    assert_eq!(pa["types"]["name"], "string");
    assert_eq!(pa["field_meta"]["memory.used"]["unit"], "MiB");
    assert_eq!(pa["field_meta"]["power.draw"]["unit"], "W");
    assert!(pa["field_meta"]["utilization.gpu"]["help"].as_str().unwrap().contains("kernels"));
    let fm = &pa["file_meta"];
    assert_eq!(fm["gpumon.interval_s"], "0.1");
    assert_eq!(fm["gpumon.driver_version"], "550.54.15");
    assert!(fm["gpumon.command"].as_str().unwrap().contains("record"));
    assert!(fm["gpumon.hostname"].as_str().is_some_and(|h| !h.is_empty()));
    assert!(fm["gpumon.version"].as_str().is_some());
    assert!(fm["gpumon.start"].as_str().unwrap().ends_with('Z'));

    let pd = &r["pandas"]["dtypes"];
    assert_eq!(pd["timestamp"], "datetime64[us, UTC]");
    assert_eq!(pd["utilization.gpu"], "int16");
    assert_eq!(pd["power.draw"], "float64");
    assert_eq!(r["pandas"]["rows"], 6);
    let pl = &r["polars"]["dtypes"];
    assert!(
        pl["timestamp"].as_str().unwrap().starts_with("Datetime(time_unit='us', time_zone='UTC')"),
        "{pl}"
    );
    assert_eq!(pl["utilization.gpu"], "Int16");
    assert_eq!(r["polars"]["rows"], 6);
    let dd = &r["duckdb"]["types"];
    assert_eq!(dd["timestamp"], "TIMESTAMP WITH TIME ZONE");
    assert_eq!(dd["utilization.gpu"], "SMALLINT");
    assert_eq!(dd["memory.used"], "INTEGER");
    assert_eq!(r["duckdb"]["rows"], 6);
}

#[test]
fn sigterm_leaves_a_valid_file_with_every_completed_tick() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("term.parquet");
    let child = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-v", "-i", "100ms", "-o"])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "SIGTERM ends the run with exit 0: {:?}", o.status);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let ticks: u64 = stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("gpumon: ").and_then(|l| l.split(" ticks written").next()?.parse().ok())
        })
        .unwrap_or_else(|| panic!("no tick count in: {stderr}"));
    assert!(ticks >= 5, "{ticks} ticks in 1.5 s at 100 ms");
    let r = readback(&out);
    assert_eq!(r["pyarrow"]["rows"], 2 * ticks, "every completed tick is in the file");
    assert_eq!(r["duckdb"]["rows"], 2 * ticks);
}

#[test]
fn second_signal_exits_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // A driver that hangs 3 s per call keeps gpumon inside a tick.
    let scenario = "init = ok\n[device]\nname = slow\nutilization.gpu = 1\ndelay_ms = 3000\n";
    let mut child = gpumon_fake(dir.path(), scenario)
        .args(["record", "-q", "-i", "100ms", "-o"])
        .arg(dir.path().join("slow.csv"))
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let t0 = std::time::Instant::now();
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(100));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(128 + libc::SIGINT), "{st:?}");
    assert!(t0.elapsed() < Duration::from_secs(2), "second signal must not wait for the slow tick");
}

#[test]
fn unknown_field_is_a_usage_error_with_suggestions() {
    let o = gpumon()
        .args(["record", "-o", "x.csv", "--fields", "utilization.gpu,memory.usd"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("memory.usd") && e.contains("memory.used"), "{e}");
}

#[test]
fn aliases_select_fields_and_pcie_is_off_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let out = dir.path().join("a.csv");
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .env("FAKE_NVML_LOG", &log)
        .args([
            "record",
            "-i",
            "100ms",
            "--count",
            "2",
            "--query-gpu",
            "gpu_name,clocks.current.sm,clocks_throttle_reasons.active",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    let header = text.lines().next().unwrap();
    assert_eq!(
        header,
        "timestamp,host,index,uuid,name,clocks.sm,clocks_event_reasons.active,missed"
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(!calls.contains("Pcie"), "PCIe throughput must not be queried unless asked");
    assert!(!calls.contains("GetPowerUsage"), "unselected fields are not queried");

    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .env("FAKE_NVML_LOG", &log)
        .args(["record", "-i", "100ms", "--count", "1", "--fields", "pcie.tx,pcie.rx", "-o"])
        .arg(dir.path().join("p.csv"))
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(std::fs::read_to_string(&log).unwrap().contains("nvmlDeviceGetPcieThroughput"));
}

#[test]
fn gpus_selects_by_index_and_uuid() {
    let dir = tempfile::tempdir().unwrap();
    // --id is nvidia-smi's name for it.
    for (flag, sel) in [("--gpus", "1"), ("--gpus", "GPU-11111111"), ("--id", "1")] {
        let out = dir.path().join(format!("g{sel}{flag}.csv"));
        let o = gpumon_fake(dir.path(), TWO_GPUS)
            .args(["record", "-i", "100ms", "--count", "2", flag, sel, "-o"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r = readback(&out);
        assert_eq!(r["pandas"]["columns"]["index"], serde_json::json!([1, 1]), "{flag} {sel}");
    }
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "--count", "1", "--gpus", "7", "-o"])
        .arg(dir.path().join("none.csv"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "a GPU that does not exist is a usage error");
}

#[test]
fn require_gpu_fails_without_nvml() {
    let dir = tempfile::tempdir().unwrap();
    let o = gpumon()
        .args(["record", "--require-gpu", "--count", "1", "-o"])
        .arg(dir.path().join("r.csv"))
        .env("GPUMON_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/libnvidia-ml.so.1"));
    let o = gpumon_fake(dir.path(), "init = DRIVER_NOT_LOADED\n")
        .args(["record", "--count", "1", "-o"])
        .arg(dir.path().join("r2.csv"))
        .output()
        .unwrap();
    assert!(o.status.success(), "init failure without --require-gpu records host-only");
    assert_eq!(warnings(&o.stderr).len(), 1);
}

#[test]
fn stdout_streams_one_flush_per_tick() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-i", "200ms", "--count", "50", "-o", "-"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let t0 = std::time::Instant::now();
    let mut buf = [0u8; 4096];
    let mut got = String::new();
    use std::io::Read;
    while got.lines().count() < 3 {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "stdout closed early");
        got.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "rows must arrive as they are sampled, not at exit"
    );
    drop(stdout);
    // Closing the pipe is a normal end for gpumon, not a crash.
    let st = child.wait().unwrap();
    assert!(st.success(), "{st:?}");
}

/// A token's shape: digit runs become `9`, so `69.32 W` and `100.00 W` compare equal.
fn shape(tok: &str) -> String {
    let mut s = String::new();
    for c in tok.chars() {
        if c.is_ascii_digit() {
            if !s.ends_with('9') {
                s.push('9');
            }
        } else {
            s.push(c);
        }
    }
    s
}

#[test]
fn nvidia_smi_style_matches_real_logs_token_for_token() {
    // Header and first row of the fixtures, written in nvidia-smi's format for these queries (the
    // headers and token shapes of the real logs in ../shared/data).
    for (file, scenario_extra) in [
        ("plain.csv", ""),
        ("header-every-row.csv", ""),
        ("cut-last-line.log", ""),
        ("interleaved-8gpu.csv", ""),
        ("crlf.csv", ""),
    ] {
        let real = std::fs::read_to_string(smi_fixture(file)).unwrap();
        let mut lines = real.lines();
        let header = lines.next().unwrap();
        let sample = lines.next().unwrap();
        let query: Vec<&str> = header.split(", ").map(|h| h.split(" [").next().unwrap()).collect();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("smi.log");
        let o = gpumon_fake(dir.path(), &format!("{TWO_GPUS}{scenario_extra}"))
            .args([
                "record",
                "-i",
                "100ms",
                "--count",
                "2",
                "--format",
                "nvidia-smi",
                "--query-gpu",
                &query.join(","),
                "-o",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{file}: {}", String::from_utf8_lossy(&o.stderr));
        let ours = std::fs::read_to_string(&out).unwrap();
        let mut ol = ours.lines();
        assert_eq!(ol.next().unwrap(), header, "{file}: header");
        let row = ol.next().unwrap();
        let (a, b): (Vec<&str>, Vec<&str>) =
            (row.split(", ").collect(), sample.split(", ").collect());
        assert_eq!(a.len(), b.len(), "{file}: {row} vs {sample}");
        for ((q, x), y) in query.iter().zip(&a).zip(&b) {
            let text_field = matches!(*q, "name" | "gpu_name" | "uuid" | "pci.bus_id");
            if !text_field {
                assert_eq!(shape(x), shape(y), "{file}: column {q}: ours {x:?}, nvidia-smi {y:?}");
            }
        }
    }
    // noheader,nounits: like the llama.cpp log.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nn.log");
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-i", "100ms", "--count", "1", "--format", "nvidia-smi,noheader,nounits"])
        .args(["--query-gpu", "timestamp,utilization.gpu,memory.used", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success());
    let real = std::fs::read_to_string(smi_fixture("headerless-nounits.csv")).unwrap();
    let ours = std::fs::read_to_string(&out).unwrap();
    assert_eq!(shape(ours.lines().next().unwrap()), shape(real.lines().next().unwrap()));
}

/// nvidia-smi's own command lines: `--query-gpu=... --format=csv[,noheader][,nounits]`, `-l SEC`,
/// `-lms MS`; the output (on stdout, as nvidia-smi prints it) matches the real logs token for token.
#[test]
fn real_logs_nvidia_smi_command_lines_give_its_output() {
    let Some(logs) = shared_smi_logs() else { return };
    let run = |args: &[&str]| -> String {
        let dir = tempfile::tempdir().unwrap();
        let o = gpumon_fake(dir.path(), TWO_GPUS).arg("record").args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let same_shape = |ours: &str, real: &str, what: &str| {
        let (a, b): (Vec<&str>, Vec<&str>) =
            (ours.split(", ").collect(), real.split(", ").collect());
        assert_eq!(a.len(), b.len(), "{what}: {ours:?} vs {real:?}");
        for (x, y) in a.iter().zip(&b) {
            if !x.starts_with("NVIDIA") && !x.starts_with("0000") {
                assert_eq!(shape(x), shape(y), "{what}: ours {ours:?}, nvidia-smi {real:?}");
            }
        }
    };
    // `--format=csv,noheader,nounits -lms 100`, like the llama.cpp log: no header, bare numbers.
    let real = std::fs::read_to_string(logs.join("dst915_llama.cpp__gpu_stats.csv")).unwrap();
    let ours = run(&[
        "--query-gpu=timestamp,utilization.gpu,memory.used",
        "--format=csv,noheader,nounits",
        "-lms",
        "100",
        "--count",
        "2",
    ]);
    assert_eq!(ours.lines().count(), 4, "2 ticks of 2 GPUs on stdout: {ours}");
    for line in ours.lines() {
        same_shape(line, real.lines().next().unwrap(), "noheader,nounits");
    }
    // `--format=csv -l SEC`, like the RTX 4090 and RTX 2070 logs: nvidia-smi's header and units.
    for file in ["eobo0530_vlm_optimization__gpu_log.csv", "AkshayRoyal_gpu-usage__gpu_usage.csv"] {
        let real = std::fs::read_to_string(logs.join(file)).unwrap();
        let mut rl = real.lines();
        let header = rl.next().unwrap();
        let query: Vec<&str> = header.split(", ").map(|h| h.split(" [").next().unwrap()).collect();
        let ours = run(&[
            &format!("--query-gpu={}", query.join(",")),
            "--format=csv",
            "-l",
            "0.2",
            "--count",
            "1",
        ]);
        let mut ol = ours.lines();
        assert_eq!(ol.next().unwrap(), header, "{file}: header");
        same_shape(ol.next().unwrap(), rl.next().unwrap(), file);
    }
    // `--format=csv,nounits`: units stay in the header (as nvidia-smi does), not in the values.
    let ours = run(&[
        "--query-gpu",
        "memory.used,power.draw",
        "--format",
        "csv,nounits",
        "--count",
        "1",
        "-l",
        "0.2",
    ]);
    let mut ol = ours.lines();
    assert_eq!(ol.next().unwrap(), "memory.used [MiB], power.draw [W]");
    same_shape(ol.next().unwrap(), "132, 69.32", "nounits");
    // --fields with --format csv stays gpumon's CSV.
    let ours =
        run(&["--fields", "memory.used", "--format=csv", "--count", "1", "-l", "0.2", "-o", "-"]);
    assert!(ours.starts_with("timestamp,host,index,uuid,memory.used,missed\n"), "{ours}");
}

#[test]
fn fields_and_completions() {
    let o = gpumon().arg("fields").output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for name in [
        "\"utilization.gpu\" [%]",
        "\"pcie.tx\" [KiB/s]",
        "\"cpu.util.max_core\" [%]",
        "\"job.gpu_memory\" [MiB]",
    ] {
        assert!(text.contains(name), "gpumon fields lists {name}");
    }
    assert!(text.contains("aliases: clocks.current.sm"));
    assert!(
        text.contains("\"utilization.gpu\" [%]  (integer, gpu, mean)"),
        "user-term types: {text}"
    );
    assert!(text.contains("\"power.draw\" [W]  (float, gpu, mean)"), "{text}");
    // Machine-readable forms.
    let o = gpumon().args(["fields", "--format", "json"]).output().unwrap();
    assert!(o.status.success());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let all = j.as_array().unwrap();
    assert_eq!(all.len(), gpumon::CATALOG.len());
    let util = all.iter().find(|f| f["name"] == "utilization.gpu").unwrap();
    assert_eq!(
        (&util["unit"], &util["type"], &util["aggregation"], &util["default"]),
        (&"%".into(), &"integer".into(), &"mean".into(), &true.into())
    );
    assert!(util["help"].as_str().unwrap().contains("kernels"));
    let ts = all.iter().find(|f| f["name"] == "timestamp").unwrap();
    assert_eq!(ts["type"], "timestamp");
    let sm = all.iter().find(|f| f["name"] == "clocks.sm").unwrap();
    assert_eq!(sm["aliases"], serde_json::json!(["clocks.current.sm"]));
    let pcie = all.iter().find(|f| f["name"] == "pcie.tx").unwrap();
    assert_eq!(pcie["default"], false);
    let o = gpumon().args(["fields", "--format", "csv"]).output().unwrap();
    let csv = String::from_utf8_lossy(&o.stdout);
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(
        rows.headers().unwrap().iter().collect::<Vec<_>>(),
        ["name", "aliases", "unit", "type", "source", "aggregation", "default", "help"]
    );
    let recs: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(recs.len(), gpumon::CATALOG.len());
    let power = recs.iter().find(|r| &r[0] == "power.draw").unwrap();
    assert_eq!((&power[2], &power[3], &power[6]), ("W", "float", "on"));
    for shell in ["bash", "zsh", "fish"] {
        let o = gpumon().args(["completions", shell]).output().unwrap();
        assert!(o.status.success() && o.stdout.len() > 1000, "{shell} completions");
        assert!(String::from_utf8_lossy(&o.stdout).contains("rotate-every"), "{shell}");
    }
    let o = gpumon().args(["record", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(
        help.contains("Examples:")
            && help.contains("--sample-every")
            && help.contains("--processes")
    );
    for flag in ["--query-gpu", "--loop-ms", "[aliases: -l, --loop]", "[alias: --id]"] {
        assert!(help.contains(flag), "record --help mentions {flag}:\n{help}");
    }
    let o = gpumon().args(["summarize", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for flag in ["--gpus", "--interleaved-gpus", "+02:00"] {
        assert!(help.contains(flag), "summarize --help mentions {flag}:\n{help}");
    }
}

/// A fleet tree from an output template: three hosts record into `host={host}/date={date}/`;
/// DuckDB reads the tree with hive partitioning and summarize of the tree gives one result per host.
#[test]
fn fleet_template_makes_a_hive_tree_duckdb_and_summarize_read() {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("fleet/host={host}/date={date}/run.parquet");
    for (host, ticks) in [("node-a", "2"), ("node-b", "3"), ("node-c", "4")] {
        let out = gpumon_fake(dir.path(), "[device]\nutilization.gpu = 40\n")
            .args(["record", "-q", "-i", "100ms", "--count", ticks, "--host", host, "-o"])
            .arg(&template)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let date = chrono::Utc::now().format("%Y-%m-%d").to_string();
    for h in ["node-a", "node-b", "node-c"] {
        let f = dir.path().join(format!("fleet/host={h}/date={date}/run.parquet"));
        assert!(f.exists(), "{} missing", f.display());
    }
    let script = r#"
import sys, duckdb
rows = duckdb.sql(f"select host, count(*) as n, count(distinct date) as d from read_parquet('{sys.argv[1]}/**/*.parquet', hive_partitioning=true) group by host order by host").fetchall()
print(";".join(f"{h}={n}/{d}" for h, n, d in rows))
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(dir.path().join("fleet"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "node-a=2/1;node-b=3/1;node-c=4/1");
    let out = gpumon()
        .args(["summarize", "-q", "--format", "json"])
        .arg(dir.path().join("fleet"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hosts: Vec<&str> =
        j["hosts"].as_array().unwrap().iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["node-a", "node-b", "node-c"]);
}

/// The README's main command is `cargo run --release -- record ...`: with two binaries in the
/// package cargo picks one only through `default-run`, which must name the recorder.
#[test]
fn cargo_run_in_the_readme_picks_the_recorder() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    assert!(readme.contains("cargo run --release -- record"), "the README's main command changed");
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    assert!(
        manifest.lines().any(|l| l.trim() == r#"default-run = "gpumon""#),
        "Cargo.toml must set default-run = \"gpumon\" (two [[bin]] targets)"
    );
}

/// `gpumon` copied alone still records; its reading commands (run by `gpumon-analyze`) fail with
/// one line naming what is missing, and work again once the sibling is beside it.
#[test]
fn a_lone_gpumon_records_and_names_the_missing_analyzer() {
    let dir = tempfile::tempdir().unwrap();
    let built = std::path::PathBuf::from(env!("CARGO_BIN_EXE_gpumon"));
    let lone = dir.path().join("gpumon");
    std::fs::copy(&built, &lone).unwrap();
    let empty_path = dir.path().join("empty");
    std::fs::create_dir(&empty_path).unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(&lone)
            .args(args)
            .current_dir(dir.path())
            .env("PATH", &empty_path)
            .env_remove("GPUMON_NVML_LIB")
            .output()
            .unwrap()
    };
    let rec = run(&["record", "-q", "-i", "100ms", "--count", "2", "-o", "x.csv"]);
    assert!(rec.status.success(), "{}", String::from_utf8_lossy(&rec.stderr));
    let sum = run(&["summarize", "x.csv"]);
    let err = String::from_utf8_lossy(&sum.stderr);
    assert_eq!(sum.status.code(), Some(1), "{err}");
    assert!(err.contains("gpumon-analyze") && err.lines().count() == 1, "{err}");
    std::fs::copy(built.with_file_name("gpumon-analyze"), dir.path().join("gpumon-analyze"))
        .unwrap();
    let sum = run(&["summarize", "x.csv"]);
    assert!(sum.status.success(), "{}", String::from_utf8_lossy(&sum.stderr));
    assert!(String::from_utf8_lossy(&sum.stdout).contains("gpumon summary"));
}

/// build.rs links the static unwinder: the recorder loads no `libgcc_s.so.1` (a second library and
/// its `cpuid`-heavy constructor at every start) wherever the C toolchain has `libgcc_eh.a`.
#[test]
fn the_recorder_does_not_load_libgcc_s() {
    let eh = std::process::Command::new("cc").arg("-print-file-name=libgcc_eh.a").output().unwrap();
    let eh = String::from_utf8_lossy(&eh.stdout).trim().to_string();
    assert!(
        std::path::Path::new(&eh).is_absolute(),
        "no libgcc_eh.a here ({eh}): build.rs keeps libgcc_s"
    );
    for exe in [env!("CARGO_BIN_EXE_gpumon"), env!("CARGO_BIN_EXE_gpumon-analyze")] {
        let o = std::process::Command::new("readelf").args(["-d", exe]).output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success() && text.contains("(NEEDED)"), "readelf -d {exe}: {text}");
        assert!(!text.contains("libgcc_s"), "{exe} still needs libgcc_s:\n{text}");
    }
}

/// A GPU whose every call hangs for 1 s (10 ticks) costs only its own rows: the loop's thread,
/// stuck in that GPU's call, is replaced by the standby thread, which finishes the tick and keeps
/// the schedule; the GPU goes to a worker of its own; the stuck thread is not waited for at the end.
#[test]
fn a_hung_gpu_among_three_costs_only_its_own_rows() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("h.csv");
    let scenario = "init = ok\n[device]\nname = a\nutilization.gpu = 11\n\
                    [device]\nname = hung\nutilization.gpu = 22\ndelay_ms = 1000\n\
                    [device]\nname = c\nutilization.gpu = 33\n";
    let o = gpumon_fake(dir.path(), scenario)
        .args([
            "record",
            "-i",
            "100ms",
            "--count",
            "10",
            "--fields",
            "timestamp,index,utilization.gpu",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let w = warnings(&o.stderr);
    assert!(w.iter().any(|l| l.contains("GPU 1: NVML did not answer")), "{w:?}");
    assert!(!w.iter().any(|l| l.contains("GPU 0") || l.contains("GPU 2")), "{w:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("timestamp,host,index,uuid,utilization.gpu,missed"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 30, "{text}");
    let mut missed = 0;
    for (tick, r) in rows.chunks(3).enumerate() {
        assert!(r[0][0] == r[1][0] && r[1][0] == r[2][0], "one stamp per tick: {r:?}");
        assert_eq!((r[0][2], r[0][4]), ("0", "11"), "GPU 0 keeps tick {tick}");
        assert_eq!((r[1][2], r[1][4]), ("1", ""), "the hung GPU's row is empty at tick {tick}");
        assert_eq!((r[2][2], r[2][4]), ("2", "33"), "GPU 2 keeps tick {tick}");
        missed += r[0][5].parse::<u64>().unwrap();
    }
    // Read on the loop's thread without a standby, each tick would wait 1 s for the hung GPU and
    // skip some 9 deadlines; a few skips are allowed for a loaded machine.
    assert!(missed < 10, "{missed} ticks missed: the schedule did not hold\n{text}");
}
