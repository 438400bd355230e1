//! The live status file of a running recording (`.run.parquet.status` beside the output): the
//! recorder rewrites it whole after each row (a small JSON document, written to a temporary file and
//! renamed), and `gpumon watch` reads it. It holds the latest row of every GPU by field name, so a
//! field added to the catalogue shows up here with no edit.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::row::{Row, Selection, Value};
use gpumon_util::{fsafe, show};

/// RFC 3339 UTC with milliseconds, as gpumon's CSV and this document write timestamps (`-` for a
/// time out of range).
pub fn rfc3339(us: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_micros(us)
        .map_or_else(|| "-".into(), |t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// Version tag of the document.
pub const SCHEMA: &str = "gpumon.status/1";

/// What the recorder says about itself and its latest row (a key missing from the file is its
/// default, so documents of other versions still read).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LiveStatus {
    /// The document's schema version.
    pub schema: String,
    /// The recorder's process id and host: `watch` tells a live recording from a dead one by them.
    pub pid: u32,
    /// The recorder's host.
    pub host: String,
    /// The output as given to `record`.
    pub output: String,
    /// The control socket marks go to (`gpumon mark`), when the recording has one.
    pub control: Option<String>,
    /// The recording interval, seconds.
    pub interval_s: f64,
    /// RFC 3339 UTC: when the recording started, and when this document was written.
    pub started: String,
    /// When this document was written.
    pub updated: String,
    /// The wrapped command or the followed process.
    pub job: Option<String>,
    /// The phase current at the latest row, and when its mark arrived.
    pub phase: Option<String>,
    /// When the current phase's mark arrived.
    pub phase_since: Option<String>,
    /// Marks received so far (an `end` counts too), and those refused by the limits.
    pub marks: u64,
    /// Marks refused by the limits.
    pub marks_dropped: u64,
    /// The run's counters so far.
    pub ticks: u64,
    /// Ticks taken late.
    pub late: u64,
    /// Ticks missed.
    pub missed: u64,
    /// Ticks dropped.
    pub dropped: u64,
    /// Timestamp (RFC 3339 UTC) of the latest row.
    pub ts: Option<String>,
    /// The job's work counters (`record --progress`), in declaration order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub progress: Vec<LiveCounter>,
    /// The GPU processes of the latest row (`record --processes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub procs: Vec<LiveProc>,
    /// The latest row of each GPU (one host-only row without GPUs): recorded field name -> value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<BTreeMap<String, serde_json::Value>>,
}

/// One GPU process of the latest row: where, whose, how much.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LiveProc {
    /// The GPU's index.
    pub gpu: Option<u64>,
    /// The process id.
    pub pid: u64,
    /// The process's user, when known.
    pub user: Option<String>,
    /// GPU memory the process uses, MiB.
    pub memory_mib: Option<u64>,
    /// Its SM utilization, percent, when NVML reports it.
    pub sm_pct: Option<u64>,
    /// In the recorded job's process tree.
    pub job: bool,
}

impl LiveProc {
    /// From a per-process row (`Table::Procs`).
    pub fn of(r: &Row) -> LiveProc {
        use crate::catalog::Field;
        let u = |f: Field| match r.get(f) {
            Value::U(x) => Some(*x),
            _ => None,
        };
        LiveProc {
            gpu: u(Field::Index),
            pid: u(Field::ProcPid).unwrap_or(0),
            user: r.get(Field::ProcUser).as_str().map(str::to_string),
            memory_mib: u(Field::ProcGpuMemory),
            sm_pct: u(Field::ProcSm),
            job: u(Field::ProcJob) == Some(1),
        }
    }
}

/// Most bytes a status document may have (one of many GPUs is a few tens of KiB).
pub(crate) const MAX_BYTES: u64 = 1 << 20;

/// Why a status file was not read.
#[derive(Debug, Clone, PartialEq)]
pub enum NotRead {
    /// Nothing there (no recording, or it ended and its link points at nothing).
    Missing,
    /// Something is there that this user must not trust: what it is.
    Refused(String),
}

/// The status document of the recording at `base`, read only when it can be the caller's own
/// recorder's: the link beside the output is the caller's, and points into a directory of the
/// caller's that nobody else may write to (the run's, mode 0700), at a regular file of the caller's
/// (a recording without such a directory: the file beside the output is the caller's regular
/// file). Read without following a link and without blocking (a FIFO or a device is refused, never
/// waited on or read endlessly), at most [`MAX_BYTES`].
pub fn read_status(base: &Path) -> Result<Vec<u8>, NotRead> {
    let link = crate::files::status_path(base);
    let refused = |why: String| NotRead::Refused(format!("{}: {why}", show(&link)));
    let m = match std::fs::symlink_metadata(&link) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(NotRead::Missing),
        Err(e) => return Err(refused(e.to_string())),
    };
    let file = if m.file_type().is_symlink() {
        if m.uid() != fsafe::euid() {
            return Err(refused(format!("the link belongs to another user (uid {})", m.uid())));
        }
        let to = std::fs::read_link(&link).map_err(|e| refused(e.to_string()))?;
        let to = link.parent().map_or_else(|| to.clone(), |d| d.join(&to));
        let dir = to.parent().unwrap_or(Path::new("/"));
        if std::fs::symlink_metadata(dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
            // The run's directory went with it (a reboot cleared /dev/shm): nothing to read.
            return Err(NotRead::Missing);
        }
        if !fsafe::private_dir(dir) {
            return Err(refused(format!(
                "it points at {}, not into a private directory of yours",
                show(&to)
            )));
        }
        to
    } else {
        link.clone()
    };
    fsafe::read_own(&file, MAX_BYTES).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => NotRead::Missing,
        _ => refused(e.to_string()),
    })
}

