// Where the real logs of `../shared/data` are, and what a test does without them. Included with
// `include!` by the reader's unit tests (crates/read/src/smilog/tests.rs) and the integration tests
// (tests/cli/common.rs), so both agree on the location, on the failure and on the opt-out. Every
// test that calls it is named `real_*` (scripts/test lists them and filters them out on opt-out, so
// nextest counts them skipped, never passed).

/// The folder of real nvidia-smi logs: `$GPUMON_SHARED_DATA/nvidia-smi-logs`, by default
/// `shared/data/nvidia-smi-logs` beside the project (the parent of the directory holding
/// `Cargo.lock`, found by walking up from the crate's own directory). A missing folder fails the
/// calling test with a message naming the path; `GPUMON_SHARED_DATA=skip` opts out: one line says
/// the test is skipped and None is returned.
pub fn shared_smi_logs() -> Option<std::path::PathBuf> {
    let test = std::thread::current().name().unwrap_or("this test").to_string();
    let data = match std::env::var_os("GPUMON_SHARED_DATA").filter(|d| !d.is_empty()) {
        Some(d) if d == "skip" => {
            println!("skipped {test}: GPUMON_SHARED_DATA=skip (the real logs are not read)");
            return None;
        }
        Some(d) => std::path::PathBuf::from(d),
        None => project_root().join("../shared/data"),
    };
    let logs = data.join("nvidia-smi-logs");
    assert!(
        logs.is_dir(),
        "{test}: no real logs at {}: put the shared data folder there, point GPUMON_SHARED_DATA at it, \
         or set GPUMON_SHARED_DATA=skip to skip the real-log tests (scripts/test then counts them skipped)",
        logs.display()
    );
    Some(logs)
}

/// The workspace root: the nearest directory at or above this crate's own that holds `Cargo.lock`.
fn project_root() -> std::path::PathBuf {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(here)
        .to_path_buf()
}
