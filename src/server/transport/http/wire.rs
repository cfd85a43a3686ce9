//! HTTP/1.1 on the wire, client side. Requests are written byte for byte by [`write_request`], so what the
//! harness means to send (a duplicated or wrongly cased header, an over-long value, a chunked body cut mid-way)
//! reaches the server exactly so; a client library would normalise or refuse those. Response heads are parsed by
//! `httparse` (hyper's parser); bodies are read through [`Body`] with a bound on their size, a timeout on every
//! read and a deadline for the whole response, and server-sent events are split by [`read_event`] one bounded
//! line at a time, so a never-ending stream or a gigabyte body ends in a recorded problem, never a hang.

use crate::server::transport::lines::read_bounded_line;
use std::io::{self, BufRead, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The longest response head kept (status line and headers).
pub const MAX_HEAD_BYTES: usize = 64 << 10;
/// The most response headers parsed.
const MAX_HEADERS: usize = 128;
/// The longest chunk-size line of a chunked body.
const MAX_CHUNK_LINE: usize = 4 << 10;

/// How a request body is framed on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length` and the bytes.
    #[default]
    Length,
    /// `Transfer-Encoding: chunked`, whole.
    Chunked,
    /// `Transfer-Encoding: chunked`, cut after half the body (no last chunk; the write side is then closed).
    ChunkedCut,
}

/// One request to write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// `POST`, `GET`, `DELETE`.
    pub method: String,
    /// The request target (the endpoint's path).
    pub path: String,
    /// Headers in order, written exactly as given (framing headers are added by [`write_request`]).
    pub headers: Vec<(String, String)>,
    /// The body (empty for GET and DELETE).
    pub body: Vec<u8>,
    /// How the body is framed.
    pub framing: Framing,
}

/// Writes `request`: the request line, its headers, the framing header and the body.
pub fn write_request(stream: &mut impl Write, request: &Request) -> io::Result<()> {
    let mut out = format!("{} {} HTTP/1.1\r\n", request.method, request.path).into_bytes();
    for (name, value) in &request.headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    match request.framing {
        Framing::Length if request.method == "POST" || !request.body.is_empty() => {
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", request.body.len()).as_bytes());
            out.extend_from_slice(&request.body);
        }
        Framing::Length => out.extend_from_slice(b"\r\n"),
        Framing::Chunked | Framing::ChunkedCut => {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            let cut = request.framing == Framing::ChunkedCut;
            let body = if cut { &request.body[..request.body.len() / 2] } else { &request.body[..] };
            for chunk in body.chunks(1024) {
                out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                out.extend_from_slice(chunk);
                out.extend_from_slice(b"\r\n");
            }
            if !cut {
                out.extend_from_slice(b"0\r\n\r\n");
            }
        }
    }
    stream.write_all(&out)?;
    stream.flush()
}

/// A socket whose every read is bounded by a per-read timeout and by the deadline of the response being read.
#[derive(Debug)]
pub struct Timed {
    stream: TcpStream,
    per_read: Duration,
    deadline: Instant,
}

impl Timed {
    /// Wraps a connected socket.
    pub fn new(stream: TcpStream, per_read: Duration) -> Timed {
        Timed { stream, per_read, deadline: Instant::now() + per_read }
    }

    /// Sets the deadline of the next response.
    pub fn deadline(&mut self, deadline: Instant) {
        self.deadline = deadline;
    }

    /// Sets how long one read may wait, and the deadline of the response: a stream read for long holds both far.
    pub fn wait(&mut self, per_read: Duration, deadline: Instant) {
        self.per_read = per_read;
        self.deadline = deadline;
    }

    /// The socket.
    pub fn stream(&mut self) -> &mut TcpStream {
        &mut self.stream
    }
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the response deadline passed"));
        }
        self.stream.set_read_timeout(Some(self.per_read.min(left)))?;
        self.stream.read(buf)
    }
}

/// A parsed response head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// The status code.
    pub status: u16,
    /// HTTP/1.0 (0) or HTTP/1.1 (1).
    pub minor: u8,
    /// The headers in order.
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// The first value of a header, matched case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// How the body is framed, for a response to `method`.
    pub fn body_kind(&self, method: &str) -> Result<BodyKind, String> {
        if method == "HEAD" || self.status == 204 || self.status == 304 || self.status < 200 {
            return Ok(BodyKind::Empty);
        }
        if let Some(encoding) = self.header("transfer-encoding") {
            if encoding.trim().eq_ignore_ascii_case("chunked") {
                return Ok(BodyKind::Chunked);
            }
            return Err(format!("unsupported Transfer-Encoding {encoding:?}"));
        }
        let lengths: Vec<&str> = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.as_str())
            .collect();
        match lengths.as_slice() {
            [] => Ok(BodyKind::UntilClose),
            [one] => one
                .trim()
                .parse::<u64>()
                .map(BodyKind::Length)
                .map_err(|_| format!("Content-Length {one:?} is not a number")),
            [first, rest @ ..] if rest.iter().all(|v| v.trim() == first.trim()) => {
                first.trim().parse::<u64>().map(BodyKind::Length).map_err(|_| format!("bad Content-Length {first:?}"))
            }
            _ => Err("conflicting Content-Length headers".into()),
        }
    }

    /// Whether the connection may carry another request after this response.
    pub fn keeps_alive(&self) -> bool {
        let connection = self.header("connection").map(str::to_ascii_lowercase);
        match self.minor {
            0 => connection.as_deref() == Some("keep-alive"),
            _ => connection.as_deref() != Some("close"),
        }
    }
}

