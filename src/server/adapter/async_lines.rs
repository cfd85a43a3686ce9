//! Async servers in-process: any server that speaks one JSON-RPC message per line over tokio's [`AsyncRead`] and
//! [`AsyncWrite`](tokio::io::AsyncWrite) (hand-written, or on any Rust MCP crate) becomes an [`InProcessServer`]
//! with no wrapper code.
//!
//! Each connection is a fresh service on its own current-thread tokio runtime whose clock is paused, joined to the
//! harness by an in-memory [`tokio::io::duplex`] stream. The harness writes a line, then lets the runtime run until
//! every task is idle: with paused time, tokio advances the virtual clock only when no task can make progress, so a
//! virtual timer ([`SETTLE`] after a line, [`REPLY`] at a sync point) fires exactly when the server has done all it
//! will do in reaction, and never waits on the wall clock. Runs are fast and repeatable.
//!
//! As over stdio, the service ending before the script is done is a finding (the server exited: code 0 for `()` or
//! `Ok`, 1 for `Err`, see [`ServiceExit`]), and so is a panic in the service itself (the server exited with code
//! 101, the panic's location and message as its stderr). A panic in a task it spawned (where rmcp runs each request
//! handler) kills that task only: the server goes on, the request the task handled is never answered, and the
//! panic's location and message are the connection's [`failures`](ServerConnection::failures). When the client is
//! done, the harness waits [`HANG_WAIT`] of virtual time for the replies still owed: a slow handler answers within
//! it, one that never returns does not.

use crate::server::{InProcessServer, ServerConnection, Status};
use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, PanicHookInfo};
use std::pin::Pin;
use std::sync::Once;
use std::task::Poll;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWriteExt, DuplexStream, ReadBuf};
use tokio::runtime::Runtime;
use tokio::task::LocalSet;

/// Virtual time a server gets to react to one line before the harness reads what it wrote.
pub const SETTLE: Duration = Duration::from_millis(20);

/// Virtual time a server gets at a sync point (and for taking one line of input) before the harness goes on.
pub const REPLY: Duration = Duration::from_secs(2);

/// Virtual time the server gets, once the client is done, for every reply it still owes: far beyond any client's
/// timeout, and free (the clock jumps over it when every task waits).
pub const HANG_WAIT: Duration = Duration::from_secs(600);

/// The in-memory stream's buffer, each way.
const CAPACITY: usize = 64 << 10;

/// A line the server writes is cut here (as over stdio).
const MAX_LINE_BYTES: usize = crate::server::MAX_LINE_BYTES;

/// Output in reaction to one line beyond this counts as a server that will never stop writing.
const MAX_REACTION_BYTES: usize = 64 << 20;

/// What a service's future returns, as the exit code of the process it would be.
pub trait ServiceExit {
    /// The exit code: what `main` returning this value gives.
    fn exit_code(self) -> i32;
}

impl ServiceExit for () {
    fn exit_code(self) -> i32 {
        0
    }
}

impl ServiceExit for i32 {
    fn exit_code(self) -> i32 {
        self
    }
}

impl<T, E> ServiceExit for Result<T, E> {
    fn exit_code(self) -> i32 {
        if self.is_ok() { 0 } else { 1 }
    }
}

/// An async server as an in-process server: `F` serves one connection over the stream it is given (read requests,
/// write replies, one message per line) and is called once per conversation.
///
/// ```
/// use mcp_wirefuzz::server::async_lines::AsyncLines;
/// use mcp_wirefuzz::transcript::{Event, Input};
/// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
///
/// // A server that answers every request with an empty result (a real one would parse and dispatch).
/// let server = AsyncLines(|stream: tokio::io::DuplexStream| async move {
///     let (input, mut output) = tokio::io::split(stream);
///     let mut lines = BufReader::new(input).lines();
///     while let Some(line) = lines.next_line().await? {
///         let request: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
///         if let Some(id) = request.get("id") {
///             let reply = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}});
///             output.write_all(format!("{reply}\n").as_bytes()).await?;
///         }
///     }
///     Ok::<(), std::io::Error>(())
/// });
/// let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec();
/// let transcript = mcp_wirefuzz::server::run_in_process(&server, &[Input::Line(ping)]);
/// let reply = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec();
/// assert_eq!(transcript.events[1], Event::Received { line: reply, truncated: false });
/// ```
#[derive(Clone, Debug, Default)]
pub struct AsyncLines<F>(pub F);

