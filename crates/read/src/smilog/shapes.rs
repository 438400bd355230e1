//! The shapes other people's scripts give nvidia-smi logs, generated here (shell loops with `echo`
//! headers and `date` lines, Python `csv` / pandas writers with their own column names, `-lms`
//! logs, marker cells, CRLF, appended runs, a file still being written), each with what it gives:
//! GPUs, rows, a known value, and the warning, note or error that names what was done.

use super::*;
use gpumon_schema::Value;
use gpumon_schema::catalog::Field;
use std::fmt::Write as _;
use std::io::Write;

/// What a shape must give.
enum Want {
    /// Read: GPUs, rows, (row, field, value) of a known cell, texts the warnings (`w:`) or notes
    /// (`n:`) must contain (none at all: `[]` means no warning).
    Read { gpus: usize, rows: u64, cell: (usize, Field, Value), says: &'static [&'static str] },
    /// Refused: texts the error must contain.
    Refused(&'static [&'static str]),
}

struct Shape {
    name: &'static str,
    log: String,
    columns: Option<&'static str>,
    want: Want,
}

/// `ticks` samples of `gpus` GPUs a second apart from 2025-01-01 10:00:00 UTC, one line each from
/// `row(tick, gpu)`.
fn lines(ticks: u32, gpus: u32, row: impl Fn(u32, u32) -> String) -> String {
    let mut s = String::new();
    for t in 0..ticks {
        for g in 0..gpus {
            let _ = writeln!(s, "{}", row(t, g));
        }
    }
    s
}

/// nvidia-smi's timestamp of tick `t`, GPU `g` (rows of one sample 2 ms apart).
fn smi_ts(t: u32, g: u32) -> String {
    format!("2025/01/01 10:00:{:02}.{:03}", t, 2 * g)
}

/// Utilization of GPU `g` at tick `t`: a value that tells them apart.
fn util(t: u32, g: u32) -> u32 {
    10 * g + t
}

const EPOCH: u32 = 1_735_725_600; // 2025-01-01 10:00:00 UTC

