//! The shared vocabulary: the field catalogue, the row model, the Arrow schema and column access,
//! run statistics and metadata, file-set naming, GPU selectors, and the journal format read back.
//! Imports nothing of ours but `util`.

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
