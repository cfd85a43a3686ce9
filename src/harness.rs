//! Three entry points for fuzzing your own Rust server in-process (an [`InProcessServer`]: your own, an
//! [`crate::server::async_lines::AsyncLines`] async server, or an rmcp handler in `server::rmcp::Rmcp`):
//!
//! - [`fuzz`]: the body of a `cargo fuzz` target (the fuzzer's bytes become a script);
//! - [`property`]: a proptest property (failures persist in your `proptest-regressions/`, and shrink to a small
//!   script printed as a case file);
//! - [`replay`]: a test that replays every case file (and libFuzzer `crash-*` artifact) in a folder and fails on
//!   any the server still breaks.
//!
//! And one for a change to a working server: [`same_answers`], a test that the server as it was and as it is now
//! answer alike (the differential `mcp-wirefuzz diff`, in-process).
//!
//! Each learns the server first, in-process, as `mcp-wirefuzz fuzz` learns a child process: its model (the eras and
//! versions it serves, unless the policy states one) and its surface (its tools, prompts, resources and their
//! schemas, see [`crate::learn::in_process`]). Conversations call the server's own tools with arguments drawn
//! from their schemas, and are judged with that model and surface, so the tool rules (`MCP-TOOL-OUTPUT-SCHEMA`,
//! `MCP-TOOL-VALID-ARGS`, ...) judge your handlers. [`property`] and [`replay`] learn once per call; [`fuzz`],
//! which libFuzzer calls once per input, once per process.
//!
//! Each checks under the default policy; the `*_under` forms take a [`Policy`] (a profile, rules allowed or
//! denied, a server model, the SDK: a finding that matches one of its known deviations, `crate::sdk`, is the SDK's
//! and does not fail). Whatever the policy, a panic of the server is a finding: a policy that allows
//! `SERVER-CRASH` lets the server end a connection, never panic.
//! `mcp-wirefuzz init` writes the three files into your crate.

use crate::case::Case;
use crate::learn::in_process::{judged, judged_once, surface_of};
use crate::model::Eras;
use crate::oracle::rules::{FRAMING, SERVER_CRASH, SERVER_HANG, SERVER_SHUTDOWN};
use crate::oracle::{Finding, Policy, check};
use crate::script::{Script, session};
use crate::server::{InProcess, InProcessServer, ServerSpec, run_in_process};
use crate::transcript::{Ending, Input, Transcript};
use proptest::test_runner::{Config, FailurePersistence, FileFailurePersistence, TestCaseError, TestError, TestRunner};
use std::path::Path;

/// How many generated conversations [`same_answers`] sends after the sweep.
const SAME_ANSWERS_CASES: u64 = 2_000;

/// A test that `old` and `new` (your server before and after a change: a refactoring, an SDK upgrade) answer alike:
/// both are learned, then the sweep over what both list and 2,000 generated conversations (seed 1) go to both,
/// compared as `mcp-wirefuzz diff` compares two servers (message texts, server names and versions, timestamps and
/// created ids left out). Panics with each divergence, minimized, as a diff case file (class, method, place, the
/// conversation and both sides' replies).
///
/// ```no_run
/// # use mcp_wirefuzz::server::builtin::reference::Calc as OldServer;
/// # use mcp_wirefuzz::server::builtin::reference::Calc as NewServer;
/// // tests/same_answers.rs: the server as the last release had it (a copy, or the crate of that version renamed in
/// // Cargo.toml) against the server as it is now.
/// #[test]
/// fn the_change_keeps_every_answer() {
///     mcp_wirefuzz::harness::same_answers(&OldServer, &NewServer);
/// }
/// ```
pub fn same_answers<A: InProcessServer + Sync, B: InProcessServer + Sync>(old: &A, new: &B) {
    use crate::diff::{self, Conversations, Options, accepted::Accepted, case::DiffCase, case::SideSpec};
    let (old_policy, new_policy) = (judged(old, &Policy::default()), judged(new, &Policy::default()));
    let eras = |policy: &Policy| policy.model().map_or(Eras::Unknown, |model| model.eras);
    let shared = (*surface_of(&old_policy)).clone().shared_with(&surface_of(&new_policy));
    let both = match (eras(&old_policy), eras(&new_policy)) {
        (Eras::Dual, other) | (other, Eras::Dual) => other,
        (old, _) => old,
    };
    let sides = (SideSpec::Server(ServerSpec::BuiltIn), SideSpec::Server(ServerSpec::BuiltIn));
    let options = Options {
        conversations: Conversations::generated(1, std::sync::Arc::new(shared), both),
        cases: None,
        time: None,
        stop_after: None,
        ignore: diff::Ignore::default(),
        eras: Some((eras(&old_policy), eras(&new_policy))).filter(|(a, b)| *a != Eras::Unknown && *b != Eras::Unknown),
        out: None,
        shrink: crate::shrink::Budget::default(),
        accepted: Accepted::default(),
        sides: sides.clone(),
    };
    let sweep = options.conversations.sweep_len() as u64;
    let options = Options { cases: Some(sweep + SAME_ANSWERS_CASES), ..options };
    let summary = diff::run(&mut InProcess(old), &mut InProcess(new), &options, |_| {})
        .unwrap_or_else(|error| panic!("the comparison could not run: {error:#}"));
    let failing: Vec<String> = summary
        .found
        .iter()
        .filter(|found| found.fails())
        .map(|found| {
            let case = DiffCase::for_found(found, &sides, &options.ignore, options.eras).render();
            format!("[{}] {} at {}\n{case}", found.divergence.class, found.divergence.method, found.divergence.at)
        })
        .collect();
    assert!(
        failing.is_empty(),
        "the old and the new server differ in {} way(s); each below as a diff case, whose side A (`a<<`) is the old \
         server and side B (`b<<`) the new one:\n\n{}",
        failing.len(),
        failing.join("\n")
    );
}

