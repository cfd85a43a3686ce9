//! The script generators: every operator, method, id kind and era pair is reachable from both generators;
//! encoding is deterministic and bounded; every script runs against the reference server; hand-built scripts and
//! mutations encode to exactly the intended bytes.

use mcp_wirefuzz::oracle::check;
use mcp_wirefuzz::protocol::client::Answers;
use mcp_wirefuzz::protocol::{Era, Frame, Kind};
use mcp_wirefuzz::script::arguments::Breakage;
use mcp_wirefuzz::script::edges::Edge;
use mcp_wirefuzz::script::message::{METHODS, PromptArguments, ResourceUri};
use mcp_wirefuzz::script::mutation::GIANT_STRING;
use mcp_wirefuzz::script::{
    Bounded, Call, Declares, Envelope, Feature, HandshakeVersion, IdKind, InitVersion, MAX_SEQUENCE, Message, Mutation,
    Note, Opening, RawLine, Request, Script, Step, ToolCall, scripts,
};
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::reference::{Calc, Planted};
use mcp_wirefuzz::server::run_in_process;
use mcp_wirefuzz::surface::Surface;
use mcp_wirefuzz::transcript::{Ending, Event, Input};
use proptest::prop_assert;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use std::collections::BTreeMap;

/// A script's encoded size must stay below this, whatever the input.
const MAX_ENCODED: usize = 2 << 20;

/// `n` scripts from proptest's deterministic runner.
fn proptest_scripts(n: usize) -> Vec<Script> {
    let mut runner = TestRunner::deterministic();
    let strategy = scripts();
    (0..n).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect()
}

/// `n` pseudo-random byte buffers (xorshift, fixed seed) of up to 1 KiB.
fn byte_buffers(n: usize) -> Vec<Vec<u8>> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n).map(|_| (0..next() % 1024).map(|_| next() as u8).collect()).collect()
}

/// Every feature a generator must be able to reach.
fn all_features() -> Vec<Feature> {
    let eras = [None, Some(Era::Handshake), Some(Era::Modern)];
    let mut all: Vec<Feature> = eras.into_iter().map(Feature::Opening).collect();
    all.extend(METHODS.into_iter().map(Feature::Method));
    all.extend(ToolCall::ALL.into_iter().map(Feature::ToolCall));
    all.extend(Breakage::ALL.into_iter().map(Feature::Arguments));
    all.extend(Edge::ALL.into_iter().map(Feature::Edge));
    all.extend(PromptArguments::ALL.into_iter().map(Feature::PromptArguments));
    all.extend(ResourceUri::ALL.into_iter().map(Feature::ResourceUri));
    all.extend(IdKind::ALL.into_iter().map(Feature::Id));
    all.extend(eras.into_iter().flat_map(|opening| Era::ALL.map(|message| Feature::Eras { opening, message })));
    // A giant line is rare on purpose (see `a_giant_line_is_rare_but_reached`).
    all.extend(Mutation::ALL.into_iter().filter(|m| *m != Mutation::GiantString).map(Feature::Mutation));
    all.extend(RawLine::ALL.into_iter().map(Feature::Raw));
    all.extend((0..=3).map(Feature::Batch));
    all.extend((0..=MAX_SEQUENCE).map(Feature::Sequence));
    all.push(Feature::Sync);
    all
}

/// Counts every feature of `scripts` and fails, printing the counts, when one is never reached.
fn assert_all_reached(source: &str, scripts: &[Script]) {
    let mut counts: BTreeMap<String, usize> = all_features().iter().map(|f| (f.to_string(), 0)).collect();
    for feature in scripts.iter().flat_map(Script::features) {
        if feature == Feature::Mutation(Mutation::GiantString) {
            continue;
        }
        let name = feature.to_string();
        assert!(counts.contains_key(&name), "{source}: {name} is missing from all_features()");
        *counts.entry(name).or_default() += 1;
    }
    let table: String = counts.iter().map(|(name, n)| format!("{n:>7} {name}\n")).collect();
    let missing: Vec<&String> = counts.iter().filter(|(_, n)| **n == 0).map(|(name, _)| name).collect();
    assert!(missing.is_empty(), "{source}: never reached {missing:?}\n{table}");
}

