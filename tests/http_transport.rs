//! The HTTP transport end to end: the built-in server over HTTP passes every HTTP rule's probe, each planted HTTP
//! bug is caught by its rule, and hostile servers (an HTML page, a never-ending SSE stream, a gigabyte body, bytes
//! that are not HTTP, a refused connection) end in a finding or a clear error within the timeouts.

use mcp_wirefuzz::model::{Eras, ServerModel};
use mcp_wirefuzz::oracle::{Policy, check};
use mcp_wirefuzz::server::builtin::http::{self, HttpBug};
use mcp_wirefuzz::server::transport::http::{Directive, HttpSpec};
use mcp_wirefuzz::server::{Target, Timeouts};
use mcp_wirefuzz::surface::Surface;
use mcp_wirefuzz::transcript::{Ending, Event, Input};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

fn quick() -> Timeouts {
    Timeouts { reply: Duration::from_millis(500), ..Timeouts::default() }
}

fn judged() -> Policy {
    Policy::default().with_model(ServerModel::built_in()).with_surface(Surface::built_in())
}

/// The policy a planted bug is judged with: its server's model (modern-only for [`HttpBug::modern_only`]).
fn judged_for(bug: HttpBug) -> Policy {
    if bug.modern_only() { modern_only() } else { judged() }
}

/// The policy for the built-in server serving the modern era only.
fn modern_only() -> Policy {
    Policy::default().with_model(ServerModel::stated(Eras::Modern)).with_surface(Surface::built_in())
}

