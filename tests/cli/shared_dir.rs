//! A hostile neighbour on the filesystem: another user who can write to the output directory (a
//! sticky shared directory) plants links, files, FIFOs and status documents where gpumon will
//! look, and gpumon, run as root or as a user, neither follows nor trusts them. Tests that need a
//! second user make one (`useradd`) and are skipped with one printed line where that is impossible.

use std::io::{Read, Write};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// The unprivileged neighbour's (uid, gid), made once; None (and one printed line) when the tests
/// do not run as root or no user can be made.
fn neighbour() -> Option<(u32, u32)> {
    const NAME: &str = "gpumon-neighbour";
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        skipped("a second user needs root to make");
        return None;
    }
    let id = |flag: &str| -> Option<u32> {
        let o = Command::new("id").args([flag, NAME]).output().ok()?;
        String::from_utf8_lossy(&o.stdout).trim().parse().ok()
    };
    if id("-u").is_none() {
        let _ =
            Command::new("useradd").args(["-r", "-M", "-s", "/usr/sbin/nologin", NAME]).output();
    }
    match (id("-u"), id("-g")) {
        (Some(u), Some(g)) => Some((u, g)),
        _ => {
            skipped("cannot make a second user (useradd failed)");
            None
        }
    }
}

/// A directory everybody may write to, sticky like /tmp.
fn shared() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

/// Change the owner of `path` itself (a link, not its target).
fn chown(path: &Path, (uid, gid): (u32, u32)) {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid)).unwrap();
}

/// A short host-only recording to `out`.
fn record(out: &Path) -> Command {
    let mut c = gpumon();
    c.args(["record", "-q", "-i", "100ms", "--count", "2", "-o"]).arg(out);
    c
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The files of `dir` whose names start with `prefix`, sorted.
fn named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    v.sort();
    v
}

#[test]
fn a_planted_lock_link_is_never_followed_by_record_or_recover() {
    let dir = shared();
    let (important, nowhere) = (dir.path().join("important"), dir.path().join("nowhere"));
    std::fs::write(&important, "precious\n").unwrap();
    let lock = dir.path().join(".runA.csv.lock");
    symlink(&important, &lock).unwrap();
    let o = record(&dir.path().join("runA.csv")).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(".runA.csv.lock") && text(&o).contains("symbolic link"),
        "{}",
        text(&o)
    );
    let o = gpumon().arg("recover").arg(dir.path().join("runA.csv")).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(&important).unwrap(),
        "precious\n",
        "the link's target is untouched"
    );
    // A dangling one makes no file where it points.
    std::fs::remove_file(&lock).unwrap();
    symlink(&nowhere, &lock).unwrap();
    let o = record(&dir.path().join("runA.csv")).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&nowhere).is_err(), "nothing created through the link");
}

#[test]
fn a_lock_file_of_another_user_is_locked_but_never_rewritten() {
    let Some(nb) = neighbour() else { return };
    let dir = shared();
    let lock = dir.path().join(".runB.csv.lock");
    std::fs::write(&lock, "the neighbour's own words\n").unwrap();
    chown(&lock, nb);
    let o = record(&dir.path().join("runB.csv")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        "the neighbour's own words\n",
        "neither truncated nor removed"
    );
}

#[test]
fn data_files_are_never_created_through_a_dangling_link() {
    let dir = shared();
    let target = dir.path().join("chosen-by-the-attacker");
    symlink(&target, dir.path().join("runF.csv")).unwrap();
    let o = record(&dir.path().join("runF.csv")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&target).is_err(), "nothing created through the link");
    let pieces = named(dir.path(), "runF.2");
    assert_eq!(pieces.len(), 1, "the rows went to a piece of their own: {pieces:?}");
    assert!(std::fs::read_to_string(&pieces[0]).unwrap().starts_with("timestamp,"));
}

#[test]
fn a_companion_file_is_never_created_through_a_dangling_link() {
    let dir = shared();
    let target = dir.path().join("chosen-by-the-attacker");
    symlink(&target, dir.path().join("runH.events.csv")).unwrap();
    let scenario = "init = ok\n[device]\nname = NVIDIA H100 80GB HBM3\nutilization.gpu = 90\nevents = xid:79@1\n";
    let o = gpumon_fake(dir.path(), scenario)
        .args(["record", "-q", "-i", "100ms", "--count", "4", "-o"])
        .arg(dir.path().join("runH.csv"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&target).is_err(), "nothing created through the link");
    let events = named(dir.path(), "runH.events.2");
    assert_eq!(events.len(), 1, "the events went to a file of their own: {events:?}");
    assert!(std::fs::read_to_string(&events[0]).unwrap().contains("xid"));
}

