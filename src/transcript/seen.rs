//! References to values seen in earlier replies: the stateful part of a conversation. A script's tool call may ask
//! for "a value an earlier result held" (an id a `create` returned, a name, a URI) where it cannot know the value
//! when it is encoded. The encoder then writes a reference object, [`reference`], where the value goes; a transport
//! calls [`resolve`] on each line as it sends it, and every reference is replaced by a value found in the results
//! the server sent before the latest sync point (its latest 16 lines; or by the reference's fallback when none fits).
//!
//! Only replies before the latest [`Event::Sync`] count: at a sync point every reply owed has come (or the wait timed
//! out), so the line sent is the same for the same replies whether the transport is in-process (a line at a time)
//! or a pipe (lines sent back to back up to each sync point). The encoder puts a sync point before every line that
//! holds a reference. A reference that cannot be parsed (a mutation cut it) is sent as it is.

use super::Event;
use serde_json::{Number, Value, json};
use std::borrow::Cow;

/// The one member of a reference object: `{"wirefuzz:seen":{"name":..,"types":[..],"pick":0,"else":..}}`.
pub const SEEN: &str = "wirefuzz:seen";
/// How a reference starts in a compactly serialized line.
const PREFIX: &[u8] = br#"{"wirefuzz:seen":"#;
/// The most values gathered from the replies for one line.
const MAX_FOUND: usize = 4096;
/// The deepest nesting followed in a result.
const MAX_DEPTH: usize = 32;
/// The most lines read for values: the server's latest before the sync point.
const MAX_LINES: usize = 16;
/// The longest content text scanned for values.
const MAX_TEXT: usize = 64 * 1024;

/// A reference to a value for the member `name`, of one of `types` (JSON Schema type names; empty: any), the
/// `pick`-th fitting value counting back from the most recent, or `fallback` when none fits.
pub fn reference(name: &str, types: &[&str], pick: u8, fallback: Value) -> Value {
    json!({ SEEN: { "name": name, "types": types, "pick": pick, "else": fallback } })
}

/// Whether `line` holds a reference.
pub fn holds(line: &[u8]) -> bool {
    find(line, 0).is_some()
}

/// `line` with every reference replaced by its value, chosen from the results in `events` before the latest sync
/// point; `line` itself (borrowed) when it holds none. Deterministic: the same line and replies give the same bytes.
pub fn resolve<'a>(line: &'a [u8], events: &[Event]) -> Cow<'a, [u8]> {
    let Some(first) = find(line, 0) else { return Cow::Borrowed(line) };
    let found = gather(events);
    let mut out = Vec::with_capacity(line.len());
    let (mut copied, mut next) = (0, Some(first));
    while let Some(start) = next {
        let mut stream = serde_json::Deserializer::from_slice(&line[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                let end = start + stream.byte_offset();
                out.extend_from_slice(&line[copied..start]);
                serde_json::to_writer(&mut out, &choose(&value, &found)).expect("a JSON value serializes");
                copied = end;
                next = find(line, end);
            }
            _ => next = find(line, start + 1),
        }
    }
    out.extend_from_slice(&line[copied..]);
    Cow::Owned(out)
}

/// Where the next reference starts at or after `from`.
fn find(line: &[u8], from: usize) -> Option<usize> {
    let rest = line.get(from..)?;
    rest.windows(PREFIX.len()).position(|window| window == PREFIX).map(|at| from + at)
}

/// One value found in a result: the member name it stood under, and the value (a string or a number).
struct Found {
    key: String,
    value: Value,
}

/// The values of every result received before the latest sync point, in the order received.
fn gather(events: &[Event]) -> Vec<Found> {
    let before = events.iter().rposition(|e| *e == Event::Sync).unwrap_or(0);
    let received = events[..before].iter().filter_map(|event| match event {
        Event::Received { line, .. } => Some(line),
        _ => None,
    });
    // The most recent lines, oldest first: what a client still holds, and each line sent in a long session costs
    // the same.
    let mut recent: Vec<&Vec<u8>> = received.rev().take(MAX_LINES).collect();
    recent.reverse();
    let mut found = Vec::new();
    for line in recent {
        let Ok(message) = serde_json::from_slice::<Value>(line) else { continue };
        let messages = match message {
            Value::Array(items) => items,
            one => vec![one],
        };
        for message in &messages {
            if let Some(result) = message.get("result") {
                walk(result, "", &mut found, 0);
            }
        }
    }
    found
}

