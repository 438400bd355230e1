//! One job across many hosts: the job view of a summary whose inputs share a job id (its hosts and
//! GPUs, each node's span and skew, the totals over all its GPUs) and the rules that compare hosts
//! ([`JOB_RULES`]): a straggler among all the job's GPUs of one model, an imbalance of work across
//! nodes, a hang on every node named once, a node whose recording stops early. The per-GPU findings
//! of each host are their inputs, never derived again.

use crate::findings::{Finding, Rule, Severity, Thresholds};
use crate::stat::Stat;
use crate::{GpuSummary, HostSummary, Summary};
use gpumon_schema::catalog::Field;

/// The rules of the job view, documented in docs/summarize.md beside the per-GPU ones.
pub static JOB_RULES: [Rule; 4] = [
    Rule {
        id: "straggler",
        severity: Severity::Warning,
        when: "among all the job's GPUs of one model that did work (utilization.gpu.mean >= idle_util (5) %), across \
               hosts: a GPU's clocks.sm.busy_mean more than straggler_clock_pct (5) % below the job's median, or its \
               utilization.gpu.mean more than imbalance_util (20) points below the job's median; when every such \
               GPU of a host (two or more) is slow, the host is named once. The host's own findings that explain \
               it (thermal_throttling, power_throttling, pcie_link, hot_gpu, power_limit_low, xid, shared_gpu, \
               clocks_locked) are named with it",
        fix: "the whole job runs at that GPU's pace: fix the cause named (cooling, power, link, a neighbour on the \
              GPU), or drain the node and restart the job without it",
    },
    Rule {
        id: "imbalance",
        severity: Severity::Warning,
        when: "the mean utilization.gpu.mean of the GPUs of two hosts of the job differs by more than \
               imbalance_util (20) points",
        fix: "spread the work evenly across nodes: shard the data by global rank (DistributedSampler), balance \
              pipeline stages, or find the slow node (straggler)",
    },
    Rule {
        id: "hang",
        severity: Severity::Error,
        when: "the per-GPU hang rule fires on GPUs of every host of the job (named once, with the earliest start), \
               or on some hosts only (those named: the others' ranks may be waiting on them)",
        fix: "the job is stuck, not slow: take stack traces on every node (py-spy dump), look for the rank that \
              died or diverged first, set a collective timeout (TORCH_NCCL_ASYNC_ERROR_HANDLING=1), restart from \
              the last checkpoint",
    },
    Rule {
        id: "node_gone",
        severity: Severity::Error,
        when: "a host's recording ends more than gap_intervals (3) intervals before the job's last host's (with \
               gpu_lost on it when one of its GPUs stopped answering first): the node or its recorder went away \
               while the job ran on",
        fix: "look at that node: kernel log (Xid 79, OOM killer), the scheduler's node state (sinfo -R, kubectl \
              describe node), power; the job's other ranks usually hang or fail waiting on it",
    },
];

/// Where a host sits in the job, from its recordings' footers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeOf {
    /// The host's name.
    pub host: String,
    /// The node's number in the job (`SLURM_NODEID`, `GROUP_RANK`), when the launcher said.
    pub node: Option<String>,
}

/// One host of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobHost {
    /// The host's name.
    pub name: String,
    /// Its node number in the job ([`NodeOf::node`]).
    pub node: Option<String>,
    /// Its GPUs.
    pub gpus: usize,
    /// First and last sample of its GPUs, UTC µs.
    pub start: i64,
    /// See `start`.
    pub end: i64,
    /// Seconds after the job's first start, and before the job's last end.
    pub start_skew_s: f64,
    /// See `start_skew_s`.
    pub end_skew_s: f64,
    /// Means over its GPUs of their means; memory the largest; energy the sum.
    pub utilization: Option<f64>,
    /// The largest `memory.used` of its GPUs, MiB.
    pub memory_max: Option<f64>,
    /// The mean of its GPUs' mean `power.draw`, W.
    pub power_mean: Option<f64>,
    /// Its GPUs' energy together, Wh.
    pub energy_wh: Option<f64>,
    /// The median of its GPUs' clocks.sm.busy_mean.
    pub busy_clock: Option<f64>,
    /// The rules of its own findings, in order.
    pub findings: Vec<&'static str>,
}

