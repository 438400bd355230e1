//! The floor every room stands on: error kinds and exit codes, once-per-cause warnings, the live
//! status line and read progress. Imports nothing of ours.

pub mod error;
pub mod progress;
pub mod status;
pub mod warn;
