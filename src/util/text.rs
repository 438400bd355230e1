//! Untrusted text made safe to print on one line: control characters (newlines, ANSI escapes,
//! NUL) in file names and cell excerpts are written as Rust-style escapes (`\n`, `\u{1b}`).

use std::borrow::Cow;
use std::path::Path;

/// `s` with every control character escaped (`\n`, `\t`, `\u{1b}`...); `s` itself when it has none.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A path as it is shown in messages: lossily decoded, control characters escaped.
pub fn show(path: &Path) -> String {
    escape(&path.to_string_lossy()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert!(matches!(escape("run.csv"), Cow::Borrowed("run.csv")));
        assert_eq!(escape("a\nb\x1b[31mc\0"), "a\\nb\\u{1b}[31mc\\0");
        assert_eq!(escape("tab\there"), "tab\\there");
        assert_eq!(show(Path::new("dir/ü.csv")), "dir/ü.csv");
    }
}
