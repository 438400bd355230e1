//! `record --listen`: the endpoint checked by promtool, scraped by a real Prometheus, the Grafana
//! dashboard's metrics, HTTP semantics, and hostile clients that must not cost a tick.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::harness::Recording;

/// A child process killed (SIGTERM, then SIGKILL) when the test ends, passing or not.
struct Guard(Child);

impl Guard {
    fn term(&mut self) {
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            self.term();
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(5) {
                if let Ok(Some(_)) = self.0.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// A running `gpumon record --listen 127.0.0.1:0` and the address it reported.
pub(crate) struct Recorder {
    rec: Recording,
    addr: SocketAddr,
}

impl Recorder {
    pub(crate) fn start(cmd: Command) -> Recorder {
        let rec = Recording::start(cmd);
        let mut addr = None;
        rec.wait_until(20, "gpumon reports its address", || {
            addr = rec.find(|l| {
                l.strip_prefix("gpumon: serving metrics on http://")?
                    .split('/')
                    .next()?
                    .parse::<SocketAddr>()
                    .ok()
            });
            addr.is_some()
        });
        let addr = addr.unwrap();
        Recorder { rec, addr }
    }

    /// Wait until the endpoint serves at least `n` ticks.
    pub(crate) fn wait_ticks(&self, n: u64) -> String {
        let mut body = String::new();
        self.rec.wait_until(20, &format!("{n} ticks on /metrics"), || {
            match http(self.addr, "GET", "/metrics", &[]) {
                Ok((200, _, b))
                    if metric_value(&b, "gpumon_ticks_total").is_some_and(|v| v >= n as f64) =>
                {
                    body = b;
                    true
                }
                _ => false,
            }
        });
        body
    }

    /// SIGTERM and wait for a clean exit.
    pub(crate) fn finish(self) {
        let (status, log) = self.rec.stop();
        assert!(status.success(), "gpumon exited with {status}: {log}");
    }

    /// Wait for gpumon to end by itself (--duration, the wrapped job) and exit 0.
    fn wait_success(mut self) {
        let (status, log) = self.rec.wait();
        assert!(status.success(), "gpumon exited with {status}: {log}");
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`): status, head, body.
fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<(u16, String, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    Ok((status, head.to_string(), body.to_string()))
}

/// The value of the first sample of `name` (text format), any labels.
fn metric_value(body: &str, name: &str) -> Option<f64> {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .find(|l| {
            l.starts_with(name) && matches!(l.as_bytes().get(name.len()), Some(b'{') | Some(b' '))
        })
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

/// Names of the series in a text-format exposition.
fn series_names(body: &str) -> BTreeSet<String> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split(['{', ' ']).next().map(str::to_string))
        .collect()
}

/// A tool the tests need from Debian's `prometheus` package: missing means a failure, not a skip.
fn tool(name: &str) -> PathBuf {
    let candidates =
        [PathBuf::from("/usr/bin").join(name), PathBuf::from("/usr/local/bin").join(name)];
    let path_hit = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|p| p.is_file()))
        .unwrap_or_default();
    candidates.into_iter().find(|p| p.is_file()).or(path_hit).unwrap_or_else(|| {
        panic!(
            "{name} not found in /usr/bin or PATH: install Debian's `prometheus` package \
             (`apt-get install prometheus`; .ci/run does) — this test needs a real {name}"
        )
    })
}

/// `promtool check metrics` accepts the scrape `body` without a word.
fn promtool_check(body: &str) {
    let mut promtool = Command::new(tool("promtool"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    promtool.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = promtool.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics: {}{}\n{body}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// TWO_GPUS without GPU 1 falling off the bus, for tests that look at GPU 1's series.
fn steady() -> String {
    TWO_GPUS.replace("lost_after = 5\n", "")
}

pub(crate) fn listen_cmd(dir: &Path, scenario: &str, interval: &str, extra: &[&str]) -> Command {
    let mut c = gpumon_fake(dir, scenario);
    c.args(["record", "-q", "-i", interval, "--listen", "127.0.0.1:0"]).args(extra);
    c
}

const GPU0: &str = r#"gpu="0""#;
const MEMORY_TOTAL_BYTES: f64 = 81559.0 * 1048576.0;

#[test]
fn promtool_accepts_the_endpoint_and_values_follow_the_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    let rec = Recorder::start(listen_cmd(dir.path(), &steady(), "200ms", &["--duration", "60s"]));
    let body = rec.wait_ticks(2);

    promtool_check(&body);

    // Scripted values in base units, identity as labels, nulls absent.
    let line = |name: &str, gpu: &str| {
        body.lines()
            .find(|l| l.starts_with(&format!("{name}{{")) && l.contains(gpu))
            .map(str::to_string)
    };
    let total = line("gpumon_gpu_memory_total_bytes", GPU0).expect("memory total of GPU 0");
    assert!(total.ends_with(&format!(" {MEMORY_TOTAL_BYTES}")), "{total}");
    assert!(total.contains(r#"uuid="GPU-00000000-0000-0000-0000-000000000000""#), "{total}");
    assert!(
        total.contains(r#"name="NVIDIA H100 80GB HBM3""#)
            && total.contains(r#"pci_bus_id="00000000:17:00.0""#)
    );
    assert!(line("gpumon_gpu_fan_speed_ratio", GPU0).unwrap().ends_with(" 0.3"));
    assert!(line("gpumon_gpu_memory_total_bytes", r#"gpu="1""#).is_some());
    assert!(
        line("gpumon_gpu_fan_speed_ratio", r#"gpu="1""#).is_none(),
        "NOT_SUPPORTED must be absent, not 0"
    );
    assert!(line("gpumon_gpu_power_limit_watts", GPU0).unwrap().ends_with(" 700"));
    assert!(body.contains("# TYPE gpumon_gpu_energy_joules_total counter"));
    assert_eq!(
        body.matches("\ngpumon_host_mem_total_bytes{").count(),
        1,
        "host metrics once per host"
    );
    assert_eq!(metric_value(&body, "gpumon_up"), Some(1.0));
    // HELP in the exposed unit; the usual build-info series; a 0/1 series per clock-event reason.
    assert!(
        body.contains("# HELP gpumon_gpu_utilization_ratio Fraction (0-1) of the past"),
        "{body}"
    );
    assert!(
        !body
            .lines()
            .any(|l| l.starts_with("# HELP ") && l.contains("_ratio ") && l.contains("ercent")),
        "{body}"
    );
    assert!(
        body.lines().any(|l| l.starts_with("gpumon_build_info{") && l.contains("version=")),
        "{body}"
    );
    assert!(!body.contains("\ngpumon_info{"), "{body}");
    let reasons = body.lines().filter(|l| l.starts_with("gpumon_gpu_clocks_event_reason{")).count();
    assert_eq!(reasons, 2 * 9, "one series per GPU and reason:\n{body}");

    // OpenMetrics when asked, the same series.
    let (status, head, om) = http(
        rec.addr,
        "GET",
        "/metrics",
        &[("Accept", "application/openmetrics-text;version=1.0.0")],
    )
    .unwrap();
    assert_eq!(status, 200);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text; version=1.0.0"),
        "{head}"
    );
    assert!(
        om.ends_with("# EOF\n") && om.contains("# UNIT gpumon_gpu_memory_total_bytes bytes"),
        "{om}"
    );

    // HTTP semantics.
    let (status, head, body) = http(rec.addr, "HEAD", "/metrics", &[]).unwrap();
    assert_eq!(status, 200);
    assert!(
        body.is_empty()
            && head.to_ascii_lowercase().contains("content-type: text/plain; version=0.0.4")
    );
    assert_eq!(http(rec.addr, "GET", "/", &[]).unwrap().0, 200);
    assert_eq!(http(rec.addr, "GET", "/metrics?x=1", &[]).unwrap().0, 200);
    assert_eq!(http(rec.addr, "GET", "/nope", &[]).unwrap().0, 404);
    assert_eq!(http(rec.addr, "GET", "/metrics/", &[]).unwrap().0, 404);
    let (status, head, _) = http(rec.addr, "POST", "/metrics", &[("Content-Length", "0")]).unwrap();
    assert_eq!(status, 405);
    assert!(head.to_ascii_lowercase().contains("allow: get, head"), "{head}");
    assert_eq!(http(rec.addr, "DELETE", "/", &[]).unwrap().0, 405);
    rec.finish();
}

/// GPU 0 of [`steady`] with Xid events (79 twice, then 48) and memory health (retired pages, row
/// remapping).
fn health_and_xids() -> String {
    steady()
        .replacen("events = none\n", "events = xid:79@2, xid:79@3, xid:48@3\nevents.supported = 0x8\n", 1)
        .replacen(
            "remapped_rows.uncorrectable = 0\n",
            "remapped_rows.uncorrectable = 0, 2\nremapped_rows.pending = 0, 1\nremapped_rows.failure = 0\n\
             retired_pages.single_bit_ecc = none\nretired_pages.double_bit = none, 0x1000:1700000000\n\
             retired_pages.pending = 0, 1\n",
            1,
        )
}

/// Every field that can be recorded on (memory health with retired pages and row remapping, Xid events
/// on GPU 0): promtool accepts the scrape, no gauge ends in `_count`, and each Xid is a counter.
#[test]
fn promtool_accepts_every_field_with_memory_health_and_xid_counters() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = health_and_xids();
    let all: Vec<&str> = gpumon::CATALOG
        .iter()
        .filter(|d| {
            gpumon::prom_metric(d).is_some()
                && !d.name.starts_with("cgroup.")
                && !d.name.starts_with("job.")
        })
        .map(|d| d.name)
        .collect();
    let fields = all.join(",");
    let rec = Recorder::start(listen_cmd(
        dir.path(),
        &scenario,
        "200ms",
        &["--duration", "60s", "--fields", &fields],
    ));
    let mut body = rec.wait_ticks(6);
    for _ in 0..100 {
        if body.contains("xid=\"48\"") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        body = http(rec.addr, "GET", "/metrics", &[]).unwrap().2;
    }
    promtool_check(&body);
    let value = |prefix: &str, labels: &[&str]| {
        body.lines()
            .find(|l| l.starts_with(prefix) && labels.iter().all(|x| l.contains(x)))
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
    };
    assert!(body.contains("# TYPE gpumon_gpu_xid_errors_total counter"), "{body}");
    assert_eq!(value("gpumon_gpu_xid_errors_total{", &[GPU0, r#"xid="79""#]), Some(2.0), "{body}");
    assert_eq!(value("gpumon_gpu_xid_errors_total{", &[GPU0, r#"xid="48""#]), Some(1.0), "{body}");
    assert!(value("gpumon_gpu_retired_pages_double_bit{", &[GPU0]).is_some(), "{body}");
    assert!(value("gpumon_gpu_remapped_rows_pending{", &[GPU0]).is_some(), "{body}");
    assert!(!body.lines().any(
        |l| l.starts_with("gpumon_") && l.split(['{', ' ']).next().unwrap().ends_with("_count")
    ));
    rec.finish();
}

/// A metric family as docs/prometheus.md states it: its type (`gauge`, `counter`, `info`) and, for
/// the rows of its tables, whether it has one series per GPU.
struct DocFamily {
    kind: String,
    per_gpu: Option<bool>,
}

/// The families docs/prometheus.md names with their type: the rows of its generated field table
/// and of its run-metrics table, and the families its prose introduces as "`name` (kind...".
fn documented_families(page: &str) -> BTreeMap<String, DocFamily> {
    let mut out = BTreeMap::new();
    for l in page.lines().filter(|l| l.starts_with("| `gpumon_") || l.starts_with("| `")) {
        let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
        // Field table: field, metric, type, series, scale, equivalent.
        if cells.len() == 6 && cells[1].starts_with("`gpumon_") {
            let kind = cells[2].split(' ').next().unwrap_or("").to_string();
            let per_gpu = Some(cells[3] == "per GPU");
            out.insert(cells[1].trim_matches('`').to_string(), DocFamily { kind, per_gpu });
        }
        // Run metrics: metric, type, meaning.
        if cells.len() == 3 && cells[0].starts_with("`gpumon_") {
            let kind = cells[1].to_string();
            out.insert(
                cells[0].trim_matches('`').to_string(),
                DocFamily { kind, per_gpu: Some(false) },
            );
        }
    }
    for (at, _) in page.match_indices("`gpumon_") {
        let rest = &page[at + 1..];
        let Some(end) = rest.find('`') else { continue };
        let name = &rest[..end];
        let after = rest[end + 1..].strip_prefix(" (").unwrap_or("");
        for kind in ["gauge", "counter"] {
            if after.starts_with(&format!("{kind},")) || after.starts_with(&format!("{kind}:")) {
                out.entry(name.to_string())
                    .or_insert(DocFamily { kind: kind.to_string(), per_gpu: None });
            }
        }
    }
    out
}

/// Every metric name a text mentions (`gpumon_...`), brace lists expanded
/// (`gpumon_ticks_{late,missed}_total`), labels cut off (`gpumon_build_info{version}`); a name
/// ending in `*` stands for a prefix. The bare prefix `gpumon_` is no name.
fn mentioned_names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices("gpumon_") {
        if text[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let word: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "_{},.*".contains(*c))
            .collect();
        let word = word.trim_end_matches([',', '.']);
        let names = match word.split_once('{') {
            // `name_{a,b}_suffix`: one name per alternative (`...` is none).
            Some((head, tail)) if head.ends_with('_') => {
                let (alts, suffix) = tail.split_once('}').unwrap_or((tail, ""));
                alts.split(',')
                    .filter(|a| !a.is_empty() && !a.starts_with('.'))
                    .map(|a| format!("{head}{a}{suffix}"))
                    .collect()
            }
            Some((head, _)) => vec![head.to_string()],
            None => vec![word.to_string()],
        };
        out.extend(names.into_iter().filter(|n| n != "gpumon_"));
    }
    out
}

/// Documented families that may be absent from this test's scrape, with the reason.
const MAY_BE_ABSENT: &[(&str, &str)] = &[
    ("gpumon_cgroup_mem_limit_bytes", "the test's cgroup may set no memory limit (then null)"),
    ("gpumon_cgroup_cpu_limit_cores", "the test's cgroup may set no CPU quota (then null)"),
];

/// docs/prometheus.md (and README.md's words on the endpoint) against the endpoint itself: a
/// recording of every field the page's table lists, of a job reporting work, on GPUs with Xid
/// events and memory health. Every family served is on the page with its type and series (per GPU
/// with the GPU labels, or one per host); every family on the page is served; every `gpumon_` name
/// the two texts mention is served.
#[test]
fn prometheus_page_names_the_metrics_the_endpoint_serves() {
    let page = std::fs::read_to_string(repo_root().join("docs/prometheus.md")).unwrap();
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let documented = documented_families(&page);
    assert!(documented.len() > 80, "{} families on the page", documented.len());
    // Every catalogue field but those the page's table says are labels, the timestamp, events or
    // processes (a field missing from the table is recorded, so its metric is caught unlisted).
    let not_recorded: BTreeSet<&str> = page
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect::<Vec<_>>())
        .filter(|c| c.len() == 6 && (c[1].starts_with("label") || c[0] == "`timestamp`"))
        .chain(
            (page.lines().filter(|l| l.starts_with("| `")))
                .map(|l| l.trim_matches('|').split('|').map(str::trim).collect::<Vec<_>>())
                .filter(|c| c.len() == 6)
                .filter(|c| c[3].starts_with("per-process") || c[3].starts_with("event rows")),
        )
        .map(|c| c[0].trim_matches('`'))
        .collect();
    let fields: Vec<&str> =
        gpumon::CATALOG.iter().map(|d| d.name).filter(|n| !not_recorded.contains(n)).collect();
    assert!(fields.len() > 150, "{} fields", fields.len());
    let scenario = health_and_xids().replacen(
        "remapped_rows.uncorrectable = 0, 2\n",
        "remapped_rows.uncorrectable = 0, 2\nclocks.video = 1500\nclocks.max.graphics = 1980\n\
         clocks.max.sm = 1980\nclocks.max.memory = 2619\ntemperature.memory = 40\n\
         power.draw.instant = 120\npower.draw.average = 110\npcie.tx = 1000\npcie.rx = 2000\n\
         ecc.errors.corrected.volatile.total = 3\n",
        1,
    );
    let job = format!(
        "i=0; while [ $i -lt 40 ]; do {} progress samples=5; sleep 0.2; i=$((i+1)); done",
        assert_cmd::cargo::cargo_bin("gpumon").display()
    );
    let dir = tempfile::tempdir().unwrap();
    let fields = fields.join(",");
    let args = ["--fields", &fields, "--progress", "samples", "--", "sh", "-c", &job];
    let rec = Recorder::start(listen_cmd(dir.path(), &scenario, "200ms", &args));
    let mut body = rec.wait_ticks(6);
    for _ in 0..100 {
        if body.contains("xid=\"48\"") && body.contains("gpumon_progress_rate{") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        body = http(rec.addr, "GET", "/metrics", &[]).unwrap().2;
    }
    let served: BTreeMap<&str, &str> =
        body.lines().filter_map(|l| l.strip_prefix("# TYPE ")?.split_once(' ')).collect();
    let mut wrong = Vec::new();
    for (name, kind) in &served {
        let Some(doc) = documented.get(*name) else {
            wrong.push(format!("{name}: served as a {kind}, not on the page"));
            continue;
        };
        // The text format has no info type: an `_info` family is a gauge there.
        let doc_kind = if doc.kind == "info" { "gauge" } else { doc.kind.as_str() };
        if doc_kind != *kind {
            wrong.push(format!("{name}: served as a {kind}, the page says {}", doc.kind));
        }
        let samples: Vec<&str> = body
            .lines()
            .filter(|l| l.strip_prefix(*name).is_some_and(|r| r.starts_with(['{', ' '])))
            .collect();
        let gpu_labels = ["gpu=", "uuid=", "name=", "pci_bus_id="];
        let has = |s: &str, l: &str| s.contains(&format!("{{{l}")) || s.contains(&format!(",{l}"));
        match doc.per_gpu {
            Some(true) if !samples.iter().all(|s| gpu_labels.iter().all(|l| has(s, l))) => {
                wrong.push(format!("{name}: per GPU on the page, served {samples:?}"))
            }
            Some(false) if samples.len() != 1 || has(samples[0], "gpu=") => {
                wrong.push(format!("{name}: one per host on the page, served {samples:?}"))
            }
            _ => {}
        }
        if !samples.iter().all(|s| has(s, "host=")) {
            wrong.push(format!("{name}: a series without the host label: {samples:?}"));
        }
    }
    let absent_ok = |n: &str| MAY_BE_ABSENT.iter().any(|(a, _)| *a == n);
    for name in documented.keys() {
        if !served.contains_key(name.as_str()) && !absent_ok(name) {
            wrong.push(format!("{name}: on the page, not served"));
        }
    }
    for (text, file) in [(&page, "docs/prometheus.md"), (&readme, "README.md")] {
        for name in mentioned_names(text) {
            let hit = match name.strip_suffix('*') {
                Some(prefix) => served.keys().any(|s| s.starts_with(prefix)),
                None => served.contains_key(name.as_str()) || absent_ok(&name),
            };
            if !hit {
                wrong.push(format!("{file} names {name}, which is not served"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}\n{body}");
    rec.wait_success();
}

/// Query Prometheus' HTTP API; the vector result as (labels, value).
fn query(agent: &ureq::Agent, prom: SocketAddr, expr: &str) -> Vec<(HashMap<String, String>, f64)> {
    let body = agent
        .get(format!("http://{prom}/api/v1/query"))
        .query("query", expr)
        .call()
        .and_then(|mut r| r.body_mut().read_to_string());
    let Ok(body) = body else { return Vec::new() };
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "success", "{body}");
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let labels = r["metric"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect();
            (labels, r["value"][1].as_str().unwrap().parse().unwrap())
        })
        .collect()
}

#[test]
fn a_real_prometheus_scrapes_the_scripted_values() {
    let prometheus = tool("prometheus");
    let dir = tempfile::tempdir().unwrap();
    let rec = Recorder::start(listen_cmd(
        dir.path(),
        &steady(),
        "200ms",
        &["--duration", "90s", "--job-id", "train-42"],
    ));
    // Past the end of GPU 0's scripted sequences: every scrape sees the last values.
    rec.wait_ticks(11);

    let port = free_port();
    let prom: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: gpumon\n    static_configs:\n      - targets: ['{}']\n",
            rec.addr
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
    let _server = Guard(
        Command::new(&prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("tsdb").display()))
            .arg(format!("--web.listen-address={prom}"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let agent: ureq::Agent =
        ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(5))).build().into();

    // Two scrapes of gpumon stored.
    let t0 = Instant::now();
    loop {
        let n = query(&agent, prom, "count_over_time(gpumon_up[5m])");
        if n.first().is_some_and(|(_, v)| *v >= 2.0) {
            break;
        }
        let log = std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default();
        assert!(
            t0.elapsed() < Duration::from_secs(40),
            "Prometheus did not scrape gpumon twice: {n:?}\n{log}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let up = query(&agent, prom, r#"up{job="gpumon"}"#);
    assert_eq!(up.first().map(|u| u.1), Some(1.0), "{up:?}");

    let total = query(&agent, prom, r#"gpumon_gpu_memory_total_bytes{gpu="0"}"#);
    assert_eq!(total.len(), 1, "{total:?}");
    assert_eq!(total[0].1, MEMORY_TOTAL_BYTES);
    assert_eq!(total[0].0["uuid"], "GPU-00000000-0000-0000-0000-000000000000");
    assert_eq!(total[0].0["instance"], rec.addr.to_string());
    // The job the recording belongs to labels every series, as stored by Prometheus.
    assert_eq!(total[0].0["job_id"], "train-42");
    let of_job = query(&agent, prom, r#"count(gpumon_gpu_memory_total_bytes{job_id="train-42"})"#);
    assert_eq!(of_job.first().map(|c| c.1), Some(2.0), "{of_job:?}");
    let limit = query(&agent, prom, r#"gpumon_gpu_power_limit_watts{gpu="0"}"#);
    assert_eq!(limit.first().map(|l| l.1), Some(700.0), "{limit:?}");
    // GPU 0's utilization script ends at 90 % and stays there.
    let util = query(&agent, prom, r#"gpumon_gpu_utilization_ratio{gpu="0"}"#);
    assert_eq!(util.first().map(|u| u.1), Some(0.9), "{util:?}");
    let used = query(&agent, prom, r#"gpumon_gpu_memory_used_bytes{gpu="1"}"#);
    assert_eq!(used.first().map(|u| u.1), Some(5000.0 * 1048576.0), "{used:?}");
    // Unsupported on GPU 1: never stored, although GPU 1's other series are.
    assert!(query(&agent, prom, r#"gpumon_gpu_fan_speed_ratio{gpu="1"}"#).is_empty());
    assert_eq!(
        query(&agent, prom, r#"gpumon_gpu_fan_speed_ratio{gpu="0"}"#).first().map(|f| f.1),
        Some(0.3)
    );
    // The counter arrived as a counter (OpenMetrics: family name without _total).
    let energy = query(&agent, prom, r#"gpumon_gpu_energy_joules_total{gpu="0"}"#);
    assert!(energy.first().is_some_and(|e| e.1 >= 1000.0), "{energy:?}");
    // One clock-event reason, selected by label (GPU 0's bitmask script ends at 0x4 = sw_power_cap).
    let reason = |gpu: &str, r: &str| {
        let q = format!(r#"gpumon_gpu_clocks_event_reason{{gpu="{gpu}", reason="{r}"}}"#);
        let v = query(&agent, prom, &q);
        assert_eq!(v.len(), 1, "{q}: {v:?}");
        v[0].1
    };
    assert_eq!(reason("0", "sw_power_cap"), 1.0);
    assert_eq!(reason("0", "gpu_idle"), 0.0);
    assert_eq!(reason("1", "sw_power_cap"), 0.0);
    let capped =
        query(&agent, prom, r#"gpumon_gpu_clocks_event_reason{reason="sw_power_cap"} == 1"#);
    assert_eq!(capped.iter().map(|c| c.0["gpu"].as_str()).collect::<Vec<_>>(), ["0"], "{capped:?}");
    rec.finish();
}

/// `expr` and variable queries of a Grafana dashboard, recursively.
fn dashboard_queries(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("expr" | "query" | "definition", serde_json::Value::String(s)) => {
                        out.push(s.clone())
                    }
                    _ => dashboard_queries(x, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| dashboard_queries(x, out)),
        _ => {}
    }
}

fn gpumon_names(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = query.as_bytes();
    let mut i = 0;
    while let Some(p) = query[i..].find("gpumon_") {
        let start = i + p;
        let before_ok =
            start == 0 || !(b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_');
        let mut end = start;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
            end += 1;
        }
        if before_ok {
            out.push(query[start..end].to_string());
        }
        i = end;
    }
    out
}

#[test]
fn every_dashboard_metric_is_served() {
    let dash: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("examples/grafana-dashboard.json")).unwrap(),
    )
    .unwrap();
    let vars = dash["templating"]["list"].as_array().unwrap();
    assert!(
        vars.iter().any(|v| v["type"] == "datasource" && v["name"] == "datasource"),
        "datasource variable"
    );
    let mut queries = Vec::new();
    dashboard_queries(&dash["panels"], &mut queries);
    dashboard_queries(&dash["templating"], &mut queries);
    let wanted: BTreeSet<String> = queries.iter().flat_map(|q| gpumon_names(q)).collect();
    assert!(wanted.len() > 20, "{wanted:?}");

    // Record every catalogue field the dashboard uses, wrapping a job so that job.* has values.
    let mut by_metric: HashMap<String, &gpumon::FieldDef> = gpumon::CATALOG
        .iter()
        .filter_map(|d| gpumon::prom_metric(d).map(|m| (m.name(), d)))
        .collect();
    // The per-reason series come from the bitmask field.
    by_metric.insert("gpumon_gpu_clocks_event_reason".into(), gpumon::Field::EventReasons.def());
    let fields: Vec<&str> =
        wanted.iter().filter_map(|m| by_metric.get(m)).map(|d| d.name).collect();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("dash.csv");
    let fields_arg = fields.join(",");
    let mut cmd = listen_cmd(
        dir.path(),
        TWO_GPUS,
        "200ms",
        &["--fields", &fields_arg, "-o", csv.to_str().unwrap()],
    );
    cmd.args(["--", "sh", "-c", "head -c 1000000 /dev/zero > /dev/null; sleep 3"]);
    let rec = Recorder::start(cmd);
    let body = rec.wait_ticks(5);
    let served = series_names(&body);
    rec.wait_success();

    // A metric may be absent only when its field was null in every row of the file written
    // alongside (missing is absent, e.g. an unlimited cgroup has no memory limit).
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let headers: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert!(!rows.is_empty());
    let mut excused = Vec::new();
    for m in &wanted {
        if served.contains(m) {
            continue;
        }
        let def = by_metric
            .get(m)
            .unwrap_or_else(|| panic!("the dashboard uses {m}, which gpumon never serves"));
        let col = headers.iter().position(|h| *h == def.name).unwrap();
        assert!(
            rows.iter().all(|r| r[col].is_empty()),
            "{m} ({}) has values in the file but is not served:\n{body}",
            def.name
        );
        excused.push(m.clone());
    }
    eprintln!("dashboard metrics absent because their field was null on this machine: {excused:?}");
    assert!(
        excused.iter().all(|m| m.starts_with("gpumon_cgroup_") || m.starts_with("gpumon_job_")),
        "{excused:?}"
    );
}

#[test]
fn hostile_clients_cost_no_tick_and_the_endpoint_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    // 500 ms ticks: a tick counts as missed only when its sample starts 500 ms late.
    let rec = Recorder::start(listen_cmd(
        dir.path(),
        TWO_GPUS,
        "500ms",
        &["--duration", "16s", "-o", csv.to_str().unwrap()],
    ));
    rec.wait_ticks(1);
    let addr = rec.addr;
    let t0 = Instant::now();

    // Slowloris: a request head dripped one header line every 500 ms; the server must hang up.
    // Connected before the half-open ones so that they hold a slot rather than wait in the backlog.
    let slow: Vec<_> = (0..2)
        .map(|_| TcpStream::connect(addr).unwrap())
        .map(|mut s| {
            std::thread::spawn(move || {
                s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n").unwrap();
                let start = Instant::now();
                s.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
                let mut buf = [0u8; 512];
                while start.elapsed() < Duration::from_secs(14) {
                    if s.write_all(b"X-Slow: 1\r\n").is_err() {
                        return start.elapsed();
                    }
                    match s.read(&mut buf) {
                        Ok(0) => return start.elapsed(),
                        Ok(_) => return start.elapsed(), // an error response, then close
                        Err(e)
                            if e.kind() == std::io::ErrorKind::WouldBlock
                                || e.kind() == std::io::ErrorKind::TimedOut => {}
                        Err(_) => return start.elapsed(),
                    }
                }
                start.elapsed()
            })
        })
        .collect();

    // Half-open connections, more than the connection limit, held for 3 s.
    let half_open: Vec<TcpStream> = (0..48).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_secs(3));
    drop(half_open);

    // Oversized heads: 64 KiB of headers must not get a 200.
    for _ in 0..20 {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n".to_vec();
        for i in 0..1024 {
            req.extend_from_slice(format!("X-Big-{i}: {}\r\n", "a".repeat(56)).as_bytes());
        }
        req.extend_from_slice(b"\r\n");
        let _ = s.write_all(&req);
        let mut resp = Vec::new();
        let _ = s.read_to_end(&mut resp);
        let resp = String::from_utf8_lossy(&resp);
        assert!(!resp.starts_with("HTTP/1.1 200"), "an oversized head was served");
    }

    // 1,000 requests of random bytes on four threads (xorshift, fixed seeds).
    let garbage: Vec<_> = (0..4u64)
        .map(|t| {
            std::thread::spawn(move || {
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t + 1);
                let mut ok_status = 0;
                for _ in 0..250 {
                    let mut s = TcpStream::connect(addr).unwrap();
                    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
                    let len = 1 + (x % 4096) as usize;
                    let bytes: Vec<u8> = (0..len)
                        .map(|_| {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            x as u8
                        })
                        .collect();
                    let _ = s.write_all(&bytes);
                    let _ = s.shutdown(std::net::Shutdown::Write);
                    let mut resp = Vec::new();
                    let _ = s.read_to_end(&mut resp);
                    if resp.starts_with(b"HTTP/1.1 200") {
                        ok_status += 1;
                    }
                }
                ok_status
            })
        })
        .collect();
    // Meanwhile, a scrape flood: 4 × 50 back-to-back valid scrapes, all answered.
    let flood: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                (0..50)
                    .filter(|_| {
                        http(addr, "GET", "/metrics", &[])
                            .is_ok_and(|(s, _, b)| s == 200 && b.contains("gpumon_up"))
                    })
                    .count()
            })
        })
        .collect();
    for g in garbage {
        assert_eq!(g.join().unwrap(), 0, "random bytes were answered with 200");
    }
    for f in flood {
        assert_eq!(f.join().unwrap(), 50, "a valid scrape failed during the attack");
    }
    for s in slow {
        let held = s.join().unwrap();
        assert!(held < Duration::from_secs(13), "a slowloris client was held for {held:?}");
    }
    let attack = t0.elapsed();

    // Still answering, and nothing missed by the sampler.
    let (status, _, body) = http(addr, "GET", "/metrics", &[]).unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(metric_value(&body, "gpumon_ticks_missed_total"), Some(0.0), "{body}");
    assert_eq!(metric_value(&body, "gpumon_ticks_dropped_total"), Some(0.0), "{body}");
    rec.wait_success();

    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let headers = reader.headers().unwrap().clone();
    let missed = headers.iter().position(|h| h == "missed").unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2 * 32, "16 s at 500 ms with two GPUs (attack took {attack:?})");
    assert!(rows.iter().all(|r| &r[missed] == "0"), "a tick was missed during the attack");
}

/// 200 slowloris clients (one byte of a request head every 2 s, reconnecting whenever the server
/// hangs up) against the real endpoint: a fresh scrape is answered within 1 s throughout, and the
/// sampler misses no tick.
#[test]
fn a_fresh_scrape_is_answered_within_a_second_during_200_slowloris_connections() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    let rec = Recorder::start(listen_cmd(
        dir.path(),
        TWO_GPUS,
        "500ms",
        &["--duration", "20s", "-o", csv.to_str().unwrap()],
    ));
    rec.wait_ticks(1);
    let addr = rec.addr;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let loris = slowloris(addr, 200, stop.clone());
    std::thread::sleep(Duration::from_secs(3));
    let mut worst = Duration::ZERO;
    let mut scrapes = 0;
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(12) {
        let start = Instant::now();
        let (status, _, body) = http(addr, "GET", "/metrics", &[]).unwrap();
        let took = start.elapsed();
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("gpumon_up"));
        worst = worst.max(took);
        scrapes += 1;
        std::thread::sleep(Duration::from_millis(250));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (reconnects, peak) = loris.join().unwrap();
    eprintln!(
        "slowloris: {scrapes} fresh scrapes, slowest {worst:?}; {reconnects} reconnects by 200 slow clients, \
         at most {peak} open at a check"
    );
    assert!(
        worst < Duration::from_secs(1),
        "a fresh scrape took {worst:?} during the slowloris attack"
    );
    let (_, _, body) = http(addr, "GET", "/metrics", &[]).unwrap();
    assert_eq!(metric_value(&body, "gpumon_ticks_missed_total"), Some(0.0), "{body}");
    rec.wait_success();
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let missed = reader.headers().unwrap().iter().position(|h| h == "missed").unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2 * 40, "20 s at 500 ms with two GPUs");
    assert!(rows.iter().all(|r| &r[missed] == "0"), "a tick was missed during the attack");
}

/// `n` slowloris clients on one thread: each sends one byte of a request head that never ends every
/// 2 s and reconnects at once when the server lets go, until `stop`. Returns (reconnects, the most
/// found still open at a round).
fn slowloris(
    addr: SocketAddr,
    n: usize,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<(u64, usize)> {
    std::thread::spawn(move || {
        // A head that never ends: the request line, then one header value a byte at a time.
        const HEAD: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
        let open = || -> Option<(TcpStream, usize)> {
            let s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
            s.set_nonblocking(true).ok()?;
            Some((s, 0))
        };
        let mut conns: Vec<Option<(TcpStream, usize)>> = (0..n).map(|_| open()).collect();
        let (mut reconnects, mut peak) = (0u64, 0usize);
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let mut alive = 0;
            for c in conns.iter_mut() {
                let kept = c.as_mut().is_some_and(|(s, sent)| {
                    // EOF, a response (an error, then close) or a reset: the server let go.
                    let let_go =
                        !matches!(s.read(&mut [0u8; 256]), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
                    let byte = HEAD.get(*sent).copied().unwrap_or(b'a');
                    *sent += 1;
                    !let_go && s.write(&[byte]).is_ok_and(|n| n == 1)
                });
                if kept {
                    alive += 1;
                } else {
                    // Come back at once, as an attacker would.
                    *c = open();
                    reconnects += 1;
                }
            }
            peak = peak.max(alive);
            for _ in 0..20 {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        (reconnects, peak)
    })
}

/// A MIG node: each instance's memory is a series of its own, labelled as dcgm-exporter labels
/// instances (`gpu_instance`, `profile`); the GPU's own series (power) carry no instance labels.
#[test]
fn mig_instances_are_series_of_their_own_and_promtool_accepts_them() {
    let dir = tempfile::tempdir().unwrap();
    let rec = Recorder::start(listen_cmd(
        dir.path(),
        crate::mig::MIG_NODE,
        "200ms",
        &["--duration", "60s"],
    ));
    let body = rec.wait_ticks(2);
    promtool_check(&body);
    let series = |name: &str| -> Vec<&str> {
        body.lines().filter(|l| l.starts_with(&format!("{name}{{"))).collect()
    };
    let used = series("gpumon_gpu_memory_used_bytes");
    assert_eq!(used.len(), 5, "GPU 0, its 3 instances, GPU 1: {used:#?}");
    let small =
        used.iter().find(|l| l.contains(r#"gpu_instance="13""#)).expect("the 1g.10gb instance");
    assert!(small.contains(r#"profile="1g.10gb""#) && small.contains(r#"gpu="0""#), "{small}");
    assert!(
        small.contains(r#"mig_uuid="MIG-"#) && small.contains(r#"compute_instance="0""#),
        "{small}"
    );
    assert!(small.ends_with(&format!(" {}", 9500.0 * 1048576.0)), "{small}");
    let power = series("gpumon_gpu_power_draw_watts");
    assert_eq!(power.len(), 2, "{power:#?}");
    assert!(power.iter().all(|l| !l.contains("gpu_instance")), "{power:#?}");
}

/// `--listen` as Prometheus exporters take it: `:PORT` binds every interface, `localhost:PORT`
/// the loopback; both are scraped.
#[test]
fn listen_takes_a_bare_port_and_localhost() {
    for (listen, ip) in [(":0", "0.0.0.0"), ("localhost:0", "127.0.0.1")] {
        let dir = tempfile::tempdir().unwrap();
        let mut c = gpumon_fake(dir.path(), &steady());
        c.args(["record", "-q", "-i", "200ms", "--duration", "60s", "--listen", listen]);
        let rec = Recorder::start(c);
        assert_eq!(rec.addr.ip().to_string(), ip, "{listen}");
        let lo = SocketAddr::from(([127, 0, 0, 1], rec.addr.port()));
        let (code, _, body) = http(lo, "GET", "/metrics", &[]).unwrap();
        assert_eq!(code, 200, "{listen}: {body}");
        assert!(metric_value(&body, "gpumon_ticks_total").is_some(), "{listen}: {body}");
        rec.finish();
    }
}
