//! Per-phase analysis: every row goes to the experiment phase it belongs to (its `phase` column, or,
//! for inputs without one such as nvidia-smi logs, the `--phase NAME=SINCE..UNTIL` window holding its
//! timestamp), one [`Collector`] per phase, and the phases' contiguous spans in time order (the
//! report's bands). Rows of no phase (before the first mark, after `end`, outside every window) form
//! the unmarked phase: the run's context, listed, never judged (no findings, gaps or coverage) nor
//! compared.
//!
//! A batch of one phase (the rule: phases last minutes, batches a second or less) goes to its
//! collector whole; a batch that straddles a mark goes to each of its phases with a row mask.

use std::sync::Arc;

use anyhow::Result;
use arrow_array::RecordBatch;

use crate::collect::{CollectConfig, Collector};
use crate::compare::{Comparison, compare};
use crate::events::EventRecord;
use crate::findings::Thresholds;
use crate::keys::NONE;
use crate::stat::Stat;
use crate::{Companions, Summary, build};
use gpumon_schema::InputInfo;
use gpumon_schema::catalog::Field;
use gpumon_schema::cols::{self, Interner, NO_TS};

use crate::window::LabelledWindow;

/// Where a row's phase comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Split {
    /// The `phase` column (`gpumon mark`); rows of inputs without one are unmarked.
    Column,
    /// The first window holding the row's timestamp.
    Windows(Arc<[LabelledWindow]>),
}

/// A stretch of consecutive rows of one phase (None: unmarked), first to last row time, UTC µs.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// The phase's label.
    pub phase: Option<String>,
    /// The first row's time.
    pub start: i64,
    /// The last row's time.
    pub end: i64,
}

/// One stretch of rows of one label: its first and last timestamp, UTC µs.
#[derive(Debug, Clone, Copy)]
struct LabelSpan {
    /// The label's id, or [`NONE`] for rows of no phase.
    id: u32,
    first: i64,
    last: i64,
}

/// The collectors of one part of the data, one per phase met.
///
/// Joined ([`PhaseCollector::joined`]), it also makes the whole run's collector, without a second
/// pass over the rows: each stretch of consecutive rows of one phase is read into a collector of its
/// own, which, when the stretch ends, is appended to the whole run's and to its phase's (the same
/// join as consecutive parts of a file, exact for rows in time order). A stretch whose ticks go back
/// into those before it (rows grouped by GPU, not by time), or a batch cut into more than
/// [`MAX_RUNS`] stretches, makes it [`PhaseCollector::unjoinable`]: the caller reads the input again
/// with a collector of its own for the whole run.
pub struct PhaseCollector {
    cfg: CollectConfig,
    split: Split,
    labels: Interner,
    /// (label id or [`NONE`], its collector), in order of first appearance.
    by: Vec<(u32, Collector)>,
    /// Each stretch, in time order.
    spans: Vec<LabelSpan>,
    ts: Vec<i64>,
    ids: Vec<u32>,
    mask: Vec<bool>,
    /// Joined: the whole run's collector (the first stretch's, then later ones appended: its
    /// held-back first ticks stay for the caller's join of parts), and the stretch being read (its
    /// label id, its collector).
    joined: bool,
    whole: Option<Collector>,
    current: Option<(u32, Collector)>,
    unjoinable: bool,
}

/// Stretches in one batch beyond which a joined collector gives up (each is a pass over the batch).
const MAX_RUNS: usize = 16;

impl PhaseCollector {
    /// Phase collectors only: the caller feeds the whole run's collector itself.
    pub fn new(cfg: CollectConfig, split: Split) -> PhaseCollector {
        PhaseCollector {
            cfg,
            split,
            labels: Interner::default(),
            by: Vec::new(),
            spans: Vec::new(),
            ts: Vec::new(),
            ids: Vec::new(),
            mask: Vec::new(),
            joined: false,
            whole: None,
            current: None,
            unjoinable: false,
        }
    }

