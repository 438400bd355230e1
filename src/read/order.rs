//! The time order of separate inputs: each input's first instant, from the Parquet row-group
//! statistics of its timestamp column where they are present, else from its first batch of rows
//! (never the whole file), so a summary does not depend on the order the inputs were named in.

use arrow_array::RecordBatch;
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::statistics::Statistics;

use crate::read::gpumon::{self, parquet_meta, schema_fields};
use crate::read::inputs::{Input, Kind};
use crate::schema::catalog::Field;
use crate::schema::cols::{self, NO_TS};
use crate::util::guard::contain;
use crate::util::progress::Progress;

/// Stable-sort `inputs` by the first instant of each group (`group[i]` is the group of
/// `inputs[i]`: the pieces of one set stay together, in their order). Groups without any timestamp
/// keep their places; the others are sorted among the places they hold, ties in the order given.
pub fn time_order(inputs: Vec<Input>, group: &[usize]) -> Vec<Input> {
    if group.windows(2).all(|w| w[0] == w[1]) {
        return inputs;
    }
    let mut groups: Vec<(usize, Option<i64>, Vec<Input>)> = Vec::new();
    for (input, &g) in inputs.into_iter().zip(group) {
        let first = first_instant(&input);
        match groups.last_mut() {
            Some((last, at, members)) if *last == g => {
                *at = match (*at, first) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                members.push(input);
            }
            _ => groups.push((g, first, vec![input])),
        }
    }
    let places: Vec<usize> = (0..groups.len()).filter(|&i| groups[i].1.is_some()).collect();
    let mut timed: Vec<(Option<i64>, Vec<Input>)> =
        places.iter().map(|&i| (groups[i].1, std::mem::take(&mut groups[i].2))).collect();
    timed.sort_by_key(|(at, _)| *at);
    for (&i, (_, members)) in places.iter().zip(timed) {
        groups[i].2 = members;
    }
    groups.into_iter().flat_map(|(_, _, members)| members).collect()
}

/// The earliest instant of `input` (UTC µs) as far as a cheap look tells: None when it has no
/// readable timestamp there (an nvidia-smi log, whose reader cannot stop early, is not looked into;
/// an unreadable file is left for the real read to report).
pub fn first_instant(input: &Input) -> Option<i64> {
    match input.kind {
        Kind::Parquet => parquet_stats(input).or_else(|| parquet_first_rows(input)),
        Kind::Journal => {
            let j = gpumon::open_journal(input).ok()?;
            let mut first = None;
            // Stopping after the first batch with a timestamp is the only "error" asked for.
            let _ = j.read_batches(&mut |b| stop_at_first(b, &mut first));
            first
        }
        Kind::GpumonCsv => {
            let mut first = None;
            let none = Progress::new(0, false);
            let _ = gpumon::read_csv(input, &[Field::Timestamp], &none, &mut |b| stop_at_first(b, &mut first));
            first
        }
        Kind::Nvsmi => None,
    }
}

/// Note the least timestamp of `b` in `first`; an error (to stop reading) once there is one.
fn stop_at_first(b: &RecordBatch, first: &mut Option<i64>) -> anyhow::Result<()> {
    *first = least(b);
    match first {
        Some(_) => Err(anyhow::anyhow!("first instant found")),
        None => Ok(()),
    }
}

/// The least non-null timestamp of a batch.
fn least(b: &RecordBatch) -> Option<i64> {
    let c = b.schema().fields().iter().position(|f| Field::lookup(f.name()) == Some(Field::Timestamp))?;
    let mut ts = Vec::new();
    cols::ts_micros(b.column(c).as_ref(), &mut ts).then_some(())?;
    ts.into_iter().filter(|&t| t != NO_TS).min()
}

/// The least timestamp the row-group statistics give, when every row group has them.
fn parquet_stats(input: &Input) -> Option<i64> {
    let (_, meta) = parquet_meta(input).ok()?;
    let &(root, _) = schema_fields(meta.schema()).iter().find(|(_, f)| *f == Field::Timestamp)?;
    let per_unit = match meta.schema().field(root).data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => |v: i64| v.saturating_mul(1_000_000),
        DataType::Timestamp(TimeUnit::Millisecond, _) | DataType::Date64 => |v: i64| v.saturating_mul(1000),
        DataType::Timestamp(TimeUnit::Microsecond, _) => |v: i64| v,
        DataType::Timestamp(TimeUnit::Nanosecond, _) => |v: i64| v.div_euclid(1000),
        _ => return None,
    };
    let schema = meta.parquet_schema();
    let leaf = (0..schema.num_columns()).find(|&l| schema.get_column_root_idx(l) == root)?;
    let md = meta.metadata();
    let mut least: Option<i64> = None;
    for rg in md.row_groups() {
        let Some(Statistics::Int64(st)) = rg.column(leaf).statistics() else { return None };
        if rg.num_rows() == 0 {
            continue;
        }
        match st.min_opt() {
            Some(&v) => least = Some(least.map_or(per_unit(v), |l| l.min(per_unit(v)))),
            // Every value null: nothing to say about this group.
            None if st.null_count_opt() == Some(rg.num_rows() as u64) => {}
            None => return None,
        }
    }
    least
}

/// The least timestamp of the first batch of a Parquet file that has one (its timestamp column only).
fn parquet_first_rows(input: &Input) -> Option<i64> {
    let (file, meta) = parquet_meta(input).ok()?;
    let &(root, _) = schema_fields(meta.schema()).iter().find(|(_, f)| *f == Field::Timestamp)?;
    let mask = ProjectionMask::roots(meta.parquet_schema(), [root]);
    let reader = contain(|| {
        ParquetRecordBatchReaderBuilder::new_with_metadata(file.for_pages(), meta.clone())
            .with_projection(mask)
            .with_batch_size(4096)
            .build()
    })
    .ok()?
    .ok()?;
    let mut batches = reader.into_iter();
    loop {
        let b = contain(|| batches.next()).ok()??.ok()?;
        if let Some(t) = least(&b) {
            return Some(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(dir: &std::path::Path, name: &str, first: &str) -> Input {
        let p = dir.join(name);
        let body = format!("timestamp,host,index,utilization.gpu [%]\n{first},h,0,5\n");
        std::fs::write(&p, body).unwrap();
        Input::file(&p, Kind::GpumonCsv)
    }

    fn names(inputs: &[Input]) -> Vec<String> {
        inputs.iter().map(|i| i.path.file_name().unwrap().to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn groups_by_first_instant_sets_whole_untimed_in_place() {
        let d = tempfile::tempdir().unwrap();
        let late = csv(d.path(), "late.csv", "2026-01-03T00:00:00Z");
        // One set: its pieces stay in their order, placed by its earliest piece.
        let set_b = csv(d.path(), "set_b.csv", "2026-01-02T00:00:00Z");
        let set_a = csv(d.path(), "set_a.csv", "2026-01-01T12:00:00Z");
        let untimed = Input::file(&d.path().join("smi.log"), Kind::Nvsmi);
        let early = csv(d.path(), "early.csv", "2026-01-01T00:00:00Z");
        let tie = csv(d.path(), "tie.csv", "2026-01-01T00:00:00Z");
        let inputs = vec![late, set_b, set_a, untimed, tie, early];
        let out = time_order(inputs, &[1, 2, 2, 3, 4, 5]);
        // The log keeps the third place; the others fill the rest in time order, the tie as given.
        assert_eq!(names(&out), ["tie.csv", "early.csv", "smi.log", "set_b.csv", "set_a.csv", "late.csv"]);
    }
}
