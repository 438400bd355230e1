//! The job view's reading: the inputs grouped by the job their recordings name (footer
//! `gpumon.job.id`), each job's inputs summarized like any other set of inputs, and its view built
//! from that summary (`analysis::job`).

use std::path::PathBuf;

use anyhow::Result;

use crate::{Inputs, Outcome, PhaseMode, SummarizeConfig, find_inputs, summarize_found};
use gpumon_analysis::{JobView, NodeOf, build_job_view};
use gpumon_read::Discovered;
use gpumon_read::Input;
use gpumon_read::{job_of, recording};
use gpumon_util::UsageError;

/// One job: its view, the summary of its inputs, and where its ids came from.
#[derive(Debug, Clone)]
pub struct JobOutcome {
    /// The job's identity and nodes.
    pub view: JobView,
    /// The summary of the job's inputs.
    pub outcome: Outcome,
    /// `slurm`, `torchrun`, `kubernetes`, `option`: each source its recordings named.
    pub sources: Vec<String>,
    /// The job's metrics inputs (what the report's charts read).
    pub metrics: Discovered,
}

/// The jobs of the inputs, in order of first appearance, and the metrics inputs of no job.
#[derive(Debug, Clone, Default)]
pub struct Jobs {
    /// The jobs, in order of first appearance.
    pub jobs: Vec<JobOutcome>,
    /// The metrics inputs that name no job.
    pub without_job: Vec<PathBuf>,
}

/// The inputs of one job while they are grouped.
#[derive(Default)]
struct Group {
    id: String,
    metrics: Vec<Input>,
    procs: Vec<Input>,
    events: Vec<Input>,
    nodes: Vec<NodeOf>,
    sources: Vec<String>,
}

/// The group of `id` in `groups`, made when new.
fn group<'a>(groups: &'a mut Vec<Group>, id: &str) -> &'a mut Group {
    let i = match groups.iter().position(|g| g.id == id) {
        Some(i) => i,
        None => {
            groups.push(Group { id: id.to_string(), ..Group::default() });
            groups.len() - 1
        }
    };
    &mut groups[i]
}

/// Sort the inputs by job; the metrics inputs of no job are returned.
fn by_job(inputs: &Inputs, groups: &mut Vec<Group>) -> Vec<PathBuf> {
    let mut without = Vec::new();
    for i in &inputs.metrics.inputs {
        let Some(job) = job_of(i) else {
            without.push(i.path.clone());
            continue;
        };
        let g = group(groups, &job.id);
        let host = recording(i).map(|r| r.host).unwrap_or_default();
        if !g.nodes.iter().any(|n| n.host == host) {
            g.nodes.push(NodeOf { host, node: job.node.clone() });
        }
        if !g.sources.contains(&job.source) {
            g.sources.push(job.source.clone());
        }
        g.metrics.push(i.clone());
    }
    // Per-process rows and events go with the job their recorder named; a job-less one is left out.
    for (i, events) in
        inputs.procs.iter().map(|i| (i, false)).chain(inputs.events.iter().map(|i| (i, true)))
    {
        if let Some(g) = job_of(i).and_then(|j| groups.iter_mut().find(|g| g.id == j.id)) {
            if events { g.events.push(i.clone()) } else { g.procs.push(i.clone()) }
        }
    }
    without
}

/// The job view of each job among the inputs (`summarize --by job`), or of the one `only` names
/// (`--job ID`). Inputs of no job are left out (and listed); none naming a job is a usage error.
pub fn summarize_jobs(cfg: &SummarizeConfig, only: Option<&str>) -> Result<Jobs> {
    crate::parse_checks(&cfg.checks)?;
    let inputs = find_inputs(&cfg.inputs, &cfg.read)?;
    let mut groups = Vec::new();
    let without_job = by_job(&inputs, &mut groups);
    let names = || groups.iter().map(|g| g.id.clone()).collect::<Vec<_>>().join(", ");
    if groups.is_empty() {
        return Err(UsageError(format!(
            "{}: no recording names a job (record with --job-id NAME, or under Slurm, torchrun or a \
             Kubernetes Job; Parquet files only: CSV keeps no job)",
            inputs.metrics.names()
        ))
        .into());
    }
    if let Some(id) = only
        && !groups.iter().any(|g| g.id == id)
    {
        return Err(UsageError(format!(
            "--job {id:?}: no recording of that job among the inputs (jobs: {})",
            names()
        ))
        .into());
    }
    let cfg = SummarizeConfig { phases: PhaseMode::Off, phase_windows: Vec::new(), ..cfg.clone() };
    let mut jobs = Vec::new();
    for g in groups.into_iter().filter(|g| only.is_none_or(|id| g.id == id)) {
        let metrics = Discovered { inputs: g.metrics, skipped: Vec::new() };
        let these = Inputs { metrics: metrics.clone(), procs: g.procs, events: g.events };
        let outcome = summarize_found(&cfg, &these)?;
        let view = build_job_view(&g.id, &outcome.summary, &g.nodes, &cfg.thresholds);
        jobs.push(JobOutcome { view, outcome, sources: g.sources, metrics });
    }
    Ok(Jobs { jobs, without_job })
}
