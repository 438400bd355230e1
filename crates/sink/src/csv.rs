//! gpumon CSV: RFC 4180, header = the canonical field names (the Parquet column names, no units),
//! plain numbers, RFC 3339 UTC timestamps with milliseconds.
//!
//! Lines are encoded straight into one reused buffer (numbers by `itoa`/`ryu`, text quoted only
//! when it holds a `,`, `"`, CR or LF), byte for byte what the `csv` crate's writer with its
//! default settings and a `\n` terminator writes, without its per-field state machine.

use std::fs::File;
use std::io::Write;
use std::sync::Arc;

use crate::error::{Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};

use super::{CountingWriter, Sink, SinkFiles};
use gpumon_schema::catalog::Field;
use gpumon_schema::{Selection, Tick, Value};

pub(crate) struct CsvSink {
    out: CountingWriter,
    fields: Vec<Field>,
    /// The work counters' `progress.KEY` columns, after the fields.
    counters: usize,
    /// Per row position and column (row-major), the last float or text written there and its
    /// cell, reused while the value repeats: a GPU's identity and many of its values stay put
    /// from tick to tick.
    last: Vec<Last>,
    /// The lines of the tick being written.
    buf: Vec<u8>,
    /// The timestamp cell, remade from its minute's text.
    stamp: Stamp,
    file: Option<Arc<File>>,
}

/// A timestamp cell as `to_rfc3339_opts(SecondsFormat::Millis, true)` writes it
/// (`2026-12-03T23:48:50.123Z`) without a `String` a tick: chrono writes the text up to the minute
/// once a minute, the seconds and milliseconds are written here.
#[derive(Default)]
struct Stamp {
    /// The minute (from the epoch) that `text` starts with; `text` always ends in the 7 bytes
    /// `SS.mmmZ` that change within it.
    minute: Option<i64>,
    text: Vec<u8>,
}

impl Stamp {
    fn cell(&mut self, ts: DateTime<Utc>) -> &[u8] {
        let (secs, nanos) = (ts.timestamp(), ts.timestamp_subsec_nanos());
        let minute = secs.div_euclid(60);
        if self.minute != Some(minute) || nanos >= 1_000_000_000 {
            // A leap second is chrono's nanoseconds past 10^9 (system clocks never give one).
            let start =
                (nanos < 1_000_000_000).then(|| DateTime::from_timestamp(minute * 60, 0)).flatten();
            let Some(start) = start else {
                self.minute = None;
                self.text = ts.to_rfc3339_opts(SecondsFormat::Millis, true).into_bytes();
                return &self.text;
            };
            self.text = start.to_rfc3339_opts(SecondsFormat::Millis, true).into_bytes();
            self.minute = Some(minute);
        }
        self.text.truncate(self.text.len() - 7);
        let (sec, milli) = (secs.rem_euclid(60) as u32, nanos / 1_000_000);
        let digit = |d: u32| b'0' + d as u8;
        self.text.extend_from_slice(&[
            digit(sec / 10),
            digit(sec % 10),
            b'.',
            digit(milli / 100),
            digit(milli / 10 % 10),
            digit(milli % 10),
            b'Z',
        ]);
        &self.text
    }
}

/// What a column's cell was last encoded from.
#[derive(Default)]
enum Last {
    #[default]
    None,
    /// A float's bits and its cell.
    F(u64, Vec<u8>),
    /// A text (the same shared string, by address) and its cell.
    S(Arc<str>, Vec<u8>),
}

