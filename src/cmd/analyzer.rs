//! Hands the reading commands (summarize, report, convert, compare, watch) to `gpumon-analyze`,
//! the second binary installed beside `gpumon`: the recorder then maps none of the reading code.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Result, anyhow};

/// The reading binary's file name.
pub const NAME: &str = "gpumon-analyze";

/// Replace this process with `gpumon-analyze` and the same arguments; returns only when it could
/// not be started.
pub fn exec() -> Result<i32> {
    // Beside this binary (links resolved), else whichever `PATH` finds.
    let beside = std::env::current_exe().ok().map(|me| me.with_file_name(NAME));
    let path = beside.clone().filter(|p| p.is_file()).unwrap_or_else(|| PathBuf::from(NAME));
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| "gpumon".into());
    let err = Command::new(&path).arg0(arg0).args(args).exec();
    Err(anyhow!(
        "cannot start {NAME} ({err}; looked at {} and on PATH): gpumon's reading commands run there; \
         install it beside gpumon (`cargo install` and the wheel install both)",
        beside.unwrap_or_else(|| PathBuf::from(NAME)).display()
    ))
}
