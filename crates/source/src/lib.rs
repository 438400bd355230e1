//! Sources: where values come from (NVML for GPUs, /proc for the host).

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod diagnose;
pub mod visible;

pub mod host;
pub mod nvml;
