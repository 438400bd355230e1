//! A fleet's hive tree (`host=H/date=D/run.parquet`): `gpumon summarize` of the tree against the
//! DuckDB and Spark SQL that docs/fleet.md gives for the same per-host/per-GPU statistics.

use std::ffi::OsStr;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// The statistics each query computes per GPU (docs/fleet.md's table).
const STATS_PER_GPU: u64 = 13;

/// Run a repository Python script with `args`; its stdout.
fn python(script: &str, args: &[&OsStr]) -> Vec<u8> {
    let out = Command::new("python3")
        .arg(repo_root().join(script))
        .args(args)
        .output()
        .expect("running python3");
    assert!(out.status.success(), "{script} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn assert_engine_agrees(report: &Value, engine: &str, gpus: u64) {
    let r = &report[engine];
    if let Some(why) = r["skipped"].as_str() {
        skipped(&format!("the {engine} half: {why}"));
        return;
    }
    assert_eq!(r["rows"], gpus, "{engine}: one row per host and GPU: {r}");
    assert_eq!(r["figures"], gpus * STATS_PER_GPU, "{engine}: every statistic compared: {r}");
    assert_eq!(r["mismatches"], serde_json::json!([]), "{engine} and gpumon summarize disagree");
}

/// 3 hosts x 2 days x 8 GPUs at 60 s in gpumon's own schema (taken from a recording by the fake NVML),
/// with power/energy nulls on one GPU and an energy counter that restarts on one: every figure of the
/// docs' DuckDB query and Spark query (pyspark local mode; skipped with one line without pyspark or
/// Java) equals `summarize --format json` per host and GPU.
#[test]
fn fleet_tree_sql_matches_summarize() {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template.parquet");
    let rec = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-q", "-i", "100ms", "--count", "2", "-o"])
        .arg(&template)
        .output()
        .unwrap();
    assert!(rec.status.success(), "record: {}", String::from_utf8_lossy(&rec.stderr));

    let tree = dir.path().join("fleet");
    let flags = "--hosts 3 --days 2 --null-every 7 --reset-host-gpu 0:3 --template"
        .split(' ')
        .map(OsStr::new);
    let args: Vec<&OsStr> = [OsStr::new("tree"), tree.as_os_str()]
        .into_iter()
        .chain(flags)
        .chain([template.as_os_str()])
        .collect();
    python("bench/fleet_tree.py", &args);
    assert!(tree.join("host=node-002/date=2026-01-02/run.parquet").is_file());

    let out = gpumon().args(["summarize", "--format", "json"]).arg(&tree).output().unwrap();
    assert!(out.status.success(), "summarize: {}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["inputs"].as_array().unwrap().len(), 6, "one input per day file");
    let hosts: Vec<&str> =
        summary["hosts"].as_array().unwrap().iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["node-000", "node-001", "node-002"]);
    let summary_path = dir.path().join("summary.json");
    std::fs::write(&summary_path, &out.stdout).unwrap();

    let report = python("tests/py/fleet_check.py", &[tree.as_os_str(), summary_path.as_os_str()]);
    let report: Value = serde_json::from_slice(&report).unwrap();
    assert_engine_agrees(&report, "duckdb", 24);
    assert_engine_agrees(&report, "spark", 24);
}
