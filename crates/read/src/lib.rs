//! Readers: turn files on disk (gpumon CSV/Parquet, journals, nvidia-smi logs) back into rows for
//! analysis, behind a boundary for untrusted bytes: sizes checked before allocating
//! ([`pqbounds`], [`thrift`], `schema::journal`), decoder panics contained (`util::guard`), values
//! checked ([`values`]).

pub mod gpumon;
pub mod inputs;
pub mod order;
pub mod pqbounds;
pub mod recordings;
pub mod scan;
pub mod smilog;
pub mod thrift;
pub mod values;
