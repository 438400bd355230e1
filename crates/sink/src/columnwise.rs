//! Parquet row groups encoded one column at a time from the journal: the open row group's rows wait
//! only in the journal (LZ4 Arrow IPC, written anyway for recovery), and once the row group is
//! complete each column is read back from it and encoded alone, one column for each batch written
//! after it (the encoded chunks wait in memory, compressed, until the last one puts the row group in
//! the file). So one column writer (one zstd context, one dictionary, one column chunk's pages) is
//! alive at a time instead of one per column for the whole life of every row group, and the work
//! of a row group is spread over the rows that follow it. A row group still small when it ends (a short
//! run's, the last of a piece) is encoded from its batches held in memory instead of the journal.
//!
//! The journal is created with the first batch written to it (the piece's first flush): a run that
//! ends before it (a 1-tick run) writes its file whole at close and never makes one.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{Context, Result, SinkError};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::{
    DictionaryTracker, IpcDataGenerator, IpcWriteContext, IpcWriteOptions, write_message,
};
use arrow_schema::{DataType, Schema, SchemaRef};
use arrow_select::concat::concat_batches;
use bytes::Bytes;
use parquet::arrow::ArrowSchemaConverter;
use parquet::arrow::arrow_writer::{
    ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory, PageKey, PageStore,
    PageStoreArgs, PageStoreFactory, compute_leaves,
};
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterPropertiesPtr};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, SchemaDescriptor, Type};

use super::{CountingWriter, Target};
use gpumon_util::release_freed_memory;

/// Journal bytes of one row group at most (the journal takes about 8 times the Parquet bytes of
/// metrics, so about 1 MiB of Parquet): bounds what one column's pass reads back.
const ROW_GROUP_JOURNAL_BYTES: u64 = 8 << 20;
/// Row groups with fewer rows are written without compression (a 1-tick run, the last seconds of a
/// piece at a slow rate): zstd does not shrink pages of a few values, and each column's zstd
/// contexts cost more than the rest of its encoding (zstd probes the CPU with `cpuid` for every
/// context, three VM exits of about 15 µs each on a virtual machine: two contexts per column).
const SMALL_GROUP_ROWS: usize = 64;
/// While the open row group's batches take at most this many bytes of memory they are also held,
/// and a row group that ends within it is encoded from them: a short run's last row group is not
/// read back from the journal (per column and batch, a message decoded, and an LZ4 frame with its
/// zeroed 64 KiB block). Still one column writer at a time: 32 at once would hold 32 zstd contexts.
const HELD_BYTES: usize = 256 << 10;
/// Held batches are merged into one every this many (a batch per flush, of a few rows when flushes
/// are frequent: each holds an array and its buffers per column, most of its memory).
const HELD_MERGE: usize = 16;
/// Bytes per column a held batch may take beyond twice its values before it is copied: two 64-byte
/// buffers and the array itself, what a copy of a batch of a few rows would take too.
const COPY_SLACK: usize = 256;
/// Batches with fewer rows go into the journal uncompressed: LZ4 does not shrink a column buffer of
/// a few values (its frame headers make it larger), and arrow-ipc makes a frame encoder per buffer
/// (two 64 KiB block buffers and a 16 KiB table, allocated and zeroed: with a flush every tick,
/// a third of the process's CPU). Both kinds read back alike.
const COMPRESS_ROWS: usize = 64;
/// Parquet bytes per journal byte assumed before a row group of the piece has been written (the
/// measured ratio of metrics is about 0.12; a higher guess rotates small pieces early, not late).
const FIRST_RATIO: f64 = 0.25;

/// A Parquet file whose row groups are built from the journal, column by column.
pub(crate) struct ColumnwiseWriter {
    file: SerializedFileWriter<CountingWriter>,
    /// The journal, once its first batch is written.
    journal: Option<Journal>,
    journal_path: PathBuf,
    ipc: IpcWriteOptions,
    schema: SchemaRef,
    /// The properties of large row groups' columns (the file writer has those of small ones).
    props: WriterPropertiesPtr,
    /// Journal offset where the open row group's batches begin, and the rows it holds.
    group_start: u64,
    group_rows: usize,
    /// Rows per row group at most.
    group_max: usize,
    /// Parquet bytes per journal byte of the last row group written.
    ratio: f64,
    /// A complete row group whose columns are being encoded.
    pending: Option<Pending>,
    /// A column writer factory per column, made with the journal (early, low in the heap, rather than
    /// in the middle of a column pass): the chunks of one column share its descriptor in the footer
    /// metadata kept until the close, instead of a new one per chunk.
    columns: Vec<ArrowRowGroupWriterFactory>,
    /// The open row group's batches while they take at most `hold_bytes` of memory.
    held: Option<Held>,
    /// [`HELD_BYTES`] (a test sets 0: every column read back from the journal).
    hold_bytes: usize,
    /// A compressed batch went into the journal since its last sync: the sync hands the memory
    /// freed since back (the batch's Arrow arrays, its IPC buffers and LZ4 encoders: a few hundred
    /// KiB that would otherwise stay with the process until the next column pass). Not after
    /// the small batches of frequent flushes, which free little.
    trim_at_sync: bool,
}

