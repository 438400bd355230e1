//! Things said once instead of once per GPU: findings grouped over the GPUs they hold for (with their
//! evidence folded into one line), GPU lists as ranges (`GPUs 0-7`), routine event counts. Shared by
//! the table, markdown and HTML presenters; the JSON keeps the per-GPU findings and adds the groups.

use gpumon_analysis::{Finding, RoutineCount, Severity, Summary};

/// One finding as shown: a rule that holds for one or more GPUs of a host (or for the host).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group<'a> {
    pub rule: &'static str,
    pub severity: Severity,
    pub host: &'a str,
    /// GPU labels in the findings' order; empty for a host-wide finding.
    pub gpus: Vec<&'a str>,
    /// One line when the GPUs' evidence folds into one (equal, or differing only in numbers, shown
    /// as `lowest-highest`); else one line per GPU, `GPU 3: ...`.
    pub evidence: Vec<String>,
    pub fix: &'static str,
}

impl Group<'_> {
    /// `GPUs 0-7: ` / `GPU 3: ` / `` (host-wide).
    pub(crate) fn who(&self) -> String {
        if self.gpus.is_empty() { String::new() } else { format!("{}: ", gpu_list(&self.gpus)) }
    }
}

/// The findings of a run or phase, each rule once with its GPUs, host by host ([`group`]).
pub(crate) fn groups_of(s: &Summary) -> Vec<Group<'_>> {
    s.hosts.iter().flat_map(|h| group(&h.findings)).collect()
}

/// Findings grouped by rule and fix, in the order of each group's first finding (the summary lists
/// errors first, then warnings, then info). Host-wide findings and Xid errors with different
/// evidence stay apart.
pub(crate) fn group(findings: &[Finding]) -> Vec<Group<'_>> {
    let mut groups: Vec<(Group<'_>, Vec<&Finding>)> = Vec::new();
    for f in findings {
        let joins = |g: &Group<'_>, members: &[&Finding]| {
            g.rule == f.rule
                && g.host == f.host
                && g.fix == f.fix
                && f.gpu.is_some()
                && !g.gpus.is_empty()
                && (f.severity != Severity::Error
                    || members.iter().all(|m| m.evidence == f.evidence))
        };
        match groups.iter_mut().find(|(g, m)| joins(g, m)) {
            Some((g, members)) => {
                g.gpus.push(f.gpu.as_deref().unwrap_or(""));
                members.push(f);
            }
            None => {
                let g = Group {
                    rule: f.rule,
                    severity: f.severity,
                    host: &f.host,
                    gpus: f.gpu.as_deref().into_iter().collect(),
                    evidence: Vec::new(),
                    fix: f.fix,
                };
                groups.push((g, vec![f]));
            }
        }
    }
    groups
        .into_iter()
        .map(|(mut g, members)| {
            g.evidence = fold(&members);
            g
        })
        .collect()
}

/// The evidence of a group's findings: one line when it folds, else one per GPU.
fn fold(members: &[&Finding]) -> Vec<String> {
    let texts: Vec<&str> = members.iter().map(|f| f.evidence.as_str()).collect();
    if let Some(one) = fold_numbers(&texts) {
        return vec![one];
    }
    members
        .iter()
        .map(|f| format!("GPU {}: {}", f.gpu.as_deref().unwrap_or("?"), f.evidence))
        .collect()
}

/// Split a text into alternating words and numbers (`[0-9]+(.[0-9]+)?`); numbers at odd positions.
fn pieces(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let (mut out, mut start, mut i) = (Vec::new(), 0, 0);
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
                j += 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
            }
            out.push(&s[start..i]);
            out.push(&s[i..j]);
            start = j;
            i = j;
        } else {
            i += 1;
        }
    }
    out.push(&s[start..]);
    out
}

/// Texts equal but for their numbers, as one text with each differing number as `lowest-highest`;
/// None when their words differ.
fn fold_numbers(texts: &[&str]) -> Option<String> {
    let split: Vec<Vec<&str>> = texts.iter().map(|t| pieces(t)).collect();
    let first = split.first()?;
    if split.iter().any(|p| p.len() != first.len()) {
        return None;
    }
    let mut out = String::new();
    for (k, piece) in first.iter().enumerate() {
        let all: Vec<&str> = split.iter().map(|p| p[k]).collect();
        if k % 2 == 0 {
            if all.iter().any(|w| w != piece) {
                return None;
            }
            out.push_str(piece);
            continue;
        }
        let value = |s: &str| s.parse::<f64>().unwrap_or(0.0);
        let lo = all.iter().copied().min_by(|a, b| value(a).total_cmp(&value(b))).unwrap_or(piece);
        let hi = all.iter().copied().max_by(|a, b| value(a).total_cmp(&value(b))).unwrap_or(piece);
        if value(lo) == value(hi) {
            out.push_str(lo);
        } else {
            out.push_str(&format!("{lo}-{hi}"));
        }
    }
    Some(out)
}

