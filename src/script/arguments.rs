//! Arguments from schemas: an [`ArgPlan`] (a [`Breakage`] and a seed, plain data both generators derive, so
//! proptest shrinks it towards seed 0 and no breakage) is resolved against a tool's `inputSchema` when the script
//! is encoded: `Generator::instance` builds arguments that satisfy the schema (seed 0: the smallest, required
//! members only), then the breakage breaks one constraint. Whether the arguments sent are valid is decided by the
//! oracle with a JSON Schema validator, not by this generator's intent.
//!
//! The schema subset: `type` (one or a list, `null` included), `properties`, `required`, `enum`, `const`, numeric
//! bounds, string lengths and common formats, `items`, `prefixItems`, `minItems`/`maxItems`, `uniqueItems`,
//! `anyOf`/`oneOf`/`allOf`, local `$ref` into `$defs`/`definitions`, `additionalProperties`, `minProperties`,
//! `dependentRequired`.

use super::draws::Draws;
use super::edges::{self, Edge};
use super::odd_string::OddString;
use serde_json::{Map, Number, Value, json};

/// The most nesting followed while generating (deeper schemas get `null`).
const MAX_DEPTH: usize = 12;

/// How arguments are made: a breakage, the seed of every choice, and an edge value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ArgPlan {
    /// Which constraint is broken, if any.
    pub breakage: Breakage,
    /// The seed of every choice (0: the simplest).
    pub seed: u16,
    /// The edge value put into one member (before the breakage, if any).
    pub edge: Edge,
}

impl proptest::arbitrary::Arbitrary for ArgPlan {
    type Parameters = ();
    type Strategy = proptest::strategy::BoxedStrategy<ArgPlan>;

    /// The breakage is drawn as the derive drew it (valid 4 times in 13, each breakage once), but in two steps,
    /// valid or broken and then how: proptest shrinks a choice one alternative back and stops there when that one
    /// passes, so a breakage shrinks straight to valid arguments when those still fail, not only to the breakage
    /// before it.
    fn arbitrary_with((): ()) -> Self::Strategy {
        use proptest::prelude::{Just, Strategy, any, prop_oneof};
        let broken = prop_oneof![
            Just(Breakage::WrongType),
            Just(Breakage::MissingRequired),
            Just(Breakage::ExtraProperty),
            Just(Breakage::OutOfRange),
            Just(Breakage::WrongEnum),
            any::<OddString>().prop_map(Breakage::OddString),
            Just(Breakage::DeepNesting),
            Just(Breakage::Null),
            Just(Breakage::NotAnObject),
        ];
        let breakage = prop_oneof![4 => Just(Breakage::None), 9 => broken];
        (breakage, any::<u16>(), any::<Edge>())
            .prop_map(|(breakage, seed, edge)| ArgPlan { breakage, seed, edge })
            .boxed()
    }
}

impl<'a> arbitrary::Arbitrary<'a> for ArgPlan {
    /// Reads the breakage and the seed as the derive did before edges came, and no more: every input keeps its
    /// breakages and seeds, and the edge comes from the seed ([`Edge::from_seed`], valid plans only).
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<ArgPlan> {
        let breakage = Breakage::arbitrary(u)?;
        let seed = u16::arbitrary(u)?;
        let edge = if breakage == Breakage::None { Edge::from_seed(seed) } else { Edge::Plain };
        Ok(ArgPlan { breakage, seed, edge })
    }
}

/// One constraint broken (or none).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, arbitrary::Arbitrary, proptest_derive::Arbitrary,
)]
pub enum Breakage {
    /// Valid arguments.
    #[default]
    #[proptest(weight = 4)]
    None,
    /// A member of the wrong JSON type.
    WrongType,
    /// A required member left out.
    MissingRequired,
    /// A member the schema does not declare.
    ExtraProperty,
    /// A number or length beyond its bound.
    OutOfRange,
    /// A value outside an `enum` or `const`.
    WrongEnum,
    /// A string member set to an odd string (valid or not, as the schema says).
    OddString(OddString),
    /// A member nested 64 levels deep.
    DeepNesting,
    /// A member set to `null`.
    Null,
    /// `arguments` not an object at all (an array).
    NotAnObject,
}

