//! Who used which GPU: per-user totals from the per-process rows of `record --processes`
//! (`run.procs.*`). For each (host, GPU, user) the rows of one tick are added up (a user's
//! processes together), then over the ticks the user was on the GPU: how many ticks, from when to
//! when, the mean of the summed `proc.sm` (share of the GPU's SM time, %) and the mean and peak of the
//! summed `proc.gpu_memory` (MiB). Processes whose owner is not visible (another PID namespace) are
//! filed under `?`. Per (host, GPU) it also counts the ticks the GPU was shared ([`Sharing`]).

use std::collections::{BTreeMap, HashSet};

use anyhow::Result;
use arrow_array::RecordBatch;

use gpumon_schema::catalog::Field;
use gpumon_schema::cols::{self, NO_TS, NO_U64};
use gpumon_schema::field_column;

/// One user on one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct UserUsage {
    /// The host.
    pub host: String,
    /// The GPU's index, where known.
    pub gpu: Option<u32>,
    /// The user's name.
    pub user: String,
    /// Distinct PIDs seen.
    pub procs: u64,
    /// Ticks with at least one of the user's processes on the GPU.
    pub ticks: u64,
    /// First and last such tick, UTC µs.
    pub first: i64,
    /// See `first`.
    pub last: i64,
    /// Mean over those ticks of the user's summed `proc.sm`, % (None without per-process utilization).
    pub sm_mean: Option<f64>,
    /// Mean and peak of the user's summed `proc.gpu_memory`, MiB.
    pub mem_mean: Option<f64>,
    /// See `mem_mean`.
    pub mem_max: Option<f64>,
}

/// Distinct PIDs remembered per user and GPU (beyond it they are not counted).
const MAX_PIDS: usize = 100_000;

/// One tick of a user's processes on one GPU: their summed `proc.sm` and `proc.gpu_memory`, NaN
/// when no row of it had the value.
#[derive(Debug, Clone, Copy)]
struct TickSums {
    ts: i64,
    sm: f64,
    mem: f64,
}

#[derive(Debug, Default)]
struct Acc {
    pids: HashSet<u32>,
    /// The tick being added up.
    cur: Option<TickSums>,
    ticks: u64,
    first: i64,
    last: i64,
    sm: (f64, u64),
    mem: (f64, u64),
    mem_max: Option<f64>,
}

fn add(a: f64, b: f64) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, _) => b,
        (_, true) => a,
        _ => a + b,
    }
}

impl Acc {
    fn close_tick(&mut self) {
        let Some(TickSums { ts, sm, mem }) = self.cur.take() else { return };
        if self.ticks == 0 {
            self.first = ts;
        }
        self.ticks += 1;
        self.last = ts;
        if !sm.is_nan() {
            self.sm = (self.sm.0 + sm, self.sm.1 + 1);
        }
        if !mem.is_nan() {
            self.mem = (self.mem.0 + mem, self.mem.1 + 1);
            self.mem_max = Some(self.mem_max.map_or(mem, |m| m.max(mem)));
        }
    }

    fn row(&mut self, ts: i64, pid: u64, sm: f64, mem: f64) {
        if self.cur.is_some_and(|c| c.ts != ts) {
            self.close_tick();
        }
        let c = self.cur.get_or_insert(TickSums { ts, sm: f64::NAN, mem: f64::NAN });
        c.sm = add(c.sm, sm);
        c.mem = add(c.mem, mem);
        if pid != NO_U64 && self.pids.len() < MAX_PIDS {
            self.pids.insert(u32::try_from(pid).unwrap_or(u32::MAX));
        }
    }
}

/// Who shared one GPU: the ticks with processes on it, with the job's (`proc.job` true), with the
/// job's beside another's, with two or more owners, and the ticks per owner; the other processes'
/// owners and commands (a few) and their peak memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sharing {
    pub(crate) host: String,
    pub(crate) gpu: Option<u32>,
    pub(crate) ticks: u64,
    pub(crate) job_ticks: u64,
    pub(crate) shared_job_ticks: u64,
    pub(crate) multi_user_ticks: u64,
    pub(crate) user_ticks: BTreeMap<String, u64>,
    /// (owner, command) of the processes outside the job, at most [`MAX_OTHERS`].
    pub others: Vec<(String, String)>,
    pub(crate) other_mem_max: Option<f64>,
    /// The tick being added up.
    cur: Option<TickOwners>,
}

/// One tick of the processes on one GPU: whether the job's and another's were there, and their
/// owners.
#[derive(Debug, Clone, PartialEq)]
struct TickOwners {
    ts: i64,
    job: bool,
    other: bool,
    users: Vec<String>,
}

/// Other processes named per GPU.
const MAX_OTHERS: usize = 4;

impl Sharing {
    fn close_tick(&mut self) {
        let Some(TickOwners { job, other, users, .. }) = self.cur.take() else { return };
        self.ticks += 1;
        self.job_ticks += u64::from(job);
        self.shared_job_ticks += u64::from(job && other);
        self.multi_user_ticks += u64::from(users.len() > 1);
        for u in users {
            *self.user_ticks.entry(u).or_default() += 1;
        }
    }