#[test]
fn a_template_directory_linked_elsewhere_by_another_user_is_refused() {
    let Some(nb) = neighbour() else { return };
    let dir = shared();
    let elsewhere = dir.path().join("dirL");
    std::fs::create_dir(&elsewhere).unwrap();
    chown(&elsewhere, nb);
    let link = dir.path().join("host=evil");
    symlink(&elsewhere, &link).unwrap();
    chown(&link, nb);
    let o = gpumon()
        .args(["record", "-q", "-i", "100ms", "--count", "2", "--host", "evil", "-o"])
        .arg(dir.path().join("host={host}/runL.csv"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("host=evil") && text(&o).contains("symbolic link"), "{}", text(&o));
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written where the link points"
    );
    // The recorder's own directories are made as before.
    let o = gpumon()
        .args(["record", "-q", "-i", "100ms", "--count", "2", "--host", "good", "-o"])
        .arg(dir.path().join("host={host}/runL.csv"))
        .output()
        .unwrap();
    assert!(o.status.success() && dir.path().join("host=good/runL.csv").is_file(), "{}", text(&o));
}

#[test]
fn a_dangling_journal_link_does_not_stop_a_recording() {
    let dir = shared();
    let nowhere = dir.path().join("nowhere");
    let journal = dir.path().join(".run.parquet.journal");
    symlink(&nowhere, &journal).unwrap();
    let o = record(&dir.path().join("run.parquet")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(".run.parquet.journal") && text(&o).contains("symbolic link"),
        "{}",
        text(&o)
    );
    assert!(
        std::fs::symlink_metadata(&nowhere).is_err() && std::fs::symlink_metadata(&journal).is_ok()
    );
    assert_eq!(named(dir.path(), "run.2").len(), 1, "the rows went to a piece of their own");
}

/// Run `cmd` for at most `limit` (then killed: None) with 1 GiB of address space at most; its exit
/// code and stderr.
fn run_briefly(cmd: &mut Command, limit: Duration) -> (Option<i32>, String) {
    // SAFETY: setrlimit is async-signal-safe; only the child calls it, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let r = libc::rlimit { rlim_cur: 1 << 30, rlim_max: 1 << 30 };
            libc::setrlimit(libc::RLIMIT_AS, &r);
            Ok(())
        });
    }
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            return (st.code(), err);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    (None, "killed: it did not end".into())
}

