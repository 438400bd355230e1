//! Parquet sink: zstd, UTC microsecond timestamps, signed integers sized by range, run metadata in
//! the footer's key/value metadata and in the Arrow schema's metadata; memory bounded by page
//! limits, by encoding row groups one column at a time from the journal (`columnwise`), and by
//! closing a piece after a fixed number of column chunks.
//!
//! pyarrow (hence pandas) takes a file's schema metadata from the Arrow schema stored in the footer
//! (`ARROW:schema`), not from the footer's key/value pairs; so the run metadata goes into both, and
//! a `PANDAS_ATTRS` entry makes `pd.read_parquet(f).attrs` show it too. The stored Arrow schema is
//! written at close, so that metadata added during the run (the job's exit code) is in it.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::error::{Context, Result, SinkError};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::CompressionType;
use arrow_ipc::writer::IpcWriteOptions;
use arrow_schema::{Schema, SchemaRef};
use arrow_select::concat::concat_batches;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::{ARROW_SCHEMA_META_KEY, ArrowWriter, encode_arrow_schema};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use super::columnwise::ColumnwiseWriter;
use super::{CountingWriter, Sink, SinkFiles};
use gpumon_schema::catalog::Field;
use gpumon_schema::{ColumnBuilder, RunMeta, Selection, Tick, Value, arrow_schema};

// Memory of an open piece. The Parquet writer keeps the metadata of every closed row group (about
// 0.8 KB per column chunk: statistics, offsets, encodings) until the footer is written. So row groups
// are large in rows, and a piece holds a bounded number of column chunks before the writer closes
// it and opens the next piece of the set. The open row group waits in the journal (`columnwise`);
// without a journal (stdout, convert) the parquet crate's writer buffers its encoded pages, bounded
// in bytes. Pages are bounded in rows (the encoders' uncompressed buffers).
/// Rows per row group at most.
const ROW_GROUP_ROWS: usize = 128 * 1024;
/// Encoded bytes of the open row group at most without a journal (its pages are held in memory).
const ROW_GROUP_BYTES: usize = 1 << 20;
/// Rows per data page at most: bounds each column encoder's uncompressed buffer.
const PAGE_ROWS: usize = 8 * 1024;
/// Dictionary size per column chunk before the column falls back to plain encoding.
const DICT_PAGE_BYTES: usize = 64 * 1024;
/// Column chunks (row groups x columns) one piece holds before it asks to be closed: bounds the footer
/// metadata in memory to about 2 MiB (at least 8 row groups; 64 of 32 columns, 4.5 M rows at most with 1 MiB
/// row groups of well-compressing metrics; 8.4 M rows of perfectly compressing ones).
const MAX_COLUMN_CHUNKS: usize = 2048;
/// Buffered rows converted to an Arrow batch at once.
const BATCH_ROWS: usize = 1024;

pub(crate) struct ParquetSink {
    enc: Encoder,
    schema: SchemaRef,
    sel: Selection,
    cols: Vec<ColumnBuilder>,
    rows: usize,
    target: String,
    /// Metadata added after the start ([`Sink::add_metadata`]).
    late: Vec<(String, String)>,
    files: SinkFiles,
    /// Row groups after which the piece is full (MAX_COLUMN_CHUNKS over the column count).
    max_row_groups: usize,
    /// With a journal: the batches handed to it since its last sync (shared with the encoder, not
    /// copies), which the writer requeues if the sync fails ([`Sink::unflushed`]).
    since_sync: Vec<RecordBatch>,
    /// Rows taken out of the builders by [`Sink::unflushed`] (moved, not copied) and not handed to
    /// the encoder yet: they go before the builders' rows.
    sealed: Vec<RecordBatch>,
}

/// How rows become Parquet.
enum Encoder {
    /// Recording to a file: every batch goes to the journal (fsynced at each flush: what recovery
    /// rebuilds from), and each row group is encoded from it one column at a time.
    Columnwise(Box<ColumnwiseWriter>),
    /// No journal (stdout, `convert`): the parquet crate's writer, all columns at once.
    Direct(Box<ArrowWriter<CountingWriter>>),
}

