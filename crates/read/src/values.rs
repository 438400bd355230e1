//! Value checks at the reader boundary, the same for every input kind: a GPU index that is not a
//! GPU number (negative, fractional, beyond 65535: `u32::MAX` is NVML's "no value"), a percentage
//! outside 0–100 and a timestamp outside the years 1900–9999 are set to null and counted, so every
//! statistic sees the same values (a mean of 255 beside a p95 of 100 cannot happen), time
//! arithmetic cannot overflow, and nothing is merged or dropped in silence. Decimal and half-float
//! columns are read as `Float64`. A column whose type cannot hold its field (text in
//! `utilization.gpu`) is removed and listed.

use std::sync::Arc;

use anyhow::{Context, Result};
use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field as ArrowField, Schema};

use gpumon_schema::catalog::{Field, Ty};
use gpumon_schema::{Row, Value, cols};

/// Highest GPU index accepted.
pub(crate) const MAX_INDEX: f64 = 65_535.0;
/// Slack above 100 % for floating-point rounding of computed percentages.
const PERCENT_SLACK: f64 = 1e-6;
/// Timestamps accepted, UTC microseconds: 1900-01-01 to 9999-12-31.
const TS_RANGE: std::ops::RangeInclusive<i64> = -2_208_988_800_000_000..=253_402_300_799_999_999;

/// Whether values of `f` are percentages bounded by 100 (fan speed, a job's CPU over several cores
/// and a cgroup's CPU over its quota may exceed it).
fn bounded_percent(f: Field) -> bool {
    f.def().unit == "%" && !matches!(f, Field::FanSpeed | Field::JobCpu | Field::CgroupCpuUtil)
}

/// Whether an Arrow type can hold values of catalogue type `ty`.
pub(crate) fn type_fits(ty: Ty, dt: &DataType) -> bool {
    match ty {
        Ty::Timestamp => cols::is_timestamp(dt),
        Ty::Str => cols::is_string(dt) || *dt == DataType::Null,
        Ty::I16 | Ty::I32 | Ty::I64 | Ty::F64 | Ty::Bool => {
            dt.is_numeric() || matches!(dt, DataType::Boolean | DataType::Null)
        }
    }
}

/// Columns of a schema named after a field but of a type that cannot hold it: `name (type)`.
pub(crate) fn mistyped(schema: &Schema) -> Vec<String> {
    schema
        .fields()
        .iter()
        .filter(|c| Field::lookup(c.name()).is_some_and(|f| !type_fits(f.def().ty, c.data_type())))
        .map(|c| {
            format!("{} ({}: not a {})", c.name(), c.data_type(), ty_name(Field::lookup(c.name())))
        })
        .collect()
}

fn ty_name(f: Option<Field>) -> &'static str {
    match f.map(|f| f.def().ty) {
        Some(Ty::Timestamp) => "timestamp",
        Some(Ty::Str) => "text column",
        _ => "number",
    }
}

/// Out-of-range values of one kind: how many, and the first one seen.
#[derive(Debug, Default, Clone, PartialEq)]
struct Tally {
    n: u64,
    example: f64,
}

impl Tally {
    fn add(&mut self, n: u64, example: f64) {
        if self.n == 0 {
            self.example = example;
        }
        self.n += n;
    }
}

/// What the checks found in an input (merged over its batches).
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct BadValues {
    index: Tally,
    /// Timestamps outside [`TS_RANGE`] (example in seconds since 1970).
    time: Tally,
    percent: Vec<(Field, Tally)>,
    /// Values too large for their field's type (a text row's 300 in an 8-bit column).
    range: Vec<(Field, Tally)>,
}

impl BadValues {
    pub(crate) fn merge(&mut self, o: BadValues) {
        self.index.add(o.index.n, o.index.example);
        self.time.add(o.time.n, o.time.example);
        for (f, t) in o.percent {
            self.percent_tally(f).add(t.n, t.example);
        }
        for (f, t) in o.range {
            tally(&mut self.range, f).add(t.n, t.example);
        }
    }

