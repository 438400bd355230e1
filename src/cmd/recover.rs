//! `gpumon recover`: turn what a crash left of a recording into valid files.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::schema::files::OutputSet;
use crate::sink::files::recover_set;
use crate::util::error::{UsageError, exit};
use crate::util::text::show;

/// Recover the set `path` names (or belongs to) and say what was done.
pub fn run(path: &Path) -> Result<i32> {
    let set = OutputSet::new(path);
    if !set.dir().is_dir() {
        return Err(UsageError(format!("{}: no such directory", show(set.dir()))).into());
    }
    let done = recover_set(&set)?;
    let mut out = std::io::stdout().lock();
    for (p, rows) in &done.rebuilt {
        writeln!(out, "rebuilt {} from its journal ({rows} rows)", show(p))?;
    }
    for (p, cut) in &done.trimmed {
        writeln!(out, "cut a torn last line ({cut} bytes) from {}", show(p))?;
    }
    for p in &done.removed {
        writeln!(out, "removed {}: empty (killed before its header was written)", show(p))?;
    }
    for (p, why) in &done.kept {
        crate::util::warn::warn(&format!("kept the damaged journal as {}: {why}", show(p)));
    }
    if done.is_empty() {
        writeln!(out, "nothing to recover for {}", show(&set.base()))?;
    }
    Ok(exit::OK)
}
