//! The reader over whole files: small fixtures in nvidia-smi's format (tests/fixtures/nvidia-smi,
//! one per quirk, written by its make.py), the real logs of ../shared/data (`real_*`: they fail without it unless GPUMON_SHARED_DATA=skip),
//! synthetic logs, a property test.

use super::*;
use gpumon_schema::Value;
use gpumon_schema::catalog::Field;
use std::io::Write;
use std::path::PathBuf;

/// The helper shared with the CLI tests (`pub` there).
#[allow(unreachable_pub)]
mod shared {
    include!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/support/shared_data.rs"));
}
use shared::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/nvidia-smi").join(name)
}

struct Got {
    rep: SmiLogInfo,
    rows: Vec<(DateTime<Utc>, u32, Row)>,
}

fn read_all(path: &Path, opts: &NvsmiOptions) -> Result<Got> {
    let mut rows = Vec::new();
    let rep = read_nvsmi(path, opts, &mut |r| {
        rows.push((
            r.ts,
            r.row.get(Field::Index).as_u64().map_or(u32::MAX, |g| g as u32),
            r.row.clone(),
        ))
    })?;
    Ok(Got { rep, rows })
}

fn utc() -> NvsmiOptions {
    NvsmiOptions { tz: Some(gpumon_util::NamedZone::utc()), ..Default::default() }
}

fn opts_for(name: &str) -> NvsmiOptions {
    let mut o = utc();
    if name.starts_with("dst915") || name.starts_with("headerless") {
        o.columns = Some(vec!["timestamp".into(), "utilization.gpu".into(), "memory.used".into()]);
    }
    o
}

fn write_tmp(content: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(content).unwrap();
    f.flush().unwrap();
    f
}

/// Independent count: newline-terminated lines with a cell shaped `dddd/dd/dd dd:dd:dd.ddd`.
fn count_data_lines(bytes: &[u8]) -> usize {
    let shaped = |c: &[u8]| {
        c.len() == 23
            && c.iter().enumerate().all(|(i, &b)| match i {
                4 | 7 => b == b'/',
                10 => b == b' ',
                13 | 16 => b == b':',
                19 => b == b'.',
                _ => b.is_ascii_digit(),
            })
    };
    let mut pieces: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    pieces.pop(); // the part after the last newline is not a terminated line
    pieces.iter().filter(|l| l.split(|&b| b == b',').any(|c| shaped(c.trim_ascii()))).count()
}

/// Rows and GPUs each real log holds (../shared/data/README.md).
const TABLE: &[(&str, u64, usize)] = &[
    ("yqg9651_cuda_test__h800_sxm_random_gemm_bf16.csv", 1518, 1),
    ("yqg9651_cuda_test__h20_fp16_half_random.csv", 41645, 1),
    ("yqg9651_cuda_test__a100_pcie_burst_fp16_half_random.csv", 3314, 1),
    ("grantwilkins_training_profile__h100_8gpu_power-trace_2025-07-26-23-32-09.csv", 45632, 8),
    ("grantwilkins_training_profile__titanx_2gpu_power-trace_2025-12-10-16-48-17.csv", 1216, 2),
    ("grantwilkins_training_profile__titanx_log_appended_2runs.csv", 2714, 2),
    ("dst915_llama.cpp__gpu_stats.csv", 388, 4),
    ("fridanl_thesis-mas__nvidia-smi.log", 104, 1),
    ("AkshayRoyal_gpu-usage__gpu_usage.csv", 224, 1),
    ("shougangu_balance-budget__gpu_usage.csv", 1639, 1),
    ("eobo0530_vlm_optimization__gpu_log.csv", 2619, 1),
];

/// Rows and GPUs of each fixture (tests/fixtures/nvidia-smi/make.py writes them).
const FIXTURES: &[(&str, u64, usize)] = &[
    ("appended-runs.csv", 18, 2),
    ("bom.csv", 4, 1),
    ("crlf.csv", 6, 1),
    ("cut-last-line.log", 6, 1),
    ("header-every-row.csv", 5, 1),
    ("headerless-nounits.csv", 16, 4),
    ("interleaved-8gpu.csv", 32, 8),
    ("na-text-hex.csv", 3, 1),
    ("not-supported.csv", 4, 1),
    ("nul-tail.csv", 14, 2),
    ("plain.csv", 7, 1),
];

