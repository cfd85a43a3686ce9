//! Each line a calc connection receives, read and dispatched: a batch on the version that has them, then each
//! message by kind (not JSON, invalid, a notification, the client's answer, a request), and the messages a
//! request's reply brings along (its notices, and the planted bugs of a tool call).

use super::{CalcConnection, RpcError, confirm_elicitation, error_message};
use crate::protocol::codes::{INVALID_REQUEST, PARSE_ERROR};
use crate::protocol::envelope::{LOG_LEVEL_KEY, META, PROGRESS_TOKEN_KEY};
use crate::protocol::era::BATCH_VERSION;
use crate::protocol::methods::{CANCELLED, ELICITATION_CREATE, TOOLS_CALL};
use crate::protocol::{Era, Frame, Problem, Request};
use crate::server::builtin::mutants::Mutant;
use crate::server::{ServerConnection, Status};
use serde_json::{Value, json};

impl ServerConnection for CalcConnection {
    /// As every server connection, but a call the planted bug [`Mutant::HangsOnMalformedAnswer`] left unanswered
    /// is one its handler never returns from: the client's wait at the end is reported as an async server's is
    /// (the long wait of [`crate::server::adapter::async_lines::HANG_WAIT`]).
    fn close(&mut self, out: &mut Vec<Vec<u8>>) -> Option<u64> {
        self.release(out);
        self.hung.then(|| crate::server::adapter::async_lines::HANG_WAIT.as_millis() as u64)
    }

    fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Status {
        if self.has(Mutant::CrashOnBatch) && line.trim_ascii_start().starts_with(b"[") {
            return Status::Exited(70);
        }
        if self.has(Mutant::HangOnDeepNesting) && nesting_depth(line) > 100 {
            return Status::Hung;
        }
        let mut messages = Vec::new();
        if self.version == Some(BATCH_VERSION)
            && line.trim_ascii_start().starts_with(b"[")
            && let Ok(Value::Array(batch)) = serde_json::from_slice::<Value>(line)
            && !batch.is_empty()
        {
            for item in batch {
                self.handle(&serde_json::to_vec(&item).unwrap_or_default(), &mut messages, out);
            }
            // The array answers the batch with responses only (JSON-RPC 2.0 §6); a message of the server's own (a
            // request to the client, a notification) goes on a line of its own, before it.
            let (own, responses): (Vec<Value>, Vec<Value>) =
                messages.into_iter().partition(|message| message.get("method").is_some());
            out.extend(own.into_iter().map(|message| self.encode(message)));
            if !responses.is_empty() {
                let items: Vec<Vec<u8>> = responses.into_iter().map(|message| self.encode(message)).collect();
                out.push([&b"["[..], &items.join(&b","[..]), b"]"].concat());
            }
            if self.crashed {
                return Status::Exited(70);
            }
            return Status::Running;
        }
        self.handle(line, &mut messages, out);
        if self.crashed {
            return Status::Exited(70);
        }
        out.extend(messages.into_iter().map(|message| self.encode(message)));
        Status::Running
    }
}

