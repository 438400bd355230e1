#!/usr/bin/env python3
"""A fleet's gpumon recordings, synthetic: a hive tree `host=H/date=D/run.parquet`, or one marked file.

usage:
  fleet_tree.py tree DIR [--hosts 64] [--days 30] [--gpus 8] [--interval-s 60] [--template FILE]
                         [--null-every K] [--reset-host-gpu H:G] [--seed 1] [--job-id ID] [--slow-host H]
  fleet_tree.py marked FILE [--days 2] [--gpus 8] [--interval-s 1] [--phases 6] [--template FILE]

`tree` writes one file per host and UTC day (as `gpumon record -i 60 --rotate-every 1d -o
DIR/host={host}/date={date}/run.parquet` leaves them): 86400 / interval ticks x GPUs rows, tick-major
(all GPUs of a tick together), zstd, strings dictionary-encoded, gpumon's column names, types, units
and file metadata (`gpumon.hostname`, `gpumon.interval_s`, ...). `--template` takes the schema of a
real gpumon recording (columns this script does not fill are written null), so the tree follows
the recorder's schema as it changes. The `energy.total` counter of each GPU runs on across days (a
driver reload with `--reset-host-gpu`: that GPU's counter restarts at 0 on the host's second day);
`--null-every K` leaves `power.draw` and `energy.total` null on every K-th tick of GPU 1 from tick
K/2 on (a field NVML did not answer; never a file's first tick). `marked` writes one host's days into one file with
`--phases` marks spread evenly, the last followed by an end mark, as a recording with marks holds
them (the `phase` column, and `gpumon.marks` in the footer): a `summarize --by phase` input.
`--job-id ID` makes every host's recording one node of job ID (`gpumon.job.id`, `gpumon.job.source`
`slurm`, `gpumon.job.node` the host's number in the footer: a `summarize --by job` input), its GPUs
busy and idle together as a synchronous job's are (each with noise of its own);
`--slow-host H` runs host H's busy GPUs at 1600 MHz instead of 1980 (a straggler node).
Every value comes from numpy's generator seeded by --seed, host and day: the same arguments write
the same tree.
"""
import argparse
import datetime as dt
import json
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

MEM_TOTAL = 81559
START = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)

# gpumon's own columns (names, Arrow types, units) for the fields a recording on an NVML GPU fills.
COLUMNS = [
    ("timestamp", pa.timestamp("us", tz="UTC"), None),
    ("host", pa.string(), None),
    ("index", pa.int32(), None),
    ("uuid", pa.string(), None),
    ("name", pa.string(), None),
    ("pci.bus_id", pa.string(), None),
    ("utilization.gpu", pa.int16(), "%"),
    ("utilization.memory", pa.int16(), "%"),
    ("memory.used", pa.int32(), "MiB"),
    ("memory.total", pa.int32(), "MiB"),
    ("memory.free", pa.int32(), "MiB"),
    ("temperature.gpu", pa.int32(), "C"),
    ("power.draw", pa.float64(), "W"),
    ("power.limit", pa.float64(), "W"),
    ("energy.total", pa.float64(), "J"),
    ("clocks.sm", pa.int32(), "MHz"),
    ("clocks.mem", pa.int32(), "MHz"),
    ("pstate", pa.string(), None),
    ("clocks_event_reasons.active", pa.int64(), None),
    ("cpu.util", pa.float64(), "%"),
    ("cpu.util.max_core", pa.float64(), "%"),
    ("load.1", pa.float64(), None),
    ("mem.total", pa.int32(), "MiB"),
    ("mem.used", pa.int32(), "MiB"),
    ("mem.available", pa.int32(), "MiB"),
    ("swap.used", pa.int32(), "MiB"),
    ("missed", pa.int32(), None),
]


def builtin_schema():
    fields = [pa.field(n, t, nullable=(n != "timestamp"), metadata=({"unit": u} if u else None)) for n, t, u in COLUMNS]
    return pa.schema(fields)


def load_schema(template):
    """The Arrow schema of a gpumon recording, without its file metadata (written per file here)."""
    if template is None:
        return builtin_schema()
    return pq.read_schema(template).remove_metadata()