/// An open journal: an Arrow IPC stream appended to, and a descriptor to read it back. Each batch
/// message carries its own compression (the IPC format allows it, and every reader takes it): batches
/// of [`COMPRESS_ROWS`] rows or more are compressed with the given options, smaller ones are not.
struct Journal {
    out: CountingWriter,
    encoder: IpcDataGenerator,
    dicts: DictionaryTracker,
    ctx: IpcWriteContext,
    compressed: IpcWriteOptions,
    plain: IpcWriteOptions,
    /// Read back through it even if another program removed the path.
    file: Arc<File>,
    /// Bytes of the schema message, which each pass reads before the row group's batches.
    header_len: u64,
}

impl Journal {
    fn create(
        path: &std::path::Path,
        schema: &SchemaRef,
        ipc: &IpcWriteOptions,
    ) -> Result<Journal> {
        let mut out = CountingWriter::open(&Target::File(path.to_path_buf()))?;
        // Its own descriptor for reading (the writer's is append-only), kept even if the path goes.
        let file = Arc::new(
            gpumon_util::fsafe::open_existing(path, false)
                .with_context(|| format!("opening {}", path.display()))?,
        );
        let plain = ipc.clone().try_with_compression(None).context("setting up the journal")?;
        let encoder = IpcDataGenerator::default();
        let mut dicts = DictionaryTracker::new(false);
        let header = encoder.schema_to_bytes_with_dictionary_tracker(schema, &mut dicts, &plain);
        write_message(&mut out, header, &plain)
            .with_context(|| format!("writing {}", path.display()))?;
        let header_len = out.written();
        let ctx = IpcWriteContext::default();
        Ok(Journal { out, encoder, dicts, ctx, compressed: ipc.clone(), plain, file, header_len })
    }

    /// Append a batch (buffered: [`CountingWriter::sync`] makes it durable).
    fn write(&mut self, batch: &RecordBatch) -> Result<(), arrow_schema::ArrowError> {
        let opts = if batch.num_rows() >= COMPRESS_ROWS { &self.compressed } else { &self.plain };
        let (dicts, msg) = self.encoder.encode(batch, &mut self.dicts, opts, &mut self.ctx)?;
        for d in dicts {
            write_message(&mut self.out, d, opts)?;
        }
        write_message(&mut self.out, msg, opts)?;
        Ok(())
    }
}

impl ColumnwiseWriter {
    /// A writer of `out` whose journal will be `journal` (created with the first batch).
    pub(crate) fn new(
        out: CountingWriter,
        journal: PathBuf,
        schema: &SchemaRef,
        props: WriterPropertiesPtr,
        ipc: IpcWriteOptions,
        group_max: usize,
    ) -> Result<Self> {
        let target = out.target().to_string();
        let descr = ArrowSchemaConverter::new()
            .convert(schema)
            .context("converting the schema to Parquet")?;
        // The file writer's own properties are those of a small row group: it takes only the
        // file-level ones from them (metadata, statistics and index settings, the same in both),
        // and a small row group's column writers come from it (large ones from `columns`).
        let small_props = Arc::new(small_group_props(&props, schema));
        let file = SerializedFileWriter::new(out, descr.root_schema_ptr(), small_props)
            .with_context(|| format!("writing {target}"))?;
        Ok(ColumnwiseWriter {
            file,
            journal: None,
            journal_path: journal,
            ipc,
            schema: schema.clone(),
            props,
            group_start: 0,
            group_rows: 0,
            group_max,
            ratio: FIRST_RATIO,
            pending: None,
            columns: Vec::new(),
            held: Some(Held::default()),
            hold_bytes: HELD_BYTES,
            trim_at_sync: false,
        })
    }

