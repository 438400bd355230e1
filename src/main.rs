//! gpumon's entry point: everything lives in the library; this only sets the exit code.

fn main() {
    std::process::exit(gpumon::main());
}
