//! The learn stage of a fuzz run, whole ([`learn`]): the first contact, the fork server a Python program runs
//! through, the server model, the surface and the SDK, within a time limit, given up on a server that keeps stalling
//! ([`Stalls`]), the whole shutdown wait spent once on one that answers but does not exit when its input closes
//! ([`Watch`]); and its pieces, which the other subcommands use on their own ([`through_fork_server`],
//! [`server_model`], [`server_sdk`], [`stated_eras`], [`watched`], [`sdk_line`]). Nothing here prints: each line the
//! stage has to tell the user goes to the `say` its caller passes (the CLI writes it on stderr).

use super::contact::{self, Contact};
use super::stalls::{Stalls, StoppedAnswering, Watch};
use super::{probe, surface};
use crate::model::{Eras, ServerModel};
use crate::protocol::era::LATEST_HANDSHAKE_VERSION;
use crate::sdk;
use crate::server::hangs::HangWait;
use crate::server::transport::stdio::StdioTarget;
use crate::server::transport::stdio::fork::{self, ForkServer, Launch};
use crate::server::transport::stdio::python::python_program;
use crate::server::{CutShort, ServerSpec, Target, Timeouts};
use crate::surface::Surface;
use crate::transcript::{Ending, Input, Transcript};
use anyhow::{Result, bail};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long learning a server (first contact, model, surface, SDK) may take in all, by default: `fuzz` learns
/// within it, apart from `--time`.
pub const LEARNING_LIMIT: Duration = Duration::from_secs(300);

/// What the learn stage is told before it starts (`fuzz`'s options of the same names).
#[derive(Clone, Debug)]
pub struct Options {
    /// The eras the server serves, stated (`handshake`, `modern` or `dual`: `--eras`) rather than probed.
    pub eras: Option<String>,
    /// The SDK the server is written with, stated (`--sdk NAME`; `none` turns detection off) rather than detected.
    pub sdk: Option<String>,
    /// Do not learn the surface (`--no-surface`).
    pub no_surface: bool,
    /// Keep only these tools of the surface (`--tool`); none: all of them.
    pub tools: Vec<String>,
    /// Leave these tools out of the surface (`--skip-tool`).
    pub skip_tools: Vec<String>,
    /// The learning conversations' timeouts (reply, start-up, ...); their deadline is the stage's own, `limit` from
    /// its start.
    pub timeouts: Timeouts,
    /// How long the whole stage may take: past it, learning stops, says so once, and the run goes on without what
    /// was not learned.
    pub limit: Duration,
    /// Whether a Python program over stdio may run through a fork server ([`through_fork_server`]; false is
    /// `--no-fork-server`).
    pub fork_server: bool,
}

impl Default for Options {
    /// Everything probed and learned, within [`LEARNING_LIMIT`], a Python program through a fork server.
    fn default() -> Options {
        Options {
            eras: None,
            sdk: None,
            no_surface: false,
            tools: Vec::new(),
            skip_tools: Vec::new(),
            timeouts: Timeouts::default(),
            limit: LEARNING_LIMIT,
            fork_server: true,
        }
    }
}

/// What a run learns of its server before it fuzzes.
#[derive(Debug)]
pub struct Learned {
    /// The server to run: the one given, or the same server started through `fork_server` (reports and case files
    /// still name the plain command).
    pub server: ServerSpec,
    /// The fork server `server` runs through, if any: keep it as long as the server runs (dropping it stops it).
    pub fork_server: Option<ForkServer>,
    /// The server model (stated, the built-in server's, or probed; classified from what was seen when not).
    pub model: ServerModel,
    /// The surface, focused and narrowed by the options; `None` when not learned.
    pub surface: Option<Arc<Surface>>,
    /// The SDK the server is written with, stated or detected.
    pub sdk: Option<sdk::Chosen>,
    /// The first contact's conversation when the server answered nothing to it: the run's first conversation,
    /// judged with the others ([`crate::campaign::Options::prelude`]); empty otherwise.
    pub prelude: Vec<(Vec<Input>, Transcript)>,
}

