//! How the harness starts a server process: in a process group of its own (so the whole group can be ended), with
//! no signal blocked (the harness blocks those it waits for, and a child inherits the mask), set to get SIGKILL when
//! the thread that started it dies (Linux's parent-death signal), so a harness killed with `kill -9` leaves no
//! server behind.
//!
//! The last two settings must be made in the child, before it runs the server. Made by a closure between fork and
//! exec (`pre_exec`), they make the standard library fork the whole harness (tens of MiB, a dozen threads) for every
//! server. A binary that calls [`trampoline`] first thing (the CLI does) instead starts its own binary with
//! `posix_spawn`, which copies nothing, as a trampoline that makes the settings and then executes the server. A
//! program that embeds the library, and any system but Linux, forks.

use nix::sys::signal::{SigSet, SigmaskHow, sigprocmask};
use nix::unistd::Pid;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};

/// The first argument that makes the binary a trampoline; the harness's pid, the program and its arguments follow.
const MARK: &str = "--mcp-wirefuzz-trampoline";
/// The exit code of a trampoline that could not execute its server (a shell's "command not found").
const CANNOT_EXECUTE: i32 = 127;
/// Set by [`trampoline`] in the harness: its servers start through its own binary.
static TRAMPOLINE: AtomicBool = AtomicBool::new(false);

/// For a binary that calls this first thing in `main`. Started as a trampoline, the process makes the settings and
/// executes its server, never returning (exit 127 if the server cannot be executed, with a line on stderr); when the
/// server is this very binary (the built-in server, the fork server's `attach` stub), there is nothing to execute:
/// it returns the server's command line, for `main` to run as its own. Otherwise it returns `None` at once, and this
/// process starts its servers through its own binary from then on (Linux).
pub fn trampoline() -> Option<Vec<OsString>> {
    let mut args = std::env::args_os().skip(1);
    TRAMPOLINE.store(cfg!(target_os = "linux"), Ordering::Relaxed);
    if args.next().as_deref() != Some(OsStr::new(MARK)) {
        return None;
    }
    let parent = args.next().and_then(|pid| pid.to_str()?.parse::<i32>().ok()).map(Pid::from_raw);
    let Some((parent, program)) = parent.zip(args.next()) else {
        eprintln!("mcp-wirefuzz: {MARK} is the harness's own: PID PROGRAM [ARGS...]");
        std::process::exit(CANNOT_EXECUTE);
    };
    if settle(parent).is_err() {
        // The harness died before the parent-death signal was armed: the server would be an orphan.
        std::process::exit(CANNOT_EXECUTE);
    }
    if is_this_binary(&program) {
        return Some(std::iter::once(program).chain(args).collect());
    }
    let error = Command::new(&program).args(args).exec();
    eprintln!("mcp-wirefuzz: cannot start `{}`: {error}", program.to_string_lossy());
    std::process::exit(CANNOT_EXECUTE);
}

/// True when `program` (a path, or a name found in `PATH`) is the file this process runs.
fn is_this_binary(program: &OsStr) -> bool {
    let Ok(this) = std::fs::canonicalize("/proc/self/exe") else { return false };
    located(program, std::env::var_os("PATH")).and_then(|found| std::fs::canonicalize(found).ok()) == Some(this)
}

/// The file `program` names: itself when it holds a `/` and exists, else the first file of that name in a folder of
/// `path`.
fn located(program: &OsStr, path: Option<OsString>) -> Option<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program)).filter(|found| found.exists());
    }
    std::env::split_paths(&path?).map(|folder| folder.join(program)).find(|found| found.is_file())
}

/// The settings a server starts with: no signal blocked, SIGKILL when `parent`'s starting thread dies; an error when
/// `parent` is already gone.
fn settle(parent: Pid) -> nix::Result<()> {
    sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
    arm(parent)
}

/// Sets the parent-death signal, then checks that `parent` is still the parent (it may have died just before).
fn arm(parent: Pid) -> nix::Result<()> {
    #[cfg(target_os = "linux")]
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
    if nix::unistd::getppid() != parent {
        return Err(nix::errno::Errno::ESRCH);
    }
    Ok(())
}

/// Starts `program` with `args` as a server ([the settings](self)); `configure` sets its stdio and environment.
/// A program that cannot be found is an error here, as `Command::spawn` gives it, trampoline or not.
pub(crate) fn spawn<A: AsRef<OsStr>>(
    program: &OsStr,
    args: &[A],
    configure: impl FnOnce(&mut Command),
) -> std::io::Result<Child> {
    let harness = nix::unistd::getpid();
    let trampoline = TRAMPOLINE.load(Ordering::Relaxed);
    let mut command = if trampoline {
        let mut command = Command::new("/proc/self/exe");
        command.arg(MARK).arg(harness.to_string()).arg(program).args(args);
        command
    } else {
        let mut command = Command::new(program);
        command.args(args);
        // SAFETY: the closure runs between fork and exec and makes three system calls (sigprocmask, prctl,
        // getppid); it allocates nothing and takes no lock.
        unsafe { command.pre_exec(move || Ok(settle(harness)?)) };
        command
    };
    command.process_group(0);
    configure(&mut command);
    if trampoline && !findable(program, &command) {
        let missing = "no such file, nor a program of that name in a folder of PATH";
        return Err(std::io::Error::new(std::io::ErrorKind::NotFound, missing));
    }
    command.spawn()
}

/// True when `program` names a file, or (a bare name) one is in a folder of the `PATH` that `command` passes on.
fn findable(program: &OsStr, command: &Command) -> bool {
    let set = command.get_envs().find(|(name, _)| *name == "PATH").map(|(_, value)| value.map(OsStr::to_os_string));
    located(program, set.unwrap_or_else(|| std::env::var_os("PATH"))).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    #[test]
    fn a_server_starts_with_no_signal_blocked_in_a_group_of_its_own() {
        // This test binary has no trampoline: the fork path, with the harness's mask set to block SIGTERM.
        let mut blocked = SigSet::empty();
        blocked.add(nix::sys::signal::Signal::SIGTERM);
        let handle = std::thread::spawn(move || {
            blocked.thread_block().unwrap();
            let args = ["-c", "grep -E '^(SigBlk|NSpgid)' /proc/self/status; echo $$"];
            let child = spawn(OsStr::new("sh"), &args, |c| {
                c.stdout(Stdio::piped());
            })
            .unwrap();
            String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
        });
        let status = handle.join().unwrap();
        assert!(status.contains("SigBlk:\t0000000000000000"), "{status}");
        let pgid = status.lines().find_map(|l| l.strip_prefix("NSpgid:")).unwrap().trim();
        assert_eq!(Some(pgid), status.lines().last(), "{status}");
    }

    #[test]
    fn a_program_that_is_nowhere_is_found_missing_before_it_starts() {
        let command = Command::new("x");
        assert!(!findable(OsStr::new("no-such-program-mcp-wirefuzz"), &command));
        assert!(!findable(OsStr::new("/no/such/program"), &command));
        assert!(findable(OsStr::new("sh"), &command));
        let mut emptied = Command::new("x");
        emptied.env("PATH", "/nowhere");
        assert!(!findable(OsStr::new("sh"), &emptied));
    }
}
