//! The server on a socket: [`serve`] puts the pure [`HttpServer::handle`] behind `tiny_http`, writing a held stream
//! as chunked SSE by hand; [`spawn`] and [`spawn_server`] start it on a thread for tests and benchmarks.

use super::{HttpBug, HttpRequest, HttpServer};
use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::sync::mpsc::Receiver;

/// The largest request body read (10 MiB; a larger one gets 413).
pub const MAX_REQUEST_BYTES: usize = 10 << 20;

/// Writes a held stream's reply by hand: status and headers, then each message as an SSE event in a chunk of its
/// own, flushed at once (a client waits on each), then the last chunk when the stream's sender is dropped.
fn write_stream(mut writer: Box<dyn Write + Send>, headers: &[(String, String)], messages: Receiver<Vec<u8>>) {
    let mut head = String::from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nCache-Control: no-cache\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    if writer.write_all(head.as_bytes()).is_err() {
        return;
    }
    for message in messages {
        let event = [&b"event: message\ndata: "[..], &message, b"\n\n"].concat();
        if write_chunk(&mut writer, &event).is_err() {
            return;
        }
    }
    let _ = write_chunk(&mut writer, b"");
}

/// One chunk of a chunked body, flushed (an empty one ends the body).
fn write_chunk(writer: &mut dyn Write, bytes: &[u8]) -> std::io::Result<()> {
    write!(writer, "{:x}\r\n", bytes.len())?;
    writer.write_all(bytes)?;
    writer.write_all(b"\r\n")?;
    writer.flush()
}

/// Serves the reference server over HTTP on `address` (`HOST:PORT`; port 0 picks one) until the process ends;
/// `ready` gets the address it listens on; `state` is the server ([`HttpServer::new`]).
pub fn serve(address: &str, mut state: HttpServer, ready: impl FnOnce(std::net::SocketAddr)) -> Result<()> {
    let listener = std::net::TcpListener::bind(address).with_context(|| format!("cannot listen on {address}"))?;
    // Accepted connections inherit it: tiny_http writes a response's head and body apart, and with Nagle on, the
    // body waits for the client's delayed acknowledgement of the head (up to 40 ms on a kept-alive connection).
    let _ = nix::sys::socket::setsockopt(&listener, nix::sys::socket::sockopt::TcpNoDelay, &true);
    let server = tiny_http::Server::from_listener(listener, None)
        .map_err(|e| anyhow::anyhow!("cannot listen on {address}: {e}"))?;
    let local = server.server_addr().to_ip().context("not an IP listener")?;
    ready(local);
    for mut request in server.incoming_requests() {
        let mut body = Vec::new();
        let complete = request
            .as_reader()
            .take(MAX_REQUEST_BYTES as u64 + 1)
            .read_to_end(&mut body)
            .is_ok_and(|n| n <= MAX_REQUEST_BYTES);
        let seen = HttpRequest {
            method: request.method().as_str().to_string(),
            headers: request
                .headers()
                .iter()
                .map(|h| (h.field.as_str().to_string(), h.value.as_str().to_string()))
                .collect(),
            body: complete.then_some(body),
        };
        let reply = state.handle(&seen);
        if let Some(messages) = state.take_stream() {
            let writer = request.into_writer();
            std::thread::spawn(move || write_stream(writer, &reply.headers, messages));
            continue;
        }
        let mut response = tiny_http::Response::from_data(reply.body).with_status_code(reply.status);
        for (name, value) in reply.headers {
            if let Ok(header) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
                response = response.with_header(header);
            }
        }
        let _ = request.respond(response);
    }
    Ok(())
}

/// Starts [`serve`] on a thread at `127.0.0.1:0` and returns the endpoint's URL (for tests and benchmarks).
pub fn spawn(bug: Option<HttpBug>, modern_only: bool) -> Result<String> {
    spawn_server(HttpServer::new(bug, modern_only))
}

/// Starts [`serve`] of `state` on a thread at `127.0.0.1:0` and returns the endpoint's URL.
pub fn spawn_server(state: HttpServer) -> Result<String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let failed = serve("127.0.0.1:0", state, |address| {
            let _ = sender.send(Ok(address));
        });
        if let Err(error) = failed {
            let _ = sender.send(Err(error));
        }
    });
    let address = receiver.recv().context("the HTTP server thread ended")??;
    Ok(format!("http://{address}/mcp"))
}
