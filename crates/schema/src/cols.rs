//! Arrow column access shared by readers and analysis: any integer/float/bool type as `f64` or `u64`, any
//! timestamp unit as UTC microseconds, strings (plain, large, view, dictionary) as interned ids.
//!
//! Each function fills a caller-owned scratch vector for a whole column in one typed loop, so the hot
//! paths never go through per-row enums.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrowPrimitiveType, PrimitiveArray};
use arrow_schema::{DataType, TimeUnit};

/// Marker for a missing integer (an all-ones bitmask is not a value NVML reports).
pub const NO_U64: u64 = u64::MAX;
/// Marker for a missing timestamp.
pub const NO_TS: i64 = i64::MIN;

/// `$p!(T)` for a column of 8-, 16- or 32-bit integers of arrow type `T` (`$dt` its data type),
/// `$other` for any other type.
macro_rules! narrow_int {
    ($dt:expr, $p:ident, $other:expr) => {
        match $dt {
            DataType::Int8 => $p!(Int8Type),
            DataType::Int16 => $p!(Int16Type),
            DataType::Int32 => $p!(Int32Type),
            DataType::UInt8 => $p!(UInt8Type),
            DataType::UInt16 => $p!(UInt16Type),
            DataType::UInt32 => $p!(UInt32Type),
            _ => $other,
        }
    };
}

/// `$p!(T)` (or `$p!(T, conv)` for floats, which read a value that is not finite as NaN) for a
/// numeric column of arrow type `T`, `$bool` for booleans, `$null` for the null type and `$other`
/// for any other type.
macro_rules! numeric {
    ($dt:expr, $p:ident, $bool:expr, $null:expr, $other:expr) => {{
        let finite = |v: f64| if v.is_finite() { v } else { f64::NAN };
        match $dt {
            DataType::Int64 => $p!(Int64Type),
            DataType::UInt64 => $p!(UInt64Type),
            DataType::Float32 => $p!(Float32Type, |v| finite(f64::from(v))),
            DataType::Float64 => $p!(Float64Type, finite),
            DataType::Boolean => $bool,
            DataType::Null => $null,
            dt => narrow_int!(dt, $p, $other),
        }
    }};
}

fn prim_f64<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    rows: Option<&[u32]>,
    out: &mut Vec<f64>,
    conv: impl Fn(T::Native) -> f64,
) {
    let v = a.values();
    match rows {
        None => out.extend(v.iter().map(|&x| conv(x))),
        Some(rows) => {
            out.extend(rows.iter().map(|&i| v.get(i as usize).map_or(f64::NAN, |&x| conv(x))))
        }
    }
}

/// Append the column's values as `f64` (NaN for null) to `out`. Returns false for a type that is
/// not numeric (nothing appended).
pub fn f64_values(arr: &dyn Array, out: &mut Vec<f64>) -> bool {
    numbers(arr, None, out)
}

/// [`f64_values`] of the rows `rows` only, in that order (a gather: no copy of the whole column).
pub fn f64_at(arr: &dyn Array, rows: &[u32], out: &mut Vec<f64>) -> bool {
    numbers(arr, Some(rows), out)
}

/// The values of `rows` (every row when None) as `f64`, NaN for null and non-finite.
fn numbers(arr: &dyn Array, rows: Option<&[u32]>, out: &mut Vec<f64>) -> bool {
    let base = out.len();
    macro_rules! p {
        ($t:ty) => {
            p!($t, |v| v as f64)
        };
        ($t:ty, $conv:expr) => {
            match arr.as_primitive_opt::<$t>() {
                Some(a) => prim_f64(a, rows, out, $conv),
                None => return false,
            }
        };
    }
    numeric!(
        arr.data_type(),
        p,
        match arr.as_boolean_opt() {
            Some(b) => {
                let bit = |i: usize| if i < b.len() && b.value(i) { 1.0 } else { 0.0 };
                match rows {
                    None => out.extend(b.values().iter().map(|v| if v { 1.0 } else { 0.0 })),
                    Some(rows) => out.extend(rows.iter().map(|&i| bit(i as usize))),
                }
            }
            None => return false,
        },
        out.resize(base + rows.map_or(arr.len(), <[u32]>::len), f64::NAN),
        return false
    );
    mark_nulls(arr, rows, &mut out[base..], f64::NAN);
    true
}

