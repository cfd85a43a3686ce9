//! The `mcp-wirefuzz` command line.

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use mcp_wirefuzz::campaign::{self, Options, Progress};
use mcp_wirefuzz::case::Case;
use mcp_wirefuzz::oracle::{Policy, check, render_catalogue};
use mcp_wirefuzz::report;
use mcp_wirefuzz::seeds;
use mcp_wirefuzz::target::mutants::Mutant;
use mcp_wirefuzz::target::reference::{Calc, Planted};
use mcp_wirefuzz::target::stdio::{ServerCommand, Timeouts};
use mcp_wirefuzz::target::{ServerSpec, Status, serve};
use std::io::{self, BufReader, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Fuzzing and property-testing harness for MCP servers at the JSON-RPC wire level.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Subcommand)]
enum Commands {
    /// Fuzz a server: the built-in one in-process, or `-- CMD ARGS...` as a child process over stdio (no shell).
    /// Exit 0 when clean, 1 on findings, 2 on usage or harness errors.
    Fuzz(FuzzArgs),
    /// Replay a case file against the server it names (or `-- CMD ARGS...`, or `--mutant NAME`) and check it;
    /// exit 1 when a rule breaks.
    Replay {
        /// The case file.
        file: PathBuf,
        /// Run against the built-in server with this planted bug instead.
        #[arg(long, value_name = "NAME")]
        mutant: Option<String>,
        /// Run against the built-in server, whatever the case names.
        #[arg(long, conflicts_with = "mutant")]
        built_in: bool,
        /// How long a reply from a child server may take, in milliseconds.
        #[arg(long, default_value_t = 2_000)]
        timeout: u64,
        /// The server to start (no shell), after `--`.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Print the invariant catalogue: every rule with its id, level, eras, source and policy.
    Invariants,
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

/// The options of `fuzz`.
#[derive(clap::Args)]
struct FuzzArgs {
    /// Stop after this many conversations (default 10000 when --time is not given).
    #[arg(long)]
    cases: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS")]
    time: Option<f64>,
    /// The seed (printed by every run; the same seed gives the same conversations).
    #[arg(long)]
    seed: Option<u64>,
    /// Parallel workers, each with its own server.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// How long a reply from a child server may take, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2_000)]
    timeout: u64,
    /// Plant one bug in the built-in server (`mcp-wirefuzz serve --mutant list` lists them).
    #[arg(long, value_name = "NAME")]
    mutant: Option<String>,
    /// Where case files of findings are written, the moment they are found.
    #[arg(long, value_name = "DIR", default_value = "wirefuzz-findings")]
    out: PathBuf,
    /// Also write the JSON report here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Turn a rule off (a policy the server legitimately differs on); repeatable.
    #[arg(long, value_name = "RULE")]
    allow: Vec<String>,
    /// Turn a rule on (e.g. JSONRPC-MALFORMED-REPLY for strict JSON-RPC); repeatable.
    #[arg(long, value_name = "RULE")]
    deny: Vec<String>,
    /// How many server runs one finding's minimization may take.
    #[arg(long, default_value_t = 2_000)]
    shrink_budget: usize,
    /// The server to start (no shell), after `--`.
    #[arg(last = true)]
    command: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Commands::Fuzz(args) => run_fuzz(args),
        Commands::Replay { file, mutant, built_in, timeout, command } => {
            run_replay(&file, mutant.as_deref(), built_in, &command, Duration::from_millis(timeout))
        }
        Commands::Invariants => {
            print!("{}", render_catalogue());
            Ok(ExitCode::SUCCESS)
        }
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

/// The server named by `--mutant` and `-- CMD`, or the built-in one.
fn server_spec(mutant: Option<&str>, command: &[String]) -> Result<ServerSpec> {
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

fn policy(allow: &[String], deny: &[String]) -> Result<Policy> {
    let mut policy = Policy::default();
    for rule in allow {
        policy = policy.allow(rule).map_err(|e| anyhow!("--allow: {e}"))?;
    }
    for rule in deny {
        policy = policy.deny(rule).map_err(|e| anyhow!("--deny: {e}"))?;
    }
    Ok(policy)
}

fn run_fuzz(args: FuzzArgs) -> Result<ExitCode> {
    let server = server_spec(args.mutant.as_deref(), &args.command)?;
    if args.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let time = match args.time {
        Some(secs) if !(secs > 0.0 && secs.is_finite()) => bail!("--time must be a positive number of seconds"),
        Some(secs) => Some(Duration::from_secs_f64(secs)),
        None => None,
    };
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    });
    let options = Options {
        seed,
        cases: args.cases.or(if time.is_none() { Some(10_000) } else { None }),
        time,
        policy: policy(&args.allow, &args.deny)?,
        out: Some(args.out.clone()),
        shrink_budget: args.shrink_budget,
    };
    let timeouts = Timeouts { reply: Duration::from_millis(args.timeout), ..Timeouts::default() };
    let targets = (0..args.jobs).map(|_| server.target(timeouts)).collect();
    eprintln!("mcp-wirefuzz fuzz: seed {seed}, {}, {} job(s)", server.describe(), args.jobs);
    let bar = progress_bar(options.cases);
    let summary = campaign::run(targets, &options, &server, |event| match event {
        Progress::Ran { done } => bar.tick(*done),
        Progress::Found(found) => bar.println(&report::human::finding(found, seed, &server)),
    })?;
    bar.finish();
    println!("{}", report::human::summary(&summary).trim_end());
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report::json::report(&summary, &server))?;
        std::fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(if summary.found.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Progress for people: a bar on a terminal, a plain line every few seconds otherwise.
enum Bar {
    Terminal(ProgressBar),
    Plain { last: std::cell::Cell<Instant> },
}

fn progress_bar(cases: Option<u64>) -> Bar {
    if !io::stderr().is_terminal() {
        return Bar::Plain { last: std::cell::Cell::new(Instant::now()) };
    }
    let bar = match cases {
        Some(cases) => ProgressBar::new(cases),
        None => ProgressBar::new_spinner(),
    };
    let style = ProgressStyle::with_template("{spinner} {pos}/{len} conversations {per_sec} {elapsed} {wide_bar}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    Bar::Terminal(bar)
}

impl Bar {
    fn tick(&self, done: u64) {
        match self {
            Bar::Terminal(bar) => bar.set_position(done),
            Bar::Plain { last } if last.get().elapsed() >= Duration::from_secs(5) => {
                last.set(Instant::now());
                eprintln!("mcp-wirefuzz: {done} conversations");
            }
            Bar::Plain { .. } => {}
        }
    }

    fn println(&self, text: &str) {
        match self {
            Bar::Terminal(bar) => bar.suspend(|| println!("{}", text.trim_end())),
            Bar::Plain { .. } => println!("{}", text.trim_end()),
        }
    }

    fn finish(&self) {
        if let Bar::Terminal(bar) = self {
            bar.finish_and_clear();
        }
    }
}

fn run_replay(
    file: &std::path::Path,
    mutant: Option<&str>,
    built_in: bool,
    command: &[String],
    timeout: Duration,
) -> Result<ExitCode> {
    let case = Case::load(file)?;
    let server = match (built_in, mutant, command.is_empty()) {
        (true, _, true) => ServerSpec::BuiltIn,
        (true, _, false) => bail!("--built-in cannot be combined with `-- CMD`"),
        (false, None, true) => case.server(),
        (false, mutant, _) => server_spec(mutant, command)?,
    };
    let timeouts = Timeouts { reply: timeout, ..Timeouts::default() };
    let transcript = server.target(timeouts).run(&case.inputs)?;
    let findings = check(&transcript, &Policy::default());
    println!("replaying {} against {}", file.display(), server.describe());
    print!("{}", transcript.render());
    for finding in &findings {
        println!("{finding}");
    }
    let fired: Vec<&str> = findings.iter().map(|f| f.rule).collect();
    let expected = if case.expect.is_empty() { "clean".to_string() } else { case.expect.join(", ") };
    let reproduced = if case.expect.is_empty() {
        fired.is_empty()
    } else {
        case.expect.iter().all(|rule| fired.contains(&rule.as_str()))
    };
    println!("case expects: {expected}; {}", if reproduced { "as expected" } else { "NOT as expected" });
    Ok(if findings.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
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
