#!/usr/bin/env bash
# What mcp-wirefuzz as a dev-dependency costs a Rust server author: the debug test build (`cargo test --no-run`) of a
# small rmcp server (examples/rmcp-server's src/) without and with
# `mcp-wirefuzz = { path, default-features = false, features = ["rmcp"] }` and one property test.
#
#   bash benches/users-crate.sh [RUNS]     # RUNS (default 1) repeats the three builds
#
# Prints, per run: the clean build without the dev-dependency, the dev-dependency added to that built target, and
# the clean build with it; wall time and CPU time (user + sys). Offline: the registry cache must hold the crates
# (a `cargo test` of examples/rmcp-server fetches them). Quote the numbers in docs/src/measured/users-crate.md with
# the machine's load: wall times on a busy machine can be several times these.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/wirefuzz-users-crate.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The server crate, as its author has it: no mcp-wirefuzz.
mkdir -p "$work/server/src" "$work/server/tests"
cp "$repo/examples/rmcp-server/src/lib.rs" "$work/server/src/lib.rs"
sed 's/wirefuzz_example_rmcp/user_server/' "$repo/examples/rmcp-server/src/main.rs" > "$work/server/src/main.rs"
cat > "$work/server/Cargo.toml" <<'EOF'
[package]
name = "user-server"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[features]
planted-bug = []

[dependencies]
rmcp = { version = "=3.11.0", features = ["server", "macros", "transport-io"] }
tokio = { version = "1", features = ["macros", "rt", "io-std"] }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1"
EOF

# The same crate with the dev-dependency and the property test `mcp-wirefuzz init` writes.
with_dev_dependency() {
    cat >> "$1/Cargo.toml" <<EOF

[dev-dependencies]
mcp-wirefuzz = { path = "$repo", default-features = false, features = ["rmcp"] }
EOF
    cat > "$1/tests/wirefuzz.rs" <<'EOF'
use mcp_wirefuzz::sdk::rmcp::policy;
use mcp_wirefuzz::server::rmcp::Rmcp;

#[test]
fn the_server_breaks_no_wirefuzz_rule() {
    mcp_wirefuzz::harness::property_under(&Rmcp(user_server::Calc::default()), &policy(), Default::default());
}
EOF
}

# Builds the tests of the crate in $1, printing "$2: wall W s, CPU C s".
build() {
    local times
    times=$( { TIMEFORMAT='%R %U %S'; time (cd "$1" && cargo test --no-run --offline --quiet >/dev/null 2>&1); } 2>&1 )
    read -r wall user sys <<<"$times"
    printf '%-52s wall %6.1f s, CPU %6.1f s\n' "$2:" "$wall" "$(echo "$user + $sys" | bc)"
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq 1 "$runs"); do
    rm -rf "$work/without" "$work/added" "$work/with"
    cp -r "$work/server" "$work/without"
    cp -r "$work/server" "$work/with"
    with_dev_dependency "$work/with"
    build "$work/without" "run $run, clean, without the dev-dependency"
    cp -r "$work/without" "$work/added"
    with_dev_dependency "$work/added"
    build "$work/added" "run $run, the dev-dependency added to that target"
    build "$work/with" "run $run, clean, with the dev-dependency"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
