//! Signal handling for `record`: SIGINT/SIGTERM end the run (a second one exits at once),
//! SIGHUP rotates; the origin of each signal is kept so a terminal's Ctrl-C is not forwarded twice.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread;

use anyhow::{Context, Result};
use crossbeam_channel::{Receiver, bounded};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::SignalsInfo;
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::low_level::siginfo::Cause;

/// A signal the record loop acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// End the run. `from_terminal`: sent by the kernel for a terminal's Ctrl-C, which the
    /// terminal already delivered to a wrapped command in the same process group.
    Stop {
        signo: i32,
        from_terminal: bool,
    },
    Rotate,
}

/// Install the handlers and return the channel the loop waits on.
pub fn install() -> Result<Receiver<Signal>> {
    let (tx, rx) = bounded(64);
    // The listener first: a SIGINT between the two registrations must stop the run, not be lost
    // (with only the flag handlers in place it would arm the second-signal exit and nothing else).
    let mut signals =
        SignalsInfo::<WithOrigin>::new([SIGINT, SIGTERM, SIGHUP]).context("installing signal handlers")?;
    let seen = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, seen.clone())
            .context("installing signal handlers")?;
        signal_hook::flag::register(sig, seen.clone()).context("installing signal handlers")?;
    }
    thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for o in signals.forever() {
                let s = if o.signal == SIGHUP {
                    Signal::Rotate
                } else {
                    Signal::Stop { signo: o.signal, from_terminal: o.cause == Cause::Kernel }
                };
                let _ = tx.try_send(s);
            }
        })
        .context("starting the signal thread")?;
    Ok(rx)
}
