//! The shared vocabulary: the field catalogue, the row model, the Arrow schema and column access,
//! run statistics and metadata, file-set naming, GPU selectors, and the journal format read back.
//! Imports nothing of ours but `util`.
//!
//! The crate's API is the list re-exported below: the row model ([`Value`], [`Row`], [`Tick`],
//! [`Selection`]), batches ([`RowBatcher`], [`rows_of_batch`], [`field_column`]), the Arrow schema
//! ([`arrow_schema()`]), run statistics and metadata ([`RunStats`], [`RunMeta`], [`InputInfo`],
//! [`JobId`]), file-set naming ([`Format`], [`OutputSet`], [`journal_path`]), GPU selectors
//! ([`GpuSelector`]), the journal read back ([`Journal`]) and the live-status document
//! ([`LiveStatus`], [`read_status`]). Four modules stay public, each a vocabulary its users name on
//! purpose, whose names read only with the module's: [`catalog`] (the field catalogue, the single
//! source of truth: `catalog::Field`, `catalog::Source`, `catalog::CATALOG`), [`cols`] (typed
//! access to Arrow columns: `cols::f64_values`, `cols::NO_TS`), [`control`] (the control
//! socket's messages: `control::parse`, `control::ENV`) and [`progress`] (the job's work counters:
//! `progress::PREFIX`, `progress::column_key`). The other modules are private.

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod arrow;
mod batch;
pub mod catalog;
pub mod cols;
pub mod control;
mod files;
mod gpus;
mod journal;
mod live;
pub mod progress;
mod row;
mod run;

pub use crate::arrow::{ColumnBuilder, arrow_schema};
pub use crate::batch::{
    BATCH_ROWS, RowBatcher, column as field_column, counter_names, rows_of_batch,
};
pub use crate::files::{
    Format, OutputSet, PARTIAL, companion_path, hidden, journal_path, partial_path,
    piece_of_journal, status_path, sync_dir, written_by_gpumon,
};
pub use crate::gpus::{GpuSelector, show_list as show_gpu_list};
pub use crate::journal::{Journal, Unreadable};
pub use crate::live::{
    LiveCounter, LiveProc, LiveStatus, NotRead, SCHEMA as LIVE_SCHEMA, read_status, recorder_pid,
    rfc3339,
};
pub use crate::row::{GpuEvent, GpuProc, ProcUtil, Row, Selection, Tick, Value, routine_event};
pub use crate::run::{
    InputInfo, JOB_COMMAND_KEY, JOB_END_KEY, JOB_EXIT_CODE_KEY, JOB_ID_MAX, JOB_LEFT_RUNNING_KEY,
    JobId, JobInfo, RecordingGroup, RecordingOf, RunMeta, RunStats, recordings_note,
    several_recordings,
};
