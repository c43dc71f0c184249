//! The module graph of each library crate (and of the benchmark harness) has no cycles, checked by a tool rather
//! than by eye. An edge `a → b` is a `crate::b…` (or `super::…`) path in the code of module
//! `a` (or a path through a module it imported, `m::x::Item`), comments left out; the
//! layering each crate documents follows from these edges.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file below `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b.rs` → `a::b`, `src/a/mod.rs` → `a`, `src/lib.rs` → `` (the root).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("below src");
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// The module graph of the crate whose sources are in `src`.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let resolve = |path: &str| -> Option<String> {
        // The longest module prefix of `a::b::Item`.
        let parts: Vec<&str> = path.split("::").collect();
        (1..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|candidate| modules.contains(candidate))
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(src, file);
        let parent = module.rsplit_once("::").map_or("", |(p, _)| p).to_owned();
        let text = fs::read_to_string(file).expect("a readable source file");
        let code = text.lines().filter(|l| !l.trim_start().starts_with("//"));
        let targets = edges.entry(module.clone()).or_default();
        let tops: BTreeSet<String> = modules
            .iter()
            .filter(|m| !m.is_empty() && !m.contains("::"))
            .cloned()
            .collect();
        for line in code {
            // A path through a module brought in by `use crate::m;` (`m::x::Item`): a top-level
            // module name at the start of a path.
            for top in &tops {
                for (at, _) in line.match_indices(&format!("{top}::")) {
                    let before = line[..at].chars().next_back();
                    if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                        continue;
                    }
                    let rest: String = line[at..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                        .collect();
                    if let Some(target) = resolve(rest.trim_end_matches(':')) {
                        if target != module {
                            targets.insert(target);
                        }
                    }
                }
            }
            for (prefix, base) in [("crate::", String::new()), ("super::", parent.clone())] {
                for (at, _) in line.match_indices(prefix) {
                    let rest: String = line[at + prefix.len()..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                        .collect();
                    let full = if base.is_empty() {
                        rest
                    } else {
                        format!("{base}::{rest}")
                    };
                    if let Some(target) = resolve(full.trim_end_matches(':')) {
                        if target != module && !target.is_empty() {
                            targets.insert(target);
                        }
                    }
                }
            }
        }
    }
    edges
}

/// A cycle in `edges`, as a path, if there is one.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates")
        .join(name)
        .join("src")
}

#[test]
fn the_checker_finds_a_cycle() {
    let edges = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    assert_eq!(
        find_cycle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let src = crate_src("tasks-http");
    let http = graph(&src);
    assert!(
        http["dispatcher"].contains("methods::tools"),
        "the graph sees real edges: {:?}",
        http["dispatcher"]
    );
}

#[test]
fn library_module_graphs_have_no_cycles() {
    for name in [
        "tasks-core",
        "tasks-runtime",
        "tasks-http",
        "tasks-client",
        "tasks-rmcp",
        "tasks-conformance",
        "tasks-bench",
    ] {
        let edges = graph(&crate_src(name));
        assert_eq!(find_cycle(&edges), None, "{name} has a module cycle");
    }
}

/// The crates other MCP layers build on (rmcp's bridge, the conformance tools `rmcp-app`
/// serves) reach the runtime without this project's HTTP layer: `tasks-http` is none of their
/// dependencies, not even through one another.
#[test]
fn other_hosts_do_not_depend_on_the_http_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for manifest in [
        "crates/tasks-rmcp/Cargo.toml",
        "crates/tasks-conformance/Cargo.toml",
        "examples/rmcp-app/Cargo.toml",
    ] {
        let text = fs::read_to_string(root.join(manifest)).expect("a manifest");
        let dependencies: Vec<&str> = text
            .lines()
            .filter_map(|line| line.split(['=', '.', ' ']).next())
            .filter(|name| name.starts_with("tasks-"))
            .collect();
        assert!(
            !dependencies.is_empty(),
            "{manifest}: the check reads its dependencies"
        );
        assert!(
            !dependencies.contains(&"tasks-http") && !dependencies.contains(&"tasks-fixture"),
            "{manifest} depends on the HTTP layer: {dependencies:?}"
        );
    }
}
