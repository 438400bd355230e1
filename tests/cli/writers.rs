//! Cross-writer sweep: gpumon's own recording rewritten by pyarrow, pandas, polars, DuckDB and
//! fastparquet with their common settings summarizes to the figures of the recording.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// Run tests/py/sweep.py with `args` and parse its JSON (if it prints any).
fn sweep(args: &[&Path]) -> Value {
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/sweep.py"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "sweep.py failed:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// The summary of `file` without the list of inputs (which names files and sizes), or the error.
fn figures(file: &Path) -> Result<Value, String> {
    let o = gpumon()
        .args(["summarize", "-q", "--format", "json", "--tz", "UTC"])
        .arg(file)
        .output()
        .unwrap();
    if !o.status.success() {
        return Err(format!("rc {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr)));
    }
    let mut j: Value = serde_json::from_slice(&o.stdout).map_err(|e| e.to_string())?;
    j.as_object_mut().unwrap().remove("inputs");
    Ok(j)
}

/// Every place where `a` and `b` differ: numbers beyond the relative tolerance `rel`, anything else
/// not equal.
fn differences(a: &Value, b: &Value, rel: f64, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let (u, v) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                differences(u, v, rel, &format!("{path}/{k}"), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                differences(u, v, rel, &format!("{path}/{i}"), out);
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (x - y).abs() > rel * x.abs().max(y.abs()) {
                out.push(format!("{path}: {x} vs {y}"));
            }
        }
        _ if a != b => out.push(format!("{path}: {a} vs {b}")),
        _ => {}
    }
}

/// The per-GPU headline figures of a summary against DuckDB's on the recording.
fn headline_differences(j: &Value, duck: &Value, out: &mut Vec<String>) {
    let gpus = j["hosts"][0]["gpus"].as_array().cloned().unwrap_or_default();
    assert_eq!(gpus.len(), duck.as_object().map_or(0, |d| d.len()), "GPUs: {j}");
    for g in &gpus {
        let d = &duck[g["index"].to_string()];
        for (ours, theirs) in [
            ("utilization.gpu.mean", "util_mean"),
            ("utilization.gpu.max", "util_max"),
            ("energy_wh", "energy_wh"),
        ] {
            differences(
                &g["stats"][ours],
                &d[theirs],
                1e-9,
                &format!("GPU {} {ours} (DuckDB)", g["index"]),
                out,
            );
        }
    }
}

/// 4 GPUs x 300 ticks in gpumon's Parquet, rewritten by every writer with its codecs, page
/// versions, encodings, row-group and page sizes, statistics on and off, column casts, rows by GPU
/// and its own CSV: every rewrite gives the recording's figures (to the cast's precision), and the
/// recording's headline figures are DuckDB's. Every disagreeing variant is listed.
#[test]
fn every_writer_and_setting_summarizes_like_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    sweep(&[Path::new("base"), dir.path()]);
    let orig = dir.path().join("orig.parquet");
    let o = gpumon()
        .args(["convert", "-q", "-o"])
        .arg(&orig)
        .arg(dir.path().join("base.parquet"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let made = sweep(&[Path::new("variants"), &orig, &dir.path().join("v")]);
    for s in made["skipped"].as_array().unwrap() {
        skipped(&format!("variant {}: {}", s["name"], s["reason"]));
    }
    let reference = figures(&orig).unwrap();
    let mut bad = Vec::new();
    headline_differences(&reference, &made["headline"], &mut bad);
    let variants = made["variants"].as_array().unwrap();
    assert!(variants.len() >= 50, "{made}");
    for v in variants {
        let name = v["name"].as_str().unwrap();
        let mut diffs = Vec::new();
        match figures(Path::new(v["file"].as_str().unwrap())) {
            Ok(j) => differences(&reference, &j, v["rel"].as_f64().unwrap(), "", &mut diffs),
            Err(e) => diffs.push(e),
        }
        diffs.truncate(5);
        bad.extend(diffs.into_iter().map(|d| format!("{name}: {d}")));
    }
    eprintln!(
        "{} variants compared, {} skipped",
        variants.len(),
        made["skipped"].as_array().unwrap().len()
    );
    assert!(bad.is_empty(), "variants that disagree with the recording:\n{}", bad.join("\n"));
}
