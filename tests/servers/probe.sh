#!/usr/bin/env bash
# Probe tests/servers/calc.py (mcp 2.3.0) on the wire: each case is a fresh process fed some lines, stdin held
# open HOLD seconds (default 3; start-up alone takes about 1.3 s, and the SDK drops replies still in flight at EOF)
# then closed. Prints what was sent (>) and received (<). The table in README.md beside this file comes from it.
# Usage: tests/servers/probe.sh   (HOLD=0 tests/servers/probe.sh shows the replies lost to an immediate EOF)
set -uo pipefail
cd "$(dirname "$0")/../.."
HOLD=${HOLD:-3}
SERVER=(.venv/bin/python tests/servers/calc.py)

ENV='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}'
INITD='{"jsonrpc":"2.0","method":"notifications/initialized"}'
PING='{"jsonrpc":"2.0","id":99,"method":"ping"}'

probe() {
    local name=$1
    shift
    echo "## $name"
    printf '> %s\n' "$@"
    { printf '%s\n' "$@"; sleep "$HOLD"; } | "${SERVER[@]}" 2>/dev/null | sed 's/^/< /'
    echo "  (exit ${PIPESTATUS[1]})"
}

probe "not JSON" '{not json' "$PING"
probe "empty line" '' "$PING"
probe "[]" '[]' "$PING"
probe "batch of one request" '[{"jsonrpc":"2.0","id":1,"method":"ping"}]' "$PING"
probe "jsonrpc 1.0" '{"jsonrpc":"1.0","id":1,"method":"ping"}' "$PING"
for id in null 1.5 true '"é"' 12345678901234567890123 -1; do
    probe "id $id" "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"ping\"}" "$PING"
done
probe "notification (unknown, before any request)" '{"jsonrpc":"2.0","method":"notifications/whatever"}' "$PING"
probe "notification (initialized, after initialize)" "$INIT" "$INITD" "$PING"
probe "params null (ping, tools/list)" '{"jsonrpc":"2.0","id":5,"method":"ping","params":null}' "$INIT" \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":null}'
probe "unknown method, handshake era" "$INIT" "$INITD" '{"jsonrpc":"2.0","id":2,"method":"nope/nope"}'
probe "unknown method, modern era" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope/nope\",\"params\":{$ENV}}" \
    '{"jsonrpc":"2.0","id":2,"method":"nope/nope"}'
probe "ping before initialize, then a served method" "$PING" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
probe "initialize twice" "$INIT" "$INITD" \
    '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}'
probe "enveloped request after the handshake" "$INIT" "$INITD" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{$ENV}}"
probe "initialize after a modern request" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{$ENV}}" \
    "${INIT/\"id\":1/\"id\":2}"
probe "modern, clientCapabilities missing" \
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
probe "modern, version 2030-01-01" \
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}'
probe "modern, version 20260728 (a number)" \
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}' \
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{$ENV}}"
probe "tools/call a=\"1\", modern" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":\"1\",\"b\":2},$ENV}}"
probe "tools/call a=\"x\", modern" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":\"x\",\"b\":2},$ENV}}"
probe "tools/call a=\"1\", handshake era" "$INIT" "$INITD" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":"1","b":2}}}'
probe "tools/call unknown tool, modern" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\",\"arguments\":{},$ENV}}"
probe "tools/call unknown tool, handshake era" "$INIT" "$INITD" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}'
