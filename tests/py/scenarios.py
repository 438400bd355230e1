"""Recordings of known situations, for judging `gpumon summarize`'s findings.

usage: scenarios.py OUTDIR

Writes one input per situation (gpumon-schema Parquet, with the events file beside it where the
situation has events, or an nvidia-smi `--format=csv` log) and OUTDIR/manifest.json: per scenario
its input, extra `summarize` arguments, the findings that must be there (`expected`: rule, GPU label
or null for a host-wide one, phase with `--by phase`) and those that must not (`forbidden`: rule and
GPU, any severity; GPU "*" is any GPU, null the host-wide one). Any other warning or error is a
false alarm too; the Rust test (tests/cli/diagnosis.rs) counts them.

The hosts are 8x H100-class (81559 MiB), 1 s rows, host and job columns as `gpumon record` writes
them; values are drawn from a seeded generator so every run writes the same files.
"""
import json
import math
import os
import random
import sys
from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pyarrow.parquet as pq

TOTAL = 81559
START = datetime(2026, 3, 2, 9, 0, 0, tzinfo=timezone.utc)
NAME = "NVIDIA H100 80GB HBM3"

# Column types exactly as `gpumon record` writes them (a recording with the fake NVML).
TYPES = {
    "timestamp": pa.timestamp("us", tz="UTC"),
    "host": pa.string(),
    "index": pa.int32(),
    "uuid": pa.string(),
    "name": pa.string(),
    "pci.bus_id": pa.string(),
    "utilization.gpu": pa.int16(),
    "utilization.memory": pa.int16(),
    "memory.used": pa.int32(),
    "memory.total": pa.int32(),
    "memory.free": pa.int32(),
    "temperature.gpu": pa.int32(),
    "power.draw": pa.float64(),
    "power.limit": pa.float64(),
    "energy.total": pa.float64(),
    "clocks.sm": pa.int32(),
    "clocks.mem": pa.int32(),
    "pstate": pa.string(),
    "clocks_event_reasons.active": pa.int64(),
    "ecc.errors.uncorrected.volatile.total": pa.int64(),
    "ecc.errors.corrected.volatile.total": pa.int64(),
    "pcie.link.width.current": pa.int32(),
    "pcie.link.width.max": pa.int32(),
    "power.default_limit": pa.float64(),
    "clocks.max.sm": pa.int32(),
    "pcie.link.gen.current": pa.int32(),
    "pcie.link.gen.max": pa.int32(),
    "sm.active": pa.float64(),
    "sm.occupancy": pa.float64(),
    "tensor.active": pa.float64(),
    "dram.active": pa.float64(),
    "fp16.active": pa.float64(),
    "fp32.active": pa.float64(),
    "fp64.active": pa.float64(),
    "pcie.tx.bytes": pa.float64(),
    "pcie.rx.bytes": pa.float64(),
    "xid.events": pa.int32(),
    "remapped_rows.correctable": pa.int32(),
    "remapped_rows.uncorrectable": pa.int32(),
    "remapped_rows.pending": pa.bool_(),
    "remapped_rows.failure": pa.bool_(),
    "retired_pages.single_bit_ecc.count": pa.int32(),
    "retired_pages.double_bit.count": pa.int32(),
    "retired_pages.pending": pa.bool_(),
    "cpu.util": pa.float64(),
    "cpu.util.max_core": pa.float64(),
    "load.1": pa.float64(),
    "mem.total": pa.int32(),
    "mem.used": pa.int32(),
    "mem.available": pa.int32(),
    "swap.used": pa.int32(),
    "job.cpu": pa.float64(),
    "job.rss": pa.int32(),
    "job.procs": pa.int32(),
    "job.threads": pa.int32(),
    "job.read": pa.float64(),
    "job.write": pa.float64(),
    "job.gpu_memory": pa.int32(),
    "phase": pa.string(),
    "missed": pa.int32(),
}
GPM = ["sm.active", "sm.occupancy", "tensor.active", "dram.active", "fp16.active", "fp32.active", "fp64.active", "pcie.tx.bytes", "pcie.rx.bytes"]


def training_gpu(r, cap_share=0.5):
    """A healthy data-parallel rank at full load: 97-99 % util, power cap part of the time."""
    capped = r.random() < cap_share
    used = 62000 + r.randint(-300, 300)
    return {
        "utilization.gpu": r.randint(97, 99),
        "utilization.memory": r.randint(40, 50),
        "memory.used": used,
        "temperature.gpu": r.randint(62, 72),
        "power.draw": round(r.uniform(690, 700) if capped else r.uniform(620, 690), 2),
        "clocks.sm": r.randint(1890, 1950) if capped else 1980,
        "clocks_event_reasons.active": 0x4 if capped else 0,
        "sm.active": r.uniform(70, 80),
        "sm.occupancy": r.uniform(30, 40),
        "tensor.active": r.uniform(40, 50),
        "dram.active": r.uniform(40, 50),
        "fp16.active": r.uniform(25, 35),
        "fp32.active": r.uniform(3, 6),
        "fp64.active": 0.0,
        "pcie.tx.bytes": r.uniform(150, 250),
        "pcie.rx.bytes": r.uniform(250, 350),
    }


def idle_gpu(r, used=2):
    return {
        "utilization.gpu": 0,
        "utilization.memory": 0,
        "memory.used": used,
        "temperature.gpu": r.randint(30, 33),
        "power.draw": round(r.uniform(68, 72) + (50 if used > 1000 else 0), 2),
        "clocks.sm": 345 if used < 1000 else 1980,
        "clocks_event_reasons.active": 0x1,
        "sm.active": 0.0,
        "sm.occupancy": 0.0,
        "tensor.active": 0.0,
        "dram.active": 0.0,
        "fp16.active": 0.0,
        "fp32.active": 0.0,
        "fp64.active": 0.0,
        "pcie.tx.bytes": 0.0,
        "pcie.rx.bytes": 0.0,
    }


def starved_gpu(r, used=40000):
    """Waits for its input: short bursts, util ~40 %, sm.active ~30 %."""
    busy = r.random() < 0.45
    return {
        "utilization.gpu": r.randint(60, 95) if busy else r.randint(0, 20),
        "utilization.memory": r.randint(5, 25),
        "memory.used": used + r.randint(-200, 200),
        "temperature.gpu": r.randint(45, 55),
        "power.draw": round(r.uniform(250, 400) if busy else r.uniform(120, 180), 2),
        "clocks.sm": 1980,
        "clocks_event_reasons.active": 0 if busy else 0x1,
        "sm.active": r.uniform(45, 70) if busy else r.uniform(0, 10),
        "sm.occupancy": r.uniform(5, 20),
        "tensor.active": r.uniform(10, 30) if busy else 0.0,
        "dram.active": r.uniform(5, 20),
        "fp16.active": r.uniform(5, 20),
        "fp32.active": r.uniform(1, 4),
        "fp64.active": 0.0,
        "pcie.tx.bytes": r.uniform(50, 100),
        "pcie.rx.bytes": r.uniform(400, 900),
    }


def host(r, cpu=(25, 35), core=(95, 100), swap=0, mem=300000):
    return {
        "cpu.util": round(r.uniform(*cpu), 1),
        "cpu.util.max_core": round(min(100.0, r.uniform(*core)), 1),
        "load.1": round(r.uniform(10, 30), 2),
        "mem.total": 2063000,
        "mem.used": mem,
        "mem.available": 2063000 - mem,
        "swap.used": swap,
    }


