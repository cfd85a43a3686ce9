//! `mcp-wirefuzz corpus`: the seed corpora of every cargo-fuzz target.

use anyhow::{Context, Result};
use mcp_wirefuzz::fuzz_targets::{self, FuzzTarget};
use std::path::PathBuf;
use std::process::ExitCode;

/// The options of `corpus`.
#[derive(clap::Args)]
pub struct CorpusArgs {
    /// The corpus root.
    #[arg(long, value_name = "DIR", default_value = "corpus")]
    out: PathBuf,
}

/// Writes every target's seed corpus under `--out`.
pub fn run(args: CorpusArgs) -> Result<ExitCode> {
    let root = args.out.as_path();
    let files = fuzz_targets::seed_corpus();
    for target in FuzzTarget::ALL {
        let dir = root.join(target.name());
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for file in files.iter().filter(|f| f.target == target) {
            std::fs::write(dir.join(&file.name), &file.bytes)
                .with_context(|| format!("cannot write {}", dir.join(&file.name).display()))?;
        }
        println!("{}: {} files", dir.display(), files.iter().filter(|f| f.target == target).count());
    }
    Ok(ExitCode::SUCCESS)
}
