//! Comparisons of runs or phases: the key statistics of each against a baseline (the first, unless
//! told otherwise), their changes as plain deltas and in percent, one-line verdicts ("bs=128 vs bs=32:
//! utilization +18 pts, memory.used.max +21.4 GiB (headroom 3%: a larger batch will not fit), ..."),
//! and `--fail-if` checks on the deltas (`energy_per_hour.delta_pct > 10`).
//!
//! The key statistics are a list of [`Stat`]s ([`KEYS`]); one named by string there is compared only
//! when the catalogue declares it (`sm.active.mean`, where GPM fields are recorded). Any statistic of
//! the summary can be checked, not only the listed ones.

use crate::checks::Check;
use crate::findings::Thresholds;
use crate::stat::{Scope, Stat};
use crate::{CheckResult, Summary};
use gpumon_schema::catalog::Field;

/// What is compared: a statistic of the summary, or the energy the GPUs draw per hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Of all GPUs pooled (GPU statistics) or all hosts pooled (host statistics).
    Stat(Stat),
    /// Wh the GPUs draw per hour of the run or phase, all GPUs together (the sum of their mean
    /// `power.draw`), so runs and phases of different lengths compare.
    EnergyPerHour,
    /// A rate of a work counter the job reported (`progress.samples.per_s`).
    Progress(crate::progress::Rate),
}

/// A place in the list of key statistics.
enum Key {
    Typed(Stat),
    /// A statistic compared only when the catalogue declares it.
    Named(&'static str),
    EnergyPerHour,
}

/// The key statistics of a comparison, in order.
const KEYS: &[Key] = &[
    Key::Typed(Stat::mean(Field::UtilGpu)),
    Key::Named("sm.active.mean"),
    Key::Typed(Stat::max(Field::MemUsed)),
    Key::Typed(Stat::MemoryUsedMaxPct),
    Key::Typed(Stat::mean(Field::PowerDraw)),
    Key::EnergyPerHour,
    Key::Typed(Stat::max(Field::TempGpu)),
    Key::Typed(Stat::mean(Field::CpuUtil)),
    Key::Typed(Stat::max(Field::HostMemUsed)),
];

/// Name of the energy rate in the reports and in checks.
const ENERGY_PER_HOUR: &str = "energy_per_hour";

impl Measure {
    /// The key statistics, and the rates of the work counters of `cols`, in order.
    pub(crate) fn keys_of(cols: &[(String, &Summary)]) -> Vec<Measure> {
        let mut keys = Measure::keys();
        for (_, s) in cols {
            for r in crate::progress::Rate::all(&s.progress) {
                if !keys.contains(&Measure::Progress(r)) {
                    keys.push(Measure::Progress(r));
                }
            }
        }
        keys
    }

    /// The key statistics the catalogue has, in order.
    pub fn keys() -> Vec<Measure> {
        KEYS.iter()
            .filter_map(|k| match k {
                Key::Typed(s) => Some(Measure::Stat(*s)),
                Key::Named(n) => Stat::lookup(n).map(Measure::Stat),
                Key::EnergyPerHour => Some(Measure::EnergyPerHour),
            })
            .collect()
    }

    /// Its name in the reports and in checks.
    pub fn name(self) -> String {
        match self {
            Measure::Stat(s) => s.to_string(),
            Measure::EnergyPerHour => ENERGY_PER_HOUR.to_string(),
            Measure::Progress(r) => r.name(),
        }
    }

    /// The measure of this name (a statistic, `energy_per_hour` or a work rate).
    pub fn lookup(name: &str) -> Option<Measure> {
        if name == ENERGY_PER_HOUR {
            return Some(Measure::EnergyPerHour);
        }
        if let Some(r) = crate::progress::Rate::lookup(name) {
            return Some(Measure::Progress(r));
        }
        Stat::lookup(name).map(Measure::Stat)
    }

    /// The measure's unit (`%`, `Wh/h`, `/s`, ...).
    pub fn unit(self) -> &'static str {
        match self {
            Measure::Stat(s) => s.unit(),
            Measure::EnergyPerHour => "Wh/h",
            Measure::Progress(r) => r.unit(),
        }
    }

