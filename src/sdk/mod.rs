//! What the MCP SDKs themselves do that the rules call deviations: data about an SDK, kept apart from the adapter
//! that runs a server written with it, so that a server's own bugs can be told from its SDK's.
//!
//! Each SDK's module holds the table of its vetted deviations (the real-server verdict tables of the mcp-wirefuzz
//! repository): each a rule, the trigger [`Shape`] that tells it from the same rule broken by the server's author,
//! and its upstream reference. A finding that matches one is the SDK's ([`Sdk::deviation`]): reported in a section
//! of its own, and it does not fail the run; the same rule with another trigger (a hung tool, say) still does.

pub mod go_sdk;
pub mod python;
pub mod rmcp;
pub mod shape;
pub mod ts_sdk;
pub mod ts_server;

use crate::model::Eras;
use crate::oracle::Finding;
use crate::protocol::envelope::{META, PROTOCOL_VERSION_KEY};
use crate::protocol::era::{LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION};
use crate::protocol::methods::{INITIALIZE, INITIALIZED, PING, TOOLS_LIST};
use crate::transcript::{Event, Input, Transcript};
use serde_json::{Value, json};
pub use shape::{Fault, Shape};

/// One deviation an SDK has whatever the server's author writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deviation {
    /// The rule it breaks.
    pub rule: &'static str,
    /// What a finding of the rule must show to be this deviation.
    pub shape: Shape,
    /// What the SDK does, in a line.
    pub what: &'static str,
    /// The upstream reference: an issue or pull request, or the spec line it breaks.
    pub reference: &'static str,
}

/// An SDK and the table of its vetted deviations.
#[derive(Debug, PartialEq, Eq)]
pub struct Sdk {
    /// The name `--sdk` takes.
    pub name: &'static str,
    /// Its package as its registry names it.
    pub package: &'static str,
    /// The version the table was vetted on.
    pub version: &'static str,
    /// Other names `--sdk` takes for it.
    pub aliases: &'static [&'static str],
    /// Its deviations.
    pub deviations: &'static [Deviation],
}

/// Every SDK with a table.
pub const SDKS: [&Sdk; 5] = [&rmcp::SDK, &ts_sdk::SDK, &ts_server::SDK, &python::SDK, &go_sdk::SDK];

impl Sdk {
    /// The deviation of this SDK that `finding` (with `trigger`) in `transcript` is, if any.
    pub fn deviation(&self, transcript: &Transcript, finding: &Finding, trigger: &str) -> Option<&'static Deviation> {
        let mut fault = None;
        self.deviations.iter().find(|deviation| {
            deviation.rule == finding.rule && {
                let fault = fault.get_or_insert_with(|| Fault::of(transcript, finding));
                deviation.shape.matches(transcript, trigger, fault)
            }
        })
    }

    /// `package version`, as a report names it.
    pub fn title(&self) -> String {
        format!("{} {}", self.package, self.version)
    }
}

/// The SDK `--sdk NAME` names: its name, its package, or an alias (case-insensitive); an error lists the names.
pub fn by_name(name: &str) -> Result<&'static Sdk, String> {
    let wanted = name.trim().to_ascii_lowercase();
    SDKS.iter()
        .copied()
        .find(|sdk| sdk.name == wanted || sdk.package == wanted || sdk.aliases.contains(&wanted.as_str()))
        .ok_or_else(|| {
            let names: Vec<String> = SDKS.iter().map(|s| format!("{} ({})", s.name, s.title())).collect();
            format!("no SDK table is named {name:?} (SDKs: {})", names.join(", "))
        })
}

/// The SDK the policy names ([`crate::oracle::Policy::with_sdk`]), if it names one with a table.
pub fn of_policy(policy: &crate::oracle::Policy) -> Option<&'static Sdk> {
    policy.sdk().and_then(|name| by_name(name).ok())
}

/// The findings that are yours: `findings` without those that match a known deviation of the policy's SDK.
pub fn yours(transcript: &Transcript, findings: Vec<Finding>, policy: &crate::oracle::Policy) -> Vec<Finding> {
    let Some(sdk) = of_policy(policy) else { return findings };
    findings
        .into_iter()
        .filter(|finding| {
            let trigger = crate::trigger::signature(transcript, finding);
            sdk.deviation(transcript, finding, &trigger).is_none()
        })
        .collect()
}

