//! `mcp-wirefuzz check`: a quick, deterministic conformance run: the server model, one probe per invariant, and on
//! the calc server the protocol lesson's seed transcripts.

use super::options::{ErasOption, ForkServerOption, ReplyTimeout, SdkOption};
use super::output::say;
use super::server::{end_servers_on_signal, server_spec};
use anyhow::Result;
use mcp_wirefuzz::learn::stage::{sdk_line, server_model, server_sdk, through_fork_server};
use mcp_wirefuzz::learn::surface;
use mcp_wirefuzz::model::Source;
use mcp_wirefuzz::oracle::{Finding, Policy, check};
use mcp_wirefuzz::sdk::Chosen;
use mcp_wirefuzz::seeds;
use mcp_wirefuzz::server::builtin::http::HttpBug;
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::reference::{Calc, SERVER_NAME, SERVER_VERSION};
use mcp_wirefuzz::server::{ServerSpec, Timeouts};
use mcp_wirefuzz::transcript::Input;
use mcp_wirefuzz::transcript::Transcript;
use mcp_wirefuzz::trigger::signature;
use std::process::ExitCode;
use std::sync::Arc;

/// The options of `check`.
#[derive(clap::Args)]
#[command(
    mut_arg("timeout", |arg| arg.default_value("5000").help("How long a reply from a child server may take, in milliseconds")),
    mut_arg("eras", |arg| arg.help("The eras the server serves (handshake, modern, dual), instead of probing it")),
)]
pub struct CheckArgs {
    /// `--timeout`.
    #[command(flatten)]
    timeout: ReplyTimeout,
    /// Skip the seed transcripts, which expect the calc server (tool `add`, name `calc`).
    #[arg(long)]
    no_seeds: bool,
    /// `--eras`.
    #[command(flatten)]
    eras: ErasOption,
    /// `--sdk`.
    #[command(flatten)]
    sdk: SdkOption,
    /// Reach the server over Streamable HTTP at this endpoint (adds one probe per HTTP rule).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// `--no-fork-server`.
    #[command(flatten)]
    fork: ForkServerOption,
    /// The server to start (no shell), after `--`.
    #[arg(last = true)]
    command: Vec<String>,
}

/// Probes the server once per invariant (and runs the seed transcripts on calc): exit 1 if anything fails.
pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let timeout = args.timeout.duration()?;
    let (command, url, seeds_too, eras) =
        (&args.command, args.url.as_deref(), !args.no_seeds, args.eras.eras.as_deref());
    end_servers_on_signal()?;
    let server = server_spec(None, url, command)?;
    let http = matches!(server, ServerSpec::Http(_));
    let timeouts = Timeouts { reply: timeout, ..Timeouts::default() };
    let (server, _fork_server) = through_fork_server(server, args.fork.allowed(), timeouts, &mut say);
    let model = server_model(&server, eras, timeouts, None)?;
    println!("server model: {model}");
    let mut target = server.target(timeouts);
    let learned = surface::learn(target.as_mut(), &model)?;
    println!("server surface: {learned}");
    let sdk = server_sdk(&server, args.sdk.sdk.as_deref(), model.eras, timeouts, None)?;
    println!("{}", sdk_line(sdk.as_ref()));
    let judged = Policy::default().with_model(model.clone()).with_surface(Arc::new(learned));
    // The probes run with a warm spare and, over stdio, sentinel barriers once a calibration shows the server
    // answers in order (a dropped request is seen at once, not after the reply timeout and the start-up
    // allowance); each on a fresh process.
    let mut probes = server.probe_target(timeouts, model.eras);
    let (mut passed, mut failed) = (0, 0);
    let mut verdict = |name: &str, problems: Vec<String>| {
        if problems.is_empty() {
            passed += 1;
            println!("ok    {name}");
        } else {
            failed += 1;
            println!("FAIL  {name}");
            for problem in problems {
                println!("      {problem}");
            }
        }
    };
    let mut probed = Vec::new();
    for mutant in Mutant::ALL {
        let inputs: Vec<Input> = mutant.trigger().into_iter().map(Input::Line).collect();
        if probed.contains(&inputs) {
            continue;
        }
        let transcript = probes.run(&inputs)?;
        let (yours, sdks) = split(&transcript, check(&transcript, &judged), sdk.as_ref());
        let name = format!("probe {} ({} frames, the trigger of {mutant})", mutant.expected_rule(), inputs.len());
        verdict(&name, yours);
        sdks.iter().for_each(|note| println!("{note}"));
        probed.push(inputs);
    }
    if http {
        for bug in HttpBug::ALL {
            let inputs: Vec<Input> = bug.trigger().into_iter().map(Input::Line).collect();
            let transcript = probes.run(&inputs)?;
            let (yours, sdks) = split(&transcript, check(&transcript, &judged), sdk.as_ref());
            let name =
                format!("probe {} ({} frames, the trigger of HTTP bug {bug})", bug.expected_rule(), inputs.len());
            verdict(&name, yours);
            sdks.iter().for_each(|note| println!("{note}"));
        }
    }
    let identity = match (&model.name, &model.server_version) {
        (Some(name), Some(version)) => format!("{name} {version:?}"),
        (Some(name), None) => name.clone(),
        _ => String::new(),
    };
    match model.name.as_deref() {
        _ if !seeds_too => {}
        _ if http => println!("skipped: the seed transcripts are stdio conversations"),
        Some(_) if model.is_seed_calc() => {
            for case in seeds::builtin() {
                let mismatches = match server.command() {
                    None => case.check_in_process(&Calc),
                    Some(child) => case.check_child(child, timeouts)?,
                };
                verdict(&format!("seed transcript {}", case.name), mismatches);
            }
        }
        Some(_) => {
            let versions = if model.versions.is_empty() { "none".to_string() } else { model.versions.join(", ") };
            println!(
                "skipped: the server names itself {identity} (versions named: {versions}), the seed transcripts are \
                 for {SERVER_NAME} {SERVER_VERSION:?} (versions named: 2026-07-28)"
            )
        }
        None => {
            let why =
                if model.source == Source::Stated { " (--eras states the model, so nothing was probed)" } else { "" };
            println!("skipped: the server's name is unknown{why}, the seed transcripts are for {SERVER_NAME}");
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// A probe's findings split into yours (what fails the probe) and notes on those that are the SDK's known
/// deviations (printed under it, not failing it).
fn split(transcript: &Transcript, findings: Vec<Finding>, sdk: Option<&Chosen>) -> (Vec<String>, Vec<String>) {
    let (mut yours, mut sdks) = (Vec::new(), Vec::new());
    for finding in findings {
        let trigger = signature(transcript, &finding);
        match sdk.and_then(|chosen| chosen.sdk.deviation(transcript, &finding, &trigger)) {
            Some(deviation) => sdks.push(format!(
                "      your SDK's known deviation {}: {} (upstream: {})",
                finding.rule, deviation.what, deviation.reference
            )),
            None => yours.push(finding.to_string()),
        }
    }
    (yours, sdks)
}
