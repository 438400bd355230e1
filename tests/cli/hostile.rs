//! Hostile inputs and paths, on files the tests make with gpumon itself: damaged Parquet pages and
//! footers, damaged journals (every valid batch kept), size-field bombs under a memory limit (peak
//! RSS measured), outputs that are an input through a hard or symbolic link, FIFOs and stdin,
//! zero-row conversions, out-of-range values, unreadable directory members, zero and empty options,
//! file names with control characters, thousands of tiny inputs, and mutants through the binary.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

// ---------------------------------------------------------------------------------------------
// Helpers

/// How a run under a memory limit ended: exit code (128 + signal when killed), stderr, peak RSS.
struct Measured {
    code: i32,
    stderr: String,
    max_rss_kib: i64,
}

/// Run `cmd` with its address space limited to `limit` bytes (RLIMIT_AS) and measure its peak
/// resident memory (`wait4`'s ru_maxrss, which also reaps it); killed after 60 s.
#[allow(clippy::zombie_processes)]
fn run_limited(mut cmd: Command, limit: u64) -> Measured {
    // SAFETY: setrlimit is async-signal-safe; only the child calls it, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit { rlim_cur: limit, rlim_max: limit };
            if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Few malloc arenas: their address-space reservations would count against the limit.
    cmd.env("MALLOC_ARENA_MAX", "2").stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let pid = child.id() as i32;
    let t0 = Instant::now();
    // SAFETY: a zeroed rusage is a valid value of this plain C struct.
    let (mut status, mut ru) = (0i32, unsafe { std::mem::zeroed::<libc::rusage>() });
    loop {
        // SAFETY: wait4 on our own child, WNOHANG; status and rusage are valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            // SAFETY: kill(2) on our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Measured { code, stderr: reader.join().unwrap(), max_rss_kib: ru.ru_maxrss }
}

/// Address space allowed to a run that must not blow up: far below what a size bomb asks for
/// (2 GiB and more), well above what a normal read needs.
const AS_LIMIT: u64 = 1536 << 20;
/// Peak RSS allowed to those runs.
const RSS_LIMIT_KIB: i64 = 256 * 1024;

/// An exit 2 with one line of stderr that names `name` and no panic.
fn expect_one_line_error(code: i32, stderr: &str, name: &str) {
    assert_eq!(code, 2, "{name}: exit {code}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(name), "the error names {name}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn out_err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A recording of 20 ticks of two GPUs in `name` (its format from the extension).
fn record(dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let o = gpumon_fake(dir, TWO_GPUS)
        .args(["record", "-q", "-i", "50ms", "--count", "20", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out_err(&o));
    out
}

/// The journal a crash leaves: `record --flush 0` killed once at least `batches` batches are in.
fn crash_journal(dir: &Path, batches: usize) -> PathBuf {
    let out = dir.join("run.parquet");
    let mut child = gpumon_fake(dir, &TWO_GPUS.replace("lost_after = 5\n", ""))
        .args(["record", "-q", "-i", "50ms", "--flush", "0", "-o"])
        .arg(&out)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let journal = dir.join(".run.parquet.journal");
    let t0 = Instant::now();
    while batch_starts(&std::fs::read(&journal).unwrap_or_default()).len() < batches {
        assert!(t0.elapsed() < Duration::from_secs(30), "the journal did not grow");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    journal
}

/// Offsets of the batch messages of an Arrow IPC stream gpumon wrote: after the schema message,
/// every batch of one tick has the same frame (marker, metadata length), found by its bytes.
fn batch_starts(j: &[u8]) -> Vec<usize> {
    if j.len() < 8 {
        return Vec::new();
    }
    let schema_len = 8 + u32::from_le_bytes([j[4], j[5], j[6], j[7]]) as usize;
    let Some(pat) = j.get(schema_len..schema_len + 8) else { return Vec::new() };
    let mut starts: Vec<usize> =
        (schema_len..j.len().saturating_sub(8)).filter(|&i| &j[i..i + 8] == pat).collect();
    // Whole messages only: equally spaced, the last one complete.
    if starts.len() >= 2 {
        let step = starts[1] - starts[0];
        starts.retain(|&s| (s - schema_len).is_multiple_of(step) && s + step <= j.len());
    }
    starts
}

fn mkdir(p: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&p).unwrap();
    p
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), out_err(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `gpumon summarize --format json` of `path`, through [`json`].
fn summary_json(path: &Path) -> Value {
    json(&gpumon().arg("summarize").arg(path).args(["--format", "json"]).output().unwrap())
}

fn rows_of(j: &Value) -> u64 {
    j["inputs"].as_array().unwrap().iter().map(|i| i["rows"].as_u64().unwrap()).sum()
}

// Fields in page headers and footers are found with the product's Thrift walker (one walker).

fn varint(b: &[u8], p: usize) -> (u64, usize) {
    gpumon_read::varint_at(b, p).unwrap()
}

fn skip(b: &[u8], p: usize, ty: u8) -> usize {
    gpumon_read::skip_value(b, p, ty).unwrap()
}

/// `bytes` with the page header at `at` claiming `uncompressed` decompressed bytes; the file keeps
/// its length (the page's first bytes give way), so every other offset stays right.
fn page_bomb(bytes: &[u8], at: usize) -> Vec<u8> {
    let end = skip(bytes, at, 12);
    assert_eq!(bytes[at], 0x15, "page type first");
    let p = varint(bytes, at + 1).1;
    assert_eq!(bytes[p], 0x15, "uncompressed size second");
    let (_, u_end) = varint(bytes, p + 1);
    let bomb = [0xFE, 0xFF, 0xFF, 0xFF, 0x0F]; // zigzag of i32::MAX
    let delta = bomb.len() - (u_end - p - 1);
    let mut out = bytes[..p + 1].to_vec();
    out.extend_from_slice(&bomb);
    out.extend_from_slice(&bytes[u_end..end]);
    out.extend_from_slice(&bytes[end + delta..]);
    assert_eq!(out.len(), bytes.len());
    out
}

/// The footer (Thrift `FileMetaData`) of a Parquet file: (start, length).
fn footer(bytes: &[u8]) -> (usize, usize) {
    let n = bytes.len();
    let len = u32::from_le_bytes([bytes[n - 8], bytes[n - 7], bytes[n - 6], bytes[n - 5]]) as usize;
    (n - 8 - len, len)
}

/// `bytes` with the footer's row-group list claiming i32::MAX row groups (footer length fixed up).
fn row_group_bomb(bytes: &[u8]) -> Vec<u8> {
    let (start, len) = footer(bytes);
    let mut p = start;
    let mut id = 0u8;
    loop {
        let h = bytes[p];
        id += h >> 4;
        if id == 4 {
            break;
        }
        p = skip(bytes, p + 1, h & 15);
    }
    let list = p + 1;
    let mut list_end = list + 1;
    if bytes[list] >> 4 == 15 {
        list_end = varint(bytes, list + 1).1;
    }
    let mut out = bytes[..list].to_vec();
    out.extend_from_slice(&[0xFC, 0xFF, 0xFF, 0xFF, 0xFF, 0x07]);
    out.extend_from_slice(&bytes[list_end..bytes.len() - 8]);
    let new_len = (len + 6 - (list_end - list)) as u32;
    out.extend_from_slice(&new_len.to_le_bytes());
    out.extend_from_slice(b"PAR1");
    out
}

fn python(script: &str) {
    let o = Command::new("python3").arg("-c").arg(script).output().unwrap();
    assert!(o.status.success(), "python: {}", out_err(&o));
}

// ---------------------------------------------------------------------------------------------
// Parquet

#[test]
fn damaged_parquet_pages_and_footers_are_one_line_errors_with_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(record(dir.path(), "run.parquet")).unwrap();
    let summarize = |name: &str, bytes: &[u8]| -> Measured {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let mut c = gpumon();
        c.arg("summarize").arg(&p);
        let m = run_limited(c, AS_LIMIT);
        assert_eq!(std::fs::read(&p).unwrap(), bytes, "the input is never modified");
        m
    };
    // Size bombs: a page header claiming 2 GiB, a footer length past the file, 2^31 row groups.
    let mut footer_len = good.clone();
    let n = footer_len.len();
    footer_len[n - 8..n - 4].copy_from_slice(&0x7FFF_FFFFu32.to_le_bytes());
    for (name, bytes) in [
        ("page.parquet", page_bomb(&good, 4)),
        ("footer-len.parquet", footer_len),
        ("row-groups.parquet", row_group_bomb(&good)),
    ] {
        let m = summarize(name, &bytes);
        expect_one_line_error(m.code, &m.stderr, name);
        assert!(m.max_rss_kib < RSS_LIMIT_KIB, "{name}: peak RSS {} KiB", m.max_rss_kib);
        eprintln!("{name}: exit {}, peak RSS {} KiB: {}", m.code, m.max_rss_kib, m.stderr.trim());
    }
    // Every 41st byte of the footer set to 0xFF, then to 0x00, one at a time.
    let (start, len) = footer(&good);
    let mut codes = std::collections::BTreeMap::new();
    for at in (start..start + len).step_by(41) {
        for v in [0xFF, 0x00] {
            let mut m = good.clone();
            m[at] = v;
            let r = summarize("footer.parquet", &m);
            assert!(
                r.code == 0 || r.code == 2,
                "byte {at} = {v:#x}: exit {}: {}",
                r.code,
                r.stderr
            );
            if r.code == 2 {
                expect_one_line_error(r.code, &r.stderr, "footer.parquet");
            }
            *codes.entry(r.code).or_insert(0) += 1;
        }
    }
    eprintln!("footer bytes: exit codes {codes:?}");
}

// ---------------------------------------------------------------------------------------------
// Journals

#[test]
fn a_damaged_journal_keeps_every_valid_batch_and_recover_keeps_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let journal = crash_journal(dir.path(), 8);
    let clean = std::fs::read(&journal).unwrap();
    let starts = batch_starts(&clean);
    assert!(starts.len() >= 8, "{starts:?}");
    let per_batch = 2; // one tick of two GPUs per flushed batch
    let work = |name: &str, bytes: &[u8]| -> PathBuf {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(".run.parquet.journal"), bytes).unwrap();
        d
    };
    let d = work("clean", &clean);
    let all = rows_of(&summary_json(&d.join("run.parquet")));
    assert!(all >= (starts.len() * per_batch) as u64);

    // The metadata length of the 3rd batch set to 0x7FFFFFFF (the frame is lost; the reader finds
    // the next message), and a body damaged in the 5th (that batch alone is lost).
    let mut bad = clean.clone();
    bad[starts[2] + 4..starts[2] + 8].copy_from_slice(&0x7FFF_FFFFu32.to_le_bytes());
    let step = starts[1] - starts[0];
    for b in &mut bad[starts[4] + step - 40..starts[4] + step - 8] {
        *b = 0xFF;
    }
    let d = work("damaged", &bad);
    let mut c = gpumon();
    c.arg("summarize").arg(d.join("run.parquet"));
    let m = run_limited(c, AS_LIMIT);
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert!(m.max_rss_kib < RSS_LIMIT_KIB, "peak RSS {} KiB", m.max_rss_kib);
    assert!(m.stderr.contains("damaged stretch(es)"), "{}", m.stderr);
    let j = json(
        &gpumon()
            .arg("summarize")
            .arg(d.join("run.parquet"))
            .args(["--format", "json", "-q"])
            .output()
            .unwrap(),
    );
    let read = rows_of(&j);
    assert!(read >= all - 2 * per_batch as u64 && read < all, "{read} of {all} rows");
    eprintln!(
        "journal with a length bomb and a damaged body: {read} of {all} rows read, peak RSS {} KiB",
        m.max_rss_kib
    );

    // recover: every valid batch goes into the piece; the journal is kept, not deleted.
    let o = gpumon().arg("recover").arg(d.join("run.parquet")).output().unwrap();
    assert!(o.status.success(), "{}", out_err(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("({read} rows)")), "{:?}", o);
    assert!(out_err(&o).contains("kept the damaged journal"), "{}", out_err(&o));
    assert_eq!(
        std::fs::read(d.join(".run.parquet.journal.damaged")).unwrap(),
        bad,
        "kept as it was"
    );
    assert!(!d.join(".run.parquet.journal").exists());
    let j = summary_json(&d.join("run.parquet"));
    assert_eq!(rows_of(&j), read, "the rebuilt piece holds every valid row");
    assert_eq!(readback(&d.join("run.parquet"))["pyarrow"]["rows"].as_u64(), Some(read));

    // A damaged schema message: nothing can be decoded; summarize says so, recover keeps it aside.
    let mut no_schema = clean.clone();
    no_schema[4..8].copy_from_slice(&0x7FFF_FFFFu32.to_le_bytes());
    let d = work("schema", &no_schema);
    let o = gpumon().arg("summarize").arg(d.join("run.parquet")).output().unwrap();
    expect_one_line_error(o.status.code().unwrap_or(-1), &out_err(&o), ".run.parquet.journal");
    let o = gpumon().arg("recover").arg(d.join("run.parquet")).output().unwrap();
    assert!(
        o.status.success() && out_err(&o).contains("kept the damaged journal"),
        "{}",
        out_err(&o)
    );
    assert_eq!(std::fs::read(d.join(".run.parquet.journal.damaged")).unwrap(), no_schema);
    assert!(!d.join("run.parquet").exists());

    // A torn tail alone is what a crash leaves: recovered in full, the journal removed.
    let d = work("torn", &clean[..starts[6] + 20]);
    let o = gpumon().arg("recover").arg(d.join("run.parquet")).output().unwrap();
    assert!(o.status.success() && !d.join(".run.parquet.journal").exists(), "{}", out_err(&o));
    assert!(!d.join(".run.parquet.journal.damaged").exists());
}

// ---------------------------------------------------------------------------------------------
// Outputs that are inputs

#[test]
fn report_convert_and_recover_refuse_a_hard_link_and_a_symlink_to_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let csv = record(d, "x.csv");
    let before = std::fs::read(&csv).unwrap();
    std::fs::hard_link(&csv, d.join("hard.html")).unwrap();
    std::os::unix::fs::symlink(&csv, d.join("soft.html")).unwrap();
    std::fs::hard_link(&csv, d.join("hard.parquet")).unwrap();
    std::os::unix::fs::symlink(&csv, d.join("soft.parquet")).unwrap();
    for (cmd, out) in [
        ("report", "x.csv"),
        ("report", "hard.html"),
        ("report", "soft.html"),
        ("convert", "hard.parquet"),
        ("convert", "soft.parquet"),
    ] {
        let o = gpumon().arg(cmd).arg(&csv).arg("-o").arg(d.join(out)).output().unwrap();
        expect_one_line_error(o.status.code().unwrap_or(-1), &out_err(&o), out);
        assert!(out_err(&o).contains("is also an input"), "{}", out_err(&o));
        assert_eq!(std::fs::read(&csv).unwrap(), before, "{cmd} -o {out} left the input alone");
    }
    // A rotated set member and a journal are inputs too.
    let j = crash_journal(&mkdir(d.join("j")), 2);
    let o = gpumon().arg("report").arg(d.join("j/run.parquet")).arg("-o").arg(&j).output().unwrap();
    expect_one_line_error(o.status.code().unwrap_or(-1), &out_err(&o), ".run.parquet.journal");

    // recover: the piece's name held by a hard or symbolic link to its own journal.
    for link in ["hard", "soft"] {
        let r = d.join(format!("r-{link}"));
        std::fs::create_dir_all(&r).unwrap();
        let jbytes = std::fs::read(&j).unwrap();
        let rj = r.join(".run.parquet.journal");
        std::fs::write(&rj, &jbytes).unwrap();
        if link == "hard" {
            std::fs::hard_link(&rj, r.join("run.parquet")).unwrap();
        } else {
            std::os::unix::fs::symlink(&rj, r.join("run.parquet")).unwrap();
        }
        let o = gpumon().arg("recover").arg(r.join("run.parquet")).output().unwrap();
        expect_one_line_error(o.status.code().unwrap_or(-1), &out_err(&o), "run.parquet");
        assert_eq!(std::fs::read(&rj).unwrap(), jbytes, "the journal is untouched");
        assert!(std::fs::symlink_metadata(r.join("run.parquet")).is_ok(), "the link is untouched");
    }

    // record never writes over an existing file, even through a link: a new piece is started.
    std::os::unix::fs::symlink(&csv, d.join("soft.csv")).unwrap();
    let o = gpumon_fake(d, TWO_GPUS)
        .args(["record", "-q", "-i", "50ms", "--count", "2", "-o"])
        .arg(d.join("soft.csv"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out_err(&o));
    assert_eq!(std::fs::read(&csv).unwrap(), before, "record left the linked file alone");
}

// ---------------------------------------------------------------------------------------------
// FIFOs and stdin

/// Run `cmd`, failing the test if it has not finished within 60 s (a hang).
fn output_within(mut cmd: Command, stdin: Option<Vec<u8>>) -> Output {
    let mut child = cmd
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(bytes) = stdin {
        let mut w = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = w.write_all(&bytes);
        });
    }
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("gpumon hung on its input");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_fifo_stdin_and_a_process_substitution_are_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let parquet = std::fs::read(record(d, "run.parquet")).unwrap();
    let csv = std::fs::read(record(d, "run.csv")).unwrap();
    for (bytes, cmd) in [(&parquet, "summarize"), (&csv, "report"), (&parquet, "convert")] {
        let fifo = d.join(format!("fifo-{cmd}"));
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (f, b) = (fifo.clone(), bytes.clone());
        let writer = std::thread::spawn(move || {
            std::fs::OpenOptions::new().write(true).open(f).unwrap().write_all(&b)
        });
        let mut g = gpumon();
        g.arg(cmd).arg(&fifo);
        if cmd != "summarize" {
            g.arg("-o")
                .arg(d.join(format!("out-{cmd}.{}", if cmd == "report" { "html" } else { "csv" })));
        }
        let o = output_within(g, None);
        assert!(o.status.success(), "{cmd} of a FIFO: {}", out_err(&o));
        writer.join().unwrap().unwrap();
    }
    for (arg, bytes) in [("-", &csv), ("/dev/stdin", &parquet)] {
        let mut c = gpumon();
        c.args(["summarize", arg, "--format", "json"]);
        assert_eq!(rows_of(&json(&output_within(c, Some(bytes.clone())))), 40, "{arg}");
    }
    // A device of endless bytes is refused from its head, not copied forever.
    let mut c = gpumon();
    c.args(["summarize", "/dev/zero"]);
    let o = output_within(c, None);
    expect_one_line_error(o.status.code().unwrap_or(-1), &out_err(&o), "/dev/zero");
    // bash's <(...) is a pipe under /dev/fd.
    let bin = assert_cmd::cargo::cargo_bin("gpumon");
    let mut c = Command::new("bash");
    c.arg("-c").arg(format!(
        "{} summarize --format json <(cat {})",
        bin.display(),
        d.join("run.csv").display()
    ));
    assert_eq!(rows_of(&json(&output_within(c, None))), 40);
}

