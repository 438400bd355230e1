//! The sink's errors by kind, in the manner of `std::io::ErrorKind`: what the writer decides on (a
//! removed file, a name another program took, a full disk) is a [`SinkErrorKind`], not a downcast.
//! The crate's functions return [`Result`]; [`Context`] adds a line in front of an error as
//! `anyhow`'s does (`{e:#}` prints `context: cause: ...`, byte for byte as before), keeping its kind.

use std::error::Error as StdError;
use std::fmt;
use std::path::Path;

use gpumon_util::{HasExitCode, exit};

/// The sink's result type.
pub type Result<T, E = SinkError> = std::result::Result<T, E>;

/// What went wrong, as far as the writer's decisions and the exit code go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SinkErrorKind {
    /// The open piece's file was deleted or its directory removed under the writer.
    Removed,
    /// The open piece's data file was moved away while its journal can still rebuild it.
    Moved,
    /// A file to create was already there (another program put it at the name meanwhile).
    NameTaken,
    /// The disk or the quota is full.
    Full,
    /// Any other I/O error.
    Io,
    /// Parquet, Arrow or CSV encoding or decoding failed (not for an I/O reason).
    Format,
    /// The output is locked by another process, or its lock file cannot be used (exit code 2).
    Locked,
    /// A file in the way that gpumon does not overwrite (exit code 2).
    Refused,
    /// A broken invariant: a writer thread that panicked, a missing column writer.
    Internal,
}

impl SinkErrorKind {
    /// The kind of an I/O error.
    pub fn of_io(e: &std::io::Error) -> SinkErrorKind {
        use std::io::ErrorKind as K;
        match e.kind() {
            K::AlreadyExists => SinkErrorKind::NameTaken,
            K::StorageFull | K::QuotaExceeded => SinkErrorKind::Full,
            _ => SinkErrorKind::Io,
        }
    }

    /// The kind of a library's error: that of the first I/O error among its causes, else `other`.
    fn of_cause(e: &(dyn StdError + 'static), other: SinkErrorKind) -> SinkErrorKind {
        let mut next = Some(e);
        while let Some(c) = next {
            if let Some(io) = c.downcast_ref::<std::io::Error>() {
                return SinkErrorKind::of_io(io);
            }
            if let Some(s) = c.downcast_ref::<SinkError>() {
                return s.kind;
            }
            next = c.source();
        }
        other
    }
}

/// A sink error: its kind, its one-line message and what caused it, if anything. Printed (`{e:#}`
/// through `anyhow`) as `message: cause`.
#[derive(Debug)]
pub struct SinkError {
    kind: SinkErrorKind,
    repr: Repr,
}

#[derive(Debug)]
enum Repr {
    /// A line of the sink's own and its cause.
    Line(String, Option<Box<dyn StdError + Send + Sync>>),
    /// Another library's or the system's error, shown as it is.
    Foreign(Box<dyn StdError + Send + Sync>),
}

/// `{e}` is the error's own line; `{e:#}` adds its causes as `anyhow` does (`line: cause: ...`).
impl fmt::Display for SinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Line(line, _) => f.write_str(line)?,
            Repr::Foreign(e) => write!(f, "{e}")?,
        }
        if f.alternate() {
            let mut next = self.source();
            while let Some(c) = next {
                write!(f, ": {c}")?;
                next = c.source();
            }
        }
        Ok(())
    }
}

impl StdError for SinkError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &self.repr {
            Repr::Line(_, cause) => cause.as_deref().map(|c| c as &(dyn StdError + 'static)),
            Repr::Foreign(e) => e.source(),
        }
    }
}

impl SinkError {
    /// An error of `kind` that is just `line`.
    pub(crate) fn new(kind: SinkErrorKind, line: impl Into<String>) -> SinkError {
        SinkError { kind, repr: Repr::Line(line.into(), None) }
    }

    /// A broken invariant.
    pub(crate) fn internal(line: impl Into<String>) -> SinkError {
        SinkError::new(SinkErrorKind::Internal, line)
    }

