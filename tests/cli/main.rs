//! Integration tests: the real gpumon binary, the fake libnvidia-ml, and Python readers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod longrun;
mod record;
