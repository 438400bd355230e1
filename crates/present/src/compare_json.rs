//! The JSON forms of a comparison: the comparison itself ([`Comparison`](ComparisonJson), also
//! inside `summarize --by phase --format json`) and `gpumon compare --format json`'s whole document,
//! the `gpumon.compare/1` contract ([`render`]): the comparison, each run's findings, the runs whose
//! inputs hold several recordings, the wrapped commands and the checks.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::compact::groups_of;
use crate::json::{CheckJson, GroupJson, Job};
use crate::rfc3339;
use gpumon_analysis::{CheckResult, Comparison, Summary, Thresholds};

/// The schema name of [`render`]'s document.
pub(crate) const SCHEMA: &str = "gpumon.compare/1";

/// The `gpumon.compare/1` document: the comparison's keys and the runs' findings, recordings,
/// wrapped commands and checks.
#[derive(Serialize)]
struct CompareDoc<'a> {
    /// `gpumon.compare/1`.
    schema: &'static str,
    /// The comparison.
    #[serde(flatten)]
    comparison: ComparisonJson<'a>,
    /// Each run's findings, `label -> [{rule, severity, host, gpus, evidence, fix}]`.
    findings: BTreeMap<&'a str, Vec<GroupJson<'a>>>,
    /// The runs whose inputs hold several recordings, with those recordings.
    recordings: Vec<RunRecordings<'a>>,
    /// Each run's wrapped commands, `label -> [{command, exit_code, end, left_running_pid}]`.
    jobs: BTreeMap<&'a str, Vec<Job<'a>>>,
    /// One per `--fail-if`.
    checks: Vec<CheckJson<'a>>,
}

/// `recordings[]`: a run whose inputs hold several recordings.
#[derive(Serialize)]
struct RunRecordings<'a> {
    /// The run's label.
    run: &'a str,
    /// One line per recording.
    note: Vec<String>,
}

/// `gpumon compare`'s JSON document (pretty, one trailing newline) of the runs `cols` (label,
/// summary), their comparison `c` and the results of its checks.
pub(crate) fn render(
    cols: &[(String, &Summary)],
    c: &Comparison,
    th: &Thresholds,
    results: &[CheckResult],
) -> String {
    crate::json::pretty(&CompareDoc {
        schema: SCHEMA,
        comparison: ComparisonJson::new(c, th),
        findings: (cols.iter())
            .map(|(label, s)| {
                (label.as_str(), groups_of(s).into_iter().map(GroupJson::with_host).collect())
            })
            .collect(),
        recordings: (cols.iter())
            .filter_map(|(label, s)| {
                let r = gpumon_schema::recordings_note(&s.inputs);
                (!r.is_empty()).then_some(RunRecordings { run: label, note: r })
            })
            .collect(),
        jobs: (cols.iter())
            .map(|(label, s)| {
                (
                    label.as_str(),
                    s.inputs.iter().filter_map(|i| i.job.as_ref()).map(Job::from).collect(),
                )
            })
            .collect(),
        checks: results.iter().map(CheckJson::from).collect(),
    })
}

/// The comparison as JSON: per run or phase its statistics, their changes against the baseline
/// (`delta`, `delta_pct`; empty for the baseline itself) and the verdicts.
#[derive(Serialize)]
pub(crate) struct ComparisonJson<'a> {
    /// The baseline's label.
    baseline: Option<&'a str>,
    /// Each measure's unit, `name -> unit`.
    units: BTreeMap<String, &'static str>,
    /// One per run or phase.
    runs: Vec<RunJson<'a>>,
    /// What changed, in words.
    verdicts: Vec<String>,
}

/// `runs[]`: one run or phase of a comparison.
#[derive(Serialize)]
struct RunJson<'a> {
    /// Its label.
    label: &'a str,
    /// Whether it is the baseline.
    baseline: bool,
    /// Its first sample.
    start: Option<String>,
    /// Its last sample.
    end: Option<String>,
    /// Its value of each measure, `name -> number or null`.
    stats: BTreeMap<String, Option<f64>>,
    /// Each measure's change against the baseline (empty for the baseline).
    delta: BTreeMap<String, Option<f64>>,
    /// Each measure's change against the baseline in percent (empty for the baseline).
    delta_pct: BTreeMap<String, Option<f64>>,
}

impl<'a> ComparisonJson<'a> {
    /// The comparison `c`, its verdicts under thresholds `th`.
    pub(crate) fn new(c: &'a Comparison, th: &Thresholds) -> Self {
        let runs = (c.columns.iter().enumerate())
            .map(|(k, col)| {
                let mut run = RunJson {
                    label: &col.label,
                    baseline: k == c.baseline,
                    start: col.start.map(rfc3339),
                    end: col.end.map(rfc3339),
                    stats: BTreeMap::new(),
                    delta: BTreeMap::new(),
                    delta_pct: BTreeMap::new(),
                };
                for (i, &m) in c.measures.iter().enumerate() {
                    run.stats.insert(m.name(), col.values[i]);
                    if k != c.baseline {
                        let (dv, pv) = c.delta(i, k);
                        run.delta.insert(m.name(), dv);
                        run.delta_pct.insert(m.name(), pv);
                    }
                }
                run
            })
            .collect();
        ComparisonJson {
            baseline: c.columns.get(c.baseline).map(|b| b.label.as_str()),
            units: c.measures.iter().map(|m| (m.name(), m.unit())).collect(),
            runs,
            verdicts: c.verdicts(th),
        }
    }
}
