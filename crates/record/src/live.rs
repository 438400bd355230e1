//! The live status file (`schema::live`) that `gpumon watch` reads: at most every [`MIN_GAP`] the
//! record loop, right after handing a tick to the writers, writes the latest rows as JSON to a
//! temporary file and renames it into place. The file lives in the run's private directory in
//! memory (`rundir`, a tmpfs: no disk I/O, nothing that can block the loop); beside the output a
//! link to it (`.run.parquet.status`) is where readers look. Both go when the run ends (a crash
//! leaves them: `watch` says whose they were, `recover` removes them). Written on the loop's own
//! thread: a thread of its own cost a spawn at start-up and a wake-up per write (bench/README.md).

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{SecondsFormat, Utc};

use crate::control::Marks;
use crate::rundir::RunDir;
use gpumon_schema::catalog::Field;
use gpumon_schema::{LiveStatus, Row, RunStats, Selection, Tick, hidden};
use gpumon_util::UsageError;
use gpumon_util::fsafe;
use gpumon_util::show;
use gpumon_util::warn_once;

/// Shortest time between two writes of the file (faster intervals are shown at this pace; `watch(1)`'s
/// default). Each write cost about 0.2 ms of CPU on the 2-vCPU VM when a thread of its own wrote it
/// (the wake-up, the file, the rename): at 250 ms it more than doubled a host-only tick's CPU.
const MIN_GAP: Duration = Duration::from_secs(2);

/// The status file of a run, written by the record loop.
pub(crate) struct Live {
    doc: LiveStatus,
    sel: Selection,
    marks: Option<Arc<Marks>>,
    /// Where readers look (beside the output), the file itself (in the run's directory; the same
    /// path when there is none) and its temporary sibling.
    link: PathBuf,
    file: PathBuf,
    tmp: PathBuf,
    _dir: Option<Arc<RunDir>>,
    /// The JSON, kept between writes.
    buf: Vec<u8>,
    /// When the next write is due.
    next: Instant,
    /// The work counters' rates between writes.
    meter: crate::progress::Meter,
}

impl Live {
    /// Write the first status file (before any row: `gpumon mark --run` can find the socket at
    /// once) in `dir` (beside the output at `link` without one) and link it from `link`; `base`
    /// holds what does not change during the run.
    pub(crate) fn start(
        link: PathBuf,
        dir: Option<Arc<RunDir>>,
        base: LiveStatus,
        sel: Selection,
        marks: Option<Arc<Marks>>,
    ) -> Result<Live, UsageError> {
        let file = dir.as_ref().map_or_else(|| link.clone(), |d| d.join("status"));
        let tmp = hidden(&file, ".tmp");
        let mut live = Live {
            doc: base,
            sel,
            marks,
            link,
            file,
            tmp,
            _dir: dir,
            buf: Vec::with_capacity(16 * 1024),
            next: Instant::now(),
            meter: Default::default(),
        };
        live.write(&[]);
        link_to(&live.link, &live.file)?;
        Ok(live)
    }

    /// Write the latest rows when a write is due.
    pub(crate) fn publish(&mut self, t: &Tick, stats: &RunStats, procs: &[Row]) {
        let now = Instant::now();
        if now < self.next {
            return;
        }
        self.next = now + MIN_GAP;
        self.doc.ts = Some(t.ts.to_rfc3339_opts(SecondsFormat::Millis, true));
        self.doc.phase =
            t.rows.first().and_then(|r| r.get(Field::Phase).as_str()).map(str::to_string);
        (self.doc.ticks, self.doc.late, self.doc.missed, self.doc.dropped) =
            (stats.ticks, stats.late, stats.missed, stats.dropped);
        self.doc.procs = procs.iter().map(gpumon_schema::LiveProc::of).collect();
        self.write(&t.rows);
    }

