//! `mcp-wirefuzz attach`: the stand-in server command of a fork server (the library's
//! [`mcp_wirefuzz::server::transport::stdio::attach`]).

use super::options::seconds_option;
use anyhow::Result;
use mcp_wirefuzz::server::transport::stdio::attach;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The options of `attach`.
#[derive(clap::Args)]
pub struct AttachArgs {
    /// The fork server's Unix socket.
    socket: PathBuf,
    /// How long to wait for the socket to accept connections, in seconds (a fork server still starting).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    wait: f64,
}

/// Hands this process's stdio to the fork server and exits as the forked server did.
pub fn run(args: AttachArgs) -> Result<ExitCode> {
    let (socket, wait) = (args.socket.as_path(), args.wait);
    let wait = match wait {
        0.0 => Duration::ZERO,
        secs => seconds_option("--wait", secs)?,
    };
    match attach::attach(socket, wait) {
        Ok(outcome) => attach::exit_as(outcome),
        Err(error) => attach::lost(&format!("{error:#}")),
    }
}
