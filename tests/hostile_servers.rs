//! The harness keeps its promises under hostile servers (tests/hostile/server.py): `fuzz --time T --confirm-time C`
//! returns within T + C + 10 s of the end of learning the server (which a hostile server keeps under a minute: learning gives up on a
//! server that stalls), with a report, and leaves no process behind; `kill -9` of the harness after its first finding leaves
//! that finding's case file on disk and no server running; SIGTERM ends every server, grandchildren too; SIGINT
//! (Ctrl-C) writes no case file for the servers it ends. Quick
//! (`--time 3`) in the quick tier; `--time 15` in the slow tier (`WIREFUZZ_SLOW=1`).

#[path = "hostile/common.rs"]
mod common;
#[path = "common/tier.rs"]
mod tier;

use mcp_wirefuzz::case::Case;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const MODES: [&str; 7] = ["silent", "grandchild", "stop", "garbage", "endless", "flood", "exit"];

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirefuzz-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `mcp-wirefuzz fuzz --time SECS --out OUT [extra...] -- SERVER`, its output captured, and threads reading its
/// stdout and its stderr (so a long report cannot fill a pipe and stop the harness).
fn fuzz(secs: u64, out: &Path, extra: &[&str], server: &[String]) -> (Child, JoinHandle<String>) {
    let (child, stdout, _) = fuzz_logged(secs, out, extra, server);
    (child, stdout)
}

/// [`fuzz`], with the thread reading its stderr too.
fn fuzz_logged(
    secs: u64,
    out: &Path,
    extra: &[&str],
    server: &[String],
) -> (Child, JoinHandle<String>, JoinHandle<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .args(["fuzz", "--time", &secs.to_string(), "--seed", "7", "--out"])
        .arg(out)
        .args(extra)
        .arg("--")
        .args(server)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    (child, stdout, stderr)
}

/// The seconds the run spent learning the server, as its stderr says.
fn learned(stderr: &str) -> Option<f64> {
    let line = stderr.lines().find(|line| line.contains("learned the server in "))?;
    line.split("learned the server in ").nth(1)?.split(' ').next()?.parse().ok()
}

/// The `--confirm-time` of the bounded runs: fuzzing time, then this to confirm and minimize.
const CONFIRM: u64 = 5;

/// The longest a hostile server keeps the learning going.
const LEARNING_BOUND: u64 = 60;

