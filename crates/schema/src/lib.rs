//! The shared vocabulary: the field catalogue, the row model, the Arrow schema and column access,
//! run statistics and metadata, file-set naming, GPU selectors, and the journal format read back.
//! Imports nothing of ours but `util`.

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod arrow;
pub mod batch;
pub mod catalog;
pub mod cols;
pub mod control;
pub mod files;
pub mod gpus;
pub mod journal;
pub mod live;
pub mod progress;
pub mod row;
pub mod run;
