//! Input discovery for `summarize`, `report` and `convert`: paths, directories and globs become the
//! list of files to read, each sniffed by content ([`crate::sniff`]: Parquet, Arrow IPC journal,
//! gpumon CSV, nvidia-smi CSV log).
//!
//! - A file named as given at record time brings its whole rotated set ([`OutputSet::members`]) and the
//!   journals a crash left behind (read directly, never modified). A name whose base file retention has
//!   deleted still finds the remaining pieces.
//! - A directory brings every metrics file directly inside it (not sub-directories); other files are
//!   skipped and listed. A directory without any metrics file is an error.
//! - A glob (`'runs/*.parquet'`, for shells that did not expand it) brings every match.
//! - `-` is standard input; a FIFO or pipe (`<(...)`, `/dev/stdin`) is read once, into a temporary
//!   copy that every later pass reads ([`Input::data`]).
//!
//! A file named on the command line (or matched by a glob) that cannot be read or is not metrics is an
//! error ([`ReadError`], exit 2), and so is a file found in a directory or a set that cannot be read:
//! one bad input fails the whole run rather than quietly summarising less. Inputs are told apart by
//! device and inode, so a link to a file already found is not read twice, and an output path can be
//! checked against every input ([`Discovered::input_at`]).
//!
//! [`discover_recording`] also brings the companion files a recording has beside it (`run.procs.*`,
//! `run.events.*`, with their rotated pieces); the caller tells the tables apart by their columns.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Discovery fails only on an input: every error names one, with its kind.
type Result<T> = std::result::Result<T, ReadError>;

use crate::input::{FileId, Input, Kind, file_id};
use crate::sniff::{SNIFF_BYTES, read_head, sniff, sniff_file};
use gpumon_schema::catalog::Table;
use gpumon_schema::{OutputSet, companion_path, piece_of_journal, written_by_gpumon};
use gpumon_util::{ReadError, ReadErrorKind, show};

/// What discovery found.
#[derive(Debug, Default, Clone)]
pub struct Discovered {
    /// The files to read, in the order found (sets and journals with their pieces).
    pub inputs: Vec<Input>,
    /// Files seen in a directory or a set but not read, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

impl Discovered {
    /// The input `path` names (the same device and inode: a hard or symbolic link counts), if any.
    pub fn input_at(&self, path: &Path) -> Option<&Input> {
        let id = file_id(path)?;
        self.inputs.iter().find(|i| i.id == Some(id))
    }

    /// Total bytes of the inputs.
    pub fn bytes(&self) -> u64 {
        self.inputs.iter().map(Input::size).sum()
    }

