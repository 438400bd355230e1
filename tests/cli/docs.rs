//! The commands of README.md and docs/*.md run as written, against the fake NVML, in a directory
//! holding the files they name: each gpumon command of every shell block exits as documented, and
//! where the docs show its output, the output has that shape (the same kinds of lines, at the same
//! indentation, in a similar number). What cannot run here is skipped by an explicit list, each
//! with its reason, and counted; what must change to run here (a minute's interval, an absolute
//! directory, a Python training script) is rewritten by an explicit list too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// Commands that cannot run in a test, by a piece of their text, with the reason.
const SKIPPED: &[(&str, &str)] = &[
    ("--listen", "serves an HTTP endpoint until stopped (tests/cli/prom.rs runs it)"),
    ("--pid ", "follows a running process (tests/cli/job.rs follows one)"),
    ("gpumon mark ", "talks to a running recorder (the wrapped jobs here run it)"),
    ("gpumon progress ", "talks to a running recorder (the wrapped jobs here run it)"),
];

/// `gpumon watch` without `--once` redraws until a key is pressed.
fn interactive(cmd: &str) -> bool {
    cmd.starts_with("gpumon watch") && !cmd.contains("--once")
}

/// One gpumon command of the docs, and the output they show under it (None: none shown).
#[derive(Debug)]
struct DocCommand {
    file: String,
    line: usize,
    cmd: String,
    shown: Option<Vec<String>>,
}

/// The command text without its trailing comment (`  # ...` outside quotes).
fn strip_comment(l: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let b = l.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'#' if !single && !double && i > 0 && b[i - 1] == b' ' => return l[..i].trim_end(),
            _ => {}
        }
    }
    l.trim_end()
}

/// Every gpumon command in the shell blocks of `text`: session blocks (`$ cmd` then its output)
/// and plain command lists; `\` continuations joined.
fn commands(file: &str, text: &str) -> Vec<DocCommand> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let fence = lines[i].trim_start();
        let lang = fence.strip_prefix("```").map(str::trim);
        if !matches!(lang, Some("" | "sh" | "bash" | "console" | "shell")) {
            i += 1;
            continue;
        }
        let start = i + 1;
        let end = (start..lines.len()).find(|&k| lines[k].trim_start().starts_with("```"));
        let end = end.unwrap_or(lines.len());
        let block = &lines[start..end];
        let session = block.iter().any(|l| l.starts_with("$ "));
        let mut k = 0;
        while k < block.len() {
            let raw = if session {
                match block[k].strip_prefix("$ ") {
                    Some(c) => c,
                    None => {
                        k += 1;
                        continue;
                    }
                }
            } else {
                block[k]
            };
            let at = start + k + 1;
            let mut cmd = strip_comment(raw).to_string();
            while cmd.ends_with('\\') && k + 1 < block.len() {
                cmd.pop();
                k += 1;
                cmd.push(' ');
                cmd.push_str(strip_comment(block[k].trim_start()));
            }
            k += 1;
            let shown = session.then(|| {
                let n =
                    block[k..].iter().position(|l| l.starts_with("$ ")).unwrap_or(block.len() - k);
                block[k..k + n].iter().map(|l| l.to_string()).collect::<Vec<_>>()
            });
            let cmd = cmd.split_whitespace().collect::<Vec<_>>().join(" ");
            let cmd = cmd.strip_prefix("nohup ").unwrap_or(&cmd).trim_end_matches(" &").to_string();
            // `NAME=value gpumon ...`: the shell sets the variable.
            let bare = cmd
                .split(' ')
                .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                .collect::<Vec<_>>()
                .join(" ");
            if bare.starts_with("gpumon ") || bare == "gpumon" {
                out.push(DocCommand { file: file.to_string(), line: at, cmd, shown });
            }
        }
        i = end + 1;
    }
    out
}

