#!/usr/bin/env bash
# Hand probes behind the verdict tables in tests/servers/node/README.md: each probe is a fresh server process fed
# the lines shown, one line per write (GAP seconds apart, default 0.3), stdin then held open HOLD seconds (default
# 3) and closed. Prints what was sent (>), every line received (<), the last line of stderr (!) and the exit status.
# Usage: tests/servers/node/probe.sh SERVER [PROBE...]   SERVER: v1 v2 ev rm py (all probes when none is named)
#   v1: tests/servers/node/ts-v1 (@modelcontextprotocol/sdk 1.32.2)    v2: tests/servers/node/ts-v2 (server 2.4.0)
#   ev: server-everything 2026.8.31    rm: tests/servers/rmcp-calc (rmcp 3.11.0)    py: tests/servers/calc.py (mcp 2.3.0)
# Needs .ci/node-servers, .ci/python-venv, and for rm `cargo build --release` in tests/servers/rmcp-calc.
set -uo pipefail
cd "$(dirname "$0")/../../.."
HOLD=${HOLD:-3}
GAP=${GAP:-0.3}

case ${1:-} in
v1) SERVER=(node tests/servers/node/ts-v1/calc_server_v1.mjs) ;;
v2) SERVER=(node tests/servers/node/ts-v2/calc_server_v2.mjs) ;;
ev) SERVER=(node tests/servers/node/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio) ;;
rm) SERVER=(tests/servers/rmcp-calc/target/release/rmcp-calc) ;;
py) SERVER=(.venv/bin/python tests/servers/calc.py) ;;
*)
    sed -n '2,8p' "$0" >&2
    exit 2
    ;;
esac
shift

ENV='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
init() { # init ID VERSION [EXTRA-PARAMS]
    printf '{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"probe","version":"1"}%s}}' "$1" "$2" "${3:-}"
}
INIT=$(init 1 2025-11-25)
INITD='{"jsonrpc":"2.0","method":"notifications/initialized"}'
PING='{"jsonrpc":"2.0","id":99,"method":"ping"}'
DISCOVER="{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"server/discover\",\"params\":{$ENV}}"
CANCEL='{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
CALL="{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2},$ENV}}"
FUTURE='{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}'

probe() {
    local name=$1
    shift
    echo "## $name"
    local line
    for line in "$@"; do
        if ((${#line} > 200)); then echo "> ${line:0:80}… (${#line} bytes)"; else echo "> $line"; fi
    done
    local err
    err=$(mktemp)
    local start=$SECONDS
    {
        for line in "$@"; do
            printf '%s\n' "$line"
            sleep "$GAP"
        done
        sleep "$HOLD"
    } 2>/dev/null | "${SERVER[@]}" 2>"$err" | sed 's/^/< /'
    local status=${PIPESTATUS[1]}
    [[ -s $err ]] && echo "! $(tail -n 1 "$err" | cut -c 1-200)"
    echo "  (exit $status after $((SECONDS - start)) s)"
    rm -f "$err"
}

ALL=(meta-string-initialize meta-null-initialize meta-string-ping meta-null-ping big-id batch-2025-03-26
    batch-2025-06-18 initialize-no-params notification-first-then-discover discover-first
    notification-first-then-future-version future-version-first discover-notification-then-call
    discover-then-call reinitialize-then-ping notification-invalid-params line-over-10-mib)

run() {
    case $1 in
    meta-string-initialize) probe "$1" "$(init 1 2025-11-25 ',"_meta":"2026-07-28"')" "$PING" ;;
    meta-null-initialize) probe "$1" "$(init 1 2025-11-25 ',"_meta":null')" "$PING" ;;
    meta-string-ping) probe "$1" "$INIT" "$INITD" '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":"x"}}' "$PING" ;;
    meta-null-ping) probe "$1" "$INIT" "$INITD" '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":null}}' "$PING" ;;
    big-id) probe "$1" "$INIT" "$INITD" '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}' \
        '{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}' ;;
    batch-2025-03-26) probe "$1" "$(init 1 2025-03-26)" "$INITD" \
        '[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]' "$PING" ;;
    batch-2025-06-18) probe "$1" "$(init 1 2025-06-18)" "$INITD" \
        '[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"}]' "$PING" ;;
    initialize-no-params) probe "$1" '{"jsonrpc":"2.0","id":1,"method":"initialize"}' "$PING" ;;
    notification-first-then-discover) probe "$1" "$CANCEL" "$DISCOVER" ;;
    discover-first) probe "$1" "$DISCOVER" ;;
    notification-first-then-future-version) probe "$1" "$CANCEL" "$FUTURE" ;;
    future-version-first) probe "$1" "$FUTURE" ;;
    discover-notification-then-call) probe "$1" "${DISCOVER/\"id\":2/\"id\":1}" \
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}}' "$CALL" ;;
    discover-then-call) probe "$1" "${DISCOVER/\"id\":2/\"id\":1}" "$CALL" ;;
    reinitialize-then-ping) probe "$1" "$(init 1 2024-11-05)" "$INITD" "$(init 2 2026-07-28)" \
        '{"jsonrpc":"2.0","id":3,"method":"ping"}' ;;
    notification-invalid-params) probe "$1" "$INIT" "$INITD" '{"jsonrpc":"2.0","method":"prompts/list","params":{"_meta":""}}' \
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}' "$PING" ;;
    line-over-10-mib)
        local big
        big=$(head -c 11000000 /dev/zero | tr '\0' a)
        probe "$1" "$INIT" "$INITD" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":\"$big\"}}" "$PING"
        ;;
    *)
        echo "unknown probe $1 (known: ${ALL[*]})" >&2
        exit 2
        ;;
    esac
}

if (($# == 0)); then
    set -- "${ALL[@]}"
fi
for name in "$@"; do run "$name"; done
