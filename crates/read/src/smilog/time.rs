//! Timestamps: nvidia-smi's `YYYY/MM/DD HH:MM:SS.mmm` (and close variants) read as local time, and
//! local → UTC in the log's zone (`--tz` or the machine's), with DST folds and gaps handled.

use chrono::{
    DateTime, MappedLocalTime, NaiveDate, NaiveDateTime, Offset, TimeDelta, TimeZone, Timelike, Utc,
};
use gpumon_util::zone::NamedZone;

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

/// Exactly nvidia-smi's format, `YYYY/MM/DD HH:MM:SS.mmm` (used by the sniff).
pub(super) fn is_nvsmi_timestamp(s: &str) -> bool {
    s.len() == 23 && s.as_bytes()[4] == b'/' && s.as_bytes()[19] == b'.' && parse_naive(s).is_some()
}

pub(super) fn has_timestamp_cell(line: &str) -> bool {
    line.split(',').any(|c| parse_naive(c.trim()).is_some())
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
