//! Sentinel barriers give the verdicts the clock gives: the same conversations, run through `mcp-wirefuzz serve
//! --mutant NAME` once with sentinel barriers (and process reuse) and once with reply timeouts and settle windows
//! only, break the same rules (on each bug's trigger and one generated conversation; the slow tier adds the
//! first that shows the bug); a dropped request is a finding in milliseconds; and the same seed gives the same
//! findings on a loaded machine (slow tier, `WIREFUZZ_SLOW=1`).

#[path = "common/tier.rs"]
mod tier;

use mcp_wirefuzz::campaign::conversation;
use mcp_wirefuzz::model::Eras;
use mcp_wirefuzz::oracle::check;
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::reference::Planted;
use mcp_wirefuzz::server::run_in_process;
use mcp_wirefuzz::server::transport::stdio::StdioTarget;
use mcp_wirefuzz::server::{ServerCommand, Target, Timeouts};
use mcp_wirefuzz::transcript::Input;
use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_mcp-wirefuzz");

fn serve(mutant: Mutant) -> ServerCommand {
    ServerCommand::from_argv(&[EXE.into(), "serve".into(), "--mutant".into(), mutant.name().into()]).unwrap()
}

/// The built-in server starts in milliseconds and exits at once when its input closes: a start-up allowance and a
/// shutdown budget of 2 s (not 10 s and 5 s) are ample, and are what a hang costs both targets. Its handlers answer
/// at once or never, so a call asked again needs no floor of waiting.
fn timeouts() -> Timeouts {
    let (reply, two) = (Duration::from_millis(800), Duration::from_secs(2));
    Timeouts {
        reply,
        startup: two,
        shutdown: two,
        hang: mcp_wirefuzz::server::hangs::HangWait::Wait(Duration::ZERO),
        ..Timeouts::default()
    }
}

/// The first conversation of `seed` that breaks the mutant's rule in-process.
fn trigger_index(mutant: Mutant, seed: u64) -> u64 {
    (0..100_000)
        .find(|&i| {
            let transcript = run_in_process(&Planted(mutant), &conversation(seed, i));
            check(&transcript, &mutant.policy()).iter().any(|f| f.rule == mutant.expected_rule())
        })
        .expect("every planted bug is found in-process")
}

fn rules(target: &mut dyn Target, inputs: &[Input], mutant: Mutant) -> BTreeSet<&'static str> {
    check(&target.run(inputs).unwrap(), &mutant.policy()).iter().map(|f| f.rule).collect()
}

#[test]
fn sentinel_barriers_give_the_clocks_verdicts_on_every_planted_bug() {
    // The mutants split among one thread per core: a clock run mostly waits out its settle windows.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..cores)
            .map(|first| scope.spawn(move || Mutant::ALL.iter().skip(first).step_by(cores).for_each(|&m| agree(m))))
            .collect();
        for thread in threads {
            thread.join().expect("a mutant's clock and sentinel verdicts agree");
        }
    });
}

/// Asserts the clock and sentinel barriers give the same verdicts on `mutant`'s conversations.
fn agree(mutant: Mutant) {
    let mut clock = StdioTarget::new(serve(mutant), timeouts());
    let mut fast = StdioTarget::new(serve(mutant), timeouts()).with_sentinels(Eras::Dual);
    // The bug's own trigger and the seed's first conversation; the slow tier adds the first generated conversation
    // that shows the bug (thousands in for some tool-level bugs: about 40 s to find in all).
    // The trigger ends on a sync point: on its last line some mutants crash, and a conversation that closes the
    // input right after it saw the exit as a close now and then on a loaded machine.
    let trigger: Vec<Input> = mutant.trigger().into_iter().map(Input::Line).chain([Input::Sync]).collect();
    let mut conversations = vec![("its trigger".to_string(), trigger), ("conversation 0".into(), conversation(1, 0))];
    if tier::asked() {
        let index = trigger_index(mutant, 1);
        conversations.push((format!("conversation {index}"), conversation(1, index)));
    }
    for (which, inputs) in conversations {
        let expected = rules(&mut clock, &inputs, mutant);
        if which == "its trigger" {
            assert!(expected.contains(mutant.expected_rule()), "{mutant}: its trigger breaks {expected:?}");
        }
        assert_eq!(rules(&mut fast, &inputs, mutant), expected, "{mutant}, {which}");
    }
}