impl Breakage {
    /// Every breakage (odd strings by one representative).
    pub const ALL: [Breakage; 10] = [
        Breakage::None,
        Breakage::WrongType,
        Breakage::MissingRequired,
        Breakage::ExtraProperty,
        Breakage::OutOfRange,
        Breakage::WrongEnum,
        Breakage::OddString(OddString::Empty),
        Breakage::DeepNesting,
        Breakage::Null,
        Breakage::NotAnObject,
    ];

    /// A stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Breakage::None => "valid",
            Breakage::WrongType => "wrong-type",
            Breakage::MissingRequired => "missing-required",
            Breakage::ExtraProperty => "extra-property",
            Breakage::OutOfRange => "out-of-range",
            Breakage::WrongEnum => "wrong-enum",
            Breakage::OddString(_) => "odd-string",
            Breakage::DeepNesting => "deep-nesting",
            Breakage::Null => "null",
            Breakage::NotAnObject => "not-an-object",
        }
    }
}

/// The plan's draws (SplitMix64 seeded by the plan), with the simplest choices under seed 0.
struct Choices(Draws);

impl Choices {
    fn next(&mut self) -> u64 {
        self.0.bits()
    }

    /// A number below `n` (0 when `n` is 0); always 0 under seed 0, so seed 0 makes the simplest choices.
    fn below(&mut self, n: usize, simple: bool) -> usize {
        if simple || n == 0 { 0 } else { self.0.below(n) }
    }
}

/// Arguments for `schema` made by `plan`: valid ones, then the plan's constraint broken.
pub fn arguments(schema: &Value, plan: ArgPlan) -> Value {
    let mut choices = Choices(Draws(u64::from(plan.seed)));
    let simple = plan.seed == 0;
    let mut generator = Generator { root: schema, choices: &mut choices, simple };
    let mut value = generator.instance(schema, 0);
    if !value.is_object() {
        value = json!({});
    }
    if plan.edge != Edge::Plain {
        generator.edge(schema, &mut value, plan.edge);
    }
    break_one(schema, &mut value, plan.breakage, &mut choices, simple);
    value
}

struct Generator<'a> {
    root: &'a Value,
    choices: &'a mut Choices,
    simple: bool,
}

