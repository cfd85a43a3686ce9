//! Conversations/s of rmcp-calc in-process (this crate's `Calc`, rmcp-calc's handler, through mcp-wirefuzz's rmcp
//! adapter) next to rmcp-calc over stdio (`tests/servers/rmcp-calc`, built here, one fresh process per
//! conversation with a warm spare): the same generated conversations, each run and checked under rmcp's policy,
//! one job. `cargo bench` in this folder; prints a table row for the README.

use mcp_wirefuzz::campaign::conversation;
use mcp_wirefuzz::oracle::check;
use mcp_wirefuzz::sdk::rmcp::policy;
use mcp_wirefuzz::server::rmcp::Rmcp;
use mcp_wirefuzz::server::{InProcess, ServerCommand, ServerSpec, Target, Timeouts};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs and checks conversations for `budget`; returns how many and how long they took.
fn measure(target: &mut dyn Target, budget: Duration) -> (u64, Duration) {
    let policy = policy();
    let started = Instant::now();
    let mut count = 0;
    while started.elapsed() < budget {
        let transcript = target.run(&conversation(1, count)).expect("the server runs");
        std::hint::black_box(check(&transcript, &policy));
        count += 1;
    }
    (count, started.elapsed())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let manifest = root.join("tests/servers/rmcp-calc/Cargo.toml");
    let built = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .env_remove("CARGO_TARGET_DIR")
        .status();
    assert!(built.is_ok_and(|s| s.success()), "cannot build tests/servers/rmcp-calc");
    let binary = root.join("tests/servers/rmcp-calc/target/release/rmcp-calc");
    let command = ServerCommand::from_argv(&[binary.display().to_string()]).unwrap();

    let mut in_process = InProcess(Rmcp(wirefuzz_example_rmcp::Calc::default()));
    let (fast, fast_time) = measure(&mut in_process, Duration::from_secs(10));
    let mut stdio = ServerSpec::Command(command).pooled_target(Timeouts::default());
    let (slow, slow_time) = measure(stdio.as_mut(), Duration::from_secs(30));

    let rate = |count: u64, time: Duration| count as f64 / time.as_secs_f64();
    let (fast_rate, slow_rate) = (rate(fast, fast_time), rate(slow, slow_time));
    println!("| rmcp-calc (rmcp 3.11.0), 1 job | conversations/s | vs. stdio |");
    println!("|---|---|---|");
    println!(
        "| over stdio (a fresh process per conversation, a warm spare) | {slow_rate:.1} ({slow} in {:.0} s) | 1x |",
        slow_time.as_secs_f64()
    );
    println!(
        "| in-process (the rmcp adapter: a fresh service per conversation) | {fast_rate:.0} ({fast} in {:.0} s) | {:.0}x |",
        fast_time.as_secs_f64(),
        fast_rate / slow_rate
    );
}
