//! What a new user sees of a run: the wrapped job's command and exit code in every reading command,
//! the line `record` ends with, the order of the quantiles, the report's default output and the
//! units of the text summary.

use std::path::Path;

use crate::common::*;

fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Record `sh -c CMD` wrapped, 100 ms ticks, into `out`; returns gpumon's output.
fn record_job(dir: &Path, out: &Path, cmd: &str) -> std::process::Output {
    gpumon_fake(dir, TWO_GPUS)
        .args(["record", "-i", "100ms", "-o"])
        .arg(out)
        .args(["--", "sh", "-c", cmd])
        .output()
        .unwrap()
}

/// A wrapped job that fails: gpumon exits with its code, and summarize (text and JSON), the report
/// and compare all name its command and code; the failure is an error finding with its time.
#[test]
fn a_failed_job_shows_in_every_reading_command() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.parquet");
    let o = record_job(dir.path(), &run, "sleep 0.3; exit 3");
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));

    let o = gpumon().arg("summarize").arg(&run).output().unwrap();
    ok(&o);
    let t = text(&o);
    assert!(t.contains("job: `sh -c 'sleep 0.3; exit 3'` exited with code 3 at 20"), "{t}");
    assert!(
        t.contains("[error] job_failed - `sh -c 'sleep 0.3; exit 3'` exited with code 3 at"),
        "{t}"
    );

    let o = gpumon().args(["summarize", "--format", "json"]).arg(&run).output().unwrap();
    ok(&o);
    let j = json(&o);
    let job = &j["inputs"][0]["job"];
    assert_eq!(job["command"], "sh -c 'sleep 0.3; exit 3'", "{job}");
    assert_eq!(job["exit_code"], 3, "{job}");
    assert!(job["end"].as_str().is_some_and(|e| e.ends_with('Z')), "{job}");
    let f = &j["hosts"][0]["findings"][0];
    assert_eq!((f["rule"].as_str(), f["severity"].as_str()), (Some("job_failed"), Some("error")));
    assert!(f["evidence"].as_str().unwrap().contains(" UTC"), "{f}");

    let html = dir.path().join("r.html");
    ok(&gpumon().arg("report").arg(&run).arg("-o").arg(&html).output().unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("exited with code 3 at"), "no job line in the report");
    assert!(page.contains("job_failed"), "no finding in the report");

    let good = dir.path().join("good.parquet");
    ok(&record_job(dir.path(), &good, "sleep 0.3"));
    let o = gpumon().arg("compare").arg(&good).arg(&run).output().unwrap();
    ok(&o);
    let t = text(&o);
    assert!(t.contains("job: `sh -c 'sleep 0.3'` exited with code 0"), "{t}");
    assert!(t.contains("job: `sh -c 'sleep 0.3; exit 3'` exited with code 3"), "{t}");
    assert!(t.contains("[error] job_failed"), "{t}");
    let o = gpumon().args(["compare", "--format", "json"]).arg(&good).arg(&run).output().unwrap();
    ok(&o);
    let codes: Vec<serde_json::Value> =
        json(&o)["jobs"].as_object().unwrap().values().map(|l| l[0]["exit_code"].clone()).collect();
    assert_eq!(codes, [serde_json::json!(0), serde_json::json!(3)]);
}

/// A job that dies in its second phase: that phase carries `job_failed` (text and JSON), the
/// phase before it does not.
#[test]
fn a_failed_job_fails_the_phase_it_died_in() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.parquet");
    let bin = Path::new(env!("CARGO_BIN_EXE_gpumon")).parent().unwrap().display().to_string();
    let cmd =
        format!("PATH={bin}:$PATH; gpumon mark a; sleep 0.5; gpumon mark b; sleep 0.5; exit 4");
    let o = record_job(dir.path(), &run, &cmd);
    assert_eq!(o.status.code(), Some(4), "{}", String::from_utf8_lossy(&o.stderr));
    let o = gpumon().args(["summarize", "--by", "phase", "--format", "json"]).arg(&run).output();
    let j = json(&o.unwrap());
    let rules = |label: &str| -> Vec<String> {
        let p = j["phases"].as_array().unwrap().iter().find(|p| p["phase"] == label).unwrap();
        let f = p["hosts"][0]["findings"].as_array().unwrap();
        f.iter().map(|f| f["rule"].as_str().unwrap().to_string()).collect()
    };
    assert!(!rules("a").contains(&"job_failed".to_string()), "{:?}", rules("a"));
    assert!(rules("b").contains(&"job_failed".to_string()), "{:?}", rules("b"));
    let o = gpumon().args(["summarize", "--by", "phase"]).arg(&run).output().unwrap();
    let t = text(&o);
    let b = t.split("== Phase b:").nth(1).unwrap_or_default();
    assert!(b.lines().take(3).any(|l| l.contains("job_failed") && !l.contains("not in")), "{t}");
}