/// Call `f(&mut out[i], v)` for each row i of the column with its value `v` as `f64` (NaN for null
/// and non-finite, as [`f64_values`] reads it), in one loop in the column's own type: the column is
/// not copied. Returns false for a type that is not numeric (nothing called).
pub fn each_f64<S>(arr: &dyn Array, out: &mut [S], f: impl Fn(&mut S, f64)) -> bool {
    fn each<T: ArrowPrimitiveType, S>(
        a: &PrimitiveArray<T>,
        out: &mut [S],
        conv: impl Fn(T::Native) -> f64,
        f: impl Fn(&mut S, f64),
    ) {
        let v = a.values();
        match a.logical_nulls() {
            None => out.iter_mut().zip(v).for_each(|(o, &x)| f(o, conv(x))),
            Some(n) => out.iter_mut().zip(v).zip(n.iter()).for_each(|((o, &x), ok)| {
                f(o, if ok { conv(x) } else { f64::NAN });
            }),
        }
    }
    macro_rules! p {
        ($t:ty) => {
            p!($t, |v| v as f64)
        };
        ($t:ty, $conv:expr) => {
            match arr.as_primitive_opt::<$t>() {
                Some(a) => each(a, out, $conv, f),
                None => return false,
            }
        };
    }
    numeric!(
        arr.data_type(),
        p,
        match arr.as_boolean_opt() {
            Some(b) => {
                let nulls = b.logical_nulls();
                let bit = |v: bool| if v { 1.0 } else { 0.0 };
                for (i, (o, v)) in out.iter_mut().zip(b.values().iter()).enumerate() {
                    let ok = nulls.as_ref().is_none_or(|n| n.is_valid(i));
                    f(o, if ok { bit(v) } else { f64::NAN });
                }
            }
            None => return false,
        },
        out.iter_mut().for_each(|o| f(o, f64::NAN)),
        return false
    );
    true
}

/// Whether a column of this type holds integers of 8, 16 or 32 bits.
pub fn is_narrow_int(dt: &DataType) -> bool {
    macro_rules! yes {
        ($t:ty) => {
            true
        };
    }
    narrow_int!(dt, yes, false)
}

/// Marker for a missing value in [`i64_at`].
pub const NO_I64: i64 = i64::MIN;

/// The values of the rows `rows` of a column of 8-, 16- or 32-bit integers as `i64` ([`NO_I64`] for
/// null). Returns false for any other type (nothing appended): wider integers and floats go through
/// [`f64_at`].
pub fn i64_at(arr: &dyn Array, rows: &[u32], out: &mut Vec<i64>) -> bool {
    let base = out.len();
    macro_rules! p {
        ($t:ty) => {
            match arr.as_primitive_opt::<$t>() {
                Some(a) => {
                    let v = a.values();
                    out.extend(
                        rows.iter().map(|&i| v.get(i as usize).map_or(NO_I64, |&x| i64::from(x))),
                    );
                }
                None => return false,
            }
        };
    }
    narrow_int!(arr.data_type(), p, return false);
    mark_nulls(arr, Some(rows), &mut out[base..], NO_I64);
    true
}