/// The rewrites that make a documented command run here, in order; each says what it changes.
fn rewrite(cmd: &str, shared: &Path) -> String {
    let mut words: Vec<String> = cmd.split(' ').map(str::to_string).collect();
    // An interval of seconds or minutes: 100 ms, so the test takes a second.
    for k in 1..words.len() {
        if (words[k - 1] == "-i" || words[k - 1] == "-l") && !words[k].ends_with("ms") {
            words[k] = "100ms".into();
        }
    }
    let mut c = words.join(" ");
    // Absolute directories of a cluster: relative ones here.
    for dir in ["/runs/", "/shared/", "/data/"] {
        c = c.replace(&format!(" {dir}"), &format!(" {}", &dir[1..]));
        c = c.replace(&format!("={dir}"), &format!("={}", &dir[1..]));
    }
    c = c.replace("-o /", "-o ");
    c = c.replace("../shared/data", &shared.display().to_string());
    // A training script: the job of this directory (marks its phases, reports its work).
    for script in
        ["python train.py --lr 3e-4", "python train.py", "python sweep.py", "torchrun train.py"]
    {
        c = c.replace(script, "python3 job.py");
    }
    // A wrapped shell job's pauses: half a second.
    for k in 1..=9 {
        c = c
            .replace(&format!("sleep {k};"), "sleep 0.5;")
            .replace(&format!("sleep {k}'"), "sleep 0.5'");
    }
    // A recording without an end: one second.
    if c.starts_with("gpumon record") && !c.contains(" -- ") && !c.contains("--count") {
        c.push_str(" --duration 1s");
    }
    // A recording starts a new set, as in the docs' story (not a piece beside this directory's).
    if c.starts_with("gpumon record") {
        let out = c.split(' ').skip_while(|w| *w != "-o").nth(1).map(str::to_string);
        if let Some((stem, ext)) = out.as_deref().and_then(|o| o.rsplit_once('.')) {
            c = format!("rm -f {stem}.{ext} {stem}.*.{ext}; {c}");
        }
    }
    c
}

/// The kind of an output line: its indentation and first word, digits made alike, a `[severity]`
/// as `[]`.
fn shape(l: &str) -> String {
    let indent = indent(l);
    let word = l.split_whitespace().next().unwrap_or("");
    let word: String = word.chars().map(|c| if c.is_ascii_digit() { '9' } else { c }).collect();
    let word = if word.starts_with('[') && word.ends_with(']') { "[]".to_string() } else { word };
    format!("{indent}:{word}")
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// Lines that depend on the findings, and so on the scenario the docs' figures came from.
const FINDING_LINES: &[&str] = &[
    "[",
    "fix:",
    "Findings:",
    "No findings.",
    "as in the whole run",
    "not in this phase",
    "only in this phase",
];

/// The lines whose shape is compared: not blank, not a warning, not a finding, not the continuation of a wrapped
/// line (4 more spaces than the line before) nor deeper than 5 spaces (lists and wrapped text,
/// whose breaks depend on the figures).
fn compared<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut before: Option<usize> = None;
    for l in lines.filter(|l| !l.trim().is_empty() && !l.contains("warning:")) {
        let i = indent(l);
        let finding = FINDING_LINES.iter().any(|f| l.trim_start().starts_with(f));
        if i <= 5 && before.is_none_or(|b| i != b + 4) && !finding {
            out.push(l);
        }
        before = Some(i);
    }
    out
}

/// Where the shown output and the real one differ in shape.
fn shape_differences(shown: &[String], got: &str) -> Vec<String> {
    let elided = shown.iter().any(|l| l.trim() == "...");
    let shown = compared(shown.iter().map(String::as_str));
    let got = compared(got.lines());
    let have: BTreeSet<String> = got.iter().map(|l| shape(l)).collect();
    let want: BTreeSet<String> =
        shown.iter().filter(|l| l.trim() != "...").map(|l| shape(l)).collect();
    let mut d: Vec<String> =
        want.difference(&have).map(|s| format!("shown, not printed: {s}")).collect();
    // Figures that do not depend on the machine: the size of the catalogue doctor counts against.
    for l in shown
        .iter()
        .filter_map(|l| l.split(" GPU fields readable").next().filter(|p| p.len() < l.len()))
    {
        let total = l.rsplit(' ').next().unwrap_or("");
        if !got.iter().any(|g| g.contains(&format!(" of {total} GPU fields readable"))) {
            d.push(format!("shown: {} GPU fields in all; printed: another number", total));
        }
    }
    if !elided {
        // Every top-level line printed is shown (a new kind of line is documented).
        let top = |s: &&String| s.starts_with("0:");
        d.extend(have.difference(&want).filter(top).map(|s| format!("printed, not shown: {s}")));
        let (a, b) = (shown.len() as f64, got.len() as f64);
        if a < b * 0.6 || a > b * 1.6 {
            d.push(format!("{} lines shown, {} printed", shown.len(), got.len()));
        }
    }
    d
}

