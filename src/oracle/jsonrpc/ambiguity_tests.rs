//! The JSON-RPC layer's rules on lines parsers legitimately differ on (numbers beyond their limits, duplicate
//! keys, nesting past their depth), judged leniently, and on replies a server may give to lines that owe nothing
//! (a blank line, a stray response, a listen stream, an id MCP forbids).

use crate::oracle::rules::*;
use crate::oracle::test_support::E::*;
use crate::oracle::test_support::*;
use crate::oracle::{Policy, check};
use crate::transcript::Ending;

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

#[test]
fn an_acknowledged_listen_stream_owes_no_response_while_open() {
    let envelope = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let listen = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{{"notifications":{{}},{envelope}}}}}"#
    );
    let call = format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{{envelope}}}}}"#);
    let ack = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{{"notifications":{{}},"_meta":{{"io.modelcontextprotocol/subscriptionId":{id}}}}}}}"#
        )
    };
    // Acknowledged, the stream stays open: the connection closes without its response. A name written with
    // escapes is the same name.
    quiet(&[S(&listen), R(&ack("7")), Sync], RESPONSE_MISSING);
    let escaped = ack("7").replace("notifications/subscriptions", r"n\u006Ftifications\/subscriptions");
    quiet(&[S(&listen), R(&escaped), Sync], RESPONSE_MISSING);
    // Never acknowledged nor answered; acknowledged under another id; and an "acknowledgement" of a request that
    // is no listen: each still owes its response.
    fires(&[S(&listen), Sync], RESPONSE_MISSING);
    fires(&[S(&listen), R(&ack(r#""7""#)), Sync], RESPONSE_MISSING);
    fires(&[S(&call), R(&ack("7")), Sync], RESPONSE_MISSING);
    // A listen whose id is beyond 2^53: its acknowledgement, under the exact id, lets it go too.
    let big = listen.replace(r#""id":7"#, r#""id":9007199254740997"#);
    quiet(&[S(&big), R(&ack("9007199254740997")), Sync], BIG_ID);
    fires(&[S(&big), Sync], BIG_ID);
}

#[test]
fn a_blank_line_may_be_answered_with_a_parse_error_and_owes_nothing() {
    let parse_error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
    for blank in ["", " ", "\t  "] {
        // JSON-RPC 2.0 §5.1: a line with no JSON text is a parse error; answered or not, nothing breaks.
        only(&[S(blank), R(parse_error)], &[]);
        only(&[S(blank), Sync], &[]);
        // Its -32700 is not a reply to the notification beside it, before or after.
        only(&[S(NOTE), S(blank), R(parse_error)], &[]);
        only(&[S(blank), S(NOTE), R(parse_error)], &[]);
        // One line explains one reply: a second -32700 has nothing left to answer.
        fires(&[S(NOTE), S(blank), R(parse_error), R(parse_error)], NULL_ID);
        // A result for it, or an error under an id never sent, is still a finding.
        fires(&[S(blank), R(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#)], NULL_ID);
    }
}

#[test]
fn a_stray_response_may_be_refused_under_its_id_or_none() {
    let stray = r#"{"jsonrpc":"2.0","id":"stray","result":{}}"#;
    let refused = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"message":"Invalid"}}}}"#);
    only(&[S(stray), R(&refused(r#""stray""#))], &[]);
    only(&[S(stray), R(&refused("null"))], &[]);
    only(&[S(stray), Sync], &[]);
    // Not the notification's, nor an echo of an id never sent.
    only(&[S(stray), S(NOTE), R(&refused("null"))], &[]);
    let no_id = r#"{"jsonrpc":"2.0","result":{}}"#;
    only(&[S(no_id), S(NOTE), R(&refused("null"))], &[]);
    // A reply under an id the client never sent at all is still one.
    fires(&[S(stray), R(&refused(r#""other""#))], ID_ECHO);
    // A response the client sends to a request of the server's is that request's answer: a -32600 under its id is
    // no answer to anything the client sent.
    let asked = r#"{"jsonrpc":"2.0","id":"s1","method":"roots/list"}"#;
    let answer = r#"{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}"#;
    fires(&[R(asked), S(answer), R(&refused(r#""s1""#))], ID_ECHO);
}

#[test]
fn an_id_mcp_forbids_may_be_echoed_exactly() {
    // JSON-RPC 2.0 §5: the response id is the request's, whatever it is; MCP forbids these ids to the sender only.
    for (id, sent) in [
        ("null", r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
        ("1.5", r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
    ] {
        only(&[S(sent), R(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#))], &[]);
        only(&[S(sent), R(&error(id, -32601))], &[]);
        only(&[S(sent), R(&error("null", -32600))], &[]);
        only(&[S(sent), Sync], &[]);
    }
    // An id JSON-RPC does not allow is refused: echoed exactly or null, with -32600; a result is a finding.
    let bool_id = r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#;
    only(&[S(bool_id), R(&error("true", -32600))], &[]);
    only(&[S(r#"{"id":true}"#), R(&error("true", -32600))], &[]);
    fires(&[S(bool_id), R(r#"{"jsonrpc":"2.0","id":true,"result":{}}"#)], MALFORMED_SERVED);
    fires(&[S(bool_id), R(&error("false", -32600))], ID_ECHO);
    // A line only a lenient reader parses (a lone surrogate escape) keeps its odd id as sent too.
    let lone = r#"{"jsonrpc":"2.0","id":true,"method":"ping","params":{"x":"\ud800"}}"#;
    only(&[S(lone), R(&error("true", -32600))], &[]);
    // The same odd id twice, the first refused with id null, the second echoed: the echo is the newer line's.
    only(&[S(bool_id), R(&error("null", -32600)), S(bool_id), R(&error("true", -32600))], &[]);
    // With a malformed line before it, the refusal may be that line's and the other reply the request's echo.
    let null_ping = r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#;
    only(&[S("[]"), S(null_ping), R(&error("null", -32600)), R(&error("null", -32601))], &[]);
    only(&[S("null"), S(null_ping), R(&error("null", -32600)), R(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#)], &[]);
    // A number id written back with other digits for the same value is its exact echo (RFC 8259 §6), on a line
    // nested past the parser's limit too.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":5e+3,"method":"ping","params":{{"x":{}{}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    only(&[S(&deep), R(&error("5000.0", -32601))], &[]);
    fires(&[S(&deep), R(&error("5001.0", -32601))], ID_ECHO);
    only(&[S(r#"{"id":2e+3}"#), R(&error("2000.0", -32600))], &[]);
    fires(&[S(r#"{"id":2e+3}"#), R(&error("2001.0", -32600))], ID_ECHO);
    // One request explains one reply: a second has nothing left to answer but the notification sent beside it.
    let unknown = error("null", -32601);
    only(&[S(null_ping), S(NOTE), R(&unknown), R(&unknown)], &[NOTIFICATION_REPLY]);
    only(&[S(null_ping), R(&unknown), R(&unknown)], &[NULL_ID]);
}

#[test]
fn an_idless_error_takes_no_line_that_gets_its_own_reply_later() {
    // A server that answers notifications: its id-less -32601 is the notification's, and the big-id request
    // sent beside it gets its own reply under its id.
    let foo = r#"{"jsonrpc":"2.0","method":"notifications/foo"}"#;
    let big = r#"{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}"#;
    let idless = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}"#;
    let big_ok = r#"{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}"#;
    only(&[S(foo), S(big), R(idless), R(big_ok), Sync], &[NOTIFICATION_REPLY]);
    // The same error, when the request never gets a reply under its id, is the request's (its id dropped).
    let f = fires(&[S(foo), S(big), R(idless), Sync], NULL_ID);
    assert!(f.detail.contains("the line at event 1"), "{}", f.detail);
    quiet(&[S(foo), S(big), R(idless), Sync], NOTIFICATION_REPLY);
    // `{}` has no id to echo: the id-less error is its answer, and the request after it gets its own.
    let exponent = r#"{"jsonrpc":"2.0","id":4e+3,"method":"ping"}"#;
    let exponent_answered = r#"{"jsonrpc":"2.0","id":4000.0,"error":{"code":-32601,"message":"Method not found"}}"#;
    only(&[S("{}"), S(exponent), R(idless), R(exponent_answered), Sync], &[]);
    // With nothing else to answer, an id-less error for a line that had an id is still a finding.
    fires(&[S(big), R(idless), Sync], NULL_ID);
    // A reply to an earlier line ends the stretch of the notification, not the claim of the line with an id: the
    // second id-less error is the notification's, and `1.5` gets its own (markdown-mcp-server 0.2.0).
    let fraction = r#"{"id":1.5}"#;
    let fraction_answered = r#"{"jsonrpc":"2.0","id":1.5,"error":{"code":-32601,"message":"Method not found"}}"#;
    let empty_method = r#"{"jsonrpc":"2.0","method":""}"#;
    let events = [S("{}"), S(empty_method), S(fraction), R(idless), R(idless), R(fraction_answered), Sync];
    only(&events, &[NOTIFICATION_REPLY]);
}
