//! Retention and crash recovery of an output set: rebuild Parquet pieces from their journals, cut
//! a CSV's torn last line, delete the oldest closed pieces gpumon wrote. Recovery rewrites only
//! files gpumon wrote, and deletes a journal only when every byte of it was read (or is the torn
//! tail of a crash): a damaged one is kept beside the rebuilt piece as `.X.journal.damaged`.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use crate::schema::files::{
    OutputSet, PARTIAL, hidden, journal_path, partial_path, piece_of_journal, sync_dir, written_by_gpumon,
};
use crate::schema::journal::{Journal, Unreadable};
use crate::sink::parquet::writer_properties_from;
use crate::util::error::UsageError;
use crate::util::text::show;

/// What recovery did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Recovered {
    /// (file written, rows in it) for each rebuilt Parquet piece.
    pub rebuilt: Vec<(PathBuf, u64)>,
    /// CSV pieces whose torn last line was cut, with the bytes removed.
    pub trimmed: Vec<(PathBuf, u64)>,
    /// Empty pieces (killed before their header was written) that were deleted.
    pub removed: Vec<PathBuf>,
    /// Journals with damage, kept under this name after their piece was rebuilt, with what was lost.
    pub kept: Vec<(PathBuf, String)>,
}

impl Recovered {
    pub fn is_empty(&self) -> bool {
        self.rebuilt.is_empty() && self.trimmed.is_empty() && self.removed.is_empty() && self.kept.is_empty()
    }
}

/// Turn everything a crash left in this set into valid files.
pub fn recover_set(set: &OutputSet) -> Result<Recovered> {
    let mut done = Recovered::default();
    for journal in set.leftover_journals()? {
        let Some(piece) = piece_of_journal(&journal) else { continue };
        let (rows, kept) = recover_journal(&journal, &piece)?;
        if kept.is_none() || piece.exists() {
            done.rebuilt.push((piece, rows));
        }
        done.kept.extend(kept);
    }
    // A partial file without a journal was never written to (the crash hit while opening it).
    for e in fs::read_dir(set.dir()).with_context(|| format!("listing {}", set.dir().display()))?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(piece) = name.strip_prefix('.').and_then(|n| n.strip_suffix(PARTIAL))
            && set.is_member_name(piece)
            && !journal_path(&set.dir().join(piece)).exists()
        {
            let _ = fs::remove_file(e.path());
        }
    }
    if set.ext().eq_ignore_ascii_case(".csv") {
        for m in set.members()? {
            let empty = fs::metadata(&m).is_ok_and(|md| md.len() == 0);
            if !empty && !gpumon_csv(&m) {
                // Not gpumon's own CSV (an nvidia-smi log, say): never rewritten.
                continue;
            }
            let cut = trim_torn_line(&m)?;
            if fs::metadata(&m).is_ok_and(|md| md.len() == 0) {
                // Killed before even the header reached the disk: the piece holds nothing.
                fs::remove_file(&m).with_context(|| format!("removing empty {}", m.display()))?;
                done.removed.push(m);
            } else if cut > 0 {
                done.trimmed.push((m, cut));
            }
        }
    }
    Ok(done)
}

/// Whether `path` starts with gpumon's own CSV header (`timestamp,` without the space that
/// nvidia-smi's `--format=csv` puts after each comma).
fn gpumon_csv(path: &Path) -> bool {
    let Ok(f) = File::open(path) else { return false };
    let mut first = Vec::new();
    let _ = BufReader::new(f.take(4096)).read_until(b'\n', &mut first);
    first.starts_with(b"timestamp,") && !first.starts_with(b"timestamp, ")
}

