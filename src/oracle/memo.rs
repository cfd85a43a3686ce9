//! Readings of lines the oracle has read before. Fuzzed conversations repeat most of their lines (the same
//! openings, envelopes and replies, thousands of times), and reading a line is a pure function of its bytes, so
//! each thread keeps what it read of recent short lines and hands out a shared copy. The cache is bounded: lines
//! longer than [`MAX_LINE`] bytes are read afresh every time, and a cache holding [`MAX_ENTRIES`] lines starts over.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

/// Lines longer than this are not kept (they rarely repeat, and would fill the cache).
const MAX_LINE: usize = 1024;
/// A cache holding this many lines is emptied before it takes another.
const MAX_ENTRIES: usize = 8192;

/// What `read` made of each recent short line.
pub(super) struct Memo<T>(RefCell<FxHashMap<Box<[u8]>, Rc<T>>>);

impl<T> Memo<T> {
    /// An empty cache.
    pub(super) fn new() -> Memo<T> {
        Memo(RefCell::new(FxHashMap::default()))
    }

    /// The reading of `line`: the one kept from before, or `read(line)`, kept when the line is short.
    pub(super) fn read(&self, line: &[u8], read: impl FnOnce(&[u8]) -> T) -> Rc<T> {
        if let Some(kept) = self.get(line) {
            return kept;
        }
        let reading = Rc::new(read(line));
        self.keep(line, &reading);
        reading
    }

    /// The reading kept for `line`, if any.
    pub(super) fn get(&self, line: &[u8]) -> Option<Rc<T>> {
        if line.len() > MAX_LINE {
            return None;
        }
        self.0.borrow().get(line).cloned()
    }

    /// Keeps `reading` as the reading of `line` when the line is short.
    pub(super) fn keep(&self, line: &[u8], reading: &Rc<T>) {
        if line.len() > MAX_LINE {
            return;
        }
        let mut kept = self.0.borrow_mut();
        if kept.len() >= MAX_ENTRIES {
            kept.clear();
        }
        kept.insert(line.into(), reading.clone());
    }

    /// How many lines are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.borrow().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_short_line_is_read_once_and_a_long_one_every_time() {
        let memo = Memo::new();
        let reads = Cell::new(0);
        let read = |line: &[u8]| {
            reads.set(reads.get() + 1);
            line.len()
        };
        assert_eq!(*memo.read(b"abc", read), 3);
        assert_eq!(*memo.read(b"abc", read), 3);
        assert_eq!(*memo.read(b"abcd", read), 4);
        assert_eq!(reads.get(), 2);
        let long = vec![b'x'; MAX_LINE + 1];
        assert_eq!(*memo.read(&long, read), MAX_LINE + 1);
        assert_eq!(*memo.read(&long, read), MAX_LINE + 1);
        assert_eq!((reads.get(), memo.len()), (4, 2));
    }

    #[test]
    fn a_full_cache_starts_over() {
        let memo = Memo::new();
        for i in 0..MAX_ENTRIES as u32 {
            memo.read(&i.to_le_bytes(), |_| ());
        }
        assert_eq!(memo.len(), MAX_ENTRIES);
        memo.read(b"one more", |_| ());
        assert_eq!(memo.len(), 1);
    }
}
