//! Sources: where values come from (NVML for GPUs, /proc for the host).

pub mod diagnose;
pub mod visible;

pub mod host;
pub mod nvml;
