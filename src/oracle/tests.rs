//! The whole oracle: how a conversation ended (crash, hang, shutdown), what a sent line is read as, the reference
//! server's zero-findings baseline, and garbage and hostile lines that never make it panic.

use crate::model::ServerModel;
use crate::oracle::rules::*;
use crate::oracle::test_support::E::*;
use crate::oracle::test_support::*;
use crate::oracle::{Level, Policy, check};
use crate::transcript::{Ending, Event, Input, Transcript};

#[test]
fn server_crash() {
    let ending = Ending::Exited { code: Some(2), signal: None, stderr_tail: b"Traceback: boom\n".to_vec() };
    let found = check(&t(&[S(PING_1)], ending), &Policy::default());
    assert_eq!(ids(&found), [SERVER_CRASH]);
    assert_eq!(found[0].event, Some(0));
    assert!(found[0].detail.contains("code 2") && found[0].detail.contains("Traceback: boom"), "{}", found[0].detail);
    let killed = Ending::Exited { code: None, signal: Some(9), stderr_tail: vec![] };
    assert!(check(&t(&[], killed), &Policy::default())[0].detail.contains("signal 9"));
    quiet(&[S(PING_1), R(EMPTY_1)], SERVER_CRASH);
}

/// A crash is put on the first line after the last one answered that owes an answer, within its step: the same
/// line whether the exit was seen at once or a step later, after more lines were written.
#[test]
fn a_crash_is_put_on_the_line_after_the_last_answered_one() {
    let exited = || Ending::Exited { code: Some(101), signal: None, stderr_tail: vec![] };
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/wirefuzz"}"#;
    let batch = r#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    let ping_3 = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    let at = |events: &[E]| {
        let found = check(&t(events, exited()), &Policy::default());
        found.iter().find(|f| f.rule == SERVER_CRASH).and_then(|f| f.event)
    };
    // Seen at the step's barrier, or a step later: the batch (event 3) either way, past the notification.
    assert_eq!(at(&[S(PING_1), R(EMPTY_1), S(notification), S(batch)]), Some(3));
    assert_eq!(at(&[S(PING_1), R(EMPTY_1), S(notification), S(batch), Sync, S(ping_3), S("{oops")]), Some(3));
    // A step of notifications only: its first line, though more steps followed.
    assert_eq!(at(&[S(PING_1), R(EMPTY_1), S(notification), Sync, S(ping_3)]), Some(2));
    // Nothing answered: the first line sent.
    assert_eq!(at(&[S(notification), S(PING_1), Sync, S(ping_3)]), Some(1));
    // Everything answered: the last line sent.
    assert_eq!(at(&[S(PING_1), R(EMPTY_1)]), Some(0));
}

#[test]
fn server_hang() {
    let found = check(&t(&[S(PING_1)], Ending::Hung { waited_ms: 3000 }), &Policy::default());
    assert_eq!(ids(&found), [SERVER_HANG]);
    assert!(found[0].detail.contains("3000 ms"));
    quiet(&[S(PING_1), R(EMPTY_1)], SERVER_HANG);
}

#[test]
fn server_shutdown() {
    // Every request answered, then no exit when the input closed: a shutdown SHOULD, not a hang.
    let found = check(&t(&[S(PING_1), R(EMPTY_1)], Ending::Hung { waited_ms: 3000 }), &Policy::default());
    assert_eq!(ids(&found), [SERVER_SHUTDOWN]);
    assert_eq!(found[0].level, Level::Warning);
    assert!(found[0].detail.contains("3000 ms"), "{}", found[0].detail);
    quiet(&[S(PING_1), R(EMPTY_1)], SERVER_SHUTDOWN);
    // A request still owed its reply makes it a hang.
    let owed = check(
        &t(&[S(PING_1), R(EMPTY_1), S(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)], Ending::Hung { waited_ms: 1 }),
        &Policy::default(),
    );
    assert_eq!(ids(&owed), [SERVER_HANG]);
    // A tool call the client cancelled as slow is owed nothing, but it was not answered: the text says so.
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch","arguments":{}}}"#;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
    let cancelled = check(&t(&[S(PING_1), R(EMPTY_1), S(call), S(cancel)], Ending::Hung { waited_ms: 1 }), &dual());
    assert_eq!(ids(&cancelled), [SERVER_SHUTDOWN]);
    assert!(!cancelled[0].detail.contains("answered every request"), "{}", cancelled[0].detail);
    assert!(cancelled[0].detail.contains("left 1 request(s) unanswered"), "{}", cancelled[0].detail);
}

