//! `gpumon fields`: every field gpumon can record, from the catalogue.

use std::io::Write;

use anyhow::Result;

use crate::schema::catalog::CATALOG;

/// Print the catalogue (like `nvidia-smi --help-query-gpu`).
pub fn print_fields() -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "Fields gpumon can record (pass to --fields / --query-gpu, comma-separated).")?;
    writeln!(out, "Fields marked 'off' are only recorded when asked for.\n")?;
    for d in &CATALOG {
        let unit = if d.unit.is_empty() { String::new() } else { format!(" [{}]", d.unit) };
        let default = if d.default { "" } else { ", off by default" };
        writeln!(out, "\"{}\"{unit}  ({:?}, {:?}{default})", d.name, d.source, d.ty)?;
        if !d.aliases.is_empty() {
            writeln!(out, "    aliases: {}", d.aliases.join(", "))?;
        }
        writeln!(out, "    {}", d.help)?;
    }
    Ok(())
}
