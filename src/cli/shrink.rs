//! `mcp-wirefuzz shrink`: a case file minimized in place while the rule it expects still breaks.

use super::options::{ForkServerOption, ReplyTimeout};
use super::output::say;
use super::server::end_servers_on_signal;
use anyhow::{Result, bail};
use mcp_wirefuzz::case::Case;
use mcp_wirefuzz::learn::stage::{server_model, through_fork_server};
use mcp_wirefuzz::learn::surface;
use mcp_wirefuzz::oracle::check;
use mcp_wirefuzz::server::Timeouts;
use mcp_wirefuzz::shrink;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The options of `shrink`.
#[derive(clap::Args)]
pub struct ShrinkArgs {
    /// The case file.
    file: PathBuf,
    /// Write the minimized case here instead of over the file.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Reach the case's server at this HTTP endpoint instead of the case's `url:` (its `command:` still starts
    /// it).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// `--timeout`.
    #[command(flatten)]
    timeout: ReplyTimeout,
    /// How many server runs the minimization may take.
    #[arg(long, default_value_t = 2_000)]
    shrink_budget: usize,
    /// `--no-fork-server`.
    #[command(flatten)]
    fork: ForkServerOption,
}

/// Minimizes the case while its rule still breaks, and writes it over the file (or to `--out`).
pub fn run(args: ShrinkArgs) -> Result<ExitCode> {
    let timeout = args.timeout.duration()?;
    let (file, out, url, budget) = (args.file.as_path(), args.out.as_deref(), args.url.as_deref(), args.shrink_budget);
    end_servers_on_signal()?;
    let mut case = Case::load(file)?;
    if let Some(url) = url {
        case.url = Some(url.to_string());
    }
    let timeouts = Timeouts { reply: timeout, ..Timeouts::default() };
    let (server, _fork_server) = through_fork_server(case.server(), args.fork.allowed(), timeouts, &mut say);
    let judged = match case.eras {
        Some(_) => case.policy(),
        None => case.policy().with_model(server_model(&server, None, timeouts, None)?),
    };
    let mut target = server.target(timeouts);
    let judged = surface::with_learned(judged, target.as_mut())?;
    let rule = match case.expect.first() {
        Some(rule) => rule.clone(),
        None => match check(&target.run(&case.inputs)?, &judged).first() {
            Some(finding) => finding.rule.to_string(),
            None => bail!("{} breaks no rule on {}: nothing to shrink for", file.display(), server.describe()),
        },
    };
    let budget = shrink::Budget { runs: budget, ..Default::default() };
    let Some(minimized) =
        shrink::minimize_finding(target.as_mut(), &case.inputs, &rule, case.trigger.as_deref(), &judged, budget)?
    else {
        bail!("{rule} does not break on {} with {}", server.describe(), file.display());
    };
    let shrunk = Case {
        inputs: minimized.inputs,
        received: minimized.transcript.received().map(<[u8]>::to_vec).collect(),
        ..case.clone()
    };
    let destination = out.unwrap_or(file);
    let dir = destination.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let stem = destination.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "case".into());
    let path = shrunk.save(dir, &stem)?;
    println!("{rule}: {} inputs, minimized to {}; wrote {}", case.inputs.len(), shrunk.inputs.len(), path.display());
    Ok(ExitCode::SUCCESS)
}
