//! The GPUs through NVML: what the modules share (`device`), one GPU's reading for a tick
//! (`sample`), the source that owns the readings (`gpu`, read by the loop's thread or a worker per
//! hung GPU: `readers`, `watchdog`), GPM counters, MIG instances, the event thread, memory health,
//! and doctor's probes.

pub(crate) mod device;
mod events;
mod gpm;
pub(crate) mod gpu;
mod health;
pub(crate) mod mig;
pub(crate) mod missing;
pub(crate) mod probe;
pub(crate) mod readers;
mod sample;
mod smi;
mod watchdog;