// ---------------------------------------------------------------------------------------------
// Values

#[test]
fn zero_rows_convert_to_a_clear_error_and_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    python(&format!(
        "import pyarrow as pa, pyarrow.parquet as pq\n\
         ts = pa.timestamp('us', 'UTC')\n\
         pq.write_table(pa.table({{'timestamp': pa.array([], ts), 'index': pa.array([], pa.uint32()), 'utilization.gpu': pa.array([], pa.uint8())}}), '{0}/zero.parquet')\n\
         pq.write_table(pa.table({{'timestamp': pa.array([None]*3, ts), 'index': pa.array([0,1,0], pa.uint32()), 'utilization.gpu': pa.array([1,2,3], pa.uint8())}}), '{0}/nullts.parquet')",
        d.display()
    ));
    for name in ["zero.parquet", "nullts.parquet"] {
        let out = d.join(format!("{name}.csv"));
        let o = gpumon().arg("convert").arg(d.join(name)).arg("-o").arg(&out).output().unwrap();
        let e = out_err(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(
            e.lines()
                .any(|l| l.contains(name) && l.contains("no rows with a timestamp to convert")),
            "{e}"
        );
        assert!(!e.contains("renaming"), "{e}");
        assert!(!out.exists() && !d.join(format!(".{name}.csv.converting")).exists());
    }
    let o = gpumon()
        .arg("convert")
        .arg(d.join("nullts.parquet"))
        .arg("-o")
        .arg(d.join("n.csv"))
        .output()
        .unwrap();
    assert!(out_err(&o).contains("3 row(s) without a timestamp"), "{}", out_err(&o));
}

