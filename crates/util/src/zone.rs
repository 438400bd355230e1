//! Time zones as `--tz` names them: `local`, `UTC`, IANA names in any case (`europe/berlin`) and
//! fixed offsets (`+02:00`, `-0530`, `Z`, `UTC+2`). IANA zones come from the system's tz database
//! (`/usr/share/zoneinfo`) through jiff, with jiff's bundled copy where the system has none: a
//! compiled-in database (chrono-tz) cost 1.9 MB and 29,000 relocations at every start.

use chrono::Datelike;
use chrono::{
    DateTime, FixedOffset, MappedLocalTime, NaiveDateTime, Offset, TimeZone, Timelike, Utc,
};

/// An IANA time zone, read from the tz database when `--tz` names it.
#[derive(Debug, Clone)]
pub struct NamedZone(jiff::tz::TimeZone);

impl PartialEq for NamedZone {
    fn eq(&self, other: &NamedZone) -> bool {
        self.name() == other.name()
    }
}

impl NamedZone {
    /// The zone called `name` (any case), None when the tz database has no such zone.
    pub fn get(name: &str) -> Option<NamedZone> {
        jiff::tz::db().get(name).ok().filter(|z| z.iana_name().is_some()).map(NamedZone)
    }

    pub fn utc() -> NamedZone {
        NamedZone(jiff::tz::TimeZone::UTC)
    }

    /// The zone's IANA name in its canonical case (`Europe/Berlin`).
    pub fn name(&self) -> &str {
        self.0.iana_name().unwrap_or("UTC")
    }

    /// The offset (seconds east of UTC) of the earliest instant the wall-clock time `n` names here,
    /// and whether it names only one; None for a time in a daylight-saving gap.
    pub fn local_offset(&self, n: &NaiveDateTime) -> (Option<i64>, bool) {
        use jiff::tz::AmbiguousOffset;
        let Some(civil) = civil(n) else { return (None, false) };
        match self.0.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => (Some(i64::from(offset.seconds())), true),
            // The earliest instant of a repeated time is the one with the larger offset.
            AmbiguousOffset::Fold { before, after } => {
                (Some(i64::from(before.seconds().max(after.seconds()))), false)
            }
            AmbiguousOffset::Gap { .. } => (None, false),
        }
    }

    /// The offset (seconds east of UTC) and abbreviation (`CEST`, `+03`) in force at `utc_s`.
    fn offset_at(&self, utc_s: i64) -> Option<(i32, String)> {
        let info = self.0.to_offset_info(jiff::Timestamp::from_second(utc_s).ok()?);
        Some((info.offset().seconds(), info.abbreviation().to_string()))
    }
}

fn civil(n: &NaiveDateTime) -> Option<jiff::civil::DateTime> {
    let small = |v: u32| i8::try_from(v).ok();
    jiff::civil::DateTime::new(
        i16::try_from(n.year()).ok()?,
        small(n.month())?,
        small(n.day())?,
        small(n.hour())?,
        small(n.minute())?,
        small(n.second())?,
        i32::try_from(n.nanosecond()).ok()?,
    )
    .ok()
}

/// `fmt` with every `%Z` replaced by `abbrev` (chrono prints a fixed offset's `%Z` as `+02:00`).
fn with_abbreviation(fmt: &str, abbrev: &str) -> String {
    let mut out = String::with_capacity(fmt.len() + abbrev.len());
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        match (c, c == '%') {
            (_, false) => out.push(c),
            (_, true) => match chars.next() {
                Some('Z') => out.push_str(&abbrev.replace('%', "%%")),
                Some(d) => {
                    out.push('%');
                    out.push(d);
                }
                None => out.push('%'),
            },
        }
    }
    out
}

/// The zone of wall-clock times that carry none (nvidia-smi logs, `--since 'YYYY-MM-DD HH:MM'`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Zone {
    /// This machine's zone (`TZ`, else /etc/localtime).
    #[default]
    Local,
    Named(NamedZone),
    Fixed(FixedOffset),
}