/// The run's phase marks (a JSON list of up to a MiB): kept once, in the footer's key-value
/// metadata, and never copied into the Arrow schema (base64 of it, and again inside `PANDAS_ATTRS`).
pub const MARKS_KEY: &str = "gpumon.marks";

/// File-level key/value metadata describing the run (also stored in the journal's schema).
pub(crate) fn kv_metadata(meta: &RunMeta) -> HashMap<String, String> {
    let mut kv = HashMap::from([
        ("gpumon.version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("gpumon.hostname".to_string(), meta.hostname.clone()),
        ("gpumon.interval_s".to_string(), meta.interval_s.to_string()),
        ("gpumon.command".to_string(), meta.command.clone()),
        (
            "gpumon.start".to_string(),
            meta.start.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        ),
    ]);
    if let Some(d) = &meta.driver_version {
        kv.insert("gpumon.driver_version".to_string(), d.clone());
    }
    kv.extend(meta.job.iter().flat_map(gpumon_schema::JobId::footer));
    kv
}

/// The run metadata as the Arrow schema carries it: `kv`, plus `PANDAS_ATTRS` (the same pairs as
/// JSON), which pandas ≥ 2.1 turns into `DataFrame.attrs`.
pub(crate) fn schema_metadata(kv: &HashMap<String, String>) -> HashMap<String, String> {
    let mut md = kv.clone();
    md.remove(PANDAS_ATTRS);
    let attrs: serde_json::Map<String, serde_json::Value> =
        md.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
    md.insert(PANDAS_ATTRS.to_string(), serde_json::Value::Object(attrs).to_string());
    md
}

/// The schema-metadata key pandas reads `DataFrame.attrs` from.
const PANDAS_ATTRS: &str = "PANDAS_ATTRS";

/// Writer settings for gpumon Parquet files carrying `kv` as file metadata.
pub(crate) fn writer_properties_from(kv: &HashMap<String, String>) -> WriterProperties {
    let mut pairs: Vec<KeyValue> =
        kv.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())).collect();
    pairs.sort_by(|a, b| a.key.cmp(&b.key));
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
        .set_data_page_row_count_limit(PAGE_ROWS)
        .set_dictionary_page_size_limit(DICT_PAGE_BYTES)
        // Column-chunk statistics only: per-page indexes would pile up in memory until the footer.
        .set_statistics_enabled(EnabledStatistics::Chunk)
        // No offset index either (page locations, kept for every closed row group until the footer:
        // about a third of what an open piece's footer holds in memory). Without the column index
        // it only serves seeks to a row number inside a chunk; pyarrow, pandas, polars and DuckDB
        // read these files whole-chunk, and gpumon's reader does too.
        .set_offset_index_disabled(true)
        .set_key_value_metadata(Some(pairs))
        .build()
}

/// The journal's IPC options: LZ4 frames per column buffer (Arrow's IPC compression, readable by
/// pyarrow and by arrow-rs). Not zstd, though its journal is about half the size: a row group is
/// encoded from the journal one column at a time (`columnwise`), and arrow-ipc makes a zstd
/// decompression context per batch read, each probing the CPU with three `cpuid` (trapped by the
/// hypervisor on a VM: ~40 µs); per column and flush that was 0.13 ms per tick at `-i 1`. Journals
/// written as zstd by older versions are still read.
fn journal_options() -> Result<IpcWriteOptions> {
    IpcWriteOptions::default()
        .try_with_compression(Some(CompressionType::LZ4_FRAME))
        .context("setting up the journal's compression")
}