def job(r, cpu=(800, 900), procs=41):
    return {
        "job.cpu": round(r.uniform(*cpu), 1),
        "job.rss": 200000 + r.randint(-1000, 1000),
        "job.procs": procs,
        "job.threads": 600,
        "job.read": r.uniform(1e7, 5e7),
        "job.write": r.uniform(0, 1e5),
    }


class Run:
    """Rows of one recording, one per GPU per tick."""

    def __init__(self, name, gpus, ticks, seed, gpm=True, with_job=True, health=False, hostname="node07"):
        self.name, self.gpus, self.ticks = name, gpus, ticks
        self.r, self.seed = random.Random(seed), seed
        self.gpm, self.with_job, self.health, self.hostname = gpm, with_job, health, hostname
        self.rows = []
        self.energy = [1.0e9 + 1e7 * g for g in range(gpus)]
        self.events = []
        self.procs = []

    def proc(self, t, g, pid, user, command, mem, job):
        """One row of the per-process table (record --processes)."""
        self.procs.append({"timestamp": START + timedelta(seconds=t), "host": self.hostname, "index": g,
                           "proc.pid": pid, "proc.user": user, "proc.command": command,
                           "proc.gpu_memory": mem, "proc.job": job})

    def add(self, t, g, gpu, host_vals, job_vals=None, lost=False, phase=None):
        ts = START + timedelta(seconds=t)
        vals = dict(gpu)
        total = vals.pop("memory.total", TOTAL)
        limit = vals.pop("power.limit", 700.0)
        name = vals.get("name", NAME)
        vals.setdefault("clocks.max.sm", 1410 if "A100" in name else 1980)
        row = {"timestamp": ts, "host": self.hostname, "index": g,
               "uuid": f"GPU-{self.seed:04x}{g:04x}-1111-2222-3333-444455556666",
               "name": vals.pop("name", NAME), "pci.bus_id": f"00000000:{0x18 + 0x10 * g:02X}:00.0"}
        if not lost:
            self.energy[g] += vals["power.draw"]
            vals.update({"memory.total": total, "memory.free": total - vals["memory.used"],
                         "power.limit": limit, "energy.total": round(self.energy[g], 1),
                         "clocks.mem": 2619, "pstate": "P0", "xid.events": 0,
                         "ecc.errors.uncorrected.volatile.total": vals.get("ecc.errors.uncorrected.volatile.total", 0),
                         "remapped_rows.correctable": vals.get("remapped_rows.correctable", 0),
                         "remapped_rows.uncorrectable": vals.get("remapped_rows.uncorrectable", 0),
                         "remapped_rows.pending": vals.get("remapped_rows.pending", False),
                         "remapped_rows.failure": vals.get("remapped_rows.failure", False)})
            if not self.gpm:
                for c in GPM:
                    vals.pop(c, None)
            row.update(vals)
        row.update(host_vals)
        if self.with_job:
            row.update(job_vals or {})
            row["job.gpu_memory"] = None if lost else (gpu.get("job.gpu_memory", max(0, gpu["memory.used"] - 500)))
        if phase is not None:
            row["phase"] = phase
        row["missed"] = 0
        self.rows.append(row)

    def columns(self):
        cols = [c for c in TYPES if any(c in row for row in self.rows)]
        if not self.gpm:
            cols = [c for c in cols if c not in GPM]
        if not self.health:
            cols = [c for c in cols if not c.startswith(("remapped_rows", "retired_pages"))]
        return cols

    def write(self, outdir):
        cols = self.columns()
        arrays = [pa.array([row.get(c) for row in self.rows], type=TYPES[c]) for c in cols]
        meta = {
            "gpumon.command": f"gpumon record -i 1 -o {self.name}.parquet" + (" -- python train.py" if self.with_job else ""),
            "gpumon.driver_version": "550.54.15",
            "gpumon.hostname": self.hostname,
            "gpumon.interval_s": "1",
            "gpumon.start": START.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "gpumon.version": "0.1.0",
        }
        if self.with_job:
            meta["gpumon.job.command"] = "python train.py"
        schema = pa.schema([pa.field(c, TYPES[c]) for c in cols], metadata=meta)
        path = os.path.join(outdir, f"{self.name}.parquet")
        pq.write_table(pa.Table.from_arrays(arrays, schema=schema), path, compression="zstd")
        if self.events:
            ev_types = [("timestamp", TYPES["timestamp"]), ("host", pa.string()), ("index", pa.int32()),
                        ("uuid", pa.string()), ("kind", pa.string()), ("code", pa.int32()), ("detail", pa.string())]
            arrays = [pa.array([e.get(c) for e in self.events], type=ty) for c, ty in ev_types]
            schema = pa.schema([pa.field(c, ty) for c, ty in ev_types], metadata=meta)
            pq.write_table(pa.Table.from_arrays(arrays, schema=schema),
                           os.path.join(outdir, f"{self.name}.events.parquet"), compression="zstd")
        if self.procs:
            p_types = [("timestamp", TYPES["timestamp"]), ("host", pa.string()), ("index", pa.int32()),
                       ("proc.pid", pa.int32()), ("proc.user", pa.string()), ("proc.command", pa.string()),
                       ("proc.gpu_memory", pa.int32()), ("proc.job", pa.bool_())]
            arrays = [pa.array([p.get(c) for p in self.procs], type=ty) for c, ty in p_types]
            schema = pa.schema([pa.field(c, ty) for c, ty in p_types], metadata=meta)
            pq.write_table(pa.Table.from_arrays(arrays, schema=schema),
                           os.path.join(outdir, f"{self.name}.procs.parquet"), compression="zstd")
        return path


def scenario(name, path, expected, forbidden=(), args=()):
    exp = [{"rule": e[0], "gpu": e[1], "phase": e[2] if len(e) > 2 else None, "severity": e[3] if len(e) > 3 else None}
           for e in expected]
    forb = [{"rule": f[0], "gpu": f[1]} for f in forbidden]
    return {"name": name, "input": os.path.basename(path), "args": list(args), "expected": exp, "forbidden": forb}


def healthy_power_cap(out):
    run = Run("healthy_power_cap", 8, 600, 1)
    for t in range(run.ticks):
        # Old pages in swap that stay put are not memory pressure.
        h, j = host(run.r, swap=3000), job(run.r)
        for g in range(8):
            run.add(t, g, training_gpu(run.r, cap_share=0.3 + 0.07 * g), h, j)
    return scenario(run.name, run.write(out), [],
                    [("power_throttling", "*"), ("input_bound", "*"), ("imbalance", None), ("straggler", "*"),
                     ("host_swap", None)])


def input_bound_wrapped(out):
    run = Run("input_bound_wrapped", 4, 600, 2)
    for t in range(run.ticks):
        h, j = host(run.r, cpu=(8, 12), core=(98, 100)), job(run.r, cpu=(97, 100), procs=1)
        for g in range(4):
            run.add(t, g, starved_gpu(run.r), h, j)
    return scenario(run.name, run.write(out), [("input_bound", str(g)) for g in range(4)])


def input_bound_nohup(out):
    run = Run("input_bound_nohup", 2, 600, 3, gpm=False, with_job=False)
    for t in range(run.ticks):
        h = host(run.r, cpu=(92, 99), core=(99, 100))
        for g in range(2):
            run.add(t, g, starved_gpu(run.r, used=int(0.6 * TOTAL)), h)
    return scenario(run.name, run.write(out), [("input_bound", "0"), ("input_bound", "1")])


def unused_beside_tenant(out):
    run = Run("unused_beside_tenant", 4, 600, 4, with_job=False)
    for t in range(run.ticks):
        h = host(run.r, cpu=(95, 100), core=(100, 100))
        for g in range(4):
            run.add(t, g, idle_gpu(run.r, used=1 if g else 4), h)
    return scenario(run.name, run.write(out), [], [("input_bound", "*"), ("idle_allocated", "*")])


