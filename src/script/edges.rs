//! Edge values: the boundary cases of each JSON type, put into one member of otherwise plain, schema-valid
//! arguments. Every edge here stays on the valid side of the member's schema (a member it would break is not
//! chosen), so the oracle judges the call as a valid one; the values one past a bound are breakages
//! ([`super::arguments::Breakage::OutOfRange`], [`super::arguments::Breakage::WrongEnum`]).
//!
//! [`Edge`] is ordered plainest first, so proptest shrinks a failing call towards no edge, then `""`/`0`, and keeps
//! a later, stranger edge only when the simpler ones pass. [`Edge::Seen`] is the stateful one: a value an earlier
//! result held, resolved when the line is sent ([`crate::transcript::seen`]).

use super::odd_string::OddString;
use crate::transcript::seen;
use serde_json::{Map, Value, json};

/// 2^53: the first integer an IEEE double cannot tell from its successor (JavaScript's `Number.MAX_SAFE_INTEGER` + 1).
pub const TWO_POW_53: i64 = 1 << 53;
/// Where a string edge is very long: 70,000 characters, beyond the 64 KiB pipe buffer when echoed.
const LONG: usize = 70_000;
/// The longest string or array an edge at a bound builds.
const MAX_BUILT: usize = 100_000;
/// The most items an edge at `minItems`/`maxItems` builds.
const MAX_ITEMS: usize = 64;

/// One edge value, put into one member of valid arguments (or none). The order is the shrinking order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, proptest_derive::Arbitrary)]
pub enum Edge {
    /// No edge: the plain arguments.
    #[default]
    #[proptest(weight = 16)]
    Plain,
    /// The zero of the member's type: `""`, `0`, `false`, `[]`, `{}`.
    #[proptest(weight = 2)]
    Zero,
    /// Every optional member left out.
    Absent,
    /// `null`, where the member's schema allows it.
    Null,
    /// A value an earlier result held under the member's name (an id, a name, a URI), the plain value when none.
    #[proptest(weight = 3)]
    Seen,
    /// `-1`.
    MinusOne,
    /// At the lower bound: `minimum`, `minLength`, `minItems`.
    Minimum,
    /// At the upper bound: `maximum`, `maxLength`, `maxItems`, or the last `enum` value.
    Maximum,
    /// 2^53.
    TwoPow53,
    /// -2^53.
    MinusTwoPow53,
    /// Whitespace only.
    Blank,
    /// Letters beyond ASCII: accents, CJK, Greek, Arabic (right to left).
    NonAscii,
    /// Emoji: a skin-tone modifier, a ZWJ family, a non-BMP symbol.
    Emoji,
    /// Control characters (NUL, ESC, DEL).
    Control,
    /// Raw U+2028 and U+2029.
    Separators,
    /// A relative path climbing out: `../../../../etc/passwd`.
    PathLike,
    /// SQL, shell, template, HTML and format-string injection in one.
    Injection,
    /// 70,000 characters.
    Long,
}

impl Edge {
    /// Every edge, in shrinking order.
    pub const ALL: [Edge; 18] = [
        Edge::Plain,
        Edge::Zero,
        Edge::Absent,
        Edge::Null,
        Edge::Seen,
        Edge::MinusOne,
        Edge::Minimum,
        Edge::Maximum,
        Edge::TwoPow53,
        Edge::MinusTwoPow53,
        Edge::Blank,
        Edge::NonAscii,
        Edge::Emoji,
        Edge::Control,
        Edge::Separators,
        Edge::PathLike,
        Edge::Injection,
        Edge::Long,
    ];

