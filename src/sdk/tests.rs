//! The SDK tables: every deviation names a rule of the catalogue; a finding is the SDK's only when its trigger has
//! the deviation's shape (both ways: the same rule broken another way stays yours); detection only on a certain
//! fingerprint.

use super::*;
use crate::model::Eras;
use crate::oracle::{Level, Policy, check};
use crate::transcript::Ending;

fn sent(line: &str) -> Event {
    Event::Sent(line.as_bytes().to_vec())
}

fn received(line: &str) -> Event {
    Event::Received { line: line.as_bytes().to_vec(), truncated: false }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const INITIALIZE_RESULT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":""}}}"#;

/// A handshake, then `events`, ending as `ending`.
fn conversation(events: Vec<Event>, ending: Ending) -> Transcript {
    let mut all = vec![sent(INITIALIZE), received(INITIALIZE_RESULT), sent(INITIALIZED), Event::Sync];
    all.extend(events);
    Transcript { events: all, ending }
}

/// The findings of `transcript` of `rule`, each with whether `sdk` takes it for its own.
fn judged(sdk: &Sdk, transcript: &Transcript, rule: &str) -> Vec<bool> {
    let policy = Policy::default().with_model(crate::model::ServerModel::stated(crate::model::Eras::Dual));
    check(transcript, &policy)
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| sdk.deviation(transcript, f, &crate::trigger::signature(transcript, f)).is_some())
        .collect()
}

#[test]
fn every_deviation_names_a_rule_of_the_catalogue() {
    for sdk in SDKS {
        for deviation in sdk.deviations {
            assert!(crate::oracle::rule(deviation.rule).is_some(), "{}: {}", sdk.name, deviation.rule);
            assert!(!deviation.reference.is_empty() && !deviation.what.is_empty());
        }
        assert_eq!(by_name(sdk.name), Ok(sdk));
        assert_eq!(by_name(sdk.package), Ok(sdk));
    }
    assert!(by_name("nope").unwrap_err().contains("rmcp"));
}

