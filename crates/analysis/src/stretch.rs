//! Stretches of idle samples of one GPU in time order, in constant memory: the idle stretches at
//! least `min` long that start and end inside the data (a GPU idle before its job starts or after it
//! ends is not a recurring stop), how many, their total length and the spacing of their starts.
//! Parts of the data read apart join exactly when joined in time order ([`Stretches::append`]).

/// An idle stretch: its first and last idle sample (UTC µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    start: i64,
    end: i64,
}

/// The closed stretches of some data, in time order: their number, total length (last minus first
/// sample, µs), the first and last start, and the steps between consecutive starts (count, sum, sum
/// of squares: exact integers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Seq {
    pub k: u64,
    pub(crate) len_us: i128,
    pub first: i64,
    pub last: i64,
    pub steps: u64,
    pub(crate) step_sum: i128,
    pub(crate) step_sq: i128,
}

impl Seq {
    /// The sequence of the one stretch `r`.
    fn of_run(r: Run) -> Seq {
        Seq {
            k: 1,
            len_us: i128::from(r.end - r.start),
            first: r.start,
            last: r.start,
            ..Seq::default()
        }
    }

    /// `self` then `o`.
    fn then(self, o: Seq) -> Seq {
        if self.k == 0 {
            return o;
        }
        if o.k == 0 {
            return self;
        }
        let step = i128::from(o.first - self.last);
        Seq {
            k: self.k + o.k,
            len_us: self.len_us + o.len_us,
            first: self.first,
            last: o.last,
            steps: self.steps + o.steps + 1,
            step_sum: self.step_sum + o.step_sum + step,
            step_sq: self.step_sq + o.step_sq + step * step,
        }
    }

    /// Mean step between starts (s) and its coefficient of variation (None: fewer than two steps).
    pub(crate) fn period(&self) -> Option<(f64, f64)> {
        (self.steps >= 2).then(|| {
            let n = self.steps as f64;
            let mean = self.step_sum as f64 / n;
            let var = (self.step_sq as f64 / n - mean * mean).max(0.0);
            (mean / 1e6, var.sqrt() / mean.max(1.0))
        })
    }
}

/// The idle stretches of a GPU's samples in time order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stretches {
    /// Samples seen; whether all of them were idle.
    n: u64,
    all_idle: bool,
    /// The stretch open at the start and the one open at the end (the same when all are idle).
    head: Option<Run>,
    tail: Option<Run>,
    /// The closed stretches at least `min_us` long.
    pub closed: Seq,
    min_us: i64,
}

impl Stretches {
    /// Stretches at least `min_s` long count.
    pub(crate) fn new(min_s: f64) -> Stretches {
        Stretches {
            n: 0,
            all_idle: false,
            head: None,
            tail: None,
            closed: Seq::default(),
            min_us: (min_s * 1e6) as i64,
        }
    }

    /// The next sample, at `ts`: idle or not (the same as appending a part of one sample).
    pub(crate) fn push(&mut self, idle: bool, ts: i64) {
        let first = self.n == 0;
        self.n += 1;
        if idle {
            match &mut self.tail {
                Some(r) => r.end = ts,
                None => self.tail = Some(Run { start: ts, end: ts }),
            }
            if first {
                self.all_idle = true;
            }
            if self.all_idle {
                self.head = self.tail;
            }
        } else if self.all_idle {
            // The stretch open at the start stays open (head); none is open at the end.
            self.all_idle = false;
            self.tail = None;
        } else if let Some(r) = self.tail.take()
            && r.end - r.start >= self.min_us
        {
            self.closed = self.closed.then(Seq::of_run(r));
        }
    }

    /// `k` samples in a row, all idle or all not, the first at `first` and the last at `last`: the
    /// same as pushing them one by one.
    pub(crate) fn push_run(&mut self, idle: bool, first: i64, last: i64, k: u64) {
        if k == 0 {
            return;
        }
        self.push(idle, first);
        if k > 1 {
            self.n += k - 2;
            self.push(idle, last);
        }
    }

    /// Join the samples that follow these.
    pub(crate) fn append(&mut self, later: &Stretches) {
        if later.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *later;
            return;
        }
        let joined = match (self.tail, later.head) {
            (Some(a), Some(b)) => Some(Run { start: a.start, end: b.end }),
            (a, b) => a.or(b),
        };
        let close = |r: Option<Run>| match r {
            Some(r) if r.end - r.start >= self.min_us => Seq::of_run(r),
            _ => Seq::default(),
        };
        let (head, tail, middle) = match (self.all_idle, later.all_idle) {
            (true, true) => (joined, joined, Seq::default()),
            (true, false) => (joined, later.tail, Seq::default()),
            (false, true) => (self.head, joined, Seq::default()),
            (false, false) => (self.head, later.tail, close(joined)),
        };
        self.closed = self.closed.then(middle).then(later.closed);
        self.n += later.n;
        self.all_idle &= later.all_idle;
        self.head = head;
        self.tail = tail;
    }
}

impl Default for Stretches {
    fn default() -> Self {
        Stretches::new(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The closed stretches of `rows` written out plainly.
    fn oracle(rows: &[(bool, i64)], min_us: i64) -> Seq {
        let mut runs = Vec::new();
        let mut cur: Option<Run> = None;
        for (k, &(idle, ts)) in rows.iter().enumerate() {
            match (idle, cur) {
                (true, None) => cur = Some(Run { start: ts, end: ts }),
                (true, Some(r)) => cur = Some(Run { end: ts, ..r }),
                (false, Some(r)) => {
                    // Closed only when it did not start with the data.
                    if rows[..k].iter().any(|x| !x.0) {
                        runs.push(r);
                    }
                    cur = None;
                }
                (false, None) => {}
            }
        }
        runs.into_iter()
            .filter(|r| r.end - r.start >= min_us)
            .fold(Seq::default(), |s, r| s.then(Seq::of_run(r)))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        /// Any split of the samples into parts, joined in order, gives the plain count.
        #[test]
        fn parts_join_to_the_whole(
            idle in proptest::collection::vec(any::<bool>(), 0..80),
            cuts in proptest::collection::vec(0usize..80, 0..5),
        ) {
            let rows: Vec<(bool, i64)> =
                idle.iter().enumerate().map(|(k, &i)| (i, k as i64 * 1_000_000)).collect();
            let min = 2.0;
            let mut whole = Stretches::new(min);
            rows.iter().for_each(|&(i, t)| whole.push(i, t));
            prop_assert_eq!(whole.closed, oracle(&rows, 2_000_000));
            let mut cuts = cuts;
            cuts.push(0);
            cuts.push(rows.len());
            cuts.sort_unstable();
            let mut joined = Stretches::new(min);
            for w in cuts.windows(2) {
                let mut part = Stretches::new(min);
                rows[w[0].min(rows.len())..w[1].min(rows.len())].iter().for_each(|&(i, t)| part.push(i, t));
                joined.append(&part);
            }
            prop_assert_eq!(joined, whole);
        }
    }

    /// Three stops of 2 minutes every 10 minutes, between work: three stretches, period 600 s.
    #[test]
    fn regular_stops() {
        let mut s = Stretches::new(60.0);
        for t in 0..2400i64 {
            s.push(t > 100 && t % 600 < 120 && t < 2000, t * 1_000_000);
        }
        assert_eq!(s.closed.k, 3);
        assert_eq!(s.closed.len_us, 3 * 119_000_000);
        let (period, cv) = s.closed.period().unwrap();
        assert_eq!((period, cv), (600.0, 0.0));
    }
}
