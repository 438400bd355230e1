//! The in-repo fuzz harness (tests only): a corpus gpumon writes itself (Parquet closed and with
//! several row groups, the crash journal, CSV, the nvidia-smi style log), mutated byte- and
//! text-wise, read through every path a command takes: discovery and sniffing, `probe_fields`, the
//! summary (collector and statistics), the report's series, convert's row conversion, and for
//! journals recovery. A case passes when nothing panics out of the readers and no single allocation
//! exceeds [`alloc_limit`] of the input's size; errors are expected.
//!
//! The suite runs [`CI_CASES`] mutants. `GPUMON_FUZZ_SECS=600 cargo nextest run -E 'test(fuzz)'
//! --no-capture` (or `scripts/fuzz 600`) runs for that long and prints the figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use gpumon_analysis::collect::{CollectConfig, Collector};
use gpumon_analysis::findings::Thresholds;
use gpumon_analysis::series::{BUCKETS, Grid, Series};
use gpumon_read::inputs::discover;
use gpumon_read::scan::{ReadOptions, probe_fields, scan};
use gpumon_schema::catalog::{CATALOG, Field, Ty};
use gpumon_schema::files::{Format, journal_path};
use gpumon_schema::row::{Row, Selection, Tick, Value};
use gpumon_schema::run::RunMeta;
use gpumon_sink::{self as sink, Target};
use gpumon_util::progress::Progress;

/// Mutants run by the normal test suite.
const CI_CASES: u64 = 160;

// ---------------------------------------------------------------------------------------------
// The largest single allocation of the thread running a case.

thread_local! {
    static TRACKING: Cell<bool> = const { Cell::new(false) };
}
static LARGEST: AtomicUsize = AtomicUsize::new(0);

struct Tracking;

// SAFETY: every call is passed on to the system allocator unchanged; only a size is recorded.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Tracking = Tracking;

fn note(size: usize) {
    if TRACKING.try_with(Cell::get).unwrap_or(false) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

/// The largest single allocation a case on `len` input bytes may make: a Parquet page may claim
/// at most 1024× its stored size (at least 8 MiB), a journal message at most the file.
fn alloc_limit(len: usize) -> usize {
    (32 << 20) + 16 * len
}

// ---------------------------------------------------------------------------------------------
// Corpus: files gpumon writes.

/// A value of field `f` for GPU `g` at tick `i`, varied so that every statistic has work to do.
fn value(f: Field, g: usize, i: usize) -> Value {
    match f {
        Field::Index => return Value::U(g as u64),
        Field::Host => return Value::S(Arc::from("fuzzhost")),
        Field::Uuid => return Value::S(Arc::from(format!("GPU-0000000{g}-0000-0000-0000-000000000000"))),
        Field::Name => return Value::S(Arc::from("NVIDIA H100 80GB HBM3")),
        Field::UtilGpu | Field::UtilMemory => return Value::U(((i * 7 + g * 13) % 101) as u64),
        _ => {}
    }
    match f.def().ty {
        Ty::Str => Value::S(Arc::from(format!("v{}", i % 3))),
        Ty::I16 => Value::U(((i + g) % 100) as u64),
        Ty::I32 | Ty::I64 => Value::U((1000 + i * 3 + g) as u64),
        Ty::F64 => Value::F(50.0 + (i % 17) as f64 * 1.5 + g as f64),
        Ty::Bool => Value::U((i % 2) as u64),
        Ty::Timestamp => Value::Null,
    }
}

fn ticks(n: usize, gpus: usize, sel: &Selection) -> Vec<Tick> {
    let start = DateTime::parse_from_rfc3339("2026-03-01T10:00:00Z").map_or(DateTime::<Utc>::UNIX_EPOCH, |t| t.into());
    (0..n)
        .map(|i| Tick {
            ts: start + chrono::Duration::milliseconds(500 * i as i64),
            seq: i as u64 + 1,
            rows: (0..gpus)
                .map(|g| {
                    let mut r = Row::default();
                    for f in sel.fields() {
                        // A missing value now and then: missing is null.
                        if f != Field::Index && (i + g + f as usize).is_multiple_of(23) {
                            continue;
                        }
                        r.set(f, value(f, g, i));
                    }
                    r
                })
                .collect(),
            procs: Vec::new(),
        })
        .collect()
}

/// Write the corpus into `dir`: (file, what it is).
fn corpus(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let mut sel: Vec<Field> = CATALOG.iter().filter(|d| d.default).map(|d| d.field).collect();
    for k in [Field::Timestamp, Field::Host, Field::Index, Field::Uuid, Field::Missed] {
        if !sel.contains(&k) {
            sel.push(k);
        }
    }
    sel.sort();
    let sel = Selection::new(sel);
    let meta = RunMeta {
        hostname: "fuzzhost".into(),
        interval_s: 0.5,
        command: "gpumon record".into(),
        start: Utc::now(),
        driver_version: None,
    };
    let mut out = Vec::new();
    let mut write = |name: &str, format: Format, n: usize, journal: bool, what: &'static str| {
        let path = dir.join(name);
        let j = journal.then(|| journal_path(&path));
        let mut s = sink::open(format, &Target::File(path.clone()), j.as_deref(), &sel, &meta).unwrap();
        for (k, t) in ticks(n, 2, &sel).iter().enumerate() {
            s.write_tick(t).unwrap();
            if k % 5 == 4 {
                s.flush().unwrap();
            }
        }
        s.flush().unwrap();
        s.finish().unwrap();
        out.push((path, what));
        if let Some(j) = j {
            out.push((j, "journal"));
        }
    };
    write("run.parquet", Format::Parquet, 60, true, "parquet");
    write("groups.parquet", Format::Parquet, 9000, false, "parquet (2 row groups)");
    write("run.csv", Format::Csv, 60, false, "csv");
    write("gpu.log", Format::NvidiaSmi { header: true, units: true }, 60, false, "nvidia-smi log");
    out
}

