//! The two harnesses the tests share: a `Recording` (gpumon started in the background, its stderr
//! collected line by line, signalled, waited for, never left running) and a `Tmux` terminal of a
//! test's own (a private server, killed when dropped), as ripgrep's `tests/util.rs` keeps one of each.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A gpumon process running in the background.
pub struct Recording {
    pub child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Recording {
    /// Start `cmd` with stdout discarded and stderr collected.
    pub fn start(mut cmd: Command) -> Recording {
        let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let err = child.stderr.take().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let l = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                l.lock().unwrap().push(line);
            }
        });
        Recording { child, lines }
    }

    /// Its stderr so far, one line each.
    pub fn log(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    /// The first stderr line `f` picks something from.
    pub fn find<T>(&self, f: impl Fn(&str) -> Option<T>) -> Option<T> {
        self.lines.lock().unwrap().iter().find_map(|l| f(l))
    }

    /// Stderr lines that contain `what`.
    pub fn count(&self, what: &str) -> usize {
        self.lines.lock().unwrap().iter().filter(|l| l.contains(what)).count()
    }

    /// Poll `done` until it holds; panics with `what` and the log after `secs`.
    pub fn wait_until(&self, secs: u64, what: &str, mut done: impl FnMut() -> bool) {
        let t0 = Instant::now();
        while !done() {
            assert!(
                t0.elapsed() < Duration::from_secs(secs),
                "{what}: not within {secs} s:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait until `n` stderr lines contain `what`.
    pub fn wait_for(&self, what: &str, n: usize, secs: u64) {
        self.wait_until(secs, &format!("{n} x '{what}' on stderr"), || self.count(what) >= n);
    }

    /// Send signal `sig`.
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// SIGTERM, then the exit status and the whole log.
    pub fn stop(mut self) -> (ExitStatus, String) {
        self.signal(libc::SIGTERM);
        self.wait()
    }

    /// Wait for the end (by itself or after a signal): the exit status and the whole log.
    pub fn wait(&mut self) -> (ExitStatus, String) {
        let st = self.child.wait().unwrap();
        // The stderr reader may still be taking the last lines.
        std::thread::sleep(Duration::from_millis(100));
        (st, self.log())
    }
}

/// A failed assertion must not leave a recorder running: SIGTERM, then SIGKILL after 5 s.
impl Drop for Recording {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.signal(libc::SIGTERM);
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(5) {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A tmux server of a test's own (its socket name, no user configuration), killed when dropped.
pub struct Tmux(String);

impl Tmux {
    /// A server named after `name` and this process; panics with the fix when tmux is missing.
    pub fn new(name: &str) -> Tmux {
        let have = Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
        assert!(
            have,
            "this test needs tmux (a terminal to draw in): apt-get install tmux (.ci/run installs it)"
        );
        Tmux(format!("gpumon-test-{name}-{}", std::process::id()))
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux").args(["-L", &self.0, "-f", "/dev/null"]).args(args).output().unwrap()
    }

    /// Start `cmd` in a detached `w` x `h` session.
    pub fn start(&self, session: &str, w: u32, h: u32, cmd: &str) {
        let o = self.run(&[
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
            cmd,
        ]);
        assert!(o.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&o.stderr));
    }

    /// The screen, wrapped lines joined (a line wider than the pane shows as one long line).
    pub fn capture(&self, session: &str) -> String {
        let o = self.run(&["capture-pane", "-p", "-J", "-t", session]);
        assert!(o.status.success(), "capture-pane: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Capture until `want` shows (up to 15 s).
    pub fn wait_for(&self, session: &str, want: &str) -> String {
        let t0 = Instant::now();
        loop {
            let c = self.capture(session);
            if c.contains(want) || t0.elapsed() > Duration::from_secs(15) {
                return c;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn alive(&self, session: &str) -> bool {
        self.run(&["has-session", "-t", session]).status.success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}
