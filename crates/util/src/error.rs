//! Error kinds the CLI maps to exit codes. The rule: 0 success; 1 a runtime failure; 2 bad usage
//! or unreadable input; 3 a `summarize` check (`--fail-if`) failed; a wrapped command's own code
//! when gpumon wraps one (126/127 when it cannot be started, [`CannotStart`]). The CLI prints the
//! whole chain on one line (`{e:#}`).
//!
//! Where codes come from: each error type with kinds says its own kind's code by implementing
//! [`HasExitCode`] ([`ReadError`] here, `gpumon_sink::SinkError` in the sink, which util cannot
//! name); [`code_for`] is the one place that turns an error chain into a code. It knows util's own
//! types and asks the callers' ones through [`probe`]s (`src/cmd` passes the sink's): the outermost
//! error in the chain with a code decides; a chain without one is a runtime failure (1).

/// An error type whose kinds have exit codes.
pub trait HasExitCode: std::error::Error + 'static {
    /// The exit code gpumon ends with when this error is the outermost one with a code.
    fn exit_code(&self) -> i32;
}

/// Asks one link of an error chain for its code, if it is an error of the type the probe is for.
pub type Probe = fn(&(dyn std::error::Error + 'static)) -> Option<i32>;

/// The probe for errors of type `E`.
pub fn probe<E: HasExitCode>(c: &(dyn std::error::Error + 'static)) -> Option<i32> {
    c.downcast_ref::<E>().map(HasExitCode::exit_code)
}

/// Bad usage or unreadable input: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// What is wrong with an input a reading command was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadErrorKind {
    /// No such file, or nothing matches.
    NotFound,
    /// The file exists but cannot be opened, listed or read.
    Unreadable,
    /// The file is of a known kind but its content is not usable (no rows, a bad header).
    Malformed,
    /// Not a kind of file gpumon reads, or a table other than the one asked for.
    Unsupported,
    /// A bad argument naming the input (a bad glob pattern).
    Usage,
    /// The reader's own failure, not the input's: a reading thread that panicked.
    Internal,
}

impl ReadErrorKind {
    /// The kind of a failure to open or list an input: not found, or unreadable.
    pub fn of_open(e: &std::io::Error) -> ReadErrorKind {
        if e.kind() == std::io::ErrorKind::NotFound {
            ReadErrorKind::NotFound
        } else {
            ReadErrorKind::Unreadable
        }
    }

    /// The exit code of an error of this kind: every input problem is bad usage (2); a reader's
    /// own failure (a thread that panicked) is a runtime failure (1).
    pub fn exit_code(self) -> i32 {
        match self {
            ReadErrorKind::NotFound
            | ReadErrorKind::Unreadable
            | ReadErrorKind::Malformed
            | ReadErrorKind::Unsupported
            | ReadErrorKind::Usage => exit::USAGE,
            ReadErrorKind::Internal => exit::FAILURE,
        }
    }
}

/// An input that cannot be read: the path as shown, the kind, and the one line naming both.
#[derive(Debug, thiserror::Error)]
#[error("{line}")]
pub struct ReadError {
    path: String,
    kind: ReadErrorKind,
    line: String,
}

impl ReadError {
    /// `{path}: {what}`.
    pub fn new(kind: ReadErrorKind, path: impl Into<String>, what: impl std::fmt::Display) -> Self {
        let path = path.into();
        ReadError { line: format!("{path}: {what}"), path, kind }
    }

    /// The reader's own failure (`a reader thread failed`), naming no input.
    pub fn internal(line: impl Into<String>) -> Self {
        ReadError { path: String::new(), kind: ReadErrorKind::Internal, line: line.into() }
    }

    /// A message that already names `path`, kept as it is.
    pub fn naming(kind: ReadErrorKind, path: impl Into<String>, line: String) -> Self {
        ReadError { path: path.into(), kind, line }
    }

    /// The input, as the message shows it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong with it.
    pub fn kind(&self) -> ReadErrorKind {
        self.kind
    }
}

/// A wrapped command that cannot be started: the shell's exit codes, 127 (not found) and 126 (found
/// but not executable), and its one line.
#[derive(Debug, thiserror::Error)]
#[error("{msg}")]
pub struct CannotStart {
    /// The exit code gpumon ends with: 127 or 126.
    pub code: i32,
    /// The line printed: the command and why it cannot be started.
    pub msg: String,
}

impl HasExitCode for ReadError {
    fn exit_code(&self) -> i32 {
        self.kind.exit_code()
    }
}

impl HasExitCode for UsageError {
    fn exit_code(&self) -> i32 {
        exit::USAGE
    }
}

impl HasExitCode for CannotStart {
    fn exit_code(&self) -> i32 {
        self.code
    }
}

/// Exit codes.
pub mod exit {
    /// Success.
    pub const OK: i32 = 0;
    /// A runtime failure.
    pub const FAILURE: i32 = 1;
    /// Bad usage or unreadable input.
    pub const USAGE: i32 = 2;
    /// A `summarize` check (`--fail-if`) failed.
    pub const CHECK_FAILED: i32 = 3;
}

/// Exit code for an error chain: a [`CannotStart`]'s own code anywhere in it; else the code of the
/// outermost error that has one (a [`ReadError`], a [`UsageError`], or a type one of `probes` is
/// for); else 1.
pub fn code_for(e: &anyhow::Error, probes: &[Probe]) -> i32 {
    if let Some(c) = e.chain().find_map(|c| c.downcast_ref::<CannotStart>()) {
        return c.code;
    }
    e.chain()
        .find_map(|c| {
            probe::<ReadError>(c)
                .or_else(|| probe::<UsageError>(c))
                .or_else(|| probes.iter().find_map(|p| p(c)))
        })
        .unwrap_or(exit::FAILURE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_come_from_kinds() {
        let read =
            anyhow::Error::from(ReadError::new(ReadErrorKind::Malformed, "a.csv", "no data rows"));
        assert_eq!(format!("{read:#}"), "a.csv: no data rows");
        assert_eq!(code_for(&read.context("summarizing"), &[]), exit::USAGE);
        assert_eq!(code_for(&anyhow::anyhow!("plain"), &[]), exit::FAILURE);
        let failed = anyhow::Error::from(ReadError::internal("a reader thread failed"));
        assert_eq!(format!("{failed:#}"), "a reader thread failed");
        assert_eq!(code_for(&failed, &[]), exit::FAILURE);
        assert_eq!(code_for(&UsageError("bad".into()).into(), &[]), exit::USAGE);
        let start = CannotStart { code: 127, msg: "x: not found".into() };
        assert_eq!(code_for(&start.into(), &[]), 127);
    }
}
