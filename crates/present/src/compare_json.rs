//! The JSON forms of a comparison: the comparison itself ([`comparison`], also inside
//! `summarize --by phase --format json`) and `gpumon compare --format json`'s whole document, the
//! `gpumon.compare/1` contract ([`render`]): the comparison, each run's findings, the runs whose
//! inputs hold several recordings, the wrapped commands and the checks.

use serde_json::{Map, Value, json};

use crate::compact::groups_of;
use crate::rfc3339;
use gpumon_analysis::{CheckResult, Comparison, Summary, Thresholds};

/// The schema name of [`render`]'s document.
pub(crate) const SCHEMA: &str = "gpumon.compare/1";

/// `gpumon compare`'s JSON document (pretty, one trailing newline) of the runs `cols` (label,
/// summary), their comparison `c` and the results of its checks.
pub(crate) fn render(
    cols: &[(String, &Summary)],
    c: &Comparison,
    th: &Thresholds,
    results: &[CheckResult],
) -> String {
    let mut v = comparison(c, th);
    if let Some(o) = v.as_object_mut() {
        o.insert("schema".into(), json!(SCHEMA));
        o.insert("findings".into(), findings_json(cols));
        // Runs whose inputs hold several recordings, with those recordings (see summarize's JSON).
        let several: Vec<_> = cols
            .iter()
            .filter_map(|(label, s)| {
                let r = gpumon_schema::recordings_note(&s.inputs);
                (!r.is_empty()).then(|| json!({"run": label, "note": r}))
            })
            .collect();
        o.insert("recordings".into(), json!(several));
        o.insert("jobs".into(), jobs_json(cols));
        let checks: Vec<_> = results
            .iter()
            .map(|r| json!({"check": r.check, "passed": r.failures.is_empty(), "failures": r.failures}))
            .collect();
        o.insert("checks".into(), json!(checks));
    }
    let mut out = serde_json::to_string_pretty(&v).unwrap_or_else(|_| "{}".into());
    out.push('\n');
    out
}

/// The comparison as JSON: per run or phase its statistics, their changes against the baseline
/// (`delta`, `delta_pct`; empty for the baseline itself) and the verdicts.
pub(crate) fn comparison(c: &Comparison, th: &Thresholds) -> Value {
    let runs: Vec<Value> = c
        .columns
        .iter()
        .enumerate()
        .map(|(k, col)| {
            let (mut stats, mut d, mut p) = (Map::new(), Map::new(), Map::new());
            for (i, &m) in c.measures.iter().enumerate() {
                stats.insert(m.name(), col.values[i].map_or(Value::Null, |v| json!(v)));
                if k != c.baseline {
                    let (dv, pv) = c.delta(i, k);
                    d.insert(m.name(), dv.map_or(Value::Null, |v| json!(v)));
                    p.insert(m.name(), pv.map_or(Value::Null, |v| json!(v)));
                }
            }
            json!({
                "label": col.label,
                "baseline": k == c.baseline,
                "start": col.start.map(rfc3339),
                "end": col.end.map(rfc3339),
                "stats": stats,
                "delta": d,
                "delta_pct": p,
            })
        })
        .collect();
    let units: Map<String, Value> =
        c.measures.iter().map(|m| (m.name(), json!(m.unit()))).collect();
    json!({
        "baseline": c.columns.get(c.baseline).map(|b| b.label.clone()),
        "units": units,
        "runs": runs,
        "verdicts": c.verdicts(th),
    })
}

/// Each run's (or phase's) findings, `label -> [{rule, severity, host, gpus, evidence, fix}]`.
pub(crate) fn findings_json(cols: &[(String, &Summary)]) -> Value {
    let mut m = Map::new();
    for (label, s) in cols {
        let list: Vec<Value> = groups_of(s)
            .iter()
            .map(|g| {
                json!({"rule": g.rule, "severity": g.severity.label(), "host": g.host, "gpus": g.gpus,
                       "evidence": g.evidence, "fix": g.fix})
            })
            .collect();
        m.insert(label.clone(), json!(list));
    }
    Value::Object(m)
}

/// Each run's (or phase's) wrapped commands, `label -> [{command, exit_code, end}]`.
pub(crate) fn jobs_json(cols: &[(String, &Summary)]) -> Value {
    let m: Map<String, Value> = (cols.iter())
        .map(|(label, s)| {
            let jobs: Vec<Value> =
                s.inputs.iter().filter_map(|i| i.job.as_ref()).map(crate::json::job).collect();
            (label.clone(), json!(jobs))
        })
        .collect();
    Value::Object(m)
}