impl CsvSink {
    /// The header goes out with the first flush, so a file killed before it holds no data is empty
    /// (recovery removes it) rather than a visible header-only file.
    pub(crate) fn new(mut out: CountingWriter, sel: &Selection) -> Result<Self> {
        let fields: Vec<Field> = sel.fields().collect();
        let counters: Vec<String> = sel
            .progress()
            .iter()
            .map(|k| format!("{}{k}", gpumon_schema::progress::PREFIX))
            .collect();
        let mut header = Vec::new();
        record(
            &mut header,
            fields.iter().map(|f| f.name().as_bytes()).chain(counters.iter().map(|c| c.as_bytes())),
        );
        out.restart_with(header.clone());
        out.write_all(&header).with_context(|| format!("writing {}", out.target()))?;
        let file = out.file();
        let counters = counters.len();
        Ok(CsvSink {
            out,
            fields,
            counters,
            last: Vec::new(),
            buf: Vec::with_capacity(4096),
            stamp: Stamp::default(),
            file,
        })
    }
}

/// One CSV record of `cells` (already encoded cell bodies, quoted here when needed) onto `out`.
fn record<'c>(out: &mut Vec<u8>, cells: impl Iterator<Item = &'c [u8]>) {
    let start = out.len();
    for (i, c) in cells.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_text(out, c);
    }
    end_record(out, start);
}

/// The record terminator; a record that is one empty field is written `""` (as the csv crate
/// does), so it is not read back as an empty line.
fn end_record(out: &mut Vec<u8>, start: usize) {
    if out.len() == start {
        out.extend_from_slice(b"\"\"");
    }
    out.push(b'\n');
}

/// Text as an RFC 4180 cell: quoted (quotes doubled) only when it holds a delimiter, a quote or a
/// line break.
fn push_text(out: &mut Vec<u8>, s: &[u8]) {
    if !s.iter().any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n')) {
        out.extend_from_slice(s);
        return;
    }
    out.push(b'"');
    for &b in s {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

/// A value as a gpumon CSV cell onto `out`: nothing when missing, shortest exact decimal
/// otherwise. A float keeps its decimal point (`300.0`), so readers infer a float column whatever
/// its values, as the Parquet type says; floats are written as Rust's `{:?}` writes them.
fn push_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null | Value::Unsupported => {}
        Value::U(u) => out.extend_from_slice(itoa::Buffer::new().format(*u).as_bytes()),
        Value::F(f) => push_f64(out, *f),
        Value::S(s) => push_text(out, s.as_bytes()),
    }
}

/// `v` onto `out`, from `last`'s cell when the cell holds the same float or text as last time
/// (a text is encoded again only when it is another string).
fn push_cached(out: &mut Vec<u8>, v: &Value, last: &mut Last) {
    match (v, &mut *last) {
        (Value::F(x), Last::F(bits, cell)) if x.to_bits() == *bits => out.extend_from_slice(cell),
        (Value::S(s), Last::S(prev, cell)) if Arc::ptr_eq(s, prev) => out.extend_from_slice(cell),
        (Value::F(_) | Value::S(_), _) => {
            let start = out.len();
            push_value(out, v);
            // The cell's buffer is kept from value to value.
            let mut cell = match std::mem::take(last) {
                Last::F(_, c) | Last::S(_, c) => c,
                Last::None => Vec::new(),
            };
            cell.clear();
            cell.extend_from_slice(&out[start..]);
            *last = match v {
                Value::F(x) => Last::F(x.to_bits(), cell),
                Value::S(s) => Last::S(s.clone(), cell),
                _ => Last::None,
            };
        }
        _ => push_value(out, v),
    }
}

/// `f` as `{f:?}` writes it. A whole number below 2^53 is its digits and `.0` (its shortest exact
/// decimal: every integer there is a double of its own); most others are `short_decimal`; the
/// rest (exponents, NaN, infinities, 16 and 17 digits) goes through the formatter.
fn push_f64(out: &mut Vec<u8>, f: f64) {
    const EXACT: f64 = (1u64 << 53) as f64;
    let a = f.abs();
    if a < EXACT && f.trunc() == f && f != 0.0 {
        if f < 0.0 {
            out.push(b'-');
        }
        out.extend_from_slice(itoa::Buffer::new().format(a as u64).as_bytes());
        out.extend_from_slice(b".0");
    } else if !push_short_decimal(out, f) {
        let _ = write!(out, "{f:?}");
    }
}

