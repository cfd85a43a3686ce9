//! Rule-by-rule tests on hand-written transcripts, the reference server's zero-findings baseline, and garbage.

use super::rules::*;
use super::{Finding, Level, Policy, check};
use crate::model::{Eras, ServerModel};
use crate::protocol::envelope::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY};
use crate::server::builtin::reference::Calc;
use crate::server::run_in_process;
use crate::transcript::{Ending, Event, Input, Transcript};

/// One event of a hand-written transcript.
#[derive(Clone, Copy)]
enum E<'a> {
    S(&'a str),
    R(&'a str),
    Sync,
}
use E::*;

fn t(events: &[E], ending: Ending) -> Transcript {
    let events = events
        .iter()
        .map(|e| match e {
            S(line) => Event::Sent(line.as_bytes().to_vec()),
            R(line) => Event::Received { line: line.as_bytes().to_vec(), truncated: false },
            Sync => Event::Sync,
        })
        .collect();
    Transcript { events, ending }
}

/// The policy most tests judge with: a dual-era server (as the built-in one), every rule at its default.
fn dual() -> Policy {
    Policy::default().with_model(ServerModel::stated(Eras::Dual))
}

fn findings(events: &[E]) -> Vec<Finding> {
    check(&t(events, Ending::Closed), &dual())
}

/// A dual-era server judged under the profile mcp-python-2.3.0 (the one-era lock, MCP-ERA-SINGLE).
fn python() -> Policy {
    dual().with_profile("mcp-python-2.3.0").unwrap()
}

#[track_caller]
fn fires_under(policy: &Policy, events: &[E], rule: &str) -> Finding {
    let found = check(&t(events, Ending::Closed), policy);
    let finding = found.iter().find(|f| f.rule == rule);
    finding.unwrap_or_else(|| panic!("{rule} did not fire; findings: {found:#?}")).clone()
}

#[track_caller]
fn only_under(policy: &Policy, events: &[E], expected: &[&str]) {
    let found = check(&t(events, Ending::Closed), policy);
    assert_eq!(ids(&found), expected, "{found:#?}");
}

fn ids(findings: &[Finding]) -> Vec<&'static str> {
    findings.iter().map(|f| f.rule).collect()
}

#[track_caller]
fn fires(events: &[E], rule: &str) -> Finding {
    let found = findings(events);
    let finding = found.iter().find(|f| f.rule == rule);
    finding.unwrap_or_else(|| panic!("{rule} did not fire; findings: {found:#?}")).clone()
}

#[track_caller]
fn quiet(events: &[E], rule: &str) {
    let found = findings(events);
    assert!(found.iter().all(|f| f.rule != rule), "{rule} fired: {found:#?}");
}

#[track_caller]
fn only(events: &[E], expected: &[&str]) {
    assert_eq!(ids(&findings(events)), expected, "{:#?}", findings(events));
}

const PING_1: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const LIST_1: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
const EMPTY_1: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
const NOTE: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
const ENV: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
const STAMP: &str =
    r#""resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}"#;
const HINTS: &str = r#""ttlMs":0,"cacheScope":"private","#;

/// A fully enveloped modern request; `extra` goes first in params (end it with a comma).
fn modern(id: &str, method: &str, extra: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{extra}{ENV}}}}}"#)
}

/// A well-stamped modern result; `body` goes first (end it with a comma).
fn modern_ok(id: &str, body: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{{body}{STAMP}}}}}"#)
}

fn error(id: &str, code: i64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"m"}}}}"#)
}

// ---- JSON-RPC layer ----

