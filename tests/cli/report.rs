//! `gpumon report`: HTML reports from a fake-NVML recording (4 GPUs, one starved, a wrapped job) and
//! a real 8-GPU nvidia-smi log, opened in headless Chromium through the DevTools protocol
//! (tests/py/browser.py): no console errors, no requests, the expected charts and heatmap rows, lines
//! broken at gaps. Screenshots and PDFs go to target/test-artifacts/report/. Chromium is required.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;

fn artifacts() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| repo_root().join("target"), PathBuf::from);
    let dir = target.join("test-artifacts").join("report");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn chromium() -> PathBuf {
    let candidates =
        [std::env::var("CHROMIUM").ok(), Some("chromium".into()), Some("chromium-browser".into())];
    for c in candidates.into_iter().flatten() {
        if let Ok(o) = Command::new("sh").arg("-c").arg(format!("command -v '{c}'")).output()
            && o.status.success()
        {
            return PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        }
    }
    panic!(
        "chromium is not installed: the report tests open the HTML in a real browser. Install it \
         (Debian/Ubuntu: apt-get install chromium; .ci/run does) or point CHROMIUM at a Chromium/Chrome binary"
    );
}

/// Open `html` in headless Chromium; screenshot (and PDF) under target/test-artifacts/report/.
pub fn browse(html: &Path, name: &str) -> Value {
    let browser = chromium();
    let dir = artifacts();
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/browser.py"))
        .arg(html)
        .arg("--chromium")
        .arg(&browser)
        .arg("--screenshot")
        .arg(dir.join(format!("{name}.png")))
        .arg("--pdf")
        .arg(dir.join(format!("{name}.pdf")))
        .args(["--width", "1280", "--height", "2000"])
        .output()
        .expect("running python3 tests/py/browser.py");
    assert!(
        out.status.success(),
        "browser.py failed on {} (needs chromium and the websocket-client package from tests/requirements.txt):\n{}",
        html.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    std::fs::copy(html, dir.join(format!("{name}.html"))).unwrap();
    assert_eq!(v["errors"], serde_json::json!([]), "console errors in {name}: {v}");
    assert_eq!(
        v["external_requests"],
        serde_json::json!([]),
        "a self-contained page loads nothing: {v}"
    );
    let dom = &v["dom"];
    // browse() reads the page with scripts off (a mail client, a printer): the static charts.
    assert_eq!(dom["scripts"], 1, "one inline script: the interactive charts");
    assert_eq!(dom["interactive"], 0, "without scripts no interactive chart is drawn");
    let csp = dom["csp"].as_str().unwrap_or_default();
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'sha256-"), "{csp}");
    assert_eq!(dom["unlabelled_svgs"], 0, "every chart has role, <title> and <desc>");
    assert_eq!(dom["embedded_schema"], "gpumon.summary/1");
    assert!(dom["times"].as_str().unwrap().contains("UTC"), "{}", dom["times"]);
    assert!(
        dom["min_chart_width"].as_f64().unwrap() >= 500.0,
        "two charts a row at 1280 px: {}",
        dom["min_chart_width"]
    );
    let png = std::fs::metadata(dir.join(format!("{name}.png"))).unwrap().len();
    assert!(png > 20_000, "screenshot of {png} bytes");
    assert!(v["pdf_pages"].as_u64().unwrap() >= 1, "prints to PDF");
    v
}

fn charts(v: &Value) -> Vec<(String, u64)> {
    let mut c: Vec<(String, u64)> = v["dom"]["charts"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
        .collect();
    c.sort();
    c
}

fn heat_means(v: &Value) -> Vec<(String, f64)> {
    v["dom"]["heatmap_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["gpu"].as_str().unwrap().to_string(), r["mean"].as_f64().unwrap()))
        .collect()
}

fn summary_json(args: &[&str], input: &Path) -> Value {
    let o = gpumon()
        .arg("summarize")
        .arg(input)
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The heatmap's row means are the summary's utilization means (same rows, same keys).
fn assert_means_match(v: &Value, summary: &Value) {
    let means = heat_means(v);
    let gpus = summary["hosts"][0]["gpus"].as_array().unwrap();
    assert_eq!(means.len(), gpus.len());
    for ((gpu, m), g) in means.iter().zip(gpus) {
        assert_eq!(gpu, g["gpu"].as_str().unwrap());
        let want = g["stats"]["utilization.gpu.mean"].as_f64().unwrap();
        assert!((m - want).abs() <= 0.051, "GPU {gpu}: heatmap mean {m} vs summary {want}");
    }
}

fn device(name: &str, util: &str, power: &str, temp: &str) -> String {
    format!(
        "
[device]
name = {name}
memory.total = 81559
memory.used = 30000, 41000, 52000, 61000, 62000, 62500, 63000
utilization.gpu = {util}
utilization.memory = 40
temperature.gpu = {temp}
power.draw = {power}
power.limit = 700
clocks.sm = 1410, 1755, 1980
clocks.mem = 2619
pstate = 0
clocks_event_reasons.active = 0
"
    )
}

/// Four H100s; GPU 3 gets a quarter of the work.
fn four_gpus() -> String {
    let busy = "92, 95, 97, 90, 99, 94, 96, 91, 98, 93, 95, 97, 92, 96";
    let starved = "20, 25, 15, 30, 22, 18, 24, 21, 19, 26, 23, 17, 25, 20";
    let mut s = String::from("init = ok\n");
    for i in 0..3 {
        let _ = i;
        s += &device(
            "NVIDIA H100 80GB HBM3",
            busy,
            "610, 650, 690, 640, 660",
            "55, 60, 64, 67, 69, 70",
        );
    }
    s += &device("NVIDIA H100 80GB HBM3", starved, "180, 210, 190, 220, 200", "41, 43, 44, 45");
    s
}

#[test]
fn fake_recording_with_a_starved_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.parquet");
    // 200 ms rows of two 100 ms sub-samples (.max columns), next to a wrapped job (job.* columns).
    let o = gpumon_fake(dir.path(), &four_gpus())
        .args(["record", "-q", "-i", "200ms", "--sample-every", "100ms", "-o"])
        .arg(&run)
        .args(["--", "sleep", "3"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = dir.path().join("run.html");
    let o = gpumon().args(["report", "-q"]).arg(&run).arg("-o").arg(&html).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.len() < 1_000_000, "{} bytes", text.len());
    assert!(
        text.contains("utilization.gpu (band up to .max)"),
        "aggregated rows draw the .max band"
    );
    let v = browse(&html, "fake-4gpu");
    let per_gpu = |k: &str| (k.to_string(), 4u64);
    let mut want = vec![
        per_gpu("gpu-clock"),
        per_gpu("gpu-mem"),
        per_gpu("gpu-power"),
        per_gpu("gpu-temp"),
        per_gpu("gpu-util"),
        ("host-cpu".into(), 1),
        ("host-mem".into(), 1),
        ("job-cpu".into(), 1),
        ("job-rss".into(), 1),
    ];
    want.sort();
    assert_eq!(charts(&v), want, "{}", v["dom"]);
    assert_eq!(v["dom"]["chart_count"], 24);
    assert_eq!(v["dom"]["gpu_table_rows"], 4);
    let means = heat_means(&v);
    assert_eq!(means.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["0", "1", "2", "3"]);
    for (gpu, m) in &means[..3] {
        assert!(
            *m > means[3].1 + 50.0,
            "GPU {gpu} ({m}) is far busier than GPU 3 ({})",
            means[3].1
        );
    }
    assert!(
        v["dom"]["findings"].as_array().unwrap().iter().any(|f| f == "imbalance"),
        "{}",
        v["dom"]["findings"]
    );
    let summary = summary_json(&[], &run);
    assert_means_match(&v, &summary);
    // Without gaps (a tick missed three times in a row on a loaded machine would make one) every
    // line is one piece.
    let gaps: f64 = summary["hosts"][0]["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["stats"]["gaps"].as_f64().unwrap())
        .sum();
    // (A loaded machine may also skip a single tick, which the chart shows as one break.)
    if gaps == 0.0 {
        let runs = v["dom"]["max_line_runs"].as_u64().unwrap();
        assert!(
            runs <= 2,
            "no gaps: every line is one piece, or two around a skipped tick ({runs})"
        );
    }
}

#[test]
fn real_8gpu_nvidia_smi_log() {
    let Some(logs) = shared_smi_logs() else { return };
    let log =
        logs.join("grantwilkins_training_profile__h100_8gpu_power-trace_2025-07-26-23-32-09.csv");
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("h100.html");
    let o = gpumon()
        .args(["report", "-q", "--tz", "UTC"])
        .arg(&log)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = browse(&html, "h100-8gpu");
    // The log has power, utilization and memory: three charts per GPU, no host charts.
    assert_eq!(
        charts(&v),
        [("gpu-mem".to_string(), 8), ("gpu-power".into(), 8), ("gpu-util".into(), 8)]
    );
    assert_eq!(v["dom"]["heatmap_rows"].as_array().unwrap().len(), 8);
    let s = summary_json(&["--tz", "UTC"], &log);
    assert_means_match(&v, &s);
    assert!(s["hosts"][0]["gpus"][0]["stats"]["gaps"].as_f64().unwrap() > 0.0);
    assert!(v["dom"]["max_line_runs"].as_u64().unwrap() > 1, "the log's gaps break the lines");
    let times = v["dom"]["times"].as_str().unwrap();
    assert!(times.contains("2025-07-26 23:32:09 UTC"), "{times}");
}

#[test]
fn real_logs_windows_checks_stdout_and_escaping() {
    let Some(logs) = shared_smi_logs() else { return };
    let log =
        logs.join("grantwilkins_training_profile__h100_8gpu_power-trace_2025-07-26-23-32-09.csv");
    let host = "<script>alert(1)</script>&\"x\"";
    let o = gpumon()
        .args(["report", "-q", "--tz", "Europe/Berlin", "--since", "+5m", "--host", host])
        .args(["--fail-if", "utilization.gpu.mean < 99", "-o", "-"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "a failed check is exit 3: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("check failed"));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>"));
    assert!(!text.contains("<script>alert"), "data is escaped");
    assert!(text.contains("data-host=\"&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x&quot;\""));
    assert_eq!(
        text.matches("<script").count(),
        3,
        "the summary and series JSON blocks and the one inline script"
    );
    assert!(text.contains("Europe/Berlin") && text.contains("(UTC+02:00)"), "local time in --tz");
    let json =
        text.split("id=\"gpumon-summary\">").nth(1).unwrap().split("</script>").next().unwrap();
    let j: Value = serde_json::from_str(json).unwrap();
    assert_eq!(j["hosts"][0]["host"], host);
    assert!(j["window"]["since"].is_string() && j["window"]["rows_left_out"].as_u64().unwrap() > 0);
    assert_eq!(j["checks"][0]["passed"], false);
    assert!(text.contains("class=\"checks\""));
    // Same flags as summarize: a bad one is a usage error.
    let o = gpumon()
        .args(["report", "--since", "yesterday", "-o", "x.html"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn host_only_recording_takes_its_span_from_the_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("host.csv");
    let o = gpumon()
        .args(["record", "-q", "-i", "200ms", "--count", "6", "-o"])
        .arg(&csv)
        .env("GPUMON_NVML_LIB", "/nonexistent")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = gpumon().args(["report", "-q", "-o", "-"]).arg(&csv).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.matches("<svg class=\"chart\"").count(), 2, "CPU and RAM, no GPU charts");
    assert!(text.contains("data-chart=\"host-cpu\"") && text.contains("data-chart=\"host-mem\""));
    assert!(!text.contains("class=\"heatmap\""), "no GPU, no heatmap");
    // Five 200 ms steps: the span is about a second (from the timestamps, not the empty GPU span);
    // a loaded machine may skip a deadline or two (counted in `missed`), which lengthens it.
    // The page says e.g. "999 ms long" or "1.4 s long".
    let head = text.split(" long").next().unwrap_or_default();
    let mut words = head.rsplit([' ', ';']).filter(|w| !w.is_empty());
    let (unit, n) = (words.next().unwrap_or_default(), words.next().unwrap_or_default());
    let n: f64 = n.parse().unwrap_or_else(|_| panic!("no span in the page: {n:?} {unit:?}"));
    let span = if unit == "ms" { n / 1000.0 } else { n };
    assert!((0.9..3.0).contains(&span), "span of 6 ticks: {span} s");
}

/// Open `html` at `width` px (or as printed) and return the DOM facts.
fn measure(html: &Path, width: u32, print: bool, shot: &str) -> Value {
    let mut c = Command::new("python3");
    c.arg(repo_root().join("tests/py/browser.py")).arg(html).arg("--chromium").arg(chromium());
    c.arg("--screenshot").arg(artifacts().join(format!("{shot}.png")));
    c.args(["--width", &width.to_string(), "--height", "1600"]);
    if print {
        c.arg("--print-media");
    }
    let out = c.output().expect("running python3 tests/py/browser.py");
    assert!(out.status.success(), "browser.py: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["dom"].clone()
}

#[test]
fn tables_fit_their_column_at_1280_and_1920_px_and_in_print_and_the_heatmap_says_its_cell() {
    // Eight GPUs with GPM activity, two with Xids (the events table with its long action text), a
    // wrapped job with per-process rows: the widest tables a recording gives.
    let mut s = String::from("init = ok\ndriver_version = 550.54.15\ncuda_version = 12040\n");
    for i in 0..8 {
        s += &format!(
            "\n[device]\nname = NVIDIA H100 80GB HBM3\nutilization.gpu = {}\nmemory.used = 1000\nmemory.total = 81559\n\
             gpm.sm_util = 40, 50, 60\ngpm.sm_occupancy = 20, 30\ngpm.dram_bw_util = 10, 20\n{}",
            90 + i,
            if i < 2 { "events = xid:79@1, xid:94:gi=1:ci=0@2\n" } else { "events = none\n" }
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.parquet");
    let o = gpumon_fake(dir.path(), &s)
        .args(["record", "-q", "-i", "500ms", "--processes", "-o"])
        .arg(&run)
        .args(["--", "sleep", "3"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = dir.path().join("run.html");
    let o = gpumon().args(["report", "-q"]).arg(&run).arg("-o").arg(&html).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (width, print, name) in
        [(1280, false, "layout-1280"), (1920, false, "layout-1920"), (1100, true, "layout-print")]
    {
        let d = measure(&html, width, print, name);
        let tables = d["tables"].as_array().unwrap();
        assert!(tables.iter().any(|t| t["cls"] == "events"), "{d}");
        for t in tables {
            assert!(
                t["over"].as_i64().unwrap() <= 0,
                "{name}: table {} is wider than its column: {t}",
                t["cls"]
            );
            assert_eq!(t["clipped_cells"], 0, "{name}: table {} has clipped cells: {t}", t["cls"]);
        }
        assert_eq!(d["page_overflow"], 0, "{name}: the page scrolls sideways");
        // 500 ms rows over 3 s are far wider than one heatmap column: the caption names the rows.
        let note = d["heatmap_note"].as_str().unwrap();
        assert!(note.starts_with("utilization.gpu per 500 ms row"), "{name}: {note}");
        let note = d["charts_note"].as_str().unwrap();
        assert!(note.starts_with("Rows are 500 ms apart"), "{name}: {note}");
    }
}

/// Four GPUs at 100 ms for 6 s, GPU 0 with two Xids (a finding with instants, two event rows).
fn live_scenario() -> String {
    let busy = "92, 95, 97, 90, 99, 94, 96, 91, 98, 93, 95, 97, 92, 96, 40, 55, 61";
    let mut s = String::from("init = ok\n");
    for i in 0..4 {
        let util = if i == 3 { "20, 25, 15, 30, 22, 18" } else { busy };
        let events = if i == 0 { "xid:79@25, xid:79@28" } else { "none" };
        s += &format!(
            "\n[device]\nname = NVIDIA H100 80GB HBM3\nmemory.total = 81559\nmemory.used = 30000, 41000, 52000, 61000\n\
             utilization.gpu = {util}\ntemperature.gpu = 55, 60, 64\npower.draw = 610, 650, 690, 640\n\
             power.limit = 700\nclocks.sm = 1410, 1755, 1980\npstate = 0\nevents = {events}\n"
        );
    }
    s
}

#[test]
fn interactive_charts_hover_zoom_follow_and_toggle_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.csv");
    let o = gpumon_fake(dir.path(), &live_scenario())
        .args(["record", "-q", "-i", "100ms", "--count", "60", "-o"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = dir.path().join("run.html");
    let o = gpumon().args(["report", "-q"]).arg(&run).arg("-o").arg(&html).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::copy(&html, artifacts().join("live.html")).unwrap();
    let shot = artifacts().join("live-hover.png");
    let v = drive(&html, &run, &["--screenshot".as_ref(), shot.as_os_str()]);
    // 4 GPUs × 5 charts and the host's CPU and RAM (no GPM, no job).
    assert_eq!(v["charts"], 22, "{v}");
    assert_eq!(v["hover_value"]["shown"], v["hover_value"]["file"], "{v}");
    assert_eq!(v["finding"]["rule"], "xid", "{v}");
    assert_eq!(v["requests"], serde_json::json!([]), "{v}");
    // The same rows under a second host name: a fleet report toggles hosts too.
    let text = std::fs::read_to_string(&run).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let col = header.split(',').position(|c| c == "host").unwrap();
    let other: Vec<String> = std::iter::once(header.to_string())
        .chain(lines.map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            f[col] = "node-b";
            f.join(",")
        }))
        .collect();
    let run2 = dir.path().join("run2.csv");
    std::fs::write(&run2, other.join("\n") + "\n").unwrap();
    let fleet = dir.path().join("fleet.html");
    let o = gpumon()
        .args(["report", "-q"])
        .arg(&run)
        .arg(&run2)
        .arg("-o")
        .arg(&fleet)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = drive(&fleet, &run, &["--fleet".as_ref()]);
    assert_eq!(v["hosts"]["names"], serde_json::json!([hostname(&run), "node-b"]), "{v}");
}

/// The host name gpumon wrote in `csv` (the machine's).
fn hostname(csv: &Path) -> String {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let col = lines.next().unwrap().split(',').position(|c| c == "host").unwrap();
    lines.next().unwrap().split(',').nth(col).unwrap().to_string()
}

/// Run tests/py/report_live.py on `html` made from `csv`; its JSON, after it passed.
pub fn drive(html: &Path, csv: &Path, extra: &[&std::ffi::OsStr]) -> Value {
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/report_live.py"))
        .arg(html)
        .arg(csv)
        .arg("--chromium")
        .arg(chromium())
        .args(extra)
        .output()
        .expect("running python3 tests/py/report_live.py");
    assert!(
        out.status.success(),
        "report_live.py: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    v
}
