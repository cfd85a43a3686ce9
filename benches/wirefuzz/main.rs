//! The harness's own benchmarks, side by side in one run; the book's measured pages (docs/src/measured/) quote
//! their output.
//!
//! `cargo bench --bench wirefuzz [-- SECTION...]`, sections (default: all):
//! - `inprocess`: conversations/s of the fuzz campaign against the built-in server, against the bare cost of the same
//!   conversations fed to the server with no generation and no checking (the harness's overhead), with a breakdown;
//! - `instructions`: the same two counted in instructions under callgrind (needs valgrind), which the load of a
//!   shared host does not shift;
//! - `libfuzzer`: exec/s of the cargo-fuzz `conversation` target (needs `cargo +nightly fuzz`);
//! - `python`: conversations/s against the Python SDK server (`.venv`): a warm spare per worker and 2 jobs, started
//!   fresh or forked by the fork server (`forkservers/python`), against one fresh process per conversation;
//! - `python-default`: conversations/s of the CLI's `fuzz --jobs 2` against a console-script Python SDK server and a
//!   FastMCP server, through the fork server the harness starts by itself and with `--no-fork-server` (needs
//!   `.ci/python-venv --bench`: .venv-bench);
//! - `stdio-real`: conversations/s of `fuzz --jobs 2` against the built-in server over stdio, rmcp-calc, the
//!   TypeScript SDK server and the Python SDK server (fresh and through the fork server), with sentinel barriers,
//!   process reuse and warm spares, and on the clock (sentinels off) for comparison; each beside its start-up bound
//!   (jobs / median time from spawn to the first reply, for a process started alone and for two started together,
//!   as two jobs start them), its CPU bound (2 cores / median CPU seconds of one start,
//!   reply and exit) and its message bound (the same conversations' well-formed requests piped into one process in
//!   one go), all measured in the same run;
//! - `stdio-reuse`: conversations/s of the conversations process reuse applies to (self-contained modern requests),
//!   on the built-in server and rmcp-calc over stdio: one target with sentinels and reuse, against one on the clock
//!   with a fresh process each (the harness before issue 15); a server that fails the history calibration (rmcp)
//!   keeps no process, and its row says so;
//! - `stdio-find`: the time to first finding of every planted bug over stdio, from the start of the CLI's `fuzz --
//!   mcp-wirefuzz serve --mutant NAME` (probe, sweep and generated conversations with sentinel barriers), median of
//!   seeds 1-3, each bug over 2 s flagged;
//! - `find`: time to first finding for every planted bug: the campaign engine, cargo-fuzz `mutant` (structure-aware)
//!   and `mutant_bytes` (byte-level), median over seeds;
//! - `memory`: peak memory over a 1,000,000-conversation in-process campaign, sampled as it goes;
//! - `diff`: conversations/s of `diff` with the built-in server on both sides, and the time to the first confirmed
//!   difference of every planted bug against the built-in server (median of seeds 1-3);
//! - `silent`: seconds from the start of `fuzz -- sleep 1000` (a server that answers nothing) to its first case file;
//! - `sessions`: tool calls/s over stdio in short tool sessions against long sessions, on the built-in server and
//!   the TypeScript SDK note store.

#[path = "../../tests/common/mod.rs"]
mod common;
mod differential;
mod over_stdio;
mod python_default;
mod sessions;
mod silent;
mod time_to_find;

use over_stdio::{stdio_real, stdio_reuse};
use python_default::python_default;
use time_to_find::{find, stdio_find};

