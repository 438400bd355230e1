//! `nvidia-smi dmon -o DT` output read as the log it is: each `#Date Time gpu pwr sm ...` header
//! line becomes the nvidia-smi CSV header of the same columns (`timestamp, index, power.draw [W],
//! utilization.gpu [%], ...`), each sample line a CSV row of the same cells (`-` is `[N/A]`), so
//! the log reader reads it like any other log: GPUs by the `gpu` column, local times in `--tz`,
//! repeated headers, a cut last line. Cells split at spaces or at commas (`--format csv`); older
//! drivers' `temp` is `gtemp`. Without its date and time (`-o DT`) a dmon sample has no time and
//! the file is refused ([`without_time`]).

use std::borrow::Cow;

/// dmon's column names and the nvidia-smi query names (with the unit dmon writes) they are.
/// Columns not listed (`bar1`, `ccpm`, `pviol`, `tviol`, `sbecc`, `dbecc`, `pci`, `rxpci`, `txpci`,
/// ...) are skipped (`_`): they are dmon's, and no `--columns` would name them.
const NAMES: &[(&str, &str)] = &[
    ("gpu", "index"),
    ("pwr", "power.draw [W]"),
    ("gtemp", "temperature.gpu"),
    ("temp", "temperature.gpu"),
    ("mtemp", "temperature.memory"),
    ("sm", "utilization.gpu [%]"),
    ("mem", "utilization.memory [%]"),
    ("enc", "utilization.encoder [%]"),
    ("dec", "utilization.decoder [%]"),
    ("jpg", "utilization.jpeg [%]"),
    ("ofa", "utilization.ofa [%]"),
    ("mclk", "clocks.mem [MHz]"),
    ("pclk", "clocks.sm [MHz]"),
    ("fb", "memory.used [MiB]"),
];

/// The cells of a line of dmon's: split at spaces, or at commas (`dmon --format csv`).
fn cells(line: &str) -> Vec<&str> {
    line.split(|c: char| c == ',' || c.is_whitespace()).filter(|w| !w.is_empty()).collect()
}

/// The words of a `#` line of dmon's (`# gpu pwr ...`, `#Date Time gpu ...`, the units line).
fn hash_words(line: &str) -> Option<Vec<&str>> {
    Some(cells(line.trim().strip_prefix('#')?))
}

/// Whether `line` is the header line of dmon's columns.
fn is_header(words: &[&str]) -> bool {
    let gpu = |w: &&str| w.eq_ignore_ascii_case("gpu");
    match words {
        [first, ..] if gpu(first) => !words.contains(&"pid"),
        [d, t, g, ..] => d.eq_ignore_ascii_case("date") && t.eq_ignore_ascii_case("time") && gpu(g),
        [t, g, ..] => t.eq_ignore_ascii_case("time") && gpu(g),
        _ => false,
    }
}

/// Whether the first line of `head` (a file's first bytes) is dmon's header.
pub(crate) fn is_dmon(head: &str) -> bool {
    let first = head.lines().map(str::trim).find(|l| !l.is_empty());
    first.and_then(hash_words).is_some_and(|w| is_header(&w))
}

/// Why a dmon log cannot be read: its header has no `Date` and `Time` columns (written by
/// `-o DT`), so its samples have no time. None when it has them.
pub(crate) fn without_time(head: &str) -> Option<String> {
    let first = head.lines().map(str::trim).find(|l| !l.is_empty())?;
    let words = hash_words(first)?;
    let dated = words.first().is_some_and(|w| w.eq_ignore_ascii_case("date"));
    (!dated).then(|| {
        "this is `nvidia-smi dmon` output without its date and time columns, so its samples \
         cannot be placed in time; gpumon reads dmon logs written with `-o DT` (e.g. `nvidia-smi \
         dmon -s pucm -o DT > gpu.log`), or log with `nvidia-smi \
         --query-gpu=timestamp,index,utilization.gpu,memory.used,power.draw --format=csv -l 1` \
         (or record with `gpumon record`)"
            .to_string()
    })
}

