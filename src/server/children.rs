//! The harness's child processes, whatever the transport: the registry of every server process group and fork
//! server folder running now, so that [`end_all`] can end them all when a signal stops the harness (their own
//! process groups, which a terminal's Ctrl-C does not reach), and the signal mask a child must start with.

use super::END_GRACE;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, killpg, sigprocmask};
use nix::unistd::Pid;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The process groups of the servers (and fork servers) running now.
static GROUPS: Mutex<Vec<Pid>> = Mutex::new(Vec::new());
/// The private folders of the fork servers running now.
static FOLDERS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set for good when [`end_all`] starts: from then on, a conversation's ending is the harness's doing.
static ENDING: AtomicBool = AtomicBool::new(false);

/// Ends every process group still running (SIGTERM, then SIGKILL after [`END_GRACE`]) and removes the fork servers'
/// folders: for a harness stopped by a signal, which then exits without ending its conversations. A conversation
/// that ends from then on is an error ([`super::CutShort::Halted`]), not a transcript: the crashes the harness causes are not
/// findings.
pub fn end_all() {
    ENDING.store(true, Ordering::SeqCst);
    let groups = GROUPS.lock().map(|groups| groups.clone()).unwrap_or_default();
    for &group in &groups {
        let _ = killpg(group, Signal::SIGTERM);
    }
    if !groups.is_empty() {
        std::thread::sleep(END_GRACE);
    }
    for &group in &groups {
        let _ = killpg(group, Signal::SIGKILL);
    }
    let folders = FOLDERS.lock().map(|folders| folders.clone()).unwrap_or_default();
    for folder in folders {
        let _ = std::fs::remove_dir_all(folder);
    }
}

/// True once [`end_all`] has started.
pub fn ending() -> bool {
    ENDING.load(Ordering::SeqCst)
}

/// Counts the process group `group` among those [`end_all`] ends, until [`untrack`].
pub(crate) fn track(group: Pid) {
    if let Ok(mut groups) = GROUPS.lock() {
        groups.push(group);
    }
}

/// No longer counts the process group `group` ([`track`]): it has been ended.
pub(crate) fn untrack(group: Pid) {
    if let Ok(mut groups) = GROUPS.lock() {
        groups.retain(|&other| other != group);
    }
}

/// Counts `folder` (a fork server's) among those [`end_all`] removes, until [`forget_folder`].
pub(crate) fn track_folder(folder: &Path) {
    if let Ok(mut folders) = FOLDERS.lock() {
        folders.push(folder.to_path_buf());
    }
}

/// No longer counts `folder` ([`track_folder`]): it has been removed.
pub(crate) fn forget_folder(folder: &Path) {
    if let Ok(mut folders) = FOLDERS.lock() {
        folders.retain(|other| other != folder);
    }
}

/// Starts `process` with no signal blocked: the harness blocks the signals it waits for ([`end_all`] runs when one
/// comes), and a child inherits the mask, so a server started without this would ignore SIGTERM and SIGINT.
pub(crate) fn unblock_signals(process: &mut Command) {
    // SAFETY: the closure runs between fork and exec and makes one system call (sigprocmask); it allocates nothing
    // and takes no lock.
    unsafe {
        process.pre_exec(|| {
            sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
            Ok(())
        });
    }
}
