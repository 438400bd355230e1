#!/usr/bin/env python3
"""Drive a gpumon report's interactive charts in headless Chromium through the DevTools protocol, with
real mouse, keyboard and touch input, and check what the page shows against the recording.

usage: report_live.py REPORT.html RECORDING.csv [--chromium PATH] [--screenshot PNG] [--fleet | --phases | --job]

RECORDING.csv is the gpumon CSV the report was made from (fewer rows than the report's buckets, so a
bucket holds at most one row and the read-out must show that row's value). Checks, in order:
  hover      the mouse over GPU 0's utilization chart: its read-out names the GPU and shows the
             utilization.gpu the file holds at the read-out's time; every other chart and the
             heatmap mark the same instant
  drag       a drag on one chart: every chart (and the heatmap) shows the same, narrower window;
             double-click resets; a drag on the heatmap zooms the charts too
  keyboard   ArrowRight on a focused chart pans the shared window, Escape resets
  touch      a touch drag on a chart zooms every chart
  finding    a click on a finding that names instants zooms every chart to its span
  event      a click on a row of the events table zooms to that instant
  toggle     unticking GPU 1 hides its charts and its heatmap row, the others stay
  layer      the interactive charts replace the static SVG (one for one); the page says the view is at
             the recording's resolution (its rows are further apart than a bucket); printed, the
             static charts come back and the interactive ones go
  requests   the page made no request (Network events) and logged no error; the CSP forbids requests
With --fleet (a report of two hosts or more) only this, then the requests check:
  hosts      unticking the last host hides its section and its heatmap rows, the others stay
With --job (a job's report, `gpumon report --job ID`) only this, then the requests check:
  stragglers the rows the static heatmap marks as stragglers are outlined in red on the interactive
             heatmap (and no other row), and its read-out names a straggler's row as one
With --phases (a report of marked phases) only this, then the requests check:
  phases     a click on a phase of the phase list, and a tap on a phase's label strip at the top of a
             chart, zoom every chart to that phase
Prints one JSON object with what was seen; exit 1 with the failed check's message, 2 when Chromium
or websocket-client is missing.
"""
import argparse
import base64
import csv
import json
import os
import re
import shutil
import sys
import tempfile
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402  (the DevTools helpers the static report tests use)


class Failed(Exception):
    pass


def check(ok, what):
    if not ok:
        raise Failed(what)


class Page:
    def __init__(self, cdp):
        self.cdp = cdp

    def js(self, expr):
        r = self.cdp.call("Runtime.evaluate", expression=f"JSON.stringify(({expr}))", returnByValue=True,
                          awaitPromise=True)
        if "exceptionDetails" in r:
            raise Failed(f"script error in {expr[:80]}: {r['exceptionDetails']}")
        v = r["result"].get("value")
        return None if v is None else json.loads(v)

    def frame(self):
        self.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(1))))")

    def rect(self, selector):
        """The element's box in the viewport, scrolled into the middle of it."""
        return self.js(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
            return {{x: r.left, y: r.top, w: r.width, h: r.height}}; }})()""")

    def mouse(self, kind, x, y, button="none", buttons=0, clicks=0, modifiers=0):
        self.cdp.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button=button, buttons=buttons,
                      clickCount=clicks, modifiers=modifiers)

    def drag(self, x0, x1, y):
        self.mouse("mouseMoved", x0, y)
        self.mouse("mousePressed", x0, y, "left", 1, 1)
        for k in range(1, 6):
            self.mouse("mouseMoved", x0 + (x1 - x0) * k / 5, y, "left", 1)
        self.mouse("mouseReleased", x1, y, "left", 0, 1)
        self.frame()

    def click(self, x, y, clicks=1):
        self.mouse("mouseMoved", x, y)
        for c in range(1, clicks + 1):
            self.mouse("mousePressed", x, y, "left", 1, c)
            self.mouse("mouseReleased", x, y, "left", 0, c)
        self.frame()

    def key(self, key, code, vk):
        for kind in ("rawKeyDown", "keyUp"):
            self.cdp.call("Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=vk)
        self.frame()

    def windows(self):
        """[min, max] of every drawn chart's time axis (s), and the heatmap's and bar's view."""
        return self.js("""({
            charts: gpumonReport.plots.filter(p => p.box.offsetParent !== null)
                .map(p => [p.u.scales.x.min, p.u.scales.x.max]),
            view: gpumonReport.view(),
            bar: [Number(document.querySelector('.ix-view').dataset.from) / 1e6,
                  Number(document.querySelector('.ix-view').dataset.to) / 1e6]})""")


