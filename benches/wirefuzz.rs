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
//! - `memory`: peak memory over a 1,000,000-conversation in-process campaign, sampled as it goes.

#[path = "../tests/common/mod.rs"]
mod common;

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
}

fn options(seed: u64, cases: Option<u64>, time: Option<Duration>) -> Options {
    Options {
        seed,
        cases,
        time,
        policy: Policy::default(),
        out: None,
        shrink: Budget::default(),
        baseline: Baseline::default(),
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

/// Seconds until the campaign engine's conversations first break the planted bug's rule (`None` past the cap).
fn engine_time_to_find(mutant: Mutant, seed: u64) -> Option<f64> {
    let started = Instant::now();
    (0..200_000u64).find(|&i| {
        let transcript = run_in_process(&Planted(mutant), &conversation(seed, i));
        check(&transcript, &mutant.policy()).iter().any(|f| f.rule == mutant.expected_rule())
    })?;
    Some(started.elapsed().as_secs_f64())
}

/// Seconds until a libFuzzer binary pinned to the planted bug crashes from an empty corpus (`None` past `cap`).
fn libfuzzer_time_to_find(binary: &Path, mutant: Mutant, seed: u64, cap: u64) -> Option<f64> {
    let (corpus, artifacts) = (scratch("find-corpus"), scratch("find-artifacts"));
    let started = Instant::now();
    let output = Command::new(binary)
        .env("WIREFUZZ_MUTANT", mutant.name())
        .arg(&corpus)
        .arg(format!("-seed={seed}"))
        .arg(format!("-max_total_time={cap}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .output()
        .unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let broke = stderr.lines().find_map(|line| line.strip_prefix("mcp-wirefuzz: broke "));
    let found = broke.is_some_and(|rules| rules.split(", ").any(|rule| rule == mutant.expected_rule()));
    found.then_some(elapsed)
}

/// The median time to find over seeds, or `None` when no more than half of the seeds found the bug.
fn median_found(seconds: &[Option<f64>]) -> Option<f64> {
    let found = seconds.iter().flatten().count();
    (found * 2 > seconds.len()).then(|| median(seconds.iter().map(|s| s.unwrap_or(f64::INFINITY)).collect()))
}

fn show(seconds: &[Option<f64>], cap: f64) -> String {
    let found = seconds.iter().flatten().count();
    match median_found(seconds) {
        None => format!("> {cap:.0} s ({found}/{} found)", seconds.len()),
        Some(m) if m < 1.0 => format!("{:.1} ms", m * 1000.0),
        Some(m) => format!("{m:.1} s"),
    }
}

/// One planted bug's times to find, per finder: the campaign engine, cargo-fuzz `mutant`, `mutant_bytes`.
struct FindRow {
    mutant: Mutant,
    times: [Vec<Option<f64>>; 3],
}

fn find() {
    const CAP: u64 = 10;
    println!("## time to first finding per planted bug (median of 3 seeds; libFuzzer runs capped at {CAP} s)");
    let binaries = fuzz_binaries();
    println!("| mutant | rule | `fuzz` engine | cargo fuzz `mutant` | cargo fuzz `mutant_bytes` (no structure) |");
    println!("|---|---|---|---|---|");
    let seeds = [1u64, 2, 3];
    let mut rows = Vec::new();
    for mutant in Mutant::ALL {
        let engine: Vec<Option<f64>> = seeds.iter().map(|&s| engine_time_to_find(mutant, s)).collect();
        let libfuzzer = |target: &str| match &binaries {
            Some(dir) => seeds.iter().map(|&s| libfuzzer_time_to_find(&dir.join(target), mutant, s, CAP)).collect(),
            None => Vec::new(),
        };
        let (structured, bytes) = (libfuzzer("mutant"), libfuzzer("mutant_bytes"));
        let cell = |times: &Vec<Option<f64>>| if times.is_empty() { "skipped".into() } else { show(times, CAP as f64) };
        println!(
            "| {mutant} | {} | {} | {} | {} |",
            mutant.expected_rule(),
            show(&engine, 200_000.0),
            cell(&structured),
            cell(&bytes)
        );
        rows.push(FindRow { mutant, times: [engine, structured, bytes] });
    }
    let plot = root().join("docs/src/measured/time-to-find.svg");
    std::fs::write(&plot, time_to_find_svg(&rows, CAP as f64)).unwrap();
    println!("   plot: {}", plot.display());
}

/// A dot plot of [`find`]'s medians: one row per planted bug, time on a log scale from 0.1 ms to the cap, and a
/// bug a finder did not find drawn in the "not found" column.
fn time_to_find_svg(rows: &[FindRow], cap: f64) -> String {
    const FINDERS: [(&str, &str); 3] =
        [("fuzz engine", "#1b7837"), ("cargo fuzz mutant", "#2166ac"), ("cargo fuzz mutant_bytes", "#b2182b")];
    let (left, width, top, row_height) = (230.0, 560.0, 40.0, 18.0);
    let (low, high) = (1e-4f64.log10(), cap.log10());
    let x = |seconds: f64| left + (seconds.log10().clamp(low, high) - low) / (high - low) * width;
    // Bugs not found sit in a column of their own, each finder a little apart so no dot hides another.
    let missing = left + width + 70.0;
    let bottom = top + row_height * rows.len() as f64;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" \
         font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{left}\" y=\"18\" \
         font-size=\"13\">Time to first finding per planted bug (median of 3 seeds; libFuzzer capped at {cap} s)\
         </text>\n",
        missing + 60.0,
        bottom + 50.0
    );
    let ticks = [(1e-4, "0.1 ms"), (1e-3, "1 ms"), (1e-2, "10 ms"), (0.1, "0.1 s"), (1.0, "1 s"), (cap, "10 s")];
    for (seconds, label) in ticks.into_iter().chain([(f64::NAN, "not found")]) {
        let at = if seconds.is_nan() { missing } else { x(seconds) };
        svg += &format!(
            "<line x1=\"{at:.1}\" y1=\"{top}\" x2=\"{at:.1}\" y2=\"{bottom}\" stroke=\"#ddd\"/>\n<text x=\"{at:.1}\" \
             y=\"{}\" text-anchor=\"middle\">{label}</text>\n",
            bottom + 14.0
        );
    }
    for (i, row) in rows.iter().enumerate() {
        let y = top + row_height * (i as f64 + 0.5);
        let name = row.mutant;
        svg += &format!("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{name}</text>\n", left - 8.0, y + 4.0);
        for (finder, ((_, color), times)) in FINDERS.iter().zip(&row.times).enumerate() {
            if times.is_empty() {
                continue;
            }
            let at = median_found(times).map_or(missing + 10.0 * (finder as f64 - 1.0), x);
            svg += &format!("<circle cx=\"{at:.1}\" cy=\"{y}\" r=\"4.5\" fill=\"{color}\" fill-opacity=\"0.8\"/>\n");
        }
    }
    for (i, (name, color)) in FINDERS.iter().enumerate() {
        let at = left + 190.0 * i as f64;
        svg += &format!(
            "<circle cx=\"{at}\" cy=\"{}\" r=\"4.5\" fill=\"{color}\"/><text x=\"{}\" y=\"{}\">{name}</text>\n",
            bottom + 34.0,
            at + 8.0,
            bottom + 38.0
        );
    }
    svg + "</svg>\n"
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

/// How long each `stdio-real` campaign runs.
const STDIO_REAL_SECS: u64 = 15;

/// CPU seconds (user and system) of the children this process has waited for, so far.
fn children_cpu() -> f64 {
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap();
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    seconds(usage.user_time()) + seconds(usage.system_time())
}

/// Starts `argv` with stdin and stdout piped and stderr discarded.
fn spawn_piped(argv: &[String]) -> std::process::Child {
    Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// One start of a server: seconds from spawn to the first line it writes for `line`. It then gets its input closed
/// and 5 s to exit before it is killed, and is waited for.
fn start_once(argv: &[String], line: &[u8]) -> f64 {
    let started = Instant::now();
    let mut child = spawn_piped(argv);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&[line, b"\n"].concat()).unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let seconds = started.elapsed().as_secs_f64();
    drop(stdin);
    let until = Instant::now() + Duration::from_secs(5);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() >= until {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    seconds
}

/// How a server starts, `at_once` processes started together, 5 times: the median seconds from spawn to the first
/// line a process writes for `line`, and the median CPU seconds (user and system) a whole process took (start, that
/// reply, exit once its input closed).
fn startup_median(argv: &[String], line: &[u8], at_once: usize) -> (f64, f64) {
    let (mut times, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let before = children_cpu();
        std::thread::scope(|scope| {
            let starts: Vec<_> = (0..at_once).map(|_| scope.spawn(|| start_once(argv, line))).collect();
            times.extend(starts.into_iter().map(|start| start.join().unwrap()));
        });
        cpu.push((children_cpu() - before) / at_once as f64);
    }
    (median(times), median(cpu))
}

/// Conversations/s when the well-formed requests of conversations `0..n` of seed 1 are piped into one process in
/// one go (stdin closed after the last, timed to the end of its output), and how many lines came back. Requests
/// only: a server may end on a malformed line or a notification sent first (rmcp does), which would cut the
/// stream short.
fn message_bound(argv: &[String], n: u64) -> (f64, usize) {
    let mut bytes = Vec::new();
    for index in 0..n {
        for input in conversation(1, index) {
            if let Input::Line(line) = input
                && matches!(Frame::parse(&line), Frame::Request(_))
            {
                bytes.extend_from_slice(&line);
                bytes.push(b'\n');
            }
        }
    }
    let started = Instant::now();
    let mut child = spawn_piped(argv);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&bytes);
    });
    let mut out = Vec::new();
    let _ = child.stdout.take().unwrap().read_to_end(&mut out);
    let _ = writer.join();
    let _ = child.wait();
    (rate(n, started.elapsed()), out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count())
}

/// One `stdio-real` row: probes the server's eras, runs a 2-job campaign of [`STDIO_REAL_SECS`] on the clock
/// (warm spares, no sentinels: the harness before sentinel barriers) and one with sentinel barriers, and measures
/// its bounds. The CPU the servers took is counted from the processes this one waited for, so for a server `forked`
/// by a fork server (not a child of the harness) the CPU bound is not shown.
fn stdio_row(name: &str, argv: &[String], baseline: Option<&str>, startup_line: &str, forked: bool) {
    let command = ServerCommand::from_argv(argv).unwrap();
    let server = ServerSpec::Command(command.clone());
    let model = probe::probe(server.target(Timeouts::default()).as_mut()).unwrap();
    let mut opts = options(1, None, Some(Duration::from_secs(STDIO_REAL_SECS)));
    opts.policy = Policy::default().with_model(model.clone());
    if let Some(baseline) = baseline {
        opts.baseline = Baseline::load(&root().join(baseline)).unwrap();
    }
    // As `fuzz --time` does: the deadline bounds the whole run, minimization beside the workers included.
    let run = |sentinels: bool| {
        let deadline = Instant::now() + Duration::from_secs(STDIO_REAL_SECS);
        let timeouts = Timeouts { deadline: Some(deadline), ..Timeouts::default() };
        let target = |_| match sentinels {
            true => server.sentinel_target(timeouts, model.eras),
            false => server.pooled_target(timeouts),
        };
        campaign::run((0..2).map(target).collect(), server.target(timeouts), &opts, &server, |_| {}).unwrap()
    };
    let clock = run(false);
    let cpu = children_cpu();
    let summary = run(true);
    let busy = (children_cpu() - cpu) / summary.elapsed.as_secs_f64();
    let (startup, start_cpu) = startup_median(argv, startup_line.as_bytes(), 1);
    let (startup_two, _) = startup_median(argv, startup_line.as_bytes(), 2);
    let (piped, replies) = message_bound(argv, summary.conversations.clamp(20, 2000));
    let fast = rate(summary.conversations, summary.elapsed);
    let slow = rate(clock.conversations, clock.elapsed);
    println!(
        "| {name} | {} | {fast:.1} ({} in {:.0} s; servers busy {busy:.2} cores) | {slow:.1} ({:.1}x) | {:.1} ({:.0} ms) | {:.1} ({:.0} ms) | {} | {:.0} ({replies} lines back) |",
        model.eras.name(),
        summary.conversations,
        summary.elapsed.as_secs_f64(),
        fast / slow,
        2.0 / startup,
        startup * 1000.0,
        2.0 / startup_two,
        startup_two * 1000.0,
        match forked {
            true => "- (forked outside the harness)".to_string(),
            false => format!("{:.1} ({:.0} ms of CPU)", 2.0 / start_cpu, start_cpu * 1000.0),
        },
        piped
    );
}

fn stdio_real() {
    println!("## real servers over stdio, `fuzz --jobs 2`, {STDIO_REAL_SECS} s each, seed 1, known findings baselined");
    println!(
        "| server | eras | conversations/s | on the clock (sentinels off), conversations/s | start-up bound: 2 / median start-up alone, conversations/s | start-up bound, two started together, conversations/s | CPU bound: 2 cores / median CPU of a start, conversations/s | message bound: their requests piped in one go, conversations/s |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let exe = env!("CARGO_BIN_EXE_mcp-wirefuzz").to_string();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    stdio_row("built-in (`mcp-wirefuzz serve`)", &[exe.clone(), "serve".into()], None, ping, false);
    let rmcp = root().join("tests/servers/rmcp-calc/target/release/rmcp-calc");
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    if rmcp.exists() {
        stdio_row(
            "rmcp 3.11.0 (tests/servers/rmcp-calc)",
            &[rmcp.display().to_string()],
            Some("tests/servers/rmcp-calc.baseline"),
            initialize,
            false,
        );
    } else {
        println!("| rmcp | SKIPPED: build tests/servers/rmcp-calc --release |");
    }
    let ts = root().join("tests/servers/node/ts-v1/calc_server_v1.mjs");
    if root().join("tests/servers/node/ts-v1/node_modules").exists() {
        stdio_row(
            "TypeScript SDK 1.32.2 (tests/servers/node/ts-v1)",
            &["node".into(), ts.display().to_string()],
            Some("tests/servers/node/ts-v1.baseline"),
            ping,
            false,
        );
    } else {
        println!("| TypeScript SDK | SKIPPED: run .ci/node-servers |");
    }
    let python = root().join(".venv/bin/python");
    let calc = root().join("tests/servers/calc.py");
    if Command::new(&python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success()) {
        let argv = [python.display().to_string(), calc.display().to_string()];
        stdio_row(
            "Python SDK 2.3.0 (tests/servers/calc.py), a fresh process each",
            &argv,
            Some("tests/servers/calc-python.baseline"),
            ping,
            false,
        );
        let fork_server = ForkServer::start(&python, &calc, &["mcp.server.mcpserver"]);
        stdio_row(
            "Python SDK 2.3.0, forked by the fork server",
            &fork_server.attach_argv(),
            Some("tests/servers/calc-python.baseline"),
            ping,
            true,
        );
    } else {
        println!("| Python SDK | SKIPPED: .venv has no mcp (run .ci/python-venv) |");
    }
}

/// How many reusable conversations `stdio-reuse` runs each way.
const REUSE_CONVERSATIONS: usize = 200;

/// One `stdio-reuse` row: the first [`REUSE_CONVERSATIONS`] conversations of seed 1 that process reuse applies to,
/// run one after another on one target with sentinels (calibrated by a first conversation, not timed; it keeps a
/// process only where the calibration allows), then on one on the clock (a warm spare, a fresh process each).
fn reuse_row(name: &str, argv: &[String]) {
    let command = ServerCommand::from_argv(argv).unwrap();
    let server = ServerSpec::Command(command.clone());
    let eras = probe::probe(server.target(Timeouts::default()).as_mut()).unwrap().eras;
    let reusable: Vec<Vec<Input>> = (0..)
        .map(|index| conversation(1, index))
        .filter(|c| stdio::self_contained(c))
        .take(REUSE_CONVERSATIONS)
        .collect();
    let rate = |target: &mut StdioTarget| {
        target.run(&reusable[0]).unwrap();
        let started = Instant::now();
        for inputs in &reusable {
            target.run(inputs).unwrap();
        }
        reusable.len() as f64 / started.elapsed().as_secs_f64()
    };
    let mut sentinels = StdioTarget::new(command.clone(), Timeouts::default()).with_sentinels(eras);
    let kept = match sentinels.keeps_processes().unwrap() {
        true => "",
        false => " (no process kept: a kept one would answer otherwise than a fresh one)",
    };
    let fast = rate(&mut sentinels);
    let clock = rate(&mut StdioTarget::new(command, Timeouts::default()));
    println!("| {name} | {} | {fast:.1}{kept} | {clock:.1} | {:.1}x |", eras.name(), fast / clock);
}

fn stdio_reuse() {
    println!(
        "## process reuse over stdio: the first {REUSE_CONVERSATIONS} reusable conversations of seed 1, one target"
    );
    println!("| server | eras | reused, sentinels: conversations/s | on the clock, a fresh process each | speed-up |");
    println!("|---|---|---|---|---|");
    let exe = env!("CARGO_BIN_EXE_mcp-wirefuzz").to_string();
    reuse_row("built-in (`mcp-wirefuzz serve`)", &[exe, "serve".into()]);
    let rmcp = root().join("tests/servers/rmcp-calc/target/release/rmcp-calc");
    match rmcp.exists() {
        true => reuse_row("rmcp 3.11.0 (tests/servers/rmcp-calc)", &[rmcp.display().to_string()]),
        false => println!("| rmcp | SKIPPED: build tests/servers/rmcp-calc --release |"),
    }
}

/// Seconds from the start of what a user runs, `mcp-wirefuzz fuzz --seed SEED --time CAP -- mcp-wirefuzz serve
/// --mutant NAME` (the CLI: model probe, surface, calibration, the sweep, then generated conversations with sentinel
/// barriers, minimization beside), until it reports the planted bug's rule (`None` when the run ends at `cap`
/// without it). At that report the run is ended with SIGTERM, on which it ends its servers.
fn stdio_time_to_find(exe: &str, mutant: Mutant, seed: u64, cap: f64) -> Option<f64> {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let out = scratch("stdio-find");
    let mut fuzz = Command::new(exe);
    fuzz.args(["fuzz", "--seed", &seed.to_string(), "--time", &cap.to_string(), "--out"]).arg(&out);
    if let Some(profile) = mutant.profile() {
        fuzz.args(["--profile", profile]);
    }
    fuzz.args(["--", exe, "serve", "--mutant", mutant.name()]);
    let started = Instant::now();
    let mut child = fuzz.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    // A finding's first line: `ERROR RULE [trigger] (conversation N)`.
    let reports = |line: &String| {
        let mut words = line.split(' ');
        words.next().is_some_and(|level| matches!(level, "ERROR" | "WARNING"))
            && words.next() == Some(mutant.expected_rule())
    };
    let found = BufReader::new(child.stdout.take().unwrap()).lines().map_while(Result::ok).any(|l| reports(&l));
    let elapsed = started.elapsed().as_secs_f64();
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&out);
    found.then_some(elapsed)
}

fn stdio_find(exe: &str) {
    const CAP: f64 = 20.0;
    const TARGET: f64 = 2.0;
    println!(
        "## time to first finding over stdio: `fuzz --seed S --time {CAP} -- mcp-wirefuzz serve --mutant NAME`, from its start (median of seeds 1-3)"
    );
    println!("| mutant | rule | seed 1 | seed 2 | seed 3 | median | over {TARGET} s |");
    println!("|---|---|---|---|---|---|---|");
    let cell = |time: &Option<f64>| time.map_or(format!("> {CAP:.0} s"), |t| format!("{t:.2} s"));
    let mut medians = Vec::new();
    for mutant in Mutant::ALL {
        let times: Vec<Option<f64>> = [1u64, 2, 3].iter().map(|&s| stdio_time_to_find(exe, mutant, s, CAP)).collect();
        let median = median_found(&times).unwrap_or(f64::INFINITY);
        medians.push(median);
        println!(
            "| {mutant} | {} | {} | {} | {} | {} | {} |",
            mutant.expected_rule(),
            cell(&times[0]),
            cell(&times[1]),
            cell(&times[2]),
            show(&times, CAP),
            if median > TARGET { "**over**" } else { "" }
        );
    }
    let over = medians.iter().filter(|&&m| m > TARGET).count();
    println!("   {over} of {} planted bugs over {TARGET} s; median over all: {:.2} s", medians.len(), median(medians));
}
