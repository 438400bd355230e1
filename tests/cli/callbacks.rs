//! Framework callbacks (`gpumon.callbacks`): a tiny CPU training run with PyTorch Lightning and
//! with transformers under `gpumon record --progress samples`; the phases they mark and the
//! samples each training epoch reports, read back by `summarize --by phase`. The frameworks come
//! from PyPI into a venv made once under target/ (scripts/fw-venv).

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::*;

/// One GPU, steady.
const GPU: &str = "[device]\nname = NVIDIA H100 80GB HBM3\nmemory.total = 81920\nmemory.used = 10240\n\
                   utilization.gpu = 90\npower.draw = 300\npower.limit = 700\ntemperature.gpu = 50\n";

/// The venv's python, made by scripts/fw-venv on first use (kept under target/).
fn fw_python() -> &'static PathBuf {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let venv = std::env::var_os("GPUMON_FW_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target/fw-venv"));
        let o = Command::new(repo_root().join("scripts/fw-venv"))
            .current_dir(repo_root())
            .env("GPUMON_FW_VENV", &venv)
            .output()
            .unwrap();
        assert!(o.status.success(), "scripts/fw-venv: {}", String::from_utf8_lossy(&o.stderr));
        venv.join("bin/python")
    })
}

/// Train with `framework` under `gpumon record`; `summarize --by phase` of the recording.
fn train(framework: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.parquet");
    let o = gpumon_fake(dir.path(), GPU)
        .env("PYTHONPATH", repo_root().join("python"))
        .args(["record", "-q", "-i", "100ms", "--progress", "samples", "-o"])
        .arg(&run)
        .arg("--")
        .arg(fw_python())
        .arg(repo_root().join("tests/py/callbacks_train.py"))
        .arg(framework)
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{framework}: exit {:?}: {err}", o.status.code());
    assert!(!err.contains(" callback "), "{framework}: the callback warned: {err}");
    let o = gpumon()
        .args(["summarize", "--by", "phase", "--format", "json"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Samples per phase label (a phase with no counted work: 0).
fn samples_by_phase(v: &Value) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = v["phases"]
        .as_array()
        .unwrap_or_else(|| panic!("no phases: {v}"))
        .iter()
        .map(|p| {
            let n = p["progress"]["samples"]["total"].as_f64().unwrap_or(0.0);
            (p["phase"].as_str().unwrap_or("(none)").to_string(), n)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn check(framework: &str, eval: &str) {
    let v = train(framework);
    let got = samples_by_phase(&v);
    // 64 samples per epoch; the evaluation passes train nothing.
    let mut want: Vec<(String, f64)> = (0..3)
        .flat_map(|e| [(format!("train epoch={e}"), 64.0), (format!("{eval} epoch={e}"), 0.0)])
        .collect();
    want.sort_by(|a, b| a.0.cmp(&b.0));
    let named: Vec<(String, f64)> =
        got.iter().filter(|(p, _)| p.contains("epoch=")).cloned().collect();
    assert_eq!(named, want, "{framework}: samples per phase: {got:?}");
    assert_eq!(
        v["progress"]["samples"]["total"].as_f64(),
        Some(192.0),
        "{framework}: {}",
        v["progress"]
    );
}

#[test]
fn the_lightning_callback_marks_epochs_and_validation_and_counts_samples() {
    check("lightning", "validate");
}

#[test]
fn the_transformers_callback_marks_epochs_and_evaluation_and_counts_samples() {
    check("transformers", "eval");
}
