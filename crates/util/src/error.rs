//! Error kinds the CLI maps to exit codes. The rule: 0 success; 1 a runtime failure; 2 bad usage
//! or unreadable input (a [`UsageError`] anywhere in the chain); 3 a `summarize` check
//! (`--fail-if`) failed; a wrapped command's own code when gpumon wraps one (126/127 when it cannot
//! be started, [`CannotStart`]). The CLI prints the whole chain on one line (`{e:#}`). Errors with a
//! kind ([`ReadError`]) get their code from [`ReadErrorKind::exit_code`]; [`code_for`] is the one
//! place that turns an error chain into a code.

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

    /// The exit code of an error of this kind: every input problem is bad usage (2).
    pub fn exit_code(self) -> i32 {
        match self {
            ReadErrorKind::NotFound
            | ReadErrorKind::Unreadable
            | ReadErrorKind::Malformed
            | ReadErrorKind::Unsupported
            | ReadErrorKind::Usage => exit::USAGE,
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

/// Exit code for an error chain: a [`CannotStart`]'s own code; else the code of the first
/// [`ReadError`]'s kind; 2 when any cause is a [`UsageError`]; else 1.
pub fn code_for(e: &anyhow::Error) -> i32 {
    if let Some(c) = e.chain().find_map(|c| c.downcast_ref::<CannotStart>()) {
        return c.code;
    }
    if let Some(r) = e.chain().find_map(|c| c.downcast_ref::<ReadError>()) {
        return r.kind().exit_code();
    }
    if e.chain().any(|c| c.is::<UsageError>()) { exit::USAGE } else { exit::FAILURE }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_come_from_kinds() {
        let read =
            anyhow::Error::from(ReadError::new(ReadErrorKind::Malformed, "a.csv", "no data rows"));
        assert_eq!(format!("{read:#}"), "a.csv: no data rows");
        assert_eq!(code_for(&read.context("summarizing")), exit::USAGE);
        assert_eq!(code_for(&anyhow::anyhow!("a reader thread failed")), exit::FAILURE);
        assert_eq!(code_for(&UsageError("bad".into()).into()), exit::USAGE);
        let start = CannotStart { code: 127, msg: "x: not found".into() };
        assert_eq!(code_for(&start.into()), 127);
    }
}
