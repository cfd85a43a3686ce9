//! One HTTP exchange: a request written on a kept-alive connection (or a new one), its response read into
//! transcript lines (a JSON body is one line, each SSE event one), and the server's own requests in a response
//! stream answered while the stream stays open, each with a POST of its own on a second connection.

use super::wire::{self, Body, BodyKind, Framing, ReadError, Request, SseCursor, SseEvent, Timed};
use super::{EXCERPT_BYTES, Endpoint};
use crate::protocol::envelope::acknowledged_subscription;
use crate::protocol::methods::{CANCELLED, LISTEN};
use crate::server::{MAX_EVENTS, MAX_LINE_BYTES};
use crate::transcript::Exchange;
use anyhow::{Result, bail};
use serde_json::Value;
use std::io::BufReader;
use std::net::Shutdown;
use std::time::{Duration, Instant};

/// Where an exchange goes: the endpoint, how long a reply may take, and whether the harness started the server
/// (a refused connection is then the server's failure, not the harness's).
pub(super) struct Server {
    pub(super) endpoint: Endpoint,
    pub(super) reply: Duration,
    pub(super) managed: bool,
}

/// What answers a request of the server's own read from a response stream (its line): the harness's answer and
/// the exchange that carried each line of it (a `ping` of the client's own may come before the answer, cancels of
/// the client's own requests instead of it), or none to leave it unanswered.
pub(super) type Answerer<'a> = dyn FnMut(&[u8]) -> Vec<Answered> + 'a;

/// A request of the server's own that the harness answered: after which of the response's lines it came, the
/// answer, and the exchange of the POST that carried it with the lines of its response.
pub(super) struct Answered {
    /// How many of the response's lines came before the answer (the request is the last of them).
    pub(super) after: usize,
    /// The answer as sent.
    pub(super) line: Vec<u8>,
    /// The answer's own exchange.
    pub(super) outcome: Outcome,
}

/// How a response body is read: the ids its stream owes responses to (`None`: a stream that is not read), those
/// of them that are `subscriptions/listen` requests (their acknowledgement is what the stream owes: the harness
/// then closes it, as a client cancels a subscription), and what answers the server's own requests in it.
pub(super) struct Reading<'r, 'a> {
    owed: Option<&'r [Value]>,
    listens: &'r [Value],
    answer: &'r mut Answerer<'a>,
    answered: &'r mut Vec<Answered>,
}

/// What one exchange brought: the record and the lines to flatten into the transcript.
#[derive(Default)]
pub(super) struct Outcome {
    pub(super) exchange: Exchange,
    pub(super) lines: Vec<(Vec<u8>, bool)>,
    /// The requests of the server's own among `lines` that the harness answered, in order.
    pub(super) answered: Vec<Answered>,
    /// True when the response stopped coming (the server hung).
    pub(super) timed_out: bool,
    /// True when the connection closed or was refused before any response.
    pub(super) lost: bool,
    /// An SSE stream that ended with responses still owed after it carried an event id: where to resume it.
    pub(super) resume: Option<Resume>,
    /// A GET's own SSE stream, not read yet: its connection and the framing of its body.
    pub(super) held: Option<(BufReader<Timed>, BodyKind)>,
}

/// What reading a response body brought: its lines, whether the response stopped coming, whether the connection
/// can be reused, and where to resume a stream that ended with responses owed.
struct BodyRead {
    lines: Vec<(Vec<u8>, bool)>,
    timed_out: bool,
    reusable: bool,
    resume: Option<Resume>,
}

/// An SSE stream to resume (basic/transports.mdx §Resumability and Redelivery: a GET with `Last-Event-ID`): the
/// last event id it carried, the reconnection time it asked for, and the responses it still owes.
#[derive(Clone, Debug)]
pub(super) struct Resume {
    /// The last event id.
    pub(super) last_id: String,
    /// The `retry` field, in milliseconds, if the stream sent one.
    pub(super) retry_ms: Option<u64>,
    /// The ids of the responses still owed.
    pub(super) owed: Vec<Value>,
}

