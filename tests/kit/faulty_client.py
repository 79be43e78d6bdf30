#!/usr/bin/env python3
"""A small ACP v1 client written at the JSON-RPC level (standard library only) with one fault
switched on, for `acpgen conform client` to catch. Without a fault it follows the rules.

    python faulty_client.py [--fault NAME] [--cancel] AGENT_CMD [ARGS...]

It starts the agent, initializes (advertising fs read and write), opens a session in its cwd,
sends one text prompt and answers the agent's requests until the prompt's result arrives; with
--cancel it sends session/cancel after the first session/update."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

FAULTS = {
    "no_initialize": "opens a session without initializing",
    "relative_cwd": "session/new with a relative cwd",
    "image_prompt": "sends an image block the agent did not advertise",
    "wrong_option": "selects a permission option that was not offered",
    "bad_permission_shape": "answers a permission request with a malformed outcome",
    "no_method_not_found": "answers unknown methods with an empty result",
    "dies_on_unknown_variant": "exits on an unknown session/update variant",
    "dies_on_unknown_field": "exits on an update with a field it does not know",
    "line_limit_64k": "gives up on lines longer than 64 KiB (asyncio's default limit)",
    "allows_after_cancel": "answers a pending permission request with allow after cancelling",
    "stdin_noise": "writes a banner to the agent's stdin",
    "ignores_unknown_methods": "never answers a method it does not know (no -32601), but keeps working",
    "cancelled_without_cancel": "answers a permission request cancelled though it never cancelled the turn",
    "answers_notifications": "answers every notification with an error carrying id \"\" (as chuk-acp does)",
    "ignores_pending_permission": "never answers the permission request pending when it cancelled",
    "never_ends_cancelled_turn": "hangs once its cancelled prompt is answered, never ending",
    "child_holds_stdout": "starts a child that keeps its stdout open (pid written to $FAULTY_CHILD_PID), then hangs",
}
CORRECT_VARIANTS = {
    "refuses_outside_cwd": "refuses fs reads and writes outside the cwd it announced (as acpx does)",
}
"""Behaviours that break no rule but that a careless checker would fail."""
KNOWN_UPDATES = {"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call",
                 "tool_call_update", "plan", "available_commands_update", "current_mode_update"}
KNOWN_UPDATE_KEYS = {"sessionUpdate", "content", "toolCallId", "title", "kind", "status", "_meta"}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fault", default="", choices=["", *FAULTS, *CORRECT_VARIANTS])
    parser.add_argument("--cancel", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    fault = args.fault
    if fault == "child_holds_stdout":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # inherits stdout
        with open(os.environ["FAULTY_CHILD_PID"], "w") as pid_file:
            pid_file.write(str(child.pid))
        time.sleep(600)
    agent = subprocess.Popen(args.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    lock = threading.Lock()
    pending: dict[int, threading.Event] = {}
    results: dict[int, object] = {}
    state = {"cancelled": False, "session": None}

    def send(message: dict[str, object]) -> None:
        with lock:
            agent.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
            agent.stdin.flush()  # type: ignore[union-attr]

    def answer(request_id: object, result: object = None, error: dict[str, object] | None = None) -> None:
        send({"jsonrpc": "2.0", "id": request_id, **({"error": error} if error else {"result": result})})

    def on_request(message: dict[str, object]) -> None:
        method, params = message.get("method"), message.get("params") or {}
        assert isinstance(params, dict)
        if method == "session/request_permission" and state["cancelled"] and fault == "ignores_pending_permission":
            return
        if method == "session/request_permission":
            options = params.get("options") or []
            cancelled = state["cancelled"] and fault != "allows_after_cancel"
            if fault == "bad_permission_shape":
                answer(message["id"], {"outcome": "allow"})
            elif cancelled or fault == "cancelled_without_cancel":
                answer(message["id"], {"outcome": {"outcome": "cancelled"}})
            elif fault == "wrong_option":
                answer(message["id"], {"outcome": {"outcome": "selected", "optionId": "not-offered"}})
            else:
                answer(message["id"], {"outcome": {"outcome": "selected", "optionId": options[0]["optionId"]}})
        elif method in ("fs/read_text_file", "fs/write_text_file") and fault == "refuses_outside_cwd" and not (
                os.path.abspath(str(params.get("path"))).startswith(os.getcwd() + os.sep)):
            answer(message["id"], error={"code": -32002, "message": "Resource not found: outside the cwd"})
        elif method == "fs/read_text_file":
            try:
                answer(message["id"], {"content": Path(str(params["path"])).read_text()})
            except OSError:
                answer(message["id"], error={"code": -32002, "message": "Resource not found"})
        elif method == "fs/write_text_file" or fault == "no_method_not_found":
            answer(message["id"], {})
        elif fault == "ignores_unknown_methods":
            pass
        else:
            answer(message["id"], error={"code": -32601, "message": "Method not found"})

    def on_update(params: dict[str, object]) -> bool:
        update = params.get("update")
        if not isinstance(update, dict):
            return True
        if fault == "dies_on_unknown_variant" and update.get("sessionUpdate") not in KNOWN_UPDATES:
            return False
        if fault == "dies_on_unknown_field" and set(update) - KNOWN_UPDATE_KEYS:
            return False
        if args.cancel and not state["cancelled"]:
            state["cancelled"] = True
            send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": params.get("sessionId")}})
        return True

    def reader() -> None:
        for raw in agent.stdout:  # type: ignore[union-attr]
            if fault == "line_limit_64k" and len(raw) > 65536:
                print("line too long; giving up", file=sys.stderr)
                os._exit(1)
            message = json.loads(raw)
            if "method" in message and "id" in message:
                threading.Thread(target=on_request, args=(message,), daemon=True).start()
            elif "method" in message:
                if fault == "answers_notifications":
                    answer("", error={"code": -32601, "message": "Method not found"})
                if message["method"] == "session/update" and not on_update(message.get("params") or {}):
                    print("unexpected update; giving up", file=sys.stderr)
                    os._exit(1)
            elif isinstance(message.get("id"), int) and message["id"] in pending:
                results[message["id"]] = message
                pending.pop(message["id"]).set()
        for event in list(pending.values()):
            event.set()

    threading.Thread(target=reader, daemon=True).start()
    counter = [0]

    def call(method: str, params: dict[str, object]) -> dict[str, object]:
        counter[0] += 1
        request_id = counter[0]
        event = pending[request_id] = threading.Event()
        send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if not event.wait(60):
            raise SystemExit(f"no answer to {method}")
        reply = results.pop(request_id, None)
        if not isinstance(reply, dict) or "result" not in reply:
            raise SystemExit(f"{method} failed: {reply}")
        return reply["result"]  # type: ignore[return-value]

    if fault == "stdin_noise":
        with lock:
            agent.stdin.write(b"hello agent\n")
            agent.stdin.flush()
    if fault != "no_initialize":
        call("initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}},
                            "clientInfo": {"name": "faulty-client", "version": "0"}})
    cwd = "." if fault == "relative_cwd" else os.getcwd()
    session = call("session/new", {"cwd": cwd, "mcpServers": []})
    prompt: list[dict[str, object]] = [{"type": "text", "text": "hello"}]
    if fault == "image_prompt":
        prompt.append({"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="})
    result = call("session/prompt", {"sessionId": session["sessionId"], "prompt": prompt})
    print(json.dumps(result))
    if fault == "never_ends_cancelled_turn" and state["cancelled"]:
        time.sleep(600)
    agent.stdin.close()
    agent.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
