//! Readers for gpumon's own files as streams of Arrow batches, one module per format: Parquet
//! (projected, row groups read in parallel), the Arrow IPC journal a crash leaves beside an open
//! Parquet piece (read up to a torn tail, never modified), and gpumon CSV (a cut last line is
//! skipped with a warning). This module holds what they share: an Arrow schema's catalogue columns
//! and the error naming a file.
//!
//! Columns are matched to the catalogue by name (or nvidia-smi alias); any integer, float or
//! decimal Arrow type is accepted for numeric fields (decimals and half floats read as `Float64`,
//! see [`crate::values::check`]) and a timestamp in any unit, so Parquet written by other tools
//! reads too.

pub(crate) mod csv;
pub(crate) mod journal;
pub(crate) mod parquet;

use std::path::Path;

use crate::values::type_fits;
use gpumon_schema::catalog::{Field, Source, Table};
use gpumon_schema::cols;
use gpumon_util::{ReadError, ReadErrorKind, show};

fn usage(path: &Path, what: &str, e: impl std::fmt::Display) -> ReadError {
    ReadError::new(ReadErrorKind::Malformed, show(path), format_args!("{what}: {e}"))
}

/// Columns of a schema that name catalogue fields in a type that can hold them: (column index,
/// field), first column per field. Other types are listed by [`crate::values::mistyped`].
pub(crate) fn schema_fields(schema: &arrow_schema::Schema) -> Vec<(usize, Field)> {
    let mut out: Vec<(usize, Field)> = Vec::new();
    for (i, f) in schema.fields().iter().enumerate() {
        if let Some(field) = Field::lookup(f.name())
            && (type_fits(field.def().ty, f.data_type()) || field == Field::Timestamp)
            && !out.iter().any(|(_, g)| *g == field)
        {
            out.push((i, field));
        }
    }
    out
}

/// Why a schema cannot be read as `table`, if it cannot.
pub(crate) fn check_schema(
    schema: &arrow_schema::Schema,
    table: Table,
) -> std::result::Result<(), String> {
    let fields = schema_fields(schema);
    let Some(&(ts, _)) = fields.iter().find(|(_, f)| *f == Field::Timestamp) else {
        return Err("no timestamp column".into());
    };
    if !cols::is_timestamp(schema.field(ts).data_type()) {
        return Err(format!(
            "the timestamp column is {}, not a timestamp",
            schema.field(ts).data_type()
        ));
    }
    let found = Table::of(fields.iter().map(|(_, f)| *f));
    if found != table {
        return Err(format!("{}, not {}", found.describe(), table.describe()));
    }
    if table == Table::Metrics
        && !fields
            .iter()
            .any(|(_, f)| matches!(f.def().source, Source::Gpu | Source::Host | Source::Derived))
        && !fields
            .iter()
            .any(|(_, f)| f.name().starts_with("job.") || f.name().starts_with("cgroup."))
    {
        return Err("no gpumon metrics columns".into());
    }
    Ok(())
}
