//! Host metrics from /proc: CPU from /proc/stat deltas (fresh at any interval), memory from
//! /proc/meminfo, load from /proc/loadavg. Each file is opened once and re-read with `pread` into a
//! reused buffer, and parsed in place: no allocation per tick once the buffers have grown.

use std::fs::File;
use std::os::unix::fs::FileExt;

use gpumon_schema::catalog::Field;
use gpumon_schema::{Row, Value};
use gpumon_util::warn_once;

const KIB_PER_MIB: u64 = 1024;

/// CPU time counters of one line of /proc/stat, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct CpuTimes {
    busy: u64,
    total: u64,
}

/// One reading of /proc/stat: the aggregate line and one entry per `cpuN` line.
#[derive(Debug, Clone, Default, PartialEq)]
struct StatReading {
    all: CpuTimes,
    cores: Vec<CpuTimes>,
}

/// The /proc/meminfo values gpumon records, in KiB.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct MemInfo {
    total: u64,
    available: u64,
    swap_used: u64,
}

/// A /proc file kept open for the run. procfs regenerates the text on every read from offset 0.
struct ProcFile {
    path: &'static str,
    file: Option<File>,
    buf: Vec<u8>,
}

impl ProcFile {
    fn open(path: &'static str) -> ProcFile {
        ProcFile { path, file: File::open(path).ok(), buf: vec![0; 4096] }
    }

    /// The whole file as of now. One `pread` per call once the buffer holds the file: a read that
    /// fills the buffer may have been cut, so the buffer doubles and the read starts over.
    fn read(&mut self) -> Option<&[u8]> {
        if self.file.is_none() {
            // Reopened only after a failure (never in a healthy run).
            self.file = Some(File::open(self.path).ok()?);
        }
        let file = self.file.as_ref()?;
        loop {
            match file.read_at(&mut self.buf, 0) {
                Ok(n) if n < self.buf.len() => return Some(&self.buf[..n]),
                Ok(_) if self.buf.len() < 1 << 22 => {
                    let len = self.buf.len() * 2;
                    self.buf.resize(len, 0);
                }
                Ok(n) => return Some(&self.buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.file = None;
                    return None;
                }
            }
        }
    }
}

/// Samples host-wide values; made once and kept for the whole run.
pub struct HostSource {
    stat: ProcFile,
    meminfo: ProcFile,
    loadavg: ProcFile,
    prev: Option<StatReading>,
    /// The reading being filled (swapped with `prev`, so neither reallocates).
    now: StatReading,
}

impl HostSource {
    /// The host source, its /proc files opened and a first CPU reading taken.
    pub fn new() -> anyhow::Result<Self> {
        let mut h = HostSource {
            stat: ProcFile::open("/proc/stat"),
            meminfo: ProcFile::open("/proc/meminfo"),
            loadavg: ProcFile::open("/proc/loadavg"),
            prev: None,
            now: StatReading::default(),
        };
        if h.read_stat() {
            h.prev = Some(std::mem::take(&mut h.now));
        }
        Ok(h)
    }

    /// Fill the host fields of `row`. CPU utilization covers the time since the previous call.
    pub fn sample(&mut self, row: &mut Row) {
        self.sample_cpu(row);
        match self.meminfo.read().and_then(parse_meminfo) {
            Some(m) if m.total > 0 => {
                row.set(Field::HostMemTotal, Value::U(m.total / KIB_PER_MIB));
                row.set(Field::HostMemAvailable, Value::U(m.available / KIB_PER_MIB));
                row.set(
                    Field::HostMemUsed,
                    Value::U(m.total.saturating_sub(m.available) / KIB_PER_MIB),
                );
                row.set(Field::SwapUsed, Value::U(m.swap_used / KIB_PER_MIB));
            }
            _ => {
                warn_once(
                    "meminfo",
                    "cannot read /proc/meminfo: host memory columns will be empty",
                );
            }
        }
        match self.loadavg.read().and_then(parse_loadavg) {
            Some(l) => row.set(Field::Load1, Value::F(round2(l))),
            None => {
                warn_once("load-average", "cannot read /proc/loadavg: load.1m will be empty");
            }
        }
    }

