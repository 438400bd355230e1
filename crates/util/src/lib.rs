//! The floor every room stands on: error kinds and exit codes, once-per-cause warnings, the live
//! status line and read progress, time zones as `--tz` names them, escaping of untrusted text, word
//! wrapping, the panic boundary around decoders. Imports nothing of ours.

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod error;
pub mod fsafe;
pub mod guard;
pub mod process;
pub mod progress;
pub mod status;
pub mod term;
pub mod text;
mod tzif;
pub mod warn;
pub mod wrap;
pub mod zone;
