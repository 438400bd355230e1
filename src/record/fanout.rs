//! Where emitted rows go: the file writer, the per-process writer (`--processes`) and the
//! metrics endpoint. Publishing never blocks the sampler.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::Result;

use crate::record::live::Live;
use crate::schema::catalog::Field;
use crate::schema::row::{Row, Selection, Tick, Value};
use crate::schema::run::RunStats;
use crate::sink::Target;
use crate::sink::prom::Exporter;
use crate::sink::writer::{Writer, WriterReport};
use crate::source::job::describe;
use crate::util::warn::warn_once;

/// Columns of the `--processes` output.
pub fn procs_selection() -> Selection {
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
    ])
}

/// `run.parquet` -> `run.procs.parquet`: where the per-process rows go.
pub fn procs_path(main: &std::path::Path) -> PathBuf {
    let name = main.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let procs = match name.rfind('.') {
        Some(i) if i > 0 => format!("{}.procs{}", &name[..i], &name[i..]),
        _ => format!("{name}.procs"),
    };
    main.with_file_name(procs)
}

/// User name and command line of a process.
type Owner = (Arc<str>, Arc<str>);

pub struct Outputs {
    pub writer: Option<Writer>,
    pub procs: Option<Writer>,
    pub exporter: Option<Exporter>,
    /// The live status file `gpumon watch` reads.
    pub live: Option<Live>,
    /// Owner and command of PIDs seen on a GPU (None: not visible in this PID namespace).
    names: HashMap<u32, Option<Owner>>,
}

impl Outputs {
    pub fn new(
        writer: Option<Writer>,
        procs: Option<Writer>,
        exporter: Option<Exporter>,
        live: Option<Live>,
    ) -> Outputs {
        Outputs { writer, procs, exporter, live, names: HashMap::new() }
    }

    /// Publish to the endpoint and queue for the writers; `Err` when the main queue is full.
    pub fn send(&mut self, t: Tick, stats: &RunStats, job: Option<&dyn Fn(u32) -> bool>) -> Result<(), ()> {
        if let Some(e) = &self.exporter {
            e.publish(&t, stats);
        }
        if let Some(l) = &self.live {
            l.publish(&t, stats);
        }
        if self.procs.is_some() {
            let pt = self.process_rows(&t, job);
            if let Some(p) = &self.procs
                && p.send(pt).is_err()
            {
                warn_once("procs-queue-full", "the --processes writer is falling behind; rows are being dropped");
            }
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
            r.set(Field::ProcPid, Value::U(u64::from(p.pid)));
            r.set(Field::ProcGpuMemory, p.used_mib.map_or(Value::Null, Value::U));
            r.set(Field::ProcJob, Value::U(u64::from(job.is_some_and(|j| j(p.pid)))));
            let name = self
                .names
                .entry(p.pid)
                .or_insert_with(|| describe(p.pid).map(|(u, c)| (Arc::from(u.as_str()), Arc::from(c.as_str()))));
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
    pub fn add_metadata(&self, key: &str, value: &str) {
        for w in [&self.writer, &self.procs].into_iter().flatten() {
            w.add_metadata(key, value);
        }
    }

    pub fn rotate(&self) {
        for w in [&self.writer, &self.procs].into_iter().flatten() {
            w.rotate();
        }
    }

    pub fn fatal(&self) -> bool {
        self.writer.as_ref().is_some_and(|w| w.stats.fatal.load(Ordering::Relaxed))
    }

    /// The file being written and its size, for the status line.
    pub fn file_status(&self) -> (String, u64) {
        self.writer.as_ref().map_or_else(
            || (String::new(), 0),
            |w| (w.stats.file.lock().map(|f| f.clone()).unwrap_or_default(), w.stats.bytes.load(Ordering::Relaxed)),
        )
    }

    /// Stop the endpoint, remove the status file, close the files.
    pub fn finish(self) -> Result<WriterReport> {
        if let Some(e) = self.exporter {
            e.stop();
        }
        if let Some(l) = self.live {
            l.finish();
        }
        let procs = self.procs.map(Writer::finish).transpose();
        let main = self.writer.map_or_else(|| Ok(WriterReport::default()), Writer::finish)?;
        let mut report = main;
        if let Some(p) = procs? {
            report.files.extend(p.files);
        }
        Ok(report)
    }
}

/// The target of the per-process output, beside the main one.
pub fn procs_target(main: &Target) -> Option<Target> {
    match main {
        Target::File(p) => Some(Target::File(procs_path(p))),
        Target::Stdout => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procs_file_sits_beside_the_main_one() {
        assert_eq!(procs_path(std::path::Path::new("/x/run.parquet")), PathBuf::from("/x/run.procs.parquet"));
        assert_eq!(procs_path(std::path::Path::new("run.csv")), PathBuf::from("run.procs.csv"));
    }
}