/// The exit code of a Rust process that panicked, as the harness records a panic of an in-process server.
const PANIC_CODE: i32 = 101;

/// The body of a `cargo fuzz` target: builds a script from the fuzzer's bytes, runs it on a fresh connection of
/// `server` and panics (a crash for libFuzzer) with the broken rules, the transcript and a case file when the
/// server breaks a rule. The server's model and surface are learned the first time in the process (for each server
/// type), and kept: the same bytes always make the same conversation.
///
/// ```
/// # use mcp_wirefuzz::server::builtin::reference::Calc as MyServer;
/// // fuzz/fuzz_targets/wirefuzz.rs:
/// // #![no_main]
/// // libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_wirefuzz::harness::fuzz(&MyServer, data));
/// mcp_wirefuzz::harness::fuzz(&MyServer, b"bytes from the fuzzer");
/// ```
pub fn fuzz<S: InProcessServer + 'static>(server: &S, data: &[u8]) {
    fuzz_under(server, data, &Policy::default());
}

/// [`fuzz`] under a policy.
///
/// ```
/// # use mcp_wirefuzz::server::builtin::reference::Calc as MyServer;
/// let policy = mcp_wirefuzz::oracle::Policy::default().allow("MCP-BATCH").unwrap();
/// mcp_wirefuzz::harness::fuzz_under(&MyServer, b"bytes from the fuzzer", &policy);
/// ```
pub fn fuzz_under<S: InProcessServer + 'static>(server: &S, data: &[u8], policy: &Policy) {
    let policy = judged_once(server, policy);
    if let Err(report) = verdict(server, &script_of(data, &policy).encode_on(&surface_of(&policy)), &policy) {
        panic!("{report}");
    }
}

/// A proptest property: learns the server's model and surface, runs generated scripts (proptest's default number
/// of cases, or `PROPTEST_CASES`) on `server` and panics with the smallest failing script, as a readable report
/// and a case file to keep, when the server breaks a rule. Failing seeds persist in the crate's
/// `proptest-regressions/STEM.txt` (STEM: the calling test file's name), and run first next time.
///
/// ```
/// # use mcp_wirefuzz::server::builtin::reference::Calc as MyServer;
/// // tests/wirefuzz_properties.rs, in a #[test] function:
/// mcp_wirefuzz::harness::property(&MyServer);
/// ```
#[track_caller]
pub fn property<S: InProcessServer>(server: &S) {
    property_under(server, &Policy::default(), Config::default());
}