/// The log at `path` reads with `rows` rows (as many as an independent count of its data lines) on
/// `gpus` GPUs, interleaved rows in a clean fixed order, each GPU's rows forward in time.
fn check_log(path: &Path, opts: &NvsmiOptions, want_rows: u64, k: usize) {
    let name = path.display();
    let got = read_all(path, opts).unwrap_or_else(|e| panic!("{name}: {e:#}"));
    let independent = count_data_lines(&std::fs::read(path).unwrap());
    assert_eq!(got.rep.rows, want_rows, "{name}: rows; report {:?}", got.rep);
    assert_eq!(got.rep.rows as usize, independent, "{name}: rows vs independent count");
    assert_eq!(got.rows.len() as u64, got.rep.rows, "{name}");
    assert_eq!(got.rep.gpus, k, "{name}: gpus; notes {:?}", got.rep.notes);
    // Interleaved logs are in a clean fixed order: the assignment is exactly position modulo k,
    // restarting at the second run's header (none of these logs lost a row).
    assert!(
        !got.rep.warnings.iter().any(|w| w.contains("lost step")),
        "{name}: {:?}",
        got.rep.warnings
    );
    for (_, gpu, row) in &got.rows {
        assert_eq!(row.get(Field::Index), &Value::U(u64::from(*gpu)), "{name}");
        assert_eq!(row.get(Field::Timestamp), &Value::Null, "{name}");
    }
    if k > 1 {
        for (i, (_, gpu, _)) in got.rows.iter().enumerate() {
            assert_eq!(*gpu as usize, i % k, "{name}: row {i}");
        }
    }
    for w in got.rows.windows(k + 1).step_by(k).take(500) {
        // rows k apart (same GPU, consecutive ticks) move forward in time
        assert!(w[k].0 >= w[0].0, "{name}: time goes back");
    }
}

/// Every file of `dir` has an entry in `table` and reads as it says; each is sniffed as nvidia-smi.
fn check_dir(dir: &Path, table: &[(&str, u64, usize)]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !n.ends_with(".md") && !n.ends_with(".py"))
        .collect();
    names.sort();
    assert_eq!(names.len(), table.len(), "a log without an expectation: {names:?}");
    for name in &names {
        let (_, rows, gpus) = table
            .iter()
            .find(|t| t.0 == name)
            .unwrap_or_else(|| panic!("no expectation for {name}"));
        let path = dir.join(name);
        check_log(&path, &opts_for(name), *rows, *gpus);
        let bytes = std::fs::read(&path).unwrap();
        assert!(looks_like_nvsmi(&bytes[..bytes.len().min(4096)]), "{name}");
    }
}

#[test]
fn every_fixture_parses_with_its_counts_and_is_sniffed() {
    check_dir(&fixture(""), FIXTURES);
}

#[test]
fn real_every_log_parses_with_the_readme_counts_and_is_sniffed() {
    let Some(dir) = shared_smi_logs() else { return };
    check_dir(&dir, TABLE);
}

#[test]
fn gpumon_csv_and_text_are_not_sniffed() {
    // gpumon's own CSV is told apart by the sniff before the log test is asked.
    assert_eq!(
        crate::sniff::sniff(
            b"timestamp,host,index,utilization.gpu [%]\n2025-01-01T00:00:00.000Z,h,0,5\n"
        ),
        Ok(crate::input::Kind::GpumonCsv)
    );
    assert!(!looks_like_nvsmi(b"hello, world\nthis is, text\n"));
    assert!(!looks_like_nvsmi(b""));
    assert!(!looks_like_nvsmi(b"\0\0\0\0"));
    assert!(looks_like_nvsmi(b"timestamp, power.draw [W]\n2025/01/0"));
}

/// The first row of a `timestamp,name,utilization.gpu,utilization.memory,memory.used,power.draw`
/// log, units on every value.
struct FirstRow {
    ts: &'static str,
    util: u64,
    mem_util: u64,
    mem: u64,
    power: f64,
    name: &'static str,
}

/// plain.csv (and bom.csv, its first rows behind a BOM).
const PLAIN_FIRST: FirstRow = FirstRow {
    ts: "2024-05-17T09:12:40.216+00:00",
    util: 2,
    mem_util: 1,
    mem: 523,
    power: 21.47,
    name: "NVIDIA RTX A6000",
};

fn check_first_row(path: &Path, want: &FirstRow) {
    let got = read_all(path, &utc()).unwrap();
    let (ts, gpu, row) = &got.rows[0];
    assert_eq!(ts.to_rfc3339(), want.ts);
    assert_eq!(*gpu, 0);
    assert_eq!(row.get(Field::UtilGpu), &Value::U(want.util));
    assert_eq!(row.get(Field::UtilMemory), &Value::U(want.mem_util));
    assert_eq!(row.get(Field::MemUsed), &Value::U(want.mem));
    assert_eq!(row.get(Field::PowerDraw), &Value::F(want.power));
    assert_eq!(row.get(Field::Name).as_str(), Some(want.name));
    assert_eq!(
        got.rep.columns,
        ["timestamp", "name", "utilization.gpu", "utilization.memory", "memory.used", "power.draw"]
    );
    assert!(got.rep.warnings.is_empty(), "{:?}", got.rep.warnings);
}

#[test]
fn first_row_values_with_units() {
    check_first_row(&fixture("plain.csv"), &PLAIN_FIRST);
}

