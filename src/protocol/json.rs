//! Properties of JSON text on which conforming parsers legitimately differ: duplicate member names (RFC 8259 §4:
//! "the behavior of software that receives such an object is unpredictable"), number literals beyond common
//! implementation limits (RFC 8259 §6), and whole-valued numbers written with a fraction or an exponent (`1.0`,
//! `1e+3`), which some parsers take for integers. Nothing here panics, whatever the bytes.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// Number literals with more digits than this (before and after the point) are beyond common parser limits.
pub const MAX_NUMBER_DIGITS: usize = 300;
/// Numbers whose magnitude is `10^MAX_DECIMAL_EXPONENT` or more do not fit an IEEE double (serde_json's limit).
pub const MAX_DECIMAL_EXPONENT: i64 = 309;
/// The longest integer [`whole_integer`] writes out; longer ones are beyond the limits anyway.
const MAX_WHOLE_DIGITS: i64 = 400;

/// True when some JSON object in `text`, at any depth, has two members with the same name (compared after
/// unescaping). False for text that is not one JSON value.
pub fn has_duplicate_keys(text: &[u8]) -> bool {
    serde_json::from_slice::<Duplicates>(text).is_ok_and(|found| found.0)
}

/// Deserializes any JSON value, remembering only whether an object in it repeats a member name.
struct Duplicates(bool);

impl<'de> Deserialize<'de> for Duplicates {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Duplicates, D::Error> {
        deserializer.deserialize_any(DuplicatesVisitor).map(Duplicates)
    }
}

struct DuplicatesVisitor;

impl<'de> Visitor<'de> for DuplicatesVisitor {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(Duplicates(inner)) = seq.next_element()? {
            found |= inner;
        }
        Ok(found)
    }

    /// An object (with serde_json's `arbitrary_precision`, a number arrives here too, as a one-member map). Names
    /// are borrowed from the text unless they hold escapes; small objects are searched without hashing.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut names: Vec<Name<'de>> = Vec::new();
        let mut hashed: Option<HashSet<Name<'de>>> = None;
        let mut found = false;
        while let Some(name) = map.next_key::<Name<'de>>()? {
            found |= match &mut hashed {
                Some(set) => !set.insert(name),
                None if names.contains(&name) => true,
                None => {
                    names.push(name);
                    if names.len() > SMALL_OBJECT {
                        hashed = Some(names.drain(..).collect());
                    }
                    false
                }
            };
            found |= map.next_value::<Duplicates>()?.0;
        }
        Ok(found)
    }
}

/// Objects with more members than this are searched for repeated names through a hash set.
const SMALL_OBJECT: usize = 16;

/// A member name, borrowed from the text when it has no escapes.
#[derive(PartialEq, Eq, Hash)]
struct Name<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Name<'de>, D::Error> {
        deserializer.deserialize_str(NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = Name<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E: de::Error>(self, name: &'de str) -> Result<Name<'de>, E> {
        Ok(Name(Cow::Borrowed(name)))
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Name<'de>, E> {
        Ok(Name(Cow::Owned(name.to_owned())))
    }
}

/// True when some number literal in `value`, at any depth, is beyond the limits: more than [`MAX_NUMBER_DIGITS`]
/// digits, or a magnitude of `1e309` or more.
pub fn has_number_beyond_limits(value: &Value) -> bool {
    match value {
        Value::Number(n) => number_beyond_limits(&n.to_string()),
        Value::Array(items) => items.iter().any(has_number_beyond_limits),
        Value::Object(members) => members.values().any(has_number_beyond_limits),
        _ => false,
    }
}

/// A JSON number literal split into its parts.
struct Literal {
    negative: bool,
    /// The digits before and after the decimal point, concatenated.
    digits: String,
    /// Where the decimal point goes in `digits`, after applying the exponent (may be negative or past the end).
    point: i64,
}

fn literal(text: &str) -> Option<Literal> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !all_digits(int) || !all_digits(frac) {
        return None;
    }
    let exponent = match exponent {
        None => 0,
        Some(e) => {
            let unsigned = e.strip_prefix(['+', '-']).unwrap_or(e);
            if unsigned.is_empty() || !all_digits(unsigned) {
                return None;
            }
            // Saturate: an exponent beyond i64 is beyond every limit this module knows.
            e.parse::<i64>().unwrap_or(if e.starts_with('-') { i64::MIN / 2 } else { i64::MAX / 2 })
        }
    };
    let point = (int.len() as i64).saturating_add(exponent);
    Some(Literal { negative, digits: format!("{int}{frac}"), point })
}

/// True for a number literal with more than [`MAX_NUMBER_DIGITS`] digits or a magnitude of `1e309` or more.
/// Text that is not a number literal is not beyond the limits.
pub fn number_beyond_limits(text: &str) -> bool {
    let Some(literal) = literal(text) else { return false };
    if literal.digits.len() > MAX_NUMBER_DIGITS {
        return true;
    }
    let Some(first) = literal.digits.bytes().position(|b| b != b'0') else { return false };
    // The power of ten of the most significant non-zero digit.
    let magnitude = literal.point.saturating_sub(first as i64 + 1);
    magnitude >= MAX_DECIMAL_EXPONENT
}

