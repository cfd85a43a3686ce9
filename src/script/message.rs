//! The messages a script sends: requests (a method, its arguments, an id kind, an envelope style), notifications,
//! and raw lines that are not messages at all. Every choice is a closed enum, so both generators stay bounded and the
//! first variant of each enum (what `arbitrary` picks when its bytes run out) is a valid, useful message.

use super::arguments::ArgPlan;
use super::id::IdKind;
use crate::protocol::Era;
use crate::protocol::methods::{
    CANCELLED, COMPLETE, DISCOVER, INITIALIZE, INITIALIZED, LISTEN, PING, PROMPTS_GET, PROMPTS_LIST, RESOURCES_LIST,
    RESOURCES_READ, SET_LEVEL, SUBSCRIBE, TEMPLATES_LIST, TOOLS_CALL, TOOLS_LIST, UNSUBSCRIBE,
};

/// A method no MCP version defines.
pub const UNKNOWN_METHOD: &str = "wirefuzz/unknown";
/// A notification method no MCP version defines.
pub const UNKNOWN_NOTIFICATION: &str = "notifications/wirefuzz";

/// Every method name a script can send, requests first.
pub const METHODS: [&str; 19] = [
    TOOLS_LIST,
    TOOLS_CALL,
    DISCOVER,
    PROMPTS_LIST,
    RESOURCES_LIST,
    PROMPTS_GET,
    RESOURCES_READ,
    TEMPLATES_LIST,
    PING,
    INITIALIZE,
    UNKNOWN_METHOD,
    LISTEN,
    SET_LEVEL,
    COMPLETE,
    SUBSCRIBE,
    UNSUBSCRIBE,
    INITIALIZED,
    CANCELLED,
    UNKNOWN_NOTIFICATION,
];

/// A well-formed message: a request or a notification.
#[derive(Clone, Debug, PartialEq, Eq, Hash, arbitrary::Arbitrary, proptest_derive::Arbitrary)]
pub enum Message {
    /// A request, answered by the server.
    #[proptest(weight = 4)]
    Request(Request),
    /// A notification, never answered.
    Notification(Note),
}

/// A request: what to call, the kind of id, and whether it carries the modern envelope.
#[derive(Clone, Debug, PartialEq, Eq, Hash, arbitrary::Arbitrary, proptest_derive::Arbitrary)]
pub struct Request {
    /// The method and its arguments.
    pub call: Call,
    /// The kind of id.
    pub id: IdKind,
    /// Plain (handshake style) or with the full 2026-07-28 envelope in `params._meta`.
    pub envelope: Envelope,
}

/// How a request carries protocol metadata.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum Envelope {
    /// No `_meta`: a handshake-era request.
    Plain,
    /// `params._meta` holds the protocol version 2026-07-28 and empty client capabilities.
    Modern,
}

impl Envelope {
    /// The era a request of this style belongs to.
    pub fn era(self) -> Era {
        match self {
            Envelope::Plain => Era::Handshake,
            Envelope::Modern => Era::Modern,
        }
    }
}

/// A request method and its arguments. Proptest's strategy is written out in [`boxed`] (the weights are there);
/// `arbitrary`'s in [`Call::arbitrary`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    /// `tools/list`.
    ToolsList,
    /// `tools/call` with good or bad arguments.
    ToolsCall(ToolCall),
    /// `server/discover` (modern era only).
    Discover,
    /// `prompts/list`.
    PromptsList,
    /// `resources/list`.
    ResourcesList,
    /// `ping` (handshake era only).
    Ping,
    /// `initialize` asking for a version (handshake era only).
    Initialize(InitVersion),
    /// A method no version defines.
    Unknown,
    /// `tools/call` of a tool the server listed, with arguments from its `inputSchema`.
    Tool(ToolPlan),
    /// `prompts/get` of a listed prompt, or an unknown one.
    Prompt(PromptPlan),
    /// `resources/read` of a listed resource, a template expansion, or an unknown URI.
    Resource(ResourcePlan),
    /// `resources/templates/list`.
    TemplatesList,
    /// A list method with a cursor the server never issued.
    BadCursor(ListKind),
    /// `subscriptions/listen` (modern era only), its filter from the bits ([`ListenPlan`]).
    Listen(ListenPlan),
    /// `logging/setLevel` (handshake era only): a level of the eight, or one no version defines.
    SetLevel(u8),
    /// `completion/complete` of a listed prompt's argument or a listed template's variable ([`CompletePlan`]).
    Complete(CompletePlan),
    /// `resources/subscribe` of a listed resource, or `resources/unsubscribe` (handshake era only).
    Subscribe(SubscribePlan),
}