/// Count the values of a column of 8-, 16- or 32-bit integers without nulls by row key, straight
/// from the typed values, when they span at most `max_span` values: `keys[i]` is row i's key, rows
/// with a key of `nkeys` or more are not counted. Returns the least value and the span; `cnt` holds
/// `span` counts per key (`cnt[k * span + j]` rows of key k hold `lo + j`). None (for any other
/// column, nulls, or a wider span) leaves `cnt` empty.
pub fn count_by_key(
    arr: &dyn Array,
    keys: &[u32],
    nkeys: usize,
    max_span: usize,
    cnt: &mut Vec<u32>,
) -> Option<(i64, usize)> {
    cnt.clear();
    if arr.null_count() > 0 || arr.is_empty() || max_span == 0 || max_span > 1 << 16 {
        return None;
    }
    macro_rules! p {
        ($t:ty) => {{
            type N = <$t as ArrowPrimitiveType>::Native;
            let v = arr.as_primitive_opt::<$t>()?.values();
            // In the column's own type, one pass without early exits.
            let (lo, hi) = v.iter().fold((N::MAX, N::MIN), |(l, h), &x| (l.min(x), h.max(x)));
            let span = i64::from(hi) - i64::from(lo) + 1;
            if span > max_span as i64 {
                return None;
            }
            let span = span as usize;
            cnt.resize(nkeys * span, 0);
            // The offsets fit 16 bits: wrapping arithmetic in 32 bits gives them exactly.
            let base = i64::from(lo) as u32;
            // A key of `nkeys` or more (at most u32::MAX, times a span of at most 2^16) lands past
            // the end of `cnt`: the bounds check skips those rows.
            // A slice, not the vector: its start and length stay in registers through the stores.
            let counts = cnt.as_mut_slice();
            for (&k, &x) in keys.iter().zip(v) {
                if let Some(n) = counts
                    .get_mut(k as usize * span + (i64::from(x) as u32).wrapping_sub(base) as usize)
                {
                    *n += 1;
                }
            }
            (i64::from(lo), span)
        }};
    }
    Some(narrow_int!(arr.data_type(), p, return None))
}

/// Append the column's values as `u64` ([`NO_U64`] for null, negative or fractional values rounded,
/// negative ones missing). Returns false for a non-numeric type.
pub fn u64_values(arr: &dyn Array, out: &mut Vec<u64>) -> bool {
    let base = out.len();
    macro_rules! p {
        ($t:ty) => {
            match arr.as_primitive_opt::<$t>() {
                Some(a) => {
                    out.extend(a.values().iter().map(|&v| u64::try_from(v).unwrap_or(NO_U64)))
                }
                None => return false,
            }
        };
    }
    match arr.data_type() {
        DataType::Int8 => p!(Int8Type),
        DataType::Int16 => p!(Int16Type),
        DataType::Int32 => p!(Int32Type),
        DataType::Int64 => p!(Int64Type),
        DataType::UInt8 => p!(UInt8Type),
        DataType::UInt16 => p!(UInt16Type),
        DataType::UInt32 => p!(UInt32Type),
        DataType::UInt64 => p!(UInt64Type),
        DataType::Float32 | DataType::Float64 | DataType::Boolean | DataType::Null => {
            let mut f = Vec::with_capacity(arr.len());
            if !f64_values(arr, &mut f) {
                return false;
            }
            out.extend(
                f.iter()
                    .map(|&v| if (0.0..1.8e19).contains(&v) { v.round() as u64 } else { NO_U64 }),
            );
            return true;
        }
        _ => return false,
    }
    mark_nulls(arr, None, &mut out[base..], NO_U64);
    true
}

/// Set to `missing` the values in `out` (read from `arr` at `rows`, or at every row) whose row is null.
fn mark_nulls<T: Copy>(arr: &dyn Array, rows: Option<&[u32]>, out: &mut [T], missing: T) {
    let Some(nulls) = arr.logical_nulls() else { return };
    match rows {
        None => {
            for (slot, valid) in out.iter_mut().zip(nulls.iter()) {
                if !valid {
                    *slot = missing;
                }
            }
        }
        Some(rows) => {
            for (slot, &i) in out.iter_mut().zip(rows) {
                if (i as usize) < nulls.len() && nulls.is_null(i as usize) {
                    *slot = missing;
                }
            }
        }
    }
}

