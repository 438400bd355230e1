//! Parquet sink: zstd, UTC microsecond timestamps, signed integers sized by range, run metadata in
//! the footer's key/value metadata and in the Arrow schema's metadata.
//!
//! pyarrow (hence pandas) takes a file's schema metadata from the Arrow schema stored in the footer
//! (`ARROW:schema`), not from the footer's key/value pairs; so the run metadata goes into both, and
//! a `PANDAS_ATTRS` entry makes `pd.read_parquet(f).attrs` show it too. The stored Arrow schema is
//! written at close, so that metadata added during the run (the job's exit code) is in it.

use std::collections::HashMap;

use anyhow::{Context, Result};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{Schema, SchemaRef};
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::{ARROW_SCHEMA_META_KEY, ArrowWriter, encode_arrow_schema};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use super::{CountingWriter, Sink, SinkFiles};
use crate::schema::arrow::{ColumnBuilder, arrow_schema};
use crate::schema::catalog::Field;
use crate::schema::row::{Selection, Tick};
use crate::schema::run::RunMeta;

/// Rows per Parquet row group; bounds the writer's memory (the open row group's encoders).
const ROW_GROUP_ROWS: usize = 8 * 1024;
/// Buffered rows converted to an Arrow batch at once.
const BATCH_ROWS: usize = 1024;

pub struct ParquetSink {
    w: ArrowWriter<CountingWriter>,
    /// Arrow IPC stream of every flushed batch, fsynced at each flush: what recovery rebuilds from.
    journal: Option<StreamWriter<CountingWriter>>,
    schema: SchemaRef,
    sel: Selection,
    cols: Vec<ColumnBuilder>,
    rows: usize,
    target: String,
    /// Metadata added after the start ([`Sink::add_metadata`]).
    late: Vec<(String, String)>,
    files: SinkFiles,
}

/// File-level key/value metadata describing the run (also stored in the journal's schema).
pub fn kv_metadata(meta: &RunMeta) -> HashMap<String, String> {
    let mut kv = HashMap::from([
        ("gpumon.version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("gpumon.hostname".to_string(), meta.hostname.clone()),
        ("gpumon.interval_s".to_string(), meta.interval_s.to_string()),
        ("gpumon.command".to_string(), meta.command.clone()),
        ("gpumon.start".to_string(), meta.start.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
    ]);
    if let Some(d) = &meta.driver_version {
        kv.insert("gpumon.driver_version".to_string(), d.clone());
    }
    kv
}

/// The run metadata as the Arrow schema carries it: `kv`, plus `PANDAS_ATTRS` (the same pairs as
/// JSON), which pandas ≥ 2.1 turns into `DataFrame.attrs`.
pub fn schema_metadata(kv: &HashMap<String, String>) -> HashMap<String, String> {
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
pub fn writer_properties_from(kv: &HashMap<String, String>) -> WriterProperties {
    let mut pairs: Vec<KeyValue> = kv.iter().map(|(k, v)| KeyValue::new(k.clone(), v.clone())).collect();
    pairs.sort_by(|a, b| a.key.cmp(&b.key));
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        // Column-chunk statistics only: per-page indexes would pile up in memory until the footer.
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_key_value_metadata(Some(pairs))
        .build()
}

impl ParquetSink {
    pub fn new(out: CountingWriter, journal: Option<CountingWriter>, sel: &Selection, meta: &RunMeta) -> Result<Self> {
        let target = out.target().to_string();
        let files = SinkFiles { data: out.file(), recovery: journal.as_ref().and_then(CountingWriter::file) };
        let kv = kv_metadata(meta);
        let schema: SchemaRef =
            std::sync::Arc::new(arrow_schema(sel).as_ref().clone().with_metadata(schema_metadata(&kv)));
        let journal = match journal {
            Some(j) => {
                let jt = j.target().to_string();
                // The schema reaches the disk with the first flush (the piece's first tick): a piece
                // killed before it has an empty journal, which recovery drops.
                let jw = StreamWriter::try_new(j, &schema).with_context(|| format!("writing {jt}"))?;
                Some(jw)
            }
            None => None,
        };
        // The Arrow schema goes into the footer at close (finish), with every metadata key.
        let opts =
            ArrowWriterOptions::new().with_properties(writer_properties_from(&kv)).with_skip_arrow_metadata(true);
        let w = ArrowWriter::try_new_with_options(out, schema.clone(), opts)
            .with_context(|| format!("writing {target}"))?;
        let cols = sel.fields().map(|f| ColumnBuilder::new(f.def().ty)).collect();
        Ok(ParquetSink { w, journal, schema, sel: sel.clone(), cols, rows: 0, target, late: Vec::new(), files })
    }

    /// Hand buffered rows to the Parquet writer as one batch.
    fn drain(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self.cols.iter_mut().map(ColumnBuilder::finish).collect();
        let batch = RecordBatch::try_new(self.schema.clone(), arrays).context("building a record batch")?;
        self.rows = 0;
        if let Some(j) = &mut self.journal {
            j.write(&batch).with_context(|| format!("writing the journal of {}", self.target))?;
        }
        self.w.write(&batch).with_context(|| format!("writing {}", self.target))
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
            self.rows += 1;
        }
        if self.rows >= BATCH_ROWS {
            self.drain()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.drain()?;
        if let Some(j) = &mut self.journal {
            j.flush().with_context(|| format!("writing the journal of {}", self.target))?;
            j.get_mut().sync()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.drain()?;
        let target = self.target.clone();
        let mut md = self.schema.metadata().clone();
        md.extend(self.late.iter().cloned());
        let stored = Schema::new(self.schema.fields().clone()).with_metadata(schema_metadata(&md));
        self.w
            .append_key_value_metadata(KeyValue::new(ARROW_SCHEMA_META_KEY.to_string(), encode_arrow_schema(&stored)));
        let mut out = self.w.into_inner().with_context(|| format!("closing {target}"))?;
        out.sync()
    }

    fn add_metadata(&mut self, key: &str, value: &str) {
        self.w.append_key_value_metadata(KeyValue::new(key.to_string(), value.to_string()));
        self.late.push((key.to_string(), value.to_string()));
    }

    fn files(&self) -> SinkFiles {
        self.files.clone()
    }

    /// Written bytes plus the encoder's estimate for the open row group and a few bytes per cell not
    /// yet encoded (zstd shrinks repetitive metrics well), used for size rotation. The footer
    /// (schema, statistics) comes on top, so small files come out larger than the estimate.
    fn bytes_written(&self) -> u64 {
        (self.w.bytes_written() + self.w.in_progress_size() + self.rows * self.cols.len() * 2) as u64
    }
}