    /// The inputs named for a message: the first few, then how many more.
    pub fn names(&self) -> String {
        let mut s: Vec<String> = self.inputs.iter().take(3).map(|i| show(&i.path)).collect();
        if self.inputs.len() > 3 {
            s.push(format!("and {} more", self.inputs.len() - 3));
        }
        s.join(", ")
    }
}

/// Discovery state: what was found, and the files already taken (by device and inode).
struct Discovery {
    d: Discovered,
    seen: HashSet<FileId>,
    stdin_taken: bool,
    /// The group of the inputs now being added ([`Input`]'s `group`: the pieces of one set, or one
    /// pipe, one file of a directory).
    current: usize,
}

impl Discovery {
    /// The inputs added from now on are a new group.
    fn next_group(&mut self) {
        self.current += 1;
    }
}

/// Expand the command-line paths into the files to read, without duplicates, in the order found (the
/// order given; a set's pieces, a directory's files and a glob's matches in their own order), each
/// with the group it came in: [`crate::order::in_time_order`] puts them in time order. `-` is
/// standard input; a pipe or FIFO (`<(...)`, `/dev/stdin`) is read once, into a temporary copy.
pub fn discover(args: &[PathBuf]) -> Result<Discovered> {
    discover_with(args, false)
}

/// [`discover`], plus the companion files (per-process rows, events) of each file named.
pub fn discover_recording(args: &[PathBuf]) -> Result<Discovered> {
    discover_with(args, true)
}

fn discover_with(args: &[PathBuf], companions: bool) -> Result<Discovered> {
    let mut f = Discovery {
        d: Discovered::default(),
        seen: HashSet::new(),
        stdin_taken: false,
        current: 0,
    };
    for arg in args {
        f.next_group();
        let s = arg.to_string_lossy();
        if arg.as_os_str() == "-" {
            add_stdin(&mut f)?;
            continue;
        }
        if !arg.exists() && s.contains(['*', '?', '[']) {
            let shown = show(arg);
            let paths = glob::glob(&s).map_err(|e| {
                ReadError::new(
                    ReadErrorKind::Usage,
                    shown.clone(),
                    format_args!("bad glob pattern: {e}"),
                )
            })?;
            let mut any = false;
            for p in paths {
                let p =
                    p.map_err(|e| ReadError::new(ReadErrorKind::Unreadable, shown.clone(), e))?;
                any = true;
                f.next_group();
                add_path(&p, &mut f)?;
            }
            if !any {
                return Err(ReadError::new(ReadErrorKind::NotFound, shown, "no file matches"));
            }
            continue;
        }
        add_path(arg, &mut f)?;
        if companions && !arg.is_dir() {
            add_companions(arg, &mut f)?;
        }
    }
    if f.d.inputs.is_empty() {
        let named: Vec<String> = args.iter().take(3).map(|a| show(a)).collect();
        return Err(ReadError::new(ReadErrorKind::NotFound, named.join(", "), "no input files"));
    }
    Ok(f.d)
}

fn push(f: &mut Discovery, path: &Path, kind: Kind, spool: Option<Arc<tempfile::TempPath>>) {
    let id = file_id(path);
    if id.is_some_and(|id| !f.seen.insert(id)) {
        return;
    }
    f.d.inputs.push(Input::found(path, kind, spool, id, f.current));
}

/// Add a pipe-like input (`-`, a FIFO, a character device) through a temporary copy: a pipe can be
/// read only once, but an input is read several times (a time-range pass, the summary, the
/// report's charts). Its head is sniffed first, so `/dev/zero` is refused, not copied forever.
fn add_spooled(f: &mut Discovery, name: &Path, src: &mut dyn Read) -> Result<()> {
    let mut head = Vec::new();
    src.take(SNIFF_BYTES).read_to_end(&mut head).map_err(|e| {
        ReadError::new(ReadErrorKind::Unreadable, show(name), format_args!("cannot read: {e}"))
    })?;
    let kind =
        sniff(&head).map_err(|why| ReadError::new(ReadErrorKind::Unsupported, show(name), why))?;
    let mut tmp = tempfile::NamedTempFile::new().map_err(|e| {
        // Not the input's fault: exit code 1, as for any failure of gpumon's own.
        ReadError::new(
            ReadErrorKind::Internal,
            show(name),
            format_args!("cannot make a temporary copy: {e}"),
        )
    })?;
    // Reading the pipe and writing the copy fail alike for the user: the input could not be taken in.
    tmp.as_file_mut()
        .write_all(&head)
        .and_then(|()| std::io::copy(src, tmp.as_file_mut()))
        .map_err(|e| {
            ReadError::new(
                ReadErrorKind::Unreadable,
                show(name),
                format_args!("cannot read into a temporary copy: {e}"),
            )
        })?;
    push(f, name, kind, Some(Arc::new(tmp.into_temp_path())));
    Ok(())
}

fn add_stdin(f: &mut Discovery) -> Result<()> {
    if std::mem::replace(&mut f.stdin_taken, true) {
        return Ok(());
    }
    add_spooled(f, Path::new("<stdin>"), &mut std::io::stdin().lock())
}

fn add_path(path: &Path, f: &mut Discovery) -> Result<()> {
    let shown = show(path);
    if path.is_dir() {
        return add_dir(path, f);
    }
    if let Ok(m) = fs::metadata(path)
        && !m.is_file()
    {
        let t = m.file_type();
        if !(t.is_fifo() || t.is_char_device() || t.is_socket()) {
            return Err(ReadError::new(
                ReadErrorKind::Unsupported,
                shown,
                "not a regular file, directory or pipe",
            ));
        }
        if file_id(path).is_some_and(|id| f.seen.contains(&id)) {
            return Ok(());
        }
        let mut src = File::open(path).map_err(|e| {
            ReadError::new(
                ReadErrorKind::of_open(&e),
                shown.clone(),
                format_args!("cannot open: {e}"),
            )
        })?;
        return add_spooled(f, path, &mut src);
    }
    if is_journal_name(path) {
        let kind = sniff_file(path, path)?;
        push(f, path, kind, None);
        return Ok(());
    }
    let set = OutputSet::new(path);
    let listed = set.dir().is_dir();
    let members = if listed { set.members().unwrap_or_default() } else { Vec::new() };
    let journals = if listed { set.leftover_journals().unwrap_or_default() } else { Vec::new() };
    if !path.exists() && members.is_empty() && journals.is_empty() {
        return Err(ReadError::new(ReadErrorKind::NotFound, shown, "no such file or directory"));
    }
    if path.exists() {
        // The file named is read (an error if it is not metrics); the rest of its set as well, when
        // it is metrics: an unreadable member is an error, a foreign file of a matching name skipped.
        let kind = sniff_file(path, path)?;
        push(f, path, kind, None);
    }
    for m in members.iter().filter(|m| m.as_path() != path) {
        add_member(m, f)?;
    }
    add_journals(&journals, f)
}

/// A file found in a directory or a set: read when it is metrics, skipped (and listed) when it is
/// not, an error when it cannot be read at all (as for a file named or matched by a glob).
fn add_member(p: &Path, f: &mut Discovery) -> Result<()> {
    // Only a name of the set is known here, not what another user may have put there: a FIFO or a
    // device (behind a link, say) would block the read or never end.
    if fs::metadata(p).is_ok_and(|m| !m.is_file()) {
        f.d.skipped.push((p.to_path_buf(), format!("{}: not a regular file", show(p))));
        return Ok(());
    }
    let head = read_head(p, p)?;
    match sniff(&head) {
        Ok(kind) => push(f, p, kind, None),
        Err(why) => f.d.skipped.push((p.to_path_buf(), format!("{}: {why}", show(p)))),
    }
    Ok(())
}

/// The per-process and events sets beside the recording `path`, where they exist.
fn add_companions(path: &Path, f: &mut Discovery) -> Result<()> {
    for table in [Table::Procs, Table::Events] {
        let set = OutputSet::new(&companion_path(path, table));
        if !set.dir().is_dir() {
            continue;
        }
        for m in set.members().unwrap_or_default() {
            add_member(&m, f)?;
        }
        add_journals(&set.leftover_journals().unwrap_or_default(), f)?;
    }
    Ok(())
}

fn add_journals(journals: &[PathBuf], f: &mut Discovery) -> Result<()> {
    for j in journals {
        // A journal beside its closed piece is a crash after the rename: the piece has it all.
        if piece_of_journal(j).is_some_and(|p| p.exists() && written_by_gpumon(&p)) {
            f.d.skipped.push((j.clone(), "its piece was closed; the piece is read instead".into()));
            continue;
        }
        add_member(j, f)?;
    }
    Ok(())
}

fn is_journal_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') && n.ends_with(".journal"))
}

