//! Request ids, kept exactly as sent: `1`, `"1"` and `1.0` are three different things, and an integer of any
//! length is echoed digit for digit.

use serde_json::{Number, Value};
use std::fmt;

/// A request id as MCP allows it: a string or an integer literal (any length, any sign), kept as its exact text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id, as the literal digits that were sent (`-0` and 40-digit ids included).
    Integer(String),
    /// A string id.
    String(String),
}

/// What the `id` member of a message holds.
#[derive(Clone, Debug, PartialEq)]
pub enum IdField {
    /// There is no `id` member.
    Absent,
    /// `"id": null`.
    Null,
    /// A string or integer id.
    Valid(RequestId),
    /// Anything else: a float, an exponent, a bool, an array or an object.
    Invalid(Value),
}

impl IdField {
    /// Classifies the `id` member of an object (`None` when there is no such member).
    pub fn of(member: Option<&Value>) -> IdField {
        match member {
            None => IdField::Absent,
            Some(Value::Null) => IdField::Null,
            Some(Value::String(s)) => IdField::Valid(RequestId::String(s.clone())),
            Some(Value::Number(n)) if is_integer_literal(&n.to_string()) => {
                IdField::Valid(RequestId::Integer(n.to_string()))
            }
            Some(other) => IdField::Invalid(other.clone()),
        }
    }

    /// The id when it is a valid one.
    pub fn valid(&self) -> Option<&RequestId> {
        match self {
            IdField::Valid(id) => Some(id),
            _ => None,
        }
    }
}

impl RequestId {
    /// An integer id from a machine integer.
    pub fn int(n: i128) -> RequestId {
        RequestId::Integer(n.to_string())
    }

    /// A string id.
    pub fn string(s: impl Into<String>) -> RequestId {
        RequestId::String(s.into())
    }

    /// The id as the JSON value to write on the wire.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Integer(digits) => match digits.parse::<Number>() {
                Ok(n) => Value::Number(n),
                Err(_) => Value::String(digits.clone()),
            },
            RequestId::String(s) => Value::String(s.clone()),
        }
    }
}

impl fmt::Display for RequestId {
    /// Writes the id as JSON: `7` or `"7"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Integer(digits) => f.write_str(digits),
            RequestId::String(s) => write!(f, "{}", Value::String(s.clone())),
        }
    }
}

/// True for a JSON number literal with no fraction and no exponent: `-?(0|[1-9][0-9]*)`.
pub fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'))
}

/// True for an integer id beyond ±(2^53 − 1): one that not every parser reads alike (RFC 8259 §6), the interop tier
/// of ids (the oracle's `JSONRPC-BIG-ID`).
pub fn is_big(id: &RequestId) -> bool {
    matches!(id, RequestId::Integer(digits) if !is_safe_integer(digits))
}

/// True when the integer literals `sent` and `got` differ and `got` is what a parser that holds integers in a
/// double makes of `sent`: the same double (a big id rounded), or, for a `sent` a double puts beyond the signed
/// 64-bit integers, a 64-bit bound (go-sdk 1.8.0 answers a 40-digit id as -9223372036854775808: a double's
/// overflow into `int64`). Either way the id is beyond ±(2^53 − 1) ([`is_big`]).
pub fn mangled_integer(sent: &str, got: &str) -> bool {
    const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
    let (Ok(wide), Ok(narrow)) = (sent.parse::<f64>(), got.parse::<f64>()) else { return false };
    let bounds = [i64::MIN.to_string(), i64::MAX.to_string(), u64::MAX.to_string()];
    let overflowed = !(-TWO_TO_63..TWO_TO_63).contains(&wide) && bounds.iter().any(|bound| bound == got);
    sent != got && wide.is_finite() && (wide == narrow || overflowed)
}

/// True when the number `sent` has a fraction and the integer literal `whole` is its integer part, truncated or
/// rounded (go-sdk answers an id `1.5` under `1`).
pub fn fraction_dropped(sent: f64, whole: &str) -> bool {
    let whole = whole.parse::<f64>();
    sent.fract() != 0.0 && whole.is_ok_and(|whole| sent.trunc() == whole || sent.round() == whole)
}

/// The largest magnitude of an integer every JSON parser holds exactly, 2^53 − 1 (RFC 8259 §6: an IEEE double).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// True for an integer literal within ±[`MAX_SAFE_INTEGER`]: beyond it, interoperability is not assured.
pub fn is_safe_integer(integer: &str) -> bool {
    integer.parse::<i64>().is_ok_and(|n| n.unsigned_abs() <= MAX_SAFE_INTEGER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_id_is_mangled_by_rounding_or_by_overflow_and_a_small_one_is_not() {
        assert!(mangled_integer("9007199254740993", "9007199254740992"));
        assert!(mangled_integer("1844674407370955161000000000000000000002", "-9223372036854775808"));
        assert!(mangled_integer("9223372036854775807", "-9223372036854775808"), "a double rounds it to 2^63");
        assert!(!mangled_integer("9007199254740993", "-9223372036854775808"), "within 64 bits as a double");
        assert!(!mangled_integer("7", "7") && !mangled_integer("7", "8"));
    }

    fn id_of(json: &str) -> IdField {
        let v: Value = serde_json::from_str(json).unwrap();
        IdField::of(Some(&v))
    }

    #[test]
    fn integers_keep_their_exact_text() {
        let big = "123456789012345678901234567890123";
        assert_eq!(id_of(big), IdField::Valid(RequestId::Integer(big.into())));
        assert_eq!(id_of("-7"), IdField::Valid(RequestId::int(-7)));
        assert_eq!(id_of("-0"), IdField::Valid(RequestId::Integer("-0".into())));
        assert_eq!(id_of(big).valid().unwrap().to_value().to_string(), big);
    }

    #[test]
    fn types_stay_distinct() {
        assert_ne!(id_of("1"), id_of("\"1\""));
        assert!(matches!(id_of("1.0"), IdField::Invalid(_)));
        assert!(matches!(id_of("1e3"), IdField::Invalid(_)));
        assert!(matches!(id_of("true"), IdField::Invalid(_)));
        assert!(matches!(id_of("[1]"), IdField::Invalid(_)));
        assert_eq!(id_of("null"), IdField::Null);
        assert_eq!(IdField::of(None), IdField::Absent);
    }

    #[test]
    fn display_is_json() {
        assert_eq!(RequestId::int(3).to_string(), "3");
        assert_eq!(RequestId::string("a\"b").to_string(), "\"a\\\"b\"");
    }

    #[test]
    fn safe_integers() {
        assert!(is_safe_integer("9007199254740991"));
        assert!(is_safe_integer("-9007199254740991"));
        assert!(is_safe_integer("-0"));
        assert!(!is_safe_integer("9007199254740992"));
        assert!(!is_safe_integer("-9007199254740993"));
        assert!(!is_safe_integer("9223372036854775808"));
        assert!(!is_safe_integer("12345678901234567890123"));
    }
}
