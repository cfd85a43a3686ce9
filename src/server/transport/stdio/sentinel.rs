//! Sentinels and their calibration: a request with a harness-only id ([`SENTINEL_PREFIX`]) whose reply shows that
//! every line before it was answered or dropped, on a server shown to answer in order. How each [`Form`] is
//! written, and the calibration runs (each on a fresh process, once per server command and eras) that decide
//! which forms a server takes ([`Sentinels`]), how fast it answers, and whether a kept process answers as a
//! fresh one would.

use super::process::{Process, Stdout};
use super::reply_to;
use crate::model::Eras;
use crate::protocol::envelope::{self, META};
use crate::protocol::era::{LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION};
use crate::protocol::methods::{DISCOVER, INITIALIZE, INITIALIZED, PING, TOOLS_LIST};
use crate::protocol::{Era, Frame, Outcome, RequestId, Response};
use crate::server::{ServerCommand, Timeouts};
use anyhow::Result;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Whether a target uses sentinel requests as barriers, and for which eras.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sentinels {
    /// Timeouts and settle windows only.
    Off,
    /// The server serves these eras; the first conversation calibrates it.
    Uncalibrated(Eras),
    /// Calibrated: the server answers in order in the eras it serves; `pre_init` when a ping before `initialize`
    /// leaves its handshake as it was; `neutral` when it answers a [`Form::Neutral`] line by its id, in order, and
    /// such a line leaves every era it serves open; `fresh_alike` when it serves 2026-07-28 and answers a modern
    /// request alike whether or not it is the first its process sees ([`calibrate_history`]), so a process may be
    /// kept for the next self-contained conversation; `pace` how long it took, from its first reply to its last, to
    /// answer the calibration's pipelined lines (the slowest form).
    InOrder { eras: Eras, pre_init: bool, neutral: bool, fresh_alike: bool, pace: Duration },
}

/// How many times the calibration's pace per pair a sentinel is first waited for ([`Barrier::Sentinel::wait`]).
const PACE_FACTOR: u32 = 50;
/// The shortest first wait for a sentinel.
pub(super) const MIN_WAIT: Duration = Duration::from_millis(50);

/// The first wait for a sentinel on a server calibrated at `pace`: [`PACE_FACTOR`] times the pace per calibration
/// pair, at least [`MIN_WAIT`], at most the reply timeout.
pub(super) fn first_wait(pace: Duration, reply: Duration) -> Duration {
    (pace * PACE_FACTOR / CALIBRATION_PAIRS as u32).max(MIN_WAIT).min(reply)
}

/// How a sentinel is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    /// A `ping` enveloped for 2026-07-28.
    Modern,
    /// A plain `ping`, on a connection whose `initialize` handshake is done.
    Handshake,
    /// An invalid request: a harness id and no method (`{"jsonrpc":"2.0","id":"…"}`). JSON-RPC 2.0 answers it
    /// with -32600 and, as the id can be read, that id; it is no request, so it opens no era, and a server that
    /// drops requests still answers it. Used wherever the calibration showed the server answers it in order and
    /// keeps its eras open after it; a ping only on other servers.
    Neutral,
}

impl Form {
    /// The forms a server serving `eras` is sent.
    fn of(eras: Eras) -> Vec<Form> {
        match eras {
            Eras::Modern => vec![Form::Modern],
            Eras::Handshake => vec![Form::Handshake],
            Eras::Dual => vec![Form::Modern, Form::Handshake],
            Eras::Unknown => Vec::new(),
        }
    }

    /// A sentinel with `id`, in this form: a `ping`, or the neutral line.
    pub(super) fn sentinel(self, id: &str) -> Vec<u8> {
        self.request(id, PING)
    }

    /// A request of `method` with `id`, in this form (the neutral form has no method).
    fn request(self, id: &str, method: &str) -> Vec<u8> {
        let message = match self {
            Form::Modern => serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method,
                "params": { META: envelope::envelope(LATEST_MODERN_VERSION) } }),
            Form::Handshake => serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method }),
            Form::Neutral => serde_json::json!({ "jsonrpc": "2.0", "id": id }),
        };
        message.to_string().into_bytes()
    }
}

/// The prefix of every sentinel id: no generated conversation uses it, and a reply carrying it is never recorded.
pub(super) const SENTINEL_PREFIX: &str = "mcp-wirefuzz-barrier-";