/// Waits for `child` up to `limit`; kills it and returns `None` when it takes longer.
fn wait(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_hostile_server_gets_a_bounded_run_a_report_and_nothing_left_behind() {
    let secs = if tier::asked() { 15 } else { 3 };
    let started = Instant::now();
    // All at once: the bound must hold on a busy machine too.
    let runs: Vec<_> = MODES
        .iter()
        .map(|&mode| {
            let (tag, out) = (common::tag(mode), scratch(mode));
            // Short reply timeouts, so even a silent server's conversations end (and are judged) within the run.
            // The servers run as plain processes (they are Python scripts: not through the fork server), each in its
            // process group, which the promises are about.
            let quick = ["--eras", "dual", "--timeout", "300", "--startup-timeout", "300", "--no-fork-server"];
            let confirm = CONFIRM.to_string();
            let quick = [&quick[..], &["--confirm-time", &confirm]].concat();
            let (mut child, reader, errors) = fuzz_logged(secs, &out, &quick, &common::server(mode, &tag));
            // Each run waited for in a thread of its own, so its end is timed when it comes.
            let bound = secs + CONFIRM + 10 + LEARNING_BOUND;
            let waiter = std::thread::spawn(move || {
                let status = wait(&mut child, Duration::from_secs(bound));
                (status, started.elapsed().as_secs_f64())
            });
            (mode, tag, out, waiter, reader, errors)
        })
        .collect();
    for (mode, tag, out, waiter, reader, errors) in runs {
        let bound = secs + CONFIRM + 10 + LEARNING_BOUND;
        let (status, ended) = waiter.join().unwrap();
        let (stdout, stderr) = (reader.join().unwrap(), errors.join().unwrap());
        let status = status.unwrap_or_else(|| panic!("{mode}: --time {secs} still running after {bound} s\n{stderr}"));
        let learning = learned(&stderr).unwrap_or_else(|| panic!("{mode}: no learning time\n{stderr}"));
        assert!(learning <= LEARNING_BOUND as f64, "{mode}: learning took {learning} s\n{stderr}");
        assert!(
            ended <= learning + (secs + CONFIRM + 10) as f64,
            "{mode}: ended {ended:.1} s after the start, learning {learning} s"
        );
        // Passed, failed, or inconclusive with the findings still pending named.
        match status.code() {
            Some(0 | 1) => {}
            Some(4) => {
                assert!(stdout.contains("\npending ("), "{mode}: inconclusive, but no finding pending\n{stdout}")
            }
            _ => panic!("{mode}: {status:?}\n{stdout}"),
        }
        assert!(stdout.contains("\nran ") && stdout.contains("conversations in"), "{mode}: no report:\n{stdout}");
        let left = common::left_behind(&tag);
        assert!(left.is_empty(), "{mode}: left behind: {left:?}");
        for entry in std::fs::read_dir(&out).into_iter().flatten() {
            let path = entry.unwrap().path();
            assert!(Case::load(&path).is_ok(), "{mode}: {} does not load", path.display());
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}

#[test]
fn a_finding_still_pending_makes_the_run_inconclusive_and_confirmation_time_settles_it() {
    // A server that answers nothing: its first contact is the run's first conversation, judged at once; confirming
    // its silence takes waits 4 times longer (over a second), more than a 1 s run leaves with no confirmation time.
    for (confirm, code, verdict) in [("0", 4, "inconclusive"), ("30", 1, "failed")] {
        let name = format!("pending-{confirm}");
        let (tag, out) = (common::tag(&name), scratch(&name));
        let json = std::env::temp_dir().join(format!("wirefuzz-{name}-{}.json", std::process::id()));
        let quick = ["--timeout", "300", "--startup-timeout", "300", "--no-fork-server", "--shrink-budget", "5"];
        let extra = [&quick[..], &["--confirm-time", confirm, "--json", json.to_str().unwrap()]].concat();
        let (mut child, reader) = fuzz(1, &out, &extra, &common::server("silent", &tag));
        let status = wait(&mut child, Duration::from_secs(120)).expect("the run ends");
        let stdout = reader.join().unwrap();
        assert_eq!(status.code(), Some(code), "--confirm-time {confirm}:\n{stdout}");
        assert!(stdout.contains(&format!("verdict: {verdict} (exit {code})")), "{stdout}");
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(report["verdict"], verdict);
        let states: Vec<&str> =
            report["findings"].as_array().unwrap().iter().filter_map(|f| f["confirmation"].as_str()).collect();
        match code {
            4 => {
                assert!(states.contains(&"pending") && !states.contains(&"confirmed"), "{states:?}");
                assert!(stdout.contains("\npending (") && stdout.contains("--confirm-time "), "{stdout}");
                assert!(report["settles_in_s"].as_u64().is_some_and(|s| s >= 1), "{report}");
            }
            _ => assert!(!states.contains(&"pending") && states.contains(&"confirmed"), "{states:?}"),
        }
        assert!(common::left_behind(&tag).is_empty());
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_file(&json);
    }
}

#[test]
fn kill_9_after_the_first_finding_leaves_its_case_file_and_no_server() {
    // As plain processes, and the silent one through the fork server too (its forked servers die with it, and it
    // with the harness).
    for (mode, plain) in [("silent", true), ("grandchild", true), ("silent", false)] {
        let name = format!("kill-{mode}-{}", if plain { "plain" } else { "forked" });
        let (tag, out) = (common::tag(&name), scratch(&name));
        let quick = ["--eras", "dual", "--timeout", "300", "--startup-timeout", "300"];
        let quick = [&quick[..], if plain { &["--no-fork-server"][..] } else { &[] }].concat();
        let (mut child, _) = fuzz(60, &out, &quick, &common::server(mode, &tag));
        let until = Instant::now() + Duration::from_secs(30);
        let first = loop {
            let case = std::fs::read_dir(&out)
                .into_iter()
                .flatten()
                .map(|e| e.unwrap().path())
                .find(|p| p.extension().is_some_and(|e| e == "case"));
            if let Some(case) = case {
                break case;
            }
            assert!(Instant::now() < until, "{mode}: no case file in 30 s");
            std::thread::sleep(Duration::from_millis(5));
        };
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let case = Case::load(&first).unwrap_or_else(|e| panic!("{mode}: {e:#}"));
        assert!(!case.expect.is_empty() && !case.inputs.is_empty(), "{mode}: {case:?}");
        // The server dies with the harness (its parent-death signal); a grandchild is left to its own end of
        // input and broken pipes, so only the direct child is checked here, and the grandchild ended by the test.
        let (grandchildren, left): (Vec<String>, Vec<String>) =
            common::left_behind(&tag).into_iter().partition(|p| p.contains(" sleeper "));
        for process in grandchildren {
            let pid = process.trim_start_matches("/proc/").split(':').next().and_then(|pid| pid.parse().ok());
            if let Some(pid) = pid {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            }
        }
        assert!(left.is_empty(), "{mode}: left behind after kill -9: {left:?}");
        let _ = std::fs::remove_dir_all(&out);
    }
}

#[test]
fn sigterm_ends_every_server_and_its_grandchildren() {
    let (tag, out) = (common::tag("sigterm"), scratch("sigterm"));
    // The servers run as plain processes (they are Python scripts: not through the fork server), each in its
    // process group, which the promises are about.
    let quick = ["--eras", "dual", "--timeout", "300", "--startup-timeout", "300", "--no-fork-server"];
    let (mut child, _) = fuzz(60, &out, &quick, &common::server("grandchild", &tag));
    let until = Instant::now() + Duration::from_secs(30);
    while common::left_behind(&tag).iter().all(|p| !p.contains(" sleeper ")) {
        assert!(Instant::now() < until, "no grandchild started in 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let harness = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(harness, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = wait(&mut child, Duration::from_secs(5)).expect("the harness did not stop on SIGTERM");
    assert_eq!(status.code(), Some(128 + 15));
    let left = common::left_behind(&tag);
    assert!(left.is_empty(), "left behind after SIGTERM: {left:?}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn sigint_writes_no_finding_for_the_servers_the_harness_ends() {
    // A clean server (the built-in one over stdio): every crash seen after Ctrl-C would be the harness's own doing.
    let out = scratch("sigint");
    let server = [env!("CARGO_BIN_EXE_mcp-wirefuzz").to_string(), "serve".to_string()];
    let (mut child, _) = fuzz(60, &out, &["--jobs", "2"], &server);
    // Learning the built-in server takes well under a second: by now conversations are running.
    std::thread::sleep(Duration::from_secs(5));
    let harness = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(harness, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = wait(&mut child, Duration::from_secs(10)).expect("the harness did not stop on SIGINT");
    assert_eq!(status.code(), Some(128 + 2));
    let written: Vec<PathBuf> =
        std::fs::read_dir(&out).map(|dir| dir.map(|entry| entry.unwrap().path()).collect()).unwrap_or_default();
    assert!(written.is_empty(), "case files of servers the harness ended: {written:?}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_silent_python_server_is_fuzzed_without_a_fork_server_and_its_first_contact_is_the_first_case() {
    // No --eras, no --no-fork-server: the first contact comes first, on a plain process, and a server that answers
    // nothing to it gets no fork server (whose start and trial would delay its first case file by tens of seconds).
    let (tag, out) = (common::tag("silent-first"), scratch("silent-first"));
    let quick = ["--timeout", "300", "--startup-timeout", "300", "--confirm-time", "0"];
    let (mut child, stdout, stderr) = fuzz_logged(1, &out, &quick, &common::server("silent", &tag));
    assert!(wait(&mut child, Duration::from_secs(60)).is_some(), "the run ended");
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(stderr.contains("the server wrote nothing to an initialize"), "{stderr}");
    assert!(!stderr.contains("fork server"), "no fork server for a silent server: {stderr}");
    let first = out.join("server-hang-silent-0.case");
    assert!(first.exists(), "the first contact's conversation is conversation 0's case:\n{stderr}\n{stdout}");
    assert!(common::left_behind(&tag).is_empty());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_server_that_answers_but_never_exits_at_eof_is_learned_and_its_tools_called() {
    // Answers everything, never exits once its input closes (the Python SDK mcp 1.6.0): that is SERVER-SHUTDOWN, a
    // SHOULD the run judges, not a stall; learning goes on, and only its first conversation waits the whole
    // shutdown wait (5 s) for the exit.
    let (tag, out) = (common::tag("outlive"), scratch("outlive"));
    let args = ["--confirm-time", "0", "--no-fork-server"];
    let (mut child, stdout, stderr) = fuzz_logged(8, &out, &args, &common::server("outlive", &tag));
    let status = wait(&mut child, Duration::from_secs(120)).expect("the run ended");
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(matches!(status.code(), Some(0 | 1 | 4)), "{status:?}\n{stderr}\n{stdout}");
    assert!(!stderr.contains("neither answered nor exited"), "{stderr}");
    let said = stderr.matches("the server answered but did not exit within 5.0 s of its input closing").count();
    assert_eq!(said, 1, "said once: {stderr}");
    assert!(stderr.contains("server model: handshake-only"), "eras probed: {stderr}");
    assert!(stdout.contains("server surface: 1 tool,"), "{stdout}");
    // Its own tool was called: the coverage table by tool names it.
    let by_tool = stdout.split("coverage by tool:").nth(1).unwrap_or_default();
    assert!(by_tool.lines().any(|line| line.trim_start().starts_with("echo ")), "{stdout}");
    // Twelve learning conversations, each waiting the whole shutdown wait, would take 60 s.
    let learning = learned(&stderr).unwrap_or_else(|| panic!("no learning time\n{stderr}"));
    assert!(learning < 30.0, "learning took {learning} s\n{stderr}");
    assert!(common::left_behind(&tag).is_empty());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_clis_servers_start_with_no_signal_blocked_and_a_missing_one_is_named() {
    // The CLI blocks SIGINT, SIGTERM and SIGHUP for itself and starts its servers through its own binary as a
    // trampoline (server::launch): the server must still start with none blocked, as the harness's child.
    let (tag, out) = (common::tag("trampoline"), scratch("trampoline"));
    let status_file = std::env::temp_dir().join(format!("{tag}.status"));
    let script = format!("grep -E '^(SigBlk|PPid)' /proc/$$/status > '{}'; exit 0", status_file.display());
    let (mut child, stdout) = fuzz(1, &out, &["--cases", "1", "--eras", "modern"], &["sh".into(), "-c".into(), script]);
    assert!(wait(&mut child, Duration::from_secs(60)).is_some(), "the run did not end");
    let _ = stdout.join();
    let status = std::fs::read_to_string(&status_file).expect("the server ran");
    assert!(status.contains("SigBlk:\t0000000000000000"), "{status}");
    assert!(status.contains(&format!("PPid:\t{}", child.id())), "the harness is the server's parent: {status}");
    let _ = std::fs::remove_file(&status_file);
    let _ = std::fs::remove_dir_all(&out);

    let missing = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .args(["fuzz", "--cases", "1", "--", "no-such-server-mcp-wirefuzz"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot start server `no-such-server-mcp-wirefuzz`: no such file"), "{stderr}");
}
