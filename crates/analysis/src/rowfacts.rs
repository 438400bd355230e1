//! How the facts of [`crate::facts`] are counted: the per-row facts of the findings (memory held,
//! held while idle, the SM clock while busy, input-bound rows, rows that may be a hung collective),
//! counted column by column: each column sets bits of its rows' words in one pass in its own type,
//! and each GPU's rows are then counted in 64 bins of what they count for.

use arrow_array::Array;

use crate::acc::Fsum;
use crate::facts::FactsAcc;
use gpumon_schema::cols::{self, NO_U64};

/// What a row's columns say, one bit each (a missing value sets no bit).
mod bit {
    /// utilization.gpu recorded; below the idle threshold; at or above busy; below input-bound.
    pub(crate) const U_KNOWN: u32 = 1;
    pub(crate) const U_IDLE: u32 = 1 << 1;
    pub(crate) const U_BUSY: u32 = 1 << 2;
    pub(crate) const U_LOW: u32 = 1 << 3;
    /// sm.active recorded; below the idle threshold; below input-bound.
    pub(crate) const S_KNOWN: u32 = 1 << 4;
    pub(crate) const S_IDLE: u32 = 1 << 5;
    pub(crate) const S_LOW: u32 = 1 << 6;
    /// memory.used recorded; at or above the held threshold.
    pub(crate) const M_KNOWN: u32 = 1 << 7;
    pub(crate) const M_HELD: u32 = 1 << 8;
    /// clocks.sm recorded; the clock event reasons include sw_power_cap.
    pub(crate) const CLOCK: u32 = 1 << 9;
    pub(crate) const CAPPED: u32 = 1 << 10;
    /// job.cpu recorded; at or above pegged.
    pub(crate) const J_KNOWN: u32 = 1 << 11;
    pub(crate) const J_PEG: u32 = 1 << 12;
    /// cpu.util.max_core or cpu.util recorded; either at or above pegged.
    pub(crate) const H_KNOWN: u32 = 1 << 13;
    pub(crate) const H_PEG: u32 = 1 << 14;
    /// job.gpu_memory recorded; above zero.
    pub(crate) const JM_KNOWN: u32 = 1 << 15;
    pub(crate) const JM_POS: u32 = 1 << 16;
    /// utilization.gpu at or above the hang threshold; power.draw recorded.
    pub(crate) const U_HANG: u32 = 1 << 17;
    pub(crate) const P_KNOWN: u32 = 1 << 18;
}

/// What a row counts for, one bit each: eight bits, so a GPU's rows are counted in 256 bins.
mod fact {
    pub(crate) const MEM: u8 = 1;
    pub(crate) const HELD: u8 = 1 << 1;
    pub(crate) const HELD_IDLE: u8 = 1 << 2;
    pub(crate) const BUSY_CLOCK: u8 = 1 << 3;
    /// utilization.gpu and a CPU figure both recorded; and the row is input-bound.
    pub(crate) const BOTH: u8 = 1 << 4;
    pub(crate) const BOUND: u8 = 1 << 5;
    /// utilization.gpu at or above the hang threshold, sm.active idle where recorded, memory held
    /// where recorded, power.draw recorded: kept by its draw ([`crate::facts::PowerBins`]).
    pub(crate) const HANG: u8 = 1 << 6;
    /// utilization.gpu (and sm.active where recorded; sm.active alone without it) idle.
    pub(super) const IDLE: u8 = 1 << 7;
}

/// Thresholds the per-row facts are counted with (from the findings' thresholds).
#[derive(Debug, Clone, Copy, Default)]
pub struct RowRules {
    /// utilization.gpu (and sm.active where recorded) below this (%) is idle.
    pub idle_util: f64,
    /// memory.used at or above this (MiB) is memory held.
    pub(crate) held_mem_mib: f64,
    /// utilization.gpu at or above this (%) is busy.
    pub(crate) busy_util: f64,
    /// utilization.gpu at or above this (%) with the SMs idle may be a hung collective.
    pub(crate) hang_util: f64,
    /// Host mem.used at or above this share (%) of mem.total is memory pressure.
    pub(crate) host_mem_pct: f64,
    /// Idle stretches at least this long (s) count (idle_stretches).
    pub(crate) idle_stretch_s: f64,
}

