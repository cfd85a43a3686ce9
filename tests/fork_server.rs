//! The Python fork server (`forkservers/python/wirefuzz_forkserver.py`, standard library only, run with `python3`)
//! and `mcp-wirefuzz attach`: a forked server's stdio, exit code and signal cross the stub as if the stub were the
//! server; killing the stub kills the forked server; a bad client does not take the fork server down. The Python
//! SDK behind a fork server is in tests/real_servers.rs.

mod common;

use common::ForkServer;
use mcp_wirefuzz::server::transport::stdio::StdioTarget;
use mcp_wirefuzz::server::{ServerCommand, Target, Timeouts};
use mcp_wirefuzz::transcript::{Ending, Event, Input};
use nix::sys::socket::{ControlMessage, MsgFlags, UnixAddr, sendmsg};
use std::io::{BufRead, BufReader, IoSlice, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A test's scratch folder, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a server script into a fresh folder and starts a fork server for it with `python3`; both go when the
/// test ends.
fn fork_server_for(name: &str, source: &str) -> (ForkServer, Scratch) {
    fork_server_with(name, source, &[])
}

/// As [`fork_server_for`], with modules of the script's folder (name, source) preloaded too.
fn fork_server_with(name: &str, source: &str, modules: &[(&str, &str)]) -> (ForkServer, Scratch) {
    let dir = Scratch(std::env::temp_dir().join(format!("wirefuzz-fs-test-{}-{name}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let script = dir.0.join(format!("{name}.py"));
    std::fs::write(&script, source).unwrap();
    let mut preload = vec!["json"];
    for (module, source) in modules {
        std::fs::write(dir.0.join(format!("{module}.py")), source).unwrap();
        preload.push(module);
    }
    (ForkServer::start(Path::new("python3"), &script, &preload), dir)
}

fn target(server: &ForkServer) -> StdioTarget {
    StdioTarget::new(ServerCommand::from_argv(&server.attach_argv()).unwrap(), Timeouts::default())
}

fn line(text: &str) -> Input {
    Input::Line(text.as_bytes().to_vec())
}

const ECHO: &str = r#"
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"argv": sys.argv[1:]}}), flush=True)
    if request["id"]:
        print("bye", file=sys.stderr)
        sys.exit(request["id"])
"#;