    /// Check the values of a row parsed from text before it is batched: a bad index or
    /// percentage, or a value too large for the field's type, is counted, and a copy of the row
    /// with those values null is returned (None when all are fine).
    pub(crate) fn check_row(&mut self, row: &Row, fields: &[Field]) -> Option<Row> {
        let mut fixed: Option<Row> = None;
        for &f in fields {
            let x = match row.get(f) {
                Value::U(v) => *v as f64,
                Value::F(v) => *v,
                _ => continue,
            };
            let ty_max = match f.def().ty {
                Ty::I16 => f64::from(i16::MAX),
                Ty::I32 => f64::from(i32::MAX),
                _ => f64::INFINITY,
            };
            if f == Field::Index && !(0.0..=MAX_INDEX).contains(&x) {
                self.index.add(1, x);
            } else if bounded_percent(f) && !(0.0..=100.0 + PERCENT_SLACK).contains(&x) {
                self.percent_tally(f).add(1, x);
            } else if x > ty_max {
                tally(&mut self.range, f).add(1, x);
            } else {
                continue;
            }
            fixed.get_or_insert_with(|| row.clone()).set(f, Value::Null);
        }
        fixed
    }

    fn percent_tally(&mut self, f: Field) -> &mut Tally {
        tally(&mut self.percent, f)
    }

    /// One warning per kind of bad value.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.index.n > 0 {
            w.push(format!(
                "{} row(s) with an index that is not a GPU number (0 to 65535; e.g. {}): their GPU values are left out",
                self.index.n, self.index.example
            ));
        }
        if self.time.n > 0 {
            w.push(format!(
                "{} row(s) with a timestamp outside the years 1900-9999 (e.g. {} s after 1970) cannot be placed in time: left out",
                self.time.n, self.time.example
            ));
        }
        for (f, t) in &self.percent {
            w.push(format!(
                "column {}: {} value(s) outside 0-100 % (e.g. {}) left out as missing",
                f.name(),
                t.n,
                t.example
            ));
        }
        for (f, t) in &self.range {
            w.push(format!(
                "column {}: {} value(s) too large for the field (e.g. {}) left out as missing",
                f.name(),
                t.n,
                t.example
            ));
        }
        w
    }
}

/// The tally of field `f` in `v`, added when new.
fn tally(v: &mut Vec<(Field, Tally)>, f: Field) -> &mut Tally {
    let i = match v.iter().position(|(g, _)| *g == f) {
        Some(i) => i,
        None => {
            v.push((f, Tally::default()));
            v.len() - 1
        }
    };
    &mut v[i].1
}

/// Whether any slot of a primitive column (null ones too) may hold a value `bad` selects, checked
/// without copying the column: the common case, a clean column, costs one pass. `bad` must select
/// the values outside a range (and, for floats, any other values).
fn may_be_bad(col: &dyn Array, bad: &impl Fn(f64) -> bool) -> bool {
    use arrow_array::ArrowPrimitiveType;
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    macro_rules! any {
        ($t:ty) => {
            col.as_primitive_opt::<$t>().is_none_or(|a| a.values().iter().any(|&v| bad(v as f64)))
        };
    }
    // Whole numbers: `bad` selects what lies outside a range, so the extremes tell (one pass
    // without early exits, which the compiler vectorises).
    macro_rules! ends {
        ($t:ty) => {
            col.as_primitive_opt::<$t>().is_none_or(|a| {
                let v = a.values();
                let (lo, hi) = v.iter().fold(
                    (
                        <$t as ArrowPrimitiveType>::Native::MAX,
                        <$t as ArrowPrimitiveType>::Native::MIN,
                    ),
                    |(l, h), &x| (l.min(x), h.max(x)),
                );
                !v.is_empty() && (bad(lo as f64) || bad(hi as f64))
            })
        };
    }
    match col.data_type() {
        DataType::UInt8 => ends!(UInt8Type),
        DataType::UInt16 => ends!(UInt16Type),
        DataType::UInt32 => ends!(UInt32Type),
        DataType::UInt64 => ends!(UInt64Type),
        DataType::Int8 => ends!(Int8Type),
        DataType::Int16 => ends!(Int16Type),
        DataType::Int32 => ends!(Int32Type),
        DataType::Int64 => ends!(Int64Type),
        DataType::Float32 => any!(Float32Type),
        DataType::Float64 => any!(Float64Type),
        _ => true,
    }
}

