//! Request ids: the kinds a script can choose ([`IdKind`]) and how the encoder turns a kind into a concrete id that
//! no other request of the script uses.

use super::odd_string::OddString;
use serde_json::{Value, json};

/// The kind of `id` a request carries. Legal kinds become ids derived from the request's position in the script, so
/// two requests never share an id by accident; [`IdKind::Duplicate`] shares one on purpose.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum IdKind {
    /// A small positive integer: the request's ordinal (`1`, `2`, ...).
    #[proptest(weight = 12)]
    SmallInt,
    /// `0` (the ordinal instead when a `0` was already sent).
    Zero,
    /// A negative integer: minus the ordinal.
    Negative,
    /// An odd integer beyond 2^53 (2^53 + 1 + 2n), which a double cannot hold: it loses its last digit.
    BeyondDouble,
    /// A 40-digit integer, beyond any machine integer.
    BeyondU64,
    /// An ASCII string: `"req-N"`.
    AsciiString,
    /// The empty string `""` (`"req-N"` when one was already sent).
    EmptyString,
    /// A string outside ASCII: `"é中😀"` (with the ordinal appended after its first use).
    UnicodeString,
    /// A string of digits, `"N"`, the same text as an integer id but a different id.
    NumericString,
    /// A string of an odd class (surrounding whitespace, U+2028/2029, control characters, escapes, non-BMP
    /// characters, 70,000 characters; the empty one is [`IdKind::EmptyString`]'s), made unique by the ordinal: a
    /// legal id, which the reply must echo with the same value.
    #[proptest(strategy = "odd_kinds()")]
    Odd(OddString),
    /// The id of the request sent most recently before this one (the ordinal when there is none yet).
    #[proptest(weight = 2)]
    Duplicate,
    /// `null`: illegal in MCP.
    Null,
    /// `1.5`: illegal (a fraction).
    Float,
    /// `N.0`: illegal (a float literal, even though whole); some parsers read it as the integer N, the ordinal, which
    /// no other request of the script has.
    WholeFloat,
    /// `Ne+3`: illegal (an exponent); some parsers read it as the integer N × 1000, beyond every ordinal of a script.
    Exponent,
    /// `true`: illegal.
    Bool,
    /// `[N]`: illegal.
    Array,
    /// `{"n":N}`: illegal.
    Object,
}

impl IdKind {
    /// Every kind, in declaration order.
    pub const ALL: [IdKind; 18] = [
        IdKind::SmallInt,
        IdKind::Zero,
        IdKind::Negative,
        IdKind::BeyondDouble,
        IdKind::BeyondU64,
        IdKind::AsciiString,
        IdKind::EmptyString,
        IdKind::UnicodeString,
        IdKind::NumericString,
        IdKind::Odd(OddString::Whitespace),
        IdKind::Duplicate,
        IdKind::Null,
        IdKind::Float,
        IdKind::WholeFloat,
        IdKind::Exponent,
        IdKind::Bool,
        IdKind::Array,
        IdKind::Object,
    ];

    /// A stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            IdKind::SmallInt => "small-int",
            IdKind::Zero => "zero",
            IdKind::Negative => "negative",
            IdKind::BeyondDouble => "beyond-double",
            IdKind::BeyondU64 => "beyond-u64",
            IdKind::AsciiString => "ascii-string",
            IdKind::EmptyString => "empty-string",
            IdKind::UnicodeString => "unicode-string",
            IdKind::NumericString => "numeric-string",
            IdKind::Odd(_) => "odd-string",
            IdKind::Duplicate => "duplicate",
            IdKind::Null => "null",
            IdKind::Float => "float",
            IdKind::WholeFloat => "whole-float",
            IdKind::Exponent => "exponent",
            IdKind::Bool => "bool",
            IdKind::Array => "array",
            IdKind::Object => "object",
        }
    }

    /// True for the kinds MCP accepts as a request id (a string or an integer).
    pub fn is_legal(self) -> bool {
        !matches!(
            self,
            IdKind::Null
                | IdKind::Float
                | IdKind::WholeFloat
                | IdKind::Exponent
                | IdKind::Bool
                | IdKind::Array
                | IdKind::Object
        )
    }
}

/// Hands out concrete ids while a script is encoded: every request gets the next ordinal, and ids are never
/// repeated except by [`IdKind::Duplicate`], counting the integer a whole-valued float id stands for (`1.0` is `1`
/// to many parsers, `1e+3` is `1000`; PROTOCOL-REFERENCE I7: reusing an open id is undefined behaviour). Ids made from the ordinal never repeat; the three fixed ones (`0`,
/// `""`, `"é中😀"`) are handed out once each, and their kind gets an id made from the ordinal after that.
#[derive(Debug)]
pub(crate) struct Ids {
    next: u64,
    zero_used: bool,
    empty_used: bool,
    unicode_used: bool,
    last: Option<Value>,
}

impl Ids {
    /// A fresh allocator: the first request's ordinal is 1.
    pub(crate) fn new() -> Ids {
        Ids { next: 1, zero_used: false, empty_used: false, unicode_used: false, last: None }
    }