/// Gathers the strings and numbers under `value`, each with the member name it stood under (an array's items take
/// the array's name). Schemas and `_meta` are left out; a content `text` is read as JSON, or scanned for `key: value`
/// pairs and URIs.
fn walk(value: &Value, key: &str, found: &mut Vec<Found>, depth: usize) {
    if found.len() >= MAX_FOUND || depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(members) => {
            for (name, member) in members {
                match (name.as_str(), member) {
                    ("_meta" | "inputSchema" | "outputSchema", _) => {}
                    ("text", Value::String(text)) => scan(text, found, depth),
                    _ => walk(member, name, found, depth + 1),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| walk(item, key, found, depth + 1)),
        Value::String(_) | Value::Number(_) => found.push(Found { key: key.to_string(), value: value.clone() }),
        Value::Bool(_) | Value::Null => {}
    }
}

/// The values in a content text: its members when it is JSON, else `key: value` and `key=value` pairs and URIs.
fn scan(text: &str, found: &mut Vec<Found>, depth: usize) {
    let text = text.get(..MAX_TEXT).unwrap_or(text);
    if text.trim_start().starts_with(['{', '['])
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        return walk(&value, "text", found, depth + 1);
    }
    let tokens: Vec<&str> = text.split_whitespace().collect();
    for (at, token) in tokens.iter().enumerate() {
        let clean =
            |t: &str| t.trim_matches(|c: char| matches!(c, ',' | '.' | ';' | '(' | ')' | '"' | '\'')).to_string();
        if token.contains("://") {
            found.push(Found { key: "uri".into(), value: Value::String(clean(token)) });
        } else if let Some((key, value)) = token.split_once(['=', ':']).filter(|(k, _)| !k.is_empty()) {
            let value =
                if value.is_empty() { tokens.get(at + 1).map_or(String::new(), |v| clean(v)) } else { clean(value) };
            if !value.is_empty() {
                let value = value.parse::<i64>().map_or(Value::String(value), |n| json!(n));
                found.push(Found { key: clean(key), value });
            }
        }
        if found.len() >= MAX_FOUND {
            return;
        }
    }
}

/// The value a reference stands for: among the values found under the reference's member name (else under a name
/// whose last word is the same, so `item_id` takes an `id`), those that fit its types, the `pick`-th counting back
/// from the most recent; the fallback when none fits.
fn choose(reference: &Value, found: &[Found]) -> Value {
    let spec = reference.get(SEEN).and_then(Value::as_object).cloned().unwrap_or_default();
    let fallback = spec.get("else").cloned().unwrap_or(Value::Null);
    let name = spec.get("name").and_then(Value::as_str).unwrap_or_default();
    let types: Vec<&str> =
        spec.get("types").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let pick = spec.get("pick").and_then(Value::as_u64).unwrap_or(0) as usize;
    let word = last_word(name);
    let exact = |f: &&Found| f.key == name;
    let alike = |f: &&Found| !word.is_empty() && last_word(&f.key) == word;
    for matches in [&exact as &dyn Fn(&&Found) -> bool, &alike] {
        let fitting: Vec<Value> = found.iter().rev().filter(matches).filter_map(|f| fit(&f.value, &types)).collect();
        if !fitting.is_empty() {
            return fitting[pick % fitting.len()].clone();
        }
    }
    fallback
}

