//! NVML events read back from a recording's events file (`run.events.*`): listed in the summary in
//! time order, each Xid with what it means and the usual action ([`crate::xid`]). At most
//! [`MAX_LISTED`] are kept; the rest are counted. Routine clock and P-state changes are never
//! listed, only counted per GPU ([`RoutineCount`]).

use std::collections::BTreeMap;

use anyhow::Result;
use arrow_array::RecordBatch;

use crate::xid::{self, Xid};
use gpumon_schema::catalog::Field;
use gpumon_schema::cols::{self, NO_TS, NO_U64};
use gpumon_schema::{field_column, routine_event};

/// Events listed in a summary; later ones are only counted.
pub(crate) const MAX_LISTED: usize = 1000;

/// One event.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    /// UTC µs.
    pub ts: i64,
    /// The host that recorded it.
    pub host: String,
    /// The GPU's index, where known.
    pub gpu: Option<u32>,
    /// The GPU's uuid, where known.
    pub uuid: Option<String>,
    /// `xid`, `dbe`, `sbe`, `clock`, `power_source`.
    pub kind: String,
    /// The event's code (the Xid number), where it has one.
    pub code: Option<u64>,
    /// What NVML said besides the code.
    pub detail: Option<String>,
}

impl EventRecord {
    /// The catalogue entry of an Xid event's code.
    pub fn xid(&self) -> Option<&'static Xid> {
        if self.kind == "xid" { self.code.and_then(xid::lookup) } else { None }
    }

    /// The event as a short phrase: `Xid 79`, `dbe`.
    pub fn label(&self) -> String {
        match (self.kind.as_str(), self.code) {
            ("xid", Some(c)) => format!("Xid {c}"),
            ("xid", None) => "Xid (unknown)".into(),
            (k, _) => k.to_string(),
        }
    }

    /// What it means: the Xid catalogue's words, or a description of the other kinds.
    pub fn meaning(&self) -> String {
        if let Some(x) = self.xid() {
            return x.meaning.to_string();
        }
        match self.kind.as_str() {
            "xid" => format!("not among the common Xids; see {}", xid::CATALOGUE),
            "dbe" => "double-bit (uncorrectable) ECC error".into(),
            "sbe" => "single-bit (corrected) ECC error".into(),
            "clock" => "clock change".into(),
            "power_source" => "power source change".into(),
            k => k.to_string(),
        }
    }

    /// The usual action, where the catalogue gives one.
    pub fn action(&self) -> Option<&'static str> {
        self.xid().map(|x| x.action)
    }
}

/// How many routine events (clock or P-state changes) one GPU reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutineCount {
    /// The host that recorded them.
    pub host: String,
    /// The GPU's index, where known.
    pub gpu: Option<u32>,
    /// `clock` or `pstate`.
    pub kind: String,
    /// How many.
    pub count: u64,
}

/// What the events inputs held.
#[derive(Debug, Default)]
pub struct Gathered {
    /// The events listed, in time order.
    pub events: Vec<EventRecord>,
    /// How many more there were beyond [`MAX_LISTED`].
    pub more: u64,
    /// The routine events counted by host, GPU and kind.
    pub routine: Vec<RoutineCount>,
}

/// Events gathered from the events inputs, inside the summary's window.
#[derive(Debug, Default)]
pub struct EventCollector {
    window: crate::window::TimeWindow,
    pub(crate) events: Vec<EventRecord>,
    /// Events beyond [`MAX_LISTED`].
    pub more: u64,
    /// Routine events counted by (host, GPU, kind).
    routine: BTreeMap<(String, Option<u32>, String), u64>,
}

impl EventCollector {
    /// A collector of the rows inside `window`.
    pub fn new(window: crate::window::TimeWindow) -> EventCollector {
        EventCollector { window, ..Default::default() }
    }

