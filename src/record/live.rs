//! The live status file (`schema::live`) that `gpumon watch` reads: at most every [`MIN_GAP`] the
//! record loop offers the latest rows to a small thread through a one-slot channel (between offers
//! nothing is copied and nobody is woken), and the thread writes the JSON to a temporary file and
//! renames it into place. The file lives in the run's private directory in
//! memory (`rundir`); beside the output a link to it (`.run.parquet.status`) is where readers look.
//! Both go when the run ends (a crash leaves them: `watch` says whose they were, `recover` removes them).

use std::cell::Cell;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chrono::{SecondsFormat, Utc};
use crossbeam_channel::{Receiver, Sender, bounded};

use crate::record::control::Marks;
use crate::record::rundir::RunDir;
use crate::schema::catalog::Field;
use crate::schema::files::hidden;
use crate::schema::live::LiveStatus;
use crate::schema::row::{Row, Selection, Tick};
use crate::schema::run::RunStats;
use crate::util::warn::warn_once;

/// Shortest time between two writes of the file (faster intervals are shown at this pace; `watch(1)`'s
/// default). Each write cost about 0.2 ms of CPU on the 2-vCPU VM (the wake-up, the file, the rename):
/// at 250 ms it more than doubled a host-only tick's CPU (bench/README.md, issue 13).
const MIN_GAP: Duration = Duration::from_secs(2);

struct Offer {
    tick: Tick,
    stats: RunStats,
}

/// The writer thread of the status file.
pub struct Live {
    tx: Sender<Offer>,
    handle: JoinHandle<()>,
    /// Where readers look (beside the output), and the file itself (in the run's directory; the
    /// same path when there is none).
    link: PathBuf,
    file: PathBuf,
    _dir: Option<Arc<RunDir>>,
    /// When the next offer is due.
    next: Cell<Instant>,
}

impl Live {
    /// Start writing the status file in `dir` (beside the output at `link` without one), linked
    /// from `link`; `base` holds what does not change during the run.
    pub fn start(
        link: PathBuf,
        dir: Option<Arc<RunDir>>,
        base: LiveStatus,
        sel: Selection,
        marks: Option<Arc<Marks>>,
    ) -> Option<Live> {
        let file = dir.as_ref().map_or_else(|| link.clone(), |d| d.join("status"));
        let (tx, rx) = bounded(1);
        let (f, l) = (file.clone(), link.clone());
        let handle = std::thread::Builder::new()
            .name("status".into())
            .spawn(move || write_loop(&rx, (&f, &l), base, &sel, marks.as_deref()))
            .ok()?;
        Some(Live { tx, handle, link, file, _dir: dir, next: Cell::new(Instant::now()) })
    }

    /// Offer the latest rows when a write is due; skipped while the thread is still busy.
    pub fn publish(&self, t: &Tick, stats: &RunStats) {
        let now = Instant::now();
        if now < self.next.get() || self.tx.is_full() {
            return;
        }
        self.next.set(now + MIN_GAP);
        let _ = self.tx.try_send(Offer { tick: t.clone(), stats: stats.clone() });
    }

    /// Stop the thread and remove the file and its link: the run is over.
    pub fn finish(self) {
        drop(self.tx);
        let _ = self.handle.join();
        if std::fs::read_link(&self.link).is_ok_and(|t| t == self.file) {
            let _ = std::fs::remove_file(&self.link);
        }
        let _ = std::fs::remove_file(&self.file);
    }
}

/// Point `link` at `file` (a link or file a crashed run left there is replaced).
fn link_to(link: &std::path::Path, file: &std::path::Path) {
    if link == file {
        return;
    }
    let _ = std::fs::remove_file(link);
    if let Err(e) = std::os::unix::fs::symlink(file, link) {
        warn_once(
            "status-file",
            &format!("cannot link {} to the status file ({e}); `gpumon watch` will not see this run", link.display()),
        );
    }
}