impl CalcConnection {
    /// Handles one message (a line, or an item of a batch): its replies go to `messages`, a planted log line
    /// straight to `out`.
    fn handle(&mut self, line: &[u8], messages: &mut Vec<Value>, out: &mut Vec<Vec<u8>>) {
        match Frame::parse(line) {
            Frame::Response(response) => self.answered(response, messages),
            Frame::Blank => {}
            Frame::NotJson { .. } => {
                self.wedged |= self.has(Mutant::WedgedAfterParseError);
                messages.push(error_message(Value::Null, RpcError::new(PARSE_ERROR, "Parse error")));
            }
            Frame::Batch(_) => messages.push(error_message(
                Value::Null,
                RpcError::new(INVALID_REQUEST, "Invalid Request: MCP does not accept batches"),
            )),
            Frame::NotObject(_) => messages.push(error_message(
                Value::Null,
                RpcError::new(INVALID_REQUEST, "Invalid Request: a message must be a JSON object"),
            )),
            Frame::Invalid { problem, id: Some(id), method: Some(method) }
                if self.has(Mutant::ServesInvalidRequest)
                    && matches!(problem, Problem::JsonrpcMissing | Problem::JsonrpcNotTwoPointZero) =>
            {
                let params = serde_json::from_slice::<Value>(line).ok().and_then(|v| v.get("params").cloned());
                self.answer(&Request { id, method, params }, messages, out);
            }
            // A broken response from the client is not answered: a reply would carry an id of the client's own.
            Frame::Invalid { method: None, .. } if looks_like_response(line) => {}
            Frame::Invalid { problem, id, .. } => {
                let id = id.map_or(Value::Null, |id| id.to_value());
                messages.push(error_message(id, RpcError::new(INVALID_REQUEST, format!("Invalid Request: {problem}"))));
            }
            Frame::Notification(notification) => {
                // The client ends a listen stream by cancelling it; no reply is owed then.
                if notification.method == CANCELLED
                    && let Some(id) = notification.params.as_ref().and_then(|p| p.get("requestId"))
                {
                    self.listens.retain(|open| open.to_value() != *id);
                    // A call the client cancelled while it waited for the client's answer is not answered.
                    self.asks.retain(|(_, call, _)| call.to_value() != *id);
                }
                if self.has(Mutant::NotificationSelectsEra) {
                    self.era.get_or_insert(Era::Handshake);
                }
                if self.has(Mutant::NotificationReply) {
                    messages.push(json!({ "jsonrpc": "2.0", "id": null, "result": {} }));
                }
            }
            Frame::Request(request) if !self.wedged => self.answer(&request, messages, out),
            Frame::Request(_) => {}
        }
    }

    /// Answers a request: its response goes to `messages`; a planted log line goes straight to `out`.
    fn answer(&mut self, request: &Request, messages: &mut Vec<Value>, out: &mut Vec<Vec<u8>>) {
        let reply = self.request(request);
        messages.append(&mut self.notices);
        if std::mem::take(&mut self.withheld) {
            return;
        }
        let response = match reply {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": request.id.to_value(), "result": result }),
            Err(error) => error_message(request.id.to_value(), error),
        };
        if request.method == TOOLS_CALL {
            if self.has(Mutant::ElicitsUndeclared) && self.era == Some(Era::Handshake) {
                self.elicited += 1;
                messages.push(json!({
                    "jsonrpc": "2.0",
                    "id": format!("calc-elicit-{}", self.elicited),
                    "method": ELICITATION_CREATE,
                    "params": confirm_elicitation(),
                }));
            }
            if self.has(Mutant::LogsUnrequested) && self.era == Some(Era::Modern) {
                messages.push(log_message("info"));
            }
            let asked_level = request.params.as_ref().and_then(|p| p.get(META)?.get(LOG_LEVEL_KEY)).is_some();
            if self.has(Mutant::LogsBelowLevel) && self.era == Some(Era::Modern) && asked_level {
                messages.push(log_message("debug"));
            }
            if self.has(Mutant::LogsUndeclared) && self.era == Some(Era::Handshake) {
                messages.push(log_message("info"));
            }
            if self.has(Mutant::LogOnStdout) {
                out.push(b"calc: tools/call add".to_vec());
            }
            if self.has(Mutant::DuplicateReply) {
                messages.push(response.clone());
            }
        }
        messages.push(response);
        let token = request.params.as_ref().and_then(|params| params.get(META)?.get(PROGRESS_TOKEN_KEY));
        if let (true, true, Some(token)) = (request.method == TOOLS_CALL, self.has(Mutant::ProgressAfterResult), token)
        {
            let params = json!({ PROGRESS_TOKEN_KEY: token, "progress": 1, "total": 1 });
            messages.push(json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": params }));
        }
    }
}

/// True for an object that carries `result` or `error` and no `method`: a response, however broken.
fn looks_like_response(line: &[u8]) -> bool {
    serde_json::from_slice::<Value>(line).ok().and_then(|v| v.as_object().cloned()).is_some_and(|object| {
        !object.contains_key("method") && (object.contains_key("result") || object.contains_key("error"))
    })
}

/// How deeply arrays and objects nest in a line, counted on the bytes (strings skipped), so it works on lines too
/// deep to parse.
fn nesting_depth(line: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in line {
        match (in_string, escaped, byte) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The `notifications/message` the planted logging bugs send from a `tools/call`, at `level`.
fn log_message(level: &str) -> Value {
    let params = json!({ "level": level, "logger": "calc", "data": "tools/call" });
    json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": params })
}