    /// Read /proc/stat into `self.now`; false when it cannot be read or parsed.
    fn read_stat(&mut self) -> bool {
        match self.stat.read() {
            Some(text) => parse_proc_stat(text, &mut self.now),
            None => false,
        }
    }

    fn sample_cpu(&mut self, row: &mut Row) {
        if !self.read_stat() {
            warn_once("proc-stat", "cannot read /proc/stat: cpu.util will be empty");
            return;
        }
        if let Some(prev) = &self.prev {
            if let Some(u) = util(&prev.all, &self.now.all) {
                row.set(Field::CpuUtil, Value::F(u));
            }
            let max = prev
                .cores
                .iter()
                .zip(&self.now.cores)
                .filter_map(|(p, n)| util(p, n))
                .fold(None, |m: Option<f64>, u| Some(m.map_or(u, |m| m.max(u))));
            if let Some(m) = max {
                row.set(Field::CpuUtilMaxCore, Value::F(m));
            }
        }
        match &mut self.prev {
            Some(prev) => std::mem::swap(prev, &mut self.now),
            None => self.prev = Some(std::mem::take(&mut self.now)),
        }
    }
}

/// This machine's host name (`uname -n`), "unknown" when it has none that is UTF-8.
pub fn hostname() -> String {
    // gethostname(3) on Linux is uname(2)'s node name.
    let uname = rustix::system::uname();
    match uname.nodename().to_str() {
        Ok(s) if !s.is_empty() => s.to_string(),
        _ => "unknown".to_string(),
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

/// The unsigned decimal numbers of `s`, separated by spaces, up to the first word that is not one.
fn numbers(s: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while s.get(i) == Some(&b' ') {
            i += 1;
        }
        let start = i;
        let mut acc = 0u64;
        while let Some(&d) = s.get(i).filter(|d| d.is_ascii_digit()) {
            acc = acc.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            i += 1;
        }
        // An empty word (end of text) or one with a non-digit ends the numbers.
        (i > start && matches!(s.get(i), None | Some(&b' '))).then_some(acc)
    })
}

/// The lines of `text` without their `\n` (procfs text is mostly skipped).
fn lines(mut text: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        if text.is_empty() {
            return None;
        }
        let end = find_byte(b'\n', text).unwrap_or(text.len());
        let (line, rest) = text.split_at(end);
        text = rest.get(1..).unwrap_or_default();
        Some(line)
    })
}

/// The first `needle` in `text`, by memchr's SSE2 searcher on x86-64 (part of the architecture's
/// baseline), its portable one elsewhere. Not `memchr::memchr`: it detects CPU features at first
/// use, and `cpuid` traps to the hypervisor on a VM (1.2 % of a 1-sample run's CPU).
fn find_byte(needle: u8, text: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(one) = memchr::arch::x86_64::sse2::memchr::One::new(needle) {
        return one.find(text);
    }
    memchr::arch::all::memchr::One::new(needle).find(text)
}

/// Parse the aggregate `cpu` line and every `cpuN` line into `out` (its core list is reused).
/// Idle time is idle + iowait; guest time is already counted in user, so it is left out of the total.
fn parse_proc_stat(text: &[u8], out: &mut StatReading) -> bool {
    out.cores.clear();
    let mut all = None;
    for line in lines(text) {
        let Some(rest) = line.strip_prefix(b"cpu") else {
            break;
        };
        let aggregate = rest.first() == Some(&b' ');
        let start = rest.iter().position(|b| *b == b' ').unwrap_or(rest.len());
        let mut nums = [0u64; 8];
        let mut n = 0;
        for (slot, v) in nums.iter_mut().zip(numbers(&rest[start..])) {
            *slot = v;
            n += 1;
        }
        if n < 4 {
            continue;
        }
        let total: u64 = nums.iter().sum();
        let idle = nums[3] + nums[4];
        let t = CpuTimes { busy: total - idle.min(total), total };
        if aggregate {
            all = Some(t);
        } else {
            out.cores.push(t);
        }
    }
    match all {
        Some(a) => {
            out.all = a;
            true
        }
        None => false,
    }
}