impl Generator<'_> {
    /// A value `schema` accepts, as far as the subset goes.
    fn instance(&mut self, schema: &Value, depth: usize) -> Value {
        let Some(object) = schema.as_object() else { return json!({}) };
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        if let Some(target) = object.get("$ref").and_then(Value::as_str) {
            return match resolve(self.root, target) {
                Some(resolved) => self.instance(resolved, depth + 1),
                None => Value::Null,
            };
        }
        if let Some(constant) = object.get("const") {
            return constant.clone();
        }
        if let Some(options) = object.get("enum").and_then(Value::as_array).filter(|o| !o.is_empty()) {
            return options[self.choices.below(options.len(), self.simple)].clone();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = object.get(key).and_then(Value::as_array).filter(|b| !b.is_empty()) {
                let branch = &branches[self.choices.below(branches.len(), self.simple)];
                return self.instance(branch, depth + 1);
            }
        }
        if let Some(parts) = object.get("allOf").and_then(Value::as_array) {
            let merged = merge(object, parts, self.root);
            return self.instance(&merged, depth + 1);
        }
        let kind = match object.get("type") {
            Some(Value::String(kind)) => kind.as_str(),
            Some(Value::Array(kinds)) => {
                let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
                let non_null: Vec<&str> = kinds.iter().copied().filter(|k| *k != "null").collect();
                let pool = if non_null.is_empty() { &kinds } else { &non_null };
                pool.get(self.choices.below(pool.len(), self.simple)).copied().unwrap_or("object")
            }
            _ if object.contains_key("properties") => "object",
            _ if object.contains_key("items") => "array",
            _ => "string",
        };
        match kind {
            "object" => self.object(object, depth),
            "array" => self.array(object, depth),
            "integer" => Value::Number(self.integer(object)),
            "number" => Value::Number(self.number(object)),
            "boolean" => Value::Bool(self.choices.below(2, self.simple) == 1),
            "null" => Value::Null,
            _ => Value::String(self.string(object)),
        }
    }

    /// Puts `edge` into one top-level member of valid `arguments` (chosen by the seed among the members whose
    /// schema takes it), or, for [`Edge::Absent`], leaves out every optional member.
    fn edge(&mut self, schema: &Value, arguments: &mut Value, edge: Edge) {
        let Some(object) = schema.as_object() else { return };
        let Some(members) = arguments.as_object_mut() else { return };
        let required = required(object);
        if edge == Edge::Absent {
            members.retain(|name, _| required.contains(&name.as_str()));
            return;
        }
        let Some(properties) = object.get("properties").and_then(Value::as_object) else { return };
        let pick = if self.simple { 0 } else { (self.choices.next() % 4) as u8 };
        let mut candidates = Vec::new();
        for (name, member) in properties {
            let member = follow(self.root, member);
            let plain = members.get(name).cloned().unwrap_or_else(|| self.instance(member, 1));
            let item = member.get("items").map(|items| self.instance(items, 2));
            if let Some(value) = edges::value(edge, name, member, &plain, item, pick) {
                candidates.push((name.clone(), value));
            }
        }
        if !candidates.is_empty() {
            let (name, value) = candidates.swap_remove(self.choices.below(candidates.len(), self.simple));
            members.insert(name, value);
        }
    }

    fn object(&mut self, object: &Map<String, Value>, depth: usize) -> Value {
        let required = required(object);
        let mut out = Map::new();
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            for (name, schema) in properties {
                if required.contains(&name.as_str()) || self.choices.below(2, self.simple) == 1 {
                    out.insert(name.clone(), self.instance(schema, depth + 1));
                }
            }
        }
        for name in required {
            if !out.contains_key(name) {
                out.insert(name.to_string(), json!("wirefuzz"));
            }
        }
        // `minProperties`: the optional members left out come in, in order, until there are enough.
        let min = bound(object, "minProperties").unwrap_or(0.0) as usize;
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            for (name, schema) in properties {
                if out.len() >= min {
                    break;
                }
                if !out.contains_key(name) {
                    out.insert(name.clone(), self.instance(schema, depth + 1));
                }
            }
        }
        // `dependentRequired`: a member present brings the members it names (once; the new ones' own are not
        // followed further).
        if let Some(dependencies) = object.get("dependentRequired").and_then(Value::as_object) {
            let present: Vec<String> = out.keys().filter(|name| dependencies.contains_key(*name)).cloned().collect();
            for name in present {
                let needed = dependencies[&name].as_array().map(Vec::as_slice).unwrap_or_default();
                for needed in needed.iter().filter_map(Value::as_str) {
                    if !out.contains_key(needed) {
                        let schema = object.get("properties").and_then(|p| p.get(needed));
                        let value = schema.map_or_else(|| json!("wirefuzz"), |schema| self.instance(schema, depth + 1));
                        out.insert(needed.to_string(), value);
                    }
                }
            }
        }
        Value::Object(out)
    }

    /// An array: `prefixItems` first, one item each, then `items` up to the length drawn within `minItems` and
    /// `maxItems` (none with `items: false`); with `uniqueItems`, a repeated item is left out.
    fn array(&mut self, object: &Map<String, Value>, depth: usize) -> Value {
        let prefix = object.get("prefixItems").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let items = object.get("items").cloned().unwrap_or_else(|| json!({}));
        let min = (bound(object, "minItems").unwrap_or(0.0) as usize).max(prefix.len());
        let max = bound(object, "maxItems").map_or(min + 3, |m| m as usize).max(min);
        let max = if items == json!(false) { max.min(prefix.len()) } else { max };
        let len = (min + self.choices.below(max.saturating_sub(min) + 1, self.simple)).min(min + 8).min(max);
        let mut out: Vec<Value> = Vec::with_capacity(len);
        for index in 0..len {
            let item = match prefix.get(index) {
                Some(schema) => self.instance(schema, depth + 1),
                None => self.instance(&items, depth + 1),
            };
            let repeated = object.get("uniqueItems") == Some(&Value::Bool(true)) && out.contains(&item);
            if !repeated || index < prefix.len() {
                out.push(item);
            }
        }
        Value::Array(out)
    }

    fn integer(&mut self, object: &Map<String, Value>) -> Number {
        let low = bound(object, "minimum")
            .or_else(|| bound(object, "exclusiveMinimum").map(|m| m.floor() + 1.0))
            .map(f64::ceil)
            .unwrap_or(0.0);
        let high = bound(object, "maximum")
            .or_else(|| bound(object, "exclusiveMaximum").map(|m| m.ceil() - 1.0))
            .map(f64::floor)
            .unwrap_or(low.max(0.0) + 100.0);
        // Small values above the minimum: a tool's numbers are often sizes or durations.
        let span = (high - low).clamp(0.0, 10.0) as usize;
        let mut value = low + self.choices.below(span + 1, self.simple) as f64;
        // The next multiple of an integer `multipleOf` (within the bounds, or the value stays as it was).
        if let Some(step) = bound(object, "multipleOf").filter(|m| *m >= 1.0 && m.fract() == 0.0) {
            let multiple = (value / step).ceil() * step;
            if multiple <= high {
                value = multiple;
            }
        }
        Number::from(value as i64)
    }

    fn number(&mut self, object: &Map<String, Value>) -> Number {
        let integer = self.integer(object);
        let low = bound(object, "minimum").or_else(|| bound(object, "exclusiveMinimum")).unwrap_or(f64::MIN);
        let high = bound(object, "maximum").or_else(|| bound(object, "exclusiveMaximum")).unwrap_or(f64::MAX);
        let with_half = integer.as_f64().unwrap_or(0.0) + 0.5;
        match self.simple {
            false if with_half > low && with_half < high => Number::from_f64(with_half).unwrap_or(integer),
            _ => integer,
        }
    }

    fn string(&mut self, object: &Map<String, Value>) -> String {
        let text = match object.get("format").and_then(Value::as_str) {
            // A `data:` URL is a URI whose content is in the URL itself: a tool that fetches it reaches no network.
            Some("uri" | "url" | "iri") => "data:text/plain,wirefuzz".to_string(),
            Some("email") => "wirefuzz@example.com".to_string(),
            Some("date-time") => "2025-01-01T00:00:00Z".to_string(),
            Some("date") => "2025-01-01".to_string(),
            Some("time") => "00:00:00Z".to_string(),
            Some("uuid") => "00000000-0000-4000-8000-000000000000".to_string(),
            _ if self.simple => "wirefuzz".to_string(),
            _ => format!("wirefuzz-{}", self.choices.next() % 1000),
        };
        let min = bound(object, "minLength").unwrap_or(0.0) as usize;
        let max = bound(object, "maxLength").map_or(usize::MAX, |m| m as usize);
        let mut text: String = text.chars().take(max).collect();
        while text.chars().count() < min.min(10_000) {
            text.push('w');
        }
        text
    }
}

