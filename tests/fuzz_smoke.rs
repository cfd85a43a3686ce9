//! A short libFuzzer run of every cargo-fuzz target (`cargo +nightly fuzz run --sanitizer none TARGET`: no
//! AddressSanitizer, which finds nothing in safe Rust and slows the instrumented build), in the slow tier
//! (`WIREFUZZ_SLOW=1`: minutes of instrumented nightly builds, then seconds of runs) when nightly and cargo-fuzz
//! are installed (skipped with a message otherwise): `conversation`, `server_lines` and `oracle` survive 2,000 runs
//! from their seed corpus; `mutant` and `mutant_bytes`, each pinned to one planted bug and started from an empty
//! corpus, find it.
//!
//! The runs work on copies of the corpora and write artifacts to a temporary folder, so the committed corpus stays
//! as `mcp-wirefuzz corpus` made it.
//!
//! The quick tier checks that `fuzz/Cargo.lock` and the example crate's `examples/rmcp-server/fuzz/Cargo.lock` pin
//! the same crates: both `cargo fuzz` builds use one target folder, where the second reuses the first's crates only
//! when their versions and features are the same (`fuzz/Cargo.toml` depends on the example crate for the features).

#[path = "common/tier.rs"]
mod tier;

use mcp_wirefuzz::fuzz_targets::{FuzzTarget, MUTANT_VARIABLE};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cargo_fuzz_available() -> bool {
    Command::new("cargo").args(["+nightly", "fuzz", "--version"]).output().is_ok_and(|o| o.status.success())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirefuzz-smoke-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_corpus(target: FuzzTarget, into: &Path) {
    for entry in std::fs::read_dir(root().join("corpus").join(target.name())).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, into.join(path.file_name().unwrap())).unwrap();
    }
}

fn fuzz(target: FuzzTarget, corpus: &Path, artifacts: &Path, runs: u32, mutant: Option<&str>) -> Output {
    let mut command = Command::new("cargo");
    command
        .current_dir(root())
        .args(["+nightly", "fuzz", "run", "--sanitizer", "none", target.name()])
        .arg(corpus)
        .args(["--".to_string(), format!("-runs={runs}"), format!("-artifact_prefix={}/", artifacts.display())]);
    if let Some(mutant) = mutant {
        command.env(MUTANT_VARIABLE, mutant);
    }
    command.output().unwrap()
}

#[test]
fn every_fuzz_target_survives_or_finds_its_bug() {
    if !tier::slow("the libFuzzer smoke runs") {
        return;
    }
    if !cargo_fuzz_available() {
        let why = "`cargo +nightly fuzz` is not available (rustup toolchain install nightly; cargo install cargo-fuzz)";
        return tier::skip("the libFuzzer smoke runs", why);
    }
    for target in [FuzzTarget::Conversation, FuzzTarget::ServerLines, FuzzTarget::Oracle] {
        let (corpus, artifacts) = (scratch(&format!("{target}-corpus")), scratch(&format!("{target}-artifacts")));
        copy_corpus(target, &corpus);
        let output = fuzz(target, &corpus, &artifacts, 2_000, None);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{target} failed:\n{}", &stderr[stderr.len().saturating_sub(4000)..]);
        // libFuzzer counts a rerun for leak detection (after a run whose mallocs and frees differ) as a run of its
        // own, so a clean run of 2,000 may end at "Done 2001 runs".
        let done =
            stderr.lines().find_map(|line| line.strip_prefix("Done ")?.split_once(" runs")?.0.parse::<u32>().ok());
        assert!(done.is_some_and(|runs| runs >= 2_000), "{target}: {}", &stderr[stderr.len().saturating_sub(2000)..]);
    }
    for (target, mutant, rule) in [
        (FuzzTarget::Mutant, "no-cache-hints", "MCP-CACHE-HINTS"),
        (FuzzTarget::MutantBytes, "crash-on-batch", "SERVER-CRASH"),
    ] {
        let (corpus, artifacts) = (scratch(&format!("{target}-corpus")), scratch(&format!("{target}-artifacts")));
        let output = fuzz(target, &corpus, &artifacts, 200_000, Some(mutant));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{target} did not find {mutant} in 200,000 runs");
        let broke = stderr.lines().find_map(|line| line.strip_prefix("mcp-wirefuzz: broke "));
        assert!(broke.is_some_and(|rules| rules.contains(rule)), "{}", &stderr[stderr.len().saturating_sub(4000)..]);
        assert_eq!(std::fs::read_dir(&artifacts).unwrap().count(), 1, "{target}: one artifact expected");
    }
}

/// `NAME VERSION` of every package a `Cargo.lock` pins.
fn locked(lock: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join(lock)).unwrap();
    let field =
        |line: &str, key: &str| Some(line.strip_prefix(key)?.strip_prefix(" = \"")?.strip_suffix('"')?.to_string());
    let mut packages = BTreeSet::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(value) = field(line, "name") {
            name = Some(value);
        } else if let (Some(version), Some(name)) = (field(line, "version"), name.take()) {
            packages.insert(format!("{name} {version}"));
        }
    }
    packages
}

#[test]
fn both_fuzz_crates_lock_the_same_dependencies() {
    let (ours, example) = (locked("fuzz/Cargo.lock"), locked("examples/rmcp-server/fuzz/Cargo.lock"));
    let only_ours: Vec<&String> = ours.difference(&example).collect();
    let only_example: Vec<&String> = example.difference(&ours).collect();
    // Only the two fuzz crates themselves differ; anything else is a crate built twice (run `cargo update` with
    // the other lock file's version, or copy the example's lock file over fuzz/Cargo.lock and run `cargo metadata`).
    assert_eq!(only_ours, ["mcp-wirefuzz-fuzz 0.0.0"], "only in fuzz/Cargo.lock");
    assert_eq!(only_example, ["wirefuzz-example-rmcp-wirefuzz 0.0.0"], "only in the example's fuzz/Cargo.lock");
}