    /// Phase collectors (not joined) for data read after this one's whose ticks go back into it:
    /// each phase's collector starts with the ticks of that phase so far ([`Collector::after`]).
    pub fn after(&self) -> PhaseCollector {
        let mut pc = PhaseCollector::new(self.cfg.clone(), self.split.clone());
        for (id, c) in &self.by {
            let mine = if *id == NONE { NONE } else { pc.labels.id(self.labels.name(*id)) };
            pc.by.push((mine, Collector::after(self.cfg.clone(), &c.last_ticks())));
        }
        pc
    }

    /// Phase collectors that also make the whole run's ([`PhaseCollector::take_whole`]).
    pub fn joined(cfg: CollectConfig, split: Split) -> PhaseCollector {
        PhaseCollector { joined: true, ..PhaseCollector::new(cfg, split) }
    }

    /// Whether this collector makes the whole run's collector (and its caller must not).
    pub fn joins(&self) -> bool {
        self.joined
    }

    /// Whether the whole run's collector it made may differ from one fed every row: read the input
    /// again with [`PhaseCollector::new`] and a collector for the whole run.
    pub fn unjoinable(&self) -> bool {
        self.unjoinable
    }

    /// The whole run's collector of a joined collector, its last stretch appended.
    pub fn take_whole(&mut self) -> Option<Collector> {
        self.end_stretch();
        let cfg = &self.cfg;
        self.joined.then(|| self.whole.take().unwrap_or_else(|| Collector::new(cfg.clone())))
    }

    /// Append the stretch being read to the whole run's collector and to its phase's.
    fn end_stretch(&mut self) {
        let Some((id, stretch)) = self.current.take() else { return };
        match self.whole.as_mut() {
            Some(w) => {
                self.unjoinable |= w.goes_back([&stretch]);
                w.append(stretch.clone());
            }
            None if self.joined => self.whole = Some(stretch.clone()),
            None => {}
        }
        match self.by.iter_mut().find(|(x, _)| *x == id) {
            Some((_, c)) => {
                self.unjoinable |= c.goes_back([&stretch]);
                c.append(stretch);
            }
            None => self.by.push((id, stretch)),
        }
    }

    /// Count a batch stretch by stretch (runs of rows of one phase) into the stretches' collectors.
    fn visit_stretches(&mut self, batch: &RecordBatch, default_host: &str) -> Result<()> {
        if self.unjoinable {
            // The input is read again the old way: nothing counted here is used.
            return Ok(());
        }
        let n = self.ids.len();
        let mut runs = Vec::new();
        let mut lo = 0;
        while lo < n {
            let id = self.ids[lo];
            let hi = lo + self.ids[lo..].iter().take_while(|&&x| x == id).count();
            runs.push((id, lo, hi));
            lo = hi;
        }
        if runs.len() > MAX_RUNS {
            self.unjoinable = true;
            return Ok(());
        }
        for (id, lo, hi) in runs {
            if self.current.as_ref().is_some_and(|(c, _)| *c != id) {
                self.end_stretch();
            }
            let cfg = &self.cfg;
            let (_, c) = self.current.get_or_insert_with(|| (id, Collector::new(cfg.clone())));
            if hi - lo == n {
                c.visit(batch, default_host)?;
                continue;
            }
            self.mask.clear();
            self.mask.resize(n, false);
            self.mask[lo..hi].fill(true);
            c.visit_rows(batch, default_host, Some(&self.mask))?;
        }
        Ok(())
    }

    fn collector(&mut self, id: u32) -> &mut Collector {
        let i = match self.by.iter().position(|(x, _)| *x == id) {
            Some(i) => i,
            None => {
                self.by.push((id, Collector::new(self.cfg.clone())));
                self.by.len() - 1
            }
        };
        &mut self.by[i].1
    }

