//! rmcp servers in-process (feature `rmcp`, rmcp 3.11.0): any rmcp [`ServerHandler`] becomes an
//! [`InProcessServer`], served by rmcp itself over an in-memory stream, one fresh service per conversation, with
//! the barrier of [`super::async_lines`] (paused tokio time: no wall-clock waiting).
//!
//! Two ways in: [`Rmcp::fresh`] builds a new handler for each conversation (what `mcp-wirefuzz init` writes: a
//! handler that keeps state, a store behind an `Arc<Mutex<...>>`, starts empty every time, so a conversation's
//! verdict depends on that conversation only); [`Rmcp`] serves a clone of one handler, which shares whatever its
//! clones share.
//!
//! The service runs as a stdio rmcp server's `main` does: `handler.serve(transport)`, then `waiting()`. It ends
//! with exit code 1 when rmcp refuses to start (for example a notification before any request), 0 when it stops on
//! its own; a panic in rmcp's service is a crash (exit code 101). A handler's panic kills only the task rmcp runs
//! the request in, as in a real server: the request is never answered, and the panic (location and message) is
//! noted after it, which the oracle reports as `SERVER-HANDLER-PANIC` naming the tool and its arguments; a handler
//! that never returns is `SERVER-HANDLER-HANG` after the final wait of virtual time.

use super::async_lines::LinesConnection;
use crate::server::InProcessServer;
use rmcp::service::ServerInitializeError;
use rmcp::{ServerHandler, ServiceExt};
use tokio::io::DuplexStream;

/// An rmcp server as an in-process server: each conversation serves a clone of the handler.
///
/// A clone shares what the handler keeps behind an `Arc`: a store one conversation writes is what the next one
/// reads, so a bug that needs a write shows up or not depending on the conversations before it (and a handler
/// that panics holding a lock poisons it for every later one). A handler with such state is served with
/// [`Rmcp::fresh`], a new one per conversation.
///
/// ```
/// use mcp_wirefuzz::server::rmcp::Rmcp;
/// use rmcp::ServerHandler;
///
/// #[derive(Clone)]
/// struct Hello;
///
/// impl ServerHandler for Hello {}
///
/// let server = Rmcp(Hello);
/// // The body of a fuzz target: panics with a readable report when the server breaks a rule.
/// mcp_wirefuzz::harness::fuzz_under(&server, b"any fuzzer bytes", &mcp_wirefuzz::sdk::rmcp::policy());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Rmcp<H>(pub H);

impl<H: ServerHandler + Clone> InProcessServer for Rmcp<H> {
    type Connection = LinesConnection;

    fn connect(&self) -> LinesConnection {
        let handler = self.0.clone();
        LinesConnection::open(move |stream| serve(handler, stream))
    }
}

impl<H: ServerHandler> Rmcp<H> {
    /// An rmcp server whose handler `make` builds anew for each conversation (and for each conversation that learns
    /// the server): no state crosses from one conversation to the next, so the same script always gets the same
    /// verdict and a shrunk case fails on its own. The handler need not be `Clone`.
    ///
    /// ```
    /// use mcp_wirefuzz::server::rmcp::Rmcp;
    /// use std::sync::{Arc, Mutex};
    ///
    /// #[derive(Clone, Default)]
    /// struct Store {
    ///     notes: Arc<Mutex<Vec<String>>>,
    /// }
    ///
    /// impl rmcp::ServerHandler for Store {}
    ///
    /// let server = Rmcp::fresh(Store::default);
    /// mcp_wirefuzz::harness::fuzz_under(&server, b"any fuzzer bytes", &mcp_wirefuzz::sdk::rmcp::policy());
    /// ```
    pub fn fresh<F: Fn() -> H>(make: F) -> Fresh<F> {
        Fresh(make)
    }
}

/// An rmcp server with a new handler per conversation: [`Rmcp::fresh`].
#[derive(Clone, Debug)]
pub struct Fresh<F>(F);

