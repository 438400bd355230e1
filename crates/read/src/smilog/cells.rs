//! Cells: `[N/A]` / `[Not Supported]` markers, numbers with or without units (converted to the
//! catalogue's unit), hex bitmasks, text columns (pstate, name, uuid) and whether a cell is whole
//! (to tell a cut last line); one warning per column for cells that cannot be read.

use std::sync::Arc;

use super::header::{Col, ColKind};
use super::push_capped;
use super::time::parse_stamp;
use gpumon_schema::Value;
use gpumon_schema::catalog::{FIELD_COUNT, Field, Ty};

/// A cell without the whitespace and the double quotes around it (a Python `csv` writer's quoting).
pub(super) fn clean(cell: &str) -> &str {
    let c = cell.trim();
    c.strip_prefix('"').and_then(|x| x.strip_suffix('"')).map_or(c, str::trim)
}

/// Whether some cell of `line` is a timestamp.
pub(super) fn has_timestamp_cell(line: &str) -> bool {
    line.split(',').any(|c| parse_stamp(clean(c)).is_some())
}

pub(super) fn is_missing_marker(cell: &str) -> bool {
    cell.is_empty()
        || (cell.starts_with('[') && cell.ends_with(']'))
        || cell.eq_ignore_ascii_case("N/A")
}

fn marker_value(cell: &str) -> Value {
    if cell.eq_ignore_ascii_case("[Not Supported]") { Value::Unsupported } else { Value::Null }
}

/// Factor that converts a value in unit `from` to the catalogue unit `to`.
fn unit_factor(from: &str, to: &str) -> Option<f64> {
    if from == to {
        return Some(1.0);
    }
    let f = match (to, from) {
        ("MiB", "KiB" | "KB" | "kB") => 1.0 / 1024.0,
        ("MiB", "MB" | "mib") => 1.0,
        ("MiB", "GiB" | "GB") => 1024.0,
        ("MiB", "TiB" | "TB") => 1024.0 * 1024.0,
        ("MiB", "B") => 1.0 / (1024.0 * 1024.0),
        ("W", "mW") => 1e-3,
        ("W", "kW") => 1e3,
        ("MHz", "kHz" | "KHz") => 1e-3,
        ("MHz", "GHz") => 1e3,
        ("MHz", "Hz") => 1e-6,
        ("J", "mJ") => 1e-3,
        ("J", "kJ") => 1e3,
        ("KiB/s", "KB/s" | "kB/s") => 1.0,
        ("KiB/s", "MiB/s" | "MB/s") => 1024.0,
        ("KiB/s", "GiB/s" | "GB/s") => 1024.0 * 1024.0,
        ("KiB/s", "B/s") => 1.0 / 1024.0,
        ("C", "°C" | "degC" | "C°") => 1.0,
        _ => return None,
    };
    Some(f)
}

/// `45 %` → (`45`, Some(`%`)); `45%` → same; `0x01` / `45` → (cell, None).
fn split_number_unit(cell: &str) -> (&str, Option<&str>) {
    if let Some((num, unit)) = cell.split_once(' ') {
        let unit = unit.trim();
        return (num, (!unit.is_empty()).then_some(unit));
    }
    if cell.starts_with("0x") || cell.starts_with("0X") {
        return (cell, None);
    }
    match cell.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E'))) {
        Some(i) if i > 0 => (&cell[..i], Some(&cell[i..])),
        _ => (cell, None),
    }
}

/// Typed value of a numeric cell (not a missing marker) for field `f`.
fn numeric_value(f: Field, header_unit: Option<&str>, cell: &str) -> Option<Value> {
    let def = f.def();
    let (num, unit) = split_number_unit(cell);
    let factor = match unit.or(header_unit) {
        None => 1.0,
        Some(u) => unit_factor(u, def.unit)?,
    };
    let max = match def.ty {
        Ty::I16 => u64::from(u8::MAX),
        Ty::Bool => 1,
        Ty::I32 => u64::from(u32::MAX),
        Ty::I64 => u64::MAX,
        Ty::F64 => {
            let x: f64 = num.parse().ok()?;
            let y = x * factor;
            return y.is_finite().then_some(Value::F(y));
        }
        Ty::Str | Ty::Timestamp => return None,
    };
    if let Some(hex) = num.strip_prefix("0x").or_else(|| num.strip_prefix("0X")) {
        let v = u64::from_str_radix(hex, 16).ok()?;
        return (v <= max).then_some(Value::U(v));
    }
    if factor == 1.0
        && let Ok(v) = num.parse::<u64>()
    {
        return (v <= max).then_some(Value::U(v));
    }
    let x: f64 = num.parse().ok()?;
    let y = (x * factor).round();
    (y.is_finite() && y >= 0.0 && y <= max as f64).then_some(Value::U(y as u64))
}

