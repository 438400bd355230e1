//! The page: one self-contained HTML document (inline CSS, inline SVG, no web fonts, no external
//! resource), readable at 1280 px and printed to PDF (print CSS: landscape pages, two charts a row,
//! no breaks inside a chart). One inline script (uPlot and the page's own, [`crate::html::assets`])
//! replaces the static charts with interactive ones on screen; without scripts, and in print, the
//! static SVG stays. A Content-Security-Policy forbids every request. Every string that comes from
//! the data goes through [`esc`]; JSON through [`json_block`].

use std::fmt::Write;

use crate::html::escape::{esc, json_block};

const CSS: &str = r#"
:root{--fg:#1b1f24;--mute:#59636e;--line:#d0d7de;--bg:#fff;--warn:#9a6700;--bad:#cf222e;--ok:#1a7f37}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1280px;padding:16px 20px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.meta{color:var(--mute);margin:2px 0}
.meta b{color:var(--fg);font-weight:600}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0}
th,td{padding:3px 6px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{background:#f6f8fa;font-weight:600;vertical-align:bottom;white-space:normal;min-width:4em}
td.l,th.l{text-align:left}td.w{white-space:normal;text-align:left;max-width:520px}
.scroll{overflow-x:auto}
.findings{list-style:none;padding:0;margin:6px 0}
.findings li{border-left:4px solid var(--line);padding:4px 10px;margin:6px 0;background:#f6f8fa}
.findings li.error{border-color:#cf222e}.error .sev{color:#cf222e}
.findings li.warning{border-color:var(--warn)}.findings li.info{border-color:#0969da}
.sev{font-weight:600;text-transform:uppercase;font-size:11px;letter-spacing:.04em;margin-right:6px}
.warning .sev{color:var(--warn)}.info .sev{color:#0969da}
.fix{color:var(--mute)}
.pass{color:var(--ok);font-weight:600}.fail{color:var(--bad);font-weight:600}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:10px 18px}
figure{margin:0;break-inside:avoid;page-break-inside:avoid}
svg{display:block;width:100%;height:auto;font-family:system-ui,"Liberation Sans",Arial,sans-serif}
svg text{fill:var(--fg);font-size:11px}
svg .t{font-size:13px;font-weight:600}
svg .yl{text-anchor:end}svg .xl{text-anchor:middle}svg .at{text-anchor:middle;fill:var(--mute)}
svg .hl{text-anchor:end;font-size:12px}svg .hm{font-size:12px;fill:var(--mute)}
svg .g{stroke:#e6e9ed;stroke-width:1;fill:none}
svg .fr{fill:none;stroke:#b8c0c8;stroke-width:1}
svg .ev path{stroke:#cf222e;stroke-width:1.5;stroke-dasharray:3 2;fill:none}svg .ev .evm{fill:#cf222e;stroke:none}
svg .l{fill:none;stroke-width:1.5;stroke-linejoin:round;stroke-linecap:round;vector-effect:non-scaling-stroke}
svg .sw{fill:none;stroke-width:2}
svg .k{stroke-dasharray:6 4;stroke-width:1.3}
svg .b{stroke:none}
.c0{stroke:#0969da}.b0{fill:#0969da;fill-opacity:.22}
.c1{stroke:#bc4c00}.b1{fill:#bc4c00;fill-opacity:.2}
.c2{stroke:#1a7f37}.b2{fill:#1a7f37;fill-opacity:.2}
.c3{stroke:#57606a}.b3{fill:#57606a;fill-opacity:.2}
svg .ph{stroke:none}svg .pl{font-size:10px;fill:var(--mute)}
.p0{fill:#8250df;fill-opacity:.12}.p1{fill:#bf8700;fill-opacity:.14}.p2{fill:#1b7c83;fill-opacity:.12}.p3{fill:#cf222e;fill-opacity:.10}
.phs{display:inline-block;width:14px;height:10px;margin-right:5px}
.phs.p0{background:#8250df30}.phs.p1{background:#bf870038}.phs.p2{background:#1b7c8330}.phs.p3{background:#cf222e28}
svg .hm-row path{shape-rendering:crispEdges}
.h0{fill:#ffffd9}.h1{fill:#edf8b1}.h2{fill:#c7e9b4}.h3{fill:#7fcdbb}.h4{fill:#41b6c4}
.h5{fill:#1d91c0}.h6{fill:#225ea8}.h7{fill:#253494}.h8{fill:#1a2670}.h9{fill:#081d58}
.note{color:var(--mute);font-size:13px}
footer{margin-top:32px;color:var(--mute);font-size:12px}
@media print{
  @page{size:A4 landscape;margin:10mm}
  body{max-width:none;padding:0;font-size:10pt}
  .grid{grid-template-columns:1fr 1fr}
  h2,h3,.note{break-after:avoid;page-break-after:avoid}
  .keep{break-inside:avoid;page-break-inside:avoid}
  .scroll{overflow:visible}
  table{font-size:8pt}
  a{color:inherit;text-decoration:none}
}
"#;

/// The interactive layer's styles: hidden until the script marks the page (`html.js`), and in print.
const LIVE_CSS: &str = r#"
.ix,.ix-bar{display:none}
html.js .ix{display:block}html.js .ix-bar{display:block}
html.js figure>svg.chart,html.js figure>svg.heatmap{display:none}
.ix-bar{position:sticky;top:0;z-index:5;background:var(--bg);border-bottom:1px solid var(--line);padding:6px 0 4px;margin-top:18px;font-size:13px}
.ix-bar button{font:inherit;padding:1px 10px;margin-right:8px;cursor:pointer}
.ix-bar label{margin-right:10px;white-space:nowrap;cursor:pointer}
.ix-bar .ix-view{font-weight:600}.ix-bar p{margin:3px 0 0}
.ix-bar code{font-size:12px;background:#f6f8fa;padding:1px 4px;user-select:all;word-break:break-all}
.ix{position:relative;outline:none}.ix:focus-visible{box-shadow:0 0 0 2px #0969da66}
.ix .ixt{font-weight:600;font-size:13px;margin:0 0 0 4px}
.ix .ro{font-size:12px;color:var(--mute);min-height:1.5em;margin-left:4px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.ix .u-over{touch-action:pan-y}
.hm canvas{display:block;touch-action:pan-y;cursor:crosshair}
.hm .sel{position:absolute;background:#0969da22;border:1px solid #0969da66;display:none;pointer-events:none}
.hm .cur{position:absolute;width:0;border-left:1px dashed #cf222e;pointer-events:none;display:none}
html.js [data-from],html.js tr[data-ts]{cursor:zoom-in}
html.js li[data-from]:hover,html.js tr[data-ts]:hover td{background:#ddf4ff}
@media print{html.js .ix,html.js .ix-bar{display:none}html.js figure>svg.chart,html.js figure>svg.heatmap{display:block}}
"#;

/// The whole document: the body, the summary (`gpumon-summary`) and the charts' series
/// (`gpumon-series`) as JSON data, and the script that draws the interactive charts from them.
pub fn page(
    title: &str,
    body: &str,
    summary: &serde_json::Value,
    series: &serde_json::Value,
) -> String {
    let script = crate::html::assets::script();
    let mut s = String::with_capacity(body.len() + script.len() + 64 * 1024);
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(
        s,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        crate::html::assets::csp(&script)
    );
    s.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    let _ = write!(s, "<meta name=\"generator\" content=\"gpumon {}\">", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(
        s,
        "<title>{}</title><style>{CSS}{LIVE_CSS}{}</style></head><body>",
        esc(title),
        crate::html::assets::UPLOT_CSS
    );
    s.push_str(body);
    // The summary as data for scripts (`document.getElementById("gpumon-summary")`); never executed.
    let _ = write!(
        s,
        "\n<script type=\"application/json\" id=\"gpumon-summary\">{}</script>\n",
        json_block(summary)
    );
    // The charts' series, read by the script below.
    let _ = write!(
        s,
        "<script type=\"application/json\" id=\"gpumon-series\">{}</script>\n<script>{script}</script>\n</body></html>\n",
        json_block(series)
    );
    s
}