impl<F: Fn() -> H, H: ServerHandler> InProcessServer for Fresh<F> {
    type Connection = LinesConnection;

    fn connect(&self) -> LinesConnection {
        let handler = (self.0)();
        LinesConnection::open(move |stream| serve(handler, stream))
    }
}

/// Serves one connection of `handler` over `stream` as a stdio rmcp server's `main` does; `Err` when rmcp refuses
/// to start the service. Input closed before any lifecycle was chosen is a normal end. [`Rmcp`] serves with it;
/// so can an [`super::async_lines::AsyncLines`] server that sets the handler up per connection:
///
/// ```
/// use mcp_wirefuzz::server::async_lines::AsyncLines;
///
/// #[derive(Clone)]
/// struct Hello;
///
/// impl rmcp::ServerHandler for Hello {}
///
/// let server = AsyncLines(|stream| mcp_wirefuzz::server::rmcp::serve(Hello, stream));
/// mcp_wirefuzz::harness::fuzz_under(&server, b"any fuzzer bytes", &mcp_wirefuzz::sdk::rmcp::policy());
/// ```
pub async fn serve<H: ServerHandler>(handler: H, stream: DuplexStream) -> Result<(), ServerInitializeError> {
    let running = match handler.serve(stream).await {
        Ok(running) => running,
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(error),
    };
    match running.waiting().await {
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::conversation;
    use crate::oracle::rules::{HANDLER_HANG, HANDLER_PANIC};
    use crate::oracle::{Level, check};
    use crate::server::run_in_process;
    use crate::transcript::{Ending, Input, Transcript};
    use crate::transcript::{Event, Note};
    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, ListToolsResult,
        PaginatedRequestParams,
    };
    use rmcp::service::{RequestContext, RoleServer};
    use std::time::{Duration, Instant};

    /// rmcp's defaults, except that `tools/list` panics when `panics` is set.
    #[derive(Clone)]
    struct Handler {
        panics: bool,
    }

    impl ServerHandler for Handler {
        async fn list_tools(
            &self,
            _: Option<PaginatedRequestParams>,
            _: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            assert!(!self.panics, "list_tools bug");
            Ok(ListToolsResult::default())
        }

        /// `fetch {"id": n}`: indexes a list of three (an author's bug: it panics past them), never returns for 9,
        /// takes five minutes for 5.
        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let id = request.arguments.and_then(|a| a.get("id")?.as_u64()).unwrap_or(0) as usize;
            match id {
                9 => std::future::pending().await,
                5 => tokio::time::sleep(Duration::from_secs(300)).await,
                _ => {}
            }
            let items = ["a", "b", "c"];
            let item = if id == 5 { "slow" } else { items[id] };
            Ok(CallToolResult::success(vec![ContentBlock::text(item)]).into())
        }
    }

    fn line(text: &str) -> Input {
        Input::Line(text.as_bytes().to_vec())
    }

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    #[test]
    fn conversations_repeat_exactly() {
        let server = Rmcp(Handler { panics: false });
        for index in 0..150 {
            let inputs = conversation(5, index);
            assert_eq!(run_in_process(&server, &inputs), run_in_process(&server, &inputs), "conversation {index}");
        }
    }

    /// The findings of a call of `fetch` with this id on a fresh rmcp connection, under rmcp's policy.
    fn fetch(id: u32) -> (Transcript, Vec<crate::oracle::Finding>) {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"fetch","arguments":{{"id":{id}}}}}}}"#
        );
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let inputs = [line(INITIALIZE), line(initialized), Input::Sync, line(&call), Input::Sync];
        let transcript = run_in_process(&Rmcp(Handler { panics: false }), &inputs);
        let findings = check(&transcript, &crate::sdk::rmcp::policy());
        (transcript, findings)
    }

    #[test]
    fn a_handler_panic_is_found_with_its_tool_arguments_message_and_location_and_a_clean_call_is_not() {
        let (transcript, findings) = fetch(7);
        assert_eq!(transcript.ending, Ending::Closed, "the server goes on: {}", transcript.render());
        let rules: Vec<_> = findings.iter().map(|f| (f.rule, f.level)).collect();
        assert_eq!(rules, [(HANDLER_PANIC, Level::Error)], "{findings:#?}");
        let detail = &findings[0].detail;
        for part in
            ["tools/call of tool \"fetch\"", r#"{"id":7}"#, "index out of bounds", "src/server/adapter/rmcp.rs:"]
        {
            assert!(detail.contains(part), "{part}: {detail}");
        }
        let (clean, findings) = fetch(1);
        assert!(findings.is_empty(), "{findings:#?}");
        assert!(!clean.events.iter().any(|e| matches!(e, Event::Note(Note::Failure(_)))), "{}", clean.render());
    }

    #[test]
    fn a_handler_that_never_returns_is_found_in_virtual_time_and_a_slow_one_is_not() {
        let started = Instant::now();
        let (_, hung) = fetch(9);
        assert_eq!(hung.iter().map(|f| f.rule).collect::<Vec<_>>(), [HANDLER_HANG], "{hung:#?}");
        assert!(hung[0].detail.contains(r#"{"id":9}"#), "{}", hung[0].detail);
        let (slow, findings) = fetch(5);
        assert!(findings.is_empty(), "{findings:#?}\n{}", slow.render());
        assert!(started.elapsed() < Duration::from_secs(5), "virtual time: {:?}", started.elapsed());
    }

    /// A handler that counts its calls in state its clones share, as a store behind an `Arc<Mutex<...>>` does.
    #[derive(Clone, Default)]
    struct Counter {
        calls: std::sync::Arc<std::sync::atomic::AtomicU64>,
    }

    impl ServerHandler for Counter {
        async fn call_tool(
            &self,
            _: CallToolRequestParams,
            _: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let calls = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            Ok(CallToolResult::success(vec![ContentBlock::text(calls.to_string())]).into())
        }
    }

    /// What the one tool call of a conversation on `server` answered.
    fn count<S: InProcessServer>(server: &S) -> String {
        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{}}}"#;
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let inputs = [line(INITIALIZE), line(initialized), Input::Sync, line(call), Input::Sync];
        let transcript = run_in_process(server, &inputs);
        let reply = transcript.received().nth(1).expect("the call is answered");
        let reply: serde_json::Value = serde_json::from_slice(reply).unwrap();
        reply["result"]["content"][0]["text"].as_str().unwrap().to_string()
    }

    #[test]
    fn a_fresh_handler_per_conversation_shares_no_state_and_a_clone_does() {
        let fresh = Rmcp::fresh(Counter::default);
        assert_eq!([count(&fresh), count(&fresh)], ["1", "1"], "each conversation starts from a new handler");
        let cloned = Rmcp(Counter::default());
        assert_eq!([count(&cloned), count(&cloned)], ["1", "2"], "clones share the Arc");
    }

    #[test]
    fn rmcp_refusing_to_start_ends_the_conversation_and_a_handler_panic_does_not() {
        let server = Rmcp(Handler { panics: true });
        let refused = run_in_process(&server, &[line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)]);
        assert!(matches!(refused.ending, Ending::Exited { code: Some(1), .. }), "{refused:?}");
        let tools = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let inputs = [line(INITIALIZE), line(initialized), Input::Sync, line(tools), Input::Sync];
        // A panic in a handler is noted, and the server goes on.
        let panicked = run_in_process(&server, &inputs);
        assert_eq!(panicked.ending, Ending::Closed);
        let failure = panicked.events.iter().find_map(|e| match e {
            Event::Note(Note::Failure(failure)) => Some(failure.clone()),
            _ => None,
        });
        assert!(failure.is_some_and(|f| f.contains("list_tools bug")), "{}", panicked.render());
        let healthy = run_in_process(&Rmcp(Handler { panics: false }), &inputs);
        assert_eq!(healthy.ending, Ending::Closed);
        assert_eq!(healthy.received().count(), 2, "{}", healthy.render());
    }
}