#[test]
fn real_eobo_first_row_values() {
    let Some(dir) = shared_smi_logs() else { return };
    let want = FirstRow {
        ts: "2026-01-03T15:36:53.507+00:00",
        util: 1,
        mem_util: 2,
        mem: 1129,
        power: 33.09,
        name: "NVIDIA GeForce RTX 4090",
    };
    check_first_row(&dir.join("eobo0530_vlm_optimization__gpu_log.csv"), &want);
}

#[test]
fn a_bom_before_the_header_is_dropped() {
    check_first_row(&fixture("bom.csv"), &PLAIN_FIRST);
    let plain = read_all(&fixture("plain.csv"), &utc()).unwrap();
    let bom = read_all(&fixture("bom.csv"), &utc()).unwrap();
    assert_eq!(bom.rows[..], plain.rows[..4]);
    assert!(
        !bom.rep.ignored_columns.iter().any(|c| c.contains("timestamp")),
        "{:?}",
        bom.rep.ignored_columns
    );
}

#[test]
fn crlf_line_ends_are_read() {
    let got = read_all(&fixture("crlf.csv"), &utc()).unwrap();
    assert!(got.rep.warnings.is_empty(), "{:?}", got.rep.warnings);
    assert_eq!(got.rep.columns, ["timestamp", "memory.used", "utilization.gpu"]);
    let (ts, _, row) = &got.rows[3];
    assert_eq!(ts.to_rfc3339(), "2024-11-02T22:41:50.329+00:00");
    assert_eq!(row.get(Field::MemUsed), &Value::U(40218));
    assert_eq!(row.get(Field::UtilGpu), &Value::U(97));
}

/// The first row of a 41-column log (the H800 query): per-board values.
struct Wide {
    mem_total: u64,
    clock_sm: u64,
    clock_mem: u64,
    temp: u64,
    uuid: &'static str,
}

/// A log with 41 columns: `[N/A]` cells, text, hex bitmask and uuid columns, ignored columns.
fn check_wide(path: &Path, want: &Wide) {
    let got = read_all(path, &utc()).unwrap();
    let (_, _, row) = &got.rows[0];
    assert_eq!(row.get(Field::EventReasons), &Value::U(1));
    assert_eq!(row.get(Field::Pstate).as_str(), Some("P0"));
    assert_eq!(row.get(Field::FanSpeed), &Value::Null);
    assert_eq!(row.get(Field::MemTotal), &Value::U(want.mem_total));
    assert_eq!(row.get(Field::PowerLimit), &Value::F(700.0));
    assert_eq!(row.get(Field::ClockSm), &Value::U(want.clock_sm));
    assert_eq!(row.get(Field::ClockMem), &Value::U(want.clock_mem));
    assert_eq!(row.get(Field::TempGpu), &Value::U(want.temp));
    assert_eq!(row.get(Field::Uuid).as_str(), Some(want.uuid));
    // nvidia-smi names gpumon records too are read, not ignored (every --query-gpu name is one).
    for c in [
        "temperature.memory",
        "power.draw.instant",
        "clocks_event_reasons.gpu_idle",
        "vbios_version",
    ] {
        assert!(got.rep.columns.iter().any(|x| x == c), "{c} not in {:?}", got.rep.columns);
    }
    assert!(got.rep.columns.iter().any(|c| c == "clocks_event_reasons.active"));
    assert!(got.rep.columns.iter().any(|c| c == "clocks.sm"));
    assert!(got.rep.warnings.is_empty(), "{:?}", got.rep.warnings);
}

#[test]
fn na_cells_text_and_hex_columns() {
    let want = Wide {
        mem_total: 143771,
        clock_sm: 1980,
        clock_mem: 3201,
        temp: 29,
        uuid: "GPU-7c1e52a9-0d3b-4f86-b2e4-9a5f13c8d607",
    };
    check_wide(&fixture("na-text-hex.csv"), &want);
    // The bitmask of every row: idle (0x1), no reason (0x0), the software power cap (0x4).
    let got = read_all(&fixture("na-text-hex.csv"), &utc()).unwrap();
    let reasons: Vec<&Value> = got.rows.iter().map(|r| r.2.get(Field::EventReasons)).collect();
    assert_eq!(reasons, [&Value::U(1), &Value::U(0), &Value::U(4)]);
}

#[test]
fn real_h800_text_and_hex_columns() {
    let Some(dir) = shared_smi_logs() else { return };
    let want = Wide {
        mem_total: 81559,
        clock_sm: 885,
        clock_mem: 2619,
        temp: 37,
        uuid: "GPU-deb3f1bc-44cc-a622-e825-35a2cfa67c22",
    };
    check_wide(&dir.join("yqg9651_cuda_test__h800_sxm_random_gemm_bf16.csv"), &want);
}

