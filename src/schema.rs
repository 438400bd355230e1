//! The Arrow schema of a selection, generated from the catalogue (types, units and help in field metadata).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field as ArrowField, Schema, SchemaRef, TimeUnit};

use crate::catalog::{Field, Ty};
use crate::sample::Selection;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CATALOG;

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