/// The integer a whole-valued number literal stands for, as an integer literal (`1.0` → `1`, `1e+3` → `1000`,
/// `-2.0E1` → `-20`, `-0.0` → `0`); `None` for a literal with a non-zero fraction, for text that is not a number
/// literal, and for integers of more than 400 digits.
pub fn whole_integer(text: &str) -> Option<String> {
    let literal = literal(text)?;
    let digits = literal.digits.as_bytes();
    let point = literal.point;
    if point > MAX_WHOLE_DIGITS {
        return literal.digits.bytes().all(|b| b == b'0').then(|| "0".to_string());
    }
    let whole_len = point.clamp(0, digits.len() as i64) as usize;
    if digits[whole_len..].iter().any(|&b| b != b'0') {
        return None;
    }
    let mut integer: String = String::from_utf8_lossy(&digits[..whole_len]).into_owned();
    integer.extend(std::iter::repeat_n('0', (point - whole_len as i64).max(0) as usize));
    let integer = integer.trim_start_matches('0');
    Some(match (integer.is_empty(), literal.negative) {
        (true, _) => "0".to_string(),
        (false, true) => format!("-{integer}"),
        (false, false) => integer.to_string(),
    })
}

/// True for an integer literal whose value fits a signed 64-bit integer.
pub fn fits_i64(integer: &str) -> bool {
    integer.parse::<i64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_found_at_any_depth() {
        assert!(has_duplicate_keys(br#"{"id":1,"id":2}"#));
        assert!(has_duplicate_keys(br#"{"a":[{"b":{"c":1,"c":1}}]}"#));
        assert!(has_duplicate_keys(br#"{"a":1,"\u0061":2}"#), "names compare after unescaping");
        assert!(!has_duplicate_keys(br#"{"a":{"a":1},"b":[{"a":1},{"a":2}],"n":1e400,"m":1.0}"#));
        assert!(!has_duplicate_keys(br#"[1,"x",null,true,{}]"#));
    }

    #[test]
    fn duplicate_keys_are_found_in_large_objects() {
        let members: Vec<String> = (0..2 * SMALL_OBJECT).map(|i| format!("\"k{i}\":{i}")).collect();
        let distinct = format!("{{{}}}", members.join(","));
        assert!(!has_duplicate_keys(distinct.as_bytes()));
        let repeated = format!("{{{},\"k3\":0}}", members.join(","));
        assert!(has_duplicate_keys(repeated.as_bytes()), "a repeat past the small-object bound");
    }

    #[test]
    fn duplicate_key_detection_never_panics() {
        assert!(!has_duplicate_keys(b"{not json"));
        assert!(!has_duplicate_keys(b""));
        assert!(!has_duplicate_keys(&[0xff, b'{']));
        assert!(!has_duplicate_keys("[".repeat(100_000).as_bytes()));
        assert!(!has_duplicate_keys(r#"{"a":1}{"a":1}"#.as_bytes()));
        let deep = format!("{}{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000));
        assert!(!has_duplicate_keys(deep.as_bytes()));
    }

    #[test]
    fn number_limits() {
        assert!(!number_beyond_limits(&"9".repeat(300)));
        assert!(number_beyond_limits(&"1".repeat(301)));
        assert!(number_beyond_limits(&format!("1{}", "0".repeat(309))), "1e309 written out");
        assert!(number_beyond_limits("1e309"));
        assert!(number_beyond_limits("-1.5E+400"));
        assert!(!number_beyond_limits("9.99e308"));
        assert!(!number_beyond_limits("1e-400"));
        assert!(!number_beyond_limits("0e999999999999999999999999"));
        assert!(number_beyond_limits("1e999999999999999999999999"));
        assert!(!number_beyond_limits("0.000000001"));
        assert!(!number_beyond_limits("not a number"));
        let value: Value = serde_json::from_str(r#"{"a":[1,{"b":1e400}]}"#).unwrap();
        assert!(has_number_beyond_limits(&value));
        let value: Value = serde_json::from_str(r#"{"a":[1,{"b":1e300}],"c":"1e400"}"#).unwrap();
        assert!(!has_number_beyond_limits(&value));
    }

    #[test]
    fn whole_integers() {
        assert_eq!(whole_integer("1.0").as_deref(), Some("1"));
        assert_eq!(whole_integer("1e+3").as_deref(), Some("1000"));
        assert_eq!(whole_integer("1E3").as_deref(), Some("1000"));
        assert_eq!(whole_integer("-2.0E1").as_deref(), Some("-20"));
        assert_eq!(whole_integer("-0.0").as_deref(), Some("0"));
        assert_eq!(whole_integer("1000e-3").as_deref(), Some("1"));
        assert_eq!(whole_integer("1500e-3"), None);
        assert_eq!(whole_integer("0.5e1").as_deref(), Some("5"));
        assert_eq!(whole_integer("7").as_deref(), Some("7"));
        assert_eq!(whole_integer("1.5"), None);
        assert_eq!(whole_integer("1e-3"), None);
        assert_eq!(whole_integer("1e999999999999"), None);
        assert_eq!(whole_integer("0e999999999999").as_deref(), Some("0"));
        assert_eq!(whole_integer("x"), None);
        assert_eq!(whole_integer("1.2.3"), None);
    }

    #[test]
    fn serde_json_keeps_fractions_and_exponents() {
        // With `arbitrary_precision` a literal keeps its fraction; only the exponent's spelling is normalized.
        let value: Value = serde_json::from_str(r#"[1.0,1e+3,-2.0E1]"#).unwrap();
        let written: Vec<String> = value.as_array().unwrap().iter().map(Value::to_string).collect();
        assert_eq!(written, ["1.0", "1e+3", "-2.0e+1"]);
        let wholes: Vec<Option<String>> = written.iter().map(|w| whole_integer(w)).collect();
        assert_eq!(wholes, [Some("1".into()), Some("1000".into()), Some("-20".into())]);
    }

    #[test]
    fn i64_range() {
        assert!(fits_i64("9223372036854775807"));
        assert!(fits_i64("-9223372036854775808"));
        assert!(!fits_i64("9223372036854775808"));
        assert!(!fits_i64("12345678901234567890123"));
    }
}
