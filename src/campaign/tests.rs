//! The campaign's tests: the same seed gives the same conversations; a finding is on disk at once and minimized
//! after (one case file per trigger, a bounded number per rule, within the time left); baselined rules are not
//! minimized; a panicking or late worker; a finding is confirmed before it counts, and one that does not come back
//! (or, resting on silence, does not with stretched waits) is unconfirmed.

use super::*;
use crate::oracle::Level;
use crate::oracle::rules::RESPONSE_MISSING;
use crate::server::builtin::mutants::Mutant;
use crate::shrink::minimize_finding;
use crate::transcript::{Ending, Event};

fn options(cases: u64, out: Option<PathBuf>) -> Options {
    let shrink = Budget { runs: 500, time: None };
    Options {
        seed: 5,
        cases: Some(cases),
        time: None,
        confirm_time: None,
        policy: Policy::default(),
        out,
        shrink,
        baseline: Baseline::default(),
        strict: false,
        prelude: Vec::new(),
    }
}

fn campaign(server: &ServerSpec, jobs: usize, options: &Options) -> Summary {
    let targets = (0..jobs).map(|_| server.pooled_target(Default::default())).collect();
    run(targets, server.target(Default::default()), options, server, |_| {}).unwrap()
}

#[test]
fn the_same_seed_gives_the_same_conversations() {
    assert_eq!(conversation(5, 17), conversation(5, 17));
    assert_ne!(conversation(5, 17), conversation(6, 17));
    let summary = campaign(&ServerSpec::BuiltIn, 2, &options(300, None));
    assert_eq!(summary.conversations, 300);
    assert!(summary.found.is_empty(), "{:?}", summary.found.first().map(|f| &f.finding));
}

#[test]
fn a_finding_is_minimized_and_written_as_found() {
    let dir = std::env::temp_dir().join(format!("wirefuzz-campaign-{}", std::process::id()));
    let server = ServerSpec::Mutant(Mutant::NoCacheHints);
    let summary = campaign(&server, 1, &options(200, Some(dir.clone())));
    assert_eq!(summary.broken(), ["MCP-CACHE-HINTS"]);
    let found = &summary.found[0];
    let written = Case::load(found.case_file.as_ref().unwrap()).unwrap();
    assert_eq!(written, found.case);
    assert_eq!(written.mutant, Some(Mutant::NoCacheHints));
    assert!(written.inputs.len() <= 2, "{:?}", written.inputs);
    assert!(summary.counts["MCP-CACHE-HINTS"] >= 1);
    // The verdict line says at which level the run fails.
    let shown = crate::report::human::summary(&summary, &Baseline::default());
    let count = summary.found.iter().filter(|f| summary.failing(f, &Baseline::default())).count();
    assert!(shown.contains(&format!("verdict: failed (exit 1): {count} MUST finding(s)\n")), "{shown}");
    // The same findings at SHOULD: the run is red on SHOULD findings alone, and says so.
    let mut should = summary.clone();
    should.found.iter_mut().for_each(|f| f.finding.level = crate::oracle::Level::Warning);
    let shown = crate::report::human::summary(&should, &Baseline::default());
    assert!(shown.contains(&format!(": {count} SHOULD finding(s), no MUST finding")), "{shown}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn baselined_rules_are_reported_but_not_minimized() {
    let dir = std::env::temp_dir().join(format!("wirefuzz-campaign-baselined-{}", std::process::id()));
    let server = ServerSpec::Mutant(Mutant::NoCacheHints);
    let mut options = options(200, Some(dir.clone()));
    options.baseline = Baseline::parse("MCP-CACHE-HINTS # known").unwrap();
    let summary = campaign(&server, 1, &options);
    let found = &summary.found[0];
    assert_eq!(found.case.inputs, conversation(5, found.conversation));
    assert_eq!(found.confirmation, Confirmation::Baselined, "not run again: it fails nothing");
    assert!(!found.minimized, "not minimized either");
    let text = std::fs::read_to_string(found.case_file.as_ref().unwrap()).unwrap();
    assert!(text.lines().nth(1) == Some(super::BASELINED), "{text}");
    assert_eq!(Case::load(found.case_file.as_ref().unwrap()).unwrap(), found.case, "the file replays as seen");
    assert!(!summary.fails(&options.baseline));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Crashes on its first conversation only.
struct OnceBroken(bool);

impl Target for OnceBroken {
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        let mut transcript = crate::server::run_in_process(&crate::server::builtin::reference::Calc, inputs);
        if !std::mem::replace(&mut self.0, true) {
            transcript.ending = Ending::Exited { code: Some(9), signal: None, stderr_tail: Vec::new() };
        }
        Ok(transcript)
    }
}

/// The built-in server, but the replies to requests `deaf` picks are lost: each such request breaks
/// JSONRPC-RESPONSE-MISSING, with the request's trigger.
struct Deaf(fn(&serde_json::Map<String, serde_json::Value>) -> bool);

impl Target for Deaf {
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        let mut transcript = crate::server::run_in_process(&crate::server::builtin::reference::Calc, inputs);
        let id = |line: &[u8]| {
            let value: serde_json::Value = serde_json::from_slice(line).ok()?;
            Some((value.get("id")?.clone(), value))
        };
        let mut unheard = Vec::new();
        for event in &transcript.events {
            if let Event::Sent(line) = event
                && let Some((id, serde_json::Value::Object(request))) = id(line)
                && request.contains_key("method")
                && (self.0)(&request)
            {
                unheard.push(id);
            }
        }
        transcript.events.retain(|event| match event {
            Event::Received { line, .. } => id(line).is_none_or(|(id, _)| !unheard.contains(&id)),
            _ => true,
        });
        Ok(transcript)
    }
}