/// `ryu`'s shortest decimal of `f` onto `out` when it is the one `{:?}` writes: plain notation (zero and
/// magnitudes in [1e-4, 1e16), where both write plain decimals) and at most 15 digits. A double has
/// at most one decimal of 15 significant digits or fewer that reads back as it (such decimals lie
/// further apart than a double's rounding interval), so two shortest-digit algorithms agree there;
/// with 16 or 17 digits there can be two, and `ryu` and `{:?}` may pick different ones.
/// Returns whether it wrote it onto `out`.
fn push_short_decimal(out: &mut Vec<u8>, f: f64) -> bool {
    if f != 0.0 && !(1e-4..1e16).contains(&f.abs()) {
        return false;
    }
    let mut b = ryu::Buffer::new();
    let s = b.format_finite(f);
    // Sign and point included, so at most 15 digits.
    let short = s.len() <= 16;
    if short {
        out.extend_from_slice(s.as_bytes());
    }
    short
}

impl Sink for CsvSink {
    fn write_tick(&mut self, tick: &Tick) -> Result<()> {
        let ts = self.stamp.cell(tick.ts);
        self.buf.clear();
        let n = self.fields.len();
        if self.last.len() < tick.rows.len() * n {
            self.last.resize_with(tick.rows.len() * n, Last::default);
        }
        for (row, last) in tick.rows.iter().zip(self.last.chunks_mut(n.max(1))) {
            let start = self.buf.len();
            for (i, (&f, last)) in self.fields.iter().zip(last).enumerate() {
                if i > 0 {
                    self.buf.push(b',');
                }
                if f == Field::Timestamp {
                    push_text(&mut self.buf, ts);
                } else {
                    push_cached(&mut self.buf, row.get(f), last);
                }
            }
            for k in 0..self.counters {
                self.buf.push(b',');
                if let Some(v) = row.progress(k) {
                    push_f64(&mut self.buf, v);
                }
            }
            end_record(&mut self.buf, start);
        }
        self.out.write_all(&self.buf).with_context(|| format!("writing {}", self.out.target()))
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
        SinkFiles { data: self.file.clone(), recovery: self.file.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cell(v: &Value) -> String {
        let mut out = Vec::new();
        push_value(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn cells() {
        for (v, want) in [
            (Value::F(300.0), "300.0"),
            (Value::F(70.5), "70.5"),
            (Value::F(-0.0), "-0.0"),
            // 17 digits, where ryu writes ...745.2 (the other shortest): left to the formatter.
            (Value::F(1_592_223_542_930_745.3), "1592223542930745.3"),
            (Value::F(1e-5), "1e-5"),
            (Value::F(1e16), "1e16"),
            (Value::F(f64::NAN), "NaN"),
            (Value::F(f64::NEG_INFINITY), "-inf"),
            (Value::U(5), "5"),
            (Value::U(0), "0"),
            (Value::U(1_000_000_007), "1000000007"),
            (Value::U(u64::MAX), "18446744073709551615"),
            (Value::Null, ""),
            (Value::Unsupported, ""),
            (Value::S("P0".into()), "P0"),
            (Value::S("a,b".into()), "\"a,b\""),
            (Value::S("say \"hi\"\n".into()), "\"say \"\"hi\"\"\n\""),
        ] {
            assert_eq!(cell(&v), want, "{v:?}");
        }
    }

    /// Records as the csv crate writes them (default settings, `\n` terminator).
    fn by_csv_crate(records: &[Vec<String>]) -> Vec<u8> {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .flexible(true)
            .from_writer(Vec::new());
        for r in records {
            w.write_record(r).unwrap();
        }
        w.into_inner().unwrap()
    }

    /// Ticks through the sink read back as the csv crate writes their `{:?}` / text cells: the
    /// cells reused from a column's last value are the ones encoding it again would give.
    #[test]
    fn ticks_as_the_csv_crate_writes_them() {
        use crate::Target;
        use gpumon_schema::Row;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let fields =
            vec![Field::Timestamp, Field::Name, Field::PowerDraw, Field::UtilGpu, Field::Pstate];
        let mut sink = CsvSink::new(
            CountingWriter::open(&Target::File(path.clone())).unwrap(),
            &Selection::new(fields),
        )
        .unwrap();
        let (a, b): (Arc<str>, Arc<str>) = ("GPU, \"A\"".into(), "B".into());
        let mut want = vec![
            ["timestamp", "name", "power.draw", "utilization.gpu", "pstate"]
                .map(String::from)
                .to_vec(),
        ];
        let values = [
            (a.clone(), 612.4, Some(3)),
            (a.clone(), 612.4, None),
            (b, 700.0, Some(4)),
            (a, -0.5, Some(4)),
        ];
        for (k, chunk) in values.chunks(2).enumerate() {
            let ts = chrono::DateTime::from_timestamp_millis(1_700_000_000_123 + k as i64).unwrap();
            let mut rows = Vec::new();
            for (name, p, u) in chunk {
                let mut r = Row::default();
                r.set(Field::Name, Value::S(name.clone()));
                r.set(Field::PowerDraw, Value::F(*p));
                r.set(Field::UtilGpu, u.map_or(Value::Unsupported, Value::U));
                rows.push(r);
                let stamp = ts.to_rfc3339_opts(SecondsFormat::Millis, true);
                want.push(vec![
                    stamp,
                    name.to_string(),
                    format!("{p:?}"),
                    u.map_or(String::new(), |u| u.to_string()),
                    String::new(),
                ]);
            }
            sink.write_tick(&Tick { ts, seq: k as u64 + 1, rows, procs: Vec::new() }).unwrap();
        }
        Box::new(sink).finish().unwrap();
        assert_eq!(
            String::from_utf8(std::fs::read(&path).unwrap()).unwrap(),
            String::from_utf8(by_csv_crate(&want)).unwrap()
        );
    }

    proptest! {
        #[test]
        fn floats_as_debug_writes_them(bits in any::<u64>(), x in -1e17f64..1e17, small in -1e-3f64..1e-3) {
            let ints = [x.round(), -((bits >> 11) as f64), (bits >> 11) as f64, 9_007_199_254_740_993.0];
            for f in [f64::from_bits(bits), x, small, (x * 1e3).round() / 1e3, (bits % 1_000_000) as f64 / 1e3].into_iter().chain(ints) {
                prop_assert_eq!(cell(&Value::F(f)), format!("{f:?}"));
            }
        }

        #[test]
        fn timestamp_cells_are_chronos_rfc3339(start in -62_135_596_800i64..253_402_300_000, steps in
            prop::collection::vec((0i64..200, 0u32..1_000_000_000), 1..20)) {
            let mut stamp = Stamp::default();
            let mut secs = start;
            for (step, nanos) in steps {
                // Mostly forward a few seconds (the cached minute), sometimes far back or ahead.
                secs = if step >= 190 { secs - step * 1_000_003 } else { secs + step };
                let Some(ts) = DateTime::from_timestamp(secs, nanos) else { continue };
                let want = ts.to_rfc3339_opts(SecondsFormat::Millis, true);
                prop_assert_eq!(std::str::from_utf8(stamp.cell(ts)).unwrap(), want);
            }
        }

        #[test]
        fn records_match_the_csv_crate(records in prop::collection::vec(
            prop::collection::vec("[a-c,\"\r\n ]{0,4}", 1..4), 1..4)) {
            let mut ours = Vec::new();
            for r in &records {
                record(&mut ours, r.iter().map(|s| s.as_bytes()));
            }
            prop_assert_eq!(ours, by_csv_crate(&records));
        }
    }
}