/// Sends `request` on `to` (on the kept connection in `kept`, or a new one when there is none or the server closed
/// it) and reads the response; a kept-alive connection goes back into `kept`. An SSE response is read until the
/// responses `owed` came (`None`: its stream is not read). `answer` answers each request of the server's own read
/// from the response's stream ([`Answerer`]).
pub(super) fn exchange(
    to: &Server,
    kept: &mut Option<BufReader<Timed>>,
    request: &Request,
    owed: Option<Vec<Value>>,
    answer: &mut Answerer,
) -> Result<Outcome> {
    // The headers as they went on the wire, the framing one included.
    let mut request_headers = request.headers.clone();
    match request.framing {
        Framing::Length if request.method == "POST" || !request.body.is_empty() => {
            request_headers.push(("Content-Length".into(), request.body.len().to_string()))
        }
        Framing::Length => {}
        Framing::Chunked | Framing::ChunkedCut => request_headers.push(("Transfer-Encoding".into(), "chunked".into())),
    }
    let mut exchange = Exchange {
        method: request.method.clone(),
        request_headers,
        body_cut: request.framing == Framing::ChunkedCut,
        ..Exchange::default()
    };
    for attempt in 0..2 {
        let reused = kept.is_some();
        let mut connection = match kept.take() {
            Some(connection) => connection,
            None => match to.endpoint.connect() {
                Ok(stream) => BufReader::new(Timed::new(stream, to.reply)),
                Err(error) => {
                    if to.managed {
                        exchange.problem = Some(format!("the connection was refused: {error}"));
                        return Ok(Outcome { exchange, lost: true, ..Outcome::default() });
                    }
                    bail!("cannot connect to {}: {error}", to.endpoint.url());
                }
            },
        };
        let deadline = Instant::now() + to.reply;
        connection.get_mut().deadline(deadline);
        let written = wire::write_request(connection.get_mut().stream(), request);
        if request.framing == Framing::ChunkedCut {
            let _ = connection.get_mut().stream().shutdown(Shutdown::Write);
        }
        let head = match written.map_err(ReadError::from).and_then(|_| wire::read_head(&mut connection)) {
            Ok(head) => head,
            Err(ReadError::Closed | ReadError::Io(_)) if reused && attempt == 0 => continue,
            Err(ReadError::Timeout) => {
                exchange.problem = Some("no response came (timeout)".into());
                return Ok(Outcome { exchange, timed_out: true, ..Outcome::default() });
            }
            Err(ReadError::Closed) => {
                exchange.problem = Some("the connection closed without a response".into());
                return Ok(Outcome { exchange, lost: true, ..Outcome::default() });
            }
            Err(ReadError::Io(error)) => {
                exchange.problem = Some(format!("the connection failed: {error}"));
                return Ok(Outcome { exchange, lost: true, ..Outcome::default() });
            }
            Err(ReadError::Malformed(why)) => {
                exchange.problem = Some(why);
                return Ok(Outcome { exchange, ..Outcome::default() });
            }
        };
        exchange.status = head.status;
        exchange.response_headers = head.headers.clone();
        // A GET's own SSE stream is handed back to be read beside the POSTs ([`super::listening`]).
        if request.method == "GET"
            && owed.is_none()
            && head.status == 200
            && exchange.media_type().as_deref() == Some("text/event-stream")
            && let Ok(kind) = head.body_kind(&request.method)
        {
            return Ok(Outcome { exchange, held: Some((connection, kind)), ..Outcome::default() });
        }
        let mut answered = Vec::new();
        let listens = if owed.is_some() { listen_ids(&request.body) } else { Vec::new() };
        let read = Reading { owed: owed.as_deref(), listens: &listens, answer, answered: &mut answered };
        let BodyRead { lines, timed_out, reusable, resume } = read_body(&mut connection, &head, &mut exchange, read);
        if reusable && head.keeps_alive() && request.framing != Framing::ChunkedCut {
            *kept = Some(connection);
        }
        return Ok(Outcome { exchange, lines, answered, timed_out, lost: false, resume, held: None });
    }
    unreachable!("the second attempt always returns")
}

