//! `mcp-wirefuzz init`: writes the three [`crate::harness`] entry points into a user's crate (in the spirit of
//! `cargo fuzz init`), never overwriting a file that exists.
//!
//! - `fuzz/Cargo.toml`, `fuzz/.gitignore` and `fuzz/fuzz_targets/wirefuzz.rs`: a `cargo fuzz` target;
//! - `tests/wirefuzz_properties.rs`: the property test;
//! - `tests/wirefuzz_replay.rs`: the replay test over `wirefuzz-cases/`;
//! - `WIREFUZZ.md`: how to run them.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// What `init` writes into a crate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Init {
    /// The crate's package name, as in its `Cargo.toml`.
    pub package: String,
    /// A Rust expression for the server: an rmcp handler when `rmcp` is set, else an
    /// [`crate::server::InProcessServer`].
    pub server: String,
    /// True for an rmcp server: the expression is wrapped in `Rmcp::fresh(|| ...)` (a new handler per
    /// conversation, see `mcp_wirefuzz::server::rmcp`, feature `rmcp`) and checked under rmcp's policy.
    pub rmcp: bool,
    /// The name of the crate's binary when it has one (`src/main.rs`: the package name), for fuzzing it over stdio.
    pub binary: Option<String>,
    /// The `mcp-wirefuzz` dependency, as a TOML inline table (e.g. `{ version = "0.1" }`, `{ path = "../wf" }`);
    /// the files add `default-features = false` (the library without the command line) and the features they need.
    pub dependency: String,
}

/// Whether `init` wrote a file or left the existing one alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The file did not exist and was written.
    Written,
    /// The file existed and was left as it was.
    Skipped,
}

