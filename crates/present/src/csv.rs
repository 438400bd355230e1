//! The CSV report: one statistic per line, `scope,host,gpu,statistic,value,unit`, so that any set of
//! statistics (job fields included) fits one stable header. `scope` is `gpu`, `host`, `all_gpus` or
//! `all_hosts`; missing values are empty cells. Findings are not part of it (use JSON).

use gpumon_analysis::{StatValues, Summary};

fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One line per statistic, each starting with `prefix`.
fn rows(out: &mut String, prefix: &str, scope: &str, host: &str, gpu: &str, stats: &StatValues) {
    for (stat, v) in stats.iter() {
        let v = v.map_or_else(String::new, |x| x.to_string());
        out.push_str(&format!(
            "{prefix}{scope},{},{},{stat},{v},{}\n",
            cell(host),
            cell(gpu),
            cell(stat.unit())
        ));
    }
}

pub(crate) fn render(s: &Summary) -> String {
    let mut out = String::from("scope,host,gpu,statistic,value,unit\n");
    summary_rows(&mut out, s, "");
    out
}

/// `summarize --by phase`: a leading `phase` column, empty for the whole run's lines, then each
/// phase's lines (`-` for the unmarked rows).
pub(crate) fn render_phases(s: &Summary, phases: &gpumon_analysis::PhaseReport) -> String {
    let mut out = String::from("phase,scope,host,gpu,statistic,value,unit\n");
    summary_rows(&mut out, s, ",");
    for p in &phases.phases {
        summary_rows(
            &mut out,
            &p.summary,
            &format!("{},", cell(p.label.as_deref().unwrap_or("-"))),
        );
    }
    out
}

/// Every statistic line of a summary, each starting with `prefix`.
fn summary_rows(out: &mut String, s: &Summary, prefix: &str) {
    let mut row = |scope: &str, host: &str, gpu: &str, stats: &StatValues| {
        rows(out, prefix, scope, host, gpu, stats)
    };
    for h in &s.hosts {
        for g in &h.gpus {
            row("gpu", &h.name, &g.label, &g.stats);
        }
        if h.has_host_data {
            row("host", &h.name, "", &h.stats);
        }
    }
    row("all_gpus", "", "", &s.all_gpus);
    if s.hosts.iter().any(|h| h.has_host_data) {
        row("all_hosts", "", "", &s.all_hosts);
    }
}
