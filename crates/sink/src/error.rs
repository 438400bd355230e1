//! The sink's errors by kind, in the manner of `std::io::ErrorKind`: what the writer decides on (a
//! removed file, a name another program took, a full disk) is a [`SinkErrorKind`], not a downcast.

use std::path::Path;

/// What went wrong, as far as the writer's decisions go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SinkErrorKind {
    /// The open piece's file was deleted or its directory removed under the writer.
    Removed,
    /// A file to create was already there (another program put it at the name meanwhile).
    NameTaken,
    /// The disk or the quota is full.
    Full,
    /// Any other I/O error.
    Io,
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
}

/// A sink error: its kind, its one-line message and the I/O error under it, if any. Carried in the
/// `anyhow` chain the writer gets; printed (`{e:#}`) as `message: cause`.
#[derive(Debug, thiserror::Error)]
#[error("{msg}")]
pub struct SinkError {
    kind: SinkErrorKind,
    msg: String,
    #[source]
    source: Option<std::io::Error>,
}

impl SinkError {
    /// The open piece at `path` was removed.
    pub(crate) fn removed(path: &Path) -> SinkError {
        SinkError {
            kind: SinkErrorKind::Removed,
            msg: format!(
                "{} was removed (the file deleted or its directory removed)",
                path.display()
            ),
            source: None,
        }
    }

    /// `e` while doing what `msg` says (`creating x.csv`): the kind follows the I/O error's.
    pub(crate) fn io(msg: String, e: std::io::Error) -> SinkError {
        SinkError { kind: SinkErrorKind::of_io(&e), msg, source: Some(e) }
    }

    /// What went wrong.
    pub fn kind(&self) -> SinkErrorKind {
        self.kind
    }

    /// Whether `e`'s chain holds an error of this kind: a sink error, or an I/O error of its own.
    pub fn in_chain(e: &anyhow::Error, kind: SinkErrorKind) -> bool {
        e.chain().any(|c| {
            c.downcast_ref::<SinkError>().map(SinkError::kind).is_some_and(|k| k == kind)
                || c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| SinkErrorKind::of_io(io) == kind)
        })
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
        assert!(SinkError::in_chain(&e, SinkErrorKind::NameTaken), "{e:#}");
        assert!(!SinkError::in_chain(&e, SinkErrorKind::Removed), "{e:#}");
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
        let e = anyhow::Error::from(SinkError::removed(std::path::Path::new("a.csv")));
        assert!(SinkError::in_chain(&e.context("closing a.csv"), SinkErrorKind::Removed));
    }
}
