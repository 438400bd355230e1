//! The time window of a summary: `--since`, `--until` (absolute times, or offsets from the data's
//! start `+10m` / end `-1h`) and `--skip-warmup`. Offsets are measured from the first (last) sample
//! of all the inputs together. The window is `[since, until)`.

use std::time::Duration;

use chrono::{DateTime, NaiveDateTime};

use gpumon_util::Zone;

/// One end of the window as given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeSpec {
    /// An instant, UTC µs.
    At(i64),
    /// µs after the data's first sample.
    FromStart(i64),
    /// µs before the data's last sample.
    FromEnd(i64),
}

/// The window as given on the command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowSpec {
    /// `--since`: rows before this are left out.
    pub since: Option<TimeSpec>,
    /// `--until`: rows after this are left out.
    pub until: Option<TimeSpec>,
    /// `--skip-warmup`: this much of the start is left out.
    pub skip_warmup: Option<Duration>,
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// Parse a duration: a bare number is seconds, else `90s`, `10m`, `1h30m`.
pub(crate) fn parse_offset(s: &str) -> Option<Duration> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    humantime::parse_duration(s).ok()
}

/// Parse `--since` / `--until`: RFC 3339 (`2026-01-05T10:00:00Z`), `YYYY-MM-DD HH:MM[:SS]` in `tz`
/// (the machine's zone by default), a date `YYYY-MM-DD` (midnight), `+DURATION` or `-DURATION`.
pub fn parse_time(s: &str, tz: &Zone) -> Result<TimeSpec, String> {
    let t = s.trim();
    let bad = || {
        format!(
            "'{s}' is not a time: use RFC 3339 (2026-01-05T10:00:00Z), 'YYYY-MM-DD HH:MM:SS', +10m from the start or -1h from the end"
        )
    };
    if let Some(rest) = t.strip_prefix('+') {
        return parse_offset(rest).map(|d| TimeSpec::FromStart(micros(d))).ok_or_else(bad);
    }
    if let Some(rest) = t.strip_prefix('-') {
        return parse_offset(rest).map(|d| TimeSpec::FromEnd(micros(d))).ok_or_else(bad);
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Ok(TimeSpec::At(d.timestamp_micros()));
    }
    let naive =
        ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M", "%Y/%m/%d %H:%M:%S%.f"]
            .iter()
            .find_map(|f| NaiveDateTime::parse_from_str(t, f).ok())
            .or_else(|| {
                chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d")
                    .ok()
                    .and_then(|d| d.and_hms_opt(0, 0, 0))
            })
            .ok_or_else(bad)?;
    tz.utc_micros(&naive)
        .map(TimeSpec::At)
        .ok_or_else(|| format!("'{s}' does not exist in the time zone (a daylight-saving gap)"))
}

impl WindowSpec {
    /// Whether resolving needs the data's first and last sample.
    pub fn needs_range(&self) -> bool {
        self.skip_warmup.is_some()
            || [self.since, self.until]
                .iter()
                .any(|t| matches!(t, Some(TimeSpec::FromStart(_) | TimeSpec::FromEnd(_))))
    }

    /// The window in UTC µs, given the data's (first, last) sample when known.
    pub fn resolve(&self, range: Option<(i64, i64)>) -> TimeWindow {
        let at = |t: TimeSpec| -> Option<i64> {
            match t {
                TimeSpec::At(x) => Some(x),
                TimeSpec::FromStart(d) => range.map(|(s, _)| s.saturating_add(d)),
                TimeSpec::FromEnd(d) => range.map(|(_, e)| e.saturating_sub(d)),
            }
        };
        let mut since = self.since.and_then(at);
        if let (Some(w), Some((start, _))) = (self.skip_warmup, range) {
            let after = start.saturating_add(micros(w));
            since = Some(since.map_or(after, |s| s.max(after)));
        }
        TimeWindow { since, until: self.until.and_then(at) }
    }
}

/// A phase given as a time window (`--phase NAME=SINCE..UNTIL`, resolved): its label and window.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelledWindow {
    pub(crate) label: String,
    pub(crate) time: TimeWindow,
}

/// A resolved window `[since, until)` in UTC µs; an open end takes in everything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeWindow {
    /// Rows before this instant are left out.
    pub since: Option<i64>,
    /// Rows at or after this instant are left out.
    pub until: Option<i64>,
}

impl TimeWindow {
    /// Whether the instant `t` (UTC µs) is inside: at or after `since`, before `until`.
    #[inline]
    pub fn contains(self, t: i64) -> bool {
        t >= self.since.unwrap_or(i64::MIN) && t < self.until.unwrap_or(i64::MAX)
    }

    /// Whether either end is given.
    pub fn is_bounded(self) -> bool {
        self.since.is_some() || self.until.is_some()
    }
}

/// A phase given as a time window (`--phase NAME=SINCE..UNTIL`), for inputs without marks; an
/// empty end is the data's first (last) sample.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseWindow {
    pub(crate) label: String,
    pub(crate) since: Option<TimeSpec>,
    pub(crate) until: Option<TimeSpec>,
}

