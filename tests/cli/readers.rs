//! What data scientists do with gpumon files: arithmetic in pandas, polars and DuckDB, one pandas
//! function for CSV and Parquet, the run metadata from pyarrow and pandas, and older files (unsigned
//! columns, `name [unit]` CSV headers) still read.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

/// One GPU whose values go down tick after tick: utilization.memory stays below utilization.gpu,
/// memory.used falls by 2000 MiB per tick.
const FALLING: &str = "
init = ok

[device]
name = NVIDIA H100 80GB HBM3
memory.total = 81559
memory.used = 8000, 6000, 4000, 2000
utilization.gpu = 40, 30, 20, 10
utilization.memory = 0
power.draw = 300
fan.speed = NOT_SUPPORTED
";

/// tests/py/arith.py on `files`: per file, what each tool computed.
fn arith(files: &[&Path]) -> Value {
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/arith.py"))
        .args(files)
        .output()
        .unwrap();
    assert!(out.status.success(), "arith.py failed:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn record(dir: &Path, out: &Path) {
    let o = gpumon_fake(dir, FALLING)
        .args(["record", "-q", "-i", "100ms", "--count", "4", "-o"])
        .arg(out)
        .args(["--fields", "utilization.gpu,utilization.memory,memory.used,power.draw,fan.speed"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn pandas_polars_and_duckdb_subtract_to_negative_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (pq, csv) = (dir.path().join("run.parquet"), dir.path().join("run.csv"));
    record(dir.path(), &pq);
    record(dir.path(), &csv);
    let r = arith(&[&pq, &csv]);
    for file in [&pq, &csv] {
        let f = &r[file.to_str().unwrap()];
        for tool in ["pandas", "polars", "duckdb"] {
            let t = &f[tool];
            assert!(t.get("error").is_none(), "{tool} on {}: {}", file.display(), t["error"]);
            // Compared as numbers: pandas gives a float for a diff.
            let nums = |k: &str| -> Vec<f64> {
                t[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
            };
            assert_eq!(
                nums("util_diff"),
                [-40.0, -30.0, -20.0, -10.0],
                "{tool} on {}",
                file.display()
            );
            assert_eq!(
                nums("mem_step"),
                [-2000.0, -2000.0, -2000.0],
                "{tool} on {}",
                file.display()
            );
        }
    }
    // The run metadata, where pyarrow and pandas users look for it.
    let f = &r[pq.to_str().unwrap()];
    let md = &f["schema_metadata"];
    for key in
        ["gpumon.version", "gpumon.hostname", "gpumon.interval_s", "gpumon.command", "gpumon.start"]
    {
        assert!(
            md[key].as_str().is_some_and(|v| !v.is_empty()),
            "schema.metadata lacks {key}: {md}"
        );
    }
    assert_eq!(md["gpumon.interval_s"], "0.1");
    assert!(md["gpumon.command"].as_str().unwrap().contains("record"));
    assert_eq!(
        f["pandas_attrs"]["gpumon.hostname"], md["gpumon.hostname"],
        "{}",
        f["pandas_attrs"]
    );
}

#[test]
fn one_pandas_function_reads_the_csv_and_the_parquet_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let (pq, csv) = (dir.path().join("run.parquet"), dir.path().join("run.csv"));
    record(dir.path(), &pq);
    let o = gpumon().args(["convert", "-q", "-o"]).arg(&csv).arg(&pq).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A CSV recorded directly has the same header as the Parquet file's columns.
    let direct = dir.path().join("direct.csv");
    record(dir.path(), &direct);
    let r = arith(&[&pq, &csv, &direct]);
    let (a, b) = (&r[pq.to_str().unwrap()]["load"], &r[csv.to_str().unwrap()]["load"]);
    assert_eq!(a["columns"], b["columns"]);
    assert_eq!(a["columns"], r[direct.to_str().unwrap()]["load"]["columns"]);
    assert_eq!(
        a["columns"],
        json!([
            "timestamp",
            "host",
            "index",
            "uuid",
            "utilization.gpu",
            "utilization.memory",
            "memory.used",
            "power.draw",
            "fan.speed",
            "missed"
        ])
    );
    assert_eq!(a["values"], b["values"], "the same values from both formats");
    assert_eq!(a["values"]["memory.used"], json!([8000, 6000, 4000, 2000]));
    assert_eq!(
        a["values"]["fan.speed"],
        json!([null, null, null, null]),
        "missing is null in both"
    );
}

#[test]
fn older_files_with_unsigned_columns_and_unit_headers_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let (pq, csv) = (dir.path().join("old.parquet"), dir.path().join("old.csv"));
    let o = Command::new("python3")
        .arg(repo_root().join("tests/py/oldstyle.py"))
        .args([&pq, &csv])
        .output()
        .unwrap();
    assert!(o.status.success(), "oldstyle.py: {}", String::from_utf8_lossy(&o.stderr));
    let before = readback(&pq);
    assert_eq!(
        before["pyarrow"]["types"]["utilization.gpu"], "uint8",
        "the fixture is an old-style file"
    );
    let header = std::fs::read_to_string(&csv).unwrap();
    assert!(header.lines().next().unwrap().contains("utilization.gpu [%]"), "{header}");
    let stat = |file: &Path| -> Vec<(String, f64)> {
        let o = gpumon().args(["summarize", "--format", "json"]).arg(file).output().unwrap();
        assert!(o.status.success(), "{}: {}", file.display(), String::from_utf8_lossy(&o.stderr));
        let j: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["hosts"][0]["host"], "oldnode");
        j["hosts"][0]["gpus"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| {
                let s = &g["stats"];
                ["utilization.gpu.mean", "memory.used.max", "throttle.sw_power_cap_pct"]
                    .map(|k| (format!("{}:{k}", g["gpu"]), s[k].as_f64().unwrap()))
            })
            .collect()
    };
    let from_parquet = stat(&pq);
    assert_eq!(from_parquet, stat(&csv), "the old CSV and Parquet summarize alike");
    assert!(
        from_parquet.contains(&("\"1\":utilization.gpu.mean".into(), 100.0)),
        "{from_parquet:?}"
    );
    assert!(from_parquet.contains(&("\"0\":memory.used.max".into(), 2900.0)), "{from_parquet:?}");
    assert!(
        from_parquet.contains(&("\"0\":throttle.sw_power_cap_pct".into(), 50.0)),
        "{from_parquet:?}"
    );
    // Converted, they become today's signed columns.
    let new = dir.path().join("new.parquet");
    let o = gpumon().args(["convert", "-q", "-o"]).arg(&new).arg(&pq).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = readback(&new);
    assert_eq!(after["pyarrow"]["types"]["utilization.gpu"], "int16");
    assert_eq!(after["pyarrow"]["types"]["clocks_event_reasons.active"], "int64");
    assert_eq!(
        after["pyarrow"]["columns"]["memory.used"],
        before["pyarrow"]["columns"]["memory.used"]
    );
}

/// `gpumon summarize --format json -q` of `inputs` (exit 0 or 3), parsed.
fn summary_of(inputs: &[&Path]) -> Value {
    let o =
        gpumon().arg("summarize").args(inputs).args(["--format", "json", "-q"]).output().unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn energy_joins_row_groups_and_pieces_across_a_null_counter() {
    let dir = tempfile::tempdir().unwrap();
    let info = writers("seams", dir.path());
    let want = info["wh"].as_f64().unwrap();
    // Row groups of 1000 rows (split into parts when there are CPUs for it), one row group, and two
    // pieces of a set; the counter is null on the first row of the second half.
    for input in ["groups.parquet", "whole.parquet", "set/run.parquet"] {
        let j = summary_of(&[&dir.path().join(input)]);
        let wh = j["all"]["gpus"]["energy_wh"].as_f64().unwrap();
        assert!((wh - want).abs() < 1e-9, "{input}: {wh} Wh, want {want}");
    }
}

/// tests/py/writers.py's row groups and null counts of a Parquet file.
fn inspect(file: &Path) -> Value {
    writers("inspect", file)
}

#[test]
fn gpu_identity_is_read_from_every_row_group_and_convert_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let info = writers("identity", dir.path());
    // Sorted by host and GPU: every GPU but the first starts in a later row group.
    let j = summary_of(&[&dir.path().join("sorted.parquet")]);
    for h in j["hosts"].as_array().unwrap() {
        let want = &info["uuid"][h["host"].as_str().unwrap()];
        let got: Vec<&Value> = h["gpus"].as_array().unwrap().iter().map(|g| &g["uuid"]).collect();
        assert_eq!(
            &Value::from(got.into_iter().cloned().collect::<Vec<_>>()),
            want,
            "{}",
            h["host"]
        );
        assert!(h["gpus"].as_array().unwrap().iter().all(|g| g["name"].is_string()), "{h}");
    }
    // A file of several row groups converted (to gpumon's own file, then that again): no blanked
    // identity on any row.
    let own = dir.path().join("own.parquet");
    let again = dir.path().join("again.parquet");
    for (from, to) in [(dir.path().join("big.parquet"), &own), (own.clone(), &again)] {
        let o = gpumon().args(["convert", "-q", "-o"]).arg(to).arg(&from).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let r = inspect(to);
        assert!(r["row_groups"].as_u64().unwrap() > 1, "{r}");
        assert_eq!(r["rows"], 240_000);
        for c in ["uuid", "name", "pci.bus_id"] {
            assert_eq!(r["nulls"][c], 0, "{c} blanked in {}: {r}", to.display());
        }
    }
}

/// The summary without the list of inputs (which names the files).
fn figures(mut j: Value) -> Value {
    j.as_object_mut().unwrap().remove("inputs");
    j
}

#[test]
fn gzip_and_brotli_parquet_read_like_zstd() {
    let dir = tempfile::tempdir().unwrap();
    let info = writers("codecs", dir.path());
    let files: Vec<&str> =
        info["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    let want = figures(summary_of(&[&dir.path().join(files[0])]));
    assert_eq!(want["all"]["gpus"]["samples"], 12_000);
    for f in &files[1..] {
        assert_eq!(figures(summary_of(&[&dir.path().join(f)])), want, "{f}");
    }
}

#[test]
fn decimal_and_half_float_columns_read_as_numbers_and_unusable_types_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let info = writers("decimals", dir.path());
    let want = figures(summary_of(&[&dir.path().join("float.parquet")]));
    assert!(want["all"]["gpus"]["power.draw.mean"].is_f64(), "{}", want["all"]["gpus"]);
    for f in info["files"].as_array().unwrap() {
        let path = dir.path().join(f.as_str().unwrap());
        assert_eq!(figures(summary_of(&[&path])), want, "{f}");
        // The date in clocks.sm cannot be read: a warning names the column.
        let o =
            gpumon().arg("summarize").arg(&path).args(["--format", "json", "-q"]).output().unwrap();
        let w = warnings(&o.stderr);
        assert!(w.iter().any(|l| l.contains("clocks.sm") && l.contains("left out")), "{f}: {w:?}");
    }
}

#[test]
fn csv_timestamps_of_polars_and_duckdb_parse_and_unreadable_ones_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let info = writers("csvstamps", dir.path());
    let want = figures(summary_of(&[&dir.path().join("ref.parquet")]));
    for f in info["files"].as_array().unwrap() {
        let f = f.as_str().unwrap();
        assert_eq!(
            figures(summary_of(&[&dir.path().join(f)])),
            want,
            "{f} (first stamp {})",
            info["first"][f]
        );
    }
    // Every timestamp unreadable: the error says so, with the first one.
    let o =
        gpumon().arg("summarize").arg(dir.path().join("bad.csv")).args(["-q"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("timestamp of every one of the 5 row(s) cannot be read")
            && err.contains("04/12/2026 14h00"),
        "{err}"
    );
}

#[test]
fn rows_grouped_by_gpu_summarize_like_rows_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let info = writers("bygpu", dir.path());
    let want = figures(summary_of(&[&dir.path().join("time.parquet")]));
    assert_eq!(want["hosts"][0]["stats"]["ticks"], info["ticks"]);
    // Several row groups: split into parts wherever there are two CPUs or more.
    assert_eq!(figures(summary_of(&[&dir.path().join("gpu.parquet")])), want);
}