#[test]
fn a_forked_server_talks_and_exits_through_the_stub() {
    let (server, _scratch) = fork_server_for("echo", ECHO);
    let mut target = target(&server);
    for code in [0u8, 3] {
        let request = format!(r#"{{"jsonrpc":"2.0","id":{code},"method":"ping"}}"#);
        let transcript = target.run(&[line(&request), Input::Sync]).unwrap();
        let Event::Received { line: reply, .. } = &transcript.events[1] else { panic!("{transcript:?}") };
        assert_eq!(
            String::from_utf8_lossy(reply),
            format!(r#"{{"jsonrpc": "2.0", "id": {code}, "result": {{"argv": []}}}}"#)
        );
        match (code, &transcript.ending) {
            (0, Ending::Closed) => {}
            (3, Ending::Exited { code: Some(3), signal: None, stderr_tail }) => {
                assert_eq!(stderr_tail, b"bye\n", "{}", String::from_utf8_lossy(stderr_tail))
            }
            _ => panic!("exit {code}: {:?}", transcript.ending),
        }
    }
}

#[test]
fn a_signal_that_kills_the_forked_server_kills_the_stub() {
    let (server, _scratch) =
        fork_server_for("segv", "import os, signal, sys\nsys.stdin.readline()\nos.kill(os.getpid(), signal.SIGSEGV)\n");
    let transcript = target(&server).run(&[line(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)]).unwrap();
    assert!(matches!(transcript.ending, Ending::Exited { signal: Some(11), .. }), "{:?}", transcript.ending);
}

#[test]
fn killing_the_stub_kills_the_forked_server() {
    let (server, _scratch) =
        fork_server_for("sleepy", "import os, sys, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)\n");
    let mut stub = Command::new(&server.attach_argv()[0])
        .args(&server.attach_argv()[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pid = String::new();
    BufReader::new(stub.stdout.take().unwrap()).read_line(&mut pid).unwrap();
    let forked = PathBuf::from(format!("/proc/{}", pid.trim()));
    assert!(forked.exists(), "forked server {pid:?} not running");
    stub.kill().unwrap();
    stub.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while forked.exists() {
        assert!(Instant::now() < until, "forked server {} outlived its stub", pid.trim());
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_bad_client_leaves_the_fork_server_serving() {
    let (server, _scratch) = fork_server_for("echo-after-bad", ECHO);
    let mut bad = UnixStream::connect(&server.socket).unwrap();
    bad.write_all(b"X").unwrap();
    drop(bad);
    let transcript = target(&server).run(&[line(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#)]).unwrap();
    assert_eq!(transcript.ending, Ending::Closed, "{}", transcript.render());
    assert_eq!(transcript.events.len(), 2);
}

/// A client that hands the fork server `stdin` (and /dev/null as stdout and stderr), as `attach` does.
fn hand_over(server: &ForkServer, stdin: &impl AsRawFd) -> UnixStream {
    let stream = UnixStream::connect(&server.socket).unwrap();
    let null = std::fs::File::options().write(true).open("/dev/null").unwrap();
    let fds = [stdin.as_raw_fd(), null.as_raw_fd(), null.as_raw_fd()];
    let hello = [IoSlice::new(b"F")];
    sendmsg::<UnixAddr>(stream.as_raw_fd(), &hello, &[ControlMessage::ScmRights(&fds)], MsgFlags::empty(), None)
        .unwrap();
    stream
}

/// The fork server sees a forked server's exit and its client's leaving in one turn of its loop, exit first: it
/// used to answer the exit (closing the client), then take the closed client for one that left and die on it.
/// The order is forced by keeping the fork server busy meanwhile with a client that does not say hello.
#[test]
fn a_client_gone_as_its_server_exits_leaves_the_fork_server_serving() {
    let (server, _scratch) = fork_server_for("echo-gone", ECHO);
    let (stdin, feed) = std::io::pipe().unwrap();
    let client = hand_over(&server, &stdin);
    drop(stdin);
    std::thread::sleep(Duration::from_millis(300));
    // Waits for its hello (up to 5 s) with nothing else served.
    let mut slow = UnixStream::connect(&server.socket).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    drop(feed);
    std::thread::sleep(Duration::from_millis(300));
    drop(client);
    slow.write_all(b"X").unwrap();
    drop(slow);
    let transcript = target(&server).run(&[line(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#)]).unwrap();
    assert_eq!(transcript.ending, Ending::Closed, "{}", transcript.render());
    assert_eq!(transcript.events.len(), 2, "{}", transcript.render());
}

#[test]
fn attach_without_a_fork_server_fails_clearly() {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .args(["attach", "/no/such/wirefuzz.sock", "--wait", "0.1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(mcp_wirefuzz::server::transport::stdio::attach::LOST_EXIT.into()));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(mcp_wirefuzz::server::transport::stdio::attach::LOST_NOTE), "{stderr}");
    assert!(stderr.contains("no fork server at /no/such/wirefuzz.sock"), "{stderr}");
}

#[test]
fn a_fuzz_run_whose_stub_ran_no_server_stops_with_an_error_not_a_finding() {
    let out = std::env::temp_dir().join(format!("wirefuzz-fs-test-{}-lost", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .args(["fuzz", "--cases", "5", "--out"])
        .arg(&out)
        .args(["--", env!("CARGO_BIN_EXE_mcp-wirefuzz"), "attach", "/no/such/wirefuzz.sock", "--wait", "0.1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the fork server is gone"), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains("SERVER-CRASH") && !stderr.contains("SERVER-CRASH"), "{stdout}{stderr}");
    assert!(std::fs::read_dir(&out).map_or(true, |mut files| files.next().is_none()), "no case file written");
    let _ = std::fs::remove_dir_all(&out);
}

/// A preloaded module that makes the fork server's first `FAILURES` forks fail with EAGAIN.
const FAILING_FORKS: &str = r#"
import errno, os
_fork, _left = os.fork, [FAILURES]
def _failing_fork():
    if _left[0] > 0:
        _left[0] -= 1
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
    return _fork()
os.fork = _failing_fork
"#;

#[test]
fn a_fork_that_fails_for_a_while_is_tried_again_and_one_that_keeps_failing_stops_the_run_not_the_fork_server() {
    let ping = line(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#);
    let passing = FAILING_FORKS.replace("FAILURES", "3");
    let (server, _scratch) = fork_server_with("echo-fork-retried", ECHO, &[("failing_forks", &passing)]);
    let transcript = target(&server).run(std::slice::from_ref(&ping)).unwrap();
    assert_eq!((transcript.ending, transcript.events.len()), (Ending::Closed, 2));

    let lasting = FAILING_FORKS.replace("FAILURES", "1000000");
    let (server, _scratch) = fork_server_with("echo-fork-failing", ECHO, &[("failing_forks", &lasting)]);
    for _ in 0..2 {
        // Each run is refused as a harness error; the second shows the fork server still serving.
        let error = target(&server).run(std::slice::from_ref(&ping)).unwrap_err();
        assert!(error.to_string().contains("closed the connection without a status"), "{error:#}");
    }
}
