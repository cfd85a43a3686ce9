//! Simpler versions of one line: for a JSON line, the document with one member, element or value simplified; for
//! any other line, its halves and the line without each quarter.

use serde_json::{Map, Value};

/// The most JSON variants tried for one line in one pass.
const MAX_VARIANTS_PER_LINE: usize = 400;

/// Shorter versions of a line that is not JSON: each half, and the line without each quarter.
pub(super) fn byte_variants(line: &[u8]) -> Vec<Vec<u8>> {
    if line.len() < 2 {
        return Vec::new();
    }
    let (half, quarter) = (line.len() / 2, line.len().div_ceil(4));
    let mut variants = vec![line[..half].to_vec(), line[half..].to_vec()];
    for start in (0..line.len()).step_by(quarter) {
        let mut variant = line[..start].to_vec();
        variant.extend_from_slice(&line[(start + quarter).min(line.len())..]);
        variants.push(variant);
    }
    variants
}

/// Whole-document variants of `value`, each simpler than it in one place, the most drastic first.
pub fn json_variants(value: &Value) -> Vec<Value> {
    let mut variants = Vec::new();
    collect_variants(value, &mut |v| variants.push(v));
    variants.truncate(MAX_VARIANTS_PER_LINE);
    variants
}

/// Calls `emit` with every one-place simplification of `value`: removing a member or element, replacing a
/// container with an empty one, shortening a string, zeroing a number; then the same inside each child.
fn collect_variants(value: &Value, emit: &mut dyn FnMut(Value)) {
    match value {
        Value::Object(map) => {
            for key in map.keys() {
                let mut smaller = map.clone();
                smaller.shift_remove(key);
                emit(Value::Object(smaller));
            }
            for (key, child) in map {
                collect_variants(child, &mut |simpler| {
                    let mut replaced: Map<String, Value> = map.clone();
                    replaced.insert(key.clone(), simpler);
                    emit(Value::Object(replaced));
                });
            }
        }
        Value::Array(items) => {
            if !items.is_empty() {
                emit(Value::Array(Vec::new()));
            }
            for index in 0..items.len() {
                let mut smaller = items.clone();
                smaller.remove(index);
                emit(Value::Array(smaller));
            }
            for (index, child) in items.iter().enumerate() {
                collect_variants(child, &mut |simpler| {
                    let mut replaced = items.clone();
                    replaced[index] = simpler;
                    emit(Value::Array(replaced));
                });
            }
        }
        Value::String(s) if !s.is_empty() => {
            emit(Value::String(String::new()));
            if s.chars().count() > 8 {
                emit(Value::String(s.chars().take(s.chars().count() / 2).collect()));
            }
        }
        Value::Number(n) if n.to_string() != "0" => emit(Value::from(0)),
        _ => {}
    }
}
