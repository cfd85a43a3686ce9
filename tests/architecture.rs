//! The library's modules import one way (ARCHITECTURE.md): no cycle between the top-level modules of `src/`,
//! and no import the layer table forbids (the wire vocabulary imports nothing; the oracle never reaches a server,
//! the server never reaches the oracle; the data of what a server is imports no stage).
//!
//! Read from the source: every path from `crate::`, `super::` or `self::` in a file's code, use groups spread
//! (comments, the `#[cfg(test)]` module at its end and test-only files left out: tests may use anything), is an
//! import of the top-level module it names. The rooms of `server/` count as
//! modules of their own (`server::builtin`, `server::transport`, `server::adapter`).
//!
//! And no two files of one folder import each other, directly or round a circle (`mod.rs` aside: a folder's
//! `mod.rs` and its files are one module and its parts): each file can be read and changed on its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which top-level modules each module may not import, and why.
const FORBIDDEN: &[(&str, &[&str], &str)] = &[
    ("protocol", &["*"], "the wire vocabulary imports nothing of the crate"),
    ("transcript", &["*"], "the transcript is the interchange between running and checking, below every stage"),
    ("rule_ids", &["*"], "the rule ids are vocabulary every layer reads"),
    ("model", &["server", "oracle", "script", "learn", "campaign"], "what a server is: data only"),
    ("surface", &["server", "oracle", "script", "learn", "campaign"], "what a server lists: data only"),
    ("oracle", &["server", "learn", "campaign", "report", "shrink", "harness"], "the oracle does no I/O"),
    ("server", &["oracle", "learn", "campaign", "report", "shrink", "harness"], "a transport judges nothing"),
    (
        "server::transport",
        &["oracle", "learn", "campaign", "report", "shrink", "harness"],
        "a transport judges nothing",
    ),
    ("server::adapter", &["oracle", "learn", "campaign", "report", "shrink", "harness"], "an adapter judges nothing"),
    (
        "server::builtin",
        &["oracle", "learn", "campaign", "report", "shrink", "harness"],
        "a built-in server runs no stage (its planted bugs name their rules from rule_ids)",
    ),
    ("script", &["server", "oracle", "learn", "campaign"], "the test input knows no stage that runs it"),
    (
        "diff",
        &["oracle", "learn", "report", "harness"],
        "a comparison of two servers judges no rule and learns nothing",
    ),
    ("learn", &["campaign", "report", "harness"], "the learn stage runs before the campaign and reports nothing"),
    (
        "sdk",
        &["server", "learn", "campaign", "report", "shrink", "harness"],
        "an SDK's table judges findings, runs nothing",
    ),
];

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The folders of `server/` that count as modules of their own.
const SERVER_ROOMS: &[&str] = &["builtin", "transport", "adapter"];

/// The module a path names: its first segment, or `server::ROOM` for a room of `server/`.
fn unit(segments: &[String]) -> String {
    match segments {
        [server, room, ..] if server == "server" && SERVER_ROOMS.contains(&room.as_str()) => format!("server::{room}"),
        [first, ..] => first.clone(),
        [] => String::new(),
    }
}

/// True for a file only tests compile (`tests.rs`, `*_tests.rs`, `test_support.rs`): tests may use anything.
fn test_only(file: &Path) -> bool {
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs") || name == "test_support.rs"
}

/// The module a file of `src/` belongs to (`None` for the crate root, the binary's files and test-only files).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let segments: Vec<String> =
        relative.components().map(|c| c.as_os_str().to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    let name = unit(&segments);
    (!matches!(name.as_str(), "lib" | "main" | "cli") && !test_only(file)).then_some(name)
}

/// The code of a file without comments and without the `#[cfg(test)]` module at its end.
fn code(text: &str) -> String {
    let mut kept = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed == "#[cfg(test)]" && lines.peek().is_some_and(|next| next.trim_start().starts_with("mod ")) {
            break;
        }
        if !trimmed.starts_with("//") {
            kept.push(line);
        }
    }
    kept.join("\n")
}

/// The modules `code`, in the module at `at`, names ([`paths`], as `NAME` or `server::ROOM`).
fn imports(code: &str, at: &[String]) -> BTreeSet<String> {
    paths(code, at)
        .iter()
        .map(|path| unit(path))
        .filter(|name| name.chars().next().is_some_and(|c| c.is_lowercase()))
        .collect()
}

/// Module → the modules it imports, with one file that does (for the message).
fn graph() -> BTreeMap<String, BTreeMap<String, PathBuf>> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut graph: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&src, &file) else { continue };
        let edges = graph.entry(module.clone()).or_default();
        let at = module_path(&src, &file);
        for import in imports(&code(&std::fs::read_to_string(&file).unwrap()), &at) {
            if import != module {
                edges.entry(import).or_insert_with(|| file.strip_prefix(&src).unwrap().to_path_buf());
            }
        }
    }
    graph
}

