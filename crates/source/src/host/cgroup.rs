//! The cgroup gpumon runs in (a container's or a batch job's): memory and CPU use against its limits.
//!
//! Found from `/proc/self/cgroup` and `/proc/self/mountinfo`. cgroup v2 (the unified hierarchy) is
//! preferred; v1 (the `memory`, `cpu` and `cpuacct` hierarchies) is used where the unified hierarchy
//! carries neither the memory nor the cpu controller (the "hybrid" layout of older systemd hosts).
//!
//! Limits are the *effective* ones: the smallest `memory.max` / `cpu.max` (v1:
//! `memory.limit_in_bytes`, `cpu.cfs_quota_us`) along the path from gpumon's cgroup up to the
//! top of the mounted hierarchy, because a parent's limit (a Kubernetes pod, a systemd slice)
//! binds the child as much as its own. Every value is re-read each tick, so `docker update` shows.
//! A file that cannot be read costs that field (null) and one warning, never the tick.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use gpumon_schema::catalog::Field;
use gpumon_schema::{Row, Value};
use gpumon_util::warn_once;

const MIB: u64 = 1024 * 1024;

/// v1 reports "no limit" as a huge page-rounded number (2^63 - 4096 on x86_64); anything this big is unlimited.
const V1_UNLIMITED: u64 = 1 << 62;

/// cgroup version of the hierarchy gpumon reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    /// cgroup v1: one hierarchy per controller.
    V1,
    /// cgroup v2: the unified hierarchy.
    V2,
}

/// Effective limits of the cgroup; `None` is unlimited (or unknown).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CgroupLimits {
    /// Memory limit, MiB.
    pub memory_mib: Option<u64>,
    /// CPU limit, cores.
    pub cpu_cores: Option<f64>,
}

/// One cgroup directory of one hierarchy.
#[derive(Debug, Clone)]
struct Dir {
    /// The cgroup path as /proc/self/cgroup names it (`/docker/abc`, `/`).
    path: String,
    /// Where its files are.
    dir: PathBuf,
    /// The mount point of the hierarchy: limits are looked up from `dir` up to here.
    top: PathBuf,
    /// The root of the whole hierarchy (not just of a namespace): it has no limit files.
    is_root: bool,
}

#[derive(Debug, Clone)]
enum Layout {
    V2(Dir),
    V1 { memory: Option<Dir>, cpu: Option<Dir>, cpuacct: Option<Dir> },
}

/// Samples the `cgroup.*` fields; made once and kept for the whole run.
#[derive(Debug)]
pub struct CgroupSource {
    layout: Layout,
    /// Online CPUs: the base of `cgroup.cpu.util` when there is no CPU limit.
    cores: f64,
    /// Previous CPU usage reading: (when, nanoseconds of CPU time).
    prev: Option<(Instant, u64)>,
}

impl CgroupSource {
    /// The cgroup of the running process, or None when /proc or the cgroup mounts cannot be read.
    pub fn detect() -> Option<CgroupSource> {
        let cgroup = fs::read_to_string("/proc/self/cgroup").ok()?;
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
        Self::detect_in(&cgroup, &mountinfo, Path::new("/"))
    }

    /// Detection from the text of a `/proc/<pid>/cgroup` and a `/proc/<pid>/mountinfo`, with the
    /// mount points looked up under `root_prefix` (`/` for the live system, a fixture tree in tests).
    pub fn detect_in(
        proc_self_cgroup: &str,
        mountinfo: &str,
        root_prefix: &Path,
    ) -> Option<CgroupSource> {
        let lines = parse_proc_cgroup(proc_self_cgroup);
        let mounts = parse_mountinfo(mountinfo);
        let unified = lines.iter().find(|l| l.unified).and_then(|l| {
            find_mount(&mounts, l.path, |m| m.fstype == "cgroup2")
                .map(|m| resolve(m, l.path, root_prefix))
        });
        let v1 = |ctrl: &str| {
            let line = lines.iter().find(|l| l.controllers.contains(&ctrl))?;
            let m = find_mount(&mounts, line.path, |m| {
                m.fstype == "cgroup" && m.superopts.iter().any(|o| o == ctrl)
            })?;
            Some(resolve(m, line.path, root_prefix))
        };
        let (memory, cpu, cpuacct) = (v1("memory"), v1("cpu"), v1("cpuacct"));
        let have_v1 = memory.is_some() || cpu.is_some() || cpuacct.is_some();
        let layout = match unified {
            Some(d) if !have_v1 || v2_has_controllers(&d) => Layout::V2(d),
            _ if have_v1 => Layout::V1 { memory, cpu, cpuacct },
            _ => return None,
        };
        Some(CgroupSource { layout, cores: online_cpus(), prev: None })
    }

