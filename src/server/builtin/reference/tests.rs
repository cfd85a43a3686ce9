//! Tests of the reference server over one connection: both eras, the envelope ladder, the handshake's gate,
//! tool argument errors, and what gets no reply.

use super::{Calc, CalcConnection, META_NOT_OBJECT};
use crate::protocol::codes::{INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION};
use crate::protocol::envelope::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY};
use crate::protocol::era::LATEST_HANDSHAKE_VERSION;
use crate::server::{InProcessServer, ServerConnection, Status};
use serde_json::{Value, json};

/// Sends each line on one fresh connection; returns the replies per line, parsed.
fn talk(lines: &[Value]) -> Vec<Vec<Value>> {
    talk_on(Calc.connect(), lines)
}

/// Sends each line on `connection`; returns the replies per line, parsed.
pub(in crate::server::builtin) fn talk_on(mut connection: CalcConnection, lines: &[Value]) -> Vec<Vec<Value>> {
    lines
        .iter()
        .map(|line| {
            let mut out = Vec::new();
            assert_eq!(connection.receive(&serde_json::to_vec(line).unwrap(), &mut out), Status::Running);
            out.iter().map(|l| serde_json::from_slice(l).unwrap()).collect()
        })
        .collect()
}

fn modern(id: i64, method: &str, version: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"_meta":{
        PROTOCOL_VERSION_KEY: version, CLIENT_CAPABILITIES_KEY: {}}}})
}

fn initialize(id: i64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{"protocolVersion":"2024-11-05",
        "capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
}

#[test]
fn a_modern_connection_refuses_initialize_and_removed_methods() {
    let replies =
        talk(&[modern(1, "tools/list", json!("2026-07-28")), initialize(2), modern(3, "ping", json!("2026-07-28"))]);
    assert_eq!(replies[0][0]["result"]["ttlMs"], json!(0));
    assert_eq!(replies[1][0]["error"]["code"], json!(UNSUPPORTED_PROTOCOL_VERSION));
    assert_eq!(replies[1][0]["error"]["data"], json!({"supported":["2026-07-28"],"requested":"2024-11-05"}));
    assert_eq!(replies[2][0]["error"]["code"], json!(METHOD_NOT_FOUND));
}

#[test]
fn the_envelope_ladder_answers_in_order() {
    let no_meta = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"});
    let number_version = modern(3, "tools/list", json!(20260728));
    let replies = talk(&[modern(1, "server/discover", json!("2026-07-28")), no_meta, number_version]);
    assert_eq!(replies[0][0]["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(replies[1][0]["error"], json!({"code": INVALID_PARAMS, "message": META_NOT_OBJECT}));
    assert_eq!(replies[2][0]["error"]["code"], json!(INVALID_PARAMS));
}

#[test]
fn a_handshake_connection_negotiates_and_gates() {
    let early = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let replies = talk(&[early.clone(), initialize(2), early, initialize(4)]);
    assert_eq!(replies[0][0]["error"]["code"], json!(INVALID_PARAMS));
    assert_eq!(replies[1][0]["result"]["protocolVersion"], json!("2024-11-05"));
    assert!(replies[1][0]["result"].get("resultType").is_none());
    assert_eq!(replies[2][0]["result"]["tools"][0]["name"], json!("add"));
    assert_eq!(replies[3][0]["error"]["code"], json!(INVALID_REQUEST));
}

#[test]
fn unknown_versions_get_the_latest_handshake_version() {
    let mut init = initialize(1);
    init["params"]["protocolVersion"] = json!("2026-07-28");
    assert_eq!(talk(&[init])[0][0]["result"]["protocolVersion"], json!(LATEST_HANDSHAKE_VERSION));
}

#[test]
fn tool_argument_errors_are_tool_results() {
    let call = |id: i64, arguments: Value| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"add","arguments":arguments,
            "_meta":{PROTOCOL_VERSION_KEY:"2026-07-28",CLIENT_CAPABILITIES_KEY:{}}}})
    };
    let huge = json!({"a": 170141183460469231731687303715884105727_i128, "b": 1});
    let replies = talk(&[call(1, json!({"a": "1", "b": 2})), call(2, huge), call(3, json!({"a": -4, "b": 1}))]);
    assert_eq!(replies[0][0]["result"]["isError"], json!(true));
    assert_eq!(replies[1][0]["result"]["isError"], json!(true));
    assert_eq!(replies[2][0]["result"]["structuredContent"]["result"], json!(-3));
}

#[test]
fn notifications_and_stray_responses_get_nothing() {
    let replies = talk(&[
        json!({"jsonrpc":"2.0","method":"notifications/whatever"}),
        json!({"jsonrpc":"2.0","id":4,"result":{}}),
        json!({"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}),
        json!({"id":6,"error":{"code":1.5}}),
    ]);
    assert!(replies.iter().all(Vec::is_empty), "{replies:?}");
    assert_eq!(talk(&[json!({"jsonrpc":"2.0","id":7})])[0][0]["error"]["code"], json!(INVALID_REQUEST));
}

#[test]
fn a_bare_initialized_notification_does_not_spend_the_handshake() {
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    let replies = talk(&[ping, json!({"jsonrpc":"2.0","method":"notifications/initialized"}), initialize(2)]);
    assert_eq!(replies[2][0]["result"]["protocolVersion"], json!("2024-11-05"));
}
