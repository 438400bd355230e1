//! One file to read: its name, what it holds ([`Kind`]), where its bytes are (a pipe's copy), its
//! device and inode, and what is learnt of it once (a Parquet footer, the recording it belongs to).

use std::fs::{self, File};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Result;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;

use gpumon_util::{ReadError, ReadErrorKind, show};

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Parquet file (gpumon's or another writer's).
    Parquet,
    /// Arrow IPC stream: the journal of a Parquet piece a crash left open.
    Journal,
    /// A CSV file gpumon wrote.
    GpumonCsv,
    /// An nvidia-smi `--query-gpu` CSV log.
    Nvsmi,
}

impl Kind {
    /// The kind's name in reports (`parquet`, `journal`, `gpumon-csv`, `nvidia-smi`).
    pub fn label(self) -> &'static str {
        match self {
            Kind::Parquet => "parquet",
            Kind::Journal => "journal",
            Kind::GpumonCsv => "gpumon-csv",
            Kind::Nvsmi => "nvidia-smi",
        }
    }
}

/// Device and inode: what makes two names the same file.
pub(crate) type FileId = (u64, u64);

/// The device and inode of `path` (symbolic links followed).
pub(crate) fn file_id(path: &Path) -> Option<FileId> {
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// One file to read.
#[derive(Debug, Clone)]
pub struct Input {
    /// The file as named: what messages and reports show.
    pub path: PathBuf,
    /// What the file holds, from its content.
    pub kind: Kind,
    /// A copy of a pipe's bytes (FIFO, `<(...)`, stdin), read once at discovery; None: read `path`.
    spool: Option<Arc<tempfile::TempPath>>,
    /// Device and inode of the file named.
    pub id: Option<FileId>,
    /// A Parquet input's footer once decoded (ordering, probing and reading all need it: decoded
    /// once per input, not once per use), dropped once the input is read.
    pub(crate) footer: Arc<Mutex<Option<ArrowReaderMetadata>>>,
    /// The recording it belongs to, read from its footer and numbered among the inputs by
    /// [`crate::recordings::number_recordings`]; None until then (or without a gpumon footer).
    pub recording: Option<gpumon_schema::RecordingOf>,
    /// The group discovery found it in: the pieces of one set (or one pipe, one file of a
    /// directory) are one group, kept together and in their order when the inputs are put in time
    /// order ([`crate::order::in_time_order`]).
    pub(crate) group: usize,
}

impl Input {
    /// A regular file of a known kind.
    pub fn file(path: &Path, kind: Kind) -> Input {
        Input {
            path: path.to_path_buf(),
            kind,
            spool: None,
            id: file_id(path),
            footer: Arc::default(),
            recording: None,
            group: 0,
        }
    }

    /// A file discovery found (`spool`: the copy of a pipe's bytes), in discovery's `group`.
    pub(crate) fn found(
        path: &Path,
        kind: Kind,
        spool: Option<Arc<tempfile::TempPath>>,
        id: Option<FileId>,
        group: usize,
    ) -> Input {
        Input {
            path: path.to_path_buf(),
            kind,
            spool,
            id,
            footer: Arc::default(),
            recording: None,
            group,
        }
    }

    /// The footer decoded earlier, if any.
    pub(crate) fn footer(&self) -> Option<ArrowReaderMetadata> {
        self.footer.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Keep `meta` as this input's footer (`None`: forget it, the input has been read).
    pub(crate) fn keep_footer(&self, meta: Option<ArrowReaderMetadata>) {
        *self.footer.lock().unwrap_or_else(PoisonError::into_inner) = meta;
    }

    /// Where the bytes are read from (the copy, for a pipe).
    pub fn data(&self) -> &Path {
        self.spool.as_deref().map_or(&self.path, |t| t)
    }

    /// Open the bytes for reading; the error names the input.
    pub fn open(&self) -> Result<File, ReadError> {
        File::open(self.data()).map_err(|e| {
            ReadError::new(
                ReadErrorKind::of_open(&e),
                show(&self.path),
                format_args!("cannot open: {e}"),
            )
        })
    }

    /// Size in bytes (0 when unknown).
    pub fn size(&self) -> u64 {
        fs::metadata(self.data()).map_or(0, |m| m.len())
    }
}

impl PartialEq for Input {
    fn eq(&self, o: &Input) -> bool {
        self.path == o.path && self.kind == o.kind
    }
}