/// Whether a cell can be read for column `col` (used to tell a cut last line).
pub(super) fn cell_ok(col: &Col, cell: &str) -> bool {
    match col.kind {
        ColKind::Ts => parse_stamp(cell).is_some(),
        ColKind::Field(f) => {
            if cell.is_empty() {
                return false;
            }
            if is_missing_marker(cell)
                || matches!(f.def().ty, Ty::Str | Ty::Timestamp)
                || f == Field::Index
            {
                return true;
            }
            numeric_value(f, col.unit.as_deref(), cell).is_some()
        }
        ColKind::Ignored => !cell.is_empty(),
    }
}

/// Cell conversion with a per-column string cache and one warning per field.
pub(super) struct Conv {
    cache: Vec<Option<Arc<str>>>,
    warned: [bool; FIELD_COUNT],
    pub(super) warnings: Vec<String>,
    /// Cells that say the GPU failed (`[GPU is lost]`, `[Unknown Error]`), by marker.
    failures: Vec<Failures>,
}

/// The cells of one marker that says the GPU failed.
struct Failures {
    marker: &'static str,
    /// How many.
    count: u64,
    /// The file line of the first.
    first: u64,
}

/// Markers nvidia-smi writes when the GPU itself failed, not when a value is merely unavailable.
const FAILURE_MARKERS: [&str; 2] = ["[GPU is lost]", "[Unknown Error]"];

impl Conv {
    pub(super) fn new() -> Conv {
        Conv {
            cache: Vec::new(),
            warned: [false; FIELD_COUNT],
            warnings: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Count a cell that says the GPU failed.
    fn failure(&mut self, cell: &str, line: u64) {
        let Some(m) = FAILURE_MARKERS.iter().find(|m| m.eq_ignore_ascii_case(cell)) else { return };
        match self.failures.iter_mut().find(|f| f.marker == *m) {
            Some(f) => f.count += 1,
            None => self.failures.push(Failures { marker: m, count: 1, first: line }),
        }
    }

    /// The warnings: unreadable cells, then cells that say the GPU failed.
    pub(super) fn take_warnings(&mut self) -> Vec<String> {
        let mut w = std::mem::take(&mut self.warnings);
        for Failures { marker: m, count: n, first } in &self.failures {
            w.push(format!(
                "{n} `{m}` cell(s) (first: line {first}): nvidia-smi could not reach the GPU; read as missing values"
            ));
        }
        w
    }

    /// Forget the cached strings: the columns changed (`ncols` of them now).
    pub(super) fn reset(&mut self, ncols: usize) {
        self.cache = vec![None; ncols];
    }

    pub(super) fn value(&mut self, i: usize, col: &Col, f: Field, cell: &str, line: u64) -> Value {
        if is_missing_marker(cell) {
            self.failure(cell, line);
            return marker_value(cell);
        }
        match f.def().ty {
            Ty::Str | Ty::Timestamp => {
                if let Some(Some(s)) = self.cache.get(i)
                    && &**s == cell
                {
                    return Value::S(s.clone());
                }
                let s: Arc<str> = Arc::from(cell);
                if let Some(slot) = self.cache.get_mut(i) {
                    *slot = Some(s.clone());
                }
                Value::S(s)
            }
            _ => match numeric_value(f, col.unit.as_deref(), cell) {
                Some(v) => v,
                None => {
                    if !self.warned[f as usize] {
                        self.warned[f as usize] = true;
                        let shown: String = cell.chars().take(40).collect();
                        let unit = f.def().unit;
                        let want =
                            if unit.is_empty() { String::new() } else { format!(" [{unit}]") };
                        push_capped(
                            &mut self.warnings,
                            format!(
                                "column {}: cannot read `{shown}` as {}{want} (line {line}); such cells are left empty",
                                col.name,
                                f.name()
                            ),
                        );
                    }
                    Value::Null
                }
            },
        }
    }
}
