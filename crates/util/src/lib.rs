//! The floor every room stands on: error kinds and exit codes, once-per-cause warnings, the live
//! status line and the read meter (a bar on stderr for long reads), time zones as `--tz` names them,
//! escaping of untrusted text, word wrapping, the panic boundary around decoders. Imports nothing of
//! ours.
//!
//! The modules are private: the crate's API is the list re-exported below. Errors and exit codes
//! ([`UsageError`], [`ReadError`], [`CannotStart`], [`code_for`], [`exit`]); warnings
//! ([`warn_once`]); the read meter ([`ReadMeter`]); zones ([`Zone`]); untrusted text ([`show`],
//! [`escape`]); the panic boundary ([`contain`]); the terminal of a live view ([`Screen`]). Two
//! modules stay public because their users name them on purpose, their functions reading only
//! with the module's name: [`fsafe`] (files in shared directories: `fsafe::create_new`,
//! `fsafe::taken`) and [`status`] (the status line: `status::draw`, `status::clear_line`).

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod error;
pub mod fsafe;
mod guard;
mod meter;
mod process;
pub mod status;
mod term;
mod text;
mod tzif;
mod warn;
mod wrap;
mod zone;

pub use crate::error::{
    CannotStart, HasExitCode, Probe, ReadError, ReadErrorKind, UsageError, code_for, exit, probe,
};
pub use crate::guard::contain;
pub use crate::meter::ReadMeter;
pub use crate::process::{exists as process_exists, release_freed_memory};
pub use crate::term::{Screen, size as term_size};
pub use crate::text::{escape, for_terminal, index_ranges, is_unsafe, show};
pub use crate::warn::{printed as warnings_printed, warn, warn_once};
pub use crate::wrap::lines as wrap_lines;
pub use crate::zone::{NamedZone, Zone};