#[test]
fn not_supported_cells_are_unsupported_not_zero() {
    let got = read_all(&fixture("not-supported.csv"), &utc()).unwrap();
    assert!(got.rep.warnings.is_empty(), "{:?}", got.rep.warnings);
    for (_, _, row) in &got.rows {
        for f in [Field::UtilGpu, Field::UtilMemory, Field::PowerDraw] {
            assert_eq!(row.get(f), &Value::Unsupported, "{f:?}");
        }
        assert_eq!(row.get(Field::MemTotal), &Value::U(1998));
    }
    let (_, _, row) = &got.rows[3];
    assert_eq!(row.get(Field::MemUsed), &Value::U(1031));
    assert_eq!(row.get(Field::FanSpeed), &Value::U(38));
}

/// A log ending in `nuls` NUL bytes (the logger was killed): a warning, and the rows before it.
fn check_nul_tail(path: &Path, nuls: usize) {
    let got = read_all(path, &utc()).unwrap();
    let want = format!("file ends in {nuls} NUL bytes (logger killed mid-write?)");
    assert!(got.rep.warnings.contains(&want), "{:?}", got.rep.warnings);
    assert_eq!(got.rep.warnings.len(), 1, "{:?}", got.rep.warnings);
    assert_eq!(got.rep.gpus, 2);
}

#[test]
fn a_nul_tail_is_a_warning() {
    check_nul_tail(&fixture("nul-tail.csv"), 640);
}

#[test]
fn real_titanx_killed_log_warns_about_nuls() {
    let Some(dir) = shared_smi_logs() else { return };
    check_nul_tail(
        &dir.join("grantwilkins_training_profile__titanx_2gpu_power-trace_2025-12-10-16-48-17.csv"),
        2533,
    );
}

/// A log whose line `line` is cut (no final newline): skipped with one warning; the row before it
/// (`ts`, `mem` MiB used on board `name`, P0) is read, its timestamp in the third column.
fn check_cut(path: &Path, line: u64, (ts, mem, name): (&str, u64, &str)) {
    let got = read_all(path, &utc()).unwrap();
    let want = format!("line {line} is cut short");
    assert!(got.rep.warnings.iter().any(|w| w.starts_with(&want)), "{:?}", got.rep.warnings);
    assert_eq!(got.rep.warnings.len(), 1, "{:?}", got.rep.warnings);
    let (last_ts, _, row) = got.rows.last().unwrap();
    assert_eq!(last_ts.to_rfc3339(), ts);
    assert_eq!(row.get(Field::Pstate).as_str(), Some("P0"));
    assert_eq!(row.get(Field::MemUsed), &Value::U(mem));
    assert_eq!(row.get(Field::Name).as_str(), Some(name));
}

#[test]
fn a_cut_last_line_is_skipped_with_a_warning() {
    check_cut(
        &fixture("cut-last-line.log"),
        8,
        ("2024-12-05T14:03:32.905+00:00", 77812, "NVIDIA A100 80GB PCIe"),
    );
}

#[test]
fn real_fridanl_cut_line_is_skipped_with_a_warning() {
    let Some(dir) = shared_smi_logs() else { return };
    let last = ("2026-02-25T10:06:20.442+00:00", 90098, "NVIDIA H100 NVL");
    check_cut(&dir.join("fridanl_thesis-mas__nvidia-smi.log"), 106, last);
}

#[test]
fn a_header_before_every_row() {
    let got = read_all(&fixture("header-every-row.csv"), &utc()).unwrap();
    assert_eq!(got.rep.rows, 5);
    assert!(
        got.rep
            .notes
            .iter()
            .any(|n| n.starts_with("4 repeated header line(s) skipped (first: line 3)")),
        "{:?}",
        got.rep.notes
    );
    assert!(got.rep.warnings.is_empty(), "{:?}", got.rep.warnings);
    let (_, gpu, row) = &got.rows[1];
    assert_eq!(*gpu, 0);
    assert_eq!(row.get(Field::PciBusId).as_str(), Some("00000000:2B:00.0"));
    assert_eq!(row.get(Field::MemUsed), &Value::U(3318));
    assert_eq!(row.get(Field::MemFree), &Value::U(8720));
    assert_eq!(row.get(Field::MemTotal), &Value::U(12288));
}

/// Two runs appended to one file: both read, the second header skipped, GPU 0 first after the gap
/// (its row at `second_start`).
fn check_appended(path: &Path, rows: u64, second_header: u64, second_start: &str) {
    let got = read_all(path, &utc()).unwrap();
    assert_eq!(got.rep.rows, rows);
    let note = format!("1 repeated header line(s) skipped (first: line {second_header})");
    assert!(got.rep.notes.iter().any(|n| n.starts_with(&note)), "{:?}", got.rep.notes);
    // the second run starts with GPU 0 after the gap (over a minute)
    let i = got.rows.windows(2).position(|w| (w[1].0 - w[0].0).num_seconds() > 60).unwrap() + 1;
    assert_eq!(got.rows[i].1, 0);
    assert_eq!(got.rows[i].0.to_rfc3339(), second_start);
    assert_eq!(got.rows[i + 1].1, 1);
}