/// [`property`] under a policy and a proptest configuration (its `cases`; its `failure_persistence`, when it is
/// not proptest's default; `PROPTEST_DISABLE_FAILURE_PERSISTENCE` turns persistence off).
///
/// ```
/// # use mcp_wirefuzz::server::builtin::reference::Calc as MyServer;
/// use proptest::test_runner::Config;
///
/// let policy = mcp_wirefuzz::oracle::Policy::default().with_profile("strict-jsonrpc").unwrap();
/// mcp_wirefuzz::harness::property_under(&MyServer, &policy, Config { cases: 50, ..Config::default() });
/// ```
#[track_caller]
pub fn property_under<S: InProcessServer>(server: &S, policy: &Policy, config: Config) {
    let mut config = config;
    let caller = std::panic::Location::caller().file();
    config.source_file.get_or_insert(caller);
    let default = FileFailurePersistence::default();
    if config.failure_persistence.as_deref().is_some_and(|p| FailurePersistence::eq(p, &default)) {
        config.failure_persistence = Some(Box::new(FileFailurePersistence::Direct(regressions_file(caller))));
    }
    let policy = &judged(server, policy);
    let surface = surface_of(policy);
    let mut runner = TestRunner::new(config);
    let strategy = session::scripts_for(surface.tools.len(), eras_of(policy));
    let outcome = runner.run(&strategy, |script| {
        verdict(server, &script.encode_on(&surface), policy).map_err(|_| TestCaseError::fail("the server broke a rule"))
    });
    match outcome {
        Ok(()) => {}
        Err(TestError::Fail(_, minimal)) => match verdict(server, &minimal.encode_on(&surface), policy) {
            // The case file ends the report, so it can be copied whole: the way to run it again comes first.
            Err(report) => panic!(
                "mcp-wirefuzz: the smallest failing script proptest found (reproduce: {}):\n{report}",
                rerun(caller)
            ),
            Ok(()) => {
                panic!("mcp-wirefuzz: the server broke a rule, but not again on the smallest script: {minimal:?}")
            }
        },
        Err(TestError::Abort(reason)) => panic!("mcp-wirefuzz: proptest gave up: {reason}"),
    }
}

/// The script a fuzz target's input (or a libFuzzer artifact) gives under a learned policy: a tool session or a
/// generic script ([`session::script_from_bytes`]).
fn script_of(data: &[u8], policy: &Policy) -> Script {
    session::script_from_bytes(data, policy.surface().map_or(0, |s| s.tools.len()), eras_of(policy))
}

/// The eras of the learned model (unknown when none was learned).
fn eras_of(policy: &Policy) -> Eras {
    policy.model().map_or(Eras::Unknown, |model| model.eras)
}

/// How to run the property of the test in `source` (a path as `file!()` gives it) again: its failing seed persists
/// and runs first.
fn rerun(source: &str) -> String {
    let path = Path::new(source);
    let stem = path.file_stem().map_or("wirefuzz".into(), |s| s.to_string_lossy());
    let command = match path.parent() {
        Some(dir) if dir == Path::new("tests") => format!("`cargo test --test {stem}`"),
        _ => "this test again".to_string(),
    };
    format!("{command} runs the failing seed first (proptest keeps it in {})", regressions_file(source))
}

/// Where the property of the test in `source` (a path as `file!()` gives it) persists failing seeds:
/// `proptest-regressions/STEM.txt`, relative to the crate's root (where `cargo test` runs tests).
fn regressions_file(source: &str) -> &'static str {
    let stem = Path::new(source).file_stem().map_or("wirefuzz".into(), |s| s.to_string_lossy());
    Box::leak(format!("proptest-regressions/{stem}.txt").into_boxed_str())
}

/// A regression test: replays every case file (`*.case`, as `mcp-wirefuzz` and the reports of [`fuzz`] and
/// [`property`] write them) and every libFuzzer artifact (`crash-*`, the bytes [`fuzz`] was given) in `dir` on a
/// fresh connection of `server`, and panics naming each one the server still breaks (a case's `expect:` rules,
/// and any other rule the policy checks), and each case that expects a rule an in-process replay cannot judge
/// (an HTTP rule, `SERVER-SHUTDOWN`, and for a case found over stdio or HTTP `JSONRPC-FRAMING` and `SERVER-HANG`):
/// such a case is replayed with `mcp-wirefuzz replay`, not here. The server's model and surface are learned once
/// per call. A missing folder holds no cases.
///
/// ```
/// # use mcp_wirefuzz::server::builtin::reference::Calc as MyServer;
/// // tests/wirefuzz_replay.rs, in a #[test] function:
/// mcp_wirefuzz::harness::replay(&MyServer, concat!(env!("CARGO_MANIFEST_DIR"), "/wirefuzz-cases"));
/// ```
pub fn replay<S: InProcessServer>(server: &S, dir: impl AsRef<Path>) {
    replay_under(server, dir, &Policy::default());
}

