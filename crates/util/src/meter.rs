//! The read meter: a bar on stderr for long reads, drawn only when stderr is a terminal and the work has
//! already taken more than a second, so quick runs and pipelines never see it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Delay before the bar appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Bytes read over all inputs, shown as a bar; cheap to update from several threads.
pub struct ReadMeter {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: AtomicBool,
}

impl ReadMeter {
    /// A bar for `total` bytes; `enabled` false (e.g. `-q`) or a non-terminal stderr gives a no-op.
    pub fn new(total: u64, enabled: bool) -> ReadMeter {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            if let Ok(style) =
                ProgressStyle::with_template("{spinner} {bar:24} {bytes}/{total_bytes} {wide_msg}")
            {
                b.set_style(style);
            }
            b
        });
        ReadMeter { bar, start: Instant::now(), shown: AtomicBool::new(false) }
    }

    /// No bar at all.
    pub fn none() -> ReadMeter {
        ReadMeter { bar: None, start: Instant::now(), shown: AtomicBool::new(false) }
    }

    /// `bytes` more of the input are done.
    pub fn inc(&self, bytes: u64) {
        let Some(bar) = &self.bar else { return };
        bar.inc(bytes);
        if !self.shown.load(Ordering::Relaxed) && self.start.elapsed() > SHOW_AFTER {
            self.shown.store(true, Ordering::Relaxed);
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Name the file being read.
    pub fn set_file(&self, name: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(name.to_string());
        }
    }

    /// Remove the bar (before the report is printed).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
