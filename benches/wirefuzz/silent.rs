//! The `silent` section: how long after its start a `fuzz` run against a server that answers nothing (`sleep`) has
//! its first case file on disk (the first contact's finding: start-up allowance plus reply timeout, 12 s by
//! default), over three runs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `fuzz --time 20 -- sleep 1000` three times and prints the seconds to the first case file of each.
pub fn silent(binary: &str) {
    println!("\n## silent: seconds from the start of `fuzz -- sleep 1000` to its first case file on disk");
    let mut took = Vec::new();
    for run in 0..3 {
        let out = std::env::temp_dir().join(format!("wirefuzz-bench-silent-{}-{run}", std::process::id()));
        let started = Instant::now();
        let mut child = Command::new(binary)
            .args(["fuzz", "--time", "20", "--seed", "1", "--out"])
            .arg(&out)
            .args(["--", "sleep", "1000"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start the CLI");
        let first = loop {
            if has_case(&out) {
                break Some(started.elapsed());
            }
            if started.elapsed() > Duration::from_secs(60) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&out);
        match first {
            Some(first) => took.push(first.as_secs_f64()),
            None => println!("run {run}: no case file within 60 s"),
        }
    }
    let shown: Vec<String> = took.iter().map(|s| format!("{s:.1}")).collect();
    println!("| runs | seconds to the first case file |\n|---|---|\n| {} | {} |", took.len(), shown.join(", "));
}

fn has_case(out: &Path) -> bool {
    std::fs::read_dir(out)
        .is_ok_and(|entries| entries.flatten().any(|entry| entry.path().extension().is_some_and(|ext| ext == "case")))
}
