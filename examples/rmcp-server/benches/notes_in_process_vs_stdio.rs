//! Conversations/s of rmcp-notes (`tests/servers/author/rmcp-notes`: three tools with structured output, written
//! with rmcp 3.11.0's macros, the clean store) in-process (`Rmcp::fresh`: a new handler per conversation, through
//! mcp-wirefuzz's rmcp adapter) next to the same server's binary over stdio (one fresh process per conversation, a
//! warm spare). The server's surface is learned in-process first, so both run the same generated conversations
//! with calls of its own tools, and each is checked under rmcp's policy with that model and surface; one job.
//! `cargo bench --bench notes_in_process_vs_stdio` in this folder; prints a table row for the docs' speed page.

use mcp_wirefuzz::campaign::conversation_for;
use mcp_wirefuzz::model::Eras;
use mcp_wirefuzz::learn::in_process::{judged, surface_of};
use mcp_wirefuzz::oracle::{Policy, check};
use mcp_wirefuzz::sdk::rmcp::policy;
use mcp_wirefuzz::server::rmcp::Rmcp;
use mcp_wirefuzz::server::{InProcess, ServerCommand, ServerSpec, Target, Timeouts};
use mcp_wirefuzz::surface::Surface;
use mcp_wirefuzz::transcript::Input;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The conversation `index` as a run generates it (every other one a tool session), and whether it calls one of
/// the server's own tools.
fn conversation(index: u64, surface: &Surface, eras: Eras) -> (Vec<Input>, bool) {
    let inputs = conversation_for(1, index, surface, eras);
    let calls = inputs.iter().any(|input| match input {
        Input::Line(line) => {
            let line = String::from_utf8_lossy(line);
            line.contains("\"tools/call\"") && surface.tools.iter().any(|t| line.contains(&format!("\"{}\"", t.name)))
        }
        _ => false,
    });
    (inputs, calls)
}

/// Runs and checks conversations for `budget`; returns how many, how many called a tool of the server's, and how
/// long they took.
fn measure(target: &mut dyn Target, policy: &Policy, surface: &Surface, budget: Duration) -> (u64, u64, Duration) {
    let started = Instant::now();
    let (mut count, mut with_calls) = (0, 0);
    while started.elapsed() < budget {
        let (inputs, calls) = conversation(count, surface, policy.model().map_or(Eras::Unknown, |m| m.eras));
        let transcript = target.run(&inputs).expect("the server runs");
        // As the harness judges it: what rmcp itself breaks is rmcp's, not the store's.
        let findings = mcp_wirefuzz::sdk::yours(&transcript, check(&transcript, policy), policy);
        assert!(findings.is_empty(), "the clean store breaks no rule: {findings:#?}\n{}", transcript.render());
        count += 1;
        with_calls += u64::from(calls);
    }
    (count, with_calls, started.elapsed())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let manifest = root.join("tests/servers/author/rmcp-notes/Cargo.toml");
    let target_dir = root.join("tests/servers/rmcp-calc/target");
    let built = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("NOTES_BUG")
        .status();
    assert!(built.is_ok_and(|s| s.success()), "cannot build tests/servers/author/rmcp-notes");
    let binary = target_dir.join("release/rmcp-notes");
    let command = ServerCommand::from_argv(&[binary.display().to_string()]).unwrap();

    let server = Rmcp::fresh(|| rmcp_notes::Notes::with_bug(None));
    let policy = judged(&server, &policy());
    let surface = surface_of(&policy);
    assert_eq!(surface.tools.len(), 3, "add_note, get_note, search_notes: {surface}");
    let (fast, fast_calls, fast_time) = measure(&mut InProcess(server), &policy, &surface, Duration::from_secs(10));
    let mut stdio = ServerSpec::Command(command).pooled_target(Timeouts::default());
    let (slow, slow_calls, slow_time) = measure(stdio.as_mut(), &policy, &surface, Duration::from_secs(30));

    let rate = |count: u64, time: Duration| count as f64 / time.as_secs_f64();
    let (fast_rate, slow_rate) = (rate(fast, fast_time), rate(slow, slow_time));
    let share = |calls: u64, count: u64| 100.0 * calls as f64 / count as f64;
    println!("| rmcp-notes (rmcp 3.11.0, 3 tools), 1 job | conversations/s | calling a tool of its own | vs. stdio |");
    println!("|---|---|---|---|");
    println!(
        "| over stdio (a fresh process per conversation, a warm spare) | {slow_rate:.1} ({slow} in {:.0} s) | {:.0} % | 1x |",
        slow_time.as_secs_f64(),
        share(slow_calls, slow)
    );
    println!(
        "| in-process (`Rmcp::fresh`: a new handler and service per conversation) | {fast_rate:.0} ({fast} in {:.0} s) | {:.0} % | {:.0}x |",
        fast_time.as_secs_f64(),
        share(fast_calls, fast),
        fast_rate / slow_rate
    );
}
