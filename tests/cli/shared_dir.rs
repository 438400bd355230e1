//! A hostile neighbour on the filesystem: another user who can write to the output directory (a
//! sticky shared directory) plants links, files, FIFOs and status documents where gpumon will
//! look, and gpumon, run as root or as a user, neither follows nor trusts them. Tests that need a
//! second user make one (`useradd`) and are skipped with one printed line where that is impossible.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::*;

/// The unprivileged neighbour's (uid, gid), made once; None (and one printed line) when the tests
/// do not run as root or no user can be made.
fn neighbour() -> Option<(u32, u32)> {
    const NAME: &str = "gpumon-neighbour";
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: a second user needs root to make");
        return None;
    }
    let id = |flag: &str| -> Option<u32> {
        let o = Command::new("id").args([flag, NAME]).output().ok()?;
        String::from_utf8_lossy(&o.stdout).trim().parse().ok()
    };
    if id("-u").is_none() {
        let _ = Command::new("useradd").args(["-r", "-M", "-s", "/usr/sbin/nologin", NAME]).output();
    }
    match (id("-u"), id("-g")) {
        (Some(u), Some(g)) => Some((u, g)),
        _ => {
            println!("skipped: cannot make a second user (useradd failed)");
            None
        }
    }
}

/// A directory everybody may write to, sticky like /tmp.
fn shared() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

/// Change the owner of `path` itself (a link, not its target).
fn chown(path: &Path, (uid, gid): (u32, u32)) {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid)).unwrap();
}

/// A short host-only recording to `out`.
fn record(out: &Path) -> Command {
    let mut c = gpumon();
    c.args(["record", "-q", "-i", "100ms", "--count", "2", "-o"]).arg(out);
    c
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The files of `dir` whose names start with `prefix`, sorted.
fn named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    v.sort();
    v
}

#[test]
fn a_planted_lock_link_is_never_followed_by_record_or_recover() {
    let dir = shared();
    let (important, nowhere) = (dir.path().join("important"), dir.path().join("nowhere"));
    std::fs::write(&important, "precious\n").unwrap();
    let lock = dir.path().join(".runA.csv.lock");
    symlink(&important, &lock).unwrap();
    let o = record(&dir.path().join("runA.csv")).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains(".runA.csv.lock") && text(&o).contains("symbolic link"), "{}", text(&o));
    let o = gpumon().arg("recover").arg(dir.path().join("runA.csv")).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&important).unwrap(), "precious\n", "the link's target is untouched");
    // A dangling one makes no file where it points.
    std::fs::remove_file(&lock).unwrap();
    symlink(&nowhere, &lock).unwrap();
    let o = record(&dir.path().join("runA.csv")).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&nowhere).is_err(), "nothing created through the link");
}

#[test]
fn a_lock_file_of_another_user_is_locked_but_never_rewritten() {
    let Some(nb) = neighbour() else { return };
    let dir = shared();
    let lock = dir.path().join(".runB.csv.lock");
    std::fs::write(&lock, "the neighbour's own words\n").unwrap();
    chown(&lock, nb);
    let o = record(&dir.path().join("runB.csv")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), "the neighbour's own words\n", "neither truncated nor removed");
}

#[test]
fn data_files_are_never_created_through_a_dangling_link() {
    let dir = shared();
    let target = dir.path().join("chosen-by-the-attacker");
    symlink(&target, dir.path().join("runF.csv")).unwrap();
    let o = record(&dir.path().join("runF.csv")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&target).is_err(), "nothing created through the link");
    let pieces = named(dir.path(), "runF.2");
    assert_eq!(pieces.len(), 1, "the rows went to a piece of their own: {pieces:?}");
    assert!(std::fs::read_to_string(&pieces[0]).unwrap().starts_with("timestamp,"));
}

#[test]
fn a_companion_file_is_never_created_through_a_dangling_link() {
    let dir = shared();
    let target = dir.path().join("chosen-by-the-attacker");
    symlink(&target, dir.path().join("runH.events.csv")).unwrap();
    let scenario = "init = ok\n[device]\nname = NVIDIA H100 80GB HBM3\nutilization.gpu = 90\nevents = xid:79@1\n";
    let o = gpumon_fake(dir.path(), scenario)
        .args(["record", "-q", "-i", "100ms", "--count", "4", "-o"])
        .arg(dir.path().join("runH.csv"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&target).is_err(), "nothing created through the link");
    let events = named(dir.path(), "runH.events.2");
    assert_eq!(events.len(), 1, "the events went to a file of their own: {events:?}");
    assert!(std::fs::read_to_string(&events[0]).unwrap().contains("xid"));
}

#[test]
fn a_template_directory_linked_elsewhere_by_another_user_is_refused() {
    let Some(nb) = neighbour() else { return };
    let dir = shared();
    let elsewhere = dir.path().join("dirL");
    std::fs::create_dir(&elsewhere).unwrap();
    chown(&elsewhere, nb);
    let link = dir.path().join("host=evil");
    symlink(&elsewhere, &link).unwrap();
    chown(&link, nb);
    let o = gpumon()
        .args(["record", "-q", "-i", "100ms", "--count", "2", "--host", "evil", "-o"])
        .arg(dir.path().join("host={host}/runL.csv"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("host=evil") && text(&o).contains("symbolic link"), "{}", text(&o));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing written where the link points");
    // The recorder's own directories are made as before.
    let o = gpumon()
        .args(["record", "-q", "-i", "100ms", "--count", "2", "--host", "good", "-o"])
        .arg(dir.path().join("host={host}/runL.csv"))
        .output()
        .unwrap();
    assert!(o.status.success() && dir.path().join("host=good/runL.csv").is_file(), "{}", text(&o));
}

#[test]
fn a_dangling_journal_link_does_not_stop_a_recording() {
    let dir = shared();
    let nowhere = dir.path().join("nowhere");
    let journal = dir.path().join(".run.parquet.journal");
    symlink(&nowhere, &journal).unwrap();
    let o = record(&dir.path().join("run.parquet")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(".run.parquet.journal") && text(&o).contains("symbolic link"), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&nowhere).is_err() && std::fs::symlink_metadata(&journal).is_ok());
    assert_eq!(named(dir.path(), "run.2").len(), 1, "the rows went to a piece of their own");
}

// Keep helpers used when a test is cut down.
#[allow(dead_code)]
fn as_user(c: &mut Command, (uid, gid): (u32, u32)) -> &mut Command {
    c.uid(uid).gid(gid)
}

#[allow(dead_code)]
fn waited(t0: Instant, limit: Duration) -> bool {
    t0.elapsed() < limit
}