def busy_pegged_memory_bound(out):
    run = Run("busy_pegged_memory_bound", 2, 600, 5)
    for t in range(run.ticks):
        h, j = host(run.r, core=(100, 100)), job(run.r, cpu=(100, 130), procs=3)
        for g in range(2):
            gpu = training_gpu(run.r, cap_share=0.0)
            gpu.update({"sm.active": run.r.uniform(40, 48), "dram.active": run.r.uniform(82, 90),
                        "tensor.active": run.r.uniform(15, 25)})
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("memory_bound", "0"), ("memory_bound", "1")],
                    [("input_bound", "*")])


def forgotten_notebook(out):
    run = Run("forgotten_notebook", 8, 900, 6, with_job=False)
    for t in range(run.ticks):
        h = host(run.r, cpu=(30, 40), core=(100, 100))
        for g in range(8):
            if g == 5:
                gpu = starved_gpu(run.r, used=70000) if t < 60 else idle_gpu(run.r, used=70000 + run.r.randint(0, 50))
            else:
                gpu = training_gpu(run.r, cap_share=0.0)
            run.add(t, g, gpu, h)
    return scenario(run.name, run.write(out), [("idle_allocated", "5", None, "warning")],
                    [("input_bound", "*"), ("imbalance", None), ("unused_gpu", "5")])


def thermal_straggler(out):
    run = Run("thermal_straggler", 8, 600, 7)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(8):
            gpu = training_gpu(run.r, cap_share=0.3)
            if g == 3:
                hot = run.r.random() < 0.4
                gpu.update({"temperature.gpu": run.r.randint(88, 90), "clocks.sm": run.r.randint(1550, 1620),
                            "clocks_event_reasons.active": 0x40 if hot else 0, "power.draw": round(run.r.uniform(540, 580), 2)})
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("thermal_throttling", "3"), ("straggler", "3")],
                    [("thermal_throttling", "0"), ("thermal_throttling", "1"), ("thermal_throttling", "2"),
                     ("thermal_throttling", "4"), ("straggler", "0"), ("imbalance", None)])


def straggler_partial(out):
    """A straggler whose clock is low only while throttled, beside siblings whose power cap takes 300 MHz
    off their clock in 30-80 % of their samples."""
    run = Run("straggler_partial", 8, 600, 16)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(8):
            gpu = training_gpu(run.r, cap_share=0.3 + 0.07 * g)
            if gpu["clocks_event_reasons.active"]:
                gpu["clocks.sm"] = run.r.randint(1650, 1700)
            if g == 6:
                hot = run.r.random() < 0.4
                gpu.update({"temperature.gpu": run.r.randint(86, 90), "clocks_event_reasons.active": 0x40 if hot else 0,
                            "clocks.sm": run.r.randint(1550, 1620) if hot else 1980})
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("thermal_throttling", "6"), ("straggler", "6")],
                    [("straggler", "0"), ("straggler", "7"), ("thermal_throttling", "0"), ("imbalance", None)])


def input_bound_host_cpu_only(out):
    """Beside nohup, with the host's CPU but not its busiest core recorded."""
    run = Run("input_bound_host_cpu_only", 1, 600, 17, gpm=False, with_job=False)
    for t in range(run.ticks):
        h = host(run.r, cpu=(96, 100))
        del h["cpu.util.max_core"]
        run.add(t, 0, starved_gpu(run.r, used=int(0.6 * TOTAL)), h)
    return scenario(run.name, run.write(out), [("input_bound", "0")])


def xid_single_gpu(out):
    """An Xid 79 recorded without a GPU on a one-GPU host whose rows go empty right after."""
    run = Run("xid_single_gpu", 1, 600, 18, health=True)
    for t in range(run.ticks):
        run.add(t, 0, training_gpu(run.r, cap_share=0.0), host(run.r), job(run.r), lost=t >= 500)
    run.events = [{"timestamp": START + timedelta(seconds=499.5), "host": run.hostname, "index": None, "uuid": None,
                   "kind": "xid", "code": 79, "detail": None}]
    return scenario(run.name, run.write(out), [("xid", "0", None, "error"), ("gpu_lost", "0", None, "error")])


def gpu_lost(out):
    run = Run("gpu_lost", 4, 600, 8, health=True)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(4):
            run.add(t, g, training_gpu(run.r, cap_share=0.0), h, j, lost=(g == 2 and t >= 360))
    return scenario(run.name, run.write(out), [("gpu_lost", "2", None, "error")],
                    [("gpu_lost", "0"), ("imbalance", None)])


def memory_health(out):
    run = Run("memory_health", 5, 600, 9, health=True)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(5):
            gpu = training_gpu(run.r, cap_share=0.0)
            gpu["remapped_rows.correctable"] = 2
            if g == 0 and t >= 200:
                gpu["remapped_rows.pending"] = True
                gpu["remapped_rows.uncorrectable"] = 1
            if g == 1 and t >= 300:
                gpu["remapped_rows.failure"] = True
                gpu["remapped_rows.uncorrectable"] = 8
            if g == 2:
                gpu["ecc.errors.uncorrected.volatile.total"] = t // 150
            run.add(t, g, gpu, h, j)
    # GPU 3: an older board with retired pages (no row remapping).
    for row in run.rows:
        if row["index"] == 3:
            row["retired_pages.single_bit_ecc.count"] = 1
            row["retired_pages.double_bit.count"] = 1 if row["timestamp"] >= START + timedelta(seconds=250) else 0
            row["retired_pages.pending"] = row["timestamp"] >= START + timedelta(seconds=250)
    sev = [("memory_health", "0", None, "warning"), ("memory_health", "1", None, "error"),
           ("memory_health", "2", None, "warning"), ("memory_health", "3", None, "warning")]
    return scenario(run.name, run.write(out), sev, [("memory_health", "4")])


def xid_lost(out):
    run = Run("xid_lost", 2, 600, 10, health=True)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(2):
            run.add(t, g, training_gpu(run.r, cap_share=0.0), h, j, lost=(g == 1 and t >= 400))
    base = {"host": run.hostname, "kind": "xid", "detail": None}
    run.events = [
        dict(base, timestamp=START + timedelta(seconds=120.3), index=0, uuid=run.rows[0]["uuid"], code=48),
        # The same GPU's Xid 48 named by its uuid only.
        dict(base, timestamp=START + timedelta(seconds=130.3), index=None, uuid=run.rows[0]["uuid"], code=48),
        # A lost GPU's event as recorded before its handle was mapped: no index, empty uuid.
        dict(base, timestamp=START + timedelta(seconds=399.6), index=None, uuid="", code=79),
    ]
    return scenario(run.name, run.write(out), [("xid", "0", None, "error"), ("xid", "1", None, "error"),
                                               ("gpu_lost", "1", None, "error")])


def oom_risk(out):
    run = Run("oom_risk", 2, 600, 11)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(2):
            gpu = training_gpu(run.r, cap_share=0.0)
            if g == 0:
                gpu["memory.used"] = 76000 + (t % 50) * 80  # peaks at 79920 MiB, 98 %
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("oom_risk", "0")], [("oom_risk", "1")])


def mixed_gpus(out):
    """A workstation with an H100 at half its memory and a smaller board near its own total."""
    run = Run("mixed_gpus", 2, 600, 19)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        big = training_gpu(run.r, cap_share=0.0)
        big["memory.used"] = 40000
        small = training_gpu(run.r, cap_share=0.0)
        small.update({"name": "NVIDIA A10", "memory.total": 23028, "memory.used": 21500 + (t % 20) * 40,
                      "clocks.sm": 1695, "power.draw": round(run.r.uniform(140, 150), 2)})
        run.add(t, 0, big, h, j)
        run.add(t, 1, small, h, j)
    return scenario(run.name, run.write(out), [("oom_risk", "1")],
                    [("oom_risk", "0"), ("straggler", "*"), ("hot_gpu", "*")])


