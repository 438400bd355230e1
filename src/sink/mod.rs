//! Sinks: turn ticks into bytes (gpumon CSV, nvidia-smi style CSV, Parquet). They know only the schema.

pub mod csv;
pub mod nvsmi;
pub mod parquet;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use crate::sample::{Selection, Tick};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Parquet,
    /// nvidia-smi `--format=csv` look-alike, with its `noheader` / `nounits` variants.
    NvidiaSmi {
        header: bool,
        units: bool,
    },
}

impl Format {
    /// Format implied by a file name's extension.
    pub fn from_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "csv" => Some(Format::Csv),
            "parquet" | "pq" => Some(Format::Parquet),
            _ => None,
        }
    }

    /// Parse `csv`, `parquet`, or `nvidia-smi[,noheader][,nounits]`.
    pub fn parse(s: &str) -> Option<Format> {
        let mut parts = s.split(',').map(str::trim);
        let base = parts.next()?;
        let (mut header, mut units) = (true, true);
        for p in parts {
            match p {
                "noheader" => header = false,
                "nounits" => units = false,
                _ => return None,
            }
        }
        match base {
            "csv" if header && units => Some(Format::Csv),
            "parquet" if header && units => Some(Format::Parquet),
            "nvidia-smi" | "nvsmi" => Some(Format::NvidiaSmi { header, units }),
            _ => None,
        }
    }
}

/// Facts about the run stored with its files (Parquet key/value metadata).
#[derive(Debug, Clone)]
pub struct RunMeta {
    pub hostname: String,
    pub interval_s: f64,
    pub command: String,
    pub start: DateTime<Utc>,
    pub driver_version: Option<String>,
}

/// Where a sink writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    File(PathBuf),
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

/// A destination for ticks. `flush` makes everything written so far reach the OS.
pub trait Sink: Send {
    fn write_tick(&mut self, tick: &Tick) -> Result<()>;
    fn flush(&mut self) -> Result<()>;
    /// Write trailers (Parquet footer) and close.
    fn finish(self: Box<Self>) -> Result<()>;
    /// Bytes handed to the OS so far.
    fn bytes_written(&self) -> u64;
}

/// Open a sink of `format` writing to `target`.
pub fn open(format: Format, target: &Target, sel: &Selection, meta: &RunMeta) -> Result<Box<dyn Sink>> {
    let out = CountingWriter::open(target)?;
    Ok(match format {
        Format::Csv => Box::new(csv::CsvSink::new(out, sel)?),
        Format::NvidiaSmi { header, units } => Box::new(nvsmi::NvsmiSink::new(out, sel, header, units)?),
        Format::Parquet => Box::new(parquet::ParquetSink::new(out, sel, meta)?),
    })
}

/// A buffered writer that counts the bytes it passes on and names its target in errors.
pub struct CountingWriter {
    inner: BufWriter<Box<dyn Write + Send>>,
    written: u64,
    target: Target,
}

impl CountingWriter {
    pub fn open(target: &Target) -> Result<Self> {
        let inner: Box<dyn Write + Send> = match target {
            Target::File(p) => Box::new(File::create(p).with_context(|| format!("creating {}", p.display()))?),
            Target::Stdout => Box::new(io::stdout()),
        };
        Ok(CountingWriter { inner: BufWriter::with_capacity(64 * 1024, inner), written: 0, target: target.clone() })
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    pub fn written(&self) -> u64 {
        self.written
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