/// Lines that probe every corner the reference server answers in its own legitimate way.
fn tricky_lines() -> Vec<String> {
    let env = ENV;
    let mut lines: Vec<String> = [
        PING_1,
        LIST_1,
        INIT,
        NOTE,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#,
        r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"add","arguments":{"a":"1","b":2}}}"#,
        r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"nope"}}"#,
        r#"{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"add","arguments":[1,2]}}"#,
        r#"{"jsonrpc":"2.0","id":"e","method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"resources/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"resources/templates/list"}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"no/such/method"}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"info"}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"server/discover"}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":10,"method":"initialize","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":12,"method":"initialize","params":{"protocolVersion":7}}"#,
        r#"{"jsonrpc":"2.0","id":13,"method":"ping","params":{"_meta":{}}}"#,
        r#"{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":15,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":16,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":null,"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":17,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":7}}}"#,
        r#"{"jsonrpc":"2.0","id":18,"method":"tools/list","params":{"_meta":7}}"#,
        r#"{"jsonrpc":"2.0","id":12345678901234567890123456789,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"\u00e9\ud83d\ude00","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","method":"x","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":19,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":20,"error":{"code":1,"message":"client error"}}"#,
        r#"{"jsonrpc":"2.0","id":21,"error":{"code":1.5,"message":"bad"}}"#,
        r#"{"jsonrpc":"2.0","id":22,"result":{},"error":{"code":1,"message":"both"}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":23}"#,
        r#"{"jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"1.0","id":24,"method":"ping"}"#,
        r#"{"id":25,"method":"ping"}"#,
        r#"{"jsonrpc":2,"id":"26","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":[27],"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":28,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":29,"method":"ping","params":null}"#,
        r#"{"jsonrpc":"2.0","id":30,"method":"ping","params":"x"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":5}"#,
        r#"{"jsonrpc":"2.0","id":31,"method":"ping"}{"jsonrpc":"2.0","id":32,"method":"ping"}"#,
        r#"[{"jsonrpc":"2.0","id":33,"method":"ping"}]"#,
        "[]",
        "42",
        "\"ping\"",
        "null",
        "{not json",
        "",
        "   \t",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for method in ["server/discover", "tools/list", "prompts/list", "resources/list", "ping", "logging/setLevel"] {
        lines.push(modern("40", method, ""));
    }
    lines.push(modern("41", "tools/call", r#""name":"add","arguments":{"a":2,"b":3},"#));
    lines.push(modern(
        "42",
        "tools/call",
        r#""name":"add","arguments":{"a":170141183460469231731687303715884105727,"b":1},"#,
    ));
    lines.push(modern("43", "tools/call", r#""name":"sub","#));
    lines.push(modern("44", "initialize", r#""protocolVersion":"2025-11-25","capabilities":{},"#));
    lines.push(modern("45", "resources/subscribe", r#""uri":"x","#));
    lines.push(modern("46", "tools/list", "").replace("2026-07-28", "2025-11-25"));
    lines.push(modern("47", "tools/list", "").replace(r#""2026-07-28""#, "[]"));
    lines.push(format!(r#"{{"jsonrpc":"2.0","id":48,"method":"tools/list","params":{{{env}}},"extra":1}}"#));
    lines.push(modern("\"49\"", "server/discover", ""));
    lines
}

#[test]
fn the_reference_server_is_clean_on_every_tricky_line_in_either_era() {
    let lines = tricky_lines();
    for first in &lines {
        let mut conversation = vec![first.clone()];
        conversation.extend(lines.iter().flat_map(|l| [l.clone(), "<sync>".to_string()]));
        assert_clean(&reference(&conversation));
    }
}

#[test]
fn the_reference_server_is_clean_on_random_conversations() {
    let lines = tricky_lines();
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..400 {
        let length = rng.below(24);
        let conversation: Vec<String> = (0..length)
            .map(|_| match rng.below(8) {
                0 => "<sync>".to_string(),
                1 => String::from_utf8_lossy(&rng.bytes(40)).into_owned(),
                _ => lines[rng.below(lines.len())].clone(),
            })
            .collect();
        assert_clean(&reference(&conversation));
    }
}

#[test]
fn the_reference_server_is_clean_on_the_seed_transcripts() {
    for case in crate::seeds::builtin() {
        let lines: Vec<String> = case.lines().iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect();
        assert_clean(&reference(&lines));
    }
}

/// A tiny deterministic generator (xorshift64), enough for garbage.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn bytes(&mut self, max: usize) -> Vec<u8> {
        const ALPHABET: &[u8] = b"{}[]\":,0123456789-.eE \\untrlfajsoc\xff\xc3\xa9\x00\n";
        let length = self.below(max + 1);
        (0..length)
            .map(|_| if self.below(2) == 0 { ALPHABET[self.below(ALPHABET.len())] } else { self.next() as u8 })
            .collect()
    }
}

#[test]
fn garbage_never_panics() {
    let lines = tricky_lines();
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let policies = [
        Policy::default(),
        Policy::default().allow(ERA_SINGLE).unwrap().deny(MALFORMED_REPLY).unwrap(),
        Policy::default().with_supported_versions(Vec::<String>::new()),
    ];
    for round in 0..2000 {
        let events = (0..rng.below(30))
            .map(|_| {
                let line = match rng.below(3) {
                    0 => rng.bytes(60),
                    _ => lines[rng.below(lines.len())].as_bytes().to_vec(),
                };
                match rng.below(5) {
                    0 => Event::Sync,
                    1 | 2 => Event::Sent(line),
                    _ => Event::Received { line, truncated: rng.below(10) == 0 },
                }
            })
            .collect();
        let ending = match rng.below(3) {
            0 => Ending::Closed,
            1 => Ending::Exited { code: None, signal: Some(11), stderr_tail: rng.bytes(50) },
            _ => Ending::Hung { waited_ms: rng.next() },
        };
        let transcript = Transcript { events, ending };
        for finding in check(&transcript, &policies[round % policies.len()]) {
            assert!(super::rule(finding.rule).is_some(), "{finding:?}");
            assert!(finding.event.is_none_or(|e| e < transcript.events.len()), "{finding:?}");
        }
    }
}

#[test]
fn hostile_lines_never_panic() {
    let deep = "[".repeat(200_000);
    let deep_object = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#, r#"{"a":"#.repeat(5000), "}".repeat(5000));
    let huge_id = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"ping"}}"#, "9".repeat(100_000));
    let huge_reply = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, "9".repeat(100_000));
    let huge_string = format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{"s":"{}"}}}}"#, "x".repeat(5_000_000));
    let events = [S(&deep), R(&deep), S(&huge_id), R(&huge_reply), R(&deep_object), S(&huge_string), R(&huge_string)];
    let found = findings(&events);
    assert!(found.iter().all(|f| f.detail.len() < 1000), "details stay short");
    assert!(ids(&found).contains(&FRAMING));
    let raw = Transcript {
        events: vec![Event::Sent(vec![0xff; 10]), Event::Received { line: vec![0xc3], truncated: false }],
        ending: Ending::Closed,
    };
    assert_eq!(ids(&check(&raw, &Policy::default())), [FRAMING]);
}

#[test]
fn tampering_with_a_reference_transcript_is_caught() {
    let lines = [modern("1", "tools/list", ""), modern("2", "server/discover", ""), INIT.to_string()];
    let clean = reference(&lines);
    assert_eq!(clean.received().count(), 3, "{}", clean.render());
    assert_clean(&clean);
    let tamper = |edit: &dyn Fn(&mut Vec<Event>)| {
        let mut events = clean.events.clone();
        edit(&mut events);
        ids(&check(&Transcript { events, ending: Ending::Closed }, &Policy::default()))
    };
    assert_eq!(tamper(&|events| drop(events.remove(1))), [RESPONSE_MISSING]);
    assert_eq!(tamper(&|events| events.push(events[1].clone())), [DUPLICATE_RESPONSE]);
    let retype = |events: &mut Vec<Event>| {
        if let Event::Received { line, .. } = &mut events[1] {
            *line = String::from_utf8_lossy(line).replace("complete", "partial").into_bytes();
        }
    };
    assert_eq!(tamper(&retype), [MODERN_RESULT_TYPE]);
}

#[test]
fn a_lenient_id_is_looked_for_only_where_one_can_be() {
    let lines = (0..3000).flat_map(|i| crate::campaign::conversation(11, i)).filter_map(|input| match input {
        Input::Line(line) => Some(line),
        Input::Sync => None,
    });
    let not_json: Vec<Vec<u8>> = lines
        .chain([b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"} x".to_vec(), b"{\"id\":4,\"a\":\"\xff".to_vec()])
        .filter(|line| matches!(crate::protocol::Frame::parse(line), crate::protocol::Frame::NotJson { .. }))
        // Lines a lenient reader parses whole are ambiguous instead (see lenient_lines_are_ambiguous).
        .filter(|line| {
            crate::protocol::json::lenient_text(line).is_none_or(|text| crate::protocol::Frame::skim(&text).is_err())
        })
        .collect();
    let mut with_id = 0;
    for line in &not_json {
        let deep = matches!(crate::protocol::Frame::parse(line), crate::protocol::Frame::NotJson { error, .. } if error.contains("recursion limit"));
        let expected = if deep { super::jsonrpc::top_level_id(line) } else { super::jsonrpc::lenient_id(line) };
        with_id += usize::from(expected.is_some());
        assert_eq!(super::read_sent(line).lenient_id, expected, "{}", String::from_utf8_lossy(line));
    }
    assert!(not_json.len() > 100 && with_id > 10, "{} lines, {with_id} with an id", not_json.len());
}

#[test]
fn the_reference_server_is_clean_under_its_model_and_the_python_profile() {
    let lines = tricky_lines();
    let built_in = Policy::default().with_model(ServerModel::built_in());
    for policy in [built_in.clone(), built_in.with_profile("mcp-python-2.3.0").unwrap()] {
        for first in &lines {
            let mut conversation = vec![first.clone()];
            conversation.extend(lines.iter().flat_map(|l| [l.clone(), "<sync>".to_string()]));
            let transcript = reference(&conversation);
            let found = check(&transcript, &policy);
            assert!(found.is_empty(), "{}\n{found:#?}", transcript.render());
        }
    }
}
