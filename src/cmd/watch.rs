//! `gpumon watch PATH`: a live view of a recording from another shell or SSH session, read from the
//! status file its recorder rewrites with the latest row (at most every 2 s) (`.PATH.status`, no second NVML poller). It
//! redraws in place in the terminal's alternate screen every interval and quits on q or Ctrl-C;
//! `--once` prints one frame. A recording nobody writes any more (no status file: the run ended; or
//! one whose recorder is gone) is said to be so, and its last tick is shown. The findings so far come from summarising what the recording has
//! written (its journal or CSV), on a thread of their own, at most every [`FINDINGS_EVERY`] or ten
//! times as long as the last look took.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use rustix::termios::{
    InputModes, LocalModes, OptionalActions, SpecialCodeIndex, Termios, tcgetattr, tcsetattr,
};

use crate::cli::WatchArgs;
use gpumon_analysis::findings::{Finding, Thresholds};
use gpumon_analysis::last::LastTick;
use gpumon_analysis::window::WindowSpec;
use gpumon_present::rfc3339;
use gpumon_present::watch::{Liveness, View, frame};
use gpumon_read::discover::discover;
use gpumon_read::order::in_time_order;
use gpumon_read::scan::{ReadOptions, scan};
use gpumon_schema::catalog::{Field, Table};
use gpumon_schema::files::status_path;
use gpumon_schema::live::{self, LiveStatus, NotRead, read_status};
use gpumon_summary::{PhaseMode, SummarizeConfig, summarize};
use gpumon_util::error::{UsageError, exit};
use gpumon_util::progress::Progress;

/// The findings so far, or why there are none.
type FindingsOrError = Result<Vec<Finding>, String>;

/// Shortest time between two looks at the recorded data for the findings so far.
const FINDINGS_EVERY: Duration = Duration::from_secs(10);

/// A validated `watch` command line.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    pub path: PathBuf,
    pub once: bool,
    pub read: ReadOptions,
}

impl WatchArgs {
    pub fn into_config(self) -> Result<WatchConfig> {
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        Ok(WatchConfig {
            path: self.path,
            once: self.once,
            read: ReadOptions { threads, ..Default::default() },
        })
    }
}