fn write_loop(
    rx: &Receiver<Offer>,
    (path, link): (&std::path::Path, &std::path::Path),
    mut doc: LiveStatus,
    sel: &Selection,
    marks: Option<&Marks>,
) {
    // Best effort: on a busy machine the sampling thread goes first (nice 10 for this thread only).
    // SAFETY: gettid(2) and setpriority(2) on this thread's own id have no memory effects.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::syscall(libc::SYS_gettid) as libc::id_t, 10) };
    let tmp = hidden(path, ".tmp");
    let (mut last, mut buf): (Vec<Row>, Vec<u8>) = (Vec::new(), Vec::with_capacity(16 * 1024));
    // A first document before the first row: `gpumon mark --run` can find the socket at once.
    write(path, &tmp, &mut doc, (&last, sel), marks, &mut buf);
    link_to(link, path);
    while let Ok(Offer { tick: t, stats }) = rx.recv() {
        doc.ts = Some(t.ts.to_rfc3339_opts(SecondsFormat::Millis, true));
        doc.phase = t.rows.first().and_then(|r| r.get(Field::Phase).as_str()).map(str::to_string);
        let RunStats { ticks, late, missed, dropped } = stats;
        (doc.ticks, doc.late, doc.missed, doc.dropped) = (ticks, late, missed, dropped);
        last = t.rows;
        write(path, &tmp, &mut doc, (&last, sel), marks, &mut buf);
    }
}

/// Write `doc` with `rows` (its marks and time brought up to date) to `tmp` and rename it to `path`.
fn write(
    path: &std::path::Path,
    tmp: &std::path::Path,
    doc: &mut LiveStatus,
    (rows, sel): (&[Row], &Selection),
    marks: Option<&Marks>,
    buf: &mut Vec<u8>,
) {
    if let Some(m) = marks {
        doc.marks = m.count();
        doc.phase_since = m.current().map(|(_, at)| at.to_rfc3339_opts(SecondsFormat::Millis, true));
    }
    doc.updated = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
    let written = doc
        .to_json(rows, sel, buf)
        .map_err(std::io::Error::other)
        .and_then(|()| std::fs::write(tmp, &buf[..]))
        .and_then(|()| std::fs::rename(tmp, path));
    if let Err(e) = written {
        warn_once(
            "status-file",
            &format!("cannot write the status file {} ({e}); `gpumon watch` will not see this run", path.display()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::row::{Row, Value};

    #[test]
    fn the_file_holds_the_latest_rows_and_goes_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".run.parquet.status");
        let sel = Selection::new(vec![Field::Timestamp, Field::Index, Field::UtilGpu, Field::Phase]);
        let marks = Arc::new(Marks::default());
        marks.push(Some("bs=64".into()));
        let base = LiveStatus { pid: 7, ..Default::default() };
        let live = Live::start(path.clone(), Some(RunDir::create().unwrap()), base, sel, Some(marks)).unwrap();
        let mut r = Row::default();
        r.set(Field::Index, Value::U(0));
        r.set(Field::UtilGpu, Value::U(55));
        r.set(Field::Phase, Value::S("bs=64".into()));
        let t = Tick { ts: Utc::now(), seq: 1, rows: vec![r], procs: Vec::new() };
        live.publish(&t, &RunStats { ticks: 1, ..Default::default() });
        // The first document (before any row) comes first; wait for the row's.
        let t0 = Instant::now();
        let read = || std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<LiveStatus>(&b).ok());
        while read().is_none_or(|d| d.ticks == 0) && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let doc = read().unwrap();
        assert_eq!((doc.pid, doc.ticks, doc.marks), (7, 1, 1));
        assert_eq!(doc.phase.as_deref(), Some("bs=64"));
        assert!(doc.phase_since.is_some());
        assert_eq!(doc.num(0, "utilization.gpu"), Some(55.0));
        let file = std::fs::read_link(&path).unwrap();
        assert!(!file.starts_with(dir.path()), "the file itself is in the run's directory");
        live.finish();
        assert!(std::fs::symlink_metadata(&path).is_err() && !file.exists() && !file.parent().unwrap().exists());
    }
}
