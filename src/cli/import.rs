//! `mcp-wirefuzz import`: a libFuzzer artifact turned into a minimized case file.

use super::server::server_spec;
use anyhow::{Context, Result, bail};
use mcp_wirefuzz::case::Case;
use mcp_wirefuzz::fuzz_targets::FuzzTarget;
use mcp_wirefuzz::model::ServerModel;
use mcp_wirefuzz::oracle::{Policy, check};
use mcp_wirefuzz::server::{ServerSpec, Timeouts};
use mcp_wirefuzz::shrink;
use mcp_wirefuzz::transcript::Input;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The options of `import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// The artifact.
    artifact: PathBuf,
    /// The fuzz target that wrote it (default: the folder it sits in).
    #[arg(long, value_name = "TARGET")]
    target: Option<String>,
    /// For `mutant` artifacts found with WIREFUZZ_MUTANT set: the planted bug it pinned.
    #[arg(long, value_name = "NAME")]
    mutant: Option<String>,
    /// Where the case file goes.
    #[arg(long, value_name = "DIR", default_value = "corpus/regressions")]
    out: PathBuf,
    /// The case file's name (default: the rule and the artifact's name).
    #[arg(long)]
    name: Option<String>,
    /// How many server runs the minimization may take.
    #[arg(long, default_value_t = 2_000)]
    shrink_budget: usize,
}

/// Replays the artifact's conversation and, when it breaks a rule, writes it minimized as a case file (exit 1).
pub fn run(args: ImportArgs) -> Result<ExitCode> {
    let (artifact, target, mutant) = (args.artifact.as_path(), args.target.as_deref(), args.mutant.as_deref());
    let (out, name, budget) = (args.out.as_path(), args.name.as_deref(), args.shrink_budget);
    let target_name = match target {
        Some(name) => name.to_string(),
        None => artifact
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .context("cannot tell the fuzz target from the artifact's folder; give --target")?,
    };
    let Some(fuzz_target) = FuzzTarget::from_name(&target_name) else {
        bail!("unknown fuzz target `{target_name}` (conversation, mutant, server_lines or oracle)");
    };
    let data = std::fs::read(artifact).with_context(|| format!("cannot read {}", artifact.display()))?;
    let Some((mut server, inputs)) = fuzz_target.decode(&data) else {
        bail!("an `oracle` artifact is a transcript, not a conversation: there is nothing to replay");
    };
    if let Some(pinned) = mutant {
        server = server_spec(Some(pinned), None, &[])?;
    }
    import_inputs(artifact, &server, &inputs, out, name.map(str::to_string), budget)
}

/// Checks `inputs` on `server` and writes the first finding (the planted bug's own first), minimized, into `out`.
fn import_inputs(
    artifact: &Path,
    server: &ServerSpec,
    inputs: &[Input],
    out: &Path,
    name: Option<String>,
    budget: usize,
) -> Result<ExitCode> {
    let judged = match server {
        ServerSpec::Mutant(mutant) => mutant.policy(),
        ServerSpec::BuiltIn => Policy::default().with_model(ServerModel::built_in()),
        ServerSpec::Command(_) | ServerSpec::Http(_) => Policy::default(),
    };
    let mut target = server.target(Timeouts::default());
    let transcript = target.run(inputs)?;
    let findings = check(&transcript, &judged);
    let rule = match server.mutant() {
        Some(mutant) if findings.iter().any(|f| f.rule == mutant.expected_rule()) => mutant.expected_rule(),
        _ => match findings.first() {
            Some(finding) => finding.rule,
            None => {
                println!("{} breaks no rule on {}: nothing to import", artifact.display(), server.describe());
                return Ok(ExitCode::SUCCESS);
            }
        },
    };
    let budget = shrink::Budget { runs: budget, ..Default::default() };
    let minimized = shrink::minimize_finding(target.as_mut(), inputs, rule, None, &judged, budget)?
        .context("the finding did not reproduce")?;
    let case = Case::for_finding(&minimized.inputs, &minimized.transcript, &minimized.finding, server, &judged);
    let stem = artifact.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = name.unwrap_or_else(|| format!("{}-{}", rule.to_lowercase(), stem.chars().take(20).collect::<String>()));
    let path = case.save(out, &name)?;
    let frames = case.inputs.iter().filter(|i| matches!(i, Input::Line(_))).count();
    println!("{rule} on {}: {} frames, minimized to {frames}", server.describe(), inputs.len());
    println!(
        "wrote {}
replay: mcp-wirefuzz replay {}",
        path.display(),
        path.display()
    );
    Ok(ExitCode::from(1))
}