/// The cycles of `graph`: its strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeMap<String, PathBuf>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeMap<String, PathBuf>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a str) {
            let at = self.index.len();
            self.index.insert(node, at);
            self.low.insert(node, at);
            self.stack.push(node);
            for next in self.graph.get(node).into_iter().flat_map(|edges| edges.keys()) {
                let next = next.as_str();
                if !self.graph.contains_key(next) {
                    continue;
                }
                if !self.index.contains_key(next) {
                    self.visit(next);
                    self.low.insert(node, self.low[node].min(self.low[next]));
                } else if self.stack.contains(&next) {
                    self.low.insert(node, self.low[node].min(self.index[next]));
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    component.push(top.to_string());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found
}

/// Each edge of `graph` inside `component`, as `a -> b (file)`.
fn edges_within(graph: &BTreeMap<String, BTreeMap<String, PathBuf>>, component: &[String]) -> Vec<String> {
    let mut edges = Vec::new();
    for from in component {
        for (to, file) in &graph[from] {
            if component.contains(to) {
                edges.push(format!("{from} -> {to} ({})", file.display()));
            }
        }
    }
    edges
}

#[test]
fn the_modules_import_one_way() {
    let graph = graph();
    assert!(graph.len() >= 10, "read only {} modules: {:?}", graph.len(), graph.keys());
    let mut problems = Vec::new();
    for component in cycles(&graph) {
        problems.push(format!("import cycle {component:?}:\n    {}", edges_within(&graph, &component).join("\n    ")));
    }
    for (module, forbidden, why) in FORBIDDEN {
        for (import, file) in graph.get(*module).into_iter().flatten() {
            if forbidden.contains(&"*") || forbidden.contains(&import.as_str()) {
                problems.push(format!("{module} imports {import} ({}): {why}", file.display()));
            }
        }
    }
    assert!(problems.is_empty(), "see ARCHITECTURE.md:\n{}", problems.join("\n"));
}

#[test]
fn the_reader_sees_imports_and_skips_comments_and_tests() {
    let text = "use crate::protocol::Frame;\n// crate::server in a comment\nfn f() { crate::oracle::check(); }\n\
                let x = my_crate::model;\nuse crate::server::builtin::Calc;\nuse crate::server::Target;\n\
                #[cfg(test)]\nmod tests {\n    use crate::campaign;\n}\n";
    let seen: Vec<String> = imports(&code(text), &["trigger".to_string()]).into_iter().collect();
    assert_eq!(seen, ["oracle", "protocol", "server", "server::builtin"]);
    let graph: BTreeMap<String, BTreeMap<String, PathBuf>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec!["a"])]
            .into_iter()
            .map(|(from, to)| {
                (from.to_string(), to.into_iter().map(|t| (t.to_string(), PathBuf::from("f.rs"))).collect())
            })
            .collect();
    assert_eq!(cycles(&graph), [vec!["a".to_string(), "b".into(), "c".into()]]);
}

/// A file's module path from `src/` (`diff/case.rs` is `diff::case`, `diff/mod.rs` is `diff`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap();
    let mut segments: Vec<String> =
        relative.components().map(|c| c.as_os_str().to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if segments.last().is_some_and(|last| last == "mod") {
        segments.pop();
    }
    segments
}

/// Every path `code` names from `crate::`, `super::` or `self::`, resolved against the module `at` and with use
/// groups (`use super::{a::B, c}`) spread, as module paths (`["diff", "case", "Case"]`).
fn paths(code: &str, at: &[String]) -> Vec<Vec<String>> {
    let bytes: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_' || bytes[i - 1] == ':');
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        let start = ["crate::", "super::", "self::"].into_iter().find(|p| rest.starts_with(p));
        match start {
            Some(_) if boundary => {
                let mut out = Vec::new();
                i = path_tree(&bytes, i, Vec::new(), &mut out);
                for path in out {
                    if let Some(resolved) = resolve(&path, at) {
                        found.push(resolved);
                    }
                }
            }
            _ => i += 1,
        }
    }
    found
}