/// The value in KiB of one `Key:   123 kB` line of /proc/meminfo.
fn meminfo_value(line: &[u8]) -> u64 {
    numbers(line.trim_ascii_start()).next().unwrap_or(0)
}

/// MemTotal, MemAvailable (estimated as the kernel did before 3.14 when absent) and used swap.
/// Only the keys it needs are parsed; it stops once it has them all (about half of the file).
fn parse_meminfo(text: &[u8]) -> Option<MemInfo> {
    const KEYS: [&[u8]; 9] = [
        b"MemTotal",
        b"MemAvailable",
        b"MemFree",
        b"Buffers",
        b"Cached",
        b"SReclaimable",
        b"Shmem",
        b"SwapTotal",
        b"SwapFree",
    ];
    let mut v: [Option<u64>; 9] = [None; 9];
    let mut left = KEYS.len();
    for line in lines(text) {
        let Some(colon) = find_byte(b':', line) else { continue };
        let Some(k) = KEYS.iter().position(|k| *k == &line[..colon]) else { continue };
        if v[k].is_none() {
            left -= 1;
        }
        v[k] = Some(meminfo_value(&line[colon + 1..]));
        if left == 0 {
            break;
        }
    }
    let [total, avail, free, buffers, cached, sreclaim, shmem, swap_total, swap_free] = v;
    let n = |x: Option<u64>| x.unwrap_or(0);
    let available = avail.unwrap_or_else(|| {
        (n(free) + n(buffers) + n(cached) + n(sreclaim)).saturating_sub(n(shmem))
    });
    Some(MemInfo {
        total: total?,
        available,
        swap_used: n(swap_total).saturating_sub(n(swap_free)),
    })
}

