//! MIG: a GPU split into instances is recorded with one row per instance per tick, listed by
//! `doctor`, and answered for per instance.

use std::path::Path;
use std::process::Command;

use crate::common::{gpumon_fake, repo_root, warnings};

/// GPU 0 split `3g.40gb+2g.20gb+1g.10gb` (instance memory moving on at tick 1), GPU 1 whole.
pub const MIG_NODE: &str = "
[device]
name = NVIDIA H100 80GB HBM3
memory.total = 81559
memory.used = 30000
temperature.gpu = 40
power.draw = 200
utilization.gpu = 50
mig = 3g.40gb:gi=1:used=20000;2g.20gb:gi=5:used=100;1g.10gb:gi=13:used=9000, 3g.40gb:gi=1:used=21000;2g.20gb:gi=5:used=100;1g.10gb:gi=13:used=9500

[device]
name = NVIDIA H100 80GB HBM3
memory.total = 81559
memory.used = 1000
temperature.gpu = 35
power.draw = 100
utilization.gpu = 20
";

/// What pandas sees per tick (tests/py/mig_rows.py).
fn mig_rows(file: &Path) -> serde_json::Value {
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/mig_rows.py"))
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "mig_rows.py: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// (index, gi, profile) of each row of a tick.
fn units(tick: &serde_json::Value) -> Vec<(i64, Option<i64>, Option<String>)> {
    tick.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["index"].as_i64().unwrap(),
                r["gi"].as_i64(),
                r["profile"].as_str().map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn mig_instances_get_rows_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.parquet");
    let o = gpumon_fake(dir.path(), MIG_NODE)
        .args(["record", "-i", "0.2", "--count", "5", "-q", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(warnings(&o.stderr).is_empty(), "{:?}", warnings(&o.stderr));
    let j = mig_rows(&out);
    let ticks = j["ticks"].as_array().unwrap();
    assert_eq!(ticks.len(), 5, "{j}");
    let want = vec![
        (0, None, None),
        (0, Some(1), Some("3g.40gb".to_string())),
        (0, Some(5), Some("2g.20gb".to_string())),
        (0, Some(13), Some("1g.10gb".to_string())),
        (1, None, None),
    ];
    for t in ticks {
        assert_eq!(units(t), want, "{t}");
    }
    assert_eq!(
        j["dtypes"]["mig.gi"], j["dtypes"]["utilization.gpu"],
        "a nullable integer like the others: {j}"
    );
    // The parent keeps power and temperature and has no utilization (NVML: NOT_SUPPORTED in MIG
    // mode); each instance has its own memory and nothing the parent alone answers.
    let (parent, big, small, whole) = (&ticks[1][0], &ticks[1][1], &ticks[1][3], &ticks[1][4]);
    assert_eq!(parent["power.draw"], 200.0);
    assert!(parent["utilization.gpu"].is_null());
    assert_eq!(parent["memory.total"], 81559);
    assert_eq!(
        (big["memory.used"].as_i64(), big["memory.total"].as_i64()),
        (Some(21000), Some(40960))
    );
    assert_eq!(
        (small["memory.used"].as_i64(), small["memory.total"].as_i64()),
        (Some(9500), Some(10240))
    );
    assert!(big["power.draw"].is_null() && big["utilization.gpu"].is_null());
    assert!(big["uuid"].as_str().unwrap().starts_with("MIG-"));
    assert_eq!(whole["utilization.gpu"], 20);
    assert!(whole["gi"].is_null() && whole["uuid"].is_null());
}

#[test]
fn a_mig_layout_change_is_picked_up_with_one_warning() {
    let scenario = MIG_NODE.replace(
        "mig = 3g.40gb:gi=1:used=20000;2g.20gb:gi=5:used=100;1g.10gb:gi=13:used=9000, 3g.40gb:gi=1:used=21000;2g.20gb:gi=5:used=100;1g.10gb:gi=13:used=9500",
        "mig = 3g.40gb:gi=1;2g.20gb:gi=5;1g.10gb:gi=13, 3g.40gb:gi=1;2g.20gb:gi=5;1g.10gb:gi=13, 3g.40gb:gi=1;3g.40gb:gi=2",
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.parquet");
    let o = gpumon_fake(dir.path(), &scenario)
        .args(["record", "-i", "0.2", "--count", "5", "-q", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let w = warnings(&o.stderr);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains(
            "GPU 0: its MIG layout changed (2 instances now: 0/gi1 3g.40gb, 0/gi2 3g.40gb)"
        ),
        "{w:?}"
    );
    let j = mig_rows(&out);
    let ticks = j["ticks"].as_array().unwrap();
    let gis: Vec<Vec<Option<i64>>> = ticks
        .iter()
        .map(|t| units(t).into_iter().filter(|u| u.0 == 0).map(|u| u.1).collect())
        .collect();
    let three = vec![None, Some(1), Some(5), Some(13)];
    let two = vec![None, Some(1), Some(2)];
    assert_eq!(gis, vec![three.clone(), three, two.clone(), two.clone(), two], "{j}");
}

#[test]
fn doctor_lists_mig_instances_and_fields_says_which_fields_they_have() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = MIG_NODE.replace("mig = ", "mig_mode.pending = 0\nmig = ");
    let o = gpumon_fake(dir.path(), &scenario).arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("modes        persistence n/a, MIG on (pending off after a GPU reset)"),
        "{text}"
    );
    assert!(text.contains("MIG 0        gi 1, ci 0, 3g.40gb, 40960 MiB,"), "{text}");
    assert!(text.contains("MIG 2        gi 13, ci 0, 1g.10gb, 10240 MiB,"), "{text}");
    assert!(
        text.contains("GPU 0: MIG is on; record writes a row per MIG instance (3 now"),
        "{text}"
    );
    let o =
        gpumon_fake(dir.path(), MIG_NODE).args(["doctor", "--format", "json"]).output().unwrap();
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let inst = j["gpus"][0]["mig_instances"].as_array().unwrap();
    let got: Vec<(i64, &str, i64)> = inst
        .iter()
        .map(|m| {
            (
                m["gpu_instance_id"].as_i64().unwrap(),
                m["profile"].as_str().unwrap(),
                m["memory_total_mib"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [(1, "3g.40gb", 40960), (5, "2g.20gb", 20480), (13, "1g.10gb", 10240)]);
    assert!(
        inst.iter()
            .all(|m| m["uuid"].as_str().unwrap().starts_with("MIG-")
                && m["compute_instance_id"] == 0)
    );
    assert!(j["gpus"][1].get("mig_instances").is_none(), "a whole GPU lists none: {j}");

    let o = crate::common::gpumon().args(["fields", "--format", "json"]).output().unwrap();
    let all: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let per: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["mig_instance"] == true && f["source"] == "gpu")
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    for name in ["mig.gi", "mig.ci", "mig.profile", "mig.uuid", "memory.used", "memory.total"] {
        assert!(per.contains(&name), "{name} in {per:?}");
    }
    assert!(!per.contains(&"power.draw") && !per.contains(&"utilization.gpu"), "{per:?}");
}

/// Record `scenario` for 5 ticks into `dir/run.parquet`.
fn record_mig(dir: &Path, scenario: &str) -> std::path::PathBuf {
    let out = dir.join("run.parquet");
    let o = gpumon_fake(dir, scenario)
        .args(["record", "-i", "0.2", "--count", "5", "-q", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

#[test]
fn summarize_answers_for_each_mig_instance_under_its_gpu() {
    let dir = tempfile::tempdir().unwrap();
    // The 1g.10gb slice runs at 10,000 of its 10,240 MiB: an OOM risk of its own, while its GPU
    // (30,000 of 81,559 MiB) is not.
    let run = record_mig(
        dir.path(),
        &MIG_NODE.replace("1g.10gb:gi=13:used=9500", "1g.10gb:gi=13:used=10000"),
    );
    let o =
        crate::common::gpumon().args(["summarize", "--format", "json"]).arg(&run).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let gpus = j["hosts"][0]["gpus"].as_array().unwrap();
    let units: Vec<(&str, Option<i64>, Option<&str>)> = gpus
        .iter()
        .map(|g| (g["gpu"].as_str().unwrap(), g["gpu_instance"].as_i64(), g["profile"].as_str()))
        .collect();
    assert_eq!(
        units,
        [
            ("0", None, None),
            ("0/gi1", Some(1), Some("3g.40gb")),
            ("0/gi5", Some(5), Some("2g.20gb")),
            ("0/gi13", Some(13), Some("1g.10gb")),
            ("1", None, None)
        ]
    );
    assert!(gpus[3]["uuid"].as_str().unwrap().starts_with("MIG-"), "{}", gpus[3]);
    assert_eq!(gpus[3]["index"], 0);
    let findings = j["hosts"][0]["findings"].to_string();
    assert!(findings.contains("oom_risk") && findings.contains("0/gi13"), "{findings}");
    assert!(findings.contains("of 10240 MiB"), "against the instance's own memory: {findings}");
    assert_eq!(findings.matches("oom_risk").count(), 1, "{findings}");
    // The all-GPU figures pool whole GPUs: an instance's memory is already its GPU's.
    let all_pct = j["all"]["gpus"]["memory.used.max_pct"].as_f64().unwrap();
    assert!((all_pct - 100.0 * 30000.0 / 81559.0).abs() < 0.01, "{all_pct}");

    let o = crate::common::gpumon().arg("summarize").arg(&run).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("gpumon summary: 1 host(s), 2 GPU(s) (3 MIG instance(s))"), "{text}");
    assert!(text.contains("MIG instances: 0/gi1 3g.40gb, 0/gi5 2g.20gb, 0/gi13 1g.10gb"), "{text}");
    let table = text.split_once("temp C\n").unwrap().1.split_once("Wh:").unwrap().0;
    let order: Vec<&str> = table.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(order, ["0", "0/gi1", "0/gi5", "0/gi13", "1"], "{text}");

    let html = dir.path().join("r.html");
    let o = crate::common::gpumon().arg("report").arg(&run).arg("-o").arg(&html).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("0/gi13") && page.contains("oom_risk"), "the report shows the instances");
}

#[test]
fn each_mig_instance_gets_its_own_gpm_activity_and_an_idle_slice_holding_memory_is_found() {
    // GPU-wide GPM says 30% while the 3g slice runs at 80% and the 1g slice holds 9,000 MiB idle.
    let scenario = MIG_NODE
        .replace("utilization.gpu = 50\n", "utilization.gpu = 50\ngpm.sm_util = 0, 30\n")
        .replace("3g.40gb:gi=1:used=21000", "3g.40gb:gi=1:used=21000:gpm.sm_util=80")
        .replace(
            "2g.20gb:gi=5:used=100;1g.10gb:gi=13:used=9500",
            "2g.20gb:gi=5:used=100:gpm.sm_util=10;1g.10gb:gi=13:used=9500:gpm.sm_util=0",
        );
    let dir = tempfile::tempdir().unwrap();
    let run = record_mig(dir.path(), &scenario);
    // A few seconds of recording: idle_allocated asks for held_idle_min_s of memory held idle.
    let o = crate::common::gpumon()
        .args(["summarize", "--format", "json", "--threshold", "held_idle_min_s=0"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let gpus = j["hosts"][0]["gpus"].as_array().unwrap();
    let sm: Vec<(&str, Option<f64>)> = gpus
        .iter()
        .map(|g| (g["gpu"].as_str().unwrap(), g["stats"]["sm.active.max"].as_f64()))
        .collect();
    assert_eq!(
        sm,
        [
            ("0", Some(30.0)),
            ("0/gi1", Some(80.0)),
            ("0/gi5", Some(10.0)),
            ("0/gi13", Some(0.0)),
            ("1", None)
        ],
        "{j}"
    );
    let findings: Vec<(&str, &str)> = j["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["gpu"].as_str().unwrap_or("-")))
        .collect();
    assert!(findings.contains(&("idle_allocated", "0/gi13")), "{findings:?}");
    assert!(
        !findings.iter().any(|f| f.1 == "0/gi1" || f.1 == "0"),
        "the busy slice and its GPU: {findings:?}"
    );
    let text = j["hosts"][0]["findings"].to_string();
    assert!(text.contains("with sm.active < 5%"), "the instance's evidence is its GPM: {text}");
}

#[test]
fn processes_are_attributed_to_their_mig_instance() {
    let scenario = MIG_NODE
        .replace("3g.40gb:gi=1:used=21000", "3g.40gb:gi=1:used=21000:proc=1111@19000")
        .replace("1g.10gb:gi=13:used=9500", "1g.10gb:gi=13:used=9500:proc=2222@8000:proc=3333@900")
        .replace("utilization.gpu = 20\n", "utilization.gpu = 20\nprocesses = 4444:900\n");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.csv");
    let o = gpumon_fake(dir.path(), &scenario)
        .args(["record", "-i", "0.2", "--count", "3", "-q", "--processes", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let procs = crate::common::readback(&dir.path().join("run.procs.csv"));
    let cols = &procs["pandas"]["columns"];
    let at = |c: &str, i: usize| cols[c][i].clone();
    // The last tick (instance memory moves on at tick 1): pid -> (index, gi, profile).
    let n = cols["proc.pid"].as_array().unwrap().len();
    let last: Vec<(i64, i64, Option<i64>, Option<String>)> = (n - 4..n)
        .map(|i| {
            (
                at("proc.pid", i).as_i64().unwrap(),
                at("index", i).as_i64().unwrap(),
                at("mig.gi", i).as_f64().map(|g| g as i64),
                at("mig.profile", i).as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(
        last,
        [
            (1111, 0, Some(1), Some("3g.40gb".into())),
            (2222, 0, Some(13), Some("1g.10gb".into())),
            (3333, 0, Some(13), Some("1g.10gb".into())),
            (4444, 1, None, None)
        ],
        "{procs}"
    );
}
