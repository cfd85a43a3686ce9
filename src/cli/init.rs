//! `mcp-wirefuzz init`: a fuzz target, a property test, a replay test and a note written into a crate, for its MCP
//! server in-process (the templates are the library's [`mcp_wirefuzz::init`]).

use anyhow::Result;
use mcp_wirefuzz::init::{self, Init, Outcome};
use std::path::PathBuf;
use std::process::ExitCode;

/// The options of `init`.
#[derive(clap::Args)]
pub struct InitArgs {
    /// The crate's folder (the one with Cargo.toml).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// A Rust expression that builds the server: an rmcp handler when the crate depends on rmcp, else an
    /// `InProcessServer` (default: `CRATE::Server::default()`).
    #[arg(long, value_name = "EXPR")]
    server: Option<String>,
    /// mcp-wirefuzz by path, written as given (relative to the crate's folder), instead of the published version.
    #[arg(long, value_name = "DIR", conflicts_with = "dependency")]
    path: Option<String>,
    /// The mcp-wirefuzz dependency as a TOML inline table, e.g. `{ version = "=0.1.0" }` or `{ git = "URL" }`
    /// (default: the published version of this binary, `{ version = "MAJOR.MINOR" }`). `default-features = false`
    /// and the features the files need are added unless the table names them.
    #[arg(long, value_name = "TOML")]
    dependency: Option<String>,
}

/// Writes the files into the crate, naming each one written or left alone.
pub fn run(args: InitArgs) -> Result<ExitCode> {
    let InitArgs { dir, server, path, dependency } = args;
    let dir = dir.as_path();
    let mut init = Init::for_crate(dir)?;
    if let Some(server) = server {
        init::check_server_expression(&server)?;
        init.server = server;
    }
    if let Some(dependency) = dependency.or(path.as_deref().map(init::path_dependency)) {
        init.dependency = dependency;
    }
    for (path, outcome) in init.write(dir)? {
        match outcome {
            Outcome::Written => println!("wrote   {}", path.display()),
            Outcome::Skipped => println!("skipped {} (it exists)", path.display()),
        }
    }
    let kind = if init.rmcp { "rmcp handler" } else { "in-process server" };
    println!("the {kind} under test: {} (see WIREFUZZ.md)", init.server);
    Ok(ExitCode::SUCCESS)
}
