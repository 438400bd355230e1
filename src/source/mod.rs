//! Sources: where values come from (NVML for GPUs, /proc for the host).

pub mod cgroup;
pub mod gpu;
pub mod host;
pub mod job;
pub mod probe;
pub mod visible;
