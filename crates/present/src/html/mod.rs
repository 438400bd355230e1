//! The HTML report page: tables, findings, inline SVG charts and the heatmap, from a `Summary` and
//! its series.

mod assets;
mod axis;
pub mod body;
mod escape;
pub mod job;
mod live;
pub mod markup;
mod phases;
mod svg;
mod tables;