    /// The cgroup version.
    pub fn version(&self) -> CgroupVersion {
        match self.layout {
            Layout::V2(_) => CgroupVersion::V2,
            Layout::V1 { .. } => CgroupVersion::V1,
        }
    }

    /// The cgroup path as `/proc/self/cgroup` names it (v1: the memory hierarchy's, else cpu's).
    pub fn path(&self) -> &str {
        match &self.layout {
            Layout::V2(d) => &d.path,
            Layout::V1 { memory, cpu, cpuacct } => {
                memory.as_ref().or(cpu.as_ref()).or(cpuacct.as_ref()).map_or("", |d| &d.path)
            }
        }
    }

    /// The effective memory and CPU limits right now (unreadable files count as no limit).
    pub fn limits(&self) -> CgroupLimits {
        CgroupLimits {
            memory_mib: self.mem_limit().ok().flatten(),
            cpu_cores: self.cpu_limit().ok().flatten(),
        }
    }

    /// Whether a memory or a CPU limit is set.
    pub fn has_limits(&self) -> bool {
        let l = self.limits();
        l.memory_mib.is_some() || l.cpu_cores.is_some()
    }

    /// One line for `gpumon doctor` and `-v`: version, path(s), effective limits.
    pub fn describe(&self) -> String {
        let l = self.limits();
        let mut limits = Vec::new();
        if let Some(m) = l.memory_mib {
            limits.push(format!("memory limit {m} MiB"));
        }
        if let Some(c) = l.cpu_cores {
            limits.push(format!("CPU limit {} cores", fmt_cores(c)));
        }
        let limits = if limits.is_empty() {
            "no memory or CPU limit".to_string()
        } else {
            limits.join(", ")
        };
        match &self.layout {
            Layout::V2(d) => format!("cgroup v2 {} ({}): {limits}", d.path, d.dir.display()),
            Layout::V1 { memory, cpu, cpuacct } => {
                let parts: Vec<String> = [("memory", memory), ("cpu", cpu), ("cpuacct", cpuacct)]
                    .into_iter()
                    .filter_map(|(name, d)| d.as_ref().map(|d| format!("{name} {}", d.path)))
                    .collect();
                format!("cgroup v1 {}: {limits}", parts.join(", "))
            }
        }
    }

    /// Fill the `cgroup.*` fields of `row`. `cgroup.cpu.util` covers the time since the previous
    /// call (null on the first). A file that cannot be read leaves its field null, warned once.
    pub fn sample(&mut self, row: &mut Row) {
        self.sample_at(row, Instant::now());
    }

    fn sample_at(&mut self, row: &mut Row, now: Instant) {
        let mib = |b: u64| Value::U(b / MIB);
        set(row, Field::CgroupMemUsed, self.mem_used().map(|b| Some(mib(b))));
        set(row, Field::CgroupMemLimit, self.mem_limit().map(|l| l.map(Value::U)));
        let cpu_limit = self.cpu_limit();
        set(row, Field::CgroupCpuLimit, cpu_limit.clone().map(|l| l.map(Value::F)));
        set(row, Field::CgroupOomKills, self.oom_kills().map(|n| Some(Value::U(n))));
        let usage = self.cpu_usage_ns();
        let util = match (&usage, self.prev) {
            (Ok(ns), Some((t, prev_ns))) => {
                let base = cpu_limit.ok().flatten().unwrap_or(self.cores);
                Ok(cpu_util(prev_ns, *ns, now.saturating_duration_since(t).as_nanos(), base)
                    .map(Value::F))
            }
            (Ok(_), None) => Ok(None),
            (Err(e), _) => Err(e.clone()),
        };
        set(row, Field::CgroupCpuUtil, util);
        self.prev = usage.ok().map(|ns| (now, ns));
    }