#[test]
fn appended_runs_are_both_read_and_the_second_header_skipped() {
    check_appended(&fixture("appended-runs.csv"), 18, 12, "2024-03-21T17:59:38.414+00:00");
}

#[test]
fn real_appended_runs_are_both_read_and_the_second_header_skipped() {
    let Some(dir) = shared_smi_logs() else { return };
    let path = dir.join("grantwilkins_training_profile__titanx_log_appended_2runs.csv");
    check_appended(&path, 2714, 1472, "2025-11-21T00:10:33.048+00:00");
}

#[test]
fn interleaved_gpus_without_an_index_are_inferred_from_the_timing() {
    let got = read_all(&fixture("interleaved-8gpu.csv"), &utc()).unwrap();
    assert_eq!(got.rep.gpus, 8);
    assert!(
        got.rep.notes.iter().any(|n| n.contains("8 GPUs inferred from the row timing")),
        "{:?}",
        got.rep.notes
    );
    // GPU 0 is the one with the 418 MiB context, in every tick
    for (i, (_, gpu, row)) in got.rows.iter().enumerate() {
        assert_eq!(row.get(Field::MemUsed), &Value::U(if *gpu == 0 { 418 } else { 1 }), "row {i}");
    }
    assert_eq!(got.rows[8].1, 0);
    assert!(got.rows[8].0 > got.rows[7].0);
}

/// A `noheader,nounits` log: an error naming the file and `--columns` without them, 4 GPUs with;
/// the fourth row (GPU 3) holds `mem` MiB used and `util` %.
fn check_headerless(path: &Path, (mem, util): (u64, u64)) {
    let err = read_all(path, &utc()).err().unwrap();
    let msg = format!("{err:#}");
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(msg.contains("--columns") && msg.contains(&*name), "{msg}");
    let got = read_all(path, &opts_for("headerless")).unwrap();
    let (_, gpu, row) = &got.rows[3];
    assert_eq!(*gpu, 3);
    assert_eq!(row.get(Field::MemUsed), &Value::U(mem));
    assert_eq!(row.get(Field::UtilGpu), &Value::U(util));
}

#[test]
fn headerless_log_needs_columns() {
    check_headerless(&fixture("headerless-nounits.csv"), (412, 2));
}

#[test]
fn real_headerless_log_needs_columns() {
    let Some(dir) = shared_smi_logs() else { return };
    check_headerless(&dir.join("dst915_llama.cpp__gpu_stats.csv"), (13325, 0));
}

#[test]
fn gpus_option_overrides() {
    let path = fixture("nul-tail.csv");
    let opts = NvsmiOptions { gpus: Some(1), ..utc() };
    let got = read_all(&path, &opts).unwrap();
    assert_eq!(got.rep.gpus, 1);
    let opts = NvsmiOptions { gpus: Some(4), ..utc() };
    assert_eq!(read_all(&path, &opts).unwrap().rep.gpus, 4);
    let opts = NvsmiOptions { gpus: Some(0), ..utc() };
    assert!(read_all(&path, &opts).is_err());
}

#[test]
fn errors_name_the_file() {
    let e = read_all(Path::new("/nonexistent/x.csv"), &utc()).err().unwrap();
    assert!(format!("{e:#}").contains("/nonexistent/x.csv"));
    let f = write_tmp(b"");
    let e = read_all(f.path(), &utc()).err().unwrap();
    assert!(format!("{e:#}").contains("is empty"));
    let f = write_tmp(b"timestamp, utilization.gpu [%]\n");
    let e = read_all(f.path(), &utc()).err().unwrap();
    assert!(format!("{e:#}").contains("no data rows"));
    let f = write_tmp(b"hello\nworld\n");
    let e = read_all(f.path(), &utc()).err().unwrap();
    assert!(format!("{e:#}").contains("no nvidia-smi header"));
    let f = write_tmp(b"\0\0\0");
    assert!(read_all(f.path(), &utc()).is_err());
}