#[test]
fn zero_row_parquet_from_pyarrow_reads_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let info = writers("emptyprocs", dir.path());
    assert_eq!(
        info["chunk"],
        serde_json::json!([0, 0]),
        "pyarrow wrote an empty chunk at offset 0"
    );
    // The empty per-process companion is read beside the recording: no users, no failure.
    let run = dir.path().join("run.parquet");
    let j = summary_of(&[&run]);
    assert_eq!(j["users"], serde_json::json!([]));
    let procs = j["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["path"].as_str().unwrap().ends_with("run.procs.parquet"));
    assert_eq!(procs.expect("the companion is listed")["rows"], 0);
    // A zero-row metrics file beside a full one adds nothing.
    let both = summary_of(&[&run, &dir.path().join("empty.parquet")]);
    assert_eq!(figures(both), figures(j));
}

#[test]
fn hosts_are_listed_in_order_of_first_appearance_rows_without_a_host_included() {
    let dir = tempfile::tempdir().unwrap();
    let info = writers("nullhost", dir.path());
    for f in ["mixed.parquet", "groups/mixed.parquet", "mixed.csv"] {
        let j = summary_of(&[&dir.path().join(f)]);
        let hosts: Vec<Value> =
            j["hosts"].as_array().unwrap().iter().map(|h| h["host"].clone()).collect();
        assert_eq!(Value::from(hosts), info["hosts"], "{f}");
    }
}

