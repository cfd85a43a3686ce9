#!/usr/bin/env bash
# Time to a confirmed, minimized case for an author's own bug, with default options: a handler that never returns
# for one input and a handler that crashes for one input, in the note store of each SDK (tests/servers/author/:
# rmcp-notes, notes.py on the Python SDK; tests/servers/node/ts-v1/notes_v1.mjs on the TypeScript SDK).
#
#   bash benches/author-time.sh [SEED] [STORE ...]     # SEED default 7; STOREs rmcp, python, ts (default: all)
#
# Each run is `NOTES_BUG=BUG mcp-wirefuzz fuzz --time 60 --seed SEED -- SERVER`. Prints one row per run: the seconds
# from the start (learning included) to the first `seen` of the bug's rule, to its confirmation, to its minimized
# case file, the whole run's wall time and its exit code ("-" where a step never came). Run from the repository
# root after `cargo build --release`, .ci/python-venv and .ci/node-servers. Quote the numbers in
# docs/src/measured/speed.md with the machine's load (quiet, or beside a build).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
seed=${1:-7}
shift || true
stores=("${@:-rmcp python ts}")
read -r -a stores <<< "${stores[*]}"
bin="$repo/target/release/mcp-wirefuzz"
work=$(mktemp -d "${TMPDIR:-/tmp}/wirefuzz-author-time.XXXXXX")
trap 'rm -rf "$work"' EXIT
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }

rmcp_notes() {
    local target="$repo/tests/servers/rmcp-calc/target"
    env -u CARGO_TARGET_DIR cargo build --release --quiet \
        --manifest-path "$repo/tests/servers/author/rmcp-notes/Cargo.toml" --target-dir "$target" >&2 || exit 2
    echo "$target/release/rmcp-notes"
}

# One run: the store's name, its bug, the rule the bug breaks, then the server's command.
run() {
    local store=$1 bug=$2 rule=$3
    shift 3
    local log="$work/$store-$bug.log" start
    start=$(date +%s.%N)
    NOTES_BUG=$bug "$bin" fuzz --time 60 --seed "$seed" --out "$work/$store-$bug" -- "$@" 2>&1 |
        while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$log"
    local code=${PIPESTATUS[0]}
    local end
    end=$(date +%s.%N)
    awk -v start="$start" -v end="$end" -v rule="$rule" -v store="$store" -v bug="$bug" -v code="$code" '
        function at(t) { return sprintf("%.1f", t - start) }
        seen == "" && $2 == "seen" && $3 == rule { seen = at($1) }
        confirmed == "" && ($2 == "ERROR" || $2 == "WARNING") && $3 == rule { confirmed = at($1) }
        minimized == "" && $2 == "minimized" && $3 == rule { minimized = at($1) }
        END {
            printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", store, bug, rule, \
                seen == "" ? "-" : seen, confirmed == "" ? "-" : confirmed, minimized == "" ? "-" : minimized, \
                at(end), code
        }' "$log"
}

echo "| store | bug | rule | seen (s) | confirmed (s) | minimized (s) | run (s) | exit |"
echo "|---|---|---|---|---|---|---|---|"
for store in "${stores[@]}"; do
    case $store in
        rmcp)
            notes=$(rmcp_notes)
            run rmcp hang SERVER-HANDLER-HANG "$notes"
            run rmcp panic SERVER-HANDLER-PANIC "$notes"
            ;;
        python)
            python="$repo/.venv/bin/python"
            run python hang SERVER-HANDLER-HANG "$python" "$repo/tests/servers/author/notes.py"
            run python raise SERVER-HANDLER-CRASH "$python" "$repo/tests/servers/author/notes.py"
            ;;
        ts)
            run ts hang SERVER-HANDLER-HANG node "$repo/tests/servers/node/ts-v1/notes_v1.mjs"
            run ts crash SERVER-HANDLER-CRASH node "$repo/tests/servers/node/ts-v1/notes_v1.mjs"
            ;;
        *) echo "unknown store $store (rmcp, python, ts)" >&2; exit 2 ;;
    esac
done
