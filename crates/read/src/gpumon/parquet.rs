//! gpumon's Parquet files (and other tools' Parquet): the footer checked and decoded once per
//! input, catalogue columns projected, row groups split into parts read in parallel.

use std::sync::Arc;

use anyhow::Result;
use arrow_array::RecordBatch;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::reader::Length;
use parquet::file::statistics::Statistics;

use super::{check_schema, schema_fields, usage};
use crate::input::Input;
use crate::pqbounds::{BoundedFile, check_chunks, check_footer};
use gpumon_schema::JobInfo;
use gpumon_schema::catalog::{Field, Table};
use gpumon_util::{ReadError, ReadErrorKind, ReadMeter, contain, show};

/// Rows per batch decoded from Parquet: a batch's columns stay in the CPU's caches through the
/// collector's passes over them (64 Ki rows was 5% slower and 12 MiB larger on 20 M rows).
const PARQUET_BATCH: usize = 32 * 1024;

/// An opened Parquet file: its footer and the catalogue columns it has.
pub(crate) struct ParquetFile {
    /// The file as named (for messages).
    name: std::path::PathBuf,
    file: BoundedFile,
    meta: ArrowReaderMetadata,
    pub fields: Vec<(usize, Field)>,
    /// The work counters' columns (`progress.KEY`, numeric), read with every row group.
    counters: Vec<usize>,
    /// `gpumon.hostname` from the footer, when gpumon wrote the file.
    pub hostname: Option<String>,
    /// The wrapped command and how it ended, from the footer.
    pub job: Option<JobInfo>,
    pub rows: u64,
    pub bytes: u64,
}

/// The footer of a Parquet file, checked before and after it is decoded: sizes in the footer are
/// checked before it is decoded, and every column chunk is placed inside the file.
pub(crate) fn parquet_meta(input: &Input) -> Result<(BoundedFile, ArrowReaderMetadata), ReadError> {
    let path = &input.path;
    let file = BoundedFile::new(input.open()?).map_err(|e| usage(path, "cannot read", e))?;
    if let Some(meta) = input.footer() {
        return Ok((file, meta));
    }
    let damaged = "not a readable Parquet file (truncated or damaged?)";
    check_footer(&file).map_err(|e| usage(path, damaged, e))?;
    let md = contain(|| ParquetMetaDataReader::new().parse_and_finish(&file))
        .map_err(|p| usage(path, damaged, format!("the decoder failed: {p}")))?
        .map_err(|e| usage(path, damaged, e))?;
    check_chunks(&md, file.len()).map_err(|e| usage(path, damaged, e))?;
    let md = Arc::new(md);
    // The Arrow schema stored in the footer is decoded by a reader that panics on damage: when it
    // fails, the schema is taken from the Parquet types instead (the data is the same).
    let meta = match contain(|| ArrowReaderMetadata::try_new(md.clone(), ArrowReaderOptions::new()))
    {
        Ok(Ok(m)) => m,
        _ => contain(|| {
            ArrowReaderMetadata::try_new(
                md,
                ArrowReaderOptions::new().with_skip_arrow_metadata(true),
            )
        })
        .map_err(|p| usage(path, damaged, format!("the decoder failed: {p}")))?
        .map_err(|e| usage(path, damaged, e))?,
    };
    input.keep_footer(Some(meta.clone()));
    Ok((file, meta))
}

/// The reader of `meta` with its string columns read as dictionaries (what a writer's dictionary
/// pages already are): identity and host columns repeat a few values on every row, and copying each
/// row's text out of the dictionary was a tenth of the time of summarizing a fleet of small files.
/// Every reader of columns takes text through [`cols`](gpumon_schema::cols), which reads both kinds
/// alike. Where the crate refuses the hint, `meta` is kept.
fn strings_as_dictionaries(meta: ArrowReaderMetadata) -> ArrowReaderMetadata {
    use arrow_schema::{DataType, Field as ArrowField, Schema};
    let schema = meta.schema();
    let is_text = |f: &ArrowField| matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8);
    if !schema.fields().iter().any(|f| is_text(f)) {
        return meta;
    }
    let fields: Vec<ArrowField> = schema
        .fields()
        .iter()
        .map(|f| {
            let f = f.as_ref().clone();
            if is_text(&f) {
                let ty = DataType::Dictionary(
                    Box::new(DataType::Int32),
                    Box::new(f.data_type().clone()),
                );
                f.with_data_type(ty)
            } else {
                f
            }
        })
        .collect();
    let hinted = Schema::new_with_metadata(fields, schema.metadata().clone());
    let options = ArrowReaderOptions::new().with_schema(Arc::new(hinted));
    match contain(|| ArrowReaderMetadata::try_new(meta.metadata().clone(), options)) {
        Ok(Ok(m)) => m,
        _ => meta,
    }
}

