//! Timestamps: nvidia-smi's `YYYY/MM/DD HH:MM:SS.mmm` (and close variants) read as local time, and
//! local → UTC in the log's zone (`--tz` or the machine's), with DST folds and gaps handled; the
//! timestamps other writers put in a log: ISO 8601 with a `Z` or an offset, epoch seconds (with or
//! without fractions) and milliseconds, and `date`'s default format.

use chrono::{
    DateTime, MappedLocalTime, NaiveDate, NaiveDateTime, Offset, TimeDelta, TimeZone, Timelike, Utc,
};
use gpumon_util::NamedZone;

/// `YYYY/MM/DD HH:MM:SS[.fff]` (also `-` date separators and a `T`) as a naive local time.
pub(super) fn parse_naive(s: &str) -> Option<NaiveDateTime> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<u32> {
        let mut v = 0u32;
        for &c in b.get(from..to)? {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + u32::from(c - b'0');
        }
        Some(v)
    };
    let sep = b[4];
    if !(sep == b'/' || sep == b'-')
        || b[7] != sep
        || !(b[10] == b' ' || b[10] == b'T')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    let rest = &b[19..];
    let nanos = match rest {
        [] => 0,
        [b'.', digits @ ..] if !digits.is_empty() && digits.len() <= 9 => {
            let mut v = 0u32;
            for &c in digits {
                if !c.is_ascii_digit() {
                    return None;
                }
                v = v * 10 + u32::from(c - b'0');
            }
            v * 10u32.pow(9 - digits.len() as u32)
        }
        _ => return None,
    };
    NaiveDate::from_ymd_opt(y as i32, mo, d)?.and_hms_nano_opt(h, mi, sec, nanos)
}

/// A timestamp cell: a wall-clock time in the log's zone, or an instant (an offset, `Z`, epoch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Stamp {
    Local(NaiveDateTime),
    Instant(DateTime<Utc>),
}

impl Stamp {
    /// Milliseconds on the cell's own clock (for the gaps between rows).
    pub(super) fn ms(self) -> f64 {
        let us = match self {
            Stamp::Local(n) => n.and_utc().timestamp_micros(),
            Stamp::Instant(t) => t.timestamp_micros(),
        };
        us as f64 / 1000.0
    }
}

/// Any timestamp gpumon reads in a log: nvidia-smi's and ISO 8601 (see [`parse_naive`]) optionally
/// followed by `Z` or an offset (`+02:00`, `+0200`, `+02`), epoch seconds (9-10 digits, with or
/// without a fraction) or milliseconds (12-13 digits), or `date`'s default `Thu Jan  2 10:00:00 UTC
/// 2025` (a zone other than UTC/GMT is read in the log's zone).
pub(super) fn parse_stamp(s: &str) -> Option<Stamp> {
    if let Some(n) = parse_naive(s) {
        return Some(Stamp::Local(n));
    }
    if s.len() > 19
        && let Some(n) = s.get(..19).and_then(parse_naive)
    {
        return with_zone(n, &s[19..]);
    }
    if let Some(t) = parse_epoch(s) {
        return Some(Stamp::Instant(t));
    }
    parse_date_default(s)
}

/// `.fff` then `Z` / `+HH:MM` / `+HHMM` / `+HH` after a 19-character date and time.
fn with_zone(n: NaiveDateTime, rest: &str) -> Option<Stamp> {
    let cut = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let (frac, zone) = rest.split_at(cut);
    let n = if frac.is_empty() {
        n
    } else {
        let digits = frac.strip_prefix('.')?;
        if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let nanos: u32 = digits.parse().ok()?;
        n.with_nanosecond(nanos * 10u32.pow(9 - digits.len() as u32))?
    };
    if zone.is_empty() {
        return Some(Stamp::Local(n));
    }
    if zone.eq_ignore_ascii_case("z") {
        return Some(Stamp::Instant(n.and_utc()));
    }
    let sign: i64 = if zone.starts_with('-') { -1 } else { 1 };
    let d = &zone[1..];
    if !d.bytes().all(|c| c.is_ascii_digit() || c == b':') {
        return None;
    }
    let (h, m) = match d.split_once(':') {
        Some(hm) => hm,
        None if d.len() == 4 => d.split_at(2),
        None => (d, "0"),
    };
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    if h > 23 || m > 59 {
        return None;
    }
    let off = sign * (h * 3600 + m * 60);
    Some(Stamp::Instant(shift(n, off)?))
}

/// Epoch seconds (9-10 digits, optionally `.fff`) or milliseconds (12-13 digits): 2001 to 2286.
fn parse_epoch(s: &str) -> Option<DateTime<Utc>> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty()
        || !int.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
        || frac.len() > 9
    {
        return None;
    }
    let us = match int.len() {
        9 | 10 => {
            let secs: i64 = int.parse().ok()?;
            let f: f64 = if frac.is_empty() { 0.0 } else { format!("0.{frac}").parse().ok()? };
            secs.checked_mul(1_000_000)? + (f * 1e6).round() as i64
        }
        12 | 13 if frac.is_empty() => int.parse::<i64>().ok()?.checked_mul(1000)?,
        _ => return None,
    };
    DateTime::from_timestamp_micros(us)
}

