//! Verdict tables for two real MCP servers over Streamable HTTP: the Python SDK calc (`tests/servers/calc_http.py`,
//! mcp 2.3.0) and the TypeScript SDK calc (`tests/servers/node/ts-v1/calc_http_v1.mjs`, @modelcontextprotocol/sdk
//! 1.32.2). Both directions are asserted:
//!
//! - every vetted case of a server (its `http-cases/` folder) still breaks the rules it expects;
//! - `check`'s probes (every planted bug's trigger, every HTTP bug's trigger) and a seeded campaign report no
//!   MUST-level rule outside the server's vetted list ([`SERVERS`]), each entry with the spec line that makes it a
//!   bug. SHOULD-level findings are printed, not asserted.
//!
//! In the slow tier (`WIREFUZZ_SLOW=1`; `.ci/run` sets it); a server whose runtime is not installed is skipped
//! with a message.

#[path = "common/tier.rs"]
mod tier;

use mcp_wirefuzz::campaign::{self, Options};
use mcp_wirefuzz::case::Case;
use mcp_wirefuzz::model;
use mcp_wirefuzz::oracle::{Level, Policy, check};
use mcp_wirefuzz::server::builtin::http::HttpBug;
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::transport::http::HttpSpec;
use mcp_wirefuzz::server::{ServerCommand, ServerSpec, Target, Timeouts};
use mcp_wirefuzz::transcript::Input;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// One server, one test at a time (the machine's cores go to the server under test).
static TURN: Mutex<()> = Mutex::new(());

/// A real HTTP server and its verdict table.
struct Server {
    /// The start command before its port argument, relative to the repository root.
    argv: &'static [&'static str],
    /// What must exist before it can start, and the command that makes it.
    needs: (&'static str, &'static str),
    /// Its vetted case files.
    cases: &'static str,
    /// The MUST-level rules it may break, each with the spec line that makes it a real bug.
    must: &'static [(&'static str, &'static str)],
}

const BATCH: (&str, &str) = (
    "MCP-BATCH",
    "a batch on a session that negotiated 2025-03-26 is refused whole (Python: 400 and -32602 even for a batch of one \
     valid request; TypeScript: 400 and one id-less -32700 when an item is invalid, so its valid requests go \
     unanswered): 2025-03-26 basic/index.mdx §Batching (MUST support receiving JSON-RPC batches), JSON-RPC 2.0 §6",
);

const PYTHON: Server = Server {
    argv: &[".venv/bin/python", "tests/servers/calc_http.py"],
    needs: (".venv/bin/python", ".ci/python-venv"),
    cases: "tests/servers/python/http-cases",
    must: &[BATCH],
};

