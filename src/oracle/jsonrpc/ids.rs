//! How the layer compares ids: the ways a careless server turns one id into another (`1` for `"1"`, a big integer
//! rounded through a double, a string trimmed). The interop tier of integer ids is `protocol::id::is_big`.

use crate::protocol::RequestId;
use serde_json::Value;

/// Two different ids a careless server could turn one into the other: `1` and `"1"`, two integers that are the
/// same double (a big id rounded through a float) or one beyond 64 bits and a 64-bit bound, or two strings that differ only by surrounding whitespace,
/// control characters and line or paragraph separators.
pub(super) fn loosely_equal(a: &RequestId, b: &RequestId) -> bool {
    match (a, b) {
        (RequestId::Integer(x), RequestId::String(y)) | (RequestId::String(y), RequestId::Integer(x)) => x == y,
        (RequestId::Integer(x), RequestId::Integer(y)) => same_double(x, y) || overflowed(x, y) || overflowed(y, x),
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

/// True when `wide`, as a double, is beyond the signed 64-bit integers and `got` is where a 64-bit conversion of it
/// lands: a bound of `i64` or `u64` (go-sdk 1.8.0 answers a 40-digit id, and `i64::MAX`, which a double rounds to
/// 2^63, as -9223372036854775808: a double's overflow into `int64`).
fn overflowed(wide: &str, got: &str) -> bool {
    const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
    let beyond = wide.parse::<f64>().is_ok_and(|value| !(-TWO_TO_63..TWO_TO_63).contains(&value));
    beyond && [i64::MIN.to_string(), i64::MAX.to_string(), u64::MAX.to_string()].iter().any(|bound| bound == got)
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