/// Null out the values in `col` that `bad` selects; `None` when none is bad. Returns the bad count
/// and first bad value.
fn screen(col: &dyn Array, bad: impl Fn(f64) -> bool) -> Option<(Vec<Option<f64>>, u64, f64)> {
    if !may_be_bad(col, &bad) {
        return None;
    }
    let mut v = Vec::with_capacity(col.len());
    if !cols::f64_values(col, &mut v) || !v.iter().any(|&x| !x.is_nan() && bad(x)) {
        return None;
    }
    let (mut n, mut first) = (0u64, f64::NAN);
    let kept = v
        .into_iter()
        .map(|x| {
            if x.is_nan() {
                None
            } else if bad(x) {
                if n == 0 {
                    first = x;
                }
                n += 1;
                None
            } else {
                Some(x)
            }
        })
        .collect();
    Some((kept, n, first))
}

/// Timestamps outside [`TS_RANGE`] set to null (a UTC microsecond column), counted in `t`.
fn screen_time(col: &dyn Array, t: &mut Tally) -> Option<(ArrayRef, DataType)> {
    use arrow_array::cast::AsArray;
    // The extremes decide (one pass without early exits).
    let inside = |v: &[i64]| {
        let (lo, hi) = v.iter().fold((i64::MAX, i64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        v.is_empty() || (TS_RANGE.contains(&lo) && TS_RANGE.contains(&hi))
    };
    if let Some(a) = col.as_primitive_opt::<arrow_array::types::TimestampMicrosecondType>()
        && inside(a.values())
    {
        return None;
    }
    let mut v = Vec::with_capacity(col.len());
    if !cols::ts_micros(col, &mut v) || v.iter().all(|x| *x == cols::NO_TS || TS_RANGE.contains(x))
    {
        return None;
    }
    let kept: arrow_array::TimestampMicrosecondArray = v
        .into_iter()
        .map(|x| {
            if x == cols::NO_TS {
                None
            } else if TS_RANGE.contains(&x) {
                Some(x)
            } else {
                t.add(1, (x / 1_000_000) as f64);
                None
            }
        })
        .collect();
    let kept = kept.with_timezone("UTC");
    let dt = kept.data_type().clone();
    Some((Arc::new(kept), dt))
}

/// A numeric column of a type the statistics do not read directly (decimals of any precision and
/// scale, half floats: what DuckDB, Spark and numpy may write) as `Float64`; None for any other.
fn as_f64(col: &ArrayRef) -> Result<Option<ArrayRef>> {
    match col.data_type() {
        DataType::Float16
        | DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => Ok(Some(
            arrow_cast::cast(col, &DataType::Float64)
                .context("reading a decimal column as numbers")?,
        )),
        _ => Ok(None),
    }
}

/// Check one batch: mistyped columns removed, decimal and half-float columns read as `Float64`,
/// bad indexes and percentages set to null.
pub(crate) fn check(batch: RecordBatch) -> Result<(RecordBatch, BadValues)> {
    let mut found = BadValues::default();
    let schema = batch.schema();
    let mut fields: Vec<Arc<ArrowField>> = Vec::with_capacity(schema.fields().len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(fields.capacity());
    let mut changed = false;
    for (c, col) in schema.fields().iter().zip(batch.columns()) {
        let Some(f) = Field::lookup(c.name()) else {
            fields.push(c.clone());
            columns.push(col.clone());
            continue;
        };
        if !type_fits(f.def().ty, c.data_type()) {
            changed = true;
            continue;
        }
        let cast = as_f64(col)?;
        let (c, col) = match &cast {
            Some(a) => {
                changed = true;
                (&Arc::new(c.as_ref().clone().with_data_type(DataType::Float64)), a)
            }
            None => (c, col),
        };
        let screened = if f == Field::Timestamp {
            screen_time(col.as_ref(), &mut found.time)
        } else if f == Field::Index {
            screen(col.as_ref(), |x| !(0.0..=MAX_INDEX).contains(&x) || x.fract() != 0.0).map(
                |(v, n, e)| {
                    found.index.add(n, e);
                    let ix: UInt32Array = v.into_iter().map(|x| x.map(|x| x as u32)).collect();
                    (Arc::new(ix) as ArrayRef, DataType::UInt32)
                },
            )
        } else if bounded_percent(f) {
            screen(col.as_ref(), |x| !(0.0..=100.0 + PERCENT_SLACK).contains(&x)).map(
                |(v, n, e)| {
                    found.percent_tally(f).add(n, e);
                    (Arc::new(Float64Array::from(v)) as ArrayRef, DataType::Float64)
                },
            )
        } else {
            None
        };
        match screened {
            Some((arr, dt)) => {
                changed = true;
                fields.push(Arc::new(c.as_ref().clone().with_data_type(dt).with_nullable(true)));
                columns.push(arr);
            }
            None => {
                fields.push(c.clone());
                columns.push(col.clone());
            }
        }
    }
    if !changed {
        return Ok((batch, found));
    }
    let schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    let out = RecordBatch::try_new_with_options(schema, columns, &opts)
        .context("checking the values of a batch")?;
    Ok((out, found))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray, UInt8Array};

    fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(cols).unwrap()
    }

    #[test]
    fn bad_indexes_and_percentages_become_null_and_are_counted() {
        let b = batch(vec![
            (
                "index",
                Arc::new(Float64Array::from(vec![0.0, 0.5, 4_294_967_295.0, -1.0, 3.0]))
                    as ArrayRef,
            ),
            (
                "utilization.gpu",
                Arc::new(UInt8Array::from(vec![Some(50), Some(255), None, Some(100), Some(0)])),
            ),
            ("fan.speed", Arc::new(UInt8Array::from(vec![110, 1, 2, 3, 4]))),
            ("power.draw", Arc::new(StringArray::from(vec!["a", "b", "c", "d", "e"]))),
        ]);
        let (out, found) = check(b).unwrap();
        assert_eq!(out.num_columns(), 3, "the text power.draw column is removed");
        let ix = out.column(0).as_any().downcast_ref::<UInt32Array>().unwrap();
        assert_eq!(ix.iter().collect::<Vec<_>>(), [Some(0), None, None, None, Some(3)]);
        let u = out.column(1).as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(u.iter().collect::<Vec<_>>(), [Some(50.0), None, None, Some(100.0), Some(0.0)]);
        assert_eq!(out.column(2).data_type(), &DataType::UInt8, "fan speed may exceed 100 %");
        let w = found.warnings();
        assert!(w[0].starts_with("3 row(s) with an index") && w[0].contains("e.g. 0.5"), "{w:?}");
        assert!(w[1].contains("utilization.gpu: 1 value(s) outside 0-100 % (e.g. 255)"), "{w:?}");
    }

    #[test]
    fn clean_batches_pass_unchanged() {
        let b = batch(vec![
            ("index", Arc::new(Int64Array::from(vec![0, 1])) as ArrayRef),
            ("utilization.gpu", Arc::new(UInt8Array::from(vec![0, 100]))),
        ]);
        let (out, found) = check(b.clone()).unwrap();
        assert_eq!(out, b);
        assert!(found.warnings().is_empty());
        let t = arrow_array::TimestampMicrosecondArray::from(vec![
            Some(0),
            Some(i64::MAX),
            None,
            Some(i64::MIN + 1),
        ])
        .with_timezone("UTC");
        let (out, found) = check(batch(vec![("timestamp", Arc::new(t) as ArrayRef)])).unwrap();
        assert_eq!(out.column(0).null_count(), 3);
        assert!(
            found.warnings()[0].starts_with("2 row(s) with a timestamp outside"),
            "{:?}",
            found.warnings()
        );
        let s = Schema::new(vec![ArrowField::new("utilization.gpu", DataType::Utf8, true)]);
        assert_eq!(mistyped(&s), ["utilization.gpu (Utf8: not a number)"]);
    }
}

#[cfg(test)]
mod row_tests {
    use super::*;

    #[test]
    fn rows_from_text_are_checked_too() {
        let mut found = BadValues::default();
        let mut row = Row::default();
        row.set(Field::Index, Value::U(4_294_967_295));
        row.set(Field::UtilGpu, Value::U(255));
        row.set(Field::MemUsed, Value::U(1 << 40));
        row.set(Field::CpuUtil, Value::F(42.0));
        let fields = [Field::Index, Field::UtilGpu, Field::MemUsed, Field::CpuUtil];
        let fixed = found.check_row(&row, &fields).unwrap();
        assert_eq!(fixed.get(Field::Index), &Value::Null);
        assert_eq!(fixed.get(Field::UtilGpu), &Value::Null);
        assert_eq!(fixed.get(Field::MemUsed), &Value::Null);
        assert_eq!(fixed.get(Field::CpuUtil), &Value::F(42.0));
        assert_eq!(found.warnings().len(), 3, "{:?}", found.warnings());
        let mut ok = Row::default();
        ok.set(Field::Index, Value::U(3));
        assert!(found.check_row(&ok, &fields).is_none());
    }
}
