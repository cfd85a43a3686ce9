//! Named mutations of a valid request: each [`Mutation`] breaks one thing, in the message's structure (a field
//! dropped or mistyped, the envelope damaged) or in its bytes (duplicate keys, invalid UTF-8, framing).

use crate::protocol::envelope::{self, CLIENT_CAPABILITIES_KEY, META, PROTOCOL_VERSION_KEY};
use crate::protocol::era::LATEST_MODERN_VERSION;
use serde_json::{Map, Value, json};
use std::sync::LazyLock;

/// Nesting depth of [`Mutation::DeepNesting`]: past the common limit of 128.
pub const DEEP: usize = 300;
/// Nesting depth of [`Mutation::VeryDeepNesting`].
pub const VERY_DEEP: usize = 5000;
/// Length in bytes of the string [`Mutation::HugeString`] adds.
pub const HUGE_STRING: usize = 100_000;
/// Length in bytes of the string [`Mutation::GiantString`] adds: 11 MiB, past the 10 MiB line limit of common
/// server transports.
pub const GIANT_STRING: usize = 11 << 20;
/// One [`Mutation::HugeString`] in this many drawn by `arbitrary` becomes a [`Mutation::GiantString`], so a giant
/// line comes in about one conversation in 3,000 (proptest never draws it: its cases are few and shrink).
pub const GIANT_ODDS: u32 = 256;
/// Digits of the integer [`Mutation::HugeNumber`] adds: past the 4,300 digits Python parses by default.
pub const HUGE_NUMBER_DIGITS: usize = 5000;
/// The shares of [`Mutation::Retype`] among the common mutations `arbitrary` picks from (every other one has one):
/// about one mutated request in eleven is retyped, so every member meets every JSON type in a few thousand
/// conversations.
pub const RETYPE_SLOTS: u64 = 4;
/// The member that mutations adding content put into `params` (and the top level, for [`Mutation::ExtraField`]).
pub const EXTRA: &str = "wirefuzz";

/// Stands for raw bytes in a serialized message until they are spliced in.
const MARKER: &str = "\u{1}wirefuzz-splice\u{1}";

/// One way to break a valid request. The request is built first (with its envelope when it has one), then this
/// mutation is applied to it; the result is one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, proptest_derive::Arbitrary)]
pub enum Mutation {
    /// No `jsonrpc` member.
    DropJsonrpc,
    /// No `id` member: the request becomes a notification.
    DropId,
    /// No `method` member.
    DropMethod,
    /// No `params` member (no change when the request has none).
    DropParams,
    /// `"jsonrpc":"1.0"`.
    JsonrpcOne,
    /// `"jsonrpc":2.0`, a number.
    JsonrpcNumber,
    /// `"method":7`.
    MethodNotString,
    /// `"params":"params"`, neither object nor array.
    ParamsString,
    /// `"params":[1,2]`.
    ParamsArray,
    /// `"params":null`.
    ParamsNull,
    /// An unknown top-level member.
    ExtraField,
    /// An unknown member in `params`.
    ExtraParam,
    /// `params._meta` is a string.
    MetaNotObject,
    /// The envelope lacks the protocol-version key.
    MissingVersionKey,
    /// The envelope lacks the client-capabilities key.
    MissingCapabilitiesKey,
    /// The envelope lacks both keys (`"_meta":{}`).
    MissingBothKeys,
    /// The protocol version is the number `20260728`.
    VersionNumber,
    /// The protocol version is `null`.
    VersionNull,
    /// The client capabilities are a string.
    CapabilitiesString,
    /// The protocol version `2030-01-01`, well formed but unsupported.
    VersionUnsupported,
    /// The protocol version `2026-7-28`, malformed.
    VersionMalformed,
    /// The protocol version `""`.
    VersionEmpty,
    /// The handshake version `2025-11-25` in the envelope.
    VersionLegacy,
    /// A second `id` member, textually: `{"id":"dup-N",...,"id":<id>,...}`.
    DuplicateKey,
    /// [`DEEP`] levels of nested arrays in `params`.
    DeepNesting,
    /// [`VERY_DEEP`] levels of nested arrays in `params`.
    VeryDeepNesting,
    /// A [`HUGE_STRING`]-byte string in `params`.
    HugeString,
    /// A [`HUGE_NUMBER_DIGITS`]-digit integer in `params`.
    HugeNumber,
    /// The string `"\ud800"` (an unpaired surrogate escape) in `params`.
    LoneSurrogate,
    /// A string of bytes that are not UTF-8 in `params`.
    InvalidUtf8,
    /// The line cut in the middle.
    Truncated,
    /// The message twice on one line.
    TwoObjects,
    /// An empty line instead of the message.
    EmptyLine,
    /// A line of spaces and a tab instead of the message.
    BlankLine,
    /// The message inside a batch array: `[{...}]`.
    Batch,
    /// Text after the closing brace.
    TrailingGarbage,
    /// A UTF-8 byte order mark before the message.
    BomPrefix,
    /// A carriage return after the message (JSON whitespace).
    TrailingCr,
    /// A [`GIANT_STRING`]-byte string in `params`: a line over 10 MiB. Rare: see [`GIANT_ODDS`].
    #[proptest(skip)]
    GiantString,
    /// One member of the message (envelope, `params` or `_meta`) given a value of another JSON type, or removed.
    #[proptest(strategy = "retypes()")]
    Retype(Member, JsonKind),
}

