//! `mcp-wirefuzz coverage`: the generator's coverage of the wire against the built-in server, as Markdown tables.

use anyhow::{Result, bail};
use mcp_wirefuzz::report;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The options of `coverage`.
#[derive(clap::Args)]
pub struct CoverageArgs {
    /// Generate for this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    time: f64,
    /// Stop after this many conversations instead.
    #[arg(long)]
    cases: Option<u64>,
    /// The seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Generates conversations for `--time` (or `--cases`) and prints the wire coverage they reached.
pub fn run(args: CoverageArgs) -> Result<ExitCode> {
    let CoverageArgs { time, cases, seed } = args;
    let Ok(time) = Duration::try_from_secs_f64(time) else { bail!("--time must be a number of seconds, 0 or more") };
    let started = Instant::now();
    let (coverage, index) =
        report::wire::measure(seed, |index| cases.map_or(started.elapsed() < time, |cases| index < cases));
    println!("{index} conversations in {:.1} s, seed {seed}, built-in server\n", started.elapsed().as_secs_f64());
    print!("{}", coverage.render());
    Ok(ExitCode::SUCCESS)
}
