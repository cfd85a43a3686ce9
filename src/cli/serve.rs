//! `mcp-wirefuzz serve`: the built-in reference server "calc" on stdin/stdout, or over Streamable HTTP.

use anyhow::{Context, Result, anyhow, bail};
use mcp_wirefuzz::server::Status;
use mcp_wirefuzz::server::builtin::http::{self as http_server, HttpBug, HttpServer};
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::quirks::{self, Quirks, Quirky};
use mcp_wirefuzz::server::builtin::reference::{Calc, CalcWithFixtures, Planted};
use mcp_wirefuzz::server::transport::in_process::serve;
use std::io::{self, BufReader};
use std::process::ExitCode;

/// The options of `serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Plant one bug in the server (`--mutant list` lists them).
    #[arg(long, value_name = "NAME")]
    mutant: Option<String>,
    /// Run the quirky server instead: calc doing everything legal but unusual (replies out of order, split
    /// writes, odd layout and escapes, a slow start, stderr noise), drawn from SEED.
    #[arg(long, value_name = "SEED", num_args = 0..=1, default_missing_value = "0", conflicts_with = "mutant")]
    quirks: Option<u64>,
    /// With --quirks: also refuse what calc leaves unanswered the way a hand-written JSON-RPC loop does (a blank line
    /// gets -32700, a stray response -32600 under its id, an odd id its refusal under that id as sent). Legal, but
    /// its replies differ from calc's, so `diff` against calc shows them.
    #[arg(long, requires = "quirks")]
    refusals: bool,
    /// Serve over Streamable HTTP on ADDR (HOST:PORT; port 0 picks one), endpoint /mcp, until killed.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["mutant", "quirks"])]
    http: Option<String>,
    /// With --http: plant one HTTP bug (`--http-bug list` lists them).
    #[arg(long, value_name = "NAME")]
    http_bug: Option<String>,
    /// With --http: the eras served, `dual` (both, the default) or `modern` (2026-07-28 only: GET and DELETE
    /// get 405, no sessions). The bugs modern-get-200 and modern-mints-session serve modern only anyway.
    #[arg(long, value_name = "ERAS", value_parser = ["dual", "modern"], requires = "http")]
    http_era: Option<String>,
    /// Serve the official conformance suite's fixtures too (`test_simple_text`, `test://static-text`,
    /// `test_simple_prompt`, the `test_input_required_result_*` tools, ...), so the suite can be run against calc.
    #[arg(long, conflicts_with_all = ["mutant", "quirks"])]
    conformance_fixtures: bool,
    /// With --http: answer a session's requests by SSE polling (legal, as a server with an event store may): the
    /// POST's stream carries a priming event id and a `retry`, then closes; the responses come on the client's GET
    /// with `Last-Event-ID`.
    #[arg(long, requires = "http")]
    sse_polling: bool,
}

/// Serves until end of input (over stdio) or until killed (over HTTP).
pub fn run(args: ServeArgs) -> Result<ExitCode> {
    match args {
        ServeArgs { http: Some(address), http_bug, http_era, conformance_fixtures, sse_polling, .. } => {
            let state =
                Served { modern_only: http_era.as_deref() == Some("modern"), conformance_fixtures, sse_polling };
            serve_http(&address, http_bug.as_deref(), state)
        }
        ServeArgs { http_bug: Some(name), .. } if name == "list" => serve_http("", Some("list"), Served::default()),
        ServeArgs { http_bug: Some(_), .. } => Err(anyhow!("--http-bug needs --http ADDR")),
        ServeArgs { conformance_fixtures: true, .. } => finish(serve(&CalcWithFixtures, stdin(), io::stdout().lock())?),
        ServeArgs { mutant, quirks, refusals, .. } => serve_stdio(mutant.as_deref(), quirks, refusals),
    }
}

/// What the HTTP server serves besides calc: its options.
#[derive(Default)]
struct Served {
    modern_only: bool,
    conformance_fixtures: bool,
    sse_polling: bool,
}

/// Serves calc over Streamable HTTP on `address` (or lists the HTTP bugs, for `--http-bug list`).
fn serve_http(address: &str, bug: Option<&str>, served: Served) -> Result<ExitCode> {
    let bug =
        match bug {
            Some("list") => {
                for bug in HttpBug::ALL {
                    println!("{:<28} {:<28} {}", bug.name(), bug.expected_rule(), bug.description());
                }
                return Ok(ExitCode::SUCCESS);
            }
            Some(name) => Some(HttpBug::from_name(name).with_context(|| {
                format!("unknown HTTP bug `{name}`; `mcp-wirefuzz serve --http-bug list` lists them")
            })?),
            None => None,
        };
    let state = HttpServer::new(bug, served.modern_only);
    let state = if served.conformance_fixtures { state.with_fixtures() } else { state };
    let state = if served.sse_polling { state.with_polling() } else { state };
    http_server::serve(address, state, |local| eprintln!("mcp-wirefuzz: serving MCP over HTTP at http://{local}/mcp"))?;
    Ok(ExitCode::SUCCESS)
}

/// Serves calc, a planted bug or the quirky server on stdin/stdout (or lists the bugs, for `--mutant list`).
fn serve_stdio(mutant: Option<&str>, quirks: Option<u64>, refusals: bool) -> Result<ExitCode> {
    let input = stdin;
    let status = match (mutant, quirks) {
        (None, Some(seed)) => {
            let quirky = Quirky { seed, quirks: Quirks { refusals, ..Quirks::ALL } };
            quirks::serve(&quirky, io::stdin(), io::stdout().lock(), io::stderr())?
        }
        (None, None) => serve(&Calc, input(), io::stdout().lock())?,
        (Some("list"), _) => {
            for mutant in Mutant::ALL {
                println!("{:<28} {:<28} {}", mutant.name(), mutant.expected_rule(), mutant.description());
            }
            return Ok(ExitCode::SUCCESS);
        }
        (Some(name), _) => {
            let Some(mutant) = Mutant::from_name(name) else {
                bail!("unknown mutant `{name}`; `mcp-wirefuzz serve --mutant list` lists them");
            };
            serve(&Planted(mutant), input(), io::stdout().lock())?
        }
    };
    finish(status)
}

/// Standard input, locked, for the servers that read it on this thread (the quirky server reads it on its own).
fn stdin() -> BufReader<io::StdinLock<'static>> {
    BufReader::new(io::stdin().lock())
}

/// The exit code a stdio server's end status gives; a hung server hangs here too.
fn finish(status: Status) -> Result<ExitCode> {
    match status {
        Status::Running => Ok(ExitCode::SUCCESS),
        Status::Exited(code) => Ok(ExitCode::from(u8::try_from(code).unwrap_or(1))),
        Status::Hung => loop {
            std::thread::park();
        },
    }
}