use common::{ForkServer, root};
use mcp_wirefuzz::baseline::Baseline;
use mcp_wirefuzz::campaign::{self, Options, Progress, Summary, conversation};
use mcp_wirefuzz::learn::probe;
use mcp_wirefuzz::oracle::{Policy, check};
use mcp_wirefuzz::protocol::Frame;
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::reference::{Calc, Planted};
use mcp_wirefuzz::server::transport::stdio::{self, StdioTarget};
use mcp_wirefuzz::server::{
    InProcess, InProcessServer, ServerCommand, ServerConnection, ServerSpec, Target, Timeouts, run_in_process,
};
use mcp_wirefuzz::shrink::Budget;
use mcp_wirefuzz::transcript::Input;
use nix::sys::resource::{UsageWho, getrusage};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The allocator the CLI uses, so the numbers are the CLI's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if let Ok(part) = std::env::var(INSTRUCTIONS_CHILD) {
        return instructions_child(&part);
    }
    // As the CLI does, so the numbers are the CLI's.
    stdio::no_huge_pages();
    let wanted: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let run = |section: &str| wanted.is_empty() || wanted.iter().any(|w| w == section);
    if run("inprocess") {
        inprocess();
    }
    if run("instructions") {
        instructions();
    }
    if run("libfuzzer") {
        libfuzzer();
    }
    if run("python") {
        python();
    }
    if run("python-default") {
        python_default();
    }
    if run("stdio-real") {
        stdio_real();
    }
    if run("stdio-reuse") {
        stdio_reuse();
    }
    if run("stdio-find") {
        stdio_find(env!("CARGO_BIN_EXE_mcp-wirefuzz"));
    }
    if run("find") {
        find();
    }
    if run("memory") {
        memory();
    }
    if run("diff") {
        differential::differential();
    }
    if run("silent") {
        silent::silent(env!("CARGO_BIN_EXE_mcp-wirefuzz"));
    }
    if run("sessions") {
        sessions::sessions(env!("CARGO_BIN_EXE_mcp-wirefuzz"));
    }
}

fn options(seed: u64, cases: Option<u64>, time: Option<Duration>) -> Options {
    Options {
        seed,
        cases,
        time,
        confirm_time: None,
        policy: Policy::default(),
        out: None,
        shrink: Budget::default(),
        baseline: Baseline::default(),
        strict: false,
        prelude: Vec::new(),
    }
}

fn rate(count: u64, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64()
}

/// Feeds every line to a fresh connection and drops the replies: the server's own cost.
#[inline(never)]
fn bare<S: InProcessServer>(server: &S, conversations: &[Vec<Input>]) -> Duration {
    let started = Instant::now();
    let mut out = Vec::new();
    for inputs in conversations {
        let mut connection = server.connect();
        for input in inputs {
            if let Input::Line(line) = input {
                connection.receive(line, &mut out);
                out.clear();
            }
        }
    }
    started.elapsed()
}

fn inprocess() {
    const N: u64 = 20_000;
    println!("## in-process, built-in server, {N} conversations, seed 1, 1 job");
    let conversations: Vec<Vec<Input>> = (0..N).map(|i| conversation(1, i)).collect();
    let lines: usize = conversations.iter().map(|c| c.len()).sum();
    let bytes: usize = conversations.iter().flatten().map(|i| if let Input::Line(l) = i { l.len() } else { 0 }).sum();
    println!("   {lines} inputs, {:.1} MB of lines", bytes as f64 / 1e6);
    // Interleaved rounds, medians: one run of each on this shared VM varies by 20% or more, so each round runs both,
    // in alternating order, and the ratio is the median of the rounds' own ratios.
    const ROUNDS: usize = 25;
    let (mut bare_rates, mut fuzz_rates) = (Vec::new(), Vec::new());
    let campaign = || {
        let summary = calc_campaign(N);
        rate(summary.conversations, summary.elapsed)
    };
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            bare_rates.push(rate(N, bare(&Calc, &conversations)));
            fuzz_rates.push(campaign());
        } else {
            fuzz_rates.push(campaign());
            bare_rates.push(rate(N, bare(&Calc, &conversations)));
        }
    }
    let spread = |rates: &[f64]| {
        let (low, high) = rates.iter().fold((f64::MAX, 0f64), |(l, h), &r| (l.min(r), h.max(r)));
        format!("{:.0} (runs {low:.0} to {high:.0})", median(rates.to_vec()))
    };
    let ratios: Vec<f64> = fuzz_rates.iter().zip(&bare_rates).map(|(f, b)| f / b).collect();
    println!("| what | conversations/s, median of {ROUNDS} |");
    println!("|---|---|");
    println!("| bare: lines fed to the server, nothing generated or checked | {} |", spread(&bare_rates));
    println!("| `fuzz` campaign: generate, run with transcript, check | {} |", spread(&fuzz_rates));
    println!(
        "| ratio (campaign / bare) | {:.2}, median of the rounds' ratios ({}) |",
        median(ratios.clone()),
        ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(", ")
    );
    let server_only = N as f64 / median(bare_rates.clone());
    let started = Instant::now();
    for i in 0..N {
        std::hint::black_box(conversation(1, i));
    }
    let generation = started.elapsed();
    let started = Instant::now();
    let transcripts: Vec<_> = conversations.iter().map(|c| run_in_process(&Calc, c)).collect();
    let recording = started.elapsed();
    let started = Instant::now();
    for transcript in &transcripts {
        assert!(check(transcript, &Policy::default()).is_empty());
    }
    let checking = started.elapsed();
    println!(
        "   breakdown for the same {N}: generate {:.2}s, run+record {:.2}s, check {:.2}s (server alone {:.2}s)",
        generation.as_secs_f64(),
        recording.as_secs_f64(),
        checking.as_secs_f64(),
        server_only
    );
}