/// The filter of a `subscriptions/listen`, one bit per notification type (the bits in that order): the three
/// list-changed types, `resourceSubscriptions` naming a listed resource (by the top three bits), and a key no
/// version defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ListenPlan(pub u8);

/// A `completion/complete`: bit 0 completes a template's variable (else a prompt's argument), bit 1 adds an empty
/// `context`, the other bits pick the prompt or template; with nothing listed to complete, an unknown prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompletePlan(pub u8);

/// A `resources/subscribe` (`unsubscribe` when the top bit is set) of the listed resource the other bits pick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubscribePlan(pub u8);

impl<'a> arbitrary::Arbitrary<'a> for Call {
    /// Draws a `u32` as the derive did for the thirteen choices of before, `(draw * 13) >> 32`, reading no other
    /// byte than before for those: an `Unknown` draw whose low three bits are not 0 is one of the later calls,
    /// whose plan is the next byte.
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Call> {
        let draw = u32::arbitrary(u)?;
        Ok(match (u64::from(draw) * 13) >> 32 {
            0 => Call::ToolsList,
            1 => Call::ToolsCall(ToolCall::arbitrary(u)?),
            2 => Call::Discover,
            3 => Call::PromptsList,
            4 => Call::ResourcesList,
            5 => Call::Ping,
            6 => Call::Initialize(InitVersion::arbitrary(u)?),
            7 => match draw % 8 {
                0 => Call::Unknown,
                1 | 2 => Call::Listen(ListenPlan(u8::arbitrary(u)?)),
                3 | 4 => Call::Complete(CompletePlan(u8::arbitrary(u)?)),
                5 => Call::SetLevel(u8::arbitrary(u)?),
                _ => Call::Subscribe(SubscribePlan(u8::arbitrary(u)?)),
            },
            8 => Call::Tool(ToolPlan::arbitrary(u)?),
            9 => Call::Prompt(PromptPlan::arbitrary(u)?),
            10 => Call::Resource(ResourcePlan::arbitrary(u)?),
            11 => Call::TemplatesList,
            _ => Call::BadCursor(ListKind::arbitrary(u)?),
        })
    }
}

/// A `tools/call` of a listed tool: which one (modulo the number of tools), and how its arguments are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary)]
pub struct ToolPlan {
    /// The tool's index among the listed tools, modulo their number.
    pub tool: u8,
    /// How the arguments are made.
    pub arguments: ArgPlan,
}

/// A `prompts/get`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary)]
pub struct PromptPlan {
    /// The prompt's index among the listed prompts, modulo their number.
    pub prompt: u8,
    /// Which arguments go with it.
    pub arguments: PromptArguments,
}

/// The arguments of a `prompts/get`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, proptest_derive::Arbitrary)]
pub enum PromptArguments {
    /// Every required argument, each `"wirefuzz"`.
    #[proptest(weight = 3)]
    Required,
    /// Every argument, each an odd string.
    Odd(super::odd_string::OddString),
    /// A required argument left out (the prompt's first required one; none: all given).
    MissingRequired,
    /// A prompt name the server does not list.
    UnknownPrompt,
    /// Every argument given one edge value that a string takes (`""`, a string seen in an earlier result, ...;
    /// an edge no string takes gives the required arguments, each `"wirefuzz"`).
    Edge(super::edges::Edge),
}

impl<'a> arbitrary::Arbitrary<'a> for PromptArguments {
    /// Draws a `u32` as the derive did for the four choices of before, `(draw * 4) >> 32`, reading no other byte
    /// than before: a `Required` draw that is odd now gives an edge, chosen by the draw's other bits.
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<PromptArguments> {
        use super::edges::Edge;
        let draw = u32::arbitrary(u)?;
        Ok(match (u64::from(draw) * 4) >> 32 {
            0 if draw % 2 == 1 => PromptArguments::Edge(Edge::ALL[1 + (draw >> 1) as usize % (Edge::ALL.len() - 1)]),
            0 => PromptArguments::Required,
            1 => PromptArguments::Odd(super::odd_string::OddString::arbitrary(u)?),
            2 => PromptArguments::MissingRequired,
            _ => PromptArguments::UnknownPrompt,
        })
    }
}

