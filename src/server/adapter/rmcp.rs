//! rmcp servers in-process (feature `rmcp`, rmcp 3.11.0): any rmcp [`ServerHandler`] becomes an
//! [`InProcessServer`], served by rmcp itself over an in-memory stream, one fresh service per conversation, with
//! the barrier of [`super::async_lines`] (paused tokio time: no wall-clock waiting).
//!
//! The service runs as a stdio rmcp server's `main` does: `handler.serve(transport)`, then `waiting()`. It ends
//! with exit code 1 when rmcp refuses to start (for example a notification before any request), 0 when it stops on
//! its own; a panic anywhere in it is a crash (exit code 101).

use super::async_lines::LinesConnection;
use crate::server::InProcessServer;
use rmcp::service::ServerInitializeError;
use rmcp::{ServerHandler, ServiceExt};
use tokio::io::DuplexStream;

/// An rmcp server as an in-process server: each conversation serves a clone of the handler.
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
    use crate::server::run_in_process;
    use crate::transcript::{Ending, Input};
    use rmcp::model::{ErrorData, ListToolsResult, PaginatedRequestParams};
    use rmcp::service::{RequestContext, RoleServer};

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

    #[test]
    fn rmcp_refusing_to_start_and_a_handler_panic_end_the_conversation() {
        let server = Rmcp(Handler { panics: true });
        let refused = run_in_process(&server, &[line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)]);
        assert!(matches!(refused.ending, Ending::Exited { code: Some(1), .. }), "{refused:?}");
        let tools = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let inputs = [line(INITIALIZE), line(initialized), Input::Sync, line(tools), Input::Sync];
        let panicked = run_in_process(&server, &inputs);
        let Ending::Exited { code: Some(101), stderr_tail, .. } = &panicked.ending else { panic!("{panicked:?}") };
        assert!(String::from_utf8_lossy(stderr_tail).contains("list_tools bug"));
        let healthy = run_in_process(&Rmcp(Handler { panics: false }), &inputs);
        assert_eq!(healthy.ending, Ending::Closed);
        assert_eq!(healthy.received().count(), 2, "{}", healthy.render());
    }
}
