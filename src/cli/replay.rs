//! `mcp-wirefuzz replay`: one case file against the server it names (or another), checked; its exit codes are a
//! contract: 1 the case's expected rules break again, 3 one of them does not (fixed, whatever else breaks: that is
//! listed apart, as new), 0 a clean case runs clean, 2 a bad case file or a harness error.

use super::options::{ForkServerOption, ReplyTimeout, RuleOptions};
use super::output::say;
use super::server::{end_servers_on_signal, server_spec};
use anyhow::{Result, anyhow, bail};
use mcp_wirefuzz::case::Case;
use mcp_wirefuzz::diff::case::is_diff_case;
use mcp_wirefuzz::learn::stage::{server_model, stated_eras, through_fork_server};
use mcp_wirefuzz::learn::surface;
use mcp_wirefuzz::oracle::check;
use mcp_wirefuzz::server::{ServerSpec, Timeouts};
use mcp_wirefuzz::{sdk, trigger};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The options of `replay`.
#[derive(clap::Args)]
#[command(
    mut_arg("eras", |arg| arg.help("The eras the server serves (handshake, modern, dual), instead of the case's `eras:`")),
    mut_arg("profile", |arg| arg.help("Turn on a profile's rules (spec, strict-jsonrpc, mcp-python-2.3.0); repeatable")),
    mut_arg("allow", |arg| arg.help("Turn a rule off, on top of the case's own `allow:`; repeatable")),
    mut_arg("deny", |arg| arg.help("Turn a rule on, on top of the case's own `deny:`; repeatable")),
    mut_arg("sdk", |arg| arg.help("The SDK the server is written with (rmcp, ts-sdk, ts-server, python, go-sdk): a finding \
        that matches one of its known deviations is printed as the SDK's and does not make the exit code 1")),
)]
pub struct ReplayArgs {
    /// The case file.
    file: PathBuf,
    /// Run against the built-in server with this planted bug instead.
    #[arg(long, value_name = "NAME")]
    mutant: Option<String>,
    /// Run against the built-in server, whatever the case names.
    #[arg(long, conflicts_with = "mutant")]
    built_in: bool,
    /// Reach the server over Streamable HTTP at this endpoint (with `-- CMD ARGS...`, start it first).
    #[arg(long, value_name = "URL", conflicts_with_all = ["mutant", "built_in"])]
    url: Option<String>,
    /// `--timeout`.
    #[command(flatten)]
    timeout: ReplyTimeout,
    /// `--eras`, `--profile`, `--allow` and `--deny`.
    #[command(flatten)]
    rules: RuleOptions,
    /// `--no-fork-server`.
    #[command(flatten)]
    fork: ForkServerOption,
    /// The server to start (no shell), after `--`.
    #[arg(last = true)]
    command: Vec<String>,
}

/// The exit code of `replay` when a case's expected rules do not all break again on its server.
const NO_LONGER_REPRODUCES: u8 = 3;

/// Replays the case and checks it against what it expects, on its own server or the one given ([`Expectation`]).
pub fn run(args: ReplayArgs) -> Result<ExitCode> {
    let (file, rules) = (args.file.as_path(), &args.rules);
    let timeout = args.timeout.duration()?;
    end_servers_on_signal()?;
    if std::fs::read_to_string(file).is_ok_and(|text| is_diff_case(&text)) {
        let others = args.mutant.is_some() || args.built_in || args.url.is_some() || !args.command.is_empty();
        if others || !rules.profile.is_empty() || !rules.allow.is_empty() || !rules.deny.is_empty() {
            bail!("a diff case runs on the two sides it names; only --timeout applies to it");
        }
        return super::diff::replay(file, timeout);
    }
    let case = Case::load(file)?;
    let server = match (args.built_in, args.mutant.as_deref(), args.command.is_empty()) {
        (true, _, true) => ServerSpec::BuiltIn,
        (true, _, false) => bail!("--built-in cannot be combined with `-- CMD`"),
        (false, None, true) if args.url.is_none() => case.server(),
        (false, mutant, _) => server_spec(mutant, args.url.as_deref(), &args.command)?,
    };
    // A crash case waits (up to the reply timeout) for the server to exit on its own before closing its input.
    let linger = if case.expect.iter().any(|rule| rule == "SERVER-CRASH") { timeout } else { Duration::ZERO };
    let timeouts = Timeouts { reply: timeout, linger, ..Timeouts::default() };
    // Named by the plain command all the same: `server == case.server()` holds through the fork server.
    let (server, _fork_server) = through_fork_server(server, args.fork.allowed(), timeouts, &mut say);
    // The model: `--eras`, else the case's `eras:` on the case's own server, else the built-in server's or a probe.
    let model = match stated_eras(rules.eras.eras.as_deref())? {
        Some(stated) => Some(stated),
        None if case.eras.is_some() && server == case.server() => None,
        None => Some(server_model(&server, None, timeouts, None)?),
    };
    let transcript = server.target(timeouts).run(&case.inputs)?;
    let base = case.policy();
    let base = match model {
        Some(model) => base.with_model(model),
        None => base,
    };
    let policy = rules.policy(base)?;
    let sdk = match &rules.sdk.sdk {
        Some(name) if name == "none" => None,
        Some(name) => Some(sdk::by_name(name).map_err(|e| anyhow!("--sdk: {e}"))?),
        None => None,
    };
    let policy = match sdk {
        Some(sdk) => policy.with_sdk(sdk.name),
        None => policy,
    };
    let policy = surface::with_learned(policy, server.target(timeouts).as_mut())?;
    let findings = check(&transcript, &policy);
    println!("replaying {} against {}", file.display(), server.describe());
    if let Some(model) = policy.model() {
        println!("server model: {model}");
    }
    if let Some(sdk) = sdk {
        println!("SDK: {} (from --sdk)", sdk.title());
    }
    print!("{}", transcript.render());
    // The rules broken by the server's own code (not one of its SDK's known deviations), each once.
    let mut yours: Vec<&str> = Vec::new();
    for finding in &findings {
        let trigger = trigger::signature(&transcript, finding);
        match sdk.and_then(|sdk| sdk.deviation(&transcript, finding, &trigger)) {
            Some(deviation) => {
                println!(
                    "{finding}\n  your SDK's known deviation: {} (upstream: {})",
                    deviation.what, deviation.reference
                )
            }
            None => {
                if !yours.contains(&finding.rule) {
                    yours.push(finding.rule);
                }
                println!("{finding}");
            }
        }
    }
    let on = server.describe();
    let verdict = Expectation::judge(&case.expect, &findings.iter().map(|f| f.rule).collect::<Vec<_>>(), &yours);
    let expected = if case.expect.is_empty() { "clean".to_string() } else { case.expect.join(", ") };
    if !verdict.new.is_empty() {
        println!(
            "also broken, apart from what the case expects (new: not what this case is about): {}",
            verdict.new.join(", ")
        );
    }
    match verdict.exit {
        NO_LONGER_REPRODUCES => {
            println!("the case expects {expected} on {on}: NOT as expected, {} did not break", verdict.gone.join(", "));
            println!("the case no longer reproduces: fixed (exit {NO_LONGER_REPRODUCES})");
        }
        _ if case.expect.is_empty() && !yours.is_empty() => println!("the case expects clean on {on}: NOT as expected"),
        _ => println!("the case expects {expected} on {on}: as expected"),
    }
    Ok(ExitCode::from(verdict.exit))
}