#[test]
fn record_refuses_to_start_beside_a_status_file_of_another_user() {
    let Some(nb) = neighbour() else { return };
    let dir = shared();
    // Root plays the other user here: the neighbour cannot remove root's file in a sticky directory.
    let planted = dir.path().join(".run.csv.status");
    std::fs::write(&planted, r#"{"pid": 1, "control": "/tmp/elsewhere.sock"}"#).unwrap();
    let mut c = record(&dir.path().join("run.csv"));
    let (code, err) = run_briefly(c.uid(nb.0).gid(nb.1).current_dir("/"), Duration::from_secs(20));
    assert!(matches!(code, Some(1 | 2)), "exit {code:?}: {err}");
    assert!(err.contains(".run.csv.status") && err.contains("another user"), "{err}");
    assert!(
        std::fs::read_to_string(&planted).unwrap().contains("elsewhere"),
        "the file is left as it was"
    );
    assert!(!dir.path().join("run.csv").exists(), "stopped before any file was made");
}

#[test]
fn mark_sends_nothing_to_a_socket_named_by_another_users_status_file() {
    let Some(nb) = neighbour() else { return };
    let dir = shared();
    let sock = dir.path().join("listening.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    chown(&sock, nb);
    listener.set_nonblocking(true).unwrap();
    let heard = std::thread::spawn(move || {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            if let Ok((mut s, _)) = listener.accept() {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut got = String::new();
                let _ = s.read_to_string(&mut got);
                let _ = s.write_all(b"ok\n");
                return got;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        String::new()
    });
    let status = dir.path().join(".run.parquet.status");
    std::fs::write(&status, format!(r#"{{"pid": 1, "control": "{}"}}"#, sock.display())).unwrap();
    chown(&status, nb);
    let o = gpumon()
        .args(["mark", "--run"])
        .arg(dir.path().join("run.parquet"))
        .arg("secret-label")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("another user"), "{}", text(&o));
    assert_eq!(heard.join().unwrap(), "", "the label never reached the other user's socket");
}

#[test]
fn a_fifo_or_a_device_in_place_of_the_status_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join(".fifo.parquet.status");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    symlink("/dev/zero", dir.path().join(".zero.parquet.status")).unwrap();
    for run in ["fifo.parquet", "zero.parquet"] {
        let run = dir.path().join(run);
        let (code, err) = run_briefly(
            gpumon().args(["mark", "--run"]).arg(&run).arg("x"),
            Duration::from_secs(10),
        );
        assert_eq!(code, Some(2), "mark on {}: {err}", run.display());
        assert!(err.contains("status file"), "{err}");
        let (code, err) = run_briefly(
            gpumon().args(["watch", "--once"]).arg(&run).env("COLUMNS", "100"),
            Duration::from_secs(10),
        );
        assert_eq!(code, Some(2), "watch on {}: {err}", run.display());
        assert!(err.contains("status file"), "{err}");
    }
}

/// The control socket of the recording of `run`, from its status file (waits up to 20 s).
fn control_socket(run: &Path) -> PathBuf {
    let status =
        run.with_file_name(format!(".{}.status", run.file_name().unwrap().to_string_lossy()));
    let t0 = Instant::now();
    loop {
        let doc = std::fs::read(&status)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
        if let Some(c) = doc.as_ref().and_then(|d| d["control"].as_str()) {
            return PathBuf::from(c);
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "no status file naming a socket");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_flood_of_marks_is_capped_counted_and_kept_out_of_the_arrow_schema() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.parquet");
    let child = gpumon()
        .args(["record", "-q", "-i", "100ms", "--count", "20", "--phases", "-o"])
        .arg(&run)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sock = control_socket(&run);
    let (sent, mut refused) = (3000, 0);
    for batch in 0..3 {
        let mut s = std::os::unix::net::UnixStream::connect(&sock).unwrap();
        let lines: String = (0..sent / 3).map(|i| format!("mark flood-{batch}-{i}\n")).collect();
        s.write_all(lines.as_bytes()).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut answers = String::new();
        s.read_to_string(&mut answers).unwrap();
        refused += answers.lines().filter(|l| l.starts_with("error: ")).count();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(refused > sent / 2, "most of the flood is refused: {refused} of {sent}");
    assert!(
        text(&o).contains(&format!("{refused} marks refused")),
        "said once at the end: {}",
        text(&o)
    );
    let py = "import json, sys, pyarrow.parquet as pq\n\
              md = pq.read_metadata(sys.argv[1]).metadata\n\
              sm = pq.read_schema(sys.argv[1]).metadata or {}\n\
              print(json.dumps({'marks': len(json.loads(md[b'gpumon.marks'])), \
              'dropped': md.get(b'gpumon.marks_dropped', b'0').decode(), 'arrow_schema': len(md[b'ARROW:schema']), \
              'in_schema': any(b'flood' in v for v in sm.values())}))";
    let out = Command::new("python3").args(["-c", py]).arg(&run).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["marks"].as_u64().unwrap() as usize, sent - refused, "{v}");
    assert_eq!(v["dropped"], refused.to_string(), "{v}");
    assert_eq!(v["in_schema"], false, "the marks stay out of the Arrow schema: {v}");
    assert!(v["arrow_schema"].as_u64().unwrap() < 40_000, "{v}");
}

#[test]
fn watch_prints_no_terminal_control_or_bidi_character_from_the_status_file() {
    let dir = tempfile::tempdir().unwrap();
    let private = dir.path().join("rundir");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let doc = serde_json::json!({
        "schema": "gpumon.status/1",
        "pid": std::process::id(),
        "host": "\u{1b}]0;owned window title\u{7}",
        "output": "run.parquet",
        "control": "/nonexistent/ctl",
        "interval_s": 1.0,
        "job": "\u{1b}]52;c;ZXZpbA==\u{7}clipboard",
        "phase": "\u{1b}[2J\u{202e}txt.exe",
        "phase_since": "2026-01-01T00:00:00.000Z",
        "rows": [{"index": 0, "name": "\u{9b}31mGPU\u{2066}", "utilization.gpu": 50}],
    });
    std::fs::write(private.join("status"), doc.to_string()).unwrap();
    symlink(private.join("status"), dir.path().join(".run.parquet.status")).unwrap();
    let o =
        gpumon().args(["watch", "--once"]).arg(dir.path().join("run.parquet")).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("owned window title") && out.contains("txt.exe"),
        "the text is shown: {out}"
    );
    let bad: Vec<char> = out
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || ('\u{2066}'..='\u{2069}').contains(&c)
                || ('\u{202a}'..='\u{202e}').contains(&c)
        })
        .collect();
    assert!(bad.is_empty(), "control or bidi characters reached the terminal: {bad:?}\n{out}");
}

#[test]
fn mark_refuses_a_label_with_bidi_controls() {
    let dir = tempfile::tempdir().unwrap();
    let o = gpumon()
        .args(["mark", "--run"])
        .arg(dir.path().join("run.parquet"))
        .arg("bs=64\u{202e}txt")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("bad phase label") && text(&o).contains("bidirectional"),
        "{}",
        text(&o)
    );
}

