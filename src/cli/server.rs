//! The server a subcommand runs against: the spec named by `--mutant`, `--url` and `-- CMD`, and the ending of every
//! server when a signal stops the harness. What is known of it before it runs (its fork server, model, surface and
//! SDK) is the library's learn stage ([`mcp_wirefuzz::learn::stage`]).

use anyhow::{Context, Result, bail};
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::transport::http::HttpSpec;
use mcp_wirefuzz::server::{ServerCommand, ServerSpec};
use std::sync::atomic::{AtomicI32, Ordering};

/// Ends every server the harness started when SIGINT, SIGTERM or SIGHUP stops it (their process groups, which a
/// terminal's Ctrl-C does not reach), then exits with 128 + the signal's number. Call before any thread starts: the
/// signals are blocked in every thread and taken by one that waits for them (children start with none blocked).
pub fn end_servers_on_signal() -> Result<()> {
    use nix::sys::signal::{SigSet, Signal};
    let mut signals = SigSet::empty();
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        signals.add(signal);
    }
    signals.thread_block().context("cannot block signals")?;
    std::thread::spawn(move || {
        if let Ok(signal) = signals.wait() {
            SIGNALLED.store(signal as i32, Ordering::SeqCst);
            eprintln!("mcp-wirefuzz: {signal}: ending the servers");
            mcp_wirefuzz::server::children::end_all();
            std::process::exit(128 + signal as i32);
        }
    });
    Ok(())
}

/// The number of the signal that stopped the harness, 0 before one came.
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// The exit code for a run whose conversations ended because a signal stopped the harness
/// ([`mcp_wirefuzz::server::CutShort::Halted`]): 128 + the signal's number, as the thread that took the signal exits with.
pub fn stopped_by_signal(error: &anyhow::Error) -> Option<u8> {
    let halted = mcp_wirefuzz::server::CutShort::Halted.is(error);
    let signal = SIGNALLED.load(Ordering::SeqCst);
    (halted && signal > 0).then(|| (128 + signal) as u8)
}

/// The server named by `--mutant`, `--url` and `-- CMD`, or the built-in one.
pub fn server_spec(mutant: Option<&str>, url: Option<&str>, command: &[String]) -> Result<ServerSpec> {
    if let Some(url) = url {
        if mutant.is_some() {
            bail!("--mutant plants a bug in the built-in server; it cannot be combined with --url");
        }
        let command = if command.is_empty() { None } else { Some(ServerCommand::from_argv(command)?) };
        return Ok(ServerSpec::Http(HttpSpec::new(url, command)?));
    }
    match (mutant, command.is_empty()) {
        (Some(_), false) => bail!("--mutant plants a bug in the built-in server; it cannot be combined with `-- CMD`"),
        (Some(name), true) => match Mutant::from_name(name) {
            Some(mutant) => Ok(ServerSpec::Mutant(mutant)),
            None => bail!("unknown mutant `{name}`; `mcp-wirefuzz serve --mutant list` lists them"),
        },
        (None, false) => Ok(ServerSpec::Command(ServerCommand::from_argv(command)?)),
        (None, true) => Ok(ServerSpec::BuiltIn),
    }
}
