//! The MCP layer's rules on hand-written transcripts: the era a connection is in and the replies each era calls
//! for, and the server model and profiles they are judged with (what the server sends of its own:
//! `server_messages_tests.rs`).

use crate::model::{Eras, ServerModel};
use crate::oracle::rules::*;
use crate::oracle::test_support::E::*;
use crate::oracle::test_support::*;
use crate::oracle::{Finding, Level, Policy, check};
use crate::protocol::envelope::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY};
use crate::transcript::{Ending, Event, Transcript};

#[track_caller]
fn fires_under(policy: &Policy, events: &[E], rule: &str) -> Finding {
    let found = check(&t(events, Ending::Closed), policy);
    let finding = found.iter().find(|f| f.rule == rule);
    finding.unwrap_or_else(|| panic!("{rule} did not fire; findings: {found:#?}")).clone()
}

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
    // With a version the server does not serve as well, -32022 is as right as -32602 (both MUSTs apply, neither
    // comes first; rmcp answers -32022 on a connection already serving 2026-07-28), its data judged as ever.
    let future = half.replace("2026-07-28", "2030-01-01");
    let refused = |data: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32022,"message":"Unsupported protocol version"{data}}}}}"#
        )
    };
    let described = refused(r#","data":{"supported":["2026-07-28"],"requested":"2030-01-01"}"#);
    only(&[S(&discover), R(&discovered), S(&future), R(&described)], &[]);
    fires(&[S(&discover), R(&discovered), S(&future), R(&refused(""))], UNSUPPORTED_VERSION);
    fires(&[S(&discover), R(&discovered), S(&future), R(&error("1", -32603))], ENVELOPE_MISSING_KEY);
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
    fires(&[S(INIT), R(&INIT_OK.replace(r#","serverInfo":{"name":"s","version":"1"}"#, ""))], INITIALIZE_SHAPE);
    fires(&[S(INIT), R(&INIT_OK.replace(r#""capabilities":{"tools":{}}"#, r#""capabilities":[]"#))], INITIALIZE_SHAPE);
    fires(&[S(INIT), R(&INIT_OK.replace(r#""2025-06-18""#, "20250618"))], INITIALIZE_SHAPE);
    let future = INIT.replace("2025-06-18", "2099-01-01");
    fires(&[S(&future), R(&answered("2099-01-01"))], INITIALIZE_SHAPE);
    only(&[S(&future), R(&answered("2025-11-25"))], &[]);
    only(&[S(&future), R(&error("0", -32602))], &[]);
    only(&[S(INIT), R(INIT_OK)], &[]);
}

/// lifecycle.mdx §Version Negotiation: a version the server supports is echoed; any other request gets another
/// version it supports, so a server need not serve every handshake version.
#[test]
fn version_negotiation_follows_the_versions_the_server_accepts() {
    let answered = |version: &str| INIT_OK.replace("2025-06-18", version);
    let asking = |version: &str| INIT.replace("2025-06-18", version);
    let accepted = vec!["2025-06-18".to_string(), "2025-11-25".to_string()];
    let probed = Policy::default().with_model(ServerModel { accepted, ..ServerModel::stated(Eras::Dual) });
    // A version the server accepts is echoed.
    only_under(&probed, &[S(INIT), R(INIT_OK)], &[]);
    let f = fires_under(&probed, &[S(INIT), R(&answered("2025-11-25"))], INITIALIZE_SHAPE);
    assert!(
        f.detail.contains(r#""2025-06-18", a version the server accepts, and it answered "2025-11-25""#),
        "{}",
        f.detail
    );
    // Any other request gets a version it accepts (its latest or not), or the one asked for.
    for asked in ["2024-11-05", "2099-01-01"] {
        only_under(&probed, &[S(&asking(asked)), R(&answered("2025-11-25"))], &[]);
        only_under(&probed, &[S(&asking(asked)), R(&answered("2025-06-18"))], &[]);
        let f = fires_under(&probed, &[S(&asking(asked)), R(&answered("2025-03-26"))], INITIALIZE_SHAPE);
        assert!(f.detail.contains("not a version it accepts (2025-06-18, 2025-11-25)"), "{}", f.detail);
    }
    only_under(&probed, &[S(&asking("2024-11-05")), R(&answered("2024-11-05"))], &[]);
    // An answer that is no handshake version (a modern one, a made-up one) is wrong whatever was asked.
    fires_under(&probed, &[S(&asking("2026-07-28")), R(&answered("2026-07-28"))], INITIALIZE_SHAPE);
    fires_under(&probed, &[S(INIT), R(&answered("2099-01-01"))], INITIALIZE_SHAPE);
    // A model that does not say which versions the server accepts (stated, or none): any handshake version may
    // answer any request.
    for unknown in [dual(), Policy::default()] {
        only_under(&unknown, &[S(INIT), R(&answered("2025-11-25"))], &[]);
        only_under(&unknown, &[S(&asking("2099-01-01")), R(&answered("2024-11-05"))], &[]);
        fires_under(&unknown, &[S(INIT), R(&answered("2026-07-28"))], INITIALIZE_SHAPE);
        fires_under(&unknown, &[S(INIT), R(&answered("latest"))], INITIALIZE_SHAPE);
    }
    // The built-in server accepts every handshake version.
    let built_in = Policy::default().with_model(ServerModel::built_in());
    fires_under(&built_in, &[S(&asking("2024-11-05")), R(&answered("2025-11-25"))], INITIALIZE_SHAPE);
    only_under(&built_in, &[S(&asking("2024-11-05")), R(&answered("2024-11-05"))], &[]);
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
    // mcp-go 0.56.0 refuses it as an unparsable request.
    let unparsable = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"unparsable ping request: json: cannot unmarshal number"}}"#;
    assert!(!rules(&transcript("7", unparsable)).contains(&PING));
    assert!(rules(&transcript("{}", unparsable)).contains(&PING));
}