/// The catalogue fields of a Parquet file, whatever table it holds.
pub(crate) fn parquet_fields(input: &Input) -> Result<Vec<Field>, ReadError> {
    Ok(schema_fields(parquet_meta(input)?.1.schema()).into_iter().map(|(_, f)| f).collect())
}

/// Open a Parquet file and check that it holds `table`; every problem is a [`ReadError`] naming
/// the file.
pub(crate) fn open_parquet(input: &Input, table: Table) -> Result<ParquetFile, ReadError> {
    let path = &input.path;
    let (file, meta) = parquet_meta(input)?;
    check_schema(meta.schema(), table)
        .map_err(|e| ReadError::new(ReadErrorKind::Unsupported, show(path), e))?;
    let fields = schema_fields(meta.schema());
    let counters = counter_columns(meta.schema());
    let md = meta.metadata();
    let kv = md.file_metadata().key_value_metadata();
    let get = |key: &str| -> Option<&str> {
        kv.and_then(|kv| kv.iter().find(|k| k.key == key).and_then(|k| k.value.as_deref()))
    };
    let hostname = get("gpumon.hostname").map(str::to_string);
    let job = JobInfo::from_footer(get);
    let rows = md.file_metadata().num_rows().max(0) as u64;
    let bytes = file.len();
    Ok(ParquetFile { name: path.clone(), file, meta, fields, counters, hostname, job, rows, bytes })
}

/// The columns of a schema that hold work counters: named `progress.KEY`, of a numeric type, at most
/// [`gpumon_schema::progress::MAX_KEYS`].
fn counter_columns(schema: &arrow_schema::Schema) -> Vec<usize> {
    let numeric = |t: &arrow_schema::DataType| t.is_integer() || t.is_floating();
    (schema.fields().iter().enumerate())
        .filter(|(_, f)| {
            gpumon_schema::progress::column_key(f.name()).is_some() && numeric(f.data_type())
        })
        .map(|(i, _)| i)
        .take(gpumon_schema::progress::MAX_KEYS)
        .collect()
}

impl ParquetFile {
    /// Columns named after a field in a type that cannot hold it.
    pub(crate) fn mistyped(&self) -> Vec<String> {
        crate::values::mistyped(self.meta.schema())
    }

    /// The columns read of a row group: those of `want` and the keys (the uuid too where there is no
    /// index to key GPUs by); the host column only when `host` (see [`ParquetFile::one_hosts`]).
    /// GPU identity text is read in every row group: a GPU may first appear in any of them, and
    /// `convert` copies it to every row.
    fn mask(&self, want: &[Field], host: bool) -> Vec<usize> {
        let keys = [Field::Timestamp, Field::Host, Field::Index];
        let has_index = self.fields.iter().any(|(_, f)| *f == Field::Index);
        let mut idx: Vec<usize> = self
            .fields
            .iter()
            .filter(|(_, f)| {
                if *f == Field::Host && !host {
                    return false;
                }
                keys.contains(f) || (*f == Field::Uuid && !has_index) || want.contains(f)
            })
            .map(|(i, _)| *i)
            .chain(self.counters.iter().copied())
            .collect();
        idx.sort_unstable();
        idx.dedup();
        idx
    }

