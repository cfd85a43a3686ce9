//! Bounded reading of what a server writes, shared by the stdio and HTTP transports: one output line at a time
//! with a cap on its length ([`read_bounded_line`], [`OutputLine`]), and the last bytes of a stream (`read_tail`).

use std::io::{BufRead, Read};
use std::sync::Mutex;

/// One stdout line of the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputLine {
    /// The line's bytes without its newline, cut at [`MAX_LINE_BYTES`](crate::server::MAX_LINE_BYTES).
    pub bytes: Vec<u8>,
    /// True when the line was longer than [`MAX_LINE_BYTES`](crate::server::MAX_LINE_BYTES) and was cut.
    pub truncated: bool,
}

/// Reads one line, keeping at most `max` bytes of it; `None` at end of input. A final line without a newline is
/// returned as a line.
pub fn read_bounded_line(reader: &mut impl BufRead, max: usize) -> std::io::Result<Option<OutputLine>> {
    let mut bytes = Vec::new();
    let mut truncated = false;
    let mut saw_any = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(saw_any.then_some(OutputLine { bytes, truncated }));
        }
        saw_any = true;
        let (chunk, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..at], Some(at + 1)),
            None => (buffer, None),
        };
        let room = max.saturating_sub(bytes.len());
        truncated |= chunk.len() > room;
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(buffer.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(OutputLine { bytes, truncated }));
        }
    }
}

/// The last bytes of a stream, and how many came before them: so a position in the stream stays the same however
/// much of its front was dropped.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tail {
    /// The last bytes read.
    pub(crate) bytes: Vec<u8>,
    /// How many bytes of the stream came before `bytes` (dropped to keep the bound).
    pub(crate) dropped: u64,
}

/// Keeps the last `keep` bytes of `stream` in `tail` until the stream ends.
pub(crate) fn read_tail(mut stream: impl Read, tail: &Mutex<Tail>, keep: usize) {
    let mut chunk = [0u8; 8192];
    while let Ok(n) = stream.read(&mut chunk) {
        if n == 0 {
            return;
        }
        let Ok(mut tail) = tail.lock() else { return };
        tail.bytes.extend_from_slice(&chunk[..n]);
        if tail.bytes.len() > keep {
            let excess = tail.bytes.len() - keep;
            tail.bytes.drain(..excess);
            tail.dropped += excess as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_not_buffered() {
        let mut input = vec![b'x'; 10_000];
        input.extend_from_slice(b"\nshort\nlast");
        let mut reader = std::io::Cursor::new(input);
        let first = read_bounded_line(&mut reader, 100).unwrap().unwrap();
        assert_eq!((first.bytes.len(), first.truncated), (100, true));
        let second = read_bounded_line(&mut reader, 100).unwrap().unwrap();
        assert_eq!((second.bytes, second.truncated), (b"short".to_vec(), false));
        assert_eq!(read_bounded_line(&mut reader, 100).unwrap().unwrap().bytes, b"last".to_vec());
        assert_eq!(read_bounded_line(&mut reader, 100).unwrap(), None);
    }
}
