//! The job's process tree (`record -- CMD` or `--pid PID`): CPU, memory, threads and I/O summed
//! over the root and all its descendants, read from /proc.
//!
//! Stats of known processes are read every tick (cost grows with the tree, not with the machine);
//! new descendants are found by walking `/proc/PID/task/TID/children` from the root at most every
//! [`RESCAN_EVERY`], falling back to a full /proc scan where the kernel lacks `children` files.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use gpumon_schema::catalog::Field;
use gpumon_schema::{Row, Value};

/// The PIDs of the job's tree, shared with the GPU workers for `job.gpu_memory`.
pub type PidSet = Arc<RwLock<HashSet<u32>>>;

/// How often the tree is searched for new descendants.
pub(crate) const RESCAN_EVERY: Duration = Duration::from_secs(1);

const MIB: u64 = 1024 * 1024;

/// Counters of one process at one reading.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct ProcStat {
    /// utime + stime, clock ticks.
    cpu_ticks: u64,
    threads: u64,
    rss_pages: u64,
    /// Process start time (clock ticks since boot): tells a reused PID from the old process.
    start: u64,
    read_bytes: Option<u64>,
    write_bytes: Option<u64>,
}

/// Follows one process tree.
pub struct JobTracker {
    root: u32,
    /// Processes of the tree at the last reading, with their counters.
    procs: HashMap<u32, ProcStat>,
    last: Option<Instant>,
    last_scan: Option<Instant>,
    clk_tck: f64,
    page_size: u64,
}

impl JobTracker {
    /// A tracker of the process tree rooted at `root`.
    pub fn new(root: u32) -> JobTracker {
        let (tck, page) =
            (rustix::param::clock_ticks_per_second(), rustix::param::page_size() as u64);
        JobTracker {
            root,
            procs: HashMap::new(),
            last: None,
            last_scan: None,
            clk_tck: if tck > 0 { tck as f64 } else { 100.0 },
            page_size: if page > 0 { page } else { 4096 },
        }
    }

    /// The process the tree hangs from.
    pub fn root(&self) -> u32 {
        self.root
    }

    /// PIDs in the tree at the last sample.
    pub fn pids(&self) -> impl Iterator<Item = u32> + '_ {
        self.procs.keys().copied()
    }

    /// Whether any process of the tree was alive at the last sample.
    pub fn alive(&self) -> bool {
        !self.procs.is_empty()
    }

    /// Read the tree and fill the job fields. CPU and I/O rates cover the time since the last call;
    /// a process seen for the first time only sets its baseline.
    pub fn sample(&mut self, row: &mut Row) {
        let now = Instant::now();
        let rescan = self.last_scan.is_none_or(|t| now.duration_since(t) >= RESCAN_EVERY);
        let mut pids: HashSet<u32> = self.procs.keys().copied().collect();
        pids.insert(self.root);
        if rescan {
            pids = descendants(self.root);
            self.last_scan = Some(now);
        }
        let elapsed = self.last.map(|t| now.duration_since(t).as_secs_f64()).filter(|e| *e > 0.0);
        let mut next = HashMap::with_capacity(pids.len());
        let (mut cpu, mut read, mut write, mut io_known) = (0u64, 0u64, 0u64, false);
        let (mut rss, mut threads) = (0u64, 0u64);
        for pid in pids {
            let Some(st) = read_stat(pid) else { continue };
            rss += st.rss_pages * self.page_size;
            threads += st.threads;
            if let Some(prev) = self.procs.get(&pid).filter(|p| p.start == st.start) {
                cpu += st.cpu_ticks.saturating_sub(prev.cpu_ticks);
                if let (Some(r), Some(pr), Some(w), Some(pw)) =
                    (st.read_bytes, prev.read_bytes, st.write_bytes, prev.write_bytes)
                {
                    read += r.saturating_sub(pr);
                    write += w.saturating_sub(pw);
                    io_known = true;
                }
            }
            next.insert(pid, st);
        }
        row.set(Field::JobProcs, Value::U(next.len() as u64));
        if !next.is_empty() {
            row.set(Field::JobRss, Value::U(rss / MIB));
            row.set(Field::JobThreads, Value::U(threads));
            if let Some(e) = elapsed {
                row.set(Field::JobCpu, Value::F(round2(100.0 * cpu as f64 / self.clk_tck / e)));
                if io_known {
                    row.set(Field::JobRead, Value::F((read as f64 / e).round()));
                    row.set(Field::JobWrite, Value::F((write as f64 / e).round()));
                }
            }
        }
        self.procs = next;
        self.last = Some(now);
    }
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// `/proc/PID/stat` and `/proc/PID/io` of one process; None when it is gone.
fn read_stat(pid: u32) -> Option<ProcStat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut st = parse_stat(&text)?;
    if let Ok(io) = fs::read_to_string(format!("/proc/{pid}/io")) {
        for line in io.lines() {
            if let Some(v) = line.strip_prefix("read_bytes: ") {
                st.read_bytes = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("write_bytes: ") {
                st.write_bytes = v.trim().parse().ok();
            }
        }
    }
    Some(st)
}

