//! The probe of the server model: three conversations on fresh connections (a fully enveloped `server/discover`, an
//! enveloped request at a version no server supports, and an `initialize`), and [`classify`], which turns their
//! transcripts into a [`ServerModel`] without I/O.

use crate::model::{Eras, ServerModel, Source};
use crate::protocol::Frame;
use crate::protocol::codes::UNSUPPORTED_PROTOCOL_VERSION;
use crate::protocol::envelope::{self, META, SERVER_INFO_KEY};
use crate::protocol::era::{LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION};
use crate::protocol::methods::{DISCOVER, INITIALIZE};
use crate::server::Target;
use crate::transcript::{Event, Input, Transcript};
use serde_json::{Value, json};

/// The version no server supports, sent by the probe to collect -32022 `data.supported`.
pub const UNSUPPORTED_PROBE_VERSION: &str = "1900-01-01";

/// The probe's three conversations, each for a fresh connection: a fully enveloped `server/discover` at
/// 2026-07-28, the same at [`UNSUPPORTED_PROBE_VERSION`], and an `initialize` at 2025-11-25. Each request has id 1
/// and is followed by a sync point.
pub fn probe_inputs() -> [Vec<Input>; 3] {
    let discover = |version: &str| json!({ "jsonrpc": "2.0", "id": 1, "method": DISCOVER, "params": { META: envelope::envelope(version) } });
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": INITIALIZE, "params": {
        "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
        "clientInfo": { "name": "mcp-wirefuzz", "version": env!("CARGO_PKG_VERSION") } } });
    let conversation = |message: Value| vec![Input::Line(message.to_string().into_bytes()), Input::Sync];
    [
        conversation(discover(LATEST_MODERN_VERSION)),
        conversation(discover(UNSUPPORTED_PROBE_VERSION)),
        conversation(initialize),
    ]
}

/// Runs the probe's three conversations ([`probe_inputs`]) on `target` and classifies them.
pub fn probe(target: &mut dyn Target) -> anyhow::Result<ServerModel> {
    let [discover, unsupported, initialize] = probe_inputs();
    Ok(classify(&target.run(&discover)?, &target.run(&unsupported)?, &target.run(&initialize)?))
}

/// The model the probe's transcripts show. A discover result, a -32022, or any result carrying `resultType` to the
/// enveloped requests means the server serves 2026-07-28; -32601, another error or silence means it does not (that
/// is not a finding). An `initialize` result means it serves the handshake era.
pub fn classify(discover: &Transcript, unsupported: &Transcript, initialize: &Transcript) -> ServerModel {
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
    let mut handshake = false;
    let mut handshake_version = None;
    if let Some(Reply::Result(result)) = reply(initialize) {
        handshake = true;
        handshake_version = result.get("protocolVersion").and_then(Value::as_str).map(str::to_string);
        info = server_info(result.get("serverInfo")).or(info);
    }
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

    const SILENT: &str = "";
    const NOT_FOUND: &str = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;
    const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"calc","version":"1"}}}"#;

    #[test]
    fn a_legacy_server_is_handshake_only_whatever_it_answers_to_discover() {
        // A legacy server may also serve the enveloped request under legacy semantics: a result without resultType
        // or supportedVersions.
        let legacy_result = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
        let bad_request = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"x"}}"#;
        for refusal in [SILENT, NOT_FOUND, bad_request, legacy_result] {
            let model = classify(&answered(refusal), &answered(refusal), &answered(INIT_OK));
            assert_eq!(model.eras, Eras::Handshake, "{refusal}");
            assert_eq!(model.name.as_deref(), Some("calc"));
            assert_eq!(model.handshake_version.as_deref(), Some("2025-11-25"));
            assert!(model.versions.is_empty());
        }
    }

    #[test]
    fn discover_results_and_version_refusals_show_the_modern_era() {
        let discovered = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"rm","version":"3"}}}}"#;
        let refused = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28","2027-01-01"],"requested":"1900-01-01"}}}"#;
        let dual = classify(&answered(discovered), &answered(refused), &answered(INIT_OK));
        assert_eq!(dual.eras, Eras::Dual);
        assert_eq!(dual.versions, ["2025-11-25", "2026-07-28", "2027-01-01"]);
        assert_eq!(dual.name.as_deref(), Some("calc"), "initialize's serverInfo name wins");
        assert_eq!(dual.server_version.as_deref(), Some("1"));
        assert!(!dual.is_seed_calc());
        let modern = classify(&answered(NOT_FOUND), &answered(refused), &answered(NOT_FOUND));
        assert_eq!((modern.eras, modern.name), (Eras::Modern, None));
        let only_discover = classify(&answered(discovered), &answered(SILENT), &answered(SILENT));
        assert_eq!((only_discover.eras, only_discover.name.as_deref()), (Eras::Modern, Some("rm")));
        let nothing = classify(&answered(SILENT), &answered(SILENT), &answered(SILENT));
        assert_eq!(nothing.eras, Eras::Unknown);
        assert_eq!(nothing.serves(Era::Modern), None);
    }

    #[test]
    fn the_built_in_server_probes_as_its_stated_model() {
        let [a, b, c] = probe_inputs();
        let model = classify(&run_in_process(&Calc, &a), &run_in_process(&Calc, &b), &run_in_process(&Calc, &c));
        assert_eq!(model.eras, Eras::Dual);
        assert_eq!(model.versions, MODERN_VERSIONS);
        assert_eq!(model.name.as_deref(), Some(SERVER_NAME));
        assert!(model.is_seed_calc() && ServerModel::built_in().is_seed_calc());
        assert_eq!(probe(&mut InProcess(Calc)).unwrap(), model);
        assert_eq!(model.to_string(), "dual-era (2026-07-28; handshake 2025-11-25), name calc, probed",);
        assert_eq!(
            ServerModel::built_in().to_string(),
            "dual-era (2026-07-28; handshake 2024-11-05..2025-11-25), name calc, built-in"
        );
    }
}
