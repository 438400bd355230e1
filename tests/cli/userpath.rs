//! The documented everyday workflows, step by step as a new user takes them: a mark from another
//! shell reaches the file, a rerun into a taken name is refused (and `--append` continues the set,
//! which every reader then says holds several recordings), every stop but `kill -9` keeps the last
//! partial interval, a second Ctrl-C finishes the file and names the job it leaves, a command that
//! cannot start leaves nothing, and an empty companion file is an empty companion.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::*;
use crate::experiments::control;
use crate::harness::Recording;

const TWO_GPUS: &str = "[device]\nmemory.total = 81920\nmemory.used = 4096\nutilization.gpu = 50\n\
[device]\nmemory.total = 81920\nmemory.used = 2048\nutilization.gpu = 20\n";

/// Files in `dir` other than the scenario, hidden ones included.
fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "scenario.txt")
        .collect();
    v.sort();
    v
}

/// `record` of `run` in the background with `args`, once its control socket is up.
fn background(dir: &Path, run: &Path, args: &[&str]) -> Recording {
    let mut cmd = gpumon_fake(dir, TWO_GPUS);
    cmd.args(["record", "-q", "-i", "0.2", "-o"]).arg(run).args(args);
    let rec = Recording::start(cmd);
    let sock = control(run);
    rec.wait_until(20, "the control socket", || sock.exists());
    rec
}

fn summary_json(args: &[&str], inputs: &[&Path]) -> serde_json::Value {
    let o = gpumon()
        .arg("summarize")
        .args(inputs)
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    ok(&o);
    json(&o)
}

#[test]
fn a_mark_from_another_shell_reaches_a_plain_recording() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("bg.parquet");
    // Started without --phases, as `nohup gpumon record -i 1 -o bg.parquet &` is.
    let rec = background(dir.path(), &run, &[]);
    std::thread::sleep(Duration::from_millis(500));
    ok(&gpumon().args(["mark", "--run"]).arg(&run).arg("bs=32").output().unwrap());
    std::thread::sleep(Duration::from_millis(600));
    let (st, log) = rec.stop();
    assert!(st.success(), "{log}");
    let s = summary_json(&["--by", "phase"], &[&run]);
    let labels: Vec<&str> =
        s["phases"].as_array().unwrap().iter().filter_map(|p| p["phase"].as_str()).collect();
    assert_eq!(labels, ["bs=32"], "{s}");

    // A recording with no column for marks refuses them, saying why, instead of losing them.
    let csv = dir.path().join("named.csv");
    let rec = background(dir.path(), &csv, &["--fields", "utilization.gpu"]);
    let o = gpumon().args(["mark", "--run"]).arg(&csv).arg("bs=32").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("no phase column"), "{o:?}");
    assert!(rec.stop().0.success());
}

/// `record -o run.parquet -- sh -c 'gpumon mark bs=32; sleep ...'` with `extra` arguments.
fn marked_run(dir: &Path, run: &Path, extra: &[&str]) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_gpumon")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    gpumon_fake(dir, TWO_GPUS)
        .env("PATH", path)
        .args(["record", "-q", "-i", "0.2"])
        .args(extra)
        .arg("-o")
        .arg(run)
        .args(["--", "sh", "-c", "gpumon mark bs=32 && sleep 0.8"])
        .output()
        .unwrap()
}