/// `GPU 3`, `GPUs 0-7`, `GPUs 0-3, 5`; labels that are not indices are listed as they are.
pub(crate) fn gpu_list(labels: &[&str]) -> String {
    let word = if labels.len() == 1 { "GPU" } else { "GPUs" };
    format!("{word} {}", ranges(labels))
}

/// Index labels as ranges (`0-3, 5`), in the order given where they are not all indices.
pub(crate) fn ranges(labels: &[&str]) -> String {
    let mut idx: Vec<u64> =
        match labels.iter().map(|l| l.parse::<u64>()).collect::<Result<Vec<_>, _>>() {
            Ok(v) => v,
            Err(_) => return labels.join(", "),
        };
    idx.sort_unstable();
    idx.dedup();
    gpumon_util::index_ranges(&idx, 2)
}

/// The routine events of one host as one line per kind: `clock changes (routine, not faults): 3 on
/// each of GPUs 0-7` or `GPU 0 3, GPU 1 5`.
pub(crate) fn routine_lines(host: &str, counts: &[RoutineCount]) -> Vec<String> {
    let mut kinds: Vec<&str> =
        counts.iter().filter(|c| c.host == host).map(|c| c.kind.as_str()).collect();
    kinds.dedup();
    kinds
        .into_iter()
        .map(|kind| {
            let of: Vec<&RoutineCount> =
                counts.iter().filter(|c| c.host == host && c.kind == kind).collect();
            let name = if kind == "pstate" { "P-state changes" } else { "clock changes" };
            let label = |c: &RoutineCount| c.gpu.map_or_else(|| "?".to_string(), |g| g.to_string());
            let body = match of.first() {
                Some(f) if of.len() > 1 && of.iter().all(|c| c.count == f.count) => {
                    let labels: Vec<String> = of.iter().map(|c| label(c)).collect();
                    let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
                    format!("{} on each of {}", f.count, gpu_list(&refs))
                }
                _ => of
                    .iter()
                    .map(|c| format!("GPU {} {}", label(c), c.count))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            format!("{name} (routine, not faults): {body}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(rule: &'static str, sev: Severity, gpu: Option<&str>, evidence: &str) -> Finding {
        Finding {
            rule,
            severity: sev,
            host: "h".into(),
            gpu: gpu.map(str::to_string),
            evidence: evidence.into(),
            fix: "fix it",
        }
    }

    #[test]
    fn ranges_and_folds() {
        assert_eq!(gpu_list(&["0", "1", "2", "3", "5"]), "GPUs 0-3, 5");
        assert_eq!(gpu_list(&["4"]), "GPU 4");
        assert_eq!(gpu_list(&["GPU-a", "GPU-b"]), "GPUs GPU-a, GPU-b");
        assert_eq!(
            fold_numbers(&["peak 79000 MiB = 96.9% of 81559", "peak 79400 MiB = 97.4% of 81559"])
                .as_deref(),
            Some("peak 79000-79400 MiB = 96.9-97.4% of 81559")
        );
        assert_eq!(fold_numbers(&["a 1 b", "a 1 c"]), None);
        let all = [
            f("oom_risk", Severity::Warning, Some("0"), "peak 1"),
            f("oom_risk", Severity::Warning, Some("1"), "peak 2"),
            f("imbalance", Severity::Warning, None, "x"),
            f("t", Severity::Warning, Some("0"), "in 5% (a)"),
            f("t", Severity::Warning, Some("1"), "in 6% (b)"),
        ];
        let g = group(&all);
        assert_eq!(g.len(), 3);
        assert_eq!(
            (g[0].who(), g[0].evidence.clone()),
            ("GPUs 0-1: ".to_string(), vec!["peak 1-2".to_string()])
        );
        assert_eq!(g[1].who(), "");
        assert_eq!(g[2].evidence, ["GPU 0: in 5% (a)", "GPU 1: in 6% (b)"]);
        let xid = [
            f("xid", Severity::Error, Some("0"), "Xid 79"),
            f("xid", Severity::Error, Some("1"), "Xid 94"),
        ];
        assert_eq!(group(&xid).len(), 2, "different Xids stay apart");
    }
}
