//! `mcp-wirefuzz fuzz`: its options, and the run: the server learned first (the library's learn stage,
//! [`mcp_wirefuzz::learn::stage::learn`]), then the campaign, the summary and the reports.

use super::options::{
    ForkServerOption, REPLY_TIMEOUT_MS, ReplyTimeout, RuleOptions, millis_option, seconds_option, seed_or_clock,
    shrink_time_option,
};
use super::output::{progress_bar, say, writable_file, writable_folder, write_report};
use super::server::{end_servers_on_signal, server_spec};
use anyhow::{Result, bail};
use mcp_wirefuzz::baseline::Baseline;
use mcp_wirefuzz::campaign::{self, Options, Progress};
use mcp_wirefuzz::learn::stage::{self, Learned, sdk_line};
use mcp_wirefuzz::oracle::Policy;
use mcp_wirefuzz::report::{self, Rerun};
use mcp_wirefuzz::server::hangs::{HANG_WAIT, HangWait};
use mcp_wirefuzz::server::{ServerSpec, Timeouts};
use mcp_wirefuzz::shrink;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// `--startup-timeout`'s default, in milliseconds.
const STARTUP_TIMEOUT_MS: u64 = 10_000;
/// `--confirm-time`'s default is `--hang-wait` and this much more: time to confirm a hung handler seen at the end of
/// fuzzing, on a fresh server that waits for it.
const CONFIRM_MARGIN: Duration = Duration::from_secs(30);
/// `--settle`'s default, in milliseconds.
const SETTLE_MS: u64 = 20;
/// The most parallel workers `--jobs` takes.
const MAX_JOBS: usize = 256;

/// The options of `fuzz`.
#[derive(clap::Args)]
#[command(mut_arg("timeout", |arg| arg.help(
    "How long a reply from a child server may take, in milliseconds; pins it (without it: 2000, lengthened to 4 \
     times the 99th percentile of the reply times measured, when that is longer, at most 60 s)"
)))]
pub struct FuzzArgs {
    /// Stop after this many conversations (default 10000 when --time is not given).
    #[arg(long)]
    cases: Option<u64>,
    /// Stop fuzzing after this many seconds (learning the server first is not counted: it is bounded on its own, at
    /// 300 s; nor is confirming and minimizing what was seen: --confirm-time follows).
    #[arg(long, value_name = "SECS")]
    time: Option<f64>,
    /// Once --time's fuzzing is over, how many seconds confirming, then minimizing, what was seen may go on (the run
    /// ends as soon as that is done); a finding still unconfirmed then makes the run inconclusive (exit 4). Default:
    /// --hang-wait and 30 s more (90 s), so a hung handler seen at the end of fuzzing is confirmed.
    #[arg(long, value_name = "SECS")]
    confirm_time: Option<f64>,
    /// How many seconds a tool call may go unanswered, while the server answers others, before its handler counts
    /// as one that never returns (SERVER-HANDLER-HANG): the TypeScript SDK client's default request timeout. A
    /// call is waited for that long once per run, on a fresh server; progress notifications for it restart the
    /// wait, up to 3 times it.
    #[arg(long, value_name = "SECS", default_value_t = HANG_WAIT.as_secs_f64())]
    hang_wait: f64,
    /// The seed (printed by every run; the same seed gives the same conversations).
    #[arg(long)]
    seed: Option<u64>,
    /// Parallel fuzzing workers, each with its own server (1 to 256; one more worker minimizes findings).
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// `--timeout`.
    #[command(flatten)]
    timeout: ReplyTimeout,
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
    /// Known findings, one entry per line (`RULE`, `RULE [TRIGGER]` or `RULE tool=NAME`, then `# reason`): they
    /// are reported but do not fail the run; entries that no longer break are reported as stale.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// `--eras`, `--profile`, `--allow` and `--deny`.
    #[command(flatten)]
    rules: RuleOptions,
    /// How many server runs one finding's minimization may take.
    #[arg(long, default_value_t = 2_000)]
    shrink_budget: usize,
    /// How many seconds one finding's minimization may take (within --confirm-time once fuzzing is over).
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
    /// Fail the run on findings that were not confirmed too: every finding runs again before it counts, and one
    /// that does not break again (or, resting on silence, does not with waits 4 times longer) is otherwise only
    /// reported.
    #[arg(long)]
    strict: bool,
    /// Also write an HTML coverage page here (one table per tool, the worst finding first).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// `--no-fork-server`.
    #[command(flatten)]
    fork: ForkServerOption,
    /// The server to start (no shell), after `--`.
    #[arg(last = true)]
    command: Vec<String>,
}

