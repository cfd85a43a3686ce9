//! The `sessions` section: tool calls per second over stdio in the short tool sessions against the long sessions
//! (`mcp_wirefuzz::script::session`), on the built-in server (`mcp-wirefuzz serve`) and on the TypeScript SDK note
//! store (`tests/servers/node/ts-v1/notes_v1.mjs`, three tools, set up by `.ci/node-servers`). Each runs on a fuzzing
//! worker's target (sentinel barriers, a warm spare), one job, for a fixed time.

use super::*;
use mcp_wirefuzz::learn::{probe, surface};
use mcp_wirefuzz::script::session;

/// How long each kind of session runs on each server.
const SECS: u64 = 20;

/// The `tools/call` lines a transcript sent.
fn calls(transcript: &mcp_wirefuzz::transcript::Transcript) -> u64 {
    let sent = transcript.events.iter().filter_map(|event| match event {
        mcp_wirefuzz::transcript::Event::Sent(line) => Some(line),
        _ => None,
    });
    sent.filter(|line| String::from_utf8_lossy(line).contains(r#""method":"tools/call""#)).count() as u64
}

/// Tool calls/s and conversations/s of `SECS` seconds of the sessions `make` gives for index 0, 1, ... on `argv`.
fn rate_of(argv: &[String], make: &dyn Fn(u64) -> Vec<Input>, eras: mcp_wirefuzz::model::Eras) -> (f64, f64) {
    let command = ServerCommand::from_argv(argv).unwrap();
    let timeouts = Timeouts { adaptive: true, ..Timeouts::default() };
    let mut target = StdioTarget::new(command, timeouts).with_sentinels(eras);
    target.run(&[]).unwrap();
    let (started, mut index, mut total) = (Instant::now(), 0, 0);
    while started.elapsed() < Duration::from_secs(SECS) {
        total += calls(&target.run(&make(index)).unwrap());
        index += 1;
    }
    (rate(total, started.elapsed()), rate(index, started.elapsed()))
}

/// Prints the table.
pub fn sessions(cli: &str) {
    let notes = root().join("tests/servers/node/ts-v1/notes_v1.mjs");
    let mut servers = vec![("built-in server (`mcp-wirefuzz serve`)", vec![cli.to_string(), "serve".to_string()])];
    if root().join("tests/servers/node/ts-v1/node_modules").exists() {
        servers.push(("TS SDK 1.32.2 note store (3 tools)", vec!["node".to_string(), notes.display().to_string()]));
    } else {
        println!("sessions: the TS note store is skipped: run .ci/node-servers");
    }
    println!(
        "\n## sessions: tool calls/s over stdio, short tool sessions against long sessions ({SECS} s each, one job)\n"
    );
    println!("| server | short sessions: calls/s (conversations/s) | long sessions: calls/s (conversations/s) |");
    println!("|---|---|---|");
    for (name, argv) in servers {
        let command = ServerCommand::from_argv(&argv).unwrap();
        let mut learner = StdioTarget::new(command, Timeouts::default()).cold();
        let model = probe::probe(&mut learner).unwrap();
        let surface = surface::learn(&mut learner, &model).unwrap();
        let tools = surface.tools.len();
        let bytes = |index: u64| campaign::conversation_bytes(1, index);
        let short = |index: u64| session::from_bytes(&bytes(index), model.eras, tools).encode_on(&surface);
        let long = |index: u64| {
            session::long_from_bytes(&campaign::long_session_bytes(1, index), model.eras, tools).encode_on(&surface)
        };
        let (short_calls, short_conversations) = rate_of(&argv, &short, model.eras);
        let (long_calls, long_conversations) = rate_of(&argv, &long, model.eras);
        println!(
            "| {name} | {short_calls:.0} ({short_conversations:.1}) | {long_calls:.0} ({long_conversations:.2}) |"
        );
    }
}
