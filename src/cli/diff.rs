//! `mcp-wirefuzz diff`: its options; the run that sends the same conversations to two servers (or to a server and a
//! recording) and reports what differs; the recording of one server (`--record`); and the replay of a diff case.

use super::options::{
    ForkServerOption, ReplyTimeout, millis_option, seconds_option, seed_or_clock, shrink_time_option,
};
use super::output::{progress_bar, say, writable_file, writable_folder, write_report};
use super::server::{end_servers_on_signal, server_spec};
use anyhow::{Context, Result, bail};
use mcp_wirefuzz::diff::accepted::Accepted;
use mcp_wirefuzz::diff::case::{DiffCase, SideSpec};
use mcp_wirefuzz::diff::record::{Played, Recording};
use mcp_wirefuzz::diff::{self, Conversations, Ignore, Options, Progress, report};
use mcp_wirefuzz::learn::stage::{server_model, through_fork_server};
use mcp_wirefuzz::learn::surface;
use mcp_wirefuzz::model::{Eras, ServerModel};
use mcp_wirefuzz::server::transport::http::HttpSpec;
use mcp_wirefuzz::server::{ServerCommand, ServerSpec, Target, Timeouts};
use mcp_wirefuzz::shrink;
use mcp_wirefuzz::surface::Surface;
use mcp_wirefuzz::transcript::show_bytes;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long learning both servers may take, apart from `--time`.
const LEARNING_LIMIT: Duration = Duration::from_secs(300);

/// The options of `diff`.
#[derive(clap::Args)]
pub struct DiffArgs {
    /// The other server (side B): a command line, split into words as a shell would (quotes group words), run
    /// without a shell.
    #[arg(long, value_name = "'CMD ARGS'")]
    against: Option<String>,
    /// Reach side B over Streamable HTTP at this endpoint (with --against, start that command first).
    #[arg(long, value_name = "URL")]
    against_url: Option<String>,
    /// Side B is the built-in server, in-process.
    #[arg(long, conflicts_with_all = ["against", "against_url"])]
    against_built_in: bool,
    /// Compare with a recording made by `diff --record DIR` (side B), conversation by conversation; nothing is
    /// minimized (the recorded server cannot be asked again).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["against", "against_url", "against_built_in"])]
    recorded: Option<PathBuf>,
    /// Record side A's answers to the seed's conversations into DIR instead of comparing, for a later
    /// `diff --recorded DIR`.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["against", "against_url", "against_built_in", "recorded"])]
    record: Option<PathBuf>,
    /// Side A is the built-in server with this planted bug; without another side, side A is the built-in server
    /// and side B the mutant.
    #[arg(long, value_name = "NAME")]
    mutant: Option<String>,
    /// Reach side A over Streamable HTTP at this endpoint (with `-- CMD ARGS...`, start it first).
    #[arg(long, value_name = "URL", conflicts_with = "mutant")]
    url: Option<String>,
    /// Stop after this many conversations (default 10000 when --time is not given; a recording's own count with
    /// --recorded).
    #[arg(long)]
    cases: Option<u64>,
    /// Stop after this many seconds, confirmation and minimization included (learning both servers first is not
    /// counted).
    #[arg(long, value_name = "SECS")]
    time: Option<f64>,
    /// Stop once this many divergences that fail the run (confirmed, not in the baseline) are found.
    #[arg(long, value_name = "N")]
    stop_after: Option<usize>,
    /// The seed (printed by every run; the same seed gives the same conversations).
    #[arg(long)]
    seed: Option<u64>,
    /// `--timeout`.
    #[command(flatten)]
    timeout: ReplyTimeout,
    /// Extra time a child server gets until its first line (start-up), in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    startup_timeout: u64,
    /// Leave this place out of the comparison, as divergences name places (`result.tools[].inputSchema.**`:
    /// `*` matches within a step, `**` across steps); repeatable.
    #[arg(long, value_name = "PATH")]
    ignore: Vec<String>,
    /// Compare message texts too (`error.message`, descriptions, titles, instructions, the text of an `isError`
    /// result), which are left out by default.
    #[arg(long)]
    compare_texts: bool,
    /// Where diff case files are written (a writable folder, checked first).
    #[arg(long, value_name = "DIR", default_value = "wirefuzz-divergences")]
    out: PathBuf,
    /// Also write the JSON report here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write an HTML report here (both replies side by side).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Accepted divergences, one per line (`CLASS METHOD [AT]`, then `# reason`): reported, but they do not fail
    /// the run; entries that no longer match are reported as stale.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// How many seconds one divergence's minimization may take (within --time).
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    shrink_time: u64,
    /// How many runs (of both sides) one divergence's minimization may take.
    #[arg(long, default_value_t = 500)]
    shrink_budget: usize,
    /// `--no-fork-server`.
    #[command(flatten)]
    fork: ForkServerOption,
    /// Side A's server command (no shell), after `--`.
    #[arg(last = true)]
    command: Vec<String>,
}

