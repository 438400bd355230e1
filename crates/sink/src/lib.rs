//! Sinks: turn ticks into bytes (gpumon CSV, nvidia-smi style CSV, Parquet). They know only the schema.
//!
//! The modules are private: the crate's API is the list re-exported below, what the recorder, the
//! commands and the fuzz harness use. Opening a sink ([`open`]) and the writer thread ([`Writer`]);
//! recovery of a set after a crash ([`recover_set`], [`recover_journal`]); the output lock
//! ([`OutputLock`]); the Prometheus endpoint ([`Exporter`]) and its metric names ([`prom_metric`]);
//! rows regrouped into ticks for `convert` ([`TickWriter`]). Every fallible function returns
//! [`Result`]: a [`SinkError`] whose [`SinkErrorKind`] the writer decides on and the exit code
//! comes from.

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod columnwise;
mod csv;
mod error;
mod files;
mod lock;
mod parquet;
mod piece;
mod prom;
mod regroup;
mod smistyle;
mod writer;

pub use crate::error::{Result, SinkError, SinkErrorKind};
pub use crate::files::{JournalOutcome, Recovered, recover_journal, recover_set};
pub use crate::lock::OutputLock;
pub use crate::parquet::MARKS_KEY;
pub use crate::prom::Exporter;
pub use crate::prom::names::{MetricSpec, metric as prom_metric};
pub use crate::regroup::TickWriter;
pub use crate::writer::{Writer, WriterConfig, WriterReport, WriterStats};

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Context;
use arrow_array::RecordBatch;

use gpumon_schema::{Format, RunMeta, Selection, Tick};

/// Where a sink writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A file made new at this path.
    File(PathBuf),
    /// Standard output.
    Stdout,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::File(p) => write!(f, "{}", p.display()),
            Target::Stdout => f.write_str("<stdout>"),
        }
    }
}

/// A destination for ticks. `flush` makes everything written so far durable (flushed and fsynced).
pub trait Sink: Send {
    /// Encode one tick (buffered until the next flush).
    fn write_tick(&mut self, tick: &Tick) -> Result<()>;
    /// Make everything written so far durable.
    fn flush(&mut self) -> Result<()>;
    /// Write trailers (Parquet footer), sync and close.
    fn finish(self: Box<Self>) -> Result<()>;
    /// Bytes the output holds so far (including data buffered for the current row group).
    fn bytes_written(&self) -> u64;
    /// Add a key/value to the file's metadata, where the format has a place for it.
    fn add_metadata(&mut self, _key: &str, _value: &str) {}
    /// The open files behind the sink (none for stdout).
    fn files(&self) -> SinkFiles {
        SinkFiles::default()
    }
    /// The piece holds as much as one file should (Parquet: footer metadata); the writer starts the next.
    fn full(&self) -> bool {
        false
    }
    /// Whether the sink keeps the rows written since its last successful flush ([`Sink::unflushed`]);
    /// otherwise the writer keeps copies of them to requeue them if the flush fails.
    fn keeps_unflushed(&self) -> bool {
        false
    }
    /// The rows written since the last successful flush, in the order written, when the sink keeps
    /// them (Parquet: the Arrow batches made since, compact and shared with the encoder, and the
    /// rows not in a batch yet, which asking moves into one). A tick handed to `write_tick` is among
    /// them even if that call failed.
    fn unflushed(&mut self) -> Option<Vec<RecordBatch>> {
        None
    }
}

/// The open files behind a file sink, which the writer watches and cuts back after a write error.
#[derive(Debug, Default, Clone)]
pub struct SinkFiles {
    /// Where the data goes: the CSV itself, or the Parquet partial file.
    pub data: Option<Arc<File>>,
    /// What a crash or a write error is recovered from: the CSV itself, or the Parquet journal.
    pub recovery: Option<Arc<File>>,
}