    /// Its value in a summary.
    pub fn value(self, s: &Summary) -> Option<f64> {
        match self {
            Measure::Stat(st) if st.scope() == Scope::Gpu => s.all_gpus.get(st),
            Measure::Stat(st) => s.all_hosts.get(st),
            Measure::EnergyPerHour => {
                let p: Vec<f64> = s
                    .hosts
                    .iter()
                    .flat_map(|h| &h.gpus)
                    .filter_map(|g| g.stats.get(Stat::mean(Field::PowerDraw)))
                    .collect();
                (!p.is_empty()).then(|| p.iter().sum())
            }
            Measure::Progress(r) => r.value(&s.progress),
        }
    }

    /// How a change of it reads in a verdict: a short name, and whether percent points or a relative
    /// change say it best. None: shown in the table only.
    fn verdict(self) -> Option<(&'static str, bool)> {
        match self {
            Measure::EnergyPerHour => Some(("energy per hour", true)),
            Measure::Progress(r) => r.verdict().map(|name| (name, true)),
            Measure::Stat(s) if s == Stat::mean(Field::UtilGpu) => Some(("utilization", false)),
            Measure::Stat(s) if s == Stat::max(Field::MemUsed) => Some(("memory.used.max", false)),
            Measure::Stat(s) if s == Stat::mean(Field::PowerDraw) => Some(("power", false)),
            Measure::Stat(s) if s.to_string() == "sm.active.mean" => Some(("SM active", false)),
            Measure::Stat(_) => None,
        }
    }
}

/// One compared run or phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The run's or phase's name.
    pub label: String,
    /// First and last sample, UTC µs.
    pub start: Option<i64>,
    /// See `start`.
    pub end: Option<i64>,
    /// One value per row of the comparison.
    pub values: Vec<Option<f64>>,
}

/// Key statistics side by side, against the column `baseline`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The column the others are compared with.
    pub baseline: usize,
    /// The measures with a value in at least one column.
    pub measures: Vec<Measure>,
    /// One column per run or phase.
    pub columns: Vec<Column>,
    /// `memory.used.max_pct` of each column (the headroom note).
    headroom: Vec<Option<f64>>,
}

/// Change of `v` against `base`: plain, and in percent of `base`.
pub(crate) fn delta(v: Option<f64>, base: Option<f64>) -> (Option<f64>, Option<f64>) {
    match (v, base) {
        (Some(v), Some(b)) => (Some(v - b), (b != 0.0).then(|| 100.0 * (v - b) / b.abs())),
        _ => (None, None),
    }
}

/// Compare the summaries `cols` (label, summary) against `cols[baseline]`.
pub fn compare(cols: &[(String, &Summary)], baseline: usize) -> Comparison {
    let measures: Vec<Measure> = Measure::keys_of(cols)
        .into_iter()
        .filter(|m| cols.iter().any(|(_, s)| m.value(s).is_some()))
        .collect();
    let columns = cols
        .iter()
        .map(|(label, s)| Column {
            label: label.clone(),
            start: s.start,
            end: s.end,
            values: measures.iter().map(|m| m.value(s)).collect(),
        })
        .collect();
    let headroom =
        cols.iter().map(|(_, s)| Measure::Stat(Stat::MemoryUsedMaxPct).value(s)).collect();
    Comparison { baseline: baseline.min(cols.len().saturating_sub(1)), measures, columns, headroom }
}

/// A signed change with its unit, as a verdict says it: `+18 pts`, `+21.4 GiB`, `-40 W`, `+9%`.
pub fn change(m: Measure, d: Option<f64>, pct: Option<f64>) -> Option<String> {
    let (_, relative) = m.verdict().unwrap_or(("", false));
    if relative || matches!(m, Measure::Progress(_)) {
        return pct.map(|p| format!("{p:+.0}%"));
    }
    let d = d?;
    Some(match m.unit() {
        "%" => format!("{d:+.0} pts"),
        "MiB" if d.abs() >= 1024.0 => format!("{:+.1} GiB", d / 1024.0),
        "MiB" => format!("{d:+.0} MiB"),
        "" => format!("{d:+.1}"),
        u => format!("{d:+.0} {u}"),
    })
}

impl Comparison {
    /// The change of row `i` of column `c` against the baseline: (delta, delta in percent).
    pub fn delta(&self, i: usize, c: usize) -> (Option<f64>, Option<f64>) {
        let base = self.columns.get(self.baseline).and_then(|b| b.values.get(i).copied().flatten());
        delta(self.columns.get(c).and_then(|x| x.values.get(i).copied().flatten()), base)
    }

