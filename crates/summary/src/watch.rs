//! What `gpumon watch` reads of a recording besides its status file: the last tick of what it has
//! written, for a recording nobody writes any more, and the findings of everything written so far.

use std::path::Path;

use anyhow::Result;

use crate::{SummarizeConfig, summarize};
use gpumon_analysis::{Finding, LastTick};
use gpumon_read::discover;
use gpumon_read::in_time_order;
use gpumon_read::{ReadOptions, scan};
use gpumon_schema::catalog::{Field, Table};
use gpumon_schema::{LIVE_SCHEMA, LiveStatus, rfc3339};
use gpumon_util::ReadMeter;

/// The last tick of what is on disk, for a recording nobody writes (no status file).
pub fn last_tick(path: &Path, read: &ReadOptions) -> Option<LiveStatus> {
    let found = in_time_order(discover(&[path.to_path_buf()]).ok()?);
    let want: Vec<Field> = Field::all().filter(|f| Table::of([*f]) == Table::Metrics).collect();
    let meter = ReadMeter::new(0, false);
    let visit = |st: &mut LastTick, b: &arrow_array::RecordBatch, host: &str| -> Result<()> {
        st.visit(b, host);
        Ok(())
    };
    let mut last = LastTick::default();
    for input in &found.inputs {
        let (parts, _) = scan(input, read, &want, &meter, &LastTick::default, &visit).ok()?;
        for p in parts {
            last.merge(p);
        }
    }
    let first = last.rows.first()?;
    Some(LiveStatus {
        schema: LIVE_SCHEMA.to_string(),
        host: first.get("host").and_then(|h| h.as_str()).unwrap_or_default().to_string(),
        output: path.display().to_string(),
        phase: first.get("phase").and_then(|p| p.as_str()).map(str::to_string),
        ts: Some(rfc3339(last.ts)),
        rows: last.rows,
        ..LiveStatus::default()
    })
}

/// The findings of everything the recording has written so far, or why there is nothing to look at.
pub fn findings(path: &Path, read: &ReadOptions) -> Result<Vec<Finding>, String> {
    let cfg = SummarizeConfig {
        inputs: vec![path.to_path_buf()],
        read: read.clone(),
        ..SummarizeConfig::default()
    };
    match summarize(&cfg) {
        Ok(o) => Ok(o.summary.hosts.into_iter().flat_map(|h| h.findings).collect()),
        Err(_) => Err("no rows written to the file yet; they come at each --flush".into()),
    }
}