/// How a response body is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    /// No body.
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
    /// Until the server closes the connection.
    UntilClose,
}

/// Why a response could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The connection closed before any byte of a response came.
    Closed,
    /// A read timed out, or the deadline passed.
    Timeout,
    /// The bytes are not an HTTP/1.1 response (the reason).
    Malformed(String),
    /// Another I/O error (reset, refused).
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(error: io::Error) -> ReadError {
        match error.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ReadError::Timeout,
            _ => ReadError::Io(error),
        }
    }
}

/// Reads one response head, skipping interim (1xx) responses.
pub fn read_head(reader: &mut impl BufRead) -> Result<Head, ReadError> {
    loop {
        let mut bytes = Vec::new();
        loop {
            let Some(line) = read_bounded_line(reader, MAX_HEAD_BYTES)? else {
                return Err(if bytes.is_empty() {
                    ReadError::Closed
                } else {
                    ReadError::Malformed("the connection closed inside the response head".into())
                });
            };
            if line.truncated || bytes.len() + line.bytes.len() > MAX_HEAD_BYTES {
                return Err(ReadError::Malformed(format!("a response head longer than {MAX_HEAD_BYTES} bytes")));
            }
            let blank = line.bytes.is_empty() || line.bytes == b"\r";
            bytes.extend_from_slice(&line.bytes);
            bytes.push(b'\n');
            if blank && bytes.len() > 2 {
                break;
            }
            if blank {
                bytes.clear();
            }
        }
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&bytes) {
            Ok(httparse::Status::Complete(_)) => {}
            Ok(httparse::Status::Partial) => return Err(ReadError::Malformed("an incomplete response head".into())),
            Err(error) => return Err(ReadError::Malformed(format!("not an HTTP response head: {error}"))),
        }
        let status = response.code.unwrap_or(0);
        let head = Head {
            status,
            minor: response.version.unwrap_or(1),
            headers: response
                .headers
                .iter()
                .map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).into_owned()))
                .collect(),
        };
        if !(100..200).contains(&status) || status == 101 {
            return Ok(head);
        }
    }
}

/// A response body, decoded from its framing, that ends with an error once more than `max` bytes came.
pub struct Body<'a, R> {
    reader: &'a mut R,
    kind: BodyKind,
    /// Bytes left in the current chunk, or of the whole body for [`BodyKind::Length`].
    left: u64,
    done: bool,
    read: usize,
    max: usize,
}

impl<'a, R: BufRead> Body<'a, R> {
    /// The body of a response whose framing is `kind`.
    pub fn new(reader: &'a mut R, kind: BodyKind, max: usize) -> Body<'a, R> {
        let (left, done) = match kind {
            BodyKind::Empty => (0, true),
            BodyKind::Length(n) => (n, n == 0),
            BodyKind::Chunked | BodyKind::UntilClose => (0, false),
        };
        Body { reader, kind, left, done, read: 0, max }
    }

    /// True once the body was read to its framed end (the connection can carry another request).
    pub fn complete(&self) -> bool {
        self.done && self.kind != BodyKind::UntilClose
    }

    /// How many body bytes were read.
    pub fn len(&self) -> usize {
        self.read
    }

    /// True when no body byte was read.
    pub fn is_empty(&self) -> bool {
        self.read == 0
    }

    fn next_chunk(&mut self) -> io::Result<()> {
        let line = read_bounded_line(self.reader, MAX_CHUNK_LINE)?.ok_or_else(|| {
            io::Error::new(io::ErrorKind::UnexpectedEof, "the chunked body ends without its last chunk")
        })?;
        let mut sized = line.bytes.clone();
        sized.extend_from_slice(b"\n");
        let size = match httparse::parse_chunk_size(&sized) {
            Ok(httparse::Status::Complete((_, size))) => size,
            _ => return Err(io::Error::new(io::ErrorKind::InvalidData, "a malformed chunk size line")),
        };
        if size == 0 {
            // The trailer section, up to its blank line.
            while let Some(line) = read_bounded_line(self.reader, MAX_CHUNK_LINE)? {
                if line.bytes.is_empty() || line.bytes == b"\r" {
                    break;
                }
            }
            self.done = true;
        }
        self.left = size;
        Ok(())
    }
}

impl<R: BufRead> Read for Body<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        if self.read > self.max {
            return Err(io::Error::new(io::ErrorKind::FileTooLarge, format!("a body longer than {} bytes", self.max)));
        }
        if self.kind == BodyKind::Chunked && self.left == 0 {
            self.next_chunk()?;
            if self.done {
                return Ok(0);
            }
        }
        let want = match self.kind {
            BodyKind::UntilClose => buf.len(),
            _ => buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX)),
        };
        let n = self.reader.read(&mut buf[..want])?;
        if n == 0 {
            if self.kind == BodyKind::UntilClose {
                self.done = true;
                return Ok(0);
            }
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the connection closed inside the body"));
        }
        self.read += n;
        if self.kind != BodyKind::UntilClose {
            self.left -= n as u64;
            if self.left == 0 {
                if self.kind == BodyKind::Chunked {
                    // The CRLF after the chunk's data.
                    read_bounded_line(self.reader, 2)?;
                } else {
                    self.done = true;
                }
            }
        }
        Ok(n)
    }
}

