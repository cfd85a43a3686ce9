//! The `python-default` section: conversations/s of the CLI's `fuzz --jobs 2` against Python servers named as a
//! user names them, the Python SDK's calc as an installed console script and a FastMCP server, through the fork
//! server the harness starts by itself, against the same runs with `--no-fork-server` (an interpreter per
//! conversation). Needs `.ci/python-venv --bench` (`.venv-bench`: fastmcp and the console script); says SKIPPED
//! without it.

use super::common::root;
use std::process::Command;
use std::time::Instant;

/// How long each run fuzzes (`--time`).
const SECS: u64 = 60;

/// One row: the server, how it was run, the rate the CLI printed (fuzzing time) and the rate over the whole run
/// (the fork server's start, the probe and the surface learning included).
fn row(name: &str, argv: &[String], fork: bool) {
    let out = std::env::temp_dir().join(format!("wirefuzz-bench-python-default-{}", std::process::id()));
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"));
    command.current_dir(root()).args(["fuzz", "--jobs", "2", "--seed", "1", "--time", &SECS.to_string(), "--out"]);
    command.arg(&out);
    if !fork {
        command.arg("--no-fork-server");
    }
    let started = Instant::now();
    let output = command.arg("--").args(argv).output().expect("cannot run mcp-wirefuzz");
    let wall = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = stderr.lines().next().unwrap_or_default();
    // `ran N conversations in Xs (R/s), seed 1; ...`
    let ran = stdout.lines().chain(stderr.lines()).find_map(|line| line.strip_prefix("ran "));
    let Some((count, rest)) = ran.and_then(|ran| ran.split_once(" conversations in ")) else {
        println!("| {name} | {} | FAILED: {first} |", if fork { "fork server" } else { "--no-fork-server" });
        return;
    };
    let count: f64 = count.parse().unwrap_or(0.0);
    let fuzzing: f64 = rest.split('s').next().and_then(|secs| secs.parse().ok()).unwrap_or(f64::NAN);
    println!(
        "| {name} | {} | {:.1} ({count} in {fuzzing:.1} s) | {:.1} ({wall:.1} s in all) | {first} |",
        if fork { "fork server (default)" } else { "`--no-fork-server`" },
        count / fuzzing,
        count / wall,
    );
}

/// The section: each server through the fork server, then plain.
pub(crate) fn python_default() {
    println!("## Python servers, `fuzz --jobs 2 --seed 1 --time {SECS}`, through the fork server by default and plain");
    println!("| server | run | conversations/s (fuzzing) | conversations/s (whole run) | the run's first line |");
    println!("|---|---|---|---|---|");
    let venv = root().join(".venv-bench/bin");
    let console = venv.join("wirefuzz-bench-calc");
    let ready = Command::new(venv.join("python")).args(["-c", "import fastmcp"]).output();
    if !console.exists() || !ready.is_ok_and(|o| o.status.success()) {
        println!(
            "| Python servers | SKIPPED: run `.ci/python-venv --bench` (.venv-bench: fastmcp, wirefuzz-bench-calc) |"
        );
        return;
    }
    let servers = [
        (
            "Python SDK 2.3.0 calc, console script (`.venv-bench/bin/wirefuzz-bench-calc`)",
            vec![".venv-bench/bin/wirefuzz-bench-calc"],
        ),
        (
            "FastMCP 4.1.6 calc (`.venv-bench/bin/python benches/python/fastmcp_calc.py`)",
            vec![".venv-bench/bin/python", "benches/python/fastmcp_calc.py"],
        ),
    ];
    for (name, argv) in servers {
        let argv: Vec<String> = argv.into_iter().map(str::to_string).collect();
        row(name, &argv, true);
        row(name, &argv, false);
    }
}
