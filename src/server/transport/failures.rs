//! Handler failures on a server's stderr: the excerpt that shows a Rust panic (`panicked at`) or a Python traceback
//! (`Traceback (most recent call last)`), which a stdio or HTTP conversation notes ([`Note::Failure`]) when it gives
//! up on a request, so the oracle reports the request a handler's failure left unanswered (`SERVER-HANDLER-PANIC`) instead of
//! taking it for a slow tool. A crash the Python SDK caught and answered with an isError result (its
//! `UnexpectedToolError`, logged with the author's exception as its cause) keeps the author's traceback, ended by the
//! SDK's exception line: the oracle gives it to that reply's `SERVER-HANDLER-CRASH` ([`answered`]).
//!
//! [`Note::Failure`]: crate::transcript::Note::Failure

use crate::transcript::FASTMCP_CAUGHT;

/// What starts a handler failure's report on stderr.
const MARKERS: [&str; 2] = ["panicked at", "Traceback (most recent call last)"];

/// The exception line of a Python SDK's answered tool crash: its `UnexpectedToolError` with the text the client
/// got, `Error executing tool NAME` (mcp 2.x tools/base.py `Tool.run`).
const ANSWERED_CRASH: &str = "UnexpectedToolError: Error executing tool ";

/// What Python prints between a chained exception's cause and the exception (`raise ... from cause`).
const DIRECT_CAUSE: &str = "The above exception was the direct cause of the following exception:";

/// The longest exception line of an answered crash kept after its cause's traceback.
const CRASH_LINE_BYTES: usize = 300;

/// The most lines of a report kept after its first.
const EXCERPT_LINES: usize = 12;

/// The most bytes of a report kept.
const EXCERPT_BYTES: usize = 2000;

/// The last failure report in `tail`. A Rust panic: from the start of the line its marker is on, its first lines. A
/// Python traceback: its header, its innermost frames (the end of the traceback, where it was raised) and the
/// exception's line, within the bounds.
///
/// A Python SDK's answered tool crash ([`ANSWERED_CRASH`], raised from the author's exception): the excerpt of its
/// cause's traceback (the author's frames), then the SDK's exception line.
pub(crate) fn last_excerpt(tail: &[u8]) -> Option<String> {
    excerpt(&String::from_utf8_lossy(tail))
}

/// [`last_excerpt`] of `text`.
fn excerpt(text: &str) -> Option<String> {
    let at = MARKERS.iter().filter_map(|marker| text.rfind(marker)).max()?;
    let start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
    let mut lines = text[start..].lines();
    let header = lines.next().unwrap_or_default();
    let mut body: Vec<&str> = Vec::new();
    if header.contains(MARKERS[1]) {
        // A traceback's exception line is its first line that is not indented after the header.
        for line in lines {
            body.push(line);
            if !line.starts_with(' ') && !line.is_empty() {
                break;
            }
        }
        let keep = body.len().saturating_sub(EXCERPT_LINES);
        body.drain(..keep);
    } else {
        body.extend(panic_body(lines));
    }
    let mut out = String::from(header);
    let mut budget = EXCERPT_BYTES.saturating_sub(header.len());
    // Keep the innermost lines when the bound cuts: drop from the front of the body.
    let mut kept: Vec<&str> = Vec::new();
    for line in body.iter().rev() {
        if line.len() + 1 > budget {
            break;
        }
        budget -= line.len() + 1;
        kept.push(line);
    }
    for line in kept.iter().rev() {
        out.push('\n');
        out.push_str(line);
    }
    let out = out.trim_end();
    let exception = out.lines().next_back().unwrap_or_default();
    if header.contains(MARKERS[1])
        && exception.contains(ANSWERED_CRASH)
        && let Some(before) = text[..start].trim_end().strip_suffix(DIRECT_CAUSE)
        && let Some(cause) = excerpt(before)
    {
        let mut end = exception.len().min(CRASH_LINE_BYTES);
        while !exception.is_char_boundary(end) {
            end -= 1;
        }
        return Some(format!("{cause}\n{}", &exception[..end]));
    }
    // fastmcp's log line of an error it answers, right before the traceback.
    let before = text[..start].trim_end().rsplit('\n').next().unwrap_or_default().trim();
    if header.contains(MARKERS[1]) && before.contains(FASTMCP_CAUGHT) {
        return Some(format!("{before}\n{out}"));
    }
    Some(out.to_string())
}

