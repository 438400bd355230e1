//! The on-disk side of one open piece, and what is left of a piece after a write error.
//!
//! Exactly once: after every successful flush the writer notes how long the piece's recovery file
//! is (the CSV itself, or the Parquet journal): everything before that length is durable, every
//! tick after it is still in the writer's memory. When a write or sync fails, the piece is cut
//! back to that length through its still-open descriptor (a full disk still lets a file shrink,
//! and a descriptor works whatever happened to the path), so the rows the backlog carries to the
//! next piece are in no file. A Parquet journal therefore never keeps a batch whose sync failed.
//!
//! Gone files: at each flush the open file is compared with what its path names now (device and
//! inode, and the link count of ours). A deleted file or a removed directory is [`SinkErrorKind::Removed`], a moved Parquet partial [`SinkErrorKind::Moved`]; a CSV
//! renamed away (logrotate without `copytruncate`) is left to its new name and writing goes on in a
//! new piece.

use std::fs::{self, File};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::SinkFiles;
use crate::error::{Context, Result, SinkError, SinkErrorKind};
use crate::files::{JournalOutcome, recover_journal};
use gpumon_schema::sync_dir;
use gpumon_util::warn;

/// What a path names now, compared with a file we hold open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presence {
    Here,
    /// Ours still has a name, just not this one (renamed away).
    Moved,
    /// Ours has no name left: deleted, or its directory removed.
    Removed,
}

pub(crate) fn presence(file: &File, path: &Path) -> Presence {
    // A descriptor that cannot be read back is for the next write to report.
    let Ok(ours) = file.metadata() else { return Presence::Here };
    match fs::metadata(path) {
        Ok(m) if m.dev() == ours.dev() && m.ino() == ours.ino() => Presence::Here,
        _ if ours.nlink() == 0 => Presence::Removed,
        _ => Presence::Moved,
    }
}

/// The files of an open piece written to a file set.
pub(crate) struct PieceFiles {
    /// The visible name (for Parquet: once closed).
    pub path: PathBuf,
    /// Where the data goes while open: the CSV itself, or the hidden Parquet partial file.
    data_path: PathBuf,
    /// Parquet: the journal (the recovery file).
    journal: Option<PathBuf>,
    data: Arc<File>,
    /// The recovery file's descriptor; a Parquet journal's only from the first flush, which creates it.
    recovery: Option<Arc<File>>,
    /// Length of the recovery file after the last successful sync: everything before it is durable.
    durable: u64,
    /// Ticks durably in the piece.
    pub durable_ticks: u64,
    /// The journal was removed under us (warned once); the piece still closes normally.
    journal_gone: bool,
    /// The directory entries of the piece's files are durable (synced at the first flush, or at
    /// close for a piece closed before any: one directory sync per piece).
    dir_synced: bool,
}

impl PieceFiles {
    pub(crate) fn new(
        path: PathBuf,
        data_path: PathBuf,
        journal: Option<PathBuf>,
        files: SinkFiles,
    ) -> Result<PieceFiles> {
        let Some(data) = files.data else {
            return Err(SinkError::internal(format!("{}: the sink has no file", path.display())));
        };
        let recovery = files.recovery;
        // Nothing is durable before the first flush (the CSV header and the journal schema go with it).
        Ok(PieceFiles {
            path,
            data_path,
            journal,
            data,
            recovery,
            durable: 0,
            durable_ticks: 0,
            journal_gone: false,
            dir_synced: false,
        })
    }

    /// After a successful flush and sync: check the files are still ours, and note what is durable.
    /// `Ok(true)` when a CSV was renamed away: its ticks stay under the new name. `files`: the sink's
    /// files now (a Parquet journal is created by the piece's first flush).
    pub(crate) fn flushed(
        &mut self,
        ticks: u64,
        files: impl FnOnce() -> SinkFiles,
    ) -> Result<bool> {
        if self.recovery.is_none() {
            self.recovery = files().recovery;
        }
        let data = presence(&self.data, &self.data_path);
        match (&self.journal, &self.recovery) {
            (None, _) => match data {
                Presence::Here => {}
                Presence::Moved => return Ok(true),
                Presence::Removed => return Err(SinkError::removed(&self.path)),
            },
            // No batch yet, so no journal (a flush with nothing new).
            (Some(_), None) => match data {
                Presence::Here => {}
                Presence::Moved => {
                    return Err(moved(&self.data_path));
                }
                Presence::Removed => return Err(SinkError::removed(&self.path)),
            },
            (Some(j), Some(recovery)) => match (data, presence(recovery, j)) {
                (Presence::Here, Presence::Here) => {}
                (Presence::Here, _) => self.journal_removed(),
                // The journal rebuilds the piece: a write error like any other.
                (_, Presence::Here) => {
                    return Err(moved(&self.data_path));
                }
                _ => return Err(SinkError::removed(&self.path)),
            },
        }
        self.make_dir_durable();
        if !self.journal_gone
            && let Some(recovery) = &self.recovery
        {
            self.durable = recovery
                .metadata()
                .map(|m| m.len())
                .with_context(|| format!("reading {}", self.path.display()))?;
        }
        self.durable_ticks = ticks;
        Ok(false)
    }

