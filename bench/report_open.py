#!/usr/bin/env python3
"""What the interactive report costs a reader: the HTML's size and the time headless Chromium takes
to open it, for 1 hour, 1 day and 1 week at 1 s with 8 GPUs.

usage: python3 bench/report_open.py [--gpumon target/release/gpumon] [--repeat 5] [--json OUT]
needs: pip install numpy pyarrow websocket-client; chromium (apt-get install chromium)

The recordings come from the synthetic generator the other benchmarks use
(../shared/bench/gen_metrics_parquet.py: 8 rows per 1 s tick, bursty utilization), cached under
bench/.data/ as metrics-ROWS.parquet. For each: `gpumon report FILE -o FILE.html` (its wall time,
once), the page's size, then tests/py/browser.py opens it --repeat times with a fresh cache:
  load_ms     navigation start to the load event (the inline script has run: the interactive charts
              are built before the load event)
  drawn_ms    when the script finished building every chart (window.gpumonReport.drawn_ms)
  render_ms   two animation frames after the load event: laid out and painted
and once with scripts off (the static SVG page a mail client or a printer shows). Medians.
Targets: a week under 10 MB, open (render_ms) under 2 s.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "..", "shared", "bench", "gen_metrics_parquet.py")
DATA = os.path.join(ROOT, "bench", ".data")
BROWSER = os.path.join(ROOT, "tests", "py", "browser.py")
SPANS = [("1 hour", 3600), ("1 day", 86400), ("1 week", 7 * 86400)]
GPUS = 8


def recording(ticks):
    os.makedirs(DATA, exist_ok=True)
    rows = ticks * GPUS
    path = os.path.join(DATA, f"metrics-{rows}.parquet")
    if not os.path.exists(path):
        print(f"generating {path} ...", file=sys.stderr)
        subprocess.run([sys.executable, GEN, str(rows), path], check=True, stdout=subprocess.DEVNULL)
    return path, rows


def open_page(html, scripts, repeat):
    args = [sys.executable, BROWSER, html, "--repeat", str(repeat), "--width", "1280", "--height", "900"]
    if scripts:
        args.append("--scripts")
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"browser.py failed on {html}: {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def drawn(html, repeat):
    """window.gpumonReport.drawn_ms over `repeat` loads (browser.py does not read it: a tiny driver)."""
    sys.path.insert(0, os.path.dirname(BROWSER))
    import browser  # noqa: E402
    import shutil
    import tempfile
    profile = tempfile.mkdtemp(prefix="gpumon-bench-")
    proc, port = browser.start(browser.find_chromium(None), profile)
    try:
        cdp = browser.Cdp(browser.page_ws(port))
        cdp.call("Page.enable")
        cdp.call("Network.enable")
        out = []
        for i in range(repeat):
            if i:
                cdp.call("Network.clearBrowserCache")
            browser.visit(cdp, "file://" + os.path.abspath(html), 1280, 900)
            r = cdp.call("Runtime.evaluate", expression="window.gpumonReport.drawn_ms", returnByValue=True)
            out.append(r["result"]["value"])
        return out
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumon", default=os.path.join(ROOT, "target", "release", "gpumon"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args()
    if not os.path.exists(a.gpumon):
        sys.exit(f"{a.gpumon} not found: cargo build --release, or give --gpumon")
    results = []
    for name, ticks in SPANS:
        src, rows = recording(ticks)
        html = os.path.join(DATA, f"report-{rows}.html")
        t0 = time.perf_counter()
        subprocess.run([a.gpumon, "report", "-q", src, "-o", html], check=True)
        wall = time.perf_counter() - t0
        on = open_page(html, True, a.repeat)
        off = open_page(html, False, a.repeat)
        check = on["dom"]
        d = drawn(html, a.repeat)
        r = {
            "span": name, "rows": rows, "gpus": GPUS, "interval_s": 1,
            "html_bytes": os.path.getsize(html), "report_wall_s": round(wall, 2),
            "interactive_charts": check["interactive_charts"], "static_charts": check["chart_count"],
            "errors": on["errors"], "external_requests": on["external_requests"],
            "load_ms": on["load_ms"], "load_ms_all": on["load_ms_all"],
            "drawn_ms": statistics.median(d), "drawn_ms_all": d,
            "render_ms": on["render_ms"], "render_ms_all": on["render_ms_all"],
            "scripts_off": {"load_ms": off["load_ms"], "render_ms": off["render_ms"]},
        }
        results.append(r)
        print(f"{name:7} {rows:>9} rows  {r['html_bytes'] / 1e6:5.2f} MB  load {r['load_ms']:.0f} ms  "
              f"drawn {r['drawn_ms']:.0f} ms  rendered {r['render_ms']:.0f} ms  "
              f"(scripts off: rendered {off['render_ms']:.0f} ms)", file=sys.stderr)
    out = {
        "bench": "report_open", "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "gpumon": a.gpumon, "load_avg": os.getloadavg(), "cpus": os.cpu_count(),
        "targets": {"week_bytes_max": 10_000_000, "open_ms_max": 2000}, "results": results,
    }
    text = json.dumps(out, indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
