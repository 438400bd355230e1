//! Sources: where values come from (NVML for GPUs, /proc for the host).
//!
//! The modules are private: the crate's API is the list re-exported below, what the recorder and
//! the commands use. The GPUs ([`GpuSource`], read off the loop's thread by [`GpuReader`]); the host
//! and the job ([`HostSource`], [`hostname`], [`PidSet`], [`JobTracker`], [`CgroupSource`]); the
//! default GPU set ([`Visible`], [`visible_from_env`]); doctor's probes and their report
//! ([`examine`], [`doctor_text`]).

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod diagnose;
mod host;
mod nvml;
mod visible;

pub use crate::diagnose::text::render as doctor_text;
pub use crate::diagnose::{examine, gpu_ranges};
pub use crate::host::cgroup::{CgroupLimits, CgroupSource, CgroupVersion};
pub use crate::host::job::{JobTracker, PidSet, describe as describe_process};
pub use crate::host::proc::{HostSource, hostname};
pub use crate::nvml::gpu::GpuSource;
pub use crate::nvml::readers::{GpuReader, GpuReads, TickReads};
pub use crate::visible::{
    CUDA_VAR, NVIDIA_VAR, Visible, env_source as visible_env_source, from_env as visible_from_env,
};
