//! A GET stream of the client's own (2025-11-25 basic/transports.mdx §Listening for Messages from the Server), read
//! beside the conversation's POSTs: a thread takes each SSE event's data and id until the server ends the stream or
//! the harness closes it. What it carried is recorded on the GET's exchange ([`Exchange::stream`]), for the HTTP
//! rules only: it came in no order the harness can tell against the POSTs' lines, so the JSON-RPC and MCP layers,
//! whose rules read order, never see it.
//!
//! [`Exchange::stream`]: crate::transcript::Exchange::stream

use super::wire::{self, Body, BodyKind, SseCursor, SseEvent, Timed};
use crate::server::{MAX_EVENTS, MAX_LINE_BYTES};
use std::io::BufReader;
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// The longest a GET stream is held open: far beyond any conversation, which closes it sooner.
const HELD_AT_MOST: Duration = Duration::from_secs(600);

/// The most body bytes a GET stream is read for.
const MAX_STREAM_BYTES: usize = 64 << 20;

/// What a GET stream carried.
#[derive(Debug, Default)]
pub(super) struct Heard {
    /// Each event's data (the JSON-RPC message), at most [`MAX_EVENTS`].
    pub(super) messages: Vec<Vec<u8>>,
    /// The `id` fields of its events, in order.
    pub(super) event_ids: Vec<String>,
}

/// A GET stream being read: the event of its exchange in the transcript, the socket to close it by, and what its
/// thread heard once it ends.
pub(super) struct Listening {
    /// The transcript event of the GET's exchange.
    pub(super) at: usize,
    socket: Option<TcpStream>,
    heard: Receiver<Heard>,
}

impl Listening {
    /// Starts reading the SSE body of a GET's response from `connection` (framed as `kind`) on a thread of its own.
    pub(super) fn start(mut connection: BufReader<Timed>, kind: BodyKind, at: usize) -> Listening {
        let socket = connection.get_mut().stream().try_clone().ok();
        connection.get_mut().wait(HELD_AT_MOST, Instant::now() + HELD_AT_MOST);
        let (sender, heard) = channel();
        std::thread::spawn(move || {
            let mut body = Body::new(&mut connection, kind, MAX_STREAM_BYTES);
            let mut events = BufReader::new(&mut body);
            let mut cursor = SseCursor::default();
            let mut heard = Heard::default();
            while heard.messages.len() < MAX_EVENTS {
                match wire::read_event(&mut events, MAX_LINE_BYTES, &mut cursor) {
                    Ok(SseEvent::Data { data, .. }) if !data.trim_ascii().is_empty() => heard.messages.push(data),
                    Ok(SseEvent::Data { .. }) => {}
                    Ok(SseEvent::End) | Err(_) => break,
                }
            }
            heard.event_ids = cursor.ids;
            let _ = sender.send(heard);
        });
        Listening { at, socket, heard }
    }

    /// Closes the stream, after waiting up to `grace` for the server to end it (a server ends its GET streams with
    /// the session), and returns what it carried.
    pub(super) fn stop(mut self, grace: Duration) -> Heard {
        match self.heard.recv_timeout(grace) {
            Ok(heard) => heard,
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                if let Some(socket) = self.socket.take() {
                    let _ = socket.shutdown(Shutdown::Both);
                }
                self.heard.recv().unwrap_or_default()
            }
        }
    }
}

impl Drop for Listening {
    /// A stream left open (the conversation ended on an error) is closed, so its thread ends.
    fn drop(&mut self) {
        if let Some(socket) = self.socket.take() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    /// A GET stream whose server sends one event and then neither sends more nor ends it: the harness closes it
    /// after the grace, with what came, and does not wait longer.
    #[test]
    fn a_stream_the_server_never_ends_is_closed_after_the_grace_with_what_it_carried() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let event = b"id: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}\n\n";
            socket.write_all(event).unwrap();
            socket.flush().unwrap();
            // Held open until the harness closes it.
            let mut rest = Vec::new();
            let _ = std::io::Read::read_to_end(&mut socket, &mut rest);
        });
        let stream = TcpStream::connect(address).unwrap();
        let connection = BufReader::new(Timed::new(stream, Duration::from_secs(5)));
        let listening = Listening::start(connection, BodyKind::UntilClose, 7);
        assert_eq!(listening.at, 7);
        let started = Instant::now();
        std::thread::sleep(Duration::from_millis(100));
        let heard = listening.stop(Duration::from_millis(50));
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        assert_eq!(heard.messages, [br#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#.to_vec()]);
        assert_eq!(heard.event_ids, ["e1"]);
        server.join().unwrap();
    }
}
