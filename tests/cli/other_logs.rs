//! nvidia-smi logs other people's scripts write, through the real `summarize`: a plain header over
//! padded cells, a header of the writer's own names, headerless rows after `date +%s`, the
//! timestamps people write, an index that repeats within a timestamp, advice that names the right
//! option, and a directory of such logs read as a fleet with how each was read.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::*;

const EPOCH: u64 = 1_735_725_600; // 2025-01-01 10:00:00 UTC

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn summarize(inputs: &[&Path], args: &[&str]) -> Output {
    gpumon()
        .arg("summarize")
        .args(inputs)
        .args(["--format", "json", "--tz", "UTC"])
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A statistic of GPU `gpu` of the first host.
fn gpu_stat(j: &Value, gpu: usize, stat: &str) -> Value {
    j["hosts"][0]["gpus"][gpu]["stats"][stat].clone()
}

/// Rows of three ticks of two GPUs, `utilization.gpu` 10 * gpu + tick, `memory.used` 1000 + gpu.
fn rows(ts: impl Fn(u64) -> String, sep: &str) -> String {
    let mut s = String::new();
    for t in 0..3 {
        for g in 0..2 {
            s += &format!("{}{sep}{g}{sep}{}{sep}{}\n", ts(t), 10 * g + t, 1000 + g);
        }
    }
    s
}

#[test]
fn a_plain_header_over_padded_cells_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let header = "timestamp,index,utilization.gpu,memory.used\n";
    // nvidia-smi's own times, and the RFC 3339 times of a Python logger, under `echo`'s header.
    let smi = rows(|t| format!("2025/01/01 10:00:0{t}.000"), ", ");
    let iso = rows(|t| format!("2025-01-01T10:00:0{t}Z"), ", ");
    for (name, body) in [("smi.csv", smi), ("iso.csv", iso)] {
        let p = write(dir.path(), name, &format!("{header}{body}"));
        let o = summarize(&[&p], &[]);
        ok(&o);
        assert!(warnings(&o.stderr).is_empty(), "{name}: {}", stderr(&o));
        let j = json(&o);
        assert_eq!(gpu_stat(&j, 1, "utilization.gpu.mean"), 11.0, "{name}");
        assert_eq!(gpu_stat(&j, 1, "memory.used.max"), 1001, "{name}");
    }
}

#[test]
fn a_header_of_own_names_is_refused_by_name_or_named_with_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = "timestamp,gpu_index,temperature_C,utilization_gpu_percent,power_W\n".to_string();
    for t in 0..3 {
        log += &format!("2025/01/01 10:00:0{t}.000, 0, 40, {}, {}.5\n", 50 + t, 100 + t);
    }
    let p = write(dir.path(), "own.csv", &log);
    let o = summarize(&[&p], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    for want in
        ["own.csv", "`temperature_C`", "`utilization_gpu_percent`", "`power_W`", "--columns"]
    {
        assert!(e.contains(want), "{want} not in {e}");
    }
    let cols = "--columns=timestamp,index,temperature.gpu,utilization.gpu,power.draw";
    let o = summarize(&[&p], &[cols]);
    ok(&o);
    let j = json(&o);
    assert_eq!(gpu_stat(&j, 0, "utilization.gpu.mean"), 51.0);
    assert_eq!(gpu_stat(&j, 0, "power.draw.max"), 102.5);
    // `_` skips a column; a known name left is read, the unknown one named in a warning.
    let o = summarize(&[&p], &["--query-gpu=timestamp,_,temperature_C,utilization.gpu,_"]);
    ok(&o);
    assert!(
        warnings(&o.stderr).iter().any(|w| w.contains("`temperature_C`") && w.contains("ignored")),
        "{}",
        stderr(&o)
    );
    assert_eq!(gpu_stat(&json(&o), 0, "utilization.gpu.mean"), 51.0);
}

