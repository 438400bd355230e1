//! Input discovery for `summarize` and `convert`: paths, directories and globs become the list of files
//! to read, each sniffed by content (Parquet, Arrow IPC journal, gpumon CSV, nvidia-smi CSV log).
//!
//! - A file named as given at record time brings its whole rotated set ([`OutputSet::members`]) and the
//!   journals a crash left behind (read directly, never modified). A name whose base file retention has
//!   deleted still finds the remaining pieces.
//! - A directory brings every metrics file directly inside it (not sub-directories); other files are
//!   skipped and listed. A directory without any metrics file is an error.
//! - A glob (`'runs/*.parquet'`, for shells that did not expand it) brings every match.
//!
//! A file named on the command line (or matched by a glob) that cannot be read or is not metrics is an
//! error ([`UsageError`], exit 2): one bad input fails the whole run rather than quietly summarising less.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::read::smilog::looks_like_nvsmi;
use crate::schema::catalog::Field;
use crate::schema::files::{OutputSet, piece_of_journal, written_by_gpumon};
use crate::util::error::UsageError;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Parquet,
    /// Arrow IPC stream: the journal of a Parquet piece a crash left open.
    Journal,
    GpumonCsv,
    Nvsmi,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Parquet => "parquet",
            Kind::Journal => "journal",
            Kind::GpumonCsv => "gpumon-csv",
            Kind::Nvsmi => "nvidia-smi",
        }
    }
}

/// One file to read.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    pub path: PathBuf,
    pub kind: Kind,
}

/// What discovery found.
#[derive(Debug, Default, Clone)]
pub struct Discovered {
    pub inputs: Vec<Input>,
    /// Files seen in a directory or a set but not read, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

const SNIFF_BYTES: u64 = 64 * 1024;

/// Expand the command-line paths into the files to read, in order, without duplicates.
pub fn discover(args: &[PathBuf]) -> Result<Discovered> {
    let mut d = Discovered::default();
    let mut seen = HashSet::new();
    for arg in args {
        let s = arg.to_string_lossy();
        if !arg.exists() && s.contains(['*', '?', '[']) {
            let paths = glob::glob(&s).map_err(|e| UsageError(format!("{s}: bad glob pattern: {e}")))?;
            let mut any = false;
            for p in paths {
                let p = p.map_err(|e| UsageError(format!("{s}: {e}")))?;
                any = true;
                add_path(&p, &mut d, &mut seen)?;
            }
            if !any {
                return Err(UsageError(format!("{s}: no file matches")).into());
            }
            continue;
        }
        add_path(arg, &mut d, &mut seen)?;
    }
    if d.inputs.is_empty() {
        return Err(UsageError("no input files".into()).into());
    }
    Ok(d)
}

fn push(d: &mut Discovered, seen: &mut HashSet<PathBuf>, path: &Path, kind: Kind) {
    let key = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if seen.insert(key) {
        d.inputs.push(Input { path: path.to_path_buf(), kind });
    }
}

fn add_path(path: &Path, d: &mut Discovered, seen: &mut HashSet<PathBuf>) -> Result<()> {
    if path.is_dir() {
        return add_dir(path, d, seen);
    }
    if is_journal_name(path) {
        let kind = sniff_file(path)?;
        push(d, seen, path, kind);
        return Ok(());
    }
    let set = OutputSet::new(path);
    let members = if set.dir().is_dir() { set.members().unwrap_or_default() } else { Vec::new() };
    let journals = if set.dir().is_dir() { set.leftover_journals().unwrap_or_default() } else { Vec::new() };
    if !path.exists() && members.is_empty() && journals.is_empty() {
        return Err(UsageError(format!("{}: no such file or directory", path.display())).into());
    }
    if path.exists() {
        // The file named is read (an error if it is not metrics); the rest of its set only if readable.
        let kind = sniff_file(path)?;
        push(d, seen, path, kind);
    }
    for m in members.iter().filter(|m| m.as_path() != path) {
        match sniff_file(m) {
            Ok(kind) => push(d, seen, m, kind),
            Err(e) => d.skipped.push((m.clone(), format!("{e:#}"))),
        }
    }
    add_journals(&journals, d, seen);
    Ok(())
}

fn add_journals(journals: &[PathBuf], d: &mut Discovered, seen: &mut HashSet<PathBuf>) {
    for j in journals {
        // A journal beside its closed piece is a crash after the rename: the piece has it all.
        if piece_of_journal(j).is_some_and(|p| p.exists() && written_by_gpumon(&p)) {
            d.skipped.push((j.clone(), "its piece was closed; the piece is read instead".into()));
            continue;
        }
        match sniff_file(j) {
            Ok(kind) => push(d, seen, j, kind),
            Err(e) => d.skipped.push((j.clone(), format!("{e:#}"))),
        }
    }
}

fn is_journal_name(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.') && n.ends_with(".journal"))
}

/// Subdirectory levels searched below a directory given as input (a fleet tree
/// `host=H/date=D/` is two).
const MAX_DEPTH: usize = 4;

fn add_dir(dir: &Path, d: &mut Discovered, seen: &mut HashSet<PathBuf>) -> Result<()> {
    let before = d.inputs.len();
    add_dir_files(dir, d, seen, 0)?;
    if d.inputs.len() == before {
        return Err(
            UsageError(format!("{}: no gpumon or nvidia-smi metrics files in this directory", dir.display())).into()
        );
    }
    Ok(())
}

/// The metrics files of `dir` and, `MAX_DEPTH` levels down, of its visible subdirectories.
fn add_dir_files(dir: &Path, d: &mut Discovered, seen: &mut HashSet<PathBuf>, depth: usize) -> Result<()> {
    let rd = fs::read_dir(dir).map_err(|e| UsageError(format!("{}: cannot list: {e}", dir.display())))?;
    let mut files = Vec::new();
    let mut journals = Vec::new();
    let mut subdirs = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().is_ok_and(|t| t.is_dir()) && !name.starts_with('.') && depth < MAX_DEPTH {
            subdirs.push(p);
            continue;
        }
        if !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        if is_journal_name(&p) {
            journals.push(p);
        } else if !name.starts_with('.') {
            let mtime = e.metadata().and_then(|m| m.modified()).ok();
            files.push((mtime, p));
        }
    }
    // Oldest first: the pieces of a rotated set come out in time order.
    files.sort();
    journals.sort();
    for (_, p) in files {
        match sniff_file(&p) {
            Ok(kind) => push(d, seen, &p, kind),
            Err(e) => d.skipped.push((p, format!("{e:#}"))),
        }
    }
    add_journals(&journals, d, seen);
    subdirs.sort();
    for sub in subdirs {
        add_dir_files(&sub, d, seen, depth + 1)?;
    }
    Ok(())
}

