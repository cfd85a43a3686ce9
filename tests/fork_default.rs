//! Python servers through the fork server by default: `fuzz` on a Python program (an interpreter with a script or
//! `-m module`, or a script whose shebang names one) starts a fork server for it and says so first; its case files
//! and reproduction commands name the plain command; `--no-fork-server` runs plain processes; a module that starts a
//! thread at import is left to each server, and a program whose first conversation fails only through the fork
//! server runs plain processes, with the reason.
//! The Python SDK's calc needs `.venv` (`.ci/python-venv`) and says SKIPPED without it; the others need only
//! `python3`.

#[path = "common/tier.rs"]
mod tier;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A test's scratch folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("wirefuzz-fork-default-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a run of the CLI printed, and how it ended.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `mcp-wirefuzz ARGS` in `dir`; checks that it left no fork server folder behind.
fn cli(dir: &Path, args: &[&str]) -> Run {
    let child = Command::new(env!("CARGO_BIN_EXE_mcp-wirefuzz"))
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let output = child.wait_with_output().unwrap();
    let prefix = format!("mcp-wirefuzz-fork-{pid}-");
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "fork server folders left behind: {left:?}");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    Run { code: output.status.code(), stdout: text(&output.stdout), stderr: text(&output.stderr) }
}

/// The case files in `dir`, read.
fn cases(dir: &Path) -> Vec<String> {
    let files =
        std::fs::read_dir(dir).map(|files| files.filter_map(|f| f.ok()).collect::<Vec<_>>()).unwrap_or_default();
    files.iter().map(|file| std::fs::read_to_string(file.path()).unwrap()).collect()
}

/// A stdlib-only server: a result for every request it can read (an `initialize` result for `initialize`), nothing
/// for anything else. It breaks rules (no parse errors, among others), so a short run writes case files.
const TOY: &str = r#"
import json, sys
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if isinstance(message, dict) and "id" in message and "method" in message:
        result = {}
        if message["method"] == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "toy", "version": "1"}}
        # Its planted bug: an integer id comes back as a string, but on initialize (JSONRPC-ID-ECHO).
        echo = message["id"]
        if message["method"] != "initialize" and isinstance(echo, int) and not isinstance(echo, bool):
            echo = str(echo)
        print(json.dumps({"jsonrpc": "2.0", "id": echo, "result": result}), flush=True)
"#;

/// `fuzz` options for a short run against the toy server: nothing probed or learned, a short wait for the replies it
/// never sends, each finding minimized a little, case files written to `found`.
const SHORT: &str =
    "fuzz --seed 1 --eras handshake --no-surface --sdk none --timeout 300 --shrink-budget 1 --out found";

/// A short `fuzz` run of `cases` conversations in `dir` (the toy server's planted bug shows in the first).
fn fuzz(dir: &Path, cases: &str, extra: &[&str], command: &[&str]) -> Run {
    let short: Vec<&str> = SHORT.split_whitespace().collect();
    cli(dir, &[&short[..], &["--cases", cases], extra, &["--"], command].concat())
}

const FORKED: &str = "python server: running through the fork server";