    /// Append a batch to the journal; a row group that is complete starts being encoded, one
    /// column for each batch written after it (so the work of a row group is spread over the
    /// rows that follow it instead of stalling the writer at once).
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut rest = Some(batch.clone()).filter(|b| b.num_rows() > 0);
        while let Some(b) = rest.take() {
            let n = b.num_rows().min(self.group_max - self.group_rows);
            // A batch that fits the row group is not sliced (a slice is an array per column).
            let part = if n == b.num_rows() {
                b
            } else {
                rest = Some(b.slice(n, b.num_rows() - n));
                b.slice(0, n)
            };
            self.journal()?
                .write(&part)
                .with_context(|| format!("writing {}", self.journal_target()))?;
            self.trim_at_sync |= part.num_rows() >= COMPRESS_ROWS;
            self.group_rows += n;
            self.hold(part)?;
            if self.group_rows >= self.group_max || self.group_bytes() >= ROW_GROUP_JOURNAL_BYTES {
                self.close_group()?;
            }
        }
        self.step()
    }

    /// The journal, created (its schema message written, not synced) if this is its first batch.
    fn journal(&mut self) -> Result<&mut Journal> {
        let j = match self.journal.take() {
            Some(j) => j,
            None => {
                let j = Journal::create(&self.journal_path, &self.schema, &self.ipc)?;
                self.group_start = j.header_len;
                self.make_columns()?;
                j
            }
        };
        Ok(self.journal.insert(j))
    }

    /// The column writer factories of the file's properties, made once (with the journal, early in
    /// the heap, or by the first pass of a piece that has none).
    fn make_columns(&mut self) -> Result<()> {
        if self.columns.is_empty() {
            self.columns = column_factories(&self.schema, self.file.schema_descr(), &self.props)?;
        }
        Ok(())
    }

    /// The journal's open descriptor, once it exists.
    pub(crate) fn journal_file(&self) -> Option<Arc<File>> {
        self.journal.as_ref().and_then(|j| j.out.file())
    }

    /// Keep `part` of the open row group in memory too, while what is held stays within `hold_bytes`.
    fn hold(&mut self, part: RecordBatch) -> Result<()> {
        let Some(h) = self.held.as_mut() else { return Ok(()) };
        h.push(&self.schema, part)?;
        if h.bytes > self.hold_bytes {
            self.held = None;
        }
        Ok(())
    }

    /// Flush and fsync the journal: everything written so far is durable (nothing to do before
    /// its first batch).
    pub(crate) fn sync_journal(&mut self) -> Result<()> {
        let Some(j) = self.journal.as_mut() else { return Ok(()) };
        j.out.sync()?;
        if std::mem::take(&mut self.trim_at_sync) {
            release_freed_memory();
        }
        Ok(())
    }

    fn journal_target(&self) -> String {
        self.journal_path.display().to_string()
    }

    /// Journal bytes written so far.
    fn journal_len(&self) -> u64 {
        self.journal.as_ref().map_or(0, |j| j.out.written())
    }

    /// Journal bytes of the open row group.
    fn group_bytes(&self) -> u64 {
        self.journal_len().saturating_sub(self.group_start)
    }

    /// Written bytes plus an estimate for the row groups not in the file yet.
    pub(crate) fn bytes_estimate(&self) -> u64 {
        let waiting =
            self.pending.as_ref().map_or(0, |p| p.range.1 - p.range.0) + self.group_bytes();
        self.file.bytes_written() as u64 + (waiting as f64 * self.ratio) as u64
    }

    /// Row groups in the file or being encoded.
    pub(crate) fn row_groups(&self) -> usize {
        self.file.flushed_row_groups().len() + usize::from(self.pending.is_some())
    }

    pub(crate) fn append_key_value_metadata(&mut self, kv: KeyValue) {
        self.file.append_key_value_metadata(kv);
    }

    /// Write the row groups not in the file yet, with `tail` (rows not in the journal) after the
    /// open one's rows, then the footer; returns the data file's writer. The tail skips the
    /// journal: the file is complete before the journal is removed, and a 1-tick run neither
    /// compresses nor reads it back.
    pub(crate) fn finish(mut self, tail: Option<RecordBatch>) -> Result<CountingWriter> {
        let tail = match tail {
            Some(b) if self.group_rows + b.num_rows() > self.group_max => {
                self.write(&b)?;
                None
            }
            t => t,
        };
        self.complete_pending()?;
        if self.group_rows + tail.as_ref().map_or(0, RecordBatch::num_rows) > 0 {
            let end = self.journal_end()?;
            let held = self.held.take().map(|h| h.batches);
            let mut last = Pending {
                range: (self.group_start, end),
                rows: self.group_rows,
                chunks: Vec::new(),
                held,
            };
            self.encode_columns(&mut last, tail.as_ref(), usize::MAX)?;
            self.append(last)?;
        }
        let target = self.journal_target();
        self.file.into_inner().with_context(|| format!("closing the Parquet file of {target}"))
    }

    /// Close the open row group and write it to the file at once.
    #[cfg(test)]
    pub(crate) fn end_row_group(&mut self) -> Result<()> {
        self.close_group()?;
        self.complete_pending()
    }

    /// The journal's length, its batches handed to the file so that they can be read back
    /// (written, not synced: durability is the journal's own flush).
    fn journal_end(&mut self) -> Result<u64> {
        let target = self.journal_target();
        let Some(j) = self.journal.as_mut() else { return Ok(self.group_start) };
        j.out.flush().with_context(|| format!("writing {target}"))?;
        Ok(j.out.written())
    }

    /// The open row group becomes the pending one (a pending one still unfinished is finished first).
    fn close_group(&mut self) -> Result<()> {
        if self.group_rows == 0 {
            return Ok(());
        }
        self.complete_pending()?;
        let end = self.journal_end()?;
        let held = self.held.replace(Held::default()).map(|h| h.batches);
        self.pending = Some(Pending {
            range: (self.group_start, end),
            rows: self.group_rows,
            chunks: Vec::new(),
            held,
        });
        self.group_start = end;
        self.group_rows = 0;
        Ok(())
    }

    /// Encode the pending row group's next column; the last one puts the row group in the file.
    fn step(&mut self) -> Result<()> {
        let Some(mut p) = self.pending.take() else { return Ok(()) };
        self.encode_columns(&mut p, None, 1)?;
        // A column's pass frees its pages' buffers and the decoded journal batches at once.
        release_freed_memory();
        if p.chunks.len() == self.schema.fields().len() {
            self.append(p)
        } else {
            self.pending = Some(p);
            Ok(())
        }
    }

    fn complete_pending(&mut self) -> Result<()> {
        let Some(mut p) = self.pending.take() else { return Ok(()) };
        self.encode_columns(&mut p, None, usize::MAX)?;
        self.append(p)
    }

    /// Encode up to `n` more columns of `p` (`tail`: rows after its journal batches).
    fn encode_columns(
        &mut self,
        p: &mut Pending,
        tail: Option<&RecordBatch>,
        n: usize,
    ) -> Result<()> {
        let rows = p.rows + tail.map_or(0, RecordBatch::num_rows);
        let index = self.file.flushed_row_groups().len();
        // A small row group is encoded whole at once (its columns hold a few values each): all its
        // column writers come from the file writer's own factory, not a factory (a schema and a file
        // writer) per column.
        let mut small = if rows < SMALL_GROUP_ROWS {
            let factory = ArrowRowGroupWriterFactory::new(&self.file, self.schema.clone())
                .with_page_store_factory(Arc::new(ExactPages));
            Some(factory.create_column_writers(index)?.into_iter().skip(p.chunks.len()))
        } else {
            self.make_columns()?;
            None
        };
        let pass = ColumnPass {
            schema: &self.schema,
            journal: self.journal.as_ref().map(|j| (&j.file, j.header_len)),
            group: p.range,
            held: p.held.as_deref(),
            tail,
        };
        for i in (p.chunks.len()..self.schema.fields().len()).take(n) {
            let writer = match small.as_mut() {
                Some(writers) => writers
                    .next()
                    .ok_or_else(|| SinkError::internal(format!("no column writer for column {i}"))),
                None => column_writer(&self.columns, i, index),
            };
            let chunk = writer
                .and_then(|w| pass.encode(i, w))
                .with_context(|| format!("writing column {}", self.schema.field(i).name()))?;
            p.chunks.push(chunk);
        }
        Ok(())
    }

    /// Put an encoded row group in the file.
    fn append(&mut self, p: Pending) -> Result<()> {
        let before = self.file.bytes_written();
        let mut rg = self.file.next_row_group().context("starting a row group")?;
        for chunk in p.chunks {
            chunk.append_to_row_group(&mut rg)?;
        }
        rg.close().context("closing a row group")?;
        if p.range.1 > p.range.0 {
            self.ratio =
                (self.file.bytes_written() - before) as f64 / (p.range.1 - p.range.0) as f64;
        }
        release_freed_memory();
        Ok(())
    }
}