/// The status document beside `path`; None while there is none.
fn load(path: &Path) -> Option<LiveStatus> {
    let bytes = read_status(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Whether the recording is going on: its recorder alive (on this host) and writing lately.
fn liveness(st: &LiveStatus, now: DateTime<Utc>) -> Liveness {
    let host = gpumon_source::host::proc::hostname();
    if !st.recorder_alive(&host) {
        return Liveness::Gone(format!("its recorder (pid {}) is gone: killed or crashed", st.pid));
    }
    let age = DateTime::parse_from_rfc3339(&st.updated).map_or(f64::INFINITY, |t| {
        (now - t.with_timezone(&Utc)).num_milliseconds() as f64 / 1000.0
    });
    if age > (5.0 * st.interval_s).max(5.0) { Liveness::Stale(age) } else { Liveness::Recording }
}

/// The last tick of what is on disk, for a recording nobody writes (no status file).
fn from_data(path: &Path, read: &ReadOptions) -> Option<LiveStatus> {
    let found = in_time_order(discover(&[path.to_path_buf()]).ok()?);
    let want: Vec<Field> = Field::all().filter(|f| Table::of([*f]) == Table::Metrics).collect();
    let progress = Progress::new(0, false);
    let visit = |st: &mut LastTick, b: &arrow_array::RecordBatch, host: &str| -> Result<()> {
        st.visit(b, host);
        Ok(())
    };
    let mut last = LastTick::default();
    for input in &found.inputs {
        let (parts, _) = scan(input, read, &want, &progress, &LastTick::default, &visit).ok()?;
        for p in parts {
            last.merge(p);
        }
    }
    let first = last.rows.first()?;
    Some(LiveStatus {
        schema: live::SCHEMA.to_string(),
        host: first.get("host").and_then(|h| h.as_str()).unwrap_or_default().to_string(),
        output: path.display().to_string(),
        phase: first.get("phase").and_then(|p| p.as_str()).map(str::to_string),
        ts: Some(rfc3339(last.ts)),
        rows: last.rows,
        ..LiveStatus::default()
    })
}

/// What a frame shows: the status document (or the data's last tick), whether it is recorded, and
/// whether it was read from the data.
struct Shown {
    st: LiveStatus,
    live: Liveness,
    from_file: bool,
}

/// The live status, else the last tick of the data (`ended`: a status file was seen and is gone).
fn shown(cfg: &WatchConfig, ended: bool, data: &mut Option<Option<LiveStatus>>) -> Option<Shown> {
    if let Some(st) = load(&cfg.path) {
        *data = None;
        let live = liveness(&st, Utc::now());
        return Some(Shown { st, live, from_file: false });
    }
    let st = data.get_or_insert_with(|| from_data(&cfg.path, &cfg.read)).clone()?;
    let why = if ended { "the run ended" } else { "no recorder is writing it" };
    Some(Shown { st, live: Liveness::Gone(why.into()), from_file: true })
}

/// The findings of everything the recording has written so far, or why there is nothing to look at.
fn findings(path: &Path, read: &ReadOptions) -> Result<Vec<Finding>, String> {
    let cfg = SummarizeConfig {
        inputs: vec![path.to_path_buf()],
        read: read.clone(),
        window: WindowSpec::default(),
        thresholds: Thresholds::default(),
        checks: Vec::new(),
        progress: false,
        warnings: false,
        phases: PhaseMode::Off,
        phase_windows: Vec::new(),
        baseline: None,
    };
    match summarize(&cfg) {
        Ok(o) => Ok(o.summary.hosts.into_iter().flat_map(|h| h.findings).collect()),
        Err(_) => Err("no rows written to the file yet; they come at each --flush".into()),
    }
}

/// The terminal's columns and rows (80x24 when it cannot tell).
fn size() -> (usize, usize) {
    match rustix::termios::tcgetwinsize(std::io::stdout()) {
        Ok(ws) if ws.ws_col > 0 && ws.ws_row > 0 => {
            (usize::from(ws.ws_col), usize::from(ws.ws_row))
        }
        _ => (80, 24),
    }
}

/// One frame for `--once`; exit 2 when there is nothing to show.
fn once(cfg: &WatchConfig) -> Result<i32> {
    let path = cfg.path.display().to_string();
    let Some(sh) = shown(cfg, false, &mut None) else {
        return Err(UsageError(format!(
            "nothing to watch at {path}: no status file ({}) and no recorded rows",
            status_path(&cfg.path).display()
        ))
        .into());
    };
    let now = Utc::now();
    let f = findings(&cfg.path, &cfg.read);
    let width = if std::io::IsTerminal::is_terminal(&std::io::stdout()) { size().0 } else { 100 };
    let findings = Some(f.as_deref().map_err(String::as_str));
    let view =
        View { path: &path, live: sh.live, findings, now, keys: false, from_file: sh.from_file };
    let mut out = std::io::stdout().lock();
    for l in frame(&sh.st, &view, width, usize::MAX) {
        writeln!(out, "{l}")?;
    }
    out.flush()?;
    Ok(exit::OK)
}

/// Raw mode on stdin and the alternate screen on stdout, put back as they were when dropped.
struct Term {
    saved: Termios,
}

impl Term {
    fn enter() -> Result<Term> {
        let Ok(mut t) = tcgetattr(std::io::stdin()) else {
            return Err(UsageError(
                "watch needs a terminal on stdin for its keys; use --once for one frame".into(),
            )
            .into());
        };
        let saved = t.clone();
        t.local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG | LocalModes::IEXTEN);
        t.input_modes.remove(InputModes::IXON | InputModes::ICRNL);
        t.special_codes[SpecialCodeIndex::VMIN] = 0;
        t.special_codes[SpecialCodeIndex::VTIME] = 0;
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &t);
        print!("\x1b[?1049h\x1b[?25l");
        std::io::stdout().flush().context("writing to the terminal")?;
        Ok(Term { saved })
    }

    /// Wait up to `d` for a key; true when it asks to quit (q, Q, Ctrl-C, Ctrl-D).
    fn quit_key(&self, d: Duration) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let stdin = std::io::stdin();
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        // poll(2) takes whole milliseconds.
        let ms = d.as_millis().min(i32::MAX as u128) as i64;
        let timeout = Timespec { tv_sec: ms / 1000, tv_nsec: ms % 1000 * 1_000_000 };
        if !matches!(poll(&mut fds, Some(&timeout)), Ok(n) if n > 0) {
            return false;
        }
        let mut buf = [0u8; 64];
        match rustix::io::read(&stdin, &mut buf) {
            // A closed stdin (0 bytes) would wake poll at once forever: quit then too.
            Ok(0) => true,
            Ok(n) => buf[..n].iter().any(|b| matches!(b, b'q' | b'Q' | 3 | 4)),
            Err(_) => false,
        }
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        print!("\x1b[?25h\x1b[?1049l");
        let _ = std::io::stdout().flush();
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}

