//! The HTML report page: tables, findings, inline SVG charts and the heatmap, from a `Summary` and
//! its series.
//!
//! A public module of the crate, the one namespace its users name on purpose: the page is put
//! together by the caller from parts whose names read only as `html::…` ([`body()`], [`title`],
//! [`page`], [`job_section`], [`mark_stragglers`]). Its own modules are private.

mod assets;
mod axis;
mod body;
mod escape;
mod job;
mod live;
mod markup;
mod phases;
mod svg;
mod tables;

pub use self::body::{body, title};
pub use self::job::{mark_stragglers, section as job_section};
pub use self::markup::page;
