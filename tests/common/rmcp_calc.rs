//! The rmcp server of the real-server tests (`tests/servers/rmcp-calc`, rmcp 3.11.0), built on demand.
//!
//! Its case files name `tests/servers/rmcp-calc/target/release/rmcp-calc`, so it is built into that folder
//! whatever the caller's `CARGO_TARGET_DIR` says (`--target-dir` wins over the variable).

use std::path::PathBuf;
use std::process::Command;

/// The binary the case files name, relative to the crate's root.
pub const BINARY: &str = "tests/servers/rmcp-calc/target/release/rmcp-calc";

/// Builds rmcp-calc (quick when it is up to date) and returns its absolute path; panics with cargo's word if the
/// build fails.
pub fn build() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let crate_dir = root.join("tests/servers/rmcp-calc");
    let output = Command::new("cargo")
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(crate_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(crate_dir.join("target"))
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("cannot run cargo");
    assert!(
        output.status.success(),
        "cannot build tests/servers/rmcp-calc:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let binary = root.join(BINARY);
    assert!(binary.exists(), "cargo built tests/servers/rmcp-calc but {} is missing", binary.display());
    binary
}
