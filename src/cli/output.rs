//! What the CLI writes besides standard output: the checks that an output folder or report file is writable before
//! any work starts, report files, the progress shown while fuzzing, and what learning a server says.

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{self, IsTerminal};
use std::path::Path;
use std::time::{Duration, Instant};

/// Checks that `dir` is a folder the harness can write into (creating it if needed), before any work starts;
/// true when it had to create it.
pub fn writable_folder(option: &str, dir: &Path) -> Result<bool> {
    if dir.exists() && !dir.is_dir() {
        bail!("{option} {} is not a folder", dir.display());
    }
    let created = !dir.exists();
    std::fs::create_dir_all(dir).with_context(|| format!("{option}: cannot create {}", dir.display()))?;
    let probe = dir.join(format!(".mcp-wirefuzz-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| format!("{option}: cannot write into {}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(created)
}

/// Checks that a report can be written to `path` (its folder is writable, and it is not a folder itself).
pub fn writable_file(option: &str, path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!("{option} {} is a folder, not a file", path.display());
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    writable_folder(option, dir).map(drop)
}

/// Writes a report file, creating its folder if needed.
pub fn write_report(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Says a line of the library's learn stage to the user, on stderr (its `say`).
pub fn say(line: &str) {
    eprintln!("{line}");
}

/// Progress for people: a bar on a terminal, a plain line every few seconds otherwise.
pub enum Bar {
    /// A bar (or a spinner, when the run has no number of cases) on a terminal.
    Terminal(ProgressBar),
    /// A line on stderr every few seconds, when it is not a terminal.
    Plain {
        /// When the last line was written.
        last: std::cell::Cell<Instant>,
    },
}

/// The progress of a run of `cases` conversations (or of a run bounded by time).
pub fn progress_bar(cases: Option<u64>) -> Bar {
    if !io::stderr().is_terminal() {
        return Bar::Plain { last: std::cell::Cell::new(Instant::now()) };
    }
    let bar = match cases {
        Some(cases) => ProgressBar::new(cases),
        None => ProgressBar::new_spinner(),
    };
    let style = ProgressStyle::with_template("{spinner} {pos}/{len} conversations {per_sec} {elapsed} {wide_bar}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    Bar::Terminal(bar)
}

impl Bar {
    /// Shows that `done` conversations have run.
    pub fn tick(&self, done: u64) {
        match self {
            Bar::Terminal(bar) => bar.set_position(done),
            Bar::Plain { last } if last.get().elapsed() >= Duration::from_secs(5) => {
                last.set(Instant::now());
                eprintln!("mcp-wirefuzz: {done} conversations");
            }
            Bar::Plain { .. } => {}
        }
    }

    /// Prints `text` on standard output without breaking the bar.
    pub fn println(&self, text: &str) {
        match self {
            Bar::Terminal(bar) => bar.suspend(|| println!("{}", text.trim_end())),
            Bar::Plain { .. } => println!("{}", text.trim_end()),
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Bar::Terminal(bar) = self {
            bar.finish_and_clear();
        }
    }
}