impl Zone {
    /// Parse a `--tz` value (case-insensitive).
    pub fn parse(s: &str) -> Result<Zone, String> {
        let t = s.trim();
        let bad = || {
            format!(
                "unknown time zone '{s}': use local, UTC, an IANA name (Europe/Berlin) or an offset (+02:00, -0530)"
            )
        };
        if t.is_empty() {
            return Err("--tz is empty: give a zone (local, UTC, Europe/Berlin...)".into());
        }
        if t.eq_ignore_ascii_case("local") {
            return Ok(Zone::Local);
        }
        if t.eq_ignore_ascii_case("utc") || t.eq_ignore_ascii_case("z") {
            return Ok(Zone::Named(NamedZone::utc()));
        }
        if let Some(off) = fixed_offset(t) {
            return off.map(Zone::Fixed).ok_or_else(bad);
        }
        NamedZone::get(t).map(Zone::Named).ok_or_else(bad)
    }

    /// UTC microseconds of a wall-clock time in this zone: the earliest of an ambiguous time (the
    /// hour repeated when daylight saving ends), None for a time in a daylight-saving gap.
    pub fn utc_micros(&self, naive: &NaiveDateTime) -> Option<i64> {
        fn earliest<Z: TimeZone>(m: MappedLocalTime<DateTime<Z>>) -> Option<i64> {
            match m {
                MappedLocalTime::Single(d) => Some(d.timestamp_micros()),
                MappedLocalTime::Ambiguous(a, b) => {
                    Some(a.timestamp_micros().min(b.timestamp_micros()))
                }
                MappedLocalTime::None => None,
            }
        }
        match self {
            Zone::Local => earliest(chrono::Local.from_local_datetime(naive)),
            Zone::Named(z) => {
                let off = z.local_offset(naive).0?;
                Some(naive.and_utc().timestamp_micros() - off * 1_000_000)
            }
            Zone::Fixed(o) => earliest(o.from_local_datetime(naive)),
        }
    }

    /// An instant as wall-clock time in this zone, with `chrono` format `fmt` (`%Z` is the zone's
    /// abbreviation where it has one, `%:z` the offset).
    pub fn format(&self, utc_us: i64, fmt: &str) -> Option<String> {
        let t = DateTime::<Utc>::from_timestamp_micros(utc_us)?;
        Some(match self {
            Zone::Local => t.with_timezone(&chrono::Local).format(fmt).to_string(),
            Zone::Named(z) => {
                let (off, abbrev) = z.offset_at(t.timestamp())?;
                t.with_timezone(&FixedOffset::east_opt(off)?)
                    .format(&with_abbreviation(fmt, &abbrev))
                    .to_string()
            }
            Zone::Fixed(o) => t.with_timezone(o).format(fmt).to_string(),
        })
    }

    /// The zone's name for people (`Europe/Berlin`, `UTC+05:30`); None for this machine's zone.
    pub fn name(&self) -> Option<String> {
        match self {
            Zone::Local => None,
            Zone::Named(z) => Some(z.name().to_string()),
            Zone::Fixed(o) => Some(format!("UTC{o}")),
        }
    }

    /// For a reader that converts wall-clock times with an IANA zone (None = local): that zone,
    /// and the microseconds to subtract from what it returns. A fixed offset is read as UTC and
    /// shifted afterwards (exact: a fixed offset has no daylight saving).
    pub fn as_tz(&self) -> (Option<NamedZone>, i64) {
        match self {
            Zone::Local => (None, 0),
            Zone::Named(z) => (Some(z.clone()), 0),
            Zone::Fixed(o) => {
                (Some(NamedZone::utc()), i64::from(o.fix().local_minus_utc()) * 1_000_000)
            }
        }
    }
}

