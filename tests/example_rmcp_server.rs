//! The example crate `examples/rmcp-server` (rmcp-calc's calc written with rmcp, set up by `mcp-wirefuzz init`)
//! through the three entry points, with its planted bug off and on (feature `planted-bug`): the property test
//! finds the bug, shrinks it to a small script and persists the seed; the fuzz target's body finds it (and
//! `cargo +nightly fuzz run wirefuzz` does, when cargo-fuzz is installed); the replay test fails on the bug's case
//! file; with the bug off all three pass. It builds rmcp, so it is in the slow tier (`WIREFUZZ_SLOW=1`).

#[path = "common/tier.rs"]
mod tier;

use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn example() -> PathBuf {
    root().join("examples/rmcp-server")
}

fn enabled() -> bool {
    tier::slow("the example rmcp server (it builds rmcp)")
}

/// `cargo test` in the example crate, with the planted bug or without.
fn cargo_test(planted: bool, test: Option<&str>) -> (bool, String) {
    let mut command = Command::new(env!("CARGO"));
    command.current_dir(example()).args(["test", "--quiet"]).env("RUST_BACKTRACE", "0");
    // The example is a crate of its own: it builds beside the caller's build, not in it.
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        command.env("CARGO_TARGET_DIR", PathBuf::from(target).join("example"));
    }
    if planted {
        command.args(["--features", "planted-bug"]);
    }
    if let Some(test) = test {
        command.args(["--test", test]);
    }
    let Output { status, stdout, stderr } = command.output().expect("cargo runs");
    (status.success(), format!("{}{}", String::from_utf8_lossy(&stdout), String::from_utf8_lossy(&stderr)))
}

fn tail(text: &str) -> &str {
    &text[text.floor_char_boundary(text.len().saturating_sub(3000))..]
}

#[test]
fn the_example_finds_its_planted_bug_through_every_entry_point() {
    if !enabled() {
        return;
    }
    let persisted = example().join("proptest-regressions/wirefuzz_properties.txt");
    let _ = std::fs::remove_file(&persisted);

    let (clean, output) = cargo_test(false, None);
    assert!(clean, "with the bug off every test passes:\n{}", tail(&output));

    let (passed, output) = cargo_test(true, Some("wirefuzz_properties"));
    assert!(!passed, "the property test finds the planted bug");
    assert!(output.contains("SERVER-HANDLER-PANIC") && output.contains("index out of bounds"), "{}", tail(&output));
    let report = &output[output.find("smallest failing script").expect("a shrunk script")..];
    let case = &report[report.find("# mcp-wirefuzz case").expect("a case file in the report")..];
    let frames = case.lines().take_while(|l| !l.starts_with("# <<")).filter(|l| l.starts_with(">> ")).count();
    assert!(frames <= 4, "shrunk to {frames} frames:\n{case}");
    let seeds = std::fs::read_to_string(&persisted).expect("the failing seed persists in proptest-regressions/");
    assert!(seeds.lines().any(|l| l.starts_with("cc ")), "{seeds}");
    std::fs::remove_file(&persisted).unwrap();

    let (passed, output) = cargo_test(true, Some("fuzz_body"));
    assert!(passed, "the fuzz target's body finds the planted bug:\n{}", tail(&output));

    let (passed, output) = cargo_test(true, Some("wirefuzz_replay"));
    assert!(!passed, "the replay test fails on the bug's case file");
    assert!(
        output.contains("add-two-and-two-panics.case") && output.contains("SERVER-HANDLER-PANIC"),
        "{}",
        tail(&output)
    );
}

#[test]
fn cargo_fuzz_finds_the_planted_bug() {
    if !enabled() {
        return;
    }
    let available = Command::new("cargo").args(["+nightly", "fuzz", "--version"]).output();
    if !available.is_ok_and(|o| o.status.success()) {
        return tier::skip("cargo fuzz on the example", "`cargo +nightly fuzz` is not available");
    }
    let artifacts = std::env::temp_dir().join(format!("wirefuzz-example-artifacts-{}", std::process::id()));
    std::fs::create_dir_all(&artifacts).unwrap();
    let mut command = Command::new("cargo");
    command
        .current_dir(example())
        .args(["+nightly", "fuzz", "run", "wirefuzz", "--sanitizer", "none"])
        .args(["--features", "wirefuzz-example-rmcp/planted-bug", "--"])
        .args(["-runs=200000".to_string(), format!("-artifact_prefix={}/", artifacts.display())])
        .env("RUST_BACKTRACE", "0");
    // The target folder of tests/fuzz_smoke.rs's `cargo fuzz` builds (the caller's CARGO_TARGET_DIR, or fuzz/target
    // as cargo fuzz picks it there): fuzz/Cargo.toml has this fuzz crate's dependencies, features and locked
    // versions, so whichever build comes second compiles only its own crates (.ci/slow-builds does both first).
    let shared = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("fuzz/target"), PathBuf::from);
    command.env("CARGO_TARGET_DIR", shared);
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "cargo fuzz did not find the planted bug in 200,000 runs");
    assert!(
        stderr.contains("mcp-wirefuzz: broke SERVER-HANDLER-PANIC") && stderr.contains("index out of bounds"),
        "{}",
        tail(&stderr)
    );
    assert_eq!(std::fs::read_dir(&artifacts).unwrap().count(), 1, "one crash artifact");
    std::fs::remove_dir_all(&artifacts).unwrap();
}
