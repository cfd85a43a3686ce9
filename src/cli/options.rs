//! Option groups that several subcommands share, flattened into their arguments (each written once; a subcommand
//! whose help words one differently says so with `mut_arg`), and the checks of duration options.

use anyhow::{Result, anyhow, bail};
use mcp_wirefuzz::oracle::Policy;
use std::time::Duration;

/// `--timeout`'s default: how long a reply from a child server may take, in milliseconds.
pub const REPLY_TIMEOUT_MS: u64 = 2_000;
/// The longest duration any option takes: a year.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);
/// The shortest reply timeout: a smaller `--timeout` is raised to it, with a warning.
const MIN_TIMEOUT: Duration = Duration::from_millis(10);

/// `--timeout`: how long a reply from a child server may take.
#[derive(clap::Args)]
pub struct ReplyTimeout {
    /// How long a reply from a child server may take, in milliseconds (default 2000).
    #[arg(long, value_name = "MS")]
    pub timeout: Option<u64>,
}

impl ReplyTimeout {
    /// The timeout, checked by [`timeout_option`].
    pub fn duration(&self) -> Result<Duration> {
        timeout_option("--timeout", self.millis())
    }

    /// The timeout in milliseconds: given, or the default.
    pub fn millis(&self) -> u64 {
        self.timeout.unwrap_or(REPLY_TIMEOUT_MS)
    }

    /// True when `--timeout` was given: the timeout is pinned, not adapted to the server's measured reply time.
    pub fn pinned(&self) -> bool {
        self.timeout.is_some()
    }
}

/// `--eras`: the server model stated instead of probed.
#[derive(clap::Args)]
pub struct ErasOption {
    /// The eras the server serves (handshake, modern, dual), instead of probing it at the start of the run.
    #[arg(long, value_name = "ERAS")]
    pub eras: Option<String>,
}

/// `--sdk`: the SDK the server is written with.
#[derive(clap::Args)]
pub struct SdkOption {
    /// The SDK the server is written with (rmcp, ts-sdk, ts-server, python, go-sdk): findings that match one of its known
    /// deviations are reported apart, with their upstream reference, and do not fail the run. Without it, the SDK is
    /// detected where a fingerprint is certain; `none` turns detection off.
    #[arg(long, value_name = "NAME")]
    pub sdk: Option<String>,
}

/// `--no-fork-server`: a Python program runs as plain processes.
#[derive(clap::Args)]
pub struct ForkServerOption {
    /// Run a Python server (an interpreter with a script or `-m module`, or a script whose shebang names one, as
    /// console scripts have) as a plain process per conversation, not through the fork server the harness starts
    /// for it.
    #[arg(long)]
    pub no_fork_server: bool,
}

impl ForkServerOption {
    /// Whether a Python program may run through a fork server (the library's `fork_server`).
    pub fn allowed(&self) -> bool {
        !self.no_fork_server
    }
}

/// The `--eras`, `--sdk`, `--profile`, `--allow` and `--deny` options.
#[derive(clap::Args)]
pub struct RuleOptions {
    /// `--eras`.
    #[command(flatten)]
    pub eras: ErasOption,
    /// `--sdk`.
    #[command(flatten)]
    pub sdk: SdkOption,
    /// Turn on a profile's rules (spec, strict-jsonrpc, mcp-python-2.3.0; `mcp-wirefuzz invariants` lists them);
    /// repeatable.
    #[arg(long, value_name = "NAME")]
    pub profile: Vec<String>,
    /// Turn a rule off (a policy the server legitimately differs on); repeatable.
    #[arg(long, value_name = "RULE")]
    pub allow: Vec<String>,
    /// Turn a rule on (e.g. JSONRPC-MALFORMED-REPLY for strict JSON-RPC); repeatable.
    #[arg(long, value_name = "RULE")]
    pub deny: Vec<String>,
}

impl RuleOptions {
    /// `base` with the command line's profiles, then its `--allow` rules turned off and `--deny` rules turned on.
    pub fn policy(&self, base: Policy) -> Result<Policy> {
        let mut policy = base;
        for name in &self.profile {
            policy = policy.with_profile(name).map_err(|e| anyhow!("--profile: {e}"))?;
        }
        for rule in &self.allow {
            policy = policy.allow(rule).map_err(|e| anyhow!("--allow: {e}"))?;
        }
        for rule in &self.deny {
            policy = policy.deny(rule).map_err(|e| anyhow!("--deny: {e}"))?;
        }
        Ok(policy)
    }
}

/// A duration option given in seconds: a positive number no larger than [`MAX_DURATION`].
pub fn seconds_option(name: &str, secs: f64) -> Result<Duration> {
    match Duration::try_from_secs_f64(secs) {
        Ok(duration) if !duration.is_zero() && duration <= MAX_DURATION => Ok(duration),
        _ => bail!(
            "{name} must be a number of seconds above 0 and at most {} (a year), not {secs}",
            MAX_DURATION.as_secs()
        ),
    }
}

/// `--shrink-time`: whole seconds, from 1 to [`MAX_DURATION`].
pub fn shrink_time_option(secs: u64) -> Result<Duration> {
    if !(1..=MAX_DURATION.as_secs()).contains(&secs) {
        bail!("--shrink-time must be between 1 and {} seconds (a year), not {secs}", MAX_DURATION.as_secs());
    }
    Ok(Duration::from_secs(secs))
}

/// `--seed`, or one drawn from the clock when it is not given (every run prints its seed).
pub fn seed_or_clock(seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    })
}

/// A duration option given in milliseconds: at most [`MAX_DURATION`].
pub fn millis_option(name: &str, ms: u64) -> Result<Duration> {
    let duration = Duration::from_millis(ms);
    if duration > MAX_DURATION {
        bail!("{name} must be at most {} ms (a year), not {ms}", MAX_DURATION.as_millis());
    }
    Ok(duration)
}

/// A reply timeout option: at most a year, raised to [`MIN_TIMEOUT`] with a warning (a reply cannot come in 0 ms,
/// and every request would count as unanswered).
pub fn timeout_option(name: &str, ms: u64) -> Result<Duration> {
    let timeout = millis_option(name, ms)?;
    if timeout < MIN_TIMEOUT {
        eprintln!(
            "mcp-wirefuzz: warning: {name} {ms} is too short for any reply; using {} ms",
            MIN_TIMEOUT.as_millis()
        );
    }
    Ok(timeout.max(MIN_TIMEOUT))
}
