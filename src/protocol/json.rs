//! Properties of JSON text on which conforming parsers legitimately differ: duplicate member names (RFC 8259 §4:
//! "the behavior of software that receives such an object is unpredictable"), number literals beyond common
//! implementation limits (RFC 8259 §6), and whole-valued numbers written with a fraction or an exponent (`1.0`,
//! `1e+3`), which some parsers take for integers. Nothing here panics, whatever the bytes.

use super::envelope;
use rustc_hash::FxHashSet;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// Number literals with more digits than this (before and after the point) are beyond common parser limits.
pub const MAX_NUMBER_DIGITS: usize = 300;
/// Numbers whose magnitude is `10^MAX_DECIMAL_EXPONENT` or more do not fit an IEEE double (serde_json's limit).
pub const MAX_DECIMAL_EXPONENT: i64 = 309;
/// The longest integer [`whole_integer`] writes out; longer ones are beyond the limits anyway.
const MAX_WHOLE_DIGITS: i64 = 400;

/// A JSON value read from text, with what the text shows that the value no longer does.
#[derive(Debug)]
pub struct Noted {
    /// The value as `serde_json::from_slice::<Value>` reads it (a repeated member name keeps its first position
    /// and its last value), but for what [`skim_message`] skims.
    pub value: Value,
    /// Some object, at any depth, has two members with the same name (compared after unescaping).
    pub duplicate_keys: bool,
    /// Some number literal is beyond the limits ([`number_beyond_limits`]).
    pub beyond_limits: bool,
}

/// Parses `text` into the value `serde_json::from_slice::<Value>` gives (the same errors too), noting in the same
/// single pass what [`Noted`] records: the whole reading the tests hold [`skim_message`] against.
#[cfg(test)]
pub(crate) fn parse_noting(text: &[u8]) -> Result<Noted, NotOneValue> {
    parse_building(text, Build::Whole)
}

/// Parses a JSON-RPC message for someone who looks only at its envelope, noting in the same single pass what
/// [`Noted`] records: the errors of `serde_json::from_slice::<Value>`, and repeated names and numbers beyond the
/// limits at every depth. The members besides `params` (`jsonrpc`, `id`, `method`, `result`, `error`, ...) are
/// built whole; of `params` only `_meta`'s protocol-version key, `protocolVersion` and `requestId`; every other member of
/// `params` or `_meta`, every item of an array `params` and of a top-level array keeps its JSON type and nothing
/// else (`""`, `0`, `[]`, `{}`). This is what the MCP layer reads, at a fraction of the allocations: the arguments
/// of a tool call and a 100 KB string are checked and skipped, not copied.
pub fn skim_message(text: &[u8]) -> Result<Noted, NotOneValue> {
    parse_building(text, Build::Message)
}

/// True when every conforming parser reads `text` the same way: one strict JSON value, with no number literal beyond
/// common parser limits and no repeated member name (RFC 8259 §4, §6, §9). A line that fails this may be dropped or
/// refused by a server's parser before any handler runs.
pub fn read_alike(text: &[u8]) -> bool {
    skim_message(text).is_ok_and(|noted| !noted.beyond_limits && !noted.duplicate_keys)
}

/// The first JSON value in `text`, skimmed as [`skim_message`] skims it, whatever follows it; `None` when `text`
/// does not start with one.
pub fn skim_first_message(text: &[u8]) -> Option<Value> {
    let mut notes = Notes::default();
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    Noting { notes: &mut notes, build: Build::Message }.deserialize(&mut deserializer).ok()
}

/// Why text is not one JSON value.
#[derive(Debug)]
pub struct NotOneValue {
    /// The parser's complaint (what `serde_json::from_slice` says of the same text).
    pub error: serde_json::Error,
    /// The text starts with a complete JSON value and goes on after it (two values, trailing garbage).
    pub after_value: bool,
}

/// Parses `text` into serde_json's own [`Value`], telling a complete value with text after it from the rest.
pub fn parse_value(text: &[u8]) -> Result<Value, NotOneValue> {
    one_value(text, PhantomData::<Value>)
}

fn parse_building(text: &[u8], build: Build) -> Result<Noted, NotOneValue> {
    let mut notes = Notes::default();
    let value = one_value(text, Noting { notes: &mut notes, build })?;
    Ok(Noted { value, duplicate_keys: notes.duplicate_keys, beyond_limits: notes.beyond_limits })
}