/// [`replay`] under a policy (a case's own `allow:` and `deny:` lines, and its `expect:` rules, apply on top).
///
/// ```
/// # use mcp_wirefuzz::server::builtin::reference::Calc as MyServer;
/// let policy = mcp_wirefuzz::oracle::Policy::default().allow("MCP-BATCH").unwrap();
/// mcp_wirefuzz::harness::replay_under(&MyServer, "wirefuzz-cases", &policy);
/// ```
pub fn replay_under<S: InProcessServer>(server: &S, dir: impl AsRef<Path>, policy: &Policy) {
    let failures = replay_failures(server, dir.as_ref(), policy);
    if !failures.is_empty() {
        panic!(
            "mcp-wirefuzz: {} of the cases in {} fail:\n\n{}",
            failures.len(),
            dir.as_ref().display(),
            failures.join("\n\n")
        );
    }
}

/// What [`replay_under`] reports: one entry per case file the server breaks (or that cannot be read, or whose
/// expected rule an in-process replay cannot judge).
///
/// ```
/// # use mcp_wirefuzz::server::builtin::reference::Calc as MyServer;
/// let policy = mcp_wirefuzz::oracle::Policy::default();
/// let failures = mcp_wirefuzz::harness::replay_failures(&MyServer, "wirefuzz-cases".as_ref(), &policy);
/// assert!(failures.is_empty());
/// ```
pub fn replay_failures<S: InProcessServer>(server: &S, dir: &Path, policy: &Policy) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.retain(|path| {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        name.ends_with(".case") || name.starts_with("crash-")
    });
    if paths.is_empty() {
        return Vec::new();
    }
    paths.sort();
    let learned = judged(server, policy);
    paths.iter().filter_map(|path| replay_one(server, path, &learned).err()).collect()
}

/// Replays one case file (`*.case`) or libFuzzer artifact (`crash-*`) under `learned` (the policy with the
/// server's model and surface); `Err` naming the file when it fails.
fn replay_one<S: InProcessServer>(server: &S, path: &Path, learned: &Policy) -> Result<(), String> {
    let shown = path.display();
    let (inputs, policy) = if path.extension().is_some_and(|e| e == "case") {
        let case = Case::load(path).map_err(|error| format!("{shown}: {error:#}"))?;
        let unjudged: Vec<String> = case
            .expect
            .iter()
            .filter_map(|rule| not_judged_in_process(rule, &case).map(|why| format!("{rule} ({why})")))
            .collect();
        if !unjudged.is_empty() {
            return Err(format!(
                "{shown}: expects {}, which an in-process replay cannot judge, so it cannot tell whether the bug is \
                 fixed; replay this case with `mcp-wirefuzz replay {shown}` (over stdio or HTTP, with `-- YOUR SERVER \
                 COMMAND` when it names none), and keep it out of this folder",
                unjudged.join(", "),
            ));
        }
        (case.inputs.clone(), case_policy(&case, learned))
    } else {
        let bytes = std::fs::read(path).map_err(|error| format!("{shown}: {error}"))?;
        (script_of(&bytes, learned).encode_on(&surface_of(learned)), learned.clone())
    };
    verdict(server, &inputs, &policy).map_err(|report| format!("{shown}:\n{report}"))
}

/// Why an in-process replay cannot judge `rule` as `case` expects it to fire, or `None` when it can: the rule needs
/// what an in-process connection does not have or does not show.
fn not_judged_in_process(rule: &str, case: &Case) -> Option<&'static str> {
    let found_elsewhere = case.command.is_some() || case.url.is_some();
    match rule {
        _ if rule.starts_with("HTTP-") => Some("an HTTP rule: an in-process connection has no HTTP exchanges"),
        SERVER_SHUTDOWN => Some("an in-process connection is never closed and waited on to exit"),
        FRAMING if found_elsewhere => Some(
            "found over stdio or HTTP: what a process prints on its stdout is not a line an in-process connection \
             returns",
        ),
        SERVER_HANG if found_elsewhere => Some(
            "found over stdio or HTTP: there a hang is a reply that did not come within the reply timeout, which \
             an in-process connection does not wait for",
        ),
        _ => None,
    }
}

/// `base` with a case's `allow:` and `deny:` lines, its `expect:` rules on, and its `eras:` as the server model.
fn case_policy(case: &Case, base: &Policy) -> Policy {
    let base = match case.eras {
        Some(eras) => base.clone().with_model(crate::model::ServerModel::stated(eras)),
        None => base.clone(),
    };
    let allowed = case.allow.iter().fold(base, |p, rule| p.clone().allow(rule).unwrap_or(p));
    let denied = case.deny.iter().fold(allowed, |p, rule| p.clone().deny(rule).unwrap_or(p));
    case.expect.iter().fold(denied, |p, rule| p.clone().deny(rule).unwrap_or(p))
}

