//! mcp-wirefuzz: a fuzzing and property-testing harness for MCP (Model Context Protocol) servers at the JSON-RPC
//! wire level, in both protocol eras: the handshake era (`initialize`, versions up to 2025-11-25) and the modern
//! era (2026-07-28, a `_meta` envelope on every request).
//!
//! The pieces, in the order data flows through them: [`protocol`] (the wire vocabulary), [`script`] (the test
//! inputs: typed conversations with both an `arbitrary` and a proptest generator, encoded to lines), [`target`]
//! (servers under test: the built-in reference server in-process, or any server as a child process over stdio),
//! and [`seeds`] (the protocol lesson's transcripts every conforming server reproduces).

pub mod baseline;
pub mod campaign;
pub mod case;
pub mod fuzz_targets;
pub mod oracle;
pub mod protocol;
pub mod report;
pub mod script;
pub mod seeds;
pub mod shrink;
pub mod target;
pub mod transcript;
