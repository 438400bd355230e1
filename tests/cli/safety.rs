//! Recording when the environment fights back: one writer per output, every tick exactly once
//! after ENOSPC and EIO, a removed directory, logrotate `copytruncate`, wall-clock steps, SIGHUP
//! storms, and recovery of what a kill leaves. The real binary on real filesystems (tmpfs mounts),
//! with libfaketime and an LD_PRELOAD shim; assertions are on the data written, never on timing.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::common::*;
use crate::harness::Recording;
use crate::longrun::{TmpfsGuard, small_fs};

/// Two steady GPUs: every tick is two rows.
const STEADY: &str = "init = ok\n[device]\nname = A\nmemory.total = 1000\nmemory.used = 10\nutilization.gpu = 50\n\
                      [device]\nname = B\nmemory.total = 1000\nmemory.used = 20\nutilization.gpu = 60\n";
const GPUS: usize = 2;
const INTERVAL_US: i64 = 100_000;

/// A recorder of the two steady GPUs writing `out`, running in the background.
fn recorder(dir: &Path, args: &[&str], out: &Path, env: &[(&str, OsString)]) -> Recording {
    let mut cmd = gpumon_fake(dir, STEADY);
    cmd.arg("record").args(args).arg("-o").arg(out);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Recording::start(cmd)
}

/// Every row of each group of files or directories (tests/py/tickset.py), in one Python run.
fn ticksets(groups: &[Vec<PathBuf>]) -> Vec<serde_json::Value> {
    let keys: Vec<String> = groups
        .iter()
        .map(|g| g.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":"))
        .collect();
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/tickset.py"))
        .args(&keys)
        .output()
        .unwrap();
    assert!(out.status.success(), "tickset.py: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    keys.iter().map(|k| v[k].clone()).collect()
}

/// Every row of the files or directories given, as one set.
fn tickset(paths: &[PathBuf]) -> serde_json::Value {
    ticksets(&[paths.to_vec()]).remove(0)
}