/// Runs the campaign, then prints and writes its reports: exit 1 on confirmed findings not in the baseline, 4 when
/// there are none but a finding is still pending ([`mcp_wirefuzz::campaign::Verdict`]).
pub fn run(args: FuzzArgs) -> Result<ExitCode> {
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
    let shrink_time = shrink_time_option(args.shrink_time)?;
    let hang_wait = seconds_option("--hang-wait", args.hang_wait)?;
    let confirm_time = match args.confirm_time {
        Some(secs) => confirm_time_option(secs)?,
        None => hang_wait.saturating_add(CONFIRM_MARGIN),
    };
    let reply = args.timeout.duration()?;
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
    let seed = seed_or_clock(args.seed);
    // Learning the server is bounded on its own (`stage::LEARNING_LIMIT`), not by --time, so that the same seed
    // gives the same conversations whatever the machine's load; --time counts from its end.
    let learning = stage::Options {
        eras: args.rules.eras.eras.clone(),
        sdk: args.rules.sdk.sdk.clone(),
        no_surface: args.no_surface,
        tools: args.tool.clone(),
        skip_tools: args.skip_tool.clone(),
        timeouts: Timeouts { reply, startup, ..Timeouts::default() },
        limit: stage::LEARNING_LIMIT,
        fork_server: args.fork.allowed(),
    };
    let Learned { server, fork_server: _fork_server, model, surface, sdk, prelude } =
        stage::learn(server, &learning, &mut say)?;
    let deadline = time.map(|time| Instant::now() + time);
    if let Some(time) = time {
        eprintln!(
            "mcp-wirefuzz: learned the server in {:.1} s; now {:.0} s of fuzzing (--time), then up to {:.0} s to \
             confirm and minimize what was seen (--confirm-time)",
            began.elapsed().as_secs_f64(),
            time.as_secs_f64(),
            confirm_time.as_secs_f64()
        );
    }
    let base = match server.mutant() {
        Some(mutant) => mutant.policy(),
        None => Policy::default(),
    };
    let base = match &surface {
        Some(surface) => base.with_surface(surface.clone()),
        None => base,
    };
    let base = match &sdk {
        Some(chosen) => base.with_sdk(chosen.sdk.name),
        None => base,
    };
    let options = Options {
        seed,
        cases: args.cases.or(if time.is_none() { Some(10_000) } else { None }),
        time: deadline.map(|deadline| deadline.saturating_duration_since(Instant::now())),
        confirm_time: Some(confirm_time),
        policy: args.rules.policy(base.with_model(model.clone()))?,
        out: Some(args.out.clone()),
        shrink: shrink::Budget { runs: args.shrink_budget, time: Some(shrink_time) },
        baseline: baseline.clone(),
        strict: args.strict,
        prelude,
    };
    let adaptive = !args.timeout.pinned();
    let hang = HangWait::Wait(hang_wait);
    let timeouts = Timeouts { reply, startup, settle, deadline, adaptive, hang, ..Timeouts::default() };
    // Confirmation and minimization go on past the fuzzing's deadline, for --confirm-time.
    let settling = Timeouts { deadline: deadline.map(|deadline| deadline + confirm_time), ..timeouts };
    let (targets, shrinker) = server.campaign_targets(timeouts, settling, model.eras, args.jobs);
    eprintln!("mcp-wirefuzz fuzz: seed {seed}, {}, {} job(s)", server.describe(), args.jobs);
    let rerun = Rerun { sdk: sdk.clone(), ..rerun(&args, seed, &server) };
    let bar = progress_bar(options.cases);
    let summary = campaign::run(targets, shrinker, &options, &server, |event| match event {
        Progress::Ran { done } => bar.tick(*done),
        Progress::Found(found) => bar.println(&report::human::seen(found)),
        Progress::Confirmed(found) if found.confirmation.listed() => {
            bar.println(&report::human::finding(found, &rerun))
        }
        Progress::Confirmed(found) => bar.println(&report::human::unconfirmed(found)),
        Progress::Minimized(found) => bar.println(&report::human::minimized(found)),
        Progress::Sdk(seen) => bar.println(&format!(
            "your SDK's known deviation: {} [{}] (conversation {}): {}",
            seen.deviation.rule, seen.found.trigger, seen.found.conversation, seen.deviation.what
        )),
    })?;
    // A worker left busy past the deadline may still hold a server: end them all.
    mcp_wirefuzz::server::children::end_all();
    if out_created && summary.found.is_empty() {
        // Made for the check before the run, and nothing was found: not left behind empty.
        let _ = std::fs::remove_dir(&args.out);
    }
    bar.finish();
    println!("{}", report::human::summary(&summary, &baseline).trim_end());
    println!("server model: {model}");
    println!("{}", sdk_line(sdk.as_ref()));
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
    Ok(ExitCode::from(summary.verdict(&baseline).exit_code()))
}

/// `--confirm-time`: seconds from 0 (nothing is confirmed after fuzzing) to [`super::options::MAX_DURATION`].
fn confirm_time_option(secs: f64) -> Result<Duration> {
    match Duration::try_from_secs_f64(secs) {
        Ok(duration) if duration <= super::options::MAX_DURATION => Ok(duration),
        _ => bail!("--confirm-time must be a number of seconds from 0 to a year, not {secs}"),
    }
}

/// The options of a fuzz run that a command reproducing one of its findings repeats: the reply timeout for a
/// replay; for the run narrowed to one conversation, every option that changes what is sent or how it is judged.
fn rerun<'a>(args: &FuzzArgs, seed: u64, server: &'a ServerSpec) -> Rerun<'a> {
    let mut rerun = Rerun::new(seed, server);
    let mut option = |name: &str, value: String| rerun.fuzz.extend([name.to_string(), value]);
    for (name, value, default) in [
        ("--timeout", args.timeout.millis(), REPLY_TIMEOUT_MS),
        ("--startup-timeout", args.startup_timeout, STARTUP_TIMEOUT_MS),
        ("--settle", args.settle, SETTLE_MS),
    ] {
        if value != default {
            option(name, value.to_string());
        }
    }
    if let Some(eras) = &args.rules.eras.eras {
        option("--eras", eras.clone());
    }
    if let Some(sdk) = &args.rules.sdk.sdk {
        option("--sdk", sdk.clone());
    }
    for (name, values) in [
        ("--profile", &args.rules.profile),
        ("--allow", &args.rules.allow),
        ("--deny", &args.rules.deny),
        ("--tool", &args.tool),
        ("--skip-tool", &args.skip_tool),
    ] {
        values.iter().for_each(|value| option(name, value.clone()));
    }
    if args.no_surface {
        rerun.fuzz.push("--no-surface".to_string());
    }
    if args.timeout.pinned() {
        rerun.replay.extend(["--timeout".to_string(), args.timeout.millis().to_string()]);
    }
    rerun
}
