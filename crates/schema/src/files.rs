//! The output set on disk: how pieces are named and found (writers, readers and recovery agree on it).
//!
//! The user names one path, e.g. `run.parquet`. The first piece is written under that name if it
//! is free; every later piece (rotation, SIGHUP, a later run, a resume after a disk outage) is
//! `run.<UTC start, YYYYMMDDTHHMMSS.mmmZ>.parquet` beside it. The stamp is made unique by moving it
//! on a millisecond when the name is taken, so names never need a collision suffix and `ls` or a
//! glob lists them in time order. Older gpumon wrote `run.<YYYYMMDDTHHMMSSZ>[-N].parquet`; those
//! names still belong to the set. While a Parquet piece is open its
//! data lives in `.run.parquet.partial` and every flushed batch is appended to the Arrow IPC
//! journal `.run.parquet.journal` (fsynced); on close the partial file is renamed into place and
//! the journal deleted. A journal left behind is what a crash left: `gpumon_sink::recover_set` rebuilds the
//! Parquet file from it. CSV pieces are their own journal: recovery cuts a torn last line.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{DateTime, TimeDelta, Utc};

use crate::catalog::Table;
use gpumon_util::fsafe::taken;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gpumon CSV.
    Csv,
    /// Parquet.
    Parquet,
    /// nvidia-smi `--format=csv` look-alike, with its `noheader` / `nounits` variants.
    NvidiaSmi {
        /// Whether the header line is written (no `noheader`).
        header: bool,
        /// Whether values carry their units (no `nounits`).
        units: bool,
    },
}

impl Format {
    /// Format implied by a file name's extension.
    pub fn from_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "csv" => Some(Format::Csv),
            "parquet" | "pq" => Some(Format::Parquet),
            _ => None,
        }
    }

    /// Parse `csv`, `parquet`, or `nvidia-smi[,noheader][,nounits]`. `csv,noheader` / `csv,nounits`
    /// (nvidia-smi's own spelling) are the nvidia-smi style: gpumon CSV has neither variant.
    pub fn parse(s: &str) -> Option<Format> {
        let mut parts = s.split(',').map(str::trim);
        let base = parts.next()?;
        let (mut header, mut units) = (true, true);
        for p in parts {
            match p {
                "noheader" => header = false,
                "nounits" => units = false,
                _ => return None,
            }
        }
        match base {
            "csv" if header && units => Some(Format::Csv),
            "csv" => Some(Format::NvidiaSmi { header, units }),
            "parquet" if header && units => Some(Format::Parquet),
            "nvidia-smi" | "nvsmi" => Some(Format::NvidiaSmi { header, units }),
            _ => None,
        }
    }
}

/// Suffix of a piece still being written.
pub const PARTIAL: &str = ".partial";
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
    /// The set of files of the output path `base`.
    pub fn new(base: &Path) -> OutputSet {
        let dir = base
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let name = base.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (stem, ext) = match name.rfind('.') {
            Some(i) if i > 0 => (name[..i].to_string(), name[i..].to_string()),
            _ => (name, String::new()),
        };
        OutputSet { dir, stem, ext }
    }

    /// The output path without its extension.
    pub fn base(&self) -> PathBuf {
        self.dir.join(format!("{}{}", self.stem, self.ext))
    }

    /// The file name extension of the set's pieces, with its dot (`.parquet`).
    pub fn ext(&self) -> &str {
        &self.ext
    }

    /// The directory the files are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A free path for a piece that starts at `start`: the base name for a run's first piece when
    /// it is free, otherwise `stem.<start to the millisecond>Z.ext`, moved on a millisecond at a
    /// time until free, and never before `after` (the last piece of the run), so names are unique
    /// and sort in time order.
    pub fn next_piece(&self, start: DateTime<Utc>, first: bool, after: Option<&Path>) -> PathBuf {
        // lstat: a link, even one to nothing, takes its name (nothing is ever created through one).
        let taken = |p: &Path| taken(p) || taken(&journal_path(p)) || taken(&partial_path(p));
        let base = self.base();
        if first && !taken(&base) {
            return base;
        }
        // The base name sorts after every stamped one: only a stamped `after` orders the new name.
        let after = after.filter(|a| *a != base).and_then(Path::file_name);
        let ms = TimeDelta::milliseconds(1);
        let mut t = DateTime::from_timestamp_millis(start.timestamp_millis()).unwrap_or(start);
        loop {
            let p = self.dir.join(format!(
                "{}.{}{}",
                self.stem,
                t.format("%Y%m%dT%H%M%S%.3fZ"),
                self.ext
            ));
            let before = after.is_some_and(|a| p.file_name().is_some_and(|n| n <= a));
            if !before && !taken(&p) {
                return p;
            }
            t += ms;
        }
    }

    /// Whether a file name is the base or one of the timestamped pieces of this set.
    pub fn is_member_name(&self, name: &str) -> bool {
        if name == format!("{}{}", self.stem, self.ext) {
            return true;
        }
        let Some(mid) =
            name.strip_prefix(&format!("{}.", self.stem)).and_then(|r| r.strip_suffix(&self.ext))
        else {
            return false;
        };
        is_piece_stamp(mid)
    }

    /// The lock file that says a recorder is writing this set (see `sink::lock`). A piece's own
    /// name (`run.20261202T140000.000Z.parquet`) maps to its set's lock, so `recover` of one piece
    /// sees the recorder of the whole set.
    pub fn lock_path(&self) -> PathBuf {
        let dots = self.stem.match_indices('.').map(|(i, _)| i);
        let stem = match dots.into_iter().find(|&i| is_piece_stamp(&self.stem[i + 1..])) {
            Some(i) => &self.stem[..i],
            None => self.stem.as_str(),
        };
        hidden(&self.dir.join(format!("{stem}{}", self.ext)), ".lock")
    }

    /// Closed pieces on disk, oldest first (by modification time, then name).
    pub fn members(&self) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        let rd =
            fs::read_dir(&self.dir).with_context(|| format!("listing {}", self.dir.display()))?;
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
        let rd =
            fs::read_dir(&self.dir).with_context(|| format!("listing {}", self.dir.display()))?;
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

