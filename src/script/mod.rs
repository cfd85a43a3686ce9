//! The test-input model: a [`Script`] is one conversation to hold with a server, as typed steps (a message, a
//! message with one named [`Mutation`], a batch, a raw line, or a sync point) after an [`Opening`].
//!
//! One set of plain data types carries both generators: `arbitrary::Arbitrary` (for `cargo fuzz`, through
//! [`Script::from_bytes`]) and proptest's `Arbitrary` (for shrinking property tests, through [`scripts`]), both
//! derived on the same enums and structs, so the two grammars cannot drift apart. Every choice is a closed enum and
//! every collection a [`Bounded`], so both stay finite; the first variant of every enum, which `arbitrary` picks
//! when its bytes run out, is a valid message.
//!
//! Shrinking under proptest: a [`Bounded`] list shrinks by dropping elements and then shrinking each one left; an
//! enum shrinks towards its first variant (the plain, valid choice: a handshake opening, `tools/list`, a small
//! integer id, no envelope). A failing script therefore shrinks towards few steps of valid messages, keeping only
//! the breakage the failure needs.

pub mod arguments;
pub mod bounded;
pub mod draws;
pub mod edges;
mod encode;
pub mod id;
pub mod message;
pub mod mutation;
pub mod odd_string;
pub mod session;
mod sweep;

pub use bounded::Bounded;
pub use encode::{BAD_CURSOR, CLIENT_NAME, UNKNOWN_PROMPT, UNKNOWN_URI};
pub use id::IdKind;
pub use message::{Call, Envelope, HandshakeVersion, InitVersion, Message, Note, RawLine, Request, ToolCall, ToolPlan};
pub use mutation::Mutation;

use crate::protocol::Era;
use crate::protocol::client::Answers;
use crate::surface::Surface;
use crate::transcript::Input;
use arbitrary::{Arbitrary, Unstructured};
use proptest::prelude::{Strategy, any};
use std::fmt;

/// The most steps a script has after its opening.
pub const MAX_STEPS: usize = 16;
/// The most messages in one batch step.
pub const MAX_BATCH: usize = 3;
/// The most tool calls in one sequence step.
pub const MAX_SEQUENCE: usize = 4;

/// One conversation: an opening, then the steps in order. The end of a script is an implicit final sync point.
#[derive(Clone, Debug, PartialEq, Eq, Hash, arbitrary::Arbitrary, proptest_derive::Arbitrary)]
pub struct Script {
    /// How the conversation starts.
    pub opening: Opening,
    /// What follows, sent back to back up to each sync point.
    pub steps: Bounded<Step, MAX_STEPS>,
}

/// How a script starts. Proptest picks a proper opening about 70% of the time, so deep behaviour is reached;
/// `arbitrary` picks handshake, modern, notification first and nothing by weights 4, 3, 1 and 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, proptest_derive::Arbitrary)]
pub enum Opening {
    /// `initialize` with this version and these client capabilities, `notifications/initialized`, then a sync
    /// point. Proptest's scripts declare nothing: a second draw here would change every script a seed of theirs
    /// gives, and the shrinking the tests hold them to; `arbitrary` declares every capability in half.
    #[proptest(weight = 4)]
    Handshake(HandshakeVersion, #[proptest(value = "Declares::Nothing")] Declares),
    /// An enveloped `server/discover` (the modern era's probe), then a sync point.
    #[proptest(weight = 3)]
    Modern,
    /// `notifications/cancelled`, then the modern opening: a notification never selects an era, so a server that
    /// pins one on it (the R1 bug of `@modelcontextprotocol/server` 2.4.0) refuses the `server/discover`.
    #[proptest(weight = 1)]
    NotificationFirst,
    /// Nothing: the first step is the first thing the server sees.
    #[proptest(weight = 3)]
    Nothing,
}

impl<'a> Arbitrary<'a> for Opening {
    /// Draws a `u32` as the derive did for the three openings of before, `(draw * 3) >> 32`, so every draw keeps
    /// its opening, except that a quarter of the modern ones (`draw % 4 == 0`) now send a notification first:
    /// weights handshake 4, modern 3, notification first 1, nothing 4. Half the handshake openings (`draw` odd)
    /// declare every client capability, answering the server's requests (by the next three bits) validly in three
    /// eighths of those, and declining elicitations, refusing everything, answering malformed results, answering
    /// late or not at all in an eighth each. No byte more is drawn than before, so a seed's conversations keep
    /// their steps.
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Opening> {
        let draw = u32::arbitrary(u)?;
        Ok(match (u64::from(draw) * 3) >> 32 {
            0 => {
                const STYLES: [Answers; 8] = [
                    Answers::Accept,
                    Answers::Accept,
                    Answers::Decline,
                    Answers::Refuse,
                    Answers::Accept,
                    Answers::Malformed,
                    Answers::Late,
                    Answers::Ignore,
                ];
                let declares = match draw % 2 {
                    1 => Declares::Everything(STYLES[(draw >> 1) as usize % STYLES.len()]),
                    _ => Declares::Nothing,
                };
                Opening::Handshake(HandshakeVersion::arbitrary(u)?, declares)
            }
            1 if draw % 4 == 0 => Opening::NotificationFirst,
            1 => Opening::Modern,
            _ => Opening::Nothing,
        })
    }
}

/// The client capabilities a handshake opening declares in its `initialize`
/// ([`protocol::client`](crate::protocol::client) answers the server's requests accordingly).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Declares {
    /// `"capabilities": {}`: the server may send no sampling, elicitation or roots request.
    Nothing,
    /// `sampling`, `elicitation` (the form mode) and `roots`: such requests get answers in this style (the
    /// `initialize` names a style other than [`Answers::Accept`] in its `_meta`).
    Everything(Answers),
}

