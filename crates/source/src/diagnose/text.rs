//! `gpumon doctor`'s report as text: one screen of 80 columns that says what NVML loads, which GPUs
//! it sees and what `record` takes of each, what the visible-device variables select, the container
//! and cgroup, and each problem with its usual fix.

use gpumon_schema::catalog::Field;

use super::{Diagnosis, GpuState, NvmlState, gpu_ranges, list_gpus, on_off};

/// Width the text report keeps to.
const WIDTH: usize = 80;

/// Word-wrap `text` to [`WIDTH`], the first line after `first` and the rest indented by `indent`.
fn wrap(out: &mut String, first: &str, indent: usize, text: &str) {
    for line in gpumon_util::wrap_lines(first, indent, text.split(' '), WIDTH) {
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// `  label        value`: the label in a column of 13, the value wrapped beside it.
fn labelled(out: &mut String, indent: usize, label: &str, value: &str) {
    let first = format!("{:indent$}{label:<13}", "");
    wrap(out, &first, indent + 13, value);
}

/// The report as text, kept to [`WIDTH`] columns: NVML, the GPUs (alike ones in one block unless
/// `verbose`), the visible-device variables, the container and cgroup, problems with their fixes,
/// notes and the verdict.
pub fn render(r: &Diagnosis, verbose: bool) -> String {
    let mut o = String::new();
    render_nvml(&mut o, &r.nvml);
    if r.nvml.error.is_none() {
        render_gpus(&mut o, &r.gpus, verbose);
    }
    o.push_str("\nVisible devices\n");
    for v in &r.visible.variables {
        let value = match &v.value {
            Some(val) => format!("={val:?}: {}", v.selects),
            None => ": not set".to_string(),
        };
        wrap(&mut o, "  ", 4, &format!("{}{value}", v.name));
    }
    if r.nvml.error.is_none() {
        let from = r.visible.decided_by.map_or(String::new(), |v| format!(" (from {v})"));
        let gpus = list_gpus(&r.visible.record_gpus, r.gpus.len());
        labelled(&mut o, 2, "record", &format!("without --gpus samples {gpus}{from}"));
    }
    render_container(&mut o, r);
    if !r.problems.is_empty() {
        o.push_str("\nProblems\n");
        for p in &r.problems {
            wrap(&mut o, "  - ", 4, &p.problem);
            wrap(&mut o, "    fix: ", 4, &p.fix);
        }
    }
    if !r.notes.is_empty() {
        o.push_str("\nNotes\n");
        for n in &r.notes {
            wrap(&mut o, "  - ", 4, n);
        }
    }
    o.push('\n');
    wrap(&mut o, "", 2, &r.verdict);
    o
}

fn render_nvml(o: &mut String, n: &NvmlState) {
    o.push_str("NVML\n");
    let lib = match &n.loaded_from {
        Some(p) if *p != n.library => format!("{} -> {p}", n.library),
        _ => n.library.clone(),
    };
    labelled(o, 2, "library", &lib);
    match &n.error {
        Some(e) => labelled(o, 2, "status", &format!("not usable: {e}")),
        None => {
            labelled(o, 2, "driver", n.driver_version.as_deref().unwrap_or("unknown"));
            labelled(o, 2, "CUDA driver", n.cuda_driver_version.as_deref().unwrap_or("unknown"));
            labelled(o, 2, "NVML", n.nvml_version.as_deref().unwrap_or("unknown"));
            if !n.missing_functions.is_empty() {
                let names: Vec<&str> =
                    n.missing_functions.iter().map(|m| m.function.as_str()).collect();
                let fields: usize = n.missing_functions.iter().map(|m| m.fields.len()).sum();
                labelled(
                    o,
                    2,
                    "lacks",
                    &format!(
                        "{} (not in this driver, an older one: {fields} GPU fields stay empty)",
                        names.join(", ")
                    ),
                );
            }
        }
    }
}

/// The GPUs: each one's name and identity, then what it records. GPUs that record alike share
/// one block (`GPUs 0-7`), so eight GPUs fit a screen; `verbose` gives every GPU its own block
/// with the full field lists.
fn render_gpus(o: &mut String, gpus: &[GpuState], verbose: bool) {
    o.push_str(&format!("\nGPUs ({})\n", gpus.len()));
    let blocks: Vec<Vec<Line>> = gpus.iter().map(|g| gpu_lines(g, verbose)).collect();
    let mut groups: Vec<(Vec<u32>, &[Line])> = Vec::new();
    for (g, b) in gpus.iter().zip(&blocks) {
        match groups.iter_mut().find(|(_, lines)| *lines == b.as_slice()) {
            Some((idx, _)) => idx.push(g.index),
            None => groups.push((vec![g.index], b)),
        }
    }
    let inline = verbose || groups.len() == gpus.len();
    for (g, b) in gpus.iter().zip(&blocks) {
        let mark = if g.recorded { "" } else { "  (not recorded by default)" };
        wrap(o, &format!("  {:<3}", g.index), 5, &format!("{}{mark}", g.name));
        labelled(o, 5, "uuid", &format!("{}, PCI {}", g.uuid, g.pci_bus_id));
        if inline {
            for (label, value) in b {
                labelled(o, 5, label, value);
            }
        }
    }
    if !inline {
        for (idx, lines) in groups {
            o.push_str(&format!("  {}\n", gpu_ranges(&idx)));
            for (label, value) in lines {
                labelled(o, 5, label, value);
            }
        }
    }
}

/// A `label  value` line of the report.
type Line = (String, String);

/// What one GPU records, as (label, value) lines: memory, modes, MIG devices, readable fields,
/// GPM, memory health. Long field lists are cut to the fields `record` takes by default unless
/// `verbose`.
fn gpu_lines(g: &GpuState, verbose: bool) -> Vec<Line> {
    let mut l: Vec<Line> = Vec::new();
    let mut push = |label: &str, value: String| l.push((label.to_string(), value));
    push("memory", g.memory_total_mib.map_or("n/a".into(), |m| format!("{m} MiB")));
    let pending = match g.mig_mode_pending {
        Some(p) if Some(p) != g.mig_mode => {
            format!(" (pending {} after a GPU reset)", on_off(Some(p)))
        }
        _ => String::new(),
    };
    push(
        "modes",
        format!("persistence {}, MIG {}{pending}", on_off(g.persistence_mode), on_off(g.mig_mode)),
    );
    for m in &g.mig_instances {
        let id = |v: Option<u32>| v.map_or("?".to_string(), |x| x.to_string());
        let mem = m.memory_total_mib.map_or("memory n/a".into(), |x| format!("{x} MiB"));
        let profile = if m.profile.is_empty() { "profile ?" } else { &m.profile };
        let line = format!(
            "gi {}, ci {}, {profile}, {mem}, {}",
            id(m.gpu_instance_id),
            id(m.compute_instance_id),
            m.uuid
        );
        push(&format!("MIG {}", m.index), line);
    }
    if g.lost {
        push("fields", "none: the GPU is lost".into());
        return l;
    }
    let total = g.supported.len() + g.unsupported.len() + g.failed.len() + g.not_in_driver.len();
    let lacking = if g.not_in_driver.is_empty() {
        String::new()
    } else {
        format!(" ({} not in this driver)", g.not_in_driver.len())
    };
    push("fields", format!("{} of {total} GPU fields readable{lacking}", g.supported.len()));
    if !g.unsupported.is_empty() {
        push("unsupported", field_list(&g.unsupported, verbose));
    }
    if !g.failed.is_empty() {
        push("failed", field_list(&g.failed, verbose));
    }
    push("GPM", gpm_text(g));
    if !g.memory_health.is_empty() {
        let health: Vec<String> = g.memory_health.iter().map(|(k, v)| format!("{k} {v}")).collect();
        push("mem health", health.join(", "));
    }
    l
}

/// A list of fields: in full when `verbose` or when it fits a line; else up to four of the
/// fields `record` takes by default and a count of the rest.
fn field_list(fields: &[&str], verbose: bool) -> String {
    let all = fields.join(", ");
    if verbose || all.chars().count() <= WIDTH - 18 {
        return all;
    }
    let named: Vec<&str> = fields
        .iter()
        .copied()
        .filter(|n| Field::lookup(n).is_some_and(|f| f.def().default))
        .take(4)
        .collect();
    let rest = fields.len() - named.len();
    if named.is_empty() {
        format!("{rest} fields (--verbose lists them)")
    } else {
        format!("{} and {rest} more (--verbose lists them)", named.join(", "))
    }
}

/// Whether the GPU's GPM counters are recorded and, when not, the likely reason: GPM needs Hopper
/// or newer, so a Hopper GPU without it points at the driver or the setup, not the GPU.
fn gpm_text(g: &GpuState) -> String {
    let capable = gpm_capable(g.architecture.as_deref(), &g.name);
    let arch = g.architecture.as_deref().unwrap_or("Hopper");
    match (g.gpm, capable) {
        (Some(true), _) => "supported: sm.active, tensor.active, dram.active... recorded".into(),
        (Some(false), Some(true)) => format!(
            "not available: NVML reports none on this {arch} GPU (a driver before R520, or a \
             vGPU?): GPM fields empty"
        ),
        (Some(false), Some(false)) => format!(
            "not supported (needs Hopper or newer; this GPU is {}): GPM fields empty",
            g.architecture.as_deref().unwrap_or("older")
        ),
        (Some(false), None) => "not supported (needs Hopper or newer): GPM fields empty".into(),
        (None, _) => "unknown (NVML could not tell): GPM fields may be empty".into(),
    }
}

/// Whether the GPU is of an architecture with GPM (Hopper and newer): from NVML's architecture
/// when it says, else from the product name (H100, H200, GH200, B200, ...); None when unknown.
fn gpm_capable(architecture: Option<&str>, name: &str) -> Option<bool> {
    const OLDER: [&str; 7] = ["Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada"];
    if let Some(a) = architecture {
        return Some(!OLDER.iter().any(|o| a.eq_ignore_ascii_case(o)));
    }
    let hopper_or_newer = ["H100", "H200", "H800", "H20", "GH200", "B100", "B200", "GB200", "B300"];
    name.split([' ', '-']).any(|w| hopper_or_newer.contains(&w)).then_some(true)
}

fn render_container(o: &mut String, r: &Diagnosis) {
    o.push_str("\nContainer and cgroup\n");
    let container = match &r.container.kind {
        Some(k) => format!("{k} ({})", r.container.evidence.join("; ")),
        None => "none detected".into(),
    };
    labelled(o, 2, "container", &container);
    let cgroup = r.cgroup.as_ref().map_or("not found".to_string(), |c| c.description.clone());
    labelled(o, 2, "cgroup", &cgroup);
    let nodes = if r.device_nodes.is_empty() {
        "none (no /dev/nvidia*)".to_string()
    } else {
        let l: Vec<String> = r
            .device_nodes
            .iter()
            .map(|d| {
                format!(
                    "{}{}",
                    d.path.trim_start_matches("/dev/"),
                    if d.access { "" } else { " (no access)" }
                )
            })
            .collect();
        l.join(", ")
    };
    labelled(o, 2, "/dev nodes", &nodes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_to_80_columns() {
        let mut o = String::new();
        let long = "word ".repeat(60);
        labelled(&mut o, 2, "label", long.trim());
        assert!(o.lines().count() > 3);
        for l in o.lines() {
            assert!(l.chars().count() <= WIDTH, "{l:?}");
        }
        assert!(
            o.lines().nth(1).unwrap().starts_with(&" ".repeat(15)),
            "continuation lines are indented"
        );
    }
}
