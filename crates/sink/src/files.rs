//! Retention and crash recovery of an output set: rebuild Parquet pieces from their journals, cut
//! a CSV's torn last line, delete the oldest closed pieces gpumon wrote. Recovery rewrites only
//! files gpumon wrote, and deletes a journal only when every byte of it was read (or is the torn
//! tail of a crash): a damaged one is kept beside the rebuilt piece as `.X.journal.damaged`.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Context, Result, SinkError, SinkErrorKind};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::parquet::writer_properties_from;
use gpumon_schema::{Journal, Unreadable};
use gpumon_schema::{
    OutputSet, PARTIAL, hidden, journal_path, partial_path, piece_of_journal, sync_dir,
    written_by_gpumon,
};
use gpumon_util::fsafe::{self, taken};
use gpumon_util::show;

/// What recovery did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Recovered {
    /// (file written, rows in it) for each Parquet piece rebuilt from its journal.
    pub rebuilt: Vec<(PathBuf, u64)>,
    /// (piece, rows in it) for pieces that were already complete (the crash hit after the close):
    /// only the journal left beside them was removed.
    pub complete: Vec<(PathBuf, u64)>,
    /// (CSV piece, bytes removed, rows kept) for each torn last line that was cut.
    pub trimmed: Vec<(PathBuf, u64, u64)>,
    /// Pieces that held no row (killed before their first flush): their leftovers were removed.
    pub removed: Vec<PathBuf>,
    /// Journals with damage, kept under this name after their piece was rebuilt, with what was lost.
    pub kept: Vec<(PathBuf, String)>,
    /// Names of the set's leftovers where something gpumon never makes sits (a link, a FIFO): left
    /// alone, with what it is.
    pub refused: Vec<(PathBuf, String)>,
}

impl Recovered {
    /// Whether recovery found nothing to do.
    pub fn is_empty(&self) -> bool {
        self.rebuilt.is_empty()
            && self.complete.is_empty()
            && self.trimmed.is_empty()
            && self.removed.is_empty()
            && self.kept.is_empty()
            && self.refused.is_empty()
    }

    /// One line per thing done, for `recover`'s output and `record`'s warnings.
    pub fn messages(&self) -> Vec<String> {
        let rebuilt = self
            .rebuilt
            .iter()
            .map(|(p, rows)| format!("rebuilt {} from its journal ({rows} rows)", show(p)));
        let complete = self.complete.iter().map(|(p, rows)| {
            format!(
                "{} was already complete ({rows} rows); removed the journal a crash left beside it",
                show(p)
            )
        });
        let trimmed = self.trimmed.iter().map(|(p, cut, rows)| {
            format!("cut a torn last line ({cut} bytes) from {} ({rows} rows kept)", show(p))
        });
        let removed = self
            .removed
            .iter()
            .map(|p| format!("removed {}: no rows (killed before its first flush)", show(p)));
        rebuilt.chain(complete).chain(trimmed).chain(removed).collect()
    }

    /// One warning per journal with damage, kept beside its piece.
    pub fn warnings(&self) -> Vec<String> {
        let kept = self
            .kept
            .iter()
            .map(|(p, why)| format!("kept the damaged journal as {}: {why}", show(p)));
        let refused = self.refused.iter().map(|(p, what)| {
            format!(
                "left {} alone: it is {what}, not a file gpumon wrote (another user may have put it there)",
                show(p)
            )
        });
        kept.chain(refused).collect()
    }
}

/// What [`recover_journal`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalOutcome {
    /// The piece was rebuilt with this many rows.
    Rebuilt(u64),
    /// The piece was already complete (this many rows); only the leftovers went.
    Complete(u64),
    /// No row had been flushed: journal and partial file removed, no piece written.
    Empty,
    /// Not even the schema could be read: the journal is kept aside whole, no piece written.
    KeptAside,
}