/// A CPU figure on a half-way step of the 0.1-point histogram (70.85) is its own maximum: the
/// summary's p95 is no higher than its max, in text and JSON.
#[test]
fn p95_is_never_above_max() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    let mut body = String::from("timestamp,cpu.util\n");
    for (k, v) in [10.0, 20.5, 70.85, 33.0, 61.6].iter().enumerate() {
        body.push_str(&format!("2026-01-05T10:00:0{k}.000Z,{v}\n"));
    }
    std::fs::write(&csv, body).unwrap();
    let o = gpumon().args(["summarize", "--format", "json"]).arg(&csv).output().unwrap();
    ok(&o);
    let host = &json(&o)["hosts"][0]["stats"];
    let (p95, max) =
        (host["cpu.util.p95"].as_f64().unwrap(), host["cpu.util.max"].as_f64().unwrap());
    assert!(p95 <= max, "cpu.util p95 {p95} > max {max}");
    let o = gpumon().arg("summarize").arg(&csv).output().unwrap();
    ok(&o);
    let t = text(&o);
    assert!(t.contains("CPU: mean 39.2%, p95 70.8%, max 70.8%"), "{t}");
}

/// `record` ends with one line saying what it wrote (files, rows, GPUs, span, size); `-q` leaves it out.
#[test]
fn record_says_what_it_wrote_unless_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.parquet");
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-i", "100ms", "--count", "3", "-o"])
        .arg(&run)
        .output()
        .unwrap();
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let last = err.lines().last().unwrap_or_default();
    let want = format!("gpumon: wrote {}: 6 rows, 2 GPUs, 20", run.display());
    assert!(last.starts_with(&want), "{err}");
    let size = std::fs::metadata(&run).unwrap().len() as f64 / 1024.0;
    assert!(last.contains(" UTC (0.2 s), ") && last.ends_with(&format!("{size:.1} KiB")), "{last}");

    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-q", "-i", "100ms", "--count", "3", "-o"])
        .arg(dir.path().join("quiet.csv"))
        .output()
        .unwrap();
    ok(&o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("gpumon: wrote"), "-q printed it");
}

/// `gpumon report run.csv` without `-o` writes `run.html` beside it (the name Python's
/// `gpumon.report()` gives), and says so.
#[test]
fn report_without_o_writes_the_inputs_name_with_html() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    std::fs::write(
        &csv,
        "timestamp,index,utilization.gpu\n2026-01-05T10:00:00.000Z,0,10\n2026-01-05T10:00:01.000Z,0,20\n",
    )
    .unwrap();
    let o = gpumon().arg("report").arg(&csv).output().unwrap();
    ok(&o);
    let html = dir.path().join("run.html");
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"), "no run.html");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("gpumon: wrote {}", html.display())), "{err}");
    // A glob names no file: -o is asked for.
    let o = gpumon().arg("report").arg(dir.path().join("*.csv")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give -o OUT.html"));
}

/// The text summary gives the job's figures in their units and counts as whole numbers.
#[test]
fn text_summary_has_units_and_whole_counts() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    std::fs::write(
        &csv,
        "timestamp,cpu.util,job.rss,job.write,job.procs,progress.ticks\n\
         2026-01-05T10:00:00.000Z,10,2700,8192,1,\n\
         2026-01-05T10:00:01.000Z,10,2800,8192,2,6\n\
         2026-01-05T10:00:02.000Z,10,2900,8192,2,7\n",
    )
    .unwrap();
    let o = gpumon().arg("summarize").arg(&csv).output().unwrap();
    ok(&o);
    let t = text(&o).replace("\n      ", " ");
    assert!(t.contains("job.rss mean 2.7 GiB max 2.8 GiB"), "{t}");
    assert!(t.contains("job.write mean 8.0 KiB/s max 8.0 KiB/s"), "{t}");
    assert!(t.contains("job.procs mean 1.7 max 2;"), "{t}");
    assert!(t.contains("Work: ticks 13 total"), "{t}");
}