/// Runs `inputs` on a fresh connection and checks the transcript; `Err` with the broken rules, the transcript and
/// the case file of the first finding. A panic is checked as `SERVER-CRASH` whatever the policy.
fn verdict<S: InProcessServer>(server: &S, inputs: &[Input], policy: &Policy) -> Result<(), String> {
    let transcript = run_in_process(server, inputs);
    let findings = if panicked(&transcript) {
        check(&transcript, &policy.clone().deny(SERVER_CRASH).unwrap_or_else(|_| policy.clone()))
    } else {
        check(&transcript, policy)
    };
    let findings = crate::sdk::yours(&transcript, findings, policy);
    match findings.first() {
        None => Ok(()),
        Some(first) => Err(report(inputs, &transcript, &findings, first, policy)),
    }
}

/// True when the server panicked (an in-process server's panic is recorded as exit code 101).
fn panicked(transcript: &Transcript) -> bool {
    matches!(transcript.ending, Ending::Exited { code: Some(PANIC_CODE), signal: None, .. })
}

/// The readable report of a failure: the broken rules, the transcript, and a case file to keep.
fn report(inputs: &[Input], transcript: &Transcript, findings: &[Finding], first: &Finding, policy: &Policy) -> String {
    let broken: Vec<String> = findings.iter().map(ToString::to_string).collect();
    let case = Case::for_finding(inputs, transcript, first, &ServerSpec::BuiltIn, policy);
    let learned = match (policy.model(), policy.surface()) {
        (Some(model), Some(surface)) => format!("server model: {model}\nserver surface: {surface}\n"),
        _ => String::new(),
    };
    format!(
        "mcp-wirefuzz: broke {}\n{}\n{learned}{}\nTo keep it as a regression test, save this as wirefuzz-cases/NAME.case \
         (the replay test, `cargo test --test wirefuzz_replay` as `mcp-wirefuzz init` writes it, then fails until the \
         bug is fixed):\n{}",
        findings.iter().map(|f| f.rule).collect::<Vec<_>>().join(", "),
        broken.join("\n"),
        transcript.render(),
        case.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::builtin::mutants::Mutant;
    use crate::server::builtin::reference::{Calc, Planted};

    /// The bytes of a generated conversation that `server` fails under `policy` (its model and surface learned).
    fn failing_bytes<S: InProcessServer>(server: &S, policy: &Policy) -> Vec<u8> {
        let policy = judged(server, policy);
        (0..3000)
            .map(|i| crate::campaign::conversation_bytes(0, i))
            .find(|bytes| verdict(server, &script_of(bytes, &policy).encode_on(&surface_of(&policy)), &policy).is_err())
            .expect("found in 3,000 conversations")
    }

    fn message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
        let panic = std::panic::catch_unwind(f).expect_err("expected a failure");
        panic.downcast_ref::<String>().cloned().unwrap_or_default()
    }

    #[test]
    fn fuzz_panics_with_a_readable_report_only_on_a_finding() {
        fuzz(&Calc, b"any bytes at all");
        let failing = failing_bytes(&Planted(Mutant::IdAsString), &Policy::default());
        let report = message(|| fuzz(&Planted(Mutant::IdAsString), &failing));
        assert!(report.starts_with("mcp-wirefuzz: broke ") && report.contains("JSONRPC-ID-ECHO"), "{report}");
        assert!(report.contains("# mcp-wirefuzz case\n") && report.contains("expect: "), "{report}");
        // A server that echoes ids as strings answers no probe and no list under its id: nothing is learned.
        assert!(report.contains("server model: eras unknown") && report.contains("surface: 0 tools"), "{report}");
    }

    #[test]
    fn a_panic_is_a_finding_even_where_the_policy_allows_crashes() {
        let lenient = Policy::default().allow(SERVER_CRASH).unwrap();
        let trigger: Vec<Input> = Mutant::CrashOnBatch.trigger().into_iter().map(Input::Line).collect();
        let exited = verdict(&Planted(Mutant::CrashOnBatch), &trigger, &lenient);
        assert_eq!(exited, Ok(()), "crash-on-batch exits (code 1): allowed");
        struct Panics;
        impl InProcessServer for Panics {
            type Connection = Panics;
            fn connect(&self) -> Panics {
                Panics
            }
        }
        impl crate::server::ServerConnection for Panics {
            fn receive(&mut self, _: &[u8], _: &mut Vec<Vec<u8>>) -> crate::server::Status {
                panic!("handler bug")
            }
        }
        let report = verdict(&Panics, &trigger, &lenient).unwrap_err();
        assert!(report.contains("SERVER-CRASH") && report.contains("handler bug"), "{report}");
    }

    #[test]
    fn the_property_finds_shrinks_and_persists() {
        let dir = std::env::temp_dir().join(format!("wirefuzz-harness-{}", std::process::id()));
        let persisted = dir.join("regressions.txt");
        let config = || Config {
            cases: 2_000,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(Box::leak(
                persisted.to_string_lossy().into_owned().into_boxed_str(),
            )))),
            ..Config::default()
        };
        assert_eq!(regressions_file("tests/my_server.rs"), "proptest-regressions/my_server.txt");
        let report = message(|| property_under(&Planted(Mutant::IdAsString), &Policy::default(), config()));
        assert!(report.contains("smallest failing script") && report.contains("JSONRPC-ID-ECHO"), "{report}");
        assert!(report.contains("reproduce: this test again runs the failing seed first"), "{report}");
        assert!(rerun("tests/wirefuzz_properties.rs").starts_with("`cargo test --test wirefuzz_properties` runs"));
        assert!(std::fs::read_to_string(&persisted).unwrap().contains("cc "), "the failing seed persists");
        property_under(
            &Calc,
            &Policy::default(),
            Config { cases: 100, failure_persistence: None, ..Config::default() },
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn replay_fails_on_the_cases_the_server_breaks_and_reads_artifacts() {
        let dir = std::env::temp_dir().join(format!("wirefuzz-replay-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(replay_failures(&Calc, &dir, &Policy::default()).is_empty(), "no folder, no cases");
        let inputs: Vec<Input> = Mutant::IdAsString.trigger().into_iter().map(Input::Line).collect();
        let case = Case { expect: vec!["JSONRPC-ID-ECHO".into()], inputs, ..Case::default() };
        case.save(&dir, "id-as-string").unwrap();
        std::fs::write(dir.join("notes.txt"), "not a case").unwrap();
        replay(&Calc, &dir);
        let failures = replay_failures(&Planted(Mutant::IdAsString), &dir, &Policy::default());
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].contains("id-as-string.case") && failures[0].contains("JSONRPC-ID-ECHO"));
        let failing = failing_bytes(&Planted(Mutant::IdAsString), &Policy::default());
        std::fs::write(dir.join("crash-0123"), failing).unwrap();
        assert_eq!(replay_failures(&Planted(Mutant::IdAsString), &dir, &Policy::default()).len(), 2);
        std::fs::write(dir.join("broken.case"), "not a case file").unwrap();
        let failures = replay_failures(&Calc, &dir, &Policy::default());
        assert!(failures.len() == 1 && failures[0].contains("broken.case"), "{failures:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_case_whose_rule_is_not_judged_in_process_fails_the_replay_naming_it() {
        let dir = std::env::temp_dir().join(format!("wirefuzz-unjudged-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let inputs: Vec<Input> = Mutant::LogOnStdout.trigger().into_iter().map(Input::Line).collect();
        let in_process = Case { expect: vec![FRAMING.into()], inputs, ..Case::default() };
        in_process.save(&dir, "log-line").unwrap();
        assert!(replay_failures(&Calc, &dir, &Policy::default()).is_empty(), "judged, no longer fires: fixed");
        let command = Some(vec!["my-server".to_string()]);
        Case { command: command.clone(), ..in_process.clone() }.save(&dir, "log-line").unwrap();
        let failures = replay_failures(&Calc, &dir, &Policy::default());
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].contains("log-line.case: expects JSONRPC-FRAMING") && failures[0].contains("cannot judge"));
        assert!(failures[0].contains("mcp-wirefuzz replay"), "{}", failures[0]);
        let id_echo = Case { expect: vec!["JSONRPC-ID-ECHO".into()], command, ..in_process.clone() };
        assert_eq!(not_judged_in_process("JSONRPC-ID-ECHO", &id_echo), None, "judged whatever the transport");
        assert_eq!(not_judged_in_process(SERVER_HANG, &in_process), None, "an in-process hang is seen");
        assert!(not_judged_in_process(SERVER_HANG, &id_echo).is_some());
        assert!(not_judged_in_process("HTTP-ORIGIN", &in_process).is_some());
        assert!(not_judged_in_process(SERVER_SHUTDOWN, &in_process).is_some());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