/// Subdirectory levels searched below a directory given as input (a fleet tree
/// `host=H/date=D/` is two).
const MAX_DEPTH: usize = 4;

fn add_dir(dir: &Path, f: &mut Discovery) -> Result<()> {
    let before = f.d.inputs.len();
    add_dir_files(dir, f, 0)?;
    if f.d.inputs.len() == before {
        return Err(ReadError::new(
            ReadErrorKind::NotFound,
            show(dir),
            "no gpumon or nvidia-smi metrics files in this directory",
        ));
    }
    Ok(())
}

/// The metrics files of `dir` and, `MAX_DEPTH` levels down, of its visible subdirectories.
fn add_dir_files(dir: &Path, f: &mut Discovery, depth: usize) -> Result<()> {
    let rd = fs::read_dir(dir).map_err(|e| {
        ReadError::new(ReadErrorKind::of_open(&e), show(dir), format_args!("cannot list: {e}"))
    })?;
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
        f.next_group();
        add_member(&p, f)?;
    }
    // Each journal a crash left is an input of its own, after the files.
    for j in journals {
        f.next_group();
        add_journals(&[j], f)?;
    }
    subdirs.sort();
    for sub in subdirs {
        add_dir_files(&sub, f, depth + 1)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            (e.kind(), e.path()),
            (ReadErrorKind::Unsupported, &*show(&dir.path().join("notes.txt")))
        );
        assert_eq!(gpumon_util::code_for(&e.into(), &[]), 2);
        fs::write(
            dir.path().join("run.events.csv"),
            "timestamp,host,index,uuid,kind,code,detail\n",
        )
        .unwrap();
        assert_eq!(
            discover(&[dir.path().join("run.csv")]).unwrap().inputs.len(),
            2,
            "companions only on request"
        );
        let d = discover_recording(&[dir.path().join("run.csv")]).unwrap();
        assert!(d.inputs.iter().any(|i| i.path.ends_with("run.events.csv")), "{d:?}");
        let empty = tempfile::tempdir().unwrap();
        assert!(discover(&[empty.path().to_path_buf()]).is_err());
        assert!(discover(&[dir.path().join("nope.csv")]).is_err());
    }
}