/// Runs the comparison (or the recording): exit 1 when a confirmed divergence is not accepted by the baseline, 4 when
/// none is but one was still pending at the deadline.
pub fn run(args: DiffArgs) -> Result<ExitCode> {
    let began = Instant::now();
    end_servers_on_signal()?;
    let (a, b) = sides(&args)?;
    let accepted = match &args.baseline {
        Some(path) => Accepted::load(path)?,
        None => Accepted::default(),
    };
    let time = args.time.map(|secs| seconds_option("--time", secs)).transpose()?;
    let shrink_time = shrink_time_option(args.shrink_time)?;
    let reply = args.timeout.duration()?;
    let startup = millis_option("--startup-timeout", args.startup_timeout)?;
    for (option, path) in [("--json", &args.json), ("--html", &args.html)] {
        if let Some(path) = path {
            writable_file(option, path)?;
        }
    }
    let seed = seed_or_clock(args.seed);
    let learning = Timeouts { reply, startup, deadline: Some(began + LEARNING_LIMIT), ..Timeouts::default() };
    let (a, _fork_a) = match a {
        SideSpec::Server(server) => {
            let (server, guard) = through_fork_server(server, args.fork.allowed(), learning, &mut say);
            (SideSpec::Server(server), guard)
        }
        recording => (recording, None),
    };
    let (b, _fork_b) = match b {
        Some(SideSpec::Server(server)) => {
            let (server, guard) = through_fork_server(server, args.fork.allowed(), learning, &mut say);
            (Some(SideSpec::Server(server)), guard)
        }
        other => (other, None),
    };
    let SideSpec::Server(server_a) = &a else { bail!("side A is a server") };
    let cases = args.cases.or(if time.is_none() { Some(10_000) } else { None });
    let (model_a, surface_a) = learn(server_a, learning)?;
    let learned_b = match &b {
        Some(SideSpec::Server(server_b)) => Some(learn(server_b, learning)?),
        _ => None,
    };
    // --time counts from here, learning done.
    let adaptive = !args.timeout.pinned();
    let deadline = time.map(|time| Instant::now() + time);
    let timeouts = Timeouts { reply, startup, deadline, adaptive, ..Timeouts::default() };
    // Each conversation on a fresh process (so a minimized case replays as it ran), with sentinel barriers.
    let mut target_a = server_a.probe_target(timeouts, model_a.eras);
    let Some(b) = b else {
        let dir = args.record.as_deref().context("--record DIR")?;
        let conversations = Conversations::generated(seed, surface_a, model_a.eras);
        return record(server_a, &mut *target_a, &conversations, cases, dir, seed);
    };
    let out_created = writable_folder("--out", &args.out)?;
    let known = |eras: Eras| eras != Eras::Unknown;
    let eras = match &learned_b {
        Some((model_b, _)) if known(model_a.eras) && known(model_b.eras) => Some((model_a.eras, model_b.eras)),
        _ => None,
    };
    let (conversations, mut target_b, shrink_runs) = match (&b, learned_b) {
        (SideSpec::Server(server_b), Some((model_b, surface_b))) => {
            let shared = Arc::new((*surface_a).clone().shared_with(&surface_b));
            eprintln!("both list: {shared}");
            let eras = shared_eras(model_a.eras, model_b.eras);
            let conversations = Conversations::generated(seed, shared, eras);
            (conversations, server_b.probe_target(timeouts, model_b.eras), args.shrink_budget)
        }
        _ => {
            let dir = match &b {
                SideSpec::Recording(dir) => dir,
                SideSpec::Server(_) => bail!("side B was not learned"),
            };
            let recording = Recording::load(dir)?;
            eprintln!(
                "mcp-wirefuzz diff: the recording in {} holds {} conversation(s) of {} (seed {})",
                dir.display(),
                recording.conversations.len(),
                recording.server,
                recording.seed
            );
            let inputs = recording.conversations.iter().map(|c| c.inputs.clone()).collect();
            let played: Box<dyn Target + Send> = Box::new(Played::new(recording.conversations));
            (Conversations::Recorded(inputs), played, 0)
        }
    };
    let sides = (a.clone(), b.clone());
    let options = Options {
        conversations,
        cases: if matches!(b, SideSpec::Recording(_)) { args.cases } else { cases },
        time,
        stop_after: args.stop_after,
        ignore: Ignore { patterns: args.ignore.clone(), texts: !args.compare_texts },
        eras,
        out: Some(args.out.clone()),
        shrink: shrink::Budget { runs: shrink_runs, time: Some(shrink_time) },
        accepted,
        sides: sides.clone(),
    };
    eprintln!("mcp-wirefuzz diff: seed {seed}\n  A: {}\n  B: {}", a.describe(), b.describe());
    let bar = progress_bar(options.cases);
    let summary = diff::run(&mut *target_a, &mut *target_b, &options, |event| match event {
        Progress::Ran { done } => bar.tick(done),
        Progress::Found(found) => bar.println(&report::divergence(found)),
    })?;
    mcp_wirefuzz::server::children::end_all();
    bar.finish();
    if out_created && summary.found.is_empty() {
        let _ = std::fs::remove_dir(&args.out);
    }
    println!("{}", report::human(&summary, &sides).trim_end());
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report::json(&summary, &sides))?;
        write_report(path, &(text + "\n"))?;
    }
    if let Some(path) = &args.html {
        write_report(path, &report::html(&summary, &sides))?;
    }
    Ok(ExitCode::from(summary.verdict().exit_code()))
}