    /// One line per column other than the baseline: what changed, in a few words.
    pub fn verdicts(&self, th: &Thresholds) -> Vec<String> {
        let Some(base) = self.columns.get(self.baseline) else { return Vec::new() };
        let mut out = Vec::new();
        for (c, col) in self.columns.iter().enumerate().filter(|(c, _)| *c != self.baseline) {
            let mut parts = Vec::new();
            for (i, &m) in self.measures.iter().enumerate() {
                let Some((name, _)) = m.verdict() else { continue };
                let (d, pct) = self.delta(i, c);
                let Some(text) = change(m, d, pct) else { continue };
                let note = if m == Measure::Stat(Stat::max(Field::MemUsed)) {
                    headroom(self.headroom[c], th)
                } else {
                    String::new()
                };
                parts.push(format!("{name} {text}{note}"));
            }
            if !parts.is_empty() {
                out.push(format!("{} vs {}: {}", col.label, base.label, parts.join(", ")));
            }
        }
        out.extend(progress_notes(self));
        out
    }
}

/// ` (headroom 3%: a larger batch will not fit)` from the peak share of memory used.
fn headroom(used_pct: Option<f64>, th: &Thresholds) -> String {
    let Some(p) = used_pct else { return String::new() };
    let free = (100.0 - p).max(0.0);
    if p >= th.oom_mem_pct {
        format!(" (headroom {free:.0}%: a larger batch will not fit)")
    } else if p < th.headroom_mem_pct {
        format!(" (headroom {free:.0}%: room for a larger batch)")
    } else {
        format!(" (headroom {free:.0}%)")
    }
}

/// What a comparison check looks at: the value, or its change against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The value itself.
    Value,
    /// The value minus the baseline's.
    Delta,
    /// That difference as a share (%) of the baseline's value.
    DeltaPct,
}

/// The measure and part a check names: `NAME`, `NAME.delta` or `NAME.delta_pct`.
pub fn resolve(c: &Check) -> Result<(Measure, Part), String> {
    let name = c.stat.as_str();
    let (base, part) = match (name.strip_suffix(".delta_pct"), name.strip_suffix(".delta")) {
        (Some(b), _) => (b, Part::DeltaPct),
        (None, Some(b)) => (b, Part::Delta),
        _ => (name, Part::Value),
    };
    Measure::lookup(base).map(|m| (m, part)).ok_or_else(|| {
        let keys: Vec<String> = Measure::keys().into_iter().map(Measure::name).collect();
        format!(
            "--fail-if: unknown statistic '{base}' in '{c}'; compare checks STATISTIC[.delta|.delta_pct] OP NUMBER, \
             with any statistic of the summary, e.g. {}",
            keys.join(", ")
        )
    })
}

/// Evaluate a check against the compared summaries `cols` (label, summary): a value check on every
/// column, a delta check on every column but the baseline. No value anywhere fails it.
pub fn evaluate(
    c: &Check,
    m: Measure,
    part: Part,
    cols: &[(String, &Summary)],
    baseline: usize,
) -> CheckResult {
    let base = cols.get(baseline).and_then(|(_, s)| m.value(s));
    let mut failures = Vec::new();
    let mut seen = 0;
    for (i, (label, s)) in cols.iter().enumerate() {
        let v = m.value(s);
        let x = match part {
            Part::Value => v,
            _ if i == baseline => None,
            Part::Delta => delta(v, base).0,
            Part::DeltaPct => delta(v, base).1,
        };
        if let Some(x) = x {
            seen += 1;
            if c.op.holds(x, c.value) {
                failures.push(format!(
                    "{label}: {} = {} {} {}",
                    c.stat,
                    fmt(x),
                    c.op.symbol(),
                    fmt(c.value)
                ));
            }
        }
    }
    if seen == 0 {
        failures.push(format!("{} is not in the data (no value to check)", c.stat));
    }
    CheckResult { check: c.to_string(), failures }
}

fn fmt(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.0}") } else { format!("{v:.3}") }
}

/// Whether a check expression is about a comparison (names a delta, the energy rate or a work rate).
pub fn is_comparison_check(c: &Check) -> bool {
    c.stat.ends_with(".delta")
        || c.stat.ends_with(".delta_pct")
        || c.stat == ENERGY_PER_HOUR
        || c.stat.starts_with(gpumon_schema::progress::PREFIX)
}