/// One line of a dmon log as the log reader's CSV: the header line as a CSV header, the units
/// line as nothing, a sample line `20240501 10:00:00 0 71 ...` as `2024/05/01 10:00:00, 0, 71,
/// ...`. Lines of other shapes are passed on as they are (the reader warns about them).
pub(crate) fn as_csv(line: &str) -> Cow<'_, str> {
    if let Some(words) = hash_words(line) {
        if !is_header(&words) {
            return Cow::Borrowed("");
        }
        let mut names = vec!["timestamp"];
        let rest = words.iter().skip_while(|w| !w.eq_ignore_ascii_case("gpu"));
        for w in rest {
            let lower = w.to_ascii_lowercase();
            names.push(NAMES.iter().find(|(d, _)| *d == lower).map_or("_", |(_, q)| *q));
        }
        return Cow::Owned(names.join(", "));
    }
    let words = cells(line);
    let [date, time, values @ ..] = words.as_slice() else { return Cow::Borrowed(line) };
    let d = date.as_bytes();
    if d.len() != 8 || !d.iter().all(u8::is_ascii_digit) || !time.contains(':') {
        return Cow::Borrowed(line);
    }
    let mut out = format!("{}/{}/{} {time}", &date[..4], &date[4..6], &date[6..]);
    for c in values {
        out.push_str(", ");
        out.push_str(if *c == "-" { "[N/A]" } else { c });
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DT: &str = "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n\
                      #YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %      %      %    MHz    MHz\n \
                      20240501   10:00:00      0     71     34      -      0      0      0      0    405    210\n";

    #[test]
    fn header_units_and_samples_become_csv() {
        let lines: Vec<String> = DT.lines().map(|l| as_csv(l).into_owned()).collect();
        assert_eq!(
            lines[0],
            "timestamp, index, power.draw [W], temperature.gpu, temperature.memory, \
             utilization.gpu [%], utilization.memory [%], utilization.encoder [%], \
             utilization.decoder [%], clocks.mem [MHz], clocks.sm [MHz]"
        );
        assert_eq!(lines[1], "");
        assert_eq!(lines[2], "2024/05/01 10:00:00, 0, 71, 34, [N/A], 0, 0, 0, 0, 405, 210");
        assert!(is_dmon(DT));
        assert!(without_time(DT).is_none());
    }

    #[test]
    fn dmon_without_date_is_refused_and_pmon_is_not_dmon() {
        let plain = "# gpu    pwr  gtemp\n# Idx      W      C\n    0     75     40\n";
        assert!(is_dmon(plain));
        assert!(without_time(plain).unwrap().contains("-o DT"));
        let timed = "#Time        gpu    pwr\n#HH:MM:SS    Idx      W\n 10:00:00      0     75\n";
        assert!(without_time(timed).is_some());
        assert!(!is_dmon("# gpu   pid  type  sm  mem\n# Idx    #    C/G  %   %\n"));
        assert!(!is_dmon("timestamp, index\n"));
    }

    #[test]
    fn dmon_as_csv_and_an_older_drivers_names_read_alike() {
        let csv = "#Date, Time, gpu, pwr, gtemp, sm\n#YYYYMMDD, HH:MM:SS, Idx, W, C, %\n20240501, 10:00:00, 0, 71, 34, -\n";
        let lines: Vec<String> = csv.lines().map(|l| as_csv(l).into_owned()).collect();
        assert_eq!(
            lines[0],
            "timestamp, index, power.draw [W], temperature.gpu, utilization.gpu [%]"
        );
        assert_eq!(lines[2], "2024/05/01 10:00:00, 0, 71, 34, [N/A]");
        assert!(is_dmon(csv) && without_time(csv).is_none());
        let old = "#Date       Time        gpu   pwr  temp    sm   mem\n";
        assert_eq!(
            as_csv(old),
            "timestamp, index, power.draw [W], temperature.gpu, utilization.gpu [%], utilization.memory [%]"
        );
    }

    #[test]
    fn columns_gpumon_has_no_name_for_are_skipped() {
        let h = "#Date Time gpu fb bar1 rxpci";
        assert_eq!(as_csv(h), "timestamp, index, memory.used [MiB], _, _");
    }
}
