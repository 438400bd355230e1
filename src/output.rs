//! The output set on disk: how pieces are named, found, retired and recovered after a crash.
//!
//! The user names one path, e.g. `run.parquet`. The first piece is written under that name if it
//! is free; every later piece (rotation, SIGHUP, a later run, a resume after a disk outage) is
//! `run.<UTC start, YYYYMMDDTHHMMSSZ>[-N].parquet` beside it. While a Parquet piece is open its
//! data lives in `.run.parquet.partial` and every flushed batch is appended to the Arrow IPC
//! journal `.run.parquet.journal` (fsynced); on close the partial file is renamed into place and
//! the journal deleted. A journal left behind is what a crash left: [`recover_set`] rebuilds the
//! Parquet file from it. CSV pieces are their own journal: recovery cuts a torn last line.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use arrow_ipc::reader::StreamReader;
use chrono::{DateTime, Utc};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::sink::parquet::writer_properties_from;

const PARTIAL: &str = ".partial";
const JOURNAL: &str = ".journal";

/// The files belonging to one user-given output path.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSet {
    dir: PathBuf,
    stem: String,
    /// Extension including the dot (`.parquet`), or empty.
    ext: String,
}

impl OutputSet {
    pub fn new(base: &Path) -> OutputSet {
        let dir =
            base.parent().filter(|p| !p.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let name = base.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (stem, ext) = match name.rfind('.') {
            Some(i) if i > 0 => (name[..i].to_string(), name[i..].to_string()),
            _ => (name, String::new()),
        };
        OutputSet { dir, stem, ext }
    }

    pub fn base(&self) -> PathBuf {
        self.dir.join(format!("{}{}", self.stem, self.ext))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A free path for a piece that starts at `start`: the base name for a run's first piece when
    /// it is free, otherwise a timestamped name (so names sort in time order within a run).
    pub fn next_piece(&self, start: DateTime<Utc>, first: bool) -> PathBuf {
        let taken = |p: &Path| p.exists() || journal_path(p).exists() || partial_path(p).exists();
        let base = self.base();
        if first && !taken(&base) {
            return base;
        }
        let ts = start.format("%Y%m%dT%H%M%SZ");
        let mut n = 0u32;
        loop {
            let suffix = if n == 0 { String::new() } else { format!("-{n}") };
            let p = self.dir.join(format!("{}.{ts}{suffix}{}", self.stem, self.ext));
            if !taken(&p) {
                return p;
            }
            n += 1;
        }
    }

    /// Whether a file name is the base or one of the timestamped pieces of this set.
    fn is_member_name(&self, name: &str) -> bool {
        if name == format!("{}{}", self.stem, self.ext) {
            return true;
        }
        let Some(mid) = name.strip_prefix(&format!("{}.", self.stem)).and_then(|r| r.strip_suffix(&self.ext)) else {
            return false;
        };
        let (ts, n) = mid.split_once('-').unwrap_or((mid, "0"));
        ts.len() == 16
            && ts.as_bytes()[8] == b'T'
            && ts.ends_with('Z')
            && ts[..8].bytes().chain(ts[9..15].bytes()).all(|b| b.is_ascii_digit())
            && n.bytes().all(|b| b.is_ascii_digit())
    }

    /// Closed pieces on disk, oldest first (by modification time, then name).
    pub fn members(&self) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        let rd = fs::read_dir(&self.dir).with_context(|| format!("listing {}", self.dir.display()))?;
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if self.is_member_name(&name) && e.file_type().is_ok_and(|t| t.is_file()) {
                let mtime = e.metadata().and_then(|m| m.modified()).ok();
                out.push((mtime, e.path()));
            }
        }
        out.sort();
        Ok(out.into_iter().map(|(_, p)| p).collect())
    }

    /// Journals a crash left for pieces of this set.
    pub fn leftover_journals(&self) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        let rd = fs::read_dir(&self.dir).with_context(|| format!("listing {}", self.dir.display()))?;
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(piece) = name.strip_prefix('.').and_then(|n| n.strip_suffix(JOURNAL))
                && self.is_member_name(piece)
            {
                out.push(e.path());
            }
        }
        out.sort();
        Ok(out)
    }
}

fn hidden(path: &Path, suffix: &str) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}{suffix}"))
}

/// Where an open Parquet piece's data is written until it is closed.
pub fn partial_path(piece: &Path) -> PathBuf {
    hidden(piece, PARTIAL)
}

/// The Arrow IPC journal of an open Parquet piece.
pub fn journal_path(piece: &Path) -> PathBuf {
    hidden(piece, JOURNAL)
}