/// Rebuild `piece` from its journal (every valid batch, before and after any damage), then remove
/// the partial file and the journal; a journal with damage (or a schema that cannot be read) is
/// kept as `.X.journal.damaged` and returned with what was lost. When the piece already exists (the crash hit after the rename),
/// only the leftovers go. A piece name held by a file gpumon did not write (or by a link to the
/// journal itself) is never overwritten.
pub fn recover_journal(journal: &Path, piece: &Path) -> Result<(u64, Option<(PathBuf, String)>)> {
    let partial = partial_path(piece);
    if piece.exists() && written_by_gpumon(piece) {
        let _ = fs::remove_file(&partial);
        fs::remove_file(journal).with_context(|| format!("removing {}", show(journal)))?;
        return Ok((0, None));
    }
    if fs::symlink_metadata(piece).is_ok() {
        return Err(UsageError(format!(
            "{}: exists and is not a Parquet file gpumon wrote (a link to its journal?); it is not overwritten: \
             move it away to rebuild it from {}",
            show(piece),
            show(journal)
        ))
        .into());
    }
    let file = File::open(journal).with_context(|| format!("opening {}", show(journal)))?;
    let j = match Journal::open(file) {
        Ok(j) => j,
        Err(Unreadable::Empty) => {
            // Not even a schema made it to disk: nothing to recover.
            let _ = fs::remove_file(&partial);
            fs::remove_file(journal).with_context(|| format!("removing {}", show(journal)))?;
            return Ok((0, None));
        }
        Err(e) => {
            // Nothing can be decoded without the schema: keep the journal aside, whole.
            let _ = fs::remove_file(&partial);
            return Ok((0, Some((keep_damaged(journal, piece)?, e.to_string()))));
        }
    };
    let schema = j.schema();
    let props: WriterProperties = writer_properties_from(schema.metadata());
    let tmp = hidden(piece, ".recovering");
    let out = File::create(&tmp).with_context(|| format!("creating {}", show(&tmp)))?;
    let mut w = ArrowWriter::try_new(out, schema, Some(props)).with_context(|| format!("writing {}", show(&tmp)))?;
    let read = j.read_batches(&mut |batch| w.write(batch).with_context(|| format!("writing {}", show(&tmp))));
    let read = match read {
        Ok(r) => r,
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let out = w.into_inner().with_context(|| format!("closing {}", show(&tmp)))?;
    out.sync_all().with_context(|| format!("syncing {}", show(&tmp)))?;
    fs::rename(&tmp, piece).with_context(|| format!("renaming {} to {}", show(&tmp), show(piece)))?;
    sync_dir(piece.parent().unwrap_or(Path::new(".")));
    let _ = fs::remove_file(&partial);
    let Some(damage) = read.damage_summary() else {
        fs::remove_file(journal).with_context(|| format!("removing {}", show(journal)))?;
        return Ok((read.rows, None));
    };
    Ok((read.rows, Some((keep_damaged(journal, piece)?, damage))))
}

/// Move a journal that could not be read in full to `.X.journal.damaged`: kept, but no longer a
/// leftover that recovery or the readers pick up again.
fn keep_damaged(journal: &Path, piece: &Path) -> Result<PathBuf> {
    let kept = hidden(piece, ".journal.damaged");
    fs::rename(journal, &kept).with_context(|| format!("renaming {} to {}", show(journal), show(&kept)))?;
    Ok(kept)
}

/// Cut a CSV file back to its last complete line; returns the bytes removed.
pub fn trim_torn_line(path: &Path) -> Result<u64> {
    let mut f =
        OpenOptions::new().read(true).write(true).open(path).with_context(|| format!("opening {}", path.display()))?;
    let len = f.metadata().with_context(|| format!("reading {}", path.display()))?.len();
    if len == 0 {
        return Ok(0);
    }
    // Walk back in blocks to the last newline.
    let mut end = len;
    let mut buf = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        f.seek(SeekFrom::Start(start)).with_context(|| format!("reading {}", path.display()))?;
        f.read_exact(&mut buf[..n]).with_context(|| format!("reading {}", path.display()))?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            let keep = start + i as u64 + 1;
            if keep < len {
                f.set_len(keep).with_context(|| format!("truncating {}", path.display()))?;
                f.sync_all().with_context(|| format!("syncing {}", path.display()))?;
            }
            return Ok(len - keep);
        }
        end = start;
    }
    Ok(0)
}

