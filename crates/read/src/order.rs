//! The time order of separate inputs: each input's time span, from the Parquet row-group
//! statistics of its timestamp column where they are present, else from its first and last rows
//! (never the whole file), so a summary does not depend on the order the inputs were named in.

use std::io::{Read, Seek, SeekFrom};

use arrow_array::RecordBatch;
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::statistics::Statistics;

use crate::discover::Discovered;
use crate::gpumon::csv::{header_name, parse_ts, read_csv};
use crate::gpumon::journal::open_journal;
use crate::gpumon::parquet::parquet_meta;
use crate::gpumon::schema_fields;
use crate::input::{Input, Kind};
use gpumon_schema::catalog::Field;
use gpumon_schema::cols::{self, NO_TS};
use gpumon_util::{ReadError, ReadMeter, contain};

/// First and last instant (UTC µs).
type Span = (i64, i64);

/// `found`'s inputs in time order by the groups discovery found them in ([`time_order`]).
pub fn in_time_order(mut found: Discovered) -> Discovered {
    let group: Vec<usize> = found.inputs.iter().map(|i| i.group).collect();
    found.inputs = time_order(std::mem::take(&mut found.inputs), &group);
    found
}

/// Put `inputs` in time order by groups (`group[i]` is the group of `inputs[i]`: the pieces of one
/// set stay together, in their order). Only when the order is plain: the groups' spans, sorted by
/// their start, do not overlap (ties in the order given). Spans that overlap (a table grouped by
/// GPU and cut into files, say) leave the order given. Groups without a timestamp keep their
/// places; the others take the places they hold, in time order.
pub(crate) fn time_order(inputs: Vec<Input>, group: &[usize]) -> Vec<Input> {
    if group.windows(2).all(|w| w[0] == w[1]) {
        return inputs;
    }
    let mut groups: Vec<(usize, Option<Span>, Vec<Input>)> = Vec::new();
    for (input, &g) in inputs.into_iter().zip(group) {
        let span = span_of(&input);
        match groups.last_mut() {
            Some((last, at, members)) if *last == g => {
                *at = match (*at, span) {
                    (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
                    (a, b) => a.or(b),
                };
                members.push(input);
            }
            _ => groups.push((g, span, vec![input])),
        }
    }
    let places: Vec<usize> = (0..groups.len()).filter(|&i| groups[i].1.is_some()).collect();
    let mut timed: Vec<(Span, usize)> =
        places.iter().filter_map(|&i| groups[i].1.map(|s| (s, i))).collect();
    timed.sort_by_key(|&(s, _)| s.0);
    if timed.windows(2).any(|w| w[0].0.1 > w[1].0.0) {
        return groups.into_iter().flat_map(|(_, _, members)| members).collect();
    }
    let mut moved: Vec<Vec<Input>> =
        timed.iter().map(|&(_, i)| std::mem::take(&mut groups[i].2)).collect();
    for (&i, members) in places.iter().zip(moved.iter_mut()) {
        groups[i].2 = std::mem::take(members);
    }
    groups.into_iter().flat_map(|(_, _, members)| members).collect()
}

/// The time span of `input` as far as a cheap look tells: None when it has no readable timestamp
/// there (an nvidia-smi log, whose reader cannot stop early, is not looked into; an unreadable
/// file is left for the real read to report). A span whose last instant comes before its first
/// (rows not in time order) counts as covering all time.
pub(crate) fn span_of(input: &Input) -> Option<Span> {
    let (first, last) = match input.kind {
        Kind::Parquet => parquet_stats(input).or_else(|| parquet_ends(input))?,
        Kind::Journal => journal_span(input)?,
        Kind::GpumonCsv => csv_ends(input)?,
        Kind::Nvsmi => return None,
    };
    Some(if last < first { (i64::MIN, i64::MAX) } else { (first, last) })
}

/// A journal's span: every batch is looked at (a journal is the one piece a crash left open), one
/// at a time.
fn journal_span(input: &Input) -> Option<Span> {
    let j = open_journal(input).ok()?;
    let mut span: Option<Span> = None;
    let _ = j.read_batches(&mut |b| {
        if let Some(s) = bounds(b) {
            span = Some(span.map_or(s, |a| (a.0.min(s.0), a.1.max(s.1))));
        }
        Ok(())
    });
    span
}

/// The span of the first batch of rows of a gpumon CSV file, stretched to its last row's timestamp
/// (read from its tail).
fn csv_ends(input: &Input) -> Option<Span> {
    let mut first = None;
    let none = ReadMeter::new(0, false);
    let _ =
        read_csv(input, false, &[Field::Timestamp], &none, &mut |b| stop_at_first(b, &mut first));
    let first = first?;
    let mut header = csv::StringRecord::new();
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(input.open().ok()?)
        .read_record(&mut header)
        .ok()?;
    let col =
        header.iter().position(|c| header_name(c.trim_start_matches('\u{feff}')) == "timestamp")?;
    let mut f = input.open().ok()?;
    let len = f.seek(SeekFrom::End(0)).ok()?;
    f.seek(SeekFrom::Start(len.saturating_sub(TAIL))).ok()?;
    let mut tail = Vec::new();
    f.read_to_end(&mut tail).ok()?;
    // The last line with a readable stamp (a cut last line is skipped, as the reader does).
    let last = tail.split(|&b| b == b'\n').rev().take(64).find_map(|line| {
        let mut r = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(line);
        let rec = r.records().next()?.ok()?;
        parse_ts(rec.get(col)?.trim())
    })?;
    Some((first.0, first.1.max(last)))
}

/// Bytes read from the end of a CSV file for its last row.
const TAIL: u64 = 64 * 1024;

/// Note the span of `b` in `first`; an error (to stop reading) once there is one.
fn stop_at_first(b: &RecordBatch, first: &mut Option<Span>) -> anyhow::Result<()> {
    *first = bounds(b);
    match first {
        Some(_) => Err(ReadError::internal("first rows read").into()),
        None => Ok(()),
    }
}

/// The least and greatest non-null timestamps of a batch.
fn bounds(b: &RecordBatch) -> Option<Span> {
    let c = b
        .schema()
        .fields()
        .iter()
        .position(|f| Field::lookup(f.name()) == Some(Field::Timestamp))?;
    let mut ts = Vec::new();
    cols::ts_micros(b.column(c).as_ref(), &mut ts).then_some(())?;
    let mut it = ts.into_iter().filter(|&t| t != NO_TS);
    let first = it.next()?;
    Some(it.fold((first, first), |(a, z), t| (a.min(t), z.max(t))))
}

/// The span the row-group statistics of the timestamp column give, when every row group has them.
fn parquet_stats(input: &Input) -> Option<Span> {
    let (_, meta) = parquet_meta(input).ok()?;
    let &(root, _) = schema_fields(meta.schema()).iter().find(|(_, f)| *f == Field::Timestamp)?;
    let per_unit = match meta.schema().field(root).data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => |v: i64| v.saturating_mul(1_000_000),
        DataType::Timestamp(TimeUnit::Millisecond, _) | DataType::Date64 => {
            |v: i64| v.saturating_mul(1000)
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => |v: i64| v,
        DataType::Timestamp(TimeUnit::Nanosecond, _) => |v: i64| v.div_euclid(1000),
        _ => return None,
    };
    let schema = meta.parquet_schema();
    let leaf = (0..schema.num_columns()).find(|&l| schema.get_column_root_idx(l) == root)?;
    let mut span: Option<Span> = None;
    for rg in meta.metadata().row_groups() {
        let Some(Statistics::Int64(st)) = rg.column(leaf).statistics() else { return None };
        if rg.num_rows() == 0 {
            continue;
        }
        match (st.min_opt(), st.max_opt()) {
            (Some(&a), Some(&z)) => {
                let (a, z) = (per_unit(a), per_unit(z));
                span = Some(span.map_or((a, z), |s| (s.0.min(a), s.1.max(z))));
            }
            // Every value null: nothing to say about this group.
            _ if st.null_count_opt() == Some(rg.num_rows() as u64) => {}
            _ => return None,
        }
    }
    span
}

/// From the timestamp column only: the least instant of the first row group with one, and the
/// greatest of the last (one row group at a time, batch by batch).
fn parquet_ends(input: &Input) -> Option<Span> {
    let (file, meta) = parquet_meta(input).ok()?;
    let &(root, _) = schema_fields(meta.schema()).iter().find(|(_, f)| *f == Field::Timestamp)?;
    let group = |rg: usize| -> Option<Span> {
        let mask = ProjectionMask::roots(meta.parquet_schema(), [root]);
        let reader = contain(|| {
            ParquetRecordBatchReaderBuilder::new_with_metadata(file.for_pages(), meta.clone())
                .with_projection(mask)
                .with_row_groups(vec![rg])
                .with_batch_size(4096)
                .build()
        })
        .ok()?
        .ok()?;
        let mut batches = reader.into_iter();
        let mut span: Option<Span> = None;
        while let Some(b) = contain(|| batches.next()).ok()? {
            if let Some(s) = bounds(&b.ok()?) {
                span = Some(span.map_or(s, |a| (a.0.min(s.0), a.1.max(s.1))));
            }
        }
        span
    };
    let n = meta.metadata().num_row_groups();
    let first = (0..n).find_map(group)?;
    let last = (0..n).rev().find_map(group)?;
    Some((first.0, first.1.max(last.1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(dir: &std::path::Path, name: &str, stamps: &str) -> Input {
        let p = dir.join(name);
        let mut body = "timestamp,host,index,utilization.gpu [%]\n".to_string();
        for t in stamps.split(' ') {
            body += &format!("{t},h,0,5\n");
        }
        std::fs::write(&p, body).unwrap();
        Input::file(&p, Kind::GpumonCsv)
    }

    fn names(inputs: &[Input]) -> Vec<String> {
        inputs.iter().map(|i| i.path.file_name().unwrap().to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn whole_groups_move_by_span_untimed_stay_and_overlaps_keep_the_order_given() {
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
        assert_eq!(
            names(&out),
            ["tie.csv", "early.csv", "smi.log", "set_b.csv", "set_a.csv", "late.csv"]
        );
        // Spans that overlap (rows grouped by GPU, cut into files): the order given.
        let a = csv(d.path(), "a.csv", "2026-01-01T00:00:00Z 2026-01-01T00:02:00Z");
        let b = csv(d.path(), "b.csv", "2026-01-01T00:01:00Z");
        let c = csv(d.path(), "c.csv", "2026-01-06T00:00:00Z 2026-01-01T00:00:00Z");
        let out = time_order(vec![b.clone(), a.clone()], &[1, 2]);
        assert_eq!(names(&out), ["b.csv", "a.csv"]);
        let out = time_order(vec![late_again(d.path()), c], &[1, 2]);
        assert_eq!(names(&out), ["late2.csv", "c.csv"], "c's first rows reach past late2's");
    }

    #[test]
    fn discovery_keeps_the_order_named_and_the_pipeline_puts_it_in_time_order() {
        let d = tempfile::tempdir().unwrap();
        let late = csv(d.path(), "late.csv", "2026-01-03T00:00:00Z").path;
        let early = csv(d.path(), "early.csv", "2026-01-01T00:00:00Z").path;
        let found = crate::discover::discover(&[late, early]).unwrap();
        assert_eq!(names(&found.inputs), ["late.csv", "early.csv"]);
        let ordered = in_time_order(found);
        assert_eq!(names(&ordered.inputs), ["early.csv", "late.csv"]);
    }

    fn late_again(dir: &std::path::Path) -> Input {
        csv(dir, "late2.csv", "2026-01-05T00:00:00Z")
    }
}
