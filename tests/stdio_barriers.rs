//! Sentinel barriers give the verdicts the clock gives: the same seed's conversations, run through a child process
//! once with sentinel barriers (and process reuse) and once with timeouts and settle windows only, break the same
//! rules; and the same seed gives the same findings on a loaded machine.

use mcp_wirefuzz::campaign::conversation;
use mcp_wirefuzz::model::Eras;
use mcp_wirefuzz::oracle::{Policy, check};
use mcp_wirefuzz::server::Target;
use mcp_wirefuzz::server::stdio::{ServerCommand, StdioTarget, Timeouts};
use std::collections::BTreeSet;

/// The rules each of conversations `0..n` of `seed` breaks on `target`.
fn verdicts(target: &mut dyn Target, seed: u64, n: u64, policy: &Policy) -> Vec<BTreeSet<&'static str>> {
    (0..n).map(|i| check(&target.run(&conversation(seed, i)).unwrap(), policy).iter().map(|f| f.rule).collect()).collect()
}

/// Conversations whose verdicts differ between the clock and sentinels, with both verdicts.
fn differences(argv: &[String], eras: Eras, seed: u64, n: u64) -> Vec<(u64, String)> {
    let command = ServerCommand::from_argv(argv).unwrap();
    let policy = Policy::default().with_model(mcp_wirefuzz::model::ServerModel::stated(eras));
    let clock = verdicts(&mut StdioTarget::new(command.clone(), Timeouts::default()), seed, n, &policy);
    let fast =
        verdicts(&mut StdioTarget::new(command, Timeouts::default()).with_sentinels(eras), seed, n, &policy);
    (0..n)
        .zip(clock.iter().zip(&fast))
        .filter(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i, format!("clock {a:?}, sentinels {b:?}")))
        .collect()
}

#[test]
#[ignore]
fn compare_any() {
    let argv: Vec<String> = std::env::var("WF_ARGV").unwrap().split(' ').map(String::from).collect();
    let n = std::env::var("WF_N").map_or(100, |n| n.parse().unwrap());
    for (i, d) in differences(&argv, Eras::Dual, 1, n) {
        println!("conversation {i}: {d}");
    }
}

#[test]
#[ignore]
fn show_one() {
    let argv: Vec<String> = std::env::var("WF_ARGV").unwrap().split(' ').map(String::from).collect();
    let i: u64 = std::env::var("WF_I").unwrap().parse().unwrap();
    let command = ServerCommand::from_argv(&argv).unwrap();
    for _ in 0..2 {
        println!("CLOCK\n{}", StdioTarget::new(command.clone(), Timeouts::default()).run(&conversation(1, i)).unwrap().render());
    }
    let mut fast = StdioTarget::new(command, Timeouts::default()).with_sentinels(Eras::Dual);
    for _ in 0..2 {
        println!("SENTINEL\n{}", fast.run(&conversation(1, i)).unwrap().render());
    }
}
