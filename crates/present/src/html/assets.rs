//! The report page's script and its policy: the vendored uPlot library with the page's own script
//! (assets/), and the Content-Security-Policy that lets exactly that script run and forbids every
//! request.

use base64::Engine;
use sha2::{Digest, Sha256};

const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
/// uPlot's stylesheet, for the page's `<style>`.
pub(crate) const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
const REPORT_JS: &str = include_str!("../../assets/report.js");

/// The inline script: uPlot, then the page's own code. Neither contains `</script` or `<!--`
/// (a unit test checks), so it goes into the page as it is.
pub(super) fn script() -> String {
    format!("{UPLOT_JS}\n{REPORT_JS}")
}

/// The policy: nothing may be fetched, framed, posted or connected to; inline styles are allowed,
/// and of scripts only the page's own inline script (by its hash).
pub(super) fn csp(script: &str) -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{}'; img-src 'none'; connect-src 'none'; font-src 'none'; form-action 'none'; base-uri 'none'",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(script.as_bytes()))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_cannot_close_its_element() {
        let s = script().to_ascii_lowercase();
        assert!(!s.contains("</script") && !s.contains("<!--"));
        assert!(s.contains("uplot") && s.contains("gpumon-series"));
    }

    #[test]
    fn policy_names_the_scripts_hash() {
        let p = csp("alert(1)");
        assert!(p.starts_with("default-src 'none';") && p.contains("connect-src 'none'"));
        // echo -n 'alert(1)' | openssl dgst -sha256 -binary | base64
        assert!(p.contains("'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"), "{p}");
    }
}
