//! The generator's coverage of the wire itself: which JSON types each envelope member, each `params` member and
//! each `_meta` key got in the lines sent, which odd string classes reached ids, names and arguments, and how large
//! the replies they provoked were (against the 4 KiB and 64 KiB pipe and buffer sizes). Measured on transcripts,
//! shown by `mcp-wirefuzz coverage`.

use crate::script::mutation::Member;
use crate::server::builtin::reference::Calc;
use crate::transcript::{Event, Transcript};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// The JSON types a member can have, `absent` included, in table order.
pub const TYPES: [&str; 7] = ["object", "array", "string", "number", "boolean", "null", "absent"];
/// The odd string classes, in table order.
pub const CLASSES: [&str; 7] = ["whitespace", "separators", "control", "escapes", "non-bmp", "long", "empty"];
/// Where odd strings are looked for.
pub const PLACES: [&str; 3] = ["id", "name", "arguments"];
/// Reply size buckets.
pub const SIZES: [&str; 3] = ["< 4 KiB", "4-64 KiB", "> 64 KiB"];

/// What the lines sent and received covered.
#[derive(Clone, Debug, Default)]
pub struct WireCoverage {
    /// (member, JSON type) → lines: members are `jsonrpc`, `id`, `method`, `params`, `params.NAME`, `_meta.KEY`.
    pub types: BTreeMap<(String, &'static str), u64>,
    /// (place, class) → strings.
    pub strings: BTreeMap<(&'static str, &'static str), u64>,
    /// Size bucket → replies.
    pub sizes: BTreeMap<&'static str, u64>,
    /// Lines sent that are JSON objects.
    pub objects: u64,
}

fn type_of(value: Option<&Value>) -> &'static str {
    match value {
        None => "absent",
        Some(Value::Object(_)) => "object",
        Some(Value::Array(_)) => "array",
        Some(Value::String(_)) => "string",
        Some(Value::Number(_)) => "number",
        Some(Value::Bool(_)) => "boolean",
        Some(Value::Null) => "null",
    }
}

/// The odd classes a string belongs to.
pub fn classes(text: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    if text != text.trim() {
        out.push("whitespace");
    }
    if text.contains(['\u{2028}', '\u{2029}']) {
        out.push("separators");
    }
    if text.chars().any(|c| c.is_control() && !c.is_whitespace()) {
        out.push("control");
    }
    if text.contains(['"', '\\']) {
        out.push("escapes");
    }
    if text.chars().any(|c| u32::from(c) > 0xFFFF) {
        out.push("non-bmp");
    }
    if text.chars().count() > 10_000 {
        out.push("long");
    }
    if text.is_empty() {
        out.push("empty");
    }
    out
}

impl WireCoverage {
    /// Counts one transcript.
    pub fn add(&mut self, transcript: &Transcript) {
        for event in &transcript.events {
            match event {
                Event::Sent(line) => {
                    let Ok(value) = serde_json::from_slice::<Value>(line) else { continue };
                    let items = match value {
                        Value::Array(items) => items,
                        other => vec![other],
                    };
                    items.iter().for_each(|item| self.message(item));
                }
                Event::Received { line, .. } => {
                    let bucket = match line.len() {
                        n if n < 4 * 1024 => SIZES[0],
                        n if n <= 64 * 1024 => SIZES[1],
                        _ => SIZES[2],
                    };
                    *self.sizes.entry(bucket).or_default() += 1;
                }
                Event::Sync | Event::Http(_) | Event::Note(_) => {}
            }
        }
    }

    fn message(&mut self, message: &Value) {
        let Some(object) = message.as_object() else { return };
        self.objects += 1;
        for member in ["jsonrpc", "id", "method", "params"] {
            *self.types.entry((member.to_string(), type_of(object.get(member)))).or_default() += 1;
        }
        self.absent_members(object);
        if let Some(Value::String(id)) = object.get("id") {
            self.strings_of("id", id);
        }
        let Some(params) = object.get("params").and_then(Value::as_object) else { return };
        for (name, value) in params {
            *self.types.entry((format!("params.{name}"), type_of(Some(value)))).or_default() += 1;
        }
        if let Some(meta) = params.get("_meta").and_then(Value::as_object) {
            for (key, value) in meta {
                *self.types.entry((format!("_meta.{key}"), type_of(Some(value)))).or_default() += 1;
            }
        }
        for key in ["name", "uri"] {
            if let Some(Value::String(name)) = params.get(key) {
                self.strings_of("name", name);
            }
        }
        let mut stack: Vec<&Value> = params.get("arguments").into_iter().collect();
        while let Some(value) = stack.pop() {
            match value {
                Value::String(text) => self.strings_of("arguments", text),
                Value::Array(items) => stack.extend(items),
                Value::Object(members) => stack.extend(members.values()),
                _ => {}
            }
        }
    }

