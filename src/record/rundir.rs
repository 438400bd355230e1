//! The run's private directory (`gpumon-XXXXXX`, mode 0700) in memory: under /dev/shm, else
//! `$XDG_RUNTIME_DIR`, else the temporary directory. The control socket and the live status file
//! live there: a file rewritten every row costs no disk write on a tmpfs (renaming over a file on
//! ext4 forces its data to disk), and a crash leaves nothing in the data directory but a link.
//! Shared by the socket and the status writer; removed when the last of them is done.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The directory; removed (once empty) when the last handle is dropped.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
}

impl RunDir {
    /// Make a new private directory.
    pub fn create() -> std::io::Result<Arc<RunDir>> {
        let shm = Path::new("/dev/shm");
        let bases = [
            Some(shm.to_path_buf()).filter(|p| p.is_dir()),
            std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|d| d.is_absolute() && d.is_dir()),
            Some(std::env::temp_dir()),
        ];
        let mut last = std::io::Error::other("no directory to make it in");
        for base in bases.into_iter().flatten() {
            match mkdtemp(&base.join("gpumon-XXXXXX")) {
                Ok(path) => return Ok(Arc::new(RunDir { path })),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// mkdtemp(3): a new directory (mode 0700) from a template ending in `XXXXXX`.
fn mkdtemp(template: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut buf: Vec<u8> = template.as_os_str().as_bytes().to_vec();
    buf.push(0);
    // SAFETY: `buf` is a writable NUL-terminated template that mkdtemp fills in place.
    let p = unsafe { libc::mkdtemp(buf.as_mut_ptr().cast()) };
    if p.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    buf.pop();
    Ok(PathBuf::from(std::ffi::OsString::from_vec(buf)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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
