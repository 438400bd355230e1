//! gpumon: record GPU, host and job metrics on a fixed schedule into CSV or Parquet, and read them back.

pub mod agg;
pub mod analysis;
pub mod catalog;
pub mod cli;
pub mod convert;
pub mod doctor;
pub mod error;
pub mod output;
pub mod present;
pub mod progress;
pub mod prom;
pub mod read;
pub mod record;
pub mod report;
pub mod sample;
pub mod schema;
pub mod sink;
pub mod source;
pub mod status;
pub mod summarize;
pub mod warn;
pub mod writer;