def no_tensor_cores(out):
    run = Run("no_tensor_cores", 1, 600, 12)
    for t in range(run.ticks):
        gpu = training_gpu(run.r, cap_share=0.0)
        gpu.update({"sm.active": run.r.uniform(80, 90), "tensor.active": 0.0, "fp32.active": run.r.uniform(60, 75),
                    "fp16.active": 0.0})
        run.add(t, 0, gpu, host(run.r), job(run.r, cpu=(100, 110), procs=2))
    return scenario(run.name, run.write(out), [("no_tensor_cores", "0")])


def memory_bound(out):
    run = Run("memory_bound", 1, 600, 13)
    for t in range(run.ticks):
        gpu = training_gpu(run.r, cap_share=0.0)
        gpu.update({"sm.active": run.r.uniform(50, 60), "dram.active": run.r.uniform(78, 92),
                    "tensor.active": 0.0, "fp16.active": 0.0, "fp32.active": run.r.uniform(5, 10)})
        run.add(t, 0, gpu, host(run.r, core=(40, 70)), job(run.r, cpu=(60, 90), procs=2))
    return scenario(run.name, run.write(out), [("memory_bound", "0")], [("input_bound", "*"), ("no_tensor_cores", "0")])


def host_swap(out):
    run = Run("host_swap", 2, 600, 14)
    for t in range(run.ticks):
        h, j = host(run.r, swap=t * 15, mem=1900000 + t * 200), job(run.r)
        for g in range(2):
            run.add(t, g, training_gpu(run.r, cap_share=0.0), h, j)
    return scenario(run.name, run.write(out), [("host_swap", None)])


def phased(out):
    run = Run("phased", 2, 800, 15)
    for t in range(run.ticks):
        phase = "bs=32" if t < 400 else "bs=128"
        if phase == "bs=32":
            h, j = host(run.r), job(run.r, cpu=(150, 200), procs=9)
        else:
            h, j = host(run.r, cpu=(10, 14), core=(99, 100)), job(run.r, cpu=(97, 100), procs=1)
        for g in range(2):
            gpu = training_gpu(run.r, cap_share=0.0) if phase == "bs=32" else starved_gpu(run.r, used=70000)
            run.add(t, g, gpu, h, j, phase=phase)
    return scenario(run.name, run.write(out), [("input_bound", "0", "bs=128"), ("input_bound", "1", "bs=128")],
                    [], args=["--by", "phase"])


# nvidia-smi logs: `--query-gpu=timestamp,index,name,utilization.gpu,memory.used,memory.total,temperature.gpu,
# power.draw,clocks.sm,clocks_throttle_reasons.active --format=csv -l 1`.
SMI_HEADER = ("timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], temperature.gpu, "
              "power.draw [W], clocks.current.sm [MHz], clocks_throttle_reasons.active")


def smi_log(out, name, gpus, ticks, seed, gpu_fn, step=1, gpu_name=NAME):
    r = random.Random(seed)
    lines = [SMI_HEADER]
    for t in range(ticks):
        for g in range(gpus):
            v = gpu_fn(r, t, g)
            ts = smi_ts(t, g, step)
            lines.append(f"{ts}, {g}, {gpu_name}, {v['utilization.gpu']} %, {v['memory.used']} MiB, {v.get('memory.total', TOTAL)} MiB, "
                         f"{v['temperature.gpu']}, {v['power.draw']:.2f} W, {v['clocks.sm']} MHz, "
                         f"0x{v['clocks_event_reasons.active']:016x}")
    path = os.path.join(out, f"{name}.csv")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def smi_thermal_reason_columns(out):
    """nvidia-smi's per-reason columns (`Active` / `Not Active`) instead of the hex bitmask."""
    r = random.Random(25)
    reasons = ["gpu_idle", "sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown"]
    bits = [0x1, 0x4, 0x8, 0x20, 0x40]
    lines = ["timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], temperature.gpu, "
             "power.draw [W], clocks.sm [MHz], " + ", ".join(f"clocks_event_reasons.{x}" for x in reasons)]
    local = datetime(2026, 3, 2, 10, 0, 0)
    for t in range(600):
        for g in range(4):
            v = training_gpu(r, cap_share=0.4)
            if g == 2:
                v.update({"temperature.gpu": r.randint(88, 90), "clocks.sm": r.randint(1550, 1620),
                          "clocks_event_reasons.active": 0x40 if r.random() < 0.4 else 0})
            ts = (local + timedelta(seconds=t, milliseconds=3 * g + 11)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
            flags = ", ".join("Active" if v["clocks_event_reasons.active"] & b else "Not Active" for b in bits)
            lines.append(f"{ts}, {g}, {NAME}, {v['utilization.gpu']} %, {v['memory.used']} MiB, {TOTAL} MiB, "
                         f"{v['temperature.gpu']}, {v['power.draw']:.2f} W, {v['clocks.sm']} MHz, {flags}")
    path = os.path.join(out, "smi_thermal_reason_columns.csv")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return scenario("smi_thermal_reason_columns", path, [("thermal_throttling", "2"), ("straggler", "2")],
                    [("thermal_throttling", "0"), ("power_throttling", "*"), ("imbalance", None)])


def smi_gpu_lost(out):
    """GPU 1 falls off the bus: nvidia-smi prints `[GPU is lost]` in its cells from then on."""
    path = smi_log(out, "smi_gpu_lost", 4, 600, 26, lambda r, t, g: training_gpu(r, cap_share=0.0))
    with open(path) as f:
        lines = f.read().splitlines()
    for k in range(1 + 4 * 300 + 1, len(lines), 4):
        cells = lines[k].split(", ")
        lines[k] = ", ".join(cells[:3] + ["[GPU is lost]"] * (len(cells) - 3))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return scenario("smi_gpu_lost", path, [("gpu_lost", "1", None, "error")], [("gpu_lost", "0"), ("imbalance", None)])


def smi_healthy(out):
    path = smi_log(out, "smi_healthy", 8, 600, 21, lambda r, t, g: training_gpu(r, cap_share=0.3 + 0.07 * g))
    return scenario("smi_healthy", path, [], [("power_throttling", "*"), ("imbalance", None), ("straggler", "*")])


def smi_thermal(out):
    def gpu(r, t, g):
        v = training_gpu(r, cap_share=0.3)
        if g == 6:
            v.update({"temperature.gpu": r.randint(88, 90), "clocks.sm": r.randint(1550, 1620),
                      "clocks_event_reasons.active": 0x40 if r.random() < 0.4 else 0})
        return v
    path = smi_log(out, "smi_thermal", 8, 600, 22, gpu)
    return scenario("smi_thermal", path, [("thermal_throttling", "6"), ("straggler", "6")],
                    [("thermal_throttling", "0"), ("straggler", "0"), ("imbalance", None)])


def smi_idle_70gb(out):
    # 4 hours at 15 s: GPU 1 holds 70 GB and does nothing after its first 10 minutes.
    def gpu(r, t, g):
        if g == 1 and t >= 40:
            return idle_gpu(r, used=70000)
        return training_gpu(r, cap_share=0.0)
    r = random.Random(23)
    lines = [SMI_HEADER]
    local = datetime(2026, 3, 2, 10, 0, 0)
    for t in range(960):
        for g in range(2):
            v = gpu(r, t, g)
            ts = (local + timedelta(seconds=15 * t, milliseconds=3 * g + 11)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
            lines.append(f"{ts}, {g}, {NAME}, {v['utilization.gpu']} %, {v['memory.used']} MiB, {TOTAL} MiB, "
                         f"{v['temperature.gpu']}, {v['power.draw']:.2f} W, {v['clocks.sm']} MHz, "
                         f"0x{v['clocks_event_reasons.active']:016x}")
    path = os.path.join(out, "smi_idle_70gb.csv")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return scenario("smi_idle_70gb", path, [("idle_allocated", "1")], [("unused_gpu", "1"), ("imbalance", None)])


def smi_near_oom(out):
    def gpu(r, t, g):
        v = training_gpu(r, cap_share=0.0)
        v["memory.used"] = 78500 + r.randint(0, 1200)
        return v
    path = smi_log(out, "smi_near_oom", 1, 600, 24, gpu)
    return scenario("smi_near_oom", path, [("oom_risk", "0")])


# Situations that cost the most GPU-hours, and healthy runs that look unusual.

def hung_gpu(r, used=62000):
    """A rank stuck in a collective: NCCL's kernel spins (utilization.gpu 100 %) on a few SMs at about
    the board's idle draw, its memory held."""
    return {
        "utilization.gpu": 100,
        "utilization.memory": 0,
        "memory.used": used + r.randint(-300, 300),
        "temperature.gpu": r.randint(38, 42),
        "power.draw": round(r.uniform(95, 115), 2),
        "clocks.sm": 1980,
        "clocks_event_reasons.active": 0,
        "sm.active": r.uniform(0.3, 1.2),
        "sm.occupancy": r.uniform(0.1, 0.5),
        "tensor.active": 0.0,
        "dram.active": r.uniform(0.0, 0.5),
        "fp16.active": 0.0,
        "fp32.active": 0.0,
        "fp64.active": 0.0,
        "pcie.tx.bytes": r.uniform(0, 5),
        "pcie.rx.bytes": r.uniform(0, 5),
    }


def hang_nccl(out):
    """Four ranks train for 15 minutes, then hang in a collective for 45 (the job still alive): mean
    utilization.gpu stays at 99 % while mean sm.active falls below 30 %, which sm_idle_under_busy would
    read as small kernels."""
    run = Run("hang_nccl", 4, 3600, 30)
    for t in range(run.ticks):
        h, j = host(run.r, core=(40, 70)), job(run.r, cpu=(380, 400) if t >= 900 else (800, 900))
        for g in range(4):
            run.add(t, g, hung_gpu(run.r) if t >= 900 else training_gpu(run.r, cap_share=0.2), h, j)
    return scenario(run.name, run.write(out), [("hang", str(g), None, "error") for g in range(4)],
                    [("sm_idle_under_busy", "*"), ("batch_headroom", "*"), ("imbalance", None)])


def launch_bound(out):
    """Small kernels all the time: utilization.gpu 98 % with few SMs busy, at a working power draw. Not a hang."""
    run = Run("launch_bound", 2, 900, 31)
    for t in range(run.ticks):
        h, j = host(run.r, core=(60, 80)), job(run.r, cpu=(100, 110), procs=2)
        for g in range(2):
            gpu = training_gpu(run.r, cap_share=0.0)
            gpu.update({"sm.active": run.r.uniform(10, 20), "tensor.active": run.r.uniform(3, 8),
                        "dram.active": run.r.uniform(5, 15), "power.draw": round(run.r.uniform(230, 300), 2)})
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("sm_idle_under_busy", "0"), ("sm_idle_under_busy", "1")],
                    [("hang", "*")])


