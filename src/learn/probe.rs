//! The probe of the server model: conversations on fresh connections (a fully enveloped `server/discover`, an
//! enveloped request at a version no server supports, an `initialize` at 2025-11-25, and one `initialize` at each
//! other handshake version when the server serves that era), and [`classify`], which turns their transcripts into a
//! [`ServerModel`] without I/O.

use crate::model::{Eras, ServerModel, Source};
use crate::protocol::Frame;
use crate::protocol::codes::UNSUPPORTED_PROTOCOL_VERSION;
use crate::protocol::envelope::{self, META, SERVER_INFO_KEY};
use crate::protocol::era::{HANDSHAKE_VERSIONS, LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION};
use crate::protocol::methods::{DISCOVER, INITIALIZE};
use crate::server::Target;
use crate::transcript::{Event, Input, Transcript};
use serde_json::{Value, json};

/// The version no server supports, sent by the probe to collect -32022 `data.supported`.
pub const UNSUPPORTED_PROBE_VERSION: &str = "1900-01-01";

/// The probe's first three conversations, each for a fresh connection: a fully enveloped `server/discover` at
/// 2026-07-28, the same at [`UNSUPPORTED_PROBE_VERSION`], and an `initialize` at 2025-11-25. Each request has id 1
/// and is followed by a sync point.
pub fn probe_inputs() -> [Vec<Input>; 3] {
    let discover = |version: &str| json!({ "jsonrpc": "2.0", "id": 1, "method": DISCOVER, "params": { META: envelope::envelope(version) } });
    let conversation = |message: Value| vec![Input::Line(message.to_string().into_bytes()), Input::Sync];
    [
        conversation(discover(LATEST_MODERN_VERSION)),
        conversation(discover(UNSUPPORTED_PROBE_VERSION)),
        initialize_inputs(LATEST_HANDSHAKE_VERSION),
    ]
}

/// A conversation of the probe: an `initialize` at `version` with id 1, followed by a sync point.
pub fn initialize_inputs(version: &str) -> Vec<Input> {
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": INITIALIZE, "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": { "name": "mcp-wirefuzz", "version": env!("CARGO_PKG_VERSION") } } });
    vec![Input::Line(initialize.to_string().into_bytes()), Input::Sync]
}

/// The handshake versions the probe asks for in an `initialize` of their own after the one at 2025-11-25
/// (`initialize`): every other handshake version when that got a result; when it got an error, the handshake
/// versions the error's `data.supported` names (the lifecycle page's example refusal); none otherwise (the server
/// does not serve the handshake era, which costs no further process).
pub fn versions_to_probe(initialize: &Transcript) -> Vec<&'static str> {
    let others = HANDSHAKE_VERSIONS.into_iter().filter(|v| *v != LATEST_HANDSHAKE_VERSION);
    match reply(initialize) {
        Some(Reply::Result(_)) => others.collect(),
        Some(Reply::Error(error)) => {
            let named = strings(error.get("data").and_then(|d| d.get("supported")));
            others.filter(|v| named.iter().any(|n| n == v)).collect()
        }
        None => Vec::new(),
    }
}

/// Runs the probe's conversations ([`probe_inputs`], then [`initialize_inputs`] for each of
/// [`versions_to_probe`]) on `target` and classifies them.
pub fn probe(target: &mut dyn Target) -> anyhow::Result<ServerModel> {
    let [discover, unsupported, initialize] = probe_inputs();
    let (discover, unsupported) = (target.run(&discover)?, target.run(&unsupported)?);
    let mut initializes = vec![(LATEST_HANDSHAKE_VERSION, target.run(&initialize)?)];
    for version in versions_to_probe(&initializes[0].1) {
        initializes.push((version, target.run(&initialize_inputs(version))?));
    }
    let initializes: Vec<(&str, &Transcript)> = initializes.iter().map(|(v, t)| (*v, t)).collect();
    Ok(classify(&discover, &unsupported, &initializes))
}