#[test]
fn separate_inputs_summarize_alike_in_either_order_across_a_null_counter() {
    let dir = tempfile::tempdir().unwrap();
    let info = writers("days", dir.path());
    let want = info["wh"].as_f64().unwrap();
    // Parquet with row-group statistics, without them (the first rows tell), CSV, and the two kinds
    // mixed; day 2's first energy counter is null.
    let pairs = [
        ("stats/day1.parquet", "stats/day2.parquet"),
        ("nostats/day1.parquet", "nostats/day2.parquet"),
        ("csv/day1.csv", "csv/day2.csv"),
        ("csv/day1.csv", "stats/day2.parquet"),
    ];
    for (one, two) in pairs {
        let (one, two) = (dir.path().join(one), dir.path().join(two));
        let forward = summary_of(&[&one, &two]);
        let wh = forward["all"]["gpus"]["energy_wh"].as_f64().unwrap();
        assert!((wh - want).abs() < 1e-9, "{}: {wh} Wh, want {want}", one.display());
        assert_eq!(forward["hosts"][0]["stats"]["ticks"], info["ticks"], "{}", one.display());
        let reversed = summary_of(&[&two, &one]);
        let what = format!("{} after {}", one.display(), two.display());
        assert_eq!(
            reversed["all"]["gpus"]["energy_wh"], forward["all"]["gpus"]["energy_wh"],
            "{what}"
        );
        assert_eq!(reversed["hosts"][0]["stats"]["ticks"], info["ticks"], "{what}");
        // Everything alike, the inputs listed in time order included.
        assert_eq!(reversed, forward, "{what}");
    }
}
