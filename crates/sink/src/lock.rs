//! One writer per output set: `record` holds an advisory lock on `.run.parquet.lock` beside the
//! output for the whole run, and `recover` takes the same lock, so recovery never touches a file a
//! live recorder holds and two recorders never share a set.
//!
//! The lock is `flock(2)` (std's `File::try_lock`), like SQLite's and Prometheus TSDB's: the
//! kernel drops it when the process ends, so `kill -9` leaves no stale lock. The file holds the
//! holder's PID, start time and command for the message a second writer gets (exit 2). The holder
//! unlinks the file when it ends; an acquirer therefore checks, after locking, that the file it
//! locked is still the one at the path (else it locked a file just unlinked and tries again).

use std::fs::{File, TryLockError};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{Context, Result, SinkError, SinkErrorKind};
use chrono::{SecondsFormat, Utc};

use gpumon_schema::OutputSet;
use gpumon_util::{escape, fsafe, show};

/// A held lock on an output set; released (and its file removed) when dropped.
#[derive(Debug)]
pub struct OutputLock {
    file: File,
    path: PathBuf,
    /// The file belongs to this user: only then is the holder's line written into it.
    own: bool,
}

impl OutputLock {
    /// Take the lock of the set `output` belongs to for `who` (`record`, `recover`). `Ok(None)` when
    /// no lock file can be made or opened there (a missing or read-only directory: nobody can be
    /// writing the set from here, and the caller's own writes fail with their usual message).
    /// A lock held by another process is a [`SinkErrorKind::Locked`] error naming it (exit code 2).
    pub fn acquire(output: &Path, who: &str) -> Result<Option<OutputLock>> {
        let mut path = OutputSet::new(output).lock_path();
        for _ in 0..100 {
            let Some((file, own)) = open(&path)? else { return Ok(None) };
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    return Err(SinkError::new(
                        SinkErrorKind::Locked,
                        format!(
                            "{} is being written by {}; one writer per output: wait for it to end, or choose another path",
                            output.display(),
                            holder(&path)
                        ),
                    ));
                }
                Err(TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("locking {}", path.display()));
                }
            }
            // The previous holder may have unlinked the file between our open and our lock.
            let mut lock = OutputLock { file, path, own };
            if lock.is_ours() {
                lock.describe(who);
                return Ok(Some(lock));
            }
            // Not ours after all: dropping it must not unlink the file now at the path.
            path = std::mem::take(&mut lock.path);
        }
        Err(SinkError::new(
            SinkErrorKind::Locked,
            format!("could not lock {}: it keeps being replaced", path.display()),
        ))
    }

    /// Write who holds the lock (best effort: a lock file opened read-only keeps the old text, and a
    /// file of another user's is locked but never truncated or written).
    /// Only a file with old text in it is truncated first: on ext4 a truncation to zero marks the
    /// file to be written out when it is closed (`auto_da_alloc`), so the lock file would get a
    /// block that its removal then frees and discards, about 0.13 ms of CPU and up to a millisecond
    /// of wall time per run (bench/README.md). A fresh one is empty and never reaches the disk.
    fn describe(&mut self, who: &str) {
        if !self.own {
            return;
        }
        let text = format!(
            "{} {} gpumon {who}\n",
            std::process::id(),
            Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
        );
        let empty = self.file.metadata().is_ok_and(|m| m.len() == 0);
        if empty || self.file.set_len(0).is_ok() {
            let _ = self.file.write_all(text.as_bytes());
        }
    }
}

