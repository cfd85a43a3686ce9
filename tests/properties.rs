//! The property tests of the harness itself: the reference server breaks no rule in generated conversations
//! (256 in the quick tier, 2,000 in the slow tier, `WIREFUZZ_SLOW=1`), and every planted bug is caught within
//! 2,000 with the rule it is meant to break, then shrunk by proptest to a small script that still breaks it.
//!
//! A Rust server author needs none of this: `mcp-wirefuzz init` writes a property test on `harness::property`.

#[path = "common/tier.rs"]
mod tier;

use mcp_wirefuzz::model::ServerModel;
use mcp_wirefuzz::oracle::{Policy, check};
use mcp_wirefuzz::script::{Script, scripts};
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::quirks::{Quirks, Quirky};
use mcp_wirefuzz::server::builtin::reference::{Calc, Planted};
use mcp_wirefuzz::server::{InProcessServer, run_in_process};
use mcp_wirefuzz::surface::Surface;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};

/// The rules `script` breaks on `server`, with the transcript for the failure message.
fn broken_rules<S: InProcessServer>(server: &S, script: &Script, policy: &Policy) -> (Vec<&'static str>, String) {
    let surface = policy.surface().cloned().unwrap_or_else(Surface::built_in);
    let transcript = run_in_process(server, &script.encode_on(&surface));
    let findings = check(&transcript, policy);
    let rules = findings.iter().map(|f| f.rule).collect();
    let report = findings.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
    (rules, format!("{report}\n{}", transcript.render()))
}

/// The built-in server's model and surface.
fn surface_policy() -> Policy {
    Policy::default().with_model(ServerModel::built_in()).with_surface(Surface::built_in())
}

/// Conversations per property: a contributor's `cargo test` runs a modest number, the slow tier the full count.
fn cases() -> u32 {
    if tier::asked() { 2_000 } else { 256 }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn the_reference_server_breaks_no_rule(script in scripts()) {
        mcp_wirefuzz::conforms(&Calc, &script).map_err(TestCaseError::fail)?;
    }

    /// Legal but unusual behaviour is never a finding: replies out of order and late, cancelled requests
    /// answered or not, any member order and whitespace, needless escapes, extra error data.
    #[test]
    fn the_quirky_server_breaks_no_rule(script in scripts(), seed in any::<u64>()) {
        mcp_wirefuzz::conforms(&Quirky::new(seed), &script).map_err(TestCaseError::fail)?;
    }

    /// With the built-in server's model and surface, the surface rules judge every tool call, prompt get, resource
    /// read and list: the reference server breaks none.
    #[test]
    fn the_reference_server_breaks_no_surface_rule(script in scripts()) {
        mcp_wirefuzz::conforms_under(&Calc, &script, &surface_policy()).map_err(TestCaseError::fail)?;
    }

    /// The quirky server under the surface rules too.
    #[test]
    fn the_quirky_server_breaks_no_surface_rule(script in scripts(), seed in any::<u64>()) {
        mcp_wirefuzz::conforms_under(&Quirky::new(seed), &script, &surface_policy()).map_err(TestCaseError::fail)?;
    }

    /// The quirks of a reply's bytes alone (replies in order, none dropped).
    #[test]
    fn the_quirky_server_in_order_breaks_no_rule(script in scripts(), seed in any::<u64>()) {
        let server = Quirky { seed, quirks: Quirks::BYTES };
        mcp_wirefuzz::conforms(&server, &script).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn every_planted_bug_is_caught_and_shrunk() {
    for mutant in Mutant::ALL {
        let config = Config { cases: 2_000, failure_persistence: None, ..Config::default() };
        let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut runner = TestRunner::new_with_rng(config, rng);
        let expected = mutant.expected_rule();
        let outcome = runner.run(&scripts(), |script| {
            let (rules, _) = broken_rules(&Planted(mutant), &script, &mutant.policy());
            prop_assert!(!rules.contains(&expected));
            Ok(())
        });
        match outcome {
            Err(TestError::Fail(_, minimal)) => {
                let (rules, report) = broken_rules(&Planted(mutant), &minimal, &mutant.policy());
                assert!(rules.contains(&expected), "{mutant}: the shrunk script no longer breaks {expected}\n{report}");
                let frames = minimal.encode_on(&mcp_wirefuzz::fuzz_targets::planted_surface(mutant)).len();
                assert!(frames <= 8, "{mutant}: shrunk to {frames} inputs, expected a small script\n{report}");
                let (clean, report) = broken_rules(&Calc, &minimal, &mutant.policy());
                assert!(clean.is_empty(), "{mutant}: the clean server breaks rules on the shrunk script\n{report}");
                let refusal = mcp_wirefuzz::conforms_under(&Planted(mutant), &minimal, &mutant.policy()).unwrap_err();
                assert!(refusal.contains(expected), "{mutant}: conforms() does not name {expected}: {refusal}");
            }
            Err(other) => panic!("{mutant}: {other}"),
            Ok(()) => panic!("{mutant}: not caught in 2,000 scripts (expected {expected})"),
        }
    }
}
