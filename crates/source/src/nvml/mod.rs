//! The GPUs through NVML: sampling (`gpu`, read by the loop's thread or a worker per hung GPU:
//! `readers`, `watchdog`), GPM counters, MIG instances, the event thread, memory health, and doctor's probes.

mod events;
mod gpm;
pub mod gpu;
mod health;
pub mod mig;
pub mod missing;
pub mod probe;
pub mod readers;
mod smi;
mod watchdog;