/// `+02:00`, `+0200`, `+02`, `-5:30`, `UTC+2`, `GMT-03:00`: Some(the offset, or None when out of
/// range); None when `s` is not shaped like an offset.
fn fixed_offset(s: &str) -> Option<Option<FixedOffset>> {
    let lower = s.to_ascii_lowercase();
    let rest = lower.strip_prefix("utc").or_else(|| lower.strip_prefix("gmt")).unwrap_or(&lower);
    let (sign, digits) = match rest.as_bytes().first()? {
        b'+' => (1, &rest[1..]),
        b'-' => (-1, &rest[1..]),
        _ => return None,
    };
    let (h, m) = match digits.split_once(':') {
        Some((h, m)) => (h, m),
        None if digits.len() == 4 => digits.split_at(2),
        None => (digits, "0"),
    };
    if h.is_empty() || h.len() > 2 || m.is_empty() || m.len() > 2 {
        return None;
    }
    let (h, m): (i32, i32) = (h.parse().ok()?, m.parse().ok()?);
    if h > 14 || m > 59 {
        return Some(None);
    }
    Some(FixedOffset::east_opt(sign * (h * 3600 + m * 60)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn berlin() -> NamedZone {
        NamedZone::get("Europe/Berlin").unwrap()
    }

    fn naive(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    #[test]
    fn names_in_any_case_and_offsets() {
        assert_eq!(Zone::parse("local"), Ok(Zone::Local));
        assert_eq!(Zone::parse("LOCAL"), Ok(Zone::Local));
        assert!(Zone::parse(" ").is_err());
        for utc in ["UTC", "utc", "Utc", "Z", "z"] {
            assert_eq!(Zone::parse(utc), Ok(Zone::Named(NamedZone::utc())), "{utc}");
        }
        assert_eq!(Zone::parse("Europe/Berlin"), Ok(Zone::Named(berlin())));
        assert_eq!(Zone::parse("europe/berlin"), Ok(Zone::Named(berlin())));
        assert_eq!(
            Zone::parse("AMERICA/NEW_YORK"),
            Ok(Zone::Named(NamedZone::get("America/New_York").unwrap()))
        );
        let east = |s: i32| Ok(Zone::Fixed(FixedOffset::east_opt(s).unwrap()));
        assert_eq!(Zone::parse("+02:00"), east(7200));
        assert_eq!(Zone::parse("+0200"), east(7200));
        assert_eq!(Zone::parse("+2"), east(7200));
        assert_eq!(Zone::parse("-0530"), east(-19800));
        assert_eq!(Zone::parse("-05:30"), east(-19800));
        assert_eq!(Zone::parse("UTC+05:30"), east(19800));
        assert_eq!(Zone::parse("utc-3"), east(-10800));
        for bad in ["Mars/Olympus", "+25:00", "+02:75", "+", "+123", "2"] {
            assert!(Zone::parse(bad).unwrap_err().contains("unknown time zone"), "{bad}");
        }
    }

    #[test]
    fn conversions() {
        let t = naive("2026-01-05 12:00:00");
        let utc = Zone::parse("utc").unwrap().utc_micros(&t).unwrap();
        assert_eq!(Zone::parse("+02:00").unwrap().utc_micros(&t), Some(utc - 7_200_000_000));
        assert_eq!(Zone::parse("-0530").unwrap().utc_micros(&t), Some(utc + 19_800_000_000));
        assert_eq!(Zone::parse("europe/berlin").unwrap().utc_micros(&t), Some(utc - 3_600_000_000));
        // 02:30 on the last Sunday of March does not exist in Berlin.
        assert_eq!(
            Zone::parse("Europe/Berlin").unwrap().utc_micros(&naive("2026-03-29 02:30:00")),
            None
        );
        let z = Zone::parse("-05:30").unwrap();
        assert_eq!(z.format(utc, "%H:%M %:z").as_deref(), Some("06:30 -05:30"));
        assert_eq!(z.name().as_deref(), Some("UTC-05:30"));
        assert_eq!(z.as_tz(), (Some(NamedZone::utc()), -19_800_000_000));
        assert_eq!(Zone::Local.as_tz(), (None, 0));
    }

    #[test]
    fn named_zones_fold_gap_and_abbreviation() {
        let b = Zone::parse("europe/BERLIN").unwrap();
        assert_eq!(b.name().as_deref(), Some("Europe/Berlin"));
        // 02:30 on the last Sunday of October happens twice in Berlin: the earliest is CEST's.
        let fold = naive("2026-10-25 02:30:00");
        assert_eq!(b.utc_micros(&fold), Some(fold.and_utc().timestamp_micros() - 7_200_000_000));
        assert_eq!(berlin().local_offset(&fold), (Some(7200), false));
        assert_eq!(berlin().local_offset(&naive("2026-01-05 12:00:00")), (Some(3600), true));
        assert_eq!(berlin().local_offset(&naive("2026-03-29 02:30:00")), (None, false));
        let summer = naive("2026-07-01 10:00:00").and_utc().timestamp_micros();
        assert_eq!(
            b.format(summer, "%H:%M %Z (UTC%:z) %%Z").as_deref(),
            Some("12:00 CEST (UTC+02:00) %Z")
        );
        let winter = naive("2026-01-05 10:00:00").and_utc().timestamp_micros();
        assert_eq!(b.format(winter, "%Z").as_deref(), Some("CET"));
        assert_eq!(Zone::parse("utc").unwrap().format(winter, "%H %Z").as_deref(), Some("10 UTC"));
    }
}
