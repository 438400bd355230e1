// Where the real logs of `../shared/data` are, and how a test without them is skipped. Included with
// `include!` by the reader's unit tests (src/read/smilog/tests.rs) and the integration tests
// (tests/cli/common.rs), so both agree on the location and on the skip line.

/// The folder of real nvidia-smi logs: `$GPUMON_SHARED_DATA/nvidia-smi-logs`, by default
/// `../shared/data/nvidia-smi-logs` beside the project. When it is missing (a fresh clone), prints
/// one line saying the calling test is skipped and why, and returns None: the test then passes.
pub fn shared_smi_logs() -> Option<std::path::PathBuf> {
    let data = match std::env::var_os("GPUMON_SHARED_DATA").filter(|d| !d.is_empty()) {
        Some(d) => std::path::PathBuf::from(d),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
    };
    let logs = data.join("nvidia-smi-logs");
    if logs.is_dir() {
        return Some(logs);
    }
    let thread = std::thread::current();
    println!(
        "skipped {}: no real logs at {} (set GPUMON_SHARED_DATA to the shared data folder to run it)",
        thread.name().unwrap_or("this test"),
        logs.display()
    );
    None
}
