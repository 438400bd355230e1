//! `gpumon watch PATH`: a live view of a recording from another shell or SSH session
//! (`gpumon_summary::watch`); q, Ctrl-C or a signal ends it.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};

use crate::cli::WatchArgs;
use gpumon_read::ReadOptions;
use gpumon_source::hostname;
use gpumon_summary::{WatchConfig, watch_view as view};
use gpumon_util::exit;

impl WatchArgs {
    pub fn into_config(self) -> Result<WatchConfig> {
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        Ok(WatchConfig {
            host: hostname(),
            path: self.path,
            once: self.once,
            read: ReadOptions { threads, ..Default::default() },
        })
    }
}

/// Run the command.
pub fn run(cfg: &WatchConfig) -> Result<i32> {
    let stop = Arc::new(AtomicBool::new(false));
    if !cfg.once {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
        }
    }
    view(cfg, &stop)?;
    Ok(exit::OK)
}
