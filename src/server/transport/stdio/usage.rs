//! What a server holds over a long conversation: the resident memory and the open descriptors of the processes that
//! read its stdin pipe (the command's own process, or the server a wrapper such as `npx` or the fork server's stub
//! started), read from `/proc` at every [`EVERY`]th sync point of a conversation of [`LONG`] lines or more, and
//! recorded as [`Note::Usage`] for `SERVER-RESOURCE-GROWTH`. Linux only; elsewhere nothing is recorded.

use crate::transcript::{Input, Note};
use std::os::fd::{AsRawFd, BorrowedFd};

/// The conversations sampled: those of this many input lines or more (the campaign's long sessions).
pub(super) const LONG: usize = 128;
/// One sync point in this many is sampled.
pub(super) const EVERY: usize = 16;

/// The sampling of one conversation.
pub(super) struct Sampler {
    pipe: String,
    /// The processes found reading the pipe (found again when one of them is gone).
    readers: Vec<u32>,
    syncs: usize,
}

impl Sampler {
    /// A sampler for a conversation of `inputs` on a server reading `pipe`, when the conversation is long.
    pub(super) fn of(pipe: Option<&String>, inputs: &[Input]) -> Option<Sampler> {
        let lines = inputs.iter().filter(|input| matches!(input, Input::Line(_))).count();
        let pipe = pipe.filter(|_| lines >= LONG)?.clone();
        Some(Sampler { pipe, readers: Vec::new(), syncs: 0 })
    }

    /// At a sync point, after `lines` lines were sent: every [`EVERY`]th one, the note of what the server's processes
    /// hold (none when no process reads the pipe any more).
    pub(super) fn at_sync(&mut self, lines: usize) -> Option<Note> {
        self.syncs += 1;
        if !self.syncs.is_multiple_of(EVERY) {
            return None;
        }
        let mut held = self.readers.iter().map(|pid| held_by(*pid)).collect::<Option<Vec<_>>>();
        if held.as_ref().is_none_or(Vec::is_empty) {
            self.readers = readers(&self.pipe);
            held = self.readers.iter().map(|pid| held_by(*pid)).collect();
        }
        let held = held.filter(|held| !held.is_empty())?;
        let (rss_kb, fds) = held.iter().fold((0, 0), |(rss, fds), (r, f)| (rss + r, fds + f));
        Some(Note::Usage { lines: lines as u64, rss_kb, fds })
    }
}

/// The pipe `fd` is an end of, as `/proc` names it (`pipe:[inode]`).
pub(super) fn pipe_of(fd: BorrowedFd<'_>) -> Option<String> {
    let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
    let name = link.to_str()?.to_string();
    name.starts_with("pipe:").then_some(name)
}

/// The processes whose stdin is `pipe`.
fn readers(pipe: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found: Vec<u32> = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/fd/0")).is_ok_and(|link| link.to_str() == Some(pipe)))
        .collect();
    found.sort_unstable();
    found
}

/// The resident memory (KiB) and the open descriptors of process `pid`; `None` when it is gone.
fn held_by(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    // `VmRSS:    1234 kB`; a zombie has no such line, and holds nothing.
    let rss_kb = status.lines().find_map(|line| line.strip_prefix("VmRSS:")?.split_whitespace().next()?.parse().ok());
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    Some((rss_kb.unwrap_or(0), fds))
}
