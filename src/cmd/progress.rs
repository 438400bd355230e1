//! `gpumon progress KEY=N ...`: report work the job did to a running recording over its control
//! socket (the same one as `gpumon mark`); bad amounts are refused here, before anything is sent.

use std::path::PathBuf;

use anyhow::Result;

use crate::cli::ProgressArgs;
use gpumon_schema::control::Request;
use gpumon_schema::progress::parse_pairs;
use gpumon_util::UsageError;

/// A validated `progress` command line.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressConfig {
    pub request: Request,
    /// The recording's output path, or None for `$GPUMON_CONTROL`.
    pub run: Option<PathBuf>,
}

impl ProgressArgs {
    pub fn into_config(self) -> Result<ProgressConfig> {
        let pairs = parse_pairs(self.amounts.iter().map(String::as_str))
            .map_err(|why| UsageError(format!("bad progress report: {why}")))?;
        Ok(ProgressConfig { request: Request::Progress(pairs), run: self.run })
    }
}

/// Send the report; exit 0 when the recorder took it.
pub fn run(cfg: &ProgressConfig) -> Result<i32> {
    crate::cmd::mark::send(cfg.run.as_deref(), &cfg.request)
}
