//! Error kinds the CLI maps to exit codes (GUIDE §6).

/// Bad usage or unreadable input: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Exit codes.
pub mod exit {
    pub const OK: i32 = 0;
    pub const FAILURE: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const CHECK_FAILED: i32 = 3;
}

/// Exit code for an error chain: 2 when any cause is a [`UsageError`], else 1.
pub fn code_for(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| c.is::<UsageError>()) { exit::USAGE } else { exit::FAILURE }
}
