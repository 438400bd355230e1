//! NVML fault and health events (Xid critical errors, ECC errors, clock and power source changes),
//! watched on a thread of their own: it owns the event set (which NVML allows on one thread only),
//! waits on it with a short timeout so a stop is prompt, and hands each event to the record loop
//! through a bounded queue. NVML events carry no time: they are stamped when they reach gpumon.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use chrono::Utc;
use crossbeam_channel::{Receiver, Sender, bounded};
use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::event::EventSet;
use nvml_wrapper::struct_wrappers::event::EventData;

use crate::nvml::device::GpuInfo;
use gpumon_schema::GpuEvent;
use gpumon_util::{warn, warn_once};

/// The event kinds watched, where a GPU supports them. P-state changes are left out: they follow
/// the load many times a minute and the `pstate` column has them.
const WANTED: EventTypes = EventTypes::CRITICAL_XID_ERROR
    .union(EventTypes::DOUBLE_BIT_ECC_ERROR)
    .union(EventTypes::SINGLE_BIT_ECC_ERROR)
    .union(EventTypes::CLOCK_CHANGE)
    .union(EventTypes::POWER_SOURCE_CHANGE);

/// How long one wait may block: the longest a stop waits for the thread.
const WAIT_MS: u32 = 100;
/// Events that may wait for the record loop.
const QUEUE: usize = 4096;

/// The event thread and what it found.
pub(super) struct EventWatcher {
    rx: Receiver<GpuEvent>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    /// GPUs (by index) whose Xid events are watched: their `xid.events` is a count, others' empty.
    xid: Vec<u32>,
}

impl EventWatcher {
    /// Register every GPU in `gpus` for the wanted kinds it supports and start watching; None when
    /// no GPU supports any of them (or NVML has no event API).
    pub(super) fn start(nvml: Arc<Nvml>, gpus: &[GpuInfo]) -> Option<EventWatcher> {
        let (tx, rx) = bounded(QUEUE);
        let (ready_tx, ready_rx) = bounded::<Vec<(u32, EventTypes)>>(1);
        let stop = Arc::new(AtomicBool::new(false));
        let (gpus, thread_stop) = (gpus.to_vec(), stop.clone());
        let handle = thread::Builder::new()
            .name("nvml-events".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                let Some((set, watched, handles)) = register(&nvml, &gpus) else {
                    let _ = ready_tx.send(Vec::new());
                    return;
                };
                let _ = ready_tx.send(watched);
                watch(&set, &gpus, &handles, &tx, &thread_stop);
            })
            .map_err(|e| {
                warn(&format!(
                    "cannot start the NVML event thread ({e}); Xid events are not recorded"
                ))
            })
            .ok()?;
        let watched = ready_rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
        let xid: Vec<u32> = watched
            .iter()
            .filter(|(_, t)| t.contains(EventTypes::CRITICAL_XID_ERROR))
            .map(|(i, _)| *i)
            .collect();
        let w = EventWatcher { rx, stop, handle: Some(handle), xid };
        if watched.is_empty() { None } else { Some(w) }
    }

    /// Whether GPU `index` has its Xid events watched.
    pub(super) fn watches_xid(&self, index: u32) -> bool {
        self.xid.contains(&index)
    }

    /// Move the events that arrived since the last call to `out`.
    pub(super) fn drain(&self, out: &mut Vec<GpuEvent>) {
        out.extend(self.rx.try_iter());
    }
}

impl Drop for EventWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The NVML device handle of each GPU known at start, with its index: an event from a GPU that fell
/// off the bus carries a handle NVML can no longer name, and this table names it.
type Handles = Vec<(usize, u32)>;

/// What [`register`] sets up: the event set, the kinds each GPU (by index) got, the GPUs' handles.
type Registered<'n> = (EventSet<'n>, Vec<(u32, EventTypes)>, Handles);

/// An event set with every GPU registered for the wanted kinds it supports, what each got, and the
/// GPUs' handles.
fn register<'n>(nvml: &'n Nvml, gpus: &[GpuInfo]) -> Option<Registered<'n>> {
    let mut set = nvml.create_event_set().ok()?;
    let mut done: Vec<(u32, EventTypes)> = Vec::new();
    let mut handles: Handles = Vec::new();
    for g in gpus {
        let Ok(dev) = nvml.device_by_index(g.index) else { continue };
        // SAFETY: the handle is only compared as a number, never dereferenced.
        handles.push((unsafe { dev.handle() } as usize, g.index));
        let types = match dev.supported_event_types() {
            Ok(t) => t & WANTED,
            Err(_) => continue,
        };
        if types.is_empty() {
            continue;
        }
        match dev.register_events(types, set) {
            Ok(s) => {
                set = s;
                done.push((g.index, types));
            }
            Err(e) => {
                // A failed registration frees the set: start a new one with the GPUs done so far.
                warn(&format!(
                    "GPU {}: cannot watch its NVML events ({}); its xid.events stays empty",
                    g.index, e.error
                ));
                set = nvml.create_event_set().ok()?;
                let mut again = Vec::new();
                for &(i, t) in &done {
                    let Ok(d) = nvml.device_by_index(i) else { continue };
                    match d.register_events(t, set) {
                        Ok(s) => {
                            set = s;
                            again.push((i, t));
                        }
                        Err(_) => set = nvml.create_event_set().ok()?,
                    }
                }
                done = again;
            }
        }
    }
    if done.is_empty() { None } else { Some((set, done, handles)) }
}

