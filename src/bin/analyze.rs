//! `gpumon-analyze`: gpumon's reading commands (summarize, report, convert, compare, watch), which
//! `gpumon` execs; everything lives in the library, this only sets the exit code.

fn main() {
    std::process::exit(gpumon::main_reading());
}