/// How the SDK of a run was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `--sdk`.
    Stated,
    /// Detected from the server's answers.
    Detected {
        /// What was seen.
        from: String,
        /// Which versions the answers show (a major version, the schema library), when they show any: the
        /// version is never read off the wire, so this is what the fingerprint makes certain.
        versions: Option<&'static str>,
    },
}

/// The SDK a run judges with, and how it was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    /// The SDK.
    pub sdk: &'static Sdk,
    /// How it was chosen.
    pub source: Source,
}

impl std::fmt::Display for Chosen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            Source::Stated => write!(f, "{} (from --sdk)", self.sdk.title()),
            // The table's version is named apart: no SDK writes its own on the wire.
            Source::Detected { from, versions } => {
                let versions = versions.map(|v| format!(" {v}")).unwrap_or_default();
                let (package, vetted) = (self.sdk.package, self.sdk.version);
                write!(f, "{package}{versions} (detected from {from}; its table was vetted on {vetted})")
            }
        }
    }
}

/// One SDK's fingerprint: an error message only it writes, and what else its answers must show.
struct Fingerprint {
    /// The words of the message.
    message: &'static str,
    /// The SDK.
    sdk: &'static Sdk,
    /// What it answers, for the run's SDK line.
    from: &'static str,
    /// Whether the fingerprint also needs the `"params": null` ping served (the Python SDK's own deviation: the
    /// built-in server writes the same message, the seed lesson's words, but refuses the null).
    serves_null_params: bool,
    /// The versions the message shows ([`Source::Detected`]).
    versions: Option<&'static str>,
}

/// The fingerprints [`detect`] reads.
const FINGERPRINTS: [Fingerprint; 4] = [
    Fingerprint {
        message: "request _meta is missing or has malformed required fields",
        sdk: &rmcp::SDK,
        from: "its -32602 message for a _meta without clientCapabilities",
        serves_null_params: false,
        versions: None,
    },
    Fingerprint {
        message: "requests carrying the 2026-07-28 envelope are not accepted on it",
        sdk: &python::SDK,
        from: "its -32600 message for an enveloped request on a handshake connection, and a result for \"params\": null",
        serves_null_params: true,
        versions: Some(MCP_2),
    },
    // Over HTTP the version header routes the same request to a 2026-07-28 handler.
    Fingerprint {
        message: "params._meta is missing the required envelope key(s): io.modelcontextprotocol/clientCapabilities",
        sdk: &python::SDK,
        from: "its -32602 message for a _meta without clientCapabilities, and a result for \"params\": null",
        serves_null_params: true,
        versions: Some(MCP_2),
    },
    // The Go SDK's jsonrpc2 words for an initialize without params (1.3.1, 1.4.1 and 1.8.0 write them).
    Fingerprint {
        message: "invalid request: missing required \"params\"",
        sdk: &go_sdk::SDK,
        from: "its -32600 words for an initialize without params",
        serves_null_params: false,
        versions: None,
    },
];

/// The Python SDK versions that serve the 2026-07-28 envelope (the 1.x line never did).
const MCP_2: &str = "2.x";

/// The id of the fingerprint's `ping` whose `params` is `null`.
const NULL_PARAMS_ID: i64 = 3;

/// The id of the fingerprint's last line: an `initialize` without `params`, on the open connection.
const BARE_INITIALIZE_ID: i64 = 4;

/// The fingerprint conversation: `initialize`, `notifications/initialized`, a `tools/list` whose `_meta` names
/// a protocol version and nothing else (every SDK answers it; two write a message of their own), a `ping` whose
/// `params` is `null` (JSON-RPC says params MUST be structured; one SDK serves it anyway), then an `initialize`
/// without `params` (the TypeScript packages refuse it with their schema library's issue list, the Python SDK with
/// its own words).
pub fn fingerprint_inputs() -> Vec<Input> {
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": INITIALIZE, "params": {
        "protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
        "clientInfo": { "name": "mcp-wirefuzz", "version": env!("CARGO_PKG_VERSION") } } });
    let initialized = json!({ "jsonrpc": "2.0", "method": INITIALIZED });
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": TOOLS_LIST,
        "params": { META: { PROTOCOL_VERSION_KEY: LATEST_MODERN_VERSION } } });
    let ping = json!({ "jsonrpc": "2.0", "id": NULL_PARAMS_ID, "method": PING, "params": null });
    let bare = json!({ "jsonrpc": "2.0", "id": BARE_INITIALIZE_ID, "method": INITIALIZE });
    let line = |value: Value| Input::Line(value.to_string().into_bytes());
    let mut inputs = vec![line(initialize), line(initialized), Input::Sync, line(list), Input::Sync];
    inputs.extend([line(ping), Input::Sync, line(bare), Input::Sync]);
    inputs
}