    /// Make the new files' directory entries durable, once: a synced file nobody can find after a
    /// crash would not be durable.
    fn make_dir_durable(&mut self) {
        if !self.dir_synced {
            sync_dir(self.data_path.parent().unwrap_or(Path::new(".")));
            self.dir_synced = true;
        }
    }

    fn journal_path_shown(&self) -> String {
        self.journal.as_deref().unwrap_or(Path::new("")).display().to_string()
    }

    fn journal_removed(&mut self) {
        if !self.journal_gone {
            self.journal_gone = true;
            let j = self.journal.as_deref().unwrap_or(Path::new(""));
            warn(&format!(
                "{} was removed by another program: until {} is closed, a crash would lose its rows",
                j.display(),
                self.path.display()
            ));
        }
    }

    /// Make a finished piece visible: rename the Parquet partial file into place and drop the
    /// journal (a journal someone already removed is a warning, not an error). `Ok(true)` when a
    /// CSV was renamed away before it closed (complete under its new name).
    pub(crate) fn publish(&mut self) -> Result<bool> {
        match presence(&self.data, &self.data_path) {
            Presence::Here => {}
            Presence::Moved if self.journal.is_none() => return Ok(true),
            Presence::Removed => return Err(SinkError::removed(&self.path)),
            Presence::Moved => {
                return Err(moved(&self.data_path));
            }
        }
        let Some(journal) = self.journal.clone() else {
            self.make_dir_durable();
            return Ok(false);
        };
        // A piece closed before its first flush never had a journal.
        let journal = self.recovery.is_some().then_some(journal);
        fs::rename(&self.data_path, &self.path).with_context(|| {
            format!("renaming {} to {}", self.data_path.display(), self.path.display())
        })?;
        sync_dir(self.path.parent().unwrap_or(Path::new(".")));
        self.dir_synced = true;
        match journal.map(fs::remove_file) {
            Some(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => self.journal_removed(),
            // The piece is complete: a leftover journal is dropped by the next recovery.
            Some(Err(e)) => warn(&format!("removing {}: {e}", self.journal_path_shown())),
            _ => {}
        }
        Ok(false)
    }

    /// Remove a piece that never got a row (no 0-row file is left behind).
    pub(crate) fn discard(self) {
        if presence(&self.data, &self.data_path) == Presence::Here {
            let _ = fs::remove_file(&self.data_path);
        }
        if let Some(j) = &self.journal {
            let _ = fs::remove_file(j);
        }
    }

    /// The piece after a write error (`removed`: its files are gone).
    pub(crate) fn abandon(self, removed: bool) -> Abandoned {
        let recovery_path = self.journal.clone().unwrap_or_else(|| self.data_path.clone());
        Abandoned {
            path: self.path,
            parquet: self.journal.is_some(),
            partial: self.data_path,
            recovery_path,
            journaled: self.journal.is_none() || self.recovery.is_some(),
            recovery: self.recovery,
            durable: self.durable,
            durable_ticks: self.durable_ticks,
            lost: removed || self.journal_gone,
        }
    }
}

/// A piece a write error left open, until it is cut back and made a valid file (or removed).
pub(crate) struct Abandoned {
    pub path: PathBuf,
    parquet: bool,
    partial: PathBuf,
    recovery_path: PathBuf,
    /// Open until the cut back succeeded.
    recovery: Option<Arc<File>>,
    /// The recovery file was made (a Parquet journal is made by the piece's first flush).
    journaled: bool,
    durable: u64,
    pub durable_ticks: u64,
    /// Nothing can be recovered: the files were removed under us.
    pub lost: bool,
}

/// What became of an abandoned piece.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Settled {
    /// A valid file with this many ticks stands at its path.
    Kept(PathBuf, u64),
    /// It held no durable row: nothing is left of it.
    Empty,
    /// Its durable ticks went with files someone removed.
    Lost(u64),
}