#[test]
fn framing() {
    let f = fires(&[S(PING_1), R(EMPTY_1), R("INFO server started")], FRAMING);
    assert_eq!((f.event, f.level), (Some(2), Level::Error));
    assert!(f.detail.contains("INFO server started"), "{}", f.detail);
    fires(&[R("[1,2]")], FRAMING);
    fires(&[R("   ")], FRAMING);
    fires(&[R("7")], FRAMING);
    let bad_utf8 = Transcript {
        events: vec![Event::Received { line: b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}".to_vec(), truncated: false }],
        ending: Ending::Closed,
    };
    assert_eq!(ids(&check(&bad_utf8, &Policy::default())), [FRAMING]);
    let cut = Transcript {
        events: vec![Event::Received { line: br#"{"jsonrpc":"2.0","method":"x"}"#.to_vec(), truncated: true }],
        ending: Ending::Closed,
    };
    assert_eq!(ids(&check(&cut, &Policy::default())), [FRAMING]);
    only(&[S(PING_1), R(EMPTY_1)], &[]);
}

#[test]
fn version() {
    let f = fires(&[S(PING_1), R(r#"{"jsonrpc":"1.0","id":1,"result":{}}"#)], VERSION);
    assert!(f.detail.contains("\"1.0\""), "{}", f.detail);
    // The reply still answers the request: no cascade into a missing response.
    only(&[S(PING_1), R(r#"{"id":1,"result":{}}"#)], &[VERSION]);
    quiet(&[S(PING_1), R(EMPTY_1)], VERSION);
}

#[test]
fn message_shape() {
    fires(&[R(r#"{"jsonrpc":"2.0","method":5}"#)], MESSAGE_SHAPE);
    fires(&[R(r#"{"jsonrpc":"2.0","method":"notifications/message","params":"x"}"#)], MESSAGE_SHAPE);
    fires(&[R(r#"{"jsonrpc":"2.0","id":1.5,"method":"roots/list"}"#)], MESSAGE_SHAPE);
    quiet(&[R(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}"#)], MESSAGE_SHAPE);
}

#[test]
fn response_shape() {
    let both = r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#;
    only(&[S(PING_1), R(both)], &[RESPONSE_SHAPE]);
    fires(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":1,"result":5}"#)], RESPONSE_SHAPE);
    fires(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":1}"#)], RESPONSE_SHAPE);
    quiet(&[S(PING_1), R(EMPTY_1)], RESPONSE_SHAPE);
}

#[test]
fn error_shape() {
    let f = fires(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601.0,"message":"m"}}"#)], ERROR_SHAPE);
    assert!(f.detail.contains("-32601.0"), "{}", f.detail);
    fires(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-326e2,"message":"m"}}"#)], ERROR_SHAPE);
    fires(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":1,"error":{"code":"-32601","message":"m"}}"#)], ERROR_SHAPE);
    fires(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601}}"#)], ERROR_SHAPE);
    fires(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#)], ERROR_SHAPE);
    only(&[S(LIST_1), R(&error("1", -32601))], &[]);
}

#[test]
fn id_echo() {
    let f = fires(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":"1","result":{}}"#)], ID_ECHO);
    assert!(f.detail.contains("a string for an integer"), "{}", f.detail);
    // The mistyped reply is the answer, so the request is not also missing.
    only(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":"1","result":{}}"#), Sync], &[ID_ECHO]);
    fires(&[S(r#"{"jsonrpc":"2.0","id":"7","method":"ping"}"#), R(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#)], ID_ECHO);
    fires(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":1.0,"result":{}}"#)], ID_ECHO);
    // A big id rounded is JSONRPC-BIG-ID (see big_id).
    let big = r#"{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}"#;
    let rounded = r#"{"jsonrpc":"2.0","id":12345678901234567000000,"result":{}}"#;
    only(&[S(big), R(rounded), Sync], &[BIG_ID]);
    only(&[S(big), R(r#"{"jsonrpc":"2.0","id":12345678901234567890123,"result":{}}"#), Sync], &[]);
    fires(&[S(PING_1), R(EMPTY_1), R(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#)], ID_ECHO);
    only(&[S(r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#), R(r#"{"jsonrpc":"2.0","id":-0,"result":{}}"#)], &[]);
    only(&[S(r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#), R(r#"{"jsonrpc":"2.0","id":"","result":{}}"#)], &[]);
}

/// String ids of the odd classes the generator sends (`IdKind::Odd`) are matched by value: escapes, `\/` and raw or
/// escaped separators and non-BMP characters are the same id; a trimmed or stripped echo is JSONRPC-ID-ECHO (one
/// finding: the reply still answers its request).
#[test]
fn odd_string_ids_are_matched_by_value() {
    let ping = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
    let ok = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
    let same = [
        (r#"" \t req-3 \n ""#, r#"" \u0009 req-3 \u000A ""#),
        (r#""\"\\/\b\f\\u0000'req-3""#, r#""\u0022\\\/\u0008\u000C\\u0000'req-3""#),
        (r#""req\u2028 3\u2029""#, "\"req\u{2028} 3\u{2029}\""),
        (r#""\ud83d\ude00-3""#, "\"\u{1F600}-3\""),
        (r#""\u0000\u0001\u001b[0m\u007freq-3""#, r#""\u0000\u0001\u001B[0m\u007Freq-3""#),
    ];
    for (sent, echoed) in same {
        only(&[S(&ping(sent)), R(&ok(echoed)), Sync], &[]);
    }
    let changed = [
        (r#"" \t req-3 \n ""#, r#""req-3""#),
        (r#""\u0000\u0001req-3""#, r#""req-3""#),
        (r#""req\u2028 3\u2029""#, r#""req 3""#),
    ];
    for (sent, echoed) in changed {
        let f = fires(&[S(&ping(sent)), R(&ok(echoed)), Sync], ID_ECHO);
        assert!(f.detail.contains("trimmed"), "{}", f.detail);
        only(&[S(&ping(sent)), R(&ok(echoed)), Sync], &[ID_ECHO]);
    }
}

/// A request nested past this parser's limit is valid JSON: a server with a higher limit (JSON.parse has none)
/// serves it, or refuses its params; a lower one refuses it id-less. Neither is MALFORMED-SERVED or -REPLY (what is
/// wrong past the limit is not judged).
#[test]
fn a_request_nested_past_the_parser_limit_may_be_served() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":"","method":"tools/list","params":{{"wirefuzz":{}{}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    only(&[S(&deep), R(r#"{"jsonrpc":"2.0","id":"","result":{"tools":[]}}"#), Sync], &[]);
    let strict = dual().deny(MALFORMED_REPLY).unwrap();
    only_under(&strict, &[S(&deep), R(&error(r#""""#, -32602)), Sync], &[]);
    only(&[S(&deep), R(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}"#), Sync], &[]);
    // Its whole-valued id `2.0` is the integer 2 to JSON.parse (TS SDK 1.32.2 answers under 2).
    let whole = deep.replace(r#""id":"""#, r#""id":2.0"#);
    only(&[S(&whole), R(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#), Sync], &[]);
}

#[test]
fn duplicate_response() {
    let f = fires(&[S(PING_1), R(EMPTY_1), R(EMPTY_1)], DUPLICATE_RESPONSE);
    assert_eq!(f.event, Some(2));
    // A client that reuses an open id may get one reply per instance, but not more.
    quiet(&[S(PING_1), S(PING_1), R(EMPTY_1), R(EMPTY_1), Sync], DUPLICATE_RESPONSE);
    only(&[S(PING_1), S(PING_1), R(EMPTY_1), R(EMPTY_1), Sync], &[]);
    fires(&[S(PING_1), S(PING_1), R(EMPTY_1), R(EMPTY_1), R(EMPTY_1)], DUPLICATE_RESPONSE);
}

#[test]
fn response_missing() {
    let f = fires(&[S(PING_1), Sync, S(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)], RESPONSE_MISSING);
    assert_eq!(f.event, Some(0));
    // At the end of a closed connection too, once per request.
    let found = findings(&[S(PING_1), S(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#), R(EMPTY_1)]);
    assert_eq!(ids(&found), [RESPONSE_MISSING]);
    assert_eq!(found[0].event, Some(1));
    // A late reply after the sync it was due by is its answer (a slow handler, a server still starting): the
    // request is not missing, and the reply is not a stray id.
    only(&[S(PING_1), Sync, R(EMPTY_1)], &[]);
    let ping_2 = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    only(&[S(PING_1), Sync, S(ping_2), R(EMPTY_1), R(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#)], &[]);
    only(&[S(PING_1), Sync, S(ping_2), Sync, R(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#)], &[RESPONSE_MISSING]);
    // Reused open ids need at least one reply.
    quiet(&[S(PING_1), S(PING_1), R(EMPTY_1), Sync], RESPONSE_MISSING);
    only(&[S(PING_1), S(PING_1), Sync], &[RESPONSE_MISSING]);
    // Array params are not MCP: silence is acceptable.
    quiet(&[S(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}"#), Sync], RESPONSE_MISSING);
    // After a crash or hang, the ending is the finding.
    let crashed = t(&[S(PING_1), Sync], Ending::Exited { code: Some(1), signal: None, stderr_tail: vec![] });
    assert_eq!(ids(&check(&crashed, &Policy::default())), [SERVER_CRASH]);
    let hung = t(&[S(PING_1), Sync, S(PING_1)], Ending::Hung { waited_ms: 5000 });
    assert_eq!(ids(&check(&hung, &Policy::default())), [RESPONSE_MISSING, SERVER_HANG]);
    // A server that answered a later request and then did not exit (server-everything's timer) dropped the earlier
    // one: its silence is the finding, and the ending only a shutdown it missed.
    let ping_2 = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let dropped = t(&[S(PING_1), S(ping_2), R(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#), Sync], hung.ending.clone());
    assert_eq!(ids(&check(&dropped, &Policy::default())), [RESPONSE_MISSING, SERVER_SHUTDOWN]);
    // One sent after the last line it answered is still owed: a hang.
    let owed = t(&[S(ping_2), R(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#), S(PING_1), Sync], hung.ending.clone());
    assert_eq!(ids(&check(&owed, &Policy::default())), [SERVER_HANG]);
    quiet(&[S(PING_1), R(EMPTY_1), Sync], RESPONSE_MISSING);
}

#[test]
fn notification_reply() {
    let null_error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}"#;
    let f = fires(&[S(NOTE), R(null_error)], NOTIFICATION_REPLY);
    assert_eq!(f.event, Some(1));
    fires(&[S(NOTE), R(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#)], NOTIFICATION_REPLY);
    fires(&[S(NOTE), R(r#"{"jsonrpc":"2.0","result":{}}"#)], NOTIFICATION_REPLY);
    quiet(&[S(NOTE), Sync], NOTIFICATION_REPLY);
    // A null-id error after a malformed line answers that line, not the notification.
    let parse_error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    only(&[S(NOTE), S("{oops"), R(parse_error)], &[]);
    // rmcp 3.11.0 refuses a request whose _meta is a string with an id-less -32600, and is silent on a
    // notification: with both in the stretch, the error is the request's when the request never gets its own
    // response, and the notification's when it does.
    let meta = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","_meta":"x"}}"#;
    let refusal = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#;
    only(&[S(NOTE), S(meta), R(refusal), Sync], &[RESPONSE_MISSING, NULL_ID]);
    let f = fires(&[S(NOTE), S(meta), R(refusal), Sync], NULL_ID);
    assert!(f.event == Some(2) && f.detail.contains("the request at event 1"), "{f:?}");
    let answered = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"_meta"}}"#;
    only(&[S(NOTE), S(meta), R(refusal), R(answered), Sync], &[NOTIFICATION_REPLY]);
    // A request answered before the error, or from an earlier stretch, leaves it to the notification.
    only(&[S(meta), R(answered), S(NOTE), R(refusal), Sync], &[NOTIFICATION_REPLY]);
}

#[test]
fn null_id() {
    let internal = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#;
    let f = fires(&[S(PING_1), R(internal)], NULL_ID);
    assert!(f.detail.contains("no malformed line"), "{}", f.detail);
    fires(&[S("{oops"), R(internal)], NULL_ID);
    fires(&[S("{oops"), R(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#)], NULL_ID);
    let parse_error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    only(&[S("{oops"), R(parse_error)], &[]);
    let absent = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}"#;
    only(&[S("[]"), R(absent)], &[]);
    // Each malformed line explains one such reply.
    fires(&[S("{oops"), R(parse_error), R(parse_error)], NULL_ID);
}

#[test]
fn malformed_served() {
    let old = r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#;
    let f = fires(&[S(old), R(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#)], MALFORMED_SERVED);
    assert_eq!(f.event, Some(1));
    only(&[S(old), R(&error("7", -32600))], &[]);
    only(&[S(old), R(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}"#)], &[]);
}

#[test]
fn malformed_lines_read_leniently_are_served_not_misechoed() {
    let served = r#"{"jsonrpc":"2.0","id":9,"result":{}}"#;
    let mut bad_utf8 = br#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":""#.to_vec();
    bad_utf8.extend_from_slice(&[0xff, 0xfe]);
    bad_utf8.extend_from_slice(br#""}}"#);
    let transcript = |reply: &str| Transcript {
        events: vec![
            Event::Sent(bad_utf8.clone()),
            Event::Received { line: reply.as_bytes().to_vec(), truncated: false },
        ],
        ending: Ending::Closed,
    };
    // Bytes that are not UTF-8 inside a string, and a byte-order mark, are what a lenient reader accepts (RFC 8259
    // §9, §8.1): the line is ambiguous, and may be served (see lenient_lines_are_ambiguous).
    assert!(check(&transcript(served), &Policy::default()).is_empty());
    assert!(check(&transcript(&error("9", -32700)), &Policy::default()).is_empty());
    let bom = "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}";
    only(&[S(bom), R(served)], &[]);
    let bom_twice = format!("\u{feff}{}{}", &bom[3..], &bom[3..]);
    only(&[S(&bom_twice), R(served)], &[MALFORMED_SERVED]);
    let two = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}{"jsonrpc":"2.0","id":8,"method":"ping"}"#;
    only(&[S(two), R(served)], &[MALFORMED_SERVED]);
    fires(&[S("{oops"), R(served)], ID_ECHO);
    // A string where params should be is malformed; null params has a rule of its own.
    let string_params = r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":"x"}"#;
    only(&[S(string_params), Sync, R(served)], &[MALFORMED_SERVED]);
}

#[test]
fn null_params() {
    let null_params = r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":null}"#;
    let served = r#"{"jsonrpc":"2.0","id":9,"result":{}}"#;
    let found = findings(&[S(null_params), Sync, R(served)]);
    assert_eq!(ids(&found), [NULL_PARAMS], "not also MALFORMED-SERVED: {found:#?}");
    assert_eq!((found[0].event, found[0].level), (Some(2), Level::Warning));
    assert!(found[0].detail.contains("params\": null"), "{}", found[0].detail);
    only(&[S(null_params), R(served)], &[NULL_PARAMS]);
    // Refused, or silently dropped: fine.
    only(&[S(null_params), Sync, R(&error("9", -32600))], &[]);
    only(&[S(null_params), R(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}"#)], &[]);
    only(&[S(null_params), Sync], &[]);
    // A policy: servers that treat null as absent can be allowed.
    let lenient = Policy::default().allow(NULL_PARAMS).unwrap();
    assert!(check(&t(&[S(null_params), R(served)], Ending::Closed), &lenient).is_empty());
    // Strict JSON-RPC wants the refusal.
    let strict = Policy::default().deny(MALFORMED_REPLY).unwrap();
    assert_eq!(ids(&check(&t(&[S(null_params), Sync], Ending::Closed), &strict)), [MALFORMED_REPLY]);
}

#[test]
fn malformed_reply_is_a_policy() {
    let garbage = [S("{oops"), Sync];
    assert!(findings(&garbage).is_empty());
    let strict = Policy::default().deny(MALFORMED_REPLY).unwrap();
    let found = check(&t(&garbage, Ending::Closed), &strict);
    assert_eq!(ids(&found), [MALFORMED_REPLY]);
    assert_eq!((found[0].event, found[0].level), (Some(0), Level::Warning));
    assert!(check(&t(&[S("  "), Sync], Ending::Closed), &strict).is_empty());
    let parse_error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    assert!(check(&t(&[S("{oops"), R(parse_error)], Ending::Closed), &strict).is_empty());
    let old = r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#;
    assert_eq!(ids(&check(&t(&[S(old), R(&error("7", -32601))], Ending::Closed), &strict)), [MALFORMED_REPLY]);
}

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
}

#[test]
fn unsolicited_request() {
    let discover = modern("1", "server/discover", "");
    let ask = r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}"#;
    let discovered =
        modern_ok("1", r#""supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public","#);
    let f = fires(&[S(&discover), R(&discovered), R(ask)], UNSOLICITED_REQUEST);
    assert_eq!(f.event, Some(2));
    fires(&[S(&discover), R(ask), R(&discovered)], UNSOLICITED_REQUEST);
    // On a dual-era server a connection opened with an enveloped request is a modern one, whatever the reply.
    fires(&[S(&discover), R(ask), R(&error("1", -32600))], UNSOLICITED_REQUEST);
    // Without a model, a -32600 does not show that the server serves 2026-07-28.
    let inferred = check(&t(&[S(&discover), R(ask), R(&error("1", -32600))], Ending::Closed), &Policy::default());
    assert!(inferred.iter().all(|f| f.rule != UNSOLICITED_REQUEST), "{inferred:#?}");
    // An initialize sent first opens a handshake connection, where the server may send requests.
    quiet(&[S(INIT), S(&discover), R(ask), R(INIT_OK)], UNSOLICITED_REQUEST);
    quiet(&[S(PING_1), R(ask), R(EMPTY_1)], UNSOLICITED_REQUEST);
    quiet(&[S(&discover), R(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#)], UNSOLICITED_REQUEST);
}

// ---- MCP layer ----

#[test]
fn era_single() {
    let enveloped = modern("2", "tools/list", "");
    let served = modern_ok("2", HINTS);
    let f = fires_under(&python(), &[S(INIT), R(INIT_OK), S(&enveloped), R(&served)], ERA_SINGLE);
    assert_eq!(f.event, Some(3));
    only_under(&python(), &[S(INIT), R(INIT_OK), S(&enveloped), R(&error("2", -32600))], &[]);
    let dual = dual();
    assert!(check(&t(&[S(INIT), R(INIT_OK), S(&enveloped), R(&served)], Ending::Closed), &dual).is_empty());

    let discover = modern("1", "server/discover", "");
    let discovered =
        modern_ok("1", r#""supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public","#);
    let refusal =
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}}"#;
    only_under(&python(), &[S(&discover), R(&discovered), S(INIT), R(refusal)], &[]);
    fires_under(&python(), &[S(&discover), R(&discovered), S(INIT), R(INIT_OK)], ERA_SINGLE);
    let bare = r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"no","data":{"supported":[]}}}"#;
    fires_under(&python(), &[S(&discover), R(&discovered), S(INIT), R(bare)], ERA_SINGLE);
    let dual_run = check(&t(&[S(&discover), R(&discovered), S(INIT), R(INIT_OK)], Ending::Closed), &dual);
    assert!(dual_run.is_empty(), "{dual_run:#?}");
}

/// A modern request whose envelope holds only the protocol version (rmcp and the Python SDK answer -32602).
fn half_enveloped(id: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"_meta":{{"{PROTOCOL_VERSION_KEY}":"2026-07-28"}}}}}}"#
    )
}

fn named_missing(id: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"missing {CLIENT_CAPABILITIES_KEY}"}}}}"#)
}

fn discovered(id: &str, versions: &str) -> String {
    modern_ok(id, &format!(r#""supportedVersions":{versions},"capabilities":{{}},"ttlMs":0,"cacheScope":"public","#))
}

#[test]
fn the_era_is_fixed_by_the_first_result_not_the_first_request() {
    // rmcp: a failed modern probe chooses nothing; the plain ping after it is a handshake ping.
    only_under(&python(), &[S(&half_enveloped("1")), R(&named_missing("1")), S(PING_1), R(EMPTY_1)], &[]);
    // Once a result fixed the era, the other era's requests must be refused.
    let f = fires_under(
        &python(),
        &[
            S(&half_enveloped("2")),
            R(&named_missing("2")),
            S(PING_1),
            R(EMPTY_1),
            S(&modern("3", "tools/list", "")),
            R(&modern_ok("3", HINTS)),
        ],
        ERA_SINGLE,
    );
    assert_eq!(f.event, Some(5));
    // rmcp: no era chosen after a failed first request, so an initialize without params is just invalid.
    let bare_init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#;
    only_under(
        &python(),
        &[S(&half_enveloped("1")), R(&named_missing("1")), S(bare_init), R(&error("0", -32602))],
        &[],
    );
    only_under(&python(), &[S(LIST_1), R(&error("1", -32602)), S(&half_enveloped("2")), R(&named_missing("2"))], &[]);
}

#[test]
fn before_the_era_is_fixed_the_other_eras_refusal_is_accepted() {
    // A server that locked the handshake era on a failed first request refuses enveloped requests with -32600.
    let failed_first = [S(LIST_1), R(&error("1", -32602))];
    let future = modern("2", "tools/list", "").replace("2026-07-28", "2099-01-01");
    let refused = error("2", -32600);
    for enveloped in [half_enveloped("2"), future, modern("2", "tools/list", "")] {
        only_under(&python(), &[failed_first[0], failed_first[1], S(&enveloped), R(&refused)], &[]);
    }
    // A server that locked the modern era refuses plain requests with -32602 and initialize with -32022.
    let locked_modern = [S(&half_enveloped("5")), R(&named_missing("5"))];
    let refusal =
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}}"#;
    let bare = r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"no","data":{"supported":[]}}}"#;
    only_under(&python(), &[locked_modern[0], locked_modern[1], S(PING_1), R(&error("1", -32602))], &[]);
    only_under(&python(), &[locked_modern[0], locked_modern[1], S(INIT), R(refusal)], &[]);
    only_under(&python(), &[S(INIT), R(&error("0", -32600))], &[]);
    fires_under(&python(), &[S(INIT), R(bare)], ERA_SINGLE);
    // The same refusals once the era is fixed are findings of that era's rules.
    let discover = modern("1", "server/discover", "");
    let fixed_modern = [S(&discover), R(&discovered("1", r#"["2026-07-28"]"#))];
    fires_under(
        &python(),
        &[fixed_modern[0], fixed_modern[1], S(&half_enveloped("2")), R(&error("2", -32600))],
        ENVELOPE_MISSING_KEY,
    );
    fires_under(&python(), &[S(INIT), R(INIT_OK), S(PING_1), R(&error("1", -32602))], PING);
    // Before it is fixed, a reply that is no refusal of either era is judged by the request's own era.
    fires_under(&python(), &[S(PING_1), R(&error("1", -32601))], PING);
    fires_under(&python(), &[S(&half_enveloped("1")), R(&error("1", -32602))], ENVELOPE_KEY_NAMED);
}

#[test]
fn the_reference_server_locks_its_era_on_a_failed_first_request() {
    let lines: Vec<String> = [half_enveloped("1"), PING_1.to_string(), INIT.to_string(), LIST_1.to_string()].to_vec();
    assert_clean(&reference(&lines));
    let lines = vec![LIST_1.to_string(), modern("2", "tools/list", ""), half_enveloped("3"), INIT.to_string()];
    assert_clean(&reference(&lines));
}

#[test]
fn a_dual_era_policy_judges_each_request_by_its_own_era() {
    let discover = modern("1", "server/discover", "");
    let plain = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let events = [
        S(&discover),
        R(&discovered("1", r#"["2026-07-28"]"#)),
        S(plain),
        R(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#),
    ];
    fires_under(&python(), &events, ENVELOPE_MISSING_KEY);
    let dual = dual();
    let found = check(&t(&events, Ending::Closed), &dual);
    assert!(found.is_empty(), "{found:#?}");
    // The plain request is a handshake-era request there, so the handshake rules apply to it; resultType is
    // judged only after an initialize (no handshake was negotiated before).
    let typed = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[],"resultType":"complete"}}"#;
    let events = [S(&discover), R(&discovered("1", r#"["2026-07-28"]"#)), S(plain), R(typed)];
    assert_eq!(ids(&check(&t(&events, Ending::Closed), &dual)), Vec::<&str>::new());
    let events = [S(&discover), R(&discovered("1", r#"["2026-07-28"]"#)), S(INIT), R(INIT_OK), S(plain), R(typed)];
    assert_eq!(ids(&check(&t(&events, Ending::Closed), &dual)), [HANDSHAKE_NO_RESULT_TYPE]);
    // After a modern request a plain ping may get the modern era's -32601 (ping is gone in 2026-07-28; TS server
    // 2.4.0 pins the process modern); a wrong result is still a finding.
    let events = [S(&discover), R(&discovered("1", r#"["2026-07-28"]"#)), S(PING_1), R(&error("1", -32601))];
    assert_eq!(ids(&check(&t(&events, Ending::Closed), &dual)), Vec::<&str>::new());
    let events = [S(&discover), R(&discovered("1", r#"["2026-07-28"]"#)), S(PING_1), R(&error("1", -32603))];
    assert_eq!(ids(&check(&t(&events, Ending::Closed), &dual)), [PING]);
    let init = [S(&discover), R(&discovered("1", r#"["2026-07-28"]"#)), S(INIT), R(INIT_OK)];
    let events = [init[0], init[1], init[2], init[3], S(PING_1), R(&error("1", -32601))];
    assert_eq!(ids(&check(&t(&events, Ending::Closed), &dual)), [PING]);
    // After a modern request a plain ping may be refused as a modern one lacking the envelope; not once an
    // initialize the server answered selected legacy semantics (rmcp 3.11.0 answers it, then refuses the ping).
    let lacking = [S(&discover), R(&discovered("1", r#"["2026-07-28"]"#)), S(PING_1), R(&error("1", -32602))];
    assert_eq!(ids(&check(&t(&lacking, Ending::Closed), &dual)), Vec::<&str>::new());
    let init_then_ping = |init_reply: &str| {
        let events = [
            S(&discover),
            R(&discovered("1", r#"["2026-07-28"]"#)),
            S(INIT),
            R(init_reply),
            S(PING_1),
            R(&error("1", -32602)),
        ];
        ids(&check(&t(&events, Ending::Closed), &dual))
    };
    assert_eq!(init_then_ping(INIT_OK), [PING]);
    assert_eq!(init_then_ping(&error("0", -32022)), Vec::<&str>::new());
}

#[test]
fn an_invalid_initialize_on_a_modern_connection_may_get_invalid_params() {
    let discover = modern("1", "server/discover", "");
    let fixed = discovered("1", r#"["2026-07-28"]"#);
    let on_modern = |request: &str, reply: &str| {
        check(&t(&[S(&discover), R(&fixed), S(request), R(reply)], Ending::Closed), &python())
    };
    let bare = r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#;
    let numeric = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":7,"capabilities":{},"clientInfo":{}}}"#;
    let no_info =
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
    for invalid in [bare, numeric, no_info] {
        assert_eq!(ids(&on_modern(invalid, &error("0", -32602))), Vec::<&str>::new(), "{invalid}");
        assert_eq!(ids(&on_modern(invalid, &error("0", -32601))), [ERA_SINGLE], "{invalid}");
        assert_eq!(ids(&on_modern(invalid, INIT_OK)), [ERA_SINGLE], "{invalid}");
    }
    let refusal =
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}}"#;
    assert_eq!(ids(&on_modern(bare, refusal)), Vec::<&str>::new());
    // A valid initialize still needs -32022.
    let f = on_modern(INIT, &error("0", -32602));
    assert_eq!(ids(&f), [ERA_SINGLE]);
    assert!(f[0].detail.contains("not -32022"), "{}", f[0].detail);
}

#[test]
fn supported_versions_are_learned_from_the_transcript() {
    let old = modern("1", "", "").replace("2026-07-28", "2025-11-25");
    let unknown_method = error("1", -32601);
    // rmcp serves enveloped requests at a handshake version it lists in server/discover.
    fires(&[S(&old), R(&unknown_method)], UNSUPPORTED_VERSION);
    let discover = modern("2", "server/discover", "");
    let lists_both = discovered("2", r#"["2025-11-25","2026-07-28"]"#);
    only(&[S(&old), R(&unknown_method), S(&discover), R(&lists_both)], &[]);
    // Served at that handshake version, the result follows that version's shapes (no resultType).
    let old_list = modern("3", "tools/list", "").replace("2026-07-28", "2025-11-25");
    let plain_result = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#;
    only(&[S(&discover), R(&lists_both), S(&old_list), R(plain_result)], &[]);
    // Versions named in any -32022 data.supported count too, except the one that error refuses.
    let future = modern("4", "tools/list", "").replace("2026-07-28", "2099-01-01");
    let refused = r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28","2030-01-01"],"requested":"2099-01-01"}}}"#;
    let later = modern("5", "tools/list", "").replace("2026-07-28", "2030-01-01");
    only(&[S(&future), R(refused), S(&later), R(&modern_ok("5", HINTS))], &[]);
    let lists_itself = refused.replace("2030-01-01", "2099-01-01");
    fires(&[S(&future), R(&lists_itself)], UNSUPPORTED_VERSION);
    // A version served but never named is still unsupported (the planted bug accepts-any-version).
    let discover_2026 = discovered("2", r#"["2026-07-28"]"#);
    fires(&[S(&discover), R(&discover_2026), S(&later), R(&modern_ok("5", HINTS))], UNSUPPORTED_VERSION);
}

// ---- Lines parsers legitimately differ on ----

#[test]
fn whole_valued_float_ids_are_ambiguous() {
    for (literal, integer) in [("1.0", "1"), ("1e+3", "1000"), ("-2.0E1", "-20")] {
        let request = format!(r#"{{"jsonrpc":"2.0","id":{literal},"method":""}}"#);
        let request = request.as_str();
        only(&[S(request), Sync], &[]);
        only(&[S(request), R(&error(integer, -32602))], &[]);
        only(&[S(request), R(&error(literal, -32600))], &[]);
        only(&[S(request), R(&error("null", -32601))], &[]);
        only(&[S(request), R(&format!(r#"{{"jsonrpc":"2.0","id":{integer},"result":{{}}}}"#))], &[]);
        only(&[S(request), R(&format!(r#"{{"jsonrpc":"2.0","id":{literal},"result":{{}}}}"#))], &[]);
        fires(&[S(request), R(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#)], ID_ECHO);
        fires(&[S(request), R(&format!(r#"{{"jsonrpc":"2.0","id":"{integer}","result":{{}}}}"#))], ID_ECHO);
    }
    // A fraction is not whole: the line stays malformed, and an id-less error for it must be -32700/-32600.
    let half = r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#;
    only(&[S(half), R(&error("null", -32600))], &[]);
    fires(&[S(half), R(&error("null", -32601))], NULL_ID);
    // rmcp reads 1.0 as 1: two requests, two replies under id 1, no duplicate; a third reply is one.
    let one = r#"{"jsonrpc":"2.0","id":1,"method":""}"#;
    let one_float = r#"{"jsonrpc":"2.0","id":1.0,"method":""}"#;
    only(&[S(one), S(one_float), R(&error("1", -32602)), R(&error("1", -32602)), Sync], &[]);
    fires(
        &[S(one), S(one_float), R(&error("1", -32602)), R(&error("1", -32602)), R(&error("1", -32602))],
        DUPLICATE_RESPONSE,
    );
}

#[test]
fn extra_member() {
    // TS SDK 1.32.2, server 2.4.0 and server-everything drop a request with an extra top-level member (strict zod
    // schemas): a warning, never a MUST finding.
    let extra = r#"{"jsonrpc":"2.0","id":1,"method":"ping","wirefuzz":true}"#;
    let found = findings(&[S(extra), Sync]);
    assert_eq!(ids(&found), [EXTRA_MEMBER]);
    assert_eq!((found[0].event, found[0].level), (Some(0), Level::Warning));
    // rmcp answers it; an error under its id or an id-less refusal are fine too, and so is a late reply.
    only(&[S(extra), R(EMPTY_1), Sync], &[]);
    only(&[S(extra), R(&error("1", -32600)), Sync], &[]);
    only(&[S(extra), R(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#)], &[]);
    only(&[S(extra), Sync, R(EMPTY_1)], &[]);
    // Its reply is still judged: a wrong id is ID-ECHO, a second reply a duplicate, and MCP-PING applies.
    fires(&[S(extra), R(r#"{"jsonrpc":"2.0","id":"1","result":{}}"#)], ID_ECHO);
    fires(&[S(extra), R(EMPTY_1), R(EMPTY_1)], DUPLICATE_RESPONSE);
    fires(&[S(extra), R(&error("1", -32601))], PING);
    // A plain request left unanswered is still RESPONSE-MISSING.
    only(&[S(PING_1), Sync], &[RESPONSE_MISSING]);
}

#[test]
fn big_id() {
    let refused = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#;
    // TS SDK 1.32.2 drops ids beyond 2^53 (zod safe integers): a warning, never a MUST finding.
    let ts = r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#;
    let found = findings(&[S(ts), Sync]);
    assert_eq!(ids(&found), [BIG_ID]);
    assert_eq!((found[0].event, found[0].level), (Some(0), Level::Warning));
    let f = fires(&[S(ts), R(r#"{"jsonrpc":"2.0","id":9007199254740992,"result":{}}"#)], BIG_ID);
    assert!(f.detail.contains("rounded") && f.event == Some(1), "{f:?}");
    only(&[S(ts), R(r#"{"jsonrpc":"2.0","id":9007199254740992,"result":{}}"#), Sync], &[BIG_ID]);
    only(&[S(ts), R(r#"{"jsonrpc":"2.0","id":9007199254740993,"result":{}}"#), Sync], &[]);
    only(&[S(ts), R(r#"{"jsonrpc":"2.0","id":9.007199254740992e15,"result":{}}"#), Sync], &[BIG_ID]);
    // Refused without an id, or with an error under its exact id: fine; a late reply too.
    only(&[S(ts), R(refused), Sync], &[]);
    only(&[S(ts), R(&error("9007199254740993", -32602)), Sync], &[]);
    only(&[S(ts), Sync, R(r#"{"jsonrpc":"2.0","id":9007199254740993,"result":{}}"#)], &[]);
    // Both signs, up to and beyond i64 and u64.
    for id in
        ["-9007199254740992", "9223372036854775807", "9223372036854775808", "1844674407370955161000000000000000000002"]
    {
        let request = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":""}}"#);
        only(&[S(&request), Sync], &[BIG_ID]);
        only(&[S(&request), R(refused)], &[]);
        only(&[S(&request), R(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#))], &[]);
    }
    // rmcp ignores a line that is not JSON and refuses the big id without an id: the refusal is the big id's.
    let big_40 = r#"{"jsonrpc":"2.0","id":1844674407370955161000000000000000000003,"method":""}"#;
    only(&[S("t"), S(big_40), R(refused)], &[]);
    only(&[S(big_40), S("t"), R(refused), Sync], &[]);
    let strict = Policy::default().deny(MALFORMED_REPLY).unwrap();
    assert_eq!(ids(&check(&t(&[S("t"), S(big_40), R(refused)], Ending::Closed), &strict)), [MALFORMED_REPLY]);
    // rmcp's id-less refusal arrives after the next line, a notification: it is still the big id's.
    let big = r#"{"jsonrpc":"2.0","id":1844674407370955161000000000000000000002,"method":""}"#;
    only(&[S(big), S(r#"{"jsonrpc":"2.0","method":""}"#), R(refused)], &[]);
    let rounded = r#"{"jsonrpc":"2.0","id":1844674407370955200000000000000000000000,"result":{}}"#;
    only(&[S(big), R(rounded)], &[BIG_ID]);
    // On a 2025-03-26 connection a batch item left without a response is MCP-BATCH's finding, whatever its id: a
    // batch refused whole with one id-less error (rmcp), or not answered at all.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let granted = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let batch = r#"[{"jsonrpc":"2.0","id":9007199254740997,"method":"tools/list"},{"jsonrpc":"2.0","id":9007199254740999,"method":"tools/list"}]"#;
    only(&[S(init), R(granted), S(initialized), Sync, S(batch), R(refused), Sync], &[BATCH]);
    only(&[S(init), R(granted), S(initialized), Sync, S(batch), Sync], &[BATCH]);
    // An item answered under its id rounded is a big-id finding of the reply, not a silent item of the batch.
    let rounded_batch = r#"[{"jsonrpc":"2.0","id":9007199254740996,"result":{"tools":[]}},{"jsonrpc":"2.0","id":9007199254740999,"result":{"tools":[]}}]"#;
    let f = fires(&[S(init), R(granted), S(initialized), Sync, S(batch), R(rounded_batch), Sync], BIG_ID);
    assert_eq!(f.event, Some(5), "{f:?}");
    only(&[S(init), R(granted), S(initialized), Sync, S(batch), R(rounded_batch), Sync], &[BIG_ID]);
    // A later big-id request refused with its own id-less error: that error is its, not the batch's second item's.
    let later =
        r#"{"jsonrpc":"2.0","id":1844674407370955161000000000000000000004,"method":"tools/list","wirefuzz":true}"#;
    only(&[S(init), R(granted), S(initialized), Sync, S(batch), R(refused), S(later), R(refused)], &[BATCH]);
    // 2^53 - 1 is an ordinary id; so are strings of digits.
    let safe = r#"{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}"#;
    only(&[S(safe), Sync], &[RESPONSE_MISSING]);
    fires(&[S(safe), R(refused)], NULL_ID);
    only(&[S(r#"{"jsonrpc":"2.0","id":"9007199254740993","method":"ping"}"#), Sync], &[RESPONSE_MISSING]);
    // Array params: silence is fine for any id.
    only(&[S(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","params":[]}"#), Sync], &[]);
}

#[test]
fn cancelled_requests_may_go_unanswered() {
    // rmcp: a request cancelled while open gets no reply (cancellation.mdx SHOULD NOT; 2026 stdio.mdx MUST NOT).
    let one = modern("1", "", "");
    let cancel =
        |id: &str| format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#);
    let discover = modern("2", "server/discover", "");
    let discovered = modern_ok("2", &format!(r#""supportedVersions":["2026-07-28"],"capabilities":{{}},{HINTS}"#));
    only(&[S(&one), S(&cancel("1")), S(&discover), R(&discovered), Sync], &[]);
    // Or a reply anyway (a race): fine, once.
    only(&[S(&one), S(&cancel("1")), R(&error("1", -32601)), Sync], &[]);
    fires(&[S(&one), S(&cancel("1")), R(&error("1", -32601)), R(&error("1", -32601))], DUPLICATE_RESPONSE);
    // The cancel names the id as the same JSON value: "1" is another id, and a finished or unknown id changes nothing.
    only(&[S(&one), S(&cancel(r#""1""#)), Sync], &[RESPONSE_MISSING]);
    only(&[S(&one), S(&cancel("1.0")), Sync], &[RESPONSE_MISSING]);
    // A cancel that comes before a request with its id, in the same stretch, may cancel it (the TS SDK handles a
    // notification a microtask after the lines read with it): the client broke cancellation.mdx (a cancel names a
    // request already issued), so silence is no finding. After a reply or a sync point, it cancels nothing ahead.
    only(&[S(&cancel("1")), S(PING_1), Sync], &[]);
    only(&[S(PING_1), R(EMPTY_1), S(&cancel("1")), S(PING_1), Sync], &[]);
    only(&[S(&cancel("1")), Sync, S(PING_1), Sync], &[RESPONSE_MISSING]);
    let (ping_7, empty_7) = (r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
    only(&[S(ping_7), S(&cancel("1")), R(empty_7), S(PING_1), Sync], &[RESPONSE_MISSING]);
    only(&[S(&cancel("2")), S(PING_1), Sync], &[RESPONSE_MISSING]);
    // A cancelled big id needs no reply either.
    let big = r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#;
    only(&[S(big), S(&cancel("9007199254740993")), Sync], &[]);
}

#[test]
fn an_idless_refusal_answers_any_pending_line_not_the_oldest() {
    // rmcp: `{"id":1e+3,"method":""}` then `{}`; the id-less -32600 answers `{}`, then id 1000 answers the first.
    let exponent = r#"{"jsonrpc":"2.0","id":1e+3,"method":""}"#;
    let refused = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#;
    let not_found = error("1000", -32601);
    only(&[S(INIT), R(INIT_OK), S(exponent), S("{}"), R(refused), R(&not_found), Sync], &[]);
    only(&[S(INIT), R(INIT_OK), S(exponent), S("{}"), R(&not_found), R(refused), Sync], &[]);
    // s2: `1.0` and `null` ids, the same pattern.
    let whole = r#"{"jsonrpc":"2.0","id":1.0,"method":""}"#;
    let null = r#"{"jsonrpc":"2.0","id":null,"method":""}"#;
    only(&[S(whole), S(null), R(refused), R(&error("1", -32601)), Sync], &[]);
    // Two lines with ids, the refusal first: whichever it answers, the other's reply still comes.
    let dup = r#"{"jsonrpc":"2.0","id":4,"id":5,"method":""}"#;
    only(&[S(exponent), S(dup), R(refused), R(&error("5", -32601)), Sync], &[]);
    only(&[S(exponent), S(dup), R(refused), R(&not_found), Sync], &[]);
    // But not when every line it could answer got its own reply: then the id-less one answers none.
    let f = fires(&[S(exponent), R(refused), R(&not_found)], NULL_ID);
    assert_eq!(f.event, Some(1));
    assert!(f.detail.contains("its own reply"), "{}", f.detail);
    only(&[S(exponent), S(dup), R(refused), R(&not_found), R(&error("5", -32601))], &[NULL_ID]);
    // Lines a refusal claimed are spoken for: a result without an id after a notification is also its reply.
    let null_result = r#"{"jsonrpc":"2.0","id":null,"result":{}}"#;
    let found = findings(&[S("{}"), R(refused), S(NOTE), R(null_result)]);
    assert_eq!(ids(&found), [NULL_ID, NOTIFICATION_REPLY]);
    // A refusal never takes a valid request's place.
    only(&[S(PING_1), S("{}"), R(refused), R(EMPTY_1)], &[]);
    // Nor a line sent after it.
    fires(&[S(PING_1), R(refused), S(exponent), R(&not_found)], NULL_ID);
    // A late refusal answers a line of an earlier window: a server still starting answers in the order it reads.
    only(&[S("{oops"), Sync, S(PING_1), R(refused), R(EMPTY_1)], &[]);
    only(&[S("{oops"), Sync, S(NOTE), R(refused)], &[]);
    only(&[S(exponent), Sync, S(NOTE), R(refused)], &[]);
    // But once the server answered a line sent after it, a refusal after a notification is the notification's.
    fires(&[S("{oops"), Sync, S(PING_1), R(EMPTY_1), S(NOTE), R(refused)], NOTIFICATION_REPLY);
    fires(&[S(exponent), Sync, S(PING_1), R(EMPTY_1), S(NOTE), R(refused)], NOTIFICATION_REPLY);
}

#[test]
fn rmcp_true_findings_stay_found() {
    // JSONRPC-NULL-ID: an invalid MCP request with a readable id refused without it, nothing malformed pending.
    let meta_string = r#"{"jsonrpc":"2.0","id":"","method":"","params":{"_meta":""}}"#;
    let refused = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#;
    let f = fires(&[S(INIT), R(INIT_OK), S(NOTE), Sync, S(meta_string), R(refused), Sync], NULL_ID);
    assert_eq!(f.event, Some(5));
    // JSONRPC-NOTIFICATION-REPLY: a notification with invalid params refused.
    let note = r#"{"jsonrpc":"2.0","method":"prompts/list","params":{"_meta":""}}"#;
    let f = fires(&[S(INIT), R(INIT_OK), S(NOTE), Sync, S(note), R(refused), Sync], NOTIFICATION_REPLY);
    assert_eq!(f.event, Some(5));
    // TS servers: silence to `initialize` whose params._meta is a string or null is a missing response (MUST).
    for meta in [r#""2026-07-28""#, "null"] {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":"","method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}},"_meta":{meta}}}}}"#
        );
        let f = fires(&[S(&init), Sync], RESPONSE_MISSING);
        assert_eq!((f.event, f.level), (Some(0), Level::Error));
    }
}

#[test]
fn lenient_lines_are_ambiguous() {
    let served = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
    // rmcp strips a byte-order mark and answers (RFC 8259 §8.1).
    let bom = "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
    only(&[S(bom), R(&served("2"))], &[]);
    only(&[S(bom), Sync], &[]);
    only(&[S(bom), R(&error("null", -32700))], &[]);
    fires(&[S(bom), R(&served("3"))], ID_ECHO);
    // TS: `1e+3` with a lone surrogate escape is answered as id 1000 (RFC 8259 §8.2: grammatical).
    let surrogate = r#"{"jsonrpc":"2.0","id":1e+3,"method":"prompts/list","params":{"wirefuzz":"\ud800"}}"#;
    only(&[S(surrogate), R(&error("1000", -32601))], &[]);
    only(&[S(surrogate), R(&served("1000"))], &[]);
    only(&[S(surrogate), Sync], &[]);
    // v2: the same line sharing an open id with an earlier request; one reply for each, in any order.
    let three = r#"{"jsonrpc":"2.0","id":3,"method":""}"#;
    let three_again = r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"wirefuzz":"\ud800"}}"#;
    only(&[S(three), S(three_again), R(&error("3", -32601)), R(&served("3")), Sync], &[]);
    only(&[S(three), S(three_again), R(&served("3")), R(&error("3", -32601)), Sync], &[]);
    // A lenient notification is not a notification to blame a refusal on.
    let note = r#"{"jsonrpc":"2.0","method":"x","params":{"a":"\udc00"}}"#;
    only(&[S(note), R(&error("null", -32700))], &[]);
    // Still malformed under either reading: an invalid object.
    let old = r#"{"jsonrpc":"1.0","id":7,"method":"ping","params":{"a":"\ud800"}}"#;
    only(&[S(old), R(&served("7"))], &[MALFORMED_SERVED]);
}

#[test]
fn reused_open_ids_make_no_duplicate_or_echo_finding() {
    // rmcp s1: `{"id":1}` and `{"id":1.0,"params":null}` both open: the client reused id 1.
    let one = r#"{"jsonrpc":"2.0","id":1,"method":""}"#;
    let one_float_null = r#"{"jsonrpc":"2.0","id":1.0,"method":"","params":null}"#;
    only(&[S(one), S(one_float_null), R(&error("1", -32601)), R(&error("1", -32601)), Sync], &[]);
    only(&[S(one), S(one_float_null), R(&error("1", -32601)), Sync], &[]);
    // The flaky NULL-PARAMS case: two lines with the same open big id, replies in either order.
    let big = r#"{"jsonrpc":"2.0","id":9007199254741007,"method":"resources/list"}"#;
    let big_null = r#"{"jsonrpc":"2.0","id":9007199254741007,"method":"resources/list","params":null}"#;
    let listed = r#"{"jsonrpc":"2.0","id":9007199254741007,"result":{"resources":[]}}"#;
    only(&[S(big), S(big_null), R(listed), R(listed), Sync], &[]);
    let one_null = r#"{"jsonrpc":"2.0","id":1,"method":"","params":null}"#;
    only(&[S(one), S(one_null), R(&served_1()), R(&error("1", -32600)), Sync], &[]);
    only(&[S(one), S(one_null), R(&error("1", -32600)), R(&served_1()), Sync], &[]);
    // At most one reply per line still.
    fires(&[S(one), S(one_null), R(&served_1()), R(&served_1()), R(&served_1())], DUPLICATE_RESPONSE);
    // Nor does the MCP layer judge which twin a reply answered: a ping and a tools/list sharing the open id 2,
    // answered out of order (the quirky server's shrunk case), is no MCP-PING.
    let ping_2 = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let list_2 = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let tools_2 = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#;
    let empty_2 = r#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
    only(&[S(ping_2), S(list_2), R(tools_2), R(empty_2), Sync], &[]);
    // Without the reuse the same ping answered with a tools result still breaks MCP-PING.
    fires(&[S(ping_2), R(tools_2), Sync], PING);
    // A malformed line reusing an open request's id leaves the request's result to the request: here an initialize
    // that succeeded, so a second initialize may be refused any way (the quirky server's shrunk case).
    let invalid_1 = r#"{"jsonrpc":"2.0","id":1}"#;
    let init_1 = INIT.replace(r#""id":0"#, r#""id":1"#);
    let init_ok_1 = INIT_OK.replace(r#""id":0"#, r#""id":1"#);
    let bare_init = r#"{"jsonrpc":"2.0","id":3,"method":"initialize"}"#;
    let events =
        [S(&init_1), S(invalid_1), S(bare_init), R(&init_ok_1), R(&error("1", -32600)), R(&error("3", -32600))];
    only(&events, &[]);
    // An extra-member line is a request a server may execute: a ping sharing its open id is not judged either.
    let extra_2 = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","wirefuzz":true}"#;
    only(&[S(extra_2), S(ping_2), R(tools_2), R(empty_2), Sync], &[]);
}

fn served_1() -> String {
    EMPTY_1.to_string()
}

#[test]
fn numbers_beyond_parser_limits_make_a_line_ambiguous() {
    let request = |n: &str| format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"n":{n}}}}}"#);
    let digits_301 = request(&"1".repeat(301));
    let huge = request("1e400");
    for line in [&digits_301, &huge] {
        only(&[S(line), Sync], &[]);
        only(&[S(line), R(&error("null", -32700))], &[]);
        only(&[S(line), R(&error("2", -32602))], &[]);
        only(&[S(line), R(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#)], &[]);
    }
    fires(&[S(&request(&"1".repeat(300))), Sync], RESPONSE_MISSING);
    fires(&[S(&request("1e308")), Sync], RESPONSE_MISSING);
    // Strict JSON-RPC: to a server that cannot parse it, such a line is unparseable and owes -32700.
    let strict = Policy::default().deny(MALFORMED_REPLY).unwrap();
    let found = check(&t(&[S(&huge), Sync], Ending::Closed), &strict);
    assert_eq!(ids(&found), [MALFORMED_REPLY]);
    assert!(found[0].detail.contains("parser limits"), "{}", found[0].detail);
    assert!(check(&t(&[S(&huge), R(&error("null", -32700))], Ending::Closed), &strict).is_empty());
}

#[test]
fn duplicate_keys_make_a_line_ambiguous() {
    let dup = r#"{"id":"dup-3","jsonrpc":"2.0","id":3,"method":"wirefuzz/unknown"}"#;
    let note = r#"{"jsonrpc":"2.0","method":""}"#;
    let refused = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#;
    // rmcp refuses it without an id; the notification before it is not blamed.
    only(&[S(note), S(dup), R(refused)], &[]);
    only(&[S(dup), Sync], &[]);
    // The Python SDK: last member wins.
    only(&[S(dup), R(&error("3", -32601))], &[]);
    only(&[S(dup), R(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#)], &[]);
    let nested = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","name":"sub"}}"#;
    only(&[S(nested), Sync], &[]);
    // Ambiguous requests are not judged by the MCP layer, and do not fix the era.
    let enveloped_dup = modern("5", "tools/list", r#""x":1,"x":2,"#);
    only(&[S(&enveloped_dup), R(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#), S(INIT), R(INIT_OK)], &[]);
}

#[test]
fn ambiguous_lines_are_judged_leniently_but_not_blindly() {
    // Silence is no finding under strict JSON-RPC either, except beyond the parser limits.
    let strict = Policy::default().deny(MALFORMED_REPLY).unwrap();
    let one_float = r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#;
    let big = r#"{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}"#;
    let dup = r#"{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}"#;
    let surrogate = r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"\ud800"}}"#;
    for line in [one_float, surrogate, dup] {
        assert!(check(&t(&[S(line), Sync], Ending::Closed), &strict).is_empty(), "{line}");
        assert!(check(&t(&[S(line), R(&error("null", -32601))], Ending::Closed), &strict).is_empty(), "{line}");
    }
    // Each line explains one id-less error, FIFO with malformed lines; one more is a finding.
    let refused = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}"#;
    only(&[S(big), S("{oops"), R(refused), R(refused)], &[]);
    fires(&[S(big), R(refused), R(refused)], NULL_ID);
    fires(&[S(big), R(refused), S(NOTE), R(refused)], NOTIFICATION_REPLY);
    // A result without an id is never fine, and a second reply is a duplicate.
    fires(&[S(big), R(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#)], NULL_ID);
    let echoed = r#"{"jsonrpc":"2.0","id":12345678901234567890123,"result":{}}"#;
    fires(&[S(big), R(echoed), R(echoed)], DUPLICATE_RESPONSE);
    // A late reply after the sync point is still the line's.
    only(&[S(big), Sync, R(echoed)], &[]);
}

#[test]
fn modern_result_type() {
    let list = modern("1", "tools/list", "");
    let untyped = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[],{HINTS}"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"s","version":""}}}}}}}}"#
    );
    fires(&[S(&list), R(&untyped)], MODERN_RESULT_TYPE);
    let asking =
        modern_ok("1", r#""tools":[],"ttlMs":0,"cacheScope":"private","#).replace("complete", "input_required");
    fires(&[S(&list), R(&asking)], MODERN_RESULT_TYPE);
    fires(&[S(&list), R(&modern_ok("1", HINTS).replace("complete", "done"))], MODERN_RESULT_TYPE);
    let call = modern("1", "tools/call", r#""name":"add","#);
    let input = modern_ok("1", r#""requestState":"s","#).replace("complete", "input_required");
    only(&[S(&call), R(&input)], &[]);
    only(&[S(&list), R(&modern_ok("1", &format!(r#""tools":[],{HINTS}"#)))], &[]);
}

#[test]
fn handshake_no_result_type() {
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let typed = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[],"resultType":"complete"}}"#;
    let f = fires(&[S(INIT), R(INIT_OK), S(list), R(typed)], HANDSHAKE_NO_RESULT_TYPE);
    assert_eq!(f.level, Level::Warning);
    only(&[S(INIT), R(INIT_OK), S(list), R(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#)], &[]);
}

#[test]
fn modern_server_info() {
    let call = modern("1", "tools/call", r#""name":"add","#);
    let unstamped = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#;
    let f = fires(&[S(&call), R(unstamped)], MODERN_SERVER_INFO);
    assert_eq!(f.level, Level::Warning);
    fires(&[S(&call), R(&modern_ok("1", "").replace(r#""version":"1""#, r#""version":1"#))], MODERN_SERVER_INFO);
    only(&[S(&call), R(&modern_ok("1", r#""content":[],"#))], &[]);
}

#[test]
fn envelope_missing_key() {
    let discover = modern("1", "server/discover", "");
    let discovered =
        modern_ok("1", r#""supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public","#);
    let bare = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    // Under the one-era lock (profile mcp-python-2.3.0), a plain request on a modern connection lacks the envelope.
    fires_under(&python(), &[S(&discover), R(&discovered), S(bare), R(&error("2", -32601))], ENVELOPE_MISSING_KEY);
    fires_under(&python(), &[S(&discover), R(&discovered), S(bare), R(&modern_ok("2", HINTS))], ENVELOPE_MISSING_KEY);
    // By default it is a handshake-era request on a dual-era server (rmcp, TS server 2.4.0).
    only(&[S(&discover), R(&discovered), S(bare), R(&error("2", -32601))], &[]);
    only(&[S(&discover), R(&discovered), S(bare), R(&error("2", -32602))], &[]);
    // The first request opens a modern connection with the version key alone: it needs -32602.
    let half = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"{PROTOCOL_VERSION_KEY}":"2026-07-28"}}}}}}"#
    );
    let f = fires(&[S(&half), R(&error("1", -32600))], ENVELOPE_MISSING_KEY);
    assert!(f.detail.contains("not -32602"), "{}", f.detail);
    fires(&[S(&half), R(&modern_ok("1", HINTS))], ENVELOPE_MISSING_KEY);
    // The spec mandates the code only: an unnamed key is fine by default.
    only(&[S(&half), R(&error("1", -32602))], &[]);
    // A method 2026-07-28 removed, in an incomplete envelope, may be served as the handshake-era method (rmcp).
    let half_ping = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"_meta":{{"{PROTOCOL_VERSION_KEY}":"2026-07-28"}}}}}}"#
    );
    quiet(&[S(&half_ping), R(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)], ENVELOPE_MISSING_KEY);
    // Not on a handshake-only server, nor after initialize.
    let legacy = Policy::default().with_model(ServerModel::stated(Eras::Handshake));
    only_under(&legacy, &[S(&half), R(&error("1", -32600))], &[]);
    only(&[S(INIT), R(INIT_OK), S(&half), R(&error("1", -32600))], &[]);
}

#[test]
fn envelope_key_named() {
    let half = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"{PROTOCOL_VERSION_KEY}":"2026-07-28"}}}}}}"#
    );
    let f = fires_under(&python(), &[S(&half), R(&error("1", -32602))], ENVELOPE_KEY_NAMED);
    assert!(f.detail.contains(CLIENT_CAPABILITIES_KEY), "{}", f.detail);
    let named = format!(
        r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32602,"message":"missing {CLIENT_CAPABILITIES_KEY}"}}}}"#
    );
    only_under(&python(), &[S(&half), R(&named)], &[]);
    quiet(&[S(&half), R(&error("1", -32602))], ENVELOPE_KEY_NAMED);
}

#[test]
fn unsupported_version() {
    let old = modern("1", "tools/list", "").replace("2026-07-28", "2025-11-25");
    let good = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}"#;
    only(&[S(&old), R(good)], &[]);
    fires(&[S(&old), R(&good.replace(r#","requested":"2025-11-25""#, ""))], UNSUPPORTED_VERSION);
    fires(&[S(&old), R(&good.replace(r#"["2026-07-28"]"#, r#"["2025-11-25"]"#))], UNSUPPORTED_VERSION);
    fires(&[S(&old), R(&good.replace(r#"["2026-07-28"]"#, "[1]"))], UNSUPPORTED_VERSION);
    fires(&[S(&old), R(&error("1", -32602))], UNSUPPORTED_VERSION);
    let numeric = modern("1", "tools/list", "").replace(r#""2026-07-28""#, "20260728");
    // A version that is not a string: -32602 is right; -32022 or a result is a SHOULD finding of its own.
    let f = fires(&[S(&numeric), R(&error("1", -32022))], VERSION_NOT_STRING);
    assert_eq!(f.level, Level::Warning);
    only(&[S(&numeric), R(&modern_ok("1", HINTS))], &[VERSION_NOT_STRING]);
    only(&[S(&numeric), R(&error("1", -32602))], &[]);
    // What counts as supported is the policy's.
    let future = modern("1", "tools/list", "").replace("2026-07-28", "2099-01-01");
    let served = [S(&future), R(&modern_ok("1", HINTS))];
    fires(&served, UNSUPPORTED_VERSION);
    let wider = Policy::default().with_supported_versions(["2026-07-28", "2099-01-01"]);
    assert!(check(&t(&served, Ending::Closed), &wider).is_empty());
    // After initialize, a dual-era server may serve a valid envelope as modern (then the modern rules apply) or
    // the request as the handshake-era one it also is. With an invalid envelope it is no modern request at all:
    // rmcp stamps resultType on every result after a second initialize, so resultType is no sign of 2026-07-28.
    let stamped =
        r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[]}}"#;
    let dual = dual();
    let after_init = |request: &str| check(&t(&[S(INIT), R(INIT_OK), S(request), R(stamped)], Ending::Closed), &dual);
    assert_eq!(ids(&after_init(&numeric)), [HANDSHAKE_NO_RESULT_TYPE]);
    let no_capabilities = modern("1", "tools/list", "").replace(r#":{}}"#, r#":"none"}"#);
    assert!(no_capabilities.contains(r#""none""#), "{no_capabilities}");
    assert_eq!(ids(&after_init(&no_capabilities)), [HANDSHAKE_NO_RESULT_TYPE]);
    assert!(ids(&after_init(&future)).contains(&UNSUPPORTED_VERSION));
}

#[test]
fn modern_removed_method() {
    let ping = modern("1", "ping", "");
    fires(&[S(&ping), R(&modern_ok("1", ""))], MODERN_REMOVED_METHOD);
    fires(&[S(&ping), R(EMPTY_1)], MODERN_REMOVED_METHOD);
    only(&[S(&ping), R(&error("1", -32601))], &[]);
    // rmcp serves a ping whose envelope is invalid (a version that is not a string, capabilities that are not an
    // object) as the handshake-era ping: no answer is wrong. A string version it does not support is judged.
    for version in ["null", "20260728"] {
        let invalid = ping.replace(r#""2026-07-28""#, version);
        only(&[S(&invalid), R(EMPTY_1)], &[]);
    }
    only(&[S(&ping.replace(r#":{}}"#, r#":"x"}"#)), R(EMPTY_1)], &[]);
    fires(&[S(&ping.replace("2026-07-28", "")), R(EMPTY_1)], UNSUPPORTED_VERSION);
    let subscribe = modern("1", "resources/subscribe", r#""uri":"x","#);
    only(&[S(&subscribe), R(&error("1", -32603))], &[]);
}

#[test]
fn cache_hints() {
    let list = modern("1", "prompts/list", "");
    fires(&[S(&list), R(&modern_ok("1", r#""prompts":[],"#))], CACHE_HINTS);
    fires(&[S(&list), R(&modern_ok("1", r#""prompts":[],"ttlMs":-1,"cacheScope":"private","#))], CACHE_HINTS);
    fires(&[S(&list), R(&modern_ok("1", r#""prompts":[],"ttlMs":1.5,"cacheScope":"private","#))], CACHE_HINTS);
    fires(&[S(&list), R(&modern_ok("1", r#""prompts":[],"ttlMs":0,"cacheScope":"shared","#))], CACHE_HINTS);
    only(&[S(&list), R(&modern_ok("1", r#""prompts":[],"ttlMs":60000,"cacheScope":"public","#))], &[]);
    let call = modern("1", "tools/call", r#""name":"add","#);
    only(&[S(&call), R(&modern_ok("1", r#""content":[],"#))], &[]);
}

#[test]
fn discover_shape() {
    let discover = modern("1", "server/discover", "");
    fires(
        &[S(&discover), R(&modern_ok("1", &format!(r#""supportedVersions":[],"capabilities":{{}},{HINTS}"#)))],
        DISCOVER_SHAPE,
    );
    fires(
        &[S(&discover), R(&modern_ok("1", &format!(r#""supportedVersions":["2026-07-28"],{HINTS}"#)))],
        DISCOVER_SHAPE,
    );
    fires(&[S(&discover), R(&error("1", -32601))], DISCOVER_SHAPE);
    let good = modern_ok("1", &format!(r#""supportedVersions":["2026-07-28"],"capabilities":{{}},{HINTS}"#));
    only(&[S(&discover), R(&good)], &[]);
}

#[test]
fn initialize_shape() {
    let answered = |version: &str| INIT_OK.replace("2025-06-18", version);
    let f = fires(&[S(INIT), R(&answered("2025-11-25"))], INITIALIZE_SHAPE);
    assert!(f.detail.contains("\"2025-06-18\""), "{}", f.detail);
    fires(&[S(INIT), R(&INIT_OK.replace(r#","serverInfo":{"name":"s","version":"1"}"#, ""))], INITIALIZE_SHAPE);
    fires(&[S(INIT), R(&INIT_OK.replace(r#""capabilities":{"tools":{}}"#, r#""capabilities":[]"#))], INITIALIZE_SHAPE);
    let future = INIT.replace("2025-06-18", "2099-01-01");
    fires(&[S(&future), R(&answered("2099-01-01"))], INITIALIZE_SHAPE);
    only(&[S(&future), R(&answered("2025-11-25"))], &[]);
    only(&[S(&future), R(&error("0", -32602))], &[]);
    only(&[S(INIT), R(INIT_OK)], &[]);
}

#[test]
fn ping() {
    only(&[S(PING_1), R(EMPTY_1), S(INIT), R(INIT_OK), S(PING_1), R(EMPTY_1)], &[]);
    fires(&[S(PING_1), R(r#"{"jsonrpc":"2.0","id":1,"result":{"ok":true}}"#)], PING);
    let f = fires(&[S(INIT), R(INIT_OK), S(PING_1), R(&error("1", -32601))], PING);
    assert_eq!(f.event, Some(3));
}

#[test]
fn advertised_methods() {
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let f = fires(&[S(INIT), R(INIT_OK), S(list), R(&error("2", -32601))], ADVERTISED_METHODS);
    assert_eq!(f.level, Level::Warning);
    // Before initialize, or for a capability never advertised, -32601 is the server's call.
    quiet(&[S(list), R(&error("2", -32601)), S(INIT), R(INIT_OK)], ADVERTISED_METHODS);
    let prompts = r#"{"jsonrpc":"2.0","id":2,"method":"prompts/list"}"#;
    quiet(&[S(INIT), R(INIT_OK), S(prompts), R(&error("2", -32601))], ADVERTISED_METHODS);
    let discover = modern("1", "server/discover", "");
    let discovered =
        modern_ok("1", &format!(r#""supportedVersions":["2026-07-28"],"capabilities":{{"prompts":{{}}}},{HINTS}"#));
    let modern_prompts = modern("2", "prompts/list", "");
    fires(&[S(&discover), R(&discovered), S(&modern_prompts), R(&error("2", -32601))], ADVERTISED_METHODS);
    quiet(
        &[S(&discover), R(&discovered), S(&modern("2", "tools/list", "")), R(&error("2", -32601))],
        ADVERTISED_METHODS,
    );
}

// ---- The reference server: zero findings, whatever it is sent ----

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

fn reference(lines: &[String]) -> Transcript {
    let inputs: Vec<Input> =
        lines.iter().map(|l| if l == "<sync>" { Input::Sync } else { Input::Line(l.as_bytes().to_vec()) }).collect();
    let server: Calc = Default::default();
    run_in_process(&server, &inputs)
}

#[track_caller]
fn assert_clean(transcript: &Transcript) {
    let found = check(transcript, &Policy::default());
    assert!(found.is_empty(), "{}\n{found:#?}", transcript.render());
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

// ---- Garbage never panics ----

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
fn requests_that_share_a_template_keep_their_own_ids() {
    let ping = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
    let pong = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
    let (p0, p7, p8, pa) = (ping("0"), ping("7"), ping("8"), ping(r#""a""#));
    let (r0, r7, r8, ra) = (pong("0"), pong("7"), pong("8"), pong(r#""a""#));
    only(&[S(&p0), S(&p7), S(&p8), S(&pa), R(&ra), R(&r8), R(&r0), R(&r7)], &[]);
    let wrong = fires(&[S(&p7), S(&p8), R(&r7), R(&r7)], "JSONRPC-DUPLICATE-RESPONSE");
    assert_eq!(wrong.event, Some(3));
    let missing = fires(&[S(&p7), S(&p8), R(&r7), R(&r7)], "JSONRPC-RESPONSE-MISSING");
    assert_eq!(missing.event, Some(1), "the request with id 8 is the one left unanswered");
    let echo = fires(&[S(&p7), R(&pong(r#""7""#))], "JSONRPC-ID-ECHO");
    assert!(echo.detail.contains(r#""7""#), "{}", echo.detail);
}

// ---- the server model and the default profile (issue 12) ----

#[test]
fn without_a_model_modern_rules_apply_only_when_the_transcript_shows_2026_07_28() {
    let list = modern("1", "tools/list", "");
    let legacy_shaped = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
    // TS SDK 1.32.2: an enveloped request served under legacy semantics, discover -32601: not findings.
    let inferred = Policy::default();
    only_under(&inferred, &[S(&list), R(legacy_shaped)], &[]);
    only_under(&inferred, &[S(&modern("1", "server/discover", "")), R(&error("1", -32601))], &[]);
    // A discover result, a -32022 or a resultType anywhere shows the era: then the modern rules judge.
    let discover = modern("2", "server/discover", "");
    let shown = [S(&discover), R(&discovered("2", r#"["2026-07-28"]"#)), S(&list), R(legacy_shaped)];
    fires_under(&inferred, &shown, MODERN_RESULT_TYPE);
    let refused = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}"#;
    let future = modern("2", "tools/list", "").replace("2026-07-28", "2099-01-01");
    fires_under(&inferred, &[S(&future), R(refused), S(&list), R(legacy_shaped)], MODERN_RESULT_TYPE);
}

#[test]
fn a_handshake_only_server_serves_enveloped_requests_as_legacy_ones() {
    let legacy = Policy::default().with_model(ServerModel::stated(Eras::Handshake));
    let ping = modern("1", "ping", "");
    only_under(&legacy, &[S(&ping), R(EMPTY_1)], &[]);
    fires_under(&legacy, &[S(&ping), R(&error("1", -32601))], PING);
    only_under(&legacy, &[S(&modern("1", "server/discover", "")), R(&error("1", -32601))], &[]);
    let old = modern("1", "tools/list", "").replace("2026-07-28", "2030-01-01");
    only_under(&legacy, &[S(&old), R(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#)], &[]);
    // The same on a dual-era server, opened by the enveloped request: modern rules.
    fires(&[S(&ping), R(EMPTY_1)], MODERN_REMOVED_METHOD);
    fires(&[S(&modern("1", "server/discover", "")), R(&error("1", -32601))], DISCOVER_SHAPE);
}

#[test]
fn notifications_never_select_an_era() {
    // TS server 2.4.0 (R1): a claim-less notification first pins legacy; a later enveloped discover gets -32601.
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let discover = modern("2", "server/discover", "");
    fires(&[S(cancel), S(&discover), R(&error("2", -32601))], DISCOVER_SHAPE);
    fires(&[S(NOTE), S(&discover), R(&error("2", -32601))], DISCOVER_SHAPE);
    let future = modern("2", "tools/list", "").replace("2026-07-28", "2030-01-01");
    fires(&[S(cancel), S(&future), R(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#)], UNSUPPORTED_VERSION);
    // A claim-less request or initialize first excuses: -32600, a legacy reply, or a passing modern reply.
    for (opener, answer) in [(PING_1, EMPTY_1), (INIT, INIT_OK)] {
        only(&[S(opener), R(answer), S(&discover), R(&error("2", -32601))], &[]);
        only(&[S(opener), R(answer), S(&discover), R(&error("2", -32600))], &[]);
        let ping = modern("2", "ping", "");
        only(&[S(opener), R(answer), S(&ping), R(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#)], &[]);
        fires(&[S(opener), R(answer), S(&modern("2", "tools/list", "")), R(&modern_ok("2", ""))], CACHE_HINTS);
    }
}

#[test]
fn after_a_modern_request_initialize_and_plain_requests_may_be_served_or_refused() {
    let discover = modern("1", "server/discover", "");
    let opened = [S(&discover), R(&discovered("1", r#"["2026-07-28"]"#))];
    // rmcp: initialize after discover is served; the Python SDK refuses it with -32022.
    only(&[opened[0], opened[1], S(INIT), R(INIT_OK)], &[]);
    only(&[opened[0], opened[1], S(INIT), R(&error("0", -32022))], &[]);
    only(&[opened[0], opened[1], S(PING_1), R(EMPTY_1)], &[]);
    only(&[opened[0], opened[1], S(PING_1), R(&error("1", -32602))], &[]);
    // A version the server names anywhere in the run is supported (rmcp lists 2025-11-25).
    let old = modern("3", "tools/list", "").replace("2026-07-28", "2025-11-25");
    let not_found = error("3", -32601);
    fires(&[S(&old), R(&not_found)], UNSUPPORTED_VERSION);
    let mut rmcp = ServerModel::stated(Eras::Dual);
    rmcp.versions = vec!["2025-11-25".into(), "2026-07-28".into()];
    only_under(&Policy::default().with_model(rmcp), &[S(&old), R(&not_found)], &[]);
}

#[test]
fn initialize_invalid_params() {
    let bare = r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#;
    let no_info =
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
    let typed = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":7,"capabilities":{},"clientInfo":{}}}"#;
    for invalid in [bare, no_info, typed] {
        // TS SDK 1.32.2: -32603 with a zod dump.
        let f = fires(&[S(invalid), R(&error("0", -32603))], INITIALIZE_PARAMS);
        assert_eq!(f.level, Level::Warning);
        only(&[S(invalid), R(&error("0", -32602))], &[]);
        // Refusals of the era after a modern request, and anything after a successful initialize.
        let discover = modern("1", "server/discover", "");
        only(&[S(&discover), R(&discovered("1", r#"["2026-07-28"]"#)), S(invalid), R(&error("0", -32022))], &[]);
        // rmcp: initialize is a method 2026-07-28 removed (the example crate's fuzz body, seed 0).
        only(&[S(&discover), R(&discovered("1", r#"["2026-07-28"]"#)), S(invalid), R(&error("0", -32601))], &[]);
        only(&[S(INIT), R(INIT_OK), S(invalid), R(&error("0", -32600))], &[]);
        // -32022 refuses initialize whatever opened the connection: the built-in server locked modern on a line
        // with a duplicate id member (ambiguous to the oracle) and refused the next initialize (seed 2).
        only(&[S(invalid), R(&error("0", -32022))], &[]);
    }
    // After an initialize whose outcome is not known (a malformed line reused its id, replies out of order), a
    // second one may be refused any way: the quirky server's shrunk case.
    let init_1 = INIT.replace(r#""id":0"#, r#""id":1"#);
    let init_ok_1 = INIT_OK.replace(r#""id":0"#, r#""id":1"#);
    let params_1 = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"params"}"#;
    let bare_3 = r#"{"jsonrpc":"2.0","id":3,"method":"initialize"}"#;
    let events = [S(&init_1), S(params_1), S(bare_3), R(&error("3", -32600)), R(&error("1", -32600)), R(&init_ok_1)];
    only(&events, &[]);
    // An initialize with a number beyond parser limits (ambiguous to the oracle) that got a result: a second one
    // may be refused any way (the built-in server, seed 1, conversation 31,569).
    let huge = INIT.replace(r#""id":0,"#, &format!(r#""id":0,"wirefuzz":1{},"#, "0".repeat(400)));
    let bare_2 = r#"{"jsonrpc":"2.0","id":2,"method":"initialize"}"#;
    quiet(&[S(&huge), R(INIT_OK), S(bare_2), R(&error("2", -32600))], INITIALIZE_PARAMS);
    // An initialize that is not a valid request (id `4e+3`, an extra member) that a lenient server served: a second
    // one may be refused any way (the example rmcp crate's fuzz body, seed 0).
    let lenient = INIT.replace(r#""id":0,"#, r#""id":4e+3,"wirefuzz":true,"#);
    let served = INIT_OK.replace(r#""id":0"#, r#""id":4000"#);
    quiet(&[S(&lenient), R(&served), S(bare_2), R(&error("2", -32601))], INITIALIZE_PARAMS);
    // A valid initialize may be refused with any code.
    quiet(&[S(INIT), R(&error("0", -32603))], INITIALIZE_PARAMS);
    // An invalid initialize that carries the modern envelope itself: rmcp reads it as a 2026-07-28 request, in
    // which initialize does not exist, and answers -32601 (rmcp-calc, seed 1). Another code is still judged.
    let enveloped = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":true,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    quiet(&[S(enveloped), R(&error("0", -32601))], INITIALIZE_PARAMS);
    fires(&[S(enveloped), R(&error("0", -32603))], INITIALIZE_PARAMS);
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

#[test]
fn a_request_pipelined_after_initialize_is_on_an_initialized_connection() {
    // rmcp: two initializes and a tools/list written together; the list result carries resultType.
    let typed = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"resultType":"complete"}}"#;
    fires(&[S(INIT), S(LIST_1), R(INIT_OK), R(typed)], HANDSHAKE_NO_RESULT_TYPE);
    quiet(&[S(LIST_1), S(INIT), R(typed), R(INIT_OK)], HANDSHAKE_NO_RESULT_TYPE);
}

#[test]
fn a_plain_request_before_initialize_may_be_refused_by_a_server_that_serves_2026_07_28() {
    // A claim-less request selects no era in the spec: a dual-era server may take it for a modern one.
    only(&[S(PING_1), R(&error("1", -32602))], &[]);
    only(&[S(PING_1), R(&error("1", -32600))], &[]);
    fires(&[S(PING_1), R(&error("1", -32601))], PING);
    // A handshake-only server must answer ping, and so must any server after initialize.
    let legacy = Policy::default().with_model(ServerModel::stated(Eras::Handshake));
    fires_under(&legacy, &[S(PING_1), R(&error("1", -32602))], PING);
    fires(&[S(INIT), R(INIT_OK), S(PING_1), R(&error("1", -32602))], PING);
}

#[test]
fn a_ping_with_a_meta_that_is_no_object_may_get_invalid_params() {
    let transcript = |meta: &str, reply: &str| {
        Transcript {
        events: vec![
            Event::Sent(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#.to_vec()),
            Event::Received { line: br#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#.to_vec(), truncated: false },
            Event::Sync,
            Event::Sent(format!(r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"_meta":{meta}}}}}"#).into_bytes()),
            Event::Received { line: reply.as_bytes().to_vec(), truncated: false },
            Event::Sync,
        ],
        ending: Ending::Closed,
    }
    };
    let refused = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid request parameters"}}"#;
    let rules = |t: &Transcript| check(t, &Policy::default()).into_iter().map(|f| f.rule).collect::<Vec<_>>();
    assert!(!rules(&transcript(r#""""#, refused)).contains(&PING));
    assert!(rules(&transcript("{}", refused)).contains(&PING));
}

#[test]
fn a_line_nested_past_the_parsers_limit_may_be_served() {
    // Valid JSON nested deeper than serde_json's limit: a server that parses deeper (Node) serves the ping and
    // echoes a whole-valued id as the integer; that is no MALFORMED-SERVED and no ID-ECHO.
    let deep = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"x":{}{}}}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        )
    };
    for (id, echoed) in [("4.0", "4"), ("\"2\"", "\"2\""), ("7", "7")] {
        let reply = format!(r#"{{"jsonrpc":"2.0","id":{echoed},"result":{{}}}}"#);
        assert_eq!(ids(&findings(&[S(&deep(id)), R(&reply)])), Vec::<&str>::new(), "{id}");
    }
    // An unrelated id is still ID-ECHO.
    assert!(ids(&findings(&[S(&deep("7")), R(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#)])).contains(&ID_ECHO));
}