#[test]
fn rmcps_meta_refusal_is_rmcps_and_a_hung_tool_is_yours() {
    let meta = conversation(
        vec![
            sent(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":"2026-07-28"}}"#),
            received(r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#),
            Event::Sync,
        ],
        Ending::Closed,
    );
    assert_eq!(judged(&rmcp::SDK, &meta, "JSONRPC-RESPONSE-MISSING"), [true]);
    assert_eq!(judged(&rmcp::SDK, &meta, "JSONRPC-NULL-ID"), [true]);
    let hung = conversation(
        vec![
            sent(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{}}}"#),
            Event::Sync,
        ],
        Ending::Closed,
    );
    assert_eq!(judged(&rmcp::SDK, &hung, "JSONRPC-RESPONSE-MISSING"), [false]);
    // The TypeScript SDKs drop the same _meta request: theirs too; the hung tool is not.
    let dropped = conversation(
        vec![sent(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":null}}"#), Event::Sync],
        Ending::Closed,
    );
    assert_eq!(judged(&ts_sdk::SDK, &dropped, "JSONRPC-RESPONSE-MISSING"), [true]);
    assert_eq!(judged(&ts_sdk::SDK, &hung, "JSONRPC-RESPONSE-MISSING"), [false]);
    assert_eq!(judged(&python::SDK, &dropped, "JSONRPC-RESPONSE-MISSING"), [false], "not a Python deviation");
}

#[test]
fn rmcps_refusal_to_start_is_rmcps_and_a_later_exit_or_a_panic_is_yours() {
    let exit = |code, stderr: &str| Ending::Exited { code: Some(code), signal: None, stderr_tail: stderr.into() };
    let notification_first = |ending| Transcript {
        events: vec![
            sent(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#),
            Event::Sync,
        ],
        ending,
    };
    let refused = "Error: ExpectedInitializeRequest(Some(Notification(..)))";
    assert_eq!(judged(&rmcp::SDK, &notification_first(exit(1, refused)), "SERVER-CRASH"), [true]);
    assert_eq!(judged(&rmcp::SDK, &notification_first(exit(1, "")), "SERVER-CRASH"), [true], "in-process");
    let panicked = "thread 'main' panicked at src/main.rs:9:5";
    assert_eq!(judged(&rmcp::SDK, &notification_first(exit(1, panicked)), "SERVER-CRASH"), [false]);
    assert_eq!(judged(&rmcp::SDK, &notification_first(exit(101, "")), "SERVER-CRASH"), [false]);
    let after_a_call = conversation(
        vec![
            sent(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#),
            received(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#),
            sent(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"store","arguments":{}}}"#),
            Event::Sync,
        ],
        exit(1, ""),
    );
    assert_eq!(judged(&rmcp::SDK, &after_a_call, "SERVER-CRASH"), [false], "the author's exit after the handshake");
    // An id reused by a ping and a later request: the result is the ping's, no lifecycle was chosen.
    let envelope = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#;
    let reused = Transcript {
        events: vec![
            sent(&format!(r#"{{"jsonrpc":"2.0","id":0,"method":"ping","params":{envelope}}}"#)),
            sent(r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#),
            received(r#"{"jsonrpc":"2.0","id":0,"result":{}}"#),
            sent(r#"{"jsonrpc":"2.0","id":"stray","result":{}}"#),
            Event::Sync,
        ],
        ending: exit(1, refused),
    };
    assert_eq!(judged(&rmcp::SDK, &reused, "SERVER-CRASH"), [true], "a ping's result under a reused id");
}

#[test]
fn a_missing_server_info_is_the_sdks_and_a_malformed_one_is_yours() {
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let modern =
        |result: &str| Transcript { events: vec![sent(call), received(result), Event::Sync], ending: Ending::Closed };
    let missing = modern(r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[]}}"#);
    assert_eq!(judged(&rmcp::SDK, &missing, "MCP-MODERN-SERVER-INFO"), [true]);
    let malformed = modern(
        r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],"_meta":{"io.modelcontextprotocol/serverInfo":7}}}"#,
    );
    assert_eq!(judged(&rmcp::SDK, &malformed, "MCP-MODERN-SERVER-INFO"), [false]);
}

#[test]
fn pythons_undeclared_log_message_is_the_sdks_and_an_undeclared_list_change_is_yours() {
    let note = |method: &str| received(&format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{{}}}}"#));
    let logged = conversation(vec![note("notifications/message")], Ending::Closed);
    assert_eq!(judged(&python::SDK, &logged, "SERVER-UNDECLARED-NOTIFICATION"), [true]);
    let changed = conversation(vec![note("notifications/tools/list_changed")], Ending::Closed);
    assert_eq!(judged(&python::SDK, &changed, "SERVER-UNDECLARED-NOTIFICATION"), [false]);
}

#[test]
fn a_finding_is_matched_by_rule_and_shape_together() {
    let transcript =
        conversation(vec![sent(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":7}}"#)], Ending::Closed);
    let finding = |rule| Finding { rule, level: Level::Error, event: Some(4), detail: String::new() };
    let trigger = "ping/meta-not-object";
    assert!(rmcp::SDK.deviation(&transcript, &finding("JSONRPC-RESPONSE-MISSING"), trigger).is_some());
    assert!(rmcp::SDK.deviation(&transcript, &finding("JSONRPC-ID-ECHO"), trigger).is_none(), "another rule");
    assert!(Shape::Tag("batch").matches(&transcript, "reused-id+batch", &Fault::default()));
    assert!(!Shape::Tag("batch").matches(&transcript, "empty-batch", &Fault::default()));
}

#[test]
fn rmcps_meta_refusal_of_a_tool_call_is_rmcps_and_the_authors_invalid_params_is_yours() {
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_note","arguments":{"title":"a long title"}}}"#;
    let answered = |reply: &str| conversation(vec![sent(call), received(reply), Event::Sync], Ending::Closed);
    let finding = Finding { rule: "MCP-TOOL-VALID-ARGS", level: Level::Warning, event: Some(5), detail: String::new() };
    let trigger = "tools/call:error-32602";
    let refused = answered(
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"request _meta is missing or has malformed required fields: io.modelcontextprotocol/protocolVersion"}}"#,
    );
    assert!(rmcp::SDK.deviation(&refused, &finding, trigger).is_some());
    let authors = answered(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"title too long"}}"#);
    assert!(rmcp::SDK.deviation(&authors, &finding, trigger).is_none());
}

#[test]
fn the_ts_servers_notification_first_is_its_own_and_a_fresh_connection_is_not() {
    let discover = r#"{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let refused = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}"#;
    let pinned = Transcript {
        events: vec![
            sent(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#),
            sent(discover),
            received(refused),
            Event::Sync,
        ],
        ending: Ending::Closed,
    };
    let finding = Finding { rule: "MCP-DISCOVER-SHAPE", level: Level::Error, event: Some(2), detail: String::new() };
    assert!(ts_server::SDK.deviation(&pinned, &finding, "server/discover+envelope").is_some());
    let fresh = Transcript { events: pinned.events[1..].to_vec(), ending: Ending::Closed };
    let finding = Finding { event: Some(1), ..finding };
    assert!(ts_server::SDK.deviation(&fresh, &finding, "server/discover+envelope").is_none());
}

/// The Python SDK 2.x's refusal of an enveloped request on a handshake connection.
fn python_reply_2() -> &'static str {
    r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it"}}"#
}

/// An initialize answered, then `first` and `second`.
fn replies_of(first: &str, second: &str) -> Transcript {
    Transcript { events: vec![sent(INITIALIZE), received(first), received(second)], ending: Ending::Closed }
}

#[test]
fn detection_reads_only_messages_one_sdk_writes() {
    let answered = |reply: &str| Transcript { events: vec![sent(INITIALIZE), received(reply)], ending: Ending::Closed };
    let rmcp_reply = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"request _meta is missing or has malformed required fields: io.modelcontextprotocol/clientCapabilities"}}"#;
    let detected = detect(&answered(rmcp_reply), Eras::Dual).unwrap();
    assert_eq!(detected.sdk, &rmcp::SDK);
    assert!(detected.to_string().starts_with("rmcp (detected from "), "{detected}");
    assert!(detected.to_string().ends_with("; its table was vetted on 3.11.0)"), "{detected}");
    let python_2 =
        detect(&replies_of(python_reply_2(), r#"{"jsonrpc":"2.0","id":3,"result":{}}"#), Eras::Dual).unwrap();
    assert!(python_2.to_string().starts_with("mcp 2.x (detected from "), "{python_2}");
    let python_reply = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it"}}"#;
    assert_eq!(detect(&answered(python_reply), Eras::Dual), None, "the built-in server writes the same words");
    let null_served = r#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
    let null_refused = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request"}}"#;
    let replies = |first: &str, second: &str| Transcript {
        events: vec![sent(INITIALIZE), received(first), received(second)],
        ending: Ending::Closed,
    };
    assert_eq!(detect(&replies(python_reply, null_served), Eras::Dual).unwrap().sdk, &python::SDK);
    let calc = replies(python_reply, null_refused);
    assert_eq!(detect(&calc, Eras::Dual), None, "the seed lesson's words without the SDK's null params");
    // Over HTTP the Python SDK answers the same request with the -32602 the built-in server writes too.
    let over_http = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"params._meta is missing the required envelope key(s): io.modelcontextprotocol/clientCapabilities"}}"#;
    assert_eq!(detect(&replies(over_http, null_served), Eras::Dual).unwrap().sdk, &python::SDK);
    assert_eq!(detect(&replies(over_http, null_refused), Eras::Dual), None);
    let ts_reply = r#"{"result":{"tools":[]},"jsonrpc":"2.0","id":2}"#;
    assert_eq!(detect(&answered(ts_reply), Eras::Handshake), None, "nothing certain");
    assert_eq!(fingerprint_inputs().len(), 9);
    let stated = Chosen { sdk: &ts_sdk::SDK, source: Source::Stated };
    assert_eq!(stated.to_string(), "@modelcontextprotocol/sdk 1.32.2 (from --sdk)");
}

#[test]
fn an_initialize_without_params_tells_the_typescript_packages_an_older_python_sdk_and_the_go_sdk() {
    let bare = |reply: &str, null_params: &str| Transcript {
        events: vec![sent(INITIALIZE), received(null_params), received(reply)],
        ending: Ending::Closed,
    };
    // The TypeScript packages' zod issue list (v1 1.30.0 and 1.32.2, v2 2.4.0 answer alike, frameworks on them too);
    // which package, the eras tell: v1 serves the handshake era only.
    let zod = r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"[\n  {\n    \"expected\": \"object\",\n    \"code\": \"invalid_type\",\n    \"path\": [\n      \"params\"\n    ],\n    \"message\": \"Invalid input: expected object, received undefined\"\n  }\n]"}}"#;
    let dropped = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#;
    assert_eq!(detect(&bare(zod, dropped), Eras::Handshake).unwrap().sdk, &ts_sdk::SDK);
    assert_eq!(detect(&bare(zod, dropped), Eras::Dual).unwrap().sdk, &ts_server::SDK);
    assert_eq!(detect(&bare(zod, dropped), Eras::Unknown), None, "which package is not certain");
    // The Python SDK's words, with the null params served: a Python SDK from before the envelope (1.x).
    let python = r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid request parameters","data":""}}"#;
    let null_served = r#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
    let detected = detect(&bare(python, null_served), Eras::Handshake).unwrap();
    assert_eq!(detected.sdk, &python::SDK);
    assert!(detected.to_string().contains("before the 2026-07-28 envelope"), "{detected}");
    assert!(detected.to_string().starts_with("mcp 1.x (detected from "), "{detected}");
    // zod 4's words and zod 3's: the TS SDK's schema library, and so which versions.
    assert!(detect(&bare(zod, dropped), Eras::Handshake).unwrap().to_string().contains("sdk on zod 4 (detected"));
    let zod_3 = zod.replace("Invalid input: expected object, received undefined", "Required");
    let older = detect(&bare(&zod_3, dropped), Eras::Handshake).unwrap();
    assert!(older.to_string().contains("on zod 3 (the versions before 1.23.0 use it)"), "{older}");
    // The Go SDK's jsonrpc2 words (1.3.1, 1.4.1 and 1.8.0); its eras tell the versions apart.
    let go =
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"invalid request: missing required \"params\""}}"#;
    let go_sdk = detect(&bare(go, null_served), Eras::Dual).unwrap();
    assert_eq!(go_sdk.sdk, &go_sdk::SDK);
    assert!(go_sdk.to_string().contains("go-sdk with 2026-07-28 (1.8.0 serves it) (detected from"), "{go_sdk}");
    let older = detect(&bare(go, null_served), Eras::Handshake).unwrap().to_string();
    assert!(older.contains("go-sdk of the handshake era only"), "{older}");
    let mcp_go = r#"{"jsonrpc":"2.0","id":4,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
    assert_eq!(detect(&bare(mcp_go, null_served), Eras::Handshake), None, "mcp-go serves it: nothing certain");
    let null_refused = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"params"}}"#;
    assert_eq!(detect(&bare(python, null_refused), Eras::Handshake), None);
    // The built-in server's refusal of a second initialize, and other words, name nothing.
    let calc = r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"initialize may be sent only once per connection"}}"#;
    assert_eq!(detect(&bare(calc, null_served), Eras::Dual), None);
    let other = r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error"}}"#;
    assert_eq!(detect(&bare(other, null_served), Eras::Handshake), None);
}

