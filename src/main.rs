//! The `mcp-wirefuzz` command line.

use anyhow::Result;
use clap::{Parser, Subcommand};
use mcp_wirefuzz::seeds;
use mcp_wirefuzz::target::reference::Calc;
use mcp_wirefuzz::target::stdio::ServerCommand;
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
    Serve,
    /// Replay the protocol lesson's seed transcripts against the built-in server, or against a calc-like server
    /// started as `-- CMD ARGS...`; exit 1 if any reply differs.
    Check {
        /// How long one case may take against a child server, in milliseconds.
        #[arg(long, default_value_t = 10_000)]
        timeout: u64,
        /// The server to start (no shell), after `--`.
        #[arg(last = true)]
        command: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Commands::Serve => run_serve(),
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

fn run_serve() -> Result<ExitCode> {
    let status = serve(&Calc, BufReader::new(io::stdin().lock()), io::stdout().lock())?;
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
            Some(child) => case.check_child(child, timeout)?,
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
