//! Host metrics: CPU from /proc/stat deltas (fresh at any interval), memory and load via sysinfo.

use std::fs;

use sysinfo::{MemoryRefreshKind, System};

use crate::schema::catalog::Field;
use crate::schema::row::{Row, Value};
use crate::util::warn::warn_once;

const MIB: u64 = 1024 * 1024;

/// CPU time counters of one line of /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct CpuTimes {
    busy: u64,
    total: u64,
}

/// Samples host-wide values; made once and kept for the whole run.
pub struct HostSource {
    sys: System,
    prev: Option<(CpuTimes, Vec<CpuTimes>)>,
}

impl HostSource {
    pub fn new() -> anyhow::Result<Self> {
        let sys = System::new().map_err(|e| anyhow::anyhow!("cannot read host metrics: {e}"))?;
        let prev = read_proc_stat();
        Ok(HostSource { sys, prev })
    }

    /// Fill the host fields of `row`. CPU utilization covers the time since the previous call.
    pub fn sample(&mut self, row: &mut Row) {
        self.sample_cpu(row);
        self.sys.refresh_memory_specifics(MemoryRefreshKind::everything());
        let total = self.sys.total_memory();
        if total > 0 {
            let avail = self.sys.available_memory();
            row.set(Field::HostMemTotal, Value::U(total / MIB));
            row.set(Field::HostMemAvailable, Value::U(avail / MIB));
            row.set(Field::HostMemUsed, Value::U(total.saturating_sub(avail) / MIB));
            row.set(Field::SwapUsed, Value::U(self.sys.used_swap() / MIB));
        }
        match System::load_average() {
            Ok(l) => row.set(Field::Load1, Value::F(round2(l.one))),
            Err(e) => {
                warn_once("load-average", &format!("cannot read the load average: {e}"));
            }
        }
    }

    fn sample_cpu(&mut self, row: &mut Row) {
        let Some(now) = read_proc_stat() else {
            warn_once("proc-stat", "cannot read /proc/stat: cpu.util will be empty");
            return;
        };
        if let Some((prev_all, prev_cores)) = &self.prev {
            if let Some(u) = util(prev_all, &now.0) {
                row.set(Field::CpuUtil, Value::F(u));
            }
            let max = prev_cores
                .iter()
                .zip(&now.1)
                .filter_map(|(p, n)| util(p, n))
                .fold(None, |m: Option<f64>, u| Some(m.map_or(u, |m| m.max(u))));
            if let Some(m) = max {
                row.set(Field::CpuUtilMaxCore, Value::F(m));
            }
        }
        self.prev = Some(now);
    }
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Busy share between two readings, percent with two decimals; None when no time passed.
fn util(prev: &CpuTimes, now: &CpuTimes) -> Option<f64> {
    let total = now.total.checked_sub(prev.total)?;
    if total == 0 {
        return None;
    }
    let busy = now.busy.saturating_sub(prev.busy).min(total);
    Some(round2(100.0 * busy as f64 / total as f64))
}

fn read_proc_stat() -> Option<(CpuTimes, Vec<CpuTimes>)> {
    parse_proc_stat(&fs::read_to_string("/proc/stat").ok()?)
}

/// Parse the aggregate `cpu` line and every `cpuN` line. Idle time is idle + iowait;
/// guest time is already counted in user, so it is excluded from the total.
fn parse_proc_stat(text: &str) -> Option<(CpuTimes, Vec<CpuTimes>)> {
    let mut all = None;
    let mut cores = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("cpu") else {
            break;
        };
        let mut it = rest.split_ascii_whitespace();
        let label = if rest.starts_with(' ') { "" } else { it.next()? };
        let nums: Vec<u64> = it.take(8).filter_map(|s| s.parse().ok()).collect();
        if nums.len() < 4 {
            continue;
        }
        let total: u64 = nums.iter().sum();
        let idle = nums[3] + nums.get(4).copied().unwrap_or(0);
        let t = CpuTimes { busy: total - idle.min(total), total };
        if label.is_empty() {
            all = Some(t);
        } else {
            cores.push(t);
        }
    }
    Some((all?, cores))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT1: &str =
        "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 50 0 50 350 50 0 0 0 0 0\ncpu1 50 0 50 350 50 0 0 0 0 0\nintr 1\n";
    const STAT2: &str =
        "cpu  200 0 100 800 100 0 0 0 0 0\ncpu0 150 0 50 350 50 0 0 0 0 0\ncpu1 50 0 50 450 50 0 0 0 0 0\nintr 1\n";

    #[test]
    fn utilization_from_two_readings() {
        let a = parse_proc_stat(STAT1).unwrap();
        let b = parse_proc_stat(STAT2).unwrap();
        assert_eq!(a.1.len(), 2);
        assert_eq!(util(&a.0, &b.0), Some(50.0));
        assert_eq!(util(&a.1[0], &b.1[0]), Some(100.0));
        assert_eq!(util(&a.1[1], &b.1[1]), Some(0.0));
        assert_eq!(util(&a.0, &a.0), None, "no elapsed ticks is missing, not zero");
    }

    #[test]
    fn live_sample_fills_host_fields() {
        let mut h = HostSource::new().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut row = Row::default();
        h.sample(&mut row);
        assert!(row.get(Field::HostMemTotal).as_u64().unwrap() > 0);
        assert!(row.get(Field::Load1).as_f64().is_some());
    }
}