/// Whether `ts_micros` can read this type.
pub fn is_timestamp(dt: &DataType) -> bool {
    matches!(dt, DataType::Timestamp(_, _) | DataType::Date64)
}

/// Append the column's instants as UTC microseconds ([`NO_TS`] for null) to `out`. Any unit; a
/// timestamp without a zone is taken as UTC. Returns false for another type.
pub fn ts_micros(arr: &dyn Array, out: &mut Vec<i64>) -> bool {
    let base = out.len();
    macro_rules! p {
        ($t:ty, $conv:expr) => {
            match arr.as_primitive_opt::<$t>() {
                Some(a) => out.extend(a.values().iter().map($conv)),
                None => return false,
            }
        };
    }
    match arr.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => {
            p!(TimestampSecondType, |&v: &i64| v.saturating_mul(1_000_000))
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            p!(TimestampMillisecondType, |&v: &i64| v.saturating_mul(1000))
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => p!(TimestampMicrosecondType, |&v: &i64| v),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            p!(TimestampNanosecondType, |&v: &i64| v.div_euclid(1000))
        }
        DataType::Date64 => p!(arrow_array::types::Date64Type, |&v: &i64| v.saturating_mul(1000)),
        _ => return false,
    }
    mark_nulls(arr, None, &mut out[base..], NO_TS);
    true
}

/// Whether `str_ids` can read this type.
pub fn is_string(dt: &DataType) -> bool {
    match dt {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => is_string(v),
        _ => false,
    }
}

/// Strings interned to small ids (host names, GPU uuids).
#[derive(Debug, Default, Clone)]
pub struct Interner {
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl Interner {
    /// The id of `s`, given a new one when first seen.
    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.ids.insert(s.to_string(), i);
        self.names.push(s.to_string());
        i
    }

    /// The string of an id this interner gave.
    pub fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", String::as_str)
    }

    /// Strings interned so far.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Append an interned id per row (`missing` for null) to `out`. Returns false for a non-string type.
pub fn str_ids(arr: &dyn Array, ids: &mut Interner, missing: u32, out: &mut Vec<u32>) -> bool {
    let base = out.len();
    // Runs of equal strings are the rule (one host per file): compare with the previous row first.
    fn run(
        ids: &mut Interner,
        missing: u32,
        s: Option<&str>,
        prev: &mut Option<(String, u32)>,
    ) -> u32 {
        match s {
            None => missing,
            Some(s) => match prev {
                Some((p, id)) if p == s => *id,
                _ => {
                    let id = ids.id(s);
                    *prev = Some((s.to_string(), id));
                    id
                }
            },
        }
    }
    let mut prev = None;
    match arr.data_type() {
        DataType::Utf8 => match arr.as_string_opt::<i32>() {
            Some(a) => out.extend(a.iter().map(|s| run(ids, missing, s, &mut prev))),
            None => return false,
        },
        DataType::LargeUtf8 => match arr.as_string_opt::<i64>() {
            Some(a) => out.extend(a.iter().map(|s| run(ids, missing, s, &mut prev))),
            None => return false,
        },
        DataType::Utf8View => match arr.as_string_view_opt() {
            Some(a) => out.extend(a.iter().map(|s| run(ids, missing, s, &mut prev))),
            None => return false,
        },
        DataType::Dictionary(_, v) if is_string(v) => {
            let Some(d) = arr.as_any_dictionary_opt() else { return false };
            let mut vals = Vec::new();
            if !str_ids(d.values().as_ref(), ids, missing, &mut vals) {
                return false;
            }
            let id = |k: Option<usize>| k.and_then(|k| vals.get(k)).copied().unwrap_or(missing);
            // The keys read in their own type (no vector of normalised keys per batch).
            macro_rules! keys {
                ($t:ty) => {
                    match arr.as_dictionary_opt::<$t>() {
                        Some(a) => out
                            .extend(a.keys().values().iter().map(|&k| id(usize::try_from(k).ok()))),
                        None => return false,
                    }
                };
            }
            if vals.is_empty() {
                out.resize(base + arr.len(), missing);
            } else {
                // 64-bit keys (rare) through the normalised keys.
                narrow_int!(
                    d.keys().data_type(),
                    keys,
                    out.extend(d.normalized_keys().into_iter().map(|k| id(Some(k))))
                )
            }
            mark_nulls(arr, None, &mut out[base..], missing);
        }
        _ => return false,
    }
    true
}

