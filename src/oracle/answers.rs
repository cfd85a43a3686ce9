//! The server's work that waited on an answer the client broke on purpose: in a conversation whose `initialize`
//! asked the harness to refuse, malform or withhold its answers ([`Answers::breaks_answers`]), a handler request
//! still open when the server sent a request a client capability gates (sampling, elicitation, roots) may end in
//! an error, an isError result or the SDK's text for a crash: that is the client's doing, not a refusal of valid
//! arguments nor a crash of the author's (the issue's rule: the call ends in an error result or a JSON-RPC error,
//! and the server neither crashes nor hangs, which SERVER-CRASH and SERVER-HANDLER-HANG still judge).

use super::Read;
use crate::protocol::Frame;
use crate::protocol::client::Answers;
use crate::protocol::message::mentions;
use crate::protocol::methods::{GATED_SERVER_REQUESTS, INITIALIZE, PROMPTS_GET, RESOURCES_READ, TOOLS_CALL};
use crate::transcript::{Event, Transcript};
use serde_json::Value;
use std::collections::HashSet;

/// The events of the handler requests (`tools/call`, `prompts/get`, `resources/read`) that were open when the
/// server sent a gated request of its own, in a conversation whose client breaks its answers; empty otherwise.
pub(super) fn awaiting_broken_answers(
    transcript: &Transcript,
    reads: &[Read],
    answers: &[Option<usize>],
) -> HashSet<usize> {
    let mut waiting = HashSet::new();
    if !breaks_answers(transcript) {
        return waiting;
    }
    let events = &transcript.events;
    for (at, event) in events.iter().enumerate() {
        let Event::Received { line, .. } = event else { continue };
        if !GATED_SERVER_REQUESTS.iter().any(|(method, _)| mentions(line, method)) {
            continue;
        }
        let Frame::Request(request) = Frame::parse(line) else { continue };
        if !GATED_SERVER_REQUESTS.iter().any(|(method, _)| *method == request.method) {
            continue;
        }
        for (index, read) in reads[..at].iter().enumerate() {
            let handler = matches!(read.sent(), Some((Frame::Request(sent), _))
                if [TOOLS_CALL, PROMPTS_GET, RESOURCES_READ].contains(&sent.method.as_str()));
            if handler && answers[index].is_none_or(|reply| reply > at) {
                waiting.insert(index);
            }
        }
    }
    waiting
}

/// True when the conversation's first `initialize` asked for answers in a style that breaks them.
fn breaks_answers(transcript: &Transcript) -> bool {
    let first = transcript.events.iter().find_map(|event| match event {
        Event::Sent(line) if mentions(line, INITIALIZE) => {
            let message = serde_json::from_slice::<Value>(line).ok()?;
            (message.get("method").and_then(Value::as_str) == Some(INITIALIZE)).then_some(message)
        }
        _ => None,
    });
    first.is_some_and(|initialize| Answers::of(initialize.get("params")).breaks_answers())
}

#[cfg(test)]
mod tests {
    use crate::model::ServerModel;
    use crate::oracle::rules::{HANDLER_CRASH, TOOL_VALID_ARGS};
    use crate::oracle::test_support::{E, ids, t};
    use crate::oracle::{Policy, check};
    use crate::surface::Surface;
    use crate::transcript::Ending;

    /// A handshake conversation declaring every capability with answers in `style`, whose tool call the server
    /// met with a sampling request and ended with `reply`.
    fn sampled(style: &str, reply: &str) -> Vec<String> {
        let initialize = format!(
            r#">> {{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{"sampling":{{}}}},"clientInfo":{{"name":"c","version":"1"}},"_meta":{{"dev.wirefuzz/answers":"{style}"}}}}}}"#
        );
        vec![
            initialize,
            r#"<< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#.into(),
            r#">> {"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
            "-- ".into(),
            r#">> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#.into(),
            r#"<< {"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}"#.into(),
            r#">> {"jsonrpc":"2.0","id":"s1","result":{"role":"mcp-wirefuzz","content":"mcp-wirefuzz"}}"#.into(),
            format!("<< {reply}"),
        ]
    }

    fn rules(style: &str, reply: &str) -> Vec<&'static str> {
        let lines = sampled(style, reply);
        let events: Vec<E> = lines
            .iter()
            .map(|line| match line.split_at(3) {
                (">> ", sent) => E::S(sent),
                ("<< ", received) => E::R(received),
                _ => E::Sync,
            })
            .collect();
        let policy = Policy::default().with_model(ServerModel::built_in()).with_surface(Surface::built_in());
        ids(&check(&t(&events, Ending::Closed), &policy))
    }

    #[test]
    fn a_call_that_waited_on_a_broken_answer_may_end_in_an_error_or_the_sdks_crash_text() {
        let error = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"bad sampling result"}}"#;
        let crash = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Error executing tool add"}],"isError":true}}"#;
        for style in ["malformed", "refuse", "ignore"] {
            assert_eq!(rules(style, error), Vec::<&str>::new(), "{style}");
            assert_eq!(rules(style, crash), Vec::<&str>::new(), "{style}");
        }
        // A client that answered validly: the same replies are the handler's own.
        assert_eq!(rules("accept", error), [TOOL_VALID_ARGS]);
        assert_eq!(rules("late", crash), [HANDLER_CRASH]);
    }
}