/// Where a companion table of the recording `main` goes: `run.parquet` -> `run.procs.parquet`,
/// `run.events.parquet`; the main path itself for [`Table::Metrics`].
pub fn companion_path(main: &Path, table: Table) -> PathBuf {
    let Some(word) = table.suffix() else { return main.to_path_buf() };
    let name = main.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let companion = match name.rfind('.') {
        Some(i) if i > 0 => format!("{}.{word}{}", &name[..i], &name[i..]),
        _ => format!("{name}.{word}"),
    };
    main.with_file_name(companion)
}

/// `20261202T140000.123Z` (this gpumon) or `20261202T140000Z[-N]` (older ones).
fn is_piece_stamp(mid: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some((date, rest)) = mid.split_once('T') else { return false };
    if date.len() != 8 || !digits(date) {
        return false;
    }
    if let Some((secs, ms)) = rest.split_once('.') {
        return secs.len() == 6
            && digits(secs)
            && ms.len() == 4
            && ms.ends_with('Z')
            && digits(&ms[..3]);
    }
    let (ts, n) = rest.split_once('-').unwrap_or((rest, "0"));
    ts.len() == 7 && ts.ends_with('Z') && digits(&ts[..6]) && digits(n)
}

/// The hidden file beside `path`: a dot before its name, `suffix` after it.
pub fn hidden(path: &Path, suffix: &str) -> PathBuf {
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

/// The live status file the recorder of `base` rewrites after every row and removes at its end
/// (`gpumon watch`; `gpumon mark --run` finds the control socket in it).
pub fn status_path(base: &Path) -> PathBuf {
    hidden(base, ".status")
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
/// Retention never deletes anything else. The Parquet footer is not decoded (it may be damaged or
/// hostile): its length is checked against the file and its bytes searched for gpumon's key.
pub fn written_by_gpumon(path: &Path) -> bool {
    let Ok(mut file) = gpumon_util::fsafe::open_existing(path, false) else { return false };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    if path.extension().is_some_and(|e| e == "parquet") {
        return parquet_footer(&mut file)
            .is_some_and(|f| f.windows(14).any(|w| w == b"gpumon.version"));
    }
    let mut first = String::new();
    let _ = BufReader::new(file).take(4096).read_line(&mut first);
    first.starts_with("timestamp,") || first.starts_with("timestamp, ")
}

/// The footer metadata bytes of a Parquet file, when its length fits inside the file.
fn parquet_footer(file: &mut File) -> Option<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    let len = file.metadata().ok()?.len();
    if len < 12 {
        return None;
    }
    let mut tail = [0u8; 8];
    file.seek(SeekFrom::Start(len - 8)).ok()?;
    file.read_exact(&mut tail).ok()?;
    let meta = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if &tail[4..] != b"PAR1" || meta + 12 > len {
        return None;
    }
    let mut buf = vec![0u8; meta as usize];
    file.seek(SeekFrom::Start(len - 8 - meta)).ok()?;
    file.read_exact(&mut buf).ok()?;
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn companion_files_sit_beside_the_main_one() {
        let p = |s: &str, t| companion_path(Path::new(s), t);
        assert_eq!(p("/x/run.parquet", Table::Procs), PathBuf::from("/x/run.procs.parquet"));
        assert_eq!(p("run.csv", Table::Procs), PathBuf::from("run.procs.csv"));
        assert_eq!(p("/x/run.parquet", Table::Events), PathBuf::from("/x/run.events.parquet"));
        assert_eq!(p("run", Table::Events), PathBuf::from("run.events"));
        assert_eq!(p("run.csv", Table::Metrics), PathBuf::from("run.csv"));
    }
}