/// `md` with its code spans taken out (CommonMark: a run of n backticks up to the next run of
/// exactly n), and the code spans.
fn split_code_spans(md: &str) -> (String, Vec<String>) {
    let (mut prose, mut spans) = (String::new(), Vec::new());
    let b: Vec<char> = md.chars().collect();
    let mut i = 0;
    while i < b.len() {
        if b[i] == '\\' && i + 1 < b.len() {
            prose.push(b[i]);
            prose.push(b[i + 1]);
            i += 2;
            continue;
        }
        if b[i] != '`' {
            prose.push(b[i]);
            i += 1;
            continue;
        }
        let n = b[i..].iter().take_while(|&&c| c == '`').count();
        let mut j = i + n;
        let close = loop {
            if j >= b.len() {
                break None;
            }
            let m = b[j..].iter().take_while(|&&c| c == '`').count();
            if m == n {
                break Some(j);
            }
            j += m.max(1);
        };
        match close {
            Some(j) => {
                spans.push(b[i + n..j].iter().collect());
                i = j + n;
            }
            None => {
                prose.extend(&b[i..i + n]);
                i += n;
            }
        }
    }
    (prose, spans)
}

#[test]
fn markdown_shows_hostile_host_names_and_phase_labels_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let (host, a, b) = ("<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "`x`<b>|*y*");
    let rows: String = (0..4)
        .map(|i| {
            format!(
                "2026-01-01T00:00:0{i}.000Z,{host},0,GPU-1,{},\"{}\"\n",
                50 + i,
                if i < 2 { a } else { b }
            )
        })
        .collect();
    let csv = dir.path().join("r.csv");
    std::fs::write(&csv, format!("timestamp,host,index,uuid,utilization.gpu,phase\n{rows}"))
        .unwrap();
    let o = gpumon()
        .args(["summarize", "--by", "phase", "--format", "markdown"])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    let (prose, spans) = split_code_spans(&md);
    assert!(!prose.contains('<'), "raw HTML outside code spans:\n{prose}");
    assert!(
        spans.iter().any(|s| s.trim() == b),
        "the label with backticks is one whole code span: {spans:?}"
    );
    assert!(spans.iter().any(|s| s == host) && spans.iter().any(|s| s == a), "{spans:?}");
    assert!(
        prose.contains("&lt;img src=x onerror=alert(2)&gt;"),
        "in a table cell as text:\n{prose}"
    );
}

#[test]
fn the_summary_table_prints_no_control_or_bidi_character_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let (host, phase) = ("\u{1b}]0;title\u{7}h\u{202e}ost", "a\u{1b}[2Jb\u{2067}");
    let rows: String = (0..3)
        .map(|i| format!("2026-01-01T00:00:0{i}.000Z,{host},0,GPU-1,{},{phase}\n", 50 + i))
        .collect();
    let csv = dir.path().join("r.csv");
    std::fs::write(&csv, format!("timestamp,host,index,uuid,utilization.gpu,phase\n{rows}"))
        .unwrap();
    let o = gpumon().args(["summarize", "--by", "phase"]).arg(&csv).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("h\\u{202e}ost") && out.contains("a\\u{1b}[2Jb"), "shown escaped: {out}");
    let bad: Vec<char> = out
        .chars()
        .filter(|&c| (c.is_control() && c != '\n') || c == '\u{202e}' || c == '\u{2067}')
        .collect();
    assert!(bad.is_empty(), "{bad:?}");
}

#[test]
fn a_fifo_or_device_named_like_a_journal_of_the_set_does_not_hang_a_reader() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.parquet");
    let o = record(&run).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let fifo = dir.path().join(".run.20260101T000001.000Z.parquet.journal");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    symlink("/dev/zero", dir.path().join(".run.20260101T000002.000Z.parquet.journal")).unwrap();
    let (code, err) = run_briefly(gpumon().arg("summarize").arg(&run), Duration::from_secs(20));
    assert_eq!(code, Some(0), "{err}");
}