/// Turn everything a crash left in this set into valid files.
pub fn recover_set(set: &OutputSet) -> Result<Recovered> {
    let mut done = Recovered::default();
    for journal in set.leftover_journals()? {
        let Some(piece) = piece_of_journal(&journal) else { continue };
        if let Some(what) = not_a_file(&journal) {
            done.refused.push((journal, what));
            continue;
        }
        let (outcome, kept) = recover_journal(&journal, &piece)?;
        match outcome {
            JournalOutcome::Rebuilt(rows) => done.rebuilt.push((piece, rows)),
            JournalOutcome::Complete(rows) => done.complete.push((piece, rows)),
            JournalOutcome::Empty => done.removed.push(piece),
            JournalOutcome::KeptAside => {}
        }
        done.kept.extend(kept);
    }
    // A partial file without a journal holds no flushed row: the crash hit before the piece's first
    // flush, which creates the journal.
    for e in fs::read_dir(set.dir())
        .with_context(|| format!("listing {}", set.dir().display()))?
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(piece) = name.strip_prefix('.').and_then(|n| n.strip_suffix(PARTIAL))
            && set.is_member_name(piece)
            && !taken(&journal_path(&set.dir().join(piece)))
            && fs::remove_file(e.path()).is_ok()
        {
            done.removed.push(set.dir().join(piece));
        }
    }
    if set.ext().eq_ignore_ascii_case(".csv") {
        for m in set.members()? {
            if let Some(what) = not_a_file(&m) {
                done.refused.push((m, what));
                continue;
            }
            let empty = fs::metadata(&m).is_ok_and(|md| md.len() == 0);
            if !empty && !gpumon_csv(&m) {
                // Not gpumon's own CSV (an nvidia-smi log, say): never rewritten.
                continue;
            }
            let cut = trim_torn_line(&m)?;
            let rows = if cut > 0 { csv_rows(&m)? } else { 0 };
            if fs::metadata(&m).is_ok_and(|md| md.len() == 0) || (cut > 0 && rows == 0) {
                // Killed before its first flush: the piece holds no row.
                fs::remove_file(&m).with_context(|| format!("removing empty {}", m.display()))?;
                done.removed.push(m);
            } else if cut > 0 {
                done.trimmed.push((m, cut, rows));
            }
        }
    }
    Ok(done)
}

/// What sits at `path` when it is not a regular file (lstat: a link is not followed).
fn not_a_file(path: &Path) -> Option<String> {
    let t = fs::symlink_metadata(path).ok()?.file_type();
    if t.is_file() {
        return None;
    }
    Some(
        if t.is_symlink() {
            "a symbolic link"
        } else if t.is_dir() {
            "a directory"
        } else {
            "a special file"
        }
        .into(),
    )
}

