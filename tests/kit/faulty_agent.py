#!/usr/bin/env python3
"""A small ACP v1 agent written at the JSON-RPC level (standard library only) with one fault
switched on by its argument, for `acpgen conform agent` to catch. Without an argument it follows
the rules the kit checks.

    python faulty_agent.py [FAULT]

A turn: one agent_message_chunk, a pause, a session/request_permission, a tool_call_update, then
stopReason end_turn (cancelled after session/cancel or a cancelled permission outcome)."""

from __future__ import annotations

import json
import sys
import threading
import time

FAULTS = {
    "wrong_field_type": "an agent_message_chunk whose text is a number",
    "missing_cancelled": "a cancelled turn ends with end_turn",
    "stdout_noise": "a banner on stdout before the first message",
    "no_method_not_found": "unknown methods are answered with a null result, not -32601",
    "dies_on_bad_line": "exits on a line that is not JSON",
    "answers_notifications": "answers unknown notifications with an error",
    "fs_unadvertised": "reads a file through fs/read_text_file even when the client did not advertise fs",
    "version_echo": "answers initialize with whatever version was asked",
    "bad_stop_reason": "ends a turn with stopReason \"done\"",
    "no_load_replay": "advertises loadSession but replays nothing",
    "numeric_id": "answers a string request id with a number",
    "hangs_on_eof": "keeps running after its stdin closes (no rule: the run must still end, and pass)",
    "accepts_invalid_version": "answers initialize with protocolVersion \"1.0.0\" as if it were 1 (a SHOULD)",
    "set_mode_error": "answers session/set_mode (with a mode it offered) with an internal error",
    "config_without_options": "answers session/set_config_option with {} (the full set of options is required)",
    "update_unknown_tool_call": "sends a tool_call_update for a tool call no tool_call announced",
    "line_limit_64k": "gives up on lines longer than 64 KiB (asyncio's default limit)",
    "lenient_only": "its initialize result holds an auth method without id and `image: \"yes\"` (tolerated, not valid)",
    "answers_notifications_empty_id": "answers unknown notifications with an error carrying id \"\" (as chuk-acp does)",
}
CORRECT_VARIANTS = {
    "allow_always_first": "lists allow_always before allow_once and asks no more once allow_always was chosen",
    "instant_turn": "a turn is one chunk and end_turn, asking nothing (a session/cancel arrives after it ended)",
    "auth_terminal": "advertises only a terminal auth method (which a client MUST NOT pass to authenticate)",
    "auth_hangs": "advertises an agent auth method whose authenticate never answers (an interactive login)",
    "auth_required": "advertises an auth method and answers session/new with -32000 until authenticated (it never is)",
}
"""Behaviours that break no rule but that a careless checker would fail."""
FAULT = sys.argv[1] if len(sys.argv) > 1 else ""
if FAULT and FAULT not in FAULTS and FAULT not in CORRECT_VARIANTS:
    sys.exit(f"unknown fault {FAULT!r}; known: {', '.join([*FAULTS, *CORRECT_VARIANTS])}")

out_lock = threading.Lock()
state_lock = threading.Lock()
sessions: dict[str, dict[str, object]] = {}
waiting: dict[int, threading.Event] = {}
answers: dict[int, object] = {}
client_fs = False
next_id = [100]
always_allowed = [False]