#[test]
fn proptest_reaches_every_feature() {
    // 2,000 rather than 5,000: proptest's derived unions are slow to sample in a debug build (about 2 ms a script).
    let scripts = proptest_scripts(2000);
    assert_all_reached("proptest", &scripts);
    let proper = scripts.iter().filter(|s| s.opening != Opening::Nothing).count();
    assert!((1250..=1550).contains(&proper), "proper openings: {proper} of 2000, expected about 70%");
}

#[test]
fn arbitrary_reaches_every_feature() {
    let scripts: Vec<Script> = byte_buffers(5000).iter().map(|b| Script::from_bytes(b)).collect();
    assert_all_reached("arbitrary", &scripts);
}

#[test]
fn mutation_names_are_unique_and_round_trip() {
    assert!(Mutation::ALL.len() >= 25);
    for (i, mutation) in Mutation::ALL.into_iter().enumerate() {
        assert_eq!(Mutation::from_name(mutation.name()), Some(mutation));
        assert!(Mutation::ALL[..i].iter().all(|m| m.name() != mutation.name()), "{} twice", mutation.name());
    }
}

#[test]
fn encoding_is_deterministic_and_bounded() {
    let mut total = 0;
    let buffers = byte_buffers(2000);
    for bytes in &buffers {
        let script = Script::from_bytes(bytes);
        let inputs = script.encode_on(&Surface::built_in());
        assert_eq!(Script::from_bytes(bytes).encode_on(&Surface::built_in()), inputs);
        let size = encoded_size(&inputs);
        let giants = script.features().iter().filter(|f| **f == Feature::Mutation(Mutation::GiantString)).count();
        assert!(size < MAX_ENCODED + giants * GIANT_STRING, "{size} bytes");
        total += size;
    }
    let again: Vec<Vec<Input>> = proptest_scripts(300).iter().map(|s| s.encode_on(&Surface::built_in())).collect();
    assert_eq!(proptest_scripts(300).iter().map(|s| s.encode_on(&Surface::built_in())).collect::<Vec<_>>(), again);
    let worst = script(
        Opening::Handshake(HandshakeVersion::V2025_11_25, Declares::Nothing),
        vec![mutated(Mutation::HugeString); 16],
    );
    assert!(encoded_size(&worst.encode_on(&Surface::built_in())) < MAX_ENCODED);
    println!("average encoded size over {} byte buffers: {} bytes", buffers.len(), total / buffers.len());
}

/// True when `script` negotiates 2025-03-26 and then sends a batch holding a request.
fn batches_on_2025_03_26(script: &Script) -> bool {
    matches!(script.opening, Opening::Handshake(HandshakeVersion::V2025_03_26, _))
        && script.steps.0.iter().any(
            |step| matches!(step, Step::Batch(messages) if messages.0.iter().any(|m| matches!(m, Message::Request(_)))),
        )
}

#[test]
fn batches_of_requests_follow_a_2025_03_26_handshake_often() {
    let by_proptest = proptest_scripts(1000).iter().filter(|s| batches_on_2025_03_26(s)).count();
    let by_arbitrary = byte_buffers(2000).iter().filter(|b| batches_on_2025_03_26(&Script::from_bytes(b))).count();
    assert!(
        by_proptest >= 20 && by_arbitrary >= 40,
        "proptest {by_proptest} of 1000, arbitrary {by_arbitrary} of 2000"
    );
}

