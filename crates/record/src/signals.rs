//! Signal handling for `record`: SIGINT/SIGTERM end the run (a second one exits at once, a third
//! while a wrapped job is waited for),
//! SIGHUP rotates; the origin of each signal is kept so a terminal's Ctrl-C is not forwarded twice.
//! No thread: the record loop waits for its next deadline in `ppoll` on the handlers' self-pipe.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crossbeam_channel::{RecvTimeoutError, TryRecvError};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::backend::SignalDelivery;
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::low_level::siginfo::Cause;

/// A signal the record loop acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// End the run. `from_terminal`: sent by the kernel for a terminal's Ctrl-C, which the
    /// terminal already delivered to a wrapped command in the same process group.
    Stop {
        signo: i32,
        from_terminal: bool,
    },
    Rotate,
}

/// The signals that arrived, read from the handlers' self-pipe by the thread that waits on them.
pub(crate) struct Signals {
    /// Set while a wrapped job that was asked to stop is waited for: a second stop then ends
    /// recording (the file finished) instead of exiting at once.
    waiting: Arc<AtomicBool>,
    delivery: RefCell<SignalDelivery<UnixStream, WithOrigin>>,
    queue: RefCell<VecDeque<Signal>>,
    /// The self-pipe may hold bytes: it was readable at the last wait (or never waited on yet).
    /// A handler writes a byte for every signal, so an unreadable pipe means nothing to read and
    /// the loop does not ask (one `ppoll` per tick, no `recv` that finds nothing).
    readable: Cell<bool>,
    /// Another descriptor the wait also watches (the idle control socket), and whether it was
    /// readable at the last wait.
    extra: Cell<Option<RawFd>>,
    extra_ready: Cell<bool>,
}

/// Install the handlers; the loop waits on the returned [`Signals`].
pub(crate) fn install() -> Result<Signals> {
    // The listener first: a SIGINT between the two registrations must stop the run, not be lost
    // (with only the flag handlers in place it would arm the second-signal exit and nothing else).
    let (read, write) = UnixStream::pair().context("installing signal handlers")?;
    let delivery =
        SignalDelivery::with_pipe(read, write, WithOrigin::default(), [SIGINT, SIGTERM, SIGHUP])
            .context("installing signal handlers")?;
    // A stop is a stop, not a crash: the first ends the run. While a wrapped job is waited for
    // (it was asked to end first), the second ends recording without waiting for it and only a third
    // exits at once; otherwise the second exits at once (the stop is taking too long: a hung
    // driver), leaving the file for `gpumon recover`.
    let seen = Arc::new(AtomicUsize::new(0));
    let waiting = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        let (seen, waiting) = (seen.clone(), waiting.clone());
        let action = move || {
            let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
            if n >= 3 || (n >= 2 && !waiting.load(Ordering::SeqCst)) {
                signal_hook::low_level::exit(128 + sig);
            }
        };
        // SAFETY: the action only adds to an atomic and calls `_exit`, both async-signal-safe.
        unsafe { signal_hook::low_level::register(sig, action) }
            .context("installing signal handlers")?;
    }
    Ok(Signals {
        waiting,
        delivery: RefCell::new(delivery),
        queue: RefCell::new(VecDeque::new()),
        readable: Cell::new(true),
        extra: Cell::new(None),
        extra_ready: Cell::new(false),
    })
}

impl Signals {
    /// A wrapped job was asked to stop and is waited for (see [`Signals::waiting`]).
    pub(crate) fn waiting_for_job(&self) {
        self.waiting.store(true, Ordering::SeqCst);
    }

    /// Also end waits when `fd` becomes readable ([`Signals::take_extra`] then says so); None: stop.
    pub(crate) fn watch(&self, fd: Option<RawFd>) {
        self.extra.set(fd);
        self.extra_ready.set(false);
    }

    /// Whether the watched descriptor was readable at the last wait (cleared by asking).
    pub(crate) fn take_extra(&self) -> bool {
        self.extra_ready.replace(false)
    }

    /// The next signal, waiting until one arrives or `timeout` has passed.
    pub(crate) fn recv_timeout(&self, timeout: Duration) -> Result<Signal, RecvTimeoutError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.take() {
                return Ok(s);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.extra_ready.get() {
                return Err(RecvTimeoutError::Timeout);
            }
            // Returns when the pipe is readable, the time is up, or any signal interrupts it.
            self.wait_readable(left);
        }
    }

    /// A signal that already arrived, if any.
    pub(crate) fn try_recv(&self) -> Result<Signal, TryRecvError> {
        if let Some(s) = self.take() {
            return Ok(s);
        }
        self.wait_readable(Duration::ZERO);
        self.take().ok_or(TryRecvError::Empty)
    }

    fn take(&self) -> Option<Signal> {
        let mut queue = self.queue.borrow_mut();
        if queue.is_empty() && self.readable.replace(false) {
            for o in self.delivery.borrow_mut().pending() {
                queue.push_back(if o.signal == SIGHUP {
                    Signal::Rotate
                } else {
                    Signal::Stop { signo: o.signal, from_terminal: o.cause == Cause::Kernel }
                });
            }
        }
        queue.pop_front()
    }

    fn wait_readable(&self, d: Duration) {
        let fd = self.delivery.borrow().get_read().as_raw_fd();
        let mut pfd = [
            libc::pollfd { fd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.extra.get().unwrap_or(-1), events: libc::POLLIN, revents: 0 },
        ];
        let nfds: libc::nfds_t = if self.extra.get().is_some() { 2 } else { 1 };
        let ts = libc::timespec {
            tv_sec: libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX),
            tv_nsec: d.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `nfds` valid pollfds and a valid timespec; no signal mask change.
        let n = unsafe { libc::ppoll(pfd.as_mut_ptr(), nfds, &ts, std::ptr::null()) };
        if pfd[1].revents != 0 {
            self.extra_ready.set(true);
        }
        // Interrupted (a signal came) or the pipe readable: the next `take` reads the pipe.
        if n < 0 || pfd[0].revents != 0 {
            self.readable.set(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: a raised SIGHUP reaches every installed `Signals` of the process.
    #[test]
    fn waits_out_the_timeout_and_wakes_on_sighup() {
        let s = install().unwrap();
        let t = Instant::now();
        assert_eq!(s.recv_timeout(Duration::from_millis(30)), Err(RecvTimeoutError::Timeout));
        assert!(t.elapsed() >= Duration::from_millis(30));
        assert_eq!(s.try_recv(), Err(TryRecvError::Empty));
        let t = Instant::now();
        signal_hook::low_level::raise(SIGHUP).unwrap();
        assert_eq!(s.recv_timeout(Duration::from_secs(5)), Ok(Signal::Rotate));
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