/// Deaf to `ping` and to `tools/list` requests with a string id: two bugs behind one rule.
fn deaf_to_ping_and_string_ids(request: &serde_json::Map<String, serde_json::Value>) -> bool {
    let method = request.get("method").and_then(serde_json::Value::as_str);
    method == Some("ping") || (method == Some("tools/list") && request.get("id").is_some_and(|id| id.is_string()))
}

fn missing(summary: &Summary) -> Vec<&Found> {
    summary.found.iter().filter(|f| f.finding.rule == RESPONSE_MISSING).collect()
}

#[test]
fn each_trigger_of_a_rule_gets_its_own_case_file() {
    let dir = std::env::temp_dir().join(format!("wirefuzz-triggers-{}", std::process::id()));
    let options = options(400, Some(dir.clone()));
    let deaf = || Box::new(Deaf(deaf_to_ping_and_string_ids));
    let summary = run(vec![deaf()], deaf(), &options, &ServerSpec::BuiltIn, |_| {}).unwrap();
    let found = missing(&summary);
    let triggers: Vec<&str> = found.iter().map(|f| f.trigger.as_str()).collect();
    let string_id = |t: &&str| !t.starts_with("ping") && t.ends_with("+string-id");
    assert!(triggers.iter().any(string_id) && triggers.iter().any(|t| t.starts_with("ping")), "{triggers:?}");
    let mut unique = triggers.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), triggers.len(), "one case per trigger: {triggers:?}");
    let counts = &summary.trigger_counts[RESPONSE_MISSING];
    assert!(counts.values().any(|&n| n > 1), "{counts:?}: the same trigger seen again is only counted");
    assert!(summary.counts[RESPONSE_MISSING] >= counts.values().copied().max().unwrap());
    for found in found {
        let path = found.case_file.as_ref().unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let stem = format!("jsonrpc-response-missing-{}-", crate::trigger::file_part(&found.trigger));
        assert!(name.starts_with(&stem), "{name}");
        let case = Case::load(path).unwrap();
        assert_eq!(case.trigger.as_deref(), Some(found.trigger.as_str()));
        // Shrinking kept the trigger: the case, run again, breaks the rule with it.
        let transcript = Deaf(deaf_to_ping_and_string_ids).run(&case.inputs).unwrap();
        let again = crate::oracle::check(&transcript, &case.policy());
        assert!(
            again
                .iter()
                .any(|f| f.rule == RESPONSE_MISSING && crate::trigger::signature(&transcript, f) == found.trigger),
            "{}",
            case.render()
        );
    }
    // Deaf to ping, a ping with an id beyond 2^53 breaks JSONRPC-BIG-ID instead.
    assert!(!summary.fails(&Baseline::parse("JSONRPC-RESPONSE-MISSING\nJSONRPC-BIG-ID").unwrap()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shrinking_keeps_the_trigger() {
    let inputs = vec![
        Input::Line(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec()),
        Input::Line(br#"{"jsonrpc":"2.0","id":"req-2","method":"tools/list"}"#.to_vec()),
        Input::Line(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#.to_vec()),
        Input::Sync,
    ];
    let mut target = Deaf(deaf_to_ping_and_string_ids);
    let budget = Budget { runs: 500, time: None };
    let policy = Policy::default();
    let mut shrunk = |trigger| {
        let found = minimize_finding(&mut target, &inputs, RESPONSE_MISSING, trigger, &policy, budget);
        found.unwrap().unwrap()
    };
    // Free to slide, the shrinker keeps the first finding it can: the string-id one, or the ping.
    let free = shrunk(None).trigger;
    assert!(free == "tools/list+string-id" || free == "ping", "{free}");
    // Held to a trigger, it keeps that bug and drops the other.
    let kept = shrunk(Some("ping"));
    assert_eq!(kept.trigger, "ping");
    assert!(matches!(&kept.inputs[..], [Input::Line(line)] if line.ends_with(br#""method":"ping"}"#)), "{kept:?}");
    let kept = shrunk(Some("tools/list+string-id"));
    assert_eq!(kept.trigger, "tools/list+string-id");
    assert!(
        matches!(&kept.inputs[..], [Input::Line(line)] if line.starts_with(br#"{"jsonrpc":"2.0","id":""#)),
        "{kept:?}"
    );
    let none = minimize_finding(&mut target, &inputs, RESPONSE_MISSING, Some("big-id"), &policy, budget);
    assert!(none.unwrap().is_none());
}

#[test]
fn the_triggers_of_one_rule_are_bounded() {
    let deaf = || Box::new(Deaf(|_| true));
    let summary = run(vec![deaf()], deaf(), &options(300, None), &ServerSpec::BuiltIn, |_| {}).unwrap();
    let counts = &summary.trigger_counts[RESPONSE_MISSING];
    assert!(counts.len() > MAX_TRIGGERS_PER_RULE, "{counts:?}");
    assert_eq!(missing(&summary).len(), MAX_TRIGGERS_PER_RULE);
    assert_eq!(summary.broken().iter().filter(|r| **r == RESPONSE_MISSING).count(), 1);
    let shown = crate::report::human::summary(&summary, &Baseline::default());
    assert!(shown.contains("more trigger(s) not kept (at most 8 per rule)"), "{shown}");
    // A baselined rule the run did not break is stale: said with the run's size, not as a fact about the server.
    let baseline = Baseline::parse("JSONRPC-ID-ECHO  # known\n").unwrap();
    let shown = crate::report::human::summary(&summary, &baseline);
    let stale = "stale baseline entry: JSONRPC-ID-ECHO did not break in these 300 conversations";
    assert!(shown.contains(stale), "{shown}");
}

#[test]
fn findings_are_minimized_within_the_time_left() {
    let mut target = Deaf(|_| true);
    let mut options = options(1, None);
    options.shrink.time = Some(Duration::from_secs(60));
    let waiting = Arc::new(AtomicUsize::new(0));
    let server = &ServerSpec::BuiltIn;
    let shrinker = Shrinker { target: &mut target, patient: None, options: &options, server, waiting };
    let unbounded = Deadlines { fuzz: None, settle: None };
    assert_eq!(shrinker.budget(Duration::ZERO, unbounded, 1), options.shrink);
    // What an earlier step of the same minimization took is spent.
    let spent = shrinker.budget(Duration::from_secs(45), unbounded, 1);
    assert_eq!(spent.time, Some(Duration::from_secs(15)));
    // While fuzzing goes on, a minimization may take the time left until the confirmation time's end.
    let now = Instant::now();
    let fuzzing = Deadlines { fuzz: Some(now + Duration::from_secs(5)), settle: Some(now + Duration::from_secs(8)) };
    let left = shrinker.budget(Duration::ZERO, fuzzing, 4);
    assert!(left.runs == options.shrink.runs && left.time.unwrap() <= Duration::from_secs(8), "{left:?}");
    assert!(left.time.unwrap() > Duration::from_secs(7), "{left:?}");
    // Once fuzzing is over, the findings still to minimize share it.
    let over = Deadlines { fuzz: Some(now), settle: Some(now + Duration::from_secs(8)) };
    let shared = shrinker.budget(Duration::ZERO, over, 4);
    assert!(shared.time.unwrap() <= Duration::from_secs(2), "{shared:?}");
}

/// Runs the built-in server, panicking on its `n`-th run.
struct PanicsAt(usize);

impl Target for PanicsAt {
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        self.0 = self.0.checked_sub(1).expect("planted panic");
        Ok(crate::server::run_in_process(&crate::server::builtin::reference::Calc, inputs))
    }
}

#[test]
fn a_panicking_worker_fails_the_run_with_its_message() {
    let server = ServerSpec::BuiltIn;
    let result = run(vec![Box::new(PanicsAt(3))], Box::new(PanicsAt(0)), &options(50, None), &server, |_| {});
    let error = format!("{:#}", result.unwrap_err());
    assert!(error.contains("the fuzzing worker 0 panicked: planted panic"), "{error}");
    // The shrink worker panics on the first finding it minimizes.
    let server = ServerSpec::Mutant(Mutant::NoCacheHints);
    let result =
        run(vec![server.target(Default::default())], Box::new(PanicsAt(0)), &options(50, None), &server, |_| {});
    assert!(format!("{:#}", result.unwrap_err()).contains("the shrink worker panicked: planted panic"));
}

/// The built-in server with a planted bug, whose runs take `delay` and fail as cut by the deadline once
/// `deadline` has passed (as a child process's runs do).
struct Slow {
    delay: Duration,
    deadline: Instant,
}

impl Target for Slow {
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        thread::sleep(self.delay);
        if Instant::now() >= self.deadline {
            return Err(CutShort::DeadlinePassed.into());
        }
        Ok(crate::server::run_in_process(&crate::server::builtin::reference::Planted(Mutant::NoCacheHints), inputs))
    }
}

#[test]
fn a_finding_is_on_disk_at_once_and_stays_unminimized_when_time_runs_out() {
    let dir = std::env::temp_dir().join(format!("wirefuzz-write-first-{}", std::process::id()));
    let mut options = options(1_000_000, Some(dir.clone()));
    options.cases = None;
    // No time at all to confirm or minimize after fuzzing.
    (options.time, options.confirm_time) = (Some(Duration::from_millis(400)), Some(Duration::ZERO));
    let deadline = Instant::now() + Duration::from_millis(400);
    let server = ServerSpec::Mutant(Mutant::NoCacheHints);
    let shrinker = Box::new(Slow { delay: Duration::from_millis(150), deadline });
    let mut on_disk = Vec::new();
    let started = Instant::now();
    let summary = run(vec![server.target(Default::default())], shrinker, &options, &server, |event| {
        if let Progress::Found(found) = event {
            on_disk.push(std::fs::read_to_string(found.case_file.as_ref().unwrap()).unwrap());
        }
    })
    .unwrap();
    // Not waiting for the minimization (150 ms a run, up to 500 runs): a bound far above a loaded machine's jitter.
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(!on_disk.is_empty() && on_disk[0].contains(UNMINIMIZED), "written when found, marked");
    let found = &summary.found[0];
    assert!(!found.minimized && !matches!(found.confirmation, Confirmation::Unconfirmed(_)), "{found:?}");
    let text = std::fs::read_to_string(found.case_file.as_ref().unwrap()).unwrap();
    assert!(text.contains(UNMINIMIZED), "still marked: {text}");
    assert_eq!(Case::parse(&text).unwrap(), found.case);
    // Confirmed and cut in its minimization, or still to confirm when the time ran out (the shrinker is slow):
    // the summary says which.
    let shown = crate::report::human::summary(&summary, &Baseline::default());
    assert!(
        shown.contains("not minimized: the run's time ran out")
            || shown.contains("time ran out before it could run again"),
        "{shown}"
    );
    // A finding still pending is no green run: inconclusive, with its own exit code.
    let verdict = summary.verdict(&Baseline::default());
    match found.confirmation {
        Confirmation::Pending => {
            assert_eq!(verdict, Verdict::Inconclusive);
            assert!(shown.contains("verdict: inconclusive (exit 4)") && shown.contains("pending (1:"), "{shown}");
        }
        _ => assert_eq!(verdict, Verdict::Failed, "{shown}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The built-in server, but each run takes `delay`, whatever the deadline (as a check of a huge transcript).
struct Stuck(Duration);

impl Target for Stuck {
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        thread::sleep(self.0);
        Ok(crate::server::run_in_process(&crate::server::builtin::reference::Calc, inputs))
    }
}

#[test]
fn a_worker_busy_past_the_deadline_does_not_hold_the_run() {
    let mut options = options(1_000, None);
    (options.cases, options.time) = (None, Some(Duration::from_millis(200)));
    let stuck = || Box::new(Stuck(Duration::from_secs(30)));
    let started = Instant::now();
    let summary = run(vec![stuck()], stuck(), &options, &ServerSpec::BuiltIn, |_| {}).unwrap();
    assert!(started.elapsed() < Duration::from_millis(200) + DEADLINE_GRACE + Duration::from_secs(1));
    assert_eq!(summary.conversations, 0, "the unfinished conversation is not reported");
}

#[test]
fn a_finding_that_does_not_come_back_is_unconfirmed_and_fails_only_a_strict_run() {
    let dir = std::env::temp_dir().join(format!("wirefuzz-unconfirmed-{}", std::process::id()));
    let once = |options: &Options| {
        let (fuzzer, shrinker) = (Box::new(OnceBroken(false)), Box::new(OnceBroken(true)));
        run(vec![fuzzer], shrinker, options, &ServerSpec::BuiltIn, |_| {}).unwrap()
    };
    let summary = once(&options(1, Some(dir.clone())));
    let found = &summary.found[0];
    assert_eq!(found.finding.rule, "SERVER-CRASH");
    let Confirmation::Unconfirmed(why) = &found.confirmation else { panic!("{:?}", found.confirmation) };
    assert!(why.contains("did not break again in 3 runs"), "{why}");
    assert!(!found.minimized && !summary.fails(&Default::default()));
    let text = std::fs::read_to_string(found.case_file.as_ref().unwrap()).unwrap();
    assert!(text.contains("# unconfirmed: it did not break again"), "the case file says so: {text}");
    let report = crate::report::human::summary(&summary, &Baseline::default());
    assert!(report.contains("no confirmed findings") && report.contains("not confirmed (1;"), "{report}");
    let strict = once(&Options { strict: true, ..options(1, None) });
    assert!(strict.fails(&Default::default()), "--strict fails on it");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// [`Deaf`] with waits that matter: its patient self ([`Target::patient`]) is `patient`.
struct DeafWithPatience {
    deaf: Deaf,
    patient: fn() -> Box<dyn Target + Send>,
}

impl Target for DeafWithPatience {
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        self.deaf.run(inputs)
    }

    fn patient(&self, _factor: u32) -> Option<Box<dyn Target + Send>> {
        Some((self.patient)())
    }
}

fn deaf_to_ping(request: &serde_json::Map<String, serde_json::Value>) -> bool {
    request.get("method").and_then(serde_json::Value::as_str) == Some("ping")
}

#[test]
fn a_silence_is_confirmed_only_when_it_stays_with_stretched_waits() {
    let server = ServerSpec::BuiltIn;
    let with = |patient: fn() -> Box<dyn Target + Send>| {
        let shrinker = Box::new(DeafWithPatience { deaf: Deaf(deaf_to_ping), patient });
        let summary = run(vec![Box::new(Deaf(deaf_to_ping))], shrinker, &options(60, None), &server, |_| {}).unwrap();
        missing(&summary).first().map(|f| f.confirmation.clone()).expect("a ping went unanswered")
    };
    // Answered when waited for longer: slow, not silent.
    let slow = with(|| Box::new(crate::server::InProcess(crate::server::builtin::reference::Calc)));
    assert!(matches!(&slow, Confirmation::Unconfirmed(why) if why.contains("not silent")), "{slow:?}");
    // Silent however long it is waited for.
    let silent = with(|| Box::new(Deaf(deaf_to_ping)));
    assert_eq!(silent, Confirmation::Confirmed { stretched: Some(confirm::STRETCH) });
}

#[test]
fn confirmation_is_estimated_from_the_conversation_and_its_waits() {
    let closed = Transcript { events: Vec::new(), ending: Ending::Closed };
    let estimate = confirm::estimate(Duration::from_secs(2), &closed, RESPONSE_MISSING);
    assert_eq!(estimate, Duration::from_secs(2 * u64::from(confirm::STRETCH)), "a silence runs with stretched waits");
    assert_eq!(confirm::estimate(Duration::from_secs(2), &closed, "MCP-CACHE-HINTS"), Duration::from_secs(2));
    let hung = Transcript { events: Vec::new(), ending: Ending::Hung { waited_ms: 3_000 } };
    assert_eq!(confirm::estimate(Duration::ZERO, &hung, "MCP-CACHE-HINTS"), Duration::from_secs(3), "a prelude's wait");
}

#[test]
fn a_finding_seen_as_fuzzing_ends_is_confirmed_in_the_confirmation_time() {
    let mut options = options(1_000_000, None);
    options.cases = None;
    (options.time, options.confirm_time) = (Some(Duration::from_millis(300)), Some(Duration::from_secs(20)));
    options.shrink = Budget { runs: 3, time: None };
    let server = ServerSpec::Mutant(Mutant::NoCacheHints);
    // Each of the shrinker's runs takes 150 ms: the findings come faster than they are confirmed, and most are
    // confirmed after fuzzing stopped.
    let shrinker =
        Box::new(Slow { delay: Duration::from_millis(150), deadline: Instant::now() + Duration::from_secs(20) });
    let started = Instant::now();
    let summary = run(vec![server.target(Default::default())], shrinker, &options, &server, |_| {}).unwrap();
    assert!(!summary.found.is_empty());
    assert!(summary.found.iter().all(|f| f.confirmation.confirmed()), "{:?}", summary.found);
    assert!(summary.found.iter().all(|f| f.minimized), "and minimized, within the confirmation time");
    assert!(started.elapsed() > Duration::from_millis(300), "{:?}", started.elapsed());
    assert!(started.elapsed() < Duration::from_secs(20), "it ends once everything is settled");
    assert_eq!(summary.verdict(&Baseline::default()), Verdict::Failed);
}

#[test]
fn a_baseline_entry_narrowed_to_a_trigger_or_a_tool_fails_the_other_findings_of_its_rule() {
    let line = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{}}}"#;
    let transcript = Transcript { events: vec![Event::Sent(line.as_bytes().to_vec())], ending: Ending::Closed };
    let finding = Finding { rule: RESPONSE_MISSING, level: Level::Error, event: Some(0), detail: String::new() };
    let found = Found {
        finding,
        trigger: "tools/call".into(),
        conversation: 0,
        case: Case::default(),
        transcript,
        case_file: None,
        confirmation: Confirmation::Confirmed { stretched: None },
        minimized: true,
        estimate: Duration::ZERO,
    };
    let summary = Summary {
        seed: 1,
        conversations: 1,
        elapsed: Duration::ZERO,
        fuzzed: Duration::ZERO,
        shrink_time: Duration::ZERO,
        found: vec![found],
        counts: BTreeMap::new(),
        trigger_counts: BTreeMap::new(),
        coverage: Coverage::default(),
        sdk: Vec::new(),
        strict: false,
    };
    let baseline = |text: &str| Baseline::parse(text).unwrap();
    assert!(summary.fails(&baseline("JSONRPC-RESPONSE-MISSING [ping/meta-not-object]")), "another trigger");
    assert!(!summary.fails(&baseline("JSONRPC-RESPONSE-MISSING [tools/call]")));
    assert!(summary.fails(&baseline("JSONRPC-RESPONSE-MISSING tool=store")), "another tool");
    assert!(!summary.fails(&baseline("JSONRPC-RESPONSE-MISSING tool=search")));
    assert_eq!(summary.found[0].tool(), Some("search".to_string()));
}

/// The planted server, counting its runs in a counter the test keeps.
struct CountedPlanted(Arc<AtomicU64>);

impl Target for CountedPlanted {
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        self.0.fetch_add(1, Ordering::Relaxed);
        let planted = crate::server::builtin::reference::Planted(Mutant::NoCacheHints);
        Ok(crate::server::run_in_process(&planted, inputs))
    }
}

#[test]
fn minimization_starts_from_the_run_that_confirmed_the_finding() {
    let (fuzzed, shrunk) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut options = options(50, None);
    options.shrink = Budget { runs: 0, time: None };
    let (fuzzer, shrinker) = (Box::new(CountedPlanted(fuzzed.clone())), Box::new(CountedPlanted(shrunk.clone())));
    let summary = run(vec![fuzzer], shrinker, &options, &ServerSpec::Mutant(Mutant::NoCacheHints), |_| {}).unwrap();
    assert!(!summary.found.is_empty() && summary.found.iter().all(|f| f.confirmation.confirmed() && f.minimized));
    // One run per finding, the confirming one: with no runs to shrink with, it is the minimized case as it is.
    assert_eq!(shrunk.load(Ordering::Relaxed), summary.found.len() as u64);
    assert_eq!(fuzzed.load(Ordering::Relaxed), 50);
}

/// A target whose every run first waits `.1`.
struct Paced<T>(T, Duration);

impl<T: Target> Target for Paced<T> {
    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        thread::sleep(self.1);
        self.0.run(inputs)
    }
}

#[test]
fn no_minimization_ends_between_a_finding_seen_and_its_confirmation() {
    // A server deaf to every request: a new trigger of JSONRPC-RESPONSE-MISSING now and then, while the shrink
    // worker (slower) minimizes the ones before.
    let mut options = options(60, None);
    options.shrink = Budget { runs: 100, time: None };
    let fuzzer = Box::new(Paced(Deaf(|_| true), Duration::from_millis(20)));
    let shrinker = Box::new(Paced(Deaf(|_| true), Duration::from_millis(10)));
    let mut events = Vec::new();
    let summary = run(vec![fuzzer], shrinker, &options, &ServerSpec::BuiltIn, |event| match event {
        Progress::Found(f) => events.push(('f', f.trigger.clone())),
        Progress::Confirmed(f) => events.push(('c', f.trigger.clone())),
        Progress::Minimized(f) => events.push(('m', f.trigger.clone())),
        _ => {}
    })
    .unwrap();
    assert!(missing(&summary).len() >= 3, "{events:?}");
    let mut gave_way = false;
    for (at, (kind, trigger)) in events.iter().enumerate() {
        if *kind != 'f' {
            continue;
        }
        let confirmed = events[at..].iter().position(|e| *e == ('c', trigger.clone())).expect("confirmed") + at;
        let minimized_between = events[at..confirmed].iter().any(|(kind, _)| *kind == 'm');
        assert!(!minimized_between, "[{trigger}] waited for a minimization to end: {events:?}");
        // A minimization that began before this finding was seen is still to end: it gave way.
        let began_before =
            events[..at].iter().any(|(kind, t)| *kind == 'c' && !events[..at].contains(&('m', t.clone())));
        gave_way |= began_before;
    }
    assert!(gave_way, "no finding came while another was being minimized: {events:?}");
    assert!(summary.found.iter().all(|f| f.confirmation.confirmed() && f.minimized), "{events:?}");
}

#[test]
fn a_silence_confirmed_as_a_hung_handler_is_reported_and_written_as_one() {
    let dir = std::env::temp_dir().join(format!("wirefuzz-stronger-{}", std::process::id()));
    let mutant = Mutant::HangsOnMalformedAnswer;
    let inputs: Vec<Input> = mutant.trigger().into_iter().flat_map(|line| [Input::Line(line), Input::Sync]).collect();
    // The run's first conversation, as a silent server left it.
    let silent = Transcript {
        events: inputs
            .iter()
            .filter_map(|i| if let Input::Line(l) = i { Some(Event::Sent(l.clone())) } else { None })
            .collect(),
        ending: Ending::Hung { waited_ms: 2_000 },
    };
    let mut options = options(1, Some(dir.clone()));
    options.policy = mutant.policy();
    options.prelude = vec![(inputs, silent)];
    fn planted() -> Box<dyn Target + Send> {
        let planted = crate::server::builtin::reference::Planted(Mutant::HangsOnMalformedAnswer);
        Box::new(crate::server::InProcess(planted))
    }
    let shrinker = Box::new(DeafWithPatience { deaf: Deaf(|_| true), patient: planted });
    let summary = run(vec![Box::new(Deaf(|_| true))], shrinker, &options, &ServerSpec::BuiltIn, |_| {}).unwrap();
    let hang =
        summary.found.iter().find(|f| f.finding.rule == crate::oracle::rules::HANDLER_HANG).expect("{summary:?}");
    assert!(hang.confirmation.confirmed(), "{:?}", hang.confirmation);
    let file = hang.case_file.as_ref().expect("its case file");
    assert!(file.display().to_string().contains("server-handler-hang"), "{}", file.display());
    assert_eq!(Case::load(file).unwrap().expect, ["SERVER-HANDLER-HANG"]);
    // The silence it was seen as is not listed beside it, nor left on disk.
    let rules: Vec<&str> = summary.found.iter().map(|f| f.finding.rule).collect();
    assert_eq!(rules, [crate::oracle::rules::HANDLER_HANG], "{rules:?}");
    let files: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(files.iter().all(|f| f.starts_with("server-handler-hang")), "{files:?}");
    assert_eq!(summary.verdict(&Baseline::default()), Verdict::Failed);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The built-in server, but each connection's `add` answers -32603 from its 51st call on (a store that breaks after
/// 50 writes): only a long session makes that many calls on one connection.
struct BreaksAfterFifty;

/// A connection of [`BreaksAfterFifty`]: the built-in server's, and its count of `add` calls.
struct Counting(crate::server::builtin::reference::CalcConnection, usize);

impl crate::server::InProcessServer for BreaksAfterFifty {
    type Connection = Counting;

    fn connect(&self) -> Counting {
        Counting(crate::server::builtin::reference::Calc.connect(), 0)
    }
}

impl crate::server::ServerConnection for Counting {
    fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> crate::server::Status {
        let call = serde_json::from_slice::<serde_json::Value>(line).ok().filter(|message| {
            message["method"] == "tools/call" && message["params"]["name"] == "add" && message.get("id").is_some()
        });
        if let Some(call) = call {
            self.1 += 1;
            if self.1 > 50 {
                let error = serde_json::json!({"jsonrpc": "2.0", "id": call["id"], "error": {"code": -32603, "message": "store full"}});
                out.push(serde_json::to_vec(&error).unwrap());
                return crate::server::Status::Running;
            }
        }
        self.0.receive(line, out)
    }
}

#[test]
fn a_bug_behind_fifty_writes_is_found_in_a_long_session_and_minimized_to_the_writes() {
    let surface = crate::surface::Surface::built_in();
    let mut options = options(3 * crate::script::session::LONG_EVERY, None);
    options.policy = Policy::default().with_surface(surface);
    let target = || -> Box<dyn Target + Send> { Box::new(crate::server::InProcess(BreaksAfterFifty)) };
    let summary = run(vec![target()], target(), &options, &ServerSpec::BuiltIn, |_| {}).unwrap();
    let found: Vec<&Found> = summary.found.iter().filter(|f| f.finding.rule == "MCP-TOOL-VALID-ARGS").collect();
    assert!(!found.is_empty(), "{:?}", summary.broken());
    for found in found {
        assert!(crate::script::session::long(found.conversation, true), "only a long session reaches the 51st add");
        assert!(found.confirmation.confirmed() && found.minimized);
        let add =
            |input: &&Input| matches!(input, Input::Line(l) if String::from_utf8_lossy(l).contains(r#""name":"add""#));
        let adds = found.case.inputs.iter().filter(add);
        assert!(adds.count() >= 51, "the case keeps the writes the bug needs: {}", found.case.render());
        let lines = found.case.inputs.iter().filter(|input| matches!(input, Input::Line(_))).count();
        assert!(lines <= 60, "minimized to the writes, not the session's ~300 lines: {lines}");
    }
}

#[test]
fn fuzzing_time_includes_a_conversation_cut_at_its_deadline() {
    // Runs of 300 ms against a 500 ms fuzzing deadline: the second is cut. Fuzzing lasted until the deadline, not
    // until the last conversation that was counted (300 ms).
    let mut options = options(1_000_000, None);
    options.cases = None;
    (options.time, options.confirm_time) = (Some(Duration::from_millis(500)), Some(Duration::ZERO));
    let deadline = Instant::now() + Duration::from_millis(500);
    let slow = Slow { delay: Duration::from_millis(300), deadline };
    let server = ServerSpec::Mutant(Mutant::NoCacheHints);
    let summary = run(vec![Box::new(slow)], server.target(Default::default()), &options, &server, |_| {}).unwrap();
    assert_eq!(summary.conversations, 1);
    assert!(summary.fuzzed >= Duration::from_millis(500), "{:?}", summary.fuzzed);
    assert!(summary.fuzzed <= summary.elapsed);
}
