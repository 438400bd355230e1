//! Readers: turn files on disk (gpumon CSV/Parquet, journals, nvidia-smi logs) back into rows for
//! analysis, behind a boundary for untrusted bytes: sizes checked before allocating
//! ([`pqbounds`], [`thrift`], `schema::journal`), decoder panics contained (`util::guard`), values
//! checked ([`values`]).

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod discover;
pub mod gpumon;
pub mod input;
pub mod order;
mod pqbounds;
pub mod recordings;
pub mod scan;
pub mod smilog;
mod sniff;
pub mod thrift;
mod values;