    /// What the statistics of row group `rg` say of its host column: None when it may hold nulls
    /// (or has no statistics); else the host of every row when they say so exactly: one value (the
    /// least equals the greatest, exact or too short to have been cut) and a value per row.
    fn host_stats(&self, rg: usize) -> Option<Option<String>> {
        let &(root, _) = self.fields.iter().find(|(_, f)| *f == Field::Host)?;
        let schema = self.meta.parquet_schema();
        let mut leaves =
            (0..schema.num_columns()).filter(|&l| schema.get_column_root_idx(l) == root);
        let (Some(leaf), None) = (leaves.next(), leaves.next()) else { return None };
        let group = self.meta.metadata().row_group(rg);
        let chunk = group.column(leaf);
        let st = chunk.statistics().filter(|s| matches!(s, Statistics::ByteArray(_)))?;
        if st.null_count_opt() != Some(0) || chunk.num_values() != group.num_rows() {
            return None;
        }
        let (Some(min), Some(max)) = (st.min_bytes_opt(), st.max_bytes_opt()) else {
            return Some(None);
        };
        let exact = (st.min_is_exact() && st.max_is_exact()) || min.len() < 64;
        Some(
            (min == max && exact)
                .then(|| std::str::from_utf8(min).ok().map(str::to_string))
                .flatten(),
        )
    }

    /// Per row group, the host of all its rows where its host column need not be decoded: its rows
    /// are handed on as rows without a host column, with that host as the one such rows belong to
    /// (what a reader of the column would have made of them). Only when no row group may hold a
    /// null host: else the file's own default host gets rows, and the hosts must be met in the
    /// same order as when every row group's column is read (the summary lists them in that order).
    fn one_hosts(&self) -> Vec<Option<String>> {
        let n = self.meta.metadata().num_row_groups();
        let stats: Option<Vec<Option<String>>> = (0..n).map(|rg| self.host_stats(rg)).collect();
        stats.unwrap_or_else(|| vec![None; n])
    }

    /// Decode row group `rg` (root columns `roots`, in order) with the parquet crate's Arrow reader,
    /// handing each batch to `on_batch`. Page headers are checked as they are read
    /// ([`BoundedFile::for_pages`]); a decoder panic becomes an error naming the file.
    fn read_group(
        &self,
        meta: &ArrowReaderMetadata,
        rg: usize,
        roots: Vec<usize>,
        on_batch: &mut dyn FnMut(&RecordBatch) -> Result<()>,
    ) -> Result<()> {
        let damaged = "cannot read Parquet data (damaged?)";
        let failed = |p: String| usage(&self.name, damaged, format!("the decoder failed: {p}"));
        let mask = ProjectionMask::roots(self.meta.parquet_schema(), roots);
        let mut reader = contain(|| {
            ParquetRecordBatchReaderBuilder::new_with_metadata(self.file.for_pages(), meta.clone())
                .with_projection(mask)
                .with_row_groups(vec![rg])
                .with_batch_size(PARQUET_BATCH)
                .build()
        })
        .map_err(failed)?
        .map_err(|e| usage(&self.name, "cannot read", e))?;
        loop {
            match contain(|| reader.next()).map_err(failed)? {
                None => return Ok(()),
                Some(batch) => on_batch(&batch.map_err(|e| usage(&self.name, damaged, e))?)?,
            }
        }
    }

    /// Read the columns of `want` (plus timestamp, host and GPU keys), row groups split into
    /// contiguous parts (up to [`PARTS_PER_THREAD`] per thread) that up to `threads` threads take in
    /// turn, each the next part not yet taken: a thread slowed by other work on the machine takes
    /// fewer parts instead of leaving the other waiting at the end. Returns one state per part, in
    /// file order. The host column is not read where a row group has one host
    /// ([`ParquetFile::one_hosts`]): `visit` is given that host for the batches of such a group.
    pub(crate) fn scan<S: Send>(
        &self,
        want: &[Field],
        threads: usize,
        meter: &ReadMeter,
        init: &(dyn Fn() -> S + Sync),
        visit: PartVisit<'_, S>,
    ) -> Result<Vec<S>> {
        let md = self.meta.metadata();
        let groups: Vec<(usize, u64)> = (0..md.num_row_groups())
            .map(|i| (i, md.row_group(i).num_rows().max(0) as u64))
            .collect();
        let threads = threads.max(1);
        let parts = partition(&groups, if threads > 1 { threads * PARTS_PER_THREAD } else { 1 });
        let per_row = if self.rows > 0 { self.bytes as f64 / self.rows as f64 } else { 0.0 };
        let hosts = self.one_hosts();
        // Hinted for this read only, not in the footer kept per input until it is read.
        let meta = strings_as_dictionaries(self.meta.clone());
        let run = |part: &[usize]| -> Result<S> {
            let mut state = init();
            for &rg in part {
                let host = hosts.get(rg).and_then(Option::as_deref);
                self.read_group(&meta, rg, self.mask(want, host.is_none()), &mut |batch| {
                    meter.inc((batch.num_rows() as f64 * per_row) as u64);
                    visit(&mut state, batch, host)
                })?;
            }
            Ok(state)
        };
        if parts.len() <= 1 {
            let all: Vec<usize> = groups.iter().map(|g| g.0).collect();
            return Ok(vec![run(&all)?]);
        }
        take_in_turn(parts.len(), threads, &|i| run(&parts[i]))
    }
}