const TS_V1: Server = Server {
    argv: &["node", "tests/servers/node/ts-v1/calc_http_v1.mjs"],
    needs: ("tests/servers/node/ts-v1/node_modules/@modelcontextprotocol/sdk/package.json", ".ci/node-servers"),
    cases: "tests/servers/node/ts-v1/http-cases",
    must: &[
        BATCH,
        (
            "HTTP-ORIGIN",
            "an initialize from Origin http://evil.example is served 200: createMcpExpressApp validates the Host \
             header only; 2025-11-25 basic/transports.mdx §Security Warning (servers MUST validate Origin, and MUST \
             answer 403 when it is present and invalid)",
        ),
        (
            "HTTP-SESSION-DELETED",
            "after DELETE ended the session (200), a request carrying its id gets 400 from the session routing the \
             SDK's README shows (unknown session: 400): 2025-11-25 basic/transports.mdx §Session Management 3 (MUST \
             answer 404 for a terminated session)",
        ),
    ],
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The server started by the harness on a free port, or `None` (with a message) when the gate is off or its
/// runtime is missing.
fn spec(server: &Server) -> Option<HttpSpec> {
    if !tier::slow(&format!("the real-server HTTP verdicts of {}", server.argv[1])) {
        return None;
    }
    let (needed, maker) = server.needs;
    if !root().join(needed).exists() {
        tier::skip(
            &format!("the real-server HTTP verdicts of {}", server.argv[1]),
            &format!("{needed} is missing; run {maker}"),
        );
        return None;
    }
    let port = free_port();
    let mut argv: Vec<String> = server.argv.iter().map(|a| root().join(a).to_string_lossy().into_owned()).collect();
    argv[0] = if Path::new(server.argv[0]).components().count() > 1 { argv[0].clone() } else { server.argv[0].into() };
    argv.push(port.to_string());
    let command = ServerCommand::from_argv(&argv).unwrap();
    Some(HttpSpec::new(&format!("http://127.0.0.1:{port}/mcp"), Some(command)).unwrap())
}

fn timeouts() -> Timeouts {
    Timeouts { reply: Duration::from_secs(5), ..Timeouts::default() }
}

/// The MUST-level rules outside the vetted list.
fn unvetted(server: &Server, rules: impl IntoIterator<Item = &'static str>) -> BTreeSet<&'static str> {
    let levels = |rule: &str| mcp_wirefuzz::oracle::rule(rule).map(|r| r.level);
    rules
        .into_iter()
        .filter(|rule| levels(rule) == Some(Level::Error))
        .filter(|rule| !server.must.iter().any(|(vetted, _)| vetted == rule))
        .collect()
}

fn verdicts(server: &Server) {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let Some(spec) = spec(server) else { return };
    let mut target = spec.target(timeouts());
    // Every vetted case still breaks its rules.
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(root().join(server.cases)).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    assert!(!paths.is_empty(), "no vetted cases in {}", server.cases);
    for path in paths {
        let case = Case::load(&path).unwrap();
        let transcript = target.run(&case.inputs).unwrap();
        let fired: Vec<&str> = check(&transcript, &case.policy()).iter().map(|f| f.rule).collect();
        for rule in &case.expect {
            assert!(fired.contains(&rule.as_str()), "{}: {rule} did not fire\n{}", path.display(), transcript.render());
        }
    }
    // The probes of `check`, judged with the probed model.
    let model = mcp_wirefuzz::learn::probe::probe(&mut target).unwrap();
    let judged = Policy::default().with_model(model.clone());
    let triggers = Mutant::ALL.iter().map(|m| m.trigger()).chain(HttpBug::ALL.iter().map(|b| b.trigger()));
    let mut probed = Vec::new();
    for trigger in triggers {
        let inputs: Vec<Input> = trigger.into_iter().map(Input::Line).collect();
        let findings = check(&target.run(&inputs).unwrap(), &judged);
        findings.iter().filter(|f| f.level == Level::Warning).for_each(|f| eprintln!("probe: {f}"));
        probed.extend(findings.iter().map(|f| f.rule));
    }
    // Both servers serve the legacy era too, so the rules for modern-only servers never judge them.
    assert_ne!(model.eras, model::Eras::Modern, "{model}");
    assert!(!probed.iter().any(|rule| rule.starts_with("HTTP-MODERN-")), "{probed:?}");
    assert_eq!(unvetted(server, probed), BTreeSet::new(), "MUST findings of the probes outside the vetted list");
    // A seeded campaign, two workers sharing the one server process.
    let server_spec = ServerSpec::Http(spec);
    let options = Options {
        seed: 1,
        cases: Some(300),
        time: None,
        confirm_time: None,
        policy: judged,
        out: None,
        shrink: mcp_wirefuzz::shrink::Budget { runs: 100, time: Some(Duration::from_secs(20)) },
        baseline: Default::default(),
        strict: false,
        prelude: Vec::new(),
    };
    let targets = (0..2).map(|_| server_spec.pooled_target(timeouts())).collect();
    let shrinker = server_spec.pooled_target(timeouts());
    let summary = campaign::run(targets, shrinker, &options, &server_spec, |_| {}).unwrap();
    eprintln!("{model}; campaign: {:?}", summary.counts);
    assert!(!summary.counts.keys().any(|rule| rule.starts_with("HTTP-MODERN-")), "{:?}", summary.counts);
    assert_eq!(unvetted(server, summary.counts.keys().copied()), BTreeSet::new(), "{:?}", summary.counts);
}

#[test]
fn python_sdk_over_http() {
    verdicts(&PYTHON);
}

#[test]
fn typescript_sdk_v1_over_http() {
    verdicts(&TS_V1);
}
