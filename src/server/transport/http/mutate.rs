//! HTTP-level mutations for campaigns over HTTP: directive lines ([`super::Directive`]) put into a generated
//! conversation, drawn from the seed and the conversation's index (so a conversation is still a pure function of
//! both). They are lines of the conversation like any other, so a finding's case file keeps them and shrinking
//! drops the ones the finding does not need.

use super::wire::Framing;
use super::{DIRECTIVE, Directive, Tweak};
use crate::script::draws::Draws;
use crate::transcript::Input;

/// One HTTP-level mutation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpMutation {
    /// `Origin: http://evil.example` on the next POST.
    ForeignOrigin,
    /// The next POST lacks this header.
    Drop(&'static str),
    /// The next POST's `Mcp-Method` names another method.
    OtherMethod,
    /// The next POST's `MCP-Protocol-Version` names another version, or none at all.
    OtherVersion(&'static str),
    /// The next POST carries `Mcp-Method` twice, the second naming another method.
    DuplicateMethod,
    /// The next POST's routing header names are lowercase.
    LowercaseNames,
    /// The next POST carries a 16 KiB header value.
    OverlongHeader,
    /// The next POST's `Content-Type` is `text/plain`.
    ContentTypeText,
    /// The next POST's `Accept` lists only `application/json`.
    AcceptJsonOnly,
    /// The next POST's body is chunked.
    Chunked,
    /// The next POST's chunked body is cut after half.
    ChunkedCut,
    /// The next POST's body is padded with spaces past 10 MiB.
    HugeBody,
    /// The next POST names a session the server never issued.
    UnknownSession,
    /// The next POST lacks its `Mcp-Param-*` headers (the arguments an annotated tool mirrors).
    DropParams,
    /// The next POST's `Mcp-Param-*` headers all say `wirefuzz`.
    OtherParams,
    /// A GET of the endpoint.
    Get,
    /// A DELETE of the session.
    Delete,
}

impl HttpMutation {
    /// Every mutation.
    pub const ALL: [HttpMutation; 20] = [
        HttpMutation::ForeignOrigin,
        HttpMutation::Drop("MCP-Protocol-Version"),
        HttpMutation::Drop("Mcp-Method"),
        HttpMutation::Drop("Mcp-Name"),
        HttpMutation::Drop("Mcp-Session-Id"),
        HttpMutation::OtherMethod,
        HttpMutation::OtherVersion("2025-06-18"),
        HttpMutation::OtherVersion("1999-01-01"),
        HttpMutation::DuplicateMethod,
        HttpMutation::LowercaseNames,
        HttpMutation::OverlongHeader,
        HttpMutation::ContentTypeText,
        HttpMutation::AcceptJsonOnly,
        HttpMutation::Chunked,
        HttpMutation::ChunkedCut,
        HttpMutation::HugeBody,
        HttpMutation::UnknownSession,
        HttpMutation::Get,
        HttpMutation::DropParams,
        HttpMutation::OtherParams,
    ];

    /// The directive lines of the mutation.
    pub fn lines(self) -> Vec<Vec<u8>> {
        let set = |name: &str, value: &str| Directive::Next(Tweak::Set(name.into(), value.into()));
        let directives = match self {
            HttpMutation::ForeignOrigin => vec![set("Origin", "http://evil.example")],
            HttpMutation::Drop(name) => vec![Directive::Next(Tweak::Drop(name.into()))],
            HttpMutation::OtherMethod => vec![set("Mcp-Method", "tools/call")],
            HttpMutation::OtherVersion(version) => vec![set("MCP-Protocol-Version", version)],
            HttpMutation::DuplicateMethod => {
                vec![Directive::Next(Tweak::Add("Mcp-Method".into(), "tools/call".into()))]
            }
            HttpMutation::LowercaseNames => ["Mcp-Method", "MCP-Protocol-Version", "Mcp-Name"]
                .into_iter()
                .map(|name| Directive::Next(Tweak::Rename(name.into(), name.to_ascii_lowercase())))
                .collect(),
            HttpMutation::OverlongHeader => vec![set("X-Wirefuzz", &"a".repeat(16 << 10))],
            HttpMutation::ContentTypeText => vec![set("Content-Type", "text/plain")],
            HttpMutation::AcceptJsonOnly => vec![set("Accept", "application/json")],
            HttpMutation::Chunked => vec![Directive::Next(Tweak::Framing(Framing::Chunked))],
            HttpMutation::ChunkedCut => vec![Directive::Next(Tweak::Framing(Framing::ChunkedCut))],
            HttpMutation::HugeBody => vec![Directive::Next(Tweak::Pad(11 << 20))],
            HttpMutation::UnknownSession => vec![set("Mcp-Session-Id", "wirefuzz-unknown-session")],
            HttpMutation::Get => vec![Directive::Bodiless("GET".into())],
            HttpMutation::DropParams => vec![Directive::Next(Tweak::Drop("Mcp-Param-*".into()))],
            HttpMutation::OtherParams => vec![set("Mcp-Param-*", "wirefuzz")],
            HttpMutation::Delete => vec![Directive::Bodiless("DELETE".into())],
        };
        directives.iter().map(Directive::line).collect()
    }
}

/// Puts HTTP mutations into conversation `index` of `seed`: about two thirds of the conversations get one to
/// three, each before a line. Session mutations (a DELETE, a dropped session header) come more often, so a session
/// is ended or left out before later requests; an 11 MiB body comes rarely (it costs a tenth of a second).
pub fn mutate(inputs: Vec<Input>, seed: u64, index: u64) -> Vec<Input> {
    let mut draws = Draws(seed.rotate_left(17) ^ index.wrapping_mul(0xD134_2543_DE82_EF95) ^ 0x4854_5450);
    let mut next = move || draws.bits();
    if next() % 3 == 0 {
        return inputs;
    }
    let lines: Vec<usize> = inputs
        .iter()
        .enumerate()
        .filter(|(_, input)| matches!(input, Input::Line(line) if !line.starts_with(DIRECTIVE)))
        .map(|(at, _)| at)
        .collect();
    let mut chosen: Vec<(usize, HttpMutation)> = (0..1 + next() % 3)
        .map(|_| {
            let common: Vec<HttpMutation> =
                HttpMutation::ALL.into_iter().filter(|m| *m != HttpMutation::HugeBody).collect();
            let mutation = match next() % 64 {
                0 => HttpMutation::HugeBody,
                1..=8 => HttpMutation::Delete,
                9..=14 => HttpMutation::Drop("Mcp-Session-Id"),
                n => common[(n as usize) % common.len()],
            };
            let at = match lines.len() {
                0 => inputs.len(),
                // Not before the first line, which opens the session a session mutation needs.
                n => lines[(next() % n as u64) as usize].max(lines[n.min(2) - 1]),
            };
            (at, mutation)
        })
        .collect();
    chosen.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    let mut inputs = inputs;
    for (at, mutation) in chosen {
        let at = at.min(inputs.len());
        inputs.splice(at..at, mutation.lines().into_iter().map(Input::Line));
    }
    inputs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_deterministic_directives_that_parse() {
        let base = crate::campaign::conversation(7, 3);
        assert_eq!(mutate(base.clone(), 7, 3), mutate(base.clone(), 7, 3));
        let mutated = (0..40)
            .filter(|i| mutate(crate::campaign::conversation(7, *i), 7, *i) != crate::campaign::conversation(7, *i))
            .count();
        assert!((16..=36).contains(&mutated), "{mutated} of 40 mutated");
        for mutation in HttpMutation::ALL.into_iter().chain([HttpMutation::Delete]) {
            for line in mutation.lines() {
                assert!(Directive::parse(&line).is_some(), "{mutation:?}: {}", String::from_utf8_lossy(&line));
            }
        }
    }
}