/// The open row group's batches kept in memory, and the bytes of their values (kept as they are
/// added: summing them per flush meant an `ArrayData` per column and batch, 14 % of the CPU of a
/// run that flushes every tick).
#[derive(Default)]
struct Held {
    batches: Vec<RecordBatch>,
    bytes: usize,
}

impl Held {
    fn push(&mut self, schema: &SchemaRef, part: RecordBatch) -> Result<()> {
        // The first batch of a sink has buffers of the builders' whole capacity (1,024 values), a
        // part of a batch shares its buffers: held as an exact copy (merged with an empty slice of
        // itself, as a merge of one batch copies nothing). Other small batches are not copied: their
        // buffers are already as small as a copy's (64-byte allocations, an array struct per column).
        let bytes = data_bytes(&part);
        let part = if part.get_array_memory_size() > 2 * bytes + COPY_SLACK * part.num_columns() {
            concat_batches(schema, [&part, &part.slice(0, 0)]).context("copying a held batch")?
        } else {
            part
        };
        self.batches.push(part);
        self.bytes += bytes;
        if self.batches.len() >= HELD_MERGE {
            let one =
                concat_batches(schema, self.batches.iter()).context("merging held batches")?;
            self.bytes = data_bytes(&one);
            self.batches = vec![one];
        }
        Ok(())
    }
}