/// Batch visitor of [`ParquetFile::scan`]: the state of the part, the batch, and the host of all its
/// rows when the row group's host column was not read.
pub type PartVisit<'a, S> = &'a (dyn Fn(&mut S, &RecordBatch, Option<&str>) -> Result<()> + Sync);

/// Parts per reading thread: enough that the threads finish close together when one is slowed down,
/// few enough that the states of the parts (per-GPU accumulators, held until they are joined) stay
/// small.
const PARTS_PER_THREAD: usize = 4;

/// Run `run(0..n)` on up to `threads` threads, each taking the next index not yet taken; the results
/// in index order. After an error no further index is started; the first error in index order is
/// returned.
pub fn take_in_turn<S: Send>(
    n: usize,
    threads: usize,
    run: &(dyn Fn(usize) -> Result<S> + Sync),
) -> Result<Vec<S>> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Result<S>>>> = Mutex::new((0..n).map(|_| None).collect());
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return;
            }
            let r = run(i);
            if r.is_err() {
                next.store(n, Ordering::Relaxed);
            }
            if let Ok(mut d) = done.lock() {
                d[i] = Some(r);
            }
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.min(n)).map(|_| s.spawn(work)).collect();
        for h in handles {
            if h.join().is_err() {
                next.store(n, Ordering::Relaxed);
            }
        }
    });
    let done = done.into_inner().map_err(|_| ReadError::internal("a reader thread failed"))?;
    let mut out = Vec::with_capacity(n);
    for r in done {
        // A part not read: an earlier one failed (its error comes first) or its thread did.
        out.push(r.unwrap_or_else(|| Err(ReadError::internal("a reader thread failed").into()))?);
    }
    Ok(out)
}

