//! A server under test over Streamable HTTP: every line of a conversation becomes its own POST to the MCP
//! endpoint, with the headers its era calls for, and what comes back (a JSON body or an SSE stream) is flattened
//! into the transcript's received lines, so the JSON-RPC and MCP rules judge it as they judge stdio; each exchange
//! is recorded too ([`Event::Http`]: method, headers, status), for the HTTP rules.
//!
//! - Modern era (2026-07-28, the conversation's first request carries the envelope): `MCP-Protocol-Version` equal
//!   to the body's envelope version, `Mcp-Method`, and `Mcp-Name` for `tools/call`, `resources/read` and
//!   `prompts/get` (Base64 sentinel where the value is not plain ASCII).
//! - Legacy era (2025-03-26 to 2025-11-25): `initialize` first; the `Mcp-Session-Id` its response carries goes on
//!   every later request, with `MCP-Protocol-Version` set to the negotiated version (2025-06-18 and later); the
//!   session is ended with DELETE after the last line.
//!
//! A request of the server's own in a response stream is answered at once ([`exchange`]), in a POST of its own.
//!
//! Lines starting with `@http ` are directives ([`Directive`]), never sent: a GET or DELETE of their own, or a
//! change to the next POST (a header set, added, dropped; a chunked or cut body). They are ordinary lines of the
//! conversation, so case files, the generator and shrinking handle them like any other.
//!
//! With a command, the server is started as a child process (in a process group of its own), the harness waits
//! until its port answers, starts it again after it crashed, and stops it when the last target is dropped.

mod exchange;
mod listening;
pub mod mutate;
mod tool_headers;
pub mod wire;

use super::lines::{Tail, read_tail};
use crate::protocol::client::Client;
use crate::protocol::envelope::{self, PROTOCOL_VERSION_KEY};
use crate::protocol::era::LATEST_MODERN_VERSION;
use crate::protocol::http::{header_value, mirrored_name, param_values};
use crate::protocol::methods::{INITIALIZE, TOOLS_CALL};
use crate::protocol::{Era, Frame};
use crate::server::{CutShort, MAX_EVENTS, STDERR_TAIL_BYTES, ServerCommand, Target, Timeouts};
use crate::transcript::{Ending, Event, Input, Note, Transcript, seen};
use anyhow::{Context, Result, bail};
use exchange::{Answered, Outcome};
use listening::Listening;
use serde_json::Value;
use std::io::BufReader;
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use wire::{Framing, Request, Timed};

/// The prefix of a directive line.
pub const DIRECTIVE: &[u8] = b"@http ";

/// How long a GET stream still open at the end of a conversation is given to end (a server ends its GET streams
/// with the session) before the harness closes it.
const LISTEN_GRACE: Duration = Duration::from_millis(200);
/// How much of a body that is not JSON-RPC (an HTML page) is kept for the report.
const EXCERPT_BYTES: usize = 512;
/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How many times one POST's stream is resumed (a server that closes the connection after every event is polled
/// this many times, then what it still owes is missing).
const MAX_RESUMES: usize = 16;

/// True when the header `name` is the one `pattern` names: the same name in any case, or, for a pattern ending in
/// `*`, any name that starts with the rest of it (`Mcp-Param-*`).
fn named(name: &str, pattern: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix)),
        None => name.eq_ignore_ascii_case(pattern),
    }
}

/// An `http://HOST:PORT/PATH` endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The host as written.
    pub host: String,
    /// The port (80 when not written).
    pub port: u16,
    /// The path, `/` when not written.
    pub path: String,
}

impl Endpoint {
    /// Parses `http://HOST[:PORT][/PATH]`; https and anything else are refused with a clear error.
    pub fn parse(url: &str) -> Result<Endpoint> {
        let Some(rest) = url.strip_prefix("http://") else {
            bail!("--url takes http://HOST:PORT/PATH (https is not supported), not `{url}`");
        };
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
                (host, port.parse::<u16>().with_context(|| format!("bad port in `{url}`"))?)
            }
            _ => (authority, 80),
        };
        if host.is_empty() {
            bail!("no host in `{url}`");
        }
        Ok(Endpoint { host: host.to_string(), port, path: path.to_string() })
    }

    /// `HOST:PORT`, as the Host header carries it.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The URL back.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.authority(), self.path)
    }

    fn connect(&self) -> std::io::Result<TcpStream> {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "the host resolves to no address");
        for address in (host, self.port).to_socket_addrs()? {
            match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                Err(error) => last = error,
            }
        }
        Err(last)
    }
}