/// Wait on the set until `stop`, passing each event on.
fn watch(
    set: &EventSet<'_>,
    gpus: &[GpuInfo],
    handles: &Handles,
    tx: &Sender<GpuEvent>,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Relaxed) {
        match set.wait(WAIT_MS) {
            Ok(ev) => {
                // SAFETY: the handle is only compared as a number, never dereferenced.
                let handle = unsafe { ev.device.handle() } as usize;
                let e = event(&ev, gpus, gpu_of(handles, handle, ev.device.index().ok()));
                if tx.try_send(e).is_err() {
                    warn_once(
                        "events-queue-full",
                        "NVML events arrive faster than they are written; some are dropped",
                    );
                }
            }
            Err(NvmlError::Timeout) => {}
            Err(NvmlError::Uninitialized) => return,
            Err(e) => {
                warn_once(
                    &format!("events-wait-{e:?}"),
                    &format!("waiting for NVML events failed: {e}"),
                );
                thread::sleep(Duration::from_millis(u64::from(WAIT_MS)));
            }
        }
    }
}

/// The index of an event's GPU: the one its handle had at start, else what NVML says now (a lost GPU
/// answers nothing), else `u32::MAX` (stored as null).
fn gpu_of(handles: &Handles, handle: usize, now: Option<u32>) -> u32 {
    handles.iter().find(|(h, _)| *h == handle).map(|(_, i)| *i).or(now).unwrap_or(u32::MAX)
}

/// The record of one event of GPU `index`.
fn event(ev: &EventData<'_>, gpus: &[GpuInfo], index: u32) -> GpuEvent {
    let uuid =
        gpus.iter().find(|g| g.index == index).map_or_else(|| Arc::from(""), |g| g.uuid.clone());
    let (kind, code, detail) = describe(ev.event_type, ev.event_data.as_ref());
    GpuEvent { ts: Utc::now(), index, uuid, kind, code, detail }
}

/// Kind, code and detail of an event of `types` with `xid` data.
fn describe(
    types: EventTypes,
    xid: Option<&XidError>,
) -> (&'static str, Option<u64>, Option<String>) {
    if types.contains(EventTypes::CRITICAL_XID_ERROR) {
        return match xid {
            Some(XidError::Value(v)) => ("xid", Some(*v), None),
            _ => ("xid", None, Some("an Xid NVML could not name (999)".into())),
        };
    }
    let kind = [
        (EventTypes::DOUBLE_BIT_ECC_ERROR, "dbe"),
        (EventTypes::SINGLE_BIT_ECC_ERROR, "sbe"),
        (EventTypes::CLOCK_CHANGE, "clock"),
        (EventTypes::POWER_SOURCE_CHANGE, "power_source"),
        (EventTypes::PSTATE_CHANGE, "pstate"),
        (EventTypes::MIG_CONFIG_CHANGE, "mig_config"),
    ]
    .iter()
    .find(|(t, _)| types.contains(*t))
    .map_or("other", |(_, k)| k);
    let detail = (kind == "other").then(|| format!("event type bits {:#x}", types.bits()));
    (kind, None, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_codes() {
        assert_eq!(
            describe(EventTypes::CRITICAL_XID_ERROR, Some(&XidError::Value(79))),
            ("xid", Some(79), None)
        );
        assert_eq!(describe(EventTypes::CRITICAL_XID_ERROR, Some(&XidError::Unknown)).1, None);
        assert_eq!(describe(EventTypes::DOUBLE_BIT_ECC_ERROR, None), ("dbe", None, None));
        assert_eq!(describe(EventTypes::empty(), None).0, "other");
    }

    /// A lost GPU's event is named by the handle it had at start, not by what NVML answers now.
    #[test]
    fn a_lost_gpus_event_keeps_its_index() {
        let handles: Handles = vec![(0x1000, 0), (0x2000, 3)];
        assert_eq!(gpu_of(&handles, 0x2000, None), 3);
        assert_eq!(gpu_of(&handles, 0x2000, Some(3)), 3);
        assert_eq!(gpu_of(&handles, 0x3000, Some(5)), 5);
        assert_eq!(gpu_of(&handles, 0x3000, None), u32::MAX);
    }
}