// ---------------------------------------------------------------------------------------------
// Mutations.

/// xorshift64*: deterministic, seeded.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Numbers a hostile or broken writer puts in a cell.
const CELLS: [&str; 12] =
    ["4294967295", "-1", "0.5", "255", "1e308", "NaN", "-0", "18446744073709551616", "", "\u{1b}[31m", "1,2", "\"x"];

fn mutate(data: &[u8], text: bool, r: &mut Rng) -> Vec<u8> {
    let mut m = data.to_vec();
    let len = m.len().max(1);
    let p = r.below(len).min(m.len().saturating_sub(1));
    match r.below(if text { 10 } else { 8 }) {
        0 => {
            if let Some(b) = m.get_mut(p) {
                *b ^= 1 << r.below(8);
            }
        }
        1 => {
            if let Some(b) = m.get_mut(p) {
                *b = [0x00, 0xFF, 0x7F, 0x80, r.next() as u8][r.below(5)];
            }
        }
        2 => {
            // A length field: 4 little-endian bytes of a size bomb.
            let v: u32 = [0x7FFF_FFFF, 0xFFFF_FFFF, 0x1000_0000, 0][r.below(4)];
            for (k, b) in v.to_le_bytes().iter().enumerate() {
                if let Some(x) = m.get_mut(p + k) {
                    *x = *b;
                }
            }
        }
        3 => {
            // A varint bomb (Thrift sizes are varints).
            let at = p.min(m.len());
            m.splice(at..(at + 1).min(m.len()), [0xFE, 0xFF, 0xFF, 0xFF, 0x0F]);
        }
        4 => m.truncate(p),
        5 => {
            let end = (p + 1 + r.below(256)).min(m.len());
            m.drain(p.min(end)..end);
        }
        6 => {
            // A stretch of the file repeated (a duplicated batch or row group).
            let end = (p + 1 + r.below(4096)).min(m.len());
            let chunk = m[p.min(end)..end].to_vec();
            let at = r.below(m.len() + 1);
            m.splice(at..at, chunk);
        }
        7 => {
            let n = 1 + r.below(32);
            let junk: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
            m.splice(p.min(m.len())..p.min(m.len()), junk);
        }
        _ => {
            // Text: a cell replaced by a hostile value.
            let cell = CELLS[r.below(CELLS.len())].as_bytes();
            let start = m[..p].iter().rposition(|&b| b == b',' || b == b'\n').map_or(0, |i| i + 1);
            let end = m[p..].iter().position(|&b| b == b',' || b == b'\n').map_or(m.len(), |i| p + i);
            m.splice(start..end, cell.iter().copied());
        }
    }
    m
}

