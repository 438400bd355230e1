//! The fuzz harness of the readers: a corpus gpumon writes itself (Parquet closed and with several
//! row groups, the crash journal, CSV, the nvidia-smi style log), a seeded mutator (byte- and
//! text-wise), and [`read_all`]: a file read through every path a command takes (discovery and
//! sniffing, `probe_fields`, the summary's collector and statistics, the report's series, convert's
//! row conversion), plus [`recover`] for journals.
//!
//! Two drivers: `tests/mutants.rs` (the suite's run: a fixed number of mutants, each read under an
//! allocation bound; `GPUMON_FUZZ_SECS` for longer runs, `scripts/fuzz`) and the cargo-fuzz
//! targets in `fuzz/` (coverage-guided, nightly).

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use chrono::{DateTime, Utc};

use gpumon_analysis::{BUCKETS, CollectConfig, Collector, Grid, Series, Thresholds};
use gpumon_read::discover;
use gpumon_read::in_time_order;
use gpumon_read::{ReadOptions, probe_fields, scan};
use gpumon_schema::RunMeta;
use gpumon_schema::catalog::{CATALOG, Field, Ty};
use gpumon_schema::{Format, journal_path};
use gpumon_schema::{Row, Selection, Tick, Value};
use gpumon_sink::{self as sink, Target};
use gpumon_util::ReadMeter;

/// The largest single allocation a case on `len` input bytes may make: a Parquet page may claim
/// at most 1024× its stored size (at least 8 MiB), a journal message at most the file.
pub fn alloc_limit(len: usize) -> usize {
    (32 << 20) + 16 * len
}

/// A value of field `f` for GPU `g` at tick `i`, varied so that every statistic has work to do.
fn value(f: Field, g: usize, i: usize) -> Value {
    match f {
        Field::Index => return Value::U(g as u64),
        Field::Host => return Value::S(Arc::from("fuzzhost")),
        Field::Uuid => {
            return Value::S(Arc::from(format!("GPU-0000000{g}-0000-0000-0000-000000000000")));
        }
        Field::Name => return Value::S(Arc::from("NVIDIA H100 80GB HBM3")),
        Field::UtilGpu | Field::UtilMemory => return Value::U(((i * 7 + g * 13) % 101) as u64),
        _ => {}
    }
    match f.def().ty {
        Ty::Str => Value::S(Arc::from(format!("v{}", i % 3))),
        Ty::I16 => Value::U(((i + g) % 100) as u64),
        Ty::I32 | Ty::I64 => Value::U((1000 + i * 3 + g) as u64),
        Ty::F64 => Value::F(50.0 + (i % 17) as f64 * 1.5 + g as f64),
        Ty::Bool => Value::U((i % 2) as u64),
        Ty::Timestamp => Value::Null,
    }
}

fn ticks(n: usize, gpus: usize, sel: &Selection) -> Vec<Tick> {
    let start = DateTime::parse_from_rfc3339("2026-03-01T10:00:00Z")
        .map_or(DateTime::<Utc>::UNIX_EPOCH, |t| t.into());
    (0..n)
        .map(|i| Tick {
            ts: start + chrono::Duration::milliseconds(500 * i as i64),
            seq: i as u64 + 1,
            rows: (0..gpus)
                .map(|g| {
                    let mut r = Row::default();
                    for f in sel.fields() {
                        // A missing value now and then: missing is null.
                        if f != Field::Index && (i + g + f as usize).is_multiple_of(23) {
                            continue;
                        }
                        r.set(f, value(f, g, i));
                    }
                    r
                })
                .collect(),
            procs: Vec::new(),
        })
        .collect()
}

