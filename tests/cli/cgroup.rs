//! `CgroupSource` against real cgroups: as root, make one with limits, move a child process in,
//! detect it from the child's /proc files and sample it. Skipped, with the reason printed, where
//! the machine does not allow it (not root, read-only or missing cgroup mounts).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use gpumon::Field;
use gpumon::{CgroupLimits, CgroupSource, CgroupVersion};
use gpumon::{Row, Value};

/// A cgroup made for one test (one directory per v1 hierarchy), removed on drop.
struct TestCgroup {
    version: CgroupVersion,
    dirs: Vec<PathBuf>,
    children: Vec<Child>,
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        for d in &self.dirs {
            for _ in 0..50 {
                if fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            if d.exists() {
                eprintln!("could not remove test cgroup {}", d.display());
            }
        }
    }
}

/// (fstype, mount point, super options) of each cgroup mount.
fn cgroup_mounts() -> Vec<(String, PathBuf, Vec<String>)> {
    let text = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let point = pre.split(' ').nth(4)?;
            let mut post = post.split(' ');
            let fstype = post.next()?;
            let opts = post.nth(1).unwrap_or("").split(',').map(str::to_string).collect();
            (fstype == "cgroup" || fstype == "cgroup2")
                .then(|| (fstype.to_string(), PathBuf::from(point), opts))
        })
        .collect()
}

fn write(p: &Path, s: &str) -> Result<(), String> {
    fs::write(p, s).map_err(|e| format!("writing {s:?} to {}: {e}", p.display()))
}