impl<F, Fut> InProcessServer for AsyncLines<F>
where
    F: Fn(DuplexStream) -> Fut,
    Fut: Future<Output: ServiceExit> + 'static,
{
    type Connection = LinesConnection;

    fn connect(&self) -> LinesConnection {
        LinesConnection::open(&self.0)
    }
}

/// One connection of an async server: its runtime (with a local task set, so a server may `spawn_local`), the
/// harness's end of the stream, and the service.
pub struct LinesConnection {
    // Dropped in this order: the service (inside the runtime, see Drop), its local tasks, the stream, the runtime.
    service: Option<Pin<Box<dyn Future<Output = i32>>>>,
    local: LocalSet,
    client: DuplexStream,
    runtime: Runtime,
    exit: Option<i32>,
    lines: LineBuffer,
    /// The panics of tasks the service spawned, since the harness last took them.
    failures: Vec<String>,
}

impl Drop for LinesConnection {
    fn drop(&mut self) {
        let _context = self.runtime.enter();
        self.service = None;
    }
}

impl LinesConnection {
    /// Starts a service: a fresh paused current-thread runtime, a fresh stream, and `serve` called on the server's
    /// end of it (inside the runtime, so it may spawn tasks). Nothing runs until the first line. For an adapter of
    /// your own (as `server::rmcp::Rmcp` is):
    ///
    /// ```
    /// use mcp_wirefuzz::server::async_lines::LinesConnection;
    /// use mcp_wirefuzz::server::{InProcessServer, ServerConnection, Status};
    ///
    /// struct Silent;
    ///
    /// impl InProcessServer for Silent {
    ///     type Connection = LinesConnection;
    ///
    ///     fn connect(&self) -> LinesConnection {
    ///         // Reads nothing, answers nothing, ends at once: exit code 0.
    ///         LinesConnection::open(|_stream| async {})
    ///     }
    /// }
    ///
    /// let mut out = Vec::new();
    /// assert_eq!(Silent.connect().receive(b"{}", &mut out), Status::Exited(0));
    /// ```
    pub fn open<Fut>(serve: impl FnOnce(DuplexStream) -> Fut) -> LinesConnection
    where
        Fut: Future<Output: ServiceExit> + 'static,
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread runtime needs no threads and cannot fail to start");
        let local = LocalSet::new();
        let (client, server) = tokio::io::duplex(CAPACITY);
        let service = {
            let (_runtime, _local) = (runtime.enter(), local.enter());
            let future = serve(server);
            Box::pin(async move { future.await.exit_code() }) as Pin<Box<dyn Future<Output = i32>>>
        };
        let lines = LineBuffer::default();
        LinesConnection { service: Some(service), local, client, runtime, exit: None, lines, failures: Vec::new() }
    }

    /// Sends `input` (when given), then runs the server until it is idle for `wait` of virtual time; appends what
    /// it wrote to `out`.
    /// With `once`, it waits `wait` a single time and reads what came, however much that was.
    fn step(&mut self, input: Option<&[u8]>, wait: Duration, once: bool, out: &mut Vec<Vec<u8>>) -> Status {
        if let Some(code) = self.exit {
            return Status::Exited(code);
        }
        let LinesConnection { runtime, local, client, service, lines, failures, .. } = self;
        let Some(running) = service.as_mut() else { return Status::Hung };
        let react = react(running, client, lines, Step { input, wait, once }, out);
        let (reaction, panics) = watch_panics(|| local.block_on(runtime, react));
        failures.extend(panics);
        match reaction {
            Reaction::Idle => Status::Running,
            Reaction::Stuck => Status::Hung,
            Reaction::Ended(code) => {
                *service = None;
                self.exit = Some(code);
                Status::Exited(code)
            }
        }
    }
}

impl ServerConnection for LinesConnection {
    fn receive(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) -> Status {
        self.step(Some(line), SETTLE, false, out)
    }