/// Reads one path from `chars[at..]` (a use tree: `a::b::{c, d::e}`) onto `prefix`, each leaf into `out`; returns
/// where it ended.
fn path_tree(chars: &[char], mut at: usize, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    loop {
        while chars.get(at).is_some_and(|c| c.is_whitespace()) {
            at += 1;
        }
        if chars.get(at) == Some(&'{') {
            at += 1;
            loop {
                at = path_tree(chars, at, prefix.clone(), out);
                while chars.get(at).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    at += 1;
                }
                match chars.get(at) {
                    Some('}') => return at + 1,
                    None => return at,
                    _ => {}
                }
            }
        }
        let word: String = chars[at..].iter().take_while(|c| c.is_alphanumeric() || **c == '_').collect();
        if word.is_empty() {
            out.push(prefix);
            return at;
        }
        at += word.chars().count();
        prefix.push(word);
        if chars.get(at) == Some(&':') && chars.get(at + 1) == Some(&':') {
            at += 2;
        } else {
            out.push(prefix);
            return at;
        }
    }
}

/// `path` (starting `crate`, `super` or `self`) as a path from the crate root, seen from the module `at`.
fn resolve(path: &[String], at: &[String]) -> Option<Vec<String>> {
    let (head, rest) = path.split_first()?;
    let mut base = match head.as_str() {
        "crate" => Vec::new(),
        "self" => at.to_vec(),
        "super" => at[..at.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while let Some(("super", tail)) = rest.split_first().map(|(h, t)| (h.as_str(), t)) {
        base.pop()?;
        rest = tail;
    }
    base.extend(rest.iter().filter(|s| s.as_str() != "self").cloned());
    Some(base)
}

/// For each folder of `src/`, its files and subfolders (but `mod.rs`) → the siblings each imports, with one file
/// that does: `diff/case.rs` importing `super::record::Record` is `diff: case -> record`.
fn sibling_graphs() -> BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, PathBuf>>> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|file| module_path(&src, file)).collect();
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, PathBuf>>> = BTreeMap::new();
    for file in &files {
        if test_only(file) {
            continue;
        }
        let at = module_path(&src, file);
        for target in paths(&code(&std::fs::read_to_string(file).unwrap()), &at) {
            // The longest common folder of the two, and the sibling each sits in below it.
            let common = at.iter().zip(&target).take_while(|(a, b)| a == b).count();
            let (Some(from), Some(to)) = (at.get(common), target.get(common)) else { continue };
            if !modules.contains(&target[..=common]) {
                continue;
            }
            graphs
                .entry(at[..common].to_vec())
                .or_default()
                .entry(from.clone())
                .or_default()
                .entry(to.clone())
                .or_insert_with(|| file.strip_prefix(&src).unwrap().to_path_buf());
        }
    }
    graphs
}

#[test]
fn no_two_files_of_a_folder_import_each_other() {
    let mut problems = Vec::new();
    for (folder, graph) in sibling_graphs() {
        let folder = if folder.is_empty() { "src".to_string() } else { format!("src/{}", folder.join("/")) };
        for component in cycles(&graph) {
            problems.push(format!(
                "import circle in {folder} between {component:?}:\n    {}",
                edges_within(&graph, &component).join("\n    ")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "see ARCHITECTURE.md (move the shared piece down, or merge):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_file_reader_resolves_super_and_groups() {
    let at: Vec<String> = ["diff", "case"].map(String::from).to_vec();
    let text = "use super::{record::Record, report};\nuse crate::protocol::id::{self, Id};\nfn f() { self::g(); }\n";
    let seen: Vec<String> = paths(text, &at).into_iter().map(|p| p.join("::")).collect();
    assert_eq!(seen, ["diff::record::Record", "diff::report", "protocol::id", "protocol::id::Id", "diff::case::g"]);
    let deeper: Vec<String> = ["server", "transport", "stdio", "barrier"].map(String::from).to_vec();
    let seen: Vec<String> = paths("use super::super::Target;", &deeper).into_iter().map(|p| p.join("::")).collect();
    assert_eq!(seen, ["server::transport::Target"]);
}

/// The most lines a source file of `src/` may have, its tests included: past it, a file holds more than one idea.
const MAX_LINES: usize = 800;

#[test]
fn no_source_file_is_over_800_lines() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let long: Vec<String> = files
        .iter()
        .map(|file| (file, std::fs::read_to_string(file).unwrap().lines().count()))
        .filter(|(_, lines)| *lines > MAX_LINES)
        .map(|(file, lines)| format!("{} ({lines} lines)", file.strip_prefix(&src).unwrap().display()))
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines; split by idea: {long:?}");
}

#[test]
fn fuzz_learns_its_server_through_the_learn_stage_alone() {
    let fuzz = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/cli/fuzz.rs")).unwrap();
    let code = code(&fuzz);
    let rooms: BTreeSet<String> = code
        .match_indices("learn::")
        .map(|(at, _)| code[at + "learn::".len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
        .collect();
    assert_eq!(rooms, BTreeSet::from(["stage".to_string()]), "`fuzz` learns through learn::stage alone");
}