/// A server reached over HTTP: its endpoint, and the command that starts it when the harness runs it.
#[derive(Clone, Debug)]
pub struct HttpSpec {
    /// The MCP endpoint.
    pub endpoint: Endpoint,
    /// The server to start, when the harness starts it.
    pub command: Option<ServerCommand>,
    managed: Option<Arc<Managed>>,
}

impl PartialEq for HttpSpec {
    fn eq(&self, other: &HttpSpec) -> bool {
        self.endpoint == other.endpoint && self.command == other.command
    }
}

impl Eq for HttpSpec {}

impl HttpSpec {
    /// The server at `url`, started with `command` when one is given (started at the first conversation; every
    /// target made from this spec, or a clone of it, shares the one process).
    pub fn new(url: &str, command: Option<ServerCommand>) -> Result<HttpSpec> {
        let endpoint = Endpoint::parse(url)?;
        let managed = command.clone().map(|command| {
            Arc::new(Managed { command, endpoint: endpoint.clone(), running: Mutex::new(None), started: Mutex::new(0) })
        });
        Ok(HttpSpec { endpoint, command, managed })
    }

    /// A target driving this server.
    pub fn target(&self, timeouts: Timeouts) -> HttpTarget {
        HttpTarget { spec: self.clone(), timeouts, connection: None, tool_headers: None }
    }

    /// `http://... (started as `cmd args`)`.
    pub fn describe(&self) -> String {
        match &self.command {
            Some(command) => format!("{} (started as `{}`)", self.endpoint.url(), command.argv().join(" ")),
            None => self.endpoint.url(),
        }
    }
}

/// The server process the harness runs, shared by every target of a run.
#[derive(Debug)]
struct Managed {
    command: ServerCommand,
    endpoint: Endpoint,
    running: Mutex<Option<Running>>,
    /// How many times the server was started.
    started: Mutex<u64>,
}

#[derive(Debug)]
struct Running {
    child: Child,
    output: Arc<Mutex<Tail>>,
}

impl Running {
    fn tail(&self) -> Vec<u8> {
        self.output.lock().map(|tail| tail.bytes.clone()).unwrap_or_default()
    }

