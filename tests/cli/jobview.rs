//! One job across many hosts: recorders of several fake hosts (one `gpumon record` per host, the
//! same job), then `summarize --by job` / `--job ID`: the straggler node and GPU, a hang on every
//! host named once, a node gone early, and the job's id from Slurm's and torchrun's environments.

use std::path::Path;
use std::process::{Child, Output};

use crate::common::*;

/// The launcher variables a test process might inherit: cleared so that each recorder sees only
/// the ones its test sets.
const LAUNCHER_VARS: [&str; 15] = [
    "SLURM_JOB_ID",
    "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_NODEID",
    "SLURM_PROCID",
    "SLURM_LOCALID",
    "SLURM_NTASKS",
    "TORCHELASTIC_RUN_ID",
    "GROUP_RANK",
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "JOB_NAME",
    "POD_NAMESPACE",
    "JOB_COMPLETION_INDEX",
];

/// One `[device]` section: an H100 at `util` % and `power` W, its SM clock and clock event reasons.
fn device(util: &str, power: &str, clock: u32, reasons: &str) -> String {
    format!(
        "[device]\nname = NVIDIA H100 80GB HBM3\nmemory.total = 81559\nmemory.used = 40000\n\
         utilization.gpu = {util}\npower.draw = {power}\npower.limit = 700\nclocks.sm = {clock}\n\
         clocks_event_reasons.active = {reasons}\n"
    )
}