/// The model the probe's transcripts show: `discover` and `unsupported` from the enveloped requests, `initializes`
/// each `initialize` and the version it asked for, the one at 2025-11-25 first. A discover result, a -32022, or any
/// result carrying `resultType` to the enveloped requests means the server serves 2026-07-28; -32601, another error
/// or silence means it does not (that is not a finding). An `initialize` result means it serves the handshake era;
/// a version is accepted when a result answers its `initialize` with it.
pub fn classify(discover: &Transcript, unsupported: &Transcript, initializes: &[(&str, &Transcript)]) -> ServerModel {
    let mut versions = Vec::new();
    let mut info: Option<(String, Option<String>)> = None;
    let mut modern = false;
    for transcript in [discover, unsupported] {
        match reply(transcript) {
            // A discover result (it names supportedVersions) or any result carrying resultType; a legacy server
            // that answers the method some other way has not shown it serves 2026-07-28.
            Some(Reply::Result(result))
                if result.get("resultType").is_some() || result.get("supportedVersions").is_some() =>
            {
                modern = true;
                versions.extend(strings(result.get("supportedVersions")));
                let stamp = result.get(META).and_then(|m| m.get(SERVER_INFO_KEY));
                info = info.or_else(|| server_info(stamp));
            }
            Some(Reply::Error(error))
                if error.get("code").and_then(Value::as_i64) == Some(UNSUPPORTED_PROTOCOL_VERSION) =>
            {
                modern = true;
                let supported = strings(error.get("data").and_then(|d| d.get("supported")));
                versions.extend(supported.into_iter().filter(|v| v != UNSUPPORTED_PROBE_VERSION));
            }
            _ => {}
        }
    }
    let mut handshake_info = None;
    let mut handshake_version = None;
    let mut echoed = Vec::new();
    for (asked, transcript) in initializes {
        let Some(Reply::Result(result)) = reply(transcript) else { continue };
        let answered = result.get("protocolVersion").and_then(Value::as_str);
        if handshake_info.is_none() {
            handshake_info = Some(server_info(result.get("serverInfo")));
            handshake_version = answered.map(str::to_string);
        }
        if answered == Some(*asked) {
            echoed.push(*asked);
        }
    }
    let handshake = handshake_info.is_some();
    info = handshake_info.flatten().or(info);
    let mut unique = Vec::new();
    for version in versions {
        if !unique.contains(&version) {
            unique.push(version);
        }
    }
    let (name, server_version) = info.map_or((None, None), |(name, version)| (Some(name), version));
    ServerModel {
        eras: Eras::of(modern, handshake),
        versions: unique,
        handshake_version,
        accepted: HANDSHAKE_VERSIONS.into_iter().filter(|v| echoed.contains(v)).map(str::to_string).collect(),
        name,
        server_version,
        source: Source::Probed,
    }
}

/// A reply the probe got.
enum Reply {
    Result(Value),
    Error(Value),
}

/// The first reply with id 1 among the lines the server wrote.
fn reply(transcript: &Transcript) -> Option<Reply> {
    transcript.events.iter().find_map(|event| {
        let Event::Received { line, .. } = event else { return None };
        let Frame::Response(_) = Frame::parse(line) else { return None };
        let mut value: Value = serde_json::from_slice(line).ok()?;
        if value.get("id") != Some(&json!(1)) {
            return None;
        }
        match (value.get_mut("result").map(Value::take), value.get_mut("error").map(Value::take)) {
            (Some(result), None) if result.is_object() => Some(Reply::Result(result)),
            (None, Some(error)) => Some(Reply::Error(error)),
            _ => None,
        }
    })
}

fn strings(value: Option<&Value>) -> Vec<String> {
    let items = value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    items.iter().filter_map(Value::as_str).map(str::to_string).collect()
}

