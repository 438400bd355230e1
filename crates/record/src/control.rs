//! The control channel of a recording: a Unix socket in the run's private directory (`rundir`, mode
//! 0700; the socket 0600; every peer's uid checked with SO_PEERCRED) on which `gpumon mark` and the
//! wrapped job set the experiment phase; the status file and `$GPUMON_CONTROL` say where it is (not
//! beside the output: a socket a crash left there would trip every tool that reads the directory).
//! One small thread accepts connections one at a time and answers bounded request lines
//! (`schema::control`); garbage gets an error line and never reaches the record loop. The thread
//! starts at the first connection: until then the record loop watches the socket in the `ppoll` it
//! waits in anyway ([`Control::idle_fd`], [`Control::serve`]), so a run nobody marks starts no thread. Marks are
//! stamped with the recorder's clock on arrival and reach the loop through [`PhaseClock`], which costs
//! one atomic load per row while nobody marks.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::rundir::RunDir;
use gpumon_schema::Value;
use gpumon_schema::control::{MAX_LINE, Request, parse};
use gpumon_util::{warn, warn_once};

/// How long a connection may sit idle before it is closed (a sender that does not send its line
/// holds up later senders this long at most).
const IDLE: Duration = Duration::from_millis(100);

/// One mark: when it arrived, and the phase it starts (None: `end`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    pub at: DateTime<Utc>,
    pub label: Option<Arc<str>>,
}

/// Marks a run keeps at most; later ones are refused (and counted) so that a flood of marks on the
/// socket cannot grow the recorder's memory or the file's footer without bound.
pub(crate) const MAX_MARKS: usize = 10_000;
/// Bytes of marks a run keeps at most (each counts its label and [`MARK_OVERHEAD`]).
pub(crate) const MAX_MARK_BYTES: usize = 1 << 20;
/// What one mark adds to the footer's JSON list besides its label (time, keys, punctuation).
const MARK_OVERHEAD: usize = 64;
/// Marks taken per second, sustained, and in one burst (a token bucket): a job marking its phases,
/// even every step of a fast loop for a while, stays far below; a flood is refused.
pub(crate) const MARKS_PER_S: f64 = 50.0;
const MARK_BURST: f64 = 500.0;

/// Every mark of the run kept, in arrival order, their count (read without the lock) and the
/// number refused by the limits.
#[derive(Debug, Default)]
pub(crate) struct Marks {
    count: AtomicU64,
    dropped: AtomicU64,
    log: Mutex<Log>,
    /// The job's work counters (`progress` requests).
    pub progress: crate::progress::Counters,
    /// Why this recording refuses marks (it has no column to put them in), when it does.
    refused: std::sync::OnceLock<String>,
}

#[derive(Debug, Default)]
struct Log {
    marks: Vec<Mark>,
    /// Bytes of the marks kept, as [`MAX_MARK_BYTES`] counts them.
    bytes: usize,
    /// The rate limit's bucket: marks that may arrive now, and when it was last filled.
    tokens: f64,
    filled: Option<std::time::Instant>,
}

impl Log {
    /// Whether one more mark of `len` label bytes may be kept now; why not when it may not.
    fn admit(&mut self, len: usize) -> Result<(), String> {
        let now = std::time::Instant::now();
        let since =
            self.filled.map_or(MARK_BURST / MARKS_PER_S, |t| now.duration_since(t).as_secs_f64());
        self.tokens = (self.tokens + since * MARKS_PER_S).min(MARK_BURST);
        self.filled = Some(now);
        if self.marks.len() >= MAX_MARKS {
            return Err(format!("too many marks: this run keeps {MAX_MARKS} at most"));
        }
        if self.bytes + len + MARK_OVERHEAD > MAX_MARK_BYTES {
            return Err(format!(
                "too many marks: this run keeps {MAX_MARK_BYTES} bytes of them at most"
            ));
        }
        if self.tokens < 1.0 {
            return Err(format!("marks arrive too fast: at most {MARKS_PER_S} a second are taken"));
        }
        self.tokens -= 1.0;
        self.bytes += len + MARK_OVERHEAD;
        Ok(())
    }
}

