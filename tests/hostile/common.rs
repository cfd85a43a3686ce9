//! What the hostile-server tests share: the hostile servers (tests/hostile/server.py) and a look for processes
//! they left behind.

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The argv of the hostile server `mode`, its processes marked with `tag` (unique to one test).
pub fn server(mode: &str, tag: &str) -> Vec<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/server.py");
    vec!["python3".into(), script.display().to_string(), mode.into(), tag.into()]
}

/// A tag no other test run uses.
pub fn tag(name: &str) -> String {
    format!("wirefuzz-hostile-{name}-{}", std::process::id())
}

/// The processes still running (zombies not counted) whose command line holds `tag`, after giving them up to a
/// second to go (a SIGKILL takes a moment to land).
pub fn left_behind(tag: &str) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(1);
    loop {
        let running = running(tag);
        if running.is_empty() || Instant::now() >= until {
            return running;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn running(tag: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(cmdline) = std::fs::read(path.join("cmdline")) else { continue };
        if !String::from_utf8_lossy(&cmdline).contains(tag) {
            continue;
        }
        let zombie = std::fs::read_to_string(path.join("stat"))
            .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')));
        if !zombie {
            found.push(format!("{}: {}", path.display(), String::from_utf8_lossy(&cmdline).replace('\0', " ")));
        }
    }
    found
}