    /// Counts `absent` for the `params` and `_meta` members of [`Member::ALL`] this message lacks where its method
    /// takes them (`params._meta`: any message; the envelope keys: a `_meta` object).
    fn absent_members(&mut self, object: &serde_json::Map<String, Value>) {
        let method = object.get("method").and_then(Value::as_str);
        let none = serde_json::Map::new();
        let params = match object.get("params") {
            None => Some(&none),
            Some(params) => params.as_object(),
        };
        let Some(params) = params else { return };
        let meta = params.get(crate::protocol::envelope::META).and_then(Value::as_object);
        for member in Member::ALL {
            let path = member.path();
            let absent = if let Some(key) = path.strip_prefix("_meta.") {
                meta.is_some_and(|meta| !meta.contains_key(key))
            } else if let Some(key) = path.strip_prefix("params.") {
                let takes = member.methods().is_empty() || method.is_some_and(|m| member.methods().contains(&m));
                takes && !params.contains_key(key)
            } else {
                false
            };
            if absent {
                *self.types.entry((path, "absent")).or_default() += 1;
            }
        }
    }

    /// The cells of the tables never reached: every JSON type of every member of [`Member::ALL`], every odd class at
    /// every place, every reply size. Named `member: type`, `place: class` and `reply: size`.
    pub fn missing(&self) -> Vec<String> {
        let mut out = Vec::new();
        for member in Member::ALL {
            let path = member.path();
            for kind in TYPES {
                if !self.types.contains_key(&(path.clone(), kind)) {
                    out.push(format!("{path}: {kind}"));
                }
            }
        }
        for place in PLACES {
            for class in CLASSES {
                if !self.strings.contains_key(&(place, class)) {
                    out.push(format!("{place}: {class}"));
                }
            }
        }
        for size in SIZES {
            if !self.sizes.contains_key(size) {
                out.push(format!("reply: {size}"));
            }
        }
        out
    }

    fn strings_of(&mut self, place: &'static str, text: &str) {
        for class in classes(text) {
            *self.strings.entry((place, class)).or_default() += 1;
        }
    }

    /// The members seen, each with its counts per JSON type (absent counted only for the four envelope members).
    fn members(&self) -> BTreeSet<&str> {
        self.types.keys().map(|(member, _)| member.as_str()).collect()
    }

    /// The tables, in Markdown; empty cells are `.`, so what was never reached shows.
    pub fn render(&self) -> String {
        let mut out = format!("JSON types of members ({} messages sent)\n\n| member |", self.objects);
        for kind in TYPES {
            let _ = write!(out, " {kind} |");
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(TYPES.len()));
        out.push('\n');
        for member in self.members() {
            let _ = write!(out, "| `{member}` |");
            for kind in TYPES {
                let n = self.types.get(&(member.to_string(), kind)).copied().unwrap_or(0);
                let _ = write!(out, " {} |", if n == 0 { ".".to_string() } else { n.to_string() });
            }
            out.push('\n');
        }
        out.push_str("\nOdd strings\n\n| place |");
        for class in CLASSES {
            let _ = write!(out, " {class} |");
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(CLASSES.len()));
        out.push('\n');
        for place in PLACES {
            let _ = write!(out, "| {place} |");
            for class in CLASSES {
                let n = self.strings.get(&(place, class)).copied().unwrap_or(0);
                let _ = write!(out, " {} |", if n == 0 { ".".to_string() } else { n.to_string() });
            }
            out.push('\n');
        }
        out.push_str("\nReply sizes\n\n| size | replies |\n|---|---|\n");
        for size in SIZES {
            let _ = writeln!(out, "| {size} | {} |", self.sizes.get(size).copied().unwrap_or(0));
        }
        let missing = self.missing();
        if missing.is_empty() {
            out.push_str("\nEvery cell is reached.\n");
        } else {
            let _ = writeln!(out, "\nNever reached ({}): {}", missing.len(), missing.join(", "));
        }
        out
    }
}

