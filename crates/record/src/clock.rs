//! The wall-clock stamps of the rows, watched for steps.
//!
//! The schedule runs on the monotonic clock; rows are stamped with the wall clock. NTP, an admin or
//! a VM resume can step the wall clock. A step shows as a jump in wall − monotonic: when that moves
//! by more than half a sampling period between two stamps, it is reported once, with its size.
//!
//! Stamps never repeat or go back: each is later than the one before it by at least a millisecond
//! (distinct even in CSV's millisecond text). After a backward step of S seconds the stamps do not
//! follow the clock back; they go on from the last one written at half speed until the clock
//! catches up (after 2·S), then follow it again. So every (timestamp, index) stays unique and in
//! order, the rows of those 2·S carry stamps at most S ahead of the corrected clock, and time
//! rotation, which cuts on the stamps, never stalls (the writer also recomputes a boundary that a
//! step left more than a period ahead). A forward step is followed at once (the schedule, being
//! monotonic, misses no tick).
//!
//! Why not hold the old timeline for good, or bump stamps by a microsecond: holding leaves every
//! later stamp S off the clock for the rest of the run; bumping crams the rows of S seconds into a
//! few microseconds (the same millisecond in CSV). Half speed bounds the error by S and spreads
//! the rows in order.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use gpumon_util::warn;

/// Smallest distance between two stamps (µs).
const MIN_STEP_US: i64 = 1000;

/// Hands out row stamps; one per record loop.
#[derive(Debug)]
pub(crate) struct Stamper {
    origin: Instant,
    /// A change of wall − monotonic beyond this is a step (µs).
    threshold_us: i64,
    /// wall − monotonic at the last stamp (µs).
    offset: Option<i64>,
    /// The last stamp handed out and the monotonic time it was taken (µs).
    last: Option<(i64, i64)>,
}

/// A step of the wall clock, in µs (negative: backwards).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step(pub i64);

impl Stamper {
    /// `every`: the sampling period (stamps are taken this often).
    pub(crate) fn new(every: Duration) -> Stamper {
        let threshold_us = i64::try_from(every.as_micros() / 2).unwrap_or(i64::MAX).max(1);
        Stamper { origin: Instant::now(), threshold_us, offset: None, last: None }
    }

    /// The stamp for a sample taken now; warns once per clock step.
    pub(crate) fn now(&mut self) -> DateTime<Utc> {
        let (mono, wall) = self.read();
        let (ts, step) = self.stamp(mono, wall);
        if let Some(s) = step {
            warn(&describe(s));
        }
        DateTime::from_timestamp_micros(ts).unwrap_or_else(Utc::now)
    }

    /// Read the monotonic and the wall clock at one moment (µs): the wall read is bracketed by two
    /// monotonic ones and retried when the thread was preempted in between, so that a preemption is
    /// never taken for a step.
    fn read(&self) -> (i64, i64) {
        let us = |d: Duration| i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
        let mut best = (i64::MAX, 0, 0);
        for _ in 0..5 {
            let a = us(self.origin.elapsed());
            let wall = Utc::now().timestamp_micros();
            let b = us(self.origin.elapsed());
            if b - a < best.0 {
                best = (b - a, a + (b - a) / 2, wall);
            }
            if b - a <= self.threshold_us / 8 {
                break;
            }
        }
        (best.1, best.2)
    }

    /// The stamp for a reading (µs), and the step it revealed, if any.
    fn stamp(&mut self, mono: i64, wall: i64) -> (i64, Option<Step>) {
        let offset = wall - mono;
        let step =
            self.offset.map(|prev| offset - prev).filter(|d| d.abs() > self.threshold_us).map(Step);
        self.offset = Some(offset);
        let ts = match self.last {
            // Behind the last stamp (a step back): go on from it at half speed until the clock catches up.
            Some((last, at)) => wall.max(last + ((mono - at) / 2).max(MIN_STEP_US)),
            None => wall,
        };
        self.last = Some((ts, mono));
        (ts, step)
    }
}

fn describe(s: Step) -> String {
    let secs = s.0.abs() as f64 / 1e6;
    if s.0 < 0 {
        format!(
            "the wall clock stepped back {secs:.3} s (NTP, an admin, a VM); timestamps go on from the last one \
             written at half speed until the clock catches up (about {:.0} s), so none repeats",
            2.0 * secs
        )
    } else {
        format!(
            "the wall clock stepped forward {secs:.3} s (NTP, an admin, a VM resume); timestamps follow it"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Readings every 100 ms of monotonic time; the wall clock steps by `step_us` at reading `at`.
    fn run(step_us: i64, at: usize, n: usize) -> (Vec<i64>, Vec<Step>) {
        let mut s = Stamper::new(Duration::from_millis(100));
        let (mut stamps, mut steps) = (Vec::new(), Vec::new());
        for i in 0..n {
            let mono = i as i64 * 100_000;
            let wall = 1_700_000_000_000_000 + mono + if i >= at { step_us } else { 0 };
            let (ts, step) = s.stamp(mono, wall);
            stamps.push(ts);
            steps.extend(step);
        }
        (stamps, steps)
    }

    #[test]
    fn a_steady_clock_is_stamped_as_is() {
        let (stamps, steps) = run(0, 0, 50);
        assert!(steps.is_empty());
        assert!(stamps.windows(2).all(|w| w[1] - w[0] == 100_000));
    }

    #[test]
    fn a_step_back_is_reported_once_and_never_repeats_a_stamp() {
        let (stamps, steps) = run(-2_000_000, 20, 100);
        assert_eq!(steps, [Step(-2_000_000)]);
        assert!(stamps.windows(2).all(|w| w[1] - w[0] >= MIN_STEP_US), "strictly increasing");
        // Half speed until the clock catches up 2 x 2 s later, then the clock again.
        assert_eq!(stamps[21] - stamps[20], 50_000);
        let wall_at = |i: usize| 1_700_000_000_000_000 + i as i64 * 100_000 - 2_000_000;
        assert_eq!(stamps[99], wall_at(99), "back on the clock after the catch-up");
        let caught = (20..100).find(|&i| stamps[i] == wall_at(i)).unwrap();
        assert!((58..=62).contains(&caught), "caught up at reading {caught}");
    }

    #[test]
    fn a_step_forward_is_reported_and_followed() {
        let (stamps, steps) = run(30_000_000, 10, 20);
        assert_eq!(steps, [Step(30_000_000)]);
        assert_eq!(stamps[10] - stamps[9], 30_100_000);
    }

    #[test]
    fn jitter_below_half_a_period_is_no_step() {
        let mut s = Stamper::new(Duration::from_millis(100));
        let mut steps = 0;
        for i in 0..100i64 {
            let jitter = if i % 2 == 0 { 40_000 } else { -5_000 };
            steps +=
                usize::from(s.stamp(i * 100_000, 1_000_000 + i * 100_000 + jitter).1.is_some());
        }
        assert_eq!(steps, 0);
    }
}