impl Declares {
    /// The `capabilities` member of the `initialize`.
    pub fn capabilities(self) -> serde_json::Value {
        match self {
            Declares::Nothing => serde_json::json!({}),
            Declares::Everything(_) => {
                serde_json::json!({ "sampling": {}, "elicitation": {}, "roots": { "listChanged": true } })
            }
        }
    }
}

impl Opening {
    /// The era the opening puts the connection in, `None` for [`Opening::Nothing`].
    pub fn era(self) -> Option<Era> {
        match self {
            Opening::Handshake(..) => Some(Era::Handshake),
            Opening::Modern | Opening::NotificationFirst => Some(Era::Modern),
            Opening::Nothing => None,
        }
    }
}

/// One step: a frame to send, a sequence of tool calls, or a sync point.
#[derive(Clone, Debug, PartialEq, Eq, Hash, proptest_derive::Arbitrary)]
pub enum Step {
    /// A well-formed message.
    #[proptest(weight = 6)]
    Send(Message),
    /// A request broken by one mutation.
    #[proptest(weight = 3)]
    Mutated(Request, Mutation),
    /// A batch array of messages (`[]` when empty).
    Batch(Bounded<Message, MAX_BATCH>),
    /// A line that is not a message.
    Raw(RawLine),
    /// Wait for the replies to everything sent so far.
    #[proptest(weight = 2)]
    Sync,
    /// Listed tools called in turn, each after a sync point, in the opening's era: every call after the first
    /// takes a value an earlier result held ([`edges::Edge::Seen`]) unless its plan names another edge, so a bug
    /// behind a write is reached (`create` returns an id, `get` of that id breaks). Shrinking drops calls.
    #[proptest(weight = 2)]
    Sequence(Bounded<ToolPlan, MAX_SEQUENCE>),
}

impl<'a> Arbitrary<'a> for Step {
    /// Draws a `u32` as the derive did for the five steps of before, `(draw * 5) >> 32`, so every draw keeps its
    /// step, except that an eighth of the sync points (`draw % 8 == 0`) are now sequences (which read their calls'
    /// bytes, so what follows one in that script changes).
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Step> {
        let draw = u32::arbitrary(u)?;
        Ok(match (u64::from(draw) * 5) >> 32 {
            0 => Step::Send(Message::arbitrary(u)?),
            1 => Step::Mutated(Request::arbitrary(u)?, Mutation::arbitrary(u)?),
            2 => Step::Batch(Bounded::arbitrary(u)?),
            3 => Step::Raw(RawLine::arbitrary(u)?),
            _ if draw % 8 == 0 => Step::Sequence(Bounded::arbitrary(u)?),
            _ => Step::Sync,
        })
    }
}

/// One thing a script exercises, for coverage counts and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feature {
    /// The opening, by the era it sets (`None`: no opening).
    Opening(Option<Era>),
    /// A method sent, in a request or a notification (mutated requests included).
    Method(&'static str),
    /// The arguments of a `tools/call`.
    ToolCall(ToolCall),
    /// How the arguments of a `tools/call` of a listed tool are made.
    Arguments(arguments::Breakage),
    /// The edge value in the arguments of a `tools/call` of a listed tool.
    Edge(edges::Edge),
    /// The arguments of a `prompts/get`.
    PromptArguments(message::PromptArguments),
    /// The URI of a `resources/read`.
    ResourceUri(message::ResourceUri),
    /// The kind of a request's id.
    Id(IdKind),
    /// A request of era `message` after an opening of era `opening`.
    Eras {
        /// The opening's era (`None`: no opening).
        opening: Option<Era>,
        /// The request's era: modern when it carries the envelope.
        message: Era,
    },
    /// A mutation applied.
    Mutation(Mutation),
    /// A raw line sent.
    Raw(RawLine),
    /// A batch step of this many messages.
    Batch(usize),
    /// A sequence step of this many tool calls.
    Sequence(usize),
    /// An explicit sync point.
    Sync,
}

