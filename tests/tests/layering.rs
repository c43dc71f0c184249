//! The module graph of each crate has no cycles, and follows the layering its front page
//! documents, checked by a tool rather than by eye. An edge `a → b` is a `crate::b…` (or
//! `super::…`) path in the code of module `a` (or a path through a module it imported,
//! `m::x::Item`), comments left out. A crate's front page (`src/lib.rs`, else `src/main.rs`)
//! prints its layering as a `| module | uses |` table, one row per module or group of modules;
//! every edge between two top-level modules must be one the table allows.

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

/// Every crate of the workspace (`crates/*`).
fn all_crates() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let mut names: Vec<String> = fs::read_dir(root)
        .expect("the crates folder")
        .map(|entry| entry.expect("a folder entry").path())
        .filter(|path| path.join("src").is_dir())
        .map(|path| {
            path.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn module_graphs_have_no_cycles() {
    let names = all_crates();
    assert!(names.len() >= 12, "the check finds the crates: {names:?}");
    for name in names {
        let edges = graph(&crate_src(&name));
        assert_eq!(find_cycle(&edges), None, "{name} has a module cycle");
    }
}

/// One row of a `| module | uses |` table: the modules it names (`x::*` for every module
/// below `x`) and the modules they may use.
#[derive(Debug)]
struct Row {
    modules: Vec<String>,
    uses: Vec<String>,
}

/// The backticked names of a table cell. A parenthesis is a remark, except one that starts with
/// "uses": its names are what the name before it also uses.
fn cell_names(cell: &str) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let mut names = Vec::new();
    let mut extra: Vec<(String, Vec<String>)> = Vec::new();
    let mut depth = 0;
    let mut remark = String::new();
    let mut rest = cell;
    while let Some(c) = rest.chars().next() {
        match c {
            '(' => {
                depth += 1;
                remark.clear();
            }
            ')' => {
                depth -= 1;
                if depth == 0 && remark.trim_start().starts_with("uses") {
                    let (inner, _) = cell_names(&remark);
                    if let Some(last) = names.last() {
                        extra.push((String::clone(last), inner));
                    }
                }
            }
            '`' => {
                let end = rest[1..].find('`').map_or(rest.len(), |e| e + 1);
                let name = &rest[1..end];
                if depth > 0 {
                    remark.push('`');
                    remark.push_str(name);
                    remark.push('`');
                } else {
                    names.push(name.to_owned());
                }
                rest = &rest[(end + 1).min(rest.len())..];
                continue;
            }
            _ if depth > 0 => remark.push(c),
            _ => {}
        }
        rest = &rest[c.len_utf8()..];
    }
    (names, extra)
}

/// The `| module | uses |` table of the crate's front page, if it prints one.
fn documented_layers(src: &Path) -> Option<Vec<Row>> {
    let front = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|p| p.exists())?;
    let text = fs::read_to_string(front).expect("a readable front page");
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.trim_start_matches("//!").trim())
        .collect();
    let start = lines
        .iter()
        .position(|l| l.replace(' ', "").starts_with("|module|uses|"))?;
    let mut rows = Vec::new();
    for line in lines[start + 2..].iter().take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
        assert_eq!(cells.len(), 2, "a table row has two cells: {line}");
        let (modules, extra) = cell_names(cells[0]);
        let (uses, _) = cell_names(cells[1]);
        for (module, also) in extra {
            rows.push(Row {
                modules: vec![module],
                uses: also,
            });
        }
        rows.push(Row { modules, uses });
    }
    Some(rows)
}

/// Whether the table entry `name` (`x`, or `x::*`) covers `module`.
fn covers(name: &str, module: &str) -> bool {
    let name = name.trim_end_matches("::*");
    module == name || module.starts_with(&format!("{name}::"))
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// The edges of `edges` that the table does not allow, and the modules it does not name.
fn undocumented(
    rows: &[Row],
    edges: &BTreeMap<String, BTreeSet<String>>,
) -> (Vec<String>, Vec<String>) {
    let mut bad_edges = Vec::new();
    let mut unnamed = Vec::new();
    for (from, targets) in edges {
        if from.is_empty() || from == "bin" || from.starts_with("bin::") {
            continue;
        }
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|row| row.modules.iter().any(|m| covers(m, from)))
            .collect();
        if mine.is_empty() {
            unnamed.push(from.clone());
            continue;
        }
        for to in targets {
            if to.is_empty() || top(to) == top(from) {
                continue;
            }
            let allowed = mine
                .iter()
                .any(|row| row.uses.iter().any(|u| covers(u, to)));
            if !allowed {
                bad_edges.push(format!("{from} → {to}"));
            }
        }
    }
    (bad_edges, unnamed)
}

#[test]
fn the_table_reader_reads_a_row() {
    let (names, extra) = cell_names(
        "`port`, `config` (uses `entropy`, `clock`), `seal` (a task's caller), [`form`]",
    );
    assert_eq!(names, ["port", "config", "seal", "form"]);
    assert_eq!(
        extra,
        [(
            "config".to_owned(),
            vec!["entropy".to_owned(), "clock".to_owned()]
        )]
    );
    let rows = vec![Row {
        modules: vec!["methods::*".into()],
        uses: vec!["shared".into()],
    }];
    let edges = BTreeMap::from([(
        "methods::tools".to_owned(),
        BTreeSet::from([
            "shared".to_owned(),
            "methods::sync_call".to_owned(),
            "legacy".to_owned(),
        ]),
    )]);
    assert_eq!(
        undocumented(&rows, &edges),
        (vec!["methods::tools → legacy".to_owned()], vec![])
    );
}

/// Every crate prints its layering, and its code keeps to it.
#[test]
fn module_graphs_follow_the_documented_layers() {
    let mut problems = Vec::new();
    for name in all_crates() {
        let src = crate_src(&name);
        let edges = graph(&src);
        let modules = edges.keys().filter(|m| !m.is_empty()).count();
        let Some(rows) = documented_layers(&src) else {
            if modules > 1 {
                problems.push(format!(
                    "{name}: no `| module | uses |` table on its front page"
                ));
            }
            continue;
        };
        let (bad, unnamed) = undocumented(&rows, &edges);
        for edge in bad {
            problems.push(format!("{name}: {edge} is not in its table"));
        }
        for module in unnamed {
            problems.push(format!("{name}: module {module} is not in its table"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
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