    fn release(&mut self, out: &mut Vec<Vec<u8>>) {
        let _ = self.step(None, REPLY, false, out);
    }

    fn close(&mut self, out: &mut Vec<Vec<u8>>) -> Option<u64> {
        self.release(out);
        match self.step(None, HANG_WAIT, true, out) {
            Status::Running => Some(HANG_WAIT.as_millis() as u64),
            Status::Exited(_) | Status::Hung => None,
        }
    }

    fn failures(&mut self) -> Vec<String> {
        std::mem::take(&mut self.failures)
    }
}

/// What the harness does in one step: the line it writes (if any), how long the server must stay idle before the
/// harness reads on, and whether it waits that long only once.
struct Step<'a> {
    input: Option<&'a [u8]>,
    wait: Duration,
    once: bool,
}

/// How a server reacted to one line.
enum Reaction {
    /// It did all it would and waits for more input.
    Idle,
    /// It took no input for [`REPLY`], or would not stop writing.
    Stuck,
    /// The service ended with this exit code.
    Ended(i32),
}

/// Writes the step's input and a newline, then runs until the server is idle for the step's wait, reading what it
/// writes.
async fn react(
    service: &mut Pin<Box<dyn Future<Output = i32>>>,
    client: &mut DuplexStream,
    lines: &mut LineBuffer,
    step: Step<'_>,
    out: &mut Vec<Vec<u8>>,
) -> Reaction {
    let Step { input, wait, once } = step;
    if let Some(line) = input {
        let mut framed = Vec::with_capacity(line.len() + 1);
        framed.extend_from_slice(line);
        framed.push(b'\n');
        tokio::select! {
            biased;
            code = &mut *service => {
                read_available(client, lines, out).await;
                lines.finish(out);
                return Reaction::Ended(code);
            }
            // A server that closed its input gets the line nowhere, as a process that closed stdin.
            _ = client.write_all(&framed) => {}
            _ = tokio::time::sleep(REPLY) => return Reaction::Stuck,
        }
    }
    let mut received = 0;
    loop {
        tokio::select! {
            biased;
            code = &mut *service => {
                read_available(client, lines, out).await;
                lines.finish(out);
                return Reaction::Ended(code);
            }
            _ = tokio::time::sleep(wait) => {}
        }
        // The server may have stopped because the stream was full: read, and let it go on until it writes no more.
        match read_available(client, lines, out).await {
            0 => return Reaction::Idle,
            _ if once => return Reaction::Idle,
            n => received += n,
        }
        if received > MAX_REACTION_BYTES {
            return Reaction::Stuck;
        }
    }
}

/// Reads every byte the server has written so far without waiting; returns how many.
async fn read_available(client: &mut DuplexStream, lines: &mut LineBuffer, out: &mut Vec<Vec<u8>>) -> usize {
    let mut buffer = [0u8; 8192];
    let mut total = 0;
    loop {
        let n = poll_fn(|cx| {
            let mut read = ReadBuf::new(&mut buffer);
            match Pin::new(&mut *client).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) => Poll::Ready(read.filled().len()),
                Poll::Ready(Err(_)) | Poll::Pending => Poll::Ready(0),
            }
        })
        .await;
        if n == 0 {
            return total;
        }
        total += n;
        lines.push(&buffer[..n], out);
    }
}

/// The bytes of a line the server has not finished yet.
#[derive(Default)]
struct LineBuffer {
    partial: Vec<u8>,
    /// The current line passed [`MAX_LINE_BYTES`] and was cut: the rest of it is dropped.
    skipping: bool,
}

impl LineBuffer {
    /// Adds bytes the server wrote; appends every line they complete to `out`.
    fn push(&mut self, mut bytes: &[u8], out: &mut Vec<Vec<u8>>) {
        while !bytes.is_empty() {
            let end = bytes.iter().position(|&b| b == b'\n');
            let chunk = &bytes[..end.unwrap_or(bytes.len())];
            if !self.skipping {
                let room = MAX_LINE_BYTES - self.partial.len();
                self.partial.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if chunk.len() > room {
                    out.push(std::mem::take(&mut self.partial));
                    self.skipping = true;
                }
            }
            match end {
                Some(end) => {
                    if !std::mem::take(&mut self.skipping) {
                        out.push(std::mem::take(&mut self.partial));
                    }
                    bytes = &bytes[end + 1..];
                }
                None => bytes = &[],
            }
        }
    }