/// Parse `/proc/PID/stat`. The command name may hold spaces and parentheses, so fields are
/// counted from the last `)`. Zombies count as gone.
fn parse_stat(text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_ascii_whitespace().collect();
    // f[0] is field 3 (state); field N is f[N - 3].
    if f.first() == Some(&"Z") || f.first() == Some(&"X") {
        return None;
    }
    let num = |n: usize| f.get(n - 3).and_then(|s| s.parse::<u64>().ok());
    Some(ProcStat {
        cpu_ticks: num(14)? + num(15)?,
        threads: num(20)?,
        start: num(22)?,
        rss_pages: num(24)?,
        read_bytes: None,
        write_bytes: None,
    })
}

/// The parent PID from `/proc/PID/stat`.
fn parent_of(pid: u32) -> Option<u32> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// `root` and all its living descendants.
pub(crate) fn descendants(root: u32) -> HashSet<u32> {
    let mut seen = HashSet::new();
    if fs::metadata(format!("/proc/{root}")).is_err() {
        return seen;
    }
    let mut stack = vec![root];
    let mut children_files = true;
    while let Some(pid) = stack.pop() {
        if !seen.insert(pid) {
            continue;
        }
        match children_of(pid) {
            Some(kids) => stack.extend(kids),
            None => {
                children_files = false;
                break;
            }
        }
    }
    if children_files {
        return seen;
    }
    // No `children` files (CONFIG_PROC_CHILDREN off): one pass over every process's parent.
    let mut parent: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(rd) = fs::read_dir("/proc") {
        for e in rd.flatten() {
            if let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok())
                && let Some(pp) = parent_of(pid)
            {
                parent.entry(pp).or_default().push(pid);
            }
        }
    }
    let mut out = HashSet::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        if out.insert(pid)
            && let Some(kids) = parent.get(&pid)
        {
            stack.extend(kids);
        }
    }
    out
}

/// Children of every thread of `pid`; None when the kernel has no `children` files.
fn children_of(pid: u32) -> Option<Vec<u32>> {
    let mut kids = Vec::new();
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else { return Some(kids) };
    for t in tasks.flatten() {
        let path = t.path().join("children");
        match fs::read_to_string(&path) {
            Ok(s) => kids.extend(s.split_ascii_whitespace().filter_map(|p| p.parse::<u32>().ok())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && t.path().exists() => return None,
            Err(_) => {}
        }
    }
    Some(kids)
}

/// Owner and command line of a process, for the `--processes` output.
pub fn describe(pid: u32) -> Option<(String, String)> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let uid: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()?;
    let cmd = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let mut cmd: String = String::from_utf8_lossy(&cmd)
        .split('\0')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if cmd.is_empty() {
        cmd = status.lines().find_map(|l| l.strip_prefix("Name:")).unwrap_or("").trim().to_string();
        cmd = format!("[{cmd}]");
    }
    Some((user_name(uid), cmd))
}

/// Login name of a uid from the system's user database (getpwuid_r: /etc/passwd, LDAP, SSSD...,
/// as nsswitch.conf says, so cluster users have names too), or the number when it has none.
fn user_name(uid: u32) -> String {
    let mut buf: Vec<libc::c_char> = vec![0; 1024];
    loop {
        // SAFETY: an all-zero `passwd` is a valid value of this plain C struct (null pointers).
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call; the strings `pwd` points to live in `buf`,
        // which outlives their use below.
        let rc =
            unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found) };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if rc != 0 || found.is_null() || pwd.pw_name.is_null() {
            return uid.to_string();
        }
        // SAFETY: on success `pw_name` is a NUL-terminated string inside `buf`.
        let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) }.to_string_lossy().into_owned();
        return if name.is_empty() { uid.to_string() } else { name };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_spaces_and_parens_in_the_name() {
        let line = "1234 (my (weird) proc) S 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 7 0 98765 1000000 500 18446744073709551615";
        let st = parse_stat(line).unwrap();
        assert_eq!(st.cpu_ticks, 300);
        assert_eq!(st.threads, 7);
        assert_eq!(st.start, 98765);
        assert_eq!(st.rss_pages, 500);
        assert!(
            parse_stat("1 (z) Z 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0").is_none(),
            "zombies are gone"
        );
    }

    #[test]
    fn user_names_come_from_the_user_database() {
        assert_eq!(user_name(0), "root");
        let me = rustix::process::getuid().as_raw();
        let id = std::process::Command::new("id").arg("-un").output().unwrap();
        assert_eq!(user_name(me), String::from_utf8_lossy(&id.stdout).trim());
        assert_eq!(user_name(3_999_999_999), "3999999999", "no such user: the number");
    }

    #[test]
    fn follows_our_own_children() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let me = std::process::id();
        let tree = descendants(me);
        assert!(tree.contains(&me) && tree.contains(&child.id()), "{tree:?}");
        let mut t = JobTracker::new(me);
        let mut row = Row::default();
        t.sample(&mut row);
        assert!(row.get(Field::JobProcs).as_u64().unwrap() >= 2);
        assert!(row.get(Field::JobRss).as_u64().unwrap() > 0);
        assert!(row.get(Field::JobCpu).is_missing(), "first reading is a baseline");
        std::thread::sleep(Duration::from_millis(50));
        t.sample(&mut row);
        assert!(row.get(Field::JobCpu).as_f64().is_some());
        child.kill().unwrap();
        child.wait().unwrap();
        let (user, cmd) = describe(me).unwrap();
        assert!(!user.is_empty() && !cmd.is_empty());
    }
}
