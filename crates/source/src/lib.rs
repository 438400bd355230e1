//! Sources: where values come from (NVML for GPUs, /proc for the host).

pub mod cgroup;
pub mod diagnose;
mod events;
mod gpm;
pub mod gpu;
mod health;
pub mod host;
pub mod job;
pub mod mig;
pub mod probe;
pub mod readers;
pub mod visible;
mod watchdog;
