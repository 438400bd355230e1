//! The report's chart series: the time span of the charts and one pass over the inputs into
//! per-bucket envelopes (`gpumon_analysis::series`).

use anyhow::Result;

use gpumon_analysis::{BUCKETS, Collected, FINE, Grid, Series, Summary};
use gpumon_read::Discovered;
use gpumon_read::scan;
use gpumon_util::ReadMeter;

use crate::{SummarizeConfig, time_range};

/// The charts' time span: the summary's span (its GPUs', or its hosts' ticks when no host has a
/// GPU), widened by a timestamp pass only when some hosts have GPU rows and others none; cut into
/// the interactive charts' `BUCKETS × FINE` buckets.
pub fn span(summary: &Summary, found: &Discovered, cfg: &SummarizeConfig) -> Result<Grid> {
    let gpu_span = summary.start.zip(summary.end);
    let without = summary.hosts.iter().filter(|h| h.gpus.is_empty()).count();
    let mixed = without > 0 && without < summary.hosts.len();
    let (start, end) = match gpu_span {
        Some(r) if !mixed => r,
        _ => {
            let meter = ReadMeter::new(found.bytes(), cfg.meter);
            let range = time_range(&found.inputs, &cfg.read, &meter)?;
            meter.finish();
            let gpumon_analysis::TimeWindow { since, until } = summary.window;
            let clipped = range.map(|(a, b)| {
                (
                    a.max(since.unwrap_or(i64::MIN)),
                    b.min(until.map_or(i64::MAX, |u| u.saturating_sub(1))),
                )
            });
            let joined = match (clipped, gpu_span) {
                (Some((a, b)), Some((c, d))) => (a.min(c), b.max(d)),
                (Some(r), None) | (None, Some(r)) => r,
                (None, None) => (0, 0),
            };
            if joined.0 > joined.1 { gpu_span.unwrap_or((0, 0)) } else { joined }
        }
    };
    Ok(Grid::new(start, end, BUCKETS * FINE))
}

/// One pass over every input into the envelopes.
pub fn collect(
    found: &Discovered,
    cfg: &SummarizeConfig,
    grid: Grid,
    window: gpumon_analysis::TimeWindow,
) -> Result<Collected> {
    let meter = ReadMeter::new(found.bytes(), cfg.meter);
    let want = gpumon_analysis::charted_fields();
    let mut all = Collected::new(grid);
    for input in &found.inputs {
        let init = || Series::new(grid, window);
        let visit = |st: &mut Series, b: &arrow_array::RecordBatch, host: &str| st.visit(b, host);
        let (parts, _) = scan(input, &cfg.read, &want, &meter, &init, &visit)?;
        for p in parts {
            all.append(p);
        }
    }
    meter.finish();
    Ok(all)
}