impl PromptArguments {
    /// Every choice (odd strings by one representative).
    pub const ALL: [PromptArguments; 5] = [
        PromptArguments::Required,
        PromptArguments::Odd(super::odd_string::OddString::Empty),
        PromptArguments::MissingRequired,
        PromptArguments::UnknownPrompt,
        PromptArguments::Edge(super::edges::Edge::Zero),
    ];

    /// A stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            PromptArguments::Required => "required",
            PromptArguments::Odd(_) => "odd",
            PromptArguments::MissingRequired => "missing-required",
            PromptArguments::UnknownPrompt => "unknown-prompt",
            PromptArguments::Edge(_) => "edge",
        }
    }
}

/// A `resources/read`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary)]
pub struct ResourcePlan {
    /// The index among the listed resources (or templates), modulo their number.
    pub index: u8,
    /// Which URI is read.
    pub uri: ResourceUri,
}

/// Which URI a `resources/read` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, proptest_derive::Arbitrary)]
pub enum ResourceUri {
    /// A listed resource's URI.
    #[proptest(weight = 3)]
    Listed,
    /// A template expanded, every variable `wirefuzz` (or an odd string).
    Template(super::odd_string::OddString),
    /// A URI the server does not list, under a scheme no server uses.
    Unknown,
    /// A template expanded, every variable one edge value that a string takes, percent-encoded (`""`, a path-like
    /// string, ...; an edge no string takes, or `seen`, gives `wirefuzz`).
    TemplateEdge(super::edges::Edge),
}

impl<'a> arbitrary::Arbitrary<'a> for ResourceUri {
    /// Draws a `u32` as the derive did for the three choices of before, `(draw * 3) >> 32`, reading no other byte
    /// than before: an `Unknown` draw that is odd now expands a template with an edge, chosen by the draw's other
    /// bits.
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<ResourceUri> {
        use super::edges::Edge;
        let draw = u32::arbitrary(u)?;
        Ok(match (u64::from(draw) * 3) >> 32 {
            0 => ResourceUri::Listed,
            1 => ResourceUri::Template(super::odd_string::OddString::arbitrary(u)?),
            _ if draw % 2 == 1 => {
                ResourceUri::TemplateEdge(Edge::ALL[1 + (draw >> 1) as usize % (Edge::ALL.len() - 1)])
            }
            _ => ResourceUri::Unknown,
        })
    }
}

impl ResourceUri {
    /// Every choice (odd strings by one representative).
    pub const ALL: [ResourceUri; 4] = [
        ResourceUri::Listed,
        ResourceUri::Template(super::odd_string::OddString::Empty),
        ResourceUri::Unknown,
        ResourceUri::TemplateEdge(super::edges::Edge::Zero),
    ];

    /// A stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            ResourceUri::Listed => "listed",
            ResourceUri::Template(_) => "template",
            ResourceUri::Unknown => "unknown",
            ResourceUri::TemplateEdge(_) => "template-edge",
        }
    }
}

/// Proptest strategies for the plans, boxed: derived ones nest the strategy types of every member, and a script's
/// value tree grew deep enough to overflow a debug build's test-thread stack.
mod boxed {
    use super::{
        ArgPlan, Call, CompletePlan, InitVersion, ListKind, ListenPlan, PromptArguments, PromptPlan, ResourcePlan,
        ResourceUri, SubscribePlan, ToolCall, ToolPlan,
    };
    use proptest::prelude::{Just, Strategy, any, prop_oneof};
    use proptest::strategy::BoxedStrategy;

    /// Each choice boxed, so the union's value tree stays small. The order is the enum's, so a call shrinks towards
    /// `tools/list`, as the derived strategy did.
    impl proptest::arbitrary::Arbitrary for Call {
        type Parameters = ();
        type Strategy = BoxedStrategy<Call>;

