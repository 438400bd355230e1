"""Execute examples/jupyter/gpumon.ipynb in a real Jupyter kernel (nbclient) and check its outputs.

    python tests/py/notebook_check.py examples/jupyter/gpumon.ipynb WORKDIR GPUS

GPUS: how many GPUs the kernel's gpumon sees (0 without a driver: host rows only; the fake NVML
of tests/fake-nvml through GPUMON_NVML_LIB for more).

Run with the python of a venv that has the gpumon wheel, ipykernel, nbclient, pandas and pyarrow:
the kernel is that venv's python3. The notebook runs in WORKDIR; the executed copy is saved there
as executed.ipynb. Cells are found by their tags (version, record, summary, read, report, findings).
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def outputs(nb: nbformat.NotebookNode, tag: str) -> list:
    cells = [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"one cell tagged {tag!r} expected, found {len(cells)}"
    return cells[0].get("outputs", [])


def data(outs: list, mime: str) -> str:
    found = [
        o["data"][mime]
        for o in outs
        if o.get("output_type") in ("execute_result", "display_data") and mime in o.get("data", {})
    ]
    assert found, f"no {mime} output in {json.dumps(outs)[:500]}"
    return found[-1]


def main() -> None:
    src, work, gpus = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(src, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    nbformat.write(nb, work / "executed.ipynb")
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors

    version = data(outputs(nb, "version"), "text/plain")
    assert re.fullmatch(r"'\d+\.\d+\.\d+.*'", version), version

    # The recording cell: the summary shown as Markdown (a table of the host's statistics).
    md = data(outputs(nb, "record"), "text/markdown")
    assert "cpu.util" in md and "|" in md, md[:500]
    assert (work / "cell.parquet").is_file()

    # The summary dict (its repr): schema, times, one host with statistics, rows recorded.
    summary = data(outputs(nb, "summary"), "text/plain")
    assert "'schema': 'gpumon.summary/1'" in summary, summary
    rows = int(re.search(r"'rows': (\d+)", summary).group(1))
    ticks = rows // max(gpus, 1)
    assert ticks >= 4 and rows == ticks * max(gpus, 1), (
        f"a 3 s block at 0.5 s should give about 6 ticks, got {rows} rows"
    )
    assert f"'gpus': {gpus}," in summary, summary
    assert re.search(r"'cpu.util.mean': [0-9.]+", summary) and re.search(r"'job.rss.max': [0-9]+", summary), summary

    # The DataFrame: rows and typed columns, as pandas renders it.
    read = outputs(nb, "read")
    printed = "".join(o.get("text", "") for o in read if o.get("output_type") == "stream")
    n = int(re.search(r"(\d+) rows", printed).group(1))
    assert n == rows, f"read() gave {n} rows, the summary counted {rows}"
    table = data(read, "text/html")
    assert 'class="dataframe"' in table and "cpu.util" in table and table.count("<tr") >= n + 1, table[:500]

    # The report inline: an iframe whose srcdoc is the self-contained page with the summary JSON.
    report = data(outputs(nb, "report"), "text/html")
    assert report.startswith("<iframe"), report[:200]
    page = html.unescape(re.search(r'srcdoc="([^"]*)"', report).group(1))
    assert page.lstrip().lower().startswith("<!doctype html") and 'id="gpumon-summary"' in page, page[:300]
    assert "<svg" in page, "the report has its charts"
    if gpus:
        assert re.search(r"'start': '20\d\d-", summary), "GPU samples give the summary its start"
        assert "utilization.gpu" in md and "NVIDIA H100" in page, "GPU statistics in the summary and the report"
        assert table.count("NaN") < table.count("<tr"), "GPU rows carry values"
    assert (work / "cell.html").is_file()

    findings = data(outputs(nb, "findings"), "text/plain")
    assert findings.startswith("["), findings
    print(f"notebook ok ({gpus} GPUs): {rows} rows recorded, DataFrame {n} rows, report {len(page)} bytes inline")


if __name__ == "__main__":
    main()