/// (timestamp µs, index, missed), sorted; after checking every file read cleanly and alike.
fn rows(set: &serde_json::Value, what: &str) -> Vec<(i64, u64, u64)> {
    assert!(
        set["errors"].as_array().unwrap().is_empty(),
        "{what}: unreadable files: {}",
        set["errors"]
    );
    for (name, f) in set["files"].as_object().unwrap() {
        let n = &f["rows"];
        for (reader, m) in f["readers"].as_object().unwrap() {
            assert_eq!(m, n, "{what}: {reader} reads {m} rows of {name}, expected {n}");
        }
        assert!(n.as_u64().unwrap() > 0, "{what}: {name} holds no row");
        if !f["header"].is_null() {
            assert!(
                f["header"].as_str().unwrap().starts_with("timestamp,host,index"),
                "{what}: {name}: {}",
                f["header"]
            );
            assert_eq!(f["nul"], false, "{what}: {name} holds NUL bytes");
            assert_eq!(f["whole_lines"], true, "{what}: {name} ends in half a line");
        }
    }
    let r: Vec<(i64, u64, u64)> = set["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_i64().unwrap(), r[1].as_u64().unwrap(), r[2].as_u64().unwrap()))
        .collect();
    assert!(!r.is_empty(), "{what}: no rows");
    r
}

/// Every (timestamp, index) once, and every tick whole (a row for each GPU).
fn assert_exactly_once(rows: &[(i64, u64, u64)], what: &str) {
    for w in rows.windows(2) {
        assert!((w[0].0, w[0].1) != (w[1].0, w[1].1), "{what}: duplicate row {:?}", w[0]);
    }
    for tick in rows.chunk_by(|a, b| a.0 == b.0) {
        assert_eq!(tick.len(), GPUS, "{what}: a tick with {} rows: {tick:?}", tick.len());
    }
}

/// Ticks of GPU 0 as (timestamp, missed).
fn ticks(rows: &[(i64, u64, u64)]) -> Vec<(i64, u64)> {
    rows.iter().filter(|r| r.1 == 0).map(|r| (r.0, r.2)).collect()
}

/// `missed` accounts for every tick absent from the files. A stamp trails its monotonic deadline by
/// less than one interval (a late sample is stamped late; one later than a whole interval skips
/// deadlines and counts them), so: each hole, in intervals, is its `missed` within one, and over
/// the whole run ticks present + `missed` = deadlines spanned, within one.
fn assert_holes_counted(rows: &[(i64, u64, u64)], what: &str) {
    let t = ticks(rows);
    for w in t.windows(2) {
        let hole = (w[1].0 - w[0].0) as f64 / INTERVAL_US as f64 - 1.0;
        // Within one interval on a quiet machine; a loaded one (ten of these runs side by side
        // with the rest of the suite) was seen to stamp a tick up to ~2.7 intervals late.
        assert!(
            (hole - w[1].1 as f64).abs() < 3.0,
            "{what}: {hole:.2} ticks missing before {} but missed = {}",
            w[1].0,
            w[1].1
        );
    }
    let span = (t[t.len() - 1].0 - t[0].0) as f64 / INTERVAL_US as f64 + 1.0;
    let accounted = (t.len() as u64 + t[1..].iter().map(|x| x.1).sum::<u64>()) as f64;
    assert!(
        (span - accounted).abs() < 3.0,
        "{what}: {span:.2} deadlines, {accounted} ticks present or missed"
    );
}

/// `N` of the `-v` line "gpumon: N ticks written to FILES", and the files.
fn written(log: &str) -> (u64, Vec<String>) {
    let line = log.lines().find_map(|l| {
        let (n, files) = l.strip_prefix("gpumon: ")?.split_once(" ticks written to ")?;
        Some((n.parse().ok()?, files.split(", ").map(str::to_string).collect()))
    });
    line.unwrap_or_else(|| panic!("no 'ticks written' line:\n{log}"))
}

/// The number before `suffix` in the first line holding it.
fn number_before(log: &str, suffix: &str) -> u64 {
    let line = log
        .lines()
        .find(|l| l.contains(suffix))
        .unwrap_or_else(|| panic!("no '{suffix}' in:\n{log}"));
    let head = &line[..line.find(suffix).unwrap()];
    head.trim_end().rsplit(' ').next().unwrap().trim_start_matches('(').parse().unwrap()
}

fn hidden_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

fn now_us() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() as i64
}

fn recover(path: &Path) -> Output {
    gpumon().arg("recover").arg(path).output().unwrap()
}

#[test]
fn a_live_output_has_one_writer_and_a_killed_one_leaves_no_stale_lock() {
    std::thread::scope(|s| {
        for ext in ["csv", "parquet"] {
            s.spawn(move || one_writer(ext));
        }
    });
}

