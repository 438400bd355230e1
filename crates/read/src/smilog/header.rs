//! Header lines: recognising one (nvidia-smi query names, optionally with a `[unit]`), mapping its
//! columns to catalogue fields (the timestamp column, ignored names, the units of `nounits` cells)
//! and deciding how rows name their GPU (index, uuid / pci.bus_id, or interleaved).

use gpumon_schema::catalog::{CLOCK_EVENT_REASONS, Field};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum ColKind {
    Ts,
    Field(Field),
    Ignored,
}

#[derive(Debug, Clone)]
pub(super) struct Col {
    pub(super) kind: ColKind,
    /// Name as written (without the unit).
    pub(super) name: String,
    /// Unit from the header (`[MiB]`), used for cells written without one (`nounits`).
    pub(super) unit: Option<String>,
}

/// How rows are assigned to GPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Ident {
    /// An `index` column.
    Index(usize),
    /// A `uuid` or `pci.bus_id` column: GPUs numbered in order of first appearance.
    Key(usize),
    /// Neither: GPUs are interleaved in a fixed order within each tick.
    Interleaved,
}

#[derive(Debug, Clone)]
pub(super) struct Layout {
    /// Header cells as written (trimmed), to recognise a repeated header.
    pub(super) header: Vec<String>,
    pub(super) cols: Vec<Col>,
    pub(super) ts_col: Option<usize>,
    pub(super) ident: Ident,
    /// Per-reason columns (`clocks_event_reasons.hw_thermal_slowdown`: `Active` / `Not Active`) and
    /// their bits, when the log has no `clocks_event_reasons.active` bitmask: they make it up.
    pub(super) reasons: Vec<(usize, u64)>,
}

/// The bit of a per-reason column, in either spelling (`clocks_event_reasons.` or the older
/// `clocks_throttle_reasons.`).
fn reason_bit(name: &str) -> Option<u64> {
    let r = name
        .strip_prefix("clocks_event_reasons.")
        .or_else(|| name.strip_prefix("clocks_throttle_reasons."))?;
    CLOCK_EVENT_REASONS.iter().find(|(_, n)| n.eq_ignore_ascii_case(r)).map(|(b, _)| *b)
}

impl Layout {
    fn from_names(names: &[(String, Option<String>)], header: Vec<String>) -> Layout {
        let mut cols = Vec::with_capacity(names.len());
        let mut ts_col = None;
        for (i, (name, unit)) in names.iter().enumerate() {
            let kind = match Field::lookup(name) {
                Some(Field::Timestamp) if ts_col.is_none() => {
                    ts_col = Some(i);
                    ColKind::Ts
                }
                Some(Field::Timestamp) | None => ColKind::Ignored,
                Some(f) => ColKind::Field(f),
            };
            cols.push(Col { kind, name: name.clone(), unit: unit.clone() });
        }
        let find = |f: Field| cols.iter().position(|c| c.kind == ColKind::Field(f));
        let reasons = match find(Field::EventReasons) {
            Some(_) => Vec::new(),
            None => cols
                .iter()
                .enumerate()
                .filter_map(|(i, c)| reason_bit(&c.name).map(|b| (i, b)))
                .collect(),
        };
        let ident = if let Some(i) = find(Field::Index) {
            Ident::Index(i)
        } else if let Some(i) = find(Field::Uuid).or_else(|| find(Field::PciBusId)) {
            Ident::Key(i)
        } else {
            Ident::Interleaved
        };
        Layout { header, cols, ts_col, ident, reasons }
    }
}

/// `name [unit]` → (`name`, Some(`unit`)); plain `name` → (`name`, None).
fn split_name_unit(cell: &str) -> (&str, Option<&str>) {
    if let Some(body) = cell.strip_suffix(']')
        && let Some((name, unit)) = body.rsplit_once('[')
        && !unit.contains(']')
    {
        let unit = unit.trim();
        return (name.trim(), (!unit.is_empty()).then_some(unit));
    }
    (cell, None)
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 128
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// A header line: every cell an nvidia-smi style query name (optionally `[unit]`), at least one known.
pub(super) fn parse_header(line: &str) -> Option<Layout> {
    let mut names = Vec::new();
    let mut header = Vec::new();
    let mut known = false;
    for cell in line.split(',') {
        let cell = cell.trim();
        let (name, unit) = split_name_unit(cell);
        if !valid_name(name) {
            return None;
        }
        known |= Field::lookup(name).is_some();
        names.push((name.to_string(), unit.map(str::to_string)));
        header.push(cell.to_string());
    }
    known.then(|| Layout::from_names(&names, header))
}

/// The layout `--columns` names (comma-separated names in one or more arguments, `[unit]` allowed);
/// None when it names no column.
pub(super) fn columns_layout(cols: &[String]) -> Option<Layout> {
    let mut names = Vec::new();
    let mut header = Vec::new();
    for c in cols.iter().flat_map(|c| c.split(',')).map(str::trim).filter(|c| !c.is_empty()) {
        let (name, unit) = split_name_unit(c);
        names.push((name.to_string(), unit.map(str::to_string)));
        header.push(c.to_string());
    }
    (!names.is_empty()).then(|| Layout::from_names(&names, header))
}