MODES: dict[str, object] = {"currentModeId": "ask", "availableModes": [
    {"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]}


def config_options(current: str) -> list[dict[str, object]]:
    return [{"id": "effort", "name": "Effort", "type": "select", "currentValue": current,
             "options": [{"value": "fast", "name": "Fast"}, {"value": "careful", "name": "Careful"}]}]


def send(message: dict[str, object]) -> None:
    with out_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def reply(request_id: object, result: object = None, error: dict[str, object] | None = None) -> None:
    if FAULT == "numeric_id" and isinstance(request_id, str):
        request_id = 1
    message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id}
    if error is not None:
        message["error"] = error
    else:
        message["result"] = result
    send(message)


def call(method: str, params: dict[str, object], timeout: float = 20) -> object:
    with state_lock:
        request_id = next_id[0]
        next_id[0] += 1
        event = waiting[request_id] = threading.Event()
    send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    event.wait(timeout)
    return answers.pop(request_id, None)


def update(session_id: str, body: dict[str, object]) -> None:
    sessions[session_id]["history"].append(body)  # type: ignore[attr-defined]
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": body}})


def turn(request_id: object, session_id: str) -> None:
    session = sessions[session_id]
    cancelled = session["cancel"]
    assert isinstance(cancelled, threading.Event)
    text: object = 42 if FAULT == "wrong_field_type" else "Thinking."
    update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})
    if FAULT == "update_unknown_tool_call":
        update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "ghost", "status": "in_progress"})
    if FAULT == "instant_turn":
        time.sleep(0.05)
        with state_lock:
            session["turn"] = None
        reply(request_id, {"stopReason": "end_turn"})
        return
    cancelled.wait(0.3)
    reason = "cancelled" if cancelled.is_set() else "end_turn"
    if not cancelled.is_set() and always_allowed[0]:
        update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"})
    elif not cancelled.is_set():
        update(session_id, {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read README.md",
                            "kind": "read", "status": "pending"})
        options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                   {"optionId": "reject", "name": "Reject", "kind": "reject_once"}]
        if FAULT == "allow_always_first":
            options.insert(0, {"optionId": "always", "name": "Always allow", "kind": "allow_always"})
        answer = call("session/request_permission", {
            "sessionId": session_id, "toolCall": {"toolCallId": "t1", "title": "Read README.md"}, "options": options,
        })
        outcome = answer.get("outcome", {}) if isinstance(answer, dict) else {}
        always_allowed[0] = outcome.get("optionId") == "always"
        if cancelled.is_set() or outcome.get("outcome") == "cancelled":
            reason = "cancelled"
        else:
            if client_fs or FAULT == "fs_unadvertised":
                call("fs/read_text_file", {"sessionId": session_id, "path": str(session["cwd"]) + "/README.md"})
            update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"})
    if FAULT == "missing_cancelled" and reason == "cancelled":
        reason = "end_turn"
    if FAULT == "bad_stop_reason":
        reason = "done"
    cancelled.clear()
    with state_lock:
        session["turn"] = None
    reply(request_id, {"stopReason": reason})


