//! Untrusted text made safe to print on one line: control characters (newlines, ANSI escapes,
//! NUL) and the invisible characters that reorder or break text on a terminal (bidirectional
//! overrides and isolates, line and paragraph separators) in file names, labels and cell excerpts
//! are written as Rust-style escapes (`\n`, `\u{1b}`, `\u{202e}`).

use std::borrow::Cow;
use std::path::Path;

/// Whether `c` changes how the text around it shows rather than showing itself: a control
/// character (C0, DEL, C1), a bidirectional mark, embedding, override or isolate (U+061C, U+200E,
/// U+200F, U+202A-U+202E, U+2066-U+2069), or a line or paragraph separator (U+2028, U+2029).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `s` with every character [`is_unsafe`] escaped (`\n`, `\t`, `\u{1b}`, `\u{202e}`...); `s` itself
/// when it has none.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else if is_unsafe(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A report of several lines for a terminal: every character [`is_unsafe`] escaped except the line
/// breaks and tabs of its layout; `text` itself when it has none.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c) && c != '\n' && c != '\t') {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text
        .split('\n')
        .map(|l| {
            if l.contains('\t') {
                Cow::Owned(l.split('\t').map(escape).collect::<Vec<_>>().join("\t"))
            } else {
                escape(l)
            }
        })
        .collect();
    Cow::Owned(lines.join("\n"))
}

/// A path as it is shown in messages: lossily decoded, control characters escaped.
pub fn show(path: &Path) -> String {
    escape(&path.to_string_lossy()).into_owned()
}

/// Indices (in the order given) with runs of `min_run` or more consecutive numbers written as ranges:
/// `0-7`, `0-3, 5`; shorter runs are listed one by one (`min_run` 3: `0, 1, 4-6`).
pub fn index_ranges(idx: &[u64], min_run: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && idx[j + 1] == idx[j] + 1 {
            j += 1;
        }
        if j + 1 - i >= min_run.max(2) {
            parts.push(format!("{}-{}", idx[i], idx[j]));
        } else {
            parts.extend(idx[i..=j].iter().map(u64::to_string));
        }
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_ranges_join_runs_of_the_length_asked() {
        assert_eq!(index_ranges(&[0, 1, 2, 3, 5], 2), "0-3, 5");
        assert_eq!(index_ranges(&[0, 1, 4, 5, 6], 3), "0, 1, 4-6");
        assert_eq!(index_ranges(&[0, 1], 2), "0-1");
        assert_eq!(index_ranges(&[], 2), "");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert!(matches!(escape("run.csv"), Cow::Borrowed("run.csv")));
        assert_eq!(escape("a\nb\x1b[31mc\0"), "a\\nb\\u{1b}[31mc\\0");
        assert_eq!(escape("tab\there"), "tab\\there");
        assert_eq!(show(Path::new("dir/ü.csv")), "dir/ü.csv");
        assert_eq!(
            escape("a\u{202e}gpj.exe\u{2066}b\u{200f}"),
            "a\\u{202e}gpj.exe\\u{2066}b\\u{200f}"
        );
        assert_eq!(escape("\u{9b}31m\u{2028}"), "\\u{9b}31m\\u{2028}");
        assert_eq!(for_terminal("a\tb\n\u{1b}[2J\n"), "a\tb\n\\u{1b}[2J\n");
        assert!(matches!(for_terminal("plain\ttext\n"), Cow::Borrowed(_)));
    }
}