    /// Add the events of one batch of an events table; rows without a host value belong to `default_host`.
    pub fn visit(&mut self, batch: &RecordBatch, default_host: &str) -> Result<()> {
        let (mut ts, mut gpu, mut code) = (Vec::new(), Vec::new(), Vec::new());
        if !field_column(batch, Field::Timestamp).is_some_and(|c| cols::ts_micros(c, &mut ts)) {
            return Ok(());
        }
        let n = batch.num_rows();
        let ints = |f: Field, out: &mut Vec<u64>| {
            if !field_column(batch, f).is_some_and(|c| cols::u64_values(c, out)) {
                out.clear();
                out.resize(n, NO_U64);
            }
        };
        ints(Field::Index, &mut gpu);
        ints(Field::EventCode, &mut code);
        let text = |f: Field, i: usize| field_column(batch, f).and_then(|c| cols::str_at(c, i));
        for i in 0..n {
            if ts[i] == NO_TS || !self.window.contains(ts[i]) {
                continue;
            }
            let host = text(Field::Host, i).unwrap_or_else(|| default_host.to_string());
            let g = (gpu[i] != NO_U64).then(|| u32::try_from(gpu[i]).unwrap_or(u32::MAX));
            let kind = text(Field::EventKind, i).unwrap_or_default();
            if routine_event(&kind) {
                *self.routine.entry((host, g, kind)).or_default() += 1;
                continue;
            }
            if self.events.len() >= MAX_LISTED {
                self.more += 1;
                continue;
            }
            self.events.push(EventRecord {
                ts: ts[i],
                host,
                gpu: g,
                uuid: text(Field::Uuid, i),
                kind,
                code: (code[i] != NO_U64).then_some(code[i]),
                detail: text(Field::EventDetail, i),
            });
        }
        Ok(())
    }

    /// The events in time order, and the routine counts by host, GPU and kind.
    pub fn finish(mut self) -> Gathered {
        self.events.sort_by(|a, b| (a.ts, &a.host, a.gpu).cmp(&(b.ts, &b.host, b.gpu)));
        let routine = self
            .routine
            .into_iter()
            .map(|((host, gpu, kind), count)| RoutineCount { host, gpu, kind, count })
            .collect();
        Gathered { events: self.events, more: self.more, routine }
    }
}

/// Xid events of one host grouped by (GPU, code), in order of first occurrence: (gpu, events).
pub(crate) fn xid_groups<'a>(
    host: &str,
    events: &'a [EventRecord],
) -> Vec<(Option<u32>, Vec<&'a EventRecord>)> {
    /// (first time, GPU, code).
    type Key = (i64, Option<u32>, Option<u64>);
    let mut groups: BTreeMap<Key, Vec<&EventRecord>> = BTreeMap::new();
    let mut first: BTreeMap<(Option<u32>, Option<u64>), i64> = BTreeMap::new();
    for e in events.iter().filter(|e| e.host == host && e.kind == "xid") {
        let t = *first.entry((e.gpu, e.code)).or_insert(e.ts);
        groups.entry((t, e.gpu, e.code)).or_default().push(e);
    }
    groups.into_iter().map(|((_, gpu, _), v)| (gpu, v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts: i64, gpu: u32, kind: &str, code: Option<u64>) -> EventRecord {
        EventRecord {
            ts,
            host: "h".into(),
            gpu: Some(gpu),
            uuid: None,
            kind: kind.into(),
            code,
            detail: None,
        }
    }

    #[test]
    fn meanings_and_groups() {
        let e = ev(1, 0, "xid", Some(79));
        assert_eq!(e.label(), "Xid 79");
        assert!(e.meaning().contains("fallen off the bus"));
        assert!(e.action().is_some());
        assert!(ev(1, 0, "xid", Some(7)).meaning().contains(xid::CATALOGUE));
        assert_eq!(ev(1, 0, "dbe", None).action(), None);
        let all = [
            ev(5, 1, "xid", Some(94)),
            ev(3, 0, "xid", Some(79)),
            ev(4, 1, "dbe", None),
            ev(9, 1, "xid", Some(94)),
        ];
        let g = xid_groups("h", &all);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].0, g[0].1.len()), (Some(0), 1));
        assert_eq!((g[1].0, g[1].1.len()), (Some(1), 2));
        assert!(xid_groups("other", &all).is_empty());
    }
}