fn lines(lines: Vec<Vec<u8>>) -> Vec<Input> {
    lines.into_iter().map(Input::Line).collect()
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

#[test]
fn every_http_probe_passes_on_the_reference_server_and_fires_on_its_bug() {
    // The clean server, dual-era and modern-only, passes every probe judged with its own model.
    for (modern, policy) in [(false, judged()), (true, modern_only())] {
        let url = http::spawn(None, modern).unwrap();
        let mut target = HttpSpec::new(&url, None).unwrap().target(quick());
        for bug in HttpBug::ALL {
            let transcript = target.run(&lines(bug.trigger())).unwrap();
            let findings = check(&transcript, &policy);
            assert!(findings.is_empty(), "{bug} (modern only: {modern}): {findings:?}\n{}", transcript.render());
        }
    }
    for bug in HttpBug::ALL {
        let url = http::spawn(Some(bug), false).unwrap();
        let mut target = HttpSpec::new(&url, None).unwrap().target(quick());
        let transcript = target.run(&lines(bug.trigger())).unwrap();
        let fired: Vec<&str> = check(&transcript, &judged_for(bug)).iter().map(|f| f.rule).collect();
        assert!(fired.contains(&bug.expected_rule()), "{bug}: {fired:?}\n{}", transcript.render());
    }
}

#[test]
fn the_modern_only_server_is_probed_as_modern_only_and_refuses_legacy_traffic() {
    let url = http::spawn(None, true).unwrap();
    let mut target = HttpSpec::new(&url, None).unwrap().target(quick());
    let model = mcp_wirefuzz::learn::probe::probe(&mut target).unwrap();
    assert_eq!(model.eras, Eras::Modern, "{model}");
    // A legacy client's conversation: initialize refused, no session minted, GET and DELETE 405.
    let trigger = HttpBug::SessionMissing404.trigger();
    let inputs = lines(vec![
        trigger[0].clone(),
        Directive::Bodiless("GET".into()).line(),
        Directive::Bodiless("DELETE".into()).line(),
    ]);
    let transcript = target.run(&inputs).unwrap();
    let rendered = transcript.render();
    // Refused as a modern request missing its Mcp-Method header (-32020).
    assert!(rendered.contains("POST 400") && rendered.contains("-32020"), "{rendered}");
    assert!(rendered.contains("GET 405") && rendered.contains("DELETE 405"), "{rendered}");
    let minted =
        transcript.events.iter().any(|e| matches!(e, Event::Http(x) if x.response_header("mcp-session-id").is_some()));
    assert!(!minted, "{rendered}");
    let findings = check(&transcript, &Policy::default().with_model(model));
    assert!(findings.is_empty(), "{findings:?}\n{rendered}");
    // The dual-era server mints a session for the same initialize; judged as modern-only it would be a finding.
    let dual = HttpSpec::new(&http::spawn(None, false).unwrap(), None).unwrap().target(quick()).run(&inputs).unwrap();
    let fired: Vec<&str> = check(&dual, &modern_only()).iter().map(|f| f.rule).collect();
    assert!(fired.contains(&"HTTP-MODERN-NO-SESSION"), "{fired:?}\n{}", dual.render());
    assert!(check(&dual, &judged()).is_empty(), "{}", dual.render());
}

#[test]
fn a_legacy_conversation_keeps_its_session_and_ends_it() {
    let url = http::spawn(None, false).unwrap();
    let mut target = HttpSpec::new(&url, None).unwrap().target(quick());
    let trigger = HttpBug::SessionMissing404.trigger();
    let inputs =
        lines(vec![trigger[0].clone(), trigger[1].clone(), br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#.to_vec()]);
    let transcript = target.run(&inputs).unwrap();
    let rendered = transcript.render();
    assert!(rendered.contains("POST 200 application/json"), "{rendered}");
    assert!(rendered.contains("POST 202"), "{rendered}");
    assert!(rendered.contains("DELETE 200"), "{rendered}");
    assert!(rendered.contains(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#), "{rendered}");
    assert!(check(&transcript, &judged()).is_empty());
}

/// Serves every connection with `respond`, once per request read.
fn hostile(respond: fn(&mut std::net::TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buffer = [0u8; 65536];
                let _ = stream.read(&mut buffer);
                respond(&mut stream);
            });
        }
    });
    format!("http://{address}/mcp")
}

fn run_hostile(respond: fn(&mut std::net::TcpStream)) -> (Vec<&'static str>, Ending, Duration) {
    let url = hostile(respond);
    let started = Instant::now();
    let transcript = HttpSpec::new(&url, None).unwrap().target(quick()).run(&lines(vec![LIST.into()])).unwrap();
    let fired = check(&transcript, &Policy::default()).iter().map(|f| f.rule).collect();
    (fired, transcript.ending, started.elapsed())
}

#[test]
fn an_html_page_is_a_content_type_finding() {
    let (fired, ending, _) = run_hostile(|stream| {
        let _ =
            stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 13\r\n\r\n<h1>hello</h1");
    });
    assert!(fired.contains(&"HTTP-CONTENT-TYPE"), "{fired:?}");
    assert_eq!(ending, Ending::Closed);
}

#[test]
fn a_never_ending_sse_stream_is_a_hang_not_a_wait() {
    let (fired, ending, took) = run_hostile(|stream| {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
        for _ in 0..100_000 {
            if stream.write_all(b": keep-alive\n\n").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    assert!(matches!(ending, Ending::Hung { .. }), "{ending:?}");
    assert!(fired.contains(&"SERVER-HANG"), "{fired:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_gigabyte_body_is_cut_at_the_bound() {
    let (fired, _, took) = run_hostile(|stream| {
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n");
        let chunk = vec![b' '; 1 << 16];
        for _ in 0..(1 << 14) {
            if stream.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    assert!(fired.contains(&"JSONRPC-FRAMING"), "{fired:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn bytes_that_are_not_http_are_a_response_finding() {
    let (fired, _, _) = run_hostile(|stream| {
        let _ = stream.write_all(b"SSH-2.0-OpenSSH\r\n\r\n");
    });
    assert!(fired.contains(&"HTTP-RESPONSE"), "{fired:?}");
}

#[test]
fn a_refused_connection_is_a_clear_error() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let error = HttpSpec::new(&url, None).unwrap().target(quick()).run(&lines(vec![LIST.into()])).unwrap_err();
    assert!(format!("{error:#}").contains("cannot connect to"), "{error:#}");
    assert!(HttpSpec::new("https://example.com/mcp", None).is_err());
}

#[test]
fn a_started_server_that_never_listens_is_a_clear_error_with_its_output() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let command = mcp_wirefuzz::server::ServerCommand::from_argv(&[
        "sh".into(),
        "-c".into(),
        "echo 'no port for me' >&2; exit 3".into(),
    ])
    .unwrap();
    let spec = HttpSpec::new(&url, Some(command)).unwrap();
    let error = spec.target(quick()).run(&lines(vec![LIST.into()])).unwrap_err();
    let text = format!("{error:#}");
    assert!(text.contains("never answered") && text.contains("no port for me"), "{text}");
}

#[test]
fn a_campaign_over_http_finds_every_planted_http_bug_and_nothing_on_the_reference_server() {
    use mcp_wirefuzz::campaign::{self, Options};
    use mcp_wirefuzz::server::ServerSpec;
    let options = |cases: u64, policy: Policy| Options {
        seed: 1,
        cases: Some(cases),
        time: None,
        confirm_time: None,
        policy,
        out: None,
        shrink: mcp_wirefuzz::shrink::Budget { runs: 50, time: Some(Duration::from_secs(5)) },
        baseline: Default::default(),
        strict: false,
        prelude: Vec::new(),
    };
    let run = |bug: Option<HttpBug>, modern: bool, cases: u64, policy: Policy| {
        let server = ServerSpec::Http(HttpSpec::new(&http::spawn(bug, modern).unwrap(), None).unwrap());
        let targets = (0..2).map(|_| server.pooled_target(quick())).collect();
        campaign::run(targets, server.pooled_target(quick()), &options(cases, policy), &server, |_| {}).unwrap()
    };
    // The bugs split between two threads: the SSE polling bugs mostly wait (about 20 s each, the rest 5 s).
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..2)
            .map(|first| {
                scope.spawn(move || {
                    for &bug in HttpBug::ALL.iter().skip(first).step_by(2) {
                        let summary = run(Some(bug), false, 300, judged_for(bug));
                        assert!(summary.counts.contains_key(bug.expected_rule()), "{bug}: {:?}", summary.counts);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("every planted HTTP bug is found");
        }
    });
    let summary = run(None, false, 150, judged());
    assert!(summary.counts.is_empty(), "{:?}", summary.counts);
    let summary = run(None, true, 150, modern_only());
    assert!(summary.counts.is_empty(), "modern only: {:?}", summary.counts);
}

#[test]
fn a_started_server_that_crashes_is_a_crash_and_is_started_again() {
    // Answers one POST with 202, then exits with code 3 on the next request without answering.
    let script = r#"
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    count = 0
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        H.count += 1
        if H.count > 1:
            sys.stderr.write("crashing now\n"); sys.stderr.flush(); os._exit(3)
        self.send_response(202); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"#;
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let argv: Vec<String> = vec!["python3".into(), "-c".into(), script.into(), port.to_string()];
    let command = mcp_wirefuzz::server::ServerCommand::from_argv(&argv).unwrap();
    let spec = HttpSpec::new(&format!("http://127.0.0.1:{port}/mcp"), Some(command)).unwrap();
    let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec();
    let mut target = spec.target(quick());
    for _ in 0..2 {
        let transcript = target.run(&lines(vec![note.clone(), note.clone()])).unwrap();
        let Ending::Exited { code: Some(3), stderr_tail, .. } = &transcript.ending else { panic!("{transcript:?}") };
        assert!(String::from_utf8_lossy(stderr_tail).contains("crashing now"));
        assert!(check(&transcript, &Policy::default()).iter().any(|f| f.rule == "SERVER-CRASH"));
    }
}

/// The processes whose command line holds `needle` (but not `fuzz`: the harness's own holds the server's command).
fn running(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .map(|line| String::from_utf8_lossy(&line).replace('\0', " "))
        .filter(|line| line.contains(needle) && !line.contains(" fuzz "))
        .collect()
}

#[test]
fn sigint_ends_a_started_http_server_and_writes_no_case_file() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let address = format!("127.0.0.1:{port}");
    let out = std::env::temp_dir().join(format!("wirefuzz-http-sigint-{}", std::process::id()));
    let exe = env!("CARGO_BIN_EXE_mcp-wirefuzz");
    let mut harness = std::process::Command::new(exe)
        .args(["fuzz", "--time", "60", "--url", &format!("http://{address}/mcp"), "--out"])
        .arg(&out)
        .args(["--", exe, "serve", "--http", &address])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Learning the built-in server takes well under a second: by now conversations are running.
    std::thread::sleep(Duration::from_secs(5));
    assert!(!running(&format!("serve --http {address}")).is_empty(), "the server was started");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(harness.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = harness.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < until, "the harness did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(128 + 2));
    assert_eq!(running(&format!("serve --http {address}")), Vec::<String>::new(), "left behind");
    let written: Vec<_> =
        std::fs::read_dir(&out).map(|dir| dir.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(written.is_empty(), "case files of a server the harness ended: {written:?}");
    let _ = std::fs::remove_dir_all(&out);
}

/// A handshake server whose `tools/call` asks its client to elicit in the call's SSE stream, and answers the call
/// only once the client's answer came (or 3 s passed). Returns its URL and the answer it got.
fn asking_server() -> (String, std::sync::Arc<std::sync::Mutex<Option<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let answer = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
    let got = answer.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let answer = answer.clone();
            std::thread::spawn(move || {
                let request = read_request(&mut stream);
                let reply = |stream: &mut std::net::TcpStream, head: &str, body: &str| {
                    let length = if head.contains("event-stream") {
                        String::new()
                    } else {
                        format!("Content-Length: {}\r\n", body.len())
                    };
                    let _ = stream
                        .write_all(format!("HTTP/1.1 {head}\r\n{length}Connection: close\r\n\r\n{body}").as_bytes());
                };
                if request.contains(r#""method":"initialize""#) {
                    let result = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"asker","version":"1"}}}"#;
                    reply(&mut stream, "200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1", result);
                } else if request.contains(r#""method":"tools/call""#) {
                    let ask = r#"{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{}}}}"#;
                    reply(
                        &mut stream,
                        "200 OK\r\nContent-Type: text/event-stream",
                        &format!("event: message\ndata: {ask}\n\n"),
                    );
                    let waited = Instant::now();
                    while answer.lock().unwrap().is_none() && waited.elapsed() < Duration::from_secs(3) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    let result = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}"#;
                    let _ = stream.write_all(format!("event: message\ndata: {result}\n\n").as_bytes());
                } else {
                    if request.contains(r#""id":"e1""#) {
                        *answer.lock().unwrap() = request.split("\r\n\r\n").nth(1).map(str::to_string);
                    }
                    reply(&mut stream, "202 Accepted", "");
                }
            });
        }
    });
    (url, got)
}

/// Reads one HTTP request: its head and a body of its Content-Length.
fn read_request(stream: &mut std::net::TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buffer) {
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&buffer[..n]);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|line| {
                    line.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string())
                })
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn a_request_of_the_server_in_a_stream_is_answered_while_the_stream_is_open() {
    let initialize = |capabilities: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        )
        .into_bytes()
    };
    let conversation = |capabilities: &str| {
        lines(vec![
            initialize(capabilities),
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#.to_vec(),
        ])
    };
    for (capabilities, answer, finding) in
        [("{}", r#""code":-32601"#, true), (r#"{"elicitation":{}}"#, r#""action":"accept""#, false)]
    {
        let (url, got) = asking_server();
        let transcript = HttpSpec::new(&url, None).unwrap().target(quick()).run(&conversation(capabilities)).unwrap();
        let rendered = transcript.render();
        let sent = got.lock().unwrap().clone().unwrap_or_else(|| panic!("no answer came: {rendered}"));
        assert!(sent.contains(r#""id":"e1""#) && sent.contains(answer), "{sent}");
        // The answer is recorded between the request and the call's result, which it let come.
        let at = |needle: &str| rendered.find(needle).unwrap_or_else(|| panic!("{needle} not in {rendered}"));
        assert!(at("elicitation/create") < at(answer) && at(answer) < at(r#""text":"done""#), "{rendered}");
        assert_eq!(transcript.ending, Ending::Closed, "{rendered}");
        let fired: Vec<&str> = check(&transcript, &Policy::default()).iter().map(|f| f.rule).collect();
        assert_eq!(fired.contains(&"SERVER-UNDECLARED-CAPABILITY"), finding, "{fired:?}\n{rendered}");
        assert!(!fired.iter().any(|rule| rule.contains("MISSING") || rule.contains("HANG")), "{fired:?}\n{rendered}");
    }
}

#[test]
fn a_polled_stream_is_resumed_from_its_last_event_id_and_its_responses_arrive() {
    // The reference server answering a session's requests by SSE polling: the POST's stream carries a priming
    // event id and a retry, then closes; the responses come on the GET with Last-Event-ID.
    let url = http::spawn_server(http::HttpServer::new(None, false).with_polling()).unwrap();
    let mut target = HttpSpec::new(&url, None).unwrap().target(quick());
    let trigger = HttpBug::PolledStreamLost.trigger();
    let transcript = target.run(&lines(trigger.clone())).unwrap();
    let resumed = transcript.events.iter().any(|event| {
        matches!(event, Event::Http(exchange) if exchange.method == "GET"
            && exchange.request_values("last-event-id").first().is_some_and(|id| id.ends_with("/0")))
    });
    assert!(resumed, "{}", transcript.render());
    assert!(transcript.render().contains(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":"#), "{}", transcript.render());
    assert!(check(&transcript, &judged()).is_empty(), "{:?}", check(&transcript, &judged()));
    // The same conversation when the resumed stream lost the responses: they are missing.
    let url = http::spawn(Some(HttpBug::PolledStreamLost), false).unwrap();
    let transcript = HttpSpec::new(&url, None).unwrap().target(quick()).run(&lines(trigger)).unwrap();
    let rules: Vec<&str> = check(&transcript, &judged()).iter().map(|f| f.rule).collect();
    assert_eq!(rules, ["JSONRPC-RESPONSE-MISSING"], "{}", transcript.render());
}

/// A GET of the conversation's own opens the session's stream on the reference server: it is read beside the POSTs
/// until the DELETE ends the session, and what it carried is on the GET's exchange (the server's `ping`, then with
/// `response-on-get-stream` the responses the POSTs after it got).
#[test]
fn a_get_stream_of_the_clients_own_is_read_beside_the_posts_until_the_session_ends() {
    for (bug, carried) in [(None, 1), (Some(HttpBug::ResponseOnGetStream), 2)] {
        let url = http::spawn(bug, false).unwrap();
        let mut target = HttpSpec::new(&url, None).unwrap().target(quick());
        let transcript = target.run(&lines(HttpBug::ResponseOnGetStream.trigger())).unwrap();
        let rendered = transcript.render();
        let get = transcript.events.iter().find_map(|event| match event {
            Event::Http(exchange) if exchange.method == "GET" => Some(exchange),
            _ => None,
        });
        let get = get.unwrap_or_else(|| panic!("no GET: {rendered}"));
        assert_eq!((get.status, get.stream.len()), (200, carried), "{bug:?}: {rendered}");
        assert!(String::from_utf8_lossy(&get.stream[0]).contains(r#""id":"calc-listen-1","method":"ping""#));
        assert!(rendered.contains("       ~ {"), "{rendered}");
        // The messages are the exchange's, not lines of the transcript: the call's response is a line once.
        let lines = transcript
            .events
            .iter()
            .filter(|e| matches!(e, Event::Received { line, .. } if line.starts_with(br#"{"jsonrpc":"2.0","id":2,"#)))
            .count();
        assert_eq!(lines, 1, "{rendered}");
    }
}
