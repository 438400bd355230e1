//! The line-by-line state machine: the current header (from the file or `--columns`; repeated
//! headers skipped, changed ones switch the mapping, so appended runs read on), each data row's
//! GPU and values, the counts of skipped lines, and the report at the end.

use std::collections::{HashMap, VecDeque};

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};

use super::cells::{Conv, cell_ok, is_missing_marker};
use super::header::{ColKind, Ident, Layout, columns_layout, parse_header};
use super::interleave::{self, Phase};
use super::lines::{LineReader, MAX_LINE, Pending};
use super::time::{Stamp, ZoneCache, has_timestamp_cell, parse_stamp};
use super::{NvsmiOptions, NvsmiRow, SmiLogInfo, push_capped};
use gpumon_schema::catalog::Field;
use gpumon_schema::row::{Row, Value};

/// Largest GPU number accepted (index column, distinct uuids, `--gpus`).
const MAX_GPUS: usize = 65_536;
/// Cap on the number of distinct ignored column names remembered.
const MAX_IGNORED: usize = 256;

/// Skipped lines of one kind: how many, and the first.
#[derive(Default, Clone, Copy)]
struct Tally {
    n: u64,
    first: u64,
}

impl Tally {
    fn bump(&mut self, line: u64) {
        if self.n == 0 {
            self.first = line;
        }
        self.n += 1;
    }
}

#[derive(Default)]
struct Tallies {
    malformed: Tally,
    garbage: Tally,
    overlong: Tally,
    bad_ts: Tally,
    no_ts_col: Tally,
    no_ident: Tally,
    dst_gap: Tally,
    resync: Tally,
    repeated_header: Tally,
}

/// GPUs named by a uuid / pci.bus_id cell, numbered in order of first appearance; GPUs seen.
#[derive(Default)]
struct Ids {
    keys: HashMap<String, u32>,
    seen: Vec<bool>,
    distinct: usize,
}

impl Ids {
    fn key(&mut self, cell: &str) -> Option<u32> {
        if let Some(&g) = self.keys.get(cell) {
            return Some(g);
        }
        if self.keys.len() >= MAX_GPUS {
            return None;
        }
        let g = self.keys.len() as u32;
        self.keys.insert(cell.to_string(), g);
        Some(g)
    }

    fn mark(&mut self, gpu: usize) {
        if gpu >= self.seen.len() {
            self.seen.resize(gpu + 1, false);
        }
        if !self.seen[gpu] {
            self.seen[gpu] = true;
            self.distinct += 1;
        }
    }
}

pub(super) enum Step {
    Done,
    /// The line is interleaved data and the GPU count is not known yet: buffer and infer.
    NeedGpus,
}

pub(super) struct Parser {
    disp: String,
    zone: ZoneCache,
    forced_k: Option<usize>,
    layout: Option<Layout>,
    from_columns: bool,
    gpus_known: bool,
    phase: Phase,
    row: Row,
    conv: Conv,
    ids: Ids,
    rows: u64,
    tally: Tallies,
    warnings: Vec<String>,
    notes: Vec<String>,
    columns: Vec<String>,
    ignored: Vec<String>,
}

impl Parser {
    pub(super) fn new(disp: String, opts: &NvsmiOptions) -> Result<Parser> {
        if let Some(g) = opts.gpus
            && !(1..=MAX_GPUS).contains(&g)
        {
            bail!("{disp}: --gpus must be between 1 and {MAX_GPUS}, not {g}");
        }
        let mut p = Parser {
            disp,
            zone: ZoneCache::new(opts.tz.clone()),
            forced_k: opts.gpus,
            layout: None,
            from_columns: false,
            gpus_known: false,
            phase: Phase::default(),
            row: Row::default(),
            conv: Conv::new(),
            ids: Ids::default(),
            rows: 0,
            tally: Tallies::default(),
            warnings: Vec::new(),
            notes: Vec::new(),
            columns: Vec::new(),
            ignored: Vec::new(),
        };
        if let Some(cols) = &opts.columns {
            let Some(layout) = columns_layout(cols) else {
                bail!("{}: --columns is empty", p.disp);
            };
            if layout.ts_col.is_none() {
                bail!(
                    "{}: --columns must include timestamp (nvidia-smi's `timestamp` query field)",
                    p.disp
                );
            }
            p.set_layout(layout);
            p.from_columns = true;
        }
        Ok(p)
    }

    fn set_layout(&mut self, layout: Layout) {
        for c in &layout.cols {
            match c.kind {
                ColKind::Ts => push_unique(&mut self.columns, Field::Timestamp.name()),
                ColKind::Field(f) => push_unique(&mut self.columns, f.name()),
                ColKind::Ignored => {
                    if self.ignored.len() < MAX_IGNORED {
                        push_unique(&mut self.ignored, &c.name);
                    }
                }
            }
        }
        if !layout.reasons.is_empty() {
            push_unique(&mut self.columns, Field::EventReasons.name());
        }
        self.conv.reset(layout.cols.len());
        self.row = Row::default();
        self.phase.restart();
        self.layout = Some(layout);
    }