    /// The open piece at `path` was removed.
    pub(crate) fn removed(path: &Path) -> SinkError {
        SinkError::new(
            SinkErrorKind::Removed,
            format!("{} was removed (the file deleted or its directory removed)", path.display()),
        )
    }

    /// `e` while doing what `line` says (`creating x.csv`): the kind follows the I/O error's.
    pub(crate) fn io(line: String, e: std::io::Error) -> SinkError {
        SinkError::from(e).context(line)
    }

    /// `line` in front of this error, of the same kind.
    pub(crate) fn context(self, line: impl fmt::Display) -> SinkError {
        let cause: Box<dyn StdError + Send + Sync> = match self.repr {
            // The library's error itself is the next cause, as with anyhow.
            Repr::Foreign(e) => e,
            repr @ Repr::Line(..) => Box::new(SinkError { kind: self.kind, repr }),
        };
        SinkError { kind: self.kind, repr: Repr::Line(line.to_string(), Some(cause)) }
    }

    fn foreign(e: impl StdError + Send + Sync + 'static, other: SinkErrorKind) -> SinkError {
        SinkError { kind: SinkErrorKind::of_cause(&e, other), repr: Repr::Foreign(Box::new(e)) }
    }

    /// What went wrong.
    pub fn kind(&self) -> SinkErrorKind {
        self.kind
    }

    /// The I/O error this error comes from, if any (stdout going away is not a failure).
    pub fn io_error(&self) -> Option<&std::io::Error> {
        let mut next: Option<&(dyn StdError + 'static)> = Some(self);
        while let Some(c) = next {
            if let Some(io) = c.downcast_ref::<std::io::Error>() {
                return Some(io);
            }
            if let Some(SinkError { repr: Repr::Foreign(e), .. }) = c.downcast_ref::<SinkError>()
                && let Some(io) = e.downcast_ref::<std::io::Error>()
            {
                return Some(io);
            }
            next = c.source();
        }
        None
    }
}

impl HasExitCode for SinkError {
    /// A lock held by another process or a file in the way is bad usage (2); the rest runtime
    /// failures (1).
    fn exit_code(&self) -> i32 {
        match self.kind {
            SinkErrorKind::Locked | SinkErrorKind::Refused => exit::USAGE,
            SinkErrorKind::Removed
            | SinkErrorKind::Moved
            | SinkErrorKind::NameTaken
            | SinkErrorKind::Full
            | SinkErrorKind::Io
            | SinkErrorKind::Format
            | SinkErrorKind::Internal => exit::FAILURE,
        }
    }
}

impl From<std::io::Error> for SinkError {
    fn from(e: std::io::Error) -> SinkError {
        SinkError { kind: SinkErrorKind::of_io(&e), repr: Repr::Foreign(Box::new(e)) }
    }
}

impl From<parquet::errors::ParquetError> for SinkError {
    fn from(e: parquet::errors::ParquetError) -> SinkError {
        SinkError::foreign(e, SinkErrorKind::Format)
    }
}

impl From<arrow_schema::ArrowError> for SinkError {
    fn from(e: arrow_schema::ArrowError) -> SinkError {
        SinkError::foreign(e, SinkErrorKind::Format)
    }
}

impl From<std::fmt::Error> for SinkError {
    fn from(e: std::fmt::Error) -> SinkError {
        SinkError::foreign(e, SinkErrorKind::Format)
    }
}

impl From<csv::Error> for SinkError {
    fn from(e: csv::Error) -> SinkError {
        let kind = match e.kind() {
            csv::ErrorKind::Io(io) => SinkErrorKind::of_io(io),
            _ => SinkErrorKind::Format,
        };
        SinkError { kind, repr: Repr::Foreign(Box::new(e)) }
    }
}

/// Errors of the crates below (schema, util) come as `anyhow` chains: kept whole, of the kind of
/// the first sink or I/O error in them (else `Io`).
impl From<anyhow::Error> for SinkError {
    fn from(e: anyhow::Error) -> SinkError {
        let kind = e
            .chain()
            .find_map(|c| {
                c.downcast_ref::<SinkError>()
                    .map(SinkError::kind)
                    .or_else(|| c.downcast_ref::<std::io::Error>().map(SinkErrorKind::of_io))
            })
            .unwrap_or(SinkErrorKind::Io);
        SinkError { kind, repr: Repr::Foreign(e.into()) }
    }
}

/// A line in front of an error, as `anyhow::Context` adds one; the kind is the cause's.
pub(crate) trait Context<T> {
    /// `line` in front of the error.
    fn context<C: fmt::Display>(self, line: C) -> Result<T>;
    /// The line `f` makes in front of the error.
    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, f: F) -> Result<T>;
}

