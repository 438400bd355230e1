//! Text made safe for the page: HTML and SVG text and attribute values ([`esc`]), JSON inside a
//! script element ([`json_block`]).

/// Escape text for HTML and SVG content and attribute values.
pub(super) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// JSON inside `<script type="application/json">`: nothing in it may close the element.
pub(super) fn json_block(v: &serde_json::Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_else(|_| "{}".into());
    s.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(esc(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        assert_eq!(esc("a\u{1b}b"), "a\u{fffd}b");
        let v = serde_json::json!({"p": "</script><b>&"});
        let j = json_block(&v);
        assert!(!j.contains("</script>") && !j.contains('<') && !j.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(back, v);
    }
}