    fn mem_used(&self) -> Result<u64, String> {
        match &self.layout {
            Layout::V2(d) => read_u64(&d.dir.join("memory.current")),
            Layout::V1 { memory, .. } => {
                read_u64(&v1_dir(memory, "memory")?.dir.join("memory.usage_in_bytes"))
            }
        }
    }

    /// Effective memory limit in MiB; `Ok(None)` when unlimited.
    fn mem_limit(&self) -> Result<Option<u64>, String> {
        let bytes = match &self.layout {
            Layout::V2(d) => walk_limit(d, "memory.max", |t| match t {
                "max" => Ok(None),
                n => parse_u64(n).map(Some),
            })?,
            Layout::V1 { memory, .. } => {
                walk_limit(v1_dir(memory, "memory")?, "memory.limit_in_bytes", |t| {
                    parse_u64(t).map(|n| (n < V1_UNLIMITED).then_some(n))
                })?
            }
        };
        Ok(bytes.map(|b| b / MIB))
    }

    /// Effective CPU limit in cores; `Ok(None)` when unlimited.
    fn cpu_limit(&self) -> Result<Option<f64>, String> {
        match &self.layout {
            Layout::V2(d) => walk_limit(d, "cpu.max", parse_cpu_max),
            Layout::V1 { cpu, .. } => {
                let d = v1_dir(cpu, "cpu")?;
                walk_levels(d, "cpu.cfs_quota_us", |dir, quota| {
                    let quota: i64 =
                        quota.parse().map_err(|_| format!("'{quota}' is not a number"))?;
                    if quota <= 0 {
                        return Ok(None);
                    }
                    let period = read_u64(&dir.join("cpu.cfs_period_us"))?;
                    Ok((period > 0).then(|| quota as f64 / period as f64))
                })
            }
        }
    }

    /// CPU time used by the cgroup so far, nanoseconds.
    fn cpu_usage_ns(&self) -> Result<u64, String> {
        match &self.layout {
            Layout::V2(d) => {
                let p = d.dir.join("cpu.stat");
                keyed(&read(&p)?, "usage_usec")
                    .map(|us| us.saturating_mul(1000))
                    .ok_or_else(|| format!("{} has no usage_usec line", p.display()))
            }
            Layout::V1 { cpuacct, .. } => {
                read_u64(&v1_dir(cpuacct, "cpuacct")?.dir.join("cpuacct.usage"))
            }
        }
    }

    fn oom_kills(&self) -> Result<u64, String> {
        let p = match &self.layout {
            Layout::V2(d) => d.dir.join("memory.events"),
            Layout::V1 { memory, .. } => v1_dir(memory, "memory")?.dir.join("memory.oom_control"),
        };
        keyed(&read(&p)?, "oom_kill").ok_or_else(|| format!("{} has no oom_kill line", p.display()))
    }
}

/// Set `f` from a reading: a value, `Ok(None)` for a legitimate null (unlimited), or a warning.
fn set(row: &mut Row, f: Field, r: Result<Option<Value>, String>) {
    match r {
        Ok(Some(v)) => row.set(f, v),
        Ok(None) => row.set(f, Value::Null),
        Err(e) => {
            warn_once(&format!("cgroup-{f}"), &format!("{e}; {f} will be empty"));
            row.set(f, Value::Null);
        }
    }
}

fn v1_dir<'a>(d: &'a Option<Dir>, controller: &str) -> Result<&'a Dir, String> {
    d.as_ref().ok_or_else(|| format!("no cgroup v1 {controller} hierarchy is mounted"))
}

/// Percent of `cores` busy between two CPU-time readings `elapsed_ns` apart; None when no time passed.
fn cpu_util(prev_ns: u64, now_ns: u64, elapsed_ns: u128, cores: f64) -> Option<f64> {
    if elapsed_ns == 0 || cores <= 0.0 || now_ns < prev_ns {
        return None;
    }
    let pct = 100.0 * (now_ns - prev_ns) as f64 / (elapsed_ns as f64 * cores);
    Some((pct * 100.0).round() / 100.0)
}

/// The smallest limit in `file` from the cgroup up to the top of its hierarchy.
fn walk_limit<T: PartialOrd + Copy>(
    d: &Dir,
    file: &str,
    parse: impl Fn(&str) -> Result<Option<T>, String>,
) -> Result<Option<T>, String> {
    walk_levels(d, file, |_, text| parse(text))
}

