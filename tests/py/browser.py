#!/usr/bin/env python3
"""Open an HTML file in headless Chromium through the DevTools protocol and report what a browser saw.

usage: browser.py FILE.html [--screenshot OUT.png] [--pdf OUT.pdf] [--width 1280] [--height 2000]
                            [--chromium PATH] [--repeat N] [--scripts]
                            [--zoom FROM,TO] [--hover KIND] [--scroll-to SELECTOR]

Prints one JSON object: console errors and uncaught exceptions, requests to anything but the file
itself (a self-contained page makes none), load and first-render times (ms, from navigation start;
the median of --repeat runs), and DOM facts the report tests check: charts by kind, heatmap rows,
findings, the embedded summary's schema. Scripts are off unless --scripts: the page as a mail client,
a scripts-off viewer or a printer sees it (the static SVG charts); with --scripts the interactive
charts are drawn and `interactive` counts them (render_ms then includes drawing them).
Exit 2 when Chromium or websocket-client is missing.

Chromium runs with --headless --no-sandbox --disable-gpu, no background networking, a fresh
--user-data-dir, and --remote-debugging-port=0 (the port is read from DevToolsActivePort).
"""
import argparse
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

try:
    import websocket  # websocket-client
except ImportError:
    print("browser.py: the Python package websocket-client is missing: pip install websocket-client", file=sys.stderr)
    sys.exit(2)

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
    "--hide-scrollbars", "--mute-audio",
]

DOM_FACTS = r"""
(() => {
  const charts = {};
  for (const s of document.querySelectorAll('svg.chart')) {
    const k = s.dataset.chart; charts[k] = (charts[k] || 0) + 1;
  }
  const rows = [...document.querySelectorAll('svg.heatmap g.hm-row')].map(g => ({
    host: g.dataset.host, gpu: g.dataset.gpu, mean: g.dataset.mean === '' ? null : Number(g.dataset.mean)}));
  const unlabelled = [...document.querySelectorAll('svg.chart, svg.heatmap')]
    .filter(s => !s.getAttribute('role') || !s.querySelector('title') || !s.querySelector('desc')).length;
  const box = [...document.querySelectorAll('svg.chart')].map(s => s.getBoundingClientRect().width);
  let schema = null;
  try { schema = JSON.parse(document.getElementById('gpumon-summary').textContent).schema; } catch (e) {}
  return JSON.stringify({
    title: document.title,
    charts, chart_count: document.querySelectorAll('svg.chart').length,
    svg_count: document.querySelectorAll('svg').length,
    heatmap_rows: rows,
    findings: [...document.querySelectorAll('.findings li')].map(li => li.dataset.rule),
    times: (document.getElementById('times') || {}).textContent || null,
    gpu_table_rows: document.querySelectorAll('table.gpus tbody tr').length,
    unlabelled_svgs: unlabelled,
    min_chart_width: box.length ? Math.min(...box) : null,
    scripts: [...document.querySelectorAll('script')].filter(s => s.type !== 'application/json').length,
    embedded_schema: schema,
    interactive: document.querySelectorAll('.ix canvas').length,
    interactive_charts: document.querySelectorAll('div.ix[data-id]').length,
    csp: (document.querySelector('meta[http-equiv="Content-Security-Policy"]') || {}).content || null,
    page_height: document.documentElement.scrollHeight,
    max_line_runs: Math.max(0, ...[...document.querySelectorAll('svg.chart path.l:not(.k)')]
      .map(p => (p.getAttribute('d').match(/M/g) || []).length)),
    phase_bands: [...document.querySelectorAll('svg.chart, svg.heatmap')].map(s =>
      [...s.querySelectorAll('rect.ph')].filter(r => r.getBoundingClientRect().width > 1).map(r => r.dataset.phase)),
    phase_fills: [...new Set([...document.querySelectorAll('svg rect.ph')].map(r => getComputedStyle(r).fill))],
    comparison_rows: [...document.querySelectorAll('table.comparison tbody tr')].map(tr => tr.dataset.stat),
    verdicts: [...document.querySelectorAll('ul.verdicts li')].map(li => li.textContent),
    // Each table against the box it sits in: wider than the box scrolls sideways (or is cut);
    // a cell whose text is wider than the cell is clipped.
    tables: [...document.querySelectorAll('table')].map(t => {
      const p = t.parentElement, cs = getComputedStyle(p);
      const content = p.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      return {cls: t.className, width: Math.ceil(t.getBoundingClientRect().width), box: Math.floor(content),
        over: Math.ceil(t.getBoundingClientRect().width) - Math.floor(content),
        clipped_cells: [...t.querySelectorAll('td, th')].filter(c => c.scrollWidth > c.clientWidth + 1).length};
    }),
    page_overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    heatmap_note: ((document.getElementById('heatmap') || {}).nextElementSibling || {}).textContent || null,
    charts_note: ((document.getElementById('charts') || {}).nextElementSibling || {}).textContent || null,
  });
})()
"""


class Cdp:
    def __init__(self, url):
        self.ws = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, timeout=60):
        for i, e in enumerate(self.events):
            if e["method"] == method:
                return self.events.pop(i)
        end = time.time() + timeout
        while time.time() < end:
            msg = json.loads(self.ws.recv())
            if msg.get("method") == method:
                return msg
            if "method" in msg:
                self.events.append(msg)
        raise TimeoutError(method)


