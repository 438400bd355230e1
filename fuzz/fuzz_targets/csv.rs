//! Any bytes as `run.csv`, read through every reading path (`gpumon_fuzz::read_all`).
//! A panic out of the readers or an unbounded allocation is a finding; errors are expected.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("run.csv");
    if std::fs::write(&path, data).is_ok() {
        let _ = gpumon_fuzz::read_all(&path);
    }
});