#[test]
fn headerless_plain_commas_are_read_with_columns() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "epoch.csv", &rows(|t| (EPOCH + t).to_string(), ","));
    let o = summarize(&[&p], &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("no header line") && e.contains("--query-gpu"), "{e}");
    let o = summarize(&[&p], &["--columns", "timestamp,index,utilization.gpu,memory.used"]);
    ok(&o);
    let j = json(&o);
    assert_eq!(j["hosts"][0]["gpus"].as_array().unwrap().len(), 2);
    assert_eq!(gpu_stat(&j, 1, "utilization.gpu.mean"), 11.0);
    assert_eq!(j["start"], "2025-01-01T10:00:00.000Z");
    // Any spacing around the delimiters.
    let odd = rows(|t| format!("{} ", EPOCH + t), " ,  ");
    let p = write(dir.path(), "odd.csv", &odd);
    let o = summarize(&[&p], &["--columns", "timestamp,index,utilization.gpu,memory.used"]);
    ok(&o);
    assert_eq!(gpu_stat(&json(&o), 1, "utilization.gpu.mean"), 11.0);
}

/// A timestamp of tick `t` in one writer's format.
type Stamp = fn(u64) -> String;

#[test]
fn the_timestamps_people_write_are_read_and_a_column_of_none_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let stamps: [(&str, Stamp); 6] = [
        ("epoch", |t| (EPOCH + t).to_string()),
        ("epoch_frac", |t| format!("{}.000123", EPOCH + t)),
        ("epoch_ms", |t| format!("{}000", EPOCH + t)),
        ("iso_z", |t| format!("2025-01-01T10:00:0{t}.000Z")),
        ("iso_offset", |t| format!("2025-01-01T12:00:0{t}+02:00")),
        ("date", |t| format!("Wed Jan  1 10:00:0{t} UTC 2025")),
    ];
    for (name, ts) in stamps {
        let p = write(
            dir.path(),
            &format!("{name}.csv"),
            &format!("timestamp, index, utilization.gpu, memory.used\n{}", rows(ts, ", ")),
        );
        let o = summarize(&[&p], &[]);
        ok(&o);
        let j = json(&o);
        assert_eq!(j["start"], "2025-01-01T10:00:00.000Z", "{name}");
        assert_eq!(gpu_stat(&j, 0, "utilization.gpu.mean"), 1.0, "{name}");
    }
    let p = write(dir.path(), "bad.csv", "when, index, utilization.gpu\nyesterday, 0, 5\n");
    let o = summarize(&[&p], &["--columns", "timestamp,index,utilization.gpu"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("timestamp cell is not a timestamp") && e.contains("`yesterday`"), "{e}");
}

#[test]
fn an_index_repeating_within_a_timestamp_is_said_and_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = "timestamp,index,utilization.gpu\n".to_string();
    for t in 0..5 {
        for g in 0..8 {
            log += &format!("{}, 0, {}\n", EPOCH + t, 10 * g + t);
        }
    }
    let p = write(dir.path(), "eight.csv", &log);
    let o = summarize(&[&p], &[]);
    ok(&o);
    let w = warnings(&o.stderr);
    assert!(
        w.iter().any(|l| l.contains("column index") && l.contains(&format!("twice at {EPOCH}"))),
        "{w:?}"
    );
    let j = json(&o);
    assert_eq!(j["hosts"][0]["gpus"].as_array().unwrap().len(), 8);
    assert_eq!(gpu_stat(&j, 7, "utilization.gpu.mean"), 72.0);
}

#[test]
fn advice_names_the_options_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    // Two GPUs without an index column whose rows cannot be told apart: read as one, with advice.
    let mut log = "timestamp, utilization.gpu\n".to_string();
    for t in 0..4 {
        log += &format!("2025/01/01 10:00:0{t}.000, 5\n");
    }
    let p = write(dir.path(), "flat.csv", &log);
    let o = summarize(&[&p], &[]);
    ok(&o);
    let notes = json(&o)["inputs"][0]["notes"].to_string();
    assert!(notes.contains("--interleaved-gpus N"), "{notes}");
    assert!(!notes.contains("--gpus "), "{notes}");
    // The advised option works.
    ok(&summarize(&[&p], &["--interleaved-gpus", "2"]));
    // A row of another width under --columns: the warning speaks of --columns, not a header.
    let p = write(
        dir.path(),
        "cols.csv",
        &format!("{EPOCH}, 0, 5\n{}, 0, 6\n{}, 0\n", EPOCH + 1, EPOCH + 2),
    );
    let o = summarize(&[&p], &["--columns", "timestamp,index,utilization.gpu"]);
    ok(&o);
    let w = warnings(&o.stderr).join("\n");
    assert!(w.contains("the 3 columns --columns names") && !w.contains("of the header"), "{w}");
}

