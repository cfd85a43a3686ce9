//! The `mcp-wirefuzz` command line.

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use mcp_wirefuzz::baseline::Baseline;
use mcp_wirefuzz::campaign::{self, Options, Progress};
use mcp_wirefuzz::case::Case;
use mcp_wirefuzz::fuzz_targets::{self, FuzzTarget};
use mcp_wirefuzz::init::{self, Init, Outcome};
use mcp_wirefuzz::model::{self, Eras, ServerModel, Source};
use mcp_wirefuzz::oracle::{Policy, check, render_catalogue};
use mcp_wirefuzz::report::{self, Rerun};
use mcp_wirefuzz::seeds;
use mcp_wirefuzz::server::attach;
use mcp_wirefuzz::server::builtin::http::{self as http_server, HttpBug};
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::quirks::{self, Quirky};
use mcp_wirefuzz::server::builtin::reference::{Calc, Planted, SERVER_NAME, SERVER_VERSION};
use mcp_wirefuzz::server::http::HttpSpec;
use mcp_wirefuzz::server::{DeadlinePassed, ServerCommand, ServerSpec, Status, Timeouts, serve};
use mcp_wirefuzz::shrink;
use mcp_wirefuzz::surface;
use mcp_wirefuzz::transcript::{Ending, Input, Transcript};
use std::io::{self, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// mimalloc: the harness allocates and frees many small JSON values per conversation, where it is markedly faster
/// than the system allocator (`cargo bench --bench wirefuzz -- inprocess`, see the README).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    Fuzz(Box<FuzzArgs>),
    /// Replay a case file against the server it names (or `-- CMD ARGS...`, or `--mutant NAME`) and check it.
    /// Exit 0 when no rule breaks (a clean case as expected); 1 when a rule breaks (a case's expected rule broke
    /// again: it reproduces); 3 when the case's expected rules did not all break on its server (it no longer
    /// reproduces); 2 for a case file that is malformed, cut short or expects an unknown rule, or a harness error.
    Replay {
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
        /// How long a reply from a child server may take, in milliseconds.
        #[arg(long, default_value_t = REPLY_TIMEOUT_MS)]
        timeout: u64,
        /// The eras the server serves (handshake, modern, dual), instead of the case's `eras:`.
        #[arg(long, value_name = "ERAS")]
        eras: Option<String>,
        /// Turn on a profile's rules (spec, strict-jsonrpc, mcp-python-2.3.0); repeatable.
        #[arg(long, value_name = "NAME")]
        profile: Vec<String>,
        /// Turn a rule off, on top of the case's own `allow:`; repeatable.
        #[arg(long, value_name = "RULE")]
        allow: Vec<String>,
        /// Turn a rule on, on top of the case's own `deny:`; repeatable.
        #[arg(long, value_name = "RULE")]
        deny: Vec<String>,
        /// The server to start (no shell), after `--`.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Write a fuzz target, a property test, a replay test and a note (WIREFUZZ.md) into the crate in DIR, for
    /// its MCP server in-process; files that exist are left alone.
    Init {
        /// The crate's folder (the one with Cargo.toml).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// A Rust expression that builds the server: an rmcp handler when the crate depends on rmcp, else an
        /// `InProcessServer` (default: `CRATE::Server::default()`).
        #[arg(long, value_name = "EXPR")]
        server: Option<String>,
        /// The mcp-wirefuzz dependency as a TOML inline table (default: by path to this build's source).
        #[arg(long, value_name = "TOML")]
        dependency: Option<String>,
    },
    /// Turn a libFuzzer artifact (e.g. fuzz/artifacts/mutant/crash-...) into a minimized case file.
    Import {
        /// The artifact.
        artifact: PathBuf,
        /// The fuzz target that wrote it (default: the folder it sits in).
        #[arg(long, value_name = "TARGET")]
        target: Option<String>,
        /// For `mutant` artifacts found with WIREFUZZ_MUTANT set: the planted bug it pinned.
        #[arg(long, value_name = "NAME")]
        mutant: Option<String>,
        /// Where the case file goes.
        #[arg(long, value_name = "DIR", default_value = "corpus/regressions")]
        out: PathBuf,
        /// The case file's name (default: the rule and the artifact's name).
        #[arg(long)]
        name: Option<String>,
        /// How many server runs the minimization may take.
        #[arg(long, default_value_t = 2_000)]
        shrink_budget: usize,
    },
    /// Minimize a case file in place (or into --out) while the rule it expects still breaks on its server.
    Shrink {
        /// The case file.
        file: PathBuf,
        /// Write the minimized case here instead of over the file.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Reach the case's server at this HTTP endpoint instead of the case's `url:` (its `command:` still starts
        /// it).
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// How long a reply from a child server may take, in milliseconds.
        #[arg(long, default_value_t = REPLY_TIMEOUT_MS)]
        timeout: u64,
        /// How many server runs the minimization may take.
        #[arg(long, default_value_t = 2_000)]
        shrink_budget: usize,
    },
    /// Write the seed corpora of every cargo-fuzz target (corpus/TARGET/), made from the seed transcripts, the
    /// planted bugs' triggers and generated conversations that cover every generator feature.
    Corpus {
        /// The corpus root.
        #[arg(long, value_name = "DIR", default_value = "corpus")]
        out: PathBuf,
    },
    /// Print the invariant catalogue: every rule with its id, level, eras, source and policy.
    Invariants,
    /// Measure the generator's coverage of the wire against the built-in server: the JSON types every envelope
    /// member, params member and _meta key got, the odd strings that reached ids, names and arguments, and the
    /// reply sizes provoked. Prints Markdown tables (`.`: never reached).
    Coverage {
        /// Generate for this many seconds.
        #[arg(long, value_name = "SECS", default_value_t = 60.0)]
        time: f64,
        /// Stop after this many conversations instead.
        #[arg(long)]
        cases: Option<u64>,
        /// The seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Run the built-in reference server "calc" on stdin/stdout, one JSON-RPC message per line, until EOF.
    Serve {
        /// Plant one bug in the server (`--mutant list` lists them).
        #[arg(long, value_name = "NAME")]
        mutant: Option<String>,
        /// Run the quirky server instead: calc doing everything legal but unusual (replies out of order, split
        /// writes, odd layout and escapes, a slow start, stderr noise), drawn from SEED.
        #[arg(long, value_name = "SEED", num_args = 0..=1, default_missing_value = "0", conflicts_with = "mutant")]
        quirks: Option<u64>,
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
    },
    /// A quick, deterministic conformance run against the built-in server or `-- CMD ARGS...`: the server model
    /// first (probed, or `--eras`), one probe per invariant (each planted bug's trigger, judged with the model),
    /// then, on the calc server only (serverInfo calc "", versions 2026-07-28), the protocol lesson's seed
    /// transcripts (its exact replies); exit 1 if anything fails.
    Check {
        /// How long a reply from a child server may take, in milliseconds.
        #[arg(long, default_value_t = 5_000)]
        timeout: u64,
        /// Skip the seed transcripts, which expect the calc server (tool `add`, name `calc`).
        #[arg(long)]
        no_seeds: bool,
        /// The eras the server serves (handshake, modern, dual), instead of probing it.
        #[arg(long, value_name = "ERAS")]
        eras: Option<String>,
        /// Reach the server over Streamable HTTP at this endpoint (adds one probe per HTTP rule).
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// The server to start (no shell), after `--`.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Stand in for a server that a fork server (forkservers/) starts: hand this process's stdio to the fork
    /// server listening on SOCKET, wait for the forked server, and exit as it did. Use it as the server command:
    /// `fuzz -- mcp-wirefuzz attach SOCKET`.
    Attach {
        /// The fork server's Unix socket.
        socket: PathBuf,
        /// How long to wait for the socket to accept connections, in seconds (a fork server still starting).
        #[arg(long, value_name = "SECS", default_value_t = 10.0)]
        wait: f64,
    },
}

/// The options of `fuzz`.
/// `--timeout`'s default: how long a reply from a child server may take, in milliseconds.
const REPLY_TIMEOUT_MS: u64 = 2_000;
/// `--startup-timeout`'s default, in milliseconds.
const STARTUP_TIMEOUT_MS: u64 = 10_000;
/// `--settle`'s default, in milliseconds.
const SETTLE_MS: u64 = 20;

#[derive(clap::Args)]
struct FuzzArgs {
    /// Stop after this many conversations (default 10000 when --time is not given).
    #[arg(long)]
    cases: Option<u64>,
    /// Stop after this many seconds: the whole run, probe and minimization included.
    #[arg(long, value_name = "SECS")]
    time: Option<f64>,
    /// The seed (printed by every run; the same seed gives the same conversations).
    #[arg(long)]
    seed: Option<u64>,
    /// Parallel fuzzing workers, each with its own server (1 to 256; one more worker minimizes findings).
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// How long a reply from a child server may take, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = REPLY_TIMEOUT_MS)]
    timeout: u64,
    /// Extra time a child server gets until its first line (start-up), in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = STARTUP_TIMEOUT_MS)]
    startup_timeout: u64,
    /// How long a child server's output must stay quiet at a sync point, in milliseconds (to see late extra lines).
    #[arg(long, value_name = "MS", default_value_t = SETTLE_MS)]
    settle: u64,
    /// Plant one bug in the built-in server (`mcp-wirefuzz serve --mutant list` lists them).
    #[arg(long, value_name = "NAME")]
    mutant: Option<String>,
    /// Reach the server over Streamable HTTP at this endpoint, http://HOST:PORT/PATH (with `-- CMD ARGS...`,
    /// start it first, restart it after a crash, stop it at the end).
    #[arg(long, value_name = "URL", conflicts_with = "mutant")]
    url: Option<String>,
    /// Where case files of findings are written, the moment they are found (a writable folder, checked first).
    #[arg(long, value_name = "DIR", default_value = "wirefuzz-findings")]
    out: PathBuf,
    /// Also write the JSON report here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write a JUnit XML report here (one test case per checked rule).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write a SARIF 2.1.0 report here.
    #[arg(long, value_name = "FILE")]
    sarif: Option<PathBuf>,
    /// Known findings, one rule id per line: they are reported but do not fail the run; entries that no longer
    /// break are reported as stale.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// The eras the server serves (handshake, modern, dual), instead of probing it at the start of the run.
    #[arg(long, value_name = "ERAS")]
    eras: Option<String>,
    /// Turn on a profile's rules (spec, strict-jsonrpc, mcp-python-2.3.0; `mcp-wirefuzz invariants` lists them);
    /// repeatable.
    #[arg(long, value_name = "NAME")]
    profile: Vec<String>,
    /// Turn a rule off (a policy the server legitimately differs on); repeatable.
    #[arg(long, value_name = "RULE")]
    allow: Vec<String>,
    /// Turn a rule on (e.g. JSONRPC-MALFORMED-REPLY for strict JSON-RPC); repeatable.
    #[arg(long, value_name = "RULE")]
    deny: Vec<String>,
    /// How many server runs one finding's minimization may take.
    #[arg(long, default_value_t = 2_000)]
    shrink_budget: usize,
    /// How many seconds one finding's minimization may take (within --time).
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    shrink_time: u64,
    /// Do not learn the server's tools, prompts and resources at the start of the run (tool calls then name
    /// unknown tools, and the surface rules do not judge).
    #[arg(long)]
    no_surface: bool,
    /// Call only this tool (of those the server lists); repeatable.
    #[arg(long, value_name = "NAME", conflicts_with = "no_surface")]
    tool: Vec<String>,
    /// Never call this tool (one with side effects, or one that runs longer than --timeout); repeatable.
    #[arg(long, value_name = "NAME", conflicts_with = "no_surface")]
    skip_tool: Vec<String>,
    /// Also write an HTML coverage page here (one table per tool, the worst finding first).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// The server to start (no shell), after `--`.
    #[arg(last = true)]
    command: Vec<String>,
}

fn main() -> ExitCode {
    mcp_wirefuzz::server::stdio::no_huge_pages();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Commands::Fuzz(args) => run_fuzz(*args),
        Commands::Attach { socket, wait } => run_attach(&socket, wait),
        Commands::Replay { file, mutant, built_in, url, timeout, eras, profile, allow, deny, command } => {
            let server = Replayed { mutant: mutant.as_deref(), built_in, url: url.as_deref(), command: &command };
            let rules = Rules { eras: eras.as_deref(), profiles: &profile, allow: &allow, deny: &deny };
            timeout_option("--timeout", timeout).and_then(|timeout| run_replay(&file, server, timeout, rules))
        }
        Commands::Init { dir, server, dependency } => run_init(&dir, server, dependency),
        Commands::Import { artifact, target, mutant, out, name, shrink_budget } => {
            run_import(&artifact, target.as_deref(), mutant.as_deref(), &out, name.as_deref(), shrink_budget)
        }
        Commands::Shrink { file, out, url, timeout, shrink_budget } => timeout_option("--timeout", timeout)
            .and_then(|timeout| run_shrink(&file, out.as_deref(), url.as_deref(), timeout, shrink_budget)),
        Commands::Corpus { out } => run_corpus(&out),
        Commands::Coverage { time, cases, seed } => run_coverage(time, cases, seed),
        Commands::Invariants => {
            print!("{}", render_catalogue());
            Ok(ExitCode::SUCCESS)
        }
        Commands::Serve { http: Some(address), http_bug, http_era, .. } => {
            run_serve_http(&address, http_bug.as_deref(), http_era.as_deref() == Some("modern"))
        }
        Commands::Serve { http_bug: Some(name), .. } if name == "list" => run_serve_http("", Some("list"), false),
        Commands::Serve { http_bug: Some(_), .. } => Err(anyhow!("--http-bug needs --http ADDR")),
        Commands::Serve { mutant, quirks, .. } => run_serve(mutant.as_deref(), quirks),
        Commands::Check { timeout, no_seeds, eras, url, command } => timeout_option("--timeout", timeout)
            .and_then(|timeout| run_check(&command, url.as_deref(), timeout, !no_seeds, eras.as_deref())),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("mcp-wirefuzz: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// Ends every server the harness started when SIGINT, SIGTERM or SIGHUP stops it (their process groups, which a
/// terminal's Ctrl-C does not reach), then exits with 128 + the signal's number. Call before any thread starts: the
/// signals are blocked in every thread and taken by one that waits for them (children start with none blocked).
fn end_servers_on_signal() -> Result<()> {
    use nix::sys::signal::{SigSet, Signal};
    let mut signals = SigSet::empty();
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        signals.add(signal);
    }
    signals.thread_block().context("cannot block signals")?;
    std::thread::spawn(move || {
        if let Ok(signal) = signals.wait() {
            eprintln!("mcp-wirefuzz: {signal}: ending the servers");
            mcp_wirefuzz::server::stdio::end_all();
            std::process::exit(128 + signal as i32);
        }
    });
    Ok(())
}

fn run_attach(socket: &Path, wait: f64) -> Result<ExitCode> {
    let wait = match wait {
        0.0 => Duration::ZERO,
        secs => seconds_option("--wait", secs)?,
    };
    match attach::attach(socket, wait) {
        Ok(outcome) => attach::exit_as(outcome),
        Err(error) => attach::lost(&format!("{error:#}")),
    }
}

fn run_serve_http(address: &str, bug: Option<&str>, modern_only: bool) -> Result<ExitCode> {
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
    http_server::serve(address, bug, modern_only, |local| {
        eprintln!("mcp-wirefuzz: serving MCP over HTTP at http://{local}/mcp")
    })?;
    Ok(ExitCode::SUCCESS)
}

fn run_serve(mutant: Option<&str>, quirks: Option<u64>) -> Result<ExitCode> {
    // Locked only where it is read here: the quirky server reads stdin on a thread of its own.
    let input = || BufReader::new(io::stdin().lock());
    let status = match (mutant, quirks) {
        (None, Some(seed)) => quirks::serve(&Quirky::new(seed), io::stdin(), io::stdout().lock(), io::stderr())?,
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
    match status {
        Status::Running => Ok(ExitCode::SUCCESS),
        Status::Exited(code) => Ok(ExitCode::from(u8::try_from(code).unwrap_or(1))),
        Status::Hung => loop {
            std::thread::park();
        },
    }
}

/// The server named by `--mutant`, `--url` and `-- CMD`, or the built-in one.
fn server_spec(mutant: Option<&str>, url: Option<&str>, command: &[String]) -> Result<ServerSpec> {
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

/// The `--eras`, `--profile`, `--allow` and `--deny` options.
struct Rules<'a> {
    eras: Option<&'a str>,
    profiles: &'a [String],
    allow: &'a [String],
    deny: &'a [String],
}

/// The model stated by `--eras`, if given.
fn stated_eras(eras: Option<&str>) -> Result<Option<ServerModel>> {
    let Some(name) = eras else { return Ok(None) };
    match Eras::from_name(name) {
        Some(eras) => Ok(Some(ServerModel::stated(eras))),
        None => bail!("--eras takes handshake, modern or dual, not `{name}`"),
    }
}

/// The server model: stated with `--eras`, the built-in server's, or probed on fresh processes of a child.
fn server_model(server: &ServerSpec, eras: Option<&str>, timeouts: Timeouts) -> Result<ServerModel> {
    if let Some(stated) = stated_eras(eras)? {
        return Ok(stated);
    }
    match server {
        ServerSpec::Command(_) | ServerSpec::Http(_) => model::probe(server.target(timeouts).as_mut()),
        _ => Ok(ServerModel::built_in()),
    }
}

/// `base` with the command line's profiles, then its `--allow` rules turned off and `--deny` rules turned on.
fn policy(base: Policy, profiles: &[String], allow: &[String], deny: &[String]) -> Result<Policy> {
    let mut policy = base;
    for name in profiles {
        policy = policy.with_profile(name).map_err(|e| anyhow!("--profile: {e}"))?;
    }
    for rule in allow {
        policy = policy.allow(rule).map_err(|e| anyhow!("--allow: {e}"))?;
    }
    for rule in deny {
        policy = policy.deny(rule).map_err(|e| anyhow!("--deny: {e}"))?;
    }
    Ok(policy)
}

/// The longest duration any option takes: a year.
const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);
/// The most parallel workers `--jobs` takes.
const MAX_JOBS: usize = 256;
/// The shortest reply timeout: a smaller `--timeout` is raised to it, with a warning.
const MIN_TIMEOUT: Duration = Duration::from_millis(10);

/// A duration option given in seconds: a positive number no larger than [`MAX_DURATION`].
fn seconds_option(name: &str, secs: f64) -> Result<Duration> {
    match Duration::try_from_secs_f64(secs) {
        Ok(duration) if !duration.is_zero() && duration <= MAX_DURATION => Ok(duration),
        _ => bail!(
            "{name} must be a number of seconds above 0 and at most {} (a year), not {secs}",
            MAX_DURATION.as_secs()
        ),
    }
}

/// A duration option given in milliseconds: at most [`MAX_DURATION`].
fn millis_option(name: &str, ms: u64) -> Result<Duration> {
    let duration = Duration::from_millis(ms);
    if duration > MAX_DURATION {
        bail!("{name} must be at most {} ms (a year), not {ms}", MAX_DURATION.as_millis());
    }
    Ok(duration)
}

/// A reply timeout option: at most a year, raised to [`MIN_TIMEOUT`] with a warning (a reply cannot come in 0 ms,
/// and every request would count as unanswered).
fn timeout_option(name: &str, ms: u64) -> Result<Duration> {
    let timeout = millis_option(name, ms)?;
    if timeout < MIN_TIMEOUT {
        eprintln!(
            "mcp-wirefuzz: warning: {name} {ms} is too short for any reply; using {} ms",
            MIN_TIMEOUT.as_millis()
        );
    }
    Ok(timeout.max(MIN_TIMEOUT))
}

/// Checks that `dir` is a folder the harness can write into (creating it if needed), before any work starts;
/// true when it had to create it.
fn writable_folder(option: &str, dir: &Path) -> Result<bool> {
    if dir.exists() && !dir.is_dir() {
        bail!("{option} {} is not a folder", dir.display());
    }
    let created = !dir.exists();
    std::fs::create_dir_all(dir).with_context(|| format!("{option}: cannot create {}", dir.display()))?;
    let probe = dir.join(format!(".mcp-wirefuzz-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| format!("{option}: cannot write into {}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(created)
}

/// Checks that a report can be written to `path` (its folder is writable, and it is not a folder itself).
fn writable_file(option: &str, path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!("{option} {} is a folder, not a file", path.display());
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    writable_folder(option, dir).map(drop)
}

fn run_fuzz(args: FuzzArgs) -> Result<ExitCode> {
    let began = Instant::now();
    end_servers_on_signal()?;
    let server = server_spec(args.mutant.as_deref(), args.url.as_deref(), &args.command)?;
    let baseline = match &args.baseline {
        Some(path) => Baseline::load(path)?,
        None => Baseline::default(),
    };
    if !(1..=MAX_JOBS).contains(&args.jobs) {
        bail!("--jobs must be between 1 and {MAX_JOBS}, not {}", args.jobs);
    }
    let time = args.time.map(|secs| seconds_option("--time", secs)).transpose()?;
    let deadline = time.map(|time| began + time);
    if !(1..=MAX_DURATION.as_secs()).contains(&args.shrink_time) {
        bail!(
            "--shrink-time must be between 1 and {} seconds (a year), not {}",
            MAX_DURATION.as_secs(),
            args.shrink_time
        );
    }
    let shrink_time = Duration::from_secs(args.shrink_time);
    let reply = timeout_option("--timeout", args.timeout)?;
    let startup = millis_option("--startup-timeout", args.startup_timeout)?;
    let settle = millis_option("--settle", args.settle)?;
    if settle.is_zero() {
        eprintln!(
            "mcp-wirefuzz: warning: --settle 0 does not wait for lines after the replies owed: late replies, duplicates and replies to notifications may be missed"
        );
    }
    let out_created = writable_folder("--out", &args.out)?;
    for (option, path) in [("--json", &args.json), ("--junit", &args.junit), ("--sarif", &args.sarif)] {
        if let Some(path) = path {
            writable_file(option, path)?;
        }
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    });
    // The probe gets a third of --time at most, so a server that hangs on it still leaves time to fuzz.
    let probe_deadline = time.map(|time| began + time / 3);
    let probe_timeouts = Timeouts { reply, startup, deadline: probe_deadline, ..Timeouts::default() };
    let model = match server_model(&server, args.eras.as_deref(), probe_timeouts) {
        Err(error) if error.is::<DeadlinePassed>() => {
            eprintln!("mcp-wirefuzz: the probe of the server model ran out of its third of --time (--eras skips it)");
            let unanswered = Transcript { events: Vec::new(), ending: Ending::Hung { waited_ms: 0 } };
            model::classify(&unanswered, &unanswered, &unanswered)
        }
        model => model?,
    };
    eprintln!("server model: {model}");
    let surface = match args.no_surface {
        true => None,
        false => match surface::learn(server.target(probe_timeouts).as_mut(), &model) {
            Err(error) if error.is::<DeadlinePassed>() => {
                eprintln!(
                    "mcp-wirefuzz: learning the server's surface ran out of its third of --time: fuzzing without it"
                );
                None
            }
            learned => {
                let learned = learned?.focus(&args.tool)?.skip(&args.skip_tool)?;
                eprintln!("server surface: {learned}");
                for note in &learned.notes {
                    eprintln!("  {note}");
                }
                Some(Arc::new(learned))
            }
        },
    };
    let base = match server.mutant() {
        Some(mutant) => mutant.policy(),
        None => Policy::default(),
    };
    let base = match &surface {
        Some(surface) => base.with_surface(surface.clone()),
        None => base,
    };
    let options = Options {
        seed,
        cases: args.cases.or(if time.is_none() { Some(10_000) } else { None }),
        time: deadline.map(|deadline| deadline.saturating_duration_since(Instant::now())),
        policy: policy(base.with_model(model.clone()), &args.profile, &args.allow, &args.deny)?,
        out: Some(args.out.clone()),
        shrink: shrink::Budget { runs: args.shrink_budget, time: Some(shrink_time) },
        baseline: baseline.clone(),
    };
    let timeouts = Timeouts { reply, startup, settle, deadline, ..Timeouts::default() };
    let targets = (0..args.jobs).map(|_| server.sentinel_target(timeouts, model.eras)).collect();
    let shrinker = server.target(timeouts);
    eprintln!("mcp-wirefuzz fuzz: seed {seed}, {}, {} job(s)", server.describe(), args.jobs);
    let rerun = rerun(&args, seed, &server);
    let bar = progress_bar(options.cases);
    let summary = campaign::run(targets, shrinker, &options, &server, |event| match event {
        Progress::Ran { done } => bar.tick(*done),
        Progress::Found(found) => bar.println(&report::human::finding(found, &rerun)),
        Progress::Minimized(found) => bar.println(&report::human::minimized(found)),
    })?;
    // A worker left busy past the deadline may still hold a server: end them all.
    mcp_wirefuzz::server::stdio::end_all();
    if out_created && summary.found.is_empty() {
        // Made for the check before the run, and nothing was found: not left behind empty.
        let _ = std::fs::remove_dir(&args.out);
    }
    bar.finish();
    println!("{}", report::human::summary(&summary, &baseline).trim_end());
    println!("server model: {model}");
    if let Some(surface) = &surface {
        println!("server surface: {surface}");
        print!("{}", report::coverage::text(&summary.coverage));
    }
    if let Some(path) = &args.html {
        let title = format!("mcp-wirefuzz coverage: {}, seed {seed}", server.describe());
        write_report(path, &report::coverage::html(&summary.coverage, &title))?;
    }
    if let Some(path) = &args.json {
        let mut json = report::json::report(&summary, &rerun, &baseline);
        json["server_model"] = model.to_json();
        json["surface"] = surface.as_ref().map_or(serde_json::Value::Null, |s| s.to_json());
        json["coverage"] = summary.coverage.to_json();
        let text = serde_json::to_string_pretty(&json)?;
        write_report(path, &(text + "\n"))?;
    }
    if let Some(path) = &args.junit {
        write_report(path, &report::junit::report(&summary, &rerun, &options.policy, &baseline))?;
    }
    if let Some(path) = &args.sarif {
        let mut sarif = report::sarif::report(&summary, &rerun, &options.policy, &baseline);
        sarif["runs"][0]["properties"] = serde_json::json!({ "serverModel": model.to_json() });
        let text = serde_json::to_string_pretty(&sarif)?;
        write_report(path, &(text + "\n"))?;
    }
    Ok(if summary.fails(&baseline) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The options of a fuzz run that a command reproducing one of its findings repeats: the reply timeout for a
/// replay; for the run narrowed to one conversation, every option that changes what is sent or how it is judged.
fn rerun<'a>(args: &FuzzArgs, seed: u64, server: &'a ServerSpec) -> Rerun<'a> {
    let mut rerun = Rerun::new(seed, server);
    let mut option = |name: &str, value: String| rerun.fuzz.extend([name.to_string(), value]);
    for (name, value, default) in [
        ("--timeout", args.timeout, REPLY_TIMEOUT_MS),
        ("--startup-timeout", args.startup_timeout, STARTUP_TIMEOUT_MS),
        ("--settle", args.settle, SETTLE_MS),
    ] {
        if value != default {
            option(name, value.to_string());
        }
    }
    if let Some(eras) = &args.eras {
        option("--eras", eras.clone());
    }
    for (name, values) in [
        ("--profile", &args.profile),
        ("--allow", &args.allow),
        ("--deny", &args.deny),
        ("--tool", &args.tool),
        ("--skip-tool", &args.skip_tool),
    ] {
        values.iter().for_each(|value| option(name, value.clone()));
    }
    if args.no_surface {
        rerun.fuzz.push("--no-surface".to_string());
    }
    if args.timeout != REPLY_TIMEOUT_MS {
        rerun.replay.extend(["--timeout".to_string(), args.timeout.to_string()]);
    }
    rerun
}

fn write_report(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
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

/// The server options of `replay`.
struct Replayed<'a> {
    mutant: Option<&'a str>,
    built_in: bool,
    url: Option<&'a str>,
    command: &'a [String],
}

/// The exit code of `replay` when a case's expected rules do not all break again on its server.
const NO_LONGER_REPRODUCES: u8 = 3;

fn run_replay(file: &Path, server: Replayed, timeout: Duration, rules: Rules) -> Result<ExitCode> {
    end_servers_on_signal()?;
    let case = Case::load(file)?;
    let server = match (server.built_in, server.mutant, server.command.is_empty()) {
        (true, _, true) => ServerSpec::BuiltIn,
        (true, _, false) => bail!("--built-in cannot be combined with `-- CMD`"),
        (false, None, true) if server.url.is_none() => case.server(),
        (false, mutant, _) => server_spec(mutant, server.url, server.command)?,
    };
    // A crash case waits (up to the reply timeout) for the server to exit on its own before closing its input.
    let linger = if case.expect.iter().any(|rule| rule == "SERVER-CRASH") { timeout } else { Duration::ZERO };
    let timeouts = Timeouts { reply: timeout, linger, ..Timeouts::default() };
    // The model: `--eras`, else the case's `eras:` on the case's own server, else the built-in server's or a probe.
    let model = match stated_eras(rules.eras)? {
        Some(stated) => Some(stated),
        None if case.eras.is_some() && server == case.server() => None,
        None => Some(server_model(&server, None, timeouts)?),
    };
    let transcript = server.target(timeouts).run(&case.inputs)?;
    let base = case.policy();
    let base = match model {
        Some(model) => base.with_model(model),
        None => base,
    };
    let policy = policy(base, rules.profiles, rules.allow, rules.deny)?;
    let policy = surface::with_learned(policy, server.target(timeouts).as_mut())?;
    let findings = check(&transcript, &policy);
    println!("replaying {} against {}", file.display(), server.describe());
    if let Some(model) = policy.model() {
        println!("server model: {model}");
    }
    print!("{}", transcript.render());
    for finding in &findings {
        println!("{finding}");
    }
    let broke = if findings.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) };
    if server != case.server() {
        return Ok(broke);
    }
    let fired: Vec<&str> = findings.iter().map(|f| f.rule).collect();
    let expected = if case.expect.is_empty() { "clean".to_string() } else { case.expect.join(", ") };
    let reproduced = if case.expect.is_empty() {
        fired.is_empty()
    } else {
        case.expect.iter().all(|rule| fired.contains(&rule.as_str()))
    };
    let verdict = if reproduced { "as expected" } else { "NOT as expected" };
    println!("the case expects {expected} on {}: {verdict}", server.describe());
    if !case.expect.is_empty() && !reproduced {
        println!("the case no longer reproduces (exit {NO_LONGER_REPRODUCES})");
        return Ok(ExitCode::from(NO_LONGER_REPRODUCES));
    }
    Ok(broke)
}

fn run_init(dir: &Path, server: Option<String>, dependency: Option<String>) -> Result<ExitCode> {
    let mut init = Init::for_crate(dir)?;
    if let Some(server) = server {
        init::check_server_expression(&server)?;
        init.server = server;
    }
    if let Some(dependency) = dependency {
        init.dependency = dependency;
    }
    for (path, outcome) in init.write(dir)? {
        match outcome {
            Outcome::Written => println!("wrote   {}", path.display()),
            Outcome::Skipped => println!("skipped {} (it exists)", path.display()),
        }
    }
    let kind = if init.rmcp { "rmcp handler" } else { "in-process server" };
    println!("the {kind} under test: {} (see WIREFUZZ.md)", init.server);
    Ok(ExitCode::SUCCESS)
}

fn run_import(
    artifact: &Path,
    target: Option<&str>,
    mutant: Option<&str>,
    out: &Path,
    name: Option<&str>,
    budget: usize,
) -> Result<ExitCode> {
    let target_name = match target {
        Some(name) => name.to_string(),
        None => artifact
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .context("cannot tell the fuzz target from the artifact's folder; give --target")?,
    };
    let Some(fuzz_target) = FuzzTarget::from_name(&target_name) else {
        bail!("unknown fuzz target `{target_name}` (conversation, mutant, server_lines or oracle)");
    };
    let data = std::fs::read(artifact).with_context(|| format!("cannot read {}", artifact.display()))?;
    let Some((mut server, inputs)) = fuzz_target.decode(&data) else {
        bail!("an `oracle` artifact is a transcript, not a conversation: there is nothing to replay");
    };
    if let Some(pinned) = mutant {
        server = server_spec(Some(pinned), None, &[])?;
    }
    import_inputs(artifact, &server, &inputs, out, name.map(str::to_string), budget)
}

fn import_inputs(
    artifact: &Path,
    server: &ServerSpec,
    inputs: &[Input],
    out: &Path,
    name: Option<String>,
    budget: usize,
) -> Result<ExitCode> {
    let judged = match server {
        ServerSpec::Mutant(mutant) => mutant.policy(),
        ServerSpec::BuiltIn => Policy::default().with_model(ServerModel::built_in()),
        ServerSpec::Command(_) | ServerSpec::Http(_) => Policy::default(),
    };
    let mut target = server.target(Timeouts::default());
    let transcript = target.run(inputs)?;
    let findings = check(&transcript, &judged);
    let rule = match server.mutant() {
        Some(mutant) if findings.iter().any(|f| f.rule == mutant.expected_rule()) => mutant.expected_rule(),
        _ => match findings.first() {
            Some(finding) => finding.rule,
            None => {
                println!("{} breaks no rule on {}: nothing to import", artifact.display(), server.describe());
                return Ok(ExitCode::SUCCESS);
            }
        },
    };
    let budget = shrink::Budget { runs: budget, ..Default::default() };
    let minimized = shrink::minimize_finding(target.as_mut(), inputs, rule, None, &judged, budget)?
        .context("the finding did not reproduce")?;
    let case = Case::for_finding(&minimized.inputs, &minimized.transcript, &minimized.finding, server, &judged);
    let stem = artifact.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = name.unwrap_or_else(|| format!("{}-{}", rule.to_lowercase(), stem.chars().take(20).collect::<String>()));
    let path = case.save(out, &name)?;
    let frames = case.inputs.iter().filter(|i| matches!(i, Input::Line(_))).count();
    println!("{rule} on {}: {} frames, minimized to {frames}", server.describe(), inputs.len());
    println!(
        "wrote {}
replay: mcp-wirefuzz replay {}",
        path.display(),
        path.display()
    );
    Ok(ExitCode::from(1))
}

fn run_shrink(
    file: &Path,
    out: Option<&Path>,
    url: Option<&str>,
    timeout: Duration,
    budget: usize,
) -> Result<ExitCode> {
    end_servers_on_signal()?;
    let mut case = Case::load(file)?;
    if let Some(url) = url {
        case.url = Some(url.to_string());
    }
    let server = case.server();
    let timeouts = Timeouts { reply: timeout, ..Timeouts::default() };
    let judged = match case.eras {
        Some(_) => case.policy(),
        None => case.policy().with_model(server_model(&server, None, timeouts)?),
    };
    let mut target = server.target(timeouts);
    let judged = surface::with_learned(judged, target.as_mut())?;
    let rule = match case.expect.first() {
        Some(rule) => rule.clone(),
        None => match check(&target.run(&case.inputs)?, &judged).first() {
            Some(finding) => finding.rule.to_string(),
            None => bail!("{} breaks no rule on {}: nothing to shrink for", file.display(), server.describe()),
        },
    };
    let budget = shrink::Budget { runs: budget, ..Default::default() };
    let Some(minimized) =
        shrink::minimize_finding(target.as_mut(), &case.inputs, &rule, case.trigger.as_deref(), &judged, budget)?
    else {
        bail!("{rule} does not break on {} with {}", server.describe(), file.display());
    };
    let shrunk = Case {
        inputs: minimized.inputs,
        received: minimized.transcript.received().map(<[u8]>::to_vec).collect(),
        ..case.clone()
    };
    let destination = out.unwrap_or(file);
    let dir = destination.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let stem = destination.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "case".into());
    let path = shrunk.save(dir, &stem)?;
    println!("{rule}: {} inputs, minimized to {}; wrote {}", case.inputs.len(), shrunk.inputs.len(), path.display());
    Ok(ExitCode::SUCCESS)
}

fn run_corpus(root: &Path) -> Result<ExitCode> {
    let files = fuzz_targets::seed_corpus();
    for target in FuzzTarget::ALL {
        let dir = root.join(target.name());
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for file in files.iter().filter(|f| f.target == target) {
            std::fs::write(dir.join(&file.name), &file.bytes)
                .with_context(|| format!("cannot write {}", dir.join(&file.name).display()))?;
        }
        println!("{}: {} files", dir.display(), files.iter().filter(|f| f.target == target).count());
    }
    Ok(ExitCode::SUCCESS)
}

fn run_coverage(time: f64, cases: Option<u64>, seed: u64) -> Result<ExitCode> {
    let Ok(time) = Duration::try_from_secs_f64(time) else { bail!("--time must be a number of seconds, 0 or more") };
    let started = Instant::now();
    let (coverage, index) =
        report::wire::measure(seed, |index| cases.map_or(started.elapsed() < time, |cases| index < cases));
    println!("{index} conversations in {:.1} s, seed {seed}, built-in server\n", started.elapsed().as_secs_f64());
    print!("{}", coverage.render());
    Ok(ExitCode::SUCCESS)
}

fn run_check(
    command: &[String],
    url: Option<&str>,
    timeout: Duration,
    seeds_too: bool,
    eras: Option<&str>,
) -> Result<ExitCode> {
    end_servers_on_signal()?;
    let server = server_spec(None, url, command)?;
    let http = matches!(server, ServerSpec::Http(_));
    let timeouts = Timeouts { reply: timeout, ..Timeouts::default() };
    let model = server_model(&server, eras, timeouts)?;
    println!("server model: {model}");
    let mut target = server.target(timeouts);
    let learned = surface::learn(target.as_mut(), &model)?;
    println!("server surface: {learned}");
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
        let findings = check(&transcript, &judged);
        let name = format!("probe {} ({} frames, the trigger of {mutant})", mutant.expected_rule(), inputs.len());
        verdict(&name, findings.iter().map(ToString::to_string).collect());
        probed.push(inputs);
    }
    if http {
        for bug in HttpBug::ALL {
            let inputs: Vec<Input> = bug.trigger().into_iter().map(Input::Line).collect();
            let transcript = probes.run(&inputs)?;
            let findings = check(&transcript, &judged);
            let name =
                format!("probe {} ({} frames, the trigger of HTTP bug {bug})", bug.expected_rule(), inputs.len());
            verdict(&name, findings.iter().map(ToString::to_string).collect());
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
