//! `gpumon recover`: turn what a crash left of a recording into valid files, and remove the status
//! file of a recorder that is gone.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use gpumon_schema::{LiveStatus, NotRead, OutputSet, read_status, status_path};
use gpumon_sink::OutputLock;
use gpumon_sink::recover_set;
use gpumon_util::fsafe;
use gpumon_util::show;
use gpumon_util::warn;
use gpumon_util::{UsageError, exit};

/// Remove the status file beside `base` (a link into the run's private directory) when the recorder
/// that wrote it no longer runs, with what that directory holds; the link's path.
fn remove_dead_status(base: &Path) -> Option<std::path::PathBuf> {
    let link = status_path(base);
    std::fs::symlink_metadata(&link).ok()?;
    // Only a status file of this user's is looked at (read without blocking, bounded) and removed.
    let doc = match read_status(base) {
        Ok(b) => serde_json::from_slice::<LiveStatus>(&b).ok(),
        Err(NotRead::Missing) => None,
        Err(NotRead::Refused(why)) => {
            warn(&format!("left the status file alone: {why}"));
            return None;
        }
    };
    let host = gpumon_source::hostname();
    if doc.is_some_and(|st| st.recorder_alive(&host)) {
        return None;
    }
    if let Ok(file) = std::fs::read_link(&link)
        && let Some(dir) = file.parent().filter(|d| {
            d.file_name().is_some_and(|n| n.to_string_lossy().starts_with("gpumon-"))
                && fsafe::private_dir(d)
        })
    {
        for name in ["status", ".status.tmp", "ctl"] {
            let _ = std::fs::remove_file(dir.join(name));
        }
        let _ = std::fs::remove_dir(dir);
    }
    std::fs::remove_file(&link).ok().map(|()| link)
}

/// Recover the set `path` names (or belongs to) and say what was done. A set a live recorder holds
/// is left alone (exit 2, naming the recorder).
pub fn run(path: &Path) -> Result<i32> {
    let set = OutputSet::new(path);
    if !set.dir().is_dir() {
        return Err(UsageError(format!("{}: no such directory", show(set.dir()))).into());
    }
    let _lock = OutputLock::acquire(path, "recover")
        .context("recover changes files a live recorder is writing")?;
    let done = recover_set(&set)?;
    let mut out = std::io::stdout().lock();
    for m in done.messages() {
        writeln!(out, "{m}")?;
    }
    for w in done.warnings() {
        gpumon_util::warn(&w);
    }
    let status = remove_dead_status(&set.base());
    if let Some(p) = &status {
        writeln!(out, "removed {}: the status file of a recorder that is gone", show(p))?;
    }
    if done.is_empty() && status.is_none() {
        writeln!(out, "nothing to recover for {}", show(&set.base()))?;
    }
    Ok(exit::OK)
}
