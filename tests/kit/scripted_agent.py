#!/usr/bin/env python3
"""A stand-in agent for the `acpgen inspect` tests (standard library only).

    python scripted_agent.py RECEIVED_FILE SENT_FILE [die]

Everything it reads from stdin is appended to RECEIVED_FILE, byte for byte; everything it writes
to stdout is appended to SENT_FILE. It answers initialize, session/new and session/prompt with
canned messages that carry injected violations (a number where text belongs, an unknown stop
reason), plus a line that is not JSON, a 3 MiB line, bytes that are not UTF-8 and stderr output.
It exits with status 3 at the end of its input, or right after its first line with `die`."""

from __future__ import annotations

import json
import sys

received_path, sent_path = sys.argv[1], sys.argv[2]
die = len(sys.argv) > 3 and sys.argv[3] == "die"


def emit(data: bytes) -> None:
    with open(sent_path, "ab") as sent:
        sent.write(data)
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def message(value: dict[str, object]) -> None:
    emit(json.dumps(value).encode() + b"\n")


for raw in sys.stdin.buffer:
    with open(received_path, "ab") as received:
        received.write(raw)
    if die:
        sys.stderr.write("scripted agent: dying\n")
        sys.exit(5)
    try:
        request = json.loads(raw)
    except ValueError:
        continue
    if not isinstance(request, dict):
        continue
    method, request_id = request.get("method"), request.get("id")
    if method == "initialize":
        sys.stderr.buffer.write(b"scripted agent: log line on stderr\n")
        sys.stderr.flush()
        emit(b"Starting scripted agent...\n")  # noise on stdout
        message({"jsonrpc": "2.0", "id": request_id, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        message({"jsonrpc": "2.0", "id": request_id, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        message({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 42}}}})
        big = "y" * (3 * 1024 * 1024)
        message({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": big}}}})
        emit(b"\xff\xfe not utf-8\n")
        message({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "finished"}})
emit(b'{"jsonrpc":"2.0","method":"session/update"')  # a last line without its newline
sys.exit(3)
