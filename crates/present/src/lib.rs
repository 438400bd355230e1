//! Presenters for a summary: aligned text table (default, fits 80 columns), markdown, JSON (the stable
//! shape in docs/summary-json.md) and CSV (one statistic per line). They only read the [`Summary`].
//!
//! The modules are private: the crate's API is the list at this root, what the commands use. A
//! summary ([`render`], [`SummaryFormat`], [`json_value`]), its phases ([`render_phases`],
//! [`phases_json_value`]), the job view ([`render_jobs`], [`JobPart`]), a comparison
//! ([`render_comparison`], [`CompareFormat`]), a `watch` frame ([`watch_frame`], [`WatchView`]).
//! One module stays public, [`html`]: the report page, assembled by the caller from named parts.

// Production functions stay under 80 lines (clippy.toml); tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod compact;
mod compare;
mod compare_json;
mod csv;
pub mod html;
mod job;
mod json;
mod markdown;
mod phases;
mod progress;
mod table;
mod watch;

pub use crate::compare::{CompareFormat, render as render_comparison};
pub use crate::job::{JobPart, render as render_jobs};
pub use crate::json::value as json_value;
pub use crate::phases::{json_value as phases_json_value, render as render_phases};
pub use crate::watch::{
    Liveness, View as WatchView, frame as watch_frame, waiting as watch_waiting,
};

use chrono::{DateTime, Utc};

use gpumon_analysis::{CheckResult, REASONS, Reason, Stat, StatValues, Summary};

/// Report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryFormat {
    /// Aligned text that fits 80 columns.
    Table,
    /// Markdown.
    Markdown,
    /// JSON (docs/summary-json.md).
    Json,
    /// CSV, one statistic per line.
    Csv,
}

/// Render the whole report.
pub fn render(s: &Summary, checks: &[CheckResult], f: SummaryFormat) -> String {
    match f {
        SummaryFormat::Table => table::render(s),
        SummaryFormat::Markdown => markdown::render(s),
        SummaryFormat::Json => json::render(s, checks),
        SummaryFormat::Csv => csv::render(s),
    }
}

/// `2026-01-05 10:00:00` (UTC).
pub(crate) fn ts(us: i64) -> String {
    DateTime::<Utc>::from_timestamp_micros(us)
        .map_or_else(|| "-".into(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string())
}

pub(crate) use gpumon_schema::rfc3339;

/// A duration for people: `850 ms`, `42.0 s`, `12m 05s`, `3h 20m`, `2d 04h`.
pub(crate) fn dur(s: f64) -> String {
    if !s.is_finite() {
        return "-".into();
    }
    if s < 1.0 {
        return format!("{:.0} ms", s * 1000.0);
    }
    if s < 60.0 {
        return format!("{s:.1} s");
    }
    let t = s.round() as u64;
    let (d, h, m, sec) = (t / 86400, t / 3600 % 24, t / 60 % 60, t % 60);
    if d > 0 {
        format!("{d}d {h:02}h")
    } else if h > 0 {
        format!("{h}h {m:02}m")
    } else {
        format!("{m}m {sec:02}s")
    }
}

/// A number with `digits` decimals, or `-` when missing.
pub(crate) fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

/// A count with thousands separators.
pub(crate) fn count(v: Option<f64>) -> String {
    let Some(v) = v else { return "-".into() };
    let s = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Wrap `text` to `width` columns, continuation lines indented by `indent`.
/// Leading spaces of `text` are kept; continuation lines get `indent` more.
pub(crate) fn wrap(text: &str, width: usize, indent: usize) -> String {
    let lead = text.len() - text.trim_start_matches(' ').len();
    gpumon_util::wrap_lines(&" ".repeat(lead), lead + indent, text.split_whitespace(), width)
        .join("\n")
}

/// One line per input that wrapped a command: `job: `CMD` exited with code 3 at 2026-01-05 10:00:00
/// UTC`; the command's control characters escaped.
pub(crate) fn job_lines(s: &Summary) -> Vec<String> {
    let many = s.inputs.len() > 1;
    (s.inputs.iter())
        .filter_map(|i| {
            let j = i.job.as_ref()?;
            let of =
                if many { format!(" ({})", gpumon_util::show(&i.path)) } else { String::new() };
            let how = match j.exit_code {
                Some(c) => {
                    let at = j.end.map_or_else(String::new, |t| format!(" at {} UTC", ts(t)));
                    format!("exited with code {c}{at}")
                }
                None => match j.left_running {
                    Some(pid) => format!("still running (pid {pid}) when recording was stopped"),
                    None => "no exit code recorded".to_string(),
                },
            };
            Some(format!("job{of}: `{}` {how}", gpumon_util::escape(&j.command)))
        })
        .collect()
}

/// Non-idle clock event reasons of a GPU above zero, as `name 12.0%`.
/// How the nvidia-smi logs among the inputs were read, a line per kind of reading (logs read the
/// same way share a line): the columns used and ignored, and how many GPUs and how they were
/// told apart.
pub(crate) fn read_as(s: &Summary) -> Vec<String> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for i in s.inputs.iter().filter(|i| i.kind == "nvidia-smi") {
        let cols: Vec<&str> = i.fields.iter().map(|f| f.name()).collect();
        let mut how = format!("columns {}", cols.join(", "));
        if !i.ignored_columns.is_empty() {
            how.push_str(&format!("; ignored {}", i.ignored_columns.join(", ")));
        }
        for n in &i.notes {
            how.push_str(&format!("; {n}"));
        }
        let name = short_name(&i.path);
        match groups.iter_mut().find(|(h, _)| *h == how) {
            Some((_, names)) => names.push(name),
            None => groups.push((how, vec![name])),
        }
    }
    groups
        .into_iter()
        .map(|(how, names)| {
            let shown = if names.len() > 3 {
                format!("{} nvidia-smi logs ({}, ...)", names.len(), names[..3].join(", "))
            } else {
                names.join(", ")
            };
            format!("{shown} read as: {how}")
        })
        .collect()
}

/// A file's name (not its folder) for a line of the report, its middle left out when longer than 60
/// characters (the JSON has the whole path).
fn short_name(path: &std::path::Path) -> String {
    let name = path.file_name().map_or(path, std::path::Path::new);
    let name = gpumon_util::show(name);
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= 60 {
        return name;
    }
    let head: String = chars[..28].iter().collect();
    let tail: String = chars[chars.len() - 28..].iter().collect();
    format!("{head}...{tail}")
}

pub(crate) fn throttle_list(stats: &StatValues) -> Vec<String> {
    REASONS
        .iter()
        .filter(|&&r| r != Reason::GpuIdle)
        .filter_map(|&r| {
            stats
                .get(Stat::Throttle(r))
                .filter(|&v| v > 0.0)
                .map(|v| format!("{} {v:.1}%", r.name()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(dur(0.25), "250 ms");
        assert_eq!(dur(42.0), "42.0 s");
        assert_eq!(dur(725.0), "12m 05s");
        assert_eq!(dur(4.0 * 3600.0 + 60.0), "4h 01m");
        assert_eq!(dur(3.0 * 86400.0), "3d 00h");
        assert_eq!(count(Some(1234567.0)), "1,234,567");
        assert_eq!(count(Some(12.0)), "12");
        assert_eq!(ts(0), "1970-01-01 00:00:00");
        assert_eq!(wrap("aaa bbb ccc", 7, 2), "aaa bbb\n  ccc");
        assert_eq!(wrap("  a b", 3, 2), "  a\n    b");
    }
}