/// One work counter in the status document: everything reported so far, and the rate since the
/// previous document (null before the first report).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LiveCounter {
    /// The counter's key.
    pub key: String,
    /// Everything reported so far.
    pub total: Option<f64>,
    /// The rate since the previous document, per second.
    pub per_s: Option<f64>,
}

/// The recorder's pid in a status document, read without building the rest of it (a document
/// of many GPUs took 0.27 M instructions to read whole; the start-up sweep reads another run's).
pub fn recorder_pid(doc: &[u8]) -> Option<u32> {
    #[derive(Deserialize)]
    struct Pid {
        pid: Option<u32>,
    }
    serde_json::from_slice::<Pid>(doc).ok().and_then(|d| d.pid)
}

/// Append `v` as JSON (missing is null; numbers as written, strings escaped).
fn json_value(v: &Value, out: &mut Vec<u8>) {
    use std::io::Write;
    let _ = match v {
        Value::U(x) => write!(out, "{x}"),
        Value::F(x) if x.is_finite() => write!(out, "{x}"),
        Value::S(s) => serde_json::to_writer(&mut *out, s.as_ref()).map_err(std::io::Error::other),
        Value::F(_) | Value::Null | Value::Unsupported => out.write_all(b"null"),
    };
}

impl LiveStatus {
    /// The status document beside `base`; None while there is none (or it cannot be read or parsed).
    pub fn load(base: &Path) -> Option<LiveStatus> {
        let bytes = read_status(base).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The document as JSON into `out` (cleared first), with `rows` (the recorded fields of `sel`)
    /// in place of `self.rows`: written straight from the rows, as the recorder does after each one.
    pub fn to_json(
        &self,
        rows: &[Row],
        sel: &Selection,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()> {
        out.clear();
        serde_json::to_writer(&mut *out, self)?;
        if rows.is_empty() || out.pop() != Some(b'}') {
            return Ok(());
        }
        out.extend_from_slice(b",\"rows\":[");
        for (i, row) in rows.iter().enumerate() {
            out.extend_from_slice(if i == 0 { b"{" } else { b",{" });
            for (k, f) in
                sel.fields().filter(|f| *f != crate::catalog::Field::Timestamp).enumerate()
            {
                if k > 0 {
                    out.push(b',');
                }
                out.push(b'"');
                out.extend_from_slice(f.name().as_bytes());
                out.extend_from_slice(b"\":");
                json_value(row.get(f), out);
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"]}");
        Ok(())
    }

    /// Whether the recorder that wrote this is still running, as far as `this_host` can tell (a
    /// recorder on another host, seen over a shared filesystem, counts as running).
    pub fn recorder_alive(&self, this_host: &str) -> bool {
        if self.host != this_host {
            return true;
        }
        libc::pid_t::try_from(self.pid).is_ok_and(gpumon_util::process_exists)
    }

    /// A number of row `i`, by field name.
    pub fn num(&self, i: usize, field: &str) -> Option<f64> {
        self.rows.get(i)?.get(field)?.as_f64()
    }

    /// A text of row `i`, by field name (numbers as written).
    pub fn text(&self, i: usize, field: &str) -> Option<String> {
        match self.rows.get(i)?.get(field)? {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Null => None,
            v => Some(v.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Field;

    #[test]
    fn rows_are_written_by_field_name_and_read_back() {
        let mut r = Row::default();
        r.set(Field::Index, Value::U(1));
        r.set(Field::PowerDraw, Value::F(250.5));
        r.set(Field::Phase, Value::S("bs=64".into()));
        r.set(Field::FanSpeed, Value::Unsupported);
        r.set(Field::Name, Value::S("quote \" and \u{1} in a name".into()));
        let sel = Selection::new(vec![
            Field::Timestamp,
            Field::Index,
            Field::Name,
            Field::PowerDraw,
            Field::FanSpeed,
            Field::Phase,
        ]);
        let st = LiveStatus { schema: SCHEMA.into(), pid: 3, ..Default::default() };
        let mut text = Vec::new();
        st.to_json(&[r.clone(), Row::default()], &sel, &mut text).unwrap();
        let back: LiveStatus = serde_json::from_slice(&text).unwrap();
        assert_eq!((back.schema.as_str(), back.pid, back.rows.len()), (SCHEMA, 3, 2));
        assert_eq!(back.text(0, "name").as_deref(), Some("quote \" and \u{1} in a name"));
        assert_eq!(back.num(1, "power.draw"), None);
        st.to_json(&[], &sel, &mut text).unwrap();
        assert_eq!(serde_json::from_slice::<LiveStatus>(&text).unwrap(), st, "no rows yet");
        assert_eq!(back.num(0, "power.draw"), Some(250.5));
        assert_eq!(back.text(0, "phase").as_deref(), Some("bs=64"));
        assert_eq!(back.text(0, "index").as_deref(), Some("1"));
        assert_eq!(back.num(0, "fan.speed"), None);
        assert_eq!(back.num(0, "timestamp"), None, "the row time is `ts`");
    }

    #[test]
    fn the_pid_alone_reads_from_a_whole_document() {
        let mut r = Row::default();
        r.set(Field::Index, Value::U(0));
        let st =
            LiveStatus { schema: SCHEMA.into(), pid: 4242, host: "h".into(), ..Default::default() };
        let mut text = Vec::new();
        st.to_json(&[r.clone(), r], &Selection::new(vec![Field::Index]), &mut text).unwrap();
        assert_eq!(recorder_pid(&text), Some(4242));
        assert_eq!(recorder_pid(b"{\"schema\": \"x\"}"), None);
        assert_eq!(recorder_pid(b"not json"), None);
    }
}