/// What a replayed case's findings say against what it expects.
#[derive(Debug, PartialEq, Eq)]
struct Expectation<'a> {
    /// The exit code: 1 when the expected rules break again by the server's own code (or a clean case is not),
    /// [`NO_LONGER_REPRODUCES`] when an expected rule does not break at all (fixed, whatever else breaks), else 0.
    exit: u8,
    /// The expected rules that did not break.
    gone: Vec<&'a str>,
    /// The rules the server's own code broke that the case does not expect.
    new: Vec<&'a str>,
}

impl<'a> Expectation<'a> {
    /// Judges `expect` against the rules that broke (`fired`) and those of them the server's own code broke (`yours`;
    /// the others are its SDK's known deviations).
    fn judge(expect: &'a [String], fired: &[&str], yours: &[&'a str]) -> Expectation<'a> {
        let gone: Vec<&str> = expect.iter().map(String::as_str).filter(|rule| !fired.contains(rule)).collect();
        let new: Vec<&str> = yours.iter().copied().filter(|rule| !expect.iter().any(|e| e == rule)).collect();
        let exit = match (expect.is_empty(), gone.is_empty()) {
            (false, false) => NO_LONGER_REPRODUCES,
            (false, true) => u8::from(expect.iter().any(|rule| yours.contains(&rule.as_str()))),
            (true, _) => u8::from(!yours.is_empty()),
        };
        Expectation { exit, gone, new }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_whose_rule_does_not_break_is_fixed_whatever_else_breaks() {
        let expect = vec!["JSONRPC-FRAMING".to_string()];
        // Fixed: its rule is gone, two warnings of the SDK's break beside it.
        let fixed = Expectation::judge(&expect, &["MCP-LOG-LEVEL", "MCP-CACHE-HINTS"], &["MCP-LOG-LEVEL"]);
        assert_eq!(fixed, Expectation { exit: 3, gone: vec!["JSONRPC-FRAMING"], new: vec!["MCP-LOG-LEVEL"] });
        // Reproduced, with something new beside it.
        let again =
            Expectation::judge(&expect, &["JSONRPC-FRAMING", "MCP-LOG-LEVEL"], &["JSONRPC-FRAMING", "MCP-LOG-LEVEL"]);
        assert_eq!(again, Expectation { exit: 1, gone: vec![], new: vec!["MCP-LOG-LEVEL"] });
        // Reproduced, but as the SDK's known deviation (--sdk): nothing of the author's breaks.
        assert_eq!(Expectation::judge(&expect, &["JSONRPC-FRAMING"], &[]).exit, 0);
        // A clean case: clean, or not.
        assert_eq!(Expectation::judge(&[], &[], &[]).exit, 0);
        assert_eq!(Expectation::judge(&[], &["MCP-LOG-LEVEL"], &["MCP-LOG-LEVEL"]).exit, 1);
        assert_eq!(Expectation::judge(&[], &["MCP-LOG-LEVEL"], &[]).exit, 0);
    }
}