        fn arbitrary_with((): ()) -> Self::Strategy {
            prop_oneof![
                2 => Just(Call::ToolsList).boxed(),
                3 => any::<ToolCall>().prop_map(Call::ToolsCall).boxed(),
                1 => Just(Call::Discover).boxed(),
                1 => Just(Call::PromptsList).boxed(),
                1 => Just(Call::ResourcesList).boxed(),
                1 => Just(Call::Ping).boxed(),
                1 => any::<InitVersion>().prop_map(Call::Initialize).boxed(),
                // The later calls share the weight `Unknown` had, so the other draws stay as they were.
                1 => prop_oneof![
                    2 => Just(Call::Unknown),
                    2 => any::<u8>().prop_map(|bits| Call::Listen(ListenPlan(bits))),
                    2 => any::<u8>().prop_map(|bits| Call::Complete(CompletePlan(bits))),
                    1 => any::<u8>().prop_map(Call::SetLevel),
                    2 => any::<u8>().prop_map(|bits| Call::Subscribe(SubscribePlan(bits))),
                ]
                .boxed(),
                3 => any::<ToolPlan>().prop_map(Call::Tool).boxed(),
                1 => any::<PromptPlan>().prop_map(Call::Prompt).boxed(),
                1 => any::<ResourcePlan>().prop_map(Call::Resource).boxed(),
                1 => Just(Call::TemplatesList).boxed(),
                1 => any::<ListKind>().prop_map(Call::BadCursor).boxed(),
            ]
            .boxed()
        }
    }

    impl proptest::arbitrary::Arbitrary for ToolPlan {
        type Parameters = ();
        type Strategy = BoxedStrategy<ToolPlan>;

        fn arbitrary_with((): ()) -> Self::Strategy {
            (any::<u8>(), any::<ArgPlan>()).prop_map(|(tool, arguments)| ToolPlan { tool, arguments }).boxed()
        }
    }

    impl proptest::arbitrary::Arbitrary for PromptPlan {
        type Parameters = ();
        type Strategy = BoxedStrategy<PromptPlan>;

        fn arbitrary_with((): ()) -> Self::Strategy {
            (any::<u8>(), any::<PromptArguments>())
                .prop_map(|(prompt, arguments)| PromptPlan { prompt, arguments })
                .boxed()
        }
    }

    impl proptest::arbitrary::Arbitrary for ResourcePlan {
        type Parameters = ();
        type Strategy = BoxedStrategy<ResourcePlan>;

        fn arbitrary_with((): ()) -> Self::Strategy {
            (any::<u8>(), any::<ResourceUri>()).prop_map(|(index, uri)| ResourcePlan { index, uri }).boxed()
        }
    }
}

/// A paginated list method.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    Templates,
}

impl ListKind {
    /// The method.
    pub fn method(self) -> &'static str {
        match self {
            ListKind::Tools => TOOLS_LIST,
            ListKind::Prompts => PROMPTS_LIST,
            ListKind::Resources => RESOURCES_LIST,
            ListKind::Templates => TEMPLATES_LIST,
        }
    }
}

impl Call {
    /// The method name.
    pub fn method(&self) -> &'static str {
        match self {
            Call::ToolsList => TOOLS_LIST,
            Call::ToolsCall(_) => TOOLS_CALL,
            Call::Discover => DISCOVER,
            Call::PromptsList => PROMPTS_LIST,
            Call::ResourcesList => RESOURCES_LIST,
            Call::Ping => PING,
            Call::Initialize(_) => INITIALIZE,
            Call::Unknown => UNKNOWN_METHOD,
            Call::Tool(_) => TOOLS_CALL,
            Call::Prompt(_) => PROMPTS_GET,
            Call::Resource(_) => RESOURCES_READ,
            Call::TemplatesList => TEMPLATES_LIST,
            Call::BadCursor(list) => list.method(),
            Call::Listen(_) => LISTEN,
            Call::SetLevel(_) => SET_LEVEL,
            Call::Complete(_) => COMPLETE,
            Call::Subscribe(SubscribePlan(bits)) if bits & 0x80 != 0 => UNSUBSCRIBE,
            Call::Subscribe(_) => SUBSCRIBE,
        }
    }
}

/// The arguments of a `tools/call` of the reference server's `add(a: int, b: int)`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum ToolCall {
    /// `add` with two integers.
    #[proptest(weight = 3)]
    Good,
    /// `add` without `b`.
    MissingArgument,
    /// `add` with `a` the string `"1"`.
    StringArgument,
    /// `add` with `a` the float `1.5`.
    FloatArgument,
    /// `add` with `a` a 30-digit integer.
    HugeInteger,
    /// `add` with an argument it does not declare.
    ExtraArgument,
    /// A tool the server does not have.
    UnknownTool,
    /// No `name` at all.
    MissingName,
    /// A tool name that is an odd string (a tool the server does not have).
    OddName(super::odd_string::OddString),
}

