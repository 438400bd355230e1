//! Where emitted rows go: the file writer, the per-process writer (`--processes`), the events
//! writer (started at the first NVML event, so a run without one leaves no events file) and the
//! metrics endpoint. Publishing never blocks the sampler.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::live::Live;
use gpumon_schema::catalog::{Field, Table};
use gpumon_schema::{
    GpuEvent, Row, RunStats, Selection, Tick, Value, companion_path, routine_event,
};
use gpumon_sink::Exporter;
use gpumon_sink::OutputLock;
use gpumon_sink::Target;
use gpumon_sink::{Writer, WriterConfig, WriterReport};
use gpumon_source::describe_process;
use gpumon_util::{warn, warn_once};

/// Columns of the `--processes` output.
pub(crate) fn procs_selection() -> Selection {
    Selection::new(vec![
        Field::Timestamp,
        Field::Host,
        Field::Index,
        Field::Uuid,
        Field::ProcPid,
        Field::ProcUser,
        Field::ProcCommand,
        Field::ProcGpuMemory,
        Field::ProcJob,
        Field::ProcSm,
        Field::ProcMemUtil,
        Field::ProcEnc,
        Field::ProcDec,
    ])
}

/// Columns of the events file.
pub(crate) fn events_selection() -> Selection {
    Selection::new(vec![
        Field::Timestamp,
        Field::Host,
        Field::Index,
        Field::Uuid,
        Field::EventKind,
        Field::EventCode,
        Field::EventDetail,
    ])
}

/// User name and command line of a process.
type Owner = (Arc<str>, Arc<str>);

pub(crate) struct Outputs {
    pub writer: Option<Writer>,
    pub procs: Option<Writer>,
    pub exporter: Option<Exporter>,
    /// The events writer once the first event came, and the settings to start it with until then.
    events: Option<Writer>,
    events_cfg: Option<WriterConfig>,
    /// The events file, for messages.
    events_file: Option<String>,
    /// The live status file `gpumon watch` reads.
    live: Option<Live>,
    /// Owner and command of PIDs seen on a GPU (None: not visible in this PID namespace).
    names: HashMap<u32, Option<Owner>>,
}

impl Outputs {
    pub(crate) fn new(
        writer: Option<Writer>,
        procs: Option<Writer>,
        events_cfg: Option<WriterConfig>,
        exporter: Option<Exporter>,
        live: Option<Live>,
    ) -> Outputs {
        let events_file = events_cfg.as_ref().map(|c| c.target.to_string());
        Outputs {
            writer,
            procs,
            exporter,
            events: None,
            events_cfg,
            events_file,
            live,
            names: HashMap::new(),
        }
    }

    /// Write NVML events to the events file (one row each, stamped when it arrived), starting its
    /// writer at the first; each kind and code is warned about once per GPU, except the routine
    /// clock and P-state changes (recorded, counted by `summarize`, never warned about).
    pub(crate) fn send_events(&mut self, events: Vec<GpuEvent>, host: &Arc<str>) {
        if let Some(x) = &mut self.exporter {
            x.count_events(&events);
        }
        for e in events.iter().filter(|e| !routine_event(e.kind)) {
            let what = match (e.kind, e.code) {
                ("xid", Some(c)) => format!("Xid {c}"),
                (k, _) => format!("a {k} event"),
            };
            let to = self
                .events_file
                .as_ref()
                .map_or(String::new(), |f| format!("; events are recorded in {f}"));
            warn_once(
                &format!("event-{}-{what}", e.index),
                &format!(
                    "GPU {} ({}) reported {what} (NVML){to}; `gpumon summarize` explains it",
                    e.index, e.uuid
                ),
            );
        }
        if self.events.is_none()
            && let Some(cfg) = self.events_cfg.take()
        {
            match Writer::spawn(cfg) {
                Ok(w) => self.events = Some(w),
                Err(e) => warn(&format!(
                    "cannot write the events file ({e:#}); events are only counted in xid.events"
                )),
            }
        }
        let Some(w) = &self.events else { return };
        for e in events {
            let mut r = Row::default();
            r.set(Field::Host, Value::S(host.clone()));
            r.set(Field::Index, Value::U(u64::from(e.index)));
            r.set(Field::Uuid, Value::S(e.uuid));
            r.set(Field::EventKind, Value::S(e.kind.into()));
            r.set(Field::EventCode, e.code.map_or(Value::Null, Value::U));
            r.set(Field::EventDetail, e.detail.map_or(Value::Null, |d| Value::S(d.into())));
            if w.send(Tick { ts: e.ts, seq: 0, rows: vec![r], procs: Vec::new() }).is_err() {
                warn_once(
                    "events-queue-full",
                    "the events writer is falling behind; events are being dropped",
                );
            }
        }
    }