/// Reads a response body into transcript lines: a JSON body is one line, each SSE event one line (read until the
/// response to the request came when `until_reply`; a GET's stream is not read), anything else an excerpt.
/// Returns the lines, whether the response stopped coming, and whether the connection can be reused.
fn read_body(connection: &mut BufReader<Timed>, head: &wire::Head, exchange: &mut Exchange, read: Reading) -> BodyRead {
    let Reading { owed, listens, answer, answered: answers } = read;
    let kind = match head.body_kind(&exchange.method) {
        Ok(kind) => kind,
        Err(why) => {
            exchange.problem = Some(why);
            return BodyRead { lines: Vec::new(), timed_out: false, reusable: false, resume: None };
        }
    };
    let media = exchange.media_type();
    let mut body = Body::new(connection, kind, MAX_LINE_BYTES);
    let mut lines = Vec::new();
    match media.as_deref() {
        Some("text/event-stream") => {
            let Some(owed) = owed else { return BodyRead { lines, timed_out: false, reusable: false, resume: None } };
            let mut answered = vec![false; owed.len()];
            let mut any = false;
            let mut events = BufReader::new(&mut body);
            let mut cursor = SseCursor::default();
            loop {
                match wire::read_event(&mut events, MAX_LINE_BYTES, &mut cursor) {
                    Ok(SseEvent::End) => break,
                    Ok(SseEvent::Data { data, truncated }) => {
                        if data.trim_ascii().is_empty() {
                            continue;
                        }
                        if let Some(id) = response_id(&data) {
                            any = true;
                            for (owed, answered) in owed.iter().zip(answered.iter_mut()) {
                                *answered |= *owed == id;
                            }
                        }
                        if !listens.is_empty()
                            && let Some(id) = acknowledged_subscription(&data).map(|id| id.to_value())
                        {
                            for (owed, answered) in owed.iter().zip(answered.iter_mut()) {
                                *answered |= *owed == id && listens.contains(owed);
                            }
                        }
                        let request = !truncated && response_id(&data).is_none();
                        lines.push((data, truncated));
                        // A request of the server's own is answered while its stream stays open. A client that
                        // cancels a request of its own instead owes it nothing more (cancellation.mdx).
                        let replies = if request { answer(&lines[lines.len() - 1].0) } else { Vec::new() };
                        for reply in replies {
                            let cancelled = cancelled_ids(&reply.line);
                            for (owed, answered) in owed.iter().zip(answered.iter_mut()) {
                                *answered |= cancelled.contains(owed);
                            }
                            answers.push(Answered { after: lines.len(), ..reply });
                        }
                        // The responses to the body's requests end its stream; the rest is not read. (One owed
                        // response is the one that comes, whatever its id.)
                        let done = answered.iter().all(|a| *a) && (any || !owed.is_empty());
                        if done || owed.len() == 1 && any || lines.len() >= MAX_EVENTS {
                            exchange.event_ids = cursor.ids;
                            return BodyRead { lines, timed_out: false, reusable: false, resume: None };
                        }
                    }
                    Err(error) => {
                        // A stream still open when nothing is owed (every request cancelled) is closed here: no
                        // response will come, and none is missing.
                        let stopped =
                            matches!(error.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock);
                        let timed_out = stopped && !answered.iter().all(|a| *a);
                        if timed_out || !stopped {
                            exchange.problem = Some(wire::describe(&error));
                        }
                        exchange.event_ids = cursor.ids;
                        return BodyRead { lines, timed_out, reusable: false, resume: None };
                    }
                }
            }
            drop(events);
            exchange.body_len = body.len();
            exchange.event_ids = cursor.ids.clone();
            // The stream ended with responses still owed: a server that closed the connection to be polled
            // (basic/transports.mdx: after an event with an id it MAY close it) is asked again from its last id.
            let still: Vec<Value> =
                owed.iter().zip(&answered).filter(|(_, answered)| !**answered).map(|(id, _)| id.clone()).collect();
            let resume = cursor.last_id.filter(|_| !still.is_empty()).map(|last_id| Resume {
                last_id,
                retry_ms: cursor.retry_ms,
                owed: still,
            });
            BodyRead { lines, timed_out: false, reusable: body.complete(), resume }
        }
        _ => {
            let json = media.as_deref() == Some("application/json");
            let limit = if json { MAX_LINE_BYTES } else { EXCERPT_BYTES.max(64 << 10) };
            let (bytes, truncated, problem) = wire::read_all(&mut body, limit);
            exchange.body_len = body.len();
            let timed_out = problem.as_deref().is_some_and(|p| p.contains("timeout"));
            if !truncated {
                exchange.problem = problem;
            }
            // A JSON body (or one without a type on a success) answering a POST: the JSON-RPC rules judge it.
            let judged = json || (200..300).contains(&exchange.status) && media.is_none();
            if judged && exchange.method == "POST" && truncated {
                lines.push((bytes, true));
            } else if judged && exchange.method == "POST" && !bytes.trim_ascii().is_empty() {
                lines.push((bytes.trim_ascii().to_vec(), false));
            } else {
                exchange.excerpt = bytes[..bytes.len().min(EXCERPT_BYTES)].to_vec();
            }
            BodyRead { lines, timed_out, reusable: body.complete() && !truncated, resume: None }
        }
    }
}