/// The SDK the fingerprint conversation's transcript shows for certain (an error message only that SDK writes,
/// and what else its fingerprint needs), on a server that serves `eras`; `None` when nothing is certain. The
/// version is never read off the wire: a detected SDK is judged with its table, vetted on the version it names.
pub fn detect(transcript: &Transcript, eras: Eras) -> Option<Chosen> {
    let replies: Vec<Value> = transcript
        .events
        .iter()
        .filter_map(|event| match event {
            Event::Received { line, .. } => serde_json::from_slice(line).ok(),
            _ => None,
        })
        .collect();
    let null_params_served =
        replies.iter().any(|reply| reply.get("id") == Some(&json!(NULL_PARAMS_ID)) && reply.get("result").is_some());
    let by_message = replies.iter().find_map(|reply| {
        let message = reply.get("error")?.get("message")?.as_str()?;
        FINGERPRINTS
            .iter()
            .find(|print| message.contains(print.message) && (!print.serves_null_params || null_params_served))
            .map(|print| {
                let versions = match print.sdk.name {
                    "go-sdk" => go_versions(eras),
                    _ => print.versions,
                };
                Chosen { sdk: print.sdk, source: Source::Detected { from: print.from.to_string(), versions } }
            })
    });
    by_message.or_else(|| by_bare_initialize(&replies, null_params_served, eras))
}

/// The SDK the refusal of the fingerprint's `initialize` without `params` shows: the TypeScript packages' zod
/// issue list in a -32603 (the v1 `@modelcontextprotocol/sdk` on a server that serves the handshake era only, the
/// v2 `@modelcontextprotocol/server` on one that serves 2026-07-28 too: frameworks built on them answer the same),
/// or the Python SDK's own words in a -32602 from a server that also serves `"params": null` (a version from before
/// the 2026-07-28 envelope, which the message fingerprints name otherwise).
fn by_bare_initialize(replies: &[Value], null_params_served: bool, eras: Eras) -> Option<Chosen> {
    let refusal = replies.iter().find(|reply| reply.get("id") == Some(&json!(BARE_INITIALIZE_ID)))?;
    let error = refusal.get("error")?;
    let (code, message) = (error.get("code")?.as_i64()?, error.get("message")?.as_str()?);
    let zod = code == -32603 && message.contains(r#""code": "invalid_type""#) && message.contains(r#""params""#);
    let (sdk, from, versions) = if zod {
        let sdk: &'static Sdk = match eras.serves(crate::protocol::Era::Modern)? {
            true => &ts_server::SDK,
            false => &ts_sdk::SDK,
        };
        // zod 3 says "Required" of a missing member; zod 4 "Invalid input: expected object, received undefined".
        // The SDK installs zod 4 from 1.23.0 on (its range ^3.25 || ^4.0); before, zod 3, which rounds a big id
        // where zod 4 drops it.
        let versions = match message.contains(r#""message": "Required""#) {
            true => "on zod 3 (the versions before 1.23.0 use it)",
            false => "on zod 4",
        };
        (sdk, "its -32603 with a zod issue list for an initialize without params, and the eras it serves", versions)
    } else if code == -32602 && message == "Invalid request parameters" && null_params_served {
        let from = "its -32602 \"Invalid request parameters\" for an initialize without params, and a result for \
                    \"params\": null (a version from before the 2026-07-28 envelope)";
        (&python::SDK, from, "1.x")
    } else {
        return None;
    };
    Some(Chosen { sdk, source: Source::Detected { from: from.to_string(), versions: Some(versions) } })
}

/// The Go SDK versions a server's eras show: 1.8.0 serves 2026-07-28; 1.3.1 and 1.4.1 serve the handshake only.
fn go_versions(eras: Eras) -> Option<&'static str> {
    match eras.serves(crate::protocol::Era::Modern)? {
        true => Some("with 2026-07-28 (1.8.0 serves it)"),
        false => Some("of the handshake era only (1.3.1 and 1.4.1 are)"),
    }
}

#[cfg(test)]
mod tests;
