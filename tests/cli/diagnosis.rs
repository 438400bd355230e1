//! `gpumon summarize` judged against known situations: tests/py/scenarios.py writes a recording of
//! each (gpumon Parquet, its events file, nvidia-smi logs) with the findings it must and must not
//! give; every expected finding must be there and no warning or error that is not expected.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// Write the scenarios into `dir` and read their manifest.
fn scenarios(dir: &Path) -> Vec<Value> {
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/scenarios.py"))
        .arg(dir)
        .output()
        .expect("running python3");
    assert!(out.status.success(), "scenarios.py: {}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap().as_array().unwrap().clone()
}

fn summary(dir: &Path, s: &Value) -> Value {
    let args: Vec<&str> =
        s["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    let out = gpumon()
        .args(["summarize", "--format", "json", "--tz", "UTC"])
        .args(&args)
        .arg(dir.join(s["input"].as_str().unwrap()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}: {}", s["name"], String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The findings judged, by phase: the whole run's, or each phase's with `--by phase`.
fn judged(j: &Value, by_phase: bool) -> Vec<(Value, Vec<Value>)> {
    let of = |hosts: &Value| -> Vec<Value> {
        hosts
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|h| h["findings"].as_array().unwrap().clone())
            .collect()
    };
    if by_phase {
        j["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["phase"].clone(), of(&p["hosts"])))
            .collect()
    } else {
        vec![(Value::Null, of(&j["hosts"]))]
    }
}

/// (expected found, expected, false alarms) of one scenario, with a line for each miss and alarm.
fn score(s: &Value, j: &Value, lines: &mut Vec<String>) -> (usize, usize, usize) {
    let name = s["name"].as_str().unwrap();
    let groups = judged(j, !s["args"].as_array().unwrap().is_empty());
    let expected = s["expected"].as_array().unwrap();
    let matches = |f: &Value, e: &Value| f["rule"] == e["rule"] && f["gpu"] == e["gpu"];
    let mut found = 0;
    for e in expected {
        let hit =
            groups.iter().filter(|(ph, _)| *ph == e["phase"]).flat_map(|(_, fs)| fs).any(|f| {
                matches(f, e) && (e["severity"].is_null() || f["severity"] == e["severity"])
            });
        found += usize::from(hit);
        if !hit {
            lines.push(format!("  missed {name}: {e}"));
        }
    }
    let mut alarms = 0;
    for (ph, fs) in &groups {
        for f in fs {
            let wanted = expected.iter().any(|e| matches(f, e) && e["phase"] == *ph);
            let forbidden = s["forbidden"].as_array().unwrap().iter().any(|x| {
                f["rule"] == x["rule"]
                    && (x["gpu"] == f["gpu"] || (x["gpu"] == "*" && !f["gpu"].is_null()))
            });
            let serious = f["severity"] == "warning" || f["severity"] == "error";
            if (serious && !wanted) || forbidden {
                alarms += 1;
                lines.push(format!(
                    "  false alarm {name} [{ph}]: {} {} GPU {}: {}",
                    f["rule"], f["severity"], f["gpu"], f["evidence"]
                ));
            }
        }
    }
    (found, expected.len(), alarms)
}

#[test]
fn every_situation_gets_its_findings_and_no_false_alarm() {
    let dir = tempfile::tempdir().unwrap();
    let list = scenarios(dir.path());
    assert!(list.len() >= 20, "{} scenarios", list.len());
    let (mut found, mut expected, mut alarms) = (0, 0, 0);
    let mut lines = Vec::new();
    for s in &list {
        let j = summary(dir.path(), s);
        let (f, e, a) = score(s, &j, &mut lines);
        lines.push(format!("{}: {f}/{e} found, {a} false alarms", s["name"].as_str().unwrap()));
        (found, expected, alarms) = (found + f, expected + e, alarms + a);
    }
    println!("{}", lines.join("\n"));
    println!("recall {found}/{expected}, false alarms {alarms} in {} scenarios", list.len());
    assert_eq!((found, alarms), (expected, 0), "\n{}", lines.join("\n"));
}

/// A GPU that fell off the bus: its empty rows are a gap, not samples, and the over-all memory peak
/// is each GPU's own peak against its own total.
#[test]
fn a_lost_gpus_empty_rows_are_a_gap_and_the_memory_peak_is_per_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let list = scenarios(dir.path());
    let lost = list.iter().find(|s| s["name"] == "gpu_lost").unwrap();
    let j = summary(dir.path(), lost);
    let gpus = j["hosts"][0]["gpus"].as_array().unwrap();
    let g2 = &gpus[2]["stats"];
    // Readings for 360 of its 600 s, empty rows after.
    assert_eq!(g2["samples"], 360, "{g2}");
    assert_eq!(g2["empty_rows"], 240, "{g2}");
    let cov = g2["coverage_pct"].as_f64().unwrap();
    assert!((59.0..61.0).contains(&cov), "coverage {cov}");
    assert_eq!(g2["gaps"], 1, "{g2}");
    assert_eq!(gpus[0]["stats"]["coverage_pct"], 100);
    // An H100 at half its memory beside a smaller board at 97 % of its own.
    let oom = list.iter().find(|s| s["name"] == "mixed_gpus").unwrap();
    let j = summary(dir.path(), oom);
    let peaks: Vec<f64> = j["hosts"][0]["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["stats"]["memory.used.max_pct"].as_f64().unwrap())
        .collect();
    let all = j["all"]["gpus"]["memory.used.max_pct"].as_f64().unwrap();
    assert!(peaks[1] > 95.0 && peaks[0] < 50.0, "{peaks:?}");
    assert_eq!(all, peaks[1], "{peaks:?}");
}

/// A GPU that reports Xid 79 and falls off the bus: the recorder stores the event with the index the
/// GPU had at start (NVML can no longer name it), and the summary says `xid` and `gpu_lost` on it.
#[test]
fn a_lost_gpus_xid_keeps_its_index_and_both_findings_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = TWO_GPUS.replacen("lost_after = 5\n", "events = xid:79@4\nlost_after = 5\n", 1);
    let out = dir.path().join("run.parquet");
    let o = gpumon_fake(dir.path(), &scenario)
        .args(["record", "-q", "-i", "200ms", "--count", "12", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = gpumon().args(["summarize", "--format", "json"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ev =
        j["events"].as_array().unwrap().iter().find(|e| e["code"] == 79).expect("the Xid 79 event");
    assert_eq!(ev["gpu"], 1, "{ev}");
    assert_eq!(ev["uuid"], "GPU-11111111-1111-1111-1111-111111111111", "{ev}");
    let f = j["hosts"][0]["findings"].as_array().unwrap();
    for rule in ["xid", "gpu_lost"] {
        let hit = f
            .iter()
            .find(|x| x["rule"] == rule && x["gpu"] == "1")
            .unwrap_or_else(|| panic!("{rule}: {f:?}"));
        assert_eq!(hit["severity"], "error", "{hit}");
    }
}

/// The findings that follow samples in time order (a hang's stretch, memory's trend, idle stretches,
/// host memory pressure) are the same whatever the row groups the file is cut into (each read apart,
/// in parts joined in order), and whether the data comes as one file or as two files one after the other.
#[test]
fn time_order_findings_do_not_depend_on_row_groups_or_files() {
    let dir = tempfile::tempdir().unwrap();
    let list = scenarios(dir.path());
    let cut = r#"
import sys, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1]); meta = t.schema.metadata
pq.write_table(t, sys.argv[2], row_group_size=997)
half = t.num_rows // 2 + 3
pq.write_table(t.slice(0, half), sys.argv[3]); pq.write_table(t.slice(half), sys.argv[4])
"#;
    let findings = |inputs: &[std::path::PathBuf]| -> Value {
        let out = gpumon()
            .args(["summarize", "--format", "json", "--tz", "UTC"])
            .args(inputs)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        j["hosts"][0]["findings"].clone()
    };
    for name in ["hang_nccl", "memory_growth", "checkpoint_stops", "host_memory_noswap", "hot_gpu"]
    {
        let s = list.iter().find(|s| s["name"] == name).unwrap();
        let whole = dir.path().join(s["input"].as_str().unwrap());
        let (groups, a, b) = (
            dir.path().join(format!("{name}.groups.parquet")),
            dir.path().join(format!("{name}.a.parquet")),
            dir.path().join(format!("{name}.b.parquet")),
        );
        let o = Command::new("python3")
            .args(["-c", cut])
            .args([&whole, &groups, &a, &b])
            .output()
            .expect("running python3");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let want = findings(&[whole]);
        let rules: Vec<&str> =
            want.as_array().unwrap().iter().map(|f| f["rule"].as_str().unwrap()).collect();
        assert!(!rules.is_empty(), "{name}: no findings");
        assert_eq!(findings(&[groups]), want, "{name}: row groups of 997 rows");
        assert_eq!(findings(&[a, b]), want, "{name}: two files");
    }
}

/// `--threshold` reaches the new rules: a hang shorter than `hang_min_s` is not one (and the GPU's
/// idle SMs under a busy utilization read as `sm_idle_under_busy` again), a lower `low_util` leaves a
/// GPU at 7.5 % alone, a higher `hot_gpu_c` a GPU 13 C above its siblings.
#[test]
fn thresholds_override_the_new_rules() {
    let dir = tempfile::tempdir().unwrap();
    scenarios(dir.path());
    let rules = |file: &str, threshold: &str| -> Vec<String> {
        let out = gpumon()
            .args(["summarize", "--format", "json", "--tz", "UTC", "--threshold", threshold])
            .arg(dir.path().join(file))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        j["hosts"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    };
    let hang = rules("hang_nccl.parquet", "hang_min_s=300");
    assert!(
        hang.contains(&"hang".to_string()) && !hang.contains(&"sm_idle_under_busy".to_string())
    );
    let short = rules("hang_nccl.parquet", "hang_min_s=3000");
    assert!(
        !short.contains(&"hang".to_string()) && short.contains(&"sm_idle_under_busy".to_string())
    );
    assert!(
        rules("low_util_parquet.parquet", "low_util=10").contains(&"low_utilization".to_string())
    );
    assert!(
        !rules("low_util_parquet.parquet", "low_util=5").contains(&"low_utilization".to_string())
    );
    assert!(rules("hot_gpu.parquet", "hot_gpu_c=10").contains(&"hot_gpu".to_string()));
    assert!(!rules("hot_gpu.parquet", "hot_gpu_c=15").contains(&"hot_gpu".to_string()));
    let has = |file: &str, th: &str, rule: &str| rules(file, th).contains(&rule.to_string());
    // GPU 2 runs at 1215 of 1980 MHz: 61 %.
    assert!(has("clocks_locked.parquet", "clocks_locked_pct=75", "clocks_locked"));
    assert!(!has("clocks_locked.parquet", "clocks_locked_pct=60", "clocks_locked"));
    // bob's server is beside the job in 93 % of its ticks on GPU 2.
    assert!(has("shared_gpu.parquet", "shared_pct=90", "shared_gpu"));
    assert!(!has("shared_gpu.parquet", "shared_pct=95", "shared_gpu"));
    // The server holds its model idle for about 1 h 50 min of 2 h.
    assert!(has("server_mostly_idle.parquet", "held_idle_min_s=6000", "idle_allocated"));
    assert!(!has("server_mostly_idle.parquet", "held_idle_min_s=7000", "idle_allocated"));
}

/// The evidence says what the issue needs: when a hang started and how long it lasted, the rate of
/// a memory leak and when it reaches the total, the period, length and share of recurring stops.
#[test]
fn new_findings_give_times_rates_and_periods() {
    let dir = tempfile::tempdir().unwrap();
    let list = scenarios(dir.path());
    let evidence = |name: &str, rule: &str, gpu: &str| -> String {
        let s = list.iter().find(|s| s["name"] == name).unwrap();
        let j = summary(dir.path(), s);
        let f = j["hosts"][0]["findings"].as_array().unwrap().clone();
        let hit = f.iter().find(|x| x["rule"] == rule && x["gpu"] == gpu);
        hit.unwrap_or_else(|| panic!("{name}: no {rule} on GPU {gpu}: {f:?}"))["evidence"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let e = evidence("hang_nccl", "hang", "2");
    assert!(
        e.starts_with(
            "from 2026-03-02 09:15:00 UTC, 15 min into the run, for 45 min until the end"
        ),
        "{e}"
    );
    let e = evidence("smi_hang", "hang", "5");
    // One stray sample at the start of the log counts in the stretch: its start is one sample early.
    assert!(e.starts_with("from 2026-03-02 12:59:45 UTC, 3.0 h into the run, for 40 min"), "{e}");
    assert!(e.contains("memory held"), "{e}");
    let e = evidence("memory_growth", "memory_growth", "0");
    assert!(
        e.starts_with("memory.used rises 102") && e.contains("reaches memory.total (81559 MiB) in"),
        "{e}"
    );
    let e = evidence("checkpoint_stops", "idle_stretches", "1");
    assert!(e.contains("3 min long on average, every 20 min") && e.contains("(12.5%)"), "{e}");
    let e = evidence("clocks_locked", "clocks_locked", "2");
    assert!(e.starts_with("clocks.sm.busy_mean 1215 MHz, 61% of clocks.max.sm 1980 MHz"), "{e}");
    let e = evidence("smi_clocks_locked", "clocks_locked", "0");
    assert!(
        e.contains("clock event reasons not recorded") && e.contains("of power.limit 700 W"),
        "{e}"
    );
    let e = evidence("shared_gpu", "shared_gpu", "2");
    assert!(e.contains("another job") && e.contains("bob `python serve.py`"), "{e}");
    let e = evidence("pcie_gen", "pcie_link", "1");
    assert!(e.contains("pcie.link.gen.current at most gen 3 during the run, of gen 5"), "{e}");
    // A server answering now and then: said so, and the fix is a server's.
    let s = list.iter().find(|s| s["name"] == "server_mostly_idle").unwrap();
    let j = summary(dir.path(), s);
    let f = j["hosts"][0]["findings"].as_array().unwrap();
    let f = f.iter().find(|x| x["rule"] == "idle_allocated").unwrap();
    let (e, fix) = (f["evidence"].as_str().unwrap(), f["fix"].as_str().unwrap());
    assert!(e.contains("may be a server keeping a model loaded between requests"), "{e}");
    assert!(e.contains("near the board's idle draw"), "{e}");
    assert!(fix.contains("scale the server to zero"), "{fix}");
}