/// The calibrations made in this process, by server command and eras: the targets of one run share them.
static CALIBRATED: Mutex<Vec<(Vec<String>, Eras, Sentinels)>> = Mutex::new(Vec::new());

/// How `command`, serving `eras`, takes sentinels: calibrated once per command and eras (the targets of a run
/// wait for the first), each calibration on a fresh process, all started at once. In order when every form's
/// calibration passed; `pre_init` when, besides, the server serves the handshake era and a ping before
/// `initialize` passed too; `neutral` when, besides, [`calibrate_neutral`] passed for every form; `fresh_alike`
/// when, besides, the server serves 2026-07-28 and [`calibrate_history`] passed.
pub(super) fn calibrated(command: &ServerCommand, eras: Eras, timeouts: Timeouts) -> Result<Sentinels> {
    let deadline = timeouts.deadline;
    let mut known = CALIBRATED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let argv = command.argv();
    if let Some((_, _, sentinels)) = known.iter().find(|(a, e, _)| *a == argv && *e == eras) {
        return Ok(*sentinels);
    }
    let spawn = || {
        Form::of(eras)
            .into_iter()
            .map(|form| Ok((form, Process::spawn(command, deadline)?)))
            .collect::<Result<Vec<_>>>()
    };
    let (forms, neutral) = (spawn()?, spawn()?);
    let handshake = eras.serves(Era::Handshake) == Some(true);
    let pre_init = if handshake { Some(Process::spawn(command, deadline)?) } else { None };
    let modern = eras.serves(Era::Modern) == Some(true);
    let history = if modern { Some(Process::spawn(command, deadline)?) } else { None };
    let paces = forms.into_iter().map(|(form, process)| calibrate(process, form, timeouts)).collect::<Vec<_>>();
    let pace = paces.iter().try_fold(Duration::ZERO, |slowest, pace| pace.map(|pace| pace.max(slowest)));
    let pre_init = pace.is_some() && pre_init.is_some_and(|process| calibrate_pre_init(process, timeouts));
    let neutral =
        pace.is_some() && neutral.into_iter().all(|(form, process)| calibrate_neutral(process, form, timeouts));
    let fresh_alike = pace.is_some() && history.is_some_and(|process| calibrate_history(process, timeouts));
    let sentinels = match pace {
        Some(pace) => Sentinels::InOrder { eras, pre_init, neutral, fresh_alike, pace },
        None => Sentinels::Off,
    };
    known.push((argv, eras, sentinels));
    Ok(sentinels)
}

/// Requests pipelined by a calibration run, each followed by a sentinel.
const CALIBRATION_PAIRS: usize = 16;

/// The `initialize` request a calibration sends, with `id`.
fn initialize(id: &str) -> Vec<u8> {
    let initialize = serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": INITIALIZE,
        "params": { "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
            "clientInfo": { "name": "mcp-wirefuzz", "version": env!("CARGO_PKG_VERSION") } } });
    initialize.to_string().into_bytes()
}

/// The `notifications/initialized` line a calibration sends.
fn initialized() -> Vec<u8> {
    serde_json::json!({ "jsonrpc": "2.0", "method": INITIALIZED }).to_string().into_bytes()
}

/// Runs a calibration on a fresh process: `form`'s opening (an `initialize` handshake for the handshake form), then
/// [`CALIBRATION_PAIRS`] requests, each followed by a sentinel, all written at once. When every reply came, each
/// request's before the sentinel after it, and the sentinels' in order: the time from the first line read to the last
/// reply.
fn calibrate(process: Process, form: Form, timeouts: Timeouts) -> Option<Duration> {
    let mut lines = Vec::new();
    let mut expected = Vec::new();
    if form == Form::Handshake {
        lines.push(initialize("mcp-wirefuzz-calibrate-init"));
        lines.push(initialized());
        expected.push("mcp-wirefuzz-calibrate-init".to_string());
    }
    let methods: &[&str] = match form {
        Form::Modern => &[DISCOVER, TOOLS_LIST, PING, "mcp-wirefuzz/no-such-method"],
        Form::Handshake | Form::Neutral => &[PING, TOOLS_LIST, "mcp-wirefuzz/no-such-method"],
    };
    for pair in 0..CALIBRATION_PAIRS {
        let request = format!("mcp-wirefuzz-calibrate-{pair}");
        let sentinel = format!("{SENTINEL_PREFIX}{pair}");
        lines.push(form.request(&request, methods[pair % methods.len()]));
        lines.push(form.sentinel(&sentinel));
        expected.push(request);
        expected.push(sentinel);
    }
    send_all(&process, lines)?;
    // One notification is sent on a handshake: a server may answer it, wrongly, with a null id (the planted bug
    // notification-reply, which still answers every request in order).
    let strays = Some(usize::from(form == Form::Handshake));
    replies_in_order(&process, Expected { ids: &expected, opening: None, exact: false, strays }, timeouts)
        .map(|(pace, _)| pace)
}