    /// Remove the file and its link: the run is over.
    pub(crate) fn finish(self) {
        if std::fs::read_link(&self.link).is_ok_and(|t| t == self.file) {
            let _ = std::fs::remove_file(&self.link);
        }
        let _ = std::fs::remove_file(&self.file);
    }

    /// Write the document with `rows` (its marks and time brought up to date) to the temporary file
    /// and rename it into place.
    fn write(&mut self, rows: &[Row]) {
        if let Some(m) = &self.marks {
            (self.doc.marks, self.doc.marks_dropped) = (m.count(), m.dropped());
            self.doc.phase_since =
                m.current().map(|(_, at)| at.to_rfc3339_opts(SecondsFormat::Millis, true));
            self.doc.progress = self.meter.read(&m.progress);
        }
        self.doc.updated = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
        let written = self
            .doc
            .to_json(rows, &self.sel, &mut self.buf)
            .map_err(std::io::Error::other)
            .and_then(|()| {
                // Made new each time: never written through a link someone put at its name.
                let _ = std::fs::remove_file(&self.tmp);
                fsafe::create_new(&self.tmp, false)?.write_all(&self.buf)
            })
            .and_then(|()| std::fs::rename(&self.tmp, &self.file));
        if let Err(e) = written {
            warn_once(
                "status-file",
                &format!(
                    "cannot write the status file {} ({e}); `gpumon watch` will not see this run",
                    self.file.display()
                ),
            );
        }
    }
}

/// Point `link` at `file` (a link or file a crashed run of this user left there is replaced). A file
/// of another user's there that cannot be replaced (a sticky shared directory) is an error: readers
/// would trust it, and `gpumon mark --run` would send labels where it says.
fn link_to(link: &std::path::Path, file: &std::path::Path) -> Result<(), UsageError> {
    if link == file {
        return Ok(());
    }
    let theirs = |owner: Option<u32>, e: std::io::Error| {
        let who = owner.map_or_else(String::new, |u| format!(" (uid {u})"));
        UsageError(format!(
            "cannot place the status link {}: another user's file is there{who} ({e}); it would be taken for this \
             run's: remove it or choose another output",
            show(link)
        ))
    };
    let owner = std::fs::symlink_metadata(link).ok().map(|m| m.uid());
    if let Err(e) = std::fs::remove_file(link)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        return Err(theirs(owner.filter(|&u| u != fsafe::euid()), e));
    }
    match std::os::unix::fs::symlink(file, link) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(theirs(std::fs::symlink_metadata(link).ok().map(|m| m.uid()), e))
        }
        Err(e) => {
            warn_once(
                "status-file",
                &format!(
                    "cannot link {} to the status file ({e}); `gpumon watch` will not see this run",
                    show(link)
                ),
            );
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumon_schema::{Row, Value};

    #[test]
    fn the_file_holds_the_latest_rows_and_goes_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".run.parquet.status");
        let sel =
            Selection::new(vec![Field::Timestamp, Field::Index, Field::UtilGpu, Field::Phase]);
        let marks = Arc::new(Marks::default());
        marks.push(Some("bs=64".into())).unwrap();
        let base = LiveStatus { pid: 7, ..Default::default() };
        let mut live =
            Live::start(path.clone(), Some(RunDir::create().unwrap()), base, sel, Some(marks))
                .unwrap();
        let mut r = Row::default();
        r.set(Field::Index, Value::U(0));
        r.set(Field::UtilGpu, Value::U(55));
        r.set(Field::Phase, Value::S("bs=64".into()));
        let t = Tick { ts: Utc::now(), seq: 1, rows: vec![r], procs: Vec::new() };
        live.publish(&t, &RunStats { ticks: 1, ..Default::default() }, &[]);
        // The first document (before any row) comes first; wait for the row's.
        let t0 = Instant::now();
        let read = || {
            std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<LiveStatus>(&b).ok())
        };
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
        assert!(
            std::fs::symlink_metadata(&path).is_err()
                && !file.exists()
                && !file.parent().unwrap().exists()
        );
    }
}
