//! The server a subcommand runs against and what is known of it before it runs: the spec named by `--mutant`,
//! `--url` and `-- CMD`, a Python program's fork server (unless `--no-fork-server`), the server model (stated with
//! `--eras` or probed), the SDK it is written with (stated with `--sdk` or detected), and the ending of every server
//! when a signal stops the harness.

use super::options::ForkServerOption;
use anyhow::{Context, Result, bail};
use mcp_wirefuzz::learn::probe;
use mcp_wirefuzz::learn::stalls::Stalls;
use mcp_wirefuzz::model::{Eras, ServerModel};
use mcp_wirefuzz::sdk;
use mcp_wirefuzz::server::Target;
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::transport::http::HttpSpec;
use mcp_wirefuzz::server::transport::stdio::fork::{self, ForkServer, Launch};
use mcp_wirefuzz::server::transport::stdio::python::python_program;
use mcp_wirefuzz::server::{ServerCommand, ServerSpec, Timeouts};
use std::cell::Cell;
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
            mcp_wirefuzz::server::transport::stdio::end_all();
            std::process::exit(128 + signal as i32);
        }
    });
    Ok(())
}

/// The number of the signal that stopped the harness, 0 before one came.
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// The exit code for a run whose conversations ended because a signal stopped the harness
/// ([`mcp_wirefuzz::server::Halted`]): 128 + the signal's number, as the thread that took the signal exits with.
pub fn stopped_by_signal(error: &anyhow::Error) -> Option<u8> {
    let halted = error.chain().any(|cause| cause.is::<mcp_wirefuzz::server::Halted>());
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

/// The server to start: `server` itself; or, for a Python program over stdio, the same server started through a
/// fork server the harness starts for it (kept running by the returned guard; reports and case files still name the
/// plain command), unless `--no-fork-server` or the fork server is not fit for it. Says on stderr which, and why.
pub fn through_fork_server(
    server: ServerSpec,
    option: &ForkServerOption,
    timeouts: Timeouts,
) -> (ServerSpec, Option<ForkServer>) {
    let ServerSpec::Command(command) = &server else { return (server, None) };
    let Some(program) = python_program(command) else { return (server, None) };
    if option.no_fork_server {
        eprintln!("python server: a plain process per conversation (--no-fork-server)");
        return (server, None);
    }
    let launched = match std::env::current_exe() {
        Ok(stub) => fork::launch(command, &program, &stub, timeouts),
        Err(error) => Launch::Plain { why: format!("cannot find the mcp-wirefuzz executable to attach with: {error}") },
    };
    match launched {
        Launch::Forked { command, server: fork_server } => {
            let left_out = match fork_server.left_out() {
                [] => String::new(),
                modules => format!("; not preloaded: {}", modules.join("; ")),
            };
            eprintln!(
                "python server: running through the fork server (preloaded {}{left_out}); --no-fork-server opts out",
                fork_server.preloaded()
            );
            (ServerSpec::Command(command), Some(fork_server))
        }
        Launch::Plain { why } => {
            eprintln!("python server: a plain process per conversation, not the fork server: {why}");
            (server, None)
        }
    }
}

/// The model stated by `--eras`, if given.
pub fn stated_eras(eras: Option<&str>) -> Result<Option<ServerModel>> {
    let Some(name) = eras else { return Ok(None) };
    match Eras::from_name(name) {
        Some(eras) => Ok(Some(ServerModel::stated(eras))),
        None => bail!("--eras takes handshake, modern or dual, not `{name}`"),
    }
}

/// The server model: stated with `--eras`, the built-in server's, or probed on fresh processes of a child (with
/// `stalls`, given up once the server stalled that often: [`Stalls`]).
pub fn server_model(
    server: &ServerSpec,
    eras: Option<&str>,
    timeouts: Timeouts,
    stalls: Option<&Cell<usize>>,
) -> Result<ServerModel> {
    if let Some(stated) = stated_eras(eras)? {
        return Ok(stated);
    }
    match server {
        ServerSpec::Command(_) | ServerSpec::Http(_) => probe::probe(&mut *watched(server, timeouts, stalls)),
        _ => Ok(ServerModel::built_in()),
    }
}

/// A target for a learning conversation: watched for stalls ([`Stalls`]) when `stalls` counts them.
pub fn watched<'a>(server: &ServerSpec, timeouts: Timeouts, stalls: Option<&'a Cell<usize>>) -> Box<dyn Target + 'a> {
    let target = server.target(timeouts);
    match stalls {
        Some(stalls) => Box::new(Stalls::new(target, stalls)),
        None => target,
    }
}

/// The SDK the server is written with: `--sdk NAME`, else the one the fingerprint conversation shows for certain
/// (a child server only; the built-in server has no SDK) on a server that serves `eras`; `None` when neither, or
/// for `--sdk none`.
pub fn server_sdk(
    server: &ServerSpec,
    stated: Option<&str>,
    eras: Eras,
    timeouts: Timeouts,
    stalls: Option<&Cell<usize>>,
) -> Result<Option<sdk::Chosen>> {
    if stated == Some("none") {
        return Ok(None);
    }
    if let Some(name) = stated {
        let sdk = sdk::by_name(name).map_err(|e| anyhow::anyhow!("--sdk: {e}"))?;
        return Ok(Some(sdk::Chosen { sdk, source: sdk::Source::Stated }));
    }
    match server {
        ServerSpec::Command(_) | ServerSpec::Http(_) => {
            let transcript = watched(server, timeouts, stalls).run(&sdk::fingerprint_inputs())?;
            Ok(sdk::detect(&transcript, eras))
        }
        _ => Ok(None),
    }
}

/// The line that names the SDK of a run (said in its first lines and in its summary).
pub fn sdk_line(chosen: Option<&sdk::Chosen>) -> String {
    match chosen {
        Some(chosen) => format!("SDK: {chosen}"),
        None => "SDK: none named or detected (--sdk NAME tells its known deviations apart from yours)".to_string(),
    }
}