    /// The phase id of every row of the batch (into `self.ids`); false without a timestamp column.
    fn phase_ids(&mut self, batch: &RecordBatch) -> bool {
        let col = |f: Field| {
            let i =
                batch.schema().fields().iter().position(|x| Field::lookup(x.name()) == Some(f))?;
            Some(batch.column(i).clone())
        };
        self.ts.clear();
        self.ids.clear();
        if !col(Field::Timestamp).is_some_and(|c| cols::ts_micros(c.as_ref(), &mut self.ts)) {
            return false;
        }
        match &self.split {
            Split::Column => {
                let read = col(Field::Phase).is_some_and(|c| {
                    cols::str_ids(c.as_ref(), &mut self.labels, NONE, &mut self.ids)
                });
                if !read {
                    self.ids.clear();
                    self.ids.resize(self.ts.len(), NONE);
                }
            }
            Split::Windows(w) => {
                for &t in &self.ts {
                    let hit = w.iter().find(|w| t != NO_TS && w.time.contains(t));
                    self.ids.push(hit.map_or(NONE, |w| self.labels.id(&w.label)));
                }
            }
        }
        true
    }

    /// Extend the spans with the batch's rows inside the window.
    fn track_spans(&mut self) {
        let window = self.cfg.window;
        for (&t, &id) in self.ts.iter().zip(&self.ids) {
            if t == NO_TS || !window.contains(t) {
                continue;
            }
            match self.spans.last_mut() {
                Some(s) if s.id == id => {
                    s.first = s.first.min(t);
                    s.last = s.last.max(t);
                }
                _ => self.spans.push(LabelSpan { id, first: t, last: t }),
            }
        }
    }

    /// Count one batch into the collectors of its phases.
    pub fn visit(&mut self, batch: &RecordBatch, default_host: &str) -> Result<()> {
        if batch.num_rows() == 0 || !self.phase_ids(batch) {
            return Ok(());
        }
        self.track_spans();
        if self.joins() {
            return self.visit_stretches(batch, default_host);
        }
        let mut met: Vec<u32> = Vec::new();
        for &id in &self.ids {
            if !met.contains(&id) {
                met.push(id);
            }
        }
        if let [only] = met[..] {
            return self.collector(only).visit(batch, default_host);
        }
        for id in met {
            let mut mask = std::mem::take(&mut self.mask);
            mask.clear();
            mask.extend(self.ids.iter().map(|&x| x == id));
            let r = self.collector(id).visit_rows(batch, default_host, Some(&mask));
            self.mask = mask;
            r?;
        }
        Ok(())
    }

    /// Join the collectors of the data that follows this part's.
    pub fn append(&mut self, mut later: PhaseCollector) {
        self.end_stretch();
        later.end_stretch();
        let map = |me: &mut Interner, id: u32| {
            if id == NONE { NONE } else { me.id(later.labels.name(id)) }
        };
        for (id, c) in later.by {
            let mine = map(&mut self.labels, id);
            match self.by.iter_mut().find(|(x, _)| *x == mine) {
                Some((_, target)) => target.append(c),
                None => self.by.push((mine, c)),
            }
        }
        for LabelSpan { id, first, last } in later.spans {
            let mine = map(&mut self.labels, id);
            match self.spans.last_mut() {
                Some(s) if s.id == mine => s.last = s.last.max(last),
                _ => self.spans.push(LabelSpan { id: mine, first, last }),
            }
        }
    }

    fn label(&self, id: u32) -> Option<String> {
        (id != NONE).then(|| self.labels.name(id).to_string())
    }
}

/// One phase's summary.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseSummary {
    /// None: the unmarked rows.
    pub label: Option<String>,
    /// The summary of its rows alone.
    pub summary: Summary,
}

/// Everything `--by phase` adds to a summary.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseReport {
    /// In order of first appearance.
    pub phases: Vec<PhaseSummary>,
    /// The phases' stretches, in time order.
    pub spans: Vec<Span>,
    /// With two or more marked phases: their key statistics against the baseline phase.
    pub comparison: Option<Comparison>,
}

impl PhaseReport {
    /// The marked phases' labels, in order.
    pub fn labels(&self) -> Vec<&str> {
        self.phases.iter().filter_map(|p| p.label.as_deref()).collect()
    }

    /// The summary of the phase with this label.
    pub fn get(&self, label: &str) -> Option<&Summary> {
        self.phases.iter().find(|p| p.label.as_deref() == Some(label)).map(|p| &p.summary)
    }
}