/// A directory holding every file the docs' commands name, recorded through the fake NVML.
fn world(dir: &Path) {
    let bin = assert_cmd::cargo::cargo_bin("gpumon");
    std::fs::write(
        dir.join("job.py"),
        "import subprocess, time\n\
         for p in ('bs=32', 'bs=64', 'bs=128'):\n\
         \x20   subprocess.run(['gpumon', 'mark', p])\n\
         \x20   subprocess.run(['gpumon', 'progress', 'samples=512'])\n\
         \x20   time.sleep(0.4)\n",
    )
    .unwrap();
    let sweep = gpumon_fake(dir, TWO_GPUS)
        .current_dir(dir)
        .env("PATH", path_with(&bin))
        .args(["record", "-q", "-i", "100ms", "--progress", "samples", "--job-id", "4242"])
        .args(["-o", "sweep.parquet"])
        .args(["--", "python3", "job.py"])
        .output()
        .unwrap();
    ok(&sweep);
    for copy in ["run.parquet", "base.parquet", "new.parquet"] {
        std::fs::copy(dir.join("sweep.parquet"), dir.join(copy)).unwrap();
    }
    for d in ["runs/a", "runs/b", "runs/c", "shared/gpumon/host=node-007/date=2026-01-20"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
        std::fs::copy(dir.join("sweep.parquet"), dir.join(d).join("run.parquet")).unwrap();
    }
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    std::fs::create_dir_all(dir.join("data/gpumon")).unwrap();
    std::fs::copy(dir.join("sweep.parquet"), dir.join("runs/train.parquet")).unwrap();
    // An nvidia-smi log of 40 minutes, one row per 10 s (the docs cut it at 5, 10 and 20 minutes).
    let mut log = String::from("timestamp, name, utilization.gpu [%], memory.used [MiB]\n");
    for k in 0..240 {
        let (m, s) = (k * 10 / 60, k * 10 % 60);
        log.push_str(&format!(
            "2026/01/05 10:{m:02}:{s:02}.000, NVIDIA H100 80GB HBM3, {} %, 17000 MiB\n",
            40 + k % 50
        ));
    }
    std::fs::write(dir.join("gpu.log"), log).unwrap();
    std::fs::copy(smi_fixture("appended-runs.csv"), dir.join("titanx.csv")).unwrap();
    std::fs::copy(smi_fixture("plain.csv"), dir.join("logs/a.csv")).unwrap();
    std::fs::copy(smi_fixture("crlf.csv"), dir.join("logs/b.csv")).unwrap();
}

/// `PATH` with gpumon's directory first (the wrapped jobs call `gpumon mark`).
fn path_with(bin: &Path) -> std::ffi::OsString {
    let dirs = bin.parent().map(Path::to_path_buf).into_iter();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(dirs.chain(std::env::split_paths(&rest))).unwrap()
}

/// The exit codes a documented command may end with: 3 where its `--fail-if` checks may fail.
fn allowed_codes(cmd: &str) -> &'static [i32] {
    if cmd.contains("--fail-if") { &[0, 3] } else { &[0] }
}

