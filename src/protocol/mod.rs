//! The JSON-RPC 2.0, MCP and HTTP vocabulary: request ids kept exactly as sent, the classification of one line of
//! traffic, the two protocol eras and their versions, the `_meta` envelope keys, method names and error codes, the
//! Streamable HTTP header helpers, and the properties of JSON text parsers legitimately differ on (duplicate keys,
//! number limits), and the harness's own side as a client (what it declared, how it answers a server's requests). It
//! imports nothing else of the crate.
//!
//! Nothing here does I/O and nothing here panics on input: every function takes untrusted bytes or values.

pub mod client;
pub mod codes;
pub mod envelope;
pub mod era;
pub mod http;
pub mod id;
pub mod json;
pub mod logging;
pub mod message;
pub mod methods;

pub use era::Era;
pub use id::{IdField, RequestId};
pub use message::{ErrorObject, Frame, Kind, Notification, Outcome, Problem, Request, Response, ResponseId};