    fn stop(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
        if let Ok(None) = self.child.try_wait() {
            // The whole process group: a launcher (npx, uv run) leaves the server itself behind otherwise.
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        crate::server::children::untrack(group);
    }
}

impl Managed {
    /// Starts the server unless it runs, and waits until its port answers.
    fn ensure(&self, startup: Duration) -> Result<()> {
        let mut running = self.running.lock().map_err(|_| anyhow::anyhow!("server state poisoned"))?;
        if let Some(server) = running.as_mut() {
            if let Ok(None) = server.child.try_wait() {
                return Ok(());
            }
            server.stop();
            *running = None;
        }
        if *self.started.lock().map_err(|_| anyhow::anyhow!("poisoned"))? == 0 && self.endpoint.connect().is_ok() {
            bail!(
                "something already answers on {} before the server was started; stop it or choose another port",
                self.endpoint.authority()
            );
        }
        let mut command = Command::new(&self.command.program);
        command.args(&self.command.args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        crate::server::children::unblock_signals(command.process_group(0));
        let mut child = command.spawn().with_context(|| format!("cannot start server `{}`", self.command.program))?;
        // Ended with the stdio servers when a signal stops the harness (its own group: Ctrl-C does not reach it).
        crate::server::children::track(nix::unistd::Pid::from_raw(child.id() as i32));
        *self.started.lock().map_err(|_| anyhow::anyhow!("poisoned"))? += 1;
        let output = Arc::new(Mutex::new(Tail::default()));
        for stream in [
            child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child.stderr.take().map(|s| Box::new(s) as _),
        ]
        .into_iter()
        .flatten()
        {
            let tail = Arc::clone(&output);
            thread::spawn(move || read_tail(stream, &tail, STDERR_TAIL_BYTES));
        }
        let mut server = Running { child, output };
        let until = Instant::now() + startup;
        loop {
            if self.endpoint.connect().is_ok() {
                *running = Some(server);
                return Ok(());
            }
            let exited = server.child.try_wait().ok().flatten();
            if exited.is_some() || Instant::now() >= until {
                thread::sleep(Duration::from_millis(100));
                let tail = String::from_utf8_lossy(&server.tail()).into_owned();
                server.stop();
                let why = match exited {
                    Some(status) => format!("it exited ({status})"),
                    None => format!("nothing answered within {} ms", startup.as_millis()),
                };
                bail!(
                    "the server `{}` never answered on {}: {why}; its output ends:\n{}",
                    self.command.argv().join(" "),
                    self.endpoint.authority(),
                    tail.trim_end()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The ending of a server that exited, if it did (it is started again by the next [`Managed::ensure`]).
    fn exited(&self) -> Option<Ending> {
        let mut running = self.running.lock().ok()?;
        let server = running.as_mut()?;
        let status = server.child.try_wait().ok().flatten().or_else(|| {
            // A connection refused or reset: give a dying process a moment to be reaped.
            thread::sleep(Duration::from_millis(50));
            server.child.try_wait().ok().flatten()
        })?;
        thread::sleep(Duration::from_millis(20));
        let ending = Ending::Exited { code: status.code(), signal: status.signal(), stderr_tail: server.tail() };
        server.stop();
        *running = None;
        Some(ending)
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        if let Ok(mut running) = self.running.lock()
            && let Some(server) = running.as_mut()
        {
            server.stop();
        }
    }
}

/// One change a directive makes to the next POST.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tweak {
    /// Replace every header of this name (matched case-insensitively) with one, named as written.
    Set(String, String),
    /// Add a header, keeping those already there.
    Add(String, String),
    /// Remove every header of this name.
    Drop(String),
    /// Frame the body like this.
    Framing(Framing),
    /// Rename every header of the first name (matched case-insensitively) to the second, value kept.
    Rename(String, String),
    /// Append this many spaces to the body (still the same JSON value; a huge body without a huge case file).
    Pad(usize),
}

/// A directive line: `@http GET`, `@http DELETE`, `@http set NAME VALUE`, `@http add NAME VALUE`,
/// `@http drop NAME`, `@http rename NAME NEW`, `@http pad N`, `@http chunked`, `@http chunked-cut`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    /// A request of its own, without a body (GET or DELETE).
    Bodiless(String),
    /// A change to the next POST.
    Next(Tweak),
}

impl Directive {
    /// Reads a directive line; `None` when the line is not one (it is then sent as a body).
    pub fn parse(line: &[u8]) -> Option<Directive> {
        let text = std::str::from_utf8(line.strip_prefix(DIRECTIVE)?).ok()?;
        let mut words = text.splitn(3, ' ');
        let verb = words.next()?;
        let name = words.next();
        let value = words.next();
        Some(match (verb, name, value) {
            ("GET" | "DELETE", None, None) => Directive::Bodiless(verb.to_string()),
            ("set", Some(name), Some(value)) => Directive::Next(Tweak::Set(name.into(), value.into())),
            ("add", Some(name), Some(value)) => Directive::Next(Tweak::Add(name.into(), value.into())),
            ("drop", Some(name), None) => Directive::Next(Tweak::Drop(name.into())),
            ("rename", Some(name), Some(new)) => Directive::Next(Tweak::Rename(name.into(), new.into())),
            ("pad", Some(n), None) => Directive::Next(Tweak::Pad(n.parse().ok().filter(|n| *n <= 64 << 20)?)),
            ("chunked", None, None) => Directive::Next(Tweak::Framing(Framing::Chunked)),
            ("chunked-cut", None, None) => Directive::Next(Tweak::Framing(Framing::ChunkedCut)),
            _ => return None,
        })
    }

    /// The directive as a line.
    pub fn line(&self) -> Vec<u8> {
        let text = match self {
            Directive::Bodiless(method) => method.clone(),
            Directive::Next(Tweak::Set(name, value)) => format!("set {name} {value}"),
            Directive::Next(Tweak::Add(name, value)) => format!("add {name} {value}"),
            Directive::Next(Tweak::Drop(name)) => format!("drop {name}"),
            Directive::Next(Tweak::Rename(name, new)) => format!("rename {name} {new}"),
            Directive::Next(Tweak::Pad(n)) => format!("pad {n}"),
            Directive::Next(Tweak::Framing(Framing::ChunkedCut)) => "chunked-cut".into(),
            Directive::Next(Tweak::Framing(_)) => "chunked".into(),
        };
        [DIRECTIVE, text.as_bytes()].concat()
    }
}

/// The method and params of a line that is a request or notification.
fn message(frame: &Frame) -> Option<(&str, Option<&Value>)> {
    match frame {
        Frame::Request(request) => Some((&request.method, request.params.as_ref())),
        Frame::Notification(notification) => Some((&notification.method, notification.params.as_ref())),
        _ => None,
    }
}

/// The server over HTTP as a target: one keep-alive connection, reused while the server keeps it open.
#[derive(Debug)]
pub struct HttpTarget {
    spec: HttpSpec,
    timeouts: Timeouts,
    connection: Option<BufReader<Timed>>,
    /// The `x-mcp-header` annotations of the server's tools, read at the first modern `tools/call`.
    tool_headers: Option<tool_headers::ToolHeaders>,
}

impl Target for HttpTarget {
    fn patient(&self, factor: u32) -> Option<Box<dyn Target + Send>> {
        Some(Box::new(self.spec.target(self.timeouts.stretched(factor))))
    }

    fn run(&mut self, inputs: &[Input]) -> Result<Transcript> {
        let transcript = self.converse(inputs)?;
        // The harness is ending its servers (a signal stopped it): a refused connection now is its own doing.
        if crate::server::children::ending() {
            return Err(CutShort::Halted.into());
        }
        Ok(transcript)
    }
}

impl HttpTarget {
    /// Runs one conversation: each line a POST (or the bodiless request a directive names), the session deleted
    /// at the end.
    fn converse(&mut self, inputs: &[Input]) -> Result<Transcript> {
        if let Some(managed) = &self.spec.managed {
            managed.ensure(self.timeouts.startup)?;
        }
        let mut talk = Talk { failure_seen: self.failure(), ..Talk::default() };
        for input in inputs {
            match input {
                Input::Sync => talk.record(Event::Sync),
                Input::Line(line) => {
                    let step = match Directive::parse(line) {
                        Some(Directive::Next(tweak)) => {
                            talk.tweaks.push(tweak);
                            continue;
                        }
                        Some(Directive::Bodiless(method)) => self.bodiless(&mut talk, &method),
                        None => {
                            let line = seen::resolve(line, &talk.events);
                            self.post(&mut talk, &line)
                        }
                    };
                    if let Some(ending) = step? {
                        talk.stop_listening(Duration::ZERO);
                        return Ok(Transcript { events: talk.events, ending });
                    }
                }
            }
        }
        if talk.session.is_some()
            && !talk.deleted
            && let Some(ending) = self.bodiless(&mut talk, "DELETE")?
        {
            talk.stop_listening(Duration::ZERO);
            return Ok(Transcript { events: talk.events, ending });
        }
        // A server ends its GET streams with the session; one that does not is given a moment, then closed.
        talk.stop_listening(LISTEN_GRACE.min(self.timeouts.reply));
        Ok(Transcript { events: talk.events, ending: Ending::Closed })
    }
}

/// One conversation's state.
#[derive(Default)]
struct Talk {
    events: Vec<Event>,
    /// The era, fixed by the first request.
    era: Option<Era>,
    /// The session the server assigned at initialize (legacy era).
    session: Option<String>,
    /// The version the initialize result negotiated.
    negotiated: Option<String>,
    /// Set once the session was ended with DELETE.
    deleted: bool,
    /// Changes to the next POST.
    tweaks: Vec<Tweak>,
    /// What the conversation declared, for answering the server's own requests.
    client: Client,
    /// The last handler failure in the server's output already accounted for (noted, or there before the
    /// conversation began).
    failure_seen: Option<String>,
    /// The GET stream of the client's own being read, if one is open.
    listening: Option<Listening>,
}

impl Talk {
    /// Closes the GET stream being read, if any, after waiting up to `grace` for the server to end it, and records
    /// what it carried on its exchange.
    fn stop_listening(&mut self, grace: Duration) {
        let Some(listening) = self.listening.take() else { return };
        let at = listening.at;
        let heard = listening.stop(grace);
        if let Some(Event::Http(exchange)) = self.events.get_mut(at) {
            exchange.body_len = heard.messages.iter().map(Vec::len).sum();
            exchange.stream = heard.messages;
            exchange.event_ids = heard.event_ids;
        }
    }

    fn record(&mut self, event: Event) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        }
    }

    /// The legacy headers: the session, and the negotiated version from 2025-06-18 on.
    fn legacy_headers(&self, headers: &mut Vec<(String, String)>) {
        if let Some(session) = &self.session {
            headers.push(("Mcp-Session-Id".into(), session.clone()));
        }
        if let Some(version) = self.negotiated.as_deref().filter(|v| *v >= "2025-06-18") {
            headers.push(("MCP-Protocol-Version".into(), version.to_string()));
        }
    }
}

impl HttpTarget {
    /// Where this target's exchanges go.
    fn server(&self) -> exchange::Server {
        exchange::Server {
            endpoint: self.spec.endpoint.clone(),
            reply: self.timeouts.reply,
            managed: self.spec.managed.is_some(),
        }
    }