/// Data rows of a CSV file: its lines after the header.
fn csv_rows(path: &Path) -> Result<u64> {
    let mut f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = 0u64;
    loop {
        let n = f.read(&mut buf).with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            return Ok(lines.saturating_sub(1));
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

/// Rows of a Parquet file, from its footer.
fn parquet_rows(path: &Path) -> Option<u64> {
    let r = SerializedFileReader::new(File::open(path).ok()?).ok()?;
    u64::try_from(r.metadata().file_metadata().num_rows()).ok()
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
/// kept as `.X.journal.damaged` and returned with what was lost. When the piece already exists
/// (the crash hit after the rename), only the leftovers go; when the journal holds no row, nothing
/// is written (no empty piece). A piece name held by a file gpumon did not write (or by a link to
/// the journal itself) is never overwritten.
pub fn recover_journal(
    journal: &Path,
    piece: &Path,
) -> Result<(JournalOutcome, Option<(PathBuf, String)>)> {
    let partial = partial_path(piece);
    let leftovers = || -> Result<()> {
        let _ = fs::remove_file(&partial);
        match fs::remove_file(journal) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("removing {}", show(journal)))
            }
            _ => Ok(()),
        }
    };
    if piece.exists() && written_by_gpumon(piece) {
        leftovers()?;
        return Ok((JournalOutcome::Complete(parquet_rows(piece).unwrap_or(0)), None));
    }
    if fs::symlink_metadata(piece).is_ok() {
        return Err(SinkError::new(
            SinkErrorKind::Refused,
            format!(
                "{}: exists and is not a Parquet file gpumon wrote (a link to its journal?); it is not overwritten: \
                 move it away to rebuild it from {}",
                show(piece),
                show(journal)
            ),
        ));
    }
    let file = fsafe::open_existing(journal, false)
        .with_context(|| format!("opening {}", show(journal)))?;
    let j = match Journal::open(file) {
        Ok(j) => j,
        Err(Unreadable::Empty) => {
            // Not even a schema made it to disk: nothing to recover.
            leftovers()?;
            return Ok((JournalOutcome::Empty, None));
        }
        Err(e) => {
            // Nothing can be decoded without the schema: keep the journal aside, whole.
            let _ = fs::remove_file(&partial);
            return Ok((
                JournalOutcome::KeptAside,
                Some((keep_damaged(journal, piece)?, e.to_string())),
            ));
        }
    };
    let schema = j.schema();
    let props: WriterProperties = writer_properties_from(schema.metadata());
    let tmp = hidden(piece, ".recovering");
    // What an interrupted recovery left (a link is removed, not followed), then made anew.
    let _ = fs::remove_file(&tmp);
    let out = fsafe::create_new(&tmp, false).with_context(|| format!("creating {}", show(&tmp)))?;
    let mut w = ArrowWriter::try_new(out, schema, Some(props))
        .with_context(|| format!("writing {}", show(&tmp)))?;
    let read = j.read_batches(&mut |batch| {
        w.write(batch)
            .with_context(|| format!("writing {}", show(&tmp)))
            .map_err(anyhow::Error::from)
    });
    let read = match read {
        Ok(r) if r.rows > 0 => r,
        Ok(r) => {
            // Killed before its first flush (or a torn first batch): no empty piece.
            let _ = fs::remove_file(&tmp);
            let Some(damage) = r.damage_summary() else {
                leftovers()?;
                return Ok((JournalOutcome::Empty, None));
            };
            let _ = fs::remove_file(&partial);
            return Ok((JournalOutcome::Empty, Some((keep_damaged(journal, piece)?, damage))));
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            return Err(e.into());
        }
    };
    let out = w.into_inner().with_context(|| format!("closing {}", show(&tmp)))?;
    out.sync_all().with_context(|| format!("syncing {}", show(&tmp)))?;
    fs::rename(&tmp, piece)
        .with_context(|| format!("renaming {} to {}", show(&tmp), show(piece)))?;
    sync_dir(piece.parent().unwrap_or(Path::new(".")));
    let Some(damage) = read.damage_summary() else {
        leftovers()?;
        return Ok((JournalOutcome::Rebuilt(read.rows), None));
    };
    let _ = fs::remove_file(&partial);
    Ok((JournalOutcome::Rebuilt(read.rows), Some((keep_damaged(journal, piece)?, damage))))
}

/// Move a journal that could not be read in full to `.X.journal.damaged`: kept, but no longer a
/// leftover that recovery or the readers pick up again.
fn keep_damaged(journal: &Path, piece: &Path) -> Result<PathBuf> {
    let kept = hidden(piece, ".journal.damaged");
    fs::rename(journal, &kept)
        .with_context(|| format!("renaming {} to {}", show(journal), show(&kept)))?;
    Ok(kept)
}