/// The thresholds the words are set with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    pub rows: RowRules,
    pub input_bound_util: f64,
    pub pegged_core: f64,
}

/// The columns the facts are read from (None: not in the batch).
#[derive(Default, Clone, Copy)]
pub(crate) struct Columns<'a> {
    pub util: Option<&'a dyn Array>,
    pub sm: Option<&'a dyn Array>,
    pub mem_used: Option<&'a dyn Array>,
    pub clock: Option<&'a dyn Array>,
    /// The clock event reasons as read by [`cols::u64_values`] (empty: not in the batch).
    pub reasons: &'a [u64],
    pub(crate) job_cpu: Option<&'a dyn Array>,
    /// cpu.util.max_core and cpu.util: the busiest core, or all of them.
    pub(crate) host_cpu: [Option<&'a dyn Array>; 2],
    pub(crate) job_mem: Option<&'a dyn Array>,
    pub power: Option<&'a dyn Array>,
    pub(crate) power_limit: Option<&'a dyn Array>,
    pub temp: Option<&'a dyn Array>,
}

/// One GPU's facts over some rows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Counts {
    pub(crate) mem_n: u64,
    pub(crate) held_n: u64,
    pub(crate) held_idle_n: u64,
    pub(crate) busy_clock_sum: Fsum,
    pub(crate) busy_clock_n: u64,
    pub both: u64,
    pub bound: u64,
    /// The rows that may be a hung collective, by draw; the largest power.limit (-inf: none).
    pub hang: crate::facts::PowerBins,
    pub(crate) power_limit: f64,
    /// Sum and count of temperature.gpu over the rows with utilization.gpu at or above `busy_util`.
    pub(crate) busy_temp_sum: Fsum,
    pub(crate) busy_temp_n: u64,
    /// Sum and count of temperature.gpu over all rows.
    pub(crate) temp_sum: Fsum,
    pub(crate) temp_n: u64,
    /// memory.used over time.
    pub(crate) mem_trend: crate::facts::Trend,
    /// The idle stretches of the rows, in their order.
    pub stretches: crate::stretch::Stretches,
    /// The rows held while idle, by draw.
    pub(crate) held_idle_power: crate::facts::PowerBins,
    /// When the GPU was in use.
    pub(crate) busy_span: crate::facts::BusySpan,
}

impl Default for Counts {
    fn default() -> Self {
        Counts {
            mem_n: 0,
            held_n: 0,
            held_idle_n: 0,
            busy_clock_sum: Fsum::default(),
            busy_clock_n: 0,
            both: 0,
            bound: 0,
            hang: Default::default(),
            power_limit: f64::NEG_INFINITY,
            busy_temp_sum: Fsum::default(),
            busy_temp_n: 0,
            temp_sum: Fsum::default(),
            temp_n: 0,
            mem_trend: Default::default(),
            stretches: Default::default(),
            held_idle_power: Default::default(),
            busy_span: Default::default(),
        }
    }
}

impl Counts {
    /// Add these rows' facts to a GPU's (pooled as a later stretch of the same GPU).
    pub(crate) fn add_to(&self, d: &mut FactsAcc) {
        d.pool(&FactsAcc {
            mem_n: self.mem_n,
            held_n: self.held_n,
            held_idle_n: self.held_idle_n,
            busy_clock_sum: self.busy_clock_sum,
            busy_clock_n: self.busy_clock_n,
            hang: self.hang.clone(),
            power_limit: self.power_limit,
            busy_temp_sum: self.busy_temp_sum,
            busy_temp_n: self.busy_temp_n,
            temp_sum: self.temp_sum,
            temp_n: self.temp_n,
            mem_trend: self.mem_trend.clone(),
            stretches: self.stretches,
            held_idle_power: self.held_idle_power.clone(),
            busy_span: self.busy_span,
            ..FactsAcc::default()
        });
    }
}