    fn base_headers(&self, accept: &str) -> Vec<(String, String)> {
        vec![("Host".into(), self.spec.endpoint.authority()), ("Accept".into(), accept.into())]
    }

    /// A POST carrying `line`; `Some` when the conversation ended.
    fn post(&mut self, talk: &mut Talk, line: &[u8]) -> Result<Option<Ending>> {
        let frame = Frame::parse(line);
        let own_era = message(&frame).map(|(method, params)| envelope::opening_era(method, params));
        if talk.era.is_none() && matches!(frame, Frame::Request(_)) {
            talk.era = own_era;
        }
        // Each message goes the way its own era asks (a dual-era client's `initialize` opens a session even after
        // modern requests); a body that is no message follows the session, if there is one, else the conversation.
        let era = own_era.unwrap_or(match talk.session {
            Some(_) => Era::Handshake,
            None => talk.era.unwrap_or(Era::Modern),
        });
        let mut headers = self.base_headers("application/json, text/event-stream");
        headers.push(("Content-Type".into(), "application/json".into()));
        match era {
            Era::Modern => {
                let version = message(&frame)
                    .and_then(|(_, params)| envelope::meta(params)?.get(PROTOCOL_VERSION_KEY)?.as_str())
                    .unwrap_or(LATEST_MODERN_VERSION);
                headers.push(("MCP-Protocol-Version".into(), version.to_string()));
                if let Some((method, params)) = message(&frame) {
                    headers.push(("Mcp-Method".into(), method.to_string()));
                    if let Some(name) = mirrored_name(method, params) {
                        headers.push(("Mcp-Name".into(), header_value(&name)));
                    }
                    // An annotated tool's arguments are mirrored into `Mcp-Param-{name}` headers.
                    if method == TOOLS_CALL
                        && let Some(params) = params
                        && let Some(name) = params.get("name").and_then(Value::as_str)
                    {
                        let base = self.base_headers("application/json, text/event-stream");
                        let server = self.server();
                        let tools = self.tool_headers.get_or_insert_with(|| tool_headers::fetch(&server, &base));
                        if let (Some(annotations), Some(arguments)) = (tools.get(name), params.get("arguments")) {
                            for (header, value) in param_values(annotations, arguments) {
                                headers.push((header, header_value(&value)));
                            }
                        }
                    }
                }
            }
            Era::Handshake => talk.legacy_headers(&mut headers),
        }
        let mut framing = Framing::Length;
        let mut body = line.to_vec();
        for tweak in std::mem::take(&mut talk.tweaks) {
            match tweak {
                // A name ending in `*` names every header it starts: its values are set, or the headers dropped.
                Tweak::Set(name, value) if name.ends_with('*') => {
                    for header in headers.iter_mut().filter(|(n, _)| named(n, &name)) {
                        header.1 = value.clone();
                    }
                }
                Tweak::Set(name, value) => {
                    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                    headers.push((name, value));
                }
                Tweak::Add(name, value) => headers.push((name, value)),
                Tweak::Drop(name) => headers.retain(|(n, _)| !named(n, &name)),
                Tweak::Framing(chosen) => framing = chosen,
                Tweak::Rename(name, new) => {
                    for header in headers.iter_mut().filter(|(n, _)| n.eq_ignore_ascii_case(&name)) {
                        header.0 = new.clone();
                    }
                }
                Tweak::Pad(n) => body.resize(body.len() + n, b' '),
            }
        }
        let request = Request { method: "POST".into(), path: self.spec.endpoint.path.clone(), headers, body, framing };
        let initialize = matches!(&frame, Frame::Request(r) if r.method == INITIALIZE);
        talk.record(Event::Sent(line.to_vec()));
        talk.client.sent(line);
        let mut resume_headers = self.base_headers("text/event-stream");
        match era {
            Era::Modern => resume_headers.push(("MCP-Protocol-Version".into(), LATEST_MODERN_VERSION.into())),
            Era::Handshake => talk.legacy_headers(&mut resume_headers),
        }
        let mut answer_headers = self.base_headers("application/json, text/event-stream");
        answer_headers.push(("Content-Type".into(), "application/json".into()));
        match era {
            Era::Modern => answer_headers.push(("MCP-Protocol-Version".into(), LATEST_MODERN_VERSION.into())),
            Era::Handshake => talk.legacy_headers(&mut answer_headers),
        }
        let to = self.server();
        let client = &mut talk.client;
        // The server's own request in the response stream gets its answer in a POST of its own, at once (each line
        // of the client's reaction in one: a `ping` before a late answer, the cancels of a client that ignores it).
        let mut answer = |request: &[u8]| {
            let mut answered = Vec::new();
            for body in client.answer(request) {
                let path = to.endpoint.path.clone();
                let headers = answer_headers.clone();
                let post = Request { method: "POST".into(), path, headers, body, framing: Framing::Length };
                // A `ping`'s response may come in a stream of its own: read until it.
                let owed = Some(exchange::owed_ids(&post.body)).filter(|owed| !owed.is_empty());
                let Ok(outcome) = exchange::exchange(&to, &mut None, &post, owed, &mut |_| Vec::new()) else { break };
                answered.push(Answered { after: 0, line: post.body, outcome });
            }
            answered
        };
        let owed = exchange::owed_ids(&request.body);
        let outcome = exchange::exchange(&to, &mut self.connection, &request, Some(owed), &mut answer)?;
        // A legacy stream the server closed with responses owed after an event id is resumed: a GET with
        // `Last-Event-ID`, after the `retry` it asked for (2025-11-25 basic/transports.mdx §Resumability and
        // Redelivery; 2026-07-28 streams are not resumable).
        let mut resumed = Vec::new();
        let mut next = outcome.resume.clone().filter(|_| era == Era::Handshake);
        while let Some(resume) = next.take().filter(|_| resumed.len() < MAX_RESUMES) {
            let wait = Duration::from_millis(resume.retry_ms.unwrap_or(0)).min(self.timeouts.reply);
            std::thread::sleep(wait);
            let mut headers = resume_headers.clone();
            headers.push(("Last-Event-ID".into(), resume.last_id.clone()));
            let get = Request { method: "GET".into(), path: to.endpoint.path.clone(), headers, ..Request::default() };
            let got = exchange::exchange(&to, &mut None, &get, Some(resume.owed), &mut answer)?;
            next = got.resume.clone();
            resumed.push(got);
        }
        let negotiated = outcome.lines.iter().find_map(|(line, _)| {
            let reply: Value = serde_json::from_slice(line).ok()?;
            Some(reply.get("result")?.get("protocolVersion")?.as_str()?.to_string())
        });
        // A session opens with an initialize that succeeded; a refused one leaves the conversation as it was, and
        // so does a second session (a mutation hid the first from the server): the conversation stays on its
        // first, as one stdio connection would.
        let open = talk.session.is_none();
        let succeeded = negotiated.is_some() && (200..300).contains(&outcome.exchange.status);
        if initialize && open && succeeded && era == Era::Handshake {
            if let Some(session) = outcome.exchange.response_header("mcp-session-id") {
                talk.session = Some(session.to_string());
                talk.deleted = false;
            }
            talk.negotiated = negotiated;
        }
        // An `input_required` result gets its retry, a POST of its own like any request.
        let lines = outcome.lines.iter().chain(resumed.iter().flat_map(|got| &got.lines));
        let retries: Vec<Vec<u8>> = lines.filter_map(|(line, _)| talk.client.retry(line)).collect();
        for outcome in std::iter::once(outcome).chain(resumed) {
            if let Some(ending) = self.settle(talk, outcome) {
                return Ok(Some(ending));
            }
        }
        for retry in retries {
            if let Some(ending) = self.post(talk, &retry)? {
                return Ok(Some(ending));
            }
        }
        Ok(None)
    }

