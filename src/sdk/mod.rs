//! What the MCP SDKs themselves do that the rules call deviations: data about an SDK, kept apart from the adapter
//! that runs a server written with it, so that a server's own bugs can be told from its SDK's.
//!
//! Each SDK's module names the rules the SDK breaks whatever the server's author writes, and the policy a test of
//! such a server runs under.

pub mod rmcp;