/// Reads `text` as exactly one JSON value with `seed`, as `serde_json::from_slice` does, telling where it failed.
fn one_value<'de, S: DeserializeSeed<'de>>(text: &'de [u8], seed: S) -> Result<S::Value, NotOneValue> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let value = seed.deserialize(&mut deserializer).map_err(|error| NotOneValue { error, after_value: false })?;
    deserializer.end().map_err(|error| NotOneValue { error, after_value: true })?;
    Ok(value)
}

/// True when some JSON object in `text`, at any depth, has two members with the same name (compared after
/// unescaping). False for text that is not one JSON value.
pub fn has_duplicate_keys(text: &[u8]) -> bool {
    parse_building(text, Build::Skim).is_ok_and(|noted| noted.duplicate_keys)
}

/// What [`Noting`] has seen so far.
#[derive(Default)]
struct Notes {
    duplicate_keys: bool,
    beyond_limits: bool,
}

/// How serde_json (with `arbitrary_precision`) hands a number literal to a visitor: a one-member map with this name
/// whose value is the literal.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Objects with more members than this find repeated names with a set instead of a scan.
const SCANNED_MEMBERS: usize = 16;

/// How much of a value [`Noting`] builds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Build {
    /// All of it.
    Whole,
    /// Its JSON type only.
    Skim,
    /// A message: every member whole but `params` ([`Build::Params`]); a top-level array skimmed.
    Message,
    /// A message's `params`: `_meta` ([`Build::Meta`]), `protocolVersion` and `requestId` (of a cancellation)
    /// whole, the rest skimmed.
    Params,
    /// A request envelope: the protocol-version key whole, the rest skimmed.
    Meta,
}

impl Build {
    /// How to build the member `name` of an object built this way.
    fn member(self, name: &str) -> Build {
        match (self, name) {
            (Build::Whole, _) => Build::Whole,
            (Build::Message, "params") => Build::Params,
            (Build::Message, _) => Build::Whole,
            (Build::Params, envelope::META) => Build::Meta,
            (Build::Params, "protocolVersion" | "requestId") | (Build::Meta, envelope::PROTOCOL_VERSION_KEY) => {
                Build::Whole
            }
            (Build::Params | Build::Meta | Build::Skim, _) => Build::Skim,
        }
    }

    /// How to build the items of an array built this way.
    fn item(self) -> Build {
        if self == Build::Whole { Build::Whole } else { Build::Skim }
    }
}

/// Builds a [`Value`] as serde_json's own visitor does (or as much of it as [`Build`] asks), writing what it sees
/// into [`Notes`].
struct Noting<'a> {
    notes: &'a mut Notes,
    build: Build,
}

impl Noting<'_> {
    fn child(&mut self, build: Build) -> Noting<'_> {
        Noting { notes: self.notes, build }
    }
}

impl<'de> DeserializeSeed<'de> for Noting<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Noting<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(if self.build == Build::Skim { String::new() } else { value.to_owned() }))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(if self.build == Build::Skim { String::new() } else { value }))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        let build = self.build.item();
        if build == Build::Skim {
            while seq.next_element_seed(self.child(Build::Skim))?.is_some() {}
            return Ok(Value::Array(Vec::new()));
        }
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(self.child(build))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    /// An object, or a number literal (see [`NUMBER_TOKEN`]), told apart by the first member name as serde_json
    /// does.
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        let Some(first) = map.next_key_seed(Name)? else { return Ok(Value::Object(Map::new())) };
        if first == NUMBER_TOKEN {
            let literal = map.next_value::<String>()?;
            self.notes.beyond_limits |= number_beyond_limits(&literal);
            if self.build == Build::Skim && is_number_literal(&literal) {
                return Ok(Value::Number(0.into()));
            }
            return literal.parse::<Number>().map(Value::Number).map_err(de::Error::custom);
        }
        if self.build == Build::Skim {
            let mut names = Names::Few(vec![first]);
            map.next_value_seed(self.child(Build::Skim))?;
            while let Some(name) = map.next_key_seed(Name)? {
                self.notes.duplicate_keys |= names.repeats(name);
                map.next_value_seed(self.child(Build::Skim))?;
            }
            return Ok(Value::Object(Map::new()));
        }
        let mut members = Map::new();
        let build = self.build.member(&first);
        members.insert(first.into_owned(), map.next_value_seed(self.child(build))?);
        while let Some(name) = map.next_key_seed(Name)? {
            let build = self.build.member(&name);
            let value = map.next_value_seed(self.child(build))?;
            self.notes.duplicate_keys |= members.insert(name.into_owned(), value).is_some();
        }
        Ok(Value::Object(members))
    }
}

