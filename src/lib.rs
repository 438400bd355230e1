//! gpumon: record GPU, host and job metrics on a fixed schedule into CSV or Parquet, and read them back.
//!
//! Rooms follow the data flow (see ARCHITECTURE.md): `util` and `schema` at the floor, `source` and
//! `sink` for recording, `record` joining them, `read` -> `analysis` -> `present` for reading, `cmd`
//! wiring one subcommand each and `cli` parsing arguments. Only [`main`] and [`main_reading`] are public.

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

mod cli;
mod cmd;

/// Run the command line and return the process exit code (`gpumon`: recording, and the reading
/// commands handed to `gpumon-analyze`).
pub fn main() -> i32 {
    cmd::main()
}

/// The same for `gpumon-analyze`, the binary that runs the reading commands.
#[cfg(feature = "analyze")]
pub fn main_reading() -> i32 {
    cmd::main_reading()
}

// The library surface the integration tests use: the catalogue (names, Prometheus metric names)
// and the cgroup source they drive against real cgroups.
pub use gpumon_schema::catalog::{CATALOG, Field, FieldDef};
pub use gpumon_schema::{Row, Value};
pub use gpumon_sink::prom_metric;
pub use gpumon_source::{CgroupLimits, CgroupSource, CgroupVersion};
