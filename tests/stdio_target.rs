//! The stdio target sees what the in-process target sees: every mutant's trigger and every seed case, run through
//! `mcp-wirefuzz serve [--mutant NAME]` as a child process, gives the same replies and the same kind of ending.

use mcp_wirefuzz::seeds;
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::reference::{Calc, Planted};
use mcp_wirefuzz::server::transport::stdio::StdioTarget;
use mcp_wirefuzz::server::{InProcessServer, ServerCommand, Target, Timeouts, run_in_process};
use mcp_wirefuzz::transcript::{Ending, Input, Transcript};
use std::mem::discriminant;
use std::time::Duration;

fn serve(mutant: Option<Mutant>) -> StdioTarget {
    let mut argv = vec![env!("CARGO_BIN_EXE_mcp-wirefuzz").to_string(), "serve".into()];
    if let Some(mutant) = mutant {
        argv.extend(["--mutant".into(), mutant.name().into()]);
    }
    // The built-in server's handlers answer at once or never: a call asked again needs no floor of waiting (the
    // planted hangs-on-malformed-answer's re-ask would cost 30 s otherwise).
    let timeouts = Timeouts {
        reply: Duration::from_millis(1500),
        settle: Duration::from_millis(10),
        hang: mcp_wirefuzz::server::hangs::HangWait::Wait(Duration::ZERO),
        ..Timeouts::default()
    };
    StdioTarget::new(ServerCommand::from_argv(&argv).unwrap(), timeouts)
}

fn same_observations(name: &str, stdio: &Transcript, in_process: &Transcript) {
    let lines = |t: &Transcript| t.received().map(<[u8]>::to_vec).collect::<Vec<_>>();
    assert_eq!(lines(stdio), lines(in_process), "{name}: replies differ");
    assert_eq!(discriminant(&stdio.ending), discriminant(&in_process.ending), "{name}: {:?}", stdio.ending);
}

fn check<S: InProcessServer>(name: &str, server: &S, target: &mut StdioTarget, inputs: &[Input]) {
    let stdio = target.run(inputs).unwrap();
    same_observations(name, &stdio, &run_in_process(server, inputs));
}

#[test]
fn every_mutant_trigger_looks_the_same_both_ways() {
    for mutant in Mutant::ALL {
        // Each trigger ends on a sync point, so a line that crashes the server is seen to crash it before its input
        // closes (on a loaded machine the crash came after the close now and then: a close where in-process it is
        // an exit).
        let inputs: Vec<Input> = mutant.trigger().into_iter().map(Input::Line).chain([Input::Sync]).collect();
        check(mutant.name(), &Planted(mutant), &mut serve(Some(mutant)), &inputs);
        check(mutant.name(), &Calc, &mut serve(None), &inputs);
    }
}

#[test]
fn seed_cases_look_the_same_both_ways_on_one_warm_target() {
    let mut target = serve(None);
    for case in seeds::builtin() {
        let inputs: Vec<Input> = case.lines().into_iter().flat_map(|l| [Input::Line(l), Input::Sync]).collect();
        check(&case.name, &Calc, &mut target, &inputs);
    }
}

#[test]
fn a_crash_reports_the_exit_code() {
    let argv = [env!("CARGO_BIN_EXE_mcp-wirefuzz"), "serve", "--mutant", Mutant::CrashOnBatch.name()];
    let command = ServerCommand::from_argv(&argv.map(String::from)).unwrap();
    // The exit may come after the settle time: the harness lingers for it, as replay does for a crash case.
    let timeouts = Timeouts { linger: Duration::from_secs(2), ..Timeouts::default() };
    let stdio = StdioTarget::new(command, timeouts).run(&[Input::Line(b"[]".to_vec())]).unwrap();
    assert!(matches!(stdio.ending, Ending::Exited { code: Some(70), .. }), "{:?}", stdio.ending);
}
