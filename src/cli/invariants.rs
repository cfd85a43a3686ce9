//! `mcp-wirefuzz invariants`: the invariant catalogue.

use anyhow::Result;
use mcp_wirefuzz::oracle::render_catalogue;
use std::process::ExitCode;

/// Prints every rule with its id, level, eras, source and policy.
pub fn run() -> Result<ExitCode> {
    print!("{}", render_catalogue());
    Ok(ExitCode::SUCCESS)
}