    /// Publish to the endpoint and queue for the writers; `Err` when the main queue is full.
    pub(crate) fn send(
        &mut self,
        t: Tick,
        stats: &RunStats,
        job: Option<&dyn Fn(u32) -> bool>,
    ) -> Result<(), ()> {
        if let Some(e) = &mut self.exporter {
            e.publish(&t, stats);
        }
        let pt = self.procs.is_some().then(|| self.process_rows(&t, job));
        if let Some(l) = &mut self.live {
            l.publish(&t, stats, pt.as_ref().map_or(&[], |p| &p.rows[..]));
        }
        if let Some(pt) = pt
            && let Some(p) = &self.procs
            && p.send(pt).is_err()
        {
            warn_once(
                "procs-queue-full",
                "the --processes writer is falling behind; rows are being dropped",
            );
        }
        match &self.writer {
            Some(w) => w.send(t).map_err(|_| ()),
            None => Ok(()),
        }
    }

    /// One row per (GPU, process) of the tick.
    fn process_rows(&mut self, t: &Tick, job: Option<&dyn Fn(u32) -> bool>) -> Tick {
        self.names.retain(|pid, _| t.procs.iter().any(|p| p.pid == *pid));
        let mut rows = Vec::with_capacity(t.procs.len());
        for p in &t.procs {
            let Some(gpu) = t.rows.get(p.row) else { continue };
            let mut r = Row::default();
            for f in [Field::Host, Field::Index, Field::Uuid] {
                r.set(f, gpu.get(f).clone());
            }
            // The MIG instance the process runs on (columns of a run that saw MIG).
            for f in gpumon_schema::catalog::MIG_IDENTITY {
                if !gpu.get(f).is_missing() {
                    r.set(f, gpu.get(f).clone());
                }
            }
            r.set(Field::ProcPid, Value::U(u64::from(p.pid)));
            r.set(Field::ProcGpuMemory, p.used_mib.map_or(Value::Null, Value::U));
            r.set(Field::ProcJob, Value::U(u64::from(job.is_some_and(|j| j(p.pid)))));
            let pct = |x: f64| Value::U(x.max(0.0).round() as u64);
            if let Some(u) = p.util {
                for (f, x) in [
                    (Field::ProcSm, u.sm),
                    (Field::ProcMemUtil, u.mem),
                    (Field::ProcEnc, u.enc),
                    (Field::ProcDec, u.dec),
                ] {
                    r.set(f, pct(x));
                }
            }
            let name = self.names.entry(p.pid).or_insert_with(|| {
                describe_process(p.pid).map(|(u, c)| (Arc::from(u.as_str()), Arc::from(c.as_str())))
            });
            match name {
                Some((user, cmd)) => {
                    r.set(Field::ProcUser, Value::S(user.clone()));
                    r.set(Field::ProcCommand, Value::S(cmd.clone()));
                }
                None => {
                    warn_once(
                        "foreign-pids",
                        "NVML reports GPU processes whose PIDs are not visible here (gpumon runs in another PID \
                         namespace, e.g. a container): they are kept as host PIDs without user or command",
                    );
                }
            }
            rows.push(r);
        }
        Tick { ts: t.ts, seq: t.seq, rows, procs: Vec::new() }
    }

