//! The command line's clap types: [`Cli`] and its [`Commands`], one file per subcommand holding that subcommand's
//! options and the `run` that hands over to the library (cargo-fuzz's `src/options/` is the model); the option
//! groups several subcommands share in `options.rs`, the server they run against in `server.rs`, and report files
//! and progress in `output.rs`.

mod attach;
mod check;
mod corpus;
mod coverage;
mod diff;
mod fuzz;
mod import;
mod init;
mod invariants;
mod options;
mod output;
mod replay;
mod serve;
mod server;
mod shrink;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Fuzzing and property-testing harness for MCP servers at the JSON-RPC wire level.
#[derive(Parser)]
#[command(version, about)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Commands,
}

/// The subcommands.
#[derive(Subcommand)]
pub enum Commands {
    /// Fuzz a server: the built-in one in-process, or `-- CMD ARGS...` as a child process over stdio (no shell).
    /// Exit 0 when clean, 1 on findings, 2 on usage or harness errors.
    Fuzz(Box<fuzz::FuzzArgs>),
    /// Send the same conversations to two servers (`-- CMD ARGS...` or the built-in server, against
    /// `--against 'CMD ARGS'`, a URL, a recording, or, with `--mutant NAME` alone, the built-in server against
    /// that mutant) and report what differs, each divergence minimized into a diff case file that `replay` runs on
    /// both sides. Exit 0 when nothing differs, 1 when something does, 2 on usage or harness errors.
    Diff(Box<diff::DiffArgs>),
    /// Replay a case file against the server it names (or `-- CMD ARGS...`, or `--mutant NAME`) and check it.
    /// Exit 0 when no rule breaks (a clean case as expected); 1 when a rule breaks (a case's expected rule broke
    /// again: it reproduces); 3 when the case's expected rules did not all break on its server (it no longer
    /// reproduces); 2 for a case file that is malformed, cut short or expects an unknown rule, or a harness error.
    Replay(replay::ReplayArgs),
    /// Write a fuzz target, a property test, a replay test and a note (WIREFUZZ.md) into the crate in DIR, for
    /// its MCP server in-process; files that exist are left alone.
    Init(init::InitArgs),
    /// Turn a libFuzzer artifact (e.g. fuzz/artifacts/mutant/crash-...) into a minimized case file.
    Import(import::ImportArgs),
    /// Minimize a case file in place (or into --out) while the rule it expects still breaks on its server.
    Shrink(shrink::ShrinkArgs),
    /// Write the seed corpora of every cargo-fuzz target (corpus/TARGET/), made from the seed transcripts, the
    /// planted bugs' triggers and generated conversations that cover every generator feature.
    Corpus(corpus::CorpusArgs),
    /// Print the invariant catalogue: every rule with its id, level, eras, source and policy.
    Invariants,
    /// Measure the generator's coverage of the wire against the built-in server: the JSON types every envelope
    /// member, params member and _meta key got, the odd strings that reached ids, names and arguments, and the
    /// reply sizes provoked. Prints Markdown tables (`.`: never reached).
    Coverage(coverage::CoverageArgs),
    /// Run the built-in reference server "calc" on stdin/stdout, one JSON-RPC message per line, until EOF.
    Serve(serve::ServeArgs),
    /// A quick, deterministic conformance run against the built-in server or `-- CMD ARGS...`: the server model
    /// first (probed, or `--eras`), one probe per invariant (each planted bug's trigger, judged with the model),
    /// then, on the calc server only (serverInfo calc "", versions 2026-07-28), the protocol lesson's seed
    /// transcripts (its exact replies); exit 1 if anything fails.
    Check(check::CheckArgs),
    /// Stand in for a server that a fork server (forkservers/) starts: hand this process's stdio to the fork
    /// server listening on SOCKET, wait for the forked server, and exit as it did. Use it as the server command:
    /// `fuzz -- mcp-wirefuzz attach SOCKET`.
    Attach(attach::AttachArgs),
}

impl Commands {
    /// Runs the subcommand: its exit code, or a usage or harness error (exit 2). Stopped by a signal, 128 + the
    /// signal's number, quietly: the thread that took the signal has said so and is ending the servers.
    pub fn run(self) -> Result<ExitCode> {
        let result = match self {
            Commands::Fuzz(args) => fuzz::run(*args),
            Commands::Diff(args) => diff::run(*args),
            Commands::Replay(args) => replay::run(args),
            Commands::Init(args) => init::run(args),
            Commands::Import(args) => import::run(args),
            Commands::Shrink(args) => shrink::run(args),
            Commands::Corpus(args) => corpus::run(args),
            Commands::Invariants => invariants::run(),
            Commands::Coverage(args) => coverage::run(args),
            Commands::Serve(args) => serve::run(args),
            Commands::Check(args) => check::run(args),
            Commands::Attach(args) => attach::run(args),
        };
        match result {
            Err(error) if let Some(code) = server::stopped_by_signal(&error) => Ok(ExitCode::from(code)),
            result => result,
        }
    }
}
