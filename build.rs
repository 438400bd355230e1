//! Build script: link the unwinder statically (gcc's `libgcc_eh.a`) instead of loading
//! `libgcc_s.so.1` at every start.
//!
//! Rust's standard library asks for `-lgcc_s` on linux-gnu. Loading that library costs a second
//! DSO in the loader and runs its constructor, `__cpu_indicator_init`, whose `cpuid` instructions
//! each trap to the hypervisor in a VM: about 0.3 ms of CPU per process on the 2-vCPU build machine,
//! a twentieth of a one-sample `gpumon record` (bench/README.md). A linker script named
//! `libgcc_s.so`, found first on the search path, stands in for it and pulls in the static
//! unwinder (the same one `-C target-feature=+crt-static` links); the rest of gcc's runtime comes
//! from `libgcc.a` as before. Only with the C toolchain's own linker and when `libgcc_eh.a` is
//! there: a configured linker (`maturin --zig` sets one) brings its own unwinder.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    if env("CARGO_CFG_TARGET_OS") != "linux"
        || env("CARGO_CFG_TARGET_ENV") != "gnu"
        || !env("RUSTC_LINKER").is_empty()
    {
        return;
    }
    let Some(eh) = gcc_file("libgcc_eh.a") else { return };
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else { return };
    let dir = out.join("static-unwinder");
    let script = format!(
        "/* gpumon build.rs: the static unwinder instead of libgcc_s.so.1 */\nINPUT(\"{}\")\n",
        eh.display()
    );
    if std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("libgcc_s.so"), script))
        .is_ok()
    {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
}

/// The absolute path of one of gcc's runtime files, as the C compiler that links the binary finds it.
fn gcc_file(name: &str) -> Option<PathBuf> {
    let cc = std::env::var("CC").ok().filter(|c| !c.is_empty()).unwrap_or_else(|| "cc".to_string());
    let out = Command::new(cc).arg(format!("-print-file-name={name}")).output().ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    (out.status.success() && path.is_absolute() && path.is_file()).then_some(path)
}
