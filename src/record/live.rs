//! The live status file beside the output (`.run.parquet.status`, `schema::live`) that `gpumon watch`
//! reads: after each row the record loop offers the row set to a small thread through a one-slot
//! channel (while the thread is busy the offer is skipped before anything is copied), and the thread
//! writes the JSON to a temporary file and renames it into place, at most every [`MIN_GAP`]. The file
//! is removed when the run ends (one a crash left says whose it was: `watch` and `recover` tell).

use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chrono::{SecondsFormat, Utc};
use crossbeam_channel::{Receiver, Sender, bounded};

use crate::record::control::Marks;
use crate::schema::catalog::Field;
use crate::schema::files::hidden;
use crate::schema::live::{LiveStatus, row_values};
use crate::schema::row::{Selection, Tick};
use crate::schema::run::RunStats;
use crate::util::warn::warn_once;

/// Shortest time between two writes of the file (fast intervals are shown at this pace).
const MIN_GAP: Duration = Duration::from_millis(100);

struct Offer {
    tick: Tick,
    stats: RunStats,
}

/// The writer thread of the status file.
pub struct Live {
    tx: Sender<Offer>,
    handle: JoinHandle<()>,
    path: PathBuf,
}

impl Live {
    /// Start writing `path`; `base` holds what does not change during the run.
    pub fn start(path: PathBuf, base: LiveStatus, sel: Selection, marks: Option<Arc<Marks>>) -> Option<Live> {
        let (tx, rx) = bounded(1);
        let p = path.clone();
        let handle = std::thread::Builder::new()
            .name("status".into())
            .spawn(move || write_loop(&rx, &p, base, &sel, marks.as_deref()))
            .ok()?;
        Some(Live { tx, handle, path })
    }

    /// Offer the latest rows; skipped while the thread is still busy with an earlier offer.
    pub fn publish(&self, t: &Tick, stats: &RunStats) {
        if !self.tx.is_full() {
            let _ = self.tx.try_send(Offer { tick: t.clone(), stats: stats.clone() });
        }
    }

    /// Stop the thread and remove the file: the run is over.
    pub fn finish(self) {
        drop(self.tx);
        let _ = self.handle.join();
        let _ = std::fs::remove_file(&self.path);
    }
}

fn write_loop(
    rx: &Receiver<Offer>,
    path: &std::path::Path,
    mut doc: LiveStatus,
    sel: &Selection,
    marks: Option<&Marks>,
) {
    let tmp = hidden(path, ".tmp");
    let mut last_write: Option<Instant> = None;
    // A first document before the first row: `gpumon mark --run` can find the socket at once.
    write(path, &tmp, &mut doc, marks);
    while let Ok(Offer { tick: t, stats }) = rx.recv() {
        doc.ts = Some(t.ts.to_rfc3339_opts(SecondsFormat::Millis, true));
        doc.phase = t.rows.first().and_then(|r| r.get(Field::Phase).as_str()).map(str::to_string);
        doc.rows = t.rows.iter().map(|r| row_values(r, sel)).collect();
        let RunStats { ticks, late, missed, dropped } = stats;
        (doc.ticks, doc.late, doc.missed, doc.dropped) = (ticks, late, missed, dropped);
        write(path, &tmp, &mut doc, marks);
        if let Some(prev) = last_write.replace(Instant::now()) {
            std::thread::sleep(MIN_GAP.saturating_sub(prev.elapsed()));
        }
    }
}

/// Write `doc` (its marks and time brought up to date) to `tmp` and rename it to `path`.
fn write(path: &std::path::Path, tmp: &std::path::Path, doc: &mut LiveStatus, marks: Option<&Marks>) {
    if let Some(m) = marks {
        doc.marks = m.count();
        doc.phase_since = m.current().map(|(_, at)| at.to_rfc3339_opts(SecondsFormat::Millis, true));
    }
    doc.updated = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
    let written = serde_json::to_vec(&doc)
        .map_err(std::io::Error::other)
        .and_then(|bytes| std::fs::write(tmp, bytes))
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
        let live = Live::start(path.clone(), base, sel, Some(marks)).unwrap();
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
        live.finish();
        assert!(!path.exists() && !hidden(&path, ".tmp").exists());
    }
}
