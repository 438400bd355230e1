//! The import rules between rooms (ARCHITECTURE.md), checked on the source text: a room may name
//! only the rooms listed for it, so the data flow cannot grow a cycle or a shortcut unnoticed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each room and the rooms it may import (besides itself). `cmd` wires everything.
const RULES: &[(&str, &[&str])] = &[
    ("util", &[]),
    ("schema", &["util"]),
    ("source", &["schema", "util"]),
    ("sink", &["schema", "util"]),
    ("read", &["schema", "util"]),
    ("analysis", &["schema", "util"]),
    ("present", &["analysis", "schema", "util"]),
    ("record", &["source", "sink", "schema", "util"]),
    ("cli", &["schema", "util"]),
    ("cmd", &["cli", "record", "source", "sink", "read", "analysis", "present", "schema", "util"]),
    // Extra executables (`gpumon-analyze`): like main.rs, they call the library's public entry only.
    ("bin", &[]),
];

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The rooms a source text names through `crate::room` (comments included: a doc link to a room
/// is a dependency of the reader's mind too) or, in a room's top-level `mod.rs`, `super::room`.
fn named_rooms(text: &str, top_mod: bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for prefix in ["crate::", "super::"] {
        if prefix == "super::" && !top_mod {
            continue;
        }
        for (i, _) in text.match_indices(prefix) {
            let rest = &text[i + prefix.len()..];
            let room: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !room.is_empty() {
                out.insert(room);
            }
        }
    }
    out
}

/// Every (file, room it must not name) in the tree under `src`.
fn violations(src: &Path) -> Vec<(String, String)> {
    let rules: BTreeMap<&str, &[&str]> = RULES.iter().copied().collect();
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let mut parts = rel.iter().map(|c| c.to_string_lossy().into_owned());
        let first = parts.next().unwrap();
        if rel.components().count() == 1 && matches!(first.as_str(), "lib.rs" | "main.rs" | "layers.rs") {
            continue;
        }
        let room = first.trim_end_matches(".rs").to_string();
        let allowed =
            rules.get(room.as_str()).unwrap_or_else(|| panic!("{}: room '{room}' has no rule", rel.display()));
        let top_mod = rel.components().count() == 2 && rel.ends_with("mod.rs");
        let text = std::fs::read_to_string(&f).unwrap();
        for named in named_rooms(&text, top_mod) {
            if named != room && rules.contains_key(named.as_str()) && !allowed.contains(&named.as_str()) {
                bad.push((rel.display().to_string(), named));
            }
        }
    }
    bad
}

#[test]
fn rooms_import_only_what_the_data_flow_allows() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&src);
    assert!(bad.is_empty(), "imports against the layer rules (file, room): {bad:#?}");
}

#[test]
fn a_planted_bad_import_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("read")).unwrap();
    std::fs::create_dir_all(src.join("schema")).unwrap();
    std::fs::write(src.join("read/mod.rs"), "use crate::schema::row::Row;\n").unwrap();
    assert!(violations(src).is_empty());
    std::fs::write(src.join("read/scan.rs"), "use crate::sink::files::retain;\n").unwrap();
    std::fs::write(src.join("schema/mod.rs"), "use super::read::x;\n").unwrap();
    assert_eq!(
        violations(src).into_iter().collect::<BTreeSet<_>>(),
        [("read/scan.rs".to_string(), "sink".to_string()), ("schema/mod.rs".to_string(), "read".to_string())]
            .into_iter()
            .collect()
    );
}

#[test]
fn the_rules_have_no_cycle() {
    let rules: BTreeMap<&str, &[&str]> = RULES.iter().copied().collect();
    // Depth-first search from every room; a room met again on the current path is a cycle.
    fn visit<'a>(r: &'a str, rules: &BTreeMap<&'a str, &'a [&'a str]>, path: &mut Vec<&'a str>) {
        assert!(!path.contains(&r), "cycle: {path:?} -> {r}");
        path.push(r);
        for d in rules[r] {
            visit(d, rules, path);
        }
        path.pop();
    }
    for r in rules.keys() {
        visit(r, &rules, &mut Vec::new());
    }
}
