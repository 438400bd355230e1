//! `gpumon mark LABEL` / `gpumon mark --end`: send a phase mark to a running recording over its
//! control socket (`--run PATH`, else `$GPUMON_CONTROL`, which a wrapped command inherits) and wait
//! for its one-line answer. No recorder listening is exit 2 at once, not a hang.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::cli::MarkArgs;
use gpumon_schema::control::{ENV, Request, check_label};
use gpumon_schema::{LiveStatus, NotRead, read_status, status_path};
use gpumon_util::fsafe;
use gpumon_util::show;
use gpumon_util::{UsageError, exit};

/// How long the recorder has to answer (it answers at once; a stopped recorder does not).
const ANSWER: Duration = Duration::from_secs(2);

/// A validated `mark` command line.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkConfig {
    pub request: Request,
    /// The recording's output path, or None for `$GPUMON_CONTROL`.
    pub run: Option<PathBuf>,
}

impl MarkArgs {
    pub fn into_config(self) -> Result<MarkConfig> {
        let request = if self.end {
            Request::End
        } else {
            let label = self.label.join(" ");
            check_label(&label)
                .map_err(|why| UsageError(format!("bad phase label '{label}': {why}")))?;
            Request::Mark(label.trim().to_string())
        };
        Ok(MarkConfig { request, run: self.run })
    }
}

/// The control socket of the recording named by `--run` (its status file says where), or of
/// `$GPUMON_CONTROL`.
fn socket(run: Option<&std::path::Path>) -> Result<PathBuf> {
    let Some(run) = run else {
        return match std::env::var_os(ENV).filter(|v| !v.is_empty()) {
            Some(p) => Ok(PathBuf::from(p)),
            None => Err(UsageError(format!(
                "which recording? pass --run PATH (the -o of `gpumon record`), or run inside `gpumon record ... -- CMD`, \
                 which sets ${ENV}"
            ))
            .into()),
        };
    };
    let status = status_path(run);
    let missing = || {
        UsageError(format!(
            "no recording is listening for marks on {} (no status file {} naming a control socket); is \
             `gpumon record -o {}` running?",
            show(run),
            show(&status),
            show(run)
        ))
    };
    let bytes = match read_status(run) {
        Ok(b) => b,
        Err(NotRead::Missing) => return Err(missing().into()),
        Err(NotRead::Refused(why)) => {
            return Err(UsageError(format!(
                "not sending the mark: the status file is not one your own recorder wrote ({why}); only the \
                 user who started a recording may mark it"
            ))
            .into());
        }
    };
    let sock = serde_json::from_slice::<LiveStatus>(&bytes)
        .ok()
        .and_then(|s| s.control)
        .map(PathBuf::from);
    let sock = sock.ok_or_else(missing)?;
    // The socket too must be the caller's, in the run's private directory.
    if !fsafe::own_socket(&sock) || !sock.parent().is_some_and(fsafe::private_dir) {
        return Err(UsageError(format!(
            "not sending the mark: {} names {} as its control socket, which is not a socket of yours in a private \
             directory",
            show(&status),
            show(&sock)
        ))
        .into());
    }
    Ok(sock)
}

/// Send the mark; exit 0 when the recorder took it.
pub fn run(cfg: &MarkConfig) -> Result<i32> {
    send(cfg.run.as_deref(), &cfg.request)
}

/// Send one request to the recording named by `run` (or `$GPUMON_CONTROL`); exit 0 when it took it.
pub fn send(run: Option<&std::path::Path>, request: &Request) -> Result<i32> {
    let path = socket(run)?;
    let what =
        if matches!(request, Request::Progress(_)) { "the progress report" } else { "the mark" };
    let mut s = UnixStream::connect(&path).map_err(|e| {
        let at = path.display();
        UsageError(if e.kind() == std::io::ErrorKind::PermissionDenied {
            format!("cannot reach the recording at {at} ({e}): only the user who started it may mark it")
        } else {
            format!("no recording is listening for marks at {at} ({e}); is `gpumon record` running on that output?")
        })
    })?;
    let _ = s.set_write_timeout(Some(ANSWER));
    let _ = s.set_read_timeout(Some(ANSWER));
    // A recorder that turns the sender away may close before the request is written (EPIPE): its
    // answer is read all the same. No io::Error is passed on (a broken pipe would read as success).
    let sent = s.write_all(request.line().as_bytes());
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut answer = String::new();
    if BufReader::new(&s).read_line(&mut answer).is_err() || answer.is_empty() {
        let why =
            sent.err().map_or_else(|| "no answer".to_string(), |e| format!("sending failed: {e}"));
        bail!("the recording at {} did not take {what} ({why})", path.display());
    }
    let answer = answer.trim_end();
    match answer.strip_prefix("error: ") {
        Some(why) => Err(UsageError(format!("the recording refused {what}: {why}")).into()),
        None => Ok(exit::OK),
    }
}
