//! Prometheus endpoint for `record --listen ADDR:PORT`: the latest tick on `/metrics`.
//!
//! The sampler's only contact with the endpoint is [`Exporter::publish`]: it clones the tick into
//! a new [`Snapshot`] and swaps an `Arc` under a mutex that the server also holds only for a
//! pointer copy. The server thread turns a snapshot into text on the first scrape that sees it
//! (at most once per tick and format, nothing when nobody scrapes); no lock is held while
//! encoding or talking to a client, so a slow or hostile client cannot delay a tick.
//!
//! Names, units and labels come from the field catalogue ([`names`]); docs/prometheus.md has the
//! generated table.

pub(crate) mod expose;
pub(crate) mod http;
pub(crate) mod names;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Context, Result};
use hyper::body::Bytes;

use expose::{OPENMETRICS_CONTENT_TYPE, Plan, Snapshot, TEXT_CONTENT_TYPE};
use gpumon_schema::{GpuEvent, RunMeta, RunStats, Selection, Tick};

/// Serves the latest tick on `/metrics`.
pub struct Exporter {
    shared: Arc<Shared>,
    /// Xid events since the start, per GPU and Xid (published with every tick).
    xids: Vec<expose::XidCount>,
    /// The declared work counters and their totals since the start.
    progress_keys: Vec<Arc<str>>,
    progress: Vec<expose::ProgressCount>,
    server: http::Server,
    #[cfg(test)]
    addr: SocketAddr,
}

impl Exporter {
    /// Bind `addr` and start serving (before the first tick: `gpumon_up` and the run metrics).
    pub fn start(addr: SocketAddr, sel: &Selection, meta: &RunMeta) -> Result<Exporter> {
        let listener = std::net::TcpListener::bind(addr)
            .with_context(|| format!("--listen {addr}: binding"))?;
        let bound = http::local_addr(&listener, addr);
        let shared = Arc::new(Shared {
            plan: Plan::new(sel, meta),
            current: Mutex::new(Arc::new(Snapshot::default())),
            cache: Mutex::new(Cache::default()),
        });
        let server = http::Server::start(listener, shared.clone())?;
        let exposed = if bound.ip().is_unspecified() {
            " (all interfaces: anyone who can reach this port can read them)"
        } else if bound.ip().is_loopback() {
            ""
        } else {
            " (reachable from the network)"
        };
        eprintln!("gpumon: serving metrics on http://{bound}/metrics{exposed}");
        Ok(Exporter {
            shared,
            xids: Vec::new(),
            progress_keys: sel.progress().to_vec(),
            progress: Vec::new(),
            server,
            #[cfg(test)]
            addr: bound,
        })
    }

    /// The address being served (the real port when `--listen` asked for port 0).
    #[cfg(test)]
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replace the published values with this tick's; never blocks the sampler for longer than
    /// a pointer swap.
    pub fn publish(&mut self, tick: &Tick, stats: &RunStats) {
        expose::count_progress(&mut self.progress, &self.progress_keys, tick.rows.first());
        let next = Snapshot {
            generation: 0,
            tick: Some(tick.clone()),
            stats: stats.clone(),
            xids: self.xids.clone(),
            progress: self.progress.clone(),
        };
        let mut cur = self.shared.current.lock().unwrap_or_else(PoisonError::into_inner);
        let generation = cur.generation + 1;
        *cur = Arc::new(Snapshot { generation, ..next });
    }

    /// Count NVML events into the Xid counter (served from the next tick on).
    pub fn count_events(&mut self, events: &[GpuEvent]) {
        expose::count_xids(&mut self.xids, events);
    }

    /// Stop serving (the run is over).
    pub fn stop(self) {
        self.server.stop();
    }
}

/// State shared by the sampler (publish) and the server thread (scrapes).
pub(crate) struct Shared {
    plan: Plan,
    current: Mutex<Arc<Snapshot>>,
    /// Encoded text of the latest snapshot, per format; only the server thread touches it.
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    text: Option<(u64, Bytes)>,
    openmetrics: Option<(u64, Bytes)>,
}

impl Shared {
    /// The exposition of the latest snapshot and its content type.
    pub(crate) fn exposition(&self, openmetrics: bool) -> Result<(Bytes, &'static str)> {
        let snap = self.current.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = if openmetrics { &mut cache.openmetrics } else { &mut cache.text };
        let body = match slot {
            Some((g, b)) if *g == snap.generation => b.clone(),
            _ => {
                let fams = self.plan.families(&snap);
                let text = if openmetrics {
                    expose::openmetrics(Arc::new(fams)).context("encoding OpenMetrics")?
                } else {
                    expose::text(&fams)
                };
                let b = Bytes::from(text);
                *slot = Some((snap.generation, b.clone()));
                b
            }
        };
        Ok((body, if openmetrics { OPENMETRICS_CONTENT_TYPE } else { TEXT_CONTENT_TYPE }))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use chrono::Utc;

    use super::*;
    use gpumon_schema::Row;

    fn meta() -> RunMeta {
        RunMeta {
            hostname: "h".into(),
            interval_s: 1.0,
            command: String::new(),
            start: Utc::now(),
            driver_version: None,
            job: None,
        }
    }

    #[test]
    fn publish_does_not_wait_for_the_encoder() {
        let mut ex =
            Exporter::start("127.0.0.1:0".parse().unwrap(), &Selection::defaults(), &meta())
                .unwrap();
        assert!(ex.local_addr().port() != 0);
        // A stuck encoder holds the cache; publishing must still go through.
        let shared = ex.shared.clone();
        let stuck = shared.cache.lock().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let tick =
                    Tick { ts: Utc::now(), seq: 1, rows: vec![Row::default()], procs: Vec::new() };
                ex.publish(&tick, &RunStats { ticks: 1, ..RunStats::default() });
                tx.send(()).unwrap();
            });
            let went_through = rx.recv_timeout(Duration::from_secs(10)).is_ok();
            drop(stuck); // unblock a publish that did wait, so that the scope can end
            assert!(went_through, "publish waited for the encoder");
        });
        let (body, ct) = ex.shared.exposition(false).unwrap();
        assert_eq!(ct, TEXT_CONTENT_TYPE);
        assert!(String::from_utf8_lossy(&body).contains("gpumon_ticks_total{host=\"h\"} 1"));
        ex.stop();
    }

    #[test]
    fn a_taken_port_is_an_error_naming_the_address() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let e = Exporter::start(addr, &Selection::defaults(), &meta()).err().unwrap();
        assert!(format!("{e:#}").contains(&format!("--listen {addr}")), "{e:#}");
    }
}
