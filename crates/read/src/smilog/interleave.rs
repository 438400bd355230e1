//! Logs without an index, uuid or pci.bus_id column: the GPU count inferred from a buffered sample
//! (row timing, rows between repeated headers, periodic values, or `--interleaved-gpus`), and the position of
//! each row within its tick, kept in step with the tick timing.

use std::collections::{HashMap, VecDeque};

use super::cells::{cell_ok, clean};
use super::header::{Ident, Layout, parse_header};
use super::lines::Pending;
use super::time::parse_stamp;

/// Largest GPU count the inference considers.
const MAX_K: usize = 64;

/// Position of interleaved rows within a tick, kept in step with the tick timing when known.
#[derive(Default)]
pub(super) struct Phase {
    k: usize,
    /// Gap (ms) above which two consecutive rows belong to different ticks, when the timing shows it.
    thr: Option<f64>,
    pos: usize,
    prev_ms: Option<f64>,
    miss_pos: usize,
    miss_streak: u32,
}

impl Phase {
    /// Take the GPU count, tick threshold and first position an inference found.
    fn adopt(&mut self, inf: &Inference) {
        self.k = inf.k;
        self.thr = inf.thr;
        self.pos = inf.phase % inf.k.max(1);
    }

    pub(super) fn restart(&mut self) {
        self.pos = 0;
        self.prev_ms = None;
        self.miss_streak = 0;
    }

    /// GPU of the next interleaved row; returns true as second value when it re-synchronised.
    pub(super) fn slot(&mut self, ms: f64) -> (usize, bool) {
        let k = self.k.max(1);
        let mut resynced = false;
        if let (Some(thr), Some(prev)) = (self.thr, self.prev_ms)
            && ms - prev > thr
        {
            // A tick boundary: it should come when the position wrapped to 0. Two boundaries in a
            // row at the same other position mean a row was lost (or added): restart the tick.
            if self.pos == 0 {
                self.miss_streak = 0;
            } else {
                if self.miss_streak > 0 && self.miss_pos == self.pos {
                    self.miss_streak += 1;
                } else {
                    self.miss_streak = 1;
                    self.miss_pos = self.pos;
                }
                if self.miss_streak >= 2 {
                    self.pos = 0;
                    self.miss_streak = 0;
                    resynced = true;
                }
            }
        }
        let gpu = self.pos;
        self.pos = (self.pos + 1) % k;
        self.prev_ms = Some(ms);
        (gpu, resynced)
    }
}

/// Rows sampled for the inference: timestamps per run segment, and the other cells per row.
struct Sample {
    segs: Vec<Vec<f64>>,
    cells: Vec<Vec<String>>,
    /// The sample reaches the end of the file (the last segment is complete).
    eof: bool,
}

fn collect_sample(start: Option<&Layout>, lines: &VecDeque<Pending>, eof: bool) -> Sample {
    let mut layout = start.cloned();
    let mut segs: Vec<Vec<f64>> = vec![Vec::new()];
    let mut cells = Vec::new();
    for l in lines {
        let t = l.text.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(h) = parse_header(t) {
            if segs.last().is_some_and(|s| !s.is_empty()) {
                segs.push(Vec::new());
            }
            if layout.as_ref().is_none_or(|c| c.header != h.header) {
                layout = Some(h);
            }
            continue;
        }
        let Some(lay) = &layout else { continue };
        let Some(tc) = lay.ts_col else { continue };
        if lay.ident != Ident::Interleaved {
            continue;
        }
        let parts: Vec<&str> = t.split(',').map(clean).collect();
        if parts.len() != lay.cols.len()
            || (!l.terminated && !lay.cols.iter().zip(&parts).all(|(c, p)| cell_ok(c, p)))
        {
            continue;
        }
        let Some(ms) = parts.get(tc).and_then(|c| parse_stamp(c)).map(|s| s.ms()) else { continue };
        if let Some(s) = segs.last_mut() {
            s.push(ms);
        }
        cells.push(
            parts
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != tc)
                .map(|(_, c)| (*c).to_string())
                .collect(),
        );
    }
    segs.retain(|s| !s.is_empty());
    Sample { segs, cells, eof }
}

struct Inference {
    k: usize,
    thr: Option<f64>,
    phase: usize,
    note: String,
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let m = v.len() / 2;
    let (_, x, _) = v.select_nth_unstable_by(m, f64::total_cmp);
    *x
}