#[test]
fn a_rerun_is_refused_and_append_keeps_the_recordings_apart() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.parquet");
    ok(&marked_run(dir.path(), &run, &[]));
    let before = files_in(dir.path());
    let o = marked_run(dir.path(), &run, &[]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("run.parquet already exists") && err.contains("--append"), "{err}");
    assert_eq!(files_in(dir.path()), before, "a refused rerun writes nothing");

    let o = marked_run(dir.path(), &run, &["--append"]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("continuing"), "{o:?}");
    let s = summary_json(&["--by", "phase"], &[&run]);
    let recs = s["recordings"].as_array().unwrap();
    assert_eq!(recs.len(), 2, "{s}");
    assert_eq!(recs[1]["recording"], 2);
    let mut labels: Vec<&str> =
        s["phases"].as_array().unwrap().iter().filter_map(|p| p["phase"].as_str()).collect();
    labels.sort();
    assert_eq!(labels, ["bs=32", "bs=32 (recording 2)"], "phases of two recordings never merge");
    let text = gpumon().arg("summarize").arg(&run).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("2 separate recordings"));
    let html = dir.path().join("r.html");
    ok(&gpumon().arg("report").arg(&run).arg("-o").arg(&html).output().unwrap());
    assert!(std::fs::read_to_string(&html).unwrap().contains("2 separate recordings"));
    let cmp = gpumon().arg("compare").arg(&run).arg(&run).output().unwrap();
    ok(&cmp);
    assert!(String::from_utf8_lossy(&cmp.stdout).contains("separate recordings"), "{cmp:?}");
    // Python's read(): the same rows, a warning, the phases apart.
    let py = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, warnings; sys.path.insert(0, sys.argv[2]); import gpumon\n\
             with warnings.catch_warnings(record=True) as w:\n\
             \x20   warnings.simplefilter('always')\n\
             \x20   df = gpumon.read(sys.argv[1])\n\
             assert any(issubclass(x.category, gpumon.RecordingsWarning) for x in w), w\n\
             print(sorted(df['phase'].dropna().unique()))",
        )
        .arg(&run)
        .arg(repo_root().join("python"))
        .env("GPUMON_BIN", env!("CARGO_BIN_EXE_gpumon"))
        .output()
        .unwrap();
    ok(&py);
    assert_eq!(String::from_utf8_lossy(&py.stdout).trim(), "['bs=32', 'bs=32 (recording 2)']");

    // Rotation continues a set too (a restarted long-running recorder), said on stderr.
    let o = marked_run(dir.path(), &run, &["--rotate-every", "1d"]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("continuing"), "{o:?}");
}

#[test]
fn sigterm_keeps_the_work_of_the_last_partial_interval() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("p.parquet");
    let mut cmd = gpumon_fake(dir.path(), TWO_GPUS);
    cmd.args(["record", "-q", "-i", "1", "--progress", "samples", "-o"]).arg(&run);
    let rec = Recording::start(cmd);
    let sock = control(&run);
    rec.wait_until(20, "the control socket", || sock.exists());
    std::thread::sleep(Duration::from_millis(1200));
    // Seven reports, the last ones inside an interval that the stop cuts short.
    for _ in 0..7 {
        ok(&gpumon().args(["progress", "--run"]).arg(&run).arg("samples=128").output().unwrap());
        std::thread::sleep(Duration::from_millis(150));
    }
    let (st, log) = rec.stop();
    assert!(st.success(), "{log}");
    let s = summary_json(&[], &[&run]);
    assert_eq!(s["progress"]["samples"]["total"], 896.0, "{}", s["progress"]);
}

#[test]
fn a_python_recording_block_keeps_the_work_of_its_last_interval() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("py.parquet");
    let scenario = dir.path().join("scenario.txt");
    std::fs::write(&scenario, TWO_GPUS).unwrap();
    let py = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, time; sys.path.insert(0, sys.argv[2]); import gpumon\n\
             with gpumon.recording(sys.argv[1], interval=1, show=False, extra_args=['--progress', 'samples']) as rec:\n\
             \x20   time.sleep(1.3)\n\
             \x20   for _ in range(7):\n\
             \x20       gpumon.progress(samples=128); time.sleep(0.1)\n\
             print(rec.summary['progress']['samples']['total'])",
        )
        .arg(&run)
        .arg(repo_root().join("python"))
        .env("GPUMON_BIN", env!("CARGO_BIN_EXE_gpumon"))
        .env("GPUMON_NVML_LIB", fake_nvml())
        .env("FAKE_NVML_SCENARIO", &scenario)
        .output()
        .unwrap();
    ok(&py);
    assert_eq!(String::from_utf8_lossy(&py.stdout).trim(), "896.0", "{py:?}");
}

