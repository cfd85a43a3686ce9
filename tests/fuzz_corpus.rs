//! The committed seed corpora of the cargo-fuzz targets: up to date with `mcp-wirefuzz corpus`, and every file
//! runs through its target's body as libFuzzer would run it (no nightly needed): clean for `conversation`,
//! `server_lines` and `oracle`, and breaking the planted bug's rule for `mutant` and `mutant_bytes`.

use mcp_wirefuzz::fuzz_targets::{FuzzTarget, pick_mutant, seed_corpus};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn committed(target: FuzzTarget) -> BTreeMap<String, Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus").join(target.name());
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap())
        })
        .collect()
}

#[test]
fn the_committed_corpus_is_what_the_generator_makes() {
    let generated = seed_corpus();
    for target in FuzzTarget::ALL {
        let want: BTreeMap<String, Vec<u8>> =
            generated.iter().filter(|f| f.target == target).map(|f| (f.name.clone(), f.bytes.clone())).collect();
        assert!(!want.is_empty(), "{target}: empty seed corpus");
        assert!(
            committed(target) == want,
            "corpus/{target} is stale or was grown by a fuzz run: regenerate it with `cargo run -- corpus`"
        );
    }
}

#[test]
fn every_corpus_file_runs_as_its_target_expects() {
    for target in FuzzTarget::ALL {
        for (name, bytes) in committed(target) {
            let outcome = target.run(&bytes);
            if matches!(target, FuzzTarget::Mutant | FuzzTarget::MutantBytes) {
                let expected = pick_mutant(&bytes).0.expected_rule();
                let failure = outcome.expect_err(&format!("mutant/{name}: the planted bug was not caught"));
                assert!(failure.rules.contains(&expected), "mutant/{name}: {failure}");
            } else {
                assert!(outcome.is_ok(), "{target}/{name}: {}", outcome.unwrap_err());
            }
        }
    }
}
