//! `gpumon doctor`: one screen that answers "can I see my GPUs, and what will gpumon record here".
//!
//! It loads NVML the way `record` does, lists every GPU with one probe of each GPU field (the
//! same NVML calls `record` makes), shows what `CUDA_VISIBLE_DEVICES` / `NVIDIA_VISIBLE_DEVICES`
//! select, the container and cgroup gpumon runs in, and the `/dev/nvidia*` nodes. Each problem
//! comes with its usual fix. Exit 0 when the GPUs are usable, 1 otherwise. The probing, the
//! diagnosis and the text report live in the source crate (`probe`, `diagnose`, `diagnose::text`);
//! this module prints the report in the format asked for.

use std::io::Write;

use anyhow::Result;

use gpumon_source::{CUDA_VAR, NVIDIA_VAR, doctor_text, examine};
use gpumon_util::exit;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoctorFormat {
    Text,
    Json,
}

/// Settings of one `gpumon doctor` run (built by the CLI layer).
#[derive(Debug, Clone)]
pub struct DoctorConfig {
    pub nvml_lib: String,
    pub format: DoctorFormat,
    /// Every GPU in its own block with its full field lists.
    pub verbose: bool,
}

/// Examine this machine, print the report, and return the exit code.
pub fn run(cfg: &DoctorConfig) -> Result<i32> {
    let env = |n: &str| std::env::var(n).ok();
    let report = examine(&cfg.nvml_lib, env(CUDA_VAR), env(NVIDIA_VAR), env("CUDA_DEVICE_ORDER"));
    let mut out = std::io::stdout().lock();
    match cfg.format {
        DoctorFormat::Text => out.write_all(doctor_text(&report, cfg.verbose).as_bytes())?,
        DoctorFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(if report.ok { exit::OK } else { exit::FAILURE })
}