/// Make a cgroup named `name` with a memory limit (MiB, swap off) and a CPU quota (cores).
/// v2 where the unified hierarchy carries memory and cpu, else v1 memory + cpu + cpuacct.
/// Err is the reason to skip.
fn make_cgroup(name: &str, mem_mib: u64, cores: f64) -> Result<TestCgroup, String> {
    // SAFETY: geteuid only reads this process's user id.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root: cannot create cgroups".into());
    }
    let mounts = cgroup_mounts();
    let v2 = mounts.iter().find(|(t, p, _)| {
        t == "cgroup2"
            && fs::read_to_string(p.join("cgroup.controllers")).is_ok_and(|c| {
                c.split_whitespace().any(|x| x == "memory")
                    && c.split_whitespace().any(|x| x == "cpu")
            })
    });
    let quota = (cores * 100_000.0) as u64;
    let bytes = (mem_mib * 1024 * 1024).to_string();
    if let Some((_, top, _)) = v2 {
        let mut cg =
            TestCgroup { version: CgroupVersion::V2, dirs: Vec::new(), children: Vec::new() };
        let sub = fs::read_to_string(top.join("cgroup.subtree_control")).unwrap_or_default();
        if !(sub.contains("memory") && sub.contains("cpu")) {
            write(&top.join("cgroup.subtree_control"), "+memory +cpu")?;
        }
        let d = top.join(name);
        fs::create_dir(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        cg.dirs.push(d.clone());
        write(&d.join("memory.max"), &bytes)?;
        if d.join("memory.swap.max").exists() {
            write(&d.join("memory.swap.max"), "0")?;
        }
        write(&d.join("cpu.max"), &format!("{quota} 100000"))?;
        return Ok(cg);
    }
    let mut cg = TestCgroup { version: CgroupVersion::V1, dirs: Vec::new(), children: Vec::new() };
    for ctrl in ["memory", "cpu", "cpuacct"] {
        let Some((_, top, _)) =
            mounts.iter().find(|(t, _, o)| t == "cgroup" && o.iter().any(|x| x == ctrl))
        else {
            return Err(format!("no cgroup v2 with memory+cpu and no v1 {ctrl} hierarchy mounted"));
        };
        let d = top.join(name);
        if cg.dirs.contains(&d) {
            continue; // co-mounted cpu,cpuacct
        }
        fs::create_dir(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        cg.dirs.push(d);
    }
    let mem = &cg.dirs[0];
    write(&mem.join("memory.limit_in_bytes"), &bytes)?;
    if mem.join("memory.memsw.limit_in_bytes").exists() {
        write(&mem.join("memory.memsw.limit_in_bytes"), &bytes)?;
    }
    write(&cg.dirs[1].join("cpu.cfs_period_us"), "100000")?;
    write(&cg.dirs[1].join("cpu.cfs_quota_us"), &quota.to_string())?;
    Ok(cg)
}

impl TestCgroup {
    /// Start `script` under sh and move it into the cgroup (every hierarchy); returns its pid.
    fn spawn(&mut self, script: &str, stdin: bool) -> u32 {
        let child = Command::new("sh")
            .args(["-c", script])
            .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        self.children.push(child);
        for d in &self.dirs {
            fs::write(d.join("cgroup.procs"), pid.to_string()).unwrap();
        }
        pid
    }

    /// The source as the process `pid` would detect it.
    fn source_of(&self, pid: u32) -> CgroupSource {
        let cg = fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
        let mi = fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
        CgroupSource::detect_in(&cg, &mi, Path::new("/")).expect("the test cgroup is detected")
    }
}

fn cgroup_or_skip(test: &str, mem_mib: u64, cores: f64) -> Option<TestCgroup> {
    match make_cgroup(&format!("gpumon-test-{test}-{}", std::process::id()), mem_mib, cores) {
        Ok(c) => Some(c),
        Err(why) => {
            crate::common::skipped(&format!("{test}: {why}"));
            None
        }
    }
}

#[test]
fn limits_usage_and_cpu_share_of_a_real_cgroup() {
    let Some(mut cg) = cgroup_or_skip("limits", 512, 0.5) else { return };
    // A busy loop, throttled to half a core by the quota.
    let pid = cg.spawn("while :; do :; done", false);
    let mut src = cg.source_of(pid);
    assert_eq!(src.version(), cg.version, "{}", src.describe());
    assert!(src.path().contains("gpumon-test-limits"), "{}", src.path());
    assert_eq!(src.limits(), CgroupLimits { memory_mib: Some(512), cpu_cores: Some(0.5) });
    assert!(src.has_limits());
    let d = src.describe();
    assert!(d.contains("memory limit 512 MiB") && d.contains("CPU limit 0.5 cores"), "{d}");

    let mut first = Row::default();
    src.sample(&mut first);
    assert_eq!(first.get(Field::CgroupCpuUtil), &Value::Null, "first sample has no interval");
    std::thread::sleep(Duration::from_millis(1500));
    let mut row = Row::default();
    src.sample(&mut row);
    assert_eq!(row.get(Field::CgroupMemLimit), &Value::U(512));
    assert_eq!(row.get(Field::CgroupCpuLimit), &Value::F(0.5));
    assert_eq!(row.get(Field::CgroupOomKills), &Value::U(0));
    assert!(
        matches!(row.get(Field::CgroupMemUsed), Value::U(m) if *m < 512),
        "{:?}",
        row.get(Field::CgroupMemUsed)
    );
    // The loop uses all of its half core: close to 100 % of the limit (not 25 % of two cores).
    let util = row.get(Field::CgroupCpuUtil).as_f64().unwrap();
    assert!((40.0..=150.0).contains(&util), "cgroup.cpu.util {util}");
}

#[test]
fn oom_kill_is_counted() {
    let Some(mut cg) = cgroup_or_skip("oom", 64, 1.0) else { return };
    // Waits for a line on stdin, then allocates 200 MiB in a 64 MiB cgroup (swap off): OOM-killed.
    let pid = cg.spawn("read _; exec dd if=/dev/zero of=/dev/null bs=200M count=1", true);
    let mut src = cg.source_of(pid);
    let mut before = Row::default();
    src.sample(&mut before);
    assert_eq!(before.get(Field::CgroupOomKills), &Value::U(0));
    assert_eq!(before.get(Field::CgroupMemLimit), &Value::U(64));
    let child = cg.children.last_mut().unwrap();
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "dd should have been killed");
    let mut after = Row::default();
    src.sample(&mut after);
    assert!(
        after.get(Field::CgroupOomKills).as_u64().unwrap() >= 1,
        "{:?}",
        after.get(Field::CgroupOomKills)
    );
}