    /// A GET or DELETE of its own; `Some` when the conversation ended.
    fn bodiless(&mut self, talk: &mut Talk, method: &str) -> Result<Option<Ending>> {
        let mut headers = self.base_headers(if method == "GET" {
            "text/event-stream"
        } else {
            "application/json, text/event-stream"
        });
        match talk.era {
            Some(Era::Modern) => headers.push(("MCP-Protocol-Version".into(), LATEST_MODERN_VERSION.into())),
            _ => talk.legacy_headers(&mut headers),
        }
        if method == "DELETE" && talk.session.is_some() {
            talk.deleted = true;
        }
        let request =
            Request { method: method.into(), path: self.spec.endpoint.path.clone(), headers, ..Request::default() };
        if method == "GET" {
            // One GET stream at a time: the one open before is closed.
            talk.stop_listening(Duration::ZERO);
        }
        let mut outcome =
            exchange::exchange(&self.server(), &mut self.connection, &request, None, &mut |_| Vec::new())?;
        if method == "DELETE" && !(200..300).contains(&outcome.exchange.status) {
            talk.deleted = false;
        }
        let held = outcome.held.take();
        let ending = self.settle(talk, outcome);
        if let (Some((connection, kind)), None) = (held, &ending) {
            let at = talk.events.len() - 1;
            if matches!(talk.events.get(at), Some(Event::Http(exchange)) if exchange.method == "GET") {
                talk.listening = Some(Listening::start(connection, kind, at));
            }
        }
        Ok(ending)
    }

