//! Integration tests: the real gpumon binary, the fake libnvidia-ml, and Python readers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod cgroup;
mod common;
mod doctor;
mod experiments;
mod gpm;
mod hostile;
mod job;
mod longrun;
mod progress;
mod prom;
mod readers;
mod record;
mod report;
mod safety;
mod status;
mod summarize;
