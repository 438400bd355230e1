//! nvidia-smi's default table logged in a loop (`nvidia-smi -l 1 > gpu.log`, `while true; do
//! nvidia-smi; sleep 5; done >> gpu.log`) read as the log it is: each GPU's two table lines
//! (`|   0  NVIDIA A100-SXM4-80GB  On  | 00000000:07:00.0 Off | 0 |` and `| N/A 34C P0 61W / 400W |
//! 4MiB / 81920MiB | 0% Default |`) become one CSV row of the log reader's, dated by the table's
//! date line (`Wed May  1 10:00:00 2024`, local time: `--tz`); the process table and the frame are
//! skipped. The fields are those the table shows: index, name, bus id, fan, temperature, P-state,
//! power draw and cap, memory used and total, utilization.

/// The CSV header the rows are written under.
const HEADER: &str = "timestamp, index, name, pci.bus_id, fan.speed [%], temperature.gpu, pstate, \
                      power.draw [W], power.limit [W], memory.used [MiB], memory.total [MiB], \
                      utilization.gpu [%]";

/// Whether `head` (a file's first bytes) is nvidia-smi's table.
pub(crate) fn is_table(head: &str) -> bool {
    head.contains("NVIDIA-SMI") && head.lines().any(|l| l.starts_with("+---"))
}

/// The state between lines: the date of the table being read and the first line of a GPU's pair.
#[derive(Debug, Default)]
pub(crate) struct TableLog {
    started: bool,
    date: Option<String>,
    /// Index, name and bus id from a GPU's first line.
    gpu: Option<[String; 3]>,
}

impl TableLog {
    /// One line of the table as the log reader's line: the header for the file's first line, a
    /// CSV row for a GPU's second line, nothing for every other line.
    pub(crate) fn line(&mut self, text: &str) -> String {
        let t = text.trim();
        if !t.starts_with(['|', '+']) && super::time::parse_stamp(t).is_some() {
            self.date = Some(t.to_string());
            self.gpu = None;
        }
        if !std::mem::replace(&mut self.started, true) {
            return HEADER.to_string();
        }
        let cells: Vec<&str> = t.split('|').map(str::trim).collect();
        // `| a | b | c |`: five pieces, the three cells inside.
        let [_, a, b, c, _] = cells.as_slice() else { return String::new() };
        if let Some(first) = first_line(a, b) {
            self.gpu = Some(first);
            return String::new();
        }
        match (self.gpu.take(), self.date.as_ref()) {
            (Some([index, name, bus]), Some(date)) => second_line(a, b, c)
                .map_or_else(String::new, |rest| format!("{date}, {index}, {name}, {bus}, {rest}")),
            _ => String::new(),
        }
    }
}

/// `0  NVIDIA A100-SXM4-80GB  On` and `00000000:07:00.0 Off`: the index, name and bus id.
fn first_line(a: &str, b: &str) -> Option<[String; 3]> {
    let (index, rest) = a.split_once(char::is_whitespace)?;
    index.parse::<u32>().ok()?;
    let bus = b.split_whitespace().next()?;
    let is_bus = bus.len() >= 12 && bus.contains(':') && bus.contains('.');
    let rest = rest.trim();
    // The persistence mode (`On`/`Off`) ends the name cell.
    let name = rest.rsplit_once(char::is_whitespace).map_or(rest, |(n, _)| n.trim());
    is_bus.then(|| [index.to_string(), name.replace(',', " "), bus.to_string()])
}