    fn on_header(&mut self, no: u64, h: Layout) {
        self.phase.restart();
        if self.layout.as_ref().is_some_and(|c| c.header == h.header) {
            self.tally.repeated_header.bump(no);
            return;
        }
        if self.layout.is_some() {
            if self.from_columns && self.rows == 0 {
                push_capped(
                    &mut self.warnings,
                    format!(
                        "line {no}: the file has its own header line; it is used instead of --columns"
                    ),
                );
            } else {
                push_capped(
                    &mut self.notes,
                    format!(
                        "line {no}: a header line with different columns; the rest is read with them"
                    ),
                );
            }
        }
        self.from_columns = false;
        self.set_layout(h);
    }

    fn cut_short(&mut self, no: u64) {
        push_capped(
            &mut self.warnings,
            format!(
                "line {no} is cut short (no final newline: the logger stopped mid-write?); skipped"
            ),
        );
    }

    /// A line longer than the reader keeps, skipped.
    pub(super) fn overlong(&mut self, no: u64) {
        self.tally.overlong.bump(no);
    }

    /// Read one line: a header, a data row handed to `emit`, or a line skipped and counted.
    pub(super) fn process(
        &mut self,
        no: u64,
        text: &str,
        terminated: bool,
        emit: &mut dyn FnMut(NvsmiRow<'_>),
    ) -> Result<Step> {
        let t = text.trim();
        if t.is_empty() {
            return Ok(Step::Done);
        }
        if let Some(h) = parse_header(t) {
            self.on_header(no, h);
            return Ok(Step::Done);
        }
        let Some(layout) = &self.layout else {
            return self.before_header(no, t).map(|()| Step::Done);
        };
        let ncols = layout.cols.len();
        let ncells = t.bytes().filter(|&b| b == b',').count() + 1;
        if ncells != ncols {
            if !terminated && ncells < ncols {
                self.cut_short(no);
            } else {
                self.tally.malformed.bump(no);
            }
            return Ok(Step::Done);
        }
        if layout.ident == Ident::Interleaved && !self.gpus_known {
            return Ok(Step::NeedGpus);
        }
        if !terminated
            && !layout.cols.iter().zip(t.split(',')).all(|(c, cell)| cell_ok(c, cell.trim()))
        {
            self.cut_short(no);
            return Ok(Step::Done);
        }
        let Some(tc) = layout.ts_col else {
            self.tally.no_ts_col.bump(no);
            return Ok(Step::Done);
        };
        let ident = layout.ident;
        let stamp = parse_stamp(cell_at(t, tc));
        let instant = matches!(stamp, Some(Stamp::Instant(_)));
        let Some((ts, in_gap)) = stamp.and_then(|s| self.zone.utc_of_stamp(s)) else {
            self.tally.bad_ts.bump(no);
            return Ok(Step::Done);
        };
        if in_gap {
            self.tally.dst_gap.bump(no);
        }
        if let Some(gpu) = self.gpu_of(no, t, ident, ts) {
            self.emit_row(no, t, (ts, instant), gpu, emit);
        }
        Ok(Step::Done)
    }

    /// A line before any header: a data row is an error (a headerless log needs `--columns`),
    /// anything else is counted and skipped.
    fn before_header(&mut self, no: u64, t: &str) -> Result<()> {
        if has_timestamp_cell(t) {
            bail!(
                "{}: line {no} is a data row but the file has no header line (logged with --format=csv,noheader?); \
                 pass the --query-gpu list it was logged with, in order, e.g. --query-gpu=timestamp,utilization.gpu,memory.used \
                 (--columns is the same option)",
                self.disp
            );
        }
        self.tally.garbage.bump(no);
        Ok(())
    }

    /// The GPU of a row: its index cell, its uuid / pci.bus_id cell, or its place in the tick.
    /// None (counted) when the cell cannot say.
    fn gpu_of(&mut self, no: u64, t: &str, ident: Ident, ts: DateTime<Utc>) -> Option<usize> {
        let gpu = match ident {
            Ident::Index(i) => cell_at(t, i).parse::<usize>().ok().filter(|&g| g < MAX_GPUS),
            Ident::Key(i) => {
                let key = cell_at(t, i);
                (!is_missing_marker(key) && key.len() <= 256)
                    .then(|| self.ids.key(key))
                    .flatten()
                    .map(|g| g as usize)
            }
            Ident::Interleaved => {
                let ms = ts.timestamp_micros() as f64 / 1000.0;
                let (g, resynced) = self.phase.slot(ms);
                if resynced {
                    self.tally.resync.bump(no);
                }
                Some(g)
            }
        };
        if gpu.is_none() {
            self.tally.no_ident.bump(no);
        }
        gpu
    }

    /// Fill the row from the cells of line `t` and hand it to `emit`.
    fn emit_row(
        &mut self,
        no: u64,
        t: &str,
        (ts, instant): (DateTime<Utc>, bool),
        gpu: usize,
        emit: &mut dyn FnMut(NvsmiRow<'_>),
    ) {
        let Some(layout) = &self.layout else { return };
        for (i, (col, cell)) in layout.cols.iter().zip(t.split(',')).enumerate() {
            if let ColKind::Field(f) = col.kind
                && f != Field::Index
            {
                let v = self.conv.value(i, col, f, cell.trim(), no);
                self.row.set(f, v);
            }
        }
        if !layout.reasons.is_empty() {
            self.row.set(Field::EventReasons, reason_bits(&layout.reasons, t));
        }
        self.row.set(Field::Index, Value::U(gpu as u64));
        self.ids.mark(gpu);
        self.rows += 1;
        emit(NvsmiRow { ts, row: &self.row, instant });
    }

    /// Decide the GPU count of the interleaved rows held in `lines` (or take `--gpus`).
    pub(super) fn resolve_gpus(&mut self, lines: &VecDeque<Pending>, eof: bool) {
        let note =
            interleave::resolve(&mut self.phase, self.layout.as_ref(), lines, eof, self.forced_k);
        self.gpus_known = true;
        push_capped(&mut self.notes, note);
    }

    pub(super) fn replay(
        &mut self,
        pending: &mut VecDeque<Pending>,
        emit: &mut dyn FnMut(NvsmiRow<'_>),
    ) -> Result<()> {
        while let Some(l) = pending.pop_front() {
            // The GPU count is known now, so no line asks for it again.
            self.process(l.no, &l.text, l.terminated, emit)?;
        }
        Ok(())
    }

    pub(super) fn finish<R>(mut self, lines: &LineReader<R>) -> Result<SmiLogInfo> {
        let d = &self.disp;
        if lines.bytes == 0 {
            bail!("{d}: file is empty");
        }
        let mut w = std::mem::take(&mut self.warnings);
        let t = &self.tally;
        if lines.trailing_nuls > 0 {
            w.insert(
                0,
                format!(
                    "file ends in {} NUL bytes (logger killed mid-write?)",
                    lines.trailing_nuls
                ),
            );
        }
        if lines.inner_nuls > 0 {
            w.push(format!(
                "{} NUL bytes removed from {} line(s) (first: line {})",
                lines.inner_nuls, lines.inner_nul_lines, lines.first_nul_line
            ));
        }
        let ncols = self.layout.as_ref().map_or(0, |l| l.cols.len());
        let tallies = [
            (t.malformed, format!("line(s) with a cell count other than the {ncols} columns of the header skipped")),
            (t.garbage, "line(s) before the header that are not nvidia-smi data skipped".to_string()),
            (t.overlong, format!("line(s) longer than {} KiB skipped", MAX_LINE / 1024)),
            (t.bad_ts, "row(s) with an unreadable timestamp skipped".to_string()),
            (t.no_ts_col, "row(s) under a header without a timestamp column skipped".to_string()),
            (t.no_ident, "row(s) without a readable GPU index / uuid / pci.bus_id skipped".to_string()),
            (t.dst_gap, "timestamp(s) fall in a daylight-saving gap; read with the offset from before it".to_string()),
            (
                t.resync,
                "time(s) the GPU order of interleaved rows lost step (a row missing?); re-synchronised on the sample timing"
                    .to_string(),
            ),
        ];
        for (tally, what) in tallies {
            if tally.n > 0 {
                w.push(format!("{} {what} (first: line {})", tally.n, tally.first));
            }
        }
        w.append(&mut self.conv.warnings);
        if t.repeated_header.n > 0 {
            self.notes.push(format!(
                "{} repeated header line(s) skipped (first: line {}); the GPU order restarts after each",
                t.repeated_header.n, t.repeated_header.first
            ));
        }
        if self.layout.is_none() {
            bail!(
                "{d}: no nvidia-smi header line and no data rows found (not an nvidia-smi --format=csv log?)"
            );
        }
        if self.rows == 0 {
            let why = if w.is_empty() { String::new() } else { format!(": {}", w.join("; ")) };
            bail!("{d}: no data rows{why}");
        }
        Ok(SmiLogInfo {
            rows: self.rows,
            gpus: self.ids.distinct,
            warnings: w,
            columns: self.columns,
            ignored_columns: self.ignored,
            notes: self.notes,
        })
    }
}

/// Cell `i` of a data line, trimmed ("" past the end).
fn cell_at(t: &str, i: usize) -> &str {
    t.split(',').nth(i).map_or("", str::trim)
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// The clock-event bitmask a line's per-reason cells make up (`Active` sets the bit); null when none
/// of them says `Active` or `Not Active`.
fn reason_bits(reasons: &[(usize, u64)], t: &str) -> Value {
    let (mut bits, mut any) = (0, false);
    for (i, cell) in t.split(',').enumerate() {
        let Some(&(_, bit)) = reasons.iter().find(|(k, _)| *k == i) else { continue };
        match cell.trim() {
            "Active" => (bits, any) = (bits | bit, true),
            "Not Active" => any = true,
            _ => {}
        }
    }
    if any { Value::U(bits) } else { Value::Null }
}