def smi_hang(out):
    """nvidia-smi every 15 s on 8 GPUs: 3 h of training, then 40 min of 100 % utilization at idle power.
    The log has no power.limit and no GPM: idle power is judged from the run's own highest draw."""
    def gpu(r, t, g):
        # The first sample: kernels launched, the board not yet drawing (a stray sample, not a hang).
        return hung_gpu(r) if t >= 720 or t == 0 else training_gpu(r, cap_share=0.3)
    path = smi_log(out, "smi_hang", 8, 880, 32, gpu, step=15)
    return scenario("smi_hang", path, [("hang", str(g), None, "error") for g in range(8)], [("imbalance", None)])


def inference_waves(out):
    """An inference server: utilization in waves (mean ~30 %), its model held all the time. Healthy."""
    run = Run("inference_waves", 2, 1500, 33)
    for t in range(run.ticks):
        h, j = host(run.r, core=(30, 60)), job(run.r, cpu=(40, 80), procs=4)
        for g in range(2):
            load = max(0.0, math.sin(2 * math.pi * (t + 90 * g) / 300.0))
            # Between waves no request comes: the GPU sits at 0 % for minutes, every 5 minutes.
            util = min(100, int(90 * load + run.r.randint(0, 8))) if load > 0 else 0
            gpu = training_gpu(run.r, cap_share=0.0)
            gpu.update({"utilization.gpu": util, "memory.used": 41000 + run.r.randint(-100, 100),
                        "power.draw": round(120 + 4.5 * util + run.r.uniform(-10, 10), 2),
                        "sm.active": util * 0.7, "tensor.active": util * 0.3, "dram.active": util * 0.3,
                        "temperature.gpu": 40 + util // 4})
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [],
                    [("hang", "*"), ("low_utilization", "*"), ("idle_allocated", "*"), ("hot_gpu", "*"),
                     ("imbalance", None), ("idle_stretches", "*")])


def short_run(out):
    """A 90-second run. Healthy."""
    run = Run("short_run", 2, 90, 34)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(2):
            run.add(t, g, training_gpu(run.r, cap_share=0.0) if t >= 10 else idle_gpu(run.r, used=3000), h, j)
    return scenario(run.name, run.write(out), [], [("hang", "*"), ("low_utilization", "*"), ("host_memory", None)])


def a100_node(out):
    """4x A100 40 GB (400 W, 1410 MHz) at full load, a few degrees apart as boards are. Healthy."""
    run = Run("a100_node", 4, 900, 35)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(4):
            gpu = training_gpu(run.r, cap_share=0.0)
            capped = run.r.random() < 0.4
            gpu.update({"name": "NVIDIA A100-SXM4-40GB", "memory.total": 40960, "power.limit": 400.0,
                        "memory.used": 36500 + run.r.randint(-200, 200),
                        "power.draw": round(run.r.uniform(385, 400) if capped else run.r.uniform(300, 385), 2),
                        "clocks.sm": 1410 if not capped else run.r.randint(1300, 1410),
                        "clocks_event_reasons.active": 0x4 if capped else 0,
                        "temperature.gpu": run.r.randint(58, 66) + 2 * g})
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [],
                    [("hang", "*"), ("hot_gpu", "*"), ("straggler", "*"), ("power_throttling", "*"),
                     ("imbalance", None), ("low_utilization", "*")])


def eval_phases(out):
    """Training with evaluation every 10 minutes: 2 minutes at lower utilization and power. Healthy."""
    run = Run("eval_phases", 4, 2400, 36)
    for t in range(run.ticks):
        ev = (t % 600) >= 480
        h, j = host(run.r), job(run.r)
        for g in range(4):
            gpu = training_gpu(run.r, cap_share=0.2)
            if ev:
                gpu.update({"utilization.gpu": run.r.randint(35, 60), "power.draw": round(run.r.uniform(220, 320), 2),
                            "sm.active": run.r.uniform(25, 40), "tensor.active": run.r.uniform(10, 20),
                            "clocks_event_reasons.active": 0})
            run.add(t, g, gpu, h, j, phase="eval" if ev else "train")
    return scenario(run.name, run.write(out), [],
                    [("hang", "*"), ("low_utilization", "*"), ("imbalance", None), ("hot_gpu", "*"),
                     ("idle_stretches", "*")])


