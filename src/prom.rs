//! Prometheus endpoint for `record --listen` (scaffold: being built for issue 6).

use std::net::SocketAddr;

use anyhow::{Result, bail};

use crate::record::RunStats;
use crate::sample::{Selection, Tick};
use crate::sink::RunMeta;

/// Serves the latest tick on `/metrics`.
pub struct Exporter {}

impl Exporter {
    pub fn start(addr: SocketAddr, _sel: &Selection, _meta: &RunMeta) -> Result<Exporter> {
        bail!("--listen {addr}: the metrics endpoint is not built yet")
    }

    /// Replace the published values with this tick's; never blocks the sampler.
    pub fn publish(&self, _tick: &Tick, _stats: &RunStats) {}

    /// Stop serving (the run is over).
    pub fn stop(self) {}
}
