//! Readers: turn files on disk (gpumon CSV/Parquet, journals, nvidia-smi logs) back into rows for
//! analysis, behind a boundary for untrusted bytes: sizes checked before allocating
//! (`pqbounds`, `thrift`, `schema::journal`), decoder panics contained (`util::guard`), values
//! checked (`values`).
//!
//! The modules are private: the crate's API is the list re-exported below, what the reading
//! pipeline (`summary`), the commands and the fuzz harness use. Finding inputs ([`discover()`],
//! [`discover_recording`], [`Input`]) and putting them in time order ([`in_time_order`]); which
//! recording an input belongs to ([`recording`], [`job_of`], [`number_recordings`]); reading them
//! as Arrow batches ([`scan()`], [`ReadOptions`], [`by_table`], [`probe_fields`]) with row groups
//! taken by threads in turn ([`take_in_turn`]); the Thrift walker the hostile-input tests use
//! ([`varint_at`], [`skip_value`]).

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod discover;
mod gpumon;
mod input;
mod order;
mod pqbounds;
mod recordings;
mod scan;
mod smilog;
mod sniff;
mod thrift;
mod values;

pub use crate::discover::{Discovered, discover, discover_recording};
pub use crate::gpumon::parquet::{PartVisit, take_in_turn};
pub use crate::input::{Input, Kind};
pub use crate::order::in_time_order;
pub use crate::recordings::{job_of, number_recordings, recording};
pub use crate::scan::{ByTable, ReadOptions, Visit, by_table, probe_fields, scan};
pub use crate::smilog::NvsmiOptions;
pub use crate::thrift::{ThriftError, skip_value, varint_at};
