//! The last tick of recorded data as the rows of a status document (`schema::live`): every
//! catalogue column of the rows with the latest timestamp, by field name. What `gpumon watch` shows
//! of a recording that nobody is writing any more.

use std::collections::BTreeMap;

use arrow_array::{Array, RecordBatch};
use serde_json::Value;

use gpumon_schema::catalog::Field;
use gpumon_schema::cols::{self, NO_TS};

/// The rows of the latest timestamp seen so far (one part of the data).
#[derive(Debug, Clone)]
pub struct LastTick {
    /// The timestamp, UTC µs.
    pub ts: i64,
    /// Its rows, each a map from column name to value.
    pub rows: Vec<BTreeMap<String, Value>>,
}

impl Default for LastTick {
    fn default() -> Self {
        LastTick { ts: NO_TS, rows: Vec::new() }
    }
}

/// Row `i` of a column as JSON: a number, a string, or null.
fn cell(arr: &dyn Array, nums: &[f64], i: usize) -> Value {
    match nums.get(i) {
        // Whole numbers as integers (an index, MiB), as the recorder writes them.
        Some(v) if v.fract() == 0.0 && v.abs() < 9e15 => Value::from(*v as i64),
        Some(v) if !v.is_nan() => {
            serde_json::Number::from_f64(*v).map_or(Value::Null, Value::Number)
        }
        Some(_) => Value::Null,
        None => cols::str_at(arr, i).map_or(Value::Null, Value::String),
    }
}

impl LastTick {
    /// Keep the rows of the batch's latest timestamp if it is the latest so far; rows without a
    /// host belong to `default_host`.
    pub fn visit(&mut self, batch: &RecordBatch, default_host: &str) {
        let cols = gpumon_schema::cols::catalogue_columns(batch);
        let mut ts = Vec::new();
        let Some((_, tc)) = cols.iter().find(|(f, _)| *f == Field::Timestamp) else { return };
        if !cols::ts_micros(*tc, &mut ts) {
            return;
        }
        let Some(&max) = ts.iter().filter(|&&t| t != NO_TS).max() else { return };
        if max < self.ts {
            return;
        }
        if max > self.ts {
            self.ts = max;
            self.rows.clear();
        }
        let at: Vec<usize> = (0..ts.len()).filter(|&i| ts[i] == max).collect();
        let mut rows: Vec<BTreeMap<String, Value>> = at
            .iter()
            .map(|_| BTreeMap::from([("host".to_string(), Value::from(default_host))]))
            .collect();
        for (f, arr) in cols.iter().filter(|(f, _)| *f != Field::Timestamp) {
            let mut nums = Vec::new();
            if !cols::f64_values(*arr, &mut nums) {
                nums.clear();
            }
            for (row, &i) in rows.iter_mut().zip(&at) {
                let v = cell(*arr, &nums, i);
                if !(v.is_null() && *f == Field::Host) {
                    row.insert(f.name().to_string(), v);
                }
            }
        }
        self.rows.extend(rows);
    }

    /// Join the last tick of another part of the data.
    pub fn merge(&mut self, other: LastTick) {
        if other.ts > self.ts {
            *self = other;
        } else if other.ts == self.ts {
            self.rows.extend(other.rows);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{StringArray, TimestampMicrosecondArray, UInt8Array};
    use arrow_schema::{DataType, Field as AField, Schema, TimeUnit};
    use std::sync::Arc;

    #[test]
    fn keeps_the_rows_of_the_latest_timestamp() {
        let schema = Arc::new(Schema::new(vec![
            AField::new(
                "timestamp",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            AField::new("utilization.gpu", DataType::UInt8, true),
            AField::new("phase", DataType::Utf8, true),
        ]));
        let b = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(TimestampMicrosecondArray::from(vec![1, 2, 2, 1]).with_timezone("UTC")),
                Arc::new(UInt8Array::from(vec![Some(10), Some(20), None, Some(40)])),
                Arc::new(StringArray::from(vec![None, Some("bs=64"), Some("bs=64"), None])),
            ],
        )
        .unwrap();
        let mut a = LastTick::default();
        a.visit(&b, "h");
        assert_eq!(a.ts, 2);
        assert_eq!(a.rows.len(), 2);
        assert_eq!(a.rows[0]["utilization.gpu"], 20);
        assert_eq!(a.rows[1]["utilization.gpu"], Value::Null);
        assert_eq!(a.rows[0]["phase"], "bs=64");
        assert_eq!(a.rows[0]["host"], "h");
        let mut older = LastTick { ts: 1, rows: vec![BTreeMap::new()] };
        older.merge(a);
        assert_eq!((older.ts, older.rows.len()), (2, 2));
    }
}
