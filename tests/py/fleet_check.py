#!/usr/bin/env python3
"""Run docs/fleet.md's DuckDB and Spark SQL on a fleet tree and compare them with a gpumon summary.

usage: fleet_check.py TREE SUMMARY.json

The queries are taken from docs/fleet.md as written (the fenced blocks whose first line is
`-- fleet-stats: duckdb` / `-- fleet-stats: spark`), with `/shared/gpumon` replaced by TREE. Each row
(host, gpu) is compared, statistic by statistic, with `hosts[].gpus[].stats` of the summary. Prints
one JSON object: per engine the rows and figures compared and every mismatch, or `skipped` with the
reason (pyspark not importable, no Java). Exit 0 whatever it found: the caller judges.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXACT = {"samples", "utilization.gpu.p50", "utilization.gpu.p95", "utilization.gpu.max", "memory.used.max", "temperature.gpu.max"}


def queries(tree):
    text = open(os.path.join(ROOT, "docs", "fleet.md"), encoding="utf-8").read()
    out = {}
    for block in re.findall(r"```sql\n(.*?)```", text, re.S):
        m = re.match(r"-- fleet-stats: (\w+)\n", block)
        if m:
            out[m.group(1)] = block.replace("/shared/gpumon", tree)
    return out


def statements(sql):
    return [s.strip() for s in re.split(r";\s*\n", sql) if s.strip() and not re.fullmatch(r"(--[^\n]*\n?)+", s.strip() + "\n")]


def compare(rows, summary):
    gpus = {(h["host"], g["index"]): g["stats"] for h in summary["hosts"] for g in h["gpus"]}
    mismatches, figures = [], 0
    seen = set()
    for row in rows:
        key = (row["host"], int(row["gpu"]))
        seen.add(key)
        stats = gpus.get(key)
        if stats is None:
            mismatches.append({"host": key[0], "gpu": key[1], "stat": "*", "sql": "row", "gpumon": None})
            continue
        for name, value in row.items():
            if name in ("host", "gpu"):
                continue
            figures += 1
            mine = stats.get(name)
            value = None if value is None else float(value)
            if value is None or mine is None:
                ok = value is None and mine is None
            elif name in EXACT:
                ok = value == mine
            else:
                ok = math.isclose(value, mine, rel_tol=1e-9, abs_tol=1e-9)
            if not ok:
                mismatches.append({"host": key[0], "gpu": key[1], "stat": name, "sql": value, "gpumon": mine})
    for key in sorted(set(gpus) - seen):
        mismatches.append({"host": key[0], "gpu": key[1], "stat": "*", "sql": None, "gpumon": "row"})
    return {"rows": len(rows), "figures": figures, "mismatches": mismatches}


def duckdb_rows(sql):
    import duckdb

    con = duckdb.connect()
    cur = None
    for s in statements(sql):
        cur = con.execute(s)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def spark_rows(sql):
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None, "pyspark is not importable (pip install pyspark)"
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    if not java or subprocess.run([java, "-version"], capture_output=True).returncode != 0:
        return None, "no Java runtime (install Java 17, or set JAVA_HOME)"
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("gpumon-fleet-check")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        df = None
        for s in statements(sql):
            df = spark.sql(s)
        return [r.asDict() for r in df.collect()], None
    finally:
        spark.stop()


def main():
    tree, summary_path = sys.argv[1], sys.argv[2]
    summary = json.load(open(summary_path, encoding="utf-8"))
    sql = queries(os.path.abspath(tree))
    report = {"duckdb": compare(duckdb_rows(sql["duckdb"]), summary)}
    rows, why = spark_rows(sql["spark"])
    report["spark"] = {"skipped": why} if rows is None else compare(rows, summary)
    json.dump(report, sys.stdout, default=str)


if __name__ == "__main__":
    main()