/// The lines of a Rust panic's report after its header: the message, up to the backtrace (`stack backtrace:`) or
/// the hint to get one (`note: run with`), then, from a backtrace, only the innermost frame that is not the
/// standard library's or the panic machinery's (the author's function, as `in rmcp_notes::Notes::get_note`).
fn panic_body<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut body = Vec::new();
    let mut lines = lines.take(EXCERPT_LINES * 4);
    for line in lines.by_ref() {
        if line.starts_with("stack backtrace:") || line.starts_with("note: ") {
            break;
        }
        if body.len() < EXCERPT_LINES {
            body.push(line);
        }
    }
    let machinery = ["__rustc::", "core::", "std::", "rust_begin_unwind", "<core::", "<std::", "<alloc::"];
    let frame = lines
        .filter_map(|line| line.trim_start().split_once(": "))
        .map(|(_, name)| name)
        .find(|name| !machinery.iter().any(|prefix| name.starts_with(prefix)));
    if let Some(frame) = frame {
        body.push(frame);
    }
    body
}

/// True when `excerpt` is a crash the Python SDK caught and answered with an isError result (its exception line is
/// [`ANSWERED_CRASH`]'s), or an error fastmcp logged as one it answers ([`FASTMCP_CAUGHT`]): no request was left
/// unanswered by it.
pub(crate) fn answered(excerpt: &str) -> bool {
    excerpt.lines().next_back().is_some_and(|line| line.contains(ANSWERED_CRASH))
        || excerpt.lines().next().is_some_and(|line| line.contains(FASTMCP_CAUGHT))
}

/// Where the last failure report in `tail` starts (the byte offset of its marker), if there is one: two reports
/// with the same text (the same panic again) are told apart by where they are in the stream.
pub(crate) fn last_marker(tail: &[u8]) -> Option<usize> {
    let find = |marker: &str| tail.windows(marker.len()).rposition(|window| window == marker.as_bytes());
    MARKERS.iter().filter_map(|marker| find(marker)).max()
}

/// The last failure report in `tail` when it is the author's: [`last_excerpt`], unless it is [`in_sdk`].
pub(crate) fn authors_excerpt(tail: &[u8]) -> Option<String> {
    last_excerpt(tail).filter(|excerpt| !in_sdk(excerpt))
}

/// True when the failure's innermost frame is in an SDK's own code (the Python SDK's `mcp` package, rmcp's crate),
/// not in the server author's: the SDK failed on a request it could not dispatch, which is not a handler's failure.
pub(crate) fn in_sdk(excerpt: &str) -> bool {
    let innermost = if excerpt.contains(MARKERS[1]) {
        excerpt.lines().rev().find(|line| line.trim_start().starts_with("File \""))
    } else {
        excerpt.lines().find(|line| line.contains(MARKERS[0]))
    };
    innermost.is_some_and(|line| {
        let line = line.replace('\\', "/");
        line.contains("/site-packages/mcp/") || line.contains("/rmcp-") || line.contains("/rmcp/src/")
    })
}

#[cfg(test)]
mod tests {
    use super::{answered, last_excerpt};

    #[test]
    fn a_rust_panic_and_a_python_traceback_are_found_and_other_stderr_is_not() {
        let rust = b"INFO started\nthread 'tokio-runtime-worker' panicked at src/main.rs:40:21:\nindex out of bounds: the len is 3 but the index is 7\nnote: run with `RUST_BACKTRACE=1`\n";
        let excerpt = last_excerpt(rust).unwrap();
        assert!(excerpt.starts_with("thread 'tokio-runtime-worker' panicked at src/main.rs:40:21:"), "{excerpt}");
        assert!(excerpt.contains("index out of bounds"), "{excerpt}");
        let python = b"Traceback (most recent call last):\n  File \"s.py\", line 9, in fetch\n    return items[i]\nIndexError: list index out of range\nINFO next request\n";
        let excerpt = last_excerpt(python).unwrap();
        assert!(excerpt.ends_with("IndexError: list index out of range"), "{excerpt}");
        assert_eq!(last_excerpt(b"INFO started\nWARNING slow request\n"), None);
        assert_eq!(last_excerpt(b""), None);
        assert_eq!(super::last_marker(b"x\nthread 'main' panicked at a.rs:1:1:\nboom\n"), Some(16));
        let twice = b"thread 'main' panicked at a.rs:1:1:\nboom\nthread 'main' panicked at a.rs:1:1:\nboom\n";
        assert_eq!(super::last_marker(twice), Some(55), "the same panic again is a later one");
        assert_eq!(super::last_marker(b"INFO started\n"), None);
    }

    #[test]
    fn a_rust_backtrace_is_cut_to_the_message_and_the_authors_frame() {
        let backtrace = "thread 'main' (7) panicked at src/lib.rs:140:18:\nindex out of bounds: the len is 0 but the index is 9\nstack backtrace:\n   0: __rustc::rust_begin_unwind\n             at /rustc/x/library/std/src/panicking.rs:689:5\n   1: core::panicking::panic_bounds_check\n   2: rmcp_notes::Notes::get_note::{{closure}}\n   3: <F as rmcp::handler::server::tool::CallToolHandler>::call\n";
        let excerpt = last_excerpt(backtrace.as_bytes()).unwrap();
        assert_eq!(
            excerpt,
            "thread 'main' (7) panicked at src/lib.rs:140:18:\nindex out of bounds: the len is 0 but the index is 9\nrmcp_notes::Notes::get_note::{{closure}}"
        );
        let hint = "thread 'main' panicked at src/a.rs:1:1:\nboom\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(last_excerpt(hint.as_bytes()).unwrap(), "thread 'main' panicked at src/a.rs:1:1:\nboom");
    }