/// A server that answers every request with an empty result, in order, but for `drop-me`, which it never answers.
const DROPPER: &str = r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message and message.get("method") not in (None, "drop-me"):
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "d", "version": "1"}}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result if message["method"] == "initialize" else {}}
        print(json.dumps(reply), flush=True)
"#;

#[test]
fn a_dropped_request_is_a_finding_in_milliseconds() {
    let Ok(python) = which("python3") else { return tier::skip("the dropped-request test", "no python3 on PATH") };
    let command = ServerCommand::from_argv(&[python, "-c".into(), DROPPER.into()]).unwrap();
    let slow = Timeouts { reply: Duration::from_secs(5), settle: Duration::from_secs(1), ..Timeouts::default() };
    let line = |text: &str| Input::Line(text.as_bytes().to_vec());
    let inputs = [
        line(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        ),
        line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        Input::Sync,
        line(r#"{"jsonrpc":"2.0","id":2,"method":"drop-me"}"#),
        line(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#),
        Input::Sync,
    ];
    let mut fast = StdioTarget::new(command.clone(), slow).with_sentinels(Eras::Handshake);
    fast.run(&[]).unwrap();
    let started = Instant::now();
    let transcript = fast.run(&inputs).unwrap();
    let elapsed = started.elapsed();
    let findings = check(&transcript, &mcp_wirefuzz::oracle::Policy::default());
    assert!(findings.iter().any(|f| f.rule == "JSONRPC-RESPONSE-MISSING"), "{}", transcript.render());
    // Start-up included, well under the reply timeout the clock waits.
    assert!(elapsed < slow.reply / 2, "took {elapsed:?}: {}", transcript.render());
    // The sentinels' lines are not in the transcript: what it holds is the conversation's own.
    assert_eq!(transcript.events.len(), inputs.len() + 2, "{}", transcript.render());
    // On the clock the same drop costs the reply timeout, and is the same finding.
    let started = Instant::now();
    let clock = StdioTarget::new(command, slow).run(&inputs).unwrap();
    assert!(started.elapsed() >= Duration::from_secs(5));
    assert_eq!(clock.events, transcript.events);
}

fn which(name: &str) -> Result<String, ()> {
    let paths = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
        .map(|path| path.display().to_string())
        .ok_or(())
}

/// Busy loops, one per core, beside the test.
struct Load(Vec<Child>);

impl Load {
    fn start() -> Load {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Load(
            (0..cores)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdout(Stdio::null())
                        .spawn()
                        .expect("sh starts")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The (rule, trigger) pairs a `fuzz` run of the CLI over stdio found (`loaded` names its scratch folder).
fn fuzz_findings(mutant: Mutant, loaded: bool) -> BTreeSet<String> {
    let dir = std::env::temp_dir().join(format!("wirefuzz-loaded-{}-{mutant}-{loaded}", std::process::id()));
    let json = dir.join("report.json");
    let output = Command::new(EXE)
        // Minimization (which the comparison does not look at) gets 5 runs. The built-in server takes neutral
        // sentinels, so no conversation here waits on the clock: a crash is read before stdin closes however slowly
        // it comes.
        .args(["fuzz", "--cases", "60", "--jobs", "2", "--seed", "7", "--shrink-budget", "5", "--out"])
        .arg(&dir)
        .arg("--json")
        .arg(&json)
        .args(["--", EXE, "serve", "--mutant", mutant.name()])
        .output()
        .unwrap();
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // Every (rule, trigger) seen, counted: which of them got one of a rule's 8 case files depends on which worker
    // saw it first, the set seen does not.
    let seen = report["trigger_counts"].as_object().cloned().unwrap_or_default();
    seen.iter()
        .flat_map(|(rule, triggers)| {
            let triggers = triggers.as_object().cloned().unwrap_or_default();
            triggers.keys().map(|trigger| format!("{rule} {trigger}")).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_findings_on_a_loaded_machine() {
    if !tier::slow("the loaded-machine run (busy loops on every core)") {
        return;
    }
    for mutant in [Mutant::DuplicateReply, Mutant::CrashOnBatch] {
        let quiet = fuzz_findings(mutant, false);
        assert!(quiet.iter().any(|f| f.contains(mutant.expected_rule())), "{mutant}: {quiet:?}");
        // A busy loop per core beside the run, at the run's own priority: it gets about half the CPU it would.
        // (Under `nice -n 19` it got a hundredth, and the four runs took five minutes.)
        let load = Load::start();
        let loaded = fuzz_findings(mutant, true);
        drop(load);
        assert_eq!(loaded, quiet, "{mutant}");
    }
}