/// Writes `lines` to a calibration's process, all at once; `None` when its input is gone.
fn send_all(process: &Process, lines: Vec<Vec<u8>>) -> Option<()> {
    let input = process.input.as_ref()?;
    for line in lines {
        let _ = input.send([line, b"\n".to_vec()].concat());
    }
    Some(())
}

/// What a calibration expects back.
struct Expected<'a> {
    /// The ids sent, in the order sent; the sentinels' start with [`SENTINEL_PREFIX`].
    ids: &'a [String],
    /// The id of the era's opening, when its reply must be a result.
    opening: Option<&'a str>,
    /// True when every reply must come in the order sent; else only each sentinel's after the replies to everything
    /// sent before it.
    exact: bool,
    /// How many replies with ids never sent may come (`None`: any number, ignored).
    strays: Option<usize>,
}

/// Reads the replies to a calibration's lines until every expected id came: the time from the first line read to
/// the last reply, and what each id got ([`outcome`]). `None` as soon as the calibration cannot pass (a reply out of the order expected or twice, too
/// many strays, the opening answered without a result), and when the output ends or stays quiet past the reply
/// timeout with the start-up allowance.
fn replies_in_order(
    process: &Process,
    expected: Expected,
    timeouts: Timeouts,
) -> Option<(Duration, HashMap<String, String>)> {
    let mut seen: Vec<&str> = Vec::new();
    let mut outcomes = HashMap::new();
    let mut strays = 0;
    let mut first = None;
    let until = Instant::now() + timeouts.reply_for(false);
    while seen.len() < expected.ids.len() {
        let Ok(Stdout::Line(line)) = process.output.recv_timeout(until.saturating_duration_since(Instant::now()))
        else {
            return None;
        };
        first.get_or_insert_with(Instant::now);
        let Ok(reply) = serde_json::from_slice::<serde_json::Value>(&line.bytes) else { continue };
        let Some(id) = reply_to(&reply) else { continue };
        let at = match &id {
            Some(RequestId::String(id)) => expected.ids.iter().position(|sent| sent == id),
            _ => None,
        };
        let Some(at) = at else {
            match expected.strays {
                Some(limit) if strays == limit => return None,
                Some(_) => strays += 1,
                None => {}
            }
            continue;
        };
        let id = expected.ids[at].as_str();
        let opening_failed = expected.opening == Some(id) && !reply.get("result").is_some_and(|r| r.is_object());
        if !expected.admits(&seen, at) || opening_failed {
            return None;
        }
        seen.push(id);
        outcomes.insert(id.to_string(), outcome(&reply));
    }
    first.map(|first| (first.elapsed(), outcomes))
}

/// What a reply says, to compare replies by, read as the oracle reads replies: `result`, its error code, or
/// `invalid` (not a valid JSON-RPC response).
fn outcome(reply: &serde_json::Value) -> String {
    match Frame::classify(reply.clone()) {
        Frame::Response(Response { outcome: Outcome::Result(_), .. }) => "result".to_string(),
        Frame::Response(Response { outcome: Outcome::Error(error), .. }) => format!("error {}", error.code),
        _ => "invalid".to_string(),
    }
}

