//! The `mcp-wirefuzz` command line.

use anyhow::{Result, bail};
use clap::{Parser, Subcommand};
use mcp_wirefuzz::seeds;
use mcp_wirefuzz::target::mutants::Mutant;
use mcp_wirefuzz::target::reference::{Calc, Planted};
use mcp_wirefuzz::target::stdio::{ServerCommand, Timeouts};
use mcp_wirefuzz::target::{Status, serve};
use std::io::{self, BufReader};
use std::process::ExitCode;
use std::time::Duration;

/// Fuzzing and property-testing harness for MCP servers at the JSON-RPC wire level.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Subcommand)]
enum Commands {
    /// Run the built-in reference server "calc" on stdin/stdout, one JSON-RPC message per line, until EOF.
    Serve {
        /// Plant one bug in the server (`--mutant list` lists them).
        #[arg(long, value_name = "NAME")]
        mutant: Option<String>,
    },
    /// Replay the protocol lesson's seed transcripts against the built-in server, or against a calc-like server
    /// started as `-- CMD ARGS...`; exit 1 if any reply differs.
    Check {
        /// How long a reply from a child server may take, in milliseconds.
        #[arg(long, default_value_t = 5_000)]
        timeout: u64,
        /// The server to start (no shell), after `--`.
        #[arg(last = true)]
        command: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Commands::Serve { mutant } => run_serve(mutant.as_deref()),
        Commands::Check { timeout, command } => run_check(&command, Duration::from_millis(timeout)),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("mcp-wirefuzz: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run_serve(mutant: Option<&str>) -> Result<ExitCode> {
    let input = BufReader::new(io::stdin().lock());
    let status = match mutant {
        None => serve(&Calc, input, io::stdout().lock())?,
        Some("list") => {
            for mutant in Mutant::ALL {
                println!("{:<28} {:<28} {}", mutant.name(), mutant.expected_rule(), mutant.description());
            }
            return Ok(ExitCode::SUCCESS);
        }
        Some(name) => {
            let Some(mutant) = Mutant::from_name(name) else {
                bail!("unknown mutant `{name}`; `mcp-wirefuzz serve --mutant list` lists them");
            };
            serve(&Planted(mutant), input, io::stdout().lock())?
        }
    };
    match status {
        Status::Running => Ok(ExitCode::SUCCESS),
        Status::Exited(code) => Ok(ExitCode::from(u8::try_from(code).unwrap_or(1))),
        Status::Hung => loop {
            std::thread::park();
        },
    }
}

fn run_check(command: &[String], timeout: Duration) -> Result<ExitCode> {
    let child = if command.is_empty() { None } else { Some(ServerCommand::from_argv(command)?) };
    let mut failed = 0;
    let cases = seeds::builtin();
    for case in &cases {
        let mismatches = match &child {
            None => case.check_in_process(&Calc),
            Some(child) => case.check_child(child, Timeouts { reply: timeout, ..Timeouts::default() })?,
        };
        if mismatches.is_empty() {
            println!("ok    {}", case.name);
        } else {
            failed += 1;
            println!("FAIL  {}", case.name);
            for mismatch in mismatches {
                println!("      {mismatch}");
            }
        }
    }
    println!("{} passed, {failed} failed", cases.len() - failed);
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