/// `N/A 34C P0 61W / 400W`, `4MiB / 81920MiB`, `0% Default`: fan, temperature, P-state, power
/// draw and cap, memory used and total, utilization, as CSV cells (`[N/A]` where the table has none).
fn second_line(a: &str, b: &str, c: &str) -> Option<String> {
    let num = |s: &str, unit: &str| -> String {
        let v = s.trim().trim_end_matches(unit).trim();
        if v.parse::<f64>().is_ok() { v.to_string() } else { "[N/A]".to_string() }
    };
    let w: Vec<&str> = a.split_whitespace().collect();
    let (fan, temp, pstate) = (w.first()?, w.get(1)?, w.get(2)?);
    if !pstate.starts_with('P') && *pstate != "N/A" {
        return None;
    }
    let (draw, cap) = a.split_once(" / ").map_or(("N/A", "N/A"), |(l, r)| {
        (l.split_whitespace().last().unwrap_or("N/A"), r.split_whitespace().next().unwrap_or("N/A"))
    });
    let (used, total) = b.split_once(" / ")?;
    let util = c.split_whitespace().next()?;
    let cells = [
        num(fan, "%"),
        num(temp, "C"),
        if pstate.starts_with('P') { (*pstate).to_string() } else { "[N/A]".to_string() },
        num(draw, "W"),
        num(cap, "W"),
        num(used, "MiB"),
        num(total, "MiB"),
        num(util, "%"),
    ];
    Some(cells.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "Wed May  1 10:00:00 2024       \n\
+---------------------------------------------------------------------------------------+\n\
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |\n\
|-----------------------------------------+----------------------+----------------------+\n\
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n\
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |\n\
|                                         |                      |               MIG M. |\n\
|=========================================+======================+======================|\n\
|   0  NVIDIA A100-SXM4-80GB          On  | 00000000:07:00.0 Off |                    0 |\n\
| N/A   34C    P0              61W / 400W |      4MiB / 81920MiB |     97%      Default |\n\
|                                         |                      |             Disabled |\n\
+-----------------------------------------+----------------------+----------------------+\n\
|   1  NVIDIA A100-SXM4-80GB          On  | 00000000:0F:00.0 Off |                    0 |\n\
|  30%  41C    P2             N/A /  N/A  |  40000MiB / 81920MiB |      5%      Default |\n\
+-----------------------------------------+----------------------+----------------------+\n\
\n\
+---------------------------------------------------------------------------------------+\n\
| Processes:                                                                            |\n\
|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |\n\
|=======================================================================================|\n\
|    0   N/A  N/A     12345      C   python                                     1234MiB |\n\
+---------------------------------------------------------------------------------------+\n";

    #[test]
    fn each_gpu_pair_is_one_row_dated_by_the_table() {
        let mut t = TableLog::default();
        let rows: Vec<String> =
            TABLE.lines().map(|l| t.line(l)).filter(|l| !l.is_empty()).collect();
        assert_eq!(rows[0], HEADER);
        assert_eq!(
            rows[1],
            "Wed May  1 10:00:00 2024, 0, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, [N/A], 34, P0, \
             61, 400, 4, 81920, 97"
        );
        assert_eq!(
            rows[2],
            "Wed May  1 10:00:00 2024, 1, NVIDIA A100-SXM4-80GB, 00000000:0F:00.0, 30, 41, P2, \
             [N/A], [N/A], 40000, 81920, 5"
        );
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(is_table(TABLE));
    }

    #[test]
    fn an_older_drivers_table_reads_alike() {
        let old = "Mon Jan  6 09:15:02 2020\n\
+-----------------------------------------------------------------------------+\n\
| NVIDIA-SMI 440.33.01    Driver Version: 440.33.01    CUDA Version: 10.2     |\n\
|===============================+======================+======================|\n\
|   0  Tesla V100-SXM2...  On   | 00000000:06:00.0 Off |                    0 |\n\
| N/A   36C    P0    42W / 300W |      0MiB / 16160MiB |      0%      Default |\n\
+-------------------------------+----------------------+----------------------+\n";
        let mut t = TableLog::default();
        let rows: Vec<String> = old.lines().map(|l| t.line(l)).filter(|l| !l.is_empty()).collect();
        assert_eq!(
            rows[1],
            "Mon Jan  6 09:15:02 2020, 0, Tesla V100-SXM2..., 00000000:06:00.0, [N/A], 36, P0, 42, \
             300, 0, 16160, 0"
        );
    }
}
