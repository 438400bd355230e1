//! Integration tests: the real gpumon binary, the fake libnvidia-ml, and Python readers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod callbacks;
mod cgroup;
mod common;
mod diagnosis;
mod docs;
mod doctor;
mod experiments;
mod fleet;
mod gpm;
mod habits;
mod harness;
mod hostile;
mod job;
mod jobview;
mod longrun;
pub mod mig;
mod other_logs;
mod present;
mod progress;
mod prom;
mod readers;
mod record;
mod report;
mod safety;
mod shared_dir;
mod smi_habits;
mod status;
mod summarize;
mod userpath;
mod visible;
mod writers;