/// What each row of a batch counts for, and the batch's clock as numbers.
#[derive(Default)]
pub(crate) struct Words {
    words: Vec<u32>,
    facts: Vec<u8>,
    clock: Vec<f64>,
    /// The batch's power.draw, power.limit and temperature.gpu as numbers (empty: not in the batch).
    power: Vec<f64>,
    limit: Vec<f64>,
    temp: Vec<f64>,
    mem: Vec<f64>,
    /// Idle stretches at least this long (s) count.
    stretch_s: f64,
    /// The temperature column holds whole numbers of at most 32 bits (see `clock_whole`).
    temp_whole: bool,
    /// The clock column holds whole numbers of at most 32 bits: a batch of them sums exactly in
    /// an f64, added to the [`Fsum`] once (the same sum as one add each).
    clock_whole: bool,
}

/// Add to each row's word the bits `f` gives for its value of `col` (nothing for an absent column).
fn pass(col: Option<&dyn Array>, words: &mut [u32], f: impl Fn(f64) -> u32) {
    if let Some(c) = col {
        cols::each_f64(c, words, |w, v| *w |= f(v));
    }
}

/// `b` where `cond` holds, else 0 (branch-free).
fn bit_if(cond: bool, b: u32) -> u32 {
    u32::from(cond) * b
}

impl Words {
    /// Read the batch's `n` rows.
    pub(crate) fn read(&mut self, c: &Columns<'_>, r: &Rules, n: usize) {
        use bit::*;
        self.words.clear();
        self.words.resize(n, 0);
        let w = &mut self.words[..];
        let rows = r.rows;
        pass(c.util, w, |v| {
            bit_if(!v.is_nan(), U_KNOWN)
                | bit_if(v < rows.idle_util, U_IDLE)
                | bit_if(v >= rows.busy_util, U_BUSY)
                | bit_if(v < r.input_bound_util, U_LOW)
                | bit_if(v >= rows.hang_util, U_HANG)
        });
        pass(c.sm, w, |v| {
            bit_if(!v.is_nan(), S_KNOWN)
                | bit_if(v < rows.idle_util, S_IDLE)
                | bit_if(v < r.input_bound_util, S_LOW)
        });
        pass(c.mem_used, w, |v| {
            bit_if(!v.is_nan(), M_KNOWN) | bit_if(v >= rows.held_mem_mib, M_HELD)
        });
        pass(c.clock, w, |v| bit_if(!v.is_nan(), CLOCK));
        pass(c.job_cpu, w, |v| bit_if(!v.is_nan(), J_KNOWN) | bit_if(v >= r.pegged_core, J_PEG));
        for h in c.host_cpu {
            pass(h, w, |v| bit_if(!v.is_nan(), H_KNOWN) | bit_if(v >= r.pegged_core, H_PEG));
        }
        pass(c.job_mem, w, |v| bit_if(!v.is_nan(), JM_KNOWN) | bit_if(v > 0.0, JM_POS));
        pass(c.power, w, |v| bit_if(!v.is_nan(), P_KNOWN));
        let cap = crate::acc::Reason::SwPowerCap.bit();
        for (w, &x) in w.iter_mut().zip(c.reasons) {
            *w |= bit_if(x != NO_U64 && x & cap != 0, CAPPED);
        }
        self.facts.clear();
        self.facts.extend(self.words.iter().map(|&w| facts(w)));
        self.clock.clear();
        if let Some(a) = c.clock {
            cols::f64_values(a, &mut self.clock);
        }
        self.clock_whole = c.clock.is_some_and(|a| cols::is_narrow_int(a.data_type()));
        self.stretch_s = rows.idle_stretch_s;
        self.temp_whole = c.temp.is_some_and(|a| cols::is_narrow_int(a.data_type()));
        let wanted = [
            (c.power, &mut self.power),
            (c.power_limit, &mut self.limit),
            (c.temp, &mut self.temp),
            (c.mem_used, &mut self.mem),
        ];
        for (col, out) in wanted {
            out.clear();
            if let Some(a) = col {
                cols::f64_values(a, out);
            }
        }
    }