fn shapes() -> Vec<Shape> {
    let noheader = |t, g| format!("{}, {g}, {}, {}", smi_ts(t, g), util(t, g), 1000 + g);
    let mut v = vec![
        Shape {
            name: "echo header, noheader,nounits rows padded with `, `",
            log: format!("timestamp,index,utilization.gpu,memory.used\n{}", lines(3, 2, noheader)),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 6,
                cell: (1, Field::UtilGpu, Value::U(10)),
                says: &[],
            },
        },
        Shape {
            name: "echo header over padded rows with RFC 3339 times",
            log: format!(
                "timestamp,index,utilization.gpu\n{}",
                lines(3, 1, |t, g| format!("2025-01-01T10:00:0{t}Z, {g}, {}", util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 1,
                rows: 3,
                cell: (2, Field::UtilGpu, Value::U(2)),
                says: &[],
            },
        },
        Shape {
            name: "own column names, some known",
            log: format!(
                "timestamp,gpu_index,temperature_C,utilization.gpu\n{}",
                lines(2, 1, |t, g| format!("{}, {g}, 40, {}", smi_ts(t, g), util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 1,
                rows: 2,
                cell: (1, Field::UtilGpu, Value::U(1)),
                says: &["w:`temperature_C`", "w:may be temperature.gpu"],
            },
        },
        Shape {
            name: "own column names, some known, rows timed `...Z`",
            log: format!(
                "timestamp,index,utilization.gpu,fan_rpm\n{}",
                lines(2, 1, |t, g| format!("2025-01-01T10:00:0{t}Z,{g},{},1200", util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 1,
                rows: 2,
                cell: (1, Field::UtilGpu, Value::U(1)),
                says: &["w:`fan_rpm` are not nvidia-smi query names"],
            },
        },
        Shape {
            name: "own column names, no metric known",
            log: own_names(),
            columns: None,
            want: Want::Refused(&[
                "`utilization_gpu_percent`",
                "`power_W`",
                "--columns timestamp,index,temperature.gpu,utilization.gpu,power.draw",
            ]),
        },
        Shape {
            name: "own column names over rows timed `2025-01-01T10:00:00Z`, no metric known",
            log: format!(
                "timestamp,gpu_index,temperature_C,utilization_gpu_percent,power_W\n{}",
                lines(2, 1, |t, g| format!("2025-01-01T10:00:0{t}Z,{g},40,{},100", util(t, g)))
            ),
            columns: None,
            want: Want::Refused(&["`utilization_gpu_percent`", "--columns"]),
        },
        Shape {
            name: "own column names, named with --columns",
            log: own_names(),
            columns: Some("timestamp,index,temperature.gpu,utilization.gpu,power.draw"),
            want: Want::Read {
                gpus: 1,
                rows: 2,
                cell: (1, Field::PowerDraw, Value::F(110.5)),
                says: &["n:as --columns names them"],
            },
        },
        Shape {
            name: "Python csv writer: names gpumon does not know, none of them",
            log: format!(
                "time,gpu,util,mem\n{}",
                lines(2, 1, |t, g| format!("{},{g},{},100", EPOCH + t, util(t, g)))
            ),
            columns: None,
            want: Want::Refused(&[
                "`time,gpu,util,mem`",
                "--columns timestamp,index,utilization.gpu,memory.used",
            ]),
        },
        Shape {
            name: "pandas to_csv with its index column",
            log: format!(
                ",timestamp,index,utilization.gpu [%],memory.used [MiB]\n{}",
                lines(2, 2, |t, g| format!(
                    "{},{},{g},{} %,{} MiB",
                    2 * t + g,
                    smi_ts(t, g),
                    util(t, g),
                    500 + g
                ))
            ),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 4,
                cell: (3, Field::MemUsed, Value::U(501)),
                says: &[],
            },
        },
        Shape {
            name: "pandas round trip: ISO times, the units kept in the cells",
            log: format!(
                ",timestamp,index,utilization.gpu [%],power.draw [W]\n{}",
                lines(2, 1, |t, g| format!(
                    "{t},2025-01-01 10:00:0{t}.000,{g},{} %,70.5 W",
                    util(t, g)
                ))
            ),
            columns: None,
            want: Want::Read {
                gpus: 1,
                rows: 2,
                cell: (1, Field::PowerDraw, Value::F(70.5)),
                says: &[],
            },
        },
        Shape {
            name: "pandas after a merge: the index column written as floats",
            log: format!(
                ",timestamp,index,utilization.gpu\n{}",
                lines(2, 2, |t, g| format!(
                    "{},{},{g}.0,{}.0",
                    2 * t + g,
                    smi_ts(t, g),
                    util(t, g)
                ))
            ),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 4,
                cell: (3, Field::UtilGpu, Value::U(11)),
                says: &[],
            },
        },
        Shape {
            name: "Python csv writer with every cell quoted",
            log: format!(
                "\"timestamp\",\"index\",\"utilization.gpu\"\n{}",
                lines(2, 1, |t, g| format!("\"{}\",\"{g}\",\"{}\"", smi_ts(t, g), util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 1,
                rows: 2,
                cell: (1, Field::UtilGpu, Value::U(1)),
                says: &[],
            },
        },
        Shape {
            name: "headerless `$(date +%s),` + noheader,nounits, named with --columns",
            log: lines(3, 1, |t, g| format!("{},{g},{},1000", EPOCH + t, util(t, g))),
            columns: Some("timestamp,index,utilization.gpu,memory.used"),
            want: Want::Read {
                gpus: 1,
                rows: 3,
                cell: (2, Field::UtilGpu, Value::U(2)),
                says: &[],
            },
        },
        Shape {
            name: "headerless epoch rows without --columns",
            log: lines(3, 1, |t, g| format!("{},{g},{},1000", EPOCH + t, util(t, g))),
            columns: None,
            want: Want::Refused(&["no header line", "--query-gpu"]),
        },
        Shape {
            name: "headerless, any spacing around the commas, --columns",
            log: lines(2, 1, |t, g| format!("{}.250 ,{g} ,  {}  ,1000", EPOCH + t, util(t, g))),
            columns: Some("timestamp, index ,utilization.gpu,memory.used"),
            want: Want::Read {
                gpus: 1,
                rows: 2,
                cell: (1, Field::UtilGpu, Value::U(1)),
                says: &[],
            },
        },
        Shape {
            name: "a header one name short: a script's own time column in front",
            log: format!(
                "index,utilization.gpu\n{}",
                lines(2, 2, |t, g| format!("{}, {g}, {}", EPOCH + t, util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 4,
                cell: (3, Field::UtilGpu, Value::U(11)),
                says: &["n:one cell more than the header names"],
            },
        },
        Shape {
            name: "a time column of the writer's own name",
            log: format!(
                "time,index,utilization.gpu\n{}",
                lines(2, 2, |t, g| format!("2025-01-01 10:00:0{t}.{g}, {g}, {}", util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 4,
                cell: (2, Field::UtilGpu, Value::U(1)),
                says: &["n:column time holds times"],
            },
        },
        Shape {
            name: "a time column of the writer's own name, GPUs interleaved",
            log: format!(
                "date,utilization.gpu\n{}",
                lines(6, 2, |t, g| format!("{}, {}", smi_ts(t, g), util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 12,
                cell: (3, Field::UtilGpu, Value::U(11)),
                says: &["n:column date holds times", "n:2 GPUs inferred"],
            },
        },
        Shape {
            name: "`-lms 100`: epoch milliseconds",
            log: format!(
                "timestamp, index, utilization.gpu\n{}",
                lines(3, 1, |t, g| format!("{}{:03}, {g}, {}", EPOCH, 100 * t, util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 1,
                rows: 3,
                cell: (2, Field::UtilGpu, Value::U(2)),
                says: &[],
            },
        },
        Shape {
            name: "ISO 8601 with an offset",
            log: format!(
                "timestamp, index, utilization.gpu\n{}",
                lines(2, 1, |t, g| format!("2025-01-01T11:00:0{t}.5+01:00, {g}, {}", util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 1,
                rows: 2,
                cell: (0, Field::UtilGpu, Value::U(0)),
                says: &[],
            },
        },
        Shape {
            name: "`date` lines and separators between samples, rows without a timestamp",
            log: date_loop(),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 6,
                cell: (5, Field::UtilGpu, Value::U(12)),
                says: &["n:a `date` line, a separator"],
            },
        },
        Shape {
            name: "`[N/A]`, `[Not Supported]`, `[GPU is lost]`, `[Unknown Error]` cells",
            log: format!(
                "timestamp, index, utilization.gpu [%], power.draw [W]\n\
                 {}, 0, [Not Supported], [N/A]\n{}, 0, [GPU is lost], [Unknown Error]\n{}, 0, 7 %, 70.5 W\n",
                smi_ts(0, 0),
                smi_ts(1, 0),
                smi_ts(2, 0)
            ),
            columns: None,
            want: Want::Read {
                gpus: 1,
                rows: 3,
                cell: (0, Field::UtilGpu, Value::Unsupported),
                says: &[
                    "w:1 `[GPU is lost]` cell(s) (first: line 3)",
                    "w:1 `[Unknown Error]` cell(s)",
                ],
            },
        },
        Shape {
            name: "Windows line endings",
            log: format!("timestamp,index,utilization.gpu\n{}", lines(2, 2, noheader_short))
                .replace('\n', "\r\n"),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 4,
                cell: (2, Field::UtilGpu, Value::U(1)),
                says: &[],
            },
        },
        Shape {
            name: "PowerShell 5's `>`: UTF-16 with CRLF",
            log: String::new(),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 4,
                cell: (2, Field::UtilGpu, Value::U(1)),
                says: &["n:read as UTF-16"],
            },
        },
        Shape {
            name: "several runs appended, a header before each",
            log: format!(
                "timestamp, index, utilization.gpu\n{}timestamp, index, utilization.gpu\n{}",
                lines(2, 2, noheader_short),
                lines(2, 2, |t, g| noheader_short(t + 10, g))
            ),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 8,
                cell: (4, Field::UtilGpu, Value::U(10)),
                says: &["n:1 repeated header line(s) skipped"],
            },
        },
        Shape {
            name: "a file still being written: the last line cut",
            log: format!(
                "timestamp, index, utilization.gpu\n{}2025/01/01 10:00:05.0",
                lines(2, 1, noheader_short)
            ),
            columns: None,
            want: Want::Read {
                gpus: 1,
                rows: 2,
                cell: (1, Field::UtilGpu, Value::U(1)),
                says: &["w:cut short"],
            },
        },
        Shape {
            name: "a file still being written: the last line cut inside a number with a unit",
            log: "timestamp, index, utilization.gpu [%]\n2025/01/01 10:00:00.000, 0, 55 %\n\
                  2025/01/01 10:00:01.000, 0, 56 %\n2025/01/01 10:00:02.000, 0, 5"
                .to_string(),
            columns: None,
            want: Want::Read {
                gpus: 1,
                rows: 2,
                cell: (1, Field::UtilGpu, Value::U(56)),
                says: &["w:cut short"],
            },
        },
        Shape {
            name: "an index repeating within one timestamp (a mislabelled column)",
            log: format!(
                "timestamp,index,utilization.gpu\n{}",
                lines(5, 8, |t, g| format!("{}, 0, {}", EPOCH + t, util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 8,
                rows: 40,
                cell: (9, Field::UtilGpu, Value::U(11)),
                says: &[
                    "w:column index: the same index twice at 1735725600 (line 3)",
                    "n:8 GPUs inferred",
                ],
            },
        },
        Shape {
            name: "GPUs interleaved without an index column",
            log: format!(
                "timestamp, utilization.gpu\n{}",
                lines(6, 2, |t, g| format!("{}, {}", smi_ts(t, g), util(t, g)))
            ),
            columns: None,
            want: Want::Read {
                gpus: 2,
                rows: 12,
                cell: (3, Field::UtilGpu, Value::U(11)),
                says: &["n:2 GPUs inferred", "n:--interleaved-gpus N"],
            },
        },
        Shape {
            name: "a time column holding no timestamp gpumon reads",
            log: "timestamp, index, utilization.gpu\nyesterday, 0, 5\ntoday, 0, 6\n".to_string(),
            columns: None,
            want: Want::Refused(&[
                "timestamp cell is not a timestamp",
                "`yesterday`",
                "epoch seconds",
            ]),
        },
    ];
    let dmon_header = "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem   mclk   pclk     fb   bar1\n\
                       #YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %    MHz    MHz     MB     MB\n";
    v.push(Shape {
        name: "`nvidia-smi dmon -s pucm -o DT`, its header repeated, `-` for a value it lacks",
        log: format!(
            "{dmon_header}{}{dmon_header}{}",
            lines(2, 2, |t, g| format!(
                " 20250101   10:00:0{t}      {g}     71     34      -     {:>2}      0   2619   1980    500      2",
                util(t, g)
            )),
            lines(1, 2, |_, g| format!(" 20250101   10:00:02      {g}    350     54      -     98     40   2619   1980  60000      2"))
        ),
        columns: None,
        want: Want::Read {
            gpus: 2,
            rows: 6,
            cell: (3, Field::UtilGpu, Value::U(util(1, 1).into())),
            says: &["n:repeated header"],
        },
    });
    v.push(Shape {
        name: "nvidia-smi's table in a loop (`nvidia-smi -l 1 > gpu.log`), with its process table",
        log: (0..2).map(table_sample).collect(),
        columns: None,
        want: Want::Read {
            gpus: 2,
            rows: 4,
            cell: (3, Field::UtilGpu, Value::U(util(1, 1).into())),
            says: &[],
        },
    });
    v.push(Shape {
        name: "`nvidia-smi dmon` without `-o DT`: no time",
        log: "# gpu    pwr  gtemp\n# Idx      W      C\n    0     75     40\n".to_string(),
        columns: None,
        want: Want::Refused(&["without its date and time", "-o DT"]),
    });
    v.push(Shape {
        name: "`date`'s default format as the time column",
        log: format!(
            "timestamp, index, utilization.gpu\n{}",
            lines(2, 1, |t, g| format!("Wed Jan  1 10:00:0{t} UTC 2025, {g}, {}", util(t, g)))
        ),
        columns: None,
        want: Want::Read { gpus: 1, rows: 2, cell: (1, Field::UtilGpu, Value::U(1)), says: &[] },
    });
    v
}

/// One sample of nvidia-smi's table (driver 550's layout) at tick `t`, two GPUs and a process.
fn table_sample(t: u32) -> String {
    let mut s = format!(
        "Wed Jan  1 10:00:0{t} 2025\n\
         +-----------------------------------------------------------------------------------------+\n\
         | NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n\
         |-----------------------------------------+------------------------+----------------------+\n\
         | GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n\
         | Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n\
         |=========================================+========================+======================|\n"
    );
    for g in 0..2 {
        let _ = write!(
            s,
            "|   {g}  NVIDIA H100 80GB HBM3          On  |   00000000:1{g}:00.0 Off |                    0 |\n\
             | N/A   3{g}C    P0             69W /  700W |    4000MiB /  81559MiB |     {:>2}%      Default |\n\
             +-----------------------------------------+------------------------+----------------------+\n",
            util(t, g)
        );
    }
    s.push_str(
        "\n+-----------------------------------------------------------------------------------------+\n\
         | Processes:                                                                              |\n\
         |  GPU   GI   CI        PID   Type   Process name                              GPU Memory |\n\
         |=========================================================================================|\n\
         |    0   N/A  N/A     12345      C   python                                       3990MiB |\n\
         +-----------------------------------------------------------------------------------------+\n",
    );
    s
}

fn noheader_short(t: u32, g: u32) -> String {
    format!("{}, {g}, {}", smi_ts(t, g), util(t, g))
}

/// `timestamp,gpu_index,temperature_C,utilization_gpu_percent,power_W` over noheader rows.
fn own_names() -> String {
    format!(
        "timestamp,gpu_index,temperature_C,utilization_gpu_percent,power_W\n{}",
        lines(2, 1, |t, g| format!(
            "{}, {g}, 40, {}, {}.5",
            smi_ts(t, g),
            util(t, g),
            100 + 10 * t
        ))
    )
}

/// `while true; do date; nvidia-smi --query-gpu=index,utilization.gpu --format=csv; echo ----; done`
fn date_loop() -> String {
    let mut s = String::new();
    for t in 0..3 {
        let _ = write!(s, "Wed Jan  1 10:00:0{t} UTC 2025\nindex, utilization.gpu [%]\n");
        for g in 0..2 {
            let _ = writeln!(s, "{g}, {} %", util(t, g));
        }
        s.push_str("----\n");
    }
    s
}

/// The rows a log gave: time and values.
type Rows = Vec<(DateTime<Utc>, Row)>;

/// The bytes of a shape: its text, or for the UTF-16 one a CRLF log as PowerShell 5 writes it.
fn bytes(s: &Shape) -> Vec<u8> {
    if !s.name.contains("UTF-16") {
        return s.log.as_bytes().to_vec();
    }
    let text = format!("timestamp,index,utilization.gpu\n{}", lines(2, 2, noheader_short))
        .replace('\n', "\r\n");
    let mut b = vec![0xFF, 0xFE];
    b.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    b
}

fn read(log: &[u8], columns: Option<&str>) -> Result<(SmiLogInfo, Rows)> {
    let mut f = tempfile::NamedTempFile::new()?;
    f.write_all(log)?;
    f.flush()?;
    let opts = NvsmiOptions {
        columns: columns.map(|c| vec![c.to_string()]),
        tz: Some(gpumon_util::NamedZone::utc()),
        ..Default::default()
    };
    let mut rows = Vec::new();
    let info = read_nvsmi(f.path(), &opts, &mut |r| rows.push((r.ts, r.row.clone())))?;
    Ok((info, rows))
}

#[test]
fn writers_shapes_give_what_their_writers_meant() {
    let start = DateTime::from_timestamp(i64::from(EPOCH), 0).unwrap();
    for s in shapes() {
        let got = read(&bytes(&s), s.columns);
        match (&s.want, got) {
            (Want::Read { gpus, rows, cell, says }, Ok((info, got))) => {
                assert_eq!((info.gpus, info.rows), (*gpus, *rows), "{}: {info:?}", s.name);
                let (i, f, v) = cell;
                assert_eq!(got[*i].1.get(*f), v, "{}: row {i}", s.name);
                assert!(
                    (got[0].0 - start).num_milliseconds().abs() < 1000,
                    "{}: first row at {}",
                    s.name,
                    got[0].0
                );
                if says.iter().all(|w| !w.starts_with("w:")) {
                    assert!(info.warnings.is_empty(), "{}: {:?}", s.name, info.warnings);
                }
                for w in *says {
                    let (list, text) = match w.split_once(':') {
                        Some(("w", t)) => (&info.warnings, t),
                        Some((_, t)) => (&info.notes, t),
                        None => unreachable!(),
                    };
                    assert!(
                        list.iter().any(|l| l.contains(text)),
                        "{}: {text} in {info:?}",
                        s.name
                    );
                }
            }
            (Want::Refused(says), Err(e)) => {
                let e = format!("{e:#}");
                for w in *says {
                    assert!(e.contains(w), "{}: {w} not in {e}", s.name);
                }
            }
            (Want::Read { .. }, Err(e)) => panic!("{}: refused: {e:#}", s.name),
            (Want::Refused(_), Ok((info, _))) => panic!("{}: read: {info:?}", s.name),
        }
        // Every shape goes to this reader but those under a gpumon-like header whose times are
        // ISO 8601 / RFC 3339 without units in the cells, or unreadable: gpumon CSV's reader reads
        // (or names) those, its cells trimmed alike.
        use crate::input::Kind;
        use crate::sniff::sniff;
        let kind = sniff(&bytes(&s));
        let csv = ["RFC 3339", "ISO 8601", "no timestamp"].iter().any(|n| s.name.contains(n));
        let want = if csv { Kind::GpumonCsv } else { Kind::Nvsmi };
        if s.name.contains("without `-o DT`") {
            // Refused by its first line already: nothing in it can be placed in time.
            assert!(kind.is_err_and(|e| e.contains("-o DT")), "{}: sniffed", s.name);
            continue;
        }
        assert_eq!(kind, Ok(want), "{}: sniffed otherwise", s.name);
    }
}

/// nvidia-smi's table as PowerShell 5's `nvidia-smi -l 5 > gpu.log` writes it (UTF-16LE, CRLF):
/// sniffed and read like the UTF-8 one.
#[test]
fn a_utf16_table_log_reads_like_the_utf8_one() {
    let text: String = (0..2).map(table_sample).collect::<String>().replace('\n', "\r\n");
    let mut b = vec![0xFF, 0xFE];
    b.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    assert_eq!(crate::sniff::sniff(&b), Ok(crate::input::Kind::Nvsmi));
    let (info, rows) = read(&b, None).unwrap();
    assert_eq!((info.gpus, info.rows), (2, 4), "{info:?}");
    assert_eq!(rows[3].1.get(Field::UtilGpu), &Value::U(util(1, 1).into()));
}