/// Holds conversations `0, 1, ...` of `seed` (the campaign's, on the built-in surface) with the built-in server in
/// process while `more(conversations so far)` says so, and returns what they covered and how many were held.
pub fn measure(seed: u64, mut more: impl FnMut(u64) -> bool) -> (WireCoverage, u64) {
    let surface = crate::surface::Surface::built_in();
    let mut coverage = WireCoverage::default();
    let mut index = 0;
    while more(index) {
        let inputs = crate::campaign::conversation_on(seed, index, &surface);
        coverage.add(&crate::server::run_in_process(&Calc, &inputs));
        index += 1;
    }
    (coverage, index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Ending;

    #[test]
    fn members_strings_and_sizes_are_counted() {
        let sent = br#"{"jsonrpc":"2.0","id":" 1 ","method":"tools/call","params":{"name":"a\u2028","arguments":{"x":["\ud83d\ude00"]},"_meta":{"k":null}}}"#;
        let transcript = Transcript {
            events: vec![
                Event::Sent(sent.to_vec()),
                Event::Received { line: vec![b'x'; 70_000], truncated: false },
                Event::Sync,
            ],
            ending: Ending::Closed,
        };
        let mut coverage = WireCoverage::default();
        coverage.add(&transcript);
        assert_eq!(coverage.types[&("id".to_string(), "string")], 1);
        assert_eq!(coverage.types[&("params.arguments".to_string(), "object")], 1);
        assert_eq!(coverage.types[&("_meta.k".to_string(), "null")], 1);
        assert_eq!(coverage.strings[&("id", "whitespace")], 1);
        assert_eq!(coverage.strings[&("name", "separators")], 1);
        assert_eq!(coverage.strings[&("arguments", "non-bmp")], 1);
        assert_eq!(coverage.sizes["> 64 KiB"], 1);
        let table = coverage.render();
        assert!(table.contains("| `params.name` | . | . | 1 | . | . | . | . |"), "{table}");
        assert!(table.contains("Never reached"), "{table}");
    }

    #[test]
    fn members_a_method_takes_count_as_absent_where_it_lacks_them() {
        let sent = br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{}}},{"jsonrpc":"2.0","id":2,"method":"tools/call"}]"#;
        let transcript = Transcript { events: vec![Event::Sent(sent.to_vec())], ending: Ending::Closed };
        let mut coverage = WireCoverage::default();
        coverage.add(&transcript);
        let absent = |path: &str| coverage.types.get(&(path.to_string(), "absent")).copied();
        assert_eq!(absent("params.cursor"), Some(1), "tools/list takes a cursor");
        assert_eq!(absent("params.name"), Some(1), "tools/call takes a name, and has no params");
        assert_eq!(absent("params.uri"), None, "neither takes a uri");
        assert_eq!(absent("params._meta"), Some(1), "every request may carry _meta");
        assert_eq!(absent("_meta.io.modelcontextprotocol/protocolVersion"), Some(1), "an empty _meta lacks the key");
        let missing = coverage.missing();
        assert!(missing.contains(&"params.uri: absent".to_string()), "{missing:?}");
        assert!(!missing.contains(&"params.cursor: absent".to_string()), "{missing:?}");
        assert!(missing.contains(&"id: long".to_string()) && missing.contains(&"reply: > 64 KiB".to_string()));
    }

    /// The claim of `mcp-wirefuzz coverage` (every cell reached in a default 60-second run), made testable by a
    /// count: the first conversations of the default seed, far fewer than a minute holds, reach every cell.
    #[test]
    fn every_cell_is_reached_by_the_first_conversations_of_the_default_seed() {
        let (coverage, held) = measure(1, |index| index < 8_000);
        let missing = coverage.missing();
        assert!(
            missing.is_empty(),
            "{held} conversations never reached: {}\n{}",
            missing.join(", "),
            coverage.render()
        );
    }
}