/// Write the corpus into `dir`: (file, what it is).
pub fn corpus(dir: &Path) -> Result<Vec<(PathBuf, &'static str)>> {
    let mut sel: Vec<Field> = CATALOG.iter().filter(|d| d.default).map(|d| d.field).collect();
    for k in [Field::Timestamp, Field::Host, Field::Index, Field::Uuid, Field::Missed] {
        if !sel.contains(&k) {
            sel.push(k);
        }
    }
    sel.sort();
    let sel = Selection::new(sel);
    let meta = RunMeta {
        hostname: "fuzzhost".into(),
        interval_s: 0.5,
        command: "gpumon record".into(),
        start: Utc::now(),
        driver_version: None,
        job: None,
    };
    let mut out = Vec::new();
    let mut write =
        |name: &str, format: Format, n: usize, journal: bool, what: &'static str| -> Result<()> {
            let path = dir.join(name);
            let j = journal.then(|| journal_path(&path));
            let mut s = sink::open(format, &Target::File(path.clone()), j.as_deref(), &sel, &meta)?;
            for (k, t) in ticks(n, 2, &sel).iter().enumerate() {
                s.write_tick(t)?;
                if k % 5 == 4 {
                    s.flush()?;
                }
            }
            s.flush()?;
            s.finish()?;
            out.push((path, what));
            if let Some(j) = j {
                out.push((j, "journal"));
            }
            Ok(())
        };
    write("run.parquet", Format::Parquet, 60, true, "parquet")?;
    write("groups.parquet", Format::Parquet, 9000, false, "parquet (2 row groups)")?;
    write("run.csv", Format::Csv, 60, false, "csv")?;
    write("gpu.log", Format::NvidiaSmi { header: true, units: true }, 60, false, "nvidia-smi log")?;
    let dmon = dir.join("dmon.log");
    std::fs::write(&dmon, dmon_log(30))?;
    out.push((dmon, "nvidia-smi dmon -o DT log"));
    let table = dir.join("table.log");
    std::fs::write(&table, table_log(10))?;
    out.push((table, "nvidia-smi table log"));
    Ok(out)
}

/// `nvidia-smi dmon -s pucm -o DT` output: `n` seconds of two GPUs, the header every ten.
fn dmon_log(n: usize) -> String {
    let mut s = String::new();
    for t in 0..n {
        if t % 10 == 0 {
            s.push_str("#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem   mclk   pclk     fb\n");
            s.push_str("#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %    MHz    MHz     MB\n");
        }
        for g in 0..2 {
            s.push_str(&format!(
                " 20250101   10:{:02}:{:02}      {g}    {}     5{g}      -     {}     40   2619   1980  {}\n",
                t / 60,
                t % 60,
                300 + t,
                (t * 7 + g * 13) % 100,
                30_000 + t
            ));
        }
    }
    s
}

/// nvidia-smi's table logged in a loop (`nvidia-smi -l 1`): `n` samples of two GPUs and a process.
fn table_log(n: usize) -> String {
    let mut s = String::new();
    for t in 0..n {
        s.push_str(&format!("Wed Jan  1 10:00:{t:02} 2025\n"));
        s.push_str(
            "+-----------------------------------------------------------------------------+\n",
        );
        s.push_str(
            "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n",
        );
        s.push_str(
            "|===============================+======================+======================|\n",
        );
        for g in 0..2 {
            s.push_str(&format!(
                "|   {g}  Tesla T4            Off  | 00000000:00:1{g}.0 Off |                    0 |\n"
            ));
            s.push_str(&format!(
                "| N/A   4{g}C    P0    {}W /  70W |   {}MiB / 15109MiB |     {}%      Default |\n",
                30 + t,
                2000 + t,
                (t * 9 + g) % 100
            ));
        }
        s.push_str(
            "|    0   N/A  N/A     12345      C   python                          1990MiB |\n",
        );
    }
    s
}

/// xorshift64*: deterministic, seeded.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Numbers a hostile or broken writer puts in a cell.
const CELLS: [&str; 12] = [
    "4294967295",
    "-1",
    "0.5",
    "255",
    "1e308",
    "NaN",
    "-0",
    "18446744073709551616",
    "",
    "\u{1b}[31m",
    "1,2",
    "\"x",
];

