//! The live one-line status on stderr (only when stderr is a terminal, not `-q`, and no recorded
//! job writes to the same terminal), cut to the terminal's width and redrawn in place.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Whether a live status line should be drawn: the caller passes `quiet` also when the recorded
/// job writes to our terminal (a wrapped command, which inherits stdout and stderr): its output
/// arrives unseen by gpumon, so a line redrawn in place would be mixed into it (tqdm and pip do
/// the same: no bar when the output is shared).
pub fn enable(quiet: bool) -> bool {
    let on = !quiet && std::io::stderr().is_terminal();
    ACTIVE.store(on, Ordering::Relaxed);
    on
}

/// Width assumed when the terminal does not say.
const DEFAULT_WIDTH: usize = 80;

/// Redraw the status line in place. The line is cut to the terminal's width (asked at every draw,
/// so a resized window is followed): a line that wrapped would leave its first rows behind, since
/// the clear code clears only the cursor's row.
pub fn draw(line: &str) {
    if ACTIVE.load(Ordering::Relaxed) {
        let width = console::Term::stderr()
            .size_checked()
            .map_or(DEFAULT_WIDTH, |(_, cols)| usize::from(cols));
        // The phase label and file names in it come from other programs: nothing of theirs reaches
        // the terminal as a control sequence.
        let _ = write!(std::io::stderr(), "\r\x1b[2K{}", fit(&crate::text::escape(line), width));
    }
}

/// `line` cut to `width` terminal columns less one: a line that reaches the last column leaves
/// some terminals waiting to wrap, and the next `\r` would then return to the row below.
fn fit(line: &str, width: usize) -> Cow<'_, str> {
    console::truncate_str(line, width.saturating_sub(1).max(1), "…")
}

/// Erase the status line so a message can be printed on a clean line.
pub fn clear_line() {
    if ACTIVE.load(Ordering::Relaxed) {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_fit_the_width() {
        let long = "gpumon 00:00:05  ticks 5  late 0  run.parquet 12.3 KiB  GPU 99% 98% 97% 96% 95% 94% 93% 92% and more";
        for w in [1, 20, 40, 80] {
            let f = fit(long, w);
            assert!(console::measure_text_width(&f) < w.max(2), "{w}: {f:?}");
        }
        assert_eq!(fit("short", 80), "short");
        assert!(fit(long, 40).ends_with('…'));
        // Wide characters count twice.
        assert!(console::measure_text_width(&fit("運転中運転中運転中運転中", 10)) <= 9);
    }
}
