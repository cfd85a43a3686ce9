#!/usr/bin/env python3
"""Hostile stdio servers for the harness's own tests (Python standard library only).

Usage: server.py MODE TAG, where TAG only marks the processes of one test (so it can look for leftovers).

Modes:
  silent      reads its input, never answers, ignores SIGTERM and never exits on end of input
  grandchild  answers every request, but first starts a grandchild that ignores SIGTERM and holds stdout open
  stop        answers the first request, then stops itself (SIGSTOP)
  garbage     answers every line with binary garbage
  endless     answers the first line with a line that never ends
  flood       writes 100,000 notifications before each reply
  exit        exits at once with code 3
  outlive     answers initialize, ping, tools/list (one tool, `echo`) and tools/call as a server should, -32601 to any
              other request, but never exits on end of input (as the Python SDK `mcp` 1.6.0 does)
"""

import json
import os
import signal
import subprocess
import sys
import time

out = sys.stdout.buffer


def reply(line):
    """The `{}` result to a request line, or None for anything else."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if isinstance(message, dict) and "method" in message and "id" in message:
        return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode() + b"\n"
    return None


def outlive_reply(line):
    """The answer of the `outlive` mode to a request line, or None for anything else."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    method, params = message["method"], message.get("params")
    params = params if isinstance(params, dict) else {}
    answer = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize":
        answer["result"] = {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "outlive", "version": "1"},
        }
    elif method == "ping":
        answer["result"] = {}
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        answer["result"] = {"tools": [{"name": "echo", "inputSchema": schema}]}
    elif method == "tools/call":
        text = json.dumps((params.get("arguments") or {}))
        answer["result"] = {"content": [{"type": "text", "text": text}]}
    else:
        answer["error"] = {"code": -32601, "message": "Method not found"}
    return json.dumps(answer).encode() + b"\n"


def forever():
    while True:
        time.sleep(3600)


def main():
    mode = sys.argv[1]
    if mode == "exit":
        sys.exit(3)
    if mode == "sleeper":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        forever()
    if mode == "silent":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for _ in sys.stdin.buffer:
            pass
        forever()
    if mode == "outlive":
        for line in sys.stdin.buffer:
            answer = outlive_reply(line)
            if answer is not None:
                out.write(answer)
                out.flush()
        forever()
    if mode == "grandchild":
        subprocess.Popen([sys.executable, __file__, "sleeper", sys.argv[2]], stdin=subprocess.DEVNULL)
    answered = 0
    for line in sys.stdin.buffer:
        if mode == "garbage":
            out.write(os.urandom(64).replace(b"\n", b"\x00") + b"\n")
            out.flush()
            continue
        if mode == "endless":
            chunk = b"x" * 65536
            while True:
                out.write(chunk)
        answer = reply(line)
        if answer is None:
            continue
        if mode == "flood":
            note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n'
            out.write(note * 100_000)
        out.write(answer)
        out.flush()
        answered += 1
        if mode == "stop" and answered == 1:
            os.kill(os.getpid(), signal.SIGSTOP)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.exit(0)