/// The member names of a skimmed object so far, to find a repeat: scanned while few, then hashed.
enum Names<'de> {
    Few(Vec<Cow<'de, str>>),
    Many(FxHashSet<Cow<'de, str>>),
}

impl<'de> Names<'de> {
    /// Adds `name`; true when it was there already.
    fn repeats(&mut self, name: Cow<'de, str>) -> bool {
        match self {
            Names::Few(names) if names.contains(&name) => true,
            Names::Few(names) if names.len() < SCANNED_MEMBERS => {
                names.push(name);
                false
            }
            Names::Few(names) => {
                let mut set: FxHashSet<Cow<'de, str>> = names.drain(..).collect();
                set.insert(name);
                *self = Names::Many(set);
                false
            }
            Names::Many(set) => !set.insert(name),
        }
    }
}

/// A member name, borrowed from the text when it has no escapes.
struct Name;

impl<'de> DeserializeSeed<'de> for Name {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Cow<'de, str>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Name {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E: de::Error>(self, name: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(name))
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(name.to_owned()))
    }

    fn visit_string<E: de::Error>(self, name: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(name))
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

/// True for text that is a JSON number literal (RFC 8259 §6): what serde_json hands over for every number it
/// reads, though an object whose member is named [`NUMBER_TOKEN`] can hand over anything.
fn is_number_literal(text: &str) -> bool {
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let bytes = text.strip_prefix('-').unwrap_or(text).as_bytes();
    let int = digits(bytes);
    if int == 0 || (int > 1 && bytes[0] == b'0') {
        return false;
    }
    let mut rest = &bytes[int..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let n = digits(fraction);
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    if let Some(exponent) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let exponent = exponent.strip_prefix(b"+").or_else(|| exponent.strip_prefix(b"-")).unwrap_or(exponent);
        let n = digits(exponent);
        if n == 0 {
            return false;
        }
        rest = &exponent[n..];
    }
    rest.is_empty()
}

