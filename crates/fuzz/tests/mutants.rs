//! The suite's fuzz run: [`CI_CASES`] mutants of the corpus, each read with every reading path under
//! an allocation bound. A case passes when nothing panics out of the readers and no single
//! allocation exceeds `alloc_limit` of the input's size; errors are expected.
//! `GPUMON_FUZZ_SECS=600 cargo test -p gpumon-fuzz --test mutants -- --nocapture` (or
//! `scripts/fuzz 600`) runs for that long and prints the figures. The tracking allocator below is
//! this test binary's only: nothing else runs under it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gpumon_fuzz::{Rng, alloc_limit, corpus, mutate, read_all, recover};

/// Mutants run by the normal test suite.
const CI_CASES: u64 = 160;

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

fn run_case(dir: &Path, name: &str, kind: &str, bytes: &[u8], f: &mut Figures) {
    let path = dir.join(name);
    let _ =
        std::fs::remove_file(dir.join(name.trim_start_matches('.').trim_end_matches(".journal")));
    let _ = std::fs::remove_file(dir.join(format!("{name}.damaged")));
    std::fs::write(&path, bytes).unwrap();
    let t0 = Instant::now();
    LARGEST.store(0, Ordering::Relaxed);
    TRACKING.with(|t| t.set(true));
    let outcome = std::panic::catch_unwind(|| {
        let read = read_all(&path).map_err(|e| format!("{e:#}"));
        let recovered = (kind == "journal").then(|| recover(&path).map_err(|e| format!("{e:#}")));
        (read, recovered)
    });
    TRACKING.with(|t| t.set(false));
    let largest = LARGEST.load(Ordering::Relaxed);
    f.cases += 1;
    f.largest = f.largest.max(largest);
    f.slowest = f.slowest.max(t0.elapsed());
    if largest > alloc_limit(bytes.len()) {
        let kept = keep_failure(name, bytes, f.cases);
        f.too_large.push(format!(
            "{kind}: {largest} bytes at once for {} input bytes ({kept})",
            bytes.len()
        ));
    }
    match outcome {
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
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
    let p = std::env::temp_dir()
        .join(format!("gpumon-fuzz-failure-{case}-{}", name.trim_start_matches('.')));
    match std::fs::write(&p, bytes) {
        Ok(()) => format!("kept as {}", p.display()),
        Err(e) => format!("not kept: {e}"),
    }
}

#[test]
fn fuzz_the_readers_with_mutants_of_files_gpumon_writes() {
    let secs: Option<u64> = std::env::var("GPUMON_FUZZ_SECS").ok().and_then(|s| s.parse().ok());
    let seed: u64 = std::env::var("GPUMON_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    let src = tempfile::tempdir().unwrap();
    let files: Vec<(Vec<u8>, &str, String, bool)> = corpus(src.path())
        .unwrap()
        .into_iter()
        .map(|(p, what)| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let text = what == "csv" || what == "nvidia-smi log";
            (
                std::fs::read(&p).unwrap(),
                if what == "journal" { "journal" } else { what },
                name,
                text,
            )
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
    assert!(
        f.too_large.is_empty(),
        "allocations beyond the bound: {:?}",
        &f.too_large[..f.too_large.len().min(5)]
    );
    assert!(f.slowest < Duration::from_secs(30), "a case took {:?}", f.slowest);
}