def gpu_day(rng, ticks):
    """One GPU's day: bursty utilisation (jobs and idle stretches), memory, temperature, power."""
    lens = rng.exponential(240, size=ticks // 30 + 64).astype(np.int64) + 1
    busy = np.repeat(rng.random(len(lens)) < 0.7, lens)[:ticks]
    level = np.repeat(rng.uniform(40, 99, len(lens)), lens)[:ticks]
    util = np.where(busy, level + rng.normal(0, 6, ticks), rng.choice([0, 0, 1, 3], ticks))
    util = np.clip(np.rint(util), 0, 100).astype(np.int16)
    mem_level = np.repeat(rng.uniform(20_000, 78_000, len(lens)), lens)[:ticks]
    mem = np.where(busy, mem_level + rng.normal(0, 150, ticks), 3).clip(0, MEM_TOTAL).astype(np.int32)
    temp = np.clip(np.rint(31 + 0.42 * util + rng.normal(0, 0.8, ticks)), 20, 95).astype(np.int32)
    power = np.round((68.0 + 5.9 * util + rng.normal(0, 12, ticks)).clip(55, 700), 2)
    return util, mem, temp, power


def job_day(rng, day, gpus, ticks, args):
    """The GPUs of one node of a synchronous job: the job's busy and idle stretches on every GPU of
    every host (seeded by day only), each GPU's readings with noise of its own."""
    util, mem, temp, power = gpu_day(np.random.default_rng([args.seed, 1 << 20, day]), ticks)
    out = []
    for _ in range(gpus):
        u = np.clip(util + np.rint(rng.normal(0, 2, ticks)), 0, 100).astype(np.int16)
        p = np.round((power + rng.normal(0, 8, ticks)).clip(55, 700), 2)
        out.append((u, mem, temp, p))
    return out


def host_day(rng, host, day, gpus, interval_s, energy, args):
    """The table of one host and one day; `energy` (J per GPU) is carried from the day before."""
    ticks = int(round(86400 / interval_s))
    t0 = int((START + dt.timedelta(days=day)).timestamp() * 1_000_000)
    ts = t0 + np.arange(ticks, dtype=np.int64) * int(interval_s * 1_000_000)
    per = [gpu_day(rng, ticks) for _ in range(gpus)] if not args.job_id else job_day(rng, day, gpus, ticks, args)
    stack = lambda k: np.stack([p[k] for p in per], axis=1).reshape(-1)
    util, mem, temp, power = (stack(k) for k in range(4))
    # energy.total: the counter before each tick plus the tick's energy (power x interval), per GPU
    steps = np.stack([p[3] for p in per], axis=1) * interval_s
    counter = energy[None, :] + np.cumsum(steps, axis=0)
    if args.reset and args.reset == (host, day):
        g = args.reset_gpu
        counter[:, g] = np.cumsum(steps[:, g])
    energy[:] = counter[-1]
    counter = np.round(counter.reshape(-1), 3)
    valid = np.ones(ticks * gpus, dtype=bool)
    if args.null_every and gpus > 1:
        valid[np.arange(args.null_every // 2, ticks, args.null_every) * gpus + 1] = False
    cpu = np.clip(35 + rng.normal(0, 15, ticks), 0, 100).round(1)
    hmem = (180_000 + np.cumsum(rng.normal(0, 40, ticks))).clip(1000, 500_000).astype(np.int32)
    rep = lambda a: np.repeat(a, gpus)
    n = ticks * gpus
    name = f"node-{host:03d}"
    idx = np.tile(np.arange(gpus, dtype=np.int32), ticks)
    uuids = [f"GPU-{host:04x}{g:04x}-0000-4000-8000-{host * 16 + g:012x}" for g in range(gpus)]
    buses = [f"00000000:{0x17 + 0x10 * g:02X}:00.0" for g in range(gpus)]
    return {
        "timestamp": pa.array(rep(ts), pa.timestamp("us", tz="UTC")),
        "host": pa.array([name] * n, pa.string()),
        "index": pa.array(idx),
        "uuid": pa.array([uuids[i] for i in idx]),
        "name": pa.array(["NVIDIA H100 80GB HBM3"] * n),
        "pci.bus_id": pa.array([buses[i] for i in idx]),
        "utilization.gpu": pa.array(util),
        "utilization.memory": pa.array((util * 0.45).astype(np.int16)),
        "memory.used": pa.array(mem),
        "memory.total": pa.array(np.full(n, MEM_TOTAL, np.int32)),
        "memory.free": pa.array(MEM_TOTAL - mem),
        "temperature.gpu": pa.array(temp),
        "power.draw": pa.array(power, mask=~valid),
        "power.limit": pa.array(np.full(n, 700.0)),
        "energy.total": pa.array(counter, mask=~valid),
        "clocks.sm": pa.array(np.where(util > 3, 1600 if host == args.slow_host else 1980, 345).astype(np.int32)),
        "clocks.mem": pa.array(np.full(n, 2619, np.int32)),
        "pstate": pa.array(np.where(util > 3, "P0", "P8")),
        "clocks_event_reasons.active": pa.array(np.where(util > 3, 0, 1).astype(np.int64)),
        "cpu.util": pa.array(rep(cpu)),
        "cpu.util.max_core": pa.array(rep(np.minimum(cpu * 1.8, 100.0).round(1))),
        "load.1": pa.array(rep((cpu / 10).round(2))),
        "mem.total": pa.array(np.full(n, 1_031_000, np.int32)),
        "mem.used": pa.array(rep(hmem)),
        "mem.available": pa.array(rep(1_031_000 - hmem)),
        "swap.used": pa.array(np.zeros(n, np.int32)),
        "missed": pa.array(np.zeros(n, np.int32)),
    }, name, t0


def to_table(cols, schema, name, t0, interval_s, extra=None):
    arrays = []
    for f in schema:
        a = cols.get(f.name)
        arrays.append(pa.nulls(len(cols["timestamp"]), f.type) if a is None else a.cast(f.type))
    meta = {
        "gpumon.version": "0.1.0",
        "gpumon.hostname": name,
        "gpumon.interval_s": f"{interval_s:g}",
        "gpumon.start": dt.datetime.fromtimestamp(t0 / 1e6, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "gpumon.command": f"gpumon record -q -i {interval_s:g} --rotate-every 1d -o host={{host}}/date={{date}}/run.parquet",
    }
    meta.update(extra or {})
    return pa.Table.from_arrays(arrays, schema=schema).replace_schema_metadata(meta)


def write(table, path):
    tmp = path + ".tmp"
    strings = [f.name for f in table.schema if pa.types.is_string(f.type)]
    pq.write_table(table, tmp, compression="zstd", use_dictionary=strings, row_group_size=1 << 20)
    os.replace(tmp, path)


def tree(args):
    schema = load_schema(args.template)
    files = 0
    for host in range(args.hosts):
        energy = np.full(args.gpus, 5.0e9) + np.arange(args.gpus) * 1.0e6
        for day in range(args.days):
            rng = np.random.default_rng([args.seed, host, day])
            cols, name, t0 = host_day(rng, host, day, args.gpus, args.interval_s, energy, args)
            date = (START + dt.timedelta(days=day)).strftime("%Y-%m-%d")
            d = os.path.join(args.out, f"host={name}", f"date={date}")
            os.makedirs(d, exist_ok=True)
            job = {"gpumon.job.id": args.job_id, "gpumon.job.source": "slurm", "gpumon.job.node": str(host)}
            extra = job if args.job_id else None
            write(to_table(cols, schema, name, t0, args.interval_s, extra), os.path.join(d, "run.parquet"))
            files += 1
    print(json.dumps({"files": files, "rows_per_file": int(round(86400 / args.interval_s)) * args.gpus}))


def marked(args):
    schema = load_schema(args.template)
    energy = np.full(args.gpus, 5.0e9)
    tables = []
    for day in range(args.days):
        rng = np.random.default_rng([args.seed, 0, day])
        cols, name, t0 = host_day(rng, 0, day, args.gpus, args.interval_s, energy, args)
        tables.append(to_table(cols, schema, name, t0, args.interval_s))
    start = int(START.timestamp() * 1_000_000)
    span = args.days * 86_400_000_000
    fmt = lambda us: dt.datetime.fromtimestamp(us / 1e6, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    marks = [{"time": fmt(start + span * (i + 1) // (args.phases + 2)), "label": f"phase-{i + 1}"} for i in range(args.phases)]
    marks.append({"time": fmt(start + span * (args.phases + 1) // (args.phases + 2)), "label": None})
    table = pa.concat_tables(tables)
    # the `phase` column as the recorder writes it: each row the label of the last mark at or before it
    ts = table.column("timestamp").cast(pa.int64()).to_numpy()
    times = np.array([start + span * (i + 1) // (args.phases + 2) for i in range(args.phases + 1)])
    labels = np.array([None] + [m["label"] for m in marks], dtype=object)
    phase = pa.array(labels[np.searchsorted(times, ts, side="right")], pa.string())
    if "phase" in table.column_names:
        table = table.drop_columns(["phase"])
    table = table.append_column(pa.field("phase", pa.string()), phase)
    meta = dict(tables[0].schema.metadata)
    meta[b"gpumon.marks"] = json.dumps(marks).encode()
    write(table.replace_schema_metadata(meta), args.out)
    print(json.dumps({"rows": table.num_rows, "marks": len(marks)}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["tree", "marked"])
    ap.add_argument("out")
    ap.add_argument("--hosts", type=int, default=64)
    ap.add_argument("--days", type=int, default=None)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--interval-s", type=float, default=None)
    ap.add_argument("--template")
    ap.add_argument("--null-every", type=int, default=0)
    ap.add_argument("--reset-host-gpu", default=None, help="H:G, GPU G of host H restarts its energy counter on day 1")
    ap.add_argument("--phases", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--job-id", default=None, help="the job every host's recording names (footer gpumon.job.*)")
    ap.add_argument("--slow-host", type=int, default=-1, help="this host's busy GPUs run 1600 MHz, not 1980")
    args = ap.parse_args()
    if args.days is None:
        args.days = 30 if args.kind == "tree" else 2
    if args.interval_s is None:
        args.interval_s = 60.0 if args.kind == "tree" else 1.0
    args.reset = None
    if args.reset_host_gpu:
        h, g = (int(x) for x in args.reset_host_gpu.split(":"))
        args.reset, args.reset_gpu = (h, 1), g
    if 86400 % args.interval_s:
        sys.exit("--interval-s must divide a day")
    tree(args) if args.kind == "tree" else marked(args)


if __name__ == "__main__":
    main()