/// The properties of a row group under [`SMALL_GROUP_ROWS`] rows: no compression, and dictionary
/// encoding for the string columns only (the file contract); a number column of a few values gains
/// nothing from a dictionary page, and its encoder's hash table is most of that column's work.
fn small_group_props(props: &WriterProperties, schema: &SchemaRef) -> WriterProperties {
    let mut b = props
        .clone()
        .into_builder()
        .set_compression(Compression::UNCOMPRESSED)
        .set_dictionary_enabled(false);
    for f in schema.fields().iter().filter(|f| f.data_type() == &DataType::Utf8) {
        b = b.set_column_dictionary_enabled(ColumnPath::from(f.name().as_str()), true);
    }
    b.build()
}

/// Bytes of the values a batch holds (not the capacity of its buffers).
fn data_bytes(b: &RecordBatch) -> usize {
    b.columns().iter().map(|c| c.to_data().get_slice_memory_size().unwrap_or(0)).sum()
}

/// A complete row group while its columns are encoded.
struct Pending {
    /// Its batches in the journal.
    range: (u64, u64),
    rows: usize,
    /// The columns encoded so far, in order (compressed pages).
    chunks: Vec<ArrowColumnChunk>,
    /// Its batches, when they were held in memory.
    held: Option<Vec<RecordBatch>>,
}

/// One column's pass over the open row group in the journal.
struct ColumnPass<'a> {
    schema: &'a SchemaRef,
    /// The journal's descriptor and the length of its schema message (None before its first batch).
    journal: Option<(&'a Arc<File>, u64)>,
    /// The row group's batches in the journal (empty when it has none).
    group: (u64, u64),
    /// The same batches, when they were held in memory (then the journal is not read).
    held: Option<&'a [RecordBatch]>,
    /// Rows after them that are not in the journal.
    tail: Option<&'a RecordBatch>,
}

impl ColumnPass<'_> {
    /// Encode column `i` with `writer`.
    fn encode(&self, i: usize, mut writer: ArrowColumnWriter) -> Result<ArrowColumnChunk> {
        let field = self.schema.field(i);
        let mut write = |column: &ArrayRef| -> Result<()> {
            for leaf in compute_leaves(field, column)? {
                writer.write(&leaf)?;
            }
            Ok(())
        };
        match self.held {
            Some(batches) => {
                for batch in batches {
                    write(batch.column(i))?;
                }
            }
            None if self.group.1 > self.group.0 => {
                let Some((journal, header_len)) = self.journal else {
                    return Err(SinkError::internal("the row group has no journal"));
                };
                let reader = StreamReader::try_new_buffered(
                    self.group_bytes(journal, header_len),
                    Some(vec![i]),
                )
                .context("reading the journal back")?;
                for batch in reader {
                    write(batch.context("reading the journal back")?.column(0))?;
                }
            }
            None => {}
        }
        if let Some(tail) = self.tail {
            write(tail.column(i))?;
        }
        Ok(writer.close()?)
    }

    /// The schema message and the row group's batches in the journal.
    fn group_bytes<'f>(&self, journal: &'f File, header_len: u64) -> impl Read + 'f {
        Range { file: journal, at: 0, end: header_len }.chain(Range {
            file: journal,
            at: self.group.0,
            end: self.group.1,
        })
    }
}

