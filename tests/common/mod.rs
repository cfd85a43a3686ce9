//! What several integration tests share: a fork server (`forkservers/python/wirefuzz_forkserver.py`) started for
//! a test and stopped when it is dropped.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The crate's root folder.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A running fork server, listening on its own socket; SIGTERM (which makes it kill its children) when dropped.
pub struct ForkServer {
    child: Child,
    /// The socket it listens on.
    pub socket: PathBuf,
}

impl ForkServer {
    /// Starts `python forkservers/python/wirefuzz_forkserver.py --socket S [--preload M]... script` and waits
    /// until its socket exists.
    #[allow(dead_code)] // Not every test binary that shares this module starts one without an environment.
    pub fn start(python: &Path, script: &Path, preload: &[&str]) -> ForkServer {
        ForkServer::start_with(python, script, preload, &[])
    }

    /// [`ForkServer::start`] with `env` set for the fork server, so every server it forks sees it too.
    pub fn start_with(python: &Path, script: &Path, preload: &[&str], env: &[(&str, &str)]) -> ForkServer {
        let socket = std::env::temp_dir().join(format!("wirefuzz-fs-{}-{}.sock", std::process::id(), unique()));
        let mut command = Command::new(python);
        command.arg(root().join("forkservers/python/wirefuzz_forkserver.py")).arg("--socket").arg(&socket);
        for module in preload {
            command.args(["--preload", module]);
        }
        command.envs(env.iter().copied());
        let child = command.arg(script).stdin(Stdio::null()).spawn().expect("cannot start the fork server");
        let server = ForkServer { child, socket };
        let until = Instant::now() + Duration::from_secs(30);
        while !server.socket.exists() {
            assert!(Instant::now() < until, "the fork server did not open {}", server.socket.display());
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// The server command that attaches to this fork server: `mcp-wirefuzz attach SOCKET`.
    pub fn attach_argv(&self) -> Vec<String> {
        vec![env!("CARGO_BIN_EXE_mcp-wirefuzz").into(), "attach".into(), self.socket.display().to_string()]
    }
}

impl Drop for ForkServer {
    fn drop(&mut self) {
        let _ = kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM);
        let _ = self.child.wait();
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
