//! A one-shot alarm another thread sleeps on (`timerfd`): armed before the GPU reads of a tick and
//! disarmed after them, it wakes the standby thread only when a read overruns (no wake-up otherwise).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// A monotonic `timerfd`: `arm` and `disarm` from any thread, `wait` blocks until it fires.
pub(super) struct Watchdog {
    fd: OwnedFd,
}

impl Watchdog {
    pub(super) fn new() -> io::Result<Watchdog> {
        // SAFETY: plain syscall with constant flags; the result is checked before use.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by timerfd_create and is owned by nothing else.
        Ok(Watchdog { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }

    /// Fire once `after` from now (at once when zero), replacing any earlier arming.
    pub(super) fn arm(&self, after: Duration) {
        // A zero it_value disarms: the shortest wait is one nanosecond.
        self.set(after.max(Duration::from_nanos(1)));
    }

    pub(super) fn disarm(&self) {
        self.set(Duration::ZERO);
    }

    fn set(&self, after: Duration) {
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: libc::time_t::try_from(after.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: after.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: a valid timerfd and a valid itimerspec; the old value is not asked for (null).
        // It cannot fail with these arguments; were it to, the standby would only miss an alarm.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
    }

    /// Block until the alarm fires (a signal's interruption is waited through).
    pub(super) fn wait(&self) {
        let mut n = 0u64;
        loop {
            // SAFETY: reads 8 bytes (the expiry count, as timerfd(2) requires) into `n`.
            let r = unsafe { libc::read(self.fd.as_raw_fd(), (&raw mut n).cast(), 8) };
            if r == 8 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn fires_once_armed_and_not_when_disarmed() {
        let w = Watchdog::new().unwrap();
        let t = Instant::now();
        w.arm(Duration::from_millis(20));
        w.wait();
        assert!(t.elapsed() >= Duration::from_millis(20));
        // Disarmed before it fires: a later arming is what wakes the waiter.
        w.arm(Duration::from_millis(5));
        w.disarm();
        std::thread::sleep(Duration::from_millis(15));
        let t = Instant::now();
        w.arm(Duration::from_millis(30));
        w.wait();
        assert!(t.elapsed() >= Duration::from_millis(30), "the disarmed alarm did not fire");
    }
}