impl OutputLock {
    /// Whether the file at the lock's path is still the one this lock holds.
    fn is_ours(&self) -> bool {
        match (self.file.metadata(), std::fs::metadata(&self.path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }

    /// Take the lock again when its file went away with a removed directory that has come back
    /// (the writer resumes there, and a second recorder must still be refused). `Err` names the
    /// process that took the set meanwhile; `Ok` while the directory is still missing.
    pub fn renew(&mut self, who: &str) -> std::result::Result<(), String> {
        if self.is_ours() || !self.path.parent().is_some_and(Path::is_dir) {
            return Ok(());
        }
        let Ok(Some((file, own))) = open(&self.path) else { return Ok(()) };
        match file.try_lock() {
            Ok(()) => {
                (self.file, self.own) = (file, own);
                self.describe(who);
                Ok(())
            }
            Err(TryLockError::WouldBlock) => Err(holder(&self.path)),
            Err(TryLockError::Error(_)) => Ok(()),
        }
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Unlinked while still held: a waiting acquirer sees the change and opens a fresh file.
        // Never a lock file that another process made after this one's directory was removed, nor
        // one of another user's.
        if self.own && self.is_ours() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Open (creating) the lock file without following a link, and whether it is this user's (read-only
/// when another user's). None where none can be made or opened (a missing or read-only directory);
/// a link, or anything but a regular file, at its name is an error: another user may have planted
/// it to have a file elsewhere truncated.
fn open(path: &Path) -> Result<Option<(File, bool)>> {
    match fsafe::open_or_create(path) {
        Ok(f) => Ok(Some(f)),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::PermissionDenied) => Ok(None),
        Err(e) => Err(SinkError::new(
            SinkErrorKind::Locked,
            format!(
                "cannot use the lock file {}: {e}; remove it if you did not put it there",
                show(path)
            ),
        )),
    }
}

/// "`gpumon record` (PID 1234, started 2026-12-02T14:00:00Z)", from the lock file's text.
fn holder(path: &Path) -> String {
    let mut text = String::new();
    // The holder writes its line right after locking: give it a moment.
    for _ in 0..20 {
        text.clear();
        if let Ok(f) = fsafe::open_existing(path, false) {
            let _ = f.take(4096).read_to_string(&mut text);
        }
        if text.ends_with('\n') {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut parts = text.split_whitespace();
    match (parts.next(), parts.next()) {
        (Some(pid), Some(start)) => {
            let cmd: Vec<&str> = parts.collect();
            let cmd = if cmd.is_empty() { "gpumon".to_string() } else { cmd.join(" ") };
            format!("`{}` (PID {}, started {})", escape(&cmd), escape(pid), escape(start))
        }
        _ => format!("another process (it holds {})", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumon_util::{HasExitCode, exit};

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid_and_the_lock_goes_with_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.parquet");
        let first = OutputLock::acquire(&out, "record").unwrap().unwrap();
        assert!(dir.path().join(".run.parquet.lock").exists());
        // A piece's own name belongs to the same set, hence the same lock.
        let e =
            OutputLock::acquire(&dir.path().join("run.20261202T140000.000Z.parquet"), "recover")
                .unwrap_err();
        assert_eq!((e.kind(), e.exit_code()), (SinkErrorKind::Locked, exit::USAGE));
        let msg = format!("{e:#}");
        assert!(
            msg.contains(&format!("PID {}", std::process::id())) && msg.contains("gpumon record"),
            "{msg}"
        );
        drop(first);
        assert!(!dir.path().join(".run.parquet.lock").exists(), "the holder removes its lock file");
        let again = OutputLock::acquire(&out, "recover").unwrap();
        assert!(again.is_some());
    }

    #[test]
    fn a_stale_lock_file_is_rewritten_whole() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run.csv");
        let stale =
            "999999 2026-01-01T00:00:00Z gpumon record with a much longer command line than ours\n";
        std::fs::write(dir.path().join(".run.csv.lock"), stale).unwrap();
        let lock = OutputLock::acquire(&out, "record").unwrap().unwrap();
        let text = std::fs::read_to_string(dir.path().join(".run.csv.lock")).unwrap();
        assert!(
            text.starts_with(&format!("{} ", std::process::id()))
                && text.ends_with(" gpumon record\n"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 1, "{text}");
        drop(lock);
    }

    #[test]
    fn no_lock_where_nothing_can_be_written() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            OutputLock::acquire(&dir.path().join("missing/run.csv"), "record").unwrap().is_none()
        );
    }
}
