//! `gpumon fields`: every field gpumon can record, from the catalogue, as text (like nvidia-smi
//! --help-query-gpu) or as JSON / CSV for scripts.

use std::io::Write;

use anyhow::Result;

use crate::cli::FieldsFormatArg;
use gpumon_schema::catalog::{Agg, CATALOG, FieldDef, Source};

/// How sub-samples of one interval combine, in words.
fn aggregation(a: Agg) -> &'static str {
    match a {
        Agg::Identity => "identity",
        Agg::Mean => "mean",
        Agg::Last => "last",
        Agg::Max => "max",
        Agg::Sum => "sum",
    }
}

fn source(d: &FieldDef) -> String {
    format!("{:?}", d.source).to_ascii_lowercase()
}

/// One field as the JSON and CSV listings give it.
fn record(d: &FieldDef) -> serde_json::Value {
    serde_json::json!({
        "name": d.name,
        "aliases": d.aliases,
        "unit": d.unit,
        "type": d.ty.user_name(),
        "source": source(d),
        "aggregation": aggregation(d.agg),
        "default": d.default,
        "mig_instance": d.field.on_mig_rows(),
        "help": d.help,
    })
}

/// Print the catalogue in `format`.
pub fn print_fields(format: FieldsFormatArg) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match format {
        FieldsFormatArg::Json => {
            let all: Vec<serde_json::Value> = CATALOG.iter().map(record).collect();
            serde_json::to_writer_pretty(&mut out, &all)?;
            writeln!(out)?;
        }
        FieldsFormatArg::Csv => {
            let mut w = csv::WriterBuilder::new()
                .terminator(csv::Terminator::Any(b'\n'))
                .from_writer(&mut out);
            w.write_record([
                "name",
                "aliases",
                "unit",
                "type",
                "source",
                "aggregation",
                "default",
                "help",
            ])?;
            for d in &CATALOG {
                let default = if d.default { "on" } else { "off" };
                let (ty, src, agg) = (d.ty.user_name(), source(d), aggregation(d.agg));
                w.write_record([
                    d.name,
                    &d.aliases.join(" "),
                    d.unit,
                    ty,
                    &src,
                    agg,
                    default,
                    d.help,
                ])?;
            }
            w.flush()?;
        }
        FieldsFormatArg::Text => {
            writeln!(
                out,
                "Fields gpumon can record (pass to --fields / --query-gpu, comma-separated)."
            )?;
            writeln!(
                out,
                "Fields marked 'off' are only recorded when asked for. A GPU in MIG mode gets one row per"
            )?;
            writeln!(
                out,
                "MIG instance beside its own; fields marked 'per MIG instance' have values on those rows.\n"
            )?;
            for d in &CATALOG {
                let unit = if d.unit.is_empty() { String::new() } else { format!(" [{}]", d.unit) };
                let default = if d.default { "" } else { ", off by default" };
                let mig = if d.source == Source::Gpu && d.field.on_mig_rows() {
                    ", per MIG instance"
                } else {
                    ""
                };
                let (ty, src, agg) = (d.ty.user_name(), source(d), aggregation(d.agg));
                writeln!(out, "\"{}\"{unit}  ({ty}, {src}, {agg}{default}{mig})", d.name)?;
                if !d.aliases.is_empty() {
                    writeln!(out, "    aliases: {}", d.aliases.join(", "))?;
                }
                writeln!(out, "    {}", d.help)?;
            }
            writeln!(out, "\"progress.KEY\"  (float, job, sum, only with --progress KEY)")?;
            writeln!(
                out,
                "    Work the job reported during the interval (`gpumon progress KEY=N`, gpumon.progress());"
            )?;
            writeln!(
                out,
                "    one column per key declared with `record --progress samples,tokens`."
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpumon_schema::catalog::Field;

    #[test]
    fn records_in_user_terms() {
        let r = record(Field::UtilGpu.def());
        assert_eq!(r["type"], "integer");
        assert_eq!(r["aggregation"], "mean");
        assert_eq!(r["unit"], "%");
        assert_eq!(r["default"], true);
        assert_eq!(record(Field::Timestamp.def())["type"], "timestamp");
        assert_eq!(record(Field::PowerDraw.def())["type"], "float");
        assert_eq!(record(Field::Name.def())["type"], "string");
        assert_eq!(record(Field::ClockSm.def())["aliases"][0], "clocks.current.sm");
        assert_eq!(record(Field::PcieTx.def())["default"], false);
        assert_eq!(record(Field::MigProfile.def())["mig_instance"], true);
        assert_eq!(record(Field::MemUsed.def())["mig_instance"], true);
        assert_eq!(record(Field::PowerDraw.def())["mig_instance"], false);
    }
}