#[test]
fn every_documented_command_runs_and_shows_its_output() {
    let root = repo_root();
    let mut files: Vec<PathBuf> = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    // The real logs, where this machine has them (the real-log tests insist on them, not this one).
    let shared = std::env::var_os("GPUMON_SHARED_DATA")
        .filter(|d| !d.is_empty() && d != "skip")
        .map_or_else(|| root.join("../shared/data"), PathBuf::from);
    let dir = tempfile::tempdir().unwrap();
    world(dir.path());
    let bin = assert_cmd::cargo::cargo_bin("gpumon");
    let (mut ran, mut skipped, mut failures) = (0, Vec::new(), Vec::new());
    for f in &files {
        let name = f.strip_prefix(&root).unwrap().display().to_string();
        for c in commands(&name, &std::fs::read_to_string(f).unwrap()) {
            let at = format!("{}:{}: {}", c.file, c.line, c.cmd);
            let hit = |p: &str| {
                if p.starts_with("gpumon ") { c.cmd.starts_with(p) } else { c.cmd.contains(p) }
            };
            if let Some((_, why)) = SKIPPED.iter().find(|(p, _)| hit(p)) {
                skipped.push(format!("{at}: {why}"));
                continue;
            }
            if c.cmd.contains("../shared/data") && !shared.join("nvidia-smi-logs").is_dir() {
                crate::common::skipped(&format!("{at}: no real logs at {}", shared.display()));
                skipped.push(format!("{at}: no real logs at {}", shared.display()));
                continue;
            }
            if interactive(&c.cmd) {
                skipped.push(format!("{at}: interactive (watch --once runs)"));
                continue;
            }
            let run = rewrite(&c.cmd, &shared);
            let o = Command::new("sh")
                .args(["-c", &run])
                .current_dir(dir.path())
                .env("PATH", path_with(&bin))
                .env("GPUMON_NVML_LIB", fake_nvml())
                .env("FAKE_NVML_SCENARIO", dir.path().join("scenario.txt"))
                .env("NODE_NAME", "node-007")
                .env_remove("CUDA_VISIBLE_DEVICES")
                .env_remove("NVIDIA_VISIBLE_DEVICES")
                .output()
                .unwrap();
            ran += 1;
            let code = o.status.code().unwrap_or(-1);
            let (out, err) =
                (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            if !allowed_codes(&c.cmd).contains(&code) {
                failures.push(format!("{at}\n  ran: {run}\n  exit {code}: {}", err.trim()));
                continue;
            }
            if let Some(shown) = &c.shown {
                let d = shape_differences(shown, &format!("{out}{err}"));
                if !d.is_empty() {
                    failures.push(format!(
                        "{at}\n  ran: {run}\n  {}\n--- printed:\n{out}{err}",
                        d.join("\n  ")
                    ));
                }
            }
        }
    }
    println!("docs: {ran} commands run, {} skipped:", skipped.len());
    for s in &skipped {
        println!("  skipped {s}");
    }
    assert!(ran >= 30, "only {ran} documented commands found and run");
    assert!(
        failures.is_empty(),
        "{} documented commands failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_docs_test_reads_blocks_and_shapes() {
    let text = "x\n```\n$ gpumon summarize run.parquet  # what\nHost a\n  CPU: 1\n$ gpumon report a \\\n  -o b.html\n```\n```sh\ngpumon doctor   # here\nls\n```\n";
    let c = commands("t.md", text);
    let cmds: Vec<&str> = c.iter().map(|c| c.cmd.as_str()).collect();
    assert_eq!(
        cmds,
        ["gpumon summarize run.parquet", "gpumon report a -o b.html", "gpumon doctor"]
    );
    assert_eq!(c[0].shown.as_deref(), Some(&["Host a".to_string(), "  CPU: 1".to_string()][..]));
    assert_eq!(c[2].shown, None);
    assert_eq!(
        rewrite("gpumon record -i 60 -o /data/x.parquet", Path::new("/s")),
        "rm -f data/x.parquet data/x.*.parquet; gpumon record -i 100ms -o data/x.parquet --duration 1s"
    );
    let shown = vec!["Host a".to_string(), "  CPU: 1%".to_string()];
    assert!(shape_differences(&shown, "Host b\n  CPU: 2%\n").is_empty());
    assert!(!shape_differences(&shown, "Host b\n  RAM: 2%\n").is_empty());
    assert!(!shape_differences(&shown, "Host b\n  CPU: 2%\nJob: x\n").is_empty());
}

/// docs/record.md gives the shortest interval `record -i` takes: it is taken, and half of it is not.
#[test]
fn record_md_states_the_shortest_interval() {
    let doc = std::fs::read_to_string(repo_root().join("docs/record.md")).unwrap();
    let row = doc.lines().find(|l| l.starts_with("| `-i, --interval`")).unwrap();
    let min = row.split("minimum ").nth(1).and_then(|r| r.split([';', ',', '.']).next()).unwrap();
    let ms: f64 =
        min.trim_end_matches(" ms").trim().parse().unwrap_or_else(|_| panic!("minimum {min:?}"));
    let dir = tempfile::tempdir().unwrap();
    let run = |secs: f64| {
        gpumon_fake(dir.path(), TWO_GPUS)
            .args(["record", "-q", "--count", "1", "-i", &format!("{secs}"), "-o"])
            .arg(dir.path().join(format!("{secs}.csv")))
            .output()
            .unwrap()
    };
    ok(&run(ms / 1000.0));
    assert_eq!(
        run(ms / 2000.0).status.code(),
        Some(2),
        "half the documented minimum {min} was taken"
    );
}