impl Marks {
    /// Record a mark arriving now and return its time; refused (and counted) beyond the limits.
    pub(crate) fn push(&self, label: Option<Arc<str>>) -> Result<DateTime<Utc>, String> {
        if let Some(why) = self.refused.get() {
            return Err(why.clone());
        }
        let at = Utc::now();
        let mut log = self.log.lock().map_err(|_| "the marks are unavailable".to_string())?;
        if let Err(why) = log.admit(label.as_deref().map_or(0, str::len)) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return Err(why);
        }
        log.marks.push(Mark { at, label });
        self.count.store(log.marks.len() as u64, Ordering::Release);
        Ok(at)
    }

    /// Refuse every mark from now on, saying `why` (a recording without a `phase` column, where an
    /// accepted mark would reach no file). Work counters are still taken.
    pub(crate) fn refuse(&self, why: String) {
        let _ = self.refused.set(why);
    }

    /// Marks refused by the limits so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    /// The phase of the latest mark and when it arrived (None before the first mark and after `end`).
    pub(crate) fn current(&self) -> Option<(Arc<str>, DateTime<Utc>)> {
        let log = self.log.lock().ok()?;
        let last = log.marks.last()?;
        last.label.clone().map(|l| (l, last.at))
    }

    /// The marks as the JSON list stored in the file metadata (`gpumon.marks`): `[{"time", "label"}]`,
    /// time RFC 3339 UTC with microseconds, label null for an `end`. None without marks.
    pub(crate) fn json(&self) -> Option<String> {
        let log = self.log.lock().ok()?;
        if log.marks.is_empty() {
            return None;
        }
        let list: Vec<serde_json::Value> = log
            .marks
            .iter()
            .map(|m| {
                serde_json::json!({
                    "time": m.at.to_rfc3339_opts(SecondsFormat::Micros, true),
                    "label": m.label.as_deref(),
                })
            })
            .collect();
        serde_json::to_string(&list).ok()
    }
}

/// The record loop's view of the marks: the phase current at a row's timestamp.
#[derive(Debug)]
pub(crate) struct PhaseClock {
    marks: Arc<Marks>,
    /// Marks applied so far (a later one may still wait for a row at or after its time).
    next: usize,
    current: Value,
}

impl PhaseClock {
    pub(crate) fn new(marks: Arc<Marks>) -> PhaseClock {
        PhaseClock { marks, next: 0, current: Value::Null }
    }

    /// The phase of a row stamped `ts`: the label of the latest mark that arrived at or before it.
    /// One atomic load when every mark is applied; the lock only while one waits.
    pub(crate) fn at(&mut self, ts: DateTime<Utc>) -> Value {
        if self.marks.count() as usize > self.next
            && let Ok(log) = self.marks.log.lock()
        {
            while let Some(m) = log.marks.get(self.next).filter(|m| m.at <= ts) {
                self.current = m.label.clone().map_or(Value::Null, Value::S);
                self.next += 1;
            }
        }
        self.current.clone()
    }
}

/// The listening socket and its thread; dropping it stops the thread and removes the socket.
#[derive(Debug)]
pub(crate) struct Control {
    pub path: PathBuf,
    pub marks: Arc<Marks>,
    listener: Arc<UnixListener>,
    /// The accept thread, once somebody connected; `Err` when it could not be started.
    handle: Option<Result<JoinHandle<()>, ()>>,
    /// The directory it is in, held until the socket is removed.
    _dir: Option<Arc<RunDir>>,
}

impl Control {
    /// Listen in the run's private directory (its status file and `$GPUMON_CONTROL` say where). None,
    /// with a warning, when marks cannot be received (the recording goes on).
    pub(crate) fn open(dir: &Arc<RunDir>) -> Option<Control> {
        match Control::bind(&dir.join("ctl"), Some(dir.clone())) {
            Ok(c) => Some(c),
            Err(why) => {
                warn(&format!("marks disabled: {why}"));
                None
            }
        }
    }