fn one_writer(ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(format!("l.{ext}"));
    let rec = recorder(dir.path(), &["-v", "-i", "100ms", "--flush", "200ms"], &out, &[]);
    rec.wait_for("flushed through", 2, 20);
    let pid = format!("PID {}", rec.child.id());
    let second = gpumon_fake(dir.path(), STEADY)
        .args(["record", "-q", "--count", "3", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{ext}: a second recorder exits 2: {err}");
    assert!(err.contains(&pid) && err.contains("started"), "{ext}: it names the live one: {err}");
    let r = recover(&out);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{ext}: recover of a live output exits 2: {err}");
    assert!(err.contains(&pid), "{ext}: {err}");
    std::thread::sleep(Duration::from_millis(300));
    let (st, log) = rec.stop();
    assert!(st.success(), "{ext}: {st:?}\n{log}");
    let (n, _) = written(&log);
    let r = rows(&tickset(&[dir.path().to_path_buf()]), ext);
    assert_exactly_once(&r, ext);
    assert_holes_counted(&r, ext);
    assert_eq!(
        r.len() as u64,
        n * GPUS as u64,
        "{ext}: the live run ends with every tick it wrote"
    );

    // kill -9 leaves its lock file, but not its lock: recover works at once. (A second recording
    // into the set: --append.)
    let rec =
        recorder(dir.path(), &["-v", "-i", "100ms", "--flush", "200ms", "--append"], &out, &[]);
    rec.wait_for("flushed through", 3, 20);
    let mut rec = rec;
    rec.signal(libc::SIGKILL);
    rec.child.wait().unwrap();
    let r = recover(&out);
    let said = String::from_utf8_lossy(&r.stdout).to_string();
    assert!(
        r.status.success(),
        "{ext}: recover after kill -9: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(
        hidden_files(dir.path()).is_empty(),
        "{ext}: leftovers: {:?}",
        hidden_files(dir.path())
    );
    let set = tickset(&[dir.path().to_path_buf()]);
    let all = rows(&set, ext);
    assert_exactly_once(&all, ext);
    if ext == "parquet" {
        // "rebuilt PATH from its journal (R rows)": R is what the file holds.
        let line =
            said.lines().find(|l| l.starts_with("rebuilt")).unwrap_or_else(|| panic!("{said}"));
        let name = Path::new(line.split(' ').nth(1).unwrap())
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let claimed = number_before(line, "rows)");
        assert_eq!(set["files"][&name]["rows"], claimed, "{line}");
        assert!(claimed >= 2 * GPUS as u64, "{line}");
    }
}

/// Fill a filesystem to the last byte.
fn fill(path: &Path) {
    let mut f = std::fs::File::create(path).unwrap();
    for size in [64 * 1024, 512, 1] {
        let buf = vec![0u8; size];
        while matches!(f.write(&buf), Ok(n) if n > 0) {}
    }
}

#[test]
fn disk_full_for_three_seconds_keeps_every_tick_once_and_counts_the_hole() {
    let root = tempfile::tempdir().unwrap();
    // Ten runs side by side, each on its own 2 MiB tmpfs; read back together once all have ended.
    let runs: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..10)
            .map(|run| {
                let ext = if run % 2 == 0 { "csv" } else { "parquet" };
                let dir = root.path().join(format!("{ext}{run}"));
                std::fs::create_dir(&dir).unwrap();
                s.spawn(move || {
                    disk_full(&dir, ext)
                        .map(|(fs, log)| (fs, log, format!("{ext} in {}", dir.display())))
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().unwrap()).collect()
    });
    if runs.is_empty() {
        return;
    }
    let sets = ticksets(&runs.iter().map(|r| vec![r.0.0.clone()]).collect::<Vec<_>>());
    for ((_fs, log, what), set) in runs.iter().zip(&sets) {
        let dropped = number_before(log, "ticks could not be kept");
        let r = rows(set, what);
        assert_exactly_once(&r, what);
        assert_holes_counted(&r, what);
        // A 10-tick backlog cannot hold 3 s of ticks: the ticks that did not fit are one hole,
        // counted on the first row after it (the scheduler may have skipped a late tick on top).
        let biggest = ticks(&r).iter().map(|t| t.1).max().unwrap();
        assert!(dropped >= 10, "{what}: {dropped} ticks dropped");
        assert!(
            (dropped..=dropped + 3).contains(&biggest),
            "{what}: message says {dropped}, missed says {biggest}\n{log}"
        );
        let files = set["files"].as_object().unwrap().len();
        eprintln!(
            "{what}: {} ticks once each in {files} files; {dropped} dropped, missed {biggest}",
            r.len() / GPUS
        );
    }
}

/// One recording through a 3 s disk-full outage; the tmpfs (kept mounted) and the log.
fn disk_full(dir: &Path, ext: &str) -> Option<(TmpfsGuard, String)> {
    let fs = small_fs(dir, "2m")?;
    let mnt = fs.0.clone();
    let args = ["-v", "-i", "100ms", "--flush", "200ms", "--max-backlog", "20"];
    let rec = recorder(dir, &args, &mnt.join(format!("d.{ext}")), &[]);
    rec.wait_for("flushed through", 3, 20);
    fill(&mnt.join("filler"));
    rec.wait_for("No space left on device", 1, 30);
    std::thread::sleep(Duration::from_secs(3));
    std::fs::remove_file(mnt.join("filler")).unwrap();
    rec.wait_for("writing resumed", 1, 15);
    std::thread::sleep(Duration::from_millis(600));
    let (st, log) = rec.stop();
    assert!(st.success(), "{ext}: {st:?}\n{log}");
    Some((fs, log))
}

/// Build the LD_PRELOAD shim that fails one fdatasync with EIO; None where gcc is missing.
fn eio_shim(dir: &Path) -> Option<PathBuf> {
    let so = dir.join("eio.so");
    let st = Command::new("gcc")
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&so)
        .arg(repo_root().join("tests/eio_shim.c"))
        .arg("-ldl")
        .status();
    match st {
        Ok(s) if s.success() => Some(so),
        _ => {
            skipped("cannot build the LD_PRELOAD shim of the EIO test (gcc missing)");
            None
        }
    }
}

#[test]
fn an_eio_on_the_third_fdatasync_duplicates_nothing() {
    let root = tempfile::tempdir().unwrap();
    let Some(shim) = eio_shim(root.path()) else { return };
    std::thread::scope(|s| {
        for ext in ["csv", "parquet"] {
            let dir = root.path().join(ext);
            std::fs::create_dir(&dir).unwrap();
            let shim = shim.clone();
            s.spawn(move || {
                let env = [("LD_PRELOAD", shim.into_os_string()), ("EIO_ON_FDATASYNC", "3".into())];
                let out = dir.join(format!("e.{ext}"));
                let rec = recorder(&dir, &["-v", "-i", "100ms", "--flush", "200ms"], &out, &env);
                rec.wait_for("Input/output error", 1, 20);
                rec.wait_for("writing resumed", 1, 15);
                std::thread::sleep(Duration::from_millis(500));
                let (st, log) = rec.stop();
                assert!(st.success(), "{ext}: {st:?}\n{log}");
                assert_eq!(number_before(&log, "ticks could not be kept"), 0, "{log}");
                let set = tickset(std::slice::from_ref(&dir));
                let r = rows(&set, ext);
                assert_exactly_once(&r, ext);
                assert_holes_counted(&r, ext);
                let files = set["files"].as_object().unwrap().len();
                assert!(files >= 2, "{ext}: resumed into a new piece: {}", set["files"]);
                eprintln!(
                    "EIO {ext}: {} ticks once each in {files} files, none dropped",
                    r.len() / GPUS
                );
            });
        }
    });
}

#[test]
fn a_removed_directory_is_reported_once_and_writing_resumes_when_it_returns() {
    std::thread::scope(|s| {
        for ext in ["csv", "parquet"] {
            s.spawn(move || removed_directory(ext));
        }
    });
}

fn removed_directory(ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let out = sub.join(format!("r.{ext}"));
    let rec = recorder(dir.path(), &["-v", "-i", "100ms", "--flush", "200ms"], &out, &[]);
    rec.wait_for("flushed through", 3, 20);
    std::fs::remove_dir_all(&sub).unwrap();
    std::thread::sleep(Duration::from_secs(4));
    std::fs::create_dir(&sub).unwrap();
    let back = now_us();
    rec.wait_for("writing resumed", 1, 15);
    std::thread::sleep(Duration::from_secs(1));
    // The lock file went with the directory; the recorder makes it again, so a second recorder
    // on the returned directory is still refused.
    let lock = sub.join(format!(".r.{ext}.lock"));
    for _ in 0..30 {
        if lock.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let second = crate::common::gpumon()
        .args(["record", "-q", "-i", "100ms", "--count", "1", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{ext}: a second recorder after the return: {err}");
    assert!(err.contains("is being written by"), "{ext}: {err}");
    let (st, log) = rec.stop();
    assert!(st.success(), "{ext}: {st:?}\n{log}");
    let removed: Vec<&str> = log.lines().filter(|l| l.contains("was removed")).collect();
    assert_eq!(removed.len(), 1, "{ext}: one warning:\n{log}");
    assert!(
        removed[0].contains(&out.display().to_string()),
        "{ext}: it names the file: {}",
        removed[0]
    );
    assert_eq!(number_before(&log, "ticks could not be kept"), 0, "{log}");
    let r = rows(&tickset(std::slice::from_ref(&sub)), ext);
    assert_exactly_once(&r, ext);
    assert_holes_counted(&r, ext);
    assert!(
        r[0].0 <= back,
        "{ext}: the ticks from the return on are all there (first {} > {back})",
        r[0].0
    );
    // The final message names only files that exist, with the ticks they hold.
    let (n, files) = written(&log);
    assert!(files.iter().all(|f| Path::new(f).exists()), "{ext}: {files:?}");
    assert_eq!(n * GPUS as u64, r.len() as u64, "{ext}: {log}");
    let gone = number_before(removed[0], "ticks it held are gone");
    let before = (back - r[0].0) / 1000;
    eprintln!(
        "removed dir {ext}: {gone} ticks gone with it, {n} in {files:?}, from {before} ms before the return"
    );
}

#[test]
fn logrotate_copytruncate_or_rename_and_hup_leave_two_valid_csv_files_and_lose_no_tick() {
    std::thread::scope(|s| {
        s.spawn(copytruncate);
        s.spawn(rename_and_hup);
    });
}

fn copytruncate() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.csv");
    let rec = recorder(dir.path(), &["-v", "-i", "100ms", "--flush", "1s"], &out, &[]);
    // Right after a flush, as logrotate does: copy, then truncate the original in place.
    rec.wait_for("flushed through", 2, 20);
    let rotated = dir.path().join("c.csv.1");
    std::fs::copy(&out, &rotated).unwrap();
    std::fs::OpenOptions::new().write(true).open(&out).unwrap().set_len(0).unwrap();
    rec.wait_for("flushed through", 4, 20);
    let (st, log) = rec.stop();
    assert!(st.success(), "{st:?}\n{log}");
    let set = tickset(&[rotated, out]);
    let r = rows(&set, "copytruncate");
    assert_eq!(set["files"].as_object().unwrap().len(), 2);
    assert_exactly_once(&r, "copytruncate");
    assert_holes_counted(&r, "copytruncate");
    eprintln!("copytruncate: {} ticks once each across both files", r.len() / GPUS);
}

/// logrotate without copytruncate: rename, then `postrotate kill -HUP`; gpumon writes the name
/// given again, as nginx and rsyslog reopen their logs.
fn rename_and_hup() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("n.csv");
    let rec = recorder(dir.path(), &["-v", "-i", "100ms", "--flush", "200ms"], &out, &[]);
    rec.wait_for("flushed through", 3, 20);
    let rotated = dir.path().join("n.csv.1");
    std::fs::rename(&out, &rotated).unwrap();
    rec.signal(libc::SIGHUP);
    rec.wait_for("gpumon: writing ", 2, 20);
    let flushed = rec.count("flushed through");
    rec.wait_for("flushed through", flushed + 3, 20);
    let (st, log) = rec.stop();
    assert!(st.success(), "{st:?}\n{log}");
    assert!(out.exists(), "the name given is written again:\n{log}");
    let set = tickset(&[rotated, out]);
    let r = rows(&set, "rename + HUP");
    assert_exactly_once(&r, "rename + HUP");
    assert_holes_counted(&r, "rename + HUP");
}

fn faketime_lib() -> Option<PathBuf> {
    let found = ["x86_64-linux-gnu", "aarch64-linux-gnu", ""]
        .iter()
        .map(|arch| {
            PathBuf::from(format!("/usr/lib/{arch}/faketime/libfaketime.so.1").replace("//", "/"))
        })
        .find(|p| p.exists());
    if found.is_none() {
        skipped("libfaketime not installed (apt-get install faketime)");
    }
    found
}

#[test]
fn a_backward_clock_step_is_reported_once_and_repeats_no_timestamp() {
    let Some(lib) = faketime_lib() else { return };
    std::thread::scope(|s| {
        for ext in ["csv", "parquet"] {
            let lib = lib.clone();
            s.spawn(move || {
                let dir = tempfile::tempdir().unwrap();
                let rc = dir.path().join("faketime.rc");
                std::fs::write(&rc, "+0\n").unwrap();
                let env = [
                    ("LD_PRELOAD", lib.into_os_string()),
                    ("FAKETIME_TIMESTAMP_FILE", rc.clone().into_os_string()),
                    ("FAKETIME_NO_CACHE", "1".into()),
                    ("FAKETIME_DONT_FAKE_MONOTONIC", "1".into()),
                ];
                let out = dir.path().join(format!("k.{ext}"));
                let rec = recorder(dir.path(), &["-v", "-i", "100ms", "--flush", "200ms"], &out, &env);
                rec.wait_for("flushed through", 5, 20);
                std::fs::write(&rc, "-2\n").unwrap();
                rec.wait_for("stepped back", 1, 10);
                // Through the 4 s catch-up and past it.
                std::thread::sleep(Duration::from_millis(4500));
                let (st, log) = rec.stop();
                assert!(st.success(), "{ext}: {st:?}\n{log}");
                let steps: Vec<&str> = log.lines().filter(|l| l.contains("stepped")).collect();
                assert_eq!(steps.len(), 1, "{ext}: one warning:\n{log}");
                let size: f64 =
                    steps[0].split("stepped back ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
                assert!((1.9..2.1).contains(&size), "{ext}: {}", steps[0]);
                let r = rows(&tickset(&[dir.path().to_path_buf()]), ext);
                assert_exactly_once(&r, ext);
                let (n, _) = written(&log);
                assert_eq!(r.len() as u64, n * GPUS as u64, "{ext}: every tick is kept");
                eprintln!("clock step {ext}: back {size:.3} s, one warning; {n} ticks, no (timestamp, index) twice");
            });
        }
    });
}

#[test]
fn twenty_sighups_in_a_second_with_keep_5_keep_the_data_and_make_no_empty_file() {
    std::thread::scope(|s| {
        for ext in ["csv", "parquet"] {
            s.spawn(move || {
                let dir = tempfile::tempdir().unwrap();
                let out = dir.path().join(format!("h.{ext}"));
                let rec = recorder(dir.path(), &["-v", "-i", "100ms", "--keep", "5"], &out, &[]);
                rec.wait_for("flushed through", 1, 20);
                for _ in 0..20 {
                    rec.signal(libc::SIGHUP);
                    std::thread::sleep(Duration::from_millis(50));
                }
                std::thread::sleep(Duration::from_millis(300));
                let (st, log) = rec.stop();
                assert!(st.success(), "{ext}: {st:?}\n{log}");
                let last: i64 = log
                    .lines()
                    .filter_map(|l| {
                        l.strip_prefix("gpumon: flushed through ")?
                            .strip_suffix(" µs")?
                            .parse()
                            .ok()
                    })
                    .next_back()
                    .unwrap();
                let set = tickset(&[dir.path().to_path_buf()]);
                // Every kept file holds rows (rows() checks), the newest ticks are there.
                let r = rows(&set, ext);
                assert_exactly_once(&r, ext);
                let last = if ext == "csv" { last / 1000 * 1000 } else { last };
                assert!(r.iter().any(|t| t.0 == last), "{ext}: the last tick survives");
                let mut names: Vec<String> =
                    set["files"].as_object().unwrap().keys().cloned().collect();
                assert!((2..=5).contains(&names.len()), "{ext}: --keep 5: {names:?}");
                // `ls` order is time order.
                names.sort();
                let first_ts: Vec<i64> = names
                    .iter()
                    .filter(|n| n.as_str() != format!("h.{ext}"))
                    .map(|n| set["files"][n]["first"].as_i64().unwrap())
                    .collect();
                assert!(
                    first_ts.windows(2).all(|w| w[0] < w[1]),
                    "{ext}: {names:?} sort out of time order"
                );
                assert!(
                    hidden_files(dir.path()).is_empty(),
                    "{ext}: {:?}",
                    hidden_files(dir.path())
                );
                let pieces = log.lines().filter(|l| l.starts_with("gpumon: writing ")).count();
                eprintln!(
                    "SIGHUP storm {ext}: {pieces} pieces, {} kept, {} rows, none empty",
                    names.len(),
                    r.len()
                );
            });
        }
    });
}

fn said(p: &Path) -> String {
    let o = recover(p);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn leftover_states_recover_to_their_rows_with_truthful_messages() {
    std::thread::scope(|s| {
        s.spawn(complete_piece_with_a_journal);
        for ext in ["parquet", "csv"] {
            s.spawn(move || killed_before_the_first_flush(ext));
        }
        s.spawn(torn_csv_line);
        s.spawn(journal_deleted_while_live);
    });
}

/// A complete piece with the journal a kill between the rename and the unlink left.
fn complete_piece_with_a_journal() {
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done.parquet");
    let o = gpumon_fake(dir.path(), STEADY)
        .args(["record", "-q", "-i", "100ms", "--count", "15", "-o"])
        .arg(&done)
        .output();
    assert!(o.unwrap().status.success());
    std::fs::write(dir.path().join(".done.parquet.journal"), b"whatever was left").unwrap();
    let m = said(&done);
    assert!(m.contains("already complete (30 rows)"), "{m}");
    assert!(hidden_files(dir.path()).is_empty(), "{:?}", hidden_files(dir.path()));
}

/// Killed before the first flush (the first tick is 10 s away): nothing visible is left.
fn killed_before_the_first_flush(ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(format!("k.{ext}"));
    let mut rec = recorder(dir.path(), &["-v", "-i", "10s"], &out, &[]);
    rec.wait_for("writing", 1, 20);
    rec.signal(libc::SIGKILL);
    rec.child.wait().unwrap();
    let m = said(&out);
    assert!(m.contains("no rows (killed before its first flush)"), "{ext}: {m}");
    assert!(!out.exists(), "{ext}: no 0-row file");
    assert!(hidden_files(dir.path()).is_empty(), "{ext}: {:?}", hidden_files(dir.path()));
}

/// A torn CSV line: the rows before it are kept, and said so.
fn torn_csv_line() {
    let dir = tempfile::tempdir().unwrap();
    let torn = dir.path().join("t.csv");
    let o = gpumon_fake(dir.path(), STEADY)
        .args(["record", "-q", "-i", "100ms", "--count", "10", "-o"])
        .arg(&torn)
        .output();
    assert!(o.unwrap().status.success());
    std::fs::OpenOptions::new()
        .append(true)
        .open(&torn)
        .unwrap()
        .write_all(b"2026-12-02T14:00:00.000Z,ho")
        .unwrap();
    let m = said(&torn);
    assert!(m.contains("cut a torn last line (27 bytes)") && m.contains("(20 rows kept)"), "{m}");
}

/// A journal someone deletes while the run is live: one warning, and the run still ends complete.
fn journal_deleted_while_live() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.parquet");
    let rec = recorder(dir.path(), &["-v", "-i", "100ms", "--flush", "200ms"], &out, &[]);
    rec.wait_for("flushed through", 3, 20);
    std::fs::remove_file(dir.path().join(".j.parquet.journal")).unwrap();
    rec.wait_for("flushed through", 5, 20);
    let (st, log) = rec.stop();
    assert!(st.success(), "{st:?}\n{log}");
    assert_eq!(
        log.lines().filter(|l| l.contains(".j.parquet.journal was removed")).count(),
        1,
        "{log}"
    );
    let (n, _) = written(&log);
    let r = rows(&tickset(&[out]), "deleted journal");
    assert_eq!(r.len() as u64, n * GPUS as u64);
}
