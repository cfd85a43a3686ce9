//! The shell servers, requests and quick timeouts the stdio transport's tests run against.

use crate::server::{ServerCommand, Timeouts};
use crate::transcript::Input;
use std::time::Duration;

/// A server that is the shell script `script`.
pub(super) fn sh(script: &str) -> ServerCommand {
    ServerCommand::from_argv(&["sh".into(), "-c".into(), script.into()]).unwrap()
}

/// Timeouts short enough for tests on shell servers.
pub(super) fn quick() -> Timeouts {
    Timeouts {
        reply: Duration::from_millis(300),
        settle: Duration::from_millis(10),
        startup: Duration::from_millis(200),
        shutdown: Duration::from_millis(300),
        linger: Duration::ZERO,
        deadline: None,
        adaptive: false,
        hang: crate::server::hangs::HangWait::Wait(Duration::ZERO),
    }
}

/// A `ping` request with `id`.
pub(super) fn request(id: u32) -> Input {
    Input::Line(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).into_bytes())
}

/// A shell server answering every line that carries a string id with an empty result, `script` choosing when:
/// `$id` is the line's id, `reply` writes the answer.
pub(super) fn answering(script: &str) -> ServerCommand {
    sh(&format!(
        r#"reply() {{ printf '{{"jsonrpc":"2.0","id":"%s","result":{{}}}}\n' "$1"; }}
idof() {{ case "$1" in *'"id":"'*) x=${{1#*'"id":"'}}; printf %s "${{x%%\"*}}";; esac; }}
{script}"#
    ))
}

/// An [`answering`] script that answers every line at once, in order.
pub(super) const IN_ORDER: &str = r#"while read -r l; do id=$(idof "$l"); [ -n "$id" ] && reply "$id"; done"#;
