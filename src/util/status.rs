//! The live one-line status on stderr (only when stderr is a terminal and not `-q`).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Whether a live status line should be drawn.
pub fn enable(quiet: bool) -> bool {
    let on = !quiet && std::io::stderr().is_terminal();
    ACTIVE.store(on, Ordering::Relaxed);
    on
}

/// Redraw the status line in place.
pub fn draw(line: &str) {
    if ACTIVE.load(Ordering::Relaxed) {
        let _ = write!(std::io::stderr(), "\r\x1b[2K{line}");
    }
}

/// Erase the status line so a message can be printed on a clean line.
pub fn clear_line() {
    if ACTIVE.load(Ordering::Relaxed) {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}