/// Whether `t` falls in a stretch of the phase `label`: each stretch reaches to the next one's
/// first row (the last one to the end of time).
fn in_phase(spans: &[Span], label: Option<&str>, t: i64) -> bool {
    label.is_some()
        && spans.iter().enumerate().any(|(i, s)| {
            let end = spans.get(i + 1).map_or(i64::MAX, |n| n.start);
            s.phase.as_deref() == label && t >= s.start && t < end
        })
}

/// The events of a phase's stretches.
fn phase_events(spans: &[Span], label: Option<&str>, events: &[EventRecord]) -> Vec<EventRecord> {
    events.iter().filter(|e| in_phase(spans, label, e.ts)).cloned().collect()
}

/// The inputs whose wrapped job failed inside a stretch of the phase: the phase it died in carries
/// `job_failed`, the others do not.
fn phase_failures(spans: &[Span], label: Option<&str>, failed: &[InputInfo]) -> Vec<InputInfo> {
    let ended_in = |i: &InputInfo| {
        i.job.as_ref().and_then(|j| j.end).is_some_and(|t| in_phase(spans, label, t))
    };
    failed.iter().filter(|i| ended_in(i)).cloned().collect()
}

/// The unmarked rows are the run's context, not a phase to judge: no findings, gaps or coverage.
fn context_only(s: &mut Summary) {
    for h in &mut s.hosts {
        h.findings.clear();
        for g in &mut h.gpus {
            g.gaps.clear();
            for stat in [Stat::Gaps, Stat::GapS, Stat::CoveragePct] {
                g.stats.set(stat, None);
            }
        }
    }
}