/// Parse `NAME=SINCE..UNTIL`; the times take the forms of `--since` (the name may hold `=`: `bs=64=+0..+5m`).
pub fn parse_phase_window(s: &str, tz: &Zone) -> Result<PhaseWindow, String> {
    let form = || {
        format!(
            "--phase '{s}': expected NAME=SINCE..UNTIL, e.g. 'bs=64=+10m..+20m' or 'eval=2026-01-05 10:00..'"
        )
    };
    let (head, until) = s.split_once("..").ok_or_else(form)?;
    let (label, since) = head.rsplit_once('=').ok_or_else(form)?;
    gpumon_schema::control::check_label(label.trim())
        .map_err(|why| format!("--phase '{s}': {why}"))?;
    let time = |t: &str| -> Result<Option<TimeSpec>, String> {
        let t = t.trim();
        if t.is_empty() {
            Ok(None)
        } else {
            parse_time(t, tz).map(Some).map_err(|e| format!("--phase '{s}': {e}"))
        }
    };
    Ok(PhaseWindow { label: label.trim().to_string(), since: time(since)?, until: time(until)? })
}

impl PhaseWindow {
    /// Whether resolving needs the data's first and last sample.
    pub fn needs_range(&self) -> bool {
        WindowSpec { since: self.since, until: self.until, skip_warmup: None }.needs_range()
    }

    /// The window in UTC µs, given the data's (first, last) sample; an open end takes in everything.
    pub fn resolve(&self, range: Option<(i64, i64)>) -> LabelledWindow {
        LabelledWindow {
            label: self.label.clone(),
            time: WindowSpec { since: self.since, until: self.until, skip_warmup: None }
                .resolve(range),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_windows() {
        let utc = &Zone::Named(gpumon_util::NamedZone::utc());
        let w = parse_phase_window("bs=64=+10s..+20s", utc).unwrap();
        assert_eq!(w.label, "bs=64");
        assert_eq!(
            (w.since, w.until),
            (Some(TimeSpec::FromStart(10_000_000)), Some(TimeSpec::FromStart(20_000_000)))
        );
        let r = w.resolve(Some((1_000_000, 99_000_000)));
        assert_eq!(r.time, TimeWindow { since: Some(11_000_000), until: Some(21_000_000) });
        let open = parse_phase_window("eval=1970-01-01 00:00:05..", utc).unwrap();
        assert_eq!(open.since, Some(TimeSpec::At(5_000_000)));
        assert_eq!(open.resolve(None).time, TimeWindow { since: Some(5_000_000), until: None });
        for bad in ["nope", "a=1", "=1..2", "a=soon..", "x\u{7}=1..2"] {
            assert!(parse_phase_window(bad, utc).is_err(), "{bad}");
        }
    }

    #[test]
    fn times_and_offsets() {
        let utc = &Zone::Named(gpumon_util::NamedZone::utc());
        assert_eq!(parse_time("+10m", utc), Ok(TimeSpec::FromStart(600_000_000)));
        assert_eq!(parse_time("-90", utc), Ok(TimeSpec::FromEnd(90_000_000)));
        assert_eq!(parse_time("1970-01-01T00:00:01Z", utc), Ok(TimeSpec::At(1_000_000)));
        assert_eq!(parse_time("1970-01-01 00:00:02", utc), Ok(TimeSpec::At(2_000_000)));
        let berlin = &Zone::parse("Europe/Berlin").unwrap();
        assert_eq!(parse_time("1970-01-01 01:00:00", berlin), Ok(TimeSpec::At(0)));
        assert_eq!(
            parse_time("1970-01-01 05:30:00", &Zone::parse("+05:30").unwrap()),
            Ok(TimeSpec::At(0))
        );
        assert!(parse_time("yesterday", utc).is_err());
        assert!(parse_time("+soon", utc).is_err());
    }

    #[test]
    fn resolve_with_warmup() {
        let w = WindowSpec {
            since: Some(TimeSpec::FromStart(10)),
            until: Some(TimeSpec::FromEnd(5)),
            skip_warmup: Some(Duration::from_micros(20)),
        };
        assert!(w.needs_range());
        assert_eq!(w.resolve(Some((100, 200))), TimeWindow { since: Some(120), until: Some(195) });
        let w = WindowSpec { since: Some(TimeSpec::At(7)), ..Default::default() };
        assert!(!w.needs_range());
        assert_eq!(w.resolve(None), TimeWindow { since: Some(7), until: None });
    }

    #[test]
    fn a_window_holds_its_start_not_its_end() {
        let w = TimeWindow { since: Some(10), until: Some(20) };
        assert!(w.is_bounded() && !TimeWindow::default().is_bounded());
        assert!(!w.contains(9) && w.contains(10) && w.contains(19) && !w.contains(20));
        let open = TimeWindow::default();
        assert!(open.contains(i64::MIN) && open.contains(i64::MAX - 1));
    }
}
