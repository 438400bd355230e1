//! The job being recorded: a wrapped command (`record -- CMD`) or a followed PID (`--pid`).
//! Owns the child process, signal forwarding, the exit status and the tree's PID set.

use std::process::{Child, Command, ExitStatus};

use anyhow::{Context, Result};

use gpumon_schema::Row;
use gpumon_source::{JobTracker, PidSet};
use gpumon_util::{CannotStart, UsageError};

pub(crate) struct Job {
    child: Option<Child>,
    tracker: JobTracker,
    pids: PidSet,
    exit: Option<ExitStatus>,
    /// A stop was asked for (signal forwarded); the run ends when the tree is gone.
    pub stopping: bool,
    /// A second stop ended the recording while the command still ran (the signal's number): it is
    /// left running, not waited for, and gpumon says so.
    abandoned: Option<i32>,
}

impl Job {
    /// Start `argv` as a child of gpumon (same process group: a terminal's Ctrl-C reaches both), with
    /// the recording's control socket in `$GPUMON_CONTROL` when it has one.
    pub(crate) fn spawn(argv: &[String], control: Option<&std::path::Path>) -> Result<Job> {
        let (prog, args) =
            argv.split_first().ok_or_else(|| UsageError("no command after --".into()))?;
        let mut cmd = Command::new(prog);
        cmd.args(args);
        if let Some(c) = control {
            cmd.env(gpumon_schema::control::ENV, c);
        }
        let child = cmd.spawn().map_err(|e| UsageError(format!("cannot start {prog}: {e}")))?;
        let tracker = JobTracker::new(child.id());
        Ok(Job {
            child: Some(child),
            tracker,
            pids: PidSet::default(),
            exit: None,
            stopping: false,
            abandoned: None,
        })
    }

    /// Follow an already running process and its descendants.
    pub(crate) fn follow(pid: u32) -> Result<Job> {
        if std::fs::metadata(format!("/proc/{pid}")).is_err() {
            return Err(UsageError(format!("--pid {pid}: no such process")).into());
        }
        Ok(Job {
            child: None,
            tracker: JobTracker::new(pid),
            pids: PidSet::default(),
            exit: None,
            stopping: false,
            abandoned: None,
        })
    }

    /// Publish the tree's PIDs into `pids` (the set the GPU workers read) from now on.
    pub(crate) fn share_pids(&mut self, pids: PidSet) {
        self.pids = pids;
    }

    /// Read the tree into the job fields of `row` and publish its PID set.
    pub(crate) fn sample(&mut self, row: &mut Row) {
        self.tracker.sample(row);
        if let Ok(mut p) = self.pids.write() {
            p.clear();
            p.extend(self.tracker.pids());
        }
    }

    /// Whether the job is over: the wrapped command exited, or the followed tree is gone.
    pub(crate) fn finished(&mut self) -> Result<bool> {
        match &mut self.child {
            Some(c) => {
                if self.exit.is_none() {
                    self.exit = c.try_wait().context("waiting for the wrapped command")?;
                }
                Ok(self.exit.is_some())
            }
            // Zombies count as gone: a followed process's parent may not have reaped it yet.
            None => Ok(!self.tracker.alive()),
        }
    }

    /// Pass a stop signal on to the wrapped command (not to a followed process: it is not ours).
    /// A terminal's Ctrl-C already reached the child, so it is not sent twice.
    pub(crate) fn forward(&mut self, signo: i32, from_terminal: bool) {
        self.stopping = true;
        if let Some(c) = &self.child
            && self.exit.is_none()
            && !from_terminal
        {
            // Our own child's PID, which we have not reaped; a signal it cannot name is not sent.
            let pid = i32::try_from(c.id()).ok().and_then(rustix::process::Pid::from_raw);
            if let (Some(pid), Some(sig)) = (pid, rustix::process::Signal::from_named_raw(signo)) {
                let _ = rustix::process::kill_process(pid, sig);
            }
        }
    }

    /// The wrapped command's PID while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().filter(|_| self.exit.is_none()).map(Child::id)
    }

    /// The PID of a command a second stop left running (known once [`Job::wait`] returned).
    pub(crate) fn left_running(&self) -> Option<u32> {
        self.child
            .as_ref()
            .filter(|_| self.abandoned.is_some() && self.exit.is_none())
            .map(Child::id)
    }

    /// A second stop: recording ends now, the command is no longer waited for.
    pub(crate) fn abandon(&mut self, signo: i32) {
        self.abandoned = Some(signo);
    }

    /// Wait for the wrapped command and return the exit code gpumon should end with:
    /// its own code, or 128 + signal when it was killed. A command left running by a second stop
    /// is not waited for (128 + that signal, as a shell reports an interrupted wait).
    pub(crate) fn wait(&mut self) -> Result<Option<i32>> {
        let Some(c) = &mut self.child else { return Ok(None) };
        if let Some(signo) = self.abandoned {
            if let Ok(Some(status)) = c.try_wait() {
                self.exit = Some(status);
                return Ok(Some(exit_code(status)));
            }
            eprintln!(
                "gpumon: stopped recording; the job (pid {}) is still running and no longer recorded",
                c.id()
            );
            return Ok(Some(128 + signo));
        }
        let status = match self.exit {
            Some(s) => s,
            None => c.wait().context("waiting for the wrapped command")?,
        };
        self.exit = Some(status);
        Ok(Some(exit_code(status)))
    }

    pub(crate) fn is_wrapped(&self) -> bool {
        self.child.is_some()
    }

    /// Whether the job writes to the terminal our stderr is on: a wrapped command inherits our
    /// stdout and stderr, so it always does; a followed process does when its fd 1 or 2 is the
    /// same file as ours. Its output cannot be seen before it lands (no pty in between), so a
    /// redrawn status line would collide with it.
    pub(crate) fn shares_terminal(&self) -> bool {
        if self.child.is_some() {
            return true;
        }
        let Ok(ours) = std::fs::read_link("/proc/self/fd/2") else { return false };
        let root = self.tracker.root();
        [1, 2]
            .iter()
            .any(|fd| std::fs::read_link(format!("/proc/{root}/fd/{fd}")).is_ok_and(|t| t == ours))
    }
}

/// Check that `prog` can be started, as a shell finds it (a name with a `/` as a path, else the first
/// executable of that name in `$PATH`), before the recording creates anything: a typo costs one line
/// and exit 127, never a half-made recording.
pub(crate) fn check_startable(prog: &str) -> Result<(), CannotStart> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &std::path::Path| {
        std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let fail = |code, why: &str| Err(CannotStart { code, msg: format!("{prog}: {why}") });
    if prog.contains('/') {
        return match runnable(std::path::Path::new(prog)) {
            Ok(true) => Ok(()),
            Ok(false) => fail(126, "not an executable file"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => fail(127, "no such file"),
            Err(e) => fail(126, &e.to_string()),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut found_not_runnable = false;
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() { std::path::PathBuf::from(".") } else { dir };
        match runnable(&dir.join(prog)) {
            Ok(true) => return Ok(()),
            Ok(false) => found_not_runnable = true,
            Err(_) => {}
        }
    }
    if found_not_runnable {
        fail(126, "not an executable file")
    } else {
        fail(127, "command not found")
    }
}

/// The shell's convention: the exit code, or 128 + the signal that killed the process.
pub(crate) fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}
