//! Readers: turn files on disk (gpumon CSV/Parquet, nvidia-smi logs) back into rows for analysis.

pub mod batch;
pub mod cols;
pub mod gpumon;
pub mod inputs;
pub mod nvsmi;
pub mod scan;
