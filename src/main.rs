//! The `mcp-wirefuzz` command line: parses it ([`cli::Cli`], one file per subcommand in `src/cli/`), runs the
//! subcommand, and turns a usage or harness error into exit code 2.

mod cli;

use clap::Parser;
use std::process::ExitCode;

/// mimalloc: the harness allocates and frees many small JSON values per conversation, where it is markedly faster
/// than the system allocator (`cargo bench --bench wirefuzz -- inprocess`, see docs/src/measured/index.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Started as a trampoline for a server, this returns only when the server is this binary: its command line.
    let server = mcp_wirefuzz::server::launch::trampoline();
    mcp_wirefuzz::server::transport::stdio::no_huge_pages();
    let cli = match server {
        Some(argv) => cli::Cli::parse_from(argv),
        None => cli::Cli::parse(),
    };
    match cli.command.run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("mcp-wirefuzz: {error:#}");
            ExitCode::from(2)
        }
    }
}