/// Delete the oldest closed pieces until at most `keep` remain and they total at most `max_total`
/// bytes. Never touches `current` or files gpumon did not write. Returns the deleted paths.
pub fn retain(
    set: &OutputSet,
    keep: Option<usize>,
    max_total: Option<u64>,
    current: Option<&Path>,
) -> Result<Vec<PathBuf>> {
    if keep.is_none() && max_total.is_none() {
        return Ok(Vec::new());
    }
    let mut files: Vec<(PathBuf, u64)> = set
        .members()?
        .into_iter()
        .filter(|p| Some(p.as_path()) != current && written_by_gpumon(p))
        .map(|p| {
            let len = fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
            (p, len)
        })
        .collect();
    let mut deleted = Vec::new();
    let current_len = current.and_then(|c| fs::metadata(c).ok()).map_or(0, |m| m.len());
    loop {
        let count = files.len() + usize::from(current.is_some());
        let total: u64 = files.iter().map(|f| f.1).sum::<u64>() + current_len;
        let over = keep.is_some_and(|k| count > k) || max_total.is_some_and(|m| total > m);
        if !over || files.is_empty() {
            break;
        }
        let (oldest, _) = files.remove(0);
        fs::remove_file(&oldest).with_context(|| format!("removing {} (retention)", oldest.display()))?;
        deleted.push(oldest);
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};

    use super::*;

    #[test]
    fn piece_names_and_membership() {
        let dir = tempfile::tempdir().unwrap();
        let set = OutputSet::new(&dir.path().join("run.parquet"));
        let t = DateTime::parse_from_rfc3339("2026-12-02T14:00:00Z").unwrap().with_timezone(&Utc);
        assert_eq!(set.next_piece(t, true), dir.path().join("run.parquet"));
        assert_eq!(set.next_piece(t, false), dir.path().join("run.20261202T140000Z.parquet"));
        fs::write(dir.path().join("run.parquet"), b"x").unwrap();
        let p2 = set.next_piece(t, true);
        assert_eq!(p2, dir.path().join("run.20261202T140000Z.parquet"));
        fs::write(&p2, b"x").unwrap();
        assert_eq!(set.next_piece(t, true), dir.path().join("run.20261202T140000Z-1.parquet"));
        fs::write(dir.path().join("run.backup.parquet"), b"x").unwrap();
        fs::write(dir.path().join("other.parquet"), b"x").unwrap();
        let m = set.members().unwrap();
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(set.is_member_name("run.20261202T140000Z-12.parquet"));
        assert!(!set.is_member_name("run.2026120xT140000Z.parquet"));
        assert_eq!(piece_of_journal(&journal_path(&p2)), Some(p2.clone()));
    }

    #[test]
    fn torn_csv_line_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        fs::write(&p, b"timestamp,host\n2026,vm\n2026,v").unwrap();
        assert_eq!(trim_torn_line(&p).unwrap(), 6);
        assert_eq!(fs::read(&p).unwrap(), b"timestamp,host\n2026,vm\n");
        assert_eq!(trim_torn_line(&p).unwrap(), 0);
    }

    #[test]
    fn retention_spares_foreign_and_current_files() {
        let dir = tempfile::tempdir().unwrap();
        let set = OutputSet::new(&dir.path().join("r.csv"));
        let names = ["r.20260101T000000Z.csv", "r.20260101T010000Z.csv", "r.20260101T020000Z.csv", "r.csv"];
        for (i, n) in names.iter().enumerate() {
            fs::write(dir.path().join(n), format!("timestamp,host\n{i}\n")).unwrap();
            let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i as u64);
            File::options().write(true).open(dir.path().join(n)).unwrap().set_modified(t).unwrap();
        }
        fs::write(dir.path().join("r.20250101T000000Z.csv"), "not ours\n").unwrap();
        let cur = dir.path().join("r.csv");
        let gone = retain(&set, Some(2), None, Some(&cur)).unwrap();
        assert_eq!(gone.len(), 2, "{gone:?}");
        assert!(dir.path().join("r.20250101T000000Z.csv").exists(), "foreign file kept");
        assert!(dir.path().join("r.20260101T020000Z.csv").exists() && cur.exists());
    }
}