impl ToolCall {
    /// Every argument choice, in declaration order (odd names by one representative).
    pub const ALL: [ToolCall; 9] = [
        ToolCall::Good,
        ToolCall::MissingArgument,
        ToolCall::StringArgument,
        ToolCall::FloatArgument,
        ToolCall::HugeInteger,
        ToolCall::ExtraArgument,
        ToolCall::UnknownTool,
        ToolCall::MissingName,
        ToolCall::OddName(super::odd_string::OddString::Empty),
    ];

    /// A stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            ToolCall::Good => "good",
            ToolCall::MissingArgument => "missing-argument",
            ToolCall::StringArgument => "string-argument",
            ToolCall::FloatArgument => "float-argument",
            ToolCall::HugeInteger => "huge-integer",
            ToolCall::ExtraArgument => "extra-argument",
            ToolCall::UnknownTool => "unknown-tool",
            ToolCall::MissingName => "missing-name",
            ToolCall::OddName(_) => "odd-name",
        }
    }
}

/// A handshake-era protocol version, newest first.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum HandshakeVersion {
    /// `2025-11-25`.
    V2025_11_25,
    /// `2025-06-18`.
    V2025_06_18,
    /// `2025-03-26`.
    V2025_03_26,
    /// `2024-11-05`.
    V2024_11_05,
}

impl HandshakeVersion {
    /// The version string.
    pub fn as_str(self) -> &'static str {
        match self {
            HandshakeVersion::V2025_11_25 => "2025-11-25",
            HandshakeVersion::V2025_06_18 => "2025-06-18",
            HandshakeVersion::V2025_03_26 => "2025-03-26",
            HandshakeVersion::V2024_11_05 => "2024-11-05",
        }
    }
}

/// The version an `initialize` asks for.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum InitVersion {
    /// A handshake version the server must echo.
    #[proptest(weight = 3)]
    Handshake(HandshakeVersion),
    /// `2026-07-28`, which has no handshake: the server counter-offers a handshake version.
    Modern,
    /// `1999-01-01`, no version at all: the server counter-offers.
    Unknown,
}

impl InitVersion {
    /// The version string sent.
    pub fn as_str(self) -> &'static str {
        match self {
            InitVersion::Handshake(version) => version.as_str(),
            InitVersion::Modern => crate::protocol::era::LATEST_MODERN_VERSION,
            InitVersion::Unknown => "1999-01-01",
        }
    }
}

/// A notification.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum Note {
    /// `notifications/initialized`.
    Initialized,
    /// `notifications/cancelled` for the most recent legal request id (`0` when there is none).
    Cancelled,
    /// A notification method no version defines.
    Unknown,
}

impl Note {
    /// The method name.
    pub fn method(self) -> &'static str {
        match self {
            Note::Initialized => INITIALIZED,
            Note::Cancelled => CANCELLED,
            Note::Unknown => UNKNOWN_NOTIFICATION,
        }
    }
}

/// A line that is not a JSON-RPC message.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum RawLine {
    /// `{}`.
    EmptyObject,
    /// Text that is not JSON.
    NotJson,
    /// A bare number, `42`.
    Number,
    /// A bare string.
    String,
    /// A bare `null`.
    Null,
    /// A response the client was never asked for (`{"jsonrpc":"2.0","id":"stray","result":{}}`).
    StrayResponse,
}

impl RawLine {
    /// Every raw line, in declaration order.
    pub const ALL: [RawLine; 6] = [
        RawLine::EmptyObject,
        RawLine::NotJson,
        RawLine::Number,
        RawLine::String,
        RawLine::Null,
        RawLine::StrayResponse,
    ];

    /// A stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            RawLine::EmptyObject => "empty-object",
            RawLine::NotJson => "not-json",
            RawLine::Number => "number",
            RawLine::String => "string",
            RawLine::Null => "null",
            RawLine::StrayResponse => "stray-response",
        }
    }

    /// The line's bytes.
    pub fn bytes(self) -> &'static [u8] {
        match self {
            RawLine::EmptyObject => b"{}",
            RawLine::NotJson => b"this is not json",
            RawLine::Number => b"42",
            RawLine::String => b"\"wirefuzz\"",
            RawLine::Null => b"null",
            RawLine::StrayResponse => br#"{"jsonrpc":"2.0","id":"stray","result":{}}"#,
        }
    }
}