#[test]
fn units_markers_and_bad_cells() {
    let f = write_tmp(
        b"timestamp, memory.used [MiB], memory.total [MiB], power.draw [W], utilization.gpu [%], clocks.sm [MHz], fan.speed [%], bogus.col\n\
          2025/01/01 00:00:00.000, 2048 KiB, 2 GiB, 1500 mW, [Not Supported], 1.41 GHz, [Unknown Error], x\n\
          2025/01/01 00:00:01.000, 17 MiB, 80 GiB, 69.5 W, abc, [GPU is lost], 3 %, y\n\
          2025/01/01 00:00:02.000, 18 MiB, 80 GiB, 70 W, def, N/A, 300 %, z\n",
    );
    let got = read_all(f.path(), &utc()).unwrap();
    let r0 = &got.rows[0].2;
    assert_eq!(r0.get(Field::MemUsed), &Value::U(2));
    assert_eq!(r0.get(Field::MemTotal), &Value::U(2048));
    assert_eq!(r0.get(Field::PowerDraw), &Value::F(1.5));
    assert_eq!(r0.get(Field::UtilGpu), &Value::Unsupported);
    assert_eq!(r0.get(Field::ClockSm), &Value::U(1410));
    assert_eq!(r0.get(Field::FanSpeed), &Value::Null);
    let r1 = &got.rows[1].2;
    assert_eq!(r1.get(Field::UtilGpu), &Value::Null);
    assert_eq!(r1.get(Field::ClockSm), &Value::Null);
    assert_eq!(r1.get(Field::FanSpeed), &Value::U(3));
    // 300 does not fit the u8 of fan.speed: null with a warning
    assert_eq!(got.rows[2].2.get(Field::FanSpeed), &Value::Null);
    assert!(got.rep.warnings.iter().any(|w| w.contains("fan.speed")), "{:?}", got.rep.warnings);
    // one warning per column, not per row
    let util: Vec<_> = got.rep.warnings.iter().filter(|w| w.contains("utilization.gpu")).collect();
    assert_eq!(util.len(), 1, "{:?}", got.rep.warnings);
    assert_eq!(got.rep.ignored_columns, ["bogus.col"]);
}

#[test]
fn nounits_header_units_apply() {
    let f = write_tmp(
        b"timestamp, memory.used [KiB], power.draw [W]\n2025/01/01 00:00:00.000, 4096, 70.5\n",
    );
    let got = read_all(f.path(), &utc()).unwrap();
    assert_eq!(got.rows[0].2.get(Field::MemUsed), &Value::U(4));
    assert_eq!(got.rows[0].2.get(Field::PowerDraw), &Value::F(70.5));
}

#[test]
fn header_switch_changes_the_mapping() {
    let f = write_tmp(
        b"timestamp, index, power.draw [W]\n\
          2025/01/01 00:00:00.000, 0, 50.0 W\n\
          2025/01/01 00:00:00.002, 1, 60.0 W\n\
          timestamp, index, memory.used [MiB], power.draw [W]\n\
          2025/01/01 00:01:00.000, 1, 17 MiB, 61.0 W\n",
    );
    let got = read_all(f.path(), &utc()).unwrap();
    assert_eq!(got.rep.rows, 3);
    assert_eq!(got.rep.gpus, 2);
    let (_, gpu, row) = &got.rows[2];
    assert_eq!(*gpu, 1);
    assert_eq!(row.get(Field::MemUsed), &Value::U(17));
    assert_eq!(row.get(Field::PowerDraw), &Value::F(61.0));
    assert_eq!(got.rep.columns, ["timestamp", "index", "power.draw", "memory.used"]);
    assert!(got.rep.notes.iter().any(|n| n.contains("line 4")), "{:?}", got.rep.notes);
}

#[test]
fn uuid_numbers_gpus_by_first_appearance() {
    let f = write_tmp(
        b"timestamp, uuid, utilization.gpu [%]\n\
          2025/01/01 00:00:00.000, GPU-b, 1 %\n\
          2025/01/01 00:00:00.001, GPU-a, 2 %\n\
          2025/01/01 00:00:01.000, GPU-b, 3 %\n\
          2025/01/01 00:00:01.001, GPU-a, 4 %\n",
    );
    let got = read_all(f.path(), &utc()).unwrap();
    let gpus: Vec<u32> = got.rows.iter().map(|r| r.1).collect();
    assert_eq!(gpus, [0, 1, 0, 1]);
    assert_eq!(got.rep.gpus, 2);
}

/// A k-GPU interleaved log, one sample per second, rows of a sample 2 ms apart; rows are
/// numbered from 1; `skip` rows are left out and `late` rows come 400 ms late.
fn interleaved_log(k: usize, ticks: usize, skip: &[usize], late: &[usize]) -> String {
    let mut s = String::from("timestamp, power.draw [W], memory.used [MiB]\n");
    let mut n = 0;
    for t in 0..ticks {
        for g in 0..k {
            n += 1;
            if skip.contains(&n) {
                continue;
            }
            let ms = t * 1000 + g * 2 + if late.contains(&n) { 400 } else { 0 };
            s += &format!(
                "2025/01/01 00:{:02}:{:02}.{:03}, {}.5 W, {} MiB\n",
                ms / 60000,
                ms / 1000 % 60,
                ms % 1000,
                60 + g,
                100 * g
            );
        }
    }
    s
}

/// Every row's memory.used is 100 x its GPU in the synthetic logs.
fn assert_gpus_match_memory(rows: &[(DateTime<Utc>, u32, Row)], skip_first: usize) {
    for (i, (_, gpu, row)) in rows.iter().enumerate().skip(skip_first) {
        assert_eq!(row.get(Field::MemUsed), &Value::U(100 * u64::from(*gpu)), "row {i}");
    }
}