    /// A stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Edge::Plain => "plain",
            Edge::Zero => "zero",
            Edge::Absent => "absent",
            Edge::Null => "null",
            Edge::Seen => "seen",
            Edge::MinusOne => "minus-one",
            Edge::Minimum => "minimum",
            Edge::Maximum => "maximum",
            Edge::TwoPow53 => "two-pow-53",
            Edge::MinusTwoPow53 => "minus-two-pow-53",
            Edge::Blank => "blank",
            Edge::NonAscii => "non-ascii",
            Edge::Emoji => "emoji",
            Edge::Control => "control",
            Edge::Separators => "separators",
            Edge::PathLike => "path-like",
            Edge::Injection => "injection",
            Edge::Long => "long",
        }
    }

    /// The edge a `cargo fuzz` plan takes from its seed, so no byte is read that was not read before: an even seed
    /// (0 included) none, an odd one an edge chosen by its other bits.
    pub fn from_seed(seed: u16) -> Edge {
        match seed % 2 {
            0 => Edge::Plain,
            _ => Edge::ALL[1 + usize::from(seed >> 1) % (Edge::ALL.len() - 1)],
        }
    }

    /// The string of a string edge.
    fn text(self) -> Option<String> {
        Some(match self {
            Edge::Blank => " \t\n ".into(),
            Edge::NonAscii => "Ünïcödé ñ 日本語 Ελληνικά العربية".into(),
            Edge::Emoji => "😀👍🏽👨\u{200d}👩\u{200d}👧 𝄞".into(),
            Edge::Control => OddString::Control.text(),
            Edge::Separators => OddString::Separators.text(),
            Edge::PathLike => "../../../../etc/passwd".into(),
            Edge::Injection => {
                "'; DROP TABLE items; -- $(id) `id` {{7*7}} ${7*7} <script>alert(1)</script> %s%n".into()
            }
            Edge::Long => "w".repeat(LONG),
            _ => return None,
        })
    }
}

/// The edge value of member `name` with schema `member` (its `$ref` followed), when the schema accepts it: `plain`
/// is the member's plain value (a [`Edge::Seen`] reference falls back to it), `item` a plain item of an array
/// member, `pick` which seen value a reference takes. [`Edge::Plain`] and [`Edge::Absent`] give none.
pub fn value(edge: Edge, name: &str, member: &Value, plain: &Value, item: Option<Value>, pick: u8) -> Option<Value> {
    let schema = member.as_object()?;
    if edge == Edge::Null {
        return allows_null(schema).then_some(Value::Null);
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        return options.last().filter(|_| edge == Edge::Maximum).cloned();
    }
    if ["const", "anyOf", "oneOf", "allOf", "not", "$ref"].iter().any(|key| schema.contains_key(*key)) {
        return None;
    }
    let types = types(schema);
    let number = |value: i64| {
        let fits = types.iter().any(|t| matches!(*t, "integer" | "number")) && within(schema, value as f64);
        fits.then(|| json!(value))
    };
    match edge {
        Edge::Plain | Edge::Absent | Edge::Null => None,
        Edge::Seen => {
            let scalar: Vec<&str> =
                types.iter().copied().filter(|t| matches!(*t, "string" | "integer" | "number")).collect();
            (!scalar.is_empty()).then(|| seen::reference(name, &scalar, pick, plain.clone()))
        }
        Edge::Zero => types.iter().find_map(|kind| zero(kind, schema)),
        Edge::MinusOne => number(-1),
        Edge::TwoPow53 => number(TWO_POW_53),
        Edge::MinusTwoPow53 => number(-TWO_POW_53),
        Edge::Minimum => types.iter().find_map(|kind| at_bound(kind, schema, item.clone(), false)),
        Edge::Maximum => types.iter().find_map(|kind| at_bound(kind, schema, item.clone(), true)),
        text => text.text().filter(|t| types.contains(&"string") && fits_string(schema, t)).map(Value::String),
    }
}

/// The JSON types a member schema names (`type`, a string or a list), else the one its keywords imply; any scalar
/// when it says nothing.
fn types(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ if schema.contains_key("properties") => vec!["object"],
        _ if schema.contains_key("items") => vec!["array"],
        _ => vec!["string", "integer"],
    }
}

/// Whether the member's schema takes `null`: its type names it (and its `enum`, if any, lists it), or one of
/// the `anyOf`/`oneOf` branches of a schema that has nothing else (but annotations) does.
fn allows_null(schema: &Map<String, Value>) -> bool {
    fn names_null(schema: &Map<String, Value>) -> bool {
        let typed = match schema.get("type") {
            Some(Value::String(kind)) => kind == "null",
            Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "null"),
            _ => schema.contains_key("enum"),
        };
        let listed = schema.get("enum").and_then(Value::as_array).is_none_or(|o| o.contains(&Value::Null));
        typed && listed && !["const", "allOf", "anyOf", "oneOf", "not", "$ref"].iter().any(|k| schema.contains_key(*k))
    }
    let annotation = |key: &str| matches!(key, "description" | "title" | "default" | "examples");
    match schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array) {
        Some(branches) => {
            let alone = schema.keys().filter(|k| !annotation(k)).count() == 1;
            alone && branches.iter().filter_map(Value::as_object).filter(|b| names_null(b)).count() == 1
        }
        None => names_null(schema),
    }
}

