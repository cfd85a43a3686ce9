//! The MCP layer's rules on what the server sends of its own, on hand-written transcripts: requests it may not
//! send or that ask beyond what the client declared (its own, or as an `input_required` result's input requests),
//! notifications beyond its declared capabilities, listen streams, log messages and their levels, missing
//! capabilities named in -32021, and progress.

use crate::model::{Eras, ServerModel};
use crate::oracle::rules::*;
use crate::oracle::test_support::E::*;
use crate::oracle::test_support::*;
use crate::oracle::{Policy, check};
use crate::transcript::Ending;

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

#[test]
fn undeclared_capability() {
    let init = |capabilities: &str| INIT.replace(r#""capabilities":{}"#, &format!(r#""capabilities":{capabilities}"#));
    let ask =
        |method: &str, params: &str| format!(r#"{{"jsonrpc":"2.0","id":"s1","method":"{method}","params":{params}}}"#);
    let sample = ask("sampling/createMessage", r#"{"messages":[],"maxTokens":1}"#);
    let elicit = ask("elicitation/create", r#"{"message":"m","requestedSchema":{"type":"object"}}"#);
    let roots = ask("roots/list", "{}");
    // Nothing declared: each of the three is a finding, once the initialize got its result.
    for request in [&sample, &elicit, &roots] {
        let f = fires(&[S(&init("{}")), R(INIT_OK), S(NOTE), R(request)], UNDECLARED_CAPABILITY);
        assert_eq!(f.event, Some(3));
        assert!(f.detail.contains("did not declare"), "{}", f.detail);
    }
    let declared = init(r#"{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}"#);
    for request in [&sample, &elicit, &roots] {
        quiet(&[S(&declared), R(INIT_OK), S(NOTE), R(request)], UNDECLARED_CAPABILITY);
    }
    // Sub-capabilities: tool use in sampling, and the URL mode of elicitation.
    let with_tools = ask("sampling/createMessage", r#"{"messages":[],"maxTokens":1,"tools":[]}"#);
    let url = ask("elicitation/create", r#"{"mode":"url","message":"m","url":"https://x","elicitationId":"e"}"#);
    fires(&[S(&declared), R(INIT_OK), R(&with_tools)], UNDECLARED_CAPABILITY);
    fires(&[S(&declared), R(INIT_OK), R(&url)], UNDECLARED_CAPABILITY);
    let both = init(r#"{"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}}}"#);
    quiet(&[S(&both), R(INIT_OK), R(&with_tools), R(&url), R(&elicit)], UNDECLARED_CAPABILITY);
    let url_only = init(r#"{"elicitation":{"url":{}}}"#);
    fires(&[S(&url_only), R(INIT_OK), R(&elicit)], UNDECLARED_CAPABILITY);
    // A ping, a notification, another method and a request before any initialize are not this rule's.
    let ping = ask("ping", "{}");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    quiet(&[S(&init("{}")), R(INIT_OK), R(&ping), R(note), R(&ask("wirefuzz/other", "{}"))], UNDECLARED_CAPABILITY);
    quiet(&[S(PING_1), R(&roots), R(EMPTY_1)], UNDECLARED_CAPABILITY);
    // A refused initialize opens nothing; the first one that succeeds declares for the connection.
    let refused = INIT.replace(r#""id":0"#, r#""id":5"#);
    quiet(&[S(&refused), R(&error("5", -32602)), R(&roots)], UNDECLARED_CAPABILITY);
    fires(&[S(&declared), R(INIT_OK), S(&init("{}")), R(&error("0", -32600)), R(&with_tools)], UNDECLARED_CAPABILITY);
    quiet(&[S(&declared), R(INIT_OK), S(&init("{}")), R(&error("0", -32600)), R(&roots)], UNDECLARED_CAPABILITY);
}

#[test]
fn input_required() {
    let call = |capabilities: &str| {
        let meta = format!(
            r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{capabilities}}}"#
        );
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"t","arguments":{{}},"_meta":{meta}}}}}"#
        )
    };
    let needs = |body: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"resultType":"input_required",{body}"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"s","version":"1"}}}}}}}}"#
        )
    };
    let elicit = r#""inputRequests":{"q1":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}},"#;
    let url = r#""inputRequests":{"q1":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://x","elicitationId":"e"}}},"#;
    let roots = r#""inputRequests":{"r":{"method":"roots/list"}},"requestState":"s1","#;
    let fires_for = |capabilities: &str, body: &str| fires(&[S(&call(capabilities)), R(&needs(body))], INPUT_REQUIRED);
    let quiet_for = |capabilities: &str, body: &str| quiet(&[S(&call(capabilities)), R(&needs(body))], INPUT_REQUIRED);
    // Fires: an undeclared capability or mode, no requests and no state, a request of another kind, a state that
    // is not a string.
    let f = fires_for("{}", elicit);
    assert!(f.detail.contains("did not declare `elicitation`"), "{}", f.detail);
    fires_for(r#"{"elicitation":{}}"#, url);
    fires_for(r#"{"sampling":{}}"#, roots);
    fires_for("{}", "");
    fires_for(r#"{"roots":{}}"#, r#""inputRequests":{"x":{"method":"tools/list"}},"#);
    fires_for("{}", r#""inputRequests":[],"#);
    fires_for("{}", r#""requestState":7,"#);
    // Quiet: what was declared, a state alone, and a complete result.
    quiet_for(r#"{"elicitation":{}}"#, elicit);
    quiet_for(r#"{"elicitation":{"url":{}}}"#, url);
    quiet_for(r#"{"roots":{"listChanged":true}}"#, roots);
    quiet_for("{}", r#""requestState":"opaque","#);
    quiet(&[S(&call("{}")), R(&modern_ok("2", r#""content":[],"#))], INPUT_REQUIRED);
}

#[test]
fn undeclared_notification() {
    let log = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    let changed = |list: &str| format!(r#"{{"jsonrpc":"2.0","method":"notifications/{list}/list_changed"}}"#);
    let updated = r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"x://y"}}"#;
    let result = |capabilities: &str| {
        INIT_OK.replace(r#""capabilities":{"tools":{}}"#, &format!(r#""capabilities":{capabilities}"#))
    };
    let bare = result(r#"{"tools":{"listChanged":false},"resources":{}}"#);
    for note in [log, &changed("tools"), &changed("prompts"), &changed("resources"), updated] {
        let f = fires(&[S(INIT), R(&bare), S(NOTE), R(note)], UNDECLARED_NOTIFICATION);
        assert!(f.detail.contains("did not declare"), "{}", f.detail);
    }
    let full = result(
        r#"{"logging":{},"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true}}"#,
    );
    for note in [log, &changed("tools"), &changed("prompts"), &changed("resources"), updated] {
        quiet(&[S(INIT), R(&full), S(NOTE), R(note)], UNDECLARED_NOTIFICATION);
    }
    // Before the initialize result, and on a connection no initialize opened, it is not this rule's.
    quiet(&[S(INIT), R(log), R(&bare)], UNDECLARED_NOTIFICATION);
    quiet(&[S(PING_1), R(log), R(EMPTY_1)], UNDECLARED_NOTIFICATION);
    // Other notifications need no capability of the server's.
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    quiet(&[S(INIT), R(&bare), R(progress)], UNDECLARED_NOTIFICATION);
}

#[test]
fn listen() {
    let listen = |filter: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{{"notifications":{filter},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        )
    };
    let ack = |honoured: &str, id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{{"notifications":{honoured},"_meta":{{"io.modelcontextprotocol/subscriptionId":{id}}}}}}}"#
        )
    };
    let changed = |list: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/{list}/list_changed","params":{{"_meta":{{"io.modelcontextprotocol/subscriptionId":7}}}}}}"#
        )
    };
    let updated = |uri: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{{"uri":"{uri}","_meta":{{"io.modelcontextprotocol/subscriptionId":7}}}}}}"#
        )
    };
    let closed = r#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7}}}"#;
    let filter = r#"{"toolsListChanged":true,"resourceSubscriptions":["a://x"]}"#;
    // Quiet: the acknowledgement first, a subset honoured, then what the filter asked for, then the graceful close.
    let honoured = r#"{"toolsListChanged":true,"resourceSubscriptions":["a://x"]}"#;
    quiet(&[S(&listen(filter)), R(&ack(honoured, "7")), R(&changed("tools")), R(&updated("a://x")), R(closed)], LISTEN);
    quiet(&[S(&listen(filter)), R(&ack("{}", "7"))], LISTEN);
    // Fires: a notification or the close before the acknowledgement (an id "7" is not the id 7).
    let f = fires(&[S(&listen(filter)), R(&ack("{}", r#""7""#)), R(&changed("tools"))], LISTEN);
    assert!(f.detail.contains("before the acknowledgement"), "{}", f.detail);
    fires(&[S(&listen(filter)), R(closed)], LISTEN);
    // Fires: honouring or sending what the filter did not ask for.
    let f = fires(&[S(&listen(filter)), R(&ack(r#"{"promptsListChanged":true}"#, "7"))], LISTEN);
    assert!(f.detail.contains("promptsListChanged"), "{}", f.detail);
    fires(&[S(&listen(filter)), R(&ack("{}", "7")), R(&changed("prompts"))], LISTEN);
    fires(&[S(&listen(filter)), R(&ack("{}", "7")), R(&updated("a://other"))], LISTEN);
    // Not this rule's: a refused listen, messages of no listen sent.
    let refused = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}"#;
    quiet(&[S(&listen(filter)), R(refused)], LISTEN);
    quiet(&[S(PING_1), R(&changed("tools")), R(EMPTY_1)], LISTEN);
}

#[test]
fn log_requested() {
    let call = |id: u32, meta: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}{meta}}}}}}}"#
        )
    };
    let log = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    let done = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[],"resultType":"complete"}}"#;
    let (asks, silent) = (call(2, r#","io.modelcontextprotocol/logLevel":"debug""#), call(2, ""));
    // Quiet: a message while the request that asked for one is open.
    quiet(&[S(&asks), R(log), R(done)], LOG_REQUESTED);
    // Fires: a message for a request that asked for none, or after the response of the one that did.
    let f = fires(&[S(&silent), R(log), R(done)], LOG_REQUESTED);
    assert!(f.detail.contains("logLevel"), "{}", f.detail);
    fires(&[S(&asks), R(done), R(log)], LOG_REQUESTED);
    // Not this rule's: a handshake connection (logging/setLevel governs it), or no modern request before it.
    quiet(&[S(INIT), R(INIT_OK), S(NOTE), S(&silent), R(log), R(done)], LOG_REQUESTED);
    quiet(&[S(PING_1), R(log), R(EMPTY_1)], LOG_REQUESTED);
    // Nor a server the model says serves the handshake era only: a 2026-07-28 rule never judges it, whatever the
    // conversation's lines look like (its own rule on the same message is SERVER-UNDECLARED-NOTIFICATION's).
    let handshake_only = Policy::default().with_model(ServerModel::stated(Eras::Handshake));
    let judged = crate::oracle::check(&t(&[S(&silent), R(log), R(done)], Ending::Closed), &handshake_only);
    assert!(judged.iter().all(|f| f.rule != LOG_REQUESTED), "{judged:#?}");
}

#[test]
fn log_level() {
    let modern = |id: u32, level: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/logLevel":"{level}"}}}}}}"#
        )
    };
    let log = |level: &str| {
        format!(r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"{level}","data":"x"}}}}"#)
    };
    let done = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"resultType":"complete"}}}}"#);
    // 2026-07-28: at or above the level the open request asked for is quiet; below it fires.
    quiet(&[S(&modern(2, "warning")), R(&log("error")), R(&log("warning")), R(&done(2))], LOG_LEVEL);
    let f = fires(&[S(&modern(2, "warning")), R(&log("info")), R(&done(2))], LOG_LEVEL);
    assert!(f.detail.contains("level info, below the warning"), "{}", f.detail);
    // Two requests open: the lower of their levels counts.
    quiet(&[S(&modern(2, "warning")), S(&modern(3, "debug")), R(&log("info")), R(&done(2)), R(&done(3))], LOG_LEVEL);
    // A message with no request open is not tied to one (MCP-LOG-REQUESTED's business in 2026-07-28).
    quiet(&[S(&modern(2, "error")), R(&done(2)), R(&log("debug"))], LOG_LEVEL);
    // The handshake era: logging/setLevel, once its result came, governs messages while the requests sent after it
    // are open.
    let set = |level: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{{"level":"{level}"}}}}"#)
    };
    let call = r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"t","arguments":{}}}"#;
    let call_done = r#"{"jsonrpc":"2.0","id":6,"result":{"content":[]}}"#;
    let set_done = r#"{"jsonrpc":"2.0","id":5,"result":{}}"#;
    let judged = |level: &str, message: &str| {
        let (set, log) = (set(level), log(message));
        let events = [S(INIT), R(INIT_OK), S(NOTE), S(&set), R(set_done), Sync, S(call), R(&log), R(call_done)];
        check(&t(&events, Ending::Closed), &Policy::default()).iter().any(|f| f.rule == LOG_LEVEL)
    };
    assert!(judged("error", "warning"));
    assert!(!judged("error", "error"));
    assert!(!judged("debug", "debug"));
    // A setLevel refused, or a message while a request sent before the level was set is still open: not judged.
    let refused = r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"no"}}"#;
    let (error, debug) = (set("error"), log("debug"));
    quiet(&[S(INIT), R(INIT_OK), S(NOTE), S(&error), R(refused), S(call), R(&debug), R(call_done)], LOG_LEVEL);
    quiet(&[S(INIT), R(INIT_OK), S(NOTE), S(call), S(&error), R(set_done), R(&debug), R(call_done)], LOG_LEVEL);
}