/// Otsu's two-class split of the gaps on a log scale: the threshold between "next GPU of the
/// same sample" gaps and "next sample" gaps.
fn otsu_split(gaps: &[f64]) -> Option<f64> {
    let mut xs: Vec<f64> = gaps.iter().map(|g| (g + 1.0).ln()).collect();
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let total: f64 = xs.iter().sum();
    let mut pre = 0.0;
    let mut best: Option<(f64, usize)> = None;
    for i in 1..n {
        pre += xs[i - 1];
        if xs[i] <= xs[i - 1] {
            continue;
        }
        let w0 = i as f64 / n as f64;
        let m0 = pre / i as f64;
        let m1 = (total - pre) / (n - i) as f64;
        let v = w0 * (1.0 - w0) * (m0 - m1) * (m0 - m1);
        if best.is_none_or(|(bv, _)| v > bv) {
            best = Some((v, i));
        }
    }
    let (_, i) = best?;
    Some(((xs[i - 1] + xs[i]) / 2.0).exp() - 1.0)
}

/// The two gap clusters of a sample and the runs of rows between large gaps.
struct Timing {
    /// Gap (ms) above which consecutive rows belong to different samples.
    thr: f64,
    med_small: f64,
    med_large: f64,
    /// Lengths of the runs of rows between large gaps (the first run of the file and a run cut
    /// by the end of the sample left out).
    runs: Vec<usize>,
    /// Row positions (within the first segment) followed by a large gap, the first few of them:
    /// they tell where the first sample ends when the file starts mid-sample.
    breaks: Vec<usize>,
}

/// Gaps within one sampling tick are a few ms (nvidia-smi queries the GPUs one after another);
/// gaps between ticks are the `-l`/`-lms` interval. Only a clearly two-level timing counts:
/// large gaps at least 5x the small ones and small ones at most 250 ms.
fn timing(sample: &Sample) -> Option<Timing> {
    let gaps: Vec<f64> =
        sample.segs.iter().flat_map(|s| s.windows(2).map(|w| (w[1] - w[0]).max(0.0))).collect();
    if gaps.len() < 3 {
        return None;
    }
    let split = otsu_split(&gaps)?;
    let (mut small, mut large): (Vec<f64>, Vec<f64>) = gaps.iter().partition(|&&g| g <= split);
    if small.is_empty() || large.is_empty() {
        return None;
    }
    let med_small = median(&mut small);
    let med_large = median(&mut large);
    if med_large / med_small.max(1.0) < 5.0 || med_small > 250.0 {
        return None;
    }
    let thr = (med_small + med_large) / 2.0;
    let mut runs = Vec::new();
    let mut breaks = Vec::new();
    let nseg = sample.segs.len();
    for (si, s) in sample.segs.iter().enumerate() {
        let mut run = 1usize;
        let mut first = true;
        for (j, w) in s.windows(2).enumerate() {
            if w[1] - w[0] > thr {
                if si == 0 && breaks.len() < 32 {
                    breaks.push(j);
                }
                if !(si == 0 && first) {
                    runs.push(run);
                }
                run = 1;
                first = false;
            } else {
                run += 1;
            }
        }
        if !(si == 0 && first) && (si + 1 < nseg || sample.eof) {
            runs.push(run);
        }
    }
    Some(Timing { thr, med_small, med_large, runs, breaks })
}

/// The most common run length, if it covers at least 3/4 of at least two runs.
fn run_mode(runs: &[usize]) -> Option<usize> {
    if runs.len() < 2 {
        return None;
    }
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for &r in runs {
        *counts.entry(r).or_default() += 1;
    }
    let (k, c) = counts.into_iter().max_by_key(|&(k, c)| (c, std::cmp::Reverse(k)))?;
    (c * 4 >= runs.len() * 3 && (2..=MAX_K).contains(&k)).then_some(k)
}

/// Position of the file's first row within its sample: the phase that puts most of the first
/// large gaps after the last GPU of a sample (0, a file starting with GPU 0, wins ties).
fn first_phase(t: &Timing, k: usize) -> usize {
    let fits = |p: usize| t.breaks.iter().filter(|&&j| (j + p + 1).is_multiple_of(k)).count();
    let mut best = (fits(0), 0);
    for p in 1..k.min(MAX_K) {
        let f = fits(p);
        if f > best.0 {
            best = (f, p);
        }
    }
    best.1
}

