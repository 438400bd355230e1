//! The HTML report page: tables, findings, inline SVG charts and the heatmap, from a `Summary` and
//! its series.

pub mod assets;
pub mod axis;
pub mod body;
pub mod escape;
pub mod job;
pub mod live;
pub mod markup;
pub mod phases;
pub mod svg;
pub mod tables;
