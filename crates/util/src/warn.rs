//! Warnings on stderr, printed once per cause for the whole run.

use std::collections::HashSet;
use std::io::Write;
use std::sync::Mutex;

static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
/// Warnings printed so far.
static PRINTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many warnings this process has printed (a caller can tell whether a step said why).
pub fn printed() -> usize {
    PRINTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Print `gpumon: warning: {msg}` unless a warning with the same `key` was printed before.
/// Returns whether it was printed.
pub fn warn_once(key: &str, msg: &str) -> bool {
    let mut guard = match SEEN.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let seen = guard.get_or_insert_with(HashSet::new);
    if !seen.insert(key.to_string()) {
        return false;
    }
    warn(msg);
    true
}

/// Print a warning unconditionally (clearing a live status line first), on one line: control
/// characters from file names or cells are escaped.
pub fn warn(msg: &str) {
    PRINTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    crate::status::clear_line();
    let _ = writeln!(std::io::stderr(), "gpumon: warning: {}", crate::text::escape(msg));
}
