//! rmcp 3.11.0: the rules it breaks itself, and the policy for a server written with it.

use crate::model::{Eras, ServerModel};
use crate::oracle::Policy;

/// The deviations rmcp 3.11.0 itself has (`tests/servers/rmcp-calc.baseline` in the mcp-wirefuzz repository holds
/// each one's probe and spec line): a handler cannot change them, so a test of your handler allows them.
/// The last two are surface rules (rmcp ignores a cursor it never issued, and answers arguments that are not an
/// object with -32601), judged in-process since the harness learns the server's surface.
pub const DEVIATIONS: [&str; 13] = [
    "SERVER-CRASH",
    "MCP-PING",
    "JSONRPC-NOTIFICATION-REPLY",
    "MCP-BATCH",
    "MCP-UNSUPPORTED-VERSION",
    "MCP-MODERN-SERVER-INFO",
    "MCP-MODERN-REMOVED-METHOD",
    "MCP-HANDSHAKE-NO-RESULT-TYPE",
    "JSONRPC-NULL-ID",
    "JSONRPC-NULL-PARAMS",
    "JSONRPC-RESPONSE-MISSING",
    "MCP-CURSOR-INVALID",
    "MCP-TOOL-INVALID-ARGS",
];

/// The policy for an rmcp server: the default rules without rmcp's own [`DEVIATIONS`], and the server model of an
/// rmcp server (both eras). The [`crate::harness`] entry points still report any panic of your handler (rmcp's
/// `SERVER-CRASH` is a connection it ends on a bad first message); a request left unanswered is not reported
/// (rmcp leaves some unanswered itself).
///
/// ```
/// let policy = mcp_wirefuzz::sdk::rmcp::policy();
/// assert!(!policy.enabled("MCP-BATCH") && policy.enabled("JSONRPC-ID-ECHO"));
/// ```
pub fn policy() -> Policy {
    let base = Policy::default().with_model(ServerModel::stated(Eras::Dual));
    DEVIATIONS.iter().fold(base, |policy, rule| policy.clone().allow(rule).unwrap_or(policy))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_deviation_is_a_rule_of_the_catalogue_and_is_allowed() {
        let policy = super::policy();
        for rule in super::DEVIATIONS {
            assert!(crate::oracle::rule(rule).is_some(), "{rule}");
            assert!(!policy.enabled(rule), "{rule}");
        }
        assert!(policy.enabled("JSONRPC-ID-ECHO"));
    }
}
