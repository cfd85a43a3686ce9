//! No process and no thread outlives its conversation: after conversations with hostile servers (a grandchild
//! holding stdout, deaf to SIGTERM, stopped, an endless line, an exit at once), the harness has as many threads as
//! before and none of their processes runs. One test in its own binary, so no other test's threads are counted.

#[path = "hostile/common.rs"]
mod common;

use mcp_wirefuzz::server::transport::stdio::StdioTarget;
use mcp_wirefuzz::server::{ServerCommand, Target, Timeouts};
use mcp_wirefuzz::transcript::Input;
use std::time::{Duration, Instant};

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn no_process_or_thread_outlives_its_conversation() {
    let before = threads();
    let timeouts = Timeouts {
        reply: Duration::from_millis(300),
        startup: Duration::from_millis(300),
        shutdown: Duration::from_millis(300),
        ..Timeouts::default()
    };
    let ping = |id: u32| Input::Line(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).into_bytes());
    let inputs = [ping(1), Input::Sync, ping(2), Input::Sync];
    for mode in ["grandchild", "silent", "stop", "endless", "exit", "garbage"] {
        let tag = common::tag(mode);
        let command = ServerCommand::from_argv(&common::server(mode, &tag)).unwrap();
        // Warm: a spare process is started beside each conversation, and ended with the target.
        let mut target = StdioTarget::new(command, timeouts);
        for _ in 0..2 {
            target.run(&inputs).unwrap();
        }
        drop(target);
        let left = common::left_behind(&tag);
        assert!(left.is_empty(), "{mode}: left behind: {left:?}");
        let until = Instant::now() + Duration::from_secs(1);
        while threads() > before && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(threads(), before, "{mode}: threads left running");
    }
}
