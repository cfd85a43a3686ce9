//! Requests that differ only in their id share one reading. A fuzzed conversation numbers its requests, so most
//! request lines are new only in their id, and the memo (see [`super::memo`]) would read each afresh. A line that
//! starts `{"jsonrpc":"2.0","id":ID,"method":"` with a plain id (an integer of at most 18 digits, or a short string
//! of printable ASCII without escapes) has a template: the same line with the id `0`. The reading of one such line
//! stands for every line of its template, with the id taken from the text (the reading's own frame keeps the id of
//! whichever line was read).
//!
//! Why the reading carries over: such an id is a complete JSON value of a valid id type, as `0` is, so lines of one
//! template are JSON or not alike, have the same members (and the same repeated names), the same numbers beyond
//! parser limits elsewhere, and classify alike; no plain id makes a line ambiguous. The caller still shares a
//! reading only when it is a request that is not ambiguous.

use crate::protocol::RequestId;

/// What every templated line starts with.
const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
/// What follows the id in a templated line.
const AFTER_ID: &[u8] = br#","method":""#;
/// The id a template carries.
const TEMPLATE_ID: &[u8] = b"0";
/// The longest string id taken from the text.
const MAX_STRING_ID: usize = 64;
/// The most digits of an integer id taken from the text (any 18-digit integer fits in an i64).
const MAX_DIGITS: usize = 18;

/// Writes the template of `line` into `template` and returns the id `line` carries, or returns `None` (and leaves
/// `template` unspecified) when the line does not have the templated shape.
pub(super) fn split(line: &[u8], template: &mut Vec<u8>) -> Option<RequestId> {
    let rest = line.strip_prefix(PREFIX)?;
    let end = rest.iter().position(|&b| b == b',')?;
    let (token, after) = rest.split_at(end);
    if !after.starts_with(AFTER_ID) {
        return None;
    }
    let id = plain_id(token)?;
    template.clear();
    template.extend_from_slice(PREFIX);
    template.extend_from_slice(TEMPLATE_ID);
    template.extend_from_slice(after);
    Some(id)
}

/// The id an id token stands for, when it is plain: `0`, an integer without leading zeros of at most
/// [`MAX_DIGITS`] digits, or a quoted string of printable ASCII other than `"` and `\`.
fn plain_id(token: &[u8]) -> Option<RequestId> {
    if let Some(quoted) = token.strip_prefix(b"\"") {
        let inner = quoted.strip_suffix(b"\"")?;
        let printable = |b: &u8| (b' '..=b'~').contains(b) && *b != b'"' && *b != b'\\';
        if inner.len() > MAX_STRING_ID || !inner.iter().all(printable) {
            return None;
        }
        return Some(RequestId::String(String::from_utf8_lossy(inner).into_owned()));
    }
    let digits = token.strip_prefix(b"-").unwrap_or(token);
    let plain = match digits {
        [b'0'] => token.len() == 1,
        [b'1'..=b'9', ..] => digits.len() <= MAX_DIGITS && digits.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    plain.then(|| RequestId::Integer(String::from_utf8_lossy(token).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::test_support::E::*;
    use crate::oracle::test_support::{fires, only};
    use crate::protocol::{Frame, IdField};

    fn split_of(line: &str) -> Option<(String, RequestId)> {
        let mut template = Vec::new();
        let id = split(line.as_bytes(), &mut template)?;
        Some((String::from_utf8(template).unwrap(), id))
    }

    #[test]
    fn plain_ids_are_taken_out() {
        let rest = r#","method":"ping","params":{}}"#;
        let template = format!(r#"{{"jsonrpc":"2.0","id":0{rest}"#);
        for (id, expected) in [
            ("7", RequestId::int(7)),
            ("-12", RequestId::int(-12)),
            ("0", RequestId::int(0)),
            ("123456789012345678", RequestId::int(123_456_789_012_345_678)),
            (r#""abc-1""#, RequestId::string("abc-1")),
            (r#""""#, RequestId::string("")),
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id}{rest}"#);
            assert_eq!(split_of(&line), Some((template.clone(), expected.clone())), "{line}");
            // The id taken from the text is the one a parser reads.
            let Frame::Request(request) = Frame::parse(line.as_bytes()) else { panic!("{line}") };
            assert_eq!(request.id, expected);
            assert_eq!(IdField::Valid(request.id), IdField::of(Some(&RequestId::to_value(&expected))));
        }
    }

    #[test]
    fn other_ids_and_shapes_are_read_whole() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":007,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1234567890123456789,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"é","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"params":{},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"id":1,"jsonrpc":"2.0","method":"ping"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        ] {
            assert_eq!(split_of(line), None, "{line}");
        }
    }

    #[test]
    fn requests_that_share_a_template_keep_their_own_ids() {
        let ping = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let pong = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
        let (p0, p7, p8, pa) = (ping("0"), ping("7"), ping("8"), ping(r#""a""#));
        let (r0, r7, r8, ra) = (pong("0"), pong("7"), pong("8"), pong(r#""a""#));
        only(&[S(&p0), S(&p7), S(&p8), S(&pa), R(&ra), R(&r8), R(&r0), R(&r7)], &[]);
        let wrong = fires(&[S(&p7), S(&p8), R(&r7), R(&r7)], "JSONRPC-DUPLICATE-RESPONSE");
        assert_eq!(wrong.event, Some(3));
        let missing = fires(&[S(&p7), S(&p8), R(&r7), R(&r7)], "JSONRPC-RESPONSE-MISSING");
        assert_eq!(missing.event, Some(1), "the request with id 8 is the one left unanswered");
        let echo = fires(&[S(&p7), R(&pong(r#""7""#))], "JSONRPC-ID-ECHO");
        assert!(echo.detail.contains(r#""7""#), "{}", echo.detail);
    }
}