    fn bind(path: &Path, dir: Option<Arc<RunDir>>) -> Result<Control, String> {
        let disp = path.display();
        let listener =
            UnixListener::bind(path).map_err(|e| format!("cannot listen at {disp}: {e}"))?;
        if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
            let _ = std::fs::remove_file(path);
            return Err(format!("cannot make {disp} private: {e}"));
        }
        let listener = Arc::new(listener);
        let marks = Arc::new(Marks::default());
        Ok(Control { path: path.to_path_buf(), marks, listener, handle: None, _dir: dir })
    }

    /// The socket while no thread serves it: readable when somebody connects, then call
    /// [`Control::serve`]. Connections wait in the socket's backlog meanwhile.
    pub(crate) fn idle_fd(&self) -> Option<std::os::fd::RawFd> {
        self.handle.is_none().then(|| self.listener.as_raw_fd())
    }

    /// Start the thread that answers connections (once; a failure is warned about and marks stay off).
    pub(crate) fn serve(&mut self) {
        if self.handle.is_some() {
            return;
        }
        let uid = rustix::process::geteuid().as_raw();
        let (l, m) = (self.listener.clone(), self.marks.clone());
        let spawned = std::thread::Builder::new()
            .name("control".into())
            .spawn(move || accept_loop(&l, &m, uid));
        self.handle =
            Some(spawned.map_err(|e| {
                warn(&format!("marks disabled: cannot start the control thread: {e}"))
            }));
    }

    pub(crate) fn clock(&self) -> PhaseClock {
        PhaseClock::new(self.marks.clone())
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        // Wakes the thread's accept with an error; the listener stays open until both sides drop it.
        let _ = rustix::net::shutdown(&*self.listener, rustix::net::Shutdown::Both);
        if let Some(Ok(h)) = self.handle.take() {
            let _ = h.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Serve connections one at a time until the listener is shut down.
fn accept_loop(listener: &UnixListener, marks: &Marks, uid: u32) {
    loop {
        match listener.accept() {
            Ok((s, _)) => serve(&s, marks, uid),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // EINVAL after shutdown (the run ends); anything else would repeat, so stop too.
            Err(_) => return,
        }
    }
}

/// The uid of the process at the other end of `s`.
fn peer_uid(s: &UnixStream) -> Option<u32> {
    rustix::net::sockopt::socket_peercred(s).ok().map(|c| c.uid.as_raw())
}

/// Answer the request lines of one connection; any trouble closes it.
fn serve(s: &UnixStream, marks: &Marks, uid: u32) {
    let _ = s.set_read_timeout(Some(IDLE));
    let _ = s.set_write_timeout(Some(IDLE));
    let mut out = s;
    if peer_uid(s) != Some(uid) {
        let _ =
            out.write_all(b"error: permission denied: only the recording's own user may mark it\n");
        return;
    }
    let mut r = BufReader::with_capacity(MAX_LINE, s);
    let mut line = Vec::with_capacity(MAX_LINE);
    loop {
        line.clear();
        let n = match (&mut r).take(MAX_LINE as u64).read_until(b'\n', &mut line) {
            Ok(n) => n,
            Err(_) => return,
        };
        if n == 0 {
            return;
        }
        let complete = line.last() == Some(&b'\n');
        if !complete && n >= MAX_LINE {
            reject("a request line longer than the limit");
            let _ =
                out.write_all(format!("error: request longer than {MAX_LINE} bytes\n").as_bytes());
            return;
        }
        let reply = answer(line.strip_suffix(b"\n").unwrap_or(&line), marks);
        if out.write_all(reply.as_bytes()).is_err() || !complete {
            return;
        }
    }
}

/// The reply to one request line, acting on it when it is valid.
fn answer(line: &[u8], marks: &Marks) -> String {
    match parse(line) {
        Ok(Request::Mark(label)) => match marks.push(Some(Arc::from(label.as_str()))) {
            Ok(at) => format!(
                "ok phase {label} from {}\n",
                at.to_rfc3339_opts(SecondsFormat::Millis, true)
            ),
            Err(why) => format!("error: {why}\n"),
        },
        Ok(Request::End) => match marks.push(None) {
            Ok(at) => {
                format!("ok phase ended at {}\n", at.to_rfc3339_opts(SecondsFormat::Millis, true))
            }
            Err(why) => format!("error: {why}\n"),
        },
        Ok(Request::Progress(pairs)) => match marks.progress.add(&pairs) {
            Ok(()) => "ok\n".to_string(),
            Err(why) => format!("error: {why}\n"),
        },
        Err(why) => {
            reject(&why);
            format!("error: {why}\n")
        }
    }
}

fn reject(why: &str) {
    warn_once(
        "control-garbage",
        &format!("ignored a bad request on the control socket ({why}); recording goes on"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(path: &Path, text: &[u8]) -> String {
        let mut s = UnixStream::connect(path).unwrap();
        s.write_all(text).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    #[test]
    fn marks_reach_the_clock_at_their_time() {
        let m = Arc::new(Marks::default());
        let mut clock = PhaseClock::new(m.clone());
        let t0 = Utc::now();
        assert_eq!(clock.at(t0), Value::Null);
        let a = m.push(Some("bs=32".into())).unwrap();
        assert_eq!(clock.at(t0), Value::Null, "a row stamped before the mark keeps the old phase");
        assert_eq!(clock.at(a), Value::S("bs=32".into()));
        std::thread::sleep(Duration::from_millis(2));
        let b = m.push(Some("bs=64".into())).unwrap();
        let c = m.push(None).unwrap();
        assert_eq!(clock.at(b), Value::S("bs=64".into()));
        assert_eq!(clock.at(c), Value::Null, "after end: no phase");
        assert_eq!(m.count(), 3);
        let json: serde_json::Value = serde_json::from_str(&m.json().unwrap()).unwrap();
        assert_eq!(json[0]["label"], "bs=32");
        assert_eq!(json[2]["label"], serde_json::Value::Null);
        assert!(m.current().is_none());
    }

    #[test]
    fn a_flood_of_marks_is_cut_at_the_burst_and_counted() {
        let m = Marks::default();
        let taken = (0..2 * MARK_BURST as usize)
            .filter(|i| m.push(Some(format!("m{i}").into())).is_ok())
            .count();
        // The bucket refills at MARKS_PER_S while the loop runs: a few more at most.
        assert!((MARK_BURST as usize..MARK_BURST as usize + 20).contains(&taken), "{taken}");
        assert_eq!(m.count() as usize, taken);
        assert_eq!(m.dropped() as usize, 2 * MARK_BURST as usize - taken);
        let mut log = Log { bytes: MAX_MARK_BYTES - MARK_OVERHEAD, tokens: 10.0, ..Log::default() };
        assert!(log.admit(1).unwrap_err().contains("bytes"), "the bytes are capped too");
        log.bytes = 0;
        log.marks = vec![Mark { at: Utc::now(), label: None }; MAX_MARKS];
        assert!(log.admit(1).unwrap_err().contains("too many marks"));
    }

    #[test]
    fn the_socket_answers_marks_rejects_garbage_and_goes_away() {
        let mut c = Control::open(&RunDir::create().unwrap()).unwrap();
        assert!(c.idle_fd().is_some(), "no thread before the first connection");
        c.serve();
        assert!(c.idle_fd().is_none());
        let (path, dir) = (c.path.clone(), c.path.parent().unwrap().to_path_buf());
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(ask(&path, b"mark bs=64\n").starts_with("ok phase bs=64 from "));
        assert!(
            ask(&path, b"bogus\nmark x\n").starts_with("error: unknown request"),
            "an error line per request"
        );
        assert!(ask(&path, &[b'x'; 4 * MAX_LINE]).starts_with("error: request longer"));
        assert!(
            ask(&path, b"end").starts_with("ok phase ended"),
            "a last line without newline counts"
        );
        assert_eq!(c.marks.count(), 3);
        assert!(c.marks.current().is_none());
        drop(c);
        assert!(
            !path.exists() && !dir.exists(),
            "the socket and its directory are removed at the end"
        );
    }
}
