//! Files in directories other users may write (a lab's shared `runs/`, /tmp): a name counts as
//! taken when anything is there, a dangling link included (lstat); new files are made with
//! O_CREAT|O_EXCL|O_NOFOLLOW, so nothing is ever created or truncated through a link; directories
//! are walked with openat(O_NOFOLLOW); and a file another program may have planted is read only
//! when it is a regular file of the caller's, without blocking and up to a size.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path};

use rustix::fs::{AtFlags, Mode, OFlags};

/// The effective user id of this process.
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Whether anything is at `path`: a file, a directory, a link (even one to nothing).
pub fn taken(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Make a new file at `path` for writing (appending with `append`): fails when anything is there,
/// a link included, instead of writing through it or over it.
pub fn create_new(path: &Path, append: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    if append {
        o.append(true);
    } else {
        o.write(true);
    }
    o.create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o666)
        .open(path)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                let what = if is_link(path) {
                    "a symbolic link is there (not followed)"
                } else {
                    "it already exists"
                };
                io::Error::new(
                    e.kind(),
                    format!("{what}: gpumon makes its files new and never writes over another"),
                )
            } else {
                e
            }
        })
}

/// Open an existing file without following a link at its last component (a link is an error that
/// says so); `write` opens it for reading and writing.
pub fn open_existing(path: &Path, write: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| link_error(path, e))
}

/// Open (creating it when missing) a file of the caller's: `Ok(None)` when it belongs to someone
/// else (the caller must then not write to it); an error when a link or anything but a regular file
/// is at the path.
pub fn open_or_create(path: &Path) -> io::Result<(File, bool)> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .mode(0o644)
        .open(path)
        .or_else(|e| match e.kind() {
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                open_existing(path, false)
            }
            _ => Err(link_error(path, e)),
        })?;
    let m = f.metadata()?;
    if !m.file_type().is_file() {
        return Err(io::Error::other(format!("not a regular file ({}): refused", kind(&m))));
    }
    Ok((f, m.uid() == euid()))
}

/// A link at `path` (ELOOP from O_NOFOLLOW) said in words.
fn link_error(path: &Path, e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(libc::ELOOP) && is_link(path) {
        io::Error::other("a symbolic link is there: not followed")
    } else {
        e
    }
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// What kind of file a metadata describes, in words.
fn kind(m: &std::fs::Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a regular file"
    }
}

/// Read a small file that must be the caller's own: a regular file owned by this user, opened
/// without following a link and without blocking (a FIFO is refused, not waited on), at most `max`
/// bytes. The error says what was found instead.
pub fn read_own(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let f = open_existing(path, false)?;
    let m = f.metadata()?;
    if !m.file_type().is_file() {
        return Err(io::Error::other(format!(
            "{} is {}, not a regular file",
            path.display(),
            kind(&m)
        )));
    }
    if m.uid() != euid() {
        return Err(io::Error::other(format!(
            "{} belongs to another user (uid {})",
            path.display(),
            m.uid()
        )));
    }
    if m.len() > max {
        return Err(io::Error::other(format!("{} is larger than {max} bytes", path.display())));
    }
    let mut buf = Vec::with_capacity(m.len() as usize);
    f.take(max + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(io::Error::other(format!("{} is larger than {max} bytes", path.display())));
    }
    Ok(buf)
}

/// Whether `dir` is a directory of the caller's that nobody else may change (a run's is mode 0700):
/// no other user can have put or replaced anything in it.
pub fn private_dir(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|m| {
        m.file_type().is_dir() && m.uid() == euid() && m.permissions().mode() & 0o022 == 0
    })
}

/// Whether `path` is a socket of the caller's (lstat: a link to one is not).
pub fn own_socket(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket() && m.uid() == euid())
}

/// An output in a directory that does not exist is a usage error naming both.
pub fn check_output_dir(out: &Path) -> Result<(), crate::error::UsageError> {
    let dir = out.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(crate::error::UsageError(format!(
            "{}: directory {} does not exist",
            crate::text::show(out),
            crate::text::show(dir)
        )));
    }
    Ok(())
}

/// Make the directories of `dir` that are missing (mode 0777 less the umask), one component at a
/// time from an open descriptor of its parent (`openat`, `mkdirat`), as `mkdir -p` does. A link on
/// the way is followed only when it belongs to the caller or to root (a system layout such as
/// `/data -> /mnt/data`); one that another user made is refused, so nobody can send the files
/// elsewhere by planting a link where gpumon would make a directory.
pub fn create_dirs(dir: &Path) -> io::Result<()> {
    let start = if dir.is_absolute() { "/" } else { "." };
    // O_PATH: a directory one may pass through without reading it (mode 0711) is walked too.
    let dirs = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut fd = rustix::fs::open(start, dirs, Mode::empty())?;
    let me = euid();
    let mut shown = std::path::PathBuf::from(start);
    for c in dir.components() {
        let name = match c {
            Component::Normal(n) => n,
            Component::ParentDir => std::ffi::OsStr::new(".."),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
        };
        shown.push(name);
        let mut follow = OFlags::NOFOLLOW;
        match rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st)
                if rustix::fs::FileType::from_raw_mode(st.st_mode)
                    == rustix::fs::FileType::Symlink =>
            {
                if st.st_uid != me && st.st_uid != 0 {
                    return Err(io::Error::other(format!(
                        "{} is a symbolic link made by another user (uid {}): not followed",
                        shown.display(),
                        st.st_uid
                    )));
                }
                follow = OFlags::empty();
            }
            Ok(_) => {}
            Err(rustix::io::Errno::NOENT) => {
                match rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        }
        fd = rustix::fs::openat(&fd, name, dirs | follow, Mode::empty()).map_err(|e| match e {
            rustix::io::Errno::LOOP => io::Error::other(format!(
                "{} became a symbolic link: not followed",
                shown.display()
            )),
            e => io::Error::other(format!("{}: {}", shown.display(), io::Error::from(e))),
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dangling_link_is_taken_and_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let (link, target) = (dir.path().join("l"), dir.path().join("t"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(taken(&link) && !link.exists());
        let e = create_new(&link, true).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(!target.exists());
        assert!(open_or_create(&link).unwrap_err().to_string().contains("symbolic link"));
        assert!(!target.exists());
    }

    #[test]
    fn only_a_small_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"12345").unwrap();
        assert_eq!(read_own(&f, 5).unwrap(), b"12345");
        assert!(read_own(&f, 4).unwrap_err().to_string().contains("larger"));
        assert!(read_own(Path::new("/dev/zero"), 10).unwrap_err().to_string().contains("device"));
        assert!(read_own(dir.path(), 10).is_err());
    }

    #[test]
    fn directories_are_made_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c");
        create_dirs(&deep).unwrap();
        assert!(deep.is_dir());
        create_dirs(&deep).unwrap();
    }
}
