//! Word wrapping of the text reports: textwrap's first-fit layout over words measured in
//! characters, the first line after a prefix of its own and the others indented.

use textwrap::core::Fragment;
use textwrap::wrap_algorithms::wrap_first_fit;

/// A word and its width in characters; one space follows it on a line.
#[derive(Debug)]
struct Word<'a>(&'a str, f64);

impl Fragment for Word<'_> {
    fn width(&self) -> f64 {
        self.1
    }

    fn whitespace_width(&self) -> f64 {
        1.0
    }

    fn penalty_width(&self) -> f64 {
        0.0
    }
}

/// `words` in lines of at most `width` characters, joined by one space (a word longer than a line
/// stands alone on its own): the first line starts with `first`, the others with `indent` spaces.
/// No words: one line, `first`.
pub fn lines<'a>(
    first: &str,
    indent: usize,
    words: impl IntoIterator<Item = &'a str>,
    width: usize,
) -> Vec<String> {
    let words: Vec<Word<'a>> =
        words.into_iter().map(|w| Word(w, w.chars().count() as f64)).collect();
    let widths = [width as f64 - first.chars().count() as f64, width as f64 - indent as f64];
    let rest = " ".repeat(indent);
    (wrap_first_fit(&words, &widths).into_iter().enumerate())
        .map(|(i, line)| {
            let mut out = if i == 0 { first.to_string() } else { rest.clone() };
            for (k, w) in line.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                out.push_str(w.0);
            }
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::lines;

    #[test]
    fn first_fit_with_a_prefix_and_an_indent() {
        fn w(t: &str) -> Vec<&str> {
            t.split(' ').collect()
        }
        assert_eq!(lines("", 2, w("aaa bbb ccc"), 7), ["aaa bbb", "  ccc"]);
        assert_eq!(lines("- ", 2, w("aaa bbb ccc"), 9), ["- aaa bbb", "  ccc"]);
        // A word longer than a line stands alone; the line before it is not left empty.
        assert_eq!(lines("x: ", 3, w("aaaaaaaaaa b"), 5), ["x: aaaaaaaaaa", "   b"]);
        // Exactly the width fits; characters, not bytes, are counted.
        assert_eq!(lines("", 0, w("ab cd"), 5), ["ab cd"]);
        assert_eq!(lines("", 0, w("éé éé"), 5), ["éé éé"]);
        assert_eq!(lines("", 0, w("ab cde"), 5), ["ab", "cde"]);
        assert_eq!(lines("  ", 4, std::iter::empty(), 80), ["  "]);
    }
}
