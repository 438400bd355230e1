//! Job attribution: wrapping a command, following a PID, exit codes, signal forwarding,
//! per-process GPU memory through the fake NVML.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;

fn col(r: &serde_json::Value, name: &str) -> Vec<serde_json::Value> {
    r["pandas"]["columns"][name]
        .as_array()
        .unwrap_or_else(|| panic!("no column {name}: {}", r["pandas"]["dtypes"]))
        .clone()
}

fn max_f(v: &[serde_json::Value]) -> f64 {
    v.iter().filter_map(serde_json::Value::as_f64).fold(f64::MIN, f64::max)
}

/// Two workers each burn a core and hold ~200 MB for about 2.5 s.
const BURNER: &str = "
import multiprocessing as mp, time
def work():
    buf = bytearray(200 * 1024 * 1024)
    for i in range(0, len(buf), 4096): buf[i] = 1
    t = time.time()
    while time.time() - t < 2.5: pass
if __name__ == '__main__':
    ps = [mp.Process(target=work) for _ in range(2)]
    [p.start() for p in ps]
    [p.join() for p in ps]
";

#[test]
fn wrapped_workers_show_in_job_columns() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("job.csv");
    let o = gpumon()
        .args(["record", "-q", "-i", "250ms", "-o"])
        .arg(&out)
        .args(["--", "python3", "-c", BURNER])
        .env("GPUMON_NVML_LIB", "/nonexistent")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = readback(&out);
    let cpu = max_f(&col(&r, "job.cpu"));
    let rss = max_f(&col(&r, "job.rss"));
    let procs = max_f(&col(&r, "job.procs"));
    // Two busy workers on a 2-core machine that other tests share: order of magnitude, not exact.
    // (Under a fully loaded machine each worker may get a fraction of a core: 30 % is still far
    // above an idle parent's, which stays near 0.)
    assert!(cpu >= 15.0, "two busy workers: job.cpu peaked at {cpu}");
    assert!(rss >= 300.0, "two workers holding 200 MB each: job.rss peaked at {rss}");
    assert!(procs >= 3.0, "parent + 2 workers: job.procs peaked at {procs}");
    let rows = col(&r, "timestamp").len();
    assert!((6..=60).contains(&rows), "recording stops when the command exits: {rows} rows");
}

#[test]
fn exit_codes_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    for (script, code) in [("exit 0", 0), ("exit 3", 3), ("kill -9 $$", 128 + 9)] {
        let out = dir.path().join(format!("e{code}.parquet"));
        let o = gpumon()
            .args(["record", "-q", "-i", "100ms", "-o"])
            .arg(&out)
            .args(["--", "sh", "-c", &format!("sleep 0.3; {script}")])
            .env("GPUMON_NVML_LIB", "/nonexistent")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{script}: {}", String::from_utf8_lossy(&o.stderr));
        let r = readback(&out);
        assert!(
            r["pyarrow"]["rows"].as_u64().unwrap() >= 1,
            "{script}: the file is valid and has the rows"
        );
        assert_eq!(r["pyarrow"]["file_meta"]["gpumon.job.exit_code"], code.to_string());
        assert!(r["pyarrow"]["file_meta"]["gpumon.job.command"].as_str().unwrap().contains(script));
    }
}

#[test]
fn sigterm_reaches_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.parquet");
    let child = gpumon()
        .args(["record", "-q", "-i", "100ms", "-o"])
        .arg(&out)
        .args(["--", "sh", "-c", "trap 'exit 42' TERM; while true; do sleep 0.05; done"])
        .env("GPUMON_NVML_LIB", "/nonexistent")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let t0 = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(42), "the child's trap ran and its code came back");
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(readback(&out)["pyarrow"]["rows"].as_u64().unwrap() >= 5);
}

