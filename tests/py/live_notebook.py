"""gpumon.live() in a real Jupyter kernel: a chart that the recording redraws in its cell.

    PYTHONPATH=python GPUMON_BIN=... GPUMON_NVML_LIB=... FAKE_NVML_SCENARIO=... VENV/bin/python tests/py/live_notebook.py WORKDIR

Needs nbclient, nbformat and ipykernel (the kernel is this python's `python3`). Three cells: start a
recording and show `gpumon.live()`, mark two phases while it runs, stop it. The first cell's output
must then be the chart as the background updates left it (nbclient applies update_display_data by
display id, as Jupyter does): the last phase, both GPUs' values, and that the run ended.
Prints the final HTML's length and the phase changes it marks, as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

CELLS = [
    'import gpumon, time\nrec = gpumon.recording("nb.parquet", interval=0.2, follow=False, show=False).start()\n'
    "gpumon.live(every=0.1)",
    'gpumon.mark("bs=32")\ntime.sleep(1.5)\ngpumon.mark("bs=64")\ntime.sleep(1.5)',
    "rec.stop()\ntime.sleep(1.0)",
]


def main() -> None:
    work = Path(sys.argv[1])
    work.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    nbformat.write(nb, work / "live.ipynb")
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    outs = [o for o in nb.cells[0].outputs if o.get("output_type") == "display_data"]
    assert len(outs) == 1, nb.cells[0].outputs
    page = outs[0]["data"]["text/html"]
    for want in ["gpumon nb.parquet</b> · ended", "phase <b>bs=64</b>", "util 55%", "util 97%", ">bs=64</text>", "<polyline"]:
        assert want in page, (want, page[:1500])
    print(json.dumps({"html_bytes": len(page), "phases": [p for p in ("bs=32", "bs=64") if f">{p}</text>" in page]}))


if __name__ == "__main__":
    main()
