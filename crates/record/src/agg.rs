//! Interval aggregation: combine the sub-samples of one interval into one row per GPU,
//! each field by the rule its catalogue row declares (mean, last, max, sum). The process list is
//! the last sub-sample's, each process's utilization the mean of its sub-samples.

use std::collections::HashMap;

use gpumon_schema::catalog::{Agg, CATALOG, FIELD_COUNT, Field, Ty};
use gpumon_schema::{ProcUtil, Row, Selection, Tick, Value};

/// Running state for one output row position (one GPU, or the host-only row).
#[derive(Debug, Clone, Default)]
struct Acc {
    sum: Vec<f64>,
    n: Vec<u32>,
    last: Row,
    samples: u32,
}

impl Acc {
    fn new() -> Acc {
        Acc {
            sum: vec![0.0; CATALOG.len()],
            n: vec![0; CATALOG.len()],
            last: Row::default(),
            samples: 0,
        }
    }

    fn add(&mut self, row: &Row) {
        self.samples += 1;
        for d in &CATALOG {
            let f = d.field;
            let v = row.get(f);
            match d.agg {
                Agg::Mean | Agg::Sum => {
                    if let Some(x) = v.as_f64() {
                        self.sum[f as usize] += x;
                        self.n[f as usize] += 1;
                    }
                }
                Agg::Max => {}
                Agg::Identity | Agg::Last => {}
            }
            // Keep the last present value (a missing last sub-sample does not erase the interval).
            if !v.is_missing() || self.last.get(f).is_missing() {
                self.last.set(f, v.clone());
            }
        }
        for d in CATALOG.iter().filter(|d| d.max_of.is_some()) {
            let Some(base) = d.max_of else { continue };
            if let Some(x) = row.get(base).as_f64() {
                let i = d.field as usize;
                self.sum[i] = if self.n[i] == 0 { x } else { self.sum[i].max(x) };
                self.n[i] += 1;
            }
        }
    }

    fn finish(&self) -> Row {
        let mut out = Row::default();
        for d in &CATALOG {
            let f = d.field;
            let i = f as usize;
            let v = match d.agg {
                Agg::Identity | Agg::Last => self.last.get(f).clone(),
                Agg::Mean if self.n[i] > 0 => typed(d.ty, self.sum[i] / f64::from(self.n[i])),
                Agg::Max | Agg::Sum if self.n[i] > 0 => typed(d.ty, self.sum[i]),
                // Nothing present in the interval: keep what the last sub-sample said (null or unsupported).
                _ => self.last.get(f).clone(),
            };
            out.set(f, v);
        }
        out.set(Field::Samples, Value::U(u64::from(self.samples)));
        out
    }
}

/// What [`single`] does to the rows of one selection: its `.max` columns `(column, base, type)`
/// and its mean or sum fields with their storage types. Only selected fields are written, exported
/// or shown, so the others are left as read (a GPU row holds ~20 of the catalogue's 40 such fields).
#[derive(Debug, Clone)]
pub(crate) struct OnePlan {
    max: Vec<(Field, Field, Ty)>,
    retyped: Vec<(Field, Ty)>,
}

impl OnePlan {
    pub(crate) fn new(sel: &Selection) -> OnePlan {
        let mut on = [false; FIELD_COUNT];
        for f in sel.fields() {
            on[f as usize] = true;
        }
        let selected = CATALOG.iter().filter(|d| on[d.field as usize]);
        OnePlan {
            max: selected
                .clone()
                .filter_map(|d| d.max_of.map(|base| (d.field, base, d.ty)))
                .collect(),
            retyped: selected
                .filter(|d| matches!(d.agg, Agg::Mean | Agg::Sum))
                .map(|d| (d.field, d.ty))
                .collect(),
        }
    }

    /// How many fields [`single`] may add to a row: its `.max` columns and `samples`.
    pub(crate) fn fields_added(&self) -> usize {
        self.max.len() + 1
    }
}