/// `value` as one of `types` (any when empty): a number as a string, a string of digits as an integer.
fn fit(value: &Value, types: &[&str]) -> Option<Value> {
    if types.is_empty() {
        return Some(value.clone());
    }
    types.iter().find_map(|kind| match (*kind, value) {
        ("string", Value::String(_)) => Some(value.clone()),
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("integer", Value::Number(n)) => n.as_i64().map(|n| json!(n)).or_else(|| n.as_u64().map(|n| json!(n))),
        ("integer", Value::String(s)) => s.parse::<i64>().ok().map(|n| json!(n)),
        ("number", Value::Number(_)) => Some(value.clone()),
        ("number", Value::String(s)) => s.parse::<f64>().ok().and_then(Number::from_f64).map(Value::Number),
        _ => None,
    })
}

/// The last word of a member name, lowercased: `item_id`, `itemId` and `ID` give `id`.
fn last_word(name: &str) -> String {
    let segment = name.rsplit(|c: char| !c.is_alphanumeric()).find(|s| !s.is_empty()).unwrap_or_default();
    let chars: Vec<char> = segment.chars().collect();
    let start = (1..chars.len()).rev().find(|&i| chars[i].is_uppercase() && chars[i - 1].is_lowercase()).unwrap_or(0);
    chars[start..].iter().collect::<String>().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn received(text: &str) -> Event {
        Event::Received { line: text.as_bytes().to_vec(), truncated: false }
    }

    fn line(reference: &Value) -> Vec<u8> {
        let message = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": { "name": "get", "arguments": { "id": reference, "n": 1 } } });
        serde_json::to_vec(&message).unwrap()
    }

    #[test]
    fn a_reference_takes_the_latest_value_of_its_name_from_results_before_the_sync() {
        let reference = reference("item_id", &["integer"], 0, json!(0));
        assert_eq!(reference[SEEN]["pick"], json!(0));
        let events = vec![
            received(r#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"id":7},"content":[]}}"#),
            received(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"id\": \"9\"}"}]}}"#),
            Event::Sync,
            received(r#"{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"id":11}}}"#),
        ];
        let sent = resolve(&line(&reference), &events).into_owned();
        let text = String::from_utf8(sent).unwrap();
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get","arguments":{"id":9,"n":1}}}"#
        );
        let second = super::reference("item_id", &["integer"], 1, json!(0));
        assert!(String::from_utf8_lossy(&resolve(&line(&second), &events)).contains(r#""id":7,"#));
    }

    #[test]
    fn without_a_fitting_value_a_reference_takes_its_fallback() {
        let reference = reference("name", &["string"], 0, json!("wirefuzz"));
        let events = vec![received(r#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"id":7}}}"#)];
        // Before any sync point nothing counts; after one, `id` is not a name.
        for events in [events.clone(), [events, vec![Event::Sync]].concat()] {
            assert!(String::from_utf8_lossy(&resolve(&line(&reference), &events)).contains(r#""id":"wirefuzz""#));
        }
    }

    #[test]
    fn text_content_gives_pairs_and_uris() {
        let events = vec![
            received(
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Created note id: 12 at memo://notes/12."}]}}"#,
            ),
            Event::Sync,
        ];
        let id = reference("noteId", &["string"], 0, json!(""));
        assert!(String::from_utf8_lossy(&resolve(&line(&id), &events)).contains(r#""id":"12""#));
        let uri = reference("uri", &[], 0, json!(""));
        assert!(String::from_utf8_lossy(&resolve(&line(&uri), &events)).contains(r#""id":"memo://notes/12""#));
    }

    #[test]
    fn lines_without_references_are_borrowed_and_broken_ones_sent_as_they_are() {
        let plain = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(matches!(resolve(plain, &[]), Cow::Borrowed(_)));
        assert!(!holds(plain));
        let cut = br#"{"jsonrpc":"2.0","id":1,"params":{"wirefuzz:seen":{"name""#;
        assert_eq!(resolve(cut, &[Event::Sync]).as_ref(), &cut[..]);
        assert_eq!(last_word("itemId"), "id");
        assert_eq!(last_word("file_path"), "path");
        assert_eq!(last_word("URI"), "uri");
    }
}
