//! Error kinds the CLI maps to exit codes. The rule: 0 success; 1 a runtime failure; 2 bad usage
//! or unreadable input (a [`UsageError`] anywhere in the chain); 3 a `summarize` check
//! (`--fail-if`) failed; a wrapped command's own code when gpumon wraps one (126/127 when it cannot
//! be started, [`CannotStart`]). The CLI prints the whole chain on one line (`{e:#}`).

/// Bad usage or unreadable input: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

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

/// Exit code for an error chain: a [`CannotStart`]'s own code, 2 when any cause is a
/// [`UsageError`], else 1.
pub fn code_for(e: &anyhow::Error) -> i32 {
    if let Some(c) = e.chain().find_map(|c| c.downcast_ref::<CannotStart>()) {
        return c.code;
    }
    if e.chain().any(|c| c.is::<UsageError>()) { exit::USAGE } else { exit::FAILURE }
}