impl<T, E: Into<SinkError>> Context<T> for std::result::Result<T, E> {
    fn context<C: fmt::Display>(self, line: C) -> Result<T> {
        self.map_err(|e| e.into().context(line))
    }

    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, f: F) -> Result<T> {
        self.map_err(|e| e.into().context(f()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CountingWriter, Target};

    #[test]
    fn creating_over_a_taken_name_is_name_taken_with_the_same_message() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        std::fs::write(&p, "x").unwrap();
        let Err(e) = CountingWriter::open(&Target::File(p.clone())) else { panic!("created") };
        assert_eq!(e.kind(), SinkErrorKind::NameTaken, "{e:#}");
        let e = anyhow::Error::from(e);
        let want = format!("creating {}: ", p.display());
        assert!(format!("{e:#}").starts_with(&want), "{e:#}");
    }

    #[test]
    fn io_kinds_map_to_sink_kinds() {
        use std::io::{Error, ErrorKind as K};
        assert_eq!(SinkErrorKind::of_io(&Error::from(K::StorageFull)), SinkErrorKind::Full);
        assert_eq!(SinkErrorKind::of_io(&Error::from(K::QuotaExceeded)), SinkErrorKind::Full);
        assert_eq!(SinkErrorKind::of_io(&Error::from(K::AlreadyExists)), SinkErrorKind::NameTaken);
        assert_eq!(SinkErrorKind::of_io(&Error::from(K::BrokenPipe)), SinkErrorKind::Io);
        let e = SinkError::removed(std::path::Path::new("a.csv")).context("closing a.csv");
        assert_eq!(e.kind(), SinkErrorKind::Removed);
    }

    #[test]
    fn a_full_disk_under_a_library_error_is_full_and_printed_as_anyhow_did() {
        use parquet::errors::ParquetError;
        let io = std::io::Error::from(std::io::ErrorKind::StorageFull);
        let want =
            format!("{:#}", anyhow::Error::from(ParquetError::from(io)).context("writing x"));
        let io = std::io::Error::from(std::io::ErrorKind::StorageFull);
        let e: std::result::Result<(), _> = Err(ParquetError::from(io));
        let e = e.context("writing x").unwrap_err();
        assert_eq!(e.kind(), SinkErrorKind::Full);
        assert_eq!(format!("{e:#}"), want);
        assert_eq!(format!("{:#}", anyhow::Error::from(e)), want);
        // A chain from the crates below keeps every line and the kind of the I/O error in it.
        let below = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::StorageFull))
            .context("reading the journal");
        let want = format!("{:#}", anyhow::anyhow!("{below:#}").context("recovering x"));
        let e = SinkError::from(below).context("recovering x");
        assert_eq!((e.kind(), format!("{e:#}")), (SinkErrorKind::Full, want));
    }

    #[test]
    fn a_held_lock_is_exit_code_2_and_a_full_disk_1() {
        let locked =
            anyhow::Error::from(SinkError::new(SinkErrorKind::Locked, "x is being written"));
        let full = anyhow::Error::from(SinkError::from(std::io::Error::from(
            std::io::ErrorKind::StorageFull,
        )));
        let probes: [gpumon_util::Probe; 1] = [gpumon_util::probe::<SinkError>];
        assert_eq!(gpumon_util::code_for(&locked.context("recording"), &probes), exit::USAGE);
        assert_eq!(gpumon_util::code_for(&full, &probes), exit::FAILURE);
    }
}