/// The piece a journal belongs to.
pub fn piece_of_journal(journal: &Path) -> Option<PathBuf> {
    let name = journal.file_name()?.to_str()?;
    let piece = name.strip_prefix('.')?.strip_suffix(JOURNAL)?;
    Some(journal.with_file_name(piece))
}

/// fsync a directory so a rename or create in it survives power loss.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Whether gpumon wrote this file (Parquet with gpumon metadata, or a gpumon CSV header).
/// Retention never deletes anything else.
pub fn written_by_gpumon(path: &Path) -> bool {
    let Ok(file) = File::open(path) else { return false };
    if path.extension().is_some_and(|e| e == "parquet") {
        return SerializedFileReader::new(file).is_ok_and(|r| {
            r.metadata()
                .file_metadata()
                .key_value_metadata()
                .is_some_and(|kv| kv.iter().any(|k| k.key == "gpumon.version"))
        });
    }
    let mut first = String::new();
    let _ = BufReader::new(file).take(4096).read_line(&mut first);
    first.starts_with("timestamp,") || first.starts_with("timestamp, ")
}

/// What recovery did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Recovered {
    /// (file written, rows in it) for each rebuilt Parquet piece.
    pub rebuilt: Vec<(PathBuf, u64)>,
    /// CSV pieces whose torn last line was cut, with the bytes removed.
    pub trimmed: Vec<(PathBuf, u64)>,
    /// Empty pieces (killed before their header was written) that were deleted.
    pub removed: Vec<PathBuf>,
}

impl Recovered {
    pub fn is_empty(&self) -> bool {
        self.rebuilt.is_empty() && self.trimmed.is_empty() && self.removed.is_empty()
    }
}

/// Turn everything a crash left in this set into valid files.
pub fn recover_set(set: &OutputSet) -> Result<Recovered> {
    let mut done = Recovered::default();
    for journal in set.leftover_journals()? {
        let Some(piece) = piece_of_journal(&journal) else { continue };
        let rows = recover_journal(&journal, &piece)?;
        done.rebuilt.push((piece, rows));
    }
    // A partial file without a journal was never written to (the crash hit while opening it).
    for e in fs::read_dir(&set.dir).with_context(|| format!("listing {}", set.dir.display()))?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(piece) = name.strip_prefix('.').and_then(|n| n.strip_suffix(PARTIAL))
            && set.is_member_name(piece)
            && !journal_path(&set.dir.join(piece)).exists()
        {
            let _ = fs::remove_file(e.path());
        }
    }
    if set.ext.eq_ignore_ascii_case(".csv") {
        for m in set.members()? {
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

/// Rebuild `piece` from its journal (every complete batch), then remove journal and partial file.
/// When the piece already exists (the crash hit after the rename), only the leftovers go.
pub fn recover_journal(journal: &Path, piece: &Path) -> Result<u64> {
    let partial = partial_path(piece);
    if piece.exists() && written_by_gpumon(piece) {
        let _ = fs::remove_file(&partial);
        fs::remove_file(journal).with_context(|| format!("removing {}", journal.display()))?;
        return Ok(0);
    }
    let file = File::open(journal).with_context(|| format!("opening {}", journal.display()))?;
    let mut reader = match StreamReader::try_new(BufReader::new(file), None) {
        Ok(r) => r,
        Err(_) => {
            // Not even a schema made it to disk: nothing to recover.
            let _ = fs::remove_file(&partial);
            fs::remove_file(journal).with_context(|| format!("removing {}", journal.display()))?;
            return Ok(0);
        }
    };
    let schema = reader.schema();
    let props: WriterProperties = writer_properties_from(schema.metadata());
    let tmp = hidden(piece, ".recovering");
    let out = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut w =
        ArrowWriter::try_new(out, schema.clone(), Some(props)).with_context(|| format!("writing {}", tmp.display()))?;
    let mut rows = 0u64;
    // A torn last batch (the crash hit mid-append) ends the stream: everything before it is kept.
    for batch in reader.by_ref() {
        let Ok(batch) = batch else { break };
        rows += batch.num_rows() as u64;
        w.write(&batch).with_context(|| format!("writing {}", tmp.display()))?;
    }
    let out = w.into_inner().with_context(|| format!("closing {}", tmp.display()))?;
    out.sync_all().with_context(|| format!("syncing {}", tmp.display()))?;
    fs::rename(&tmp, piece).with_context(|| format!("renaming {} to {}", tmp.display(), piece.display()))?;
    sync_dir(piece.parent().unwrap_or(Path::new(".")));
    let _ = fs::remove_file(&partial);
    fs::remove_file(journal).with_context(|| format!("removing {}", journal.display()))?;
    Ok(rows)
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