    #[test]
    fn a_long_traceback_keeps_its_innermost_frames_and_a_failure_inside_the_sdk_is_told_apart() {
        let mut traceback = String::from("Traceback (most recent call last):\n");
        for i in 0..30 {
            traceback.push_str(&format!(
                "  File \"/venv/lib/python3.11/site-packages/mcp/server/runner.py\", line {i}, in on_request\n    x()\n"
            ));
        }
        let authors = format!(
            "{traceback}  File \"/srv/notes.py\", line 9, in search_notes\n    first = words[0]\nIndexError: list index out of range\n"
        );
        let excerpt = last_excerpt(authors.as_bytes()).unwrap();
        assert!(
            excerpt.starts_with("Traceback") && excerpt.ends_with("IndexError: list index out of range"),
            "{excerpt}"
        );
        assert!(excerpt.contains("notes.py") && !super::in_sdk(&excerpt), "{excerpt}");
        let sdks = format!("{traceback}TypeError: params must be an object\n");
        assert!(super::in_sdk(&last_excerpt(sdks.as_bytes()).unwrap()));
        assert!(!super::in_sdk("thread 'main' panicked at src/store.rs:42:17:\nindex out of bounds"));
        let rmcp = "thread 'main' panicked at /root/.cargo/registry/src/index.crates.io-1/rmcp-3.11.0/src/service.rs:9:5:\nboom";
        assert!(super::in_sdk(rmcp));
    }

    #[test]
    fn an_error_fastmcp_logged_as_answered_keeps_its_log_line_and_costs_no_reply() {
        let log = "[12/07/26 09:31:22] Error calling tool 'parse_human_date'\n    Traceback (most recent call last):\n  \
            File \"server.py\", line 113, in parse_human_date\n    raise ValueError(\"no date\")\nValueError: no date\n";
        let excerpt = last_excerpt(log.as_bytes()).expect("a traceback");
        assert!(excerpt.starts_with("[12/07/26 09:31:22] Error calling tool 'parse_human_date'\n"), "{excerpt}");
        assert!(answered(&excerpt));
        // The same traceback without fastmcp's line before it may have cost a reply.
        let bare = last_excerpt(log.split_once('\n').unwrap().1.as_bytes()).expect("a traceback");
        assert!(!answered(&bare), "{bare}");
    }

    #[test]
    fn a_crash_the_python_sdk_answered_keeps_the_authors_traceback_and_the_sdks_exception_line() {
        let sdk = "/venv/lib/python3.11/site-packages/mcp/server/mcpserver";
        let log = format!(
            "Tool 'search_notes' raised an unexpected exception\nTraceback (most recent call last):\n  File \
             \"{sdk}/tools/base.py\", line 179, in run\n    result = await call_fn()\n  File \"/srv/notes.py\", line 83, \
             in search_notes\n    first = words[0]\n            ~~~~~^^^\nIndexError: list index out of range\n\n\
             The above exception was the direct cause of the following exception:\n\nTraceback (most recent call \
             last):\n  File \"{sdk}/tools/base.py\", line 213, in run\n    raise UnexpectedToolError(...) from exc\n\
             mcp.server.mcpserver.exceptions.UnexpectedToolError: Error executing tool search_notes\n\
             Tool 'get_note' failed: 'Error executing tool get_note: no note 3'\n"
        );
        let excerpt = super::authors_excerpt(log.as_bytes()).unwrap();
        assert!(excerpt.starts_with("Traceback") && excerpt.contains("notes.py\", line 83"), "{excerpt}");
        assert!(
            excerpt.ends_with(
                "IndexError: list index out of range\nmcp.server.mcpserver.exceptions.UnexpectedToolError: Error \
                 executing tool search_notes"
            ),
            "{excerpt}"
        );
        assert!(super::answered(&excerpt));
        // Without its cause the SDK's own traceback stays the SDK's; an author's traceback is no answered crash.
        let alone = &log[log.find("\n\nThe above").unwrap() + 2..];
        assert_eq!(super::authors_excerpt(alone.as_bytes()), None);
        let raised = "Traceback (most recent call last):\n  File \"/srv/notes.py\", line 9, in f\nKeyError: 'x'\n";
        assert!(!super::answered(&last_excerpt(raised.as_bytes()).unwrap()));
    }
}
