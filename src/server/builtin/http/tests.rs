//! Tests of the HTTP reference server's request handling: polled streams, held streams, modern exchanges.

use super::streams::POLLING_RETRY_MS;
use super::*;
use crate::protocol::codes::METHOD_NOT_FOUND;
use crate::protocol::envelope;
use crate::protocol::methods::{INITIALIZE, LISTEN};
use serde_json::{Value, json};

fn post(server: &mut HttpServer, session: Option<&str>, body: Value) -> HttpReply {
    let mut headers = vec![
        ("Accept".to_string(), "application/json, text/event-stream".to_string()),
        ("Content-Type".to_string(), "application/json".to_string()),
    ];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id".into(), session.into()));
        headers.push(("MCP-Protocol-Version".into(), "2025-11-25".into()));
    }
    server.handle(&HttpRequest { method: "POST".into(), headers, body: Some(body.to_string().into_bytes()) })
}

fn session(server: &mut HttpServer, capabilities: Value) -> String {
    let initialize = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":capabilities,"clientInfo":{"name":"t","version":"1"}}});
    let reply = post(server, None, initialize);
    let id = reply.headers.iter().find(|(name, _)| name == "Mcp-Session-Id").map(|(_, v)| v.clone());
    let id = id.expect("a session");
    post(server, Some(&id), json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    id
}

#[test]
fn a_polled_stream_primes_then_delivers_its_events_once_on_the_get() {
    let mut server = HttpServer::new(None, false).with_polling();
    let id = session(&mut server, json!({}));
    let reply = post(&mut server, Some(&id), json!({"jsonrpc":"2.0","id":2,"method":"ping"}));
    let primed = String::from_utf8(reply.body).unwrap();
    assert_eq!(primed, format!("id: {id}/1/0\ndata: \n\nretry: {POLLING_RETRY_MS}\n\n"));
    let get = |server: &mut HttpServer, last: &str| {
        let headers = vec![
            ("Accept".to_string(), "text/event-stream".to_string()),
            ("Mcp-Session-Id".to_string(), id.clone()),
            ("Last-Event-ID".to_string(), last.to_string()),
        ];
        server.handle(&HttpRequest { method: "GET".into(), headers, body: None })
    };
    assert_eq!(get(&mut server, "calc-session-9/1/0").status, 404, "another session's stream");
    let resumed = get(&mut server, &format!("{id}/1/0"));
    let body = String::from_utf8(resumed.body).unwrap();
    assert_eq!(
        body,
        format!("id: {id}/1/1\nevent: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}\n\n")
    );
    assert_eq!(get(&mut server, &format!("{id}/1/0")).status, 404, "delivered once");
}

#[test]
fn a_call_that_asks_the_client_holds_its_stream_until_the_answer_comes() {
    let mut server = HttpServer::new(None, false).with_fixtures();
    let id = session(&mut server, json!({"sampling":{}}));
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"test_sampling","arguments":{"prompt":"hi"}}});
    let reply = post(&mut server, Some(&id), call);
    assert_eq!(reply.status, 200);
    let stream = server.take_stream().expect("a held stream");
    let asked: Value = serde_json::from_slice(&stream.recv().unwrap()).unwrap();
    assert_eq!(asked["method"], json!("sampling/createMessage"));
    assert!(stream.try_recv().is_err(), "the result waits for the answer");
    let answer = json!({"jsonrpc":"2.0","id":asked["id"],"result":{"role":"assistant",
        "content":{"type":"text","text":"Paris"},"model":"m"}});
    assert_eq!(post(&mut server, Some(&id), answer).status, 202);
    let result: Value = serde_json::from_slice(&stream.recv().unwrap()).unwrap();
    assert_eq!(result["id"], json!(2));
    assert_eq!(result["result"]["content"][0]["text"], json!("LLM response: Paris"));
    assert!(stream.recv().is_err(), "the stream ends with the call's reply");
}

#[test]
fn a_call_answered_at_once_opens_no_stream() {
    let mut server = HttpServer::new(None, false).with_fixtures();
    let id = session(&mut server, json!({}));
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling"}});
    let reply = post(&mut server, Some(&id), call);
    assert!(server.take_stream().is_none(), "sampling was not declared: nothing is asked");
    let reply: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(reply["id"], json!(2));
}

/// A 2026-07-28 POST of a request with `id`, `method` and `params`, its routing headers set.
fn modern_post(id: Value, method: &str, params: Value) -> HttpRequest {
    HttpRequest {
        method: "POST".into(),
        headers: vec![
            ("Accept".into(), "application/json, text/event-stream".into()),
            ("Content-Type".into(), "application/json".into()),
            ("MCP-Protocol-Version".into(), "2026-07-28".into()),
            ("Mcp-Method".into(), method.into()),
        ],
        body: Some(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string().into_bytes()),
    }
}

#[test]
fn a_modern_post_is_judged_as_2026_07_28() {
    let mut server = HttpServer::new(None, false);
    let modern = |method: &str, params: Value| modern_post(json!(5), method, params);
    let envelope = json!({"_meta": envelope::envelope("2026-07-28")});
    let initialize = server.handle(&modern(INITIALIZE, envelope));
    assert_eq!(initialize.status, 404);
    let body: Value = serde_json::from_slice(&initialize.body).unwrap();
    assert_eq!(body["error"]["code"], json!(METHOD_NOT_FOUND));
    let bare = server.handle(&modern("server/discover", json!({})));
    assert_eq!(bare.status, 400);
    let body: Value = serde_json::from_slice(&bare.body).unwrap();
    assert_eq!(body["error"]["code"], json!(crate::protocol::codes::INVALID_PARAMS));
}

#[test]
fn a_listen_post_gets_the_ack_then_the_graceful_close() {
    let mut server = HttpServer::new(None, true);
    // The envelope declares no client capabilities.
    let params = json!({"_meta": envelope::envelope("2026-07-28"), "notifications": {"toolsListChanged": true}});
    let request = modern_post(json!("L"), LISTEN, params);
    let reply = server.handle(&request);
    let body = String::from_utf8(reply.body).unwrap();
    let events: Vec<Value> =
        body.lines().filter_map(|l| l.strip_prefix("data: ")).map(|d| serde_json::from_str(d).unwrap()).collect();
    assert_eq!(events.len(), 2, "{body}");
    assert_eq!(events[0]["method"], json!("notifications/subscriptions/acknowledged"));
    assert_eq!(events[1]["id"], json!("L"));
    assert_eq!(events[1]["result"]["resultType"], json!("complete"));
}