impl ParquetSink {
    /// A sink writing `out`; with `journal`, every flushed batch also goes to that file (created
    /// with the first flush) and row groups are encoded from it (`columnwise`).
    pub(crate) fn new(
        out: CountingWriter,
        journal: Option<PathBuf>,
        sel: &Selection,
        meta: &RunMeta,
    ) -> Result<Self> {
        let target = out.target().to_string();
        // The journal's descriptor joins these once it exists (`files`).
        let files = SinkFiles { data: out.file(), recovery: None };
        let kv = kv_metadata(meta);
        let schema: SchemaRef = std::sync::Arc::new(
            arrow_schema(sel).as_ref().clone().with_metadata(schema_metadata(&kv)),
        );
        let props = writer_properties_from(&kv);
        // The Arrow schema goes into the footer at close (finish), with every metadata key.
        let enc = match journal {
            Some(j) => Encoder::Columnwise(Box::new(ColumnwiseWriter::new(
                out,
                j,
                &schema,
                std::sync::Arc::new(props),
                journal_options()?,
                ROW_GROUP_ROWS,
            )?)),
            None => {
                let opts =
                    ArrowWriterOptions::new().with_properties(props).with_skip_arrow_metadata(true);
                let w = ArrowWriter::try_new_with_options(out, schema.clone(), opts)
                    .with_context(|| format!("writing {target}"))?;
                Encoder::Direct(Box::new(w))
            }
        };
        let counters = sel
            .progress()
            .iter()
            .map(|_| ColumnBuilder::with_capacity(gpumon_schema::catalog::Ty::F64, 0));
        let cols = sel
            .fields()
            .map(|f| ColumnBuilder::with_capacity(f.def().ty, 0))
            .chain(counters)
            .collect();
        let max_row_groups = (MAX_COLUMN_CHUNKS / sel.len().max(1)).max(8);
        let late = Vec::new();
        let since_sync = Vec::new();
        let sealed = Vec::new();
        Ok(ParquetSink {
            enc,
            schema,
            sel: sel.clone(),
            cols,
            rows: 0,
            target,
            late,
            files,
            max_row_groups,
            since_sync,
            sealed,
        })
    }

    /// The buffered rows as one batch, if there are any.
    fn take_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.rows == 0 {
            return Ok(None);
        }
        let arrays: Vec<ArrayRef> = self.cols.iter_mut().map(ColumnBuilder::finish).collect();
        self.rows = 0;
        RecordBatch::try_new(self.schema.clone(), arrays)
            .map(Some)
            .context("building a record batch")
    }

    /// The rows not handed to the encoder yet, in order: the sealed batches, then the builders'.
    fn take_batches(&mut self) -> Result<Vec<RecordBatch>> {
        let last = self.take_batch()?;
        let mut batches = std::mem::take(&mut self.sealed);
        batches.extend(last);
        Ok(batches)
    }

    /// Hand buffered rows to the encoder (and the journal). With a journal they count as handed
    /// on before the first write, so a write that fails leaves every one of them to the requeue.
    fn drain(&mut self) -> Result<()> {
        let batches = self.take_batches()?;
        if let Encoder::Columnwise(_) = self.enc {
            self.since_sync.extend(batches.iter().cloned());
        }
        for batch in &batches {
            match &mut self.enc {
                Encoder::Columnwise(c) => c.write(batch),
                Encoder::Direct(w) => w.write(batch).map_err(SinkError::from),
            }
            .with_context(|| format!("writing {}", self.target))?;
        }
        Ok(())
    }

    fn append_key_value_metadata(&mut self, kv: KeyValue) {
        match &mut self.enc {
            Encoder::Columnwise(c) => c.append_key_value_metadata(kv),
            Encoder::Direct(w) => w.append_key_value_metadata(kv),
        }
    }
}

