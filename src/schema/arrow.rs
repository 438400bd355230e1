//! The Arrow schema of a selection, generated from the catalogue (types, units and help in field metadata).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{
    BooleanBuilder, Float64Builder, StringBuilder, TimestampMicrosecondBuilder, UInt8Builder, UInt32Builder,
    UInt64Builder,
};
use arrow_schema::{DataType, Field as ArrowField, Schema, SchemaRef, TimeUnit};

use crate::schema::catalog::{Field, Ty};
use crate::schema::row::{Selection, Value};

/// Arrow type of a catalogue type.
pub fn arrow_type(ty: Ty) -> DataType {
    match ty {
        Ty::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        Ty::Str => DataType::Utf8,
        Ty::U8 => DataType::UInt8,
        Ty::U32 => DataType::UInt32,
        Ty::U64 => DataType::UInt64,
        Ty::F64 => DataType::Float64,
        Ty::Bool => DataType::Boolean,
    }
}

/// Arrow field for a catalogue field: canonical name, nullable (missing is null), unit and help as metadata.
pub fn arrow_field(f: Field) -> ArrowField {
    let d = f.def();
    let mut md = HashMap::new();
    if !d.unit.is_empty() {
        md.insert("unit".to_string(), d.unit.to_string());
    }
    md.insert("help".to_string(), d.help.to_string());
    ArrowField::new(d.name, arrow_type(d.ty), f != Field::Timestamp).with_metadata(md)
}

/// Schema of a selection, columns in selection order.
pub fn arrow_schema(sel: &Selection) -> SchemaRef {
    Arc::new(Schema::new(sel.fields().map(arrow_field).collect::<Vec<_>>()))
}

/// An Arrow array builder for one catalogue type, fed [`Value`]s (missing, or out of the type's
/// range, is null). Shared by the Parquet sink and the readers that batch text rows.
pub enum ColumnBuilder {
    Ts(TimestampMicrosecondBuilder),
    Str(StringBuilder),
    U8(UInt8Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    F64(Float64Builder),
    Bool(BooleanBuilder),
}

impl ColumnBuilder {
    pub fn new(ty: Ty) -> ColumnBuilder {
        match ty {
            Ty::Timestamp => ColumnBuilder::Ts(TimestampMicrosecondBuilder::new().with_timezone("UTC")),
            Ty::Str => ColumnBuilder::Str(StringBuilder::new()),
            Ty::U8 => ColumnBuilder::U8(UInt8Builder::new()),
            Ty::U32 => ColumnBuilder::U32(UInt32Builder::new()),
            Ty::U64 => ColumnBuilder::U64(UInt64Builder::new()),
            Ty::F64 => ColumnBuilder::F64(Float64Builder::new()),
            Ty::Bool => ColumnBuilder::Bool(BooleanBuilder::new()),
        }
    }

    /// Append a value (a timestamp column takes [`ColumnBuilder::push_ts`] instead).
    pub fn push(&mut self, v: &Value) {
        match self {
            ColumnBuilder::Ts(b) => b.append_null(),
            ColumnBuilder::Str(b) => b.append_option(v.as_str()),
            ColumnBuilder::U8(b) => b.append_option(v.as_u64().and_then(|x| u8::try_from(x).ok())),
            ColumnBuilder::U32(b) => b.append_option(v.as_u64().and_then(|x| u32::try_from(x).ok())),
            ColumnBuilder::U64(b) => b.append_option(v.as_u64()),
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

    pub fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::Ts(b) => Arc::new(b.finish()),
            ColumnBuilder::Str(b) => Arc::new(b.finish()),
            ColumnBuilder::U8(b) => Arc::new(b.finish()),
            ColumnBuilder::U32(b) => Arc::new(b.finish()),
            ColumnBuilder::U64(b) => Arc::new(b.finish()),
            ColumnBuilder::F64(b) => Arc::new(b.finish()),
            ColumnBuilder::Bool(b) => Arc::new(b.finish()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::catalog::CATALOG;

    #[test]
    fn schema_and_csv_header_agree_with_catalogue() {
        let all = Selection::new(CATALOG.iter().map(|d| d.field).collect());
        let schema = arrow_schema(&all);
        assert_eq!(schema.fields().len(), CATALOG.len());
        for (af, d) in schema.fields().iter().zip(CATALOG.iter()) {
            assert_eq!(af.name(), d.name);
            assert_eq!(af.data_type(), &arrow_type(d.ty));
            assert_eq!(af.metadata().get("unit").map(String::as_str).unwrap_or(""), d.unit);
            assert!(d.csv_header().starts_with(d.name));
        }
    }
}
