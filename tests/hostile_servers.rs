//! The harness keeps its promises under hostile servers (tests/hostile/server.py): `fuzz --time T` returns within
//! T + 10 s with a report and leaves no process behind, and `kill -9` of the harness after its first finding leaves
//! that finding's case file on disk and no server running. Quick (`--time 3`) by default; with
//! WIREFUZZ_REAL_SERVERS=1, the issue's `--time 15`.

#[path = "hostile/common.rs"]
mod common;

use mcp_wirefuzz::case::Case;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MODES: [&str; 7] = ["silent", "grandchild", "stop", "garbage", "endless", "flood", "exit"];

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wirefuzz-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `mcp-wirefuzz fuzz --time SECS --out OUT [extra...] -- SERVER`, its output captured.
fn fuzz(secs: u64, out: &Path, extra: &[&str], server: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .args(["fuzz", "--time", &secs.to_string(), "--seed", "7", "--out"])
        .arg(out)
        .args(extra)
        .arg("--")
        .args(server)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

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
    let secs = if std::env::var("WIREFUZZ_REAL_SERVERS").is_ok_and(|v| v == "1") { 15 } else { 3 };
    let started = Instant::now();
    // All at once: the bound must hold on a busy machine too.
    let mut runs: Vec<(&str, String, PathBuf, Child)> = MODES
        .iter()
        .map(|&mode| {
            let (tag, out) = (common::tag(mode), scratch(mode));
            // Short reply timeouts, so even a silent server's conversations end (and are judged) within the run.
            let quick = ["--eras", "dual", "--timeout", "300", "--startup-timeout", "300"];
            let child = fuzz(secs, &out, &quick, &common::server(mode, &tag));
            (mode, tag, out, child)
        })
        .collect();
    // Each report is read as it is written: a report larger than a pipe holds must not stall its run.
    let readers: Vec<_> = runs
        .iter_mut()
        .map(|(_, _, _, child)| {
            let mut pipe = child.stdout.take().unwrap();
            std::thread::spawn(move || {
                let mut stdout = String::new();
                let _ = std::io::Read::read_to_string(&mut pipe, &mut stdout);
                stdout
            })
        })
        .collect();
    for ((mode, tag, out, child), reader) in runs.iter_mut().zip(readers) {
        let left = (started + Duration::from_secs(secs + 10)).saturating_duration_since(Instant::now());
        let status = wait(child, left);
        let stdout = reader.join().unwrap();
        let status = status.unwrap_or_else(|| panic!("{mode}: --time {secs} still running after {} s", secs + 10));
        assert!(matches!(status.code(), Some(0 | 1)), "{mode}: {status:?}\n{stdout}");
        assert!(stdout.contains("\nran ") && stdout.contains("conversations in"), "{mode}: no report:\n{stdout}");
        let left = common::left_behind(tag);
        assert!(left.is_empty(), "{mode}: left behind: {left:?}");
        for entry in std::fs::read_dir(&out).into_iter().flatten() {
            let path = entry.unwrap().path();
            assert!(Case::load(&path).is_ok(), "{mode}: {} does not load", path.display());
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}

#[test]
fn kill_9_after_the_first_finding_leaves_its_case_file_and_no_server() {
    for mode in ["silent", "grandchild"] {
        let (tag, out) = (common::tag(&format!("kill-{mode}")), scratch(&format!("kill-{mode}")));
        let quick = ["--eras", "dual", "--timeout", "300", "--startup-timeout", "300"];
        let mut child = fuzz(60, &out, &quick, &common::server(mode, &tag));
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
        // input and broken pipes, so only the direct child is checked here.
        let left: Vec<String> = common::left_behind(&tag).into_iter().filter(|p| !p.contains(" sleeper ")).collect();
        assert!(left.is_empty(), "{mode}: left behind after kill -9: {left:?}");
        let _ = std::fs::remove_dir_all(&out);
    }
}
