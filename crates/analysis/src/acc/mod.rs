//! Streaming accumulators with constant memory per GPU and per host: value histograms (exact
//! percentiles), moments, and the sample-spacing histogram that yields interval, gaps, coverage and
//! power-integrated energy without keeping the rows.
//!
//! What is kept of each field follows the catalogue's `summary` column ([`inputs`], [`FieldAcc`]);
//! the rest feeds the statistics derived from several fields (memory total, throttle reasons,
//! input-bound rows).
//!
//! Two ways to combine: `append` joins a later stretch of the same series (the step across the
//! boundary is counted), `pool` adds a different series (for the over-all figures).
//!
//! `timing` (sample spacing), `moments`, `fsum` (sums independent of the order of their terms),
//! `hist` (percentiles), `fields` (what is kept of each
//! field), `gpu` and `host` (the accumulators of one GPU and one host).

mod fields;
mod fsum;
mod gpu;
mod hist;
mod host;
mod moments;
#[cfg(test)]
mod tests;
mod timing;

pub(crate) use fields::*;
pub(crate) use fsum::*;
pub use gpu::*;
pub(crate) use hist::*;
pub(crate) use host::*;
pub(crate) use moments::*;
pub(crate) use timing::*;