def low_util_parquet(out):
    """A GPU that does almost nothing for 40 minutes with a model held (utilization 3-12 %)."""
    run = Run("low_util_parquet", 1, 2400, 37)
    for t in range(run.ticks):
        gpu = training_gpu(run.r, cap_share=0.0)
        util = run.r.randint(3, 12)
        gpu.update({"utilization.gpu": util, "memory.used": 20000, "power.draw": round(90 + 3 * util, 2),
                    "sm.active": util * 0.6, "tensor.active": util * 0.2, "dram.active": util * 0.2})
        run.add(t, 0, gpu, host(run.r, core=(20, 40)), job(run.r, cpu=(20, 40), procs=1))
    return scenario(run.name, run.write(out), [("low_utilization", "0", None, "info")],
                    [("idle_allocated", "0"), ("unused_gpu", "0"), ("hang", "0")])


def smi_low_util(out):
    """2.5 h of an H200 at 1 % mean utilization, logged every 10 s with utilization and power only."""
    r = random.Random(38)
    lines = ["timestamp, name, utilization.gpu [%], power.draw [W]"]
    local = datetime(2026, 3, 2, 10, 0, 0)
    for t in range(900):
        util = r.randint(20, 40) if r.random() < 0.03 else 0
        ts = (local + timedelta(seconds=10 * t, milliseconds=7)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        lines.append(f"{ts}, NVIDIA H200, {util} %, {80 + 3 * util + r.uniform(0, 5):.2f} W")
    path = os.path.join(out, "smi_low_util.csv")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return scenario("smi_low_util", path, [("low_utilization", "0", None, "info")], [("hang", "0")])


def host_memory_noswap(out):
    """Host RAM at 97 % for 15 of 20 minutes on a host without swap (host_swap cannot fire)."""
    run = Run("host_memory_noswap", 2, 1200, 39)
    for t in range(run.ticks):
        mem = 1200000 + t * 2000 if t < 300 else 2005000 + run.r.randint(-2000, 2000)
        h, j = host(run.r, mem=mem), job(run.r)
        for g in range(2):
            run.add(t, g, training_gpu(run.r, cap_share=0.0), h, j)
    return scenario(run.name, run.write(out), [("host_memory", None)], [("host_swap", None)])


def hot_gpu(out):
    """8 GPUs under the same load; GPU 4's fan is failing: 13 C above its siblings, no throttle yet."""
    run = Run("hot_gpu", 8, 900, 40)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(8):
            gpu = training_gpu(run.r, cap_share=0.2)
            if g == 4:
                gpu["temperature.gpu"] += 13
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("hot_gpu", "4")],
                    [("hot_gpu", "0"), ("thermal_throttling", "*"), ("straggler", "*"), ("imbalance", None)])


def smi_hot_gpu(out):
    def gpu(r, t, g):
        v = training_gpu(r, cap_share=0.2)
        if g == 2:
            v["temperature.gpu"] += 12
        return v
    path = smi_log(out, "smi_hot_gpu", 4, 900, 41, gpu)
    return scenario("smi_hot_gpu", path, [("hot_gpu", "2")], [("hot_gpu", "0"), ("thermal_throttling", "*")])


def smi_a100_node(out):
    """The 4x A100 40 GB node at full load as an nvidia-smi log (no power.limit column). Healthy."""
    def gpu(r, t, g):
        v = training_gpu(r, cap_share=0.0)
        v.update({"memory.total": 40960, "memory.used": 36500 + r.randint(-200, 200),
                  "power.draw": r.uniform(300, 400), "clocks.sm": 1410, "temperature.gpu": r.randint(58, 66) + 2 * g})
        return v
    path = smi_log(out, "smi_a100_node", 4, 900, 42, gpu, gpu_name="NVIDIA A100-SXM4-40GB")
    return scenario("smi_a100_node", path, [], [("hang", "*"), ("hot_gpu", "*"), ("low_utilization", "*")])


NEW = [hang_nccl, launch_bound, smi_hang, inference_waves, short_run, a100_node, eval_phases, low_util_parquet,
       smi_low_util, host_memory_noswap, hot_gpu, smi_hot_gpu, smi_a100_node]


def memory_growth(out):
    """Every 5 s for 3 h: GPU 0's memory grows from 40 to 70 GiB in steps (a leak) and is still rising
    at the end; GPU 1 holds steady."""
    run = Run("memory_growth", 2, 2160, 43)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(2):
            gpu = training_gpu(run.r, cap_share=0.0)
            if g == 0:
                gpu["memory.used"] = 40960 + 1024 * (30 * t // run.ticks) + run.r.randint(-200, 200)
            run.add(5 * t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("memory_growth", "0")], [("memory_growth", "1"), ("oom_risk", "*")])


def smi_memory_growth(out):
    def gpu(r, t, g):
        v = training_gpu(r, cap_share=0.0)
        v["memory.used"] = 30000 + 12 * t + r.randint(-300, 300)
        return v
    path = smi_log(out, "smi_memory_growth", 1, 1440, 44, gpu, step=10)
    return scenario("smi_memory_growth", path, [("memory_growth", "0")])


def ramp_then_level(out):
    """Memory ramps up for 20 minutes as caches fill, then levels off for 100. Healthy."""
    run = Run("ramp_then_level", 2, 1440, 45)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(2):
            gpu = training_gpu(run.r, cap_share=0.0)
            gpu["memory.used"] = int(4000 + 56000 * min(1.0, t / 240)) + run.r.randint(-300, 300)
            run.add(5 * t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [], [("memory_growth", "*")])


NEW += [memory_growth, smi_memory_growth, ramp_then_level]


def checkpoint_stops(out):
    """Every 20 minutes all four ranks stop for 3 minutes while rank 0 writes a checkpoint (2 h, 2 s rows)."""
    run = Run("checkpoint_stops", 4, 3600, 46)
    for t in range(run.ticks):
        stop = (2 * t) % 1200 >= 1020
        h, j = host(run.r), job(run.r)
        for g in range(4):
            gpu = idle_gpu(run.r, used=62000) if stop else training_gpu(run.r, cap_share=0.2)
            run.add(2 * t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("idle_stretches", str(g)) for g in range(4)],
                    [("idle_allocated", "*"), ("hang", "*"), ("imbalance", None)])


def smi_eval_one_rank(out):
    """nvidia-smi every 10 s for 3 h: every 30 minutes rank 0 evaluates for 5 minutes while ranks 1-3 wait
    at 0 %."""
    def gpu(r, t, g):
        ev = (10 * t) % 1800 >= 1500
        if ev and g > 0:
            return idle_gpu(r, used=62000)
        if ev:
            v = training_gpu(r, cap_share=0.0)
            v.update({"utilization.gpu": r.randint(50, 70), "power.draw": r.uniform(300, 400)})
            return v
        return training_gpu(r, cap_share=0.2)
    path = smi_log(out, "smi_eval_one_rank", 4, 1080, 47, gpu, step=10)
    return scenario("smi_eval_one_rank", path, [("idle_stretches", str(g)) for g in (1, 2, 3)],
                    [("idle_stretches", "0"), ("idle_allocated", "*"), ("hang", "*")])


NEW += [checkpoint_stops, smi_eval_one_rank]