/// The id of an SSE event's data when it is a JSON-RPC response (`null` when it has none).
fn response_id(data: &[u8]) -> Option<Value> {
    let value = serde_json::from_slice::<Value>(data).ok()?;
    let response = value.get("method").is_none() && (value.get("result").is_some() || value.get("error").is_some());
    response.then(|| value.get("id").cloned().unwrap_or(Value::Null))
}

/// The messages a POST body carries: a batch's items, or the one message; none when it is not JSON.
fn messages(body: &[u8]) -> Vec<Value> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(items)) => items,
        Ok(other) => vec![other],
        Err(_) => Vec::new(),
    }
}

/// The ids of the `subscriptions/listen` requests a POST body carries.
fn listen_ids(body: &[u8]) -> Vec<Value> {
    messages(body)
        .into_iter()
        .filter(|item| item.get("method").and_then(Value::as_str) == Some(LISTEN))
        .filter_map(|item| item.get("id").cloned())
        .collect()
}

/// The ids of the requests a POST body carries (one request, or a batch's), less those a
/// `notifications/cancelled` in the same body cancels: the responses its stream owes.
pub(super) fn owed_ids(body: &[u8]) -> Vec<Value> {
    let items = messages(body);
    let cancelled = cancelled_in(&items);
    items
        .iter()
        .filter(|item| item.get("method").is_some())
        .filter_map(|item| item.get("id"))
        .filter(|id| !cancelled.contains(id))
        .cloned()
        .collect()
}

/// The request ids the `notifications/cancelled` a POST body carries name.
fn cancelled_ids(body: &[u8]) -> Vec<Value> {
    cancelled_in(&messages(body))
}

/// The request ids the `notifications/cancelled` among `items` name.
fn cancelled_in(items: &[Value]) -> Vec<Value> {
    items
        .iter()
        .filter(|item| item.get("method").and_then(Value::as_str) == Some(CANCELLED) && item.get("id").is_none())
        .filter_map(|item| item.get("params")?.get("requestId").cloned())
        .collect()
}