impl Init {
    /// The defaults for the crate in `dir`: its package name, `rmcp` when it depends on rmcp, the server
    /// `CRATE::NAME::default()` (NAME: the type `src/lib.rs` implements rmcp's `ServerHandler` for, else `Server`),
    /// and the published mcp-wirefuzz of this binary's version ([`version_dependency`]).
    pub fn for_crate(dir: &Path) -> Result<Init> {
        let manifest = dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest)
            .with_context(|| format!("{} not found: run `mcp-wirefuzz init` in a crate", manifest.display()))?;
        let package = package_name(&text).with_context(|| format!("no package name in {}", manifest.display()))?;
        let rmcp = text.lines().any(|line| line.trim_start().starts_with("rmcp"));
        let library = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap_or_default();
        let handler = handler_type(&library).filter(|_| rmcp).unwrap_or_else(|| "Server".to_string());
        Ok(Init {
            server: format!("{}::{handler}::default()", package.replace('-', "_")),
            binary: dir.join("src/main.rs").exists().then(|| package.clone()),
            package,
            rmcp,
            dependency: version_dependency(),
        })
    }

    /// The files, relative to the crate's root, and their text.
    pub fn files(&self) -> Vec<(&'static str, String)> {
        let (uses, server, policy, features) = if self.rmcp {
            (
                "use mcp_wirefuzz::sdk::rmcp::policy;\nuse mcp_wirefuzz::server::rmcp::Rmcp;",
                format!("Rmcp::fresh(|| {})", self.server),
                "policy()",
                ", features = [\"rmcp\"]",
            )
        } else {
            ("use mcp_wirefuzz::oracle::Policy;", self.server.clone(), "Policy::default()", "")
        };
        let dependency = library_only(&self.dependency, features);
        let fuzz_dependency = one_folder_down(&dependency);
        let fuzz_manifest = format!(
            "[package]\nname = \"{package}-wirefuzz\"\nversion = \"0.0.0\"\npublish = false\nedition = \"2021\"\n\n\
             [package.metadata]\ncargo-fuzz = true\n\n[dependencies]\nlibfuzzer-sys = \"0.4\"\n\
             mcp-wirefuzz = {fuzz_dependency}\n{package} = {{ path = \"..\" }}\n\n\
             # Not a member of the crate's workspace: it builds with nightly and sanitizers only.\n\
             [workspace]\nmembers = [\".\"]\n\n\
             [[bin]]\nname = \"wirefuzz\"\npath = \"fuzz_targets/wirefuzz.rs\"\ntest = false\ndoc = false\nbench = false\n",
            package = self.package,
        );
        let fuzz_target = format!(
            "//! mcp-wirefuzz's fuzz target for this crate's MCP server: `cargo +nightly fuzz run wirefuzz`.\n\
             #![no_main]\n\n{uses}\n\n\
             libfuzzer_sys::fuzz_target!(|data: &[u8]| {{\n    \
             mcp_wirefuzz::harness::fuzz_under(&{server}, data, &{policy});\n}});\n"
        );
        let properties = format!(
            "//! mcp-wirefuzz's property test: generated conversations must break no rule. Failures shrink to a small\n\
             //! script (printed as a case file to keep in wirefuzz-cases/) and persist in proptest-regressions/.\n\n{uses}\n\n\
             #[test]\nfn the_server_breaks_no_wirefuzz_rule() {{\n    \
             mcp_wirefuzz::harness::property_under(&{server}, &{policy}, Default::default());\n}}\n"
        );
        let replay = format!(
            "//! mcp-wirefuzz's regression test: every case file (and libFuzzer crash-* artifact) in wirefuzz-cases/\n\
             //! must run clean.\n\n{uses}\n\n\
             #[test]\nfn every_wirefuzz_case_passes() {{\n    \
             let cases = concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/wirefuzz-cases\");\n    \
             mcp_wirefuzz::harness::replay_under(&{server}, cases, &{policy});\n}}\n"
        );
        let state = if self.rmcp {
            "`Rmcp::fresh(|| ...)` builds a new handler for each conversation, so what your handler keeps (a store\n\
             behind an `Arc<Mutex<...>>`) never carries over from one conversation to the next: a failure depends on\n\
             its own conversation only, and its case file fails on its own. (`Rmcp(handler)` would serve clones of one\n\
             handler, which share that state.) To test a configuration (a flag, an environment variable), build it in\n\
             the expression, e.g. `Rmcp::fresh(|| my_server::Handler::new(std::env::var(\"MODE\").ok()))`.\n\n"
        } else {
            ""
        };
        let stdout = match &self.binary {
            Some(binary) => format!(
                "In-process, what the server prints with `println!` is not on the wire (stdout is the test's), so\n\
                 a stray line on the protocol's channel is found over stdio only: `cargo build`, then\n\
                 `mcp-wirefuzz fuzz --time 60 -- target/debug/{binary}`.\n"
            ),
            None => String::new(),
        };
        let note = format!(
            "# Fuzzing this crate's MCP server with mcp-wirefuzz\n\n\
             `mcp-wirefuzz init` wrote the files below; it never overwrites a file. Each drives `{server}` in-process.\n\
             If that is not your server, edit the expression in each file (or run `mcp-wirefuzz init --server EXPR`\n\
             on a fresh crate). The server must be reachable from tests: a library crate, or a `lib.rs` next to\n\
             `main.rs`.\n\n{state}\
             Add the harness as a dev-dependency, in Cargo.toml:\n\n\
             ```toml\n[dev-dependencies]\nmcp-wirefuzz = {dependency}\n```\n\n\
             | File | What it does | Run it |\n|---|---|---|\n\
             | tests/wirefuzz_properties.rs | 256 generated conversations; a failure shrinks and persists in proptest-regressions/ | `cargo test --test wirefuzz_properties` (more: `PROPTEST_CASES=10000`) |\n\
             | tests/wirefuzz_replay.rs | every case in wirefuzz-cases/ must run clean | `cargo test --test wirefuzz_replay` |\n\
             | fuzz/fuzz_targets/wirefuzz.rs | libFuzzer, structure-aware | `cargo +nightly fuzz run wirefuzz` |\n\n\
             A failure prints the broken rule (a handler's panic or hang names the tool and its arguments), the\n\
             transcript and a case file: save that as wirefuzz-cases/NAME.case to keep it as a regression test. A\n\
             libFuzzer crash can be kept as it is: copy fuzz/artifacts/wirefuzz/crash-* into wirefuzz-cases/. The\n\
             property test runs its persisted failures (proptest-regressions/) first, so rerunning it reproduces one.\n\
             {}{stdout}",
            if stdout.is_empty() { "" } else { "\n" }
        );
        vec![
            ("fuzz/Cargo.toml", fuzz_manifest),
            ("fuzz/.gitignore", "target\ncorpus\nartifacts\ncoverage\n".to_string()),
            ("fuzz/fuzz_targets/wirefuzz.rs", fuzz_target),
            ("tests/wirefuzz_properties.rs", properties),
            ("tests/wirefuzz_replay.rs", replay),
            ("WIREFUZZ.md", note),
        ]
    }

    /// Writes every file that does not exist yet under `dir`; returns each file and what happened to it.
    pub fn write(&self, dir: &Path) -> Result<Vec<(PathBuf, Outcome)>> {
        let mut done = Vec::new();
        for (relative, text) in self.files() {
            let path = dir.join(relative);
            if path.exists() {
                done.push((path, Outcome::Skipped));
                continue;
            }
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
            }
            // create_new: a file that appeared meanwhile is not overwritten either.
            let written = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .and_then(|mut file| std::io::Write::write_all(&mut file, text.as_bytes()));
            written.with_context(|| format!("cannot write {}", path.display()))?;
            done.push((path, Outcome::Written));
        }
        Ok(done)
    }
}

