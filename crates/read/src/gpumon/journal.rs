//! The Arrow IPC journal a crash leaves beside an open Parquet piece: read message by message up to
//! a torn tail, never modified.

use std::path::Path;

use anyhow::Result;
use arrow_array::RecordBatch;

use super::{check_schema, schema_fields, usage};
use crate::input::Input;
use gpumon_schema::catalog::{Field, Table};
use gpumon_schema::{Journal, Unreadable};
use gpumon_util::{ReadError, ReadErrorKind, show};

/// Open a journal; a journal that cannot be read at all is a [`ReadError`] naming it.
pub(crate) fn open_journal(input: &Input) -> Result<Journal, ReadError> {
    Journal::open(input.open()?).map_err(|e| match e {
        Unreadable::Io(e) => usage(&input.path, "cannot read", e),
        e => usage(&input.path, "not a readable Arrow IPC journal", e),
    })
}

/// Stream the batches of a journal of `table` message by message: a torn last batch (a crash
/// mid-write) and damaged messages are skipped with a warning, and every valid batch before and
/// after them is read. Returns the rows read and the fields of its schema.
pub(crate) fn read_journal(
    journal: &Journal,
    name: &Path,
    table: Table,
    warnings: &mut Vec<String>,
    on_batch: &mut dyn FnMut(&RecordBatch) -> Result<()>,
) -> Result<(u64, Vec<Field>)> {
    let schema = journal.schema();
    check_schema(&schema, table)
        .map_err(|e| ReadError::new(ReadErrorKind::Unsupported, show(name), e))?;
    let fields = schema_fields(&schema).into_iter().map(|(_, f)| f).collect();
    let r = journal.read_batches(on_batch)?;
    if let Some(d) = r.damage_summary() {
        warnings.push(format!("journal: {d}"));
    }
    if r.torn_tail > 0 {
        warnings.push(format!(
            "journal ends in a torn batch after {} rows ({} bytes; a crash mid-write)",
            r.rows, r.torn_tail
        ));
    }
    Ok((r.rows, fields))
}