/// Look at the recorded data now and then on a thread of its own; the latest findings land in `slot`.
fn findings_thread(cfg: &WatchConfig, slot: Arc<Mutex<Option<FindingsOrError>>>) {
    let (path, read) = (cfg.path.clone(), cfg.read.clone());
    let _ = std::thread::Builder::new().name("findings".into()).spawn(move || {
        loop {
            let t0 = Instant::now();
            let f = findings(&path, &read);
            if let Ok(mut s) = slot.lock() {
                *s = Some(f);
            }
            std::thread::sleep(FINDINGS_EVERY.max(t0.elapsed() * 10));
        }
    });
}

/// What the interactive view keeps between frames.
#[derive(Default)]
struct Seen {
    /// A status file was read: when it goes, the run has ended.
    status: bool,
    /// The data's last tick, read once when there is no status file.
    data: Option<Option<LiveStatus>>,
}

/// The frame to draw now (a waiting note while there is nothing yet) and the time to the next.
fn current(
    cfg: &WatchConfig,
    seen: &mut Seen,
    found: Option<&FindingsOrError>,
    w: usize,
    h: usize,
) -> (Vec<String>, Duration) {
    let path = cfg.path.display().to_string();
    let Some(sh) = shown(cfg, seen.status, &mut seen.data) else {
        let lines = vec![
            format!("gpumon watch {path}"),
            format!("waiting for the recording: no {} yet", status_path(&cfg.path).display()),
            format!("(start it with gpumon record -o {path} ...)"),
            String::new(),
            "q or Ctrl-C quits".into(),
        ];
        return (
            lines.into_iter().map(|l| l.chars().take(w).collect()).collect(),
            Duration::from_millis(500),
        );
    };
    seen.status |= !sh.from_file;
    let now = Utc::now();
    let findings = found.map(|f| f.as_deref().map_err(String::as_str));
    let view =
        View { path: &path, live: sh.live, findings, now, keys: true, from_file: sh.from_file };
    let every =
        Duration::from_secs_f64(if sh.from_file { 1.0 } else { sh.st.interval_s.clamp(0.1, 2.0) });
    (frame(&sh.st, &view, w, h), every)
}

/// Redraw until a quit key or signal.
fn interactive(cfg: &WatchConfig) -> Result<i32> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let term = Term::enter()?;
    let slot = Arc::new(Mutex::new(None));
    findings_thread(cfg, slot.clone());
    let mut seen = Seen::default();
    while !stop.load(Ordering::Relaxed) {
        let (w, h) = size();
        let found = slot.lock().ok().and_then(|s| s.clone());
        let (lines, every) = current(cfg, &mut seen, found.as_ref(), w, h);
        let mut out = String::from("\x1b[H");
        out.push_str(&lines.join("\x1b[K\r\n"));
        out.push_str("\x1b[K\x1b[J");
        let mut o = std::io::stdout().lock();
        o.write_all(out.as_bytes())?;
        o.flush()?;
        drop(o);
        if term.quit_key(every) {
            break;
        }
    }
    drop(term);
    Ok(exit::OK)
}

/// Run the command.
pub fn run(cfg: &WatchConfig) -> Result<i32> {
    // A status file planted by someone else, or a FIFO or device in its place, is said at once.
    if let Err(NotRead::Refused(why)) = read_status(&cfg.path) {
        return Err(UsageError(format!("not reading the status file: {why}")).into());
    }
    if cfg.once { once(cfg) } else { interactive(cfg) }
}