/// Runs a calibration of history on a fresh process, for a server that serves 2026-07-28: modern requests of a few
/// methods, a `ping` first, then the same again, and a sentinel. True when each method got the same outcome both
/// times: the server answers a modern request alike whether or not its process saw others first, so a kept process
/// shows a conversation what a fresh one would. rmcp does not: it answers a modern `ping` that comes first with a
/// result, as a handshake ping, and every later one with -32601 (ping is gone in 2026-07-28).
fn calibrate_history(process: Process, timeouts: Timeouts) -> bool {
    let methods = [PING, DISCOVER, TOOLS_LIST, "mcp-wirefuzz/no-such-method"];
    let id = |round: usize, n: usize| format!("mcp-wirefuzz-history-{round}-{n}");
    let mut lines = Vec::new();
    let mut ids = Vec::new();
    for round in 0..2 {
        for (n, method) in methods.iter().enumerate() {
            lines.push(Form::Modern.request(&id(round, n), method));
            ids.push(id(round, n));
        }
    }
    let sentinel = format!("{SENTINEL_PREFIX}history");
    lines.push(Form::Modern.sentinel(&sentinel));
    ids.push(sentinel);
    let expected = Expected { ids: &ids, opening: None, exact: false, strays: Some(0) };
    send_all(&process, lines).is_some()
        && replies_in_order(&process, expected, timeouts)
            .is_some_and(|(_, outcomes)| (0..methods.len()).all(|n| outcomes.get(&id(0, n)) == outcomes.get(&id(1, n))))
}

impl Expected<'_> {
    /// True when the reply to `ids[at]` may come after the replies `seen` (ids, as they came): it did not come
    /// before, and it is in its place (the next sent, when `exact`; for a sentinel, after everything sent before it).
    fn admits(&self, seen: &[&str], at: usize) -> bool {
        let id = self.ids[at].as_str();
        let in_place = match self.exact {
            true => at == seen.len(),
            false => {
                !id.starts_with(SENTINEL_PREFIX) || self.ids[..at].iter().all(|sent| seen.contains(&sent.as_str()))
            }
        };
        in_place && !seen.contains(&id)
    }
}

/// Runs a calibration of pings before `initialize` on a fresh process: a plain sentinel, then an `initialize`
/// handshake and a second sentinel. True when both sentinels and a result to `initialize` came, in order.
fn calibrate_pre_init(process: Process, timeouts: Timeouts) -> bool {
    let expected =
        [format!("{SENTINEL_PREFIX}pre"), "mcp-wirefuzz-calibrate-init".to_string(), format!("{SENTINEL_PREFIX}post")];
    let lines = vec![
        Form::Handshake.sentinel(&expected[0]),
        initialize(&expected[1]),
        initialized(),
        Form::Handshake.sentinel(&expected[2]),
    ];
    send_all(&process, lines).is_some()
        && replies_in_order(
            &process,
            Expected { ids: &expected, opening: Some(&expected[1]), exact: false, strays: None },
            timeouts,
        )
        .is_some()
}

/// Runs a calibration of [`Form::Neutral`] lines on a fresh process, for the era of `form`: a neutral line, the
/// era's opening (an enveloped `server/discover`, or `initialize` then `notifications/initialized` with a neutral
/// line between them), a neutral line, and a ping of the form. True when every line was answered by its id, in the
/// order sent, and the opening got a result: the server answers neutral lines in order, and one sent before the
/// opening left that era open. Stops at the first reply out of order, so a server silent on neutral lines costs
/// no timeout.
fn calibrate_neutral(process: Process, form: Form, timeouts: Timeouts) -> bool {
    let opening = "mcp-wirefuzz-calibrate-open".to_string();
    let [pre, mid, post, ping] = ["pre", "mid", "post", "ping"].map(|name| format!("{SENTINEL_PREFIX}neutral-{name}"));
    let mut lines = vec![Form::Neutral.sentinel(&pre)];
    let mut expected = vec![pre];
    match form {
        Form::Modern => {
            lines.push(form.request(&opening, DISCOVER));
            expected.push(opening.clone());
        }
        _ => {
            lines.extend([initialize(&opening), Form::Neutral.sentinel(&mid), initialized()]);
            expected.extend([opening.clone(), mid]);
        }
    }
    lines.extend([Form::Neutral.sentinel(&post), form.sentinel(&ping)]);
    expected.extend([post, ping]);
    send_all(&process, lines).is_some()
        && replies_in_order(
            &process,
            Expected { ids: &expected, opening: Some(&opening), exact: true, strays: None },
            timeouts,
        )
        .is_some()
}

/// The sentinel id a reply answers, when it answers one (its id carries [`SENTINEL_PREFIX`]).
pub(super) fn sentinel_reply(reply: &serde_json::Value) -> Option<&str> {
    reply_to(reply)?;
    reply.get("id")?.as_str().filter(|id| id.starts_with(SENTINEL_PREFIX))
}