/// The name and version of a serverInfo object.
fn server_info(info: Option<&Value>) -> Option<(String, Option<String>)> {
    let info = info?;
    let name = info.get("name")?.as_str()?.to_string();
    Some((name, info.get("version").and_then(Value::as_str).map(str::to_string)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Era;
    use crate::protocol::era::MODERN_VERSIONS;
    use crate::server::builtin::reference::{Calc, SERVER_NAME};
    use crate::server::{InProcess, run_in_process};
    use crate::transcript::Ending;

    fn answered(reply: &str) -> Transcript {
        let [sent, ..] = probe_inputs();
        let Input::Line(line) = &sent[0] else { unreachable!() };
        let mut events = vec![Event::Sent(line.clone())];
        if !reply.is_empty() {
            events.push(Event::Received { line: reply.as_bytes().to_vec(), truncated: false });
        }
        Transcript { events, ending: Ending::Closed }
    }

    /// An `initialize` result answering `version`.
    fn init_ok(version: &str) -> Transcript {
        answered(&INIT_OK.replace("2025-11-25", version))
    }

    /// The probe's `initialize` at 2025-11-25 alone, answered as `transcript` shows.
    fn latest(transcript: &Transcript) -> [(&'static str, &Transcript); 1] {
        [(LATEST_HANDSHAKE_VERSION, transcript)]
    }

    const SILENT: &str = "";
    const NOT_FOUND: &str = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;
    const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"calc","version":"1"}}}"#;

    #[test]
    fn a_legacy_server_is_handshake_only_whatever_it_answers_to_discover() {
        // A legacy server may also serve the enveloped request under legacy semantics: a result without resultType
        // or supportedVersions.
        let legacy_result = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
        let bad_request = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"x"}}"#;
        let init = answered(INIT_OK);
        for refusal in [SILENT, NOT_FOUND, bad_request, legacy_result] {
            let model = classify(&answered(refusal), &answered(refusal), &latest(&init));
            assert_eq!(model.eras, Eras::Handshake, "{refusal}");
            assert_eq!(model.name.as_deref(), Some("calc"));
            assert_eq!(model.handshake_version.as_deref(), Some("2025-11-25"));
            assert_eq!(model.accepted, ["2025-11-25"]);
            assert!(model.versions.is_empty());
        }
    }

    #[test]
    fn discover_results_and_version_refusals_show_the_modern_era() {
        let discovered = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"rm","version":"3"}}}}"#;
        let refused = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28","2027-01-01"],"requested":"1900-01-01"}}}"#;
        let dual = classify(&answered(discovered), &answered(refused), &latest(&answered(INIT_OK)));
        assert_eq!(dual.eras, Eras::Dual);
        assert_eq!(dual.versions, ["2025-11-25", "2026-07-28", "2027-01-01"]);
        assert_eq!(dual.name.as_deref(), Some("calc"), "initialize's serverInfo name wins");
        assert_eq!(dual.server_version.as_deref(), Some("1"));
        assert!(!dual.is_seed_calc());
        let modern = classify(&answered(NOT_FOUND), &answered(refused), &latest(&answered(NOT_FOUND)));
        assert_eq!((modern.eras, modern.name.as_deref()), (Eras::Modern, None));
        assert!(modern.accepted.is_empty() && modern.accepts("2025-11-25").is_none());
        let only_discover = classify(&answered(discovered), &answered(SILENT), &latest(&answered(SILENT)));
        assert_eq!((only_discover.eras, only_discover.name.as_deref()), (Eras::Modern, Some("rm")));
        let nothing = classify(&answered(SILENT), &answered(SILENT), &latest(&answered(SILENT)));
        assert_eq!(nothing.eras, Eras::Unknown);
        assert_eq!(nothing.serves(Era::Modern), None);
    }

    #[test]
    fn a_version_is_accepted_when_its_initialize_is_echoed() {
        // A server that serves 2025-06-18 and 2025-11-25 only: it answers the others with its latest.
        let (latest, older, oldest) = (init_ok("2025-11-25"), init_ok("2025-06-18"), answered(SILENT));
        let counter_offer = init_ok("2025-11-25");
        let initializes =
            [("2025-11-25", &latest), ("2024-11-05", &counter_offer), ("2025-03-26", &oldest), ("2025-06-18", &older)];
        let model = classify(&answered(NOT_FOUND), &answered(NOT_FOUND), &initializes);
        assert_eq!(model.accepted, ["2025-06-18", "2025-11-25"], "oldest first; silence accepts nothing");
        assert_eq!((model.accepts("2025-06-18"), model.accepts("2024-11-05")), (Some(true), Some(false)));
        assert_eq!(model.handshake_version.as_deref(), Some("2025-11-25"));
        assert_eq!(model.to_string(), "handshake-only (handshake 2025-06-18..2025-11-25), name calc, probed");
        assert_eq!(model.to_json()["accepted"], json!(["2025-06-18", "2025-11-25"]));
        // A server whose latest is 2025-06-18 counter-offers it to 2025-11-25: only the echo counts.
        let (counter_offer, echo) = (init_ok("2025-06-18"), init_ok("2024-11-05"));
        let model =
            classify(&answered(SILENT), &answered(SILENT), &[("2025-11-25", &counter_offer), ("2024-11-05", &echo)]);
        assert_eq!((model.eras, model.handshake_version.as_deref()), (Eras::Handshake, Some("2025-06-18")));
        assert_eq!(model.to_string(), "handshake-only (handshake 2024-11-05), name calc, probed");
        // An answer that is no handshake version, or an error, accepts nothing.
        let garbage = init_ok("2099-01-01");
        let model = classify(&answered(SILENT), &answered(SILENT), &[("2025-11-25", &garbage)]);
        assert_eq!((model.eras, model.accepts("2025-11-25")), (Eras::Handshake, None));
    }

    #[test]
    fn older_versions_are_probed_only_on_a_server_that_serves_the_handshake_era() {
        assert_eq!(versions_to_probe(&answered(INIT_OK)), ["2024-11-05", "2025-03-26", "2025-06-18"]);
        let modern_only = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}"#;
        for unserved in [SILENT, NOT_FOUND, modern_only] {
            assert!(versions_to_probe(&answered(unserved)).is_empty(), "{unserved}");
        }
        // lifecycle.mdx's example refusal names the versions the server supports: those are probed.
        let example = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unsupported protocol version","data":{"supported":["2024-11-05"],"requested":"2025-11-25"}}}"#;
        assert_eq!(versions_to_probe(&answered(example)), ["2024-11-05"]);
    }

    #[test]
    fn the_built_in_server_probes_as_its_stated_model() {
        let [a, b, c] = probe_inputs();
        let latest = run_in_process(&Calc, &c);
        let others: Vec<(&str, Transcript)> =
            versions_to_probe(&latest).into_iter().map(|v| (v, run_in_process(&Calc, &initialize_inputs(v)))).collect();
        let mut initializes = vec![(LATEST_HANDSHAKE_VERSION, &latest)];
        initializes.extend(others.iter().map(|(v, t)| (*v, t)));
        let model = classify(&run_in_process(&Calc, &a), &run_in_process(&Calc, &b), &initializes);
        assert_eq!(model.eras, Eras::Dual);
        assert_eq!(model.versions, MODERN_VERSIONS);
        assert_eq!(model.accepted, HANDSHAKE_VERSIONS);
        assert_eq!(model.name.as_deref(), Some(SERVER_NAME));
        assert!(model.is_seed_calc() && ServerModel::built_in().is_seed_calc());
        assert_eq!(probe(&mut InProcess(Calc)).unwrap(), model);
        assert_eq!(model.to_string(), "dual-era (2026-07-28; handshake 2024-11-05..2025-11-25), name calc, probed");
        assert_eq!(
            ServerModel::built_in().to_string(),
            "dual-era (2026-07-28; handshake 2024-11-05..2025-11-25), name calc, built-in"
        );
    }
}