/// `date`'s default output in the C locale: `Thu Jan  2 10:00:00 UTC 2025` (the zone optional).
fn parse_date_default(s: &str) -> Option<Stamp> {
    const MONTHS: [&str; 12] =
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let w: Vec<&str> = s.split_whitespace().collect();
    let (mon, day, time, zone, year) = match w.as_slice() {
        [_, mon, day, time, zone, year] => (*mon, *day, *time, Some(*zone), *year),
        [_, mon, day, time, year] => (*mon, *day, *time, None, *year),
        _ => return None,
    };
    let mon = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(mon))? as u32 + 1;
    let date = NaiveDate::from_ymd_opt(year.parse().ok()?, mon, day.parse().ok()?)?;
    let t = chrono::NaiveTime::parse_from_str(time, "%H:%M:%S%.f").ok()?;
    let n = date.and_time(t);
    match zone {
        Some(z) if ["utc", "gmt", "z"].iter().any(|u| u.eq_ignore_ascii_case(z)) => {
            Some(Stamp::Instant(n.and_utc()))
        }
        Some(z) if z.bytes().all(|c| c.is_ascii_alphabetic()) => Some(Stamp::Local(n)),
        None => Some(Stamp::Local(n)),
        Some(_) => None,
    }
}

/// Local → UTC conversion with a one-hour cache of the offset (logs are in time order).
pub(super) struct ZoneCache {
    /// The log's zone; None: this machine's.
    zone: Option<NamedZone>,
    hour: Option<NaiveDateTime>,
    off: i64,
}

/// Offset (seconds east of UTC) of the earliest instant `n` names in this machine's zone, and
/// whether it is unambiguous (the same answer as [`NamedZone::local_offset`]).
fn machine_offset(n: &NaiveDateTime) -> (Option<i64>, bool) {
    match chrono::Local.from_local_datetime(n) {
        MappedLocalTime::Single(d) => (Some(i64::from(d.offset().fix().local_minus_utc())), true),
        MappedLocalTime::Ambiguous(a, _) => {
            (Some(i64::from(a.offset().fix().local_minus_utc())), false)
        }
        MappedLocalTime::None => (None, false),
    }
}

fn shift(n: NaiveDateTime, off: i64) -> Option<DateTime<Utc>> {
    Some(n.checked_sub_signed(TimeDelta::try_seconds(off)?)?.and_utc())
}

impl ZoneCache {
    pub(super) fn new(tz: Option<NamedZone>) -> Self {
        ZoneCache { zone: tz, hour: None, off: 0 }
    }

    fn offset(&self, n: &NaiveDateTime) -> (Option<i64>, bool) {
        match &self.zone {
            Some(tz) => tz.local_offset(n),
            None => machine_offset(n),
        }
    }

    /// UTC instant of a timestamp cell (an instant as it is); the flag: a local time fell in a DST gap.
    pub(super) fn utc_of_stamp(&mut self, s: Stamp) -> Option<(DateTime<Utc>, bool)> {
        match s {
            Stamp::Local(n) => self.utc_of(n),
            Stamp::Instant(t) => Some((t, false)),
        }
    }

    /// UTC instant of a local time; DST ambiguity takes the earliest; a time in a DST gap is
    /// read with the offset from before the gap (the flag says so).
    pub(super) fn utc_of(&mut self, n: NaiveDateTime) -> Option<(DateTime<Utc>, bool)> {
        let hour = n.date().and_hms_opt(n.hour(), 0, 0)?;
        if self.hour == Some(hour) {
            return Some((shift(n, self.off)?, false));
        }
        let end = hour.checked_add_signed(TimeDelta::milliseconds(3_599_999))?;
        if let ((Some(a), true), (Some(b), true)) = (self.offset(&hour), self.offset(&end))
            && a == b
        {
            self.hour = Some(hour);
            self.off = a;
            return Some((shift(n, a)?, false));
        }
        self.hour = None;
        match self.offset(&n) {
            (Some(o), _) => Some((shift(n, o)?, false)),
            (None, _) => {
                // In a spring-forward gap: the logger's clock had not moved on yet.
                let before = n.checked_sub_signed(TimeDelta::hours(1))?;
                let o = self.offset(&before).0?;
                Some((shift(n, o)?, true))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_writers_timestamps() {
        let at = |s: &str| match parse_stamp(s) {
            Some(Stamp::Instant(t)) => Some(t.timestamp_millis()),
            Some(Stamp::Local(n)) => Some(n.and_utc().timestamp_millis()),
            None => None,
        };
        let want = Some(1_735_725_600_000);
        for s in [
            "1735725600",
            "1735725600.000",
            "1735725600000",
            "2025-01-01T10:00:00Z",
            "2025-01-01T11:00:00+01:00",
            "2025-01-01 11:00:00.000+0100",
            "2025-01-01T09:00:00-01",
            "Wed Jan  1 10:00:00 UTC 2025",
            "Wed Jan 1 10:00:00 2025",
        ] {
            assert_eq!(at(s), want, "{s}");
        }
        assert_eq!(at("1735725600.5"), Some(1_735_725_600_500));
        assert!(matches!(parse_stamp("Wed Jan  1 10:00:00 CET 2025"), Some(Stamp::Local(_))));
        for s in [
            "12345",
            "99999999999999",
            "2025-01-01T10:00:00+1é1",
            "2025-01-01T10:00:00+25:00",
            "Wed Foo 1 10:00:00 2025",
            "yesterday",
        ] {
            assert_eq!(parse_stamp(s), None, "{s}");
        }
    }

    #[test]
    fn parse_naive_accepts_nvsmi_and_rejects_junk() {
        assert!(parse_naive("2025/09/08 14:14:37.120").is_some());
        assert!(parse_naive("2025-09-08T14:14:37").is_some());
        for s in [
            "2025/13/08 14:14:37.120",
            "2025/09/08 14:14:37.",
            "2025/09/08 14:14:37.1234567890",
            "2025/09/08",
            "é025/09/08 14:14:37.120",
        ] {
            assert!(parse_naive(s).is_none(), "{s}");
        }
    }
}
