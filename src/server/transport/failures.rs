//! Handler failures on a server's stderr: the excerpt that shows a Rust panic (`panicked at`) or a Python traceback
//! (`Traceback (most recent call last)`), which a stdio or HTTP conversation notes ([`Note::Failure`]) when it gives
//! up on a request, so the oracle reports the request a handler's failure left unanswered (`SERVER-HANDLER-PANIC`) instead of
//! taking it for a slow tool.
//!
//! [`Note::Failure`]: crate::transcript::Note::Failure

/// What starts a handler failure's report on stderr.
const MARKERS: [&str; 2] = ["panicked at", "Traceback (most recent call last)"];

/// The most lines of a report kept after its first.
const EXCERPT_LINES: usize = 12;

/// The most bytes of a report kept.
const EXCERPT_BYTES: usize = 2000;

/// The last failure report in `tail`: from the start of the line its marker is on, its first lines (a Python
/// traceback ends with the exception's line, so up to that one when it comes within the bound).
pub(crate) fn last_excerpt(tail: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(tail);
    let at = MARKERS.iter().filter_map(|marker| text.rfind(marker)).max()?;
    let start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
    let mut excerpt = String::new();
    for line in text[start..].lines().take(EXCERPT_LINES + 1) {
        if excerpt.len() + line.len() > EXCERPT_BYTES {
            break;
        }
        excerpt.push_str(line);
        excerpt.push('\n');
        // A traceback's exception line is its first line that is not indented after the header.
        let exception = !excerpt.starts_with(line) && !line.starts_with(' ') && !line.is_empty();
        if exception && excerpt.contains(MARKERS[1]) {
            break;
        }
    }
    Some(excerpt.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::last_excerpt;

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
    }
}
