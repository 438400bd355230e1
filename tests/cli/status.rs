//! The live status line in a real terminal: tmux, 80 columns, 8 GPUs. The line must never be wider
//! than the terminal (a wrapped line leaves rows behind that the in-place redraw cannot clear).

use std::time::{Duration, Instant};

use crate::common::fake_nvml;
use crate::harness::Tmux;

/// Eight GPUs busy at 90-99 %, so the status line lists eight readings.
fn eight_gpus() -> String {
    let mut s = String::from("init = ok\n");
    for i in 0..8 {
        s += &format!(
            "\n[device]\nname = NVIDIA H100 80GB HBM3\nutilization.gpu = {}\nmemory.used = 1000\n",
            90 + i
        );
    }
    s
}

/// A private tmux server (its own socket), killed when dropped.
#[test]
fn status_line_fits_an_80_column_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.txt");
    std::fs::write(&scenario, eight_gpus()).unwrap();
    // A long output name makes the line longer still.
    let out = dir.path().join("a-rather-long-output-file-name-for-this-training-run.csv");
    let bin = assert_cmd::cargo::cargo_bin("gpumon");
    let script = format!(
        "env -u CUDA_VISIBLE_DEVICES -u NVIDIA_VISIBLE_DEVICES GPUMON_NVML_LIB='{}' FAKE_NVML_SCENARIO='{}' '{}' record -i 200ms --duration 4s -o '{}'; echo gpumon-exit=$?; sleep 60",
        fake_nvml().display(),
        scenario.display(),
        bin.display(),
        out.display()
    );
    let tmux = Tmux::new("status");
    tmux.start("t", 80, 24, &script);
    let width = tmux.run(&["display-message", "-p", "-t", "t", "#{pane_width}"]);
    assert_eq!(
        String::from_utf8_lossy(&width.stdout).trim(),
        "80",
        "the pane must be 80 columns wide"
    );

    let t0 = Instant::now();
    let mut seen = 0;
    let mut last = String::new();
    while t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(300));
        let screen = tmux.capture("t");
        if screen.contains("gpumon-exit=") {
            last = screen;
            break;
        }
        for line in screen.lines() {
            assert!(
                line.chars().count() <= 80,
                "a line wider than the terminal (it wrapped):\n{screen}"
            );
        }
        let status: Vec<&str> = screen.lines().filter(|l| l.contains("ticks")).collect();
        assert!(status.len() <= 1, "the status line was not redrawn in place:\n{screen}");
        if let Some(s) = status.first() {
            assert!(s.starts_with("gpumon ") && s.contains("GPU 90%"), "{s}");
            assert!(s.chars().count() < 80, "{s}");
            seen += 1;
        }
        last = screen;
    }
    assert!(last.contains("gpumon-exit=0"), "gpumon did not end cleanly:\n{last}");
    assert!(seen >= 3, "the status line was seen {seen} times:\n{last}");
    assert!(
        !last.lines().any(|l| l.contains("ticks")),
        "the status line is cleared at the end:\n{last}"
    );
    // The run ends with what it wrote: the file, rows, GPUs, span and size.
    let wrote = last.lines().find(|l| l.starts_with("gpumon: wrote ")).unwrap_or_else(|| {
        panic!("no 'gpumon: wrote' line:\n{last}");
    });
    assert!(wrote.contains(" rows, 8 GPUs, ") && wrote.contains(" UTC ("), "{wrote}");
}

#[test]
fn wrapped_job_output_is_not_mixed_with_a_status_line() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.txt");
    std::fs::write(&scenario, eight_gpus()).unwrap();
    let out = dir.path().join("run.csv");
    let bin = assert_cmd::cargo::cargo_bin("gpumon");
    // The job writes without a newline first (as a progress print does), then ends the line.
    let job = dir.path().join("job.sh");
    std::fs::write(
        &job,
        "for i in 1 2 3 4 5 6 7 8 9 10; do printf 'bs=64 '; sleep 0.2; echo step$i done; done\n",
    )
    .unwrap();
    let script = format!(
        "env -u CUDA_VISIBLE_DEVICES -u NVIDIA_VISIBLE_DEVICES GPUMON_NVML_LIB='{}' FAKE_NVML_SCENARIO='{}' '{}' record -i 100ms -o '{}' -- sh '{}'; echo gpumon-exit=$?; sleep 60",
        fake_nvml().display(),
        scenario.display(),
        bin.display(),
        out.display(),
        job.display()
    );
    let tmux = Tmux::new("wrap");
    tmux.start("t", 80, 24, &script);
    let t0 = Instant::now();
    let mut last = String::new();
    while t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(150));
        let screen = tmux.capture("t");
        assert!(
            !screen.contains("ticks"),
            "a status line was drawn over the job's output:\n{screen}"
        );
        let done = screen.contains("gpumon-exit=");
        last = screen;
        if done {
            break;
        }
    }
    assert!(last.contains("gpumon-exit=0"), "gpumon did not end cleanly:\n{last}");
    for i in 1..=10 {
        assert!(
            last.lines().any(|l| l == format!("bs=64 step{i} done")),
            "line {i} of the job was broken:\n{last}"
        );
    }
}

/// Until the first flush a Parquet file has no bytes: the status line counts the ticks held in
/// memory instead of showing `0 B`.
#[test]
fn status_line_counts_ticks_until_the_file_has_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.txt");
    std::fs::write(&scenario, eight_gpus()).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("gpumon");
    let script = format!(
        "cd '{}' && env -u CUDA_VISIBLE_DEVICES -u NVIDIA_VISIBLE_DEVICES GPUMON_NVML_LIB='{}' FAKE_NVML_SCENARIO='{}' '{}' record -i 200ms --duration 3s -o r.parquet; echo gpumon-exit=$?; sleep 60",
        dir.path().display(),
        fake_nvml().display(),
        scenario.display(),
        bin.display(),
    );
    let tmux = Tmux::new("bytes");
    tmux.start("t", 120, 24, &script);
    let t0 = Instant::now();
    let mut lines = Vec::new();
    while t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(200));
        let screen = tmux.capture("t");
        if screen.contains("gpumon-exit=") {
            break;
        }
        lines.extend(screen.lines().filter(|l| l.contains("ticks")).map(str::to_string));
    }
    assert!(!lines.is_empty(), "no status line seen");
    assert!(lines.iter().all(|l| !l.contains(" 0 B")), "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("ticks buffered")), "{lines:#?}");
}