/// The string at `row`, if the column is a string column and the cell is not null.
pub fn str_at(arr: &dyn Array, row: usize) -> Option<String> {
    if row >= arr.len() || arr.is_null(row) {
        return None;
    }
    match arr.data_type() {
        DataType::Utf8 => arr.as_string_opt::<i32>().map(|a| a.value(row).to_string()),
        DataType::LargeUtf8 => arr.as_string_opt::<i64>().map(|a| a.value(row).to_string()),
        DataType::Utf8View => arr.as_string_view_opt().map(|a| a.value(row).to_string()),
        DataType::Dictionary(_, _) => {
            let d = arr.as_any_dictionary_opt()?;
            let values = d.values();
            if values.is_empty() {
                return None;
            }
            // The row's key alone (64-bit keys, rare, through the normalised keys of every row).
            let mut k = Vec::with_capacity(1);
            let key = if i64_at(d.keys(), &[u32::try_from(row).ok()?], &mut k) {
                usize::try_from(*k.first()?).ok()?
            } else {
                *d.normalized_keys().get(row)?
            };
            str_at(values.as_ref(), key)
        }
        _ => None,
    }
}

/// The batch's columns that are catalogue fields, by field (other columns are left out).
pub fn catalogue_columns(
    batch: &arrow_array::RecordBatch,
) -> Vec<(crate::catalog::Field, &dyn Array)> {
    let schema = batch.schema();
    schema
        .fields()
        .iter()
        .zip(batch.columns())
        .filter_map(|(f, c)| {
            crate::catalog::Field::lookup(f.name()).map(|field| (field, c.as_ref()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{
        DictionaryArray, Float32Array, StringArray, TimestampMillisecondArray, UInt8Array,
    };
    use std::sync::Arc;

    #[test]
    fn numbers_nulls_and_types() {
        let mut v = Vec::new();
        assert!(f64_values(&UInt8Array::from(vec![Some(1), None, Some(255)]), &mut v));
        assert_eq!(v[0], 1.0);
        assert!(v[1].is_nan());
        assert_eq!(v[2], 255.0);
        assert!(f64_values(&Float32Array::from(vec![Some(1.5), Some(f32::NAN)]), &mut v));
        assert_eq!(v.len(), 5);
        assert!(v[4].is_nan());
        assert!(!f64_values(&StringArray::from(vec!["x"]), &mut v));
        let mut g = Vec::new();
        assert!(f64_at(&UInt8Array::from(vec![Some(1), None, Some(255)]), &[2, 1, 0, 2], &mut g));
        assert_eq!((g[0], g[2], g[3]), (255.0, 1.0, 255.0));
        assert!(g[1].is_nan());
        assert!(f64_at(&Float32Array::from(vec![Some(1.5), Some(f32::INFINITY)]), &[1, 0], &mut g));
        assert!(g[4].is_nan() && g[5] == 1.5);
        let mut w = Vec::new();
        assert!(i64_at(&UInt8Array::from(vec![Some(1), None, Some(255)]), &[2, 1, 0], &mut w));
        assert_eq!(w, [255, NO_I64, 1]);
        assert!(!i64_at(&Float32Array::from(vec![1.0]), &[0], &mut w));
        let mut c = Vec::new();
        let (lo, span) = count_by_key(
            &UInt8Array::from(vec![7, 9, 7, 8, 9]),
            &[1, 0, 1, u32::MAX, 1],
            2,
            3,
            &mut c,
        )
        .unwrap();
        assert_eq!((lo, span, &c[..]), (7, 3, &[0, 0, 1, 2, 0, 1][..]));
        assert!(
            count_by_key(&UInt8Array::from(vec![7, 10]), &[0, 0], 1, 3, &mut c).is_none()
                && c.is_empty()
        );
        assert!(
            count_by_key(&UInt8Array::from(vec![Some(7), None]), &[0, 0], 1, 3, &mut c).is_none()
        );
        assert!(count_by_key(&Float32Array::from(vec![1.0]), &[0], 1, 3, &mut c).is_none());
        let mut u = Vec::new();
        assert!(u64_values(&Float32Array::from(vec![Some(3.6), None, Some(-1.0)]), &mut u));
        assert_eq!(u, [4, NO_U64, NO_U64]);
    }

    /// `each_f64` sees what `f64_values` reads, for every numeric type, nulls and non-finite
    /// floats included.
    #[test]
    fn each_value_as_read() {
        use arrow_array::{BooleanArray, Int64Array, NullArray, UInt16Array};
        let arrays: Vec<Arc<dyn Array>> = vec![
            Arc::new(UInt8Array::from(vec![Some(1), None, Some(255)])),
            Arc::new(UInt16Array::from(vec![None, Some(7), Some(65535)])),
            Arc::new(Int64Array::from(vec![Some(-3), Some(i64::MAX), None])),
            Arc::new(Float32Array::from(vec![Some(1.5), Some(f32::INFINITY), None])),
            Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
            Arc::new(NullArray::new(3)),
        ];
        for a in arrays {
            let mut want = Vec::new();
            assert!(f64_values(a.as_ref(), &mut want));
            let mut got = vec![0.0; a.len()];
            assert!(each_f64(a.as_ref(), &mut got, |o, v| *o = v));
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{}", a.data_type());
        }
        assert!(!each_f64(&StringArray::from(vec!["x"]), &mut [0.0], |_, _| unreachable!()));
    }

    #[test]
    fn timestamps_in_any_unit() {
        let mut t = Vec::new();
        let a =
            TimestampMillisecondArray::from(vec![Some(1_000), None]).with_timezone("Europe/Berlin");
        assert!(ts_micros(&a, &mut t));
        assert_eq!(t, [1_000_000, NO_TS]);
    }

    #[test]
    fn dictionary_and_plain_strings_share_ids() {
        let mut ids = Interner::default();
        let mut out = Vec::new();
        let d: DictionaryArray<arrow_array::types::Int32Type> =
            vec!["b", "a", "b"].into_iter().collect();
        assert!(str_ids(&d, &mut ids, 99, &mut out));
        assert!(str_ids(&StringArray::from(vec![Some("a"), None]), &mut ids, 99, &mut out));
        assert_eq!(out, [0, 1, 0, 1, 99]);
        assert_eq!(str_at(&d, 1).as_deref(), Some("a"));
        let arr: Arc<dyn Array> = Arc::new(d);
        assert_eq!(str_at(arr.as_ref(), 2).as_deref(), Some("b"));
        // 64-bit and unsigned keys, and a null key.
        let wide: DictionaryArray<arrow_array::types::Int64Type> =
            vec![Some("x"), None, Some("y")].into_iter().collect();
        assert_eq!(
            (0..4).map(|r| str_at(&wide, r)).collect::<Vec<_>>(),
            [Some("x".to_string()), None, Some("y".to_string()), None]
        );
        let narrow: DictionaryArray<arrow_array::types::UInt8Type> =
            vec!["p", "q", "p"].into_iter().collect();
        assert_eq!(str_at(&narrow, 1).as_deref(), Some("q"));
    }
}