#[cfg(test)]
mod tests {
    use super::super::StdioTarget;
    use super::super::test_servers::*;
    use super::*;
    use crate::server::{ServerCommand, Target};
    use crate::transcript::Input;

    #[test]
    fn a_calibration_compares_replies_by_result_or_error_code() {
        let said = |reply: serde_json::Value| outcome(&reply);
        assert_eq!(said(serde_json::json!({"jsonrpc": "2.0", "id": "a", "result": {}})), "result");
        let refused = serde_json::json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "no"}});
        assert_eq!(said(refused), "error -32601");
        // Both members, or an error without a code, is no valid response: not a result, whatever it carries.
        let both = serde_json::json!({"jsonrpc": "2.0", "id": "a", "result": {}, "error": {"code": 1, "message": ""}});
        assert_eq!(said(both), "invalid");
        assert_eq!(said(serde_json::json!({"jsonrpc": "2.0", "id": "a", "error": {}})), "invalid");
    }
    #[test]
    fn calibration_tells_servers_that_answer_in_order_from_those_that_reorder() {
        let in_order = answering(IN_ORDER);
        let sentinels = calibrated(&in_order, Eras::Dual, quick()).unwrap();
        assert!(
            matches!(sentinels, Sentinels::InOrder { eras: Eras::Dual, pre_init: true, neutral: true, .. }),
            "{sentinels:?}"
        );
        let swapped = answering(
            r#"while read -r a; do read -r b; for l in "$b" "$a"; do id=$(idof "$l"); [ -n "$id" ] && reply "$id"; done; done"#,
        );
        assert_eq!(calibrated(&swapped, Eras::Modern, quick()).unwrap(), Sentinels::Off);
        let deaf = answering(r#"while read -r l; do :; done"#);
        assert_eq!(calibrated(&deaf, Eras::Handshake, quick()).unwrap(), Sentinels::Off);
    }

    #[test]
    fn a_process_is_kept_only_on_a_server_that_answers_modern_requests_alike_however_many_it_saw() {
        let fresh_alike = |server: &ServerCommand, eras: Eras| {
            matches!(calibrated(server, eras, quick()).unwrap(), Sentinels::InOrder { fresh_alike: true, .. })
        };
        let in_order = answering(IN_ORDER);
        assert!(fresh_alike(&in_order, Eras::Modern) && fresh_alike(&in_order, Eras::Dual));
        assert!(!fresh_alike(&in_order, Eras::Handshake), "no modern requests, nothing to keep a process for");
        // As rmcp does: a modern ping that comes first is answered as a handshake ping, later ones with -32601.
        let first_ping = answering(
            r#"n=0; pinged=; while read -r l; do id=$(idof "$l"); [ -z "$id" ] && continue
case "$l" in
*'"ping"'*) if [ -z "$pinged" ]; then pinged=1; reply "$id"; else printf '{"jsonrpc":"2.0","id":"%s","error":{"code":-32601,"message":"ping"}}\n' "$id"; fi;;
*'"tools/list"'*) n=$((n+1)); printf '{"jsonrpc":"2.0","id":"%s","result":{"n":%s}}\n' "$id" "$n";;
*) reply "$id";;
esac; done"#,
        );
        let sentinels = calibrated(&first_ping, Eras::Modern, quick()).unwrap();
        assert!(matches!(sentinels, Sentinels::InOrder { fresh_alike: false, .. }), "{sentinels:?}");
        let list = Input::Line(
            br#"{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_vec(),
        );
        let mut target = StdioTarget::new(first_ping, quick()).with_sentinels(Eras::Modern);
        for _ in 0..2 {
            let transcript = target.run(&[list.clone(), Input::Sync]).unwrap();
            let reply = transcript.received().next().map(|l| String::from_utf8_lossy(l).to_string());
            assert!(reply.as_deref().is_some_and(|r| r.contains(r#""n":1"#)), "{}", transcript.render());
        }
    }

    #[test]
    fn neutral_sentinels_need_a_server_that_answers_them_in_order_and_keeps_its_eras_open() {
        // Silent on a line without a method (as the Python SDK is): in order, but no neutral sentinels.
        let silent = answering(r#"while read -r l; do case "$l" in *'"method"'*) reply "$(idof "$l")";; esac; done"#);
        let sentinels = calibrated(&silent, Eras::Dual, quick()).unwrap();
        assert!(matches!(sentinels, Sentinels::InOrder { pre_init: true, neutral: false, .. }), "{sentinels:?}");
        // Answers it, but a line without a method pins the handshake era: a modern discover after it is refused.
        let pinning = answering(
            r#"pinned=; while read -r l; do id=$(idof "$l"); case "$l" in *'"method"'*) ;; *) pinned=1;; esac
case "$l" in *discover*) if [ -n "$pinned" ]; then printf '{"jsonrpc":"2.0","id":"%s","error":{"code":-32600,"message":"era"}}\n' "$id"; continue; fi;; esac
reply "$id"; done"#,
        );
        let sentinels = calibrated(&pinning, Eras::Dual, quick()).unwrap();
        assert!(matches!(sentinels, Sentinels::InOrder { neutral: false, .. }), "{sentinels:?}");
        // The same server serving only the handshake era, and refusing pings before `initialize`: it needs neutral
        // sentinels there, and they leave its handshake as it was.
        let strict = answering(
            r#"ready=; while read -r l; do id=$(idof "$l"); case "$l" in *initialize*) ready=1;; esac
case "$l" in *'"ping"'*) [ -z "$ready" ] && continue;; esac; [ -n "$id" ] && reply "$id"; done"#,
        );
        let sentinels = calibrated(&strict, Eras::Handshake, quick()).unwrap();
        assert!(matches!(sentinels, Sentinels::InOrder { pre_init: false, neutral: true, .. }), "{sentinels:?}");
    }
    #[test]
    fn a_sentinel_answered_before_a_request_ends_the_calibration_at_once() {
        // The planted bug null-id-on-error: errors carry a null id. The calibration cannot pass; it used to wait
        // out the reply timeout and the start-up allowance for each form (24 s on a dual-era server).
        let null_errors = answering(
            r#"while read -r l; do case "$l" in *no-such-method*) printf '{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}\n';; *) id=$(idof "$l"); [ -n "$id" ] && reply "$id";; esac; done"#,
        );
        // A server that drops a request: the sentinel after it is answered first.
        let dropping = answering(
            r#"while read -r l; do case "$l" in *no-such-method*) ;; *) id=$(idof "$l"); [ -n "$id" ] && reply "$id";; esac; done"#,
        );
        for server in [null_errors, dropping] {
            let started = Instant::now();
            assert_eq!(calibrated(&server, Eras::Dual, Timeouts::default()).unwrap(), Sentinels::Off);
            assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        }
        // Extra lines do not end it: a notification, a log line, and (the planted bug notification-reply) a reply
        // with a null id to `notifications/initialized`, next to every reply owed.
        let chatty = answering(
            r#"printf '{"jsonrpc":"2.0","method":"notifications/message","params":{}}\nstarting\n'; while read -r l; do id=$(idof "$l"); if [ -n "$id" ]; then reply "$id"; else printf '{"jsonrpc":"2.0","id":null,"result":{}}\n'; fi; done"#,
        );
        assert!(matches!(calibrated(&chatty, Eras::Dual, quick()).unwrap(), Sentinels::InOrder { .. }));
    }
    #[test]
    fn a_calibration_wants_every_sentinel_after_what_was_sent_before_it_or_all_in_order_when_exact() {
        let sentinel = |n: u32| format!("{SENTINEL_PREFIX}{n}");
        let ids = ["a".to_string(), sentinel(0), "b".to_string(), sentinel(1)];
        // True when the replies `came` (indices into `ids`) are each admitted in turn.
        let passes = |exact: bool, came: &[usize]| {
            let expected = Expected { ids: &ids, opening: None, exact, strays: None };
            let mut seen = Vec::new();
            came.iter().all(|&at| {
                let admitted = expected.admits(&seen, at);
                seen.push(ids[at].as_str());
                admitted
            })
        };
        for exact in [false, true] {
            assert!(passes(exact, &[0, 1, 2, 3]));
            assert!(!passes(exact, &[1, 0, 2, 3]), "a sentinel before the request sent ahead of it");
            assert!(!passes(exact, &[0, 1, 3, 2]));
            assert!(!passes(exact, &[0, 0, 1, 2, 3]), "a reply twice");
        }
        assert!(passes(false, &[0, 2, 1, 3]), "a request answered before the sentinel sent ahead of it");
        assert!(!passes(true, &[0, 2, 1, 3]));
    }
}