/// True for a number literal with more than [`MAX_NUMBER_DIGITS`] digits or a magnitude of `1e309` or more.
/// Text that is not a number literal is not beyond the limits.
pub fn number_beyond_limits(text: &str) -> bool {
    // Short literals without an exponent have at most 20 digits and a magnitude below 1e20.
    if text.len() <= 20 && !text.bytes().any(|b| b == b'e' || b == b'E') {
        return false;
    }
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

/// The text a lenient reader parses when a line is not strict JSON only for what RFC 8259 lets a parser accept:
/// a leading byte-order mark ignored (§8.1), bytes that are not UTF-8 decoded as U+FFFD (§9: a parser "MAY accept
/// non-JSON forms"), and unpaired surrogate escapes (`"\ud800"`, grammatical by §8.2 but refused by serde_json)
/// read as `\ufffd`. `None` when the line has none of these.
pub fn lenient_text(line: &[u8]) -> Option<Vec<u8>> {
    let decoded = String::from_utf8_lossy(line);
    let bom = decoded.starts_with('\u{feff}');
    let text = decoded.trim_start_matches('\u{feff}').as_bytes();
    let unpaired = unpaired_surrogates(text);
    if !bom && matches!(decoded, Cow::Borrowed(_)) && unpaired.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(text.len());
    let mut from = 0;
    for at in unpaired {
        out.extend_from_slice(&text[from..at]);
        out.extend_from_slice(br"\ufffd");
        from = at + 6;
    }
    out.extend_from_slice(&text[from..]);
    Some(out)
}

/// Where the `\uXXXX` escapes of surrogates without their other half start.
fn unpaired_surrogates(text: &[u8]) -> Vec<usize> {
    let unit = |at: usize| -> Option<u16> {
        let hex = text.get(at..at + 6)?.strip_prefix(br"\u")?;
        u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    };
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = text.get(at..).and_then(|rest| rest.iter().position(|&b| b == b'\\')) {
        at += offset;
        match unit(at) {
            Some(0xD800..=0xDBFF) if matches!(unit(at + 6), Some(0xDC00..=0xDFFF)) => at += 12,
            Some(0xD800..=0xDFFF) => {
                found.push(at);
                at += 6;
            }
            _ => at += 2,
        }
    }
    found
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
        let members: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let distinct = format!("{{{}}}", members.join(","));
        assert!(!has_duplicate_keys(distinct.as_bytes()));
        let repeated = format!("{{{},\"k3\":0}}", members.join(","));
        assert!(has_duplicate_keys(repeated.as_bytes()), "a repeat late in a large object");
    }

    #[test]
    fn the_noted_value_is_serde_jsons_value() {
        let texts = [
            r#"{"jsonrpc":"2.0","id":12345678901234567890123,"method":"m","params":{"a":[1.0,-0,1e400,"\u00e9"]}}"#,
            r#"{"id":1,"id":"two","x":null,"y":true,"z":{}}"#,
            r#"[1,-2,3.5e-7,[],[[{}]],"s",false]"#,
            r#"{"$serde_json::private::Number":"7"}"#,
            "  \"text\"  ",
            "-0.0",
        ];
        for text in texts {
            let noted = parse_noting(text.as_bytes()).unwrap();
            let expected: Value = serde_json::from_str(text).unwrap();
            assert_eq!(noted.value, expected, "{text}");
            assert_eq!(noted.value.to_string(), expected.to_string(), "{text}");
        }
        let errors =
            ["{", "[1,]", r#"{"a":1}{"a":1}"#, "", &"[".repeat(200), r#"{"$serde_json::private::Number":"x"}"#];
        for text in errors {
            let ours = parse_noting(text.as_bytes()).unwrap_err().error.to_string();
            assert_eq!(parse_value(text.as_bytes()).unwrap_err().error.to_string(), ours);
            let theirs = serde_json::from_str::<Value>(text).unwrap_err().to_string();
            assert_eq!(ours, theirs, "{text}");
        }
    }

    #[test]
    fn numbers_beyond_limits_are_noted_in_the_same_pass() {
        assert!(parse_noting(br#"{"a":[1,{"b":1e400}]}"#).unwrap().beyond_limits);
        assert!(parse_noting(format!("[{}]", "1".repeat(301)).as_bytes()).unwrap().beyond_limits);
        assert!(!parse_noting(br#"{"a":[1,{"b":1e300}],"c":"1e400"}"#).unwrap().beyond_limits);
        let plain = parse_noting(br#"{"a":1,"b":[2,3]}"#).unwrap();
        assert!(!plain.beyond_limits && !plain.duplicate_keys);
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
    fn number_literals() {
        for yes in ["0", "-0", "7", "-12", "1.5", "1e3", "1E+3", "-2.0e-7", "10"] {
            assert!(is_number_literal(yes), "{yes}");
        }
        for no in ["", "-", "01", "1.", ".5", "1e", "1e+", "+1", "x", "1x", "0x10", "1.5.2", "--1"] {
            assert!(!is_number_literal(no), "{no}");
        }
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
        assert!(!number_beyond_limits("-1234567890123456789"));
        assert!(number_beyond_limits("1E309"));
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
    fn lenient_text_undoes_only_what_rfc_8259_lets_a_parser_accept() {
        let lenient = |line: &[u8]| lenient_text(line).map(|text| String::from_utf8(text).unwrap());
        assert_eq!(lenient(br#"{"a":1}"#), None);
        assert_eq!(lenient(br#"{"a":"\ud83d\ude00"}"#), None, "a surrogate pair is fine");
        assert_eq!(lenient(b"\xef\xbb\xbf{\"a\":1}").as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(lenient(br#"{"a":"\ud800"}"#).as_deref(), Some(r#"{"a":"\ufffd"}"#));
        assert_eq!(lenient(br#"{"a":"\udc00x\ud800\ud800"}"#).as_deref(), Some(r#"{"a":"\ufffdx\ufffd\ufffd"}"#));
        assert_eq!(lenient(br#"{"a":"\\ud800"}"#), None, "an escaped backslash, then text");
        assert_eq!(lenient(b"{\"a\":\"\xff\xfe\"}").as_deref(), Some("{\"a\":\"\u{fffd}\u{fffd}\"}"));
        for line in [&b"\xef\xbb\xbf{\"a\":1}"[..], br#"{"a":"\ud800"}"#, b"{\"a\":\"\xff\xfe\xc0\x80\"}"] {
            assert!(parse_value(line).is_err() && parse_value(&lenient_text(line).unwrap()).is_ok());
        }
    }
}
