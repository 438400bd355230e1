//! The floor every room stands on: error kinds and exit codes, once-per-cause warnings, the live
//! status line and read progress, time zones as `--tz` names them, escaping of untrusted text, word
//! wrapping, the panic boundary around decoders. Imports nothing of ours.

pub mod error;
pub mod fsafe;
pub mod guard;
pub mod process;
pub mod progress;
pub mod status;
pub mod text;
mod tzif;
pub mod warn;
pub mod wrap;
pub mod zone;