/// [`Mutation::Retype`]'s proptest strategy, boxed: a derived one nests its types in the script's value tree, which
/// a debug build's test-thread stack cannot hold (see `message::boxed`).
fn retypes() -> proptest::strategy::BoxedStrategy<Mutation> {
    use proptest::prelude::{Strategy, any};
    (any::<Member>(), any::<JsonKind>()).prop_map(|(member, kind)| Mutation::Retype(member, kind)).boxed()
}

/// A member of a request that [`Mutation::Retype`] retypes: the four envelope members, the `params` members of the
/// methods a script sends, and the two keys of the 2026-07-28 envelope in `params._meta`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum Member {
    /// `jsonrpc`.
    Jsonrpc,
    /// `id`.
    Id,
    /// `method`.
    Method,
    /// `params`.
    Params,
    /// `params.name` (`tools/call`, `prompts/get`).
    Name,
    /// `params.arguments` (`tools/call`, `prompts/get`).
    Arguments,
    /// `params.uri` (`resources/read`).
    Uri,
    /// `params.cursor` (the list methods).
    Cursor,
    /// `params._meta`.
    Meta,
    /// `params.protocolVersion` (`initialize`).
    ProtocolVersion,
    /// `params.capabilities` (`initialize`).
    Capabilities,
    /// `params.clientInfo` (`initialize`).
    ClientInfo,
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]`.
    EnvelopeVersion,
    /// `params._meta["io.modelcontextprotocol/clientCapabilities"]`.
    EnvelopeCapabilities,
}

impl Member {
    /// Every member, in declaration order.
    pub const ALL: [Member; 14] = [
        Member::Jsonrpc,
        Member::Id,
        Member::Method,
        Member::Params,
        Member::Name,
        Member::Arguments,
        Member::Uri,
        Member::Cursor,
        Member::Meta,
        Member::ProtocolVersion,
        Member::Capabilities,
        Member::ClientInfo,
        Member::EnvelopeVersion,
        Member::EnvelopeCapabilities,
    ];

    /// The member as the wire-coverage table names it: `jsonrpc`, `params.name`, `_meta.KEY`.
    pub fn path(self) -> String {
        match self {
            Member::Jsonrpc => "jsonrpc".into(),
            Member::Id => "id".into(),
            Member::Method => "method".into(),
            Member::Params => "params".into(),
            Member::EnvelopeVersion => format!("_meta.{PROTOCOL_VERSION_KEY}"),
            Member::EnvelopeCapabilities => format!("_meta.{CLIENT_CAPABILITIES_KEY}"),
            other => format!("params.{}", other.key()),
        }
    }

    /// The member's own key.
    fn key(self) -> &'static str {
        match self {
            Member::Jsonrpc => "jsonrpc",
            Member::Id => "id",
            Member::Method => "method",
            Member::Params => "params",
            Member::Name => "name",
            Member::Arguments => "arguments",
            Member::Uri => "uri",
            Member::Cursor => "cursor",
            Member::Meta => META,
            Member::ProtocolVersion => "protocolVersion",
            Member::Capabilities => "capabilities",
            Member::ClientInfo => "clientInfo",
            Member::EnvelopeVersion => PROTOCOL_VERSION_KEY,
            Member::EnvelopeCapabilities => CLIENT_CAPABILITIES_KEY,
        }
    }

    /// The methods whose requests carry this `params` member (empty: every request may).
    pub fn methods(self) -> &'static [&'static str] {
        match self {
            Member::Name | Member::Arguments => &["tools/call", "prompts/get"],
            Member::Uri => &["resources/read"],
            Member::Cursor => &["tools/list", "prompts/list", "resources/list", "resources/templates/list"],
            Member::ProtocolVersion | Member::Capabilities | Member::ClientInfo => &["initialize"],
            _ => &[],
        }
    }
}

/// A JSON type, or no member at all.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum JsonKind {
    /// `{}`.
    Object,
    /// `[1]`.
    Array,
    /// `"wirefuzz"` (for `id`, `"retyped-N"`: an id no other request has).
    String,
    /// `7` (for `id`, `-(1000000 + N)`: an id no other request has).
    Number,
    /// `true`.
    Boolean,
    /// `null`.
    Null,
    /// The member removed.
    Absent,
}

impl JsonKind {
    /// Every kind, in the wire-coverage table's order.
    pub const ALL: [JsonKind; 7] = [
        JsonKind::Object,
        JsonKind::Array,
        JsonKind::String,
        JsonKind::Number,
        JsonKind::Boolean,
        JsonKind::Null,
        JsonKind::Absent,
    ];

    /// The value of this kind for `member` of request `ordinal` (`None`: absent).
    fn value(self, member: Member, ordinal: u64) -> Option<Value> {
        Some(match (self, member) {
            (JsonKind::Object, _) => json!({}),
            (JsonKind::Array, _) => json!([1]),
            (JsonKind::String, Member::Id) => json!(format!("retyped-{ordinal}")),
            (JsonKind::String, _) => json!("wirefuzz"),
            (JsonKind::Number, Member::Id) => json!(-(1_000_000 + i128::from(ordinal))),
            (JsonKind::Number, _) => json!(7),
            (JsonKind::Boolean, _) => json!(true),
            (JsonKind::Null, _) => Value::Null,
            (JsonKind::Absent, _) => return None,
        })
    }
}

impl<'a> arbitrary::Arbitrary<'a> for Mutation {
    /// Picks one of the common mutations as the derived impl would (by one `u32`, uniformly but for
    /// [`Mutation::Retype`], which has [`RETYPE_SLOTS`] shares: it spreads over 98 member and type pairs); a
    /// [`Mutation::HugeString`] then becomes a [`Mutation::GiantString`] once in [`GIANT_ODDS`] (by one more `u32`;
    /// bytes that run out never make one), and a retype reads its member and type.
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Mutation> {
        let common = &Mutation::ALL[..Mutation::ALL.len() - 1];
        let slots = common.len() as u64 + RETYPE_SLOTS - 1;
        let index = ((u64::from(u32::arbitrary(u)?) * slots) >> 32).min(common.len() as u64 - 1);
        match common[index as usize] {
            Mutation::HugeString if u32::arbitrary(u)? % GIANT_ODDS == GIANT_ODDS - 1 => Ok(Mutation::GiantString),
            Mutation::Retype(..) => Ok(Mutation::Retype(u.arbitrary()?, u.arbitrary()?)),
            mutation => Ok(mutation),
        }
    }

    fn size_hint(_depth: usize) -> (usize, Option<usize>) {
        (4, Some(12))
    }
}

impl Mutation {
    /// Every mutation, in declaration order.
    pub const ALL: [Mutation; 40] = [
        Mutation::DropJsonrpc,
        Mutation::DropId,
        Mutation::DropMethod,
        Mutation::DropParams,
        Mutation::JsonrpcOne,
        Mutation::JsonrpcNumber,
        Mutation::MethodNotString,
        Mutation::ParamsString,
        Mutation::ParamsArray,
        Mutation::ParamsNull,
        Mutation::ExtraField,
        Mutation::ExtraParam,
        Mutation::MetaNotObject,
        Mutation::MissingVersionKey,
        Mutation::MissingCapabilitiesKey,
        Mutation::MissingBothKeys,
        Mutation::VersionNumber,
        Mutation::VersionNull,
        Mutation::CapabilitiesString,
        Mutation::VersionUnsupported,
        Mutation::VersionMalformed,
        Mutation::VersionEmpty,
        Mutation::VersionLegacy,
        Mutation::DuplicateKey,
        Mutation::DeepNesting,
        Mutation::VeryDeepNesting,
        Mutation::HugeString,
        Mutation::HugeNumber,
        Mutation::LoneSurrogate,
        Mutation::InvalidUtf8,
        Mutation::Truncated,
        Mutation::TwoObjects,
        Mutation::EmptyLine,
        Mutation::BlankLine,
        Mutation::Batch,
        Mutation::TrailingGarbage,
        Mutation::BomPrefix,
        Mutation::TrailingCr,
        Mutation::Retype(Member::Jsonrpc, JsonKind::Object),
        Mutation::GiantString,
    ];

    /// A stable kebab-case name, for reports and case files.
    pub fn name(self) -> &'static str {
        match self {
            Mutation::DropJsonrpc => "drop-jsonrpc",
            Mutation::DropId => "drop-id",
            Mutation::DropMethod => "drop-method",
            Mutation::DropParams => "drop-params",
            Mutation::JsonrpcOne => "jsonrpc-1.0",
            Mutation::JsonrpcNumber => "jsonrpc-number",
            Mutation::MethodNotString => "method-not-string",
            Mutation::ParamsString => "params-string",
            Mutation::ParamsArray => "params-array",
            Mutation::ParamsNull => "params-null",
            Mutation::ExtraField => "extra-field",
            Mutation::ExtraParam => "extra-param",
            Mutation::MetaNotObject => "meta-not-object",
            Mutation::MissingVersionKey => "missing-version-key",
            Mutation::MissingCapabilitiesKey => "missing-capabilities-key",
            Mutation::MissingBothKeys => "missing-both-keys",
            Mutation::VersionNumber => "version-number",
            Mutation::VersionNull => "version-null",
            Mutation::CapabilitiesString => "capabilities-string",
            Mutation::VersionUnsupported => "version-unsupported",
            Mutation::VersionMalformed => "version-malformed",
            Mutation::VersionEmpty => "version-empty",
            Mutation::VersionLegacy => "version-legacy",
            Mutation::DuplicateKey => "duplicate-key",
            Mutation::DeepNesting => "deep-nesting",
            Mutation::VeryDeepNesting => "very-deep-nesting",
            Mutation::HugeString => "huge-string",
            Mutation::HugeNumber => "huge-number",
            Mutation::LoneSurrogate => "lone-surrogate",
            Mutation::InvalidUtf8 => "invalid-utf8",
            Mutation::Truncated => "truncated",
            Mutation::TwoObjects => "two-objects",
            Mutation::EmptyLine => "empty-line",
            Mutation::BlankLine => "blank-line",
            Mutation::Batch => "batch",
            Mutation::TrailingGarbage => "trailing-garbage",
            Mutation::BomPrefix => "bom-prefix",
            Mutation::TrailingCr => "trailing-cr",
            Mutation::GiantString => "giant-string",
            Mutation::Retype(..) => "retype",
        }
    }

    /// The mutation of this name.
    pub fn from_name(name: &str) -> Option<Mutation> {
        Mutation::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Applies the mutation to a request (a JSON object with `jsonrpc`, `id`, `method` and maybe `params`, in that
    /// order) and returns the line to send. `ordinal` is the request's position among the script's requests; it makes
    /// the id [`Mutation::DuplicateKey`] adds unique.
    pub fn apply(self, mut message: Map<String, Value>, ordinal: u64) -> Vec<u8> {
        let mut splice: Option<&[u8]> = None;
        match self {
            Mutation::DropJsonrpc => drop(message.shift_remove("jsonrpc")),
            Mutation::DropId => drop(message.shift_remove("id")),
            Mutation::DropMethod => drop(message.shift_remove("method")),
            Mutation::DropParams => drop(message.shift_remove("params")),
            Mutation::JsonrpcOne => drop(message.insert("jsonrpc".into(), json!("1.0"))),
            Mutation::JsonrpcNumber => drop(message.insert("jsonrpc".into(), super::id::literal("2.0"))),
            Mutation::MethodNotString => drop(message.insert("method".into(), json!(7))),
            Mutation::ParamsString => drop(message.insert("params".into(), json!("params"))),
            Mutation::ParamsArray => drop(message.insert("params".into(), json!([1, 2]))),
            Mutation::ParamsNull => drop(message.insert("params".into(), Value::Null)),
            Mutation::ExtraField => drop(message.insert(EXTRA.into(), json!(true))),
            Mutation::ExtraParam => drop(params(&mut message).insert(EXTRA.into(), json!(true))),
            Mutation::MetaNotObject => drop(params(&mut message).insert(META.into(), json!(LATEST_MODERN_VERSION))),
            Mutation::MissingVersionKey => drop(meta(&mut message).shift_remove(PROTOCOL_VERSION_KEY)),
            Mutation::MissingCapabilitiesKey => drop(meta(&mut message).shift_remove(CLIENT_CAPABILITIES_KEY)),
            Mutation::MissingBothKeys => meta(&mut message).clear(),
            Mutation::VersionNumber => set_version(&mut message, json!(20260728)),
            Mutation::VersionNull => set_version(&mut message, Value::Null),
            Mutation::CapabilitiesString => {
                drop(meta(&mut message).insert(CLIENT_CAPABILITIES_KEY.into(), json!("none")))
            }
            Mutation::VersionUnsupported => set_version(&mut message, json!("2030-01-01")),
            Mutation::VersionMalformed => set_version(&mut message, json!("2026-7-28")),
            Mutation::VersionEmpty => set_version(&mut message, json!("")),
            Mutation::VersionLegacy => set_version(&mut message, json!("2025-11-25")),
            Mutation::HugeString => splice = Some(&SPLICES.huge_string),
            Mutation::GiantString => splice = Some(&GIANT),
            Mutation::DeepNesting => splice = Some(&SPLICES.deep),
            Mutation::VeryDeepNesting => splice = Some(&SPLICES.very_deep),
            Mutation::HugeNumber => splice = Some(&SPLICES.huge_number),
            Mutation::LoneSurrogate => splice = Some(br#""\ud800""#),
            Mutation::InvalidUtf8 => splice = Some(b"\"\xff\xfe\xc0\x80\""),
            Mutation::Retype(member, kind) => retype(&mut message, member, kind.value(member, ordinal)),
            Mutation::DuplicateKey
            | Mutation::Truncated
            | Mutation::TwoObjects
            | Mutation::EmptyLine
            | Mutation::BlankLine
            | Mutation::Batch
            | Mutation::TrailingGarbage
            | Mutation::BomPrefix
            | Mutation::TrailingCr => {}
        }
        if splice.is_some() {
            params(&mut message).insert(EXTRA.into(), json!(MARKER));
        }
        let text = super::encode::json_bytes(&Value::Object(message));
        let line = match splice {
            Some(raw) => replace_marker(&text, raw),
            None => text,
        };
        self.reframe(line, ordinal)
    }

    /// The byte-level part: what happens to the serialized line.
    fn reframe(self, line: Vec<u8>, ordinal: u64) -> Vec<u8> {
        match self {
            Mutation::DuplicateKey => [format!("{{\"id\":\"dup-{ordinal}\",").as_bytes(), &line[1..]].concat(),
            Mutation::Truncated => line[..line.len() / 2].to_vec(),
            Mutation::TwoObjects => [&line[..], &line[..]].concat(),
            Mutation::EmptyLine => Vec::new(),
            Mutation::BlankLine => b"  \t ".to_vec(),
            Mutation::Batch => [&b"["[..], &line, b"]"].concat(),
            Mutation::TrailingGarbage => [&line[..], b" }garbage"].concat(),
            Mutation::BomPrefix => [&b"\xef\xbb\xbf"[..], &line].concat(),
            Mutation::TrailingCr => [&line[..], b"\r"].concat(),
            _ => line,
        }
    }
}

/// The request's `params` object, made one (empty) when it is absent or not an object.
fn params(message: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let params = message.entry("params").or_insert_with(|| json!({}));
    if !params.is_object() {
        *params = json!({});
    }
    params.as_object_mut().expect("params was just made an object")
}

/// The request's envelope object, made a complete one when the request has none.
fn meta(message: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let meta = params(message).entry(META).or_insert_with(|| envelope::envelope(LATEST_MODERN_VERSION));
    if !meta.is_object() {
        *meta = envelope::envelope(LATEST_MODERN_VERSION);
    }
    meta.as_object_mut().expect("_meta was just made an object")
}

/// Sets `member` to `value`, or removes it (`None`); a `params` or `_meta` member gets its object made first.
fn retype(message: &mut Map<String, Value>, member: Member, value: Option<Value>) {
    let object = match member {
        Member::Jsonrpc | Member::Id | Member::Method | Member::Params => message,
        Member::EnvelopeVersion | Member::EnvelopeCapabilities => meta(message),
        _ => params(message),
    };
    match value {
        Some(value) => drop(object.insert(member.key().into(), value)),
        None => drop(object.shift_remove(member.key())),
    }
}

/// Sets the envelope's protocol version to `version`.
fn set_version(message: &mut Map<String, Value>, version: Value) {
    meta(message).insert(PROTOCOL_VERSION_KEY.into(), version);
}

/// The raw JSON spliced in by the mutations that need text a value cannot hold or that is costly to build, made
/// once.
struct Splices {
    /// A JSON string of [`HUGE_STRING`] `x`s, quoted.
    huge_string: Vec<u8>,
    /// [`DEEP`] levels of nested empty arrays.
    deep: Vec<u8>,
    /// [`VERY_DEEP`] levels of nested empty arrays.
    very_deep: Vec<u8>,
    /// An integer literal of [`HUGE_NUMBER_DIGITS`] digits.
    huge_number: Vec<u8>,
}

static SPLICES: LazyLock<Splices> = LazyLock::new(|| Splices {
    huge_string: [&b"\""[..], &vec![b'x'; HUGE_STRING], b"\""].concat(),
    deep: nested(DEEP),
    very_deep: nested(VERY_DEEP),
    huge_number: format!("1{}", "0".repeat(HUGE_NUMBER_DIGITS - 1)).into_bytes(),
});

/// A JSON string of [`GIANT_STRING`] `x`s, quoted: made once, on the first giant line.
static GIANT: LazyLock<Vec<u8>> = LazyLock::new(|| [&b"\""[..], &vec![b'x'; GIANT_STRING], b"\""].concat());

/// `depth` levels of nested empty arrays.
fn nested(depth: usize) -> Vec<u8> {
    [vec![b'['; depth], vec![b']'; depth]].concat()
}

/// `text` with the quoted marker replaced by `raw`.
fn replace_marker(text: &[u8], raw: &[u8]) -> Vec<u8> {
    let quoted = &*QUOTED_MARKER;
    let at = text.windows(quoted.len()).position(|w| w == quoted).expect("the marker is in the serialized message");
    let mut line = Vec::with_capacity(text.len() - quoted.len() + raw.len());
    line.extend_from_slice(&text[..at]);
    line.extend_from_slice(raw);
    line.extend_from_slice(&text[at + quoted.len()..]);
    line
}

/// The marker as the serializer writes it (its control characters escaped).
static QUOTED_MARKER: LazyLock<Vec<u8>> = LazyLock::new(|| super::encode::json_bytes(&Value::String(MARKER.into())));