    /// The facts of the rows `rows` (all of one GPU); `ts` the batch's timestamps. One tight pass
    /// per kind of fact, each skipped when no row has it.
    pub(crate) fn count(&self, rows: &[u32], ts: &[i64]) -> Counts {
        let mut c = Counts {
            stretches: crate::stretch::Stretches::new(self.stretch_s),
            ..Counts::default()
        };
        // Counted a run of equal facts at a time: a GPU's rows mostly repeat their neighbour's, and
        // one increment per row would wait on the store before it.
        let mut bins = [0u64; 256];
        let (mut cur, mut run) = (0u8, 0u64);
        for &i in rows {
            let f = self.fact(i);
            if f != cur {
                bins[usize::from(cur)] += run;
                (cur, run) = (f, 0);
            }
            run += 1;
        }
        bins[usize::from(cur)] += run;
        let any = |b: u8| bins.iter().enumerate().any(|(f, &k)| k > 0 && f as u8 & b != 0);
        if any(fact::HANG | fact::HELD_IDLE) && !self.power.is_empty() {
            self.count_power(rows, ts, &mut c);
        }
        if !self.temp.is_empty() {
            self.count_temps(rows, &mut c);
        }
        if any(fact::BUSY_CLOCK) && !self.clock.is_empty() {
            self.count_clock(rows, &mut c);
        }
        self.count_in_time(rows, ts, &mut c);
        for (f, &k) in bins.iter().enumerate() {
            let has = |b: u8| if f as u8 & b != 0 { k } else { 0 };
            c.mem_n += has(fact::MEM);
            c.held_n += has(fact::HELD);
            c.held_idle_n += has(fact::HELD_IDLE);
            c.busy_clock_n += has(fact::BUSY_CLOCK);
            c.both += has(fact::BOTH);
            c.bound += has(fact::BOUND);
        }
        c
    }

    #[inline]
    fn fact(&self, i: u32) -> u8 {
        self.facts.get(i as usize).copied().unwrap_or(0)
    }

    /// The draws of the rows that may be a hung collective (and the largest power limit among
    /// them), and of the rows held while idle.
    fn count_power(&self, rows: &[u32], ts: &[i64], c: &mut Counts) {
        for &i in rows {
            let f = self.fact(i);
            if f & (fact::HANG | fact::HELD_IDLE) == 0 {
                continue;
            }
            let i = i as usize;
            let (Some(&p), Some(&t)) = (self.power.get(i), ts.get(i)) else { continue };
            if f & fact::HANG != 0 {
                c.hang.add(p, t);
                // The limit matters only where a hang may be.
                if let Some(&l) = self.limit.get(i) {
                    c.power_limit = c.power_limit.max(l);
                }
            }
            if f & fact::HELD_IDLE != 0 {
                c.held_idle_power.add(p, t);
            }
        }
    }

    /// temperature.gpu over all rows and over the busy ones.
    fn count_temps(&self, rows: &[u32], c: &mut Counts) {
        // Whole-number temperatures of the batch, all and while busy: exact in an f64.
        let mut temps = [0.0f64; 2];
        for &i in rows {
            let i = i as usize;
            let Some(&t) = self.temp.get(i).filter(|t| !t.is_nan()) else { continue };
            let busy = self.words.get(i).is_some_and(|w| w & bit::U_BUSY != 0);
            if self.temp_whole {
                temps[0] += t;
                temps[1] += f64::from(u8::from(busy)) * t;
            } else {
                c.temp_sum.add(t);
                if busy {
                    c.busy_temp_sum.add(t);
                }
            }
            c.temp_n += 1;
            c.busy_temp_n += u64::from(busy);
        }
        c.temp_sum.add(temps[0]);
        c.busy_temp_sum.add(temps[1]);
    }

