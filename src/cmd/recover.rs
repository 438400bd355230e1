//! `gpumon recover`: turn what a crash left of a recording into valid files.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::schema::files::OutputSet;
use crate::sink::files::recover_set;
use crate::sink::lock::OutputLock;
use crate::util::error::{UsageError, exit};
use crate::util::text::show;

/// Recover the set `path` names (or belongs to) and say what was done. A set a live recorder holds
/// is left alone (exit 2, naming the recorder).
pub fn run(path: &Path) -> Result<i32> {
    let set = OutputSet::new(path);
    if !set.dir().is_dir() {
        return Err(UsageError(format!("{}: no such directory", show(set.dir()))).into());
    }
    let _lock = OutputLock::acquire(path, "recover").context("recover changes files a live recorder is writing")?;
    let done = recover_set(&set)?;
    let mut out = std::io::stdout().lock();
    for m in done.messages() {
        writeln!(out, "{m}")?;
    }
    for w in done.warnings() {
        crate::util::warn::warn(&w);
    }
    if done.is_empty() {
        writeln!(out, "nothing to recover for {}", show(&set.base()))?;
    }
    Ok(exit::OK)
}