#[test]
fn missing_capability() {
    let call = |declared: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"t","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{declared}}}}}}}"#
        )
    };
    let refused = |data: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":2,"error":{{"code":-32021,"message":"needs elicitation"{data}}}}}"#)
    };
    let names = |required: &str| refused(&format!(r#","data":{{"requiredCapabilities":{required}}}"#));
    // Quiet: the missing capability named; a mode the request did not declare (form declared, url needed).
    quiet(&[S(&call("{}")), R(&names(r#"{"elicitation":{}}"#))], MISSING_CAPABILITY);
    let form = call(r#"{"elicitation":{"form":{}}}"#);
    quiet(&[S(&form), R(&names(r#"{"elicitation":{"url":{}}}"#))], MISSING_CAPABILITY);
    // Fires: no data, no capability named, or one the request declared.
    for reply in [refused(""), names("{}"), names("[]")] {
        fires(&[S(&call("{}")), R(&reply)], MISSING_CAPABILITY);
    }
    let f = fires(&[S(&form), R(&names(r#"{"elicitation":{}}"#))], MISSING_CAPABILITY);
    assert!(f.detail.contains("declared it"), "{}", f.detail);
}

#[test]
fn progress() {
    let call = |id: u32, meta: &str, extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}}{extra},"_meta":{meta}}}}}"#
        )
    };
    let asks = call(2, r#"{"progressToken":"p2"}"#, "");
    let note = |token: &str, progress: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":{progress}}}}}"#
        )
    };
    let done = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#;
    let (p1, p2, p2_again) = (note(r#""p2""#, "0.5"), note(r#""p2""#, "1"), note(r#""p2""#, "1"));
    fn with<'a>(rest: &[E<'a>]) -> Vec<E<'a>> {
        [&[S(INIT), R(INIT_OK), S(NOTE)][..], rest].concat()
    }
    // Quiet: progress that goes up while the call is open.
    quiet(&with(&[S(&asks), R(&p1), R(&p2), R(done)]), PROGRESS);
    // Fires: after the response, for a token no request carries, and not going up.
    let f = fires(&with(&[S(&asks), R(done), R(&p2)]), PROGRESS);
    assert!(f.detail.contains("after the response"), "{}", f.detail);
    assert!(fires(&with(&[S(&asks), R(&note("7", "1")), R(done)]), PROGRESS).detail.contains("no request"));
    assert!(fires(&with(&[S(&asks), R(&p2), R(&p2_again), R(done)]), PROGRESS).detail.contains("went from 1 to 1"));
    fires(&with(&[S(&asks), R(&p2), R(&p1), R(done)]), PROGRESS);
    // A token is compared as exact JSON: 2 is not "2".
    let numbered = call(2, r#"{"progressToken":2}"#, "");
    quiet(&with(&[S(&numbered), R(&note("2", "1")), R(done)]), PROGRESS);
    fires(&with(&[S(&numbered), R(&note(r#""2""#, "1")), R(done)]), PROGRESS);
    // Quiet: the client cancelled the call, or the call is task-augmented (its token lives as long as the task).
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
    quiet(&with(&[S(&asks), S(cancel), R(done), R(&p2)]), PROGRESS);
    let task = call(2, r#"{"progressToken":"p2"}"#, r#","task":{"ttl":1000}"#);
    quiet(&with(&[S(&task), R(done), R(&p2)]), PROGRESS);
    // Quiet: a token two requests carry (a line sent twice); whose progress it reports cannot be told.
    let twice = call(3, r#"{"progressToken":"p2"}"#, "");
    quiet(&with(&[S(&asks), S(&twice), R(&p2), R(&p1), R(done)]), PROGRESS);
}