/// Side A and side B from the options (`None` for B with `--record`).
fn sides(args: &DiffArgs) -> Result<(SideSpec, Option<SideSpec>)> {
    let other = match (&args.against, &args.against_url, &args.recorded) {
        (_, Some(url), _) => {
            let command = args.against.as_deref().map(words).transpose()?;
            Some(SideSpec::Server(ServerSpec::Http(HttpSpec::new(url, command)?)))
        }
        (Some(command), None, _) => Some(SideSpec::Server(ServerSpec::Command(words(command)?))),
        (None, None, Some(dir)) => Some(SideSpec::Recording(dir.clone())),
        (None, None, None) if args.against_built_in => Some(SideSpec::Server(ServerSpec::BuiltIn)),
        (None, None, None) => None,
    };
    let a = server_spec(args.mutant.as_deref(), args.url.as_deref(), &args.command)?;
    match (a, other) {
        (ServerSpec::Mutant(mutant), None) if args.record.is_none() => {
            Ok((SideSpec::Server(ServerSpec::BuiltIn), Some(SideSpec::Server(ServerSpec::Mutant(mutant)))))
        }
        (a, None) if args.record.is_none() => bail!(
            "nothing to compare {} with: name the other server with --against 'CMD ARGS', --against-url URL, \
             --against-built-in, --recorded DIR or --mutant NAME, or record it with --record DIR",
            a.describe()
        ),
        (a, other) => Ok((SideSpec::Server(a), other)),
    }
}

/// `--against`'s command line, split into words (no shell).
fn words(command: &str) -> Result<ServerCommand> {
    let argv = shell_words::split(command).with_context(|| format!("--against `{command}`: unbalanced quotes"))?;
    ServerCommand::from_argv(&argv).context("--against names no command")
}

/// The eras conversations with tools are held in: those both servers serve.
fn shared_eras(a: Eras, b: Eras) -> Eras {
    match (a, b) {
        (Eras::Dual, other) | (other, Eras::Dual) => other,
        (a, b) if a == b => a,
        (a, _) => a,
    }
}

/// The model and surface of one side (said on stderr).
fn learn(server: &ServerSpec, timeouts: Timeouts) -> Result<(ServerModel, Arc<Surface>)> {
    let model = server_model(server, None, timeouts, None)?;
    let learned = match server {
        ServerSpec::BuiltIn | ServerSpec::Mutant(_) => Surface::built_in(),
        _ => Arc::new(surface::learn(&mut *server.target(timeouts), &model)?),
    };
    eprintln!("{}: {model}; {learned}", server.describe());
    Ok((model, learned))
}

/// Records `server`'s answers (through `target`) to `conversations` into `dir`.
fn record(
    server: &ServerSpec,
    target: &mut dyn Target,
    conversations: &Conversations,
    cases: Option<u64>,
    dir: &Path,
    seed: u64,
) -> Result<ExitCode> {
    let bar = progress_bar(cases);
    let recording = mcp_wirefuzz::diff::record::record(server, target, conversations, cases, seed, |n| bar.tick(n))?;
    mcp_wirefuzz::server::children::end_all();
    bar.finish();
    recording.save(dir)?;
    println!(
        "mcp-wirefuzz diff: recorded {} conversation(s) of {} (seed {seed}) in {}",
        recording.conversations.len(),
        server.describe(),
        dir.join(mcp_wirefuzz::diff::record::FILE).display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Replays a diff case: both sides run its frames again (a recording side answers from the case's own lines);
/// exit 1 when the case's divergence shows again, 3 when it no longer does.
pub fn replay(file: &Path, timeout: Duration) -> Result<ExitCode> {
    let case = DiffCase::load(file)?;
    let replayed = case.replay(Timeouts { reply: timeout, ..Timeouts::default() })?;
    mcp_wirefuzz::server::children::end_all();
    println!("A: {}\n{}", case.a.describe(), replayed.a.render().trim_end());
    println!("B: {}\n{}", case.b.describe(), replayed.b.render().trim_end());
    for divergence in &replayed.found {
        let (a, b) = (show_bytes(divergence.a.as_bytes(), 600), show_bytes(divergence.b.as_bytes(), 600));
        println!(
            "divergence [{}] {} at {}\n    A: {a}\n    B: {b}",
            divergence.class, divergence.method, divergence.at
        );
    }
    let verdict = if replayed.shows_again { "shows again" } else { "no longer shows" };
    println!("the case's divergence [{}] {} at {} {verdict}", case.class, case.method, case.at);
    Ok(ExitCode::from(if replayed.shows_again { 1 } else { 3 }))
}
