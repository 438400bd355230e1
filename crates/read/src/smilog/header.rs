//! Header lines: recognising one (nvidia-smi query names, optionally with a `[unit]`), mapping its
//! columns to catalogue fields (the timestamp column, ignored names, the units of `nounits` cells)
//! and deciding how rows name their GPU (index, uuid / pci.bus_id, or interleaved).

use gpumon_schema::catalog::{CLOCK_EVENT_REASONS, Field, Source};

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
            let kind = match Field::lookup(name).filter(|_| !is_skip(name)) {
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

/// A name that skips its column: empty (pandas' index column) or `_`.
pub(super) fn is_skip(name: &str) -> bool {
    name.is_empty() || name == "_"
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    is_skip(name)
        || (name.len() <= 128
            && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.'))
}

/// Names as written and header cells of a line of column names.
type Names = (Vec<(String, Option<String>)>, Vec<String>);

/// A line of column names: every cell a name (letters, digits, `_`, `.`; optionally `[unit]`; an
/// empty cell or `_` skips its column), at least one of them not skipped. Known or not.
pub(super) fn parse_names(line: &str) -> Option<Names> {
    let mut names = Vec::new();
    let mut header = Vec::new();
    for cell in line.split(',') {
        let cell = cell.trim().trim_matches('"');
        let (name, unit) = split_name_unit(cell);
        if !valid_name(name) {
            return None;
        }
        names.push((name.to_string(), unit.map(str::to_string)));
        header.push(cell.to_string());
    }
    names.iter().any(|(n, _)| !is_skip(n)).then_some((names, header))
}

/// A header line: a line of names ([`parse_names`]), at least one an nvidia-smi query name.
pub(super) fn parse_header(line: &str) -> Option<Layout> {
    let (names, header) = parse_names(line)?;
    let known = names.iter().any(|(n, _)| !is_skip(n) && Field::lookup(n).is_some());
    known.then(|| Layout::from_names(&names, header))
}

/// `layout` with one more column in front: a script's own time column before nvidia-smi's cells
/// (the time column when the header has none, else skipped).
pub(super) fn with_leading_time(layout: &Layout) -> Layout {
    let first = if layout.ts_col.is_none() { "timestamp" } else { "_" };
    let names: Vec<(String, Option<String>)> = std::iter::once((first.to_string(), None))
        .chain(layout.cols.iter().map(|c| (c.name.clone(), c.unit.clone())))
        .collect();
    Layout::from_names(&names, layout.header.clone())
}

/// `layout` with column `i` read as the time column (a column of the writer's own name that holds
/// timestamps, under a header without `timestamp`).
pub(super) fn with_time_at(layout: &Layout, i: usize) -> Layout {
    let names: Vec<(String, Option<String>)> = layout
        .cols
        .iter()
        .enumerate()
        .map(|(k, c)| {
            (if k == i { "timestamp".to_string() } else { c.name.clone() }, c.unit.clone())
        })
        .collect();
    Layout::from_names(&names, layout.header.clone())
}

/// The nvidia-smi name a writer's own column name most likely means (`utilization_gpu_percent` →
/// `utilization.gpu`, `power_W` → `power.draw`), for the hint of an error; None when no guess.
pub(super) fn guess_name(name: &str) -> Option<&'static str> {
    let mut n = name.to_ascii_lowercase().replace(['-', ' '], "_");
    for suffix in ["_percent", "_pct", "_perc", "_c", "_w", "_watts", "_mib", "_mb", "_mhz", "_%"] {
        if let Some(s) = n.strip_suffix(suffix) {
            n = s.to_string();
            break;
        }
    }
    let dotted = n.replace('_', ".");
    // Only what an nvidia-smi log can hold: `mem_used` is the GPU's memory.used, not the host's mem.used.
    let in_a_log =
        |f: &Field| matches!(f.def().source, Source::Gpu | Source::Meta) || *f == Field::Index;
    if let Some(f) =
        Field::lookup(&n).filter(in_a_log).or_else(|| Field::lookup(&dotted).filter(in_a_log))
    {
        return Some(f.name());
    }
    let f = match n.as_str() {
        "temperature" | "temp" | "gpu_temp" | "temperature_gpu" | "gpu_temperature" => {
            Field::TempGpu
        }
        "power" | "power_draw" | "gpu_power" => Field::PowerDraw,
        "util" | "gpu_util" | "utilization" | "gpu_utilization" | "util_gpu" => Field::UtilGpu,
        "mem" | "mem_used" | "memory" | "gpu_mem" | "gpu_memory_used" | "used_memory" => {
            Field::MemUsed
        }
        "gpu" | "gpu_id" | "device" | "gpu_idx" => Field::Index,
        "time" | "ts" | "date" | "datetime" => Field::Timestamp,
        _ => return None,
    };
    Some(f.name())
}

/// The layout `--columns` names (comma-separated names in one or more arguments, `[unit]` allowed;
/// `_` or an empty name skips a column, a trailing empty one is dropped); None when it names no
/// column.
pub(super) fn columns_layout(cols: &[String]) -> Option<Layout> {
    let mut names = Vec::new();
    let mut header = Vec::new();
    for c in cols.iter().flat_map(|c| c.split(',')).map(str::trim) {
        let (name, unit) = split_name_unit(c);
        names.push((name.to_string(), unit.map(str::to_string)));
        header.push(c.to_string());
    }
    while names.last().is_some_and(|(n, _)| n.is_empty()) {
        names.pop();
        header.pop();
    }
    names.iter().any(|(n, _)| !is_skip(n)).then(|| Layout::from_names(&names, header))
}

#[cfg(test)]
mod guess_tests {
    use super::guess_name;

    #[test]
    fn writers_names_are_guessed_as_what_a_log_can_hold() {
        for (own, ours) in [
            ("mem_used_mb", "memory.used"),
            ("mem_used", "memory.used"),
            ("utilization_gpu_percent", "utilization.gpu"),
            ("power_W", "power.draw"),
            ("temperature_C", "temperature.gpu"),
            ("gpu", "index"),
            ("time", "timestamp"),
        ] {
            assert_eq!(guess_name(own), Some(ours), "{own}");
        }
        // A host field's name is never what a column of a GPU log means.
        assert_eq!(guess_name("cpu_util"), None);
    }
}