/// Learns `server` as `fuzz` does, within `options.limit`, each line for the user given to `say`: the first contact
/// on a plain process (a child over stdio, eras not stated), the fork server for a Python program
/// ([`through_fork_server`]), the model ([`server_model`]), the surface (unless `no_surface`; focused with `tools`,
/// narrowed with `skip_tools`), and the SDK ([`server_sdk`]). A server that did not answer the first contact is not
/// learned further (its conversation is the prelude, and no fork server is started for it); nor is one that stalled
/// in two learning conversations ([`Stalls`]); learning that passes its limit says so once. One that answered but
/// did not exit when its input closed is said once ([`outlived_line`]) and learned on. The run goes on without what
/// was not learned. Errors: a bad stated era, SDK or tool name, and what a learning conversation could not do.
pub fn learn(server: ServerSpec, options: &Options, say: &mut dyn FnMut(&str)) -> Result<Learned> {
    let timeouts = Timeouts { deadline: Instant::now().checked_add(options.limit), ..options.timeouts };
    let watch = Watch::default();
    // The first contact comes first, on a plain process: a server that answers nothing is not worth a fork server's
    // start and trial (tens of seconds for a silent Python program), and its case file is due at once.
    let contact = first_contact(&server, options.eras.as_deref(), timeouts, &watch)?;
    if let Some(contact) = contact.filter(Contact::unanswered) {
        return Ok(unanswered(server, contact, say));
    }
    // A server that does not exit when its input closes, said once, once a learning conversation showed it (after
    // the fork server's line, a Python program's first).
    let mut outlived_said = false;
    let mut outlived = |say: &mut dyn FnMut(&str)| {
        if let Some(waited) = watch.outlived()
            && !std::mem::replace(&mut outlived_said, true)
        {
            say(&outlived_line(waited));
        }
    };
    let (server, fork_server) = through_fork_server(server, options.fork_server, timeouts, say);
    outlived(say);
    // Why learning stopped, said once; `None` when it did not.
    let stopped = |error: &anyhow::Error| -> Option<String> {
        if CutShort::DeadlinePassed.is(error) {
            Some(format!("learning passed its limit of {} s", options.limit.as_secs()))
        } else if error.is::<StoppedAnswering>() {
            Some(error.to_string())
        } else {
            None
        }
    };
    let mut said = false;
    let mut without = |why: String, what: &str, say: &mut dyn FnMut(&str)| {
        if !std::mem::replace(&mut said, true) {
            say(&format!("mcp-wirefuzz: {why}: fuzzing without {what}"));
        }
    };
    let model = match server_model(&server, options.eras.as_deref(), timeouts, Some(&watch)) {
        Err(error) if let Some(why) = stopped(&error) => {
            without(why, "a server model (--eras states it)", say);
            let unanswered = Transcript { events: Vec::new(), ending: Ending::Hung { waited_ms: 0 } };
            probe::classify(&unanswered, &unanswered, &[])
        }
        model => model?,
    };
    outlived(say);
    say(&format!("server model: {model}"));
    let surface = match options.no_surface {
        true => None,
        false => match surface::learn(&mut *watched(&server, timeouts, Some(&watch)), &model) {
            Err(error) if let Some(why) = stopped(&error) => {
                without(why, "its surface", say);
                None
            }
            learned => {
                let learned = learned?.focus(&options.tools)?.skip(&options.skip_tools)?;
                outlived(say);
                say(&format!("server surface: {learned}"));
                for note in &learned.notes {
                    say(&format!("  {note}"));
                }
                Some(Arc::new(learned))
            }
        },
    };
    let sdk = match server_sdk(&server, options.sdk.as_deref(), model.eras, timeouts, Some(&watch)) {
        Err(error) if stopped(&error).is_some() => None,
        sdk => sdk?,
    };
    outlived(say);
    say(&sdk_line(sdk.as_ref()));
    Ok(Learned { server, fork_server, model, surface, sdk, prelude: Vec::new() })
}

/// The first contact with a child process over stdio ([`contact::first_contact`]) when the eras are not stated:
/// `None` otherwise, or when learning's deadline passed first.
fn first_contact(
    server: &ServerSpec,
    eras: Option<&str>,
    timeouts: Timeouts,
    watch: &Watch,
) -> Result<Option<Contact>> {
    match (server, eras) {
        (ServerSpec::Command(_), None) => match contact::first_contact(&mut *watched(server, timeouts, Some(watch))) {
            Err(error) if CutShort::DeadlinePassed.is(&error) => Ok(None),
            contact => Ok(Some(contact?)),
        },
        _ => Ok(None),
    }
}