    /// The server ended: an unfinished line counts, as a process's last line without a newline does.
    fn finish(&mut self, out: &mut Vec<Vec<u8>>) {
        if !self.partial.is_empty() {
            out.push(std::mem::take(&mut self.partial));
        }
        self.skipping = false;
    }
}

thread_local! {
    /// True while this thread runs a server for the harness.
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    /// The panics on this thread while watching, each its location and message.
    static PANICKED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` (which drives a server's runtime on this thread) and returns what it returned with the location and
/// message of every panic in a task it ran (which tokio catches: the task ends, the server goes on). A panic out of
/// `f` itself (the service) goes on as a panic carrying the first panic's location and message (the harness records
/// it as the server crashing).
///
/// A panic hook, installed once, records panics on this thread while the server runs instead of handing them to
/// the hook that was there before (which still sees every other panic): the harness reports them itself, and a
/// fuzzer's hook that aborts on any panic sees the harness's report instead.
fn watch_panics<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            if WATCHING.get() {
                PANICKED.with_borrow_mut(|panics| panics.push(info.to_string()));
            } else {
                previous(info);
            }
        }));
    });
    WATCHING.set(true);
    PANICKED.take();
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(f));
    WATCHING.set(false);
    let mut panics = PANICKED.take();
    match outcome {
        Ok(value) => (value, panics),
        Err(payload) if panics.is_empty() => std::panic::resume_unwind(payload),
        Err(_) => std::panic::resume_unwind(Box::new(panics.swap_remove(0))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::run_in_process;
    use crate::transcript::{Ending, Event, Input, Note};
    use tokio::io::{AsyncBufReadExt, BufReader};

    /// Echoes each line back; `late` after 500 ms of virtual time for `slow`, `glacial` after 5 minutes for
    /// `glacial`, never for `never`; ends on `quit`, panics in a spawned task on `panic` and in the service itself
    /// on `die`, writes a huge line on `big`.
    async fn echo(stream: DuplexStream) -> std::io::Result<()> {
        let (input, output) = tokio::io::split(stream);
        let output = std::sync::Arc::new(tokio::sync::Mutex::new(output));
        let mut lines = BufReader::new(input).lines();
        while let Some(line) = lines.next_line().await? {
            match line.as_str() {
                "quit" => return Ok(()),
                "fail" => return Err(std::io::Error::other("fail")),
                "panic" => {
                    tokio::spawn(async { panic!("task bug") });
                }
                "die" => panic!("service bug"),
                "never" => {
                    tokio::spawn(std::future::pending::<()>());
                }
                "glacial" => {
                    let output = output.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_secs(300)).await;
                        output.lock().await.write_all(b"glacial\n").await.unwrap();
                    });
                }
                "big" => {
                    let big = vec![b'x'; MAX_LINE_BYTES + 10];
                    output.lock().await.write_all(&[&big[..], b"\nafter\n"].concat()).await?;
                }
                "slow" => {
                    let output = output.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        output.lock().await.write_all(b"late\n").await.unwrap();
                    });
                }
                _ => output.lock().await.write_all(format!("{line}\n").as_bytes()).await?,
            }
        }
        Ok(())
    }

    fn inputs(lines: &[&str]) -> Vec<Input> {
        lines.iter().map(|l| if *l == "--" { Input::Sync } else { Input::Line(l.as_bytes().to_vec()) }).collect()
    }

    fn received(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Received { line, .. } => Some(String::from_utf8_lossy(&line[..line.len().min(10)]).into()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn each_reply_follows_the_line_that_caused_it_and_late_ones_come_at_the_sync() {
        let transcript = run_in_process(&AsyncLines(echo), &inputs(&["a", "slow", "b", "--", "c"]));
        assert_eq!(transcript.ending, Ending::Closed);
        let shown: Vec<String> = transcript
            .events
            .iter()
            .map(|e| match e {
                Event::Sent(line) => format!(">{}", String::from_utf8_lossy(line)),
                Event::Received { line, .. } => format!("<{}", String::from_utf8_lossy(line)),
                Event::Sync => "--".into(),
                Event::Http(exchange) => format!("ht {}", exchange.summary()),
                Event::Note(note) => format!("!! {}", note.summary()),
            })
            .collect();
        let waited = format!("!! waited {} ms for any reply still owed", HANG_WAIT.as_millis());
        assert_eq!(shown, [">a", "<a", ">slow", ">b", "<b", "<late", "--", ">c", "<c", &waited]);
    }

    #[test]
    fn a_reply_within_the_long_wait_at_the_end_is_seen_and_one_never_sent_is_not() {
        let glacial = run_in_process(&AsyncLines(echo), &inputs(&["glacial", "never", "--", "a"]));
        assert_eq!(received(&glacial.events), ["a", "glacial"]);
        let last = glacial.events.last().unwrap();
        assert_eq!(*last, Event::Note(Note::Waited { ms: HANG_WAIT.as_millis() as u64 }));
    }

    #[test]
    fn an_early_end_and_a_panic_in_the_service_end_the_conversation_and_a_task_panic_is_noted() {
        let quit = run_in_process(&AsyncLines(echo), &inputs(&["a", "quit", "b"]));
        assert!(matches!(quit.ending, Ending::Exited { code: Some(0), .. }), "{quit:?}");
        assert_eq!(quit.events.len(), 3);
        let failed = run_in_process(&AsyncLines(echo), &inputs(&["fail", "b"]));
        assert!(matches!(failed.ending, Ending::Exited { code: Some(1), .. }), "{failed:?}");
        let died = run_in_process(&AsyncLines(echo), &inputs(&["a", "die", "b"]));
        let Ending::Exited { code: Some(101), stderr_tail, .. } = died.ending else { panic!("{died:?}") };
        assert!(String::from_utf8_lossy(&stderr_tail).contains("service bug"));
        // A task's panic kills the task: the server goes on, the panic is noted after the line that caused it.
        let panicked = run_in_process(&AsyncLines(echo), &inputs(&["a", "panic", "b"]));
        assert_eq!(panicked.ending, Ending::Closed);
        assert_eq!(received(&panicked.events), ["a", "b"]);
        let Event::Note(Note::Failure(failure)) = &panicked.events[3] else { panic!("{panicked:?}") };
        assert!(failure.contains("task bug") && failure.contains("async_lines.rs:"), "{failure}");
        // The next conversation on the same thread is not blamed for that panic.
        let clean = run_in_process(&AsyncLines(echo), &inputs(&["a"]));
        assert!(!clean.events.iter().any(|e| matches!(e, Event::Note(Note::Failure(_)))), "{clean:?}");
    }

    #[test]
    fn a_server_that_reads_nothing_or_never_ends_its_line_does_not_hang_the_harness() {
        let deaf = AsyncLines(|stream: DuplexStream| async move {
            let _keep = stream;
            std::future::pending::<()>().await
        });
        let big = "y".repeat(CAPACITY * 2);
        let transcript = run_in_process(&deaf, &inputs(&["a", &big, "b"]));
        assert_eq!(transcript.ending, Ending::Hung { waited_ms: 0 });
        let long = run_in_process(&AsyncLines(echo), &inputs(&["big", "c"]));
        assert_eq!(received(&long.events), ["xxxxxxxxxx", "after", "c"]);
        let Event::Received { line, .. } = &long.events[1] else { panic!() };
        assert_eq!(line.len(), MAX_LINE_BYTES);
    }

    #[test]
    fn conversations_are_fast_and_repeatable() {
        let lines = inputs(&["a", "slow", "b", "--", "c", "slow", "--"]);
        let first = run_in_process(&AsyncLines(echo), &lines);
        let started = std::time::Instant::now();
        for _ in 0..200 {
            assert_eq!(run_in_process(&AsyncLines(echo), &lines), first);
        }
        assert!(started.elapsed() < Duration::from_secs(5), "virtual time must not wait: {:?}", started.elapsed());
    }
}
