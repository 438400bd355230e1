//! nvidia-smi's habits on `gpumon record`: `-f FILE` is the output file, `-i 0` (a GPU index) is
//! answered with `--id`, and unknown field names get suggestions only when one is close.

use crate::common::*;

#[test]
fn minus_f_is_the_output_file_and_minus_i_index_points_to_id() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("smi.csv");
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-q", "-i", "100ms", "--count", "2", "--fields", "utilization.gpu", "-f"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.starts_with("timestamp,") && csv.lines().count() > 2, "{csv}");

    let o =
        gpumon().args(["record", "-i", "0", "-o"]).arg(dir.path().join("x.csv")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("use --id 0"), "{err}");
    assert!(!dir.path().join("x.csv").exists());
}

#[test]
fn unknown_fields_are_suggested_by_edit_distance_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("x.csv");
    let err = |name: &str| {
        let o = gpumon()
            .args(["record", "--count", "1", "--query-gpu", name, "-o"])
            .arg(&x)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let e = err("utilisation.gpu");
    assert!(e.contains("did you mean utilization.gpu"), "{e}");
    let e = err("persistence_mod");
    assert!(e.contains("did you mean persistence_mode"), "{e}");
    let e = err("qqq_zzz_bogus");
    assert!(!e.contains("did you mean"), "no unrelated names: {e}");
}

#[test]
fn query_gpu_knows_driver_persistence_max_clocks_reserved_memory_and_field_values() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = "init = ok\ndriver_version = 550.54.15\n[device]\nname = NVIDIA H100 80GB HBM3\n\
                    utilization.gpu = 90\nmemory.total = 81559\nmemory.used = 1000\nmemory.reserved = 512\n\
                    persistence_mode = 1\nclocks.max.sm = 1980\ntemperature.memory = 45\npower.draw.instant = 310.5\nclocks.gr = 1410\nclocks.video = 1200\n\
                    power.draw.average = 300\necc.errors.corrected.volatile.total = 2\n";
    let o = gpumon_fake(dir.path(), scenario)
        .args(["record", "--count", "1", "--format=csv,noheader"])
        .arg("--query-gpu=index,driver_version,persistence_mode,clocks.max.sm,clocks.max.memory,memory.reserved,temperature.memory,power.draw.instant,\
              clocks.current.graphics,clocks.current.video,clocks.max.graphics,power.draw.average,\
              ecc.errors.corrected.volatile.total")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.trim(),
        "0, 550.54.15, Enabled, 1980 MHz, [Not Supported], 512 MiB, 45, 310.50 W, 1410 MHz, 1200 MHz, [Not Supported], 300.00 W, 2",
        "{out}"
    );
}