def smi_hot_gpu_moderate(out):
    """Four GPUs at a moderate load (utilization 55-70 %, never 80 %): GPU 1 runs 12 C above the others."""
    def gpu(r, t, g):
        v = training_gpu(r, cap_share=0.0)
        v.update({"utilization.gpu": r.randint(55, 70), "power.draw": r.uniform(350, 450),
                  "temperature.gpu": r.randint(52, 58) + (12 if g == 1 else 0)})
        return v
    path = smi_log(out, "smi_hot_gpu_moderate", 4, 900, 48, gpu)
    return scenario("smi_hot_gpu_moderate", path, [("hot_gpu", "1")], [("hot_gpu", "0"), ("imbalance", None)])


NEW += [smi_hot_gpu_moderate]


def smi_hang_small_boards(out):
    """Two nvidia-smi logs without power.limit of boards unlike an H100: an A100 40 GB whose training
    never came near its 400 W (at most 260 W) and an L4 (72 W), each hung at a few watts above its idle
    draw after an hour of training."""
    def a100(r, t, g):
        if t >= 720:
            return dict(hung_gpu(r, used=30000), **{"power.draw": r.uniform(58, 72), "memory.total": 40960})
        v = training_gpu(r, cap_share=0.0)
        v.update({"memory.total": 40960, "memory.used": 30000 + r.randint(-200, 200),
                  "power.draw": r.uniform(200, 260), "clocks.sm": 1410})
        return v

    def l4(r, t, g):
        if t < 24:
            return dict(idle_gpu(r, used=2), **{"power.draw": r.uniform(15, 17), "memory.total": 23034})
        if t >= 744:
            return dict(hung_gpu(r, used=18000), **{"power.draw": r.uniform(20, 24), "memory.total": 23034})
        v = training_gpu(r, cap_share=0.0)
        v.update({"memory.total": 23034, "memory.used": 18000 + r.randint(-100, 100),
                  "power.draw": r.uniform(55, 72), "clocks.sm": 2040})
        return v
    a = smi_log(out, "smi_hang_a100", 2, 960, 49, a100, step=5, gpu_name="NVIDIA A100-SXM4-40GB")
    b = smi_log(out, "smi_hang_l4", 1, 984, 50, l4, step=5, gpu_name="NVIDIA L4")
    return [scenario("smi_hang_a100", a, [("hang", "0", None, "error"), ("hang", "1", None, "error")]),
            scenario("smi_hang_l4", b, [("hang", "0", None, "error")])]


NEW += [smi_hang_small_boards]


def ecc_storm(out):
    """GPU 2's memory throws corrected ECC errors by the thousand (2 a second); its siblings had a few
    corrected errors long ago, which stay put."""
    run = Run("ecc_storm", 3, 1200, 51, health=True)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(3):
            gpu = training_gpu(run.r, cap_share=0.0)
            gpu["ecc.errors.corrected.volatile.total"] = 3 + (2 * t if g == 2 else 0)
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("memory_health", "2", None, "warning")],
                    [("memory_health", "0"), ("memory_health", "1")])


NEW += [ecc_storm]


def board_config(out):
    """Four GPUs training: GPU 1 capped at 500 W of its 700 W default, GPU 3's link trained at x8 of x16."""
    run = Run("board_config", 4, 900, 52)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(4):
            gpu = training_gpu(run.r, cap_share=1.0 if g == 1 else 0.2)
            gpu.update({"power.default_limit": 700.0, "pcie.link.width.max": 16,
                        "pcie.link.width.current": 8 if g == 3 else 16})
            if g == 1:
                gpu.update({"power.limit": 500.0, "power.draw": round(run.r.uniform(490, 500), 2),
                            "clocks.sm": run.r.randint(1600, 1700)})
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("power_limit_low", "1"), ("pcie_link", "3")],
                    [("power_limit_low", "0"), ("pcie_link", "0"), ("imbalance", None), ("straggler", "*")])


NEW += [board_config]


def smi_columns(out, name, header, rows):
    """An nvidia-smi log of any columns: `header` as nvidia-smi prints it, `rows` lists of cells."""
    lines = [", ".join(header)] + [", ".join(str(c) for c in row) for row in rows]
    path = os.path.join(out, f"{name}.csv")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def smi_ts(t, g=0, step=1):
    local = datetime(2026, 3, 2, 10, 0, 0)
    return (local + timedelta(seconds=step * t, milliseconds=3 * g + 11)).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]


def clocks_locked(out):
    """Four GPUs training; GPU 2's clocks locked at 1215 MHz (nvidia-smi -lgc): busy, cool, far from its
    power limit, no throttle reason, and slower than its siblings."""
    run = Run("clocks_locked", 4, 900, 61)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(4):
            gpu = training_gpu(run.r, cap_share=0.2)
            if g == 2:
                gpu.update({"clocks.sm": 1215, "clocks_event_reasons.active": 0,
                            "power.draw": round(run.r.uniform(420, 450), 2)})
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("clocks_locked", "2"), ("straggler", "2")],
                    [("clocks_locked", "0"), ("clocks_locked", "1"), ("clocks_locked", "3"), ("imbalance", None)])


def smi_clocks_locked(out):
    """An nvidia-smi log of a node whose 4 GPUs were all locked at 1100 of 1980 MHz: busy at 350 of 700 W."""
    r = random.Random(62)
    header = ["timestamp", "index", "name", "utilization.gpu [%]", "memory.used [MiB]", "memory.total [MiB]",
              "power.draw [W]", "power.limit [W]", "clocks.current.sm [MHz]", "clocks.max.sm [MHz]"]
    rows = [[smi_ts(t, g), g, NAME, f"{r.randint(95, 100)} %", f"{60000 + r.randint(-200, 200)} MiB",
             f"{TOTAL} MiB", f"{r.uniform(330, 370):.2f} W", "700.00 W", "1100 MHz", "1980 MHz"]
            for t in range(1200) for g in range(4)]
    path = smi_columns(out, "smi_clocks_locked", header, rows)
    return scenario("smi_clocks_locked", path, [("clocks_locked", str(g)) for g in range(4)],
                    [("imbalance", None), ("straggler", "*")])


def smi_t4_power_capped(out):
    """Two T4s (70 W) at their power limit: the clock well below its 1590 MHz maximum, no reason columns.
    Healthy (power, not a lock, holds the clock)."""
    r = random.Random(63)
    header = ["timestamp", "index", "name", "utilization.gpu [%]", "memory.used [MiB]", "memory.total [MiB]",
              "power.draw [W]", "power.limit [W]", "clocks.current.sm [MHz]", "clocks.max.sm [MHz]"]
    rows = [[smi_ts(t, g), g, "Tesla T4", f"{r.randint(96, 100)} %", f"{12000 + r.randint(-100, 100)} MiB",
             "15360 MiB", f"{r.uniform(66, 70.5):.2f} W", "70.00 W", f"{r.randint(900, 1100)} MHz", "1590 MHz"]
            for t in range(1200) for g in range(2)]
    path = smi_columns(out, "smi_t4_power_capped", header, rows)
    return scenario("smi_t4_power_capped", path, [], [("clocks_locked", "*"), ("straggler", "*")])


def pcie_gen(out):
    """Eight GPUs: four train after 5 idle minutes (links at gen 1 while idle, gen 5 under load) but GPU 1's
    link stays at gen 3; four stay idle at gen 1 all along (power saving, not a fault)."""
    run = Run("pcie_gen", 8, 1200, 64)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(8):
            busy = g < 4 and t >= 300
            gpu = training_gpu(run.r, cap_share=0.2) if busy else idle_gpu(run.r)
            gpu.update({"pcie.link.gen.max": 5, "pcie.link.width.max": 16, "pcie.link.width.current": 16,
                        "pcie.link.gen.current": (3 if g == 1 else 5) if busy else 1})
            if not busy:
                gpu["job.gpu_memory"] = 0
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("pcie_link", "1")] + [("unused_gpu", str(g), None, "info") for g in range(4, 8)],
                    [("pcie_link", str(g)) for g in (0, 2, 3, 4, 5, 6, 7)] + [("imbalance", None)])