#[test]
fn a_second_ctrl_c_finishes_the_file_and_names_the_job_left_running() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("j.parquet");
    let mut cmd = gpumon_fake(dir.path(), TWO_GPUS);
    cmd.args(["record", "-q", "-i", "0.2", "-o"]).arg(&run).args([
        "--",
        "sh",
        "-c",
        "trap '' INT TERM; sleep 30",
    ]);
    let mut rec = Recording::start(cmd);
    std::thread::sleep(Duration::from_millis(1000));
    rec.signal(libc::SIGINT);
    rec.wait_for("waiting for the job (pid", 1, 10);
    std::thread::sleep(Duration::from_millis(500));
    rec.signal(libc::SIGINT);
    let (st, log) = rec.wait();
    assert_eq!(st.code(), Some(130), "{log}");
    let pid: i32 = log
        .split("the job (pid ")
        .nth(2)
        .and_then(|t| t.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the job left running is named: {log}"));
    // SAFETY: kill(2) on the job this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_eq!(files_in(dir.path()), ["j.parquet"], "a finished file, nothing hidden left: {log}");
    let s = summary_json(&[], &[&run]);
    assert!(s["hosts"][0]["gpus"].as_array().unwrap().len() == 2, "{s}");
    assert_eq!(s["inputs"][0]["job"]["left_running_pid"], pid, "{}", s["inputs"]);
    let text = gpumon().arg("summarize").arg(&run).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains(&format!("still running (pid {pid})")), "{text}");
}

#[test]
fn a_command_that_cannot_start_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("x.parquet");
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-o"])
        .arg(&run)
        .args(["--", "pyhton", "train.py"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(127), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("pyhton: command not found"), "{err}");
    assert!(files_in(dir.path()).is_empty(), "{:?}", files_in(dir.path()));
}

#[test]
fn a_companion_without_rows_is_an_empty_companion() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.csv");
    ok(&gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-q", "-i", "0.2", "--count", "3", "--processes", "-o"])
        .arg(&run)
        .output()
        .unwrap());
    let procs = std::fs::read_to_string(dir.path().join("run.procs.csv")).unwrap();
    assert_eq!(procs.lines().count(), 1, "a header only: {procs}");
    ok(&gpumon().arg("summarize").arg(&run).output().unwrap());
    let html = dir.path().join("r.html");
    ok(&gpumon().arg("report").arg(&run).arg("-o").arg(&html).output().unwrap());
}

#[test]
fn marks_kept_only_in_the_footer_are_phases() {
    // A recording whose marks reached only its footer (`gpumon.marks`, no phase column), as a plain
    // run of gpumon 0.1.0 kept them: made from a fresh recording with pyarrow.
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.parquet");
    ok(&gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-q", "-i", "0.2", "--count", "8", "-o"])
        .arg(&run)
        .output()
        .unwrap());
    let old = dir.path().join("old.parquet");
    let py = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, json, pyarrow.parquet as pq\n\
             t = pq.read_table(sys.argv[1]); t = t.drop_columns([c for c in t.column_names if c == 'phase'])\n\
             ts = t.column('timestamp').to_pylist(); iso = lambda d: d.isoformat().replace('+00:00', 'Z')\n\
             md = dict(t.schema.metadata or {})\n\
             md[b'gpumon.marks'] = json.dumps([{'time': iso(ts[0]), 'label': 'warm'}, {'time': iso(ts[8]), 'label': 'bs=64'}]).encode()\n\
             pq.write_table(t.replace_schema_metadata(md), sys.argv[2])",
        )
        .arg(&run)
        .arg(&old)
        .output()
        .unwrap();
    ok(&py);
    let s = summary_json(&["--by", "phase"], &[&old]);
    let phases: Vec<(&str, u64)> = s["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["phase"].as_str().unwrap_or("-"),
                p["hosts"][0]["gpus"][0]["samples"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(phases.iter().map(|p| p.0).collect::<Vec<_>>(), ["warm", "bs=64"], "{s}");
}
