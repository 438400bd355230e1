//! Between rows and Arrow batches: [`RowBatcher`] turns parsed text rows (gpumon CSV, nvidia-smi logs)
//! into record batches for analysis; [`rows_of_batch`] turns any batch back into catalogue rows for
//! `convert`, which writes them with the existing sinks.

use std::sync::Arc;

use anyhow::{Context, Result};
use arrow_array::builder::TimestampMicrosecondBuilder;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field as ArrowField, Schema, SchemaRef};

use crate::arrow::ColumnBuilder;
use crate::catalog::{Field, Ty};
use crate::cols::{self, NO_TS, NO_U64};
use crate::row::{Row, Value};

/// Rows per batch built from text inputs.
pub const BATCH_ROWS: usize = 8192;

/// Collects rows into Arrow batches: `timestamp` first, then the given fields, named as the catalogue.
pub struct RowBatcher {
    fields: Vec<Field>,
    schema: SchemaRef,
    ts: TimestampMicrosecondBuilder,
    cols: Vec<ColumnBuilder>,
    rows: usize,
}

impl RowBatcher {
    /// A batcher for `fields` (the timestamp is added in front; a repeated field is kept once).
    pub fn new(fields: &[Field]) -> RowBatcher {
        let mut fs: Vec<Field> = Vec::new();
        for &f in fields {
            if f != Field::Timestamp && !fs.contains(&f) {
                fs.push(f);
            }
        }
        let cols: Vec<ColumnBuilder> = fs.iter().map(|f| ColumnBuilder::new(f.def().ty)).collect();
        let mut afs = vec![ArrowField::new(
            Field::Timestamp.name(),
            crate::arrow::arrow_type(Ty::Timestamp),
            true,
        )];
        afs.extend(
            fs.iter()
                .map(|f| ArrowField::new(f.name(), crate::arrow::arrow_type(f.def().ty), true)),
        );
        RowBatcher {
            fields: fs,
            schema: Arc::new(Schema::new(afs)),
            ts: TimestampMicrosecondBuilder::new().with_timezone("UTC"),
            cols,
            rows: 0,
        }
    }

    /// Add one row stamped `ts_us` (UTC microseconds).
    pub fn push(&mut self, ts_us: i64, row: &Row) {
        self.ts.append_value(ts_us);
        for (c, f) in self.cols.iter_mut().zip(&self.fields) {
            c.push(row.get(*f));
        }
        self.rows += 1;
    }

    /// Rows pushed so far.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether no row was pushed.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The rows added since the last call, as one batch.
    pub fn finish(&mut self) -> Result<RecordBatch> {
        let mut arrays: Vec<ArrayRef> = vec![Arc::new(self.ts.finish())];
        arrays.extend(self.cols.iter_mut().map(ColumnBuilder::finish));
        self.rows = 0;
        RecordBatch::try_new(self.schema.clone(), arrays).context("building a record batch")
    }
}

/// Catalogue field of each column of a batch (by name or nvidia-smi alias), if any.
pub(crate) fn batch_fields(batch: &RecordBatch) -> Vec<Option<Field>> {
    batch.schema().fields().iter().map(|f| Field::lookup(f.name())).collect()
}

/// The first column of `batch` that holds field `f` (by name or alias).
pub fn column(batch: &RecordBatch, f: Field) -> Option<&dyn arrow_array::Array> {
    let i = batch.schema().fields().iter().position(|c| Field::lookup(c.name()) == Some(f))?;
    Some(batch.column(i).as_ref())
}

/// Each row of `batch` as (UTC µs timestamp, catalogue row); rows without a timestamp are left out.
/// Values are converted to the catalogue type of their field.
pub fn rows_of_batch(batch: &RecordBatch, rows: &mut Vec<(i64, Row)>) {
    let n = batch.num_rows();
    let fields = batch_fields(batch);
    let mut ts = Vec::with_capacity(n);
    let ts_col = fields.iter().position(|f| *f == Some(Field::Timestamp));
    let Some(c) = ts_col else { return };
    if !cols::ts_micros(batch.column(c).as_ref(), &mut ts) {
        return;
    }
    let start = rows.len();
    rows.extend(ts.iter().map(|&t| (t, Row::default())));
    let out = &mut rows[start..];
    let mut f64s = Vec::with_capacity(n);
    let mut u64s = Vec::with_capacity(n);
    for (col, field) in batch.columns().iter().zip(&fields) {
        if let Some(f) = *field
            && f != Field::Timestamp
        {
            set_column(out, f, col.as_ref(), &mut f64s, &mut u64s);
        }
    }
    set_counters(batch, out);
    // Rows without a timestamp cannot be placed in time.
    if ts.contains(&NO_TS) {
        let tail = rows.split_off(start);
        rows.extend(tail.into_iter().filter(|r| r.0 != NO_TS));
    }
}

/// The names of a batch's work-counter columns (`progress.KEY`), in order.
pub fn counter_names(batch: &RecordBatch) -> Vec<String> {
    let schema = batch.schema();
    let names = schema.fields().iter().filter(|f| crate::progress::column_key(f.name()).is_some());
    names.take(crate::progress::MAX_KEYS).map(|f| f.name().clone()).collect()
}