/// The per-phase summaries of the whole data (each with the NVML events of its stretches and the
/// failures of the wrapped jobs (`failed`: inputs whose job failed) that ended in them; the
/// unmarked rows as context only), and their comparison against `baseline` (default: the first
/// marked phase). The error names the phases when `baseline` is not one of them.
pub fn build_phases(
    mut pc: PhaseCollector,
    events: &[EventRecord],
    failed: &[InputInfo],
    th: &Thresholds,
    window: crate::window::TimeWindow,
    baseline: Option<&str>,
) -> Result<PhaseReport, String> {
    pc.end_stretch();
    let spans: Vec<Span> = pc
        .spans
        .iter()
        .map(|s| Span { phase: pc.label(s.id), start: s.first, end: s.last })
        .collect();
    let first_seen = |id: u32| pc.spans.iter().position(|s| s.id == id).unwrap_or(usize::MAX);
    let mut by: Vec<(usize, Option<String>, Collector)> = pc
        .by
        .into_iter()
        .map(|(id, c)| (first_seen(id), (id != NONE).then(|| pc.labels.name(id).to_string()), c))
        .collect();
    by.sort_by_key(|b| b.0);
    let phases: Vec<PhaseSummary> = by
        .into_iter()
        .map(|(_, label, c)| {
            let companions = Companions {
                events: phase_events(&spans, label.as_deref(), events),
                ..Default::default()
            };
            let ended = phase_failures(&spans, label.as_deref(), failed);
            let mut summary = build(c, th, ended, Vec::new(), window, companions);
            if label.is_none() {
                context_only(&mut summary);
            }
            PhaseSummary { label, summary }
        })
        .filter(|p| !p.summary.hosts.is_empty())
        .collect();
    let mut report = PhaseReport { phases, spans, comparison: None };
    let labels = report.labels();
    let base = match baseline {
        None => 0,
        Some(b) => labels.iter().position(|l| *l == b).ok_or_else(|| {
            format!(
                "--baseline {b}: no such phase; the phases are {}",
                if labels.is_empty() { "none".into() } else { labels.join(", ") }
            )
        })?,
    };
    if labels.len() >= 2 {
        let cols: Vec<(String, &Summary)> =
            report.phases.iter().filter_map(|p| Some((p.label.clone()?, &p.summary))).collect();
        report.comparison = Some(compare(&cols, base));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::TimeWindow;
    use arrow_array::{StringArray, TimestampMicrosecondArray, UInt8Array, UInt32Array};
    use arrow_schema::{DataType, Field as AField, Schema, TimeUnit};

    /// One GPU, one row a second; `phases[i]` and `util[i]` for second i.
    fn batch(from: i64, phases: &[Option<&str>], util: &[u8]) -> RecordBatch {
        let schema = Schema::new(vec![
            AField::new(
                "timestamp",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            AField::new("index", DataType::UInt32, true),
            AField::new("utilization.gpu", DataType::UInt8, true),
            AField::new("phase", DataType::Utf8, true),
        ]);
        let ts: Vec<i64> = (0..util.len() as i64).map(|i| (from + i) * 1_000_000).collect();
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
                Arc::new(UInt32Array::from(vec![0; util.len()])),
                Arc::new(UInt8Array::from(util.to_vec())),
                Arc::new(StringArray::from(phases.to_vec())),
            ],
        )
        .unwrap()
    }

    fn util(s: &Summary) -> Option<f64> {
        s.all_gpus.get(crate::stat::Stat::mean(Field::UtilGpu))
    }

    #[test]
    fn rows_split_by_phase_across_batches_and_parts() {
        let cfg = CollectConfig::default();
        let mut a = PhaseCollector::new(cfg.clone(), Split::Column);
        a.visit(&batch(0, &[None, Some("bs=32"), Some("bs=32")], &[0, 30, 30]), "h").unwrap();
        a.visit(&batch(3, &[Some("bs=32"), Some("bs=64"), Some("bs=64")], &[30, 60, 62]), "h")
            .unwrap();
        let mut b = PhaseCollector::new(cfg, Split::Column);
        b.visit(&batch(6, &[Some("bs=64"), Some("bs=32"), None], &[64, 34, 0]), "h").unwrap();
        a.append(b);
        let r =
            build_phases(a, &[], &[], &Thresholds::default(), TimeWindow::default(), None).unwrap();
        let labels: Vec<Option<&str>> = r.phases.iter().map(|p| p.label.as_deref()).collect();
        assert_eq!(labels, [None, Some("bs=32"), Some("bs=64")]);
        assert_eq!(util(r.get("bs=32").unwrap()), Some(31.0));
        assert_eq!(util(r.get("bs=64").unwrap()), Some(62.0));
        let spans: Vec<(Option<&str>, i64, i64)> = r
            .spans
            .iter()
            .map(|s| (s.phase.as_deref(), s.start / 1_000_000, s.end / 1_000_000))
            .collect();
        assert_eq!(
            spans,
            [
                (None, 0, 0),
                (Some("bs=32"), 1, 3),
                (Some("bs=64"), 4, 6),
                (Some("bs=32"), 7, 7),
                (None, 8, 8)
            ]
        );
        assert!(r.comparison.is_some());
        let e = build_phases(
            PhaseCollector::new(CollectConfig::default(), Split::Column),
            &[],
            &[],
            &Thresholds::default(),
            TimeWindow::default(),
            Some("x"),
        );
        assert!(e.unwrap_err().contains("no such phase"));
    }

    #[test]
    fn windows_name_the_phases_of_files_without_marks() {
        let w: Arc<[LabelledWindow]> = Arc::new([
            LabelledWindow {
                label: "warmup".into(),
                time: TimeWindow { since: Some(0), until: Some(2_000_000) },
            },
            LabelledWindow {
                label: "train".into(),
                time: TimeWindow { since: Some(2_000_000), until: Some(5_000_000) },
            },
        ]);
        let mut a = PhaseCollector::new(CollectConfig::default(), Split::Windows(w));
        a.visit(&batch(0, &[None; 6], &[10, 10, 90, 90, 90, 0]), "h").unwrap();
        let r =
            build_phases(a, &[], &[], &Thresholds::default(), TimeWindow::default(), Some("train"))
                .unwrap();
        assert_eq!(util(r.get("warmup").unwrap()), Some(10.0));
        assert_eq!(util(r.get("train").unwrap()), Some(90.0));
        assert_eq!(r.comparison.unwrap().baseline, 1);
    }
}