/// What is learned of a server that answered nothing to the first `contact`: the model its conversation shows, and
/// that conversation as the run's first.
fn unanswered(server: ServerSpec, contact: Contact, say: &mut dyn FnMut(&str)) -> Learned {
    let wrote = match contact.lines() {
        0 => "nothing".to_string(),
        lines => format!("{lines} line(s), none a response,"),
    };
    say(&format!(
        "mcp-wirefuzz: the server wrote {wrote} to an initialize in {:.1} s: not learned further; that \
         conversation is the run's first",
        contact.took.as_secs_f64()
    ));
    let t = &contact.transcript;
    let model = probe::classify(t, t, &[(LATEST_HANDSHAKE_VERSION, t)]);
    say(&format!("server model: {model}"));
    let prelude = vec![(contact.inputs, contact.transcript)];
    Learned { server, fork_server: None, model, surface: None, sdk: None, prelude }
}

/// The server to start: `server` itself; or, for a Python program over stdio, the same server started through a
/// fork server started for it (kept running by the returned guard; reports and case files still name the plain
/// command), unless `allowed` is false (`--no-fork-server`) or the fork server is not fit for it. Says which, and
/// why. The program's stand-in per conversation is the running executable's `attach SOCKET` (`mcp-wirefuzz
/// attach`): a runner of its own that does not answer `attach` as `mcp-wirefuzz` does passes `allowed` false (else
/// the fork server's trial conversation fails and plain processes run, after that trial).
pub fn through_fork_server(
    server: ServerSpec,
    allowed: bool,
    timeouts: Timeouts,
    say: &mut dyn FnMut(&str),
) -> (ServerSpec, Option<ForkServer>) {
    let ServerSpec::Command(command) = &server else { return (server, None) };
    let Some(program) = python_program(command) else { return (server, None) };
    if !allowed {
        say("python server: a plain process per conversation (--no-fork-server)");
        return (server, None);
    }
    let launched = match std::env::current_exe() {
        Ok(stub) => fork::launch(command, &program, &stub, timeouts),
        Err(error) => Launch::Plain { why: format!("cannot find the mcp-wirefuzz executable to attach with: {error}") },
    };
    match launched {
        Launch::Forked { command, server: fork_server } => {
            let left_out = match fork_server.left_out() {
                [] => String::new(),
                modules => format!("; not preloaded: {}", modules.join("; ")),
            };
            say(&format!(
                "python server: running through the fork server (preloaded {}{left_out}); --no-fork-server opts out",
                fork_server.preloaded()
            ));
            (ServerSpec::Command(command), Some(fork_server))
        }
        Launch::Plain { why } => {
            say(&format!("python server: a plain process per conversation, not the fork server: {why}"));
            (server, None)
        }
    }
}

/// The model stated by name (`handshake`, `modern` or `dual`: `--eras`), if one is given.
pub fn stated_eras(eras: Option<&str>) -> Result<Option<ServerModel>> {
    let Some(name) = eras else { return Ok(None) };
    match Eras::from_name(name) {
        Some(eras) => Ok(Some(ServerModel::stated(eras))),
        None => bail!("--eras takes handshake, modern or dual, not `{name}`"),
    }
}

/// The server model: stated by `eras` ([`stated_eras`]), the built-in server's, or probed on fresh processes of a
/// child (with `watch`, given up once the server stalled that often: [`Stalls`]).
pub fn server_model(
    server: &ServerSpec,
    eras: Option<&str>,
    timeouts: Timeouts,
    watch: Option<&Watch>,
) -> Result<ServerModel> {
    if let Some(stated) = stated_eras(eras)? {
        return Ok(stated);
    }
    match server {
        ServerSpec::Command(_) | ServerSpec::Http(_) => probe::probe(&mut *watched(server, timeouts, watch)),
        _ => Ok(ServerModel::built_in()),
    }
}