/// One mutation of `data` (`text`: also cell-wise edits of CSV and logs).
pub fn mutate(data: &[u8], text: bool, r: &mut Rng) -> Vec<u8> {
    let mut m = data.to_vec();
    let len = m.len().max(1);
    let p = r.below(len).min(m.len().saturating_sub(1));
    match r.below(if text { 10 } else { 8 }) {
        0 => {
            if let Some(b) = m.get_mut(p) {
                *b ^= 1 << r.below(8);
            }
        }
        1 => {
            if let Some(b) = m.get_mut(p) {
                *b = [0x00, 0xFF, 0x7F, 0x80, r.next_u64() as u8][r.below(5)];
            }
        }
        2 => {
            // A length field: 4 little-endian bytes of a size bomb.
            let v: u32 = [0x7FFF_FFFF, 0xFFFF_FFFF, 0x1000_0000, 0][r.below(4)];
            for (k, b) in v.to_le_bytes().iter().enumerate() {
                if let Some(x) = m.get_mut(p + k) {
                    *x = *b;
                }
            }
        }
        3 => {
            // A varint bomb (Thrift sizes are varints).
            let at = p.min(m.len());
            m.splice(at..(at + 1).min(m.len()), [0xFE, 0xFF, 0xFF, 0xFF, 0x0F]);
        }
        4 => m.truncate(p),
        5 => {
            let end = (p + 1 + r.below(256)).min(m.len());
            m.drain(p.min(end)..end);
        }
        6 => {
            // A stretch of the file repeated (a duplicated batch or row group).
            let end = (p + 1 + r.below(4096)).min(m.len());
            let chunk = m[p.min(end)..end].to_vec();
            let at = r.below(m.len() + 1);
            m.splice(at..at, chunk);
        }
        7 => {
            let n = 1 + r.below(32);
            let junk: Vec<u8> = (0..n).map(|_| r.next_u64() as u8).collect();
            m.splice(p.min(m.len())..p.min(m.len()), junk);
        }
        _ => {
            // Text: a cell replaced by a hostile value.
            let cell = CELLS[r.below(CELLS.len())].as_bytes();
            let start = m[..p].iter().rposition(|&b| b == b',' || b == b'\n').map_or(0, |i| i + 1);
            let end =
                m[p..].iter().position(|&b| b == b',' || b == b'\n').map_or(m.len(), |i| p + i);
            m.splice(start..end, cell.iter().copied());
        }
    }
    m
}

/// Read `path` the way every command does; errors are returned as text.
pub fn read_all(path: &Path) -> Result<()> {
    let found = in_time_order(discover(&[path.to_path_buf()])?);
    let opts = ReadOptions { threads: 1, ..Default::default() };
    let want = gpumon_analysis::wanted_fields();
    let meter = ReadMeter::new(0, false);
    let mut all = Collector::new(CollectConfig::default());
    let mut reports = Vec::new();
    for input in &found.inputs {
        probe_fields(input, &opts)?;
        let init = || Collector::new(CollectConfig::default());
        let visit = |c: &mut Collector, b: &arrow_array::RecordBatch, host: &str| c.visit(b, host);
        let (parts, rep) = scan(input, &opts, &want, &meter, &init, &visit)?;
        parts.into_iter().for_each(|p| all.append(p));
        reports.push(rep);
        let grid = Grid::new(1_772_359_200_000_000, 1_772_359_260_000_000, BUCKETS);
        let (_, _) = scan(
            input,
            &opts,
            &gpumon_analysis::charted_fields(),
            &meter,
            &|| Series::new(grid, gpumon_analysis::TimeWindow::default()),
            &|s: &mut Series, b, host| s.visit(b, host),
        )?;
        let (_, _) = scan(input, &opts, &want, &meter, &|| (), &|_: &mut (), b, _| {
            let mut rows = Vec::new();
            gpumon_schema::rows_of_batch(b, &mut rows);
            Ok(())
        })?;
    }
    let summary = gpumon_analysis::build(
        all,
        &Thresholds::default(),
        reports,
        found.skipped,
        gpumon_analysis::TimeWindow::default(),
        Default::default(),
    );
    let _ = gpumon_present::render(&summary, &[], gpumon_present::SummaryFormat::Json);
    Ok(())
}

/// Recover the Parquet piece of journal `path` (what `gpumon recover` does after a crash).
pub fn recover(path: &Path) -> Result<()> {
    let piece = gpumon_schema::piece_of_journal(path)
        .ok_or_else(|| anyhow::anyhow!("{}: not a journal name", path.display()))?;
    Ok(gpumon_sink::recover_journal(path, &piece).map(|_| ())?)
}