#[test]
fn yours_keeps_the_authors_findings_under_an_sdk_policy() {
    let transcript = conversation(
        vec![
            sent(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":"x"}}"#),
            received(r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#),
            sent(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{}}}"#),
            Event::Sync,
        ],
        Ending::Closed,
    );
    let policy = rmcp::policy();
    let all = check(&transcript, &policy);
    let yours = yours(&transcript, all.clone(), &policy);
    assert!(all.len() > yours.len(), "{all:?}");
    assert_eq!(yours.iter().map(|f| f.rule).collect::<Vec<_>>(), ["JSONRPC-RESPONSE-MISSING"]);
    assert_eq!(yours[0].event, Some(6), "the unanswered tools/call");
    assert_eq!(crate::sdk::yours(&transcript, all.clone(), &Policy::default()).len(), all.len());
}

/// In-process rmcp servers under [`rmcp::policy`]: rmcp's own deviations never fail a test of your handler (they
/// are matched by trigger, the rules stay on), and a handler that never answers still does.
#[cfg(feature = "rmcp")]
mod in_process {
    use crate::harness::fuzz_under;
    use crate::server::rmcp::Rmcp;
    use rmcp::ServerHandler;
    use rmcp::model::{ErrorData, ListToolsResult, PaginatedRequestParams};
    use rmcp::service::{RequestContext, RoleServer};

    /// rmcp's defaults, except that `tools/list` never answers when `hangs` is set.
    #[derive(Clone)]
    struct Handler {
        hangs: bool,
    }

    impl ServerHandler for Handler {
        async fn list_tools(
            &self,
            _: Option<PaginatedRequestParams>,
            _: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            if self.hangs {
                std::future::pending::<()>().await;
            }
            Ok(ListToolsResult::default())
        }
    }

    #[test]
    fn rmcps_deviations_pass_and_a_hung_handler_fails() {
        let policy = super::rmcp::policy();
        for index in 0..600 {
            let bytes = crate::campaign::conversation_bytes(3, index);
            fuzz_under(&Rmcp(Handler { hangs: false }), &bytes, &policy);
        }
        let lines = [
            super::INITIALIZE,
            super::INITIALIZED,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":"x"}}"#,
        ];
        let inputs: Vec<crate::transcript::Input> =
            lines.iter().map(|l| crate::transcript::Input::Line(l.as_bytes().to_vec())).collect();
        let transcript = crate::server::run_in_process(&Rmcp(Handler { hangs: true }), &inputs);
        let yours = super::yours(&transcript, crate::oracle::check(&transcript, &policy), &policy);
        let rules: Vec<(&str, Option<usize>)> = yours.iter().map(|f| (f.rule, f.event)).collect();
        assert_eq!(rules, [("JSONRPC-RESPONSE-MISSING", Some(3))], "{}", transcript.render());
    }
}

#[test]
fn a_second_initialize_behind_a_byte_order_mark_is_still_a_second_initialize() {
    // rmcp serves an initialize with a leading BOM; what it then does (resultType on handshake results) is rmcp's.
    let modern = INITIALIZE.replace("\"id\":1", "\"id\":2").replace("2025-11-25", "2026-07-28");
    let reinitialized = |second: String| {
        conversation(
            vec![
                sent(&second),
                received(&INITIALIZE_RESULT.replace("\"id\":1", "\"id\":2")),
                Event::Sync,
                sent(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#),
                received(r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","tools":[]}}"#),
                Event::Sync,
            ],
            Ending::Closed,
        )
    };
    let rmcp = by_name("rmcp").unwrap();
    assert_eq!(judged(rmcp, &reinitialized(modern.clone()), "MCP-HANDSHAKE-NO-RESULT-TYPE"), [true]);
    let bom = reinitialized(format!("\u{feff}{modern}"));
    assert_eq!(judged(rmcp, &bom, "MCP-HANDSHAKE-NO-RESULT-TYPE"), [true], "{}", bom.render());
}

#[test]
fn a_big_id_dropped_or_rounded_is_the_ts_sdks_and_one_retyped_is_yours() {
    let big = r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#;
    let answered = |reply: &str| conversation(vec![sent(big), received(reply), Event::Sync], Ending::Closed);
    let dropped = conversation(vec![sent(big), Event::Sync], Ending::Closed);
    assert_eq!(judged(&ts_sdk::SDK, &dropped, "JSONRPC-BIG-ID"), [true], "zod 4 drops it");
    let rounded = answered(r#"{"jsonrpc":"2.0","id":9007199254740992,"result":{}}"#);
    assert_eq!(judged(&ts_sdk::SDK, &rounded, "JSONRPC-BIG-ID"), [true], "zod 3 rounds it");
    let string = answered(r#"{"jsonrpc":"2.0","id":"9007199254740993","result":{}}"#);
    assert_eq!(judged(&ts_sdk::SDK, &string, "JSONRPC-BIG-ID"), [false], "an id retyped as a string is yours");
    // The big id on a line odd for another reason too (a lone surrogate a lenient reader takes), and one written
    // back as a double's exponent form: still the SDK's rounding (server-sequential-thinking 0.6.2, SDK 0.5.0).
    let odd =
        r#"{"jsonrpc":"2.0","id":9007199254740999,"method":"resources/templates/list","params":{"wirefuzz":"\ud800"}}"#;
    let odd_rounded = r#"{"jsonrpc":"2.0","id":9007199254741000,"error":{"code":-32601,"message":"Method not found"}}"#;
    let lenient = conversation(vec![sent(odd), received(odd_rounded), Event::Sync], Ending::Closed);
    assert_eq!(judged(&ts_sdk::SDK, &lenient, "JSONRPC-BIG-ID"), [true], "{}", lenient.render());
    let huge = r#"{"jsonrpc":"2.0","id":1844674407370955161000000000000000000010,"method":"ping"}"#;
    let exponent = r#"{"jsonrpc":"2.0","id":1.8446744073709552e+39,"result":{}}"#;
    let written = conversation(vec![sent(huge), received(exponent), Event::Sync], Ending::Closed);
    assert_eq!(judged(&ts_sdk::SDK, &written, "JSONRPC-BIG-ID"), [true], "{}", written.render());
}

#[test]
fn a_fractional_id_answered_under_its_integer_part_is_the_go_sdks_and_a_string_for_an_integer_is_yours() {
    let ping = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
    let (fraction, whole) = (ping("8.5"), ping("8"));
    let truncated = conversation(
        vec![sent(&whole), received(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#), Event::Sync, sent(&fraction)]
            .into_iter()
            .chain([received(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#), Event::Sync])
            .collect(),
        Ending::Closed,
    );
    assert_eq!(judged(&go_sdk::SDK, &truncated, "JSONRPC-ID-ECHO"), [true]);
    let retyped = conversation(
        vec![sent(&whole), received(r#"{"jsonrpc":"2.0","id":"8","result":{}}"#), Event::Sync],
        Ending::Closed,
    );
    assert_eq!(judged(&go_sdk::SDK, &retyped, "JSONRPC-ID-ECHO"), [false]);
}
