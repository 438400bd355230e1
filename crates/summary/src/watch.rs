//! `gpumon watch`'s live view of a recording ([`view`]), read from the status file its recorder
//! rewrites with the latest row (at most every 2 s) (`.PATH.status`, no second NVML poller). It
//! redraws in place in the terminal's alternate screen (`util::term`) every interval and quits on q
//! or Ctrl-C; `--once` prints one frame. A recording nobody writes any more (no status file: the
//! run ended; or one whose recorder is gone) is said to be so, and the last tick of what it has
//! written is shown ([`last_tick`]). The findings so far come from summarising what the recording
//! has written (its journal or CSV; [`findings`]), on a thread of their own, at most every
//! [`FINDINGS_EVERY`] or ten times as long as the last look took.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::Utc;

use crate::{SummarizeConfig, summarize};
use gpumon_analysis::{Finding, LastTick};
use gpumon_present::{Liveness, WatchView as View, watch_frame as frame, watch_waiting as waiting};
use gpumon_read::{ReadOptions, discover, in_time_order, scan};
use gpumon_schema::catalog::{Field, Table};
use gpumon_schema::{LIVE_SCHEMA, LiveStatus, NotRead, read_status, rfc3339, status_path};
use gpumon_util::{ReadMeter, Screen, UsageError, term_size as size};

/// The last tick of what is on disk, for a recording nobody writes (no status file).
pub fn last_tick(path: &Path, read: &ReadOptions) -> Option<LiveStatus> {
    let found = in_time_order(discover(&[path.to_path_buf()]).ok()?);
    let want: Vec<Field> = Field::all().filter(|f| Table::of([*f]) == Table::Metrics).collect();
    let meter = ReadMeter::new(0, false);
    let visit = |st: &mut LastTick, b: &arrow_array::RecordBatch, host: &str| -> Result<()> {
        st.visit(b, host);
        Ok(())
    };
    let mut last = LastTick::default();
    for input in &found.inputs {
        let (parts, _) = scan(input, read, &want, &meter, &LastTick::default, &visit).ok()?;
        for p in parts {
            last.merge(p);
        }
    }
    let first = last.rows.first()?;
    Some(LiveStatus {
        schema: LIVE_SCHEMA.to_string(),
        host: first.get("host").and_then(|h| h.as_str()).unwrap_or_default().to_string(),
        output: path.display().to_string(),
        phase: first.get("phase").and_then(|p| p.as_str()).map(str::to_string),
        ts: Some(rfc3339(last.ts)),
        rows: last.rows,
        ..LiveStatus::default()
    })
}

/// The findings of everything the recording has written so far, or why there is nothing to look at.
pub fn findings(path: &Path, read: &ReadOptions) -> Result<Vec<Finding>, String> {
    let cfg = SummarizeConfig {
        inputs: vec![path.to_path_buf()],
        read: read.clone(),
        ..SummarizeConfig::default()
    };
    match summarize(&cfg) {
        Ok(o) => Ok(o.summary.hosts.into_iter().flat_map(|h| h.findings).collect()),
        Err(_) => Err("no rows written to the file yet; they come at each --flush".into()),
    }
}

/// The findings so far, or why there are none.
type FindingsOrError = Result<Vec<Finding>, String>;

/// Shortest time between two looks at the recorded data for the findings so far.
const FINDINGS_EVERY: Duration = Duration::from_secs(10);

/// A validated `watch` command line.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// The recording's output (`-o` of its `gpumon record`).
    pub path: PathBuf,
    /// Print one frame and return.
    pub once: bool,
    /// How to read what it has written.
    pub read: ReadOptions,
    /// This machine's host name: a recorder of another host cannot be asked whether it still runs.
    pub host: String,
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
        let live = Liveness::of(&st, &cfg.host, Utc::now());
        return Some(Shown { st, live, from_file: false });
    }
    let st = data.get_or_insert_with(|| last_tick(&cfg.path, &cfg.read)).clone()?;
    let why = if ended { "the run ended" } else { "no recorder is writing it" };
    Some(Shown { st, live: Liveness::Gone(why.into()), from_file: true })
}

/// One frame for `--once`; a usage error when there is nothing to show.
fn once(cfg: &WatchConfig) -> Result<()> {
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
    Ok(())
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
        let status = status_path(&cfg.path).display().to_string();
        return (waiting(&path, &status, w), Duration::from_millis(500));
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

/// Redraw until a quit key or `stop` is set.
fn interactive(cfg: &WatchConfig, stop: &Arc<AtomicBool>) -> Result<()> {
    let Some(screen) = Screen::enter()? else {
        return Err(UsageError(
            "watch needs a terminal on stdin for its keys; use --once for one frame".into(),
        )
        .into());
    };
    let slot = Arc::new(Mutex::new(None));
    findings_thread(cfg, slot.clone());
    let mut seen = Seen::default();
    screen.show(stop, |w, h| {
        let found = slot.lock().ok().and_then(|s| s.clone());
        current(cfg, &mut seen, found.as_ref(), w, h)
    })?;
    Ok(())
}

/// The live view of `cfg.path`: one frame with `once`, else redrawn in place until a quit key or
/// `stop` (set by the caller's signal handlers). A status file planted by someone else, or a FIFO
/// or device in its place, is a usage error at once.
pub fn view(cfg: &WatchConfig, stop: &Arc<AtomicBool>) -> Result<()> {
    if let Err(NotRead::Refused(why)) = read_status(&cfg.path) {
        return Err(UsageError(format!("not reading the status file: {why}")).into());
    }
    if cfg.once { once(cfg) } else { interactive(cfg, stop) }
}