/// A target for a learning conversation: watched for stalls ([`Stalls`]) when `watch` counts them. A child process
/// watched then shares with the stage's other targets what they saw of its exit ([`Watch::hangs`]): once one
/// conversation waited the whole shutdown wait for a server that owed nothing and did not exit, the others wait for
/// its exit only briefly (the transport's shortcut for a fuzzing worker, [`HangWait::Suspect`]; learning sends no
/// tool call, so the exit is all that mode changes here, and learning judges no ending but its stalls).
pub fn watched<'a>(server: &ServerSpec, timeouts: Timeouts, watch: Option<&'a Watch>) -> Box<dyn Target + 'a> {
    let Some(watch) = watch else { return server.target(timeouts) };
    let target = match server {
        ServerSpec::Command(command) => {
            let timeouts = Timeouts { hang: HangWait::Suspect(timeouts.hang.wait()), ..timeouts };
            Box::new(StdioTarget::new(command.clone(), timeouts).cold().sharing(watch.hangs()))
        }
        _ => server.target(timeouts),
    };
    Box::new(Stalls::new(target, watch))
}

/// The line that tells the user the server did not exit within `waited` of its input closing, though it owed
/// nothing (said once by [`learn`]).
pub fn outlived_line(waited: Duration) -> String {
    format!(
        "mcp-wirefuzz: the server answered but did not exit within {:.1} s of its input closing (SERVER-SHUTDOWN, a \
         SHOULD, judged in the run's conversations): learning goes on, waiting for its exit only briefly",
        waited.as_secs_f64()
    )
}

/// The SDK the server is written with: `stated` by name (`--sdk NAME`), else the one the fingerprint conversation
/// shows for certain (a child server only; the built-in server has no SDK) on a server that serves `eras`; `None`
/// when neither, or for `none`.
pub fn server_sdk(
    server: &ServerSpec,
    stated: Option<&str>,
    eras: Eras,
    timeouts: Timeouts,
    watch: Option<&Watch>,
) -> Result<Option<sdk::Chosen>> {
    if stated == Some("none") {
        return Ok(None);
    }
    if let Some(name) = stated {
        let sdk = sdk::by_name(name).map_err(|e| anyhow::anyhow!("--sdk: {e}"))?;
        return Ok(Some(sdk::Chosen { sdk, source: sdk::Source::Stated }));
    }
    match server {
        ServerSpec::Command(_) | ServerSpec::Http(_) => {
            let transcript = watched(server, timeouts, watch).run(&sdk::fingerprint_inputs())?;
            Ok(sdk::detect(&transcript, eras))
        }
        _ => Ok(None),
    }
}