/// Read `file` in the cgroup's directory and each parent up to the hierarchy's mount point, parse
/// each with `parse(dir, trimmed text)`, and keep the smallest limit. The cgroup's own file must be
/// readable (except at the hierarchy root, which has none: unlimited); a parent's may be missing.
fn walk_levels<T: PartialOrd + Copy>(
    d: &Dir,
    file: &str,
    parse: impl Fn(&Path, &str) -> Result<Option<T>, String>,
) -> Result<Option<T>, String> {
    let mut best: Option<T> = None;
    let mut dir = d.dir.as_path();
    let mut own = true;
    loop {
        let p = dir.join(file);
        match fs::read_to_string(&p) {
            Ok(text) => {
                let v = parse(dir, text.trim()).map_err(|e| format!("{}: {e}", p.display()))?;
                if let Some(v) = v {
                    best = Some(match best {
                        Some(b) if b <= v => b,
                        _ => v,
                    });
                }
            }
            Err(_) if own && d.is_root => return Ok(None),
            Err(e) if own => return Err(format!("cannot read {}: {e}", p.display())),
            Err(_) => {}
        }
        own = false;
        if dir == d.top {
            break;
        }
        match dir.parent() {
            Some(parent) if parent.starts_with(&d.top) => dir = parent,
            _ => break,
        }
    }
    Ok(best)
}

/// `cpu.max`: `max 100000` (unlimited) or `150000 100000` (quota period, microseconds).
fn parse_cpu_max(text: &str) -> Result<Option<f64>, String> {
    let mut it = text.split_ascii_whitespace();
    let quota = it.next().ok_or("empty")?;
    let period = it.next().map_or(Ok(100_000), parse_u64)?;
    if quota == "max" {
        return Ok(None);
    }
    let quota = parse_u64(quota)?;
    Ok((period > 0).then(|| quota as f64 / period as f64))
}

fn read(p: &Path) -> Result<String, String> {
    fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

fn read_u64(p: &Path) -> Result<u64, String> {
    parse_u64(read(p)?.trim()).map_err(|e| format!("{}: {e}", p.display()))
}

fn parse_u64(s: &str) -> Result<u64, String> {
    s.trim().parse().map_err(|_| format!("'{}' is not a number", s.trim()))
}

/// The number after `key` in a flat keyed file (`oom_kill 3`, `usage_usec 12345`).
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut it = l.split_ascii_whitespace();
        (it.next()? == key).then_some(())?;
        it.next()?.parse().ok()
    })
}

fn fmt_cores(c: f64) -> String {
    let s = format!("{c:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Online CPUs from /sys/devices/system/cpu/online (`0-3,8-11`), else the parallelism std sees.
fn online_cpus() -> f64 {
    let from_sys =
        fs::read_to_string("/sys/devices/system/cpu/online").ok().and_then(|s| count_cpu_list(&s));
    let n = from_sys.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    n.max(1) as f64
}

fn count_cpu_list(s: &str) -> Option<usize> {
    let mut n = 0;
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => b.parse::<usize>().ok()?.checked_sub(a.parse::<usize>().ok()?)? + 1,
            None => part.parse::<usize>().map(|_| 1).ok()?,
        };
    }
    (n > 0).then_some(n)
}

/// Whether a v2 cgroup has the memory or the cpu controller (its `cgroup.controllers`).
fn v2_has_controllers(d: &Dir) -> bool {
    fs::read_to_string(d.dir.join("cgroup.controllers"))
        .is_ok_and(|s| s.split_ascii_whitespace().any(|c| c == "memory" || c == "cpu"))
}

/// One line of /proc/self/cgroup: `hierarchy-id:controller,list:path`.
struct CgLine<'a> {
    controllers: Vec<&'a str>,
    path: &'a str,
    /// The v2 line (`0::/path`).
    unified: bool,
}

fn parse_proc_cgroup(text: &str) -> Vec<CgLine<'_>> {
    text.lines()
        .filter_map(|l| {
            let (id, rest) = l.split_once(':')?;
            let (ctrls, path) = rest.split_once(':')?;
            Some(CgLine {
                controllers: ctrls.split(',').filter(|c| !c.is_empty()).collect(),
                path,
                unified: id == "0" && ctrls.is_empty(),
            })
        })
        .collect()
}