/// Reads a whole body into memory, up to `max` bytes: `(bytes, truncated, problem)`.
pub fn read_all(body: &mut impl Read, max: usize) -> (Vec<u8>, bool, Option<String>) {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 << 10];
    loop {
        match body.read(&mut chunk) {
            Ok(0) => return (bytes, false, None),
            Ok(n) => {
                let room = max.saturating_sub(bytes.len());
                bytes.extend_from_slice(&chunk[..n.min(room)]);
                if n > room {
                    return (bytes, true, Some(format!("a body longer than {max} bytes (the rest was not read)")));
                }
            }
            Err(error) => {
                let truncated = error.kind() == io::ErrorKind::FileTooLarge;
                return (bytes, truncated, Some(describe(&error)));
            }
        }
    }
}

/// An I/O error as a finding's words.
pub fn describe(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => "the response stopped coming (timeout)".into(),
        _ => error.to_string(),
    }
}

/// One server-sent event's data, or the end of the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum SseEvent {
    /// The `data` lines of one event, joined with newlines; `truncated` when a line was longer than the bound.
    Data {
        /// The joined data.
        data: Vec<u8>,
        /// True when the event was cut at the bound.
        truncated: bool,
    },
    /// The stream ended.
    End,
}

/// Where an SSE stream stands for a client that may resume it: the last event id it carried and the reconnection
/// time it asked for (the SSE standard's `id` and `retry` fields; an event without data still sets them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseCursor {
    /// The last `id` field, if any.
    pub last_id: Option<String>,
    /// The last `retry` field, in milliseconds, if any.
    pub retry_ms: Option<u64>,
    /// Every `id` field read, in order (at most [`MAX_EVENT_IDS`]).
    pub ids: Vec<String>,
}

/// How many event ids a stream's [`SseCursor`] keeps.
pub const MAX_EVENT_IDS: usize = 1024;

