//! The `stdio-real` and `stdio-reuse` sections: conversations/s over stdio against the built-in server and real
//! servers, beside their start-up, CPU and message bounds, and with process reuse against fresh processes.

use super::*;

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
        let (targets, shrinker) = match sentinels {
            true => server.campaign_targets(timeouts, timeouts, model.eras, 2),
            false => ((0..2).map(|_| server.pooled_target(timeouts)).collect(), server.target(timeouts)),
        };
        campaign::run(targets, shrinker, &opts, &server, |_| {}).unwrap()
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

pub(crate) fn stdio_real() {
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

pub(crate) fn stdio_reuse() {
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