/// The fields of one /proc/self/mountinfo line gpumon needs.
struct Mount {
    /// The directory of the hierarchy mounted here (`/` or, in a container, its own cgroup).
    root: String,
    point: String,
    fstype: String,
    superopts: Vec<String>,
}

/// `36 35 98:0 /root /mnt/point rw,noatime master:1 - cgroup cgroup rw,memory`
fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let pre: Vec<&str> = pre.split(' ').collect();
            let mut post = post.split(' ');
            let fstype = post.next()?.to_string();
            let _source = post.next()?;
            let superopts = post.next().unwrap_or("").split(',').map(str::to_string).collect();
            Some(Mount {
                root: unescape(pre.get(3)?),
                point: unescape(pre.get(4)?),
                fstype,
                superopts,
            })
        })
        .collect()
}

/// Undo mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount of a hierarchy that holds `path`; the first one when none does (a container that
/// sees its own cgroup at the mount point while /proc/self/cgroup names the host's path).
fn find_mount<'m>(
    mounts: &'m [Mount],
    path: &str,
    want: impl Fn(&Mount) -> bool,
) -> Option<&'m Mount> {
    let candidates: Vec<&Mount> = mounts.iter().filter(|m| want(m)).collect();
    candidates.iter().find(|m| relative(&m.root, path).is_some()).or(candidates.first()).copied()
}

/// `path` relative to the mount's `root`, when it lies under it (and does not climb out with `..`).
fn relative<'p>(root: &str, path: &'p str) -> Option<&'p str> {
    let rest = if root == "/" { Some(path) } else { path.strip_prefix(root) }?;
    if !(rest.is_empty() || rest.starts_with('/')) || rest.split('/').any(|c| c == "..") {
        return None;
    }
    Some(rest.trim_start_matches('/'))
}