    /// clocks.sm over the busy, uncapped rows.
    fn count_clock(&self, rows: &[u32], c: &mut Counts) {
        let mut whole = 0.0;
        for &i in rows {
            if self.fact(i) & fact::BUSY_CLOCK == 0 {
                continue;
            }
            let Some(&v) = self.clock.get(i as usize) else { continue };
            if self.clock_whole {
                whole += v;
            } else {
                c.busy_clock_sum.add(v);
            }
        }
        c.busy_clock_sum.add(whole);
    }

    /// What follows the rows in time order: memory.used's trend, the idle stretches and the busy
    /// span, the last two a run of equal rows at a time.
    fn count_in_time(&self, rows: &[u32], ts: &[i64], c: &mut Counts) {
        if !self.mem.is_empty() {
            let mut trend = crate::facts::Trend::batch();
            for &i in rows {
                let i = i as usize;
                if let (Some(&t), Some(&m)) = (ts.get(i), self.mem.get(i)) {
                    trend.add(t, m);
                }
            }
            trend.fold_into(&mut c.mem_trend);
        }
        // A run: (idle, utilization known, first and last time, rows).
        let mut run: Option<(bool, bool, i64, i64, u64)> = None;
        let flush = |c: &mut Counts, r: (bool, bool, i64, i64, u64)| {
            c.stretches.push_run(r.0, r.2, r.3, r.4);
            if r.1 {
                c.busy_span.push_run(!r.0, r.2, r.3, r.4);
            }
        };
        for &i in rows {
            let Some(&t) = ts.get(i as usize) else { continue };
            let idle = self.fact(i) & fact::IDLE != 0;
            let known = self.words.get(i as usize).is_some_and(|w| w & bit::U_KNOWN != 0);
            match &mut run {
                Some(r) if r.0 == idle && r.1 == known => {
                    r.3 = t;
                    r.4 += 1;
                }
                _ => {
                    if let Some(r) = run.take() {
                        flush(c, r);
                    }
                    run = Some((idle, known, t, t, 1));
                }
            }
        }
        if let Some(r) = run {
            flush(c, r);
        }
    }
}