/// Set the work counters of each row in `out` from the batch's `progress.KEY` columns, in their order.
fn set_counters(batch: &RecordBatch, out: &mut [(i64, Row)]) {
    let schema = batch.schema();
    let mut values: Vec<Vec<f64>> = Vec::new();
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        if crate::progress::column_key(f.name()).is_none()
            || values.len() >= crate::progress::MAX_KEYS
        {
            continue;
        }
        let mut v = Vec::with_capacity(out.len());
        if !cols::f64_values(c.as_ref(), &mut v) {
            v = vec![f64::NAN; out.len()];
        }
        values.push(v);
    }
    if values.is_empty() {
        return;
    }
    for (i, (_, row)) in out.iter_mut().enumerate() {
        row.set_progress(Some(
            values.iter().map(|v| v.get(i).copied().unwrap_or(f64::NAN)).collect(),
        ));
    }
}

/// Set field `f` of each row in `out` from the column `arr`, converted to the field's catalogue type;
/// nulls leave the field unset. `f64s` and `u64s` are scratch buffers.
fn set_column(
    out: &mut [(i64, Row)],
    f: Field,
    arr: &dyn Array,
    f64s: &mut Vec<f64>,
    u64s: &mut Vec<u64>,
) {
    match f.def().ty {
        Ty::Str => {
            let mut last: Option<(usize, Arc<str>)> = None;
            let mut ids = cols::Interner::default();
            let mut idv = Vec::with_capacity(out.len());
            if cols::str_ids(arr, &mut ids, u32::MAX, &mut idv) {
                for (r, &id) in out.iter_mut().zip(&idv) {
                    if id == u32::MAX {
                        continue;
                    }
                    let s = match &last {
                        Some((l, s)) if *l == id as usize => s.clone(),
                        _ => {
                            let s: Arc<str> = Arc::from(ids.name(id));
                            last = Some((id as usize, s.clone()));
                            s
                        }
                    };
                    r.1.set(f, Value::S(s));
                }
            } else if arr.data_type() != &DataType::Null {
                // Numbers in a text field (e.g. an integer pstate): keep their text.
                f64s.clear();
                if cols::f64_values(arr, f64s) {
                    for (r, &v) in out.iter_mut().zip(f64s.iter()) {
                        if !v.is_nan() {
                            r.1.set(f, Value::S(Arc::from(v.to_string().as_str())));
                        }
                    }
                }
            }
        }
        Ty::F64 => {
            f64s.clear();
            if cols::f64_values(arr, f64s) {
                for (r, &v) in out.iter_mut().zip(f64s.iter()) {
                    if !v.is_nan() {
                        r.1.set(f, Value::F(v));
                    }
                }
            }
        }
        Ty::Timestamp => {}
        _ => {
            u64s.clear();
            if cols::u64_values(arr, u64s) {
                for (r, &v) in out.iter_mut().zip(u64s.iter()) {
                    if v != NO_U64 {
                        r.1.set(f, Value::U(v));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_through_a_batch() {
        let mut b =
            RowBatcher::new(&[Field::Host, Field::UtilGpu, Field::PowerDraw, Field::Pstate]);
        let mut r = Row::default();
        r.set(Field::Host, Value::S(Arc::from("h")));
        r.set(Field::UtilGpu, Value::U(42));
        r.set(Field::PowerDraw, Value::F(70.5));
        b.push(1_000_000, &r);
        r.set(Field::UtilGpu, Value::Null);
        b.push(2_000_000, &r);
        let batch = b.finish().unwrap();
        assert_eq!(batch.num_rows(), 2);
        let mut rows = Vec::new();
        rows_of_batch(&batch, &mut rows);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].0, 1_000_000);
        assert_eq!(rows[0].1.get(Field::UtilGpu), &Value::U(42));
        assert_eq!(rows[1].1.get(Field::UtilGpu), &Value::Null);
        assert_eq!(rows[1].1.get(Field::PowerDraw), &Value::F(70.5));
        assert_eq!(rows[1].1.get(Field::Host).as_str(), Some("h"));
        assert!(b.is_empty());
    }

    #[test]
    fn work_counters_come_back_with_their_rows() {
        // A sink's batch (a Parquet requeue reads its rows back from them; convert reads inputs so).
        use arrow_array::{Float64Array, TimestampMicrosecondArray};
        let schema = Arc::new(arrow_schema::Schema::new(vec![
            crate::arrow::arrow_field(Field::Timestamp),
            crate::arrow::progress_field("samples"),
            crate::arrow::progress_field("tokens"),
        ]));
        let ts = TimestampMicrosecondArray::from(vec![1, 2]).with_timezone("UTC");
        let cols: Vec<arrow_array::ArrayRef> = vec![
            Arc::new(ts),
            Arc::new(Float64Array::from(vec![None, Some(32.0)])),
            Arc::new(Float64Array::from(vec![Some(7.5), Some(0.0)])),
        ];
        let batch = RecordBatch::try_new(schema, cols).unwrap();
        assert_eq!(counter_names(&batch), ["progress.samples", "progress.tokens"]);
        let mut rows = Vec::new();
        rows_of_batch(&batch, &mut rows);
        assert_eq!((rows[0].1.progress(0), rows[0].1.progress(1)), (None, Some(7.5)));
        assert_eq!((rows[1].1.progress(0), rows[1].1.progress(1)), (Some(32.0), Some(0.0)));
    }
}
