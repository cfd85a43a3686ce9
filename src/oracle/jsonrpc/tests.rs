//! The JSON-RPC layer's rules on hand-written transcripts: framing and shapes, id echo, missing, duplicate and
//! unwanted replies, malformed input, and the lines parsers legitimately differ on (judged leniently).

use crate::oracle::rules::*;
use crate::oracle::test_support::E::*;
use crate::oracle::test_support::*;
use crate::oracle::{Level, Policy, check};
use crate::transcript::{Ending, Event, Transcript};

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
    // A second reply under 1 while a line sent with id 1.5 is unanswered: that line's id, its fraction dropped
    // (go-sdk 1.8.0), not a second answer to the first.
    let fraction = r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#;
    let f = fires(&[S(PING_1), R(EMPTY_1), Sync, S(fraction), R(EMPTY_1), Sync], ID_ECHO);
    assert!(f.detail.contains("the id 1.5 of the line at event 3 (the number's fraction dropped)"), "{}", f.detail);
    only(&[S(PING_1), R(EMPTY_1), Sync, S(fraction), R(EMPTY_1), Sync], &[ID_ECHO]);
    // Its exact echo is no finding, and a third reply under 1 is still a duplicate.
    only(&[S(PING_1), R(EMPTY_1), Sync, S(fraction), R(r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#), Sync], &[]);
    let third = [S(PING_1), R(EMPTY_1), Sync, S(fraction), R(EMPTY_1), R(EMPTY_1), Sync];
    only(&third, &[ID_ECHO, DUPLICATE_RESPONSE]);
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
    assert_eq!(ids(&check(&hung, &Policy::default())), [SERVER_HANG], "a server that wrote nothing: one finding");
    // Whatever it was sent: a big id or a malformed line owed a refusal is not judged apart from its silence.
    let big = r#"{"jsonrpc":"2.0","id":1844674407370955161000000000000000000004,"method":"ping"}"#;
    let mute = t(&[S(PING_1), Sync, S(big), S("this is not json"), Sync], Ending::Hung { waited_ms: 5000 });
    assert_eq!(ids(&check(&mute, &Policy::default())), [SERVER_HANG], "a mute server's big id and malformed line");
    let (ping_3, answer_3) = (r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#, r#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
    let heard = t(&[S(big), S(ping_3), R(answer_3), Sync, S(PING_1), Sync], Ending::Hung { waited_ms: 5000 });
    assert_eq!(ids(&check(&heard, &Policy::default())), [BIG_ID, SERVER_HANG], "a server that answered is judged");
    let answered_then_hung =
        t(&[S(PING_1), R(EMPTY_1), Sync, S(PING_1), Sync, S(PING_1)], Ending::Hung { waited_ms: 5000 });
    assert_eq!(ids(&check(&answered_then_hung, &Policy::default())), [RESPONSE_MISSING, SERVER_HANG]);
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
    // A line whose id could not be read gets a null id whatever the code (JSON-RPC 2.0 §5); the code is
    // JSONRPC-MALFORMED-REPLY's (a policy), not this rule's.
    let unreadable = [S("{oops"), R(internal)];
    quiet(&unreadable, NULL_ID);
    let strict = Policy::default().deny(MALFORMED_REPLY).unwrap();
    assert_eq!(ids(&check(&t(&unreadable, Ending::Closed), &strict)), [MALFORMED_REPLY]);
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
    // A second fault is graded as it is alone: an object for an id, served (mcp-go 0.33.0), is MALFORMED-SERVED
    // with or without null params.
    for line in
        [r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, r#"{"jsonrpc":"2.0","id":{},"method":"ping","params":null}"#]
    {
        fires(&[S(line), R(r#"{"jsonrpc":"2.0","id":{},"result":{}}"#)], MALFORMED_SERVED);
    }
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
    // An id beyond 64 bits answered under a 64-bit bound (go-sdk 1.8.0: a double's overflow into int64) is the same
    // wire fact as one rounded: the big id's, once; one a double holds within 64 bits answered so is unexplained.
    let huge = r#"{"jsonrpc":"2.0","id":1844674407370955161000000000000000000002,"method":"ping"}"#;
    let clamped = r#"{"jsonrpc":"2.0","id":-9223372036854775808,"result":{}}"#;
    let f = fires(&[S(huge), R(clamped), Sync], BIG_ID);
    assert!(f.detail.contains("overflowed"), "{}", f.detail);
    only(&[S(huge), R(clamped), Sync], &[BIG_ID]);
    only(&[S(r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}"#), R(clamped), Sync], &[BIG_ID]);
    let within = r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#;
    only(&[S(within), R(clamped), Sync], &[BIG_ID, ID_ECHO]);
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
    // The TS SDK 1.0.1 (server-memory, published): a malformed line with a big id, then a request whose big id
    // rounds to the same double, answered under the rounded id. The same wire fact as alone: the request's BIG-ID,
    // never an ID-ECHO of the malformed line (which may go unanswered).
    let malformed = r#"{"id":1844674407370955161000000000000000000002}"#;
    let request = r#"{"jsonrpc":"2.0","id":1844674407370955161000000000000000000005,"method":""}"#;
    let answered =
        r#"{"jsonrpc":"2.0","id":1.8446744073709552e+39,"error":{"code":-32601,"message":"Method not found"}}"#;
    only(&[S(malformed), S(request), R(answered), Sync], &[BIG_ID]);
    only(&[S(request), R(answered), Sync], &[BIG_ID]);
    // A malformed line's big id written back rounded is BIG-ID too.
    only(&[S(malformed), R(answered), Sync], &[BIG_ID]);
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
fn a_boolean_id_read_as_an_integer_is_served_malformed_not_a_duplicate() {
    // Python `mcp` 1.6.0 (pydantic in lax mode) reads `"id": true` as 1 and answers under 1: the reply is the
    // malformed line's, served (JSON-RPC 2.0 §4: an id is a string, a number or null), not a second reply to the
    // request that had id 1.
    for (literal, integer) in [("true", "1"), ("false", "0")] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{literal},"method":"tools/list"}}"#);
        let reply = format!(r#"{{"jsonrpc":"2.0","id":{integer},"result":{{"tools":[]}}}}"#);
        let earlier = format!(r#"{{"jsonrpc":"2.0","id":{integer},"method":"ping"}}"#);
        let earlier_reply = format!(r#"{{"jsonrpc":"2.0","id":{integer},"result":{{}}}}"#);
        only(&[S(&earlier), R(&earlier_reply), S(&line), R(&reply), Sync], &[MALFORMED_SERVED]);
        only(&[S(&line), R(&reply), Sync], &[MALFORMED_SERVED]);
        // Refused as JSON-RPC asks: nothing.
        only(&[S(&line), R(&error("null", -32600)), Sync], &[]);
    }
    // A third reply under 1 is still a duplicate.
    let line = r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#;
    fires(&[S(PING_1), R(EMPTY_1), S(line), R(EMPTY_1), R(EMPTY_1)], DUPLICATE_RESPONSE);
}
