//! The Arrow schema of a selection, generated from the catalogue (signed integer types sized by range,
//! units and help in field metadata).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Float64Builder, Int16Builder, Int32Builder, Int64Builder,
    StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_schema::{DataType, Field as ArrowField, Schema, SchemaRef, TimeUnit};

use crate::catalog::{Field, Ty};
use crate::row::{Selection, Value};

/// Arrow type of a catalogue type.
pub(crate) fn arrow_type(ty: Ty) -> DataType {
    match ty {
        Ty::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        Ty::Str => DataType::Utf8,
        Ty::I16 => DataType::Int16,
        Ty::I32 => DataType::Int32,
        Ty::I64 => DataType::Int64,
        Ty::F64 => DataType::Float64,
        Ty::Bool => DataType::Boolean,
    }
}

/// Arrow field for a catalogue field: canonical name, nullable (missing is null), unit and help as metadata.
pub(crate) fn arrow_field(f: Field) -> ArrowField {
    let d = f.def();
    let mut md = HashMap::new();
    if !d.unit.is_empty() {
        md.insert("unit".to_string(), d.unit.to_string());
    }
    md.insert("help".to_string(), d.help.to_string());
    ArrowField::new(d.name, arrow_type(d.ty), f != Field::Timestamp).with_metadata(md)
}

/// Schema of a selection, columns in selection order, then one `progress.KEY` column per work counter.
pub fn arrow_schema(sel: &Selection) -> SchemaRef {
    let counters = sel.progress().iter().map(|k| progress_field(k));
    Arc::new(Schema::new(sel.fields().map(arrow_field).chain(counters).collect::<Vec<_>>()))
}

/// Arrow field of a work counter's column (`progress.samples`): float64, null before the job's first report.
pub(crate) fn progress_field(key: &str) -> ArrowField {
    let help = format!(
        "Work the job reported with `gpumon progress {key}=N` during the row's interval (null before its first report)"
    );
    let md = HashMap::from([("help".to_string(), help)]);
    ArrowField::new(format!("{}{key}", crate::progress::PREFIX), DataType::Float64, true)
        .with_metadata(md)
}

/// `$e` with `$b` bound to the arrow builder inside a [`ColumnBuilder`], whichever it is.
macro_rules! each_builder {
    ($s:expr, $b:ident => $e:expr) => {
        match $s {
            ColumnBuilder::Ts($b) => $e,
            ColumnBuilder::Str($b) => $e,
            ColumnBuilder::I16($b) => $e,
            ColumnBuilder::I32($b) => $e,
            ColumnBuilder::I64($b) => $e,
            ColumnBuilder::F64($b) => $e,
            ColumnBuilder::Bool($b) => $e,
        }
    };
}

/// An Arrow array builder for one catalogue type, fed [`Value`]s (missing, or out of the type's
/// range, is null). Shared by the Parquet sink and the readers that batch text rows.
pub enum ColumnBuilder {
    /// Timestamps, UTC microseconds.
    Ts(TimestampMicrosecondBuilder),
    /// Strings.
    Str(StringBuilder),
    /// 16-bit integers.
    I16(Int16Builder),
    /// 32-bit integers.
    I32(Int32Builder),
    /// 64-bit integers.
    I64(Int64Builder),
    /// Floats.
    F64(Float64Builder),
    /// Booleans.
    Bool(BooleanBuilder),
}

impl ColumnBuilder {
    /// A builder sized for a batch of 1,024 rows (a reader's batch of text rows).
    pub fn new(ty: Ty) -> ColumnBuilder {
        ColumnBuilder::with_capacity(ty, 1024)
    }

    /// A builder with room for `rows` values before it grows. A builder that is finished often
    /// (the Parquet sink's, once per flush) starts empty: each `finish` leaves it empty anyway, and
    /// room for 1,024 values in every column is about 200 KiB allocated (and pages touched) for
    /// the rows of a few ticks.
    pub fn with_capacity(ty: Ty, rows: usize) -> ColumnBuilder {
        match ty {
            Ty::Timestamp => ColumnBuilder::Ts(
                TimestampMicrosecondBuilder::with_capacity(rows).with_timezone("UTC"),
            ),
            Ty::Str => ColumnBuilder::Str(StringBuilder::with_capacity(rows, rows * 8)),
            Ty::I16 => ColumnBuilder::I16(Int16Builder::with_capacity(rows)),
            Ty::I32 => ColumnBuilder::I32(Int32Builder::with_capacity(rows)),
            Ty::I64 => ColumnBuilder::I64(Int64Builder::with_capacity(rows)),
            Ty::F64 => ColumnBuilder::F64(Float64Builder::with_capacity(rows)),
            Ty::Bool => ColumnBuilder::Bool(BooleanBuilder::with_capacity(rows)),
        }
    }

    /// Append a value (a timestamp column takes [`ColumnBuilder::push_ts`] instead).
    pub fn push(&mut self, v: &Value) {
        match self {
            ColumnBuilder::Ts(b) => b.append_null(),
            ColumnBuilder::Str(b) => b.append_option(v.as_str()),
            ColumnBuilder::I16(b) => {
                b.append_option(v.as_u64().and_then(|x| i16::try_from(x).ok()))
            }
            ColumnBuilder::I32(b) => {
                b.append_option(v.as_u64().and_then(|x| i32::try_from(x).ok()))
            }
            ColumnBuilder::I64(b) => {
                b.append_option(v.as_u64().and_then(|x| i64::try_from(x).ok()))
            }
            ColumnBuilder::F64(b) => b.append_option(v.as_f64()),
            ColumnBuilder::Bool(b) => b.append_option(v.as_u64().map(|x| x != 0)),
        }
    }

    /// Append a UTC timestamp in microseconds (ignored by non-timestamp columns' callers).
    pub fn push_ts(&mut self, us: i64) {
        if let ColumnBuilder::Ts(b) = self {
            b.append_value(us);
        }
    }

    /// The array of the values pushed so far; the builder starts empty again.
    pub fn finish(&mut self) -> ArrayRef {
        each_builder!(self, b => ArrayBuilder::finish(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CATALOG;
    use arrow_array::Array;

    #[test]
    fn out_of_range_integers_are_null_and_types_are_signed() {
        let mut b = ColumnBuilder::new(Ty::I16);
        b.push(&Value::U(100));
        b.push(&Value::U(40_000));
        b.push(&Value::Null);
        let a = b.finish();
        assert_eq!(a.data_type(), &DataType::Int16);
        assert_eq!((a.null_count(), a.len()), (2, 3));
        let mut b = ColumnBuilder::new(Ty::I64);
        b.push(&Value::U(0x1));
        b.push(&Value::U(u64::MAX));
        assert_eq!(
            b.finish().null_count(),
            1,
            "a bitmask past i64::MAX is not a value NVML reports"
        );
    }

    #[test]
    fn schema_agrees_with_catalogue() {
        let all = Selection::new(CATALOG.iter().map(|d| d.field).collect());
        let schema = arrow_schema(&all);
        assert_eq!(schema.fields().len(), CATALOG.len());
        for (af, d) in schema.fields().iter().zip(CATALOG.iter()) {
            assert_eq!(af.name(), d.name);
            assert_eq!(af.data_type(), &arrow_type(d.ty));
            assert_eq!(af.metadata().get("unit").map(String::as_str).unwrap_or(""), d.unit);
            if d.ty.user_name() == "integer" {
                assert!(af.data_type().is_signed_integer(), "{}: integers are signed", d.name);
            }
        }
    }
}
