//! How the layer compares ids: the ways a careless server turns one id into another (`1` for `"1"`, a big integer
//! rounded through a double, a string trimmed). The interop tier of integer ids is `protocol::id::is_big`.

use crate::protocol::RequestId;
use crate::protocol::id::mangled_integer;
use serde_json::Value;

/// Two different ids a careless server could turn one into the other: `1` and `"1"`, two integers that are the
/// same double (a big id rounded through a float) or one beyond 64 bits and a 64-bit bound, or two strings that
/// differ only by surrounding whitespace, control characters and line or paragraph separators.
pub(super) fn loosely_equal(a: &RequestId, b: &RequestId) -> bool {
    match (a, b) {
        (RequestId::Integer(x), RequestId::String(y)) | (RequestId::String(y), RequestId::Integer(x)) => x == y,
        (RequestId::Integer(x), RequestId::Integer(y)) => mangled_integer(x, y) || mangled_integer(y, x),
        (RequestId::String(x), RequestId::String(y)) => x != y && loosened(x) == loosened(y),
    }
}

/// A string id as a careless server may pass it on: trimmed, its control characters and U+2028/2029 dropped.
fn loosened(id: &str) -> String {
    id.trim().chars().filter(|c| !c.is_control() && !matches!(c, '\u{2028}' | '\u{2029}')).collect()
}

/// A float or other invalid response id that could stand for a request id (`1.0` for `1`).
pub(super) fn loosely_equal_value(value: &Value, sent: &RequestId) -> bool {
    match (value, sent) {
        (Value::Number(n), RequestId::Integer(digits)) => same_double(&n.to_string(), digits),
        _ => false,
    }
}

/// True when two number literals are the same finite double.
fn same_double(a: &str, b: &str) -> bool {
    matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y && x.is_finite())
}

/// How a response id differs from the request id it stands for, for details.
pub(super) fn difference(got: &RequestId, sent: &RequestId) -> &'static str {
    match (got, sent) {
        (RequestId::String(_), RequestId::Integer(_)) => "a string for an integer",
        (RequestId::Integer(_), RequestId::String(_)) => "an integer for a string",
        (RequestId::String(_), RequestId::String(_)) => "the string trimmed or its control characters dropped",
        _ => "the integer lost digits or overflowed",
    }
}