/// The `required` names of an object schema.
fn required(object: &Map<String, Value>) -> Vec<&str> {
    let names = object.get("required").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    names.iter().filter_map(Value::as_str).collect()
}

/// A numeric keyword's value.
fn bound(object: &Map<String, Value>, key: &str) -> Option<f64> {
    object.get(key).and_then(Value::as_f64).filter(|v| v.is_finite())
}

/// A schema with its local `$ref`s followed (a few at most; one that does not resolve is kept).
fn follow<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..8 {
        match schema.get("$ref").and_then(Value::as_str).and_then(|target| resolve(root, target)) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// The schema a local `$ref` (`#/$defs/x`, `#/definitions/x`, any JSON pointer) points at.
fn resolve<'a>(root: &'a Value, target: &str) -> Option<&'a Value> {
    root.pointer(target.strip_prefix('#')?)
}

/// An `allOf`'s parts merged into one object schema (properties and required united, other keywords of the first
/// part that has them).
fn merge(object: &Map<String, Value>, parts: &[Value], root: &Value) -> Value {
    let mut merged = object.clone();
    merged.remove("allOf");
    let mut properties = merged.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut required: Vec<Value> = merged.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    for part in parts {
        let part = part.get("$ref").and_then(Value::as_str).and_then(|r| resolve(root, r)).unwrap_or(part);
        let Some(part) = part.as_object() else { continue };
        for (key, value) in part {
            match key.as_str() {
                "properties" => properties.extend(value.as_object().cloned().unwrap_or_default()),
                "required" => required.extend(value.as_array().cloned().unwrap_or_default()),
                _ => {
                    merged.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
    }
    if !properties.is_empty() {
        merged.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        merged.insert("required".into(), Value::Array(required));
    }
    Value::Object(merged)
}

/// Breaks one constraint of valid `arguments` (a top-level member, chosen by the seed).
fn break_one(schema: &Value, arguments: &mut Value, breakage: Breakage, choices: &mut Choices, simple: bool) {
    let properties = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let Some(members) = arguments.as_object_mut() else { return };
    let pick = |names: Vec<String>, choices: &mut Choices| -> Option<String> {
        names.get(choices.below(names.len(), simple)).cloned()
    };
    let declared: Vec<String> = properties.keys().cloned().collect();
    match breakage {
        Breakage::None => {}
        Breakage::WrongType => {
            let Some(name) = pick(declared, choices) else { return };
            let current = members.get(&name).cloned().unwrap_or(Value::Null);
            let wrong = match current {
                Value::String(_) => json!(1),
                Value::Number(_) => json!("1"),
                Value::Bool(_) => json!("true"),
                Value::Array(_) => json!({ "wirefuzz": 1 }),
                Value::Object(_) => json!("wirefuzz"),
                Value::Null => json!([]),
            };
            members.insert(name, wrong);
        }
        Breakage::MissingRequired => {
            let names: Vec<String> =
                schema.as_object().map(required).unwrap_or_default().into_iter().map(str::to_string).collect();
            if let Some(name) = pick(names, choices) {
                members.remove(&name);
            }
        }
        Breakage::ExtraProperty => {
            members.insert("wirefuzz_extra".into(), json!(1));
        }
        Breakage::OutOfRange => {
            let bounded: Vec<(String, Value)> = properties
                .iter()
                .flat_map(|(name, s)| beyond(s).into_iter().map(|value| (name.clone(), value)))
                .collect();
            if let Some((name, value)) = bounded.get(choices.below(bounded.len(), simple)).cloned() {
                members.insert(name, value);
            }
        }
        Breakage::WrongEnum => {
            let enumerated: Vec<String> = properties
                .iter()
                .filter(|(_, s)| s.get("enum").is_some() || s.get("const").is_some())
                .map(|(name, _)| name.clone())
                .collect();
            if let Some(name) = pick(enumerated, choices) {
                members.insert(name, json!("wirefuzz-not-listed"));
            }
        }
        Breakage::OddString(class) => {
            let strings: Vec<String> = properties
                .iter()
                .filter(|(name, s)| {
                    members.get(*name).is_some_and(Value::is_string)
                        || s.get("type").and_then(Value::as_str) == Some("string")
                })
                .map(|(name, _)| name.clone())
                .collect();
            if let Some(name) = pick(strings, choices) {
                members.insert(name, Value::String(class.text()));
            }
        }
        Breakage::DeepNesting => {
            let name = pick(declared, choices).unwrap_or_else(|| "wirefuzz_deep".into());
            let mut deep = json!(1);
            for _ in 0..64 {
                deep = json!([deep]);
            }
            members.insert(name, deep);
        }
        Breakage::Null => {
            if let Some(name) = pick(declared, choices) {
                members.insert(name, Value::Null);
            }
        }
        Breakage::NotAnObject => *arguments = json!([1]),
    }
}

/// The values just beyond a property schema's bounds, one past each: above the maximum (an exclusive one itself),
/// below the minimum, one character over `maxLength` and under `minLength`, one item over `maxItems` and under
/// `minItems`.
fn beyond(schema: &Value) -> Vec<Value> {
    let Some(object) = schema.as_object() else { return Vec::new() };
    let mut out = Vec::new();
    if let Some(max) = bound(object, "maximum") {
        out.push(json!(max.floor() as i64 + 1));
    } else if let Some(max) = bound(object, "exclusiveMaximum") {
        out.push(json!(max.ceil() as i64));
    }
    if let Some(min) = bound(object, "minimum") {
        out.push(json!(min.ceil() as i64 - 1));
    } else if let Some(min) = bound(object, "exclusiveMinimum") {
        out.push(json!(min.floor() as i64));
    }
    if let Some(max) = bound(object, "maxLength") {
        out.push(Value::String("w".repeat(max as usize + 1)));
    }
    if let Some(min) = bound(object, "minLength").filter(|m| *m >= 1.0) {
        out.push(Value::String("w".repeat(min as usize - 1)));
    }
    if let Some(max) = bound(object, "maxItems") {
        out.push(Value::Array(vec![json!(0); max as usize + 1]));
    }
    if let Some(min) = bound(object, "minItems").filter(|m| *m >= 1.0) {
        out.push(Value::Array(vec![json!(0); min as usize - 1]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "user": { "$ref": "#/$defs/user" },
                "mode": { "enum": ["short", "long"] },
                "count": { "type": "integer", "minimum": 1, "maximum": 5 },
                "ratio": { "type": ["number", "null"], "exclusiveMaximum": 1 },
                "tags": { "type": "array", "items": { "type": "string", "maxLength": 4 }, "maxItems": 2 },
                "pick": { "anyOf": [{ "type": "boolean" }, { "const": 7 }] },
                "both": { "allOf": [{ "properties": { "a": { "type": "string" } }, "required": ["a"] }] }
            },
            "required": ["user", "count"],
            "additionalProperties": false,
            "$defs": { "user": { "type": "object", "properties": { "name": { "type": "string", "minLength": 2 } },
                "required": ["name"] } }
        })
    }

    #[test]
    fn valid_plans_make_valid_arguments_and_seed_zero_is_smallest() {
        let schema = schema();
        let validator = crate::surface::compile(&schema).unwrap();
        assert_eq!(arguments(&schema, ArgPlan::default()), json!({ "user": { "name": "wirefuzz" }, "count": 1 }));
        for seed in 0..500 {
            let made = arguments(&schema, ArgPlan { breakage: Breakage::None, seed, edge: Edge::Plain });
            assert!(validator.is_valid(&made), "seed {seed}: {made}");
        }
    }

    #[test]
    fn draft_2020_12_keywords_get_valid_arguments() {
        let schema = json!({
            "type": "object",
            "properties": {
                "point": { "type": "array", "prefixItems": [{ "type": "number" }, { "type": "number" }],
                    "items": false },
                "tags": { "type": "array", "items": { "enum": ["a", "b", "c"] }, "uniqueItems": true, "maxItems": 3 },
                "card": { "type": "string", "minLength": 4 },
                "billing": { "type": "string" },
                "mode": { "const": "fast" },
                "extra": { "$ref": "#/$defs/extra" }
            },
            "required": ["point"],
            "dependentRequired": { "card": ["billing"] },
            "minProperties": 3,
            "$defs": { "extra": { "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"] } }
        });
        let validator = crate::surface::compile(&schema).unwrap();
        let mut with_card = 0;
        for seed in 0..500 {
            let made = arguments(&schema, ArgPlan { breakage: Breakage::None, seed, edge: Edge::Plain });
            assert!(validator.is_valid(&made), "seed {seed}: {made}");
            with_card += usize::from(made.get("card").is_some());
        }
        assert!(with_card > 100, "{with_card} of 500 give card (and so billing)");
    }

    #[test]
    fn each_breakage_breaks_the_schema() {
        let schema = schema();
        let validator = crate::surface::compile(&schema).unwrap();
        let breakages = [
            Breakage::WrongType,
            Breakage::MissingRequired,
            Breakage::ExtraProperty,
            Breakage::OutOfRange,
            Breakage::WrongEnum,
            Breakage::DeepNesting,
            Breakage::NotAnObject,
        ];
        for breakage in breakages {
            let broken = (0..50).filter(|&seed| {
                !validator.is_valid(&arguments(&schema, ArgPlan { breakage, seed, ..ArgPlan::default() }))
            });
            // A member without a type (`both`) takes a value of any type.
            assert!(broken.count() >= 30, "{breakage:?}");
        }
    }
}