impl Sink for ParquetSink {
    fn write_tick(&mut self, tick: &Tick) -> Result<()> {
        let us = tick.ts.timestamp_micros();
        for row in &tick.rows {
            for (col, f) in self.cols.iter_mut().zip(self.sel.fields()) {
                if f == Field::Timestamp {
                    col.push_ts(us);
                } else {
                    col.push(row.get(f));
                }
            }
            for (k, col) in self.cols.iter_mut().skip(self.sel.len()).enumerate() {
                col.push(&row.progress(k).map_or(Value::Null, Value::F));
            }
            self.rows += 1;
        }
        if self.rows >= BATCH_ROWS {
            self.drain()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.drain()?;
        if let Encoder::Columnwise(c) = &mut self.enc {
            c.sync_journal()?;
            self.since_sync.clear();
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        // The last rows go straight into the file (the journal is removed once it is complete).
        let tail = match self.enc {
            Encoder::Columnwise(_) => match self.take_batches()?.as_slice() {
                [] => None,
                [one] => Some(one.clone()),
                all => Some(concat_batches(&self.schema, all).context("building a record batch")?),
            },
            Encoder::Direct(_) => {
                self.drain()?;
                None
            }
        };
        let target = self.target.clone();
        let mut md = self.schema.metadata().clone();
        md.extend(self.late.iter().filter(|(k, _)| k != MARKS_KEY).cloned());
        let stored = Schema::new(self.schema.fields().clone()).with_metadata(schema_metadata(&md));
        self.append_key_value_metadata(KeyValue::new(
            ARROW_SCHEMA_META_KEY.to_string(),
            encode_arrow_schema(&stored),
        ));
        let mut out = match self.enc {
            Encoder::Columnwise(c) => c.finish(tail),
            Encoder::Direct(w) => w.into_inner().map_err(SinkError::from),
        }
        .with_context(|| format!("closing {target}"))?;
        out.sync()
    }

    fn add_metadata(&mut self, key: &str, value: &str) {
        self.append_key_value_metadata(KeyValue::new(key.to_string(), value.to_string()));
        self.late.push((key.to_string(), value.to_string()));
    }

    fn files(&self) -> SinkFiles {
        let recovery = match &self.enc {
            Encoder::Columnwise(c) => c.journal_file(),
            Encoder::Direct(_) => None,
        };
        SinkFiles { recovery, ..self.files.clone() }
    }

    fn keeps_unflushed(&self) -> bool {
        matches!(self.enc, Encoder::Columnwise(_))
    }

    fn unflushed(&mut self) -> Option<Vec<RecordBatch>> {
        if !self.keeps_unflushed() {
            return None;
        }
        // The builders' rows become a batch of their own, which the encoder gets later (the
        // builders hold the same columns as the schema: this cannot fail).
        if let Ok(Some(b)) = self.take_batch() {
            self.sealed.push(b);
        }
        Some(self.since_sync.iter().chain(&self.sealed).cloned().collect())
    }

    fn full(&self) -> bool {
        let groups = match &self.enc {
            Encoder::Columnwise(c) => c.row_groups(),
            Encoder::Direct(w) => w.flushed_row_groups().len(),
        };
        groups >= self.max_row_groups
    }

    /// Written bytes plus the encoder's estimate for the open row group and a few bytes per cell not
    /// yet encoded (zstd shrinks repetitive metrics well), used for size rotation. The footer
    /// (schema, statistics) comes on top, so small files come out larger than the estimate.
    fn bytes_written(&self) -> u64 {
        let rows = self.rows + self.sealed.iter().map(RecordBatch::num_rows).sum::<usize>();
        let buffered = (rows * self.cols.len() * 2) as u64;
        buffered
            + match &self.enc {
                Encoder::Columnwise(c) => c.bytes_estimate(),
                Encoder::Direct(w) => (w.bytes_written() + w.in_progress_size()) as u64,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Target;
    use arrow_ipc::reader::StreamReader;
    use gpumon_schema::{Row, Value};

    fn meta() -> RunMeta {
        RunMeta {
            hostname: "h".into(),
            interval_s: 1.0,
            command: "gpumon record".into(),
            start: chrono::Utc::now(),
            driver_version: None,
            job: None,
        }
    }

    fn tick(i: u64) -> Tick {
        let mut r = Row::default();
        r.set(Field::Host, Value::S("h".into()));
        r.set(Field::UtilGpu, Value::U(i % 101));
        r.set(Field::PowerDraw, Value::F(((i * 7) % 50) as f64 + 300.5));
        let ts = chrono::DateTime::from_timestamp_micros(1_700_000_000_000_000 + i as i64 * 1000)
            .unwrap_or_default();
        Tick { ts, seq: i, rows: vec![r], procs: Vec::new() }
    }

    fn sink(dir: &std::path::Path) -> ParquetSink {
        let sel =
            Selection::new(vec![Field::Timestamp, Field::Host, Field::UtilGpu, Field::PowerDraw]);
        let out = CountingWriter::open(&Target::File(dir.join("x.parquet"))).unwrap();
        ParquetSink::new(out, Some(dir.join("x.journal")), &sel, &meta()).unwrap()
    }

    #[test]
    fn journal_is_compressed_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(dir.path());
        for i in 0..5000 {
            s.write_tick(&tick(i)).unwrap();
        }
        s.flush().unwrap();
        let journal_bytes = std::fs::metadata(dir.path().join("x.journal")).unwrap().len();
        // Uncompressed, 5,000 rows of a timestamp, a dictionary host, a u8 and an f32 take over 85 KB
        // (LZ4 frames: about 52 KB; zstd, which the journal used before: under 35 KB).
        assert!(journal_bytes < 60_000, "journal of {journal_bytes} bytes is not compressed");
        let r =
            StreamReader::try_new(std::fs::File::open(dir.path().join("x.journal")).unwrap(), None)
                .unwrap();
        let rows: usize = r.map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(rows, 5000);
        Box::new(s).finish().unwrap();
    }

    #[test]
    fn small_batches_go_into_the_journal_uncompressed_and_every_batch_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(dir.path());
        let mut at = 0;
        let mut sizes = Vec::new();
        for n in [1, 2000, 3] {
            let before = std::fs::metadata(dir.path().join("x.journal")).map_or(0, |m| m.len());
            for _ in 0..n {
                s.write_tick(&tick(at)).unwrap();
                at += 1;
            }
            s.flush().unwrap();
            sizes.push(std::fs::metadata(dir.path().join("x.journal")).unwrap().len() - before);
        }
        let j = gpumon_schema::Journal::open(
            std::fs::File::open(dir.path().join("x.journal")).unwrap(),
        )
        .unwrap();
        let mut rows = 0;
        let read = j.read_batches(&mut |b| {
            rows += b.num_rows();
            Ok(())
        });
        assert!(read.is_ok());
        assert_eq!(rows, 2004);
        let r =
            StreamReader::try_new(std::fs::File::open(dir.path().join("x.journal")).unwrap(), None)
                .unwrap();
        assert_eq!(r.map(|b| b.unwrap().num_rows()).sum::<usize>(), 2004);
        // 2,000 rows compressed: well under their uncompressed 17 bytes a row.
        assert!(sizes[1] < 2000 * 17, "{sizes:?}");
        Box::new(s).finish().unwrap();
    }

    #[test]
    fn a_piece_closed_before_its_first_flush_makes_no_journal() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(dir.path());
        s.write_tick(&tick(0)).unwrap();
        assert!(s.files().recovery.is_none());
        Box::new(s).finish().unwrap();
        assert!(!dir.path().join("x.journal").exists());
        let f = std::fs::File::open(dir.path().join("x.parquet")).unwrap();
        let r = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
        assert_eq!(r.metadata().file_metadata().num_rows(), 1);
        // The first flush makes it, and the sink names its descriptor from then on.
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(dir.path());
        s.write_tick(&tick(0)).unwrap();
        assert!(!dir.path().join("x.journal").exists());
        s.flush().unwrap();
        assert!(dir.path().join("x.journal").exists() && s.files().recovery.is_some());
        Box::new(s).finish().unwrap();
    }

    #[test]
    fn a_failed_write_leaves_every_row_not_synced_to_the_requeue() {
        let dir = tempfile::tempdir().unwrap();
        let sel =
            Selection::new(vec![Field::Timestamp, Field::Host, Field::UtilGpu, Field::PowerDraw]);
        let out = CountingWriter::open(&Target::File(dir.path().join("x.parquet"))).unwrap();
        // The journal cannot be made: the first write to it fails.
        let journal = dir.path().join("missing").join("x.journal");
        let mut s = ParquetSink::new(out, Some(journal), &sel, &meta()).unwrap();
        for i in 0..3 {
            s.write_tick(&tick(i)).unwrap();
        }
        assert_eq!(s.unflushed().unwrap().len(), 1);
        for i in 3..5 {
            s.write_tick(&tick(i)).unwrap();
        }
        // Two batches to hand on (the one asked about, then the builders'); the first write fails.
        assert!(s.flush().is_err());
        let mut back = Vec::new();
        for b in s.unflushed().unwrap() {
            gpumon_schema::rows_of_batch(&b, &mut back);
        }
        let utils: Vec<u64> =
            back.iter().filter_map(|(_, r)| r.get(Field::UtilGpu).as_u64()).collect();
        assert_eq!(utils, (0..5).collect::<Vec<u64>>());
    }

    #[test]
    fn rows_not_yet_synced_are_handed_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(dir.path());
        s.write_tick(&tick(0)).unwrap();
        s.flush().unwrap();
        assert_eq!(s.unflushed().unwrap().len(), 0);
        // A batch in the journal but not synced, then rows still in the builders.
        for i in 1..11 {
            s.write_tick(&tick(i)).unwrap();
        }
        s.drain().unwrap();
        for i in 11..16 {
            s.write_tick(&tick(i)).unwrap();
        }
        let mut back = Vec::new();
        for b in s.unflushed().unwrap() {
            gpumon_schema::rows_of_batch(&b, &mut back);
        }
        let utils: Vec<u64> =
            back.iter().filter_map(|(_, r)| r.get(Field::UtilGpu).as_u64()).collect();
        assert_eq!(utils, (1..16).collect::<Vec<u64>>());
        assert_eq!(back[3].0, tick(4).ts.timestamp_micros());
        // Asking does not take them: the file still gets every row.
        s.flush().unwrap();
        assert!(s.unflushed().unwrap().is_empty());
        // Rows written after asking come after the ones asked about, in the file too (the close
        // writes both as its last rows).
        for i in 16..20 {
            s.write_tick(&tick(i)).unwrap();
            if i == 17 {
                assert_eq!(
                    s.unflushed().unwrap().iter().map(RecordBatch::num_rows).sum::<usize>(),
                    2
                );
            }
        }
        let mut back = Vec::new();
        for b in s.unflushed().unwrap() {
            gpumon_schema::rows_of_batch(&b, &mut back);
        }
        let utils: Vec<u64> =
            back.iter().filter_map(|(_, r)| r.get(Field::UtilGpu).as_u64()).collect();
        assert_eq!(utils, (16..20).collect::<Vec<u64>>());
        s.write_tick(&tick(20)).unwrap();
        Box::new(s).finish().unwrap();
        let f = std::fs::File::open(dir.path().join("x.parquet")).unwrap();
        let r = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
        assert_eq!(r.metadata().file_metadata().num_rows(), 21);
        let mut all = Vec::new();
        for b in r.build().unwrap() {
            gpumon_schema::rows_of_batch(&b.unwrap(), &mut all);
        }
        let utils: Vec<u64> =
            all.iter().filter_map(|(_, r)| r.get(Field::UtilGpu).as_u64()).collect();
        assert_eq!(utils, (0..21).collect::<Vec<u64>>());
    }

    #[test]
    fn piece_is_full_after_its_row_group_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(dir.path());
        assert_eq!(s.max_row_groups, MAX_COLUMN_CHUNKS / 4);
        s.max_row_groups = 2;
        for i in 0..2 {
            assert!(!s.full());
            s.write_tick(&tick(i)).unwrap();
            s.drain().unwrap();
            if let Encoder::Columnwise(c) = &mut s.enc {
                c.end_row_group().unwrap();
            }
        }
        assert!(s.full());
        let props = writer_properties_from(&kv_metadata(&meta()));
        assert_eq!(props.max_row_group_row_count(), Some(ROW_GROUP_ROWS));
        assert_eq!(props.max_row_group_bytes(), Some(ROW_GROUP_BYTES));
        assert!(props.offset_index_disabled());
    }
}
