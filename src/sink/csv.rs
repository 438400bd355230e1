//! gpumon CSV: RFC 4180, header = the canonical field names (the Parquet column names, no units),
//! plain numbers, RFC 3339 UTC timestamps with milliseconds.

use std::fs::File;
use std::sync::Arc;

use anyhow::{Context, Result};
use chrono::SecondsFormat;

use super::{CountingWriter, Sink, SinkFiles};
use crate::schema::catalog::Field;
use crate::schema::row::{Selection, Tick, Value};

pub struct CsvSink {
    w: csv::Writer<CountingWriter>,
    sel: Selection,
    cells: Vec<String>,
    /// The bits of the float each cell of `cells` holds, if it holds one.
    floats: Vec<Option<u64>>,
    file: Option<Arc<File>>,
}

impl CsvSink {
    /// The header goes out with the first flush, so a file killed before it holds no data is empty
    /// (recovery removes it) rather than a visible header-only file.
    pub fn new(mut out: CountingWriter, sel: &Selection) -> Result<Self> {
        let target = out.target().clone();
        let header: Vec<&str> = sel.fields().map(Field::name).collect();
        let mut first = builder().from_writer(Vec::new());
        first.write_record(&header).with_context(|| format!("writing {target}"))?;
        out.restart_with(first.into_inner().map_err(|e| anyhow::anyhow!("{}", e.error()))?);
        let file = out.file();
        let mut w = builder().buffer_capacity(1024).from_writer(out);
        w.write_record(&header).with_context(|| format!("writing {target}"))?;
        Ok(CsvSink { w, sel: sel.clone(), cells: Vec::new(), floats: Vec::new(), file })
    }

    fn target(&self) -> String {
        self.w.get_ref().target().to_string()
    }
}

fn builder() -> csv::WriterBuilder {
    let mut b = csv::WriterBuilder::new();
    b.terminator(csv::Terminator::Any(b'\n'));
    b
}

/// A value as a gpumon CSV cell: empty when missing, shortest exact decimal otherwise. A float
/// keeps its decimal point (`300.0`), so readers infer a float column whatever its values, as the
/// Parquet type says.
pub fn cell(v: &Value, out: &mut String) {
    use std::fmt::Write;
    out.clear();
    match v {
        Value::Null | Value::Unsupported => {}
        Value::U(u) => push_u64(*u, out),
        Value::F(f) => {
            let _ = write!(out, "{f:?}");
        }
        Value::S(s) => out.push_str(s),
    }
}

/// `u` in decimal, as `{u}` writes it, without the formatting machinery (most cells are integers).
fn push_u64(mut u: u64, out: &mut String) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    out.extend(buf[i..].iter().map(|&b| char::from(b)));
}

impl Sink for CsvSink {
    fn write_tick(&mut self, tick: &Tick) -> Result<()> {
        let ts = tick.ts.to_rfc3339_opts(SecondsFormat::Millis, true);
        self.cells.resize(self.sel.len(), String::new());
        self.floats.resize(self.sel.len(), None);
        for row in &tick.rows {
            for ((cellbuf, float), f) in self.cells.iter_mut().zip(&mut self.floats).zip(self.sel.fields()) {
                let v = row.get(f);
                match v {
                    // The cell still holds this float: host columns repeat on every GPU row, and
                    // many GPU values stay put (formatting a float is most of a cell's cost).
                    Value::F(x) if *float == Some(x.to_bits()) => continue,
                    Value::F(x) => *float = Some(x.to_bits()),
                    _ => *float = None,
                }
                if f == Field::Timestamp {
                    cellbuf.clone_from(&ts);
                } else {
                    cell(v, cellbuf);
                }
            }
            self.w.write_record(&self.cells).with_context(|| format!("writing {}", self.target()))?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.w.flush().with_context(|| format!("writing {}", self.target()))?;
        if let Some(f) = &self.file {
            f.sync_data().with_context(|| format!("syncing {}", self.target()))?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.flush()
    }

    fn bytes_written(&self) -> u64 {
        self.w.get_ref().written()
    }

    fn files(&self) -> SinkFiles {
        SinkFiles { data: self.file.clone(), recovery: self.file.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells() {
        let mut s = String::new();
        for (v, want) in [
            (Value::F(300.0), "300.0"),
            (Value::F(70.5), "70.5"),
            (Value::U(5), "5"),
            (Value::U(0), "0"),
            (Value::U(1_000_000_007), "1000000007"),
            (Value::U(u64::MAX), "18446744073709551615"),
            (Value::Null, ""),
            (Value::Unsupported, ""),
            (Value::S("P0".into()), "P0"),
        ] {
            cell(&v, &mut s);
            assert_eq!(s, want, "{v:?}");
        }
    }
}