#[test]
fn a_directory_of_other_writers_logs_is_a_fleet_that_says_how_each_was_read() {
    let dir = tempfile::tempdir().unwrap();
    let header = "timestamp,index,utilization.gpu,memory.used\n";
    write(dir.path(), "node1.csv", &format!("{header}{}", rows(|t| (EPOCH + t).to_string(), ", ")));
    write(
        dir.path(),
        "node2.csv",
        &format!(
            "timestamp,gpu_index,utilization.gpu,fan_rpm\n{}",
            rows(|t| format!("2025/01/01 10:00:0{t}.000"), ", ")
        ),
    );
    let o = summarize(&[dir.path()], &[]);
    ok(&o);
    let j = json(&o);
    let hosts: Vec<&str> =
        j["hosts"].as_array().unwrap().iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["node1", "node2"]);
    let gpus: usize =
        j["hosts"].as_array().unwrap().iter().map(|h| h["gpus"].as_array().unwrap().len()).sum();
    assert_eq!(gpus, 4);
    let node2 = j["inputs"].as_array().unwrap().iter().find(|i| i["host"] == "node2").unwrap();
    assert_eq!(node2["ignored_columns"], serde_json::json!(["fan_rpm"]));
    assert!(
        node2["notes"][0]
            .as_str()
            .unwrap()
            .contains("2 GPU(s), told apart by the gpu_index column")
    );
    // The text says per input which columns were used and ignored, and how the GPUs were found.
    let o = gpumon().arg("summarize").arg(dir.path()).args(["--tz", "UTC"]).output().unwrap();
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).replace("\n      ", " ");
    assert!(
        text.contains(
            "node2.csv read as: columns timestamp, index, utilization.gpu; ignored fan_rpm"
        ),
        "{text}"
    );
    assert!(text.contains("told apart by the index column"), "{text}");

    // One file of a fleet, hosts from a `hostname` column.
    let fleet = tempfile::tempdir().unwrap();
    let mut log = "hostname,timestamp,index,utilization.gpu\n".to_string();
    // Both hosts sampled in the same second, with the same index: not a repeated index.
    for t in 0..3 {
        for h in ["gpu-a", "gpu-b"] {
            log += &format!("{h},{},0,{}\n", EPOCH + t, if h == "gpu-a" { 10 } else { 90 });
        }
    }
    write(fleet.path(), "all.csv", &log);
    let o = summarize(&[fleet.path()], &[]);
    ok(&o);
    assert!(warnings(&o.stderr).is_empty(), "{}", stderr(&o));
    let j = json(&o);
    let hosts: Vec<(&str, f64)> = j["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].as_str().unwrap(),
                h["gpus"][0]["stats"]["utilization.gpu.mean"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(hosts, [("gpu-a", 10.0), ("gpu-b", 90.0)]);
}

#[test]
fn a_pdsh_log_of_many_hosts_is_a_fleet_and_other_outputs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    // `pdsh -w node[1-2] nvidia-smi --query-gpu=... --format=csv -l 1`: each host's header and rows,
    // every line behind `host: `.
    let mut text = String::new();
    for host in ["node1", "gpu-07.cluster"] {
        text += &format!("{host}: timestamp, index, utilization.gpu [%], memory.used [MiB]\n");
    }
    for t in 0..3 {
        for (h, host) in ["node1", "gpu-07.cluster"].iter().enumerate() {
            for g in 0..2 {
                text += &format!(
                    "{host}: 2025/01/01 10:00:0{t}.{h}{g}0, {g}, {} %, {} MiB\n",
                    10 * h + g + t,
                    1000 + g
                );
            }
        }
    }
    let log = write(dir.path(), "pdsh.log", &text);
    let o = summarize(&[&log], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let hosts: Vec<&str> =
        j["hosts"].as_array().unwrap().iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["node1", "gpu-07.cluster"], "{j}");
    assert_eq!(j["hosts"][0]["gpus"].as_array().unwrap().len(), 2);
    let max = |h: usize, g: usize| j["hosts"][h]["gpus"][g]["stats"]["utilization.gpu.max"].clone();
    assert_eq!(max(0, 1), 3.0, "node1 GPU 1: 1, 2, 3");
    assert_eq!(max(1, 0), 12.0, "gpu-07 GPU 0: 10, 11, 12");
    // Without its header (csv,noheader), the --query-gpu list names nvidia-smi's cells alone.
    let bare: String =
        text.lines().filter(|l| !l.contains("timestamp")).map(|l| format!("{l}\n")).collect();
    let log = write(dir.path(), "bare.log", &bare);
    let o = summarize(&[&log], &["--columns", "timestamp,index,utilization.gpu,memory.used"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["hosts"].as_array().unwrap().len(), 2);
    // nvidia-smi's other outputs are named, with the command that logs what gpumon reads.
    let dmon = write(
        dir.path(),
        "dmon.log",
        "# gpu    pwr  gtemp  mtemp     sm    mem\n# Idx      W      C      C      %      %\n    0     75     40      -     10      2\n",
    );
    let o = summarize(&[&dmon], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("`nvidia-smi dmon` output") && stderr(&o).contains("--query-gpu"),
        "{}",
        stderr(&o)
    );
    // With its date and time (`-o DT`), dmon's samples are read: sm is utilization.gpu, fb memory.used.
    let dated = write(
        dir.path(),
        "dmon-dt.log",
        "#Date       Time        gpu    pwr  gtemp     sm    mem     fb\n\
         #YYYYMMDD   HH:MM:SS    Idx      W      C      %      %     MB\n \
         20250101   10:00:00      0    300     60     90     40  30000\n \
         20250101   10:00:00      1    100     40     10      5   1000\n \
         20250101   10:00:01      0    310     61     96     41  31000\n \
         20250101   10:00:01      1    110     41     20      6   1000\n",
    );
    let o = summarize(&[&dated], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["start"], "2025-01-01T10:00:00.000Z", "{}", j["start"]);
    let gpus = j["hosts"][0]["gpus"].as_array().unwrap();
    let stat = |g: usize, k: &str| gpus[g]["stats"][k].as_f64();
    assert_eq!(
        (stat(0, "utilization.gpu.mean"), stat(1, "utilization.gpu.mean")),
        (Some(93.0), Some(15.0))
    );
    assert_eq!(stat(0, "memory.used.max"), Some(31000.0));
    // nvidia-smi's own table, logged in a loop: each GPU's two lines are a row, dated by the table.
    let sample = |t: u32, util: u32| {
        format!(
            "Wed Jan  1 10:00:0{t} 2025\n\
             +-----------------------------------------------------------------------------+\n\
             | NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n\
             |===============================+======================+======================|\n\
             |   0  Tesla T4            Off  | 00000000:00:1E.0 Off |                    0 |\n\
             | N/A   40C    P0    30W /  70W |   2000MiB / 15109MiB |     {util}%      Default |\n\
             +-------------------------------+----------------------+----------------------+\n"
        )
    };
    let table = write(dir.path(), "smi-table.log", &(sample(0, 60) + &sample(1, 80)));
    let o = summarize(&[&table], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let g = &j["hosts"][0]["gpus"][0];
    assert_eq!(g["name"], "Tesla T4", "{g}");
    assert_eq!(g["stats"]["utilization.gpu.mean"].as_f64(), Some(70.0), "{g}");
    assert_eq!(g["stats"]["memory.total"].as_f64(), Some(15109.0), "{g}");
}
