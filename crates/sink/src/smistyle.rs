//! nvidia-smi style output: what `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]` prints.
//!
//! `", "` separator, units in the header (always) and in values (unless `nounits`),
//! `[N/A]` / `[Not Supported]` for missing values, local `YYYY/MM/DD HH:MM:SS.mmm` timestamps,
//! two decimals for watts, hex for the clock event bitmask.

use std::io::Write;

use crate::error::{Context, Result};
use chrono::Local;

use super::{CountingWriter, Sink, SinkFiles};
use gpumon_schema::catalog::{Field, Ty};
use gpumon_schema::{Selection, Tick, Value};

pub(crate) struct NvsmiSink {
    out: CountingWriter,
    sel: Selection,
    units: bool,
    line: String,
}

impl NvsmiSink {
    pub(crate) fn new(
        mut out: CountingWriter,
        sel: &Selection,
        with_header: bool,
        units: bool,
    ) -> Result<Self> {
        if with_header {
            let h: Vec<String> = sel.fields().map(|f| f.def().nvsmi_header()).collect();
            let line = format!("{}\n", h.join(", "));
            out.restart_with(line.clone().into_bytes());
            out.write_all(line.as_bytes()).with_context(|| format!("writing {}", out.target()))?;
        }
        Ok(NvsmiSink { out, sel: sel.clone(), units, line: String::new() })
    }
}

/// Render one value the way nvidia-smi does.
pub(crate) fn cell(field: Field, v: &Value, units: bool, out: &mut String) {
    use std::fmt::Write;
    let d = field.def();
    let unit = if units && d.nvsmi_unit && !d.unit.is_empty() { d.unit } else { "" };
    let sep = if unit.is_empty() { "" } else { " " };
    let _ = match v {
        Value::Null => write!(out, "[N/A]"),
        Value::Unsupported => write!(out, "[Not Supported]"),
        Value::U(u) if field == Field::EventReasons => write!(out, "0x{u:016x}"),
        Value::U(u) => write!(out, "{u}{sep}{unit}"),
        Value::F(f) if d.ty == Ty::F64 => write!(out, "{f:.2}{sep}{unit}"),
        Value::F(f) => write!(out, "{f}{sep}{unit}"),
        Value::S(s) => write!(out, "{s}"),
    };
}

impl Sink for NvsmiSink {
    fn write_tick(&mut self, tick: &Tick) -> Result<()> {
        let ts = tick.ts.with_timezone(&Local).format("%Y/%m/%d %H:%M:%S%.3f").to_string();
        for row in &tick.rows {
            self.line.clear();
            for (i, f) in self.sel.fields().enumerate() {
                if i > 0 {
                    self.line.push_str(", ");
                }
                if f == Field::Timestamp {
                    self.line.push_str(&ts);
                } else {
                    cell(f, row.get(f), self.units, &mut self.line);
                }
            }
            self.line.push('\n');
            self.out
                .write_all(self.line.as_bytes())
                .with_context(|| format!("writing {}", self.out.target()))?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.out.sync()
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.flush()
    }

    fn bytes_written(&self) -> u64 {
        self.out.written()
    }

    fn files(&self) -> SinkFiles {
        let f = self.out.file();
        SinkFiles { data: f.clone(), recovery: f }
    }
}