/// Runs delimited by header lines that all hold the same small number of rows written within a
/// second of each other: a one-shot query appended once per tick.
fn segment_rule(sample: &Sample) -> Option<usize> {
    let n = sample.segs.len();
    let segs = if sample.eof { &sample.segs[..] } else { &sample.segs[..n.saturating_sub(1)] };
    let l = segs.first()?.len();
    let spread = |s: &Vec<f64>| {
        s.iter().copied().fold(f64::MIN, f64::max) - s.iter().copied().fold(f64::MAX, f64::min)
    };
    (segs.len() >= 2
        && (2..=MAX_K).contains(&l)
        && segs.iter().all(|s| s.len() == l && spread(s) <= 1000.0))
    .then_some(l)
}

/// Periodicity of the values: some column repeats with lag k much more than with any shorter
/// lag, and most columns are at least as alike at lag k as at lag 1.
fn value_rule(sample: &Sample) -> Option<usize> {
    let rows = &sample.cells;
    let n = rows.len();
    let ncol = rows.iter().map(Vec::len).min()?;
    if n < 8 || ncol == 0 {
        return None;
    }
    let nonconst: Vec<usize> =
        (0..ncol).filter(|&c| rows.iter().any(|r| r[c] != rows[0][c])).collect();
    if nonconst.is_empty() {
        return None;
    }
    let maxlag = 16.min(n / 4);
    let sims: Vec<Vec<f64>> = nonconst
        .iter()
        .map(|&c| {
            (1..=maxlag)
                .map(|lag| {
                    (lag..n).filter(|&i| rows[i][c] == rows[i - lag][c]).count() as f64
                        / (n - lag) as f64
                })
                .collect()
        })
        .collect();
    (2..=maxlag).find(|&k| {
        let strong = sims
            .iter()
            .any(|s| s[k - 1] >= 0.5 && s[..k - 1].iter().all(|&sj| s[k - 1] >= sj + 0.3));
        let agree = sims.iter().filter(|s| s[k - 1] + 0.05 >= s[0]).count();
        strong && agree * 2 > sims.len()
    })
}

/// What the notes of an inference start with.
pub(super) const NO_IDENT: &str = "no index, uuid or pci.bus_id column";

fn infer(sample: &Sample, forced: Option<usize>) -> Inference {
    let timing = timing(sample);
    if let Some(k) = forced {
        let k = k.max(1);
        let note = format!("{k} GPU(s) interleaved, as given with --interleaved-gpus");
        return match &timing {
            Some(t) if k > 1 => Inference { k, thr: Some(t.thr), phase: first_phase(t, k), note },
            _ => Inference { k, thr: None, phase: 0, note },
        };
    }
    let pre = NO_IDENT;
    if let Some(t) = &timing
        && let Some(k) = run_mode(&t.runs)
    {
        let note = format!(
            "{pre}: {k} GPUs inferred from the row timing (rows of one sample ~{:.0} ms apart, samples ~{:.0} ms apart); pass --interleaved-gpus N to override",
            t.med_small, t.med_large
        );
        return Inference { k, thr: Some(t.thr), phase: first_phase(t, k), note };
    }
    if let Some(k) = segment_rule(sample) {
        let note = format!(
            "{pre}: {k} GPUs inferred from the {k} rows between repeated header lines; pass --interleaved-gpus N to override"
        );
        return Inference { k, thr: None, phase: 0, note };
    }
    if let Some(k) = value_rule(sample) {
        let note = format!(
            "{pre}: {k} GPUs inferred from values repeating every {k} rows; pass --interleaved-gpus N to override"
        );
        return Inference { k, thr: None, phase: 0, note };
    }
    let note = format!(
        "{pre}: rows read as one GPU (no interleaving pattern found); pass --interleaved-gpus N if the log covers N GPUs"
    );
    Inference { k: 1, thr: None, phase: 0, note }
}

/// Decide the GPU count of the interleaved rows held in `lines` (or take `--interleaved-gpus` = `forced`), set
/// `phase` for them, and say how the count was found.
pub(super) fn resolve(
    phase: &mut Phase,
    layout: Option<&Layout>,
    lines: &VecDeque<Pending>,
    eof: bool,
    forced: Option<usize>,
) -> String {
    let inf = infer(&collect_sample(layout, lines, eof), forced);
    phase.adopt(&inf);
    inf.note
}
