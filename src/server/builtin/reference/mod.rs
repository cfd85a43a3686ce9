//! The built-in reference server "calc": the tool `add(a: int, b: int) -> int` and a few with richer schemas
//! (`format_user`: nested objects, an enum, an array, an `outputSchema`; `stats`: `$ref`, `anyOf`, a nullable
//! type; `logo`: an image), a prompt, two resources and a resource template; server name `calc`, empty version,
//! serving both protocol eras as `shared/PROTOCOL.md` describes, one era per connection, and answering malformed
//! input as JSON-RPC 2.0 asks (-32700 for a line that is not JSON, -32600 for an invalid request).
//!
//! It is the oracle's clean baseline: it must reproduce the protocol lesson's seed transcripts exactly.
//!
//! This file holds the servers, their connection's state and the JSON-RPC error they answer with; the rest is one
//! idea a file: each line read and dispatched (`dispatch.rs`), the two eras' gates before a method
//! (`eras.rs`), the methods served (`methods.rs`), the server's own requests to the client mid-call and their
//! answers (`asks.rs`), and how a message is written, planted output bugs included (`output.rs`).

mod asks;
mod dispatch;
mod eras;
mod methods;
mod output;
#[cfg(test)]
pub(super) mod tests;

use super::mutants::Mutant;
use crate::protocol::codes::METHOD_NOT_FOUND;
use crate::protocol::envelope::SUBSCRIPTION_ID_KEY;
use crate::protocol::{Era, RequestId};
use crate::server::InProcessServer;
use serde_json::{Value, json};

/// The server's name and version, in `serverInfo`: the seed lesson's calc server (defined with the data the server
/// model compares them with).
pub use crate::model::{SERVER_NAME, SERVER_VERSION};
/// The -32600 message for an enveloped request on a handshake connection (the lesson's exact words).
pub const HANDSHAKE_REFUSES_MODERN: &str = "this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it";
/// The -32022 message for `initialize` on a modern connection.
pub const MODERN_REFUSES_INITIALIZE: &str =
    "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted";
/// The -32602 message when `params._meta` is missing or not an object.
pub const META_NOT_OBJECT: &str = "params._meta must be an object carrying the required 'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities' envelope keys";
/// The start of the -32602 message that names missing envelope keys.
pub const MISSING_KEYS_PREFIX: &str = "params._meta is missing the required envelope key(s): ";

/// The reference server. Each connection starts with no era; its first request fixes one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Calc;

impl InProcessServer for Calc {
    type Connection = CalcConnection;

    fn connect(&self) -> CalcConnection {
        CalcConnection::default()
    }
}

/// The reference server serving the official conformance suite's fixtures too ([`fixtures`](super::fixtures)):
/// `serve --conformance-fixtures`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CalcWithFixtures;

impl InProcessServer for CalcWithFixtures {
    type Connection = CalcConnection;

    fn connect(&self) -> CalcConnection {
        CalcConnection::default().with_fixtures()
    }
}

/// The reference server with one planted bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planted(pub Mutant);

impl InProcessServer for Planted {
    type Connection = CalcConnection;

    fn connect(&self) -> CalcConnection {
        CalcConnection { mutant: Some(self.0), ..CalcConnection::default() }
    }
}

/// One connection of [`Calc`] or [`Planted`].
#[derive(Clone, Debug, Default)]
pub struct CalcConnection {
    era: Option<Era>,
    initialized: bool,
    mutant: Option<Mutant>,
    /// Set by the planted bug [`Mutant::WedgedAfterParseError`]: requests are no longer answered.
    wedged: bool,
    /// The version `initialize` negotiated: on [`BATCH_VERSION`](crate::protocol::era::BATCH_VERSION) a batch
    /// array is served, each request in it answered in one array reply (JSON-RPC 2.0 §6).
    version: Option<&'static str>,
    /// The elicitation requests the planted bug [`Mutant::ElicitsUndeclared`] sent.
    elicited: u64,
    /// Serves the conformance suite's fixtures beside calc's own.
    fixtures: bool,
    /// The least severe log level `logging/setLevel` asked for (an index in [`crate::protocol::logging::LOG_LEVELS`]).
    log_level: Option<usize>,
    /// Notifications the request being answered sends before its reply (a fixture's log and progress).
    notices: Vec<Value>,
    /// The `subscriptions/listen` streams open on this connection, by request id: each stays open (no reply)
    /// until the client cancels it or the connection ends.
    listens: Vec<RequestId>,
    /// Set while answering a request whose reply comes later (a listen stream, a call waiting for the client).
    withheld: bool,
    /// The `capabilities` the client declared in `initialize`.
    client_capabilities: Value,
    /// The tool calls waiting for the client's answer to a request of the server's: its id, the call's id, the
    /// request's method.
    asks: Vec<(String, RequestId, &'static str)>,
    /// How many requests the server sent the client (their ids count up).
    asked: u64,
    /// Set by the planted bug [`Mutant::CrashesOnMalformedAnswer`] on an answer it cannot read: the process exits.
    crashed: bool,
    /// Set by the planted bug [`Mutant::HangsOnMalformedAnswer`] on an answer it cannot read: the call that waited
    /// for it is never answered.
    hung: bool,
}

impl CalcConnection {
    /// A connection of a server that serves only the modern era: its era is fixed before its first message, so an
    /// `initialize` is refused as on any modern connection.
    pub fn modern_only() -> CalcConnection {
        CalcConnection { era: Some(Era::Modern), ..CalcConnection::default() }
    }

    /// The same connection, serving the conformance suite's fixtures too.
    pub fn with_fixtures(self) -> CalcConnection {
        CalcConnection { fixtures: true, ..self }
    }

    /// Ends the listen stream `id` gracefully, as a server that closes it does (basic/patterns/subscriptions.mdx:
    /// a successful response to the listen request): the response, or `None` when no such stream is open.
    pub fn close_listen(&mut self, id: &RequestId) -> Option<Vec<u8>> {
        let at = self.listens.iter().position(|open| open == id)?;
        self.listens.remove(at);
        let result = json!({ "resultType": "complete", "_meta": { SUBSCRIPTION_ID_KEY: id.to_value() } });
        Some(self.encode(json!({ "jsonrpc": "2.0", "id": id.to_value(), "result": result })))
    }
}

/// A JSON-RPC error the server answers with.
struct RpcError {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl From<super::surface::Refusal> for RpcError {
    fn from(refusal: super::surface::Refusal) -> RpcError {
        RpcError { code: refusal.code, message: refusal.message, data: refusal.data }
    }
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError { code, message: message.into(), data: None }
    }

    fn method_not_found(method: &str) -> RpcError {
        RpcError { data: Some(Value::String(method.into())), ..RpcError::new(METHOD_NOT_FOUND, "Method not found") }
    }
}

type Reply = Result<Value, RpcError>;

impl CalcConnection {
    /// True when the connection plants `mutant`.
    fn has(&self, mutant: Mutant) -> bool {
        self.mutant == Some(mutant)
    }
}

/// The params of the elicitation the planted bugs ask for: a confirmation, with nothing to fill in.
fn confirm_elicitation() -> Value {
    json!({ "message": "Add these numbers?", "requestedSchema": { "type": "object", "properties": {} } })
}

/// The error response to the request `id`.
fn error_message(id: Value, error: RpcError) -> Value {
    let mut object = json!({ "code": error.code, "message": error.message });
    if let Some(data) = error.data {
        object["data"] = data;
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": object })
}