impl fmt::Display for Feature {
    /// `kind:detail`, e.g. `mutation:drop-id`, `eras:handshake>modern`, `opening:none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let era = |era: &Option<Era>| era.map_or("none", Era::name);
        match self {
            Feature::Opening(opening) => write!(f, "opening:{}", era(opening)),
            Feature::Method(method) => write!(f, "method:{method}"),
            Feature::ToolCall(arguments) => write!(f, "tool-call:{}", arguments.name()),
            Feature::Arguments(breakage) => write!(f, "arguments:{}", breakage.name()),
            Feature::Edge(edge) => write!(f, "edge:{}", edge.name()),
            Feature::PromptArguments(arguments) => write!(f, "prompt:{}", arguments.name()),
            Feature::ResourceUri(uri) => write!(f, "resource:{}", uri.name()),
            Feature::Id(kind) => write!(f, "id:{}", kind.name()),
            Feature::Eras { opening, message } => write!(f, "eras:{}>{message}", era(opening)),
            Feature::Mutation(mutation) => write!(f, "mutation:{}", mutation.name()),
            Feature::Raw(raw) => write!(f, "raw:{}", raw.name()),
            Feature::Batch(len) => write!(f, "batch:{len}"),
            Feature::Sequence(len) => write!(f, "sequence:{len}"),
            Feature::Sync => f.write_str("sync"),
        }
    }
}

impl Default for Script {
    /// A handshake opening at the latest handshake version and no steps.
    fn default() -> Script {
        Script {
            opening: Opening::Handshake(HandshakeVersion::V2025_11_25, Declares::Nothing),
            steps: Bounded::empty(),
        }
    }
}

impl Script {
    /// The script `arbitrary` builds from `data` (for a `cargo fuzz` target); never fails: bytes that run out give
    /// the default choices, and an error gives [`Script::default`].
    pub fn from_bytes(data: &[u8]) -> Script {
        Script::arbitrary(&mut Unstructured::new(data)).unwrap_or_default()
    }

    /// The lines to send to a server with `surface`, in order: each step is one [`Input::Line`] or
    /// [`Input::Sync`]. Deterministic. Tool calls, prompt gets and resource reads draw their names, arguments and
    /// URIs from the surface (an empty one gives unknown names). No final sync is appended: the runner waits at the
    /// end of a script anyway.
    pub fn encode_on(&self, surface: &Surface) -> Vec<Input> {
        encode::encode(self, surface)
    }

    /// Everything the script exercises, in the order it comes (repeats included, so they can be counted).
    pub fn features(&self) -> Vec<Feature> {
        let opening = self.opening.era();
        let mut features = vec![Feature::Opening(opening)];
        let request = |features: &mut Vec<Feature>, r: &Request| {
            features.push(Feature::Method(r.call.method()));
            match r.call {
                Call::ToolsCall(arguments) => features.push(Feature::ToolCall(arguments)),
                Call::Tool(plan) => {
                    features.push(Feature::Arguments(plan.arguments.breakage));
                    features.push(Feature::Edge(plan.arguments.edge));
                }
                Call::Prompt(plan) => features.push(Feature::PromptArguments(plan.arguments)),
                Call::Resource(plan) => features.push(Feature::ResourceUri(plan.uri)),
                _ => {}
            }
            features.push(Feature::Id(r.id));
            features.push(Feature::Eras { opening, message: r.envelope.era() });
        };
        let message = |features: &mut Vec<Feature>, m: &Message| match m {
            Message::Request(r) => request(features, r),
            Message::Notification(note) => features.push(Feature::Method(note.method())),
        };
        for step in &self.steps.0 {
            match step {
                Step::Send(m) => message(&mut features, m),
                Step::Mutated(r, mutation) => {
                    request(&mut features, r);
                    features.push(Feature::Mutation(*mutation));
                }
                Step::Batch(messages) => {
                    features.push(Feature::Batch(messages.0.len()));
                    messages.0.iter().for_each(|m| message(&mut features, m));
                }
                Step::Raw(raw) => features.push(Feature::Raw(*raw)),
                Step::Sequence(plans) => {
                    features.push(Feature::Sequence(plans.0.len()));
                    for (at, plan) in plans.0.iter().enumerate() {
                        let call = Call::Tool(sequenced(at, *plan));
                        request(&mut features, &Request { call, id: IdKind::SmallInt, envelope: envelope(opening) });
                    }
                }
                Step::Sync => features.push(Feature::Sync),
            }
        }
        features
    }
}

/// Call `at` of a sequence: from the second on, a plan without an edge takes a value seen in an earlier result.
pub(crate) fn sequenced(at: usize, mut plan: ToolPlan) -> ToolPlan {
    if at > 0 && plan.arguments.edge == edges::Edge::Plain {
        plan.arguments.edge = edges::Edge::Seen;
    }
    plan
}

/// The envelope a sequence's calls carry after an opening of `era`: the modern one after a modern opening.
pub(crate) fn envelope(era: Option<Era>) -> Envelope {
    match era {
        Some(Era::Modern) => Envelope::Modern,
        _ => Envelope::Plain,
    }
}

/// The proptest strategy for scripts (the same as `any::<Script>()`).
pub fn scripts() -> impl Strategy<Value = Script> {
    any::<Script>()
}