    /// The last handler failure in the output of the server the harness started, if any.
    fn failure(&self) -> Option<String> {
        let running = self.spec.managed.as_ref()?.running.lock().ok()?;
        super::failures::authors_excerpt(&running.as_ref()?.tail())
    }

    /// Records an exchange; the ending when the server crashed or hung.
    fn settle(&mut self, talk: &mut Talk, outcome: Outcome) -> Option<Ending> {
        let waited = self.timeouts.reply.as_millis() as u64;
        let exited = (outcome.lost || outcome.timed_out).then(|| self.spec.managed.as_ref()?.exited()).flatten();
        talk.record(Event::Http(Box::new(outcome.exchange)));
        let mut answered = outcome.answered.into_iter().peekable();
        for (index, (line, truncated)) in outcome.lines.into_iter().enumerate() {
            talk.record(Event::Received { line, truncated });
            while let Some(answer) = answered.next_if(|answer| answer.after == index + 1) {
                talk.record(Event::Sent(answer.line));
                talk.record(Event::Http(Box::new(answer.outcome.exchange)));
                for (line, truncated) in answer.outcome.lines {
                    talk.record(Event::Received { line, truncated });
                }
            }
        }
        match exited {
            Some(ending) => Some(ending),
            None if outcome.timed_out => {
                // A handler's panic or traceback in the server's output: the request its failure left unanswered.
                let failure = self.failure();
                if failure.is_some() && failure != talk.failure_seen {
                    talk.record(Event::Note(Note::Failure(failure.unwrap_or_default())));
                }
                Some(Ending::Hung { waited_ms: waited })
            }
            None => None,
        }
    }
}