/// Cut a CSV file back to its last complete line; returns the bytes removed.
pub(crate) fn trim_torn_line(path: &Path) -> Result<u64> {
    let mut f =
        fsafe::open_existing(path, true).with_context(|| format!("opening {}", show(path)))?;
    let len = f.metadata().with_context(|| format!("reading {}", path.display()))?.len();
    if len == 0 {
        return Ok(0);
    }
    // Walk back in blocks to the last newline. Every CSV member of a set is checked when a run
    // starts, so the block is small (a row is a few hundred bytes): 64 KiB blocks made zeroing
    // buffers most of the start-up of a run with a long rotated set.
    let mut end = len;
    let mut buf = vec![0u8; 4096];
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
pub(crate) fn retain(
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
        fs::remove_file(&oldest)
            .with_context(|| format!("removing {} (retention)", oldest.display()))?;
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
        let t =
            DateTime::parse_from_rfc3339("2026-12-02T14:00:00.0005Z").unwrap().with_timezone(&Utc);
        assert_eq!(set.next_piece(t, true, None), dir.path().join("run.parquet"));
        assert_eq!(
            set.next_piece(t, false, None),
            dir.path().join("run.20261202T140000.000Z.parquet")
        );
        fs::write(dir.path().join("run.parquet"), b"x").unwrap();
        let p2 = set.next_piece(t, true, None);
        assert_eq!(p2, dir.path().join("run.20261202T140000.000Z.parquet"));
        fs::write(&p2, b"x").unwrap();
        // A taken name moves the stamp on a millisecond: unique, and still in time order.
        let p3 = set.next_piece(t, true, None);
        assert_eq!(p3, dir.path().join("run.20261202T140000.001Z.parquet"));
        // Never before the run's last piece (a clock stepped back).
        let later = dir.path().join("run.20261202T140005.000Z.parquet");
        assert_eq!(
            set.next_piece(t, false, Some(&later)),
            dir.path().join("run.20261202T140005.001Z.parquet")
        );
        assert_eq!(set.next_piece(t, false, Some(&dir.path().join("run.parquet"))), p3);
        fs::write(dir.path().join("run.20261202T140000Z-1.parquet"), b"x").unwrap();
        fs::write(dir.path().join("run.backup.parquet"), b"x").unwrap();
        fs::write(dir.path().join("other.parquet"), b"x").unwrap();
        let m = set.members().unwrap();
        assert_eq!(m.len(), 3, "the base, a new name and an old one: {m:?}");
        assert!(set.is_member_name("run.20261202T140000Z-12.parquet"));
        assert!(set.is_member_name("run.20261202T140000Z.parquet"));
        assert!(!set.is_member_name("run.2026120xT140000Z.parquet"));
        assert!(!set.is_member_name("run.20261202T140000.12Z.parquet"));
        assert_eq!(piece_of_journal(&journal_path(&p2)), Some(p2.clone()));
        // ls order is time order for the stamped pieces, old and new names alike.
        let mut names = [
            "run.20261202T140000.010Z.parquet",
            "run.20261202T140000.002Z.parquet",
            "run.20261202T135959.999Z.parquet",
            "run.20261202T140001.000Z.parquet",
        ];
        names.sort_unstable();
        assert_eq!(names[0], "run.20261202T135959.999Z.parquet");
        assert_eq!(names[3], "run.20261202T140001.000Z.parquet");
        assert_eq!(set.lock_path(), dir.path().join(".run.parquet.lock"));
        assert_eq!(OutputSet::new(&p2).lock_path(), dir.path().join(".run.parquet.lock"));
    }

    /// An Arrow IPC journal with `batches` batches of `rows` rows each.
    fn journal(path: &Path, batches: usize, rows: usize) {
        use std::sync::Arc;

        use arrow_array::{ArrayRef, Int64Array, RecordBatch};
        use arrow_ipc::writer::StreamWriter;
        use arrow_schema::{DataType, Field, Schema};
        let kv =
            std::collections::HashMap::from([("gpumon.version".to_string(), "test".to_string())]);
        let schema =
            Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]).with_metadata(kv));
        let mut w = StreamWriter::try_new(File::create(path).unwrap(), &schema).unwrap();
        for b in 0..batches {
            let col: ArrayRef = Arc::new(Int64Array::from_iter_values(
                (0..rows as i64).map(|i| i + (b * rows) as i64),
            ));
            w.write(&RecordBatch::try_new(schema.clone(), vec![col]).unwrap()).unwrap();
        }
        w.flush().unwrap();
    }

    #[test]
    fn journals_recover_to_their_rows_and_an_empty_one_to_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let set = OutputSet::new(&dir.path().join("run.parquet"));
        let a = dir.path().join("run.parquet");
        let b = dir.path().join("run.20261202T140000.000Z.parquet");
        journal(&journal_path(&a), 3, 10);
        fs::write(partial_path(&a), b"PAR1 half").unwrap();
        // Killed before its first flush: a schema and nothing else.
        journal(&journal_path(&b), 0, 0);
        fs::write(partial_path(&b), b"PAR1").unwrap();
        // Killed before its first flush, which would have made its journal: a partial file alone.
        let c = dir.path().join("run.20261202T150000.000Z.parquet");
        fs::write(partial_path(&c), b"PAR1").unwrap();
        let done = recover_set(&set).unwrap();
        assert_eq!(done.rebuilt, [(a.clone(), 30)], "{done:?}");
        assert_eq!(done.removed, [b.clone(), c.clone()]);
        assert!(!b.exists() && !c.exists(), "no 0-row file");
        let left: Vec<_> =
            fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left, [a.file_name().unwrap()], "only the rebuilt piece is left");
        assert!(done.messages()[0].contains("(30 rows)"), "{:?}", done.messages());
        // Killed after the close renamed the piece, before the journal went: the rows it holds.
        journal(&journal_path(&a), 1, 5);
        let done = recover_set(&set).unwrap();
        assert_eq!(done.complete, [(a.clone(), 30)]);
        assert!(done.messages()[0].contains("already complete (30 rows)"), "{:?}", done.messages());
        // A torn first batch holds nothing whole.
        journal(&journal_path(&b), 1, 100);
        let j = journal_path(&b);
        let len = fs::metadata(&j).unwrap().len();
        File::options().write(true).open(&j).unwrap().set_len(len - 40).unwrap();
        assert_eq!(recover_journal(&j, &b).unwrap(), (JournalOutcome::Empty, None));
    }

    #[test]
    fn torn_csv_recovery_reports_the_rows_kept_and_drops_a_rowless_piece() {
        let dir = tempfile::tempdir().unwrap();
        let set = OutputSet::new(&dir.path().join("r.csv"));
        fs::write(dir.path().join("r.csv"), b"timestamp,host\n1,a\n2,a\n3,").unwrap();
        fs::write(dir.path().join("r.20260101T000000.000Z.csv"), b"timestamp,host\n1,").unwrap();
        fs::write(dir.path().join("r.20260101T000001.000Z.csv"), b"").unwrap();
        fs::write(dir.path().join("r.20260101T000002.000Z.csv"), b"timestamp,host\n").unwrap();
        let done = recover_set(&set).unwrap();
        assert_eq!(done.trimmed, [(dir.path().join("r.csv"), 2, 2)]);
        assert_eq!(done.removed.len(), 2, "{:?}", done.removed);
        assert!(
            dir.path().join("r.20260101T000002.000Z.csv").exists(),
            "a clean empty run is not a crash"
        );
    }

    #[test]
    fn torn_csv_line_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        fs::write(&p, b"timestamp,host\n2026,vm\n2026,v").unwrap();
        assert_eq!(trim_torn_line(&p).unwrap(), 6);
        assert_eq!(fs::read(&p).unwrap(), b"timestamp,host\n2026,vm\n");
        assert_eq!(trim_torn_line(&p).unwrap(), 0);
        // A torn line longer than one block is found by walking back over several blocks.
        let long = "9".repeat(10_000);
        fs::write(&p, format!("timestamp,host\n2026,vm\n2026,{long}")).unwrap();
        assert_eq!(trim_torn_line(&p).unwrap(), 10_005);
        assert_eq!(fs::read(&p).unwrap(), b"timestamp,host\n2026,vm\n");
    }

    #[test]
    fn retention_spares_foreign_and_current_files() {
        let dir = tempfile::tempdir().unwrap();
        let set = OutputSet::new(&dir.path().join("r.csv"));
        let names = [
            "r.20260101T000000Z.csv",
            "r.20260101T010000Z.csv",
            "r.20260101T020000.000Z.csv",
            "r.csv",
        ];
        for (i, n) in names.iter().enumerate() {
            fs::write(dir.path().join(n), format!("timestamp,host\n{i}\n")).unwrap();
            let t = std::time::SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(1_000_000 + i as u64);
            File::options().write(true).open(dir.path().join(n)).unwrap().set_modified(t).unwrap();
        }
        fs::write(dir.path().join("r.20250101T000000Z.csv"), "not ours\n").unwrap();
        let cur = dir.path().join("r.csv");
        let gone = retain(&set, Some(2), None, Some(&cur)).unwrap();
        assert_eq!(gone.len(), 2, "{gone:?}");
        assert!(dir.path().join("r.20250101T000000Z.csv").exists(), "foreign file kept");
        assert!(dir.path().join("r.20260101T020000.000Z.csv").exists() && cur.exists());
    }
}