#[test]
fn a_giant_line_is_rare_but_reached() {
    let conversations = 40_000;
    let giant = (0..conversations)
        .map(|index| Script::from_bytes(&mcp_wirefuzz::campaign::conversation_bytes(1, index)))
        .filter(|script| script.features().contains(&Feature::Mutation(Mutation::GiantString)))
        .count();
    assert!(
        (1..=conversations as usize / 2_000).contains(&giant),
        "{giant} giant lines in {conversations} conversations"
    );
    let line = mutate(Mutation::GiantString);
    assert!(line.len() > 11 << 20 && serde_json::from_slice::<serde_json::Value>(&line).is_ok());
}

#[test]
fn no_bytes_give_the_default_script() {
    assert_eq!(Script::from_bytes(&[]), Script::default());
}

#[test]
fn every_script_runs_against_the_reference_server() {
    let scripts =
        proptest_scripts(1000).into_iter().chain(byte_buffers(3000).into_iter().map(|b| Script::from_bytes(&b)));
    for script in scripts {
        let inputs = script.encode_on(&Surface::built_in());
        let transcript = run_in_process(&Calc, &inputs);
        assert_eq!(transcript.ending, Ending::Closed, "{script:?}\n{}", transcript.render());
        let sent = transcript.events.iter().filter(|e| matches!(e, Event::Sent(_))).count();
        assert_eq!(sent, inputs.iter().filter(|i| matches!(i, Input::Line(_))).count());
    }
}

fn script(opening: Opening, steps: Vec<Step>) -> Script {
    Script { opening, steps: Bounded(steps) }
}

fn request(call: Call, id: IdKind, envelope: Envelope) -> Request {
    Request { call, id, envelope }
}

fn mutated(mutation: Mutation) -> Step {
    Step::Mutated(request(Call::ToolsCall(ToolCall::Good), IdKind::SmallInt, Envelope::Modern), mutation)
}

fn encoded_size(inputs: &[Input]) -> usize {
    inputs.iter().map(|i| if let Input::Line(l) = i { l.len() + 1 } else { 0 }).sum()
}

fn lines(inputs: &[Input]) -> Vec<String> {
    inputs
        .iter()
        .map(|i| match i {
            Input::Line(line) => String::from_utf8(line.clone()).unwrap(),
            Input::Sync => "SYNC".into(),
        })
        .collect()
}

const INITIALIZE_2025_11_25: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-wirefuzz","version":"0.1.0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const ENVELOPE: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[test]
fn a_handshake_opening_encodes_exactly() {
    assert_eq!(lines(&Script::default().encode_on(&Surface::built_in())), [INITIALIZE_2025_11_25, INITIALIZED, "SYNC"]);
}

#[test]
fn a_modern_opening_then_pipelined_requests_encode_exactly() {
    let steps = vec![
        Step::Send(Message::Request(request(Call::ToolsCall(ToolCall::Good), IdKind::AsciiString, Envelope::Modern))),
        Step::Send(Message::Request(request(Call::ToolsList, IdKind::Duplicate, Envelope::Plain))),
        Step::Send(Message::Notification(Note::Cancelled)),
        Step::Sync,
        Step::Send(Message::Request(request(Call::Initialize(InitVersion::Unknown), IdKind::Zero, Envelope::Plain))),
        Step::Batch(Bounded(vec![])),
        Step::Raw(RawLine::Number),
    ];
    let expected = [
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{ENVELOPE}}}}}"#),
        "SYNC".into(),
        format!(
            r#"{{"jsonrpc":"2.0","id":"req-2","method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":2}},{ENVELOPE}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","id":"req-2","method":"tools/list"}"#.into(),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"req-2","reason":"wirefuzz"}}"#
            .into(),
        "SYNC".into(),
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"mcp-wirefuzz","version":"0.1.0"}}}"#.into(),
        "[]".into(),
        "42".into(),
    ];
    assert_eq!(lines(&script(Opening::Modern, steps).encode_on(&Surface::built_in())), expected);
}