/// A writer for column `i` of row group `row_group`, from its own factory.
fn column_writer(
    columns: &[ArrowRowGroupWriterFactory],
    i: usize,
    row_group: usize,
) -> Result<ArrowColumnWriter> {
    let factory = columns.get(i).ok_or_else(|| SinkError::internal(format!("no column {i}")))?;
    factory
        .create_column_writers(row_group)?
        .pop()
        .ok_or_else(|| SinkError::internal("no column writer"))
}

/// A column writer factory for each column alone: a one-column schema holding the file schema's own
/// leaf type (so a chunk's descriptor is the one the file expects), its pages kept by [`ExactPages`].
fn column_factories(
    schema: &SchemaRef,
    descr: &SchemaDescriptor,
    props: &WriterPropertiesPtr,
) -> Result<Vec<ArrowRowGroupWriterFactory>> {
    let name = descr.root_schema().name();
    (0..schema.fields().len())
        .map(|i| {
            let root = Type::group_type_builder(name)
                .with_fields(vec![descr.column(i).self_type_ptr()])
                .build()?;
            let one = SerializedFileWriter::new(io::sink(), Arc::new(root), props.clone())?;
            let arrow = Arc::new(Schema::new(vec![schema.field(i).clone()]));
            Ok(ArrowRowGroupWriterFactory::new(&one, arrow)
                .with_page_store_factory(Arc::new(ExactPages)))
        })
        .collect()
}

/// Where the encoded pages of a pending row group's columns wait: each page (its header, its data)
/// copied to a buffer of its own length. The parquet crate's own store keeps the buffers it is given,
/// and a page header is serialized into a 1 KiB buffer, a dictionary page into one of the dictionary's
/// uncompressed size: about 1.2 MiB for a row group of 32 columns whose pages take 0.25 MiB.
#[derive(Debug)]
struct ExactPages;

impl PageStoreFactory for ExactPages {
    fn create(&self, _args: &PageStoreArgs<'_>) -> parquet::errors::Result<Box<dyn PageStore>> {
        Ok(Box::new(ExactPageStore::default()))
    }
}

#[derive(Default)]
struct ExactPageStore {
    /// Pages by key; a page taken back is released.
    pages: Vec<Option<Box<[u8]>>>,
    resident: usize,
}

impl PageStore for ExactPageStore {
    fn put(&mut self, value: Bytes) -> parquet::errors::Result<PageKey> {
        let key = PageKey::new(self.pages.len() as u64);
        self.resident += value.len();
        self.pages.push(Some(Box::from(&value[..])));
        Ok(key)
    }

    fn take(&mut self, key: PageKey) -> parquet::errors::Result<Bytes> {
        let page = usize::try_from(key.get())
            .ok()
            .and_then(|k| self.pages.get_mut(k))
            .and_then(Option::take);
        let page = page.ok_or_else(|| {
            parquet::errors::ParquetError::General(format!("no page {}", key.get()))
        })?;
        self.resident -= page.len();
        Ok(Bytes::from(page))
    }

    fn memory_size(&self) -> usize {
        self.resident
    }
}

/// Bytes `at..end` of a file, read by offset (the journal's own descriptor keeps appending).
struct Range<'a> {
    file: &'a File,
    at: u64,
    end: u64,
}