/// Open a sink of `format` writing to `target`; Parquet also appends each flushed batch to `journal`
/// (created with the first flush).
pub fn open(
    format: Format,
    target: &Target,
    journal: Option<&Path>,
    sel: &Selection,
    meta: &RunMeta,
) -> Result<Box<dyn Sink>> {
    let out = CountingWriter::open(target)?;
    Ok(match format {
        Format::Csv => Box::new(csv::CsvSink::new(out, sel)?),
        Format::NvidiaSmi { header, units } => {
            Box::new(smistyle::NvsmiSink::new(out, sel, header, units)?)
        }
        Format::Parquet => {
            Box::new(parquet::ParquetSink::new(out, journal.map(Path::to_path_buf), sel, meta)?)
        }
    })
}

enum Dest {
    File(Arc<File>, Option<Restart>),
    Stdout(io::Stdout),
}

/// Text files whose header is written again when the file is found cut short under us
/// (logrotate `copytruncate`): the truncated file stays a valid CSV.
struct Restart {
    header: Vec<u8>,
    /// Where our last write ended in the file.
    end: u64,
}

impl Dest {
    fn write_file(file: &File, restart: &mut Option<Restart>, buf: &[u8]) -> io::Result<usize> {
        let Some(r) = restart else { return (&*file).write(buf) };
        let len = file.metadata()?.len();
        let at = if len < r.end {
            // Truncated (copytruncate): the file is O_APPEND, so this lands at its new start.
            (&*file).write_all(&r.header)?;
            len + r.header.len() as u64
        } else {
            len
        };
        let n = (&*file).write(buf)?;
        r.end = at + n as u64;
        Ok(n)
    }
}

impl Write for Dest {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Dest::File(f, restart) => Dest::write_file(f, restart, buf),
            Dest::Stdout(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Dest::File(f, _) => (&**f).flush(),
            Dest::Stdout(s) => s.flush(),
        }
    }
}

/// A buffered writer that counts the bytes it passes on, can fsync, and names its target in errors.
/// Files are opened for appending (`O_APPEND`): if another program truncates one (logrotate
/// `copytruncate`), the next write lands at its new end instead of leaving a hole of NUL bytes.
pub(crate) struct CountingWriter {
    inner: BufWriter<Dest>,
    written: u64,
    target: Target,
}

impl CountingWriter {
    /// Open `target`: a file is made new (never through a link), stdout is taken as it is.
    pub(crate) fn open(target: &Target) -> Result<Self> {
        let dest = match target {
            Target::File(p) => {
                // New, never through a link or over a file another program put at the name.
                let f = gpumon_util::fsafe::create_new(p, true)
                    .map_err(|e| SinkError::io(format!("creating {}", gpumon_util::show(p)), e))?;
                Dest::File(Arc::new(f), None)
            }
            Target::Stdout => Dest::Stdout(io::stdout()),
        };
        Ok(CountingWriter {
            inner: BufWriter::with_capacity(64 * 1024, dest),
            written: 0,
            target: target.clone(),
        })
    }

    /// Write `header` again whenever the file turns out shorter than our last write (see [`Restart`]).
    pub(crate) fn restart_with(&mut self, header: Vec<u8>) {
        if let Dest::File(_, r) = self.inner.get_mut() {
            *r = Some(Restart { header, end: 0 });
        }
    }

    /// Where the bytes go.
    pub(crate) fn target(&self) -> &Target {
        &self.target
    }

    /// Bytes passed on so far (buffered ones included).
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Flush the buffer and, for files, fsync the data so it survives a crash or power loss.
    pub(crate) fn sync(&mut self) -> Result<()> {
        self.inner.flush().with_context(|| format!("writing {}", self.target))?;
        if let Dest::File(f, _) = self.inner.get_ref() {
            f.sync_data().with_context(|| format!("syncing {}", self.target))?;
        }
        Ok(())
    }

    /// The open file, for syncing through a wrapper that hides this writer (the csv crate's).
    pub(crate) fn file(&self) -> Option<Arc<File>> {
        match self.inner.get_ref() {
            Dest::File(f, _) => Some(f.clone()),
            Dest::Stdout(_) => None,
        }
    }
}

impl Write for CountingWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