def shared_gpu(out):
    """The job trains on GPUs 0-3; from the second minute another user's server runs on GPU 2 beside it.
    GPUs 4-5 carry another job alone (not the job's GPUs: not shared)."""
    run = Run("shared_gpu", 6, 900, 65)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(6):
            gpu = training_gpu(run.r, cap_share=0.2)
            if g >= 4:
                gpu["job.gpu_memory"] = 0
            run.add(t, g, gpu, h, j)
            if g < 4:
                run.proc(t, g, 4100 + g, "alice", "python train.py", 61000, True)
            else:
                run.proc(t, g, 5200 + g, "carol", "python other_train.py", 61000, False)
            if g == 2 and t >= 60:
                run.proc(t, g, 7777, "bob", "python serve.py", 9000, False)
    return scenario(run.name, run.write(out), [("shared_gpu", "2")],
                    [("shared_gpu", str(g)) for g in (0, 1, 3, 4, 5)])


def server_mostly_idle(out):
    """A model server holding 30 GB for two hours, answering a 30-second burst of requests every 10 minutes."""
    run = Run("server_mostly_idle", 1, 7200, 66, with_job=False)
    for t in range(run.ticks):
        h = host(run.r, core=(5, 20))
        gpu = idle_gpu(run.r, used=30000)
        if t % 600 < 30:
            gpu.update({"utilization.gpu": run.r.randint(50, 70), "power.draw": round(run.r.uniform(300, 400), 2),
                        "sm.active": 40.0})
        run.add(t, 0, gpu, h)
    return scenario(run.name, run.write(out), [("idle_allocated", "0", None, "warning"), ("low_utilization", "0", None, "info")],
                    [("hang", "*"), ("idle_stretches", "*")])


def smi_short_held_capture(out):
    """A 65-second capture of one GPU holding 20 GB at 0 % utilization, drawing 4-5x its idle power in
    44 % of the samples (kernels too short for the utilization sampling). Nothing to say."""
    r = random.Random(67)
    header = ["timestamp", "index", "name", "utilization.gpu [%]", "memory.used [MiB]", "memory.total [MiB]",
              "power.draw [W]"]
    rows = [[smi_ts(t), 0, NAME, "0 %", "20000 MiB", f"{TOTAL} MiB",
             f"{r.uniform(300, 360) if r.random() < 0.44 else r.uniform(68, 75):.2f} W"] for t in range(65)]
    path = smi_columns(out, "smi_short_held_capture", header, rows)
    return scenario("smi_short_held_capture", path, [], [("idle_allocated", "0"), ("unused_gpu", "0")])


def smi_late_start(out):
    """Two GPUs over two hours: GPU 0 trains all along; GPU 1 sits idle for the first hour before its job
    starts, then trains as hard. Not an imbalance (each is as busy over the time it was in use)."""
    r = random.Random(68)
    header = ["timestamp", "index", "name", "utilization.gpu [%]", "memory.used [MiB]", "memory.total [MiB]",
              "power.draw [W]"]
    rows = []
    for t in range(0, 7200, 5):
        for g in range(2):
            busy = g == 0 or t >= 3600
            rows.append([smi_ts(t, g), g, NAME, f"{r.randint(93, 99) if busy else 0} %",
                         f"{60000 if busy else 3} MiB", f"{TOTAL} MiB", f"{r.uniform(600, 690) if busy else 70:.2f} W"])
    path = smi_columns(out, "smi_late_start", header, rows)
    return scenario("smi_late_start", path, [], [("imbalance", None)])


def separate_jobs(out):
    """Two GPUs used by two jobs at different times and loads: GPU 0 at 97 % for the first hour, GPU 1 at
    50 % from minute 30 to the end of the second hour. Not one job's imbalance."""
    run = Run("separate_jobs", 2, 7200, 69, with_job=False)
    for t in range(run.ticks):
        h = host(run.r, core=(30, 50))
        for g in range(2):
            on = t < 3600 if g == 0 else t >= 1800
            gpu = training_gpu(run.r, cap_share=0.0) if on else idle_gpu(run.r)
            if on and g == 1:
                gpu.update({"utilization.gpu": run.r.randint(45, 55), "sm.active": 35.0})
            run.add(t, g, gpu, h)
    return scenario(run.name, run.write(out), [], [("imbalance", None)])


def uneven_ranks(out):
    """Four ranks of one job over the same span; rank 3 gets a third of the data: 55 % against 97 %."""
    run = Run("uneven_ranks", 4, 900, 70)
    for t in range(run.ticks):
        h, j = host(run.r), job(run.r)
        for g in range(4):
            gpu = training_gpu(run.r, cap_share=0.0)
            if g == 3:
                gpu.update({"utilization.gpu": run.r.randint(50, 60), "sm.active": 40.0})
            run.add(t, g, gpu, h, j)
    return scenario(run.name, run.write(out), [("imbalance", None)], [("straggler", "*"), ("clocks_locked", "*")])


def smi_board_config(out):
    """An nvidia-smi log with the link and power-limit columns: GPU 0 capped at 450 of its 700 W default;
    GPU 2's link stays at gen 4 under load (its siblings reach gen 5); idle at first, all at gen 1."""
    r = random.Random(71)
    header = ["timestamp", "index", "name", "utilization.gpu [%]", "memory.used [MiB]", "memory.total [MiB]",
              "power.draw [W]", "enforced.power.limit [W]", "power.default_limit [W]", "pcie.link.gen.gpucurrent",
              "pcie.link.gen.max", "pcie.link.width.current", "pcie.link.width.max"]
    rows = []
    for t in range(0, 1800, 2):
        for g in range(4):
            busy = t >= 300
            limit = 450.0 if g == 0 else 700.0
            rows.append([smi_ts(t, g), g, NAME, f"{r.randint(95, 99) if busy else 0} %",
                         f"{60000 if busy else 3} MiB", f"{TOTAL} MiB",
                         f"{r.uniform(0.85, 0.97) * limit if busy else 70:.2f} W", f"{limit:.2f} W", "700.00 W",
                         (4 if g == 2 else 5) if busy else 1, 5, 16, 16])
    path = smi_columns(out, "smi_board_config", header, rows)
    return scenario("smi_board_config", path, [("power_limit_low", "0"), ("pcie_link", "2")],
                    [("pcie_link", "0"), ("pcie_link", "1"), ("pcie_link", "3"), ("power_limit_low", "1"),
                     ("imbalance", None)])


NEW += [smi_board_config]
NEW += [clocks_locked, smi_clocks_locked, smi_t4_power_capped, pcie_gen, shared_gpu, server_mostly_idle,
        smi_short_held_capture, smi_late_start, separate_jobs, uneven_ranks]


ALL = [healthy_power_cap, input_bound_wrapped, input_bound_nohup, unused_beside_tenant, busy_pegged_memory_bound,
       forgotten_notebook, thermal_straggler, straggler_partial, input_bound_host_cpu_only, xid_single_gpu, gpu_lost, memory_health, xid_lost, oom_risk, mixed_gpus, no_tensor_cores,
       memory_bound, host_swap, phased, smi_healthy, smi_thermal, smi_thermal_reason_columns, smi_gpu_lost, smi_idle_70gb, smi_near_oom] + NEW


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    manifest = []
    for make in ALL:
        made = make(out)
        manifest.extend(made if isinstance(made, list) else [made])
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