def find_chromium(given):
    for c in [given, os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"]:
        if c and shutil.which(c):
            return shutil.which(c)
    return None


def start(chromium, profile):
    # Chromium's stderr goes to a file: a pipe nobody reads could fill up and stall it.
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [chromium, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=log)
    port_file = os.path.join(profile, "DevToolsActivePort")
    end = time.time() + 60
    while time.time() < end:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"chromium exited with {proc.returncode}: {log.read().decode(errors='replace')[-2000:]}")
        if os.path.exists(port_file):
            lines = open(port_file).read().split()
            if lines:
                return proc, int(lines[0])
        time.sleep(0.05)
    raise TimeoutError("chromium did not open its DevTools port")


def page_ws(port):
    end = time.time() + 30
    while time.time() < end:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            pages = [t for t in json.load(r) if t.get("type") == "page"]
        if pages:
            return pages[0]["webSocketDebuggerUrl"]
        time.sleep(0.05)
    raise TimeoutError("no page target")


def visit(cdp, url, width, height, scripts=True):
    """Navigate once; return (load_ms, render_ms) from navigation start. Without `scripts` the page
    loads with script execution off (its scripts never run); it is turned back on after the load
    event, for the DevTools' own evaluations."""
    cdp.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
    cdp.call("Emulation.setScriptExecutionDisabled", value=not scripts)
    cdp.call("Page.navigate", url=url)
    cdp.wait_event("Page.loadEventFired")
    cdp.call("Emulation.setScriptExecutionDisabled", value=False)
    # Two animation frames after load: the page has been laid out and painted.
    r = cdp.call("Runtime.evaluate", awaitPromise=True, returnByValue=True, expression="""
        new Promise(res => requestAnimationFrame(() => requestAnimationFrame(() => {
          const n = performance.getEntriesByType('navigation')[0];
          res(JSON.stringify({load: n.loadEventEnd, render: performance.now()}));
        })))""")
    t = json.loads(r["result"]["value"])
    return t["load"], t["render"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--screenshot")
    ap.add_argument("--pdf")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=2000)
    ap.add_argument("--chromium")
    ap.add_argument("--print-media", action="store_true", help="measure the page as printed (CSS @media print)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--scripts", action="store_true", help="run the page's script (the interactive charts)")
    ap.add_argument("--zoom", help="with --scripts: zoom the charts to FROM,TO (fractions of the span) before the screenshot")
    ap.add_argument("--hover", help="with --scripts: the mouse over the middle of the first chart of this kind (gpu-util...)")
    ap.add_argument("--scroll-to", help="scroll this element (CSS selector) to the top before the screenshot")
    a = ap.parse_args()
    chromium = find_chromium(a.chromium)
    if not chromium:
        print("browser.py: chromium not found: install it (Debian: apt-get install chromium), or set CHROMIUM",
              file=sys.stderr)
        sys.exit(2)
    url = "file://" + os.path.abspath(a.file)
    profile = tempfile.mkdtemp(prefix="gpumon-chromium-")
    proc = None
    try:
        proc, port = start(chromium, profile)
        cdp = Cdp(page_ws(port))
        for domain in ["Page", "Runtime", "Log", "Network"]:
            cdp.call(f"{domain}.enable")
        loads, renders = [], []
        for i in range(max(1, a.repeat)):
            if i:
                cdp.call("Network.clearBrowserCache")
            load, render = visit(cdp, url, a.width, a.height, a.scripts)
            loads.append(load)
            renders.append(render)
        if a.zoom:
            f0, f1 = (float(x) for x in a.zoom.split(","))
            cdp.call("Runtime.evaluate", expression=f"""(() => {{ const v = gpumonReport.view();
                gpumonReport.zoom(v[0] + (v[1] - v[0]) * {f0}, v[0] + (v[1] - v[0]) * {f1}); }})()""")
        if a.scroll_to:
            cdp.call("Runtime.evaluate", expression=f"document.querySelector({json.dumps(a.scroll_to)}).scrollIntoView()")
        if a.hover:
            r = cdp.call("Runtime.evaluate", returnByValue=True, expression=f"""JSON.stringify((() => {{
                const o = document.querySelector('div.ix[data-chart={json.dumps(a.hover)}] .u-over').getBoundingClientRect();
                return [o.left + o.width * 0.55, o.top + o.height / 2]; }})())""")
            x, y = json.loads(r["result"]["value"])
            for dx in (-2, 0):
                cdp.call("Input.dispatchMouseEvent", type="mouseMoved", x=x + dx, y=y)
        if a.print_media:
            cdp.call("Emulation.setEmulatedMedia", media="print")
        facts = json.loads(cdp.call("Runtime.evaluate", expression=DOM_FACTS, returnByValue=True)["result"]["value"])
        if a.screenshot:
            shot = cdp.call("Page.captureScreenshot", format="png")
            with open(a.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        pdf_pages = None
        if a.pdf:
            pdf = base64.b64decode(cdp.call("Page.printToPDF", landscape=True, printBackground=True)["data"])
            with open(a.pdf, "wb") as f:
                f.write(pdf)
            pdf_pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
        errors, requests = [], []
        for e in cdp.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                errors.append("Uncaught " + str(d.get("exception", {}).get("description") or d.get("text")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                errors.append("console." + p["type"] + ": " + " ".join(str(x.get("value", x.get("description")))
                                                                       for x in p.get("args", [])))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                errors.append("log: " + p["entry"].get("text", ""))
            elif m == "Network.requestWillBeSent":
                u = p.get("request", {}).get("url", "")
                if u != url and not u.startswith("data:") and u != "about:blank":
                    requests.append(u)
        out = {
            "chromium": chromium, "url": url, "bytes": os.path.getsize(a.file),
            "errors": errors, "external_requests": requests,
            "load_ms": statistics.median(loads), "render_ms": statistics.median(renders),
            "load_ms_all": loads, "render_ms_all": renders, "pdf_pages": pdf_pages, "dom": facts,
        }
        print(json.dumps(out))
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