fn resolve(m: &Mount, path: &str, root_prefix: &Path) -> Dir {
    let top = root_prefix.join(m.point.trim_start_matches('/'));
    let dir = match relative(&m.root, path) {
        Some(rel) if !rel.is_empty() => top.join(rel),
        _ => top.clone(),
    };
    Dir { path: path.to_string(), dir, top, is_root: m.root == "/" && path == "/" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn fixture(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/cgroup").join(name)
    }

    fn load(version: &str, cgroup_file: &str) -> CgroupSource {
        let dir = fixture(version);
        let cg = fs::read_to_string(dir.join(cgroup_file)).unwrap();
        let mi = fs::read_to_string(dir.join("mountinfo")).unwrap();
        CgroupSource::detect_in(&cg, &mi, &dir).unwrap()
    }

    fn sample_twice(src: &mut CgroupSource, gap: Duration) -> (Row, Row) {
        let t0 = Instant::now();
        let mut a = Row::default();
        src.sample_at(&mut a, t0);
        let mut b = Row::default();
        src.sample_at(&mut b, t0 + gap);
        (a, b)
    }

    #[test]
    fn v2_with_limits() {
        let mut src = load("v2", "cgroup-limited");
        assert_eq!(src.version(), CgroupVersion::V2);
        assert_eq!(src.path(), "/job.slice/train.scope");
        assert_eq!(src.limits(), CgroupLimits { memory_mib: Some(512), cpu_cores: Some(1.5) });
        assert!(src.has_limits());
        let d = src.describe();
        assert!(d.starts_with("cgroup v2 /job.slice/train.scope ("), "{d}");
        assert!(d.ends_with("memory limit 512 MiB, CPU limit 1.5 cores"), "{d}");
        let mut row = Row::default();
        src.sample(&mut row);
        assert_eq!(row.get(Field::CgroupMemUsed), &Value::U(200));
        assert_eq!(row.get(Field::CgroupMemLimit), &Value::U(512));
        assert_eq!(row.get(Field::CgroupCpuLimit), &Value::F(1.5));
        assert_eq!(row.get(Field::CgroupOomKills), &Value::U(2));
        assert_eq!(
            row.get(Field::CgroupCpuUtil),
            &Value::Null,
            "no CPU utilization on the first sample"
        );
    }

    #[test]
    fn v2_unlimited() {
        let src = load("v2", "cgroup-unlimited");
        assert_eq!(src.path(), "/unlimited");
        assert_eq!(src.limits(), CgroupLimits::default());
        assert!(!src.has_limits());
        assert!(src.describe().ends_with("no memory or CPU limit"), "{}", src.describe());
        let mut row = Row::default();
        let mut src = src;
        src.sample(&mut row);
        assert_eq!(row.get(Field::CgroupMemLimit), &Value::Null);
        assert_eq!(row.get(Field::CgroupCpuLimit), &Value::Null);
        assert_eq!(row.get(Field::CgroupMemUsed), &Value::U(64));
        assert_eq!(row.get(Field::CgroupOomKills), &Value::U(0));
    }

    #[test]
    fn v2_parent_limit_binds_the_child() {
        // job.slice caps memory at 1 GiB and CPU at 4 cores; its child sets neither.
        let src = load("v2", "cgroup-child");
        assert_eq!(src.path(), "/job.slice/unlimited-child");
        assert_eq!(src.limits(), CgroupLimits { memory_mib: Some(1024), cpu_cores: Some(4.0) });
    }

    #[test]
    fn v2_cpu_util_is_a_share_of_the_limit() {
        let tmp = tempfile::tempdir().unwrap();
        copy_tree(&fixture("v2"), tmp.path());
        let cg = fs::read_to_string(tmp.path().join("cgroup-limited")).unwrap();
        let mi = fs::read_to_string(tmp.path().join("mountinfo")).unwrap();
        let mut src = CgroupSource::detect_in(&cg, &mi, tmp.path()).unwrap();
        let stat = tmp.path().join("sys/fs/cgroup/job.slice/train.scope/cpu.stat");
        let t0 = Instant::now();
        let mut a = Row::default();
        src.sample_at(&mut a, t0);
        // 0.75 s of CPU time in 1 s against a 1.5-core limit: 50 %.
        let text =
            fs::read_to_string(&stat).unwrap().replace("usage_usec 9000000", "usage_usec 9750000");
        fs::write(&stat, text).unwrap();
        let mut b = Row::default();
        src.sample_at(&mut b, t0 + Duration::from_secs(1));
        assert_eq!(b.get(Field::CgroupCpuUtil), &Value::F(50.0));
    }

    #[test]
    fn v1_real_unlimited_hybrid_host() {
        // This machine's layout: v1 controllers plus an unified mount without memory/cpu.
        let mut src = load("v1", "cgroup");
        assert_eq!(
            src.version(),
            CgroupVersion::V1,
            "the unified hierarchy has no memory/cpu controller"
        );
        assert_eq!(src.path(), "/process_api/5f334a72f1298cfcc830befd82740149");
        assert_eq!(src.limits(), CgroupLimits::default());
        src.cores = 2.0;
        let (a, b) = sample_twice(&mut src, Duration::from_secs(1));
        assert_eq!(a.get(Field::CgroupMemUsed), &Value::U(153), "160788480 bytes");
        assert_eq!(
            a.get(Field::CgroupMemLimit),
            &Value::Null,
            "9223372036854771712 is v1's 'no limit'"
        );
        assert_eq!(a.get(Field::CgroupCpuLimit), &Value::Null, "cfs_quota_us -1 is unlimited");
        assert_eq!(a.get(Field::CgroupOomKills), &Value::U(0));
        // Same cpuacct.usage twice: 0 % of both cores.
        assert_eq!(b.get(Field::CgroupCpuUtil), &Value::F(0.0));
        assert!(
            src.describe().starts_with("cgroup v1 memory /process_api/5f33"),
            "{}",
            src.describe()
        );
    }

    #[test]
    fn v1_real_limited() {
        let src = load("v1", "cgroup-limited");
        assert_eq!(src.version(), CgroupVersion::V1);
        assert_eq!(src.limits(), CgroupLimits { memory_mib: Some(512), cpu_cores: Some(0.5) });
        let mut src = src;
        let mut row = Row::default();
        src.sample(&mut row);
        assert_eq!(row.get(Field::CgroupMemLimit), &Value::U(512));
        assert_eq!(row.get(Field::CgroupCpuLimit), &Value::F(0.5));
        assert_eq!(row.get(Field::CgroupOomKills), &Value::U(1));
        assert!(row.get(Field::CgroupMemUsed).as_u64().is_some());
    }

    #[test]
    fn missing_files_are_null_not_fatal() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("sys/fs/cgroup/empty")).unwrap();
        fs::write(tmp.path().join("sys/fs/cgroup/empty/cgroup.controllers"), "cpu memory\n")
            .unwrap();
        let mi = "31 23 0:28 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n";
        let mut src = CgroupSource::detect_in("0::/empty\n", mi, tmp.path()).unwrap();
        let (a, b) = sample_twice(&mut src, Duration::from_secs(1));
        for f in [
            Field::CgroupMemUsed,
            Field::CgroupMemLimit,
            Field::CgroupCpuLimit,
            Field::CgroupCpuUtil,
        ] {
            assert_eq!(a.get(f), &Value::Null, "{f}");
            assert_eq!(b.get(f), &Value::Null, "{f}");
        }
        assert!(!src.has_limits());
    }

    #[test]
    fn container_sees_its_cgroup_at_the_mount_point() {
        // Docker on v1 without a cgroup namespace: the mount's root is the container's cgroup.
        let mi = "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n\
                  32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n";
        let cg = "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n";
        let src = CgroupSource::detect_in(cg, mi, Path::new("/x")).unwrap();
        let Layout::V1 { memory, cpu, cpuacct } = &src.layout else { panic!("v1 expected") };
        assert_eq!(memory.as_ref().unwrap().dir, Path::new("/x/sys/fs/cgroup/memory"));
        assert_eq!(cpu.as_ref().unwrap().dir, Path::new("/x/sys/fs/cgroup/cpu,cpuacct"));
        assert_eq!(cpuacct.as_ref().unwrap().dir, Path::new("/x/sys/fs/cgroup/cpu,cpuacct"));
        // A v2 namespace: /proc/self/cgroup says "/" and the mount root is "/": the namespace's root,
        // which is not the hierarchy root only when the path climbs out.
        let mi = "40 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let src = CgroupSource::detect_in("0::/../../outside\n", mi, Path::new("/y")).unwrap();
        let Layout::V2(d) = &src.layout else { panic!("v2 expected") };
        assert_eq!(d.dir, Path::new("/y/sys/fs/cgroup"));
        assert!(!d.is_root);
    }

    #[test]
    fn nothing_mounted_is_none() {
        assert!(
            CgroupSource::detect_in(
                "0::/\n",
                "27 1 254:0 / / rw - ext4 /dev/vda rw\n",
                Path::new("/")
            )
            .is_none()
        );
        assert!(CgroupSource::detect_in("", "", Path::new("/")).is_none());
    }

    #[test]
    fn parsers() {
        assert_eq!(parse_cpu_max("max 100000"), Ok(None));
        assert_eq!(parse_cpu_max("150000 100000"), Ok(Some(1.5)));
        assert_eq!(parse_cpu_max("50000"), Ok(Some(0.5)), "period defaults to 100000");
        assert!(parse_cpu_max("lots 100000").is_err());
        assert_eq!(
            keyed("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n", "oom_kill"),
            Some(1)
        );
        assert_eq!(
            keyed("oom_kill_disable 0\nunder_oom 0\n", "oom_kill"),
            None,
            "a prefix is not the key"
        );
        assert_eq!(count_cpu_list("0-1\n"), Some(2));
        assert_eq!(count_cpu_list("0-3,8-11,15"), Some(9));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(unescape(r"/mnt/with\040space"), "/mnt/with space");
        assert_eq!(unescape(r"/a\\b"), r"/a\\b");
        assert_eq!(cpu_util(0, 500_000_000, 1_000_000_000, 2.0), Some(25.0));
        assert_eq!(cpu_util(0, 500_000_000, 0, 2.0), None, "no elapsed time is missing, not zero");
        assert_eq!(
            cpu_util(10, 5, 1_000_000_000, 2.0),
            None,
            "a counter that went back is missing"
        );
        assert_eq!(fmt_cores(1.5), "1.5");
        assert_eq!(fmt_cores(4.0), "4");
        assert_eq!(
            relative("/docker/ab", "/docker/abc"),
            None,
            "prefix must end at a path component"
        );
        assert_eq!(relative("/docker/ab", "/docker/ab/x"), Some("x"));
    }

    fn copy_tree(from: &Path, to: &Path) {
        for e in fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let dst = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                fs::create_dir_all(&dst).unwrap();
                copy_tree(&e.path(), &dst);
            } else {
                fs::copy(e.path(), dst).unwrap();
            }
        }
    }
}