/// The 1-minute load average, the first field of /proc/loadavg.
fn parse_loadavg(text: &[u8]) -> Option<f64> {
    let first = text.split(|b| b.is_ascii_whitespace()).next()?;
    std::str::from_utf8(first).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT1: &str = "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 50 0 50 350 50 0 0 0 0 0\ncpu1 50 0 50 350 50 0 0 0 0 0\nintr 1\n";
    const STAT2: &str = "cpu  200 0 100 800 100 0 0 0 0 0\ncpu0 150 0 50 350 50 0 0 0 0 0\ncpu1 50 0 50 450 50 0 0 0 0 0\nintr 1\n";

    fn stat(text: &str) -> StatReading {
        let mut r = StatReading::default();
        assert!(parse_proc_stat(text.as_bytes(), &mut r));
        r
    }

    #[test]
    fn utilization_from_two_readings() {
        let a = stat(STAT1);
        let b = stat(STAT2);
        assert_eq!(a.cores.len(), 2);
        assert_eq!(util(&a.all, &b.all), Some(50.0));
        assert_eq!(util(&a.cores[0], &b.cores[0]), Some(100.0));
        assert_eq!(util(&a.cores[1], &b.cores[1]), Some(0.0));
        assert_eq!(util(&a.all, &a.all), None, "no elapsed ticks is missing, not zero");
    }

    #[test]
    fn proc_stat_counts_guest_once_and_iowait_as_idle() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        let r = stat("cpu  10 2 3 50 5 1 1 0 7 7\ncpu0 10 2 3 50 5 1 1 0 7 7\n");
        assert_eq!(r.all, CpuTimes { busy: 17, total: 72 });
        assert_eq!(r.cores, vec![CpuTimes { busy: 17, total: 72 }]);
        // Old kernels print only four columns.
        assert_eq!(stat("cpu 1 2 3 4\n").all, CpuTimes { busy: 6, total: 10 });
    }

    #[test]
    fn proc_stat_reuses_its_core_list_and_rejects_garbage() {
        let mut r = StatReading::default();
        assert!(parse_proc_stat(STAT1.as_bytes(), &mut r));
        let cap = r.cores.capacity();
        assert!(parse_proc_stat(STAT2.as_bytes(), &mut r));
        assert_eq!(
            (r.cores.len(), r.cores.capacity()),
            (2, cap),
            "no reallocation in steady state"
        );
        assert!(!parse_proc_stat(b"intr 1\n", &mut r), "no aggregate line");
        assert!(!parse_proc_stat(b"", &mut r));
        // A line cut short by a short read is skipped, not misread.
        assert!(parse_proc_stat(b"cpu  1 2 3 4 5\ncpu0 1 2", &mut r));
        assert!(r.cores.is_empty());
    }

    #[test]
    fn meminfo_fields_in_kib() {
        let text = b"MemTotal:       16384000 kB\nMemFree:         1000000 kB\nMemAvailable:    8192000 kB\n\
                     Buffers:          100 kB\nSwapCached:         0 kB\nSwapTotal:       2097152 kB\nSwapFree:        1048576 kB\n";
        let m = parse_meminfo(text).unwrap();
        assert_eq!(m, MemInfo { total: 16384000, available: 8192000, swap_used: 1048576 });
    }

    #[test]
    fn meminfo_without_memavailable_estimates_it() {
        let text =
            b"MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 20 kB\nCached: 300 kB\nShmem: 50 kB\nSReclaimable: 30 kB\n";
        assert_eq!(parse_meminfo(text).unwrap().available, 400);
        assert_eq!(parse_meminfo(text).unwrap().swap_used, 0);
        assert_eq!(parse_meminfo(b"MemFree: 1 kB\n"), None, "no total is no reading");
    }

    #[test]
    fn numbers_stop_at_the_first_word_that_is_not_one() {
        let all = |s: &str| numbers(s.as_bytes()).collect::<Vec<_>>();
        assert_eq!(all("  12   345 6"), [12, 345, 6]);
        assert_eq!(all("7 kB 8"), [7]);
        assert_eq!(all("1x 2"), Vec::<u64>::new());
        assert_eq!(all(""), Vec::<u64>::new());
        let lines = |s: &'static str| lines(s.as_bytes()).collect::<Vec<_>>();
        assert_eq!(lines("a\n\nb"), [&b"a"[..], b"", b"b"]);
        assert_eq!(lines("a\n"), [&b"a"[..]]);
    }

    #[test]
    fn loadavg_first_field() {
        assert_eq!(parse_loadavg(b"0.52 0.58 0.59 2/1013 12345\n"), Some(0.52));
        assert_eq!(parse_loadavg(b"12.50 1 1 1/1 1"), Some(12.5));
        assert_eq!(parse_loadavg(b""), None);
        assert_eq!(parse_loadavg(b"x 1 1"), None);
    }

    #[test]
    fn proc_files_reread_in_place() {
        let mut f = ProcFile::open("/proc/stat");
        f.buf = vec![0; 16];
        let first = f.read().unwrap().to_vec();
        assert!(first.starts_with(b"cpu "), "a small buffer grows until the whole file fits");
        assert!(f.buf.len() > first.len());
        let cap = f.buf.len();
        assert!(f.read().unwrap().starts_with(b"cpu "));
        assert_eq!(f.buf.len(), cap);
        let mut missing = ProcFile::open("/proc/no-such-file");
        assert_eq!(missing.read(), None);
    }

    #[test]
    fn live_sample_fills_host_fields() {
        let mut h = HostSource::new().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut row = Row::default();
        h.sample(&mut row);
        h.sample(&mut row);
        assert!(row.get(Field::HostMemTotal).as_u64().unwrap() > 0);
        assert!(row.get(Field::HostMemUsed).as_u64().unwrap() > 0);
        assert!(row.get(Field::Load1).as_f64().is_some());
        assert!(!hostname().is_empty());
    }
}