// ---------------------------------------------------------------------------------------------
// One case.

/// How a case ended.
#[derive(Debug, Default)]
struct Figures {
    cases: u64,
    read_ok: u64,
    refused: u64,
    contained_panics: u64,
    /// The first few contained panics' messages (what validation before decoding missed).
    contained: Vec<String>,
    escaped_panics: Vec<String>,
    too_large: Vec<String>,
    largest: usize,
    slowest: Duration,
}

/// Read `path` the way every command does; errors are returned as text.
fn read_all(path: &Path) -> anyhow::Result<()> {
    let found = discover(&[path.to_path_buf()])?;
    let opts = ReadOptions { threads: 1, ..Default::default() };
    let want = gpumon_analysis::collect::wanted_fields();
    let progress = Progress::new(0, false);
    let mut all = Collector::new(CollectConfig::default());
    let mut reports = Vec::new();
    for input in &found.inputs {
        probe_fields(input, &opts)?;
        let init = || Collector::new(CollectConfig::default());
        let visit = |c: &mut Collector, b: &arrow_array::RecordBatch, host: &str| c.visit(b, host);
        let (parts, rep) = scan(input, &opts, &want, &progress, &init, &visit)?;
        parts.into_iter().for_each(|p| all.append(p));
        reports.push(rep);
        let grid = Grid::new(1_772_359_200_000_000, 1_772_359_260_000_000, BUCKETS);
        let (_, _) = scan(
            input,
            &opts,
            &gpumon_analysis::series::wanted(),
            &progress,
            &|| Series::new(grid, None, None),
            &|s: &mut Series, b, host| s.visit(b, host),
        )?;
        let (_, _) = scan(input, &opts, &want, &progress, &|| (), &|_: &mut (), b, _| {
            let mut rows = Vec::new();
            gpumon_schema::batch::rows_of_batch(b, &mut rows);
            Ok(())
        })?;
    }
    let summary =
        gpumon_analysis::build(all, &Thresholds::default(), reports, found.skipped, (None, None), Default::default());
    let _ = gpumon_present::render(&summary, &[], gpumon_present::SummaryFormat::Json);
    Ok(())
}

fn run_case(dir: &Path, name: &str, kind: &str, bytes: &[u8], f: &mut Figures) {
    let path = dir.join(name);
    let _ = std::fs::remove_file(dir.join(name.trim_start_matches('.').trim_end_matches(".journal")));
    let _ = std::fs::remove_file(dir.join(format!("{name}.damaged")));
    std::fs::write(&path, bytes).unwrap();
    let t0 = Instant::now();
    LARGEST.store(0, Ordering::Relaxed);
    TRACKING.with(|t| t.set(true));
    let outcome = std::panic::catch_unwind(|| {
        let read = read_all(&path).map_err(|e| format!("{e:#}"));
        let recovered = (kind == "journal").then(|| {
            let piece = gpumon_schema::files::piece_of_journal(&path).unwrap();
            gpumon_sink::files::recover_journal(&path, &piece).map(|_| ()).map_err(|e| format!("{e:#}"))
        });
        (read, recovered)
    });
    TRACKING.with(|t| t.set(false));
    let largest = LARGEST.load(Ordering::Relaxed);
    f.cases += 1;
    f.largest = f.largest.max(largest);
    f.slowest = f.slowest.max(t0.elapsed());
    if largest > alloc_limit(bytes.len()) {
        let kept = keep_failure(name, bytes, f.cases);
        f.too_large.push(format!("{kind}: {largest} bytes at once for {} input bytes ({kept})", bytes.len()));
    }
    match outcome {
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
            let kept = keep_failure(name, bytes, f.cases);
            f.escaped_panics.push(format!("{kind}: {} ({kept})", msg.unwrap_or_default()));
        }
        Ok((read, recovered)) => {
            for e in [Some(read), recovered].into_iter().flatten() {
                match e {
                    Ok(()) => f.read_ok += 1,
                    Err(e) if e.contains("the decoder failed") => {
                        f.contained_panics += 1;
                        if f.contained.len() < 20 {
                            f.contained.push(format!("{kind}: {e}"));
                        }
                    }
                    Err(_) => f.refused += 1,
                }
            }
        }
    }
}

