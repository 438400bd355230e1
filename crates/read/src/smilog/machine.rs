//! The line-by-line state machine: the current header (from the file or `--columns`; repeated
//! headers skipped, changed ones switch the mapping, so appended runs read on), each data row's
//! GPU and values, the counts of skipped lines, and the report at the end.

use std::collections::{HashMap, VecDeque};

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::cells::has_timestamp_cell;
use super::cells::{Conv, cell_ok, clean, is_missing_marker};
use super::header::{
    ColKind, Ident, Layout, columns_layout, guess_name, is_skip, parse_header, parse_names,
    with_leading_time, with_time_at,
};
use super::interleave::{self, Phase};
use super::lines::{LineReader, MAX_LINE, Pending};
use super::time::{Stamp, ZoneCache, parse_stamp};
use super::{NvsmiOptions, NvsmiRow, SmiLogInfo, push_capped};
use gpumon_schema::catalog::Field;
use gpumon_schema::{Row, Value};
use gpumon_util::{ReadError, ReadErrorKind};

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
    /// Header lines `--columns` stands in for.
    replaced_header: Tally,
    /// Lines without a comma among the rows: `date` lines, separators.
    between: Tally,
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
    /// `--columns` was given: it names the columns over any header line of the file.
    columns_given: bool,
    gpus_known: bool,
    /// The index column was checked for an index repeated within one timestamp.
    index_checked: bool,
    /// It was: GPUs are read as interleaved, not from that column.
    distrust_index: bool,
    /// The layout got a leading time column (one cell more than the header names).
    widened: bool,
    /// The time of the last `date` line, for rows without a timestamp column.
    last_stamp: Option<Stamp>,
    /// The first line of names none of which gpumon knows (line, text), for the error.
    unknown_names: Option<(u64, String)>,
    /// The first row whose timestamp cell could not be read: its column and cell.
    bad_ts_cell: Option<(String, String)>,
    /// The last data row read (its text): a last line without its newline whose cells lack the
    /// units this row's cells carry (`5` under `55 %`) was cut while being written.
    prev_row: String,
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
            return Err(ReadError::new(
                ReadErrorKind::Usage,
                disp,
                format_args!("--interleaved-gpus must be between 1 and {MAX_GPUS}, not {g}"),
            )
            .into());
        }
        let mut p = Parser {
            disp,
            zone: ZoneCache::new(opts.tz.clone()),
            forced_k: opts.gpus,
            layout: None,
            columns_given: false,
            gpus_known: false,
            index_checked: false,
            distrust_index: false,
            widened: false,
            last_stamp: None,
            unknown_names: None,
            bad_ts_cell: None,
            prev_row: String::new(),
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
                return Err(
                    ReadError::new(ReadErrorKind::Usage, p.disp, "--columns is empty").into()
                );
            };
            p.set_layout(layout);
            p.columns_given = true;
        }
        Ok(p)
    }

    fn set_layout(&mut self, mut layout: Layout) {
        if self.distrust_index && matches!(layout.ident, Ident::Index(_)) {
            layout.ident = Ident::Interleaved;
        }
        for c in &layout.cols {
            match c.kind {
                ColKind::Ts => push_unique(&mut self.columns, Field::Timestamp.name()),
                ColKind::Field(f) => push_unique(&mut self.columns, f.name()),
                ColKind::Ignored => {
                    if self.ignored.len() < MAX_IGNORED && !is_skip(&c.name) {
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
            push_capped(
                &mut self.notes,
                format!(
                    "line {no}: a header line with different columns; the rest is read with them"
                ),
            );
        }
        self.widened = false;
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
        if t.is_empty() || self.names_line(no, t) || self.lone_line(no, t, terminated) {
            return Ok(Step::Done);
        }
        let Some(layout) = &self.layout else {
            return self.before_header(no, t).map(|()| Step::Done);
        };
        let ncols = layout.cols.len();
        let ncells = t.bytes().filter(|&b| b == b',').count() + 1;
        if ncells != ncols {
            if ncells == ncols + 1 && self.leading_time(no, t) {
                return self.process(no, text, terminated, emit);
            }
            if !terminated && ncells < ncols {
                self.cut_short(no);
            } else {
                self.tally.malformed.bump(no);
            }
            return Ok(Step::Done);
        }
        if layout.ts_col.is_none() && self.last_stamp.is_none() && self.time_column(no, t) {
            return self.process(no, text, terminated, emit);
        }
        let Some(layout) = &self.layout else { return Ok(Step::Done) };
        if (layout.ident == Ident::Interleaved && !self.gpus_known)
            || (matches!(layout.ident, Ident::Index(_)) && !self.index_checked)
        {
            return Ok(Step::NeedGpus);
        }
        if !terminated
            && (!layout.cols.iter().zip(t.split(',')).all(|(c, cell)| cell_ok(c, clean(cell)))
                || !same_units(&self.prev_row, t))
        {
            self.cut_short(no);
            return Ok(Step::Done);
        }
        let ident = layout.ident;
        let stamp = match layout.ts_col {
            Some(tc) => parse_stamp(cell_at(t, tc)),
            None if self.last_stamp.is_some() => self.last_stamp,
            None => {
                self.tally.no_ts_col.bump(no);
                return Ok(Step::Done);
            }
        };
        let instant = matches!(stamp, Some(Stamp::Instant(_)));
        let Some((ts, in_gap)) = stamp.and_then(|s| self.zone.utc_of_stamp(s)) else {
            self.bad_ts(no, t);
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

    /// A line of column names: a header (known names), one `--columns` stands in for, or one of
    /// names gpumon does not know (remembered for the error). False: not a line of names.
    fn names_line(&mut self, no: u64, t: &str) -> bool {
        let Some((names, _)) = parse_names(t) else { return false };
        if self.columns_given {
            let ncols = self.layout.as_ref().map_or(0, |l| l.cols.len());
            let own = names.iter().all(|(n, _)| is_skip(n) || Field::lookup(n).is_some());
            let fits = names.len() == ncols || names.len() + 1 == ncols;
            if fits && !own {
                self.tally.replaced_header.bump(no);
                self.phase.restart();
                return true;
            }
            // nvidia-smi's own header, or one of another width (a directory of logs, some
            // headerless): the file's header says best what its columns are.
            let why = if own {
                "the file has its own header line".to_string()
            } else {
                format!("the file's header has {} columns, --columns names {ncols}", names.len())
            };
            push_capped(
                &mut self.warnings,
                format!("line {no}: {why}; it is used instead of --columns"),
            );
            self.columns_given = false;
            self.layout = None;
            if self.rows == 0 {
                self.columns.clear();
                self.ignored.clear();
            }
        }
        if let Some(h) = parse_header(t) {
            self.on_header(no, h);
        } else if self.unknown_names.is_none() {
            self.unknown_names = Some((no, t.chars().take(200).collect()));
        }
        true
    }

    /// A whole line without a comma among rows of several columns: a `date` line (its time dates
    /// the rows after it that have no timestamp column) or a separator, skipped. False: not one.
    fn lone_line(&mut self, no: u64, t: &str, terminated: bool) -> bool {
        if t.contains(',') || !terminated || self.layout.as_ref().is_some_and(|l| l.cols.len() < 2)
        {
            return false;
        }
        let stamp = parse_stamp(t);
        if stamp.is_none() && self.layout.is_none() {
            return false;
        }
        if stamp.is_some() {
            self.last_stamp = stamp;
        }
        self.tally.between.bump(no);
        true
    }

    /// One cell more than the header names, the first a time: a script put its own time column in
    /// front of nvidia-smi's cells. Read it so from here on (once). False: not that.
    fn leading_time(&mut self, no: u64, t: &str) -> bool {
        let Some(layout) = &self.layout else { return false };
        if self.columns_given || self.widened || parse_stamp(cell_at(t, 0)).is_none() {
            return false;
        }
        let what = if layout.ts_col.is_none() { "the time column" } else { "skipped" };
        let wide = with_leading_time(layout);
        self.widened = true;
        self.set_layout(wide);
        push_capped(
            &mut self.notes,
            format!(
                "line {no}: one cell more than the header names, the first a time (a script's own time column); read as {what}"
            ),
        );
        true
    }

    /// Under a header without `timestamp`, the first column of the writer's own name whose cell in
    /// row `t` is a time (`time`, `date`, ...) becomes the time column. False: none.
    fn time_column(&mut self, no: u64, t: &str) -> bool {
        let Some(layout) = &self.layout else { return false };
        let Some(i) = layout.cols.iter().enumerate().position(|(i, c)| {
            c.kind == ColKind::Ignored && !is_skip(&c.name) && parse_stamp(cell_at(t, i)).is_some()
        }) else {
            return false;
        };
        let name = layout.cols[i].name.clone();
        let timed = with_time_at(layout, i);
        self.ignored.retain(|c| *c != name);
        self.set_layout(timed);
        push_capped(
            &mut self.notes,
            format!("line {no}: column {name} holds times; read as the time column"),
        );
        true
    }

    /// A row whose timestamp cell cannot be read: counted, the first one's column and cell kept.
    fn bad_ts(&mut self, no: u64, t: &str) {
        self.tally.bad_ts.bump(no);
        if self.bad_ts_cell.is_none()
            && let Some(l) = &self.layout
            && let Some(tc) = l.ts_col
        {
            let cell: String = cell_at(t, tc).chars().take(40).collect();
            self.bad_ts_cell = Some((l.cols[tc].name.clone(), cell));
        }
    }

    /// A line before any header: a data row is an error (a headerless log needs `--columns`),
    /// anything else is counted and skipped.
    fn before_header(&mut self, no: u64, t: &str) -> Result<()> {
        if has_timestamp_cell(t) {
            if let Some((hno, names)) = &self.unknown_names {
                return Err(self.error(
                    ReadErrorKind::Unsupported,
                    format_args!(
                        "the header on line {hno} (`{names}`) names no nvidia-smi query field gpumon reads; \
                         name the file's columns in order with --columns (nvidia-smi names, `_` to skip one), e.g. --columns {}",
                        suggest(names)
                    ),
                ));
            }
            return Err(self.error(
                ReadErrorKind::Malformed,
                format_args!(
                    "line {no} is a data row but the file has no header line (logged with --format=csv,noheader?); \
                     pass the --query-gpu list it was logged with, in order, e.g. --query-gpu=timestamp,utilization.gpu,memory.used \
                     (--columns is the same option; `_` skips a column, such as a time column a script wrote in front)"
                ),
            ));
        }
        self.tally.garbage.bump(no);
        Ok(())
    }

    /// The GPU of a row: its index cell, its uuid / pci.bus_id cell, or its place in the tick.
    /// None (counted) when the cell cannot say.
    fn gpu_of(&mut self, no: u64, t: &str, ident: Ident, ts: DateTime<Utc>) -> Option<usize> {
        let gpu = match ident {
            Ident::Index(i) => index_of(cell_at(t, i)),
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
                let v = self.conv.value(i, col, f, clean(cell), no);
                self.row.set(f, v);
            }
        }
        if !layout.reasons.is_empty() {
            self.row.set(Field::EventReasons, reason_bits(&layout.reasons, t));
        }
        self.row.set(Field::Index, Value::U(gpu as u64));
        self.ids.mark(gpu);
        self.rows += 1;
        self.prev_row.clear();
        self.prev_row.push_str(t);
        emit(NvsmiRow { ts, row: &self.row, instant });
    }

    /// Decide the GPU count of the interleaved rows held in `lines` (or take `--interleaved-gpus`);
    /// under an index column, first check that no index repeats within one timestamp.
    pub(super) fn resolve_gpus(&mut self, lines: &VecDeque<Pending>, eof: bool) {
        if !self.index_checked
            && let Some(layout) = &mut self.layout
            && let Ident::Index(ic) = layout.ident
        {
            self.index_checked = true;
            let Some((no, ts)) = index_repeat(layout, ic, lines) else { return };
            let name = &layout.cols[ic].name;
            push_capped(
                &mut self.warnings,
                format!(
                    "column {name}: the same index twice at {ts} (line {no}): it does not tell the GPUs apart \
                     (a mislabelled column?), so GPUs are inferred as interleaved rows instead (--interleaved-gpus N to say how many)"
                ),
            );
            self.distrust_index = true;
            layout.ident = Ident::Interleaved;
            self.phase.restart();
        }
        let mut note =
            interleave::resolve(&mut self.phase, self.layout.as_ref(), lines, eof, self.forced_k);
        if self.distrust_index {
            note =
                note.replacen(interleave::NO_IDENT, "an index that repeats within a timestamp", 1);
        }
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

    /// An error of `kind` naming this file: `{file}: {what}`.
    fn error(&self, kind: ReadErrorKind, what: impl std::fmt::Display) -> anyhow::Error {
        ReadError::new(kind, self.disp.clone(), what).into()
    }

    pub(super) fn finish<R>(mut self, lines: &LineReader<R>) -> Result<SmiLogInfo> {
        if lines.bytes == 0 {
            return Err(self.error(ReadErrorKind::Malformed, "file is empty"));
        }
        let mut w = std::mem::take(&mut self.warnings);
        let t = &self.tally;
        // UTF-16's last `\n` leaves one NUL byte (its high half) after the last line break.
        if lines.trailing_nuls > u64::from(lines.utf16) {
            w.insert(
                0,
                format!(
                    "file ends in {} NUL bytes (logger killed mid-write?)",
                    lines.trailing_nuls
                ),
            );
        }
        if lines.utf16 {
            self.notes.push("read as UTF-16 text (as PowerShell's `>` writes)".to_string());
        } else if lines.inner_nuls > 0 {
            w.push(format!(
                "{} NUL bytes removed from {} line(s) (first: line {})",
                lines.inner_nuls, lines.inner_nul_lines, lines.first_nul_line
            ));
        }
        let ncols = self.layout.as_ref().map_or(0, |l| l.cols.len());
        let of = if self.columns_given { "--columns names" } else { "the header names" };
        let bad_ts = match &self.bad_ts_cell {
            Some((col, cell)) => format!(
                "row(s) whose {col} cell is not a timestamp gpumon reads (first: `{cell}`; it reads nvidia-smi's \
                 YYYY/MM/DD HH:MM:SS.mmm, ISO 8601 with or without Z or an offset, epoch seconds or milliseconds, date's format) skipped"
            ),
            None => "row(s) with an unreadable timestamp skipped".to_string(),
        };
        let tallies = [
            (t.malformed, format!("line(s) with a cell count other than the {ncols} columns {of} skipped")),
            (t.garbage, "line(s) before the header that are not nvidia-smi data skipped".to_string()),
            (t.overlong, format!("line(s) longer than {} KiB skipped", MAX_LINE / 1024)),
            (t.bad_ts, bad_ts),
            (
                t.no_ts_col,
                "row(s) without a timestamp column skipped (name the time column `timestamp`, with --columns if need be)"
                    .to_string(),
            ),
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
        w.append(&mut self.conv.take_warnings());
        self.tally_notes();
        if self.layout.is_none() {
            return Err(self.error(
                ReadErrorKind::Unsupported,
                "no nvidia-smi header line and no data rows found (not an nvidia-smi --format=csv log? \
                 a log without a header needs --columns, the --query-gpu list it was logged with)",
            ));
        }
        if self.rows == 0 {
            let why = if w.is_empty() { String::new() } else { format!(": {}", w.join("; ")) };
            return Err(self.error(ReadErrorKind::Malformed, format_args!("no data rows{why}")));
        }
        self.check_columns(&mut w)?;
        Ok(SmiLogInfo {
            gpus_by: self.gpus_by(),
            rows: self.rows,
            gpus: self.ids.distinct,
            warnings: w,
            columns: self.columns,
            ignored_columns: self.ignored,
            notes: self.notes,
        })
    }
}

impl Parser {
    /// How rows were told apart by GPU, for the report.
    fn gpus_by(&self) -> String {
        match self.layout.as_ref().map(|l| (l.ident, l)) {
            Some((Ident::Index(i) | Ident::Key(i), l)) => format!("the {} column", l.cols[i].name),
            _ => "interleaving (rows of one sample in GPU order)".to_string(),
        }
    }

    /// The notes of the lines skipped on purpose: headers `--columns` stands in for, `date` lines
    /// and separators, repeated headers.
    fn tally_notes(&mut self) {
        let t = &self.tally;
        let notes = [
            (t.replaced_header, "header line(s) read as --columns names them", ""),
            (
                t.between,
                "line(s) among the rows without a comma (a `date` line, a separator) skipped",
                "",
            ),
            (
                t.repeated_header,
                "repeated header line(s) skipped",
                "; the GPU order restarts after each",
            ),
        ];
        for (tally, what, after) in notes {
            if tally.n > 0 {
                self.notes.push(format!("{} {what} (first: line {}){after}", tally.n, tally.first));
            }
        }
    }

    /// Columns that are not nvidia-smi query names: an error when no metric column is left (they
    /// are listed with a `--columns` to name them), else a warning naming them.
    fn check_columns(&self, w: &mut Vec<String>) -> Result<()> {
        let Some(layout) = &self.layout else { return Ok(()) };
        let metric = |c: &String| {
            Field::lookup(c).is_some_and(|f| {
                !matches!(
                    f,
                    Field::Timestamp | Field::Index | Field::Uuid | Field::PciBusId | Field::Name
                )
            })
        };
        let header: Vec<String> = layout
            .cols
            .iter()
            .map(|c| match &c.unit {
                Some(u) => format!("{} [{u}]", c.name),
                None => c.name.clone(),
            })
            .collect();
        let hint = format!(
            "name the file's columns in order with --columns (nvidia-smi query names, `_` to skip one), e.g. --columns {}",
            suggest(&header.join(","))
        );
        let listed = self.ignored.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ");
        if !self.columns.iter().any(metric) {
            let what = if listed.is_empty() {
                "it has no metric column".to_string()
            } else {
                format!("{listed} are not nvidia-smi query names")
            };
            return Err(self.error(
                ReadErrorKind::Unsupported,
                format_args!("no column gpumon can read as a GPU metric: {what}; {hint}"),
            ));
        }
        if !listed.is_empty() {
            let guesses: Vec<String> = self
                .ignored
                .iter()
                .filter_map(|c| guess_name(c).map(|g| format!("`{c}` may be {g}")))
                .collect();
            let guesses = if guesses.is_empty() {
                String::new()
            } else {
                format!(" ({})", guesses.join(", "))
            };
            w.push(format!(
                "column(s) {listed} are not nvidia-smi query names, ignored{guesses}; to read them, \
                 name the file's columns in order with --columns (`_` skips one)"
            ));
        }
        Ok(())
    }
}

/// The first row (line, timestamp) of `lines` whose index cell (column `ic`) repeats one of the
/// same timestamp (and host, when there is a host column), under `layout`.
fn index_repeat(layout: &Layout, ic: usize, lines: &VecDeque<Pending>) -> Option<(u64, String)> {
    let tc = layout.ts_col?;
    let ncols = layout.cols.len();
    // Rows of several hosts in one file (a `hostname` column) may share a timestamp and an index.
    let hc = layout.cols.iter().position(|c| c.kind == ColKind::Field(Field::Host));
    let mut cur = String::new();
    let mut seen: Vec<String> = Vec::new();
    for l in lines {
        let t = l.text.trim();
        if t.bytes().filter(|&b| b == b',').count() + 1 != ncols || !l.terminated {
            continue;
        }
        let (ts, ix) = (cell_at(t, tc), cell_at(t, ic));
        if ts != cur {
            cur = ts.to_string();
            seen.clear();
        }
        let key = match hc {
            Some(h) => format!("{ix}@{}", cell_at(t, h)),
            None => ix.to_string(),
        };
        if seen.contains(&key) {
            return Some((l.no, cur));
        }
        seen.push(key);
    }
    None
}

/// A `--columns` list for a header of a writer's own names: each name as gpumon would guess it,
/// `_` for those it cannot.
fn suggest(names: &str) -> String {
    names
        .split(',')
        .map(|n| {
            let n = n.trim();
            let (base, _) = n.split_once('[').unwrap_or((n, ""));
            let base = base.trim();
            Field::lookup(base).map(|f| f.name()).or_else(|| guess_name(base)).unwrap_or("_")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether the cells of `row` end in a unit (`55 %`, `1000 MiB`) where those of `prev` do, cell by
/// cell (true when there is no earlier row): a cell cut inside its number loses its unit.
fn same_units(prev: &str, row: &str) -> bool {
    let unit = |c: &str| c.trim().ends_with(|ch: char| ch.is_ascii_alphabetic() || ch == '%');
    let marker = |c: &str| c.trim().starts_with('[');
    prev.is_empty()
        || prev.split(',').zip(row.split(',')).all(|(a, b)| !unit(a) || unit(b) || marker(b))
}

/// A GPU index cell: `3`, or `3.0` as pandas writes an integer column that had a gap.
fn index_of(cell: &str) -> Option<usize> {
    let g = match cell.parse::<usize>() {
        Ok(g) => g,
        Err(_) => {
            let x: f64 = cell.parse().ok()?;
            if x.fract() != 0.0 || !(0.0..MAX_GPUS as f64).contains(&x) {
                return None;
            }
            x as usize
        }
    };
    (g < MAX_GPUS).then_some(g)
}

/// Cell `i` of a data line, trimmed ("" past the end).
fn cell_at(t: &str, i: usize) -> &str {
    t.split(',').nth(i).map_or("", clean)
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
        match clean(cell) {
            "Active" => (bits, any) = (bits | bit, true),
            "Not Active" => any = true,
            _ => {}
        }
    }
    if any { Value::U(bits) } else { Value::Null }
}