def handle(message: dict[str, object]) -> None:
    global client_fs
    method, params, request_id = message.get("method"), message.get("params"), message.get("id")
    params = params if isinstance(params, dict) else {}
    if method is None:  # an answer to one of our requests
        if isinstance(request_id, int) and request_id in waiting:
            answers[request_id] = message.get("result")
            waiting.pop(request_id).set()
        return
    if "id" not in message:  # notifications
        if method == "session/cancel":
            session = sessions.get(str(params.get("sessionId")))
            if session is not None and session.get("turn") is not None:  # nothing to cancel between turns
                session["cancel"].set()  # type: ignore[attr-defined]
            if FAULT == "answers_notifications_empty_id":
                reply("", error={"code": -32601, "message": "Method not found"})
        elif method == "$/cancel_request":
            for session in sessions.values():
                if session.get("turn") == params.get("requestId"):
                    session["cancel"].set()  # type: ignore[attr-defined]
        elif FAULT == "answers_notifications":
            reply(None, error={"code": -32601, "message": "Method not found"})
        elif FAULT == "answers_notifications_empty_id":
            reply("", error={"code": -32601, "message": "Method not found"})
        return
    if method == "initialize":
        version = params.get("protocolVersion")
        if FAULT == "accepts_invalid_version" and not isinstance(version, int):
            version = 1
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            reply(request_id, error={"code": -32602, "message": "Invalid params", "data": {"path": "protocolVersion"}})
            return
        caps = params.get("clientCapabilities")
        fs = caps.get("fs") if isinstance(caps, dict) else None
        client_fs = bool(isinstance(fs, dict) and fs.get("readTextFile"))
        answer = version if FAULT == "version_echo" else min(version, 1)
        auth: list[dict[str, object]] = []
        if FAULT == "auth_terminal":
            auth = [{"id": "tui-login", "name": "Log in in a terminal", "type": "terminal", "args": ["--login"]}]
        elif FAULT in ("auth_hangs", "auth_required"):
            auth = [{"id": "browser-login", "name": "Log in with a browser"}]
        caps: dict[str, object] = {"loadSession": True}
        if FAULT == "lenient_only":
            caps["promptCapabilities"] = {"image": "yes"}
            auth = [{"name": "an auth method without its id"}]
        reply(request_id, {"protocolVersion": answer, "agentCapabilities": caps,
                           "authMethods": auth, "agentInfo": {"name": "faulty-agent", "version": "0"}})
    elif method == "authenticate":
        if FAULT == "auth_terminal":
            sys.exit(3)  # a terminal method passed to authenticate: the client broke a MUST NOT
        if FAULT == "auth_hangs":
            return  # waits for a person who never comes
        reply(request_id, error={"code": -32000, "message": "Authentication required: no browser here"})
    elif method == "session/new" and FAULT == "auth_required":
        reply(request_id, error={"code": -32000, "message": "Authentication required"})
    elif method == "session/new":
        session_id = f"s{len(sessions) + 1}"
        sessions[session_id] = {"cwd": params.get("cwd"), "cancel": threading.Event(), "history": [], "turn": None}
        reply(request_id, {"sessionId": session_id, "modes": MODES, "configOptions": config_options("fast")})
    elif method == "session/set_mode":
        if FAULT == "set_mode_error":
            reply(request_id, error={"code": -32603, "message": "Internal error"})
        elif params.get("modeId") in {m["id"] for m in MODES["availableModes"]}:  # type: ignore[index]
            reply(request_id, {})
        else:
            reply(request_id, error={"code": -32602, "message": "Invalid params", "data": {"path": "modeId"}})
    elif method == "session/set_config_option":
        value = params.get("value")
        if params.get("configId") != "effort" or value not in ("fast", "careful"):
            reply(request_id, error={"code": -32602, "message": "Invalid params"})
        else:
            reply(request_id, {} if FAULT == "config_without_options" else {"configOptions": config_options(str(value))})
    elif method == "session/load":
        session = sessions.get(str(params.get("sessionId")))
        if session is None:
            reply(request_id, error={"code": -32002, "message": "Resource not found"})
            return
        if FAULT != "no_load_replay":
            for body in list(session["history"]):  # type: ignore[attr-defined]
                send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": params["sessionId"], "update": body}})
        reply(request_id, {})
    elif method == "session/prompt":
        session = sessions.get(str(params.get("sessionId")))
        if session is None:
            reply(request_id, error={"code": -32002, "message": "Resource not found"})
            return
        session["turn"] = request_id
        threading.Thread(target=turn, args=(request_id, params["sessionId"]), daemon=True).start()
    elif FAULT == "no_method_not_found":
        reply(request_id, None)
    else:
        reply(request_id, error={"code": -32601, "message": "Method not found", "data": {"method": method}})


def main() -> int:
    if FAULT == "stdout_noise":
        print("faulty-agent 0.1 starting...", flush=True)
    for raw in sys.stdin:
        if not raw.strip():
            continue
        if FAULT == "line_limit_64k" and len(raw) > 65536:
            print("line too long; giving up", file=sys.stderr)
            return 1
        try:
            message = json.loads(raw)
        except ValueError:
            if FAULT == "dies_on_bad_line":
                return 1
            reply(None, error={"code": -32700, "message": "Parse error"})
            continue
        if isinstance(message, dict):
            handle(message)
        else:
            reply(None, error={"code": -32600, "message": "Invalid request"})
    if FAULT == "hangs_on_eof":
        time.sleep(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
