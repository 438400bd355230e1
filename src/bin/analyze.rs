//! `gpumon-analyze`: gpumon's reading commands (summarize, report, convert, compare, watch), which
//! `gpumon` execs; everything lives in the library, this only sets the exit code.

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

fn main() {
    std::process::exit(gpumon::main_reading());
}
