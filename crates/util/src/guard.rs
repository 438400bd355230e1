//! The last line of defence around third-party decoders fed untrusted bytes: a panic inside
//! [`contain`] becomes an error message instead of ending the process, and the default panic hook
//! stays silent for it (the caller reports one line naming the file).
//!
//! Validation before decoding is the first line (sizes checked against the file length); this only
//! catches what slipped through. Panics outside [`contain`] still print and abort as usual.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Depth of `contain` calls on this thread.
    static INSIDE: Cell<u32> = const { Cell::new(0) };
    /// What the last contained panic said.
    static LAST: RefCell<String> = const { RefCell::new(String::new()) };
}

static HOOK: Once = Once::new();

/// Install (once) a panic hook that records contained panics instead of printing them.
fn install_hook() {
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if INSIDE.with(Cell::get) > 0 {
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown cause".into());
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                LAST.with(|l| *l.borrow_mut() = format!("{msg}{at}"));
            } else {
                default(info);
            }
        }));
    });
}

/// Run `f`; a panic inside it comes back as `Err` with the panic's message and place.
pub fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    INSIDE.with(|d| d.set(d.get() + 1));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    INSIDE.with(|d| d.set(d.get().saturating_sub(1)));
    r.map_err(|_| LAST.with(|l| std::mem::take(&mut *l.borrow_mut())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::panic)]
    fn a_panic_becomes_an_error() {
        assert_eq!(contain(|| 5), Ok(5));
        let e = contain(|| -> u8 { panic!("offset + len out of bounds") }).unwrap_err();
        assert!(e.starts_with("offset + len out of bounds at "), "{e}");
        let v: Vec<u8> = Vec::new();
        let e = contain(|| v[3]).unwrap_err();
        assert!(e.contains("index out of bounds"), "{e}");
    }
}