/// A numeric keyword's value.
fn bound(schema: &Map<String, Value>, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64).filter(|v| v.is_finite())
}

/// Whether a number is within the member's bounds and a multiple of its `multipleOf`.
fn within(schema: &Map<String, Value>, value: f64) -> bool {
    bound(schema, "minimum").is_none_or(|m| value >= m)
        && bound(schema, "maximum").is_none_or(|m| value <= m)
        && bound(schema, "exclusiveMinimum").is_none_or(|m| value > m)
        && bound(schema, "exclusiveMaximum").is_none_or(|m| value < m)
        && bound(schema, "multipleOf").is_none_or(|m| m > 0.0 && (value / m).fract() == 0.0)
}

/// Whether a string member takes `text`: no `pattern` or `format` (which the edge would not know to keep), and a
/// length (in characters, as JSON Schema counts) within its bounds.
fn fits_string(schema: &Map<String, Value>, text: &str) -> bool {
    let len = text.chars().count() as f64;
    !schema.contains_key("pattern")
        && !schema.contains_key("format")
        && bound(schema, "minLength").is_none_or(|m| len >= m)
        && bound(schema, "maxLength").is_none_or(|m| len <= m)
}

/// The zero of type `kind`, when the member takes it.
fn zero(kind: &str, schema: &Map<String, Value>) -> Option<Value> {
    match kind {
        "string" => fits_string(schema, "").then(|| json!("")),
        "integer" | "number" => within(schema, 0.0).then(|| json!(0)),
        "boolean" => Some(json!(false)),
        "array" => (bound(schema, "minItems").unwrap_or(0.0) <= 0.0).then(|| json!([])),
        "object" => {
            let required = schema.get("required").and_then(Value::as_array).is_some_and(|r| !r.is_empty());
            (!required && bound(schema, "minProperties").unwrap_or(0.0) <= 0.0).then(|| json!({}))
        }
        _ => None,
    }
}