    /// The ordinal the next request will get.
    pub(crate) fn peek(&self) -> u64 {
        self.next
    }

    /// The most recent legal id handed out, if any.
    pub(crate) fn last(&self) -> Option<&Value> {
        self.last.as_ref()
    }

    /// The id for the next request, of kind `kind`.
    pub(crate) fn assign(&mut self, kind: IdKind) -> Value {
        let n = self.next;
        self.next += 1;
        let fixed = |used: &mut bool, value: Value, fallback: fn(u64) -> Value| {
            if std::mem::replace(used, true) { fallback(n) } else { value }
        };
        let id = match kind {
            IdKind::SmallInt => json!(n),
            IdKind::Zero => fixed(&mut self.zero_used, json!(0), |n| json!(n)),
            IdKind::Negative => json!(-i128::from(n)),
            IdKind::BeyondDouble => json!((1u64 << 53) + 1 + 2 * n),
            IdKind::BeyondU64 => literal(&format!("1844674407370955161{n:021}")),
            IdKind::AsciiString => json!(format!("req-{n}")),
            IdKind::EmptyString => fixed(&mut self.empty_used, json!(""), |n| json!(format!("req-{n}"))),
            IdKind::UnicodeString => fixed(&mut self.unicode_used, json!("é中😀"), |n| json!(format!("é中😀-{n}"))),
            IdKind::NumericString => json!(n.to_string()),
            IdKind::Odd(OddString::Empty) => fixed(&mut self.empty_used, json!(""), |n| json!(format!("req-{n}"))),
            IdKind::Odd(class) => json!(odd_id(class, n)),
            IdKind::Duplicate => self.last.clone().unwrap_or(json!(n)),
            IdKind::Null => Value::Null,
            IdKind::Float => literal("1.5"),
            IdKind::WholeFloat => literal(&format!("{n}.0")),
            IdKind::Exponent => literal(&format!("{n}e+3")),
            IdKind::Bool => json!(true),
            IdKind::Array => json!([n]),
            IdKind::Object => json!({ "n": n }),
        };
        if kind.is_legal() {
            self.last = Some(id.clone());
        }
        id
    }
}

/// [`IdKind::Odd`]'s proptest strategy, boxed: a derived one nests its type in the script's value tree, which a
/// debug build's test-thread stack cannot hold (see `message::boxed`).
fn odd_kinds() -> proptest::strategy::BoxedStrategy<IdKind> {
    use proptest::prelude::{Strategy, any};
    any::<OddString>().prop_map(IdKind::Odd).boxed()
}

/// The length of a long string id: past the 4 KiB pipe buffer, and counted as long (over 10,000 characters).
pub const LONG_ID: usize = 16_384;

/// The string id of odd class `class` for ordinal `n`: the ordinal goes inside the odd part (after leading
/// whitespace, before trailing whitespace), so the id keeps its class and no other request's id is the same string.
pub fn odd_id(class: OddString, n: u64) -> String {
    match class {
        OddString::Empty => String::new(),
        OddString::Whitespace => format!(" \t req-{n} \n "),
        OddString::Separators => format!("req\u{2028}{n}\u{2029}"),
        OddString::Huge => format!("{}-{n}", "w".repeat(LONG_ID)),
        other => format!("{}req-{n}", other.text()),
    }
}

/// A JSON number kept as its exact literal text (the crate enables serde_json's `arbitrary_precision`).
pub(crate) fn literal(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_keep_their_text() {
        for text in ["1.5", "1.0", "1e+3", "1844674407370955161000000000000000000001"] {
            assert_eq!(literal(text).to_string(), text);
        }
    }

    #[test]
    fn whole_valued_ids_never_stand_for_another_requests_id() {
        let mut ids = Ids::new();
        let mut seen = std::collections::HashSet::new();
        // A script's requests: the opening's, then at most a batch's worth per step.
        let most = (1 + crate::script::MAX_STEPS * crate::script::MAX_BATCH) as u64;
        let kinds = IdKind::ALL.into_iter().filter(|k| *k != IdKind::Duplicate).cycle();
        for kind in kinds {
            if ids.peek() > most {
                break;
            }
            {
                let id = ids.assign(kind);
                let text = id.to_string();
                let as_integer = match &id {
                    Value::Number(_) => crate::protocol::json::whole_integer(&text),
                    _ => None,
                };
                if let Some(integer) = as_integer {
                    assert!(seen.insert(integer.clone()), "{} repeated {integer} as {text}", kind.name());
                }
            }
        }
    }

    #[test]
    fn legal_ids_never_repeat_except_duplicates() {
        let mut ids = Ids::new();
        let mut seen = std::collections::HashSet::new();
        for round in 0..3 {
            for kind in IdKind::ALL.into_iter().filter(|k| k.is_legal() && *k != IdKind::Duplicate) {
                let id = ids.assign(kind).to_string();
                assert!(seen.insert(id.clone()), "round {round}: {} repeated {id}", kind.name());
            }
        }
        let last = ids.last().cloned().unwrap();
        assert_eq!(ids.assign(IdKind::Duplicate), last);
    }
}