impl Abandoned {
    /// Cut the recovery file back to its last durable length. A file found shorter than that was
    /// truncated by another program (copytruncate) and holds nothing synced since: it is emptied.
    fn cut_back(&mut self) -> Result<()> {
        let Some(f) = &self.recovery else { return Ok(()) };
        let what = || format!("cutting {} back to its last flush", self.recovery_path.display());
        let len = f.metadata().with_context(what)?.len();
        let keep = if len >= self.durable { self.durable } else { 0 };
        if len > keep {
            f.set_len(keep).with_context(what)?;
            f.sync_data().with_context(what)?;
        }
        self.recovery = None;
        Ok(())
    }

    /// Cut back, then leave a valid file or nothing: a CSV is complete once cut; a Parquet piece is
    /// rebuilt from its journal (`rebuild`: only when the disk may have room again).
    pub(crate) fn settle(&mut self, rebuild: bool) -> Result<Option<Settled>> {
        let here = self
            .recovery
            .as_ref()
            .is_none_or(|f| presence(f, &self.recovery_path) == Presence::Here);
        self.cut_back()?;
        if !self.journaled {
            // Never flushed: nothing of it is durable (a journal its failed first flush began holds
            // only rows the backlog carries on).
            let _ = fs::remove_file(&self.partial);
            let _ = fs::remove_file(&self.recovery_path);
            return Ok(Some(Settled::Empty));
        }
        if self.lost || (!here && !self.recovery_path.exists()) {
            if self.parquet {
                let _ = fs::remove_file(&self.partial);
            }
            return Ok(Some(Settled::Lost(self.durable_ticks)));
        }
        if !self.parquet {
            let len = fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
            if len == 0 {
                let _ = fs::remove_file(&self.path);
                return Ok(Some(Settled::Empty));
            }
            return Ok(Some(Settled::Kept(self.path.clone(), self.durable_ticks)));
        }
        if !rebuild {
            return Ok(None);
        }
        Ok(Some(match recover_journal(&self.recovery_path, &self.path)?.0 {
            JournalOutcome::Rebuilt(_) | JournalOutcome::Complete(_) => {
                Settled::Kept(self.path.clone(), self.durable_ticks)
            }
            JournalOutcome::Empty | JournalOutcome::KeptAside => Settled::Empty,
        }))
    }
}

/// The data file at `data` was moved away while the journal still rebuilds it: a write error like
/// any other (not [`SinkErrorKind::Removed`]).
fn moved(data: &Path) -> SinkError {
    SinkError::new(SinkErrorKind::Moved, format!("{} was moved or removed", data.display()))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn csv_piece(dir: &Path) -> PieceFiles {
        let p = dir.join("a.csv");
        let f = Arc::new(File::options().append(true).create(true).open(&p).unwrap());
        PieceFiles::new(p.clone(), p, None, SinkFiles { data: Some(f.clone()), recovery: Some(f) })
            .unwrap()
    }

    #[test]
    fn an_abandoned_csv_is_cut_back_to_its_last_flush() {
        let dir = tempfile::tempdir().unwrap();
        let mut piece = csv_piece(dir.path());
        (&*piece.data).write_all(b"timestamp,x\n1,2\n").unwrap();
        assert!(!piece.flushed(1, SinkFiles::default).unwrap());
        // Written but never synced: a failed flush leaves it (and half a line) behind.
        (&*piece.data).write_all(b"2,3\n3,").unwrap();
        let mut a = piece.abandon(false);
        assert_eq!(a.settle(false).unwrap(), Some(Settled::Kept(dir.path().join("a.csv"), 1)));
        assert_eq!(fs::read(dir.path().join("a.csv")).unwrap(), b"timestamp,x\n1,2\n");
    }

    #[test]
    fn an_abandoned_piece_without_a_durable_row_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let piece = csv_piece(dir.path());
        (&*piece.data).write_all(b"timestamp,x\n1,2\n").unwrap();
        let mut a = piece.abandon(false);
        assert_eq!(a.settle(false).unwrap(), Some(Settled::Empty));
        assert!(!dir.path().join("a.csv").exists());
    }

    #[test]
    fn deleted_renamed_and_present_files_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let mut piece = csv_piece(dir.path());
        assert!(!piece.flushed(0, SinkFiles::default).unwrap());
        fs::rename(dir.path().join("a.csv"), dir.path().join("a.csv.1")).unwrap();
        assert!(piece.flushed(0, SinkFiles::default).unwrap(), "renamed away");
        fs::remove_file(dir.path().join("a.csv.1")).unwrap();
        let e = piece.flushed(0, SinkFiles::default).unwrap_err();
        assert_eq!(e.kind(), SinkErrorKind::Removed, "{e:#}");
        assert_eq!(piece.abandon(true).settle(true).unwrap(), Some(Settled::Lost(0)));
    }
}