#[test]
fn out_of_range_indexes_and_percentages_are_warned_counted_and_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let head = "timestamp,host,index,utilization.gpu [%],power.draw [W]\n";
    let ts = |i: usize| format!("2026-01-01T00:{:02}:{:02}.000Z", i / 60, i % 60);
    let write = |name: &str, row: &dyn Fn(usize) -> String| {
        let body: String = (0..100).map(|i| format!("{},h,{}\n", ts(i), row(i))).collect();
        std::fs::write(d.join(name), format!("{head}{body}")).unwrap();
        d.join(name)
    };
    // u32::MAX: before, "0 GPU(s)" and exit 0.
    let p = write("max.csv", &|_| "4294967295,50,100".into());
    let o = gpumon().arg("summarize").arg(&p).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = out_err(&o);
    assert!(e.contains("100 row(s) with an index that is not a GPU number"), "{e}");
    assert!(e.contains("max.csv: nothing to summarize"), "{e}");
    // 100 distinct indexes beyond 65535, and a fractional index: each counted.
    let p = write("distinct.csv", &|i| format!("{},50,100", 70_000 + i));
    let e = out_err(&gpumon().arg("summarize").arg(&p).output().unwrap());
    assert!(e.contains("100 row(s) with an index that is not a GPU number"), "{e}");
    let p = write("half.csv", &|i| format!("{},50,100", if i % 4 == 0 { "0.5" } else { "0" }));
    let o = gpumon().args(["summarize", "--format", "json"]).arg(&p).output().unwrap();
    let j = json(&o);
    let w = j["inputs"][0]["warnings"].to_string();
    assert!(w.contains("column index: 25 cell(s) cannot be read (first: `0.5`"), "{w}");
    assert_eq!(j["hosts"][0]["gpus"].as_array().unwrap().len(), 1, "no GPU 1 made up from 0.5");
    assert_eq!(j["hosts"][0]["gpus"][0]["stats"]["samples"], 75);
    // utilization.gpu = 255: left out of mean and p95 alike.
    let p = write("util.csv", &|i| format!("0,{},100", if i % 10 == 0 { 255 } else { 50 }));
    let j = json(&gpumon().args(["summarize", "--format", "json"]).arg(&p).output().unwrap());
    let s = &j["hosts"][0]["gpus"][0]["stats"];
    assert_eq!(
        (s["utilization.gpu.mean"].as_f64(), s["utilization.gpu.p95"].as_f64()),
        (Some(50.0), Some(50.0)),
        "{s}"
    );
    assert!(
        j["inputs"][0]["warnings"].to_string().contains("10 value(s) outside 0-100 % (e.g. 255)")
    );

    // The same in Parquet another tool wrote, and a wrongly typed column listed with its type.
    python(&format!(
        "import pyarrow as pa, pyarrow.parquet as pq\n\
         n = 100\n\
         ts = pa.array([1767225600000000 + i*1000000 for i in range(n)], pa.timestamp('us', 'UTC'))\n\
         pq.write_table(pa.table({{'timestamp': ts, 'index': pa.array([0.5 if i % 4 == 0 else 0.0 for i in range(n)]), \
         'utilization.gpu': pa.array([255 if i % 10 == 0 else 50 for i in range(n)], pa.uint8()), \
         'power.draw': pa.array(['100 W'] * n)}}), '{}/other.parquet')",
        d.display()
    ));
    let j = json(
        &gpumon()
            .args(["summarize", "--format", "json"])
            .arg(d.join("other.parquet"))
            .output()
            .unwrap(),
    );
    let i = &j["inputs"][0];
    assert!(
        i["warnings"].to_string().contains("25 row(s) with an index that is not a GPU number"),
        "{i}"
    );
    assert!(
        i["warnings"]
            .to_string()
            .contains("utilization.gpu: 10 value(s) outside 0-100 % (e.g. 255)"),
        "{i}"
    );
    assert!(i["ignored_columns"].to_string().contains("power.draw (Utf8: not a number)"), "{i}");
    let s = &j["hosts"][0]["gpus"][0]["stats"];
    assert_eq!(s["utilization.gpu.mean"], s["utilization.gpu.p95"], "{s}");
}