def same_window(w, what):
    a, b = w["view"]
    check(len(w["charts"]) > 1, f"{what}: no charts drawn")
    for lo, hi in w["charts"]:
        check(abs(lo - a) < 1e-3 and abs(hi - b) < 1e-3, f"{what}: a chart shows {lo}..{hi}, the view is {a}..{b}")
    check(abs(w["bar"][0] - a) < 1e-3 and abs(w["bar"][1] - b) < 1e-3, f"{what}: the bar says {w['bar']}")
    return a, b


def rows_of(csv_path, gpu):
    out = []
    with open(csv_path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("index") == str(gpu) and r.get("utilization.gpu", "") != "":
                t = datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")).astimezone(timezone.utc)
                out.append((round(t.timestamp() * 1e6), float(r["utilization.gpu"])))
    return out


def hover(p, rows, seen):
    box = p.rect('div.ix[data-chart="gpu-util"] .u-over')
    check(box is not None, "no interactive utilization chart")
    x, y = box["x"] + box["w"] * 0.37, box["y"] + box["h"] / 2
    p.mouse("mouseMoved", x - 3, y)
    p.mouse("mouseMoved", x, y)
    p.frame()
    ro = p.js("""(() => { const r = document.querySelector('div.ix[data-chart="gpu-util"] .ro');
        return {text: r.textContent, t0: r.dataset.t0, t1: r.dataset.t1}; })()""")
    seen["hover"] = ro
    check(ro["t0"] is not None, f"hover shows no read-out: {ro}")
    check("GPU 0" in ro["text"] and "UTC" in ro["text"], f"the read-out names the GPU and the time: {ro['text']}")
    m = re.search(r"utilization\.gpu[^·]*? ([0-9][0-9,]*(?:\.[0-9]+)?) %", ro["text"])
    check(m is not None, f"the read-out has a utilization.gpu value with its unit: {ro['text']}")
    shown = float(m.group(1).replace(",", ""))
    t0, t1 = int(ro["t0"]), int(ro["t1"])
    held = [v for t, v in rows if t0 <= t < t1]
    check(len(held) == 1, f"one row of GPU 0 in the hovered bucket {t0}..{t1}: {held}")
    check(abs(shown - held[0]) < 0.01, f"the read-out shows {shown}, the file holds {held[0]}")
    seen["hover_value"] = {"shown": shown, "file": held[0]}
    # The same instant on every other chart and on the heatmap.
    others = p.js("""[...document.querySelectorAll('div.ix[data-id] .ro')].map(r => r.dataset.t0 || null)""")
    check(all(o == ro["t0"] for o in others), f"every chart reads out the same bucket: {set(others)}")
    cur = p.js("""getComputedStyle(document.querySelector('.hm .cur')).display""")
    check(cur == "block", "the heatmap marks the instant")


def zooming(p, seen, full):
    box = p.rect('div.ix[data-chart="gpu-power"] .u-over')
    y = box["y"] + box["h"] / 2
    p.drag(box["x"] + box["w"] * 0.25, box["x"] + box["w"] * 0.6, y)
    a, b = same_window(p.windows(), "drag")
    check(b - a < (full[1] - full[0]) * 0.5 and a > full[0], f"the drag narrowed the window: {a}..{b} of {full}")
    seen["drag"] = [a, b]
    p.click(box["x"] + box["w"] / 2, y, clicks=2)
    a, b = same_window(p.windows(), "double-click")
    check(abs(a - full[0]) < 1e-3 and abs(b - full[1]) < 1e-3, f"double-click resets: {a}..{b}")
    hm = p.rect(".hm canvas")
    p.drag(hm["x"] + 170 + (hm["w"] - 190) * 0.5, hm["x"] + 170 + (hm["w"] - 190) * 0.9, hm["y"] + 10)
    a, b = same_window(p.windows(), "heatmap drag")
    check(a > full[0] + (full[1] - full[0]) * 0.4, f"a drag on the heatmap zooms every chart: {a}..{b}")
    seen["heatmap_drag"] = [a, b]
    p.js("document.getElementById('ix-reset').click()")
    check(p.windows()["view"] == full, "the reset button resets")


def keyboard(p, full):
    box = p.rect('div.ix[data-chart="gpu-temp"] .u-over')
    p.drag(box["x"] + box["w"] * 0.2, box["x"] + box["w"] * 0.5, box["y"] + box["h"] / 2)
    a, b = same_window(p.windows(), "drag before keys")
    p.js("document.querySelector('div.ix[data-chart=\"gpu-temp\"]').focus()")
    p.key("ArrowRight", "ArrowRight", 39)
    a2, b2 = same_window(p.windows(), "ArrowRight")
    check(a2 > a and abs((b2 - a2) - (b - a)) < 1e-3, f"ArrowRight pans: {a}..{b} -> {a2}..{b2}")
    p.key("Escape", "Escape", 27)
    check(p.windows()["view"] == full, "Escape resets")


def touch(p, full):
    p.cdp.call("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=1)
    box = p.rect('div.ix[data-chart="gpu-clock"] .u-over')
    y = box["y"] + box["h"] / 2
    x0, x1 = box["x"] + box["w"] * 0.3, box["x"] + box["w"] * 0.7
    p.cdp.call("Input.dispatchTouchEvent", type="touchStart", touchPoints=[{"x": x0, "y": y}])
    for k in range(1, 6):
        p.cdp.call("Input.dispatchTouchEvent", type="touchMove", touchPoints=[{"x": x0 + (x1 - x0) * k / 5, "y": y}])
    p.cdp.call("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])
    p.frame()
    p.cdp.call("Emulation.setTouchEmulationEnabled", enabled=False)
    a, b = same_window(p.windows(), "touch drag")
    check(b - a < (full[1] - full[0]) * 0.7, f"a touch drag zooms: {a}..{b}")
    p.js("gpumonReport.reset()")


def finding(p, full, seen):
    li = p.js("""(() => { const l = document.querySelector('.findings li[data-from]');
        return l && {rule: l.dataset.rule, from: Number(l.dataset.from) / 1e6, to: Number(l.dataset.to) / 1e6}; })()""")
    check(li is not None, "a finding that names instants")
    r = p.rect('.findings li[data-from]')
    p.click(r["x"] + 30, r["y"] + r["h"] / 2)
    a, b = same_window(p.windows(), "finding click")
    check(a <= li["from"] + 1e-3 and b >= li["to"] - 1e-3, f"the window holds the finding's span: {a}..{b} vs {li}")
    check(b - a < (full[1] - full[0]) * 0.8, f"the finding zooms in: {a}..{b}")
    seen["finding"] = {"rule": li["rule"], "span": [li["from"], li["to"]], "window": [a, b]}
    p.js("gpumonReport.reset()")


def event_row(p, full, seen):
    ts = p.js("""(() => { const t = document.querySelector('table.events tr[data-ts]'); return t && Number(t.dataset.ts) / 1e6; })()""")
    check(ts is not None, "an events table row")
    r = p.rect('table.events tr[data-ts] td')
    p.click(r["x"] + 5, r["y"] + r["h"] / 2)
    a, b = same_window(p.windows(), "event click")
    check(a <= ts <= b and b - a < (full[1] - full[0]) * 0.9, f"an event row zooms around {ts}: {a}..{b}")
    seen["event"] = {"ts": ts, "window": [a, b]}
    p.js("gpumonReport.reset()")


def toggle(p, seen):
    before = p.js("document.querySelector('.hm canvas').dataset.rows")
    r = p.rect('.ix-bar input[data-gpu="1"]')
    check(r is not None, "a toggle for GPU 1")
    p.click(r["x"] + r["w"] / 2, r["y"] + r["h"] / 2)
    st = p.js("""({
        hidden: [...document.querySelectorAll('section.gpu[data-gpu="1"] div.ix')].every(e => e.offsetParent === null),
        shown: [...document.querySelectorAll('section.gpu[data-gpu="0"] div.ix')].every(e => e.offsetParent !== null),
        rows: document.querySelector('.hm canvas').dataset.rows,
        checked: document.querySelector('.ix-bar input[data-gpu="1"]').checked})""")
    seen["toggle"] = {"before": before, **st}
    check(not st["checked"] and st["hidden"] and st["shown"], f"GPU 1's charts hidden, GPU 0's shown: {st}")
    check("1" not in st["rows"].split(",") and "1" in before.split(","), f"GPU 1's heatmap row hidden: {st}")
    p.click(r["x"] + r["w"] / 2, r["y"] + r["h"] / 2)
    back = p.js("document.querySelector('.hm canvas').dataset.rows")
    check(back == before, f"ticking it again brings it back: {back}")


def hosts(p, seen):
    names = p.js("[...document.querySelectorAll('.ix-bar input[data-host]:not([data-gpu])')].map(i => i.dataset.host)")
    check(len(names) >= 2, f"a toggle per host: {names}")
    rows = p.js("document.querySelector('.hm canvas').dataset.rows.split(',').length")
    last = names[-1]
    r = p.rect(f'.ix-bar input[data-host={json.dumps(last)}]:not([data-gpu])')
    p.click(r["x"] + r["w"] / 2, r["y"] + r["h"] / 2)
    st = p.js("""({rows: document.querySelector('.hm canvas').dataset.rows.split(',').length,
        shown: [...document.querySelectorAll('section.host')].map(s => [s.dataset.host, s.offsetParent !== null])})""")
    seen["hosts"] = {"names": names, "rows_before": rows, **st}
    for host, shown in st["shown"]:
        check(shown == (host != last), f"host {host} shown: {shown}: {st}")
    check(st["rows"] < rows, f"the host's heatmap rows are hidden: {rows} -> {st['rows']}")


def stragglers(p, seen):
    st = p.js("""(() => {
        const cv = document.querySelector('.hm canvas'), x = cv.getContext('2d'), dpr = window.devicePixelRatio || 1;
        const marked = [...document.querySelectorAll('svg.heatmap g.hm-row')]
            .map((g, k) => g.hasAttribute('data-straggler') ? k : -1).filter(k => k >= 0);
        const outlined = cv.dataset.stragglers ? cv.dataset.stragglers.split(',').map(Number) : [];
        const img = x.getImageData(0, 0, cv.width, cv.height);  /* one read: Chromium warns about many */
        const px = k => { const i = 4 * (Math.round((k * 22 + 1) * dpr) * cv.width + Math.round(171 * dpr));
                          return Array.from(img.data.slice(i, i + 4)); };
        const rows = cv.dataset.rows.split(',').length;
        return {marked, outlined, rows, pixels: [...Array(rows).keys()].map(px)};
    })()""")
    seen["stragglers"] = {k: st[k] for k in ("marked", "outlined", "rows")}
    check(st["outlined"], f"no straggler outlined on the interactive heatmap: {st}")
    check(st["outlined"] == st["marked"], f"the outlined rows are the static heatmap's: {st}")
    for k, (r, g, b, _) in enumerate(st["pixels"]):
        red = r > 150 and g < 90 and b < 90
        check(red == (k in st["outlined"]), f"row {k} outlined in red: {red}, pixel {(r, g, b)}: {st['outlined']}")
    # The read-out says it too.
    k = st["outlined"][0]
    r = p.rect(".hm canvas")
    p.mouse("mouseMoved", r["x"] + 170 + (r["w"] - 190) / 2, r["y"] + k * 22 + 10)
    ro = p.js("document.querySelector('.hm .ro').textContent")
    seen["stragglers"]["readout"] = ro
    check("(straggler)" in ro, f"the heatmap read-out names the straggler: {ro}")


def phases(p, seen, full):
    li = p.js("""(() => { const l = document.querySelector('ul.phases li[data-from]');
        return l && {phase: l.dataset.phase, from: Number(l.dataset.from) / 1e6, to: Number(l.dataset.to) / 1e6}; })()""")
    check(li is not None, "a phase in the phase list")
    r = p.rect('ul.phases li[data-from]')
    p.click(r["x"] + 20, r["y"] + r["h"] / 2)
    a, b = same_window(p.windows(), "phase click")
    check(a <= li["from"] + 1e-3 and b >= li["to"] - 1e-3 and b - a < (full[1] - full[0]) * 0.9,
          f"the phase list zooms to {li}: {a}..{b}")
    p.js("gpumonReport.reset()")
    band = p.js("JSON.parse(document.getElementById('gpumon-series').textContent).bands[1]")
    check(band is not None, "a second phase band")
    mid = (band["start"] + band["end"]) / 2e6
    box = p.rect('div.ix[data-chart="gpu-util"] .u-over')
    x = p.js(f"""gpumonReport.plots.find(q => q.c.kind === 'gpu-util').u.valToPos({mid}, 'x')""")
    p.click(box["x"] + x, box["y"] + 6)
    a, b = same_window(p.windows(), "band tap")
    check(abs(a - band["start"] / 1e6) < 1e-3 and abs(b - band["end"] / 1e6) < 1e-3,
          f"a tap on the label strip zooms to the phase {band}: {a}..{b}")
    seen["phases"] = {"list": li, "band": band, "window": [a, b]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("html")
    ap.add_argument("csv")
    ap.add_argument("--chromium")
    ap.add_argument("--screenshot")
    ap.add_argument("--fleet", action="store_true", help="check the host toggles only")
    ap.add_argument("--phases", action="store_true", help="check the phase clicks only")
    ap.add_argument("--job", action="store_true", help="check the stragglers' outlines only (a job report)")
    a = ap.parse_args()
    chromium = browser.find_chromium(a.chromium)
    if not chromium:
        print("report_live.py: chromium not found (apt-get install chromium, or set CHROMIUM)", file=sys.stderr)
        sys.exit(2)
    url = "file://" + os.path.abspath(a.html)
    profile = tempfile.mkdtemp(prefix="gpumon-chromium-")
    proc, seen = None, {}
    try:
        proc, port = browser.start(chromium, profile)
        cdp = browser.Cdp(browser.page_ws(port))
        for domain in ["Page", "Runtime", "Log", "Network"]:
            cdp.call(f"{domain}.enable")
        browser.visit(cdp, url, 1280, 900)
        p = Page(cdp)
        full = p.windows()["view"]
        seen["full"] = full
        seen["charts"] = p.js("gpumonReport.plots.length")
        layer = p.js("""({
            static_shown: [...document.querySelectorAll('svg.chart, svg.heatmap')].filter(s => s.getBoundingClientRect().width > 0).length,
            static_count: document.querySelectorAll('svg.chart').length,
            resolution: document.querySelector('.ix-res').dataset.resolution,
            res_text: document.querySelector('.ix-res').textContent})""")
        seen["layer"] = layer
        check(layer["static_shown"] == 0, f"with scripts the interactive charts replace the static ones: {layer}")
        check(seen["charts"] == layer["static_count"], f"one interactive chart per static chart: {seen['charts']} vs {layer}")
        # 100 ms rows are far wider than a bucket: the page says the view is at the recording's resolution.
        check(layer["resolution"] == "recording", f"resolution note: {layer}")
        check(a.fleet or a.phases or a.job or "100 ms" in layer["res_text"], f"resolution note: {layer}")
        # Printed, the page shows the static charts even with scripts on.
        cdp.call("Emulation.setEmulatedMedia", media="print")
        printed = p.js("""({
            svg: [...document.querySelectorAll('svg.chart')].filter(s => s.getBoundingClientRect().width > 0).length,
            ix: [...document.querySelectorAll('.ix, .ix-bar')].filter(e => e.getBoundingClientRect().width > 0).length})""")
        cdp.call("Emulation.setEmulatedMedia", media="")
        seen["printed"] = printed
        check(printed["svg"] == layer["static_count"] and printed["ix"] == 0, f"in print the static charts: {printed}")
        if a.fleet:
            hosts(p, seen)
        if a.phases:
            phases(p, seen, full)
        if a.job:
            stragglers(p, seen)
        if not (a.fleet or a.phases or a.job):
            hover(p, rows_of(a.csv, 0), seen)
            if a.screenshot:
                shot = cdp.call("Page.captureScreenshot", format="png")
                with open(a.screenshot, "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
            zooming(p, seen, full)
            keyboard(p, full)
            touch(p, full)
            finding(p, full, seen)
            event_row(p, full, seen)
            toggle(p, seen)
        errors, requests = [], []
        for e in cdp.events:
            m, prm = e["method"], e.get("params", {})
            if m == "Network.requestWillBeSent":
                u = prm.get("request", {}).get("url", "")
                if u != url:
                    requests.append(u)
            elif m == "Runtime.exceptionThrown":
                errors.append(str(prm.get("exceptionDetails", {}).get("exception", {}).get("description")))
            elif m == "Log.entryAdded" and prm.get("entry", {}).get("level") in ("error", "warning"):
                errors.append(prm["entry"].get("text", ""))
            elif m == "Runtime.consoleAPICalled" and prm.get("type") in ("error", "warning"):
                errors.append(json.dumps(prm.get("args")))
        seen["requests"], seen["errors"] = requests, errors
        check(requests == [], f"the page made requests: {requests}")
        check(errors == [], f"errors in the page: {errors}")
        csp = p.js("document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').content")
        check("default-src 'none'" in csp and "connect-src 'none'" in csp and "'sha256-" in csp, f"CSP: {csp}")
        seen["ok"] = True
        print(json.dumps(seen))
    except Failed as e:
        seen["failed"] = str(e)
        print(json.dumps(seen))
        print(f"report_live.py: {e}", file=sys.stderr)
        sys.exit(1)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except Exception:
                proc.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