    /// One process row: `job` its proc.job (None: not recorded).
    fn row(&mut self, ts: i64, job: Option<bool>, user: &str, command: Option<String>, mem: f64) {
        if self.cur.as_ref().is_some_and(|c| c.ts != ts) {
            self.close_tick();
        }
        let c = self.cur.get_or_insert_with(|| TickOwners {
            ts,
            job: false,
            other: false,
            users: Vec::new(),
        });
        c.job |= job == Some(true);
        c.other |= job == Some(false);
        if user != "?" && !c.users.iter().any(|u| u == user) {
            c.users.push(user.to_string());
        }
        if job == Some(false) {
            if !mem.is_nan() {
                self.other_mem_max = Some(self.other_mem_max.map_or(mem, |m| m.max(mem)));
            }
            let who = (user.to_string(), command.unwrap_or_else(|| "?".into()));
            if self.others.len() < MAX_OTHERS && !self.others.contains(&who) {
                self.others.push(who);
            }
        }
    }
}

/// Per-user totals gathered from the per-process inputs, inside the summary's window.
#[derive(Debug, Default)]
pub struct UsageCollector {
    window: crate::window::TimeWindow,
    accs: BTreeMap<(String, Option<u32>, String), Acc>,
    sharing: BTreeMap<(String, Option<u32>), Sharing>,
}

impl UsageCollector {
    /// A collector of the rows inside `window`.
    pub fn new(window: crate::window::TimeWindow) -> UsageCollector {
        UsageCollector { window, ..Default::default() }
    }

    /// Add one batch of a per-process table; rows without a host value belong to `default_host`.
    pub fn visit(&mut self, batch: &RecordBatch, default_host: &str) -> Result<()> {
        let n = batch.num_rows();
        let mut ts = Vec::new();
        if !field_column(batch, Field::Timestamp).is_some_and(|c| cols::ts_micros(c, &mut ts)) {
            return Ok(());
        }
        let ints = |f: Field| {
            let mut v = Vec::new();
            if !field_column(batch, f).is_some_and(|c| cols::u64_values(c, &mut v)) {
                v = vec![NO_U64; n];
            }
            v
        };
        let floats = |f: Field| {
            let mut v = Vec::new();
            if !field_column(batch, f).is_some_and(|c| cols::f64_values(c, &mut v)) {
                v = vec![f64::NAN; n];
            }
            v
        };
        let (gpu, pid, sm, mem, job) = (
            ints(Field::Index),
            ints(Field::ProcPid),
            floats(Field::ProcSm),
            floats(Field::ProcGpuMemory),
            floats(Field::ProcJob),
        );
        let text = |f: Field, i: usize| field_column(batch, f).and_then(|c| cols::str_at(c, i));
        for i in 0..n {
            if ts[i] == NO_TS || !self.window.contains(ts[i]) {
                continue;
            }
            let host = text(Field::Host, i).unwrap_or_else(|| default_host.to_string());
            let user = text(Field::ProcUser, i).unwrap_or_else(|| "?".to_string());
            let g = (gpu[i] != NO_U64).then(|| u32::try_from(gpu[i]).unwrap_or(u32::MAX));
            let j = (!job[i].is_nan()).then_some(job[i] != 0.0);
            let share = self.sharing.entry((host.clone(), g)).or_default();
            // The command is named only for processes outside the job.
            let command = (j == Some(false)).then(|| text(Field::ProcCommand, i)).flatten();
            share.row(ts[i], j, &user, command, mem[i]);
            self.accs.entry((host, g, user)).or_default().row(ts[i], pid[i], sm[i], mem[i]);
        }
        Ok(())
    }

    /// The totals, by host and GPU, the busiest user (by mean SM) first; and who shared each GPU.
    pub fn finish(self) -> (Vec<UserUsage>, Vec<Sharing>) {
        let sharing = self
            .sharing
            .into_iter()
            .map(|((host, gpu), mut s)| {
                s.close_tick();
                Sharing { host, gpu, ..s }
            })
            .collect();
        let mut out: Vec<UserUsage> = self
            .accs
            .into_iter()
            .map(|((host, gpu, user), mut a)| {
                a.close_tick();
                let mean = |(s, n): (f64, u64)| (n > 0).then(|| s / n as f64);
                UserUsage {
                    host,
                    gpu,
                    user,
                    procs: a.pids.len() as u64,
                    ticks: a.ticks,
                    first: a.first,
                    last: a.last,
                    sm_mean: mean(a.sm),
                    mem_mean: mean(a.mem),
                    mem_max: a.mem_max,
                }
            })
            .filter(|u| u.ticks > 0)
            .collect();
        out.sort_by(|a, b| {
            (&a.host, a.gpu)
                .cmp(&(&b.host, b.gpu))
                .then(b.sm_mean.unwrap_or(-1.0).total_cmp(&a.sm_mean.unwrap_or(-1.0)))
                .then(a.user.cmp(&b.user))
        });
        (out, sharing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_processes_add_up_per_tick() {
        let mut a = Acc::default();
        a.row(1, 10, 30.0, 100.0);
        a.row(1, 11, 20.0, 200.0);
        a.row(2, 10, 10.0, f64::NAN);
        a.close_tick();
        assert_eq!((a.ticks, a.first, a.last, a.pids.len()), (2, 1, 2, 2));
        assert_eq!(a.sm, (60.0, 2));
        assert_eq!(a.mem, (300.0, 1));
        assert_eq!(a.mem_max, Some(300.0));
    }
}