#[test]
fn a_notification_first_opening_encodes_exactly() {
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"wirefuzz"}}"#;
    let discover = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{ENVELOPE}}}}}"#);
    assert_eq!(
        lines(&script(Opening::NotificationFirst, vec![]).encode_on(&Surface::built_in())),
        [cancel, &discover, "SYNC"]
    );
}

#[test]
fn ids_of_every_kind_encode_as_intended() {
    let steps = IdKind::ALL.map(|id| Step::Send(Message::Request(request(Call::Ping, id, Envelope::Plain))));
    let ids: Vec<String> = lines(&script(Opening::Nothing, steps.to_vec()).encode_on(&Surface::built_in()))
        .iter()
        .map(|line| {
            let start = line.find(r#""id":"#).unwrap() + 5;
            let end = line.find(r#","method""#).unwrap();
            line[start..end].to_string()
        })
        .collect();
    let expected = [
        "1",
        "0",
        "-3",
        "9007199254741001",
        "1844674407370955161000000000000000000005",
        r#""req-6""#,
        r#""""#,
        r#""é中😀""#,
        r#""9""#,
        r#"" \t req-10 \n ""#,
        r#"" \t req-10 \n ""#,
        "null",
        "1.5",
        // Whole-valued: 14 and 15000 to parsers that read them as integers, ids no other request has.
        "14.0",
        "15e+3",
        "true",
        "[17]",
        r#"{"n":18}"#,
    ];
    assert_eq!(ids, expected);
}

/// Each odd string id is of its class, as the wire-coverage table counts it, and unique by its ordinal.
#[test]
fn odd_string_ids_are_of_their_class() {
    use mcp_wirefuzz::report::wire::classes;
    use mcp_wirefuzz::script::id::odd_id;
    use mcp_wirefuzz::script::odd_string::OddString;
    for class in OddString::ALL.into_iter().filter(|c| *c != OddString::Empty) {
        let counted = if class == OddString::Huge { "long" } else { class.name() };
        assert!(classes(&odd_id(class, 3)).contains(&counted), "{class:?}: {:?}", odd_id(class, 3));
        assert_ne!(odd_id(class, 3), odd_id(class, 4));
    }
}

/// The line a mutation makes of an enveloped `tools/call` that is the script's first request.
fn mutate(mutation: Mutation) -> Vec<u8> {
    let inputs = script(Opening::Nothing, vec![mutated(mutation)]).encode_on(&Surface::built_in());
    let [Input::Line(line)] = inputs.as_slice() else { panic!("one line expected: {inputs:?}") };
    line.clone()
}

fn max_depth(line: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0);
    for b in line {
        match b {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        max = max.max(depth);
    }
    max
}

#[test]
fn every_mutation_changes_the_request() {
    let valid = script(
        Opening::Nothing,
        vec![Step::Send(Message::Request(match mutated(Mutation::Batch) {
            Step::Mutated(request, _) => request,
            _ => unreachable!(),
        }))],
    )
    .encode_on(&Surface::built_in());
    let [Input::Line(valid)] = valid.as_slice() else { panic!("one line expected") };
    assert_eq!(Frame::parse(valid).kind(), Kind::Request);
    for mutation in Mutation::ALL {
        assert_ne!(&mutate(mutation), valid, "{} changed nothing", mutation.name());
    }
}

#[test]
fn mutations_produce_the_intended_bytes() {
    let text = |m: Mutation| String::from_utf8(mutate(m)).unwrap();
    let duplicate = text(Mutation::DuplicateKey);
    assert!(duplicate.starts_with(r#"{"id":"dup-1","jsonrpc":"2.0","id":1,"#), "{duplicate}");
    assert!(std::str::from_utf8(&mutate(Mutation::InvalidUtf8)).is_err());
    assert!(max_depth(&mutate(Mutation::DeepNesting)) > 128);
    assert!(max_depth(&mutate(Mutation::VeryDeepNesting)) > 5000);
    assert!(text(Mutation::HugeString).len() > 100_000);
    assert!(text(Mutation::HugeNumber).contains(&format!("1{}", "0".repeat(4999))));
    assert!(text(Mutation::LoneSurrogate).contains(r#""wirefuzz":"\ud800""#));
    assert!(mutate(Mutation::BomPrefix).starts_with(b"\xef\xbb\xbf{"));
    assert!(mutate(Mutation::TrailingCr).ends_with(b"}\r"));
    assert_eq!(mutate(Mutation::EmptyLine), b"");
    assert!(!text(Mutation::BlankLine).is_empty() && text(Mutation::BlankLine).trim().is_empty());
    assert!(text(Mutation::TwoObjects).contains("}{"));
    assert!(text(Mutation::MissingVersionKey).contains(r#""_meta":{"io.modelcontextprotocol/clientCapabilities":{}}"#));
    assert!(
        text(Mutation::MissingCapabilitiesKey)
            .contains(r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#)
    );
    assert!(text(Mutation::MissingBothKeys).contains(r#""_meta":{}"#));
    assert!(text(Mutation::VersionNumber).contains(r#""io.modelcontextprotocol/protocolVersion":20260728"#));
    assert!(text(Mutation::VersionLegacy).contains(r#""io.modelcontextprotocol/protocolVersion":"2025-11-25""#));
    assert!(text(Mutation::JsonrpcNumber).starts_with(r#"{"jsonrpc":2.0,"#));
    assert_eq!(text(Mutation::ParamsNull), r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}"#);
    let kinds = [
        (Mutation::DropId, Kind::Notification),
        (Mutation::DropJsonrpc, Kind::NotJsonRpc),
        (Mutation::JsonrpcOne, Kind::NotJsonRpc),
        (Mutation::ExtraField, Kind::Request),
        (Mutation::VersionNull, Kind::Request),
        (Mutation::Truncated, Kind::NotJson),
        (Mutation::TwoObjects, Kind::NotJson),
        (Mutation::TrailingGarbage, Kind::NotJson),
        (Mutation::DeepNesting, Kind::NotJson),
        (Mutation::Batch, Kind::NotJsonRpc),
        (Mutation::EmptyLine, Kind::NotJsonRpc),
        (Mutation::TrailingCr, Kind::Request),
    ];
    for (mutation, kind) in kinds {
        assert_eq!(Frame::parse(&mutate(mutation)).kind(), kind, "{}", mutation.name());
    }
}

#[test]
fn a_plain_request_gets_an_envelope_to_break() {
    let plain = request(Call::ToolsList, IdKind::SmallInt, Envelope::Plain);
    let inputs = script(Opening::Nothing, vec![Step::Mutated(plain, Mutation::VersionUnsupported)])
        .encode_on(&Surface::built_in());
    assert_eq!(
        lines(&inputs),
        [format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}}"#,
            "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2030-01-01\",\"io.modelcontextprotocol/clientCapabilities\":{}}}"
        )]
    );
}

#[test]
fn shrinking_keeps_only_what_the_failure_needs() {
    let config = Config { cases: 2000, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let result = runner.run(&scripts(), |script| {
        prop_assert!(!script.features().contains(&Feature::Mutation(Mutation::DuplicateKey)));
        Ok(())
    });
    let Err(TestError::Fail(_, minimal)) = result else { panic!("no script with a duplicate key: {result:?}") };
    let plain = request(Call::ToolsList, IdKind::SmallInt, Envelope::Plain);
    assert_eq!(
        minimal,
        script(
            Opening::Handshake(HandshakeVersion::V2025_11_25, Declares::Nothing),
            vec![Step::Mutated(plain, Mutation::DuplicateKey)]
        )
    );
}

/// True when the planted bug `notification-selects-era` (a notification before any request pins the handshake era)
/// breaks its rule on the script: the script sends a notification first and later a fully enveloped
/// `server/discover` that no un-enveloped request precedes.
fn pins_on_a_notification(script: &Script) -> bool {
    let mutant = Mutant::NotificationSelectsEra;
    let transcript = run_in_process(&Planted(mutant), &script.encode_on(&Surface::built_in()));
    check(&transcript, &mutant.policy()).iter().any(|f| f.rule == mutant.expected_rule())
}

#[test]
fn a_notification_then_an_enveloped_discover_is_reached() {
    // Both through the notification-first opening: proptest's weight is one in eleven, arbitrary's one in twelve
    // (before, arbitrary had no such opening and reached the shape rarely, through a request whose id a mutation
    // drops: the seeded campaigns took up to 1,770 conversations).
    let by_proptest = proptest_scripts(2000).iter().filter(|s| pins_on_a_notification(s)).count();
    let by_arbitrary = byte_buffers(4000).iter().filter(|b| pins_on_a_notification(&Script::from_bytes(b))).count();
    assert!(
        by_proptest >= 100 && by_arbitrary >= 200,
        "proptest {by_proptest} of 2000, arbitrary {by_arbitrary} of 4000"
    );
}

#[test]
fn a_notification_first_opening_takes_only_modern_draws() {
    // The opening's draw is the first four bytes. A notification-first draw with its lowest bit set is a modern
    // draw, and the rest of the script is the same: the seeded conversations that were not turned into
    // notification-first ones stay as they were.
    let mut turned = 0;
    for mut bytes in byte_buffers(4000).into_iter().filter(|b| b.len() >= 4) {
        let script = Script::from_bytes(&bytes);
        if script.opening != Opening::NotificationFirst {
            continue;
        }
        turned += 1;
        bytes[0] |= 1;
        let modern = Script::from_bytes(&bytes);
        assert_eq!(modern, Script { opening: Opening::Modern, ..script });
    }
    assert!((200..500).contains(&turned), "{turned} of 4000 open with a notification (weight 1 in 12)");
}

#[test]
fn half_the_handshake_openings_declare_every_client_capability_and_keep_their_steps() {
    // The choice is the opening draw's lowest bit: flipping it changes what the initialize declares and nothing
    // else of the script.
    let (mut declaring, mut handshakes) = (0, 0);
    for mut bytes in byte_buffers(4000).into_iter().filter(|b| b.len() >= 4) {
        let script = Script::from_bytes(&bytes);
        let Opening::Handshake(version, declares) = script.opening else { continue };
        handshakes += 1;
        declaring += usize::from(declares != Declares::Nothing);
        bytes[0] ^= 1;
        let flipped = Script::from_bytes(&bytes);
        let Opening::Handshake(flipped_version, other) = flipped.opening else { panic!("{flipped:?}") };
        assert_eq!(flipped_version, version);
        assert_ne!(other == Declares::Nothing, declares == Declares::Nothing, "{declares:?} {other:?}");
        assert_eq!(flipped, Script { opening: flipped.opening, ..script.clone() });
        let Some(Input::Line(initialize)) = script.encode_on(&Surface::built_in()).into_iter().next() else {
            panic!("no initialize: {script:?}")
        };
        let initialize = String::from_utf8_lossy(&initialize).into_owned();
        let declared = initialize.contains(r#""capabilities":{"sampling":{},"elicitation":{},"roots""#);
        assert_eq!(declared, declares != Declares::Nothing, "{initialize}");
        if let Declares::Everything(style) = declares {
            assert_eq!(initialize.contains(style.name()), style != Answers::Accept, "{initialize}");
        }
    }
    assert!(
        handshakes > 500 && (0.4..0.6).contains(&(declaring as f64 / handshakes as f64)),
        "{declaring}/{handshakes}"
    );
    // Proptest's scripts declare nothing: their draws, and so their shrinking, stay as they were.
    let mut runner = TestRunner::deterministic();
    for _ in 0..500 {
        let script = scripts().new_tree(&mut runner).unwrap().current();
        assert!(!matches!(script.opening, Opening::Handshake(_, Declares::Everything(_))), "{script:?}");
    }
}
