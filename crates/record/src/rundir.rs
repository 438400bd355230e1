//! The run's private directory (`gpumon-XXXXXX`, mode 0700) in memory: under /dev/shm, else
//! `$XDG_RUNTIME_DIR`, else the temporary directory. The control socket and the live status file
//! live there: a file rewritten every row costs no disk write on a tmpfs (renaming over a file on
//! ext4 forces its data to disk), and a crash leaves nothing in the data directory but a link.
//! Shared by the socket and the status writer; removed when the last of them is done. A crash leaves
//! it behind: the next run sweeps away such directories of this user whose recorder is gone.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The directory; removed (once empty) when the last handle is dropped.
#[derive(Debug)]
pub(crate) struct RunDir {
    path: PathBuf,
}

impl RunDir {
    /// Make a new private directory.
    pub(crate) fn create() -> std::io::Result<Arc<RunDir>> {
        let shm = Path::new("/dev/shm");
        let bases = [
            Some(shm.to_path_buf()).filter(|p| p.is_dir()),
            std::env::var_os("XDG_RUNTIME_DIR")
                .map(PathBuf::from)
                .filter(|d| d.is_absolute() && d.is_dir()),
            Some(std::env::temp_dir()),
        ];
        let mut last = std::io::Error::other("no directory to make it in");
        for base in bases.into_iter().flatten() {
            sweep(&base);
            match mkdtemp(&base.join("gpumon-XXXXXX")) {
                Ok(path) => return Ok(Arc::new(RunDir { path })),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    pub(crate) fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// How long a directory must have been left alone before a sweep may take it (one being set up has
/// no status file yet).
const SWEEP_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether the run of a directory is over: its status names a process that is gone, or (a run
/// without a status file) nobody answers on its socket.
fn is_dead(dir: &Path) -> bool {
    if let Ok(b) = std::fs::read(dir.join("status")) {
        let pid = gpumon_schema::recorder_pid(&b).and_then(|p| libc::pid_t::try_from(p).ok());
        return pid.is_some_and(|p| !gpumon_util::process_exists(p));
    }
    let sock = dir.join("ctl");
    sock.exists() && std::os::unix::net::UnixStream::connect(&sock).is_err()
}

/// Remove the `gpumon-*` directories of this user under `base` that a crashed run left.
fn sweep(base: &Path) {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    let Ok(rd) = std::fs::read_dir(base) else { return };
    for e in rd.flatten() {
        let dir = e.path();
        let ours = e.file_name().to_string_lossy().starts_with("gpumon-")
            && e.metadata().is_ok_and(|m| m.is_dir() && m.uid() == me)
            && e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|a| a > SWEEP_AFTER));
        if ours && is_dead(&dir) {
            for name in ["status", ".status.tmp", "ctl"] {
                let _ = std::fs::remove_file(dir.join(name));
            }
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

/// mkdtemp(3): a new directory (mode 0700, less the umask) from a template ending in `XXXXXX`, the
/// Xs replaced by random letters and digits until a name is free (as many tries as glibc's).
fn mkdtemp(template: &Path) -> std::io::Result<PathBuf> {
    use std::io::{Error, ErrorKind};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::DirBuilderExt;
    const CHARS: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let Some(stem) = template.as_os_str().as_bytes().strip_suffix(b"XXXXXX") else {
        return Err(Error::from(ErrorKind::InvalidInput));
    };
    for _ in 0..62 * 62 * 62 {
        let mut random = [0u8; 6];
        let got = rustix::rand::getrandom(&mut random, rustix::rand::GetRandomFlags::empty())?;
        if got < random.len() {
            continue;
        }
        let mut name = stem.to_vec();
        name.extend(random.iter().map(|b| CHARS[usize::from(*b) % CHARS.len()]));
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(&name));
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(Error::from(ErrorKind::AlreadyExists))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_crashed_runs_directory_is_swept_and_a_live_ones_kept() {
        let base = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - 2 * SWEEP_AFTER;
        let make = |name: &str, pid: u32| {
            let d = base.path().join(name);
            std::fs::create_dir(&d).unwrap();
            // The pid among the other fields of a status file (which the sweep skips).
            let status = format!(
                "{{\"run\": {{\"gpus\": [{{\"index\": 0}}]}}, \"pid\": {pid}, \"file\": \"a.csv\"}}"
            );
            std::fs::write(d.join("status"), status).unwrap();
            std::fs::File::open(&d).unwrap().set_modified(old).unwrap();
            d
        };
        // A pid far above pid_max is no process; this test's own is.
        let (dead, live) =
            (make("gpumon-dead01", 999_999_999), make("gpumon-live01", std::process::id()));
        let young = base.path().join("gpumon-young1");
        std::fs::create_dir(&young).unwrap();
        sweep(base.path());
        assert!(!dead.exists() && live.exists() && young.exists());
    }

    #[test]
    fn private_and_gone_with_the_last_handle() {
        let d = RunDir::create().unwrap();
        let path = d.path.clone();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o700);
        let other = d.clone();
        drop(d);
        assert!(path.exists());
        drop(other);
        assert!(!path.exists());
    }
}