/// Set in a child process of [`instructions`]: which part to run under callgrind.
const INSTRUCTIONS_CHILD: &str = "WIREFUZZ_BENCH_INSTRUCTIONS";
/// How many conversations [`instructions`] counts.
const COUNTED: u64 = 10_000;

/// The in-process ratio counted in instructions, which a busy host cannot shift: the bench runs itself under
/// callgrind twice, counting only inside `bare` and only inside the campaign's worker.
fn instructions() {
    println!("## in-process, instructions (callgrind), {COUNTED} conversations, seed 1, 1 job");
    if !Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success()) {
        println!("   SKIPPED: valgrind is not installed");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let dir = scratch("instructions");
    let count = |part: &str, function: &str| {
        let out = dir.join(format!("callgrind.{part}"));
        let status = Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(format!("--toggle-collect={function}"))
            .arg(&exe)
            .env(INSTRUCTIONS_CHILD, part)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "callgrind run of {part} failed");
        let text = std::fs::read_to_string(&out).unwrap();
        let total = text.lines().find_map(|l| l.strip_prefix("totals: ").or_else(|| l.strip_prefix("summary: ")));
        total.and_then(|t| t.trim().parse::<u64>().ok()).expect("callgrind wrote its totals")
    };
    let bare = count("bare", "wirefuzz::bare*");
    let campaign = count("campaign", "mcp_wirefuzz::campaign::Worker::work");
    let _ = std::fs::remove_dir_all(&dir);
    println!("| what | instructions | per conversation |");
    println!("|---|---|---|");
    println!("| bare: the server alone | {bare} | {} |", bare / COUNTED);
    println!("| `fuzz` campaign worker: generate, run, check | {campaign} | {} |", campaign / COUNTED);
    println!("| ratio (bare / campaign) | {:.3} | |", bare as f64 / campaign as f64);
}

/// The part of [`instructions`] a child process runs.
fn instructions_child(part: &str) {
    match part {
        "bare" => {
            let conversations: Vec<Vec<Input>> = (0..COUNTED).map(|i| conversation(1, i)).collect();
            std::hint::black_box(bare(&Calc, &conversations));
        }
        "campaign" => drop(calc_campaign(COUNTED)),
        other => panic!("{INSTRUCTIONS_CHILD}={other}: not a part (bare, campaign)"),
    }
}

/// A 1-job in-process campaign of `cases` conversations of seed 1 against the built-in server.
fn calc_campaign(cases: u64) -> Summary {
    let (fuzzer, shrinker) = (Box::new(InProcess(Calc)), Box::new(InProcess(Calc)));
    campaign::run(vec![fuzzer], shrinker, &options(1, Some(cases), None), &ServerSpec::BuiltIn, |_| {}).unwrap()
}

fn cargo_fuzz_available() -> bool {
    Command::new("cargo").args(["+nightly", "fuzz", "--version"]).output().is_ok_and(|o| o.status.success())
}