/// The job view.
#[derive(Debug, Clone, PartialEq)]
pub struct JobView {
    /// The job's id.
    pub id: String,
    /// Its hosts.
    pub hosts: Vec<JobHost>,
    /// Its GPUs, all hosts together.
    pub gpus: usize,
    /// The first start of its hosts, UTC µs.
    pub start: Option<i64>,
    /// The last end of its hosts, UTC µs.
    pub end: Option<i64>,
    /// The findings across hosts (rules of [`JOB_RULES`]).
    pub findings: Vec<Finding>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

/// Whole GPUs of a host (MIG instances are counted by their GPU).
fn whole(h: &HostSummary) -> impl Iterator<Item = &GpuSummary> {
    h.gpus.iter().filter(|g| g.mig_gi.is_none())
}

fn job_host(h: &HostSummary, nodes: &[NodeOf], span: (i64, i64)) -> JobHost {
    let gpus: Vec<&GpuSummary> = whole(h).collect();
    let stat = |s: Stat| gpus.iter().filter_map(move |g| g.stats.get(s));
    let start = gpus.iter().map(|g| g.start).min().unwrap_or(span.0);
    let end = gpus.iter().map(|g| g.end).max().unwrap_or(span.1);
    let energy = stat(Stat::EnergyWh).fold(None, |a: Option<f64>, x| Some(a.unwrap_or(0.0) + x));
    JobHost {
        name: h.name.clone(),
        node: nodes.iter().find(|n| n.host == h.name).and_then(|n| n.node.clone()),
        gpus: gpus.len(),
        start,
        end,
        start_skew_s: (start - span.0) as f64 / 1e6,
        end_skew_s: (span.1 - end) as f64 / 1e6,
        utilization: mean(stat(Stat::mean(Field::UtilGpu))),
        memory_max: stat(Stat::max(Field::MemUsed)).reduce(f64::max),
        power_mean: mean(stat(Stat::mean(Field::PowerDraw))),
        energy_wh: energy,
        busy_clock: median(stat(Stat::BusyClock).collect()),
        findings: h.findings.iter().map(|f| f.rule).collect(),
    }
}

/// The job view of `summary` (the summary of the job's inputs only), with where each host sits.
pub fn build(id: &str, summary: &Summary, nodes: &[NodeOf], th: &Thresholds) -> JobView {
    let gpus = || summary.hosts.iter().flat_map(whole);
    let span =
        (gpus().map(|g| g.start).min().unwrap_or(0), gpus().map(|g| g.end).max().unwrap_or(0));
    let hosts: Vec<JobHost> = summary.hosts.iter().map(|h| job_host(h, nodes, span)).collect();
    let mut findings = Vec::new();
    straggler(summary, th, &mut findings);
    imbalance(&hosts, th, &mut findings);
    hang(summary, &mut findings);
    node_gone(summary, &hosts, span.1, th, &mut findings);
    JobView {
        id: id.to_string(),
        gpus: gpus().count(),
        start: (!summary.hosts.is_empty()).then_some(span.0),
        end: (!summary.hosts.is_empty()).then_some(span.1),
        hosts,
        findings,
    }
}

/// A UTC µs instant as text.
fn when(us: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_micros(us)
        .map_or_else(|| "-".into(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string())
}

fn rule(id: &str) -> &'static Rule {
    JOB_RULES.iter().find(|r| r.id == id).unwrap_or(&JOB_RULES[0])
}

fn finding(id: &str, host: &str, gpu: Option<&str>, evidence: String) -> Finding {
    let r = rule(id);
    Finding {
        rule: r.id,
        severity: r.severity,
        host: host.to_string(),
        gpu: gpu.map(str::to_string),
        evidence,
        fix: r.fix,
    }
}

/// The host-level findings that can make a GPU slow.
const CAUSES: [&str; 8] = [
    "thermal_throttling",
    "power_throttling",
    "pcie_link",
    "hot_gpu",
    "power_limit_low",
    "xid",
    "shared_gpu",
    "clocks_locked",
];

/// The host's findings that explain a slow GPU (`gpu`), or any of its GPUs (None), as text.
fn causes(h: &HostSummary, gpu: Option<&str>) -> Vec<String> {
    h.findings
        .iter()
        .filter(|f| CAUSES.contains(&f.rule))
        .filter(|f| gpu.is_none() || f.gpu.is_none() || f.gpu.as_deref() == gpu)
        .map(|f| match &f.gpu {
            Some(g) => format!("{} on GPU {g}", f.rule),
            None => f.rule.to_string(),
        })
        .collect()
}

/// A slow GPU: how far below the job's medians it is, or None when it is not.
fn slow(
    g: &GpuSummary,
    clock_median: Option<f64>,
    util_median: Option<f64>,
    th: &Thresholds,
) -> Option<String> {
    let clock = g.stats.get(Stat::BusyClock);
    if let (Some(c), Some(m)) = (clock, clock_median)
        && m > 0.0
        && c < m * (1.0 - th.straggler_clock_pct / 100.0)
    {
        return Some(format!(
            "busy SM clock {c:.0} MHz, {:.0} % below the job's median {m:.0} MHz",
            100.0 * (1.0 - c / m)
        ));
    }
    let util = g.stats.get(Stat::mean(Field::UtilGpu));
    if let (Some(u), Some(m)) = (util, util_median)
        && u < m - th.imbalance_util
    {
        return Some(format!(
            "utilization {u:.1} %, {:.1} points below the job's median {m:.1} %",
            m - u
        ));
    }
    None
}

/// `straggler`: per GPU model, the GPUs well below the job's medians; a host whose every working
/// GPU is slow is named once.
fn straggler(summary: &Summary, th: &Thresholds, out: &mut Vec<Finding>) {
    let working = |g: &&GpuSummary| {
        g.stats.get(Stat::mean(Field::UtilGpu)).is_some_and(|u| u >= th.idle_util)
    };
    let mut models: Vec<Option<&str>> = Vec::new();
    for g in summary.hosts.iter().flat_map(whole) {
        if !models.contains(&g.name.as_deref()) {
            models.push(g.name.as_deref());
        }
    }
    for model in models {
        let of = |g: &&GpuSummary| g.name.as_deref() == model;
        let all: Vec<&GpuSummary> =
            summary.hosts.iter().flat_map(whole).filter(of).filter(working).collect();
        if all.len() < 3 {
            continue;
        }
        let clock_median =
            median(all.iter().filter_map(|g| g.stats.get(Stat::BusyClock)).collect());
        let util_median =
            median(all.iter().filter_map(|g| g.stats.get(Stat::mean(Field::UtilGpu))).collect());
        for h in &summary.hosts {
            let mine: Vec<&GpuSummary> = whole(h).filter(of).filter(working).collect();
            let slow: Vec<(&GpuSummary, String)> = mine
                .iter()
                .filter_map(|g| slow(g, clock_median, util_median, th).map(|w| (*g, w)))
                .collect();
            if slow.is_empty() {
                continue;
            }
            let model = model.unwrap_or("GPU");
            if slow.len() == mine.len() && mine.len() >= 2 {
                let because = join_causes(causes(h, None));
                let ev = format!(
                    "all {} {model} GPUs of host {} are slow (GPU {}: {}){because}",
                    mine.len(),
                    h.name,
                    slow[0].0.label,
                    slow[0].1
                );
                out.push(finding("straggler", &h.name, None, ev));
                continue;
            }
            for (g, why) in slow {
                let because = join_causes(causes(h, Some(&g.label)));
                let ev = format!("{model} GPU {} of host {}: {why}{because}", g.label, h.name);
                out.push(finding("straggler", &h.name, Some(&g.label), ev));
            }
        }
    }
}

fn join_causes(c: Vec<String>) -> String {
    if c.is_empty() { String::new() } else { format!("; explained by {}", c.join(", ")) }
}

/// `imbalance`: the hosts of the least and the most work, when they differ by more than the threshold.
fn imbalance(hosts: &[JobHost], th: &Thresholds, out: &mut Vec<Finding>) {
    let with: Vec<(&JobHost, f64)> =
        hosts.iter().filter_map(|h| h.utilization.map(|u| (h, u))).collect();
    let lo = with.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let hi = with.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    if let (Some(lo), Some(hi)) = (lo, hi)
        && hi.1 - lo.1 > th.imbalance_util
    {
        let ev = format!(
            "host {} averages {:.1} % utilization, host {} {:.1} % ({:.1} points apart)",
            lo.0.name,
            lo.1,
            hi.0.name,
            hi.1,
            hi.1 - lo.1
        );
        out.push(finding("imbalance", &lo.0.name, None, ev));
    }
}

/// `hang`: the hosts whose GPUs fire the per-GPU hang rule, named once for the job.
fn hang(summary: &Summary, out: &mut Vec<Finding>) {
    let hung: Vec<(&HostSummary, &Finding)> = summary
        .hosts
        .iter()
        .filter_map(|h| h.findings.iter().find(|f| f.rule == "hang").map(|f| (h, f)))
        .collect();
    let Some(first) = hung.first() else { return };
    let gpus: usize =
        hung.iter().map(|(h, _)| h.findings.iter().filter(|f| f.rule == "hang").count()).sum();
    let n = summary.hosts.len();
    let ev = if hung.len() == n && n > 1 {
        format!(
            "the job hung on all {n} hosts ({gpus} GPUs); first: host {}, {}",
            first.0.name, first.1.evidence
        )
    } else {
        let names: Vec<&str> = hung.iter().map(|(h, _)| h.name.as_str()).collect();
        format!(
            "hung on {} of {n} hosts ({}; {gpus} GPUs): {}",
            hung.len(),
            names.join(", "),
            first.1.evidence
        )
    };
    let host = if hung.len() == n { "" } else { first.0.name.as_str() };
    out.push(finding("hang", host, None, ev));
}

/// `node_gone`: the hosts whose recording ends well before the job's last.
fn node_gone(
    summary: &Summary,
    hosts: &[JobHost],
    end: i64,
    th: &Thresholds,
    out: &mut Vec<Finding>,
) {
    for (h, jh) in summary.hosts.iter().zip(hosts) {
        let interval = median(whole(h).filter_map(|g| g.stats.get(Stat::IntervalS)).collect());
        let Some(iv) = interval else { continue };
        if jh.end_skew_s <= th.gap_intervals * iv {
            continue;
        }
        let lost: Vec<String> = h
            .findings
            .iter()
            .filter(|f| f.rule == "gpu_lost")
            .filter_map(|f| f.gpu.clone())
            .collect();
        let lost = if lost.is_empty() {
            String::new()
        } else {
            format!(" (gpu_lost: GPU {})", lost.join(", "))
        };
        let ev = format!(
            "host {}'s recording ends {:.0} s before the job's last ({}){lost}",
            h.name,
            jh.end_skew_s,
            when(end)
        );
        out.push(finding("node_gone", &h.name, None, ev));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stat::Scope;
    use crate::stat_values::StatValues;

    /// A GPU busy at `util` % with busy clock `clock`, sampled every second from `start` to `end` s.
    fn gpu(label: &str, util: f64, clock: f64, (start, end): (i64, i64)) -> GpuSummary {
        let mut s = StatValues::empty(Scope::Gpu);
        s.set(Stat::mean(Field::UtilGpu), Some(util));
        s.set(Stat::BusyClock, Some(clock));
        s.set(Stat::IntervalS, Some(1.0));
        s.set(Stat::EnergyWh, Some(1.0));
        GpuSummary {
            label: label.into(),
            index: label.parse().ok(),
            mig_gi: None,
            uuid: None,
            name: Some("H100".into()),
            start: start * 1_000_000,
            end: end * 1_000_000,
            gaps: Vec::new(),
            energy_method: None,
            stats: s,
        }
    }

    fn host(
        name: &str,
        gpus: Vec<GpuSummary>,
        findings: &[(&'static str, Option<&str>)],
    ) -> HostSummary {
        let findings = findings
            .iter()
            .map(|(rule, g)| Finding {
                rule,
                severity: Severity::Warning,
                host: name.into(),
                gpu: g.map(str::to_string),
                evidence: format!("{rule} evidence"),
                fix: "",
            })
            .collect();
        HostSummary {
            name: name.into(),
            gpus,
            stats: StatValues::empty(Scope::Host),
            has_host_data: false,
            findings,
        }
    }

    fn summary(hosts: Vec<HostSummary>) -> Summary {
        Summary { hosts, ..Summary::default() }
    }

    fn rules(v: &JobView) -> Vec<(&str, &str, Option<&str>)> {
        v.findings.iter().map(|f| (f.rule, f.host.as_str(), f.gpu.as_deref())).collect()
    }

    #[test]
    fn straggler_host_named_once_with_its_cause_and_a_lone_gpu_by_itself() {
        let span = (0, 600);
        let s = summary(vec![
            host("a", vec![gpu("0", 95.0, 1980.0, span), gpu("1", 95.0, 1980.0, span)], &[]),
            host("b", vec![gpu("0", 95.0, 1980.0, span), gpu("1", 95.0, 1700.0, span)], &[]),
            host(
                "c",
                vec![gpu("0", 95.0, 1500.0, span), gpu("1", 95.0, 1500.0, span)],
                &[("thermal_throttling", Some("1"))],
            ),
            host("d", vec![gpu("0", 60.0, 1980.0, span), gpu("1", 95.0, 1980.0, span)], &[]),
        ]);
        let v = build("j", &s, &[], &Thresholds::default());
        assert_eq!(
            rules(&v),
            [
                ("straggler", "b", Some("1")),
                ("straggler", "c", None),
                ("straggler", "d", Some("0"))
            ]
        );
        assert!(
            v.findings[1].evidence.contains("thermal_throttling on GPU 1"),
            "{}",
            v.findings[1].evidence
        );
        assert!(
            v.findings[2].evidence.contains("utilization 60.0 %"),
            "{}",
            v.findings[2].evidence
        );
        assert_eq!((v.gpus, v.hosts[2].busy_clock), (8, Some(1500.0)));
    }

    #[test]
    fn hang_everywhere_is_one_finding_and_an_early_end_is_a_node_gone() {
        let hung = [("hang", Some("0")), ("hang", Some("1"))];
        let g = |end| vec![gpu("0", 99.0, 1980.0, (0, end)), gpu("1", 99.0, 1980.0, (0, end))];
        let s = summary(vec![
            host("a", g(600), &hung),
            host("b", g(600), &hung),
            host("c", g(590), &hung),
        ]);
        let v = build("j", &s, &[], &Thresholds::default());
        assert_eq!(rules(&v), [("hang", "", None), ("node_gone", "c", None)]);
        assert!(
            v.findings[0].evidence.contains("all 3 hosts (6 GPUs)"),
            "{}",
            v.findings[0].evidence
        );
        let s =
            summary(vec![host("a", g(600), &hung), host("b", g(600), &[]), host("c", g(599), &[])]);
        let v = build("j", &s, &[], &Thresholds::default());
        assert_eq!(rules(&v), [("hang", "a", None)]);
        assert!(v.findings[0].evidence.contains("1 of 3 hosts (a;"), "{}", v.findings[0].evidence);
    }

    #[test]
    fn imbalance_across_nodes_names_the_least_busy() {
        let span = (0, 600);
        let g = |u| vec![gpu("0", u, 1980.0, span), gpu("1", u, 1980.0, span)];
        let s = summary(vec![
            host("a", g(90.0), &[]),
            host("b", g(60.0), &[]),
            host("c", g(88.0), &[]),
        ]);
        let v = build("j", &s, &[], &Thresholds::default());
        assert!(rules(&v).contains(&("imbalance", "b", None)), "{:?}", rules(&v));
        let s = summary(vec![host("a", g(90.0), &[]), host("b", g(80.0), &[])]);
        assert!(build("j", &s, &[], &Thresholds::default()).findings.is_empty());
    }
}
