//! `gpumon convert`: any readable input (gpumon Parquet/CSV/journal, nvidia-smi logs) to gpumon CSV or
//! Parquet (`gpumon_summary::convert`); says how many rows it wrote.

use anyhow::Result;

use crate::cli::ConvertArgs;
use gpumon_summary::{ConvertConfig, convert};
use gpumon_util::exit;
use gpumon_util::show;

/// Run the command; returns the exit code.
pub fn run(cfg: &ConvertConfig) -> Result<i32> {
    let rows = convert(cfg)?;
    eprintln!("gpumon: wrote {rows} rows to {}", show(&cfg.output));
    Ok(exit::OK)
}

impl ConvertArgs {
    pub fn into_config(self) -> Result<ConvertConfig> {
        let read = self.logs.read_options();
        Ok(ConvertConfig {
            inputs: self.inputs,
            output: self.output,
            format: self.format,
            read,
            meter: !self.quiet,
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
        })
    }
}