#[test]
fn a_log_starting_mid_sample_and_a_slow_first_sample() {
    let got = read_all(write_tmp(interleaved_log(4, 30, &[1, 2], &[]).as_bytes()).path(), &utc())
        .unwrap();
    assert_eq!(got.rep.gpus, 4);
    assert_eq!(got.rows[0].1, 2);
    assert_gpus_match_memory(&got.rows, 0);
    // the first sample is slow (GPU 2 and 3 come late): still phase 0, and no resync
    let got = read_all(write_tmp(interleaved_log(4, 30, &[], &[3, 4]).as_bytes()).path(), &utc())
        .unwrap();
    assert_eq!(got.rep.gpus, 4, "{:?}", got.rep.notes);
    assert_gpus_match_memory(&got.rows, 0);
    assert!(got.rep.warnings.is_empty(), "{:?}", got.rep.warnings);
}

#[test]
fn interleaved_order_resynchronises_after_a_lost_row() {
    let f = write_tmp(interleaved_log(4, 40, &[4 * 10 + 2], &[]).as_bytes());
    let got = read_all(f.path(), &utc()).unwrap();
    assert_eq!(got.rep.gpus, 4);
    assert!(got.rep.warnings.iter().any(|w| w.contains("lost step")), "{:?}", got.rep.warnings);
    // from two samples after the lost row on, the assignment is right again
    assert_gpus_match_memory(&got.rows, 4 * 13);
    // a one-off late row inside a sample does not shift the order
    let got =
        read_all(write_tmp(interleaved_log(4, 40, &[], &[4 * 7 + 3]).as_bytes()).path(), &utc())
            .unwrap();
    assert_gpus_match_memory(&got.rows, 0);
}

#[test]
fn one_shot_per_tick_with_headers_infers_from_runs() {
    let mut s = String::new();
    for t in 0..5 {
        s += "timestamp, power.draw [W]\n";
        for g in 0..3 {
            s += &format!("2025/01/01 00:00:{:02}.{:03}, {}.0 W\n", t, g * 3, 50 + g);
        }
    }
    let got = read_all(write_tmp(s.as_bytes()).path(), &utc()).unwrap();
    assert_eq!(got.rep.gpus, 3, "{:?}", got.rep.notes);
    let gpus: Vec<u32> = got.rows.iter().map(|r| r.1).take(6).collect();
    assert_eq!(gpus, [0, 1, 2, 0, 1, 2]);
}

#[test]
fn timestamps_use_the_zone_and_take_the_earliest_in_a_fold() {
    let ny =
        NvsmiOptions { tz: gpumon_util::NamedZone::get("America/New_York"), ..Default::default() };
    let f = write_tmp(
        b"timestamp, power.draw [W]\n\
          2024/11/03 01:30:00.000, 1 W\n\
          2024/03/10 02:30:00.000, 1 W\n\
          2024/07/01 12:00:00.250, 1 W\n",
    );
    let got = read_all(f.path(), &ny).unwrap();
    // 01:30 happens twice: EDT (UTC-4) first
    assert_eq!(got.rows[0].0.to_rfc3339(), "2024-11-03T05:30:00+00:00");
    // 02:30 does not exist: read with EST (UTC-5)
    assert_eq!(got.rows[1].0.to_rfc3339(), "2024-03-10T07:30:00+00:00");
    assert_eq!(got.rows[2].0.to_rfc3339(), "2024-07-01T16:00:00.250+00:00");
    assert!(got.rep.warnings.iter().any(|w| w.contains("daylight-saving gap")));
}

#[test]
fn nuls_inside_and_crlf_are_tolerated() {
    let f = write_tmp(
        b"timestamp, power.draw [W]\r\n2025/01/01 00:00:00.000, 1 W\r\n\0\0\x002025/01/01 00:00:01.000, 2 W\r\n2025/01/01 00:00:02.000, 3 W\n\0\0",
    );
    let got = read_all(f.path(), &utc()).unwrap();
    assert_eq!(got.rep.rows, 3);
    assert!(
        got.rep.warnings.iter().any(|w| w.starts_with("3 NUL bytes removed")),
        "{:?}",
        got.rep.warnings
    );
    assert!(got.rep.warnings.iter().any(|w| w.starts_with("file ends in 2 NUL")));
}