/// Start the recorder of host `host` into `root/host={host}/run.parquet`: `ticks` ticks of 200 ms
/// of `scenario`, with `env` set (and no other launcher variable) and `args` added.
fn record_host(
    root: &Path,
    host: &str,
    scenario: &str,
    ticks: u32,
    env: &[(&str, &str)],
    args: &[&str],
) -> Child {
    let dir = root.join(format!(".scenario-{host}"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = gpumon_fake(&dir, scenario);
    for v in LAUNCHER_VARS {
        c.env_remove(v);
    }
    c.envs(env.iter().copied());
    c.args(["record", "-q", "-i", "200ms", "--count", &ticks.to_string(), "--host", host, "-o"])
        .arg(root.join("host={host}/run.parquet"))
        .args(args);
    c.spawn().unwrap()
}

fn wait_all(children: Vec<Child>) {
    for c in children {
        let o = c.wait_with_output().unwrap();
        ok(&o);
    }
}

fn summarize(root: &Path, args: &[&str]) -> Output {
    gpumon()
        .arg("summarize")
        .arg(root.join("tree"))
        .args(["-q", "--format", "json"])
        .args(args)
        .output()
        .unwrap()
}

/// The job findings of rule `rule`.
fn findings<'a>(job: &'a serde_json::Value, rule: &str) -> Vec<&'a serde_json::Value> {
    job["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == rule).collect()
}

/// Five hosts of two H100s each: node-c's two GPUs run a slower SM clock (thermal slowdown), node-b's
/// GPU 1 alone runs slower, node-e's recorder stops early. The job view names node-c once (with its
/// thermal throttling), node-b's GPU 1, and node-e as gone.
#[test]
fn job_view_finds_the_straggler_node_and_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let fast = device("95", "600", 1980, "0");
    let slow = device("95", "600", 1400, "0x20");
    let one_slow = format!("{fast}{}", device("95", "600", 1500, "0"));
    let hosts = [
        ("node-a", format!("{fast}{fast}"), 20),
        ("node-b", one_slow, 20),
        ("node-c", format!("{slow}{slow}"), 20),
        ("node-d", format!("{fast}{fast}"), 20),
        ("node-e", format!("{fast}{fast}"), 5),
    ];
    let tree = root.join("tree");
    let children = hosts
        .iter()
        .map(|(h, s, n)| record_host(&tree, h, s, *n, &[], &["--job-id", "train-42"]))
        .collect();
    wait_all(children);
    let o = summarize(root, &["--by", "job"]);
    ok(&o);
    let v = json(&o);
    assert_eq!(v["schema"], "gpumon.jobs/1");
    assert_eq!(v["rules"].as_array().unwrap().len(), 4, "{}", v["rules"]);
    let job = &v["jobs"][0];
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(
        (job["job"].as_str(), job["gpus"].as_u64(), job["hosts_count"].as_u64()),
        (Some("train-42"), Some(10), Some(5))
    );
    assert_eq!(job["sources"], serde_json::json!(["option"]));
    let s = findings(job, "straggler");
    let named: Vec<(String, Option<String>)> = s
        .iter()
        .map(|f| (f["host"].as_str().unwrap().to_string(), f["gpu"].as_str().map(str::to_string)))
        .collect();
    assert_eq!(
        named,
        [("node-b".to_string(), Some("1".to_string())), ("node-c".to_string(), None)],
        "{:#}",
        job["findings"]
    );
    let c = s.iter().find(|f| f["host"] == "node-c").unwrap();
    assert!(c["evidence"].as_str().unwrap().contains("thermal_throttling"), "{c}");
    let gone = findings(job, "node_gone");
    assert_eq!(gone.len(), 1, "{:#}", job["findings"]);
    assert_eq!(gone[0]["host"], "node-e");
    // The per-host table: each host with its GPUs, span and skew; node-e ends well before the others.
    let hosts = job["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 5);
    assert!(hosts.iter().all(|h| h["gpus"] == 2 && h["start_skew_s"].as_f64().unwrap() >= 0.0));
    let e = hosts.iter().find(|h| h["host"] == "node-e").unwrap();
    assert!(e["end_skew_s"].as_f64().unwrap() > 2.0, "{e}");
    assert!(job["all"]["utilization.gpu.mean"].as_f64().unwrap() > 90.0);
    // The text view says the same.
    let o =
        gpumon().arg("summarize").arg(&tree).args(["-q", "--job", "train-42"]).output().unwrap();
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("job train-42") && text.contains("straggler") && text.contains("node-c"),
        "{text}"
    );
    // The job's report: every GPU of the job on the heatmap, the stragglers' rows outlined, on the
    // static heatmap and (in Chromium) on the interactive one.
    let html = root.join("job.html");
    ok(&gpumon()
        .arg("report")
        .arg(&tree)
        .args(["-q", "--job", "train-42", "-o"])
        .arg(&html)
        .output()
        .unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches(r#"<g class="hm-row" "#).count(), 10, "a heatmap row per GPU");
    assert_eq!(
        page.matches(r#"data-straggler="1""#).count(),
        3,
        "node-b's GPU 1 and node-c's two GPUs"
    );
    let v = crate::report::drive(&html, &html, &["--job".as_ref()]);
    assert_eq!(v["stragglers"]["outlined"].as_array().map(Vec::len), Some(3), "{v}");
}

/// Three hosts whose GPUs all hang (utilization 100 % at idle power, after a busy start): one `hang`
/// finding for the job, naming every host, not one per host or GPU.
#[test]
fn hung_job_on_every_host_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let busy = "95, ".repeat(12);
    let idle = "600, ".repeat(12);
    let hung = device(&format!("{busy}100"), &format!("{idle}80"), 1980, "0");
    let tree = root.join("tree");
    let children = ["n1", "n2", "n3"]
        .iter()
        .map(|h| {
            record_host(&tree, h, &format!("{hung}{hung}"), 30, &[("SLURM_JOB_ID", "9001")], &[])
        })
        .collect();
    wait_all(children);
    let o = summarize(root, &["--job", "9001", "--threshold", "hang_min_s=2"]);
    ok(&o);
    let v = json(&o);
    let job = &v["jobs"][0];
    let h = findings(job, "hang");
    assert_eq!(h.len(), 1, "{:#}", job["findings"]);
    assert!(h[0]["host"].is_null(), "{}", h[0]);
    assert!(h[0]["evidence"].as_str().unwrap().contains("all 3 hosts"), "{}", h[0]);
    // Each host's own summary still holds its per-GPU hangs.
    let per_host = job["summary"]["hosts"].as_array().unwrap();
    assert_eq!(per_host.len(), 3);
}

/// The job's id from the environment a launcher sets on the recorder: Slurm on two hosts, torchrun
/// on two others, a Kubernetes Job's on one, none on another (left out); `--job` picks one (also in
/// markdown and from Python), an unknown id is exit 2.
#[test]
fn job_view_from_slurm_and_torchrun_environments() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let s = device("90", "500", 1980, "0");
    let tree = root.join("tree");
    let slurm = |node: &'static str| {
        vec![("SLURM_JOB_ID", "4242"), ("SLURM_NODEID", node), ("SLURM_PROCID", node)]
    };
    let torch = |node: &'static str| {
        vec![("TORCHELASTIC_RUN_ID", "tr-7"), ("GROUP_RANK", node), ("WORLD_SIZE", "2")]
    };
    // The Slurm hosts wrap a job that reports its work (the wrapped command sees the same variables).
    let bin = assert_cmd::cargo::cargo_bin("gpumon");
    let work = format!(
        "{0} progress samples=100; sleep 0.6; {0} progress samples=100; sleep 0.6",
        bin.display()
    );
    let wrap = ["--progress", "samples", "--", "sh", "-c", &work];
    let children = vec![
        record_host(&tree, "s0", &s, 50, &slurm("0"), &wrap),
        record_host(&tree, "s1", &s, 50, &slurm("1"), &wrap),
        record_host(&tree, "t0", &s, 6, &torch("0"), &[]),
        record_host(&tree, "t1", &s, 6, &torch("1"), &[]),
        record_host(&tree, "lone", &s, 6, &[], &[]),
        record_host(
            &tree,
            "k0",
            &s,
            6,
            &[("JOB_NAME", "train"), ("POD_NAMESPACE", "ml"), ("JOB_COMPLETION_INDEX", "0")],
            &[],
        ),
    ];
    wait_all(children);
    let o = summarize(root, &["--by", "job"]);
    ok(&o);
    let v = json(&o);
    let jobs = v["jobs"].as_array().unwrap();
    let mut ids: Vec<(&str, &str)> = jobs
        .iter()
        .map(|j| (j["job"].as_str().unwrap(), j["sources"][0].as_str().unwrap()))
        .collect();
    ids.sort();
    assert_eq!(ids, [("4242", "slurm"), ("ml/train", "kubernetes"), ("tr-7", "torchrun")]);
    assert_eq!(v["without_job"].as_array().unwrap().len(), 1, "{}", v["without_job"]);
    // The work of both Slurm nodes, added up.
    let slurm_job = jobs.iter().find(|j| j["job"] == "4242").unwrap();
    assert_eq!(slurm_job["progress"]["samples"]["total"], 400.0, "{}", slurm_job["progress"]);
    let one = &slurm_job["summary"]["hosts"][0];
    assert!(slurm_job["progress"]["samples"]["per_s"].as_f64().unwrap() > 0.0, "{one}");
    let o = summarize(root, &["--job", "tr-7"]);
    ok(&o);
    let v = json(&o);
    let job = &v["jobs"][0];
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    let nodes: Vec<(&str, &str)> = job["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["host"].as_str().unwrap(), h["node"].as_str().unwrap()))
        .collect();
    assert_eq!(nodes.len(), 2);
    assert!(nodes.contains(&("t0", "0")) && nodes.contains(&("t1", "1")), "{nodes:?}");
    // The same from Python: gpumon.jobs() lists both, gpumon.job() picks one.
    let py = "import json, sys, gpumon\n\
              jobs = gpumon.jobs(sys.argv[1])\n\
              one = gpumon.job(sys.argv[1], '4242')\n\
              print(json.dumps([sorted(j['job'] for j in jobs), sorted(h['host'] for h in one['hosts'])]))";
    let o = std::process::Command::new("python3")
        .args(["-c", py])
        .arg(&tree)
        .env("PYTHONPATH", repo_root().join("python"))
        .env("GPUMON_BIN", assert_cmd::cargo::cargo_bin("gpumon"))
        .output()
        .unwrap();
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v, serde_json::json!([["4242", "ml/train", "tr-7"], ["s0", "s1"]]));
    let o = gpumon()
        .arg("summarize")
        .arg(&tree)
        .args(["-q", "--job", "4242", "--format", "markdown"])
        .output()
        .unwrap();
    ok(&o);
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.starts_with("## job 4242 (slurm)") && md.contains("| s1 | 1 | 1 |"), "{md}");
    let o = summarize(root, &["--job", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--job \"nope\""));
    // A job id that cannot label a series is refused before anything is recorded.
    let o = gpumon()
        .args(["record", "--count", "1", "--job-id", " ", "-o"])
        .arg(root.join("x.csv"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--job-id"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A recorder beside the job (`--pid`), in an environment of no job, takes the job from the
/// environment of the process it follows.
#[test]
fn a_followed_process_names_its_job() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    let mut job = std::process::Command::new("sleep");
    for v in LAUNCHER_VARS {
        job.env_remove(v);
    }
    let mut job =
        job.arg("30").env("SLURM_JOB_ID", "5150").env("SLURM_NODEID", "3").spawn().unwrap();
    let pid = job.id().to_string();
    let s = device("90", "500", 1980, "0");
    let rec = record_host(&tree, "beside", &s, 4, &[], &["--pid", &pid]);
    wait_all(vec![rec]);
    job.kill().unwrap();
    job.wait().unwrap();
    let o = summarize(dir.path(), &["--job", "5150"]);
    ok(&o);
    let v = json(&o);
    assert_eq!(v["jobs"][0]["sources"], serde_json::json!(["slurm"]));
    assert_eq!(v["jobs"][0]["hosts"][0]["node"], "3");
}

/// `convert` keeps the job a recording names: the converted Parquet is the same job to `--by job`;
/// inputs of two jobs give an output that names none, with a warning.
#[test]
fn convert_keeps_the_job_id() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let scenario = device("50", "300", 1980, "0");
    let tree = root.join("tree");
    let a = record_host(&tree, "n1", &scenario, 3, &[], &["--job-id", "train-7"]);
    let b = record_host(&root.join("other"), "n2", &scenario, 3, &[], &["--job-id", "eval-1"]);
    wait_all(vec![a, b]);
    let run = tree.join("host=n1/run.parquet");
    let out = root.join("converted/run.parquet");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    ok(&gpumon().args(["convert", "-q"]).arg(&run).arg("-o").arg(&out).output().unwrap());
    let o = gpumon()
        .args(["summarize", "--by", "job", "--format", "json", "-q"])
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    let v = json(&o);
    assert_eq!(v["jobs"][0]["job"], "train-7", "{v:#}");
    let mixed = root.join("mixed.parquet");
    let o = gpumon()
        .arg("convert")
        .arg(&run)
        .arg(root.join("other/host=n2/run.parquet"))
        .arg("-o")
        .arg(&mixed)
        .output()
        .unwrap();
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("several jobs (eval-1, train-7)"), "{err}");
}
