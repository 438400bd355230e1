//! Parquet sink: zstd, UTC microsecond timestamps, narrow unsigned integers, run metadata in the footer.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Context, Result};
use arrow_array::builder::{
    BooleanBuilder, Float64Builder, StringBuilder, TimestampMicrosecondBuilder, UInt8Builder, UInt32Builder,
    UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use super::{CountingWriter, RunMeta, Sink};
use crate::catalog::{Field, Ty};
use crate::sample::{Selection, Tick, Value};
use crate::schema::arrow_schema;

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
    cols: Vec<Col>,
    rows: usize,
    target: String,
}

enum Col {
    Ts(TimestampMicrosecondBuilder),
    Str(StringBuilder),
    U8(UInt8Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    F64(Float64Builder),
    Bool(BooleanBuilder),
}

impl Col {
    fn new(ty: Ty) -> Col {
        match ty {
            Ty::Timestamp => Col::Ts(TimestampMicrosecondBuilder::new().with_timezone("UTC")),
            Ty::Str => Col::Str(StringBuilder::new()),
            Ty::U8 => Col::U8(UInt8Builder::new()),
            Ty::U32 => Col::U32(UInt32Builder::new()),
            Ty::U64 => Col::U64(UInt64Builder::new()),
            Ty::F64 => Col::F64(Float64Builder::new()),
            Ty::Bool => Col::Bool(BooleanBuilder::new()),
        }
    }

    fn push(&mut self, v: &Value) {
        match self {
            Col::Ts(_) => {}
            Col::Str(b) => b.append_option(v.as_str()),
            Col::U8(b) => b.append_option(v.as_u64().map(|x| x.min(u64::from(u8::MAX)) as u8)),
            Col::U32(b) => b.append_option(v.as_u64().map(|x| x.min(u64::from(u32::MAX)) as u32)),
            Col::U64(b) => b.append_option(v.as_u64()),
            Col::F64(b) => b.append_option(v.as_f64()),
            Col::Bool(b) => b.append_option(v.as_u64().map(|x| x != 0)),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Col::Ts(b) => Arc::new(b.finish()),
            Col::Str(b) => Arc::new(b.finish()),
            Col::U8(b) => Arc::new(b.finish()),
            Col::U32(b) => Arc::new(b.finish()),
            Col::U64(b) => Arc::new(b.finish()),
            Col::F64(b) => Arc::new(b.finish()),
            Col::Bool(b) => Arc::new(b.finish()),
        }
    }
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
        let schema = arrow_schema(sel);
        let kv = kv_metadata(meta);
        let props = writer_properties_from(&kv);
        let journal = match journal {
            Some(j) => {
                let jt = j.target().to_string();
                let jschema = schema.as_ref().clone().with_metadata(kv);
                let mut jw = StreamWriter::try_new(j, &jschema).with_context(|| format!("writing {jt}"))?;
                jw.get_mut().sync()?;
                Some(jw)
            }
            None => None,
        };
        let w = ArrowWriter::try_new(out, schema.clone(), Some(props)).with_context(|| format!("writing {target}"))?;
        let cols = sel.fields().map(|f| Col::new(f.def().ty)).collect();
        Ok(ParquetSink { w, journal, schema, sel: sel.clone(), cols, rows: 0, target })
    }

    /// Hand buffered rows to the Parquet writer as one batch.
    fn drain(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self.cols.iter_mut().map(Col::finish).collect();
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
                match col {
                    Col::Ts(b) if f == Field::Timestamp => b.append_value(us),
                    c => c.push(row.get(f)),
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
        let mut out = self.w.into_inner().with_context(|| format!("closing {target}"))?;
        out.sync()
    }

    /// Written bytes plus the encoder's estimate for the open row group and a few bytes per cell not
    /// yet encoded (zstd shrinks repetitive metrics well), used for size rotation. The footer
    /// (schema, statistics) comes on top, so small files come out larger than the estimate.
    fn add_metadata(&mut self, key: &str, value: &str) {
        self.w.append_key_value_metadata(KeyValue::new(key.to_string(), value.to_string()));
    }

    fn bytes_written(&self) -> u64 {
        (self.w.bytes_written() + self.w.in_progress_size() + self.rows * self.cols.len() * 2) as u64
    }
}
