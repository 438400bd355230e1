//! Property test of `summarize`: one table gives the same summary however it is split into row
//! groups and files and however many threads read it, with nulls and counter resets at the seams;
//! and by phase (labels recurring, some rows unmarked) the same phases, and the same whole run as
//! without phases.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    ArrayRef, Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray, UInt8Array,
    UInt32Array,
};
use arrow_schema::{DataType, Field as AField, Schema, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use proptest::prelude::*;

use super::*;

/// The shape of one table and of one way to split it.
#[derive(Debug, Clone)]
struct Case {
    hosts: usize,
    gpus: usize,
    ticks: usize,
    seed: u64,
    /// Rows per row group.
    group_rows: usize,
    /// Where the files are cut, as fractions of the rows (in thousandths).
    cuts: Vec<u32>,
    threads: usize,
    /// Rows grouped by host and GPU instead of by time.
    grouped: bool,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One row per GPU per tick, hosts in turn within a tick; the rows where a row group or a file
/// starts (`seams`) have a null counter half of the time and a counter reset a quarter of it.
fn table(c: &Case, seams: &[usize]) -> RecordBatch {
    let mut r = Rng(c.seed | 1);
    let n = c.hosts * c.gpus * c.ticks;
    let mut counters: Vec<f64> = (0..c.hosts * c.gpus).map(|_| 1e6 + r.next(1000) as f64).collect();
    let (mut ts, mut host, mut index, mut uuid, mut name) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut util, mut power, mut energy, mut cpu) = (vec![], vec![], vec![], vec![]);
    // Phases in stretches of ticks, labels recurring, some ticks unmarked.
    let (mut phase, mut label): (Vec<Option<&str>>, Option<&str>) = (vec![], None);
    let mut t = 1_700_000_000_000_000i64;
    for _ in 0..c.ticks {
        t += if r.next(40) == 0 { 31_000_000 } else { 1_000_000 };
        if r.next(12) == 0 {
            label = [None, Some("warmup"), Some("train"), Some("eval")][r.next(4) as usize];
        }
        for h in 0..c.hosts {
            let cpu_tick = (r.next(2000) as f64) / 19.0;
            for g in 0..c.gpus {
                let seam = seams.contains(&ts.len());
                let k = h * c.gpus + g;
                counters[k] = match r.next(if seam { 4 } else { 40 }) {
                    0 => r.next(1000) as f64,
                    _ => counters[k] + r.next(3000) as f64 / 7.0,
                };
                let null_energy = r.next(if seam { 2 } else { 8 }) == 0;
                ts.push(t);
                host.push(format!("h{h}"));
                index.push(g as u32);
                uuid.push((r.next(3) != 0).then(|| format!("GPU-{h}-{g}")));
                name.push((r.next(3) != 0).then(|| format!("Model {g}")));
                util.push((r.next(20) != 0).then(|| r.next(101) as u8));
                // Fractions that f64 cannot hold exactly: their sums depend on the order of adding
                // unless the accumulators make them not.
                power.push((r.next(10) != 0).then(|| r.next(12_000) as f64 / 7.0));
                energy.push((!null_energy).then_some(counters[k]));
                cpu.push(Some(cpu_tick));
                phase.push(label);
            }
        }
    }
    debug_assert_eq!(ts.len(), n);
    if c.grouped {
        // Stable: each GPU's rows stay in time order.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (host[i].clone(), index[i]));
        reorder(&mut ts, &order);
        reorder(&mut host, &order);
        reorder(&mut index, &order);
        reorder(&mut uuid, &order);
        reorder(&mut name, &order);
        reorder(&mut util, &order);
        reorder(&mut power, &order);
        reorder(&mut energy, &order);
        reorder(&mut cpu, &order);
        reorder(&mut phase, &order);
    }
    let cols: Vec<(&str, DataType, ArrayRef)> = vec![
        (
            "timestamp",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
        ),
        ("host", DataType::Utf8, Arc::new(StringArray::from_iter_values(host))),
        ("index", DataType::UInt32, Arc::new(UInt32Array::from(index))),
        ("uuid", DataType::Utf8, Arc::new(StringArray::from(uuid))),
        ("name", DataType::Utf8, Arc::new(StringArray::from(name))),
        ("utilization.gpu", DataType::UInt8, Arc::new(UInt8Array::from(util))),
        ("power.draw", DataType::Float64, Arc::new(Float64Array::from(power))),
        ("energy.total", DataType::Float64, Arc::new(Float64Array::from(energy))),
        ("cpu.util", DataType::Float64, Arc::new(Float64Array::from(cpu))),
        ("phase", DataType::Utf8, Arc::new(StringArray::from(phase))),
    ];
    let schema = Arc::new(Schema::new(
        cols.iter().map(|(n, d, _)| AField::new(*n, d.clone(), true)).collect::<Vec<_>>(),
    ));
    RecordBatch::try_new(schema, cols.into_iter().map(|c| c.2).collect()).unwrap()
}

fn reorder<T: Clone>(v: &mut Vec<T>, order: &[usize]) {
    *v = order.iter().map(|&i| v[i].clone()).collect();
}

fn write(path: &Path, b: &RecordBatch, group_rows: usize) {
    let props =
        WriterProperties::builder().set_max_row_group_row_count(Some(group_rows.max(1))).build();
    let mut w = ArrowWriter::try_new(std::fs::File::create(path).unwrap(), b.schema(), Some(props))
        .unwrap();
    w.write(b).unwrap();
    w.close().unwrap();
}

/// The summary of `inputs` read by `threads` threads, as JSON without the list of inputs; with
/// `phases`, `--by phase`: the whole run's summary followed by each phase's, with its label.
fn summary(inputs: Vec<PathBuf>, threads: usize, phases: bool) -> Vec<(String, String)> {
    let mut cfg = json_config(inputs, threads);
    if phases {
        cfg.phases = PhaseMode::On;
    }
    let o = summarize(&cfg).unwrap();
    let json = |s: &Summary| {
        let mut j: serde_json::Value =
            serde_json::from_str(&render(s, &[], SummaryFormat::Json)).unwrap();
        j.as_object_mut().unwrap().remove("inputs");
        serde_json::to_string_pretty(&j).unwrap()
    };
    let mut out = vec![("whole run".to_string(), json(&o.summary))];
    for p in o.phases.iter().flat_map(|r| &r.phases) {
        out.push((format!("phase {:?}", p.label), json(&p.summary)));
    }
    out
}

/// The first lines where two summaries differ, by part.
fn differences(got: &[(String, String)], want: &[(String, String)]) -> Vec<String> {
    let mut d: Vec<String> = Vec::new();
    if got.len() != want.len() {
        d.push(format!("{} parts != {}", got.len(), want.len()));
    }
    for ((part, g), (wpart, w)) in got.iter().zip(want) {
        if part != wpart {
            d.push(format!("{part} != {wpart}"));
        }
        let lines = g.lines().zip(w.lines()).filter(|(a, b)| a != b).take(3);
        d.extend(lines.map(|(a, b)| format!("{part}: {a} != {b}")));
    }
    d
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..=2, 1usize..=3, 2usize..=120, any::<u64>(), prop::collection::vec(1u32..1000, 0..3))
        .prop_flat_map(|(hosts, gpus, ticks, seed, cuts)| {
            let n = hosts * gpus * ticks;
            (1..=n, prop::sample::select(vec![1usize, 2, 3, 5, 13]), any::<bool>()).prop_map(
                move |(group_rows, threads, grouped)| Case {
                    hosts,
                    gpus,
                    ticks,
                    seed,
                    group_rows,
                    cuts: cuts.clone(),
                    threads,
                    grouped,
                },
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn splits_and_threads_do_not_change_the_summary(c in case()) {
        let n = c.hosts * c.gpus * c.ticks;
        let mut cuts: Vec<usize> = c.cuts.iter().map(|&k| k as usize * n / 1000).filter(|&k| k > 0 && k < n).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let seams: Vec<usize> = (1..n).filter(|k| k % c.group_rows == 0).chain(cuts.iter().copied()).collect();
        let b = table(&c, &seams);
        let dir = tempfile::tempdir().unwrap();
        let whole = dir.path().join("whole.parquet");
        write(&whole, &b, n);
        let want = summary(vec![whole.clone()], 1, false);
        let want_phases = summary(vec![whole], 1, true);
        // The whole run's figures are the same with --by phase (joined from the phases' stretches).
        let d = differences(&want_phases[..1], &want);
        prop_assert!(d.is_empty(), "--by phase whole run != plain: {:?}", d);
        let mut files = Vec::new();
        let bounds: Vec<usize> = [0].into_iter().chain(cuts).chain([n]).collect();
        for (k, w) in bounds.windows(2).enumerate() {
            let p = dir.path().join(format!("part{k}.parquet"));
            write(&p, &b.slice(w[0], w[1] - w[0]), c.group_rows);
            files.push(p);
        }
        let d = differences(&summary(files.clone(), c.threads, false), &want);
        prop_assert!(d.is_empty(), "split and threaded != whole: {:?}", d);
        let d = differences(&summary(files, c.threads, true), &want_phases);
        prop_assert!(d.is_empty(), "split and threaded, by phase != whole: {:?}", d);
    }
}

/// A batch cut into more stretches than a joined phase collector takes (a phase per tick, two labels
/// alternating): the input is read again with a whole-run collector of its own, and the figures are
/// the same as without phases.
#[test]
fn phases_alternating_every_tick_give_the_plain_whole_run() {
    let n = 200usize;
    let t0 = 1_700_000_000_000_000i64;
    let cols: Vec<(&str, DataType, ArrayRef)> = vec![
        (
            "timestamp",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(
                    (0..n as i64).map(|k| t0 + k * 1_000_000),
                )
                .with_timezone("UTC"),
            ),
        ),
        ("index", DataType::UInt32, Arc::new(UInt32Array::from(vec![0u32; n]))),
        (
            "power.draw",
            DataType::Float64,
            Arc::new(Float64Array::from_iter_values((0..n).map(|k| k as f64 / 7.0))),
        ),
        (
            "phase",
            DataType::Utf8,
            Arc::new(StringArray::from_iter_values((0..n).map(|k| ["a", "b"][k % 2]))),
        ),
    ];
    let schema = Arc::new(Schema::new(
        cols.iter().map(|(n, d, _)| AField::new(*n, d.clone(), true)).collect::<Vec<_>>(),
    ));
    let b = RecordBatch::try_new(schema, cols.into_iter().map(|c| c.2).collect()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("alternating.parquet");
    write(&path, &b, n);
    let plain = summary(vec![path.clone()], 2, false);
    let phased = summary(vec![path], 2, true);
    assert_eq!(phased.len(), 3, "the whole run and phases a and b");
    assert!(
        differences(&phased[..1], &plain).is_empty(),
        "{:?}",
        differences(&phased[..1], &plain)
    );
}

/// Every `NAME.p50`, `NAME.p95` and `NAME.max` of every statistics object in a summary's JSON, in
/// order where present: the violations as text.
fn quantile_disorder(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if let Some(name) = k.strip_suffix(".p95") {
                    let get = |s: &str| m.get(&format!("{name}.{s}")).and_then(|v| v.as_f64());
                    let (p50, p95, max) = (get("p50"), x.as_f64(), get("max"));
                    if let (Some(a), Some(b)) = (p50, p95)
                        && a > b
                    {
                        out.push(format!("{path}.{name}: p50 {a} > p95 {b}"));
                    }
                    if let (Some(b), Some(c)) = (p95, max)
                        && b > c
                    {
                        out.push(format!("{path}.{name}: p95 {b} > max {c}"));
                    }
                }
                quantile_disorder(x, &format!("{path}.{k}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                quantile_disorder(x, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// One row's `utilization.gpu`, `cpu.util` and `cpu.util.max_core`.
type Cells = (Option<f64>, Option<f64>, Option<f64>);

/// A value a percent column may hold: any number (negative and above 100 too), or one on a
/// 0.05 step (the half-way values a 0.1-point histogram rounds up), or null.
fn percent_value() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        (-50.0f64..150.0).prop_map(Some),
        (0u32..2000).prop_map(|k| Some(f64::from(k) / 20.0)),
        (0u32..=100).prop_map(|k| Some(f64::from(k))),
        Just(None),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// For every statistic of the summary of any input: p50 <= p95 <= max.
    #[test]
    fn percentiles_are_ordered_and_within_the_values(
        gpus in 1usize..=3,
        vals in prop::collection::vec((percent_value(), percent_value(), percent_value()), 1..80),
    ) {
        // An input of empty cells only has no statistic to order (summarize says "nothing to summarize").
        prop_assume!(vals.iter().any(|v| v.0.is_some() || v.1.is_some() || v.2.is_some()));
        let n = vals.len();
        let t0 = 1_700_000_000_000_000i64;
        let ts: Vec<i64> = (0..n).map(|k| t0 + (k / gpus) as i64 * 1_000_000).collect();
        let index: Vec<u32> = (0..n).map(|k| (k % gpus) as u32).collect();
        let col = |f: fn(&Cells) -> Option<f64>| -> ArrayRef {
            Arc::new(Float64Array::from(vals.iter().map(f).collect::<Vec<_>>()))
        };
        let cols: Vec<(&str, DataType, ArrayRef)> = vec![
            (
                "timestamp",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
            ),
            ("index", DataType::UInt32, Arc::new(UInt32Array::from(index))),
            ("utilization.gpu", DataType::Float64, col(|v| v.0)),
            ("cpu.util", DataType::Float64, col(|v| v.1)),
            ("cpu.util.max_core", DataType::Float64, col(|v| v.2)),
        ];
        let schema = Arc::new(Schema::new(
            cols.iter().map(|(n, d, _)| AField::new(*n, d.clone(), true)).collect::<Vec<_>>(),
        ));
        let b = RecordBatch::try_new(schema, cols.into_iter().map(|c| c.2).collect()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.parquet");
        write(&file, &b, n);
        let o = summarize(&json_config(vec![file], 1)).unwrap();
        let j: serde_json::Value =
            serde_json::from_str(&render(&o.summary, &[], SummaryFormat::Json)).unwrap();
        let mut bad = Vec::new();
        quantile_disorder(&j, "", &mut bad);
        prop_assert!(bad.is_empty(), "{:?}", bad);
    }
}