impl Read for Range<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want =
            usize::try_from(self.end.saturating_sub(self.at)).unwrap_or(usize::MAX).min(buf.len());
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.at)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the journal is shorter than written",
            ));
        }
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Float64Array, Int16Array, StringArray};
    use arrow_schema::{DataType, Field};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::file::properties::WriterProperties;

    fn batch(schema: &SchemaRef, from: usize, n: usize) -> RecordBatch {
        let host: ArrayRef =
            Arc::new(StringArray::from_iter((from..from + n).map(|i| Some(format!("h{}", i % 3)))));
        let util: ArrayRef = Arc::new(Int16Array::from_iter(
            (from..from + n).map(|i| (i % 7 != 0).then_some((i % 101) as i16)),
        ));
        let power: ArrayRef =
            Arc::new(Float64Array::from_iter_values((from..from + n).map(|i| i as f64 * 0.5)));
        RecordBatch::try_new(schema.clone(), vec![host, util, power]).unwrap()
    }

    #[test]
    fn row_groups_are_cut_at_their_bound_and_read_back_whole() {
        // Row groups encoded from the batches held in memory, and read back from the journal.
        for hold_bytes in [HELD_BYTES, 0] {
            cut_and_read_back(hold_bytes);
        }
    }

    fn cut_and_read_back(hold_bytes: usize) {
        let dir = tempfile::tempdir().unwrap();
        let schema = schema_of_three();
        let out = CountingWriter::open(&Target::File(dir.path().join("x.parquet"))).unwrap();
        let journal = dir.path().join("x.journal");
        let props = Arc::new(
            WriterProperties::builder()
                .set_data_page_row_count_limit(100)
                .set_compression(Compression::ZSTD(Default::default()))
                .build(),
        );
        let mut w =
            ColumnwiseWriter::new(out, journal, &schema, props, IpcWriteOptions::default(), 1000)
                .unwrap();
        w.hold_bytes = hold_bytes;
        // Batches that straddle the 1,000-row bound: 2,500 rows make 3 row groups.
        let mut at = 0;
        for n in [700, 700, 1, 1099] {
            w.write(&batch(&schema, at, n)).unwrap();
            at += n;
        }
        assert_eq!(w.row_groups(), 2);
        w.sync_journal().unwrap();
        // 200 more rows given at close go into the last row group without the journal.
        w.finish(Some(batch(&schema, 2500, 200))).unwrap().sync().unwrap();
        let f = File::open(dir.path().join("x.parquet")).unwrap();
        let r = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
        let groups: Vec<i64> = r.metadata().row_groups().iter().map(|g| g.num_rows()).collect();
        assert_eq!(groups, [1000, 1000, 700]);
        let got: Vec<RecordBatch> =
            r.with_batch_size(2700).build().unwrap().map(|b| b.unwrap()).collect();
        assert_eq!(got.len(), 1);
        let want = batch(&schema, 0, 2700);
        for (g, w) in got[0].columns().iter().zip(want.columns()) {
            assert_eq!(g.as_ref().to_data(), w.as_ref().to_data());
        }
        let codecs: Vec<Compression> = r_codecs(&dir.path().join("x.parquet"));
        assert!(codecs.iter().all(|c| matches!(c, Compression::ZSTD(_))), "{codecs:?}");
        // The journal still holds every row for recovery.
        let j =
            StreamReader::try_new(File::open(dir.path().join("x.journal")).unwrap(), None).unwrap();
        assert_eq!(j.map(|b| b.unwrap().num_rows()).sum::<usize>(), 2500);
    }

    #[test]
    fn many_small_batches_are_held_merged_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let schema = schema_of_three();
        let out = CountingWriter::open(&Target::File(dir.path().join("x.parquet"))).unwrap();
        let props = Arc::new(WriterProperties::builder().build());
        let journal = dir.path().join("x.journal");
        let mut w =
            ColumnwiseWriter::new(out, journal, &schema, props, IpcWriteOptions::default(), 1000)
                .unwrap();
        // A flush every tick: 300 batches of 3 rows, a row group cut at 1,000 rows.
        for i in 0..300 {
            w.write(&batch(&schema, i * 3, 3)).unwrap();
            let held = w.held.as_ref().map(|h| h.batches.len());
            assert!(held.is_some_and(|n| n < HELD_MERGE), "batch {i}: {held:?}");
        }
        w.finish(None).unwrap().sync().unwrap();
        let f = File::open(dir.path().join("x.parquet")).unwrap();
        let r = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
        let groups: Vec<i64> = r.metadata().row_groups().iter().map(|g| g.num_rows()).collect();
        assert_eq!(groups, [900]);
        let got: Vec<RecordBatch> =
            r.with_batch_size(900).build().unwrap().map(|b| b.unwrap()).collect();
        let want = batch(&schema, 0, 900);
        for (g, w) in got[0].columns().iter().zip(want.columns()) {
            assert_eq!(g.as_ref().to_data(), w.as_ref().to_data());
        }
    }

    #[test]
    fn pages_are_kept_at_their_length_and_taken_back_once() {
        let mut store = ExactPageStore::default();
        // A page header as parquet serializes it: a few bytes in a 1 KiB buffer.
        let mut header = Vec::with_capacity(1024);
        header.extend_from_slice(b"header");
        let h = store.put(Bytes::from(header)).unwrap();
        let d = store.put(Bytes::from_static(b"data page")).unwrap();
        assert_eq!(store.memory_size(), 15);
        assert_eq!(store.pages[0].as_deref().map(<[u8]>::len), Some(6));
        assert_eq!(&store.take(d).unwrap()[..], b"data page");
        assert_eq!(&store.take(h).unwrap()[..], b"header");
        assert_eq!(store.memory_size(), 0);
        assert!(store.take(h).is_err());
        assert!(store.take(PageKey::new(7)).is_err());
    }

    #[test]
    fn held_batches_count_their_bytes_and_only_oversized_ones_are_copied() {
        use gpumon_schema::ColumnBuilder;
        use gpumon_schema::Value;
        use gpumon_schema::catalog::Ty;
        let schema = Arc::new(Schema::new(vec![Field::new("power.draw", DataType::Float64, true)]));
        let mut h = Held::default();
        let mut b = ColumnBuilder::new(Ty::F64);
        let mut one = |i: usize| {
            b.push(&Value::F(i as f64));
            RecordBatch::try_new(schema.clone(), vec![b.finish()]).unwrap()
        };
        let ptr = |b: &RecordBatch| b.column(0).to_data().buffers()[0].as_ptr();
        // The builder's first batch has its 1,024-value buffer: held as a copy.
        let first = one(0);
        h.push(&schema, first.clone()).unwrap();
        assert_ne!(ptr(&h.batches[0]), ptr(&first));
        assert!(h.batches[0].get_array_memory_size() < first.get_array_memory_size() / 4);
        // Later one-row batches are as small as a copy would be: held as they are.
        let second = one(1);
        h.push(&schema, second.clone()).unwrap();
        assert_eq!(ptr(&h.batches[1]), ptr(&second));
        // A small slice of a large batch shares its buffer: copied.
        let big = batch(&schema_of_three(), 0, 2000);
        let mut h3 = Held::default();
        h3.push(&big.schema(), big.slice(10, 2)).unwrap();
        assert_ne!(ptr(&h3.batches[0]), big.column(2).to_data().buffers()[0].as_ptr());
        // The running count of bytes is the bytes of what is held, through merges.
        for i in 2..40 {
            h.push(&schema, one(i)).unwrap();
            let sum: usize = h.batches.iter().map(data_bytes).sum();
            assert_eq!(h.bytes, sum, "after {i} batches");
            assert!(h.batches.len() < HELD_MERGE);
        }
        assert_eq!(h.bytes, 40 * 8);
    }

    fn schema_of_three() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("host", DataType::Utf8, true),
            Field::new("utilization.gpu", DataType::Int16, true),
            Field::new("power.draw", DataType::Float64, true),
        ]))
    }

    #[test]
    fn a_small_row_group_is_not_compressed_and_only_its_strings_have_a_dictionary() {
        use parquet::basic::Encoding;
        let dir = tempfile::tempdir().unwrap();
        let schema = schema_of_three();
        let out = CountingWriter::open(&Target::File(dir.path().join("x.parquet"))).unwrap();
        let journal = dir.path().join("x.journal");
        let props = Arc::new(
            WriterProperties::builder()
                .set_compression(Compression::ZSTD(Default::default()))
                .build(),
        );
        let mut w =
            ColumnwiseWriter::new(out, journal, &schema, props, IpcWriteOptions::default(), 1000)
                .unwrap();
        w.write(&batch(&schema, 0, 1000)).unwrap();
        w.finish(Some(batch(&schema, 1000, SMALL_GROUP_ROWS - 1))).unwrap().sync().unwrap();
        let r = ParquetRecordBatchReaderBuilder::try_new(
            File::open(dir.path().join("x.parquet")).unwrap(),
        )
        .unwrap();
        let groups = r.metadata().row_groups();
        let dict = |g: usize, c: usize| {
            groups[g].column(c).encodings().any(|e| e == Encoding::RLE_DICTIONARY)
        };
        let codec = |g: usize, c: usize| groups[g].column(c).compression();
        assert_eq!(groups.len(), 2);
        for c in 0..3 {
            assert!(matches!(codec(0, c), Compression::ZSTD(_)), "column {c}");
            assert_eq!(codec(1, c), Compression::UNCOMPRESSED, "column {c}");
            assert!(dict(0, c), "the large group's column {c} has its dictionary");
        }
        assert!(dict(1, 0), "strings are dictionary-encoded in every row group");
        assert!(!dict(1, 1) && !dict(1, 2), "a small group's numbers are plain");
        let got: Vec<RecordBatch> =
            r.with_batch_size(2000).build().unwrap().map(|b| b.unwrap()).collect();
        let want = batch(&schema, 0, 1000 + SMALL_GROUP_ROWS - 1);
        for (g, w) in got[0].columns().iter().zip(want.columns()) {
            assert_eq!(g.as_ref().to_data(), w.as_ref().to_data());
        }
    }

    fn r_codecs(path: &std::path::Path) -> Vec<Compression> {
        let r = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
        r.metadata()
            .row_groups()
            .iter()
            .flat_map(|g| g.columns().iter().map(|c| c.compression()))
            .collect()
    }
}
