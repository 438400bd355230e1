//! The floor every room stands on: error kinds and exit codes, once-per-cause warnings, the live
//! status line and read progress, time zones as `--tz` names them. Imports nothing of ours.

pub mod error;
pub mod progress;
pub mod status;
pub mod warn;
pub mod zone;