/// The type a library implements rmcp's `ServerHandler` for (`impl ServerHandler for NAME`, or with a path to the
/// trait), when there is one (the first one, a generic one not counted).
fn handler_type(library: &str) -> Option<String> {
    library.lines().map(str::trim_start).filter(|line| line.starts_with("impl ")).find_map(|line| {
        let (_, after) = line.split_once("ServerHandler for ")?;
        let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let generic = after[name.len()..].starts_with('<');
        (!name.is_empty() && !generic).then_some(name)
    })
}

/// The `name` of the `[package]` table of a Cargo.toml.
fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package && let Some(value) = line.strip_prefix("name").map(str::trim_start) {
            let value = value.strip_prefix('=')?.trim();
            return Some(value.trim_matches('"').to_string()).filter(|name| !name.is_empty());
        }
    }
    None
}

/// The published mcp-wirefuzz of this binary's version, as `{ version = "MAJOR.MINOR" }`: it works wherever the
/// binary was built (never a path of the machine that built it).
pub fn version_dependency() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let major_minor: Vec<&str> = version.split('.').take(2).collect();
    format!("{{ version = \"{}\" }}", major_minor.join("."))
}

/// mcp-wirefuzz by path (`init --path`), written as given: a relative path is relative to the crate's folder.
pub fn path_dependency(path: &str) -> String {
    format!("{{ path = {} }}", toml_string(path))
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut quoted = String::from('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                quoted.push('\\');
                quoted.push(c);
            }
            c if c.is_control() => quoted.push_str(&format!("\\u{:04X}", c as u32)),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// The dependency table as the library only: `default-features = false` (no command line, so a user's crate
/// builds none of its dependencies) and `features` (`, features = [...]`, or empty) added before its closing brace,
/// each unless the table already says it. A bare version string becomes `{ version = ... }` first.
fn library_only(dependency: &str, features: &str) -> String {
    let dependency = dependency.trim();
    if dependency.starts_with('"') {
        return library_only(&format!("{{ version = {dependency} }}"), features);
    }
    let Some(open) = dependency.strip_suffix('}') else { return dependency.to_string() };
    let mut table = open.trim_end().to_string();
    if !dependency.contains("default-features") {
        table.push_str(", default-features = false");
    }
    if !dependency.replace("default-features", "").contains("features") {
        table.push_str(features);
    }
    table.push_str(" }");
    table
}

/// The dependency as seen from `fuzz/`: a relative `path = "..."` gains a `../`.
fn one_folder_down(dependency: &str) -> String {
    let Some(start) = dependency.find("path = \"").map(|i| i + "path = \"".len()) else {
        return dependency.to_string();
    };
    if Path::new(&dependency[start..]).is_absolute() {
        return dependency.to_string();
    }
    format!("{}../{}", &dependency[..start], &dependency[start..])
}

/// Checks an `--server` expression is one line (it is pasted into three files).
pub fn check_server_expression(expression: &str) -> Result<()> {
    if expression.trim().is_empty() || expression.contains('\n') {
        bail!("--server takes one line of Rust: an expression that builds the server");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("wirefuzz-init-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn init_writes_the_files_once_and_never_overwrites() {
        let dir = scratch("fresh");
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"my-server\"\n\n[dependencies]\nrmcp = \"3\"\n")
            .unwrap();
        let init = Init::for_crate(&dir).unwrap();
        assert_eq!((init.package.as_str(), init.rmcp), ("my-server", true));
        assert_eq!(init.server, "my_server::Server::default()");
        std::fs::create_dir_all(dir.join("tests")).unwrap();
        std::fs::write(dir.join("tests/wirefuzz_replay.rs"), "mine").unwrap();
        let done = init.write(&dir).unwrap();
        let skipped: Vec<_> = done.iter().filter(|(_, o)| *o == Outcome::Skipped).map(|(p, _)| p.clone()).collect();
        assert_eq!(skipped, vec![dir.join("tests/wirefuzz_replay.rs")]);
        assert_eq!(std::fs::read_to_string(dir.join("tests/wirefuzz_replay.rs")).unwrap(), "mine");
        let target = std::fs::read_to_string(dir.join("fuzz/fuzz_targets/wirefuzz.rs")).unwrap();
        assert!(target.contains("fuzz_under(&Rmcp::fresh(|| my_server::Server::default()), data, &policy())"));
        assert!(target.contains("use mcp_wirefuzz::sdk::rmcp::policy;\nuse mcp_wirefuzz::server::rmcp::Rmcp;"));
        let manifest = std::fs::read_to_string(dir.join("fuzz/Cargo.toml")).unwrap();
        assert!(manifest.contains("features = [\"rmcp\"] }") && manifest.contains("my-server = { path = \"..\" }"));
        let again = init.write(&dir).unwrap();
        assert!(again.iter().all(|(_, o)| *o == Outcome::Skipped));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_crate_without_rmcp_gets_its_own_server_and_the_default_policy() {
        let dir = scratch("plain");
        std::fs::write(dir.join("Cargo.toml"), "[workspace]\n\n[package]\nedition = \"2024\"\nname = \"plain\"\n")
            .unwrap();
        let init = Init { server: "plain::MyServer".into(), ..Init::for_crate(&dir).unwrap() };
        assert!(!init.rmcp);
        let files = init.files();
        let properties = &files.iter().find(|(p, _)| *p == "tests/wirefuzz_properties.rs").unwrap().1;
        assert!(properties.contains("property_under(&plain::MyServer, &Policy::default(), Default::default())"));
        assert!(!files[0].1.contains("features = ["));
        let relative = Init { dependency: "{ path = \"../..\" }".into(), ..init };
        assert!(relative.files()[0].1.contains("mcp-wirefuzz = { path = \"../../..\", default-features = false }"));
        assert!(Init::for_crate(&dir.join("nowhere")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The text of the file `name` among `files`.
    fn file<'a>(files: &'a [(&str, String)], name: &str) -> &'a str {
        &files.iter().find(|(path, _)| *path == name).unwrap().1
    }

    #[test]
    fn by_default_the_dependency_is_the_published_version_and_no_path_of_this_machine() {
        let dir = scratch("version");
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"srv\"\n[dependencies]\nrmcp = \"3\"\n").unwrap();
        let init = Init::for_crate(&dir).unwrap();
        let files = init.files();
        let line = format!(
            "mcp-wirefuzz = {{ version = \"{}\", default-features = false, features = [\"rmcp\"] }}",
            env!("CARGO_PKG_VERSION_MAJOR").to_string() + "." + env!("CARGO_PKG_VERSION_MINOR")
        );
        assert!(file(&files, "fuzz/Cargo.toml").contains(&line), "{}", file(&files, "fuzz/Cargo.toml"));
        assert!(file(&files, "WIREFUZZ.md").contains(&line));
        let here = env!("CARGO_MANIFEST_DIR");
        assert!(files.iter().all(|(_, text)| !text.contains(here)), "a file names {here}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_path_given_is_written_as_given_and_one_folder_down_in_fuzz() {
        let init = Init {
            package: "srv".into(),
            server: "srv::S".into(),
            rmcp: false,
            binary: None,
            dependency: path_dependency("../my \"wirefuzz\""),
        };
        let files = init.files();
        let md = file(&files, "WIREFUZZ.md");
        assert!(md.contains("mcp-wirefuzz = { path = \"../my \\\"wirefuzz\\\"\", default-features = false }"), "{md}");
        let fuzz = file(&files, "fuzz/Cargo.toml");
        assert!(fuzz.contains("mcp-wirefuzz = { path = \"../../my \\\"wirefuzz\\\"\", default-features = false }"));
        let absolute = Init { dependency: path_dependency("/opt/wf"), ..init };
        assert!(file(&absolute.files(), "fuzz/Cargo.toml").contains("mcp-wirefuzz = { path = \"/opt/wf\","));
    }

    #[test]
    fn a_table_that_names_its_features_keeps_them() {
        assert_eq!(library_only("{ version = \"0.1\" }", ""), "{ version = \"0.1\", default-features = false }");
        let own = "{ git = \"https://example.org/wf\", default-features = true, features = [\"cli\"] }";
        assert_eq!(library_only(own, ", features = [\"rmcp\"]"), own);
        let bare = library_only("\"0.1\"", ", features = [\"rmcp\"]");
        assert_eq!(bare, "{ version = \"0.1\", default-features = false, features = [\"rmcp\"] }");
        assert_eq!(toml_string("a\\b\n"), "\"a\\\\b\\u000A\"");
    }

    #[test]
    fn the_server_is_the_handler_the_library_implements_and_the_note_tells_what_in_process_cannot_see() {
        let dir = scratch("handler");
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"my-notes\"\n[dependencies]\nrmcp = \"3\"\n")
            .unwrap();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let library =
            "impl<T> ServerHandler for Wrapper<T> {}\n#[tool_handler]\nimpl rmcp::ServerHandler for Notes {}\n";
        std::fs::write(dir.join("src/lib.rs"), library).unwrap();
        std::fs::write(dir.join("src/main.rs"), "fn main() {}").unwrap();
        let init = Init::for_crate(&dir).unwrap();
        assert_eq!((init.server.as_str(), init.binary.as_deref()), ("my_notes::Notes::default()", Some("my-notes")));
        let files = init.files();
        let note = file(&files, "WIREFUZZ.md");
        assert!(note.contains("Each drives `Rmcp::fresh(|| my_notes::Notes::default())` in-process"), "{note}");
        assert!(note.contains("a new handler for each conversation"), "{note}");
        assert!(note.contains("mcp-wirefuzz fuzz --time 60 -- target/debug/my-notes"), "{note}");
        assert_eq!(handler_type("struct Server;\nimpl Default for Server {}\n"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn server_expressions_are_one_line() {
        assert!(check_server_expression("a::B::default()").is_ok());
        assert!(check_server_expression("a\nb").is_err() && check_server_expression(" ").is_err());
    }
}
