//! The CSV report: one statistic per line, `scope,host,gpu,statistic,value,unit`, so that any set of
//! statistics (job fields included) fits one stable header. `scope` is `gpu`, `host`, `all_gpus` or
//! `all_hosts`; missing values are empty cells. Findings are not part of it (use JSON).

use crate::analysis::Summary;
use crate::analysis::stats::Stats;

fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

fn rows(out: &mut String, scope: &str, host: &str, gpu: &str, stats: &Stats) {
    for (stat, v) in stats.iter() {
        let v = v.map_or_else(String::new, |x| x.to_string());
        out.push_str(&format!("{scope},{},{},{stat},{v},{}\n", cell(host), cell(gpu), cell(stat.unit())));
    }
}

pub fn render(s: &Summary) -> String {
    let mut out = String::from("scope,host,gpu,statistic,value,unit\n");
    for h in &s.hosts {
        for g in &h.gpus {
            rows(&mut out, "gpu", &h.name, &g.label, &g.stats);
        }
        if h.has_host_data {
            rows(&mut out, "host", &h.name, "", &h.stats);
        }
    }
    rows(&mut out, "all_gpus", "", "", &s.all_gpus);
    if s.hosts.iter().any(|h| h.has_host_data) {
        rows(&mut out, "all_hosts", "", "", &s.all_hosts);
    }
    out
}