/// Notes on the work rates of a comparison, where the data supports them, each run or phase against
/// the one before it (the previous step of a sweep; the first against the baseline): work per second
/// grown less than [`LITTLE_GAIN_PCT`] while peak memory grew [`MUCH_MORE_MEMORY_PCT`] or more (a
/// larger batch that buys no throughput), or work per second fallen while utilization rose (a busier
/// GPU doing less work).
fn progress_notes(c: &Comparison) -> Vec<String> {
    use crate::stat::Stat;
    use gpumon_schema::catalog::Field;
    let at = |m: Measure| c.measures.iter().position(|x| *x == m);
    let (mem, util) = (
        at(Measure::Stat(Stat::max(Field::MemUsed))),
        at(Measure::Stat(Stat::mean(Field::UtilGpu))),
    );
    let mut out = Vec::new();
    let mut prev = c.baseline;
    for (k, col) in c.columns.iter().enumerate().filter(|(k, _)| *k != c.baseline) {
        let base = &c.columns[prev];
        let step = |j: usize| delta(col.values[j], base.values[j]);
        prev = k;
        for (i, m) in c.measures.iter().enumerate() {
            let Measure::Progress(r) = m else { continue };
            let (Some(name), (_, Some(pct))) = (r.verdict(), step(i)) else { continue };
            let (d_mem, mem_pct) = mem.map_or((None, None), step);
            let d_util = util.and_then(|j| step(j).0);
            let head = format!("{} vs {}: {name} {pct:+.1}%", col.label, base.label);
            if pct < LITTLE_GAIN_PCT && mem_pct.is_some_and(|p| p >= MUCH_MORE_MEMORY_PCT) {
                let more = change(Measure::Stat(Stat::max(Field::MemUsed)), d_mem, mem_pct);
                out.push(format!(
                    "{head} for memory.used.max {}: the extra memory buys (almost) no throughput; {} does the same work for less",
                    more.unwrap_or_default(),
                    base.label
                ));
            } else if pct < 0.0 && d_util.is_some_and(|u| u > 0.0) {
                out.push(format!(
                    "{head} while utilization rose {:+.0} pts: the GPU is busier doing less work (padding, recomputation                      or a slower kernel path?)",
                    d_util.unwrap_or(0.0)
                ));
            }
        }
    }
    out
}