// ---------------------------------------------------------------------------------------------
// Paths, names and options

#[test]
fn an_unreadable_file_in_a_directory_is_exit_2_like_a_glob() {
    let secret =
        tempfile::Builder::new().prefix("gpumon-perm").tempdir_in(std::env::temp_dir()).unwrap();
    let d = secret.path();
    std::fs::copy(smi_fixture("plain.csv"), d.join("a.csv")).unwrap();
    std::fs::copy(smi_fixture("plain.csv"), d.join("secret.csv")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(d.join("a.csv"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(d.join("secret.csv"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("gpumon");
    for arg in [d.to_path_buf(), d.join("*.csv")] {
        // SAFETY: geteuid only reads this process's user id.
        let o = if unsafe { libc::geteuid() } == 0 {
            Command::new("setpriv")
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&bin)
                .arg("summarize")
                .arg(&arg)
                .output()
                .unwrap()
        } else {
            Command::new(&bin).arg("summarize").arg(&arg).output().unwrap()
        };
        expect_one_line_error(o.status.code().unwrap_or(-1), &out_err(&o), "secret.csv");
        assert!(out_err(&o).contains("ermission denied"), "{}", out_err(&o));
    }
}

#[test]
fn zero_and_empty_options_are_usage_errors_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.csv");
    for args in [
        &["--count", "0"][..],
        &["--rotate-size", "0"],
        &["--rotate-every", "0"],
        &["--keep", "0"],
        &["--max-total", "0"],
        &["--fields", ""],
        &["--gpus", ""],
    ] {
        let o = gpumon_fake(dir.path(), TWO_GPUS)
            .arg("record")
            .arg("-o")
            .arg(&out)
            .args(args)
            .output()
            .unwrap();
        let e = out_err(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(args[0]), "{args:?}: {e}");
        assert!(!out.exists(), "{args:?} recorded nothing");
    }
    let csv = record(dir.path(), "y.csv");
    let o = gpumon().arg("summarize").arg(&csv).args(["--tz", ""]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(out_err(&o).contains("--tz is empty"));
    for (cmd, out) in [("record", "x.csv"), ("report", "x.html"), ("convert", "x.csv")] {
        let target = dir.path().join("missing/dir").join(out);
        let mut c = gpumon_fake(dir.path(), TWO_GPUS);
        c.arg(cmd);
        if cmd != "record" {
            c.arg(&csv);
        }
        let o = c.arg("-o").arg(&target).output().unwrap();
        expect_one_line_error(o.status.code().unwrap_or(-1), &out_err(&o), "missing/dir");
        assert!(out_err(&o).contains("does not exist"), "{}", out_err(&o));
    }
}

#[test]
fn errors_name_their_file_and_escape_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let nasty = d.join("a\nb\x1b[31mc.csv");
    std::fs::write(&nasty, b"not, metrics\n1,2\n").unwrap();
    let o = gpumon().arg("summarize").arg(&nasty).output().unwrap();
    expect_one_line_error(o.status.code().unwrap_or(-1), &out_err(&o), "a\\nb\\u{1b}[31mc.csv");
    assert!(!out_err(&o).contains('\x1b'));
    let csv = record(d, "run.csv");
    let o = gpumon()
        .arg("summarize")
        .arg(&csv)
        .args(["--since", "2000-01-01T00:00:00Z", "--until", "2000-01-02T00:00:00Z"])
        .output()
        .unwrap();
    expect_one_line_error(o.status.code().unwrap_or(-1), &out_err(&o), "run.csv");
    assert!(out_err(&o).contains("no rows inside the window"));
    // A set name whose only member is not metrics: no input files, named.
    std::fs::write(d.join("set.20260101T000000Z.csv"), b"hello\n").unwrap();
    let o = gpumon().arg("summarize").arg(d.join("set.csv")).output().unwrap();
    expect_one_line_error(o.status.code().unwrap_or(-1), &out_err(&o), "set.csv");
    assert!(out_err(&o).contains("no input files"), "{}", out_err(&o));
}

#[test]
fn recover_leaves_a_log_gpumon_did_not_write_alone() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("gpu.csv");
    let mut bytes = std::fs::read(smi_fixture("plain.csv")).unwrap();
    bytes.extend_from_slice(b"2026/01/01 00:00:00.000, 5");
    std::fs::write(&log, &bytes).unwrap();
    let o = gpumon().arg("recover").arg(&log).output().unwrap();
    assert!(o.status.success(), "{}", out_err(&o));
    assert_eq!(std::fs::read(&log).unwrap(), bytes, "a foreign log is never rewritten");
}

#[test]
fn thousands_of_tiny_inputs_make_a_bounded_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("many");
    std::fs::create_dir(&d).unwrap();
    for i in 0..1500 {
        std::fs::write(
            d.join(format!("node{i:04}.csv")),
            format!(
                "timestamp,index,utilization.gpu [%]\n2026-01-01T00:00:{:02}.000Z,0,{}\n",
                i % 60,
                i % 100
            ),
        )
        .unwrap();
    }
    let out = dir.path().join("many.html");
    let mut c = gpumon();
    c.args(["report", "-q"]).arg(&d).arg("-o").arg(&out);
    let m = run_limited(c, 4 << 30);
    assert_eq!(m.code, 0, "{}", m.stderr);
    let page = std::fs::read_to_string(&out).unwrap();
    eprintln!(
        "1500 inputs (1500 hosts): page {} bytes, peak RSS {} KiB",
        page.len(),
        m.max_rss_kib
    );
    assert!(page.contains(r#"id="uncharted""#) && page.contains(r#"id="more-inputs""#));
    assert!(page.len() < 4 << 20, "page of {} bytes", page.len());
    assert!(m.max_rss_kib < 512 * 1024, "peak RSS {} KiB", m.max_rss_kib);
}

// ---------------------------------------------------------------------------------------------
// Mutants through the binary

#[test]
fn mutants_through_the_binary_exit_0_or_2_with_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let corpus = [
        ("m.parquet", std::fs::read(record(d, "run.parquet")).unwrap()),
        ("m.csv", std::fs::read(record(d, "run.csv")).unwrap()),
        ("m.log", std::fs::read(smi_fixture("plain.csv")).unwrap()),
    ];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let mut codes = std::collections::BTreeMap::new();
    for k in 0..45 {
        let (name, bytes) = &corpus[k % corpus.len()];
        let mut m = bytes.clone();
        let p = rnd(m.len());
        match rnd(3) {
            0 => m[p] = [0x00, 0xFF, 0x7F][rnd(3)],
            1 => m.truncate(p.max(1)),
            _ => {
                let v = 0x7FFF_FFFFu32.to_le_bytes();
                for (i, b) in v.iter().enumerate() {
                    if let Some(t) = m.get_mut(p + i) {
                        *t = *b;
                    }
                }
            }
        }
        let path = d.join(name);
        std::fs::write(&path, &m).unwrap();
        let mut c = gpumon();
        c.arg("summarize").arg(&path);
        let r = run_limited(c, AS_LIMIT);
        assert!(r.code == 0 || r.code == 2, "{name} mutant {k}: exit {}: {}", r.code, r.stderr);
        if r.code == 2 {
            expect_one_line_error(r.code, &r.stderr, name);
        }
        assert_eq!(std::fs::read(&path).unwrap(), m, "never modified");
        *codes.entry(r.code).or_insert(0) += 1;
    }
    eprintln!("45 mutants through the binary: exit codes {codes:?}");
}