#[test]
fn follow_pid_until_the_tree_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let mut sleeper = std::process::Command::new("sh")
        .args(["-c", "sleep 1.5 & sleep 1.5; wait"])
        .spawn()
        .unwrap();
    let out = dir.path().join("p.csv");
    let o = gpumon()
        .args(["record", "-q", "-i", "200ms", "--pid", &sleeper.id().to_string(), "-o"])
        .arg(&out)
        .env("GPUMON_NVML_LIB", "/nonexistent")
        .output()
        .unwrap();
    sleeper.wait().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = readback(&out);
    let procs = max_f(&col(&r, "job.procs"));
    assert!(procs >= 3.0, "sh + two sleeps: {procs}");
    let rows = col(&r, "timestamp").len();
    assert!((4..=10).contains(&rows), "ends when the tree is gone: {rows} rows");
    let o = gpumon()
        .args(["record", "--pid", "999999999", "-o"])
        .arg(dir.path().join("n.csv"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "a PID that does not exist is a usage error");
}

/// The children of a process, from /proc.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap().flatten() {
        let s = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        out.extend(s.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
    }
    out
}

#[test]
fn job_gpu_memory_counts_only_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let plist = dir.path().join("procs.txt");
    let scenario = format!(
        "init = ok\n[device]\nname = A\nmemory.total = 80000\nmemory.used = 9000\nutilization.gpu = 50\nprocesses_file = {}\n\
         [device]\nname = B\nmemory.total = 80000\nmemory.used = 100\nutilization.gpu = 0\n",
        plist.display()
    );
    let out = dir.path().join("g.parquet");
    let child = gpumon_fake(dir.path(), &scenario)
        .args(["record", "-q", "-i", "200ms", "--processes", "-o"])
        .arg(&out)
        .args(["--", "sh", "-c", "sleep 2.5"])
        .spawn()
        .unwrap();
    // Wait for gpumon's child (the job), then script NVML: the job's PID and a stranger (this test).
    let t0 = Instant::now();
    let job = loop {
        if let Some(p) = children(child.id()).first() {
            break *p;
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "no child");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::fs::write(&plist, format!("{job}:1000\n{}:500\n", std::process::id())).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let r = readback(&out);
    let jm = r["pyarrow"]["columns"]["job.gpu_memory"].as_array().unwrap().clone();
    let idx = r["pyarrow"]["columns"]["index"].as_array().unwrap().clone();
    let gpu0: Vec<u64> =
        jm.iter().zip(&idx).filter(|(_, i)| **i == 0).filter_map(|(v, _)| v.as_u64()).collect();
    assert_eq!(
        gpu0.iter().max(),
        Some(&1000),
        "only the job's 1000 MiB, not the stranger's 500: {gpu0:?}"
    );
    let gpu1: Vec<u64> =
        jm.iter().zip(&idx).filter(|(_, i)| **i == 1).filter_map(|(v, _)| v.as_u64()).collect();
    assert!(gpu1.iter().all(|v| *v == 0), "nothing of the job on GPU 1: {gpu1:?}");

    let procs = readback(&dir.path().join("g.procs.parquet"));
    let c = &procs["pyarrow"]["columns"];
    let pids = c["proc.pid"].as_array().unwrap();
    let flags = c["proc.job"].as_array().unwrap();
    let mem = c["proc.gpu_memory"].as_array().unwrap();
    assert!(!pids.is_empty());
    let ts = c["timestamp"].as_array().unwrap();
    let dump = format!("job {job}: pids {pids:?} flags {flags:?} ts {ts:?}");
    // The last tick comes after the job exited (the fake still lists its PID): not the job any more.
    let last = ts.last().unwrap();
    for (((p, f), m), t) in pids.iter().zip(flags).zip(mem).zip(ts) {
        let p = p.as_u64().unwrap() as u32;
        if t == last {
            continue;
        }
        if p == job {
            assert_eq!((f, m.as_u64()), (&serde_json::json!(true), Some(1000)), "{dump}");
        } else {
            assert_eq!(p, std::process::id());
            assert_eq!((f, m.as_u64()), (&serde_json::json!(false), Some(500)));
        }
    }
    assert!(pids.iter().any(|p| p.as_u64() == Some(u64::from(job))));
    assert!(pids.iter().any(|p| p.as_u64() == Some(u64::from(std::process::id()))));
    let users = c["proc.user"].as_array().unwrap();
    assert!(users.iter().all(|u| u.as_str().is_some_and(|u| !u.is_empty())));
    assert_eq!(procs["pyarrow"]["types"]["proc.job"], "bool");
}