#[test]
fn columns_option_and_a_header_in_the_file() {
    let opts = NvsmiOptions { columns: Some(vec!["timestamp, power.draw".into()]), ..utc() };
    let f = write_tmp(b"timestamp, power.draw [W]\n2025/01/01 00:00:00.000, 1 W\n");
    let got = read_all(f.path(), &opts).unwrap();
    assert_eq!(got.rep.rows, 1);
    assert!(got.rep.warnings.iter().any(|w| w.contains("instead of --columns")));
    // A header of the writer's own names is replaced by --columns of its width, `_` skipping one.
    let own = write_tmp(b"when, watts\n2025/01/01 00:00:00.000, 1\n");
    let opts = NvsmiOptions { columns: Some(vec!["timestamp,power.draw".into()]), ..utc() };
    let got = read_all(own.path(), &opts).unwrap();
    assert_eq!(got.rows[0].2.get(Field::PowerDraw), &Value::F(1.0));
    assert!(got.rep.notes.iter().any(|w| w.contains("as --columns names them")), "{:?}", got.rep);
    let skip = NvsmiOptions { columns: Some(vec!["timestamp,_".into()]), ..utc() };
    assert!(read_all(own.path(), &skip).is_err(), "no metric column left");
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(b"timestamp, index, power.draw [W], memory.used [MiB]".to_vec()),
            Just(b"timestamp, power.draw [W], utilization.gpu [%]".to_vec()),
            Just(b"name, pstate, timestamp, clocks_event_reasons.active".to_vec()),
            (0u32..5000, 0u32..3, 0u32..500).prop_map(|(ms, g, w)| format!(
                "2025/01/01 00:{:02}:{:02}.{:03}, {g}, {w}.5 W, {} MiB",
                ms / 60000 % 60,
                ms / 1000 % 60,
                ms % 1000,
                w * 3
            )
            .into_bytes()),
            (0u32..5000, 0u32..500).prop_map(|(ms, w)| format!(
                "2025/01/01 00:00:{:02}.{:03}, {w} W, [N/A]",
                ms / 1000 % 60,
                ms % 1000
            )
            .into_bytes()),
            Just(b"NVIDIA H100, P0, 2025/01/01 00:00:00.000, 0xZZ".to_vec()),
            // Other writers' lines: own names, a leading time, epoch and `date` times, separators.
            Just(b"time,gpu_index,temperature_C,power_W".to_vec()),
            Just(b",timestamp,index,power.draw [W]".to_vec()),
            Just(b"index, power.draw".to_vec()),
            (0u32..50, 0u32..3)
                .prop_map(|(s, g)| format!("{}, {g}, 7.5", 1_735_725_600 + s).into_bytes()),
            (0u32..50)
                .prop_map(|s| format!("Wed Jan  1 10:00:{:02} UTC 2025", s % 60).into_bytes()),
            Just(b"-----".to_vec()),
            Just(b"\"2025-01-01T10:00:00+01:00\",\"0\",\"1.0\",\"[GPU is lost]\"".to_vec()),
            "[ -~]{0,60}".prop_map(String::into_bytes),
            proptest::collection::vec(any::<u8>(), 0..60),
            (1usize..50).prop_map(|n| vec![0u8; n]),
        ]
    }

    fn file() -> impl Strategy<Value = (Vec<u8>, usize)> {
        (proptest::collection::vec(line(), 0..25), 0usize..40).prop_map(|(lines, cut)| {
            let mut out = lines.join(&b'\n');
            out.push(b'\n');
            let keep = out.len().saturating_sub(cut);
            out.truncate(keep);
            (out, cut)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn never_panics((bytes, _) in file(), cols in any::<bool>(), gpus in proptest::option::of(0usize..5)) {
            let f = write_tmp(&bytes);
            let columns = cols.then(|| vec!["timestamp".to_string(), "index".into(), "power.draw".into(), "memory.used".into()]);
            let opts = NvsmiOptions { columns, gpus, tz: gpumon_util::NamedZone::get("Europe/Berlin") };
            let mut n = 0u64;
            if let Ok(rep) = read_nvsmi(f.path(), &opts, &mut |_| n += 1) {
                prop_assert_eq!(rep.rows, n);
                prop_assert!(rep.rows > 0);
            }
            let _ = looks_like_nvsmi(&bytes);
        }
    }
}

/// A log with per-reason columns (`Active` / `Not Active`) and no `.active` bitmask: they make it up.
#[test]
fn per_reason_columns_make_up_the_bitmask() {
    let f = write_tmp(
        b"timestamp, index, utilization.gpu [%], clocks_throttle_reasons.sw_power_cap, \
          clocks_event_reasons.hw_thermal_slowdown\n\
          2026/01/05 10:00:00.000, 0, 98 %, Active, Active\n\
          2026/01/05 10:00:01.000, 0, 98 %, Not Active, Not Active\n\
          2026/01/05 10:00:02.000, 0, 98 %, [N/A], [N/A]\n",
    );
    let got = read_all(f.path(), &utc()).unwrap();
    let bits: Vec<&Value> = got.rows.iter().map(|(_, _, r)| r.get(Field::EventReasons)).collect();
    assert_eq!(bits, [&Value::U(0x44), &Value::U(0), &Value::Null]);
    assert!(
        got.rep.columns.iter().any(|c| c == "clocks_event_reasons.active"),
        "{:?}",
        got.rep.columns
    );
}