/// The row one sub-sample aggregates to on its own, built in place: for the fields of `plan`,
/// what [`Acc::add`] then [`Acc::finish`] give for a single sub-sample (means and sums in the
/// field's storage type, each `.max` column its base's value, `samples` = 1), without the
/// accumulator's copies. Only the fields the row holds are visited (a missing value stays as it is).
fn single(mut row: Row, plan: &OnePlan) -> Row {
    // The `.max` columns first: they take their base's value as sampled, before it is typed.
    for &(f, base, ty) in &plan.max {
        if let Some(x) = row.get(base).as_f64() {
            row.set(f, typed(ty, x));
        }
    }
    for &(f, ty) in &plan.retyped {
        let v = row.get(f);
        match v {
            // An integer below 2^53 is its own rounded mean: the same value without the float trip.
            Value::U(n) if !matches!(ty, Ty::F64) && *n < 1 << 53 => {}
            // Unset fields read null: nothing to type.
            _ => {
                if let Some(x) = v.as_f64() {
                    row.set(f, typed(ty, x));
                }
            }
        }
    }
    row.set(Field::Samples, Value::U(1));
    row
}

/// A mean or maximum in the field's storage type (integers rounded).
fn typed(ty: Ty, x: f64) -> Value {
    match ty {
        Ty::F64 => Value::F((x * 1000.0).round() / 1000.0),
        _ => Value::U(x.max(0.0).round() as u64),
    }
}

/// Collects the sub-samples of one interval; the record loop decides when the interval ends.
#[derive(Debug, Default)]
pub(crate) struct Aggregator {
    accs: Vec<Acc>,
    count: u32,
    /// Per-process utilization summed over the sub-samples, by (row, pid), with the count.
    proc_util: HashMap<(usize, u32), (ProcUtil, f64)>,
}

impl Aggregator {
    pub(crate) fn new() -> Self {
        Aggregator::default()
    }

    /// Add one sub-sample.
    pub(crate) fn push(&mut self, tick: &Tick) {
        self.follow_layout(&tick.rows);
        if self.accs.len() < tick.rows.len() {
            self.accs.resize_with(tick.rows.len(), Acc::new);
        }
        for (acc, row) in self.accs.iter_mut().zip(&tick.rows) {
            acc.add(row);
        }
        for p in &tick.procs {
            if let Some(u) = p.util {
                let (sum, n) = self.proc_util.entry((p.row, p.pid)).or_default();
                sum.sm += u.sm;
                sum.mem += u.mem;
                sum.enc += u.enc;
                sum.dec += u.dec;
                *n += 1.0;
            }
        }
        self.count += 1;
    }

    /// When the rows' units changed within the interval (a MIG layout changed: instances made or
    /// destroyed), put each unit's running state at its new position; a unit that left loses its
    /// part of the interval, a new one starts with this sub-sample.
    fn follow_layout(&mut self, rows: &[Row]) {
        let unit = |r: &Row| (r.get(Field::Index).clone(), r.get(Field::MigGi).clone());
        let same = self.accs.len() == rows.len()
            && self.accs.iter().zip(rows).all(|(a, r)| unit(&a.last) == unit(r));
        if self.count == 0 || same {
            return;
        }
        let mut old: Vec<Option<Acc>> =
            std::mem::take(&mut self.accs).into_iter().map(Some).collect();
        let mut moved: HashMap<usize, usize> = HashMap::new();
        for (new, r) in rows.iter().enumerate() {
            let from =
                old.iter().position(|a| a.as_ref().is_some_and(|a| unit(&a.last) == unit(r)));
            let acc = match from.and_then(|k| old[k].take().map(|a| (k, a))) {
                Some((k, a)) => {
                    moved.insert(k, new);
                    a
                }
                None => Acc::new(),
            };
            self.accs.push(acc);
        }
        let util = std::mem::take(&mut self.proc_util);
        self.proc_util = util
            .into_iter()
            .filter_map(|((row, pid), u)| Some(((*moved.get(&row)?, pid), u)))
            .collect();
    }