/// Work per second that grew less than this, percent, is "no gain" beside much more memory.
const LITTLE_GAIN_PCT: f64 = 5.0;
/// Peak memory that grew this much or more, percent, is "much more memory".
const MUCH_MORE_MEMORY_PCT: f64 = 20.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::parse_check;
    use crate::stat_values::StatValues;
    use crate::{GpuSummary, HostSummary};

    fn summary(util: f64, mem: f64, power: f64) -> Summary {
        let mut g = StatValues::empty(Scope::Gpu);
        g.set(Stat::mean(Field::UtilGpu), Some(util));
        g.set(Stat::max(Field::MemUsed), Some(mem));
        g.set(Stat::MemoryUsedMaxPct, Some(100.0 * mem / 81920.0));
        g.set(Stat::mean(Field::PowerDraw), Some(power));
        let gpu = GpuSummary {
            label: "0".into(),
            index: Some(0),
            mig_gi: None,
            uuid: None,
            name: None,
            start: 0,
            end: 1,
            gaps: Vec::new(),
            energy_method: None,
            stats: g.clone(),
        };
        Summary {
            hosts: vec![HostSummary {
                name: "h".into(),
                gpus: vec![gpu],
                stats: StatValues::empty(Scope::Host),
                has_host_data: false,
                findings: Vec::new(),
            }],
            all_gpus: g,
            start: Some(0),
            end: Some(1),
            ..Summary::default()
        }
    }

    #[test]
    fn deltas_verdicts_and_checks() {
        let (a, b) = (summary(40.0, 10240.0, 300.0), summary(58.0, 79360.0, 340.0));
        let cols = vec![("bs=32".to_string(), &a), ("bs=128".to_string(), &b)];
        let c = compare(&cols, 0);
        assert_eq!(
            c.measures.iter().map(|m| m.name()).collect::<Vec<_>>(),
            [
                "utilization.gpu.mean",
                "memory.used.max",
                "memory.used.max_pct",
                "power.draw.mean",
                "energy_per_hour"
            ]
        );
        let i = c.measures.iter().position(|m| *m == Measure::EnergyPerHour).unwrap();
        let (d, pct) = c.delta(i, 1);
        assert_eq!(d, Some(40.0));
        assert!((pct.unwrap() - 13.333).abs() < 1e-3);
        assert_eq!(
            c.verdicts(&Thresholds::default()),
            [
                "bs=128 vs bs=32: utilization +18 pts, memory.used.max +67.5 GiB (headroom 3%: a larger batch will not \
              fit), power +40 W, energy per hour +13%"
            ]
        );
        let check = |t: &str, base: usize| {
            let ck = parse_check(t).unwrap();
            let (m, part) = resolve(&ck).unwrap();
            evaluate(&ck, m, part, &cols, base).failures
        };
        assert_eq!(
            check("energy_per_hour.delta_pct > 10", 0),
            ["bs=128: energy_per_hour.delta_pct = 13.333 > 10"]
        );
        assert!(check("energy_per_hour.delta_pct > 20", 0).is_empty());
        assert_eq!(
            check("utilization.gpu.mean.delta < 0", 1),
            ["bs=32: utilization.gpu.mean.delta = -18 < 0"]
        );
        assert_eq!(check("power.draw.mean >= 340", 0), ["bs=128: power.draw.mean = 340 >= 340"]);
        assert_eq!(
            check("cpu.util.mean.delta > 1", 0),
            ["cpu.util.mean.delta is not in the data (no value to check)"]
        );
        assert!(
            resolve(&parse_check("nope.delta > 1").unwrap())
                .unwrap_err()
                .contains("energy_per_hour")
        );
        assert!(is_comparison_check(&parse_check("energy_per_hour > 1").unwrap()));
        assert!(!is_comparison_check(&parse_check("utilization.gpu.mean > 1").unwrap()));
    }

    #[test]
    fn work_rates_compare_and_note_a_batch_that_buys_nothing() {
        use crate::progress::ProgressStat;
        let with = |mut s: Summary, per_s: f64| {
            s.progress = vec![ProgressStat {
                key: "samples".into(),
                total: 1.0,
                per_s: Some(per_s),
                per_gpu_hour: None,
                per_wh: None,
            }];
            s
        };
        let (a, b) = (
            with(summary(40.0, 20480.0, 300.0), 1000.0),
            with(summary(50.0, 40960.0, 340.0), 1030.0),
        );
        let cols = vec![("bs=32".to_string(), &a), ("bs=64".to_string(), &b)];
        let v = compare(&cols, 0).verdicts(&Thresholds::default());
        assert!(v[0].ends_with("samples/s +3%"), "{v:?}");
        assert!(
            v[1].contains("bs=64 vs bs=32: samples/s +3.0% for memory.used.max +20.0 GiB: the extra memory buys"),
            "{v:?}"
        );
        let c = with(summary(70.0, 20480.0, 300.0), 900.0);
        let cols = vec![("bs=32".to_string(), &a), ("bs=48".to_string(), &c)];
        let v = compare(&cols, 0).verdicts(&Thresholds::default());
        assert!(v[1].contains("samples/s -10.0% while utilization rose +30 pts"), "{v:?}");
        let d = with(summary(40.0, 40960.0, 300.0), 2000.0);
        let cols = vec![("bs=32".to_string(), &a), ("bs=64".to_string(), &d)];
        assert_eq!(
            compare(&cols, 0).verdicts(&Thresholds::default()).len(),
            1,
            "twice the work for twice the memory"
        );
        let ck = parse_check("progress.samples.per_s.delta_pct < -5").unwrap();
        let (m, part) = resolve(&ck).unwrap();
        assert_eq!(
            evaluate(&ck, m, part, &cols, 1).failures,
            ["bs=32: progress.samples.per_s.delta_pct = -50 < -5"]
        );
    }

    #[test]
    fn changes_read_in_the_unit_people_use() {
        let ph = |d: f64| change(Measure::Stat(Stat::max(Field::MemUsed)), Some(d), None).unwrap();
        assert_eq!(ph(21913.6), "+21.4 GiB");
        assert_eq!(ph(-512.0), "-512 MiB");
        assert_eq!(
            change(Measure::Stat(Stat::mean(Field::UtilGpu)), Some(-3.4), None).unwrap(),
            "-3 pts"
        );
        assert_eq!(
            change(Measure::Stat(Stat::max(Field::TempGpu)), Some(4.0), None).unwrap(),
            "+4 C"
        );
        assert_eq!(change(Measure::EnergyPerHour, Some(40.0), Some(9.2)).unwrap(), "+9%");
        assert_eq!(delta(Some(1.0), Some(0.0)), (Some(1.0), None), "no percent of zero");
    }
}