/// Split row groups (index, rows) into at most `n` contiguous parts of similar row counts.
fn partition(groups: &[(usize, u64)], n: usize) -> Vec<Vec<usize>> {
    let total: u64 = groups.iter().map(|g| g.1).sum();
    let n = n.min(groups.len()).max(1);
    let mut parts: Vec<Vec<usize>> = vec![Vec::new()];
    let mut acc = 0u64;
    for &(i, rows) in groups {
        let target = total * parts.len() as u64 / n as u64;
        if acc >= target && !parts.last().is_some_and(Vec::is_empty) && parts.len() < n {
            parts.push(Vec::new());
        }
        if let Some(p) = parts.last_mut() {
            p.push(i);
        }
        acc += rows;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumon_schema::cols;
    use std::fs::File;
    use std::path::Path;

    #[test]
    fn row_groups_split_into_contiguous_parts() {
        let g: Vec<(usize, u64)> = (0..21).map(|i| (i, 1_000_000)).collect();
        let p = partition(&g, 2);
        assert_eq!(p.len(), 2);
        assert_eq!(p.concat(), (0..21).collect::<Vec<_>>());
        assert!(p[0].len().abs_diff(p[1].len()) <= 1);
        assert_eq!(partition(&g[..1], 4).len(), 1);
        assert_eq!(partition(&[], 2), vec![Vec::<usize>::new()]);
    }

    #[test]
    fn parts_taken_in_turn_come_back_in_order() {
        for threads in [1, 2, 3, 8] {
            let out = take_in_turn(10, threads, &|i| Ok(i * 10)).unwrap();
            assert_eq!(out, (0..10).map(|i| i * 10).collect::<Vec<_>>());
        }
        // The first failing part's error, whatever finished first.
        let r =
            take_in_turn(10, 3, &|i| if i >= 4 { Err(anyhow::anyhow!("part {i}")) } else { Ok(i) });
        assert_eq!(r.unwrap_err().to_string(), "part 4");
        assert!(take_in_turn(0, 2, &|i| Ok(i)).unwrap().is_empty());
    }

    /// A zstd Parquet file of `rows` rows: timestamp, host and uuid (text), utilization.gpu.
    fn zstd_file(path: &Path, rows: usize) {
        use arrow_array::{StringArray, TimestampMicrosecondArray, UInt8Array};
        use arrow_schema::{DataType, Field as F, Schema, TimeUnit};
        use parquet::basic::{Compression, ZstdLevel};
        use parquet::file::properties::WriterProperties;
        let schema = Arc::new(Schema::new(vec![
            F::new(
                "timestamp",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                false,
            ),
            F::new("host", DataType::Utf8, true),
            F::new("uuid", DataType::Utf8, true),
            F::new("utilization.gpu", DataType::UInt8, true),
        ]));
        let n = rows as i64;
        let cols: Vec<arrow_array::ArrayRef> = vec![
            Arc::new(TimestampMicrosecondArray::from_iter_values(0..n).with_timezone("UTC")),
            Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("node-{}", i % 2)))),
            Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("GPU-{}", i % 3)))),
            Arc::new(UInt8Array::from_iter_values((0..rows).map(|i| (i % 101) as u8))),
        ];
        let batch = RecordBatch::try_new(schema.clone(), cols).unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let mut w =
            parquet::arrow::ArrowWriter::try_new(File::create(path).unwrap(), schema, Some(props))
                .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }

    /// Every batch of a file: (rows, host and uuid column types, sum of utilization.gpu).
    fn read_all(path: &Path) -> Result<(usize, Vec<String>, u64)> {
        let input = Input::file(path, crate::input::Kind::Parquet);
        let pf = open_parquet(&input, Table::Metrics)?;
        let want = [Field::Host, Field::Uuid, Field::UtilGpu];
        let init = || (0usize, Vec::new(), 0u64);
        let parts = pf.scan(&want, 1, &ReadMeter::none(), &init, &|o, b, _| {
            o.0 += b.num_rows();
            for name in ["host", "uuid"] {
                o.1.extend(b.column_by_name(name).map(|c| c.data_type().to_string()));
            }
            let mut v = Vec::new();
            let u = b.column_by_name("utilization.gpu").unwrap();
            assert!(cols::u64_values(u.as_ref(), &mut v));
            o.2 += v.iter().sum::<u64>();
            Ok(())
        })?;
        assert_eq!(parts.len(), 1);
        Ok(parts.into_iter().next().unwrap())
    }

    #[test]
    fn text_columns_read_as_dictionaries_and_a_damaged_zstd_page_spoils_no_later_read() {
        let dir = tempfile::tempdir().unwrap();
        let (good, bad) = (dir.path().join("good.parquet"), dir.path().join("bad.parquet"));
        let rows = 5000;
        zstd_file(&good, rows);
        let want_sum: u64 = (0..rows).map(|i| (i % 101) as u64).sum();
        let (n, types, sum) = read_all(&good).unwrap();
        assert_eq!((n, sum), (rows, want_sum));
        assert!(types.iter().all(|t| t.starts_with("Dictionary(Int32, Utf8)")), "{types:?}");
        // The same file with the middle of its first column chunk (timestamps, zstd) overwritten:
        // the read fails, and the next read on this thread (the same zstd context) is exact.
        let mut bytes = std::fs::read(&good).unwrap();
        let md = ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::from(bytes.clone()))
            .unwrap();
        let (start, len) = md.row_group(0).column(0).byte_range();
        let mid = (start + len / 2) as usize;
        bytes[mid..mid + 64].fill(0xA5);
        std::fs::write(&bad, &bytes).unwrap();
        assert!(read_all(&bad).is_err());
        let (n, _, sum) = read_all(&good).unwrap();
        assert_eq!((n, sum), (rows, want_sum));
    }
}
