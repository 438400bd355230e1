//! Readers: turn files on disk (gpumon CSV/Parquet, nvidia-smi logs) back into rows for analysis.

pub mod gpumon;
pub mod inputs;
pub mod smilog;

pub mod scan;