/// The line that names the SDK of a run (said in its first lines and in its summary).
pub fn sdk_line(chosen: Option<&sdk::Chosen>) -> String {
    match chosen {
        Some(chosen) => format!("SDK: {chosen}"),
        None => "SDK: none named or detected (--sdk NAME tells its known deviations apart from yours)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::builtin::mutants::Mutant;
    use crate::server::builtin::reference::Planted;
    use crate::server::{InProcess, ServerCommand};

    /// Runs the stage on `server`; what it learned and the lines it said.
    fn staged(server: ServerSpec, options: &Options) -> (Learned, Vec<String>) {
        let mut lines = Vec::new();
        let learned = learn(server, options, &mut |line| lines.push(line.to_string())).unwrap();
        (learned, lines)
    }

    #[test]
    fn the_built_in_server_is_learned_as_fuzz_learns_it() {
        let (learned, lines) = staged(ServerSpec::BuiltIn, &Options::default());
        assert_eq!(learned.server, ServerSpec::BuiltIn);
        assert!(learned.fork_server.is_none() && learned.sdk.is_none() && learned.prelude.is_empty());
        assert_eq!(learned.model, ServerModel::built_in());
        assert_eq!(learned.surface.as_deref(), Some(&*Surface::built_in()));
        assert_eq!(
            lines,
            [
                "server model: dual-era (2026-07-28; handshake 2024-11-05..2025-11-25), name calc, built-in"
                    .to_string(),
                format!("server surface: {}", Surface::built_in()),
                sdk_line(None),
            ]
        );
        // Stated, focused, without a surface.
        let options = Options { eras: Some("modern".into()), tools: vec!["add".into()], ..Options::default() };
        let (focused, lines) = staged(ServerSpec::BuiltIn, &options);
        assert_eq!(focused.model, ServerModel::stated(Eras::Modern));
        assert_eq!(focused.surface.map(|s| s.tools.len()), Some(1));
        assert_eq!(lines[0], format!("server model: {}", ServerModel::stated(Eras::Modern)));
        let options = Options { no_surface: true, sdk: Some("rmcp".into()), ..Options::default() };
        let (bare, lines) = staged(ServerSpec::BuiltIn, &options);
        assert!(bare.surface.is_none() && bare.sdk.is_some_and(|chosen| chosen.sdk.name == "rmcp"));
        assert_eq!(lines.len(), 2, "{lines:?}");
        let bad = Options { eras: Some("both".into()), ..Options::default() };
        assert!(learn(ServerSpec::BuiltIn, &bad, &mut |_| {}).is_err());
    }

    #[test]
    fn a_mutant_is_learned_with_the_planted_servers_surface() {
        let mutant = Mutant::ALL[0];
        let (learned, _) = staged(ServerSpec::Mutant(mutant), &Options::default());
        assert_eq!(learned.server, ServerSpec::Mutant(mutant));
        assert_eq!(learned.model, ServerModel::built_in());
        let planted = surface::learn(&mut InProcess(Planted(mutant)), &ServerModel::built_in()).unwrap();
        assert_eq!(learned.surface.as_deref(), Some(&planted));
        assert!(learned.sdk.is_none() && learned.prelude.is_empty());
    }

    #[test]
    fn a_silent_child_is_not_learned_past_its_first_contact_which_is_the_prelude() {
        let command = ServerCommand::from_argv(&["sleep".to_string(), "1000".to_string()]).unwrap();
        let timeouts = Timeouts {
            reply: Duration::from_millis(200),
            startup: Duration::from_millis(300),
            shutdown: Duration::from_millis(100),
            ..Timeouts::default()
        };
        let options = Options { timeouts, limit: Duration::from_secs(20), ..Options::default() };
        let began = Instant::now();
        let (learned, lines) = staged(ServerSpec::Command(command.clone()), &options);
        assert!(began.elapsed() < Duration::from_secs(5), "{:?}", began.elapsed());
        assert_eq!(learned.server, ServerSpec::Command(command));
        assert!(learned.fork_server.is_none() && learned.surface.is_none() && learned.sdk.is_none());
        assert_eq!(learned.prelude.len(), 1);
        assert_eq!(learned.prelude[0].0, probe::probe_inputs()[2], "the first contact's initialize");
        assert!(matches!(learned.prelude[0].1.ending, Ending::Hung { .. }), "{:?}", learned.prelude[0].1);
        assert_eq!(learned.model.eras, Eras::Unknown);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("mcp-wirefuzz: the server wrote nothing to an initialize in "), "{lines:?}");
        assert!(lines[1].starts_with("server model: eras unknown"), "{lines:?}");
    }

    #[test]
    fn a_server_that_answers_but_never_exits_at_eof_is_learned_whole_with_one_shutdown_wait() {
        // Answers initialize, ping and tools/list, and stays up once its input closes (the Python SDK mcp 1.6.0).
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hostile/server.py");
        let tag = format!("wirefuzz-learn-outlive-{}", std::process::id());
        let command = ServerCommand::from_argv(&["python3".into(), script.into(), "outlive".into(), tag]).unwrap();
        let shutdown = Duration::from_secs(4);
        let timeouts = Timeouts { reply: Duration::from_secs(1), shutdown, ..Timeouts::default() };
        let options = Options { timeouts, fork_server: false, ..Options::default() };
        let began = Instant::now();
        let (learned, lines) = staged(ServerSpec::Command(command), &options);
        let took = began.elapsed();
        assert_eq!(learned.model.eras, Eras::Handshake, "{lines:?}");
        assert_eq!(learned.model.name.as_deref(), Some("outlive"));
        let tools: Vec<&str> = learned.surface.iter().flat_map(|s| s.tools.iter().map(|t| t.name.as_str())).collect();
        assert_eq!(tools, ["echo"], "{lines:?}");
        assert!(learned.prelude.is_empty() && learned.fork_server.is_none());
        assert!(!lines.iter().any(|line| line.contains("neither answered nor exited")), "{lines:?}");
        let said = lines.iter().filter(|line| line.contains("did not exit within 4.0 s of its input closing"));
        assert_eq!(said.count(), 1, "said once: {lines:?}");
        // Twelve conversations (first contact, six of the probe, four lists, the SDK's): each waiting the whole
        // shutdown wait would take 48 s; only the first does (13 s here, debug build).
        assert!(took < shutdown * 12 / 2, "learning took {took:?}: {lines:?}");
    }
}