/// What a row with word `w` counts for (branch-free: the batch's words convert in one loop).
fn facts(w: u32) -> u8 {
    use bit::*;
    let has = |b: u32| w & b != 0;
    // A MIG instance has no utilization.gpu: its GPM sm.active alone says it is idle.
    let idle = (has(U_KNOWN) & has(U_IDLE) & (!has(S_KNOWN) | has(S_IDLE)))
        | (!has(U_KNOWN) & has(S_IDLE));
    // The job's CPU where the row has a job; else the busiest core (or all of them).
    let both = has(U_KNOWN) & (has(J_KNOWN) | has(H_KNOWN));
    let work = (has(JM_KNOWN) & has(JM_POS)) | (!has(JM_KNOWN) & has(M_HELD));
    let low = has(U_LOW) & (!has(S_KNOWN) | has(S_LOW));
    let peg = (has(J_KNOWN) & has(J_PEG)) | (!has(J_KNOWN) & has(H_PEG));
    let sm_idle = !has(S_KNOWN) | has(S_IDLE);
    let held = !has(M_KNOWN) | has(M_HELD);
    let bit = |c: bool, b: u8| u8::from(c) * b;
    bit(has(M_KNOWN), fact::MEM)
        | bit(has(M_HELD), fact::HELD)
        | bit(has(M_HELD) & idle, fact::HELD_IDLE)
        | bit(has(U_BUSY) & !has(CAPPED) & has(CLOCK), fact::BUSY_CLOCK)
        | bit(both, fact::BOTH)
        | bit(both & low & work & peg, fact::BOUND)
        | bit(has(U_HANG) & sm_idle & held & has(P_KNOWN), fact::HANG)
        | bit(idle, fact::IDLE)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float32Array, Float64Array, UInt8Array, UInt16Array, UInt64Array};
    use proptest::prelude::*;

    use super::*;

    /// One row as the findings define it, NaN for missing: the rules written row by row.
    #[derive(Debug, Clone, Copy)]
    struct Row {
        util: f64,
        sm: f64,
        mem: f64,
        clock: f64,
        reasons: Option<u64>,
        job_cpu: f64,
        max_core: f64,
        cpu: f64,
        job_mem: f64,
        power: f64,
        limit: f64,
        temp: f64,
    }

    /// `rows` with their timestamps (their positions in the batch).
    fn oracle(rows: &[(i64, Row)], r: &Rules) -> Counts {
        let mut c = Counts {
            stretches: crate::stretch::Stretches::new(r.rows.idle_stretch_s),
            ..Counts::default()
        };
        let cap = crate::acc::Reason::SwPowerCap.bit();
        for &(ts, ref v) in rows {
            let rr = r.rows;
            let sm_idle = v.sm.is_nan() || v.sm < rr.idle_util;
            let held = v.mem.is_nan() || v.mem >= rr.held_mem_mib;
            if v.util >= rr.hang_util && sm_idle && held && !v.power.is_nan() {
                c.hang.add(v.power, ts);
                c.power_limit = c.power_limit.max(v.limit);
            }
            c.mem_trend.add(ts, v.mem);
            let idle = if v.util.is_nan() {
                v.sm < rr.idle_util
            } else {
                v.util < rr.idle_util && (v.sm.is_nan() || v.sm < rr.idle_util)
            };
            c.stretches.push(idle, ts);
            if !v.temp.is_nan() {
                c.temp_sum.add(v.temp);
                c.temp_n += 1;
            }
            if v.util >= rr.busy_util && !v.temp.is_nan() {
                c.busy_temp_sum.add(v.temp);
                c.busy_temp_n += 1;
            }
            if !v.mem.is_nan() {
                c.mem_n += 1;
                if v.mem >= rr.held_mem_mib {
                    c.held_n += 1;
                    let idle = if v.util.is_nan() {
                        v.sm < rr.idle_util
                    } else {
                        v.util < rr.idle_util && (v.sm.is_nan() || v.sm < rr.idle_util)
                    };
                    c.held_idle_n += u64::from(idle);
                    if idle {
                        c.held_idle_power.add(v.power, ts);
                    }
                }
            }
            if !v.util.is_nan() {
                c.busy_span.push(!idle, ts);
            }
            let capped = v.reasons.is_some_and(|x| x & cap != 0);
            if v.util >= rr.busy_util && !capped && !v.clock.is_nan() {
                c.busy_clock_sum.add(v.clock);
                c.busy_clock_n += 1;
            }
            let cpu = if v.job_cpu.is_nan() { v.max_core.max(v.cpu) } else { v.job_cpu };
            if v.util.is_nan() || cpu.is_nan() {
                continue;
            }
            c.both += 1;
            let work = if v.job_mem.is_nan() { v.mem >= rr.held_mem_mib } else { v.job_mem > 0.0 };
            let low = v.util < r.input_bound_util && (v.sm.is_nan() || v.sm < r.input_bound_util);
            c.bound += u64::from(low && work && cpu >= r.pegged_core);
        }
        c
    }

    const RULES: Rules = Rules {
        rows: RowRules {
            idle_util: 5.0,
            held_mem_mib: 1024.0,
            busy_util: 80.0,
            hang_util: 90.0,
            host_mem_pct: 95.0,
            idle_stretch_s: 2.0,
        },
        input_bound_util: 50.0,
        pegged_core: 90.0,
    };

    /// A value near the thresholds, or missing, or (for floats) not finite.
    fn value(hi: f64) -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => (0.0..hi).prop_map(f64::floor),
            1 => Just(f64::NAN),
            1 => prop_oneof![Just(5.0), Just(50.0), Just(80.0), Just(90.0), Just(1024.0), Just(0.0)],
            1 => Just(f64::INFINITY),
        ]
    }

    fn row() -> impl Strategy<Value = Row> {
        let reasons = proptest::option::of(prop_oneof![Just(0u64), Just(4), Just(5), Just(1 << 3)]);
        (value(100.0), value(100.0), value(4096.0), value(2000.0), reasons).prop_flat_map(
            |(util, sm, mem, clock, reasons)| {
                let more = (value(800.0), value(800.0), value(100.0));
                (value(200.0), value(100.0), value(100.0), value(4096.0), more).prop_map(
                    move |(job_cpu, max_core, cpu, job_mem, (power, limit, temp))| Row {
                        util,
                        sm,
                        mem,
                        clock,
                        reasons,
                        job_cpu,
                        max_core,
                        cpu,
                        job_mem,
                        power,
                        limit,
                        temp,
                    },
                )
            },
        )
    }

    /// A float column: null for NaN, the infinities kept (they read as missing).
    fn f64s(rows: &[Row], f: fn(&Row) -> f64) -> ArrayRef {
        Arc::new(rows.iter().map(|r| Some(f(r)).filter(|v| !v.is_nan())).collect::<Float64Array>())
    }

    /// An integer column: null for NaN and infinity.
    fn ints<A: FromIterator<Option<u16>> + Array + 'static>(
        rows: &[Row],
        f: fn(&Row) -> f64,
    ) -> ArrayRef {
        let v = rows.iter().map(|r| Some(f(r)).filter(|v| v.is_finite()).map(|v| v as u16));
        Arc::new(v.collect::<A>())
    }

    /// `r` with its infinities missing (an integer column cannot hold them).
    fn finite(v: f64) -> f64 {
        if v.is_finite() { v } else { f64::NAN }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// The column passes count what the rules, written row by row, count; for any columns
        /// present or absent, of any width.
        #[test]
        fn words_count_what_the_rules_say(
            rows in proptest::collection::vec(row(), 0..200),
            present in proptest::collection::vec(any::<bool>(), 12),
            narrow in any::<bool>(),
        ) {
            let u8s = |f: fn(&Row) -> f64| -> ArrayRef {
                let v = rows.iter().map(|r| Some(f(r)).filter(|v| v.is_finite()).map(|v| v as u8));
                Arc::new(v.collect::<UInt8Array>())
            };
            let util: ArrayRef = if narrow { u8s(|r| r.util) } else {
                Arc::new(rows.iter().map(|r| Some(r.util as f32).filter(|v| !v.is_nan()))
                    .collect::<Float32Array>())
            };
            let mem = if narrow { ints::<UInt16Array>(&rows, |r| r.mem) } else { f64s(&rows, |r| r.mem) };
            let reasons: ArrayRef = Arc::new(rows.iter().map(|r| r.reasons).collect::<UInt64Array>());
            let cols_: [ArrayRef; 12] = [
                util,
                f64s(&rows, |r| r.sm),
                mem,
                if narrow { ints::<UInt16Array>(&rows, |r| r.clock) } else { f64s(&rows, |r| r.clock) },
                reasons,
                f64s(&rows, |r| r.job_cpu),
                f64s(&rows, |r| r.max_core),
                f64s(&rows, |r| r.cpu),
                f64s(&rows, |r| r.job_mem),
                f64s(&rows, |r| r.power),
                f64s(&rows, |r| r.limit),
                if narrow { ints::<UInt16Array>(&rows, |r| r.temp) } else { f64s(&rows, |r| r.temp) },
            ];
            let get = |k: usize| present[k].then(|| cols_[k].as_ref());
            let mut reasons = Vec::new();
            if let Some(a) = get(4) {
                prop_assert!(cols::u64_values(a, &mut reasons));
            }
            let c = Columns {
                util: get(0),
                sm: get(1),
                mem_used: get(2),
                clock: get(3),
                reasons: &reasons,
                job_cpu: get(5),
                host_cpu: [get(6), get(7)],
                job_mem: get(8),
                power: get(9),
                power_limit: get(10),
                temp: get(11),
            };
            // What the columns hold, as the rules see it: absent and non-finite are missing, and
            // the integer columns hold whole numbers.
            let seen: Vec<Row> = rows.iter().map(|r| {
                let keep = |k: usize, v: f64| if present[k] { finite(v) } else { f64::NAN };
                Row {
                    util: keep(0, r.util),
                    sm: keep(1, r.sm),
                    mem: keep(2, r.mem),
                    clock: keep(3, r.clock),
                    reasons: r.reasons.filter(|_| present[4]),
                    job_cpu: keep(5, r.job_cpu),
                    max_core: keep(6, r.max_core),
                    cpu: keep(7, r.cpu),
                    job_mem: keep(8, r.job_mem),
                    power: keep(9, r.power),
                    limit: keep(10, r.limit),
                    temp: keep(11, r.temp),
                }
            }).collect();
            let mut w = Words::default();
            w.read(&c, &RULES, rows.len());
            let all: Vec<u32> = (0..rows.len() as u32).collect();
            let ts: Vec<i64> = all.iter().map(|&i| i64::from(i)).collect();
            let with_ts = |ix: &[u32]| -> Vec<(i64, Row)> {
                ix.iter().map(|&i| (i64::from(i), seen[i as usize])).collect()
            };
            prop_assert_eq!(w.count(&all, &ts), oracle(&with_ts(&all), &RULES));
            // A GPU's rows in any order and subset count as those rows.
            let odd: Vec<u32> = all.iter().copied().filter(|i| i % 2 == 1).rev().collect();
            prop_assert_eq!(w.count(&odd, &ts), oracle(&with_ts(&odd), &RULES));
        }
    }

    /// The rules on a few rows, by hand: held while idle, the busy clock without a power cap,
    /// input-bound on the job's CPU, else on the busiest core.
    #[test]
    fn rows_by_hand() {
        let util: ArrayRef = Arc::new(UInt8Array::from(vec![
            Some(0),
            Some(0),
            Some(98),
            Some(99),
            Some(99),
            Some(10),
            None,
        ]));
        let mem: ArrayRef = Arc::new(Float64Array::from(vec![
            70000.0, 2.0, 70000.0, 70000.0, 70000.0, 3000.0, 3000.0,
        ]));
        let clock: ArrayRef =
            Arc::new(UInt16Array::from(vec![1980, 345, 1600, 1700, 1200, 1000, 1000]));
        let core: ArrayRef =
            Arc::new(Float64Array::from(vec![95.0, 95.0, 95.0, 10.0, 10.0, 99.0, 99.0]));
        let c = Columns {
            util: Some(util.as_ref()),
            mem_used: Some(mem.as_ref()),
            clock: Some(clock.as_ref()),
            reasons: &[0, 0, 0, 0, 4, 0, 0],
            host_cpu: [Some(core.as_ref()), None],
            ..Columns::default()
        };
        let mut w = Words::default();
        w.read(&c, &RULES, 7);
        let n = w.count(&[0, 1, 2, 3, 4, 5, 6], &[0, 1, 2, 3, 4, 5, 6]);
        assert_eq!((n.mem_n, n.held_n, n.held_idle_n), (7, 6, 1));
        assert_eq!(n.busy_clock_n, 2);
        assert_eq!(n.busy_clock_sum.value(), 3300.0);
        // Rows 0 and 5: low utilization, memory held, a pegged core; row 1 holds no memory.
        assert_eq!((n.both, n.bound), (6, 2));
        assert_eq!(n.mem_trend.n, 7, "{:?}", n.mem_trend);
    }
}
