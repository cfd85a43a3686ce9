//! The severities of MCP's logging utility (server/utilities/logging.mdx: the RFC 5424 levels), least severe first,
//! so a level's index orders it.

/// The severities of `notifications/message` and `logging/setLevel`, least severe first.
pub const LOG_LEVELS: [&str; 8] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// The index of a level name in [`LOG_LEVELS`]; `None` for a name no version defines.
pub fn level_index(name: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|level| *level == name)
}
