"""Write the files an older gpumon wrote, for the tests that gpumon still reads them: Parquet with
unsigned integer columns (uint8 percentages, uint32 MiB, uint64 bitmask) and the run metadata in
the footer, and CSV with a `name [unit]` header. Same data in both.

usage: oldstyle.py OUT.parquet OUT.csv
"""
import sys

import pyarrow as pa
import pyarrow.parquet as pq

ROWS = 20


def table():
    ts = pa.array([1_767_600_000_000_000 + i * 1_000_000 for i in range(ROWS) for _ in range(2)], pa.timestamp("us", "UTC"))
    n = len(ts)
    cols = {
        "timestamp": ts,
        "host": pa.array(["oldnode"] * n),
        "index": pa.array([g for _ in range(ROWS) for g in range(2)], pa.uint32()),
        "uuid": pa.array([f"GPU-{g}{g}" for _ in range(ROWS) for g in range(2)]),
        "utilization.gpu": pa.array([(10 * i) % 101 if g == 0 else 100 for i in range(ROWS) for g in range(2)], pa.uint8()),
        "utilization.memory": pa.array([5] * n, pa.uint8()),
        "memory.used": pa.array([1000 + 100 * i for i in range(ROWS) for _ in range(2)], pa.uint32()),
        "power.draw": pa.array([300.5] * n, pa.float64()),
        "clocks_event_reasons.active": pa.array([0x4 if i % 2 else 0 for i in range(ROWS) for _ in range(2)], pa.uint64()),
        "missed": pa.array([0] * n, pa.uint32()),
    }
    return pa.table(cols)


def main(pq_path, csv_path):
    t = table()
    # Unsigned columns and the run metadata in the footer's key/value pairs, as older gpumon
    # versions wrote them.
    kv = {b"gpumon.version": b"0.0.9", b"gpumon.hostname": b"oldnode", b"gpumon.interval_s": b"1"}
    pq.write_table(t.replace_schema_metadata(kv), pq_path)
    units = {"utilization.gpu": "%", "utilization.memory": "%", "memory.used": "MiB", "power.draw": "W"}
    df = t.to_pandas()
    df["timestamp"] = df["timestamp"].dt.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    df.columns = [f"{c} [{units[c]}]" if c in units else c for c in df.columns]
    df.to_csv(csv_path, index=False)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
