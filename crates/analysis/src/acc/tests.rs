//! The accumulators against direct computations.

use gpumon_schema::catalog::{Field, Reduce};
use gpumon_schema::cols::NO_I64;

use super::*;

#[test]
fn buckets_are_monotone_and_tight() {
    let mut last = 0;
    for dt in
        [1u64, 127, 128, 255, 256, 1000, 999_999, 1_000_000, 1_000_001, 3_000_000, 1 << 41, 1 << 50]
    {
        let b = bucket(dt);
        assert!(b >= last, "{dt}");
        assert!(b < SPACING_BUCKETS);
        if dt < 1 << MAX_EXP {
            assert!(
                bucket_lo(b) <= dt && dt < bucket_lo(b + 1),
                "{dt} in [{}, {})",
                bucket_lo(b),
                bucket_lo(b + 1)
            );
            assert!((bucket_lo(b + 1) - bucket_lo(b)) as f64 <= dt as f64 / 127.0 + 1.0);
        }
        last = b;
    }
}

#[test]
fn timing_interval_gaps_energy_and_counter_resets() {
    let mut t = Timing::default();
    let s = 1_000_000i64;
    // 1 s samples at 100 W, a 10 s gap after the 5th, counter 0,100,...; a reset at the end
    let mut ts = 0;
    for i in 0..10 {
        t.step(ts, 100.0, 100.0 * f64::from(i));
        ts += if i == 4 { 10 * s } else { s };
    }
    t.step(ts, 100.0, 5.0);
    let st = t.finish(3.0);
    assert_eq!(st.interval_s, Some(1.0));
    assert_eq!(st.gaps, 1);
    assert_eq!(st.gap_s, 10.0);
    assert_eq!(st.covered_s, 9.0);
    assert_eq!(st.integrated_j, Some(900.0));
    assert_eq!(st.counter_j, Some(900.0));
    assert_eq!(t.resets, 1);
    assert_eq!(st.listed, vec![Gap { start: 4 * s, end: 14 * s }]);
}

#[test]
fn append_equals_one_pass() {
    let pts: Vec<(i64, f64, f64)> = (0..50)
        .map(|i| (i * 1_000_000 + (i % 3) * 1000, 50.0 + i as f64, i as f64 * 60.0))
        .collect();
    let mut one = Timing::default();
    pts.iter().for_each(|p| one.step(p.0, p.1, p.2));
    let (mut a, mut b) = (Timing::default(), Timing::default());
    pts[..20].iter().for_each(|p| a.step(p.0, p.1, p.2));
    pts[20..].iter().for_each(|p| b.step(p.0, p.1, p.2));
    a.append(b);
    let (x, y) = (a.finish(3.0), one.finish(3.0));
    assert!((x.integrated_j.unwrap() - y.integrated_j.unwrap()).abs() < 1e-6);
    assert_eq!(TimingStats { integrated_j: None, ..x }, TimingStats { integrated_j: None, ..y });
}

#[test]
fn steps_equal_one_step_each() {
    // Runs of equal steps, gaps, a step back, a repeated stamp, missing power, a counter reset,
    // and more than TOP_GAPS distinct steps.
    let mut pts: Vec<(i64, f64, f64)> = Vec::new();
    let mut ts = 5_000_000i64;
    for i in 0..400i64 {
        ts += match i % 97 {
            13 => -2_000_000,
            14 => 0,
            30 => 45_000_000 + i * 1000,
            _ if i % 7 == 0 => 1_000_000 + i,
            _ => 1_000_000,
        };
        let p = if i % 11 == 0 { f64::NAN } else { 100.0 + (i % 5) as f64 * 0.1 };
        let c = if i == 200 { 1.0 } else { i as f64 * 90.0 };
        pts.push((ts, p, c));
    }
    let mut one = Timing::default();
    pts.iter().for_each(|p| one.step(p.0, p.1, p.2));
    let mut many = Timing::default();
    for chunk in pts.chunks(37) {
        let (t, p, c): (Vec<i64>, Vec<f64>, Vec<f64>) = (
            chunk.iter().map(|x| x.0).collect(),
            chunk.iter().map(|x| x.1).collect(),
            chunk.iter().map(|x| x.2).collect(),
        );
        many.steps(&t, &p, Some(&c));
    }
    assert_eq!(one.finish(3.0), many.finish(3.0));
    assert_eq!((one.backwards, one.resets, one.prev), (many.backwards, many.resets, many.prev));
    let bits =
        |t: &Timing| t.buckets.iter().map(|(i, b)| (*i, b.n, b.dt, b.joules)).collect::<Vec<_>>();
    assert_eq!(bits(&one), bits(&many));
}

#[test]
fn counted_values_equal_added_ones() {
    let vals: Vec<i64> = (0..500).map(|i| 40 + (i * 37) % 61).chain([NO_I64, 101]).collect();
    let mut counts = vec![0u32; 70];
    vals.iter().filter(|&&v| v != NO_I64).for_each(|&v| counts[(v - 40) as usize] += 1);
    let (mut a, mut b) = (FieldAcc::new(Field::UtilGpu), FieldAcc::new(Field::UtilGpu));
    a.add_ints(&vals);
    b.add_counts(40, &counts);
    assert_eq!((a.m.n, a.m.sum, a.m.min, a.m.max), (b.m.n, b.m.sum, b.m.min, b.m.max));
    for r in [Reduce::Mean, Reduce::Max, Reduce::P50, Reduce::P95] {
        assert_eq!(a.reduce(r), b.reduce(r));
    }
    assert_eq!(a.hist.map(|h| (h.n, h.counts)), b.hist.map(|h| (h.n, h.counts)));
}

#[test]
fn nearest_rank_percentiles() {
    let mut h = Hist::new(1);
    for v in 1..=20 {
        h.add(f64::from(v));
    }
    assert_eq!(h.percentile(95.0), Some(19.0));
    assert_eq!(h.percentile(50.0), Some(10.0));
    assert_eq!(h.percentile(100.0), Some(20.0));
    assert_eq!(h.pct_below(5.0), Some(20.0));
    let mut f = Hist::new(10);
    f.add(12.34);
    f.add(99.96);
    assert_eq!(f.percentile(50.0), Some(12.3));
    assert_eq!(f.percentile(100.0), Some(100.0));
}