/// The value of type `kind` at the member's upper (`high`) or lower bound, when it has one.
fn at_bound(kind: &str, schema: &Map<String, Value>, item: Option<Value>, high: bool) -> Option<Value> {
    let (inclusive, exclusive, length, items) = match high {
        true => ("maximum", "exclusiveMaximum", "maxLength", "maxItems"),
        false => ("minimum", "exclusiveMinimum", "minLength", "minItems"),
    };
    let step = if high { -1.0 } else { 1.0 };
    match kind {
        "integer" => {
            let at = bound(schema, inclusive)
                .map(|m| if high { m.floor() } else { m.ceil() })
                .or_else(|| bound(schema, exclusive).map(|m| if high { m.ceil() } else { m.floor() } + step))?;
            (at.abs() <= TWO_POW_53 as f64 && within(schema, at)).then(|| json!(at as i64))
        }
        "number" => schema.get(inclusive).filter(|m| m.as_f64().is_some_and(|m| within(schema, m))).cloned(),
        "string" => {
            let n = bound(schema, length).filter(|n| *n >= 1.0 && *n <= MAX_BUILT as f64)? as usize;
            let text = "w".repeat(n);
            fits_string(schema, &text).then_some(Value::String(text))
        }
        "array" => {
            let n = bound(schema, items).filter(|n| *n >= 1.0 && *n <= MAX_ITEMS as f64)? as usize;
            let unique = schema.get("uniqueItems").and_then(Value::as_bool).unwrap_or(false);
            (!unique || n == 1).then(|| Value::Array(vec![item.unwrap_or(json!(0)); n]))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::arguments::{ArgPlan, Breakage, arguments};

    /// Members of every type and bound an edge looks at.
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": { "type": "string" },
                "code": { "type": "string", "minLength": 2, "maxLength": 4 },
                "when": { "type": "string", "format": "date" },
                "count": { "type": "integer", "minimum": 1, "maximum": 5 },
                "offset": { "type": "integer" },
                "ratio": { "type": ["number", "null"], "exclusiveMaximum": 1 },
                "step": { "type": "integer", "multipleOf": 3 },
                "mode": { "enum": ["short", "long"] },
                "flag": { "type": "boolean" },
                "tags": { "type": "array", "items": { "type": "string" }, "minItems": 1, "maxItems": 3 },
                "options": { "type": "object", "properties": { "deep": { "type": "boolean" } } },
                "filter": { "type": "object", "properties": { "q": { "type": "string" } }, "required": ["q"] },
                "maybe": { "anyOf": [{ "type": "string" }, { "type": "null" }] },
                "user": { "$ref": "#/$defs/id" }
            },
            "required": ["text", "count", "user"],
            "additionalProperties": false,
            "$defs": { "id": { "type": "string", "minLength": 1 } }
        })
    }

    /// The arguments `edge` makes under `seed`, references resolved with no earlier result (their fallback).
    fn made(schema: &Value, edge: Edge, seed: u16) -> Value {
        let made = arguments(schema, ArgPlan { breakage: Breakage::None, seed, edge });
        let line = serde_json::to_vec(&made).unwrap();
        serde_json::from_slice(&seen::resolve(&line, &[])).unwrap()
    }

    #[test]
    fn every_edge_stays_valid() {
        let schema = schema();
        let validator = crate::surface::compile(&schema).unwrap();
        for edge in Edge::ALL {
            for seed in 0..60 {
                let made = made(&schema, edge, seed);
                assert!(validator.is_valid(&made), "{edge:?} seed {seed}: {made}");
            }
        }
    }

    #[test]
    fn every_edge_but_plain_changes_the_arguments() {
        let schema = schema();
        for edge in Edge::ALL.into_iter().filter(|e| !matches!(e, Edge::Plain | Edge::Seen)) {
            let changed = (0..60).filter(|&seed| made(&schema, edge, seed) != made(&schema, Edge::Plain, seed));
            assert!(changed.count() >= 20, "{edge:?}");
        }
        // The plainest edge under seed 0: the first member that takes it, at its zero.
        assert_eq!(made(&schema, Edge::Zero, 0), json!({ "text": "", "count": 1, "user": "wirefuzz" }));
        let reference = arguments(&schema, ArgPlan { breakage: Breakage::None, seed: 0, edge: Edge::Seen });
        assert_eq!(reference["text"][seen::SEEN]["else"], json!("wirefuzz"));
    }

    #[test]
    fn an_edge_the_schema_refuses_is_not_put_in() {
        let constrained = |member: Value| json!({ "type": "object", "properties": { "m": member }, "required": ["m"] });
        let refused = [
            (Edge::Zero, json!({ "type": "string", "minLength": 1 })),
            (Edge::Zero, json!({ "type": "integer", "minimum": 1 })),
            (Edge::MinusOne, json!({ "type": "integer", "minimum": 0 })),
            (Edge::TwoPow53, json!({ "type": "integer", "maximum": 100 })),
            (Edge::Null, json!({ "type": "string" })),
            (Edge::Injection, json!({ "type": "string", "pattern": "^[a-z]+$" })),
            (Edge::Long, json!({ "type": "string", "maxLength": 100 })),
            (Edge::Blank, json!({ "type": "integer" })),
            (Edge::Seen, json!({ "type": "boolean" })),
            (Edge::Minimum, json!({ "type": "integer" })),
        ];
        for (edge, member) in refused {
            let schema = constrained(member.clone());
            assert_eq!(made(&schema, edge, 0), made(&schema, Edge::Plain, 0), "{edge:?} on {member}");
        }
    }

    #[test]
    fn fuzz_plans_take_edges_from_odd_seeds_only() {
        assert_eq!(Edge::from_seed(0), Edge::Plain);
        assert_eq!(Edge::from_seed(2), Edge::Plain);
        assert_eq!(Edge::from_seed(1), Edge::Zero);
        let reached: std::collections::HashSet<Edge> = (0..=u16::MAX).map(Edge::from_seed).collect();
        assert_eq!(reached.len(), Edge::ALL.len());
    }
}
