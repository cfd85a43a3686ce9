//! How a conversation reaches a server, one room per transport, each a [`Target`](super::Target) under the same
//! contract: [`in_process`] (exact and fast: the server runs on the harness's thread), [`stdio`] (a child process,
//! its barriers and its hygiene), [`http`] (Streamable HTTP, one exchange per POST); and [`lines`], the bounded
//! reading of a server's output lines and stderr tail that stdio and HTTP share, and `failures`, the handler
//! failures (a panic, a traceback) they look for in that tail.

mod failures;
pub mod http;
pub mod in_process;
pub mod lines;
pub mod stdio;