/// Read the head of `path` and tell its kind; the error names the file.
pub fn sniff_file(path: &Path) -> Result<Kind> {
    let disp = path.display();
    let mut f = File::open(path).map_err(|e| UsageError(format!("{disp}: cannot open: {e}")))?;
    let mut head = Vec::new();
    (&mut f).take(SNIFF_BYTES).read_to_end(&mut head).map_err(|e| UsageError(format!("{disp}: cannot read: {e}")))?;
    sniff(&head).map_err(|why| UsageError(format!("{disp}: {why}")).into())
}

/// Kind of a file from its first bytes, or why it is not one gpumon reads.
pub fn sniff(head: &[u8]) -> std::result::Result<Kind, String> {
    if head.is_empty() {
        return Err("file is empty".into());
    }
    if head.starts_with(b"PAR1") {
        return Ok(Kind::Parquet);
    }
    if head.starts_with(&[0xFF, 0xFF, 0xFF, 0xFF]) {
        return Ok(Kind::Journal);
    }
    if looks_like_nvsmi(head) {
        return Ok(Kind::Nvsmi);
    }
    if looks_like_gpumon_csv(head) {
        return Ok(Kind::GpumonCsv);
    }
    let text = head.iter().take(4096).all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || b >= 0x20);
    if head.iter().all(|&b| b == 0) {
        Err("holds only NUL bytes".into())
    } else if text {
        Err("not a gpumon CSV/Parquet file or an nvidia-smi --format=csv log (no known header)".into())
    } else {
        Err("not a gpumon CSV/Parquet file or an nvidia-smi --format=csv log (binary data)".into())
    }
}

/// A gpumon CSV header: `,`-separated `name [unit]` cells with a `timestamp` and a known field.
fn looks_like_gpumon_csv(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let Some(line) = head.split(|&b| b == b'\n').next() else { return false };
    let Ok(line) = std::str::from_utf8(line) else { return false };
    let names: Vec<&str> = line.trim_end_matches('\r').split(',').map(|c| header_name(c.trim())).collect();
    names.contains(&"timestamp") && names.iter().filter(|n| Field::lookup(n).is_some()).count() >= 2
}

/// `name [unit]` → `name`.
pub fn header_name(cell: &str) -> &str {
    let cell = cell.trim().trim_matches('"');
    match cell.strip_suffix(']').and_then(|b| b.rsplit_once('[')) {
        Some((name, _)) => name.trim(),
        None => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"PAR1xxxx"), Ok(Kind::Parquet));
        assert_eq!(
            sniff(b"timestamp,host,index,utilization.gpu [%]\n2026-01-01T00:00:00.000Z,h,0,5\n"),
            Ok(Kind::GpumonCsv)
        );
        assert_eq!(sniff(b"timestamp, utilization.gpu [%]\n2026/01/01 00:00:00.000, 5 %\n"), Ok(Kind::Nvsmi));
        assert!(sniff(b"").unwrap_err().contains("empty"));
        assert!(sniff(b"a,b,c\n1,2,3\n").unwrap_err().contains("no known header"));
        assert!(sniff(&[0x00, 0x9f, 0x92, 0x96, 0x01]).unwrap_err().contains("binary"));
        assert_eq!(header_name("memory.used [MiB]"), "memory.used");
    }

    #[test]
    fn sets_directories_and_globs() {
        let dir = tempfile::tempdir().unwrap();
        let csv = "timestamp,host,index,utilization.gpu [%]\n2026-01-01T00:00:00.000Z,h,0,5\n";
        fs::write(dir.path().join("run.csv"), csv).unwrap();
        fs::write(dir.path().join("run.20260101T010000Z.csv"), csv).unwrap();
        fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
        let d = discover(&[dir.path().join("run.csv")]).unwrap();
        assert_eq!(d.inputs.len(), 2, "{d:?}");
        let d = discover(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(d.inputs.len(), 2);
        assert_eq!(d.skipped.len(), 1);
        let pat = dir.path().join("run*.csv");
        assert_eq!(discover(&[pat]).unwrap().inputs.len(), 2);
        let e = discover(&[dir.path().join("notes.txt")]).unwrap_err();
        assert_eq!(crate::util::error::code_for(&e), 2);
        assert!(format!("{e:#}").contains("notes.txt"));
        let empty = tempfile::tempdir().unwrap();
        assert!(discover(&[empty.path().to_path_buf()]).is_err());
        assert!(discover(&[dir.path().join("nope.csv")]).is_err());
    }
}