#[test]
fn the_python_sdk_server_runs_through_the_fork_server_and_its_cases_name_the_plain_command() {
    let python = root().join(".venv/bin/python");
    if !Command::new(&python).args(["-c", "import mcp"]).output().is_ok_and(|o| o.status.success()) {
        return tier::skip(
            "the Python SDK through the fork server",
            ".venv/bin/python cannot import mcp (run .ci/python-venv)",
        );
    }
    let out = Scratch::new("calc");
    let out_arg = out.0.display().to_string();
    let calc = [".venv/bin/python", "tests/servers/calc.py"];
    let args = ["fuzz", "--cases", "1", "--seed", "1", "--sdk", "none", "--shrink-budget", "2", "--out", &out_arg];
    let run = cli(&root(), &[&args[..], &["--"], &calc].concat());
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with(FORKED) && first.contains("preloaded mcp.server.mcpserver"), "{}", run.stderr);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    let written = cases(&out.0);
    assert!(!written.is_empty(), "no case file:\n{}", run.stderr);
    for case in &written {
        assert!(case.contains(r#"command: [".venv/bin/python","tests/servers/calc.py"]"#), "{case}");
        assert!(!case.contains("attach") && !case.contains(".sock"), "{case}");
    }
    let printed = format!("{}{}", run.stdout, run.stderr);
    assert!(printed.contains("`.venv/bin/python tests/servers/calc.py`"), "{printed}");
    assert!(!printed.contains("attach") && !printed.contains(".sock"), "{printed}");
    // A case replays against the plain command it names, through a fork server of its own.
    let case = std::fs::read_dir(&out.0).unwrap().next().unwrap().unwrap().path();
    let replay = cli(&root(), &["replay", &case.display().to_string()]);
    assert!(replay.stderr.starts_with(FORKED), "{}", replay.stderr);
    assert_eq!(replay.code, Some(1), "{}{}", replay.stdout, replay.stderr);

    let plain_args = ["fuzz", "--cases", "1", "--eras", "dual", "--no-surface", "--sdk", "python", "--no-fork-server"];
    let plain = cli(&root(), &[&plain_args[..], &["--"], &calc].concat());
    assert!(
        plain.stderr.starts_with("python server: a plain process per conversation (--no-fork-server)"),
        "{}",
        plain.stderr
    );
    assert!(!plain.stderr.contains(FORKED), "{}", plain.stderr);
    assert_eq!(plain.code, Some(0), "{}{}", plain.stdout, plain.stderr);
}

#[test]
fn a_module_and_a_script_with_a_python_shebang_run_through_the_fork_server() {
    let dir = Scratch::new("toy");
    std::fs::write(dir.0.join("toy.py"), TOY).unwrap();
    let module = fuzz(&dir.0, "2", &[], &["python3", "-m", "toy"]);
    assert!(module.stderr.starts_with(FORKED), "{}", module.stderr);
    assert_eq!(module.code, Some(1), "{}{}", module.stdout, module.stderr);
    for case in cases(&dir.0.join("found")) {
        assert!(case.contains(r#"command: ["python3","-m","toy"]"#), "{case}");
    }
    let script = dir.0.join("toy-server");
    std::fs::write(&script, format!("#!/usr/bin/env python3\n{TOY}")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let shebang = fuzz(&dir.0, "2", &[], &["./toy-server"]);
    assert!(shebang.stderr.starts_with(FORKED), "{}", shebang.stderr);
    assert_eq!(shebang.code, Some(1), "{}{}", shebang.stdout, shebang.stderr);
    for case in cases(&dir.0.join("found")) {
        assert!(case.contains(r#"command: ["./toy-server"]"#), "{case}");
    }
    // Behind `env NAME=VALUE`: the fork server, and so every forked server, has the variable (a server that does not
    // see it exits at once, which would break SERVER-CRASH, not the planted JSONRPC-ID-ECHO).
    std::fs::write(
        dir.0.join("needs_env.py"),
        format!("import os, sys\nif os.environ.get('TOY_HOME') != 'here': sys.exit(7)\n{TOY}"),
    )
    .unwrap();
    let behind_env =
        fuzz(&dir.0, "2", &["--json", "report.json"], &["env", "TOY_HOME=here", "python3", "needs_env.py"]);
    assert!(behind_env.stderr.starts_with(FORKED), "{}", behind_env.stderr);
    assert_eq!(behind_env.code, Some(1), "{}{}", behind_env.stdout, behind_env.stderr);
    let report = std::fs::read_to_string(dir.0.join("report.json")).unwrap();
    assert!(report.contains("JSONRPC-ID-ECHO") && !report.contains("SERVER-CRASH"), "{report}");
}

#[test]
fn what_is_not_fork_safe_is_left_to_each_server_or_to_plain_processes_and_the_run_says_why() {
    let dir = Scratch::new("unsafe");
    // A module that starts a thread at import: the fork server leaves it to each server (a process with threads
    // must not fork), which imports it as a plain process would.
    let threaded = "import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n";
    std::fs::write(dir.0.join("threaded.py"), threaded).unwrap();
    std::fs::write(dir.0.join("server.py"), format!("import threaded\n{TOY}")).unwrap();
    let run = fuzz(&dir.0, "1", &[], &["python3", "server.py"]);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with(FORKED), "{}", run.stderr);
    assert!(first.contains("not preloaded: threaded (it started a thread at import)"), "{first}");
    assert!(matches!(run.code, Some(0 | 1)), "{}{}", run.stdout, run.stderr);
    // A package that starts a thread when any of its many submodules is imported (numpy's OpenBLAS threads): the
    // whole package is left to each server at once, not one submodule per start until the restarts run out.
    let package = dir.0.join("threadedpkg");
    std::fs::create_dir(&package).unwrap();
    let submodules: Vec<String> = (0..12).map(|n| format!("m{n}")).collect();
    let imports: String = submodules.iter().map(|m| format!("from . import {m}\n")).collect();
    std::fs::write(package.join("__init__.py"), format!("{threaded}{imports}")).unwrap();
    for module in &submodules {
        std::fs::write(package.join(format!("{module}.py")), "VALUE = 1\n").unwrap();
    }
    std::fs::write(dir.0.join("numeric.py"), format!("import threadedpkg.m5\n{TOY}")).unwrap();
    let run = fuzz(&dir.0, "1", &[], &["python3", "numeric.py"]);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with(FORKED), "{}", run.stderr);
    assert!(first.contains("not preloaded: threadedpkg (importing threadedpkg.m5 started a thread)"), "{first}");
    // A server that fails only when forked (it sees the fork server's own imports) is caught by its first
    // conversation, answered by a plain process.
    std::fs::write(dir.0.join("picky.py"), format!("import sys\nif 'argparse' in sys.modules: sys.exit(3)\n{TOY}"))
        .unwrap();
    let run = fuzz(&dir.0, "1", &[], &["python3", "picky.py"]);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        "python server: a plain process per conversation, not the fork server: through the fork server its first \
         conversation exited with code 3, a plain process's did not"
    );
    assert!(matches!(run.code, Some(0 | 1)), "{}{}", run.stdout, run.stderr);
    // Opted out: no fork server is tried.
    let run = fuzz(&dir.0, "1", &["--no-fork-server"], &["python3", "server.py"]);
    assert!(run.stderr.starts_with("python server: a plain process per conversation (--no-fork-server)"));
    assert!(matches!(run.code, Some(0 | 1)), "{}{}", run.stdout, run.stderr);
}
