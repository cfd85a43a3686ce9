//! The `diff` section: conversations/s of `diff` with the built-in server on both sides (in-process: the cost of
//! running every conversation twice and comparing), and the time to the first confirmed difference of every planted
//! bug against the built-in server, median of seeds 1-3.

use super::{median, rate};
use mcp_wirefuzz::diff::{self, Conversations, Ignore, Options, accepted::Accepted, case::SideSpec};
use mcp_wirefuzz::model::Eras;
use mcp_wirefuzz::server::builtin::mutants::Mutant;
use mcp_wirefuzz::server::builtin::reference::{Calc, Planted};
use mcp_wirefuzz::server::{InProcess, ServerSpec};
use mcp_wirefuzz::shrink::Budget;
use mcp_wirefuzz::surface::Surface;
use std::time::{Duration, Instant};

fn options(seed: u64, mutant: Option<Mutant>) -> Options {
    let b = mutant.map_or(ServerSpec::BuiltIn, ServerSpec::Mutant);
    Options {
        conversations: Conversations::generated(seed, Surface::built_in(), Eras::Dual),
        cases: None,
        time: None,
        stop_after: None,
        ignore: Ignore { patterns: Vec::new(), texts: mutant != Some(Mutant::WrongMissingKey) },
        eras: Some((Eras::Dual, Eras::Dual)),
        out: None,
        shrink: Budget::default(),
        accepted: Accepted::default(),
        sides: (SideSpec::Server(ServerSpec::BuiltIn), SideSpec::Server(b)),
    }
}

pub fn differential() {
    const N: u64 = 20_000;
    const ROUNDS: usize = 5;
    println!("## diff, built-in server against itself in-process, {N} conversations, seed 1");
    let mut rates = Vec::new();
    for _ in 0..ROUNDS {
        let options = Options { cases: Some(N), ..options(1, None) };
        let summary = diff::run(&mut InProcess(Calc), &mut InProcess(Calc), &options, |_| {}).unwrap();
        assert!(summary.found.is_empty(), "the built-in server differs from itself");
        rates.push(rate(summary.conversations, summary.elapsed));
    }
    let text: Vec<String> = rates.iter().map(|r| format!("{r:.0}")).collect();
    println!(
        "| conversations/s (both sides, compared), median of {ROUNDS} | {:.0} ({}) |",
        median(rates),
        text.join(", ")
    );
    println!("## diff, time to the first confirmed difference of each planted bug (minimized), median of seeds 1-3");
    println!("| planted bug | class | seconds |");
    println!("|---|---|---|");
    let mut slowest = 0f64;
    for mutant in Mutant::ALL {
        let mut times = Vec::new();
        let mut class = String::new();
        for seed in 1..=3 {
            let options =
                Options { time: Some(Duration::from_secs(10)), stop_after: Some(1), ..options(seed, Some(mutant)) };
            let began = Instant::now();
            let summary = diff::run(&mut InProcess(Calc), &mut InProcess(Planted(mutant)), &options, |_| {}).unwrap();
            match summary.found.iter().find(|found| found.fails()) {
                Some(found) => {
                    times.push(began.elapsed().as_secs_f64());
                    class = found.divergence.class.to_string();
                }
                None => times.push(f64::INFINITY),
            }
        }
        let time = median(times);
        slowest = slowest.max(time);
        println!("| `{mutant}` | {class} | {time:.3} |");
    }
    println!("   slowest median: {slowest:.3} s");
}
