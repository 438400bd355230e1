//! Process-level helpers: whether a process exists (kill(2) with signal 0, which checks without
//! signalling), and handing freed heap memory back to the system.

/// Whether process `pid` exists (one of another user's, which may not be signalled, counts).
pub fn exists(pid: libc::pid_t) -> bool {
    use rustix::process::{Pid, test_kill_process, test_kill_process_group};
    // kill(2) with signal 0: a PID of 0 names our own process group, a negative one a group.
    let r = match Pid::from_raw(pid.saturating_abs()) {
        None => Ok(()),
        Some(p) if pid < 0 => test_kill_process_group(p),
        Some(p) => test_kill_process(p),
    };
    r.is_ok() || r == Err(rustix::io::Errno::PERM)
}

/// Hand the memory freed since the last call back to the system (free pages of glibc's arenas).
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of glibc's arenas to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_exists_and_a_pid_above_pid_max_does_not() {
        assert!(super::exists(std::process::id() as libc::pid_t));
        assert!(!super::exists(999_999_999));
    }
}
