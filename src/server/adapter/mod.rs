//! Adapters: what turns a server written against another interface into an
//! [`InProcessServer`](crate::server::InProcessServer). A server written for the harness implements that trait itself (it
//! is the synchronous interface, no adapter needed); an async server that speaks one message per line goes through
//! `async_lines`, an rmcp handler through `rmcp` (each behind its feature).

#[cfg(feature = "async-lines")]
pub mod async_lines;
#[cfg(feature = "rmcp")]
pub mod rmcp;