#[test]
fn a_headerless_log_is_read_back_with_its_query_gpu_list_and_has_no_events_companion() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("smi.log");
    let query = "--query-gpu=timestamp,index,utilization.gpu,memory.used";
    let o = gpumon_fake(dir.path(), TWO_GPUS)
        .args(["record", "-q", "-i", "100ms", "--count", "3", "--format=csv,noheader", query, "-o"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // No event happened: no companion file beside the log.
    assert!(!dir.path().join("smi.events.log").exists());
    // Without the list the error says which option to pass.
    let o = gpumon().args(["summarize"]).arg(&log).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--query-gpu="), "{err}");
    // The recording's own --query-gpu reads it back.
    let o = gpumon().args(["summarize", "--format", "json", query]).arg(&log).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let gpus = j["hosts"][0]["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 2, "{j}");
}

/// docs/query-gpu.md lists nvidia-smi's `--query-gpu` names and the gpumon field each maps to;
/// the binary's `gpumon fields` must agree row by row: a mapped name resolves to that field (as
/// its name or an alias), a name marked *not recorded* is accepted by no field.
#[test]
fn query_gpu_page_matches_the_names_the_binary_accepts() {
    let page = std::fs::read_to_string(repo_root().join("docs/query-gpu.md")).unwrap();
    let o = gpumon().args(["fields", "--format", "json"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fields: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut accepts = std::collections::HashMap::new();
    for f in fields.as_array().unwrap() {
        let name = f["name"].as_str().unwrap().to_string();
        accepts.insert(name.clone(), name.clone());
        for a in f["aliases"].as_array().unwrap() {
            accepts.insert(a.as_str().unwrap().to_string(), name.clone());
        }
    }
    let rows: Vec<(String, String)> = page
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> =
                l.trim_matches('|').split('|').map(|c| c.trim().trim_matches('`')).collect();
            (cells[0].to_string(), cells[1].trim_matches('`').to_string())
        })
        .collect();
    assert!(rows.len() > 150, "the page lists {} names", rows.len());
    let mut wrong = Vec::new();
    for (smi, gpumon) in &rows {
        let got = accepts.get(smi).map(String::as_str).unwrap_or("*not recorded*");
        if got != gpumon {
            wrong.push(format!("{smi}: page says {gpumon}, binary {got}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Every name on docs/query-gpu.md is accepted by `record --query-gpu` in one list against the fake
/// NVML: one column each, the values NVML gives read through nvml-wrapper, `[N/A]` for the names
/// NVML gives gpumon no call for, and nvidia-smi's spelling of modes and reasons.
#[test]
fn every_query_gpu_name_on_the_page_is_recorded_in_one_list() {
    let page = std::fs::read_to_string(repo_root().join("docs/query-gpu.md")).unwrap();
    // (nvidia-smi name, gpumon field, always [N/A])
    let rows: Vec<(String, String, bool)> = page
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(|c| c.trim()).collect();
            (
                cells[0].trim_matches('`').to_string(),
                cells[1].trim_matches('`').to_string(),
                cells[2].starts_with("`[N/A]`"),
            )
        })
        .collect();
    assert!(rows.len() > 150 && rows.iter().filter(|r| r.2).count() > 10, "{} rows", rows.len());
    let dir = tempfile::tempdir().unwrap();
    let scenario = "init = ok\ndriver_version = 550.54.15\n[device]\nname = NVIDIA H100 80GB HBM3\n\
                    utilization.gpu = 90\nmemory.total = 81559\nmemory.used = 1000\npcie.link.gen.current = 4\n\
                    pcie.link.gen.max = 5\npcie.link.width.current = 16\npcie.link.width.max = 16\n\
                    power.default_limit = 700\npower.min_limit = 200\npower.max_limit = 700\ncompute_mode = 3\n\
                    compute_cap = 9.0\necc.mode.current = 1\necc.mode.pending = 0\nclocks_event_reasons.active = 4\n\
                    clocks.applications.graphics = 1755\nencoder.stats.sessionCount = 2\nencoder.stats.averageFps = 60\n\
                    encoder.stats.averageLatency = 900\n";
    let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let o = gpumon_fake(dir.path(), scenario)
        .args(["record", "--count", "1", "--format=csv,noheader"])
        .arg(format!("--query-gpu={}", names.join(",")))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out.lines().next().unwrap();
    // One column per field, in the order first asked for (an nvidia-smi name and its alias, or
    // two spellings of one field, share it).
    let mut fields: Vec<&str> = Vec::new();
    for r in &rows {
        if !fields.contains(&r.1.as_str()) {
            fields.push(&r.1);
        }
    }
    let cells: Vec<&str> = line.split(", ").collect();
    assert_eq!(cells.len(), fields.len(), "{line}");
    let at = |name: &str| {
        let field = &rows.iter().find(|r| r.0 == name).unwrap().1;
        cells[fields.iter().position(|f| f == field).unwrap()]
    };
    for (name, _, na) in &rows {
        if *na {
            assert_eq!(at(name), "[N/A]", "{name}");
        }
    }
    let expect = [
        ("serial", "1650924060000"),
        ("vbios_version", "96.00.99.00.01"),
        ("pci.bus", "0x01"),
        ("pci.device_id", "0x233010DE"),
        ("pcie.link.gen.current", "4"),
        ("pcie.link.gen.gpucurrent", "4"),
        ("pcie.link.width.max", "16"),
        ("power.min_limit", "200.00 W"),
        ("power.default_limit", "700.00 W"),
        ("compute_mode", "Exclusive_Process"),
        ("compute_cap", "9.0"),
        ("ecc.mode.current", "Enabled"),
        ("ecc.mode.pending", "Disabled"),
        ("clocks_event_reasons.sw_power_cap", "Active"),
        ("clocks_throttle_reasons.sw_power_cap", "Active"),
        ("clocks_event_reasons.gpu_idle", "Not Active"),
        ("clocks.applications.graphics", "1755 MHz"),
        ("encoder.stats.sessionCount", "2"),
        ("display_mode", "[Not Supported]"),
    ];
    for (name, want) in expect {
        assert_eq!(at(name), want, "{name} in {line}");
    }
}