/// Keep a failing mutant for reproduction: its path.
fn keep_failure(name: &str, bytes: &[u8], case: u64) -> String {
    let p = std::env::temp_dir().join(format!("gpumon-fuzz-failure-{case}-{}", name.trim_start_matches('.')));
    match std::fs::write(&p, bytes) {
        Ok(()) => format!("kept as {}", p.display()),
        Err(e) => format!("not kept: {e}"),
    }
}

#[test]
fn fuzz_the_readers_with_mutants_of_files_gpumon_writes() {
    let secs: Option<u64> = std::env::var("GPUMON_FUZZ_SECS").ok().and_then(|s| s.parse().ok());
    let seed: u64 =
        std::env::var("GPUMON_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x9E37_79B9_7F4A_7C15);
    let src = tempfile::tempdir().unwrap();
    let files: Vec<(Vec<u8>, &str, String, bool)> = corpus(src.path())
        .into_iter()
        .map(|(p, what)| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let text = what == "csv" || what == "nvidia-smi log";
            (std::fs::read(&p).unwrap(), if what == "journal" { "journal" } else { what }, name, text)
        })
        .collect();
    // The unmutated corpus reads cleanly.
    let work = tempfile::tempdir().unwrap();
    let mut f = Figures::default();
    for (bytes, kind, name, _) in &files {
        run_case(work.path(), name, kind, bytes, &mut f);
    }
    assert_eq!(f.refused + f.contained_panics, 0, "the corpus itself must read: {f:?}");
    let mut r = Rng(seed);
    let deadline = secs.map(|s| Instant::now() + Duration::from_secs(s));
    let mut per_kind = std::collections::BTreeMap::<&str, u64>::new();
    let mut n = 0u64;
    while deadline.map_or(n < CI_CASES, |d| Instant::now() < d) {
        let (bytes, kind, name, text) = &files[r.below(files.len())];
        let mut m = mutate(bytes, *text, &mut r);
        for _ in 0..r.below(3) {
            m = mutate(&m, *text, &mut r);
        }
        run_case(work.path(), name, kind, &m, &mut f);
        *per_kind.entry(kind).or_default() += 1;
        n += 1;
    }
    eprintln!(
        "fuzz: {} cases ({per_kind:?}) in {:?}; reads ok {}, refused with an error {}, decoder panics contained {}, \
         panics escaped {}, largest allocation {} bytes, slowest case {:?}",
        f.cases,
        deadline.map_or(Duration::ZERO, |d| Duration::from_secs(secs.unwrap_or(0))
            - d.saturating_duration_since(Instant::now())),
        f.read_ok,
        f.refused,
        f.contained_panics,
        f.escaped_panics.len(),
        f.largest,
        f.slowest
    );
    for c in &f.contained {
        eprintln!("fuzz: contained: {c}");
    }
    assert!(
        f.escaped_panics.is_empty(),
        "panics escaped the readers: {:?}",
        &f.escaped_panics[..f.escaped_panics.len().min(5)]
    );
    assert!(f.too_large.is_empty(), "allocations beyond the bound: {:?}", &f.too_large[..f.too_large.len().min(5)]);
    assert!(f.slowest < Duration::from_secs(30), "a case took {:?}", f.slowest);
}
