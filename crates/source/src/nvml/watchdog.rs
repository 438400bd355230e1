//! A one-shot alarm another thread sleeps on (`timerfd`): armed before the GPU reads of a tick and
//! disarmed after them, it wakes the standby thread only when a read overruns (no wake-up otherwise).

use std::io;
use std::os::fd::OwnedFd;
use std::time::Duration;

/// A monotonic `timerfd`: `arm` and `disarm` from any thread, `wait` blocks until it fires.
pub(super) struct Watchdog {
    fd: OwnedFd,
}

impl Watchdog {
    pub(super) fn new() -> io::Result<Watchdog> {
        use rustix::time::{TimerfdClockId, TimerfdFlags, timerfd_create};
        let fd = timerfd_create(TimerfdClockId::Monotonic, TimerfdFlags::CLOEXEC)?;
        Ok(Watchdog { fd })
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
        use rustix::time::{Itimerspec, TimerfdTimerFlags, Timespec, timerfd_settime};
        let spec = Itimerspec {
            it_interval: Timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: Timespec {
                tv_sec: i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(after.subsec_nanos()),
            },
        };
        // It cannot fail with these arguments; were it to, the standby would only miss an alarm.
        let _ = timerfd_settime(&self.fd, TimerfdTimerFlags::empty(), &spec);
    }

    /// Block until the alarm fires (a signal's interruption is waited through).
    pub(super) fn wait(&self) {
        let mut count = [0u8; 8];
        loop {
            // The expiry count: 8 bytes, as timerfd(2) requires.
            match rustix::io::read(&self.fd, &mut count) {
                Err(rustix::io::Errno::INTR) => {}
                _ => return,
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