/// Builds the fuzz targets and returns the folder of their binaries, or `None` when cargo-fuzz is missing.
fn fuzz_binaries() -> Option<PathBuf> {
    if !cargo_fuzz_available() {
        println!("   SKIPPED: `cargo +nightly fuzz` is not available");
        return None;
    }
    let status = Command::new("cargo").current_dir(root()).args(["+nightly", "fuzz", "build"]).status().unwrap();
    assert!(status.success(), "cargo fuzz build failed");
    Some(root().join("fuzz/target/x86_64-unknown-linux-gnu/release"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirefuzz-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn libfuzzer() {
    println!("## cargo-fuzz `conversation` target, 20 s from its seed corpus");
    let Some(binaries) = fuzz_binaries() else { return };
    let corpus = scratch("conversation");
    for entry in std::fs::read_dir(root().join("corpus/conversation")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, corpus.join(path.file_name().unwrap())).unwrap();
    }
    let output = Command::new(binaries.join("conversation"))
        .arg(&corpus)
        .args(["-max_total_time=20", "-print_final_stats=1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let runs = stat(&stderr, "stat::number_of_executed_units:");
    let seconds = stat(&stderr, "stat::average_exec_per_sec:");
    println!("| cargo fuzz `conversation` | {seconds} exec/s ({runs} runs in 20 s) |");
}

/// A `stat::name: value` line of libFuzzer's final statistics.
fn stat(stderr: &str, name: &str) -> String {
    stderr.lines().find_map(|l| l.strip_prefix(name)).map_or_else(|| "?".into(), |v| v.trim().to_string())
}

fn python() {
    println!("## Python SDK server (tests/servers/calc.py) over stdio, 30 s each");
    let python = root().join(".venv/bin/python");
    let ready = Command::new(&python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success());
    if !ready {
        println!("   SKIPPED: .venv has no mcp (run .ci/python-venv)");
        return;
    }
    let command = ServerCommand::from_argv(&[
        python.display().to_string(),
        root().join("tests/servers/calc.py").display().to_string(),
    ])
    .unwrap();
    let server = ServerSpec::Command(command.clone());
    let mut opts = options(1, None, Some(Duration::from_secs(30)));
    opts.baseline = Baseline::load(&root().join("tests/servers/calc-python.baseline")).unwrap();
    let naive: Vec<Box<dyn Target + Send>> =
        vec![Box::new(StdioTarget::new(command.clone(), Timeouts::default()).cold())];
    let naive = campaign::run(naive, server.target(Timeouts::default()), &opts, &server, |_| {}).unwrap();
    let warm: Vec<Box<dyn Target + Send>> = (0..2).map(|_| server.pooled_target(Timeouts::default())).collect();
    let warm = campaign::run(warm, server.target(Timeouts::default()), &opts, &server, |_| {}).unwrap();
    let fork_server = ForkServer::start(&python, &root().join("tests/servers/calc.py"), &["mcp.server.mcpserver"]);
    let attach = ServerSpec::Command(ServerCommand::from_argv(&fork_server.attach_argv()).unwrap());
    let forked: Vec<Box<dyn Target + Send>> = (0..2).map(|_| attach.pooled_target(Timeouts::default())).collect();
    let forked = campaign::run(forked, attach.target(Timeouts::default()), &opts, &attach, |_| {}).unwrap();
    drop(fork_server);
    let naive_rate = rate(naive.conversations, naive.elapsed);
    println!("| what | conversations/s | vs. one fresh process |");
    println!("|---|---|---|");
    for (what, summary) in [
        ("one fresh process per conversation, 1 job", &naive),
        ("a fresh process with a warm spare per worker, 2 jobs", &warm),
        ("forked by the fork server (SDK preloaded), a warm spare per worker, 2 jobs", &forked),
    ] {
        let rate = rate(summary.conversations, summary.elapsed);
        println!(
            "| {what} | {rate:.2} ({} in {:.0} s) | {:.1}x |",
            summary.conversations,
            summary.elapsed.as_secs_f64(),
            rate / naive_rate
        );
    }
    let started = Instant::now();
    let mut single = StdioTarget::new(command, Timeouts::default()).cold();
    for _ in 0..5 {
        single.run(&[]).unwrap();
    }
    println!(
        "   one process started and closed with nothing sent: {:.2} s (mean of 5)",
        started.elapsed().as_secs_f64() / 5.0
    );
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The process's peak resident memory so far, in MiB (Linux).
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn memory() {
    const N: u64 = 1_000_000;
    println!("## peak memory over {N} in-process conversations (seed 2, 1 job)");
    let mut samples = Vec::new();
    let mut next = 100_000;
    let summary = campaign::run(
        vec![Box::new(InProcess(Calc))],
        Box::new(InProcess(Calc)),
        &options(2, Some(N), None),
        &ServerSpec::BuiltIn,
        |event| {
            if let Progress::Ran { done } = event
                && *done >= next
            {
                samples.push((*done, peak_mib()));
                next += 100_000;
            }
        },
    )
    .unwrap();
    println!("| conversations | peak RSS (MiB) |");
    println!("|---|---|");
    for (done, mib) in samples {
        println!("| {done} | {mib:.1} |");
    }
    println!(
        "   {} conversations in {:.0} s, {} findings",
        summary.conversations,
        summary.elapsed.as_secs_f64(),
        summary.found.len()
    );
}