    /// Record a fact about the run in the files' metadata (Parquet footer).
    pub(crate) fn add_metadata(&self, key: &str, value: &str) {
        for w in [&self.writer, &self.procs, &self.events].into_iter().flatten() {
            w.add_metadata(key, value);
        }
    }

    /// Record a fact about the run in the main file's metadata only (the companions' footers do not
    /// repeat it).
    pub(crate) fn add_main_metadata(&self, key: &str, value: &str) {
        if let Some(w) = &self.writer {
            w.add_metadata(key, value);
        }
    }

    pub(crate) fn rotate(&self) {
        for w in [&self.writer, &self.procs, &self.events].into_iter().flatten() {
            w.rotate();
        }
    }

    pub(crate) fn fatal(&self) -> bool {
        self.writer.as_ref().is_some_and(|w| w.stats.fatal.load(Ordering::Relaxed))
    }

    /// The file being written and its size, for the status line.
    pub(crate) fn file_status(&self) -> (String, u64) {
        self.writer.as_ref().map_or_else(
            || (String::new(), 0),
            |w| {
                (
                    w.stats.file.lock().map(|f| f.clone()).unwrap_or_default(),
                    w.stats.bytes.load(Ordering::Relaxed),
                )
            },
        )
    }

    /// Stop the endpoint, remove the status file, close the files.
    pub(crate) fn finish(self) -> Result<WriterReport> {
        if let Some(e) = self.exporter {
            e.stop();
        }
        if let Some(l) = self.live {
            l.finish();
        }
        let procs = self.procs.map(Writer::finish).transpose();
        let events = self.events.map(Writer::finish).transpose();
        let main = self.writer.map_or_else(|| Ok(WriterReport::default()), Writer::finish)?;
        let mut report = main;
        for companion in [procs?, events?].into_iter().flatten() {
            report.files.extend(companion.files);
        }
        Ok(report)
    }
}

/// How often a run checks that its lock files still exist (a removed directory takes them along).
const LOCK_CHECK: Duration = Duration::from_secs(1);

/// The locks of this run's output sets, taken again when a removed directory comes back.
pub(crate) struct Locks {
    held: Vec<OutputLock>,
    next_check: Instant,
}

impl Locks {
    /// At most every [`LOCK_CHECK`]: a lock file gone with its directory is made again once the
    /// directory is back, so a second recorder is still refused while this one writes there.
    pub(crate) fn check(&mut self) {
        let now = Instant::now();
        if now < self.next_check {
            return;
        }
        self.next_check = now + LOCK_CHECK;
        for lock in &mut self.held {
            if let Err(who) = lock.renew("record") {
                warn_once(
                    "lock-taken",
                    &format!(
                        "while its directory was gone, this output was taken by {who}: two recorders now write it"
                    ),
                );
            }
        }
    }
}

/// Lock the sets this run writes (the main output and, with --processes, the one beside it) for
/// the whole run: a second recorder or a `recover` of them exits 2 naming this one.
pub(crate) fn lock_outputs(target: Option<&Target>, processes: bool) -> Result<Locks> {
    let mut locks = Locks { held: Vec::new(), next_check: Instant::now() + LOCK_CHECK };
    let Some(Target::File(main)) = target else { return Ok(locks) };
    let mut paths = vec![main.clone()];
    if processes {
        paths.push(companion_path(main, Table::Procs));
    }
    for p in paths {
        locks.held.extend(
            OutputLock::acquire(&p, "record").context("another gpumon writes this output")?,
        );
    }
    Ok(locks)
}

/// The target of a companion output (per-process rows, events) beside the main one.
pub(crate) fn companion_target(main: &Target, table: Table) -> Option<Target> {
    match main {
        Target::File(p) => Some(Target::File(companion_path(p, table))),
        Target::Stdout => None,
    }
}
