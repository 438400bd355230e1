//! What the summaries show: routine clock events counted (never warned about, listed or marked),
//! a finding on many GPUs said once with its GPUs, errors before warnings before info, the GPM
//! activity columns, `--by phase` blocks that say what differs, per-phase findings in the report,
//! findings in `compare`.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::*;

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn run(args: &[&str], input: &Path) -> String {
    ok(&gpumon().args(args).arg(input).output().unwrap())
}

/// An 8-GPU gpumon CSV, 120 ticks at 1 s, busy (utilization 95 %, sm.active 80 %, tensor.active
/// 0.2 %: `no_tensor_cores` on every GPU); GPUs 0-3 near their memory (`oom_risk`), GPUs 4-7 far from
/// it (`batch_headroom`, info). With `phases`: ten idle unmarked ticks, then `warmup` (utilization
/// 40 %), `train`, `eval`. Beside it an events file: three clock changes per GPU, Xid 79 on GPU 3.
fn fixture(dir: &Path, phases: bool) -> PathBuf {
    let mut s = String::from(
        "timestamp,host,index,uuid,name,utilization.gpu,memory.used,memory.total,power.draw,sm.active,tensor.active,dram.active,cpu.util,cpu.util.max_core,mem.total,mem.used,swap.used",
    );
    s += if phases { ",phase\n" } else { "\n" };
    for t in 0..120 {
        let ts = format!("2026-01-05T10:{:02}:{:02}.000Z", t / 60, t % 60);
        let phase = match t {
            _ if !phases => "",
            0..10 => "",
            10..40 => "warmup",
            40..90 => "train",
            _ => "eval",
        };
        let (util, sm) = match (phases, t) {
            (true, 0..10) => (0, 0),
            (true, 10..40) => (40, 80),
            _ => (95, 80),
        };
        for g in 0..8 {
            let mem = if g < 4 { 79_000 + g * 100 } else { 20_000 };
            s += &format!(
                "{ts},node1,{g},GPU-{g},NVIDIA H100 80GB HBM3,{util},{mem},81559,{},{sm},0.2,30,20,50,515000,100000,0",
                600 + g
            );
            s += &if phases { format!(",{phase}\n") } else { "\n".to_string() };
        }
    }
    let path = dir.join("run.csv");
    std::fs::write(&path, s).unwrap();
    let mut ev = String::from("timestamp,host,index,uuid,kind,code,detail\n");
    for g in 0..8 {
        for k in 0..3 {
            ev += &format!(
                "2026-01-05T10:00:{:02}.000Z,node1,{g},GPU-{g},clock,,\n",
                12 + k * 10 + g
            );
        }
    }
    ev += "2026-01-05T10:01:05.000Z,node1,3,GPU-3,xid,79,\n";
    std::fs::write(dir.join("run.events.csv"), ev).unwrap();
    path
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn routine_clock_events_are_counted_never_warned_listed_or_marked() {
    // The recorder: clock changes are recorded but not warned about; an Xid still is.
    let dir = tempfile::tempdir().unwrap();
    let scenario = "init = ok\n[device]\nname = NVIDIA H100 80GB HBM3\nutilization.gpu = 90\nmemory.total = 81559\n\
                    memory.used = 1000\nevents = clock@1, clock@2, xid:79@3\n";
    let o = gpumon_fake(dir.path(), scenario)
        .args(["record", "-q", "-i", "200ms", "--count", "8", "-o"])
        .arg(dir.path().join("rec.csv"))
        .output()
        .unwrap();
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Xid 79"), "the Xid is warned about: {err}");
    assert!(!err.contains("clock"), "no warning for routine clock changes: {err}");
    let ev = std::fs::read_to_string(dir.path().join("rec.events.csv")).unwrap();
    assert_eq!(ev.matches(",clock,").count(), 2, "still recorded: {ev}");

    // The summaries: one line counting them, no event lines, a field per GPU in the JSON.
    let csv = fixture(dir.path(), false);
    let text = run(&["summarize", "-q"], &csv);
    assert!(text.contains("clock changes (routine, not faults): 3 on each of GPUs 0-7"), "{text}");
    assert!(
        !text.contains(": clock\n") && !text.contains("clock change\n"),
        "no clock event listed: {text}"
    );
    assert!(text.contains("NVML events (1, from the events file"), "{text}");
    let md = run(&["summarize", "-q", "--format", "markdown"], &csv);
    assert!(md.contains("- clock changes (routine, not faults): 3 on each of GPUs 0-7"), "{md}");
    assert!(!md.contains("| clock |"), "{md}");
    let j = json(&run(&["summarize", "-q", "--format", "json"], &csv));
    let events = j["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "only the Xid is listed: {events:?}");
    for g in j["hosts"][0]["gpus"].as_array().unwrap() {
        assert_eq!(g["routine_events"]["clock"], 3, "{g}");
    }
    // The report: one mark (the Xid) on the charts, no clock row in the events table.
    let html = dir.path().join("r.html");
    ok(&gpumon().args(["report", "-q"]).arg(&csv).arg("-o").arg(&html).output().unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    let marks = page.matches(r#"<g class="ev">"#).count();
    assert!(marks > 0, "the Xid is marked");
    assert_eq!(
        marks,
        page.matches(r#"<g class="ev"><title>Xid 79 at"#).count(),
        "only the Xid is marked"
    );
    assert!(!page.contains(r#"<td class="l">clock</td>"#));
    assert!(
        page.contains("clock changes (routine, not faults): 3 on each of GPUs 0-7"),
        "counted in the report too"
    );
}

#[test]
fn a_finding_on_every_gpu_is_said_once_with_its_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let csv = fixture(dir.path(), false);
    let text = run(&["summarize", "-q"], &csv);
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("no_tensor_cores")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].contains("no_tensor_cores - GPUs 0-7: mean sm.active 80.0%"), "{text}");
    assert!(
        text.contains("oom_risk - GPUs 0-3: memory.used peak 79000-79300 MiB = 96.9-97.2%"),
        "{text}"
    );
    assert_eq!(text.matches("fix: use the tensor cores").count(), 1, "{text}");
    assert!(text.lines().count() < 70, "{} lines:\n{text}", text.lines().count());
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "wider than 80 columns: {l:?}");
    }
    let md = run(&["summarize", "-q", "--format", "markdown"], &csv);
    assert_eq!(md.matches("**no_tensor_cores**").count(), 1, "{md}");
    assert!(md.contains("**no_tensor_cores** (warning): GPUs 0-7: "), "{md}");
    let j = json(&run(&["summarize", "-q", "--format", "json"], &csv));
    let h = &j["hosts"][0];
    let per_gpu =
        h["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "no_tensor_cores").count();
    assert_eq!(per_gpu, 8, "the JSON keeps one finding per GPU");
    let g = h["finding_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["rule"] == "no_tensor_cores")
        .unwrap();
    assert_eq!(g["gpus"].as_array().unwrap().len(), 8);
}

/// Index of the first line of `text` holding `needle`.
fn at(text: &str, needle: &str) -> usize {
    text.find(needle).unwrap_or_else(|| panic!("{needle:?} not in:\n{text}"))
}

#[test]
fn findings_are_listed_errors_then_warnings_then_info_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let csv = fixture(dir.path(), false);
    let text = run(&["summarize", "-q"], &csv);
    let (e, w, i) = (
        at(&text, "[error] xid"),
        at(&text, "[warning] no_tensor_cores"),
        at(&text, "[info] batch_headroom"),
    );
    assert!(e < w && w < i, "{text}");
    let md = run(&["summarize", "-q", "--format", "markdown"], &csv);
    let (e, w, i) = (at(&md, "**xid**"), at(&md, "**oom_risk**"), at(&md, "**batch_headroom**"));
    assert!(e < w && w < i, "{md}");
    let j = json(&run(&["summarize", "-q", "--format", "json"], &csv));
    let rank = |s: &str| ["error", "warning", "info"].iter().position(|x| *x == s).unwrap();
    let sev: Vec<usize> = j["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| rank(f["severity"].as_str().unwrap()))
        .collect();
    assert!(sev.windows(2).all(|w| w[0] <= w[1]) && sev.len() > 3, "{sev:?}");
    let html = dir.path().join("r.html");
    ok(&gpumon().args(["report", "-q"]).arg(&csv).arg("-o").arg(&html).output().unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    let (e, w, i) = (
        at(&page, r#"data-rule="xid""#),
        at(&page, r#"data-rule="oom_risk""#),
        at(&page, r#"data-rule="batch_headroom""#),
    );
    assert!(e < w && w < i);
}

#[test]
fn text_and_markdown_show_the_gpm_activity() {
    let dir = tempfile::tempdir().unwrap();
    let csv = fixture(dir.path(), false);
    let text = run(&["summarize", "-q"], &csv);
    assert!(
        text.contains("sm.active %")
            && text.contains("tensor.active %")
            && text.contains("dram.active %"),
        "{text}"
    );
    let row =
        text.lines().find(|l| l.trim_start().starts_with("7 ") && l.contains("80.0")).unwrap_or("");
    assert!(row.contains("80.0") && row.contains("0.2") && row.contains("30.0"), "{text}");
    let md = run(&["summarize", "-q", "--format", "markdown"], &csv);
    assert!(
        md.contains("| sm.active mean % | tensor.active mean % | dram.active mean % |"),
        "{md}"
    );
    assert!(md.contains("| 80.0 | 0.2 | 30.0 |"), "{md}");
}

#[test]
fn by_phase_says_what_differs_and_unmarked_rows_are_context() {
    let dir = tempfile::tempdir().unwrap();
    let csv = fixture(dir.path(), true);
    let whole = run(&["summarize", "-q"], &csv);
    let text = run(&["summarize", "-q", "--by", "phase"], &csv);
    let phases = &text[at(&text, "\nPhases: ")..];
    assert_eq!(
        phases.matches("utilization %").count(),
        0,
        "no GPU table again per phase: {phases}"
    );
    assert!(phases.contains("== Phase train:") && phases.contains("== Phase eval:"), "{phases}");
    assert!(phases.contains("as in the whole run: "), "{phases}");
    assert!(
        text.lines().count() < whole.lines().count() + 50,
        "{} lines:\n{text}",
        text.lines().count()
    );
    // The idle unmarked ticks would make every GPU `unused_gpu` if they were judged.
    assert!(!text.contains("unused_gpu"), "{text}");
    let j = json(&run(&["summarize", "-q", "--by", "phase", "--format", "json"], &csv));
    let unmarked = j["phases"].as_array().unwrap().iter().find(|p| p["phase"].is_null()).unwrap();
    assert_eq!(unmarked["hosts"][0]["findings"], serde_json::json!([]));
    assert!(unmarked["hosts"][0]["gpus"][0]["stats"]["coverage_pct"].is_null());
    // The Xid belongs to the phase it happened in.
    let train = j["phases"].as_array().unwrap().iter().find(|p| p["phase"] == "train").unwrap();
    assert!(
        train["hosts"][0]["findings"].as_array().unwrap().iter().any(|f| f["rule"] == "xid"),
        "{train}"
    );

    // The report shows each phase's findings beside it.
    let html = dir.path().join("r.html");
    ok(&gpumon().args(["report", "-q"]).arg(&csv).arg("-o").arg(&html).output().unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    let start = at(&page, r#"<li data-phase="train" "#);
    let block = &page[start..start + page[start..].find(r#"<li data-phase="eval" "#).unwrap()];
    assert!(
        block.contains(r#"data-rule="xid""#) && block.contains(r#"data-rule="oom_risk""#),
        "{block}"
    );

    // compare names each run's (and phase's) findings.
    let a = format!("{}@warmup", csv.display());
    let b = format!("{}@train", csv.display());
    let o = ok(&gpumon().args(["compare", "-q", &a, &b]).output().unwrap());
    assert!(o.contains("Findings") && o.contains("@train: [error] xid (GPU 3)"), "{o}");
    let o = ok(&gpumon().args(["compare", "-q", "--format", "json", &a, &b]).output().unwrap());
    let j = json(&o);
    assert_eq!(j["findings"][&b][0]["rule"], "xid", "{o}");
}

#[test]
fn the_python_module_summarizes_by_phase_compares_and_overwrites_a_whole_set() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), true);
    let o = std::process::Command::new("python3")
        .arg(repo_root().join("tests/py/summary_module.py"))
        .arg(dir.path())
        .env("PYTHONPATH", repo_root().join("python"))
        .env("GPUMON_BIN", assert_cmd::cargo::cargo_bin("gpumon"))
        .output()
        .unwrap();
    let out = ok(&o);
    let v = json(out.lines().last().unwrap_or_default());
    assert_eq!(v["removed"], 7, "{v}");
}
