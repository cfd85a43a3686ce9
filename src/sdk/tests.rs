//! The SDK tables: every deviation names a rule of the catalogue, and findings are told apart by their shape.

use super::*;

#[test]
fn every_deviation_names_a_rule_of_the_catalogue() {
    for sdk in SDKS {
        for deviation in sdk.deviations {
            assert!(crate::oracle::rule(deviation.rule).is_some(), "{}: {}", sdk.name, deviation.rule);
            assert!(!deviation.reference.is_empty() && !deviation.what.is_empty());
        }
        assert_eq!(by_name(sdk.name), Ok(sdk));
        assert_eq!(by_name(sdk.package), Ok(sdk));
    }
    assert!(by_name("nope").unwrap_err().contains("rmcp"));
}
