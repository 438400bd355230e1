//! `gpumon watch PATH`: a live view of a recording from another shell or SSH session, read from the
//! status file its recorder rewrites with the latest row (at most every 2 s) (`.PATH.status`, no
//! second NVML poller). It redraws in place in the terminal's alternate screen (`util::term`) every
//! interval and quits on q or Ctrl-C; `--once` prints one frame. A recording nobody writes any more
//! (no status file: the run ended; or one whose recorder is gone) is said to be so, and its last
//! tick is shown. The findings so far come from summarising what the recording has written (its
//! journal or CSV; `summary::watch`), on a thread of their own, at most every [`FINDINGS_EVERY`] or
//! ten times as long as the last look took.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::Utc;

use crate::cli::WatchArgs;
use gpumon_analysis::Finding;
use gpumon_present::{Liveness, WatchView, watch_frame, watch_waiting};
use gpumon_read::ReadOptions;
use gpumon_schema::{LiveStatus, NotRead, read_status, status_path};
use gpumon_source::hostname;
use gpumon_summary::{findings_so_far, last_tick};
use gpumon_util::{Screen, term_size};
use gpumon_util::{UsageError, exit};

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

/// What a frame shows: the status document (or the data's last tick), whether it is recorded, and
/// whether it was read from the data.
struct Shown {
    st: LiveStatus,
    live: Liveness,
    from_file: bool,
}

/// The live status, else the last tick of the data (`ended`: a status file was seen and is gone).
fn shown(cfg: &WatchConfig, ended: bool, data: &mut Option<Option<LiveStatus>>) -> Option<Shown> {
    if let Some(st) = LiveStatus::load(&cfg.path) {
        *data = None;
        let live = Liveness::of(&st, &hostname(), Utc::now());
        return Some(Shown { st, live, from_file: false });
    }
    let st = data.get_or_insert_with(|| last_tick(&cfg.path, &cfg.read)).clone()?;
    let why = if ended { "the run ended" } else { "no recorder is writing it" };
    Some(Shown { st, live: Liveness::Gone(why.into()), from_file: true })
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
    let f = findings_so_far(&cfg.path, &cfg.read);
    let width =
        if std::io::IsTerminal::is_terminal(&std::io::stdout()) { term_size().0 } else { 100 };
    let findings = Some(f.as_deref().map_err(String::as_str));
    let view = WatchView {
        path: &path,
        live: sh.live,
        findings,
        now,
        keys: false,
        from_file: sh.from_file,
    };
    let mut out = std::io::stdout().lock();
    for l in watch_frame(&sh.st, &view, width, usize::MAX) {
        writeln!(out, "{l}")?;
    }
    out.flush()?;
    Ok(exit::OK)
}

/// Look at the recorded data now and then on a thread of its own; the latest findings land in `slot`.
fn findings_thread(cfg: &WatchConfig, slot: Arc<Mutex<Option<FindingsOrError>>>) {
    let (path, read) = (cfg.path.clone(), cfg.read.clone());
    let _ = std::thread::Builder::new().name("findings".into()).spawn(move || {
        loop {
            let t0 = Instant::now();
            let f = findings_so_far(&path, &read);
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
        let status = status_path(&cfg.path).display().to_string();
        return (watch_waiting(&path, &status, w), Duration::from_millis(500));
    };
    seen.status |= !sh.from_file;
    let now = Utc::now();
    let findings = found.map(|f| f.as_deref().map_err(String::as_str));
    let view = WatchView {
        path: &path,
        live: sh.live,
        findings,
        now,
        keys: true,
        from_file: sh.from_file,
    };
    let every =
        Duration::from_secs_f64(if sh.from_file { 1.0 } else { sh.st.interval_s.clamp(0.1, 2.0) });
    (watch_frame(&sh.st, &view, w, h), every)
}

/// Redraw until a quit key or signal.
fn interactive(cfg: &WatchConfig) -> Result<i32> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let Some(screen) = Screen::enter()? else {
        return Err(UsageError(
            "watch needs a terminal on stdin for its keys; use --once for one frame".into(),
        )
        .into());
    };
    let slot = Arc::new(Mutex::new(None));
    findings_thread(cfg, slot.clone());
    let mut seen = Seen::default();
    screen.show(&stop, |w, h| {
        let found = slot.lock().ok().and_then(|s| s.clone());
        current(cfg, &mut seen, found.as_ref(), w, h)
    })?;
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