    /// The rows of an interval of one sub-sample, `tick` itself (nothing may be pending): in the
    /// fields of `plan`, the same rows as [`Aggregator::push`] then [`Aggregator::take`] give, built
    /// in place.
    pub(crate) fn rows_of_one_sample(tick: Tick, plan: &OnePlan) -> Tick {
        let Tick { ts, seq, rows, procs } = tick;
        Tick { ts, seq, rows: rows.into_iter().map(|r| single(r, plan)).collect(), procs }
    }

    /// The aggregated rows of everything pushed since the last take, stamped like `last`
    /// (the interval's final sub-sample); None when nothing was pushed.
    pub(crate) fn take(&mut self, last: &Tick) -> Option<Tick> {
        if self.count == 0 {
            return None;
        }
        let rows = self.accs.iter().map(Acc::finish).collect();
        self.accs.clear();
        self.count = 0;
        let mut procs = last.procs.clone();
        for p in procs.iter_mut().filter(|p| p.util.is_some()) {
            if let Some(&(s, n)) = self.proc_util.get(&(p.row, p.pid)) {
                p.util =
                    Some(ProcUtil { sm: s.sm / n, mem: s.mem / n, enc: s.enc / n, dec: s.dec / n });
            }
        }
        self.proc_util.clear();
        Some(Tick { ts: last.ts, seq: last.seq, rows, procs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn tick(util: Option<u64>, power: f64, energy: f64, missed: u64) -> Tick {
        let mut r = Row::default();
        r.set(Field::UtilGpu, util.map_or(Value::Null, Value::U));
        r.set(Field::PowerDraw, Value::F(power));
        r.set(Field::EnergyTotal, Value::F(energy));
        r.set(Field::Pstate, Value::S("P0".into()));
        r.set(Field::FanSpeed, Value::Unsupported);
        r.set(Field::Missed, Value::U(missed));
        Tick { ts: Utc::now(), seq: 1, rows: vec![r], procs: Vec::new() }
    }

    #[test]
    fn a_mig_layout_change_within_an_interval_keeps_each_unit_apart() {
        let unit = |index: u64, gi: Option<u64>, power: f64| {
            let mut r = Row::default();
            r.set(Field::Index, Value::U(index));
            r.set(Field::MigGi, gi.map_or(Value::Null, Value::U));
            r.set(Field::PowerDraw, Value::F(power));
            r
        };
        let mut a = Aggregator::new();
        let mut t = tick(None, 0.0, 0.0, 0);
        t.rows = vec![
            unit(0, None, 100.0),
            unit(0, Some(1), 10.0),
            unit(0, Some(2), 20.0),
            unit(1, None, 300.0),
        ];
        a.push(&t);
        // Instance 2 destroyed, instance 5 made.
        t.rows = vec![
            unit(0, None, 200.0),
            unit(0, Some(1), 30.0),
            unit(0, Some(5), 50.0),
            unit(1, None, 500.0),
        ];
        a.push(&t);
        let out = a.take(&t).unwrap();
        let got: Vec<(Value, Value, Value)> = out
            .rows
            .iter()
            .map(|r| {
                (
                    r.get(Field::Index).clone(),
                    r.get(Field::MigGi).clone(),
                    r.get(Field::PowerDraw).clone(),
                )
            })
            .collect();
        let want = vec![
            (Value::U(0), Value::Null, Value::F(150.0)),
            (Value::U(0), Value::U(1), Value::F(20.0)),
            (Value::U(0), Value::U(5), Value::F(50.0)),
            (Value::U(1), Value::Null, Value::F(400.0)),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn mean_max_last_sum() {
        let mut a = Aggregator::new();
        a.push(&tick(Some(10), 100.0, 1.0, 0));
        a.push(&tick(Some(100), 300.0, 2.0, 2));
        a.push(&tick(None, 100.0, 3.0, 0));
        let last = tick(Some(10), 100.0, 4.0, 1);
        a.push(&last);
        let out = a.take(&last).unwrap();
        let r = &out.rows[0];
        assert_eq!(r.get(Field::UtilGpu), &Value::U(40), "mean of the present sub-samples");
        assert_eq!(r.get(Field::UtilGpuMax), &Value::U(100));
        assert_eq!(r.get(Field::PowerDraw), &Value::F(150.0));
        assert_eq!(r.get(Field::PowerDrawMax), &Value::F(300.0));
        assert_eq!(r.get(Field::EnergyTotal), &Value::F(4.0), "counters keep the last value");
        assert_eq!(r.get(Field::Pstate), &Value::S("P0".into()));
        assert_eq!(r.get(Field::FanSpeed), &Value::Unsupported);
        assert_eq!(r.get(Field::Samples), &Value::U(4));
        assert_eq!(r.get(Field::Missed), &Value::U(3));
        assert!(a.take(&out).is_none(), "nothing pending after a take");
    }

    #[test]
    fn one_sub_sample_gives_the_rows_push_and_take_give() {
        use gpumon_schema::GpuProc;
        let mut t = tick(Some(97), 612.123_456_7, 123_456_789.000_4, 2);
        t.rows[0].set(Field::TempGpu, Value::F(57.6));
        t.rows[0].set(Field::SmActive, Value::F(1.0 / 3.0));
        t.rows[0].set(Field::MemUsed, Value::Unsupported);
        t.rows[0].set(Field::XidEvents, Value::U(3));
        t.rows[0].set(Field::UtilGpuMax, Value::U(5));
        t.rows[0].set(Field::CpuUtilMaxCore, Value::F(99.999_9));
        let mut second = tick(None, 0.000_4, 1.0, 0);
        second.rows[0].set(Field::PowerDrawMax, Value::F(7.0));
        t.rows.push(second.rows.remove(0));
        t.procs = vec![GpuProc {
            row: 1,
            pid: 7,
            used_mib: None,
            util: Some(ProcUtil { sm: 1.5, ..Default::default() }),
        }];
        let mut a = Aggregator::new();
        a.push(&t);
        let want = a.take(&t).unwrap();
        let all = Selection::new(CATALOG.iter().map(|d| d.field).collect());
        assert_eq!(Aggregator::rows_of_one_sample(t.clone(), &OnePlan::new(&all)), want);
        // A selection without power.draw leaves it as read (and its .max column unset).
        let some =
            Selection::new(vec![Field::UtilGpu, Field::UtilGpuMax, Field::TempGpu, Field::Samples]);
        let one = Aggregator::rows_of_one_sample(t, &OnePlan::new(&some));
        assert_eq!(one.rows[0].get(Field::PowerDraw), &Value::F(612.123_456_7));
        assert_eq!(one.rows[0].get(Field::PowerDrawMax), &Value::Null);
        assert_eq!(one.rows[0].get(Field::TempGpu), want.rows[0].get(Field::TempGpu));
        assert_eq!(one.rows[0].get(Field::UtilGpuMax), want.rows[0].get(Field::UtilGpuMax));
    }

    #[test]
    fn process_utilization_is_the_mean_of_the_sub_samples() {
        use gpumon_schema::GpuProc;
        let mut a = Aggregator::new();
        let sub = |sm: Option<f64>| {
            let util = sm.map(|sm| ProcUtil { sm, mem: 2.0 * sm, ..Default::default() });
            let mut t = tick(Some(1), 1.0, 1.0, 0);
            t.procs = vec![GpuProc { row: 0, pid: 7, used_mib: Some(10), util }];
            t
        };
        a.push(&sub(Some(10.0)));
        a.push(&sub(None));
        let last = sub(Some(30.0));
        a.push(&last);
        let out = a.take(&last).unwrap();
        assert_eq!(out.procs[0].util, Some(ProcUtil { sm: 20.0, mem: 40.0, ..Default::default() }));
        let lone = sub(Some(5.0));
        a.push(&lone);
        assert_eq!(
            a.take(&lone).unwrap().procs[0].util.map(|u| u.sm),
            Some(5.0),
            "sums start over"
        );
    }
}