/// Reads the next event that carries data from an SSE stream (comments, `event:`, `id:` and `retry:` lines are
/// skipped), keeping at most `max` bytes of it.
pub fn read_event(stream: &mut impl BufRead, max: usize, cursor: &mut SseCursor) -> io::Result<SseEvent> {
    let mut data = Vec::new();
    let mut has_data = false;
    let mut truncated = false;
    loop {
        // Room for the field name, so a data field can hold `max` bytes.
        let Some(line) = read_bounded_line(stream, max.saturating_add(64))? else {
            return Ok(if has_data { SseEvent::Data { data, truncated } } else { SseEvent::End });
        };
        let mut bytes = line.bytes;
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        truncated |= line.truncated;
        if bytes.is_empty() {
            if has_data {
                return Ok(SseEvent::Data { data, truncated });
            }
            continue;
        }
        let (field, value) = match bytes.iter().position(|&b| b == b':') {
            Some(0) => continue,
            Some(at) => {
                let value = &bytes[at + 1..];
                (&bytes[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&bytes[..], &[][..]),
        };
        if field == b"id" && !value.contains(&0) {
            let id = String::from_utf8_lossy(value).into_owned();
            if cursor.ids.len() < MAX_EVENT_IDS {
                cursor.ids.push(id.clone());
            }
            cursor.last_id = Some(id);
        }
        if field == b"retry" && !value.is_empty() && value.iter().all(u8::is_ascii_digit) {
            cursor.retry_ms = std::str::from_utf8(value).ok().and_then(|digits| digits.parse().ok());
        }
        if field == b"data" {
            if has_data {
                data.push(b'\n');
            }
            has_data = true;
            let room = max.saturating_sub(data.len());
            truncated |= value.len() > room;
            data.extend_from_slice(&value[..value.len().min(room)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn requests_are_written_as_given() {
        let request = Request {
            method: "POST".into(),
            path: "/mcp".into(),
            headers: vec![("mcp-method".into(), "a".into()), ("Mcp-Method".into(), "b".into())],
            body: b"{}".to_vec(),
            framing: Framing::Length,
        };
        let mut out = Vec::new();
        write_request(&mut out, &request).unwrap();
        assert_eq!(
            out,
            b"POST /mcp HTTP/1.1\r\nmcp-method: a\r\nMcp-Method: b\r\nContent-Length: 2\r\n\r\n{}".to_vec()
        );
        let cut = Request { body: b"0123456789".to_vec(), framing: Framing::ChunkedCut, ..request.clone() };
        let mut out = Vec::new();
        write_request(&mut out, &cut).unwrap();
        assert!(out.ends_with(b"chunked\r\n\r\n5\r\n01234\r\n"), "{}", String::from_utf8_lossy(&out));
        let whole = Request { framing: Framing::Chunked, ..cut };
        let mut out = Vec::new();
        write_request(&mut out, &whole).unwrap();
        assert!(out.ends_with(b"a\r\n0123456789\r\n0\r\n\r\n"));
    }

    #[test]
    fn sse_events_are_split_with_comments_and_fields_skipped() {
        let stream = b": keep-alive\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nid: 7\ndata: x\n\nretry: 250\n\ndata: tail";
        let mut reader = Cursor::new(&stream[..]);
        let mut cursor = SseCursor::default();
        let mut next = |reader: &mut Cursor<&[u8]>| read_event(reader, 100, &mut cursor).unwrap();
        assert_eq!(next(&mut reader), SseEvent::Data { data: b"{\"a\":\n1}".to_vec(), truncated: false });
        assert_eq!(next(&mut reader), SseEvent::Data { data: b"x".to_vec(), truncated: false });
        assert_eq!(next(&mut reader), SseEvent::Data { data: b"tail".to_vec(), truncated: false });
        assert_eq!(next(&mut reader), SseEvent::End);
        // The id and the retry (in an event without data) are where a resumption starts.
        assert_eq!(cursor, SseCursor { last_id: Some("7".into()), retry_ms: Some(250), ids: vec!["7".into()] });
        let long = format!("data: {}\n\n", "y".repeat(50));
        let mut reader = Cursor::new(long.into_bytes());
        let data = b"y".repeat(10);
        assert_eq!(
            read_event(&mut reader, 10, &mut SseCursor::default()).unwrap(),
            SseEvent::Data { data, truncated: true }
        );
    }

    #[test]
    fn body_framing_follows_the_head() {
        let head = |headers: &[(&str, &str)]| Head {
            status: 200,
            minor: 1,
            headers: headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
        };
        assert_eq!(head(&[("Content-Length", "5")]).body_kind("POST"), Ok(BodyKind::Length(5)));
        assert_eq!(head(&[("transfer-encoding", "Chunked")]).body_kind("POST"), Ok(BodyKind::Chunked));
        assert_eq!(head(&[]).body_kind("POST"), Ok(BodyKind::UntilClose));
        assert!(head(&[("Content-Length", "5"), ("Content-Length", "6")]).body_kind("POST").is_err());
        assert!(!head(&[("Connection", "close")]).keeps_alive());
    }

    #[test]
    fn chunked_and_bounded_bodies_are_decoded() {
        let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\nNEXT";
        let mut reader = Cursor::new(&wire[..]);
        let head = read_head(&mut reader).unwrap();
        assert_eq!(head.status, 200);
        let mut body = Body::new(&mut reader, head.body_kind("POST").unwrap(), 100);
        assert_eq!(read_all(&mut body, 100), (b"abcde".to_vec(), false, None));
        assert!(body.complete());
        let mut rest = String::new();
        reader.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "NEXT");
        let huge = vec![b'x'; 1000];
        let mut reader = Cursor::new(&huge[..]);
        let mut body = Body::new(&mut reader, BodyKind::UntilClose, 100);
        let (bytes, truncated, problem) = read_all(&mut body, 100);
        assert_eq!((bytes.len(), truncated, problem.is_some()), (100, true, true));
        let mut reader = Cursor::new(&b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc"[..]);
        let head = read_head(&mut reader).unwrap();
        let mut body = Body::new(&mut reader, head.body_kind("POST").unwrap(), 100);
        let (_, _, problem) = read_all(&mut body, 100);
        assert!(problem.unwrap().contains("closed inside the body"));
        assert!(matches!(read_head(&mut Cursor::new(&b"<html>oops</html>\n\n"[..])), Err(ReadError::Malformed(_))));
        assert!(matches!(read_head(&mut Cursor::new(&b""[..])), Err(ReadError::Closed)));
    }
}
