//! Sources: where values come from (NVML for GPUs, /proc and sysinfo for the host).

pub mod gpu;
pub mod host;
