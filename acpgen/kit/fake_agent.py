"""The scripted agent that `acpgen conform client` puts in front of a client (standard library only).

    python -m acpgen.kit.fake_agent --log FILE --scenario turn|cancel [--version N] [--read PATH]
        [--write PATH] [--large BYTES] [--timeout S]

With --version 2 it plays the v2 draft's turn: the prompt is answered at once with a messageId,
the turn reports itself with state updates (running, requires_action while it asks permission,
idle with a stop reason), and a permission request still unanswered 1 s after session/cancel is
withdrawn with `$/cancel_request`.

It logs every line it reads and writes (JSONL: direction, raw line) and a few events; the
conform process judges the client from that log. Its requests carry fixed string ids (`acpgen-...`)
so that the log says which answer belongs to which step."""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
import time
from typing import IO, Any

TO_AGENT, TO_CLIENT = "client->agent", "agent->client"
PING_WAIT_S = 3.0
"""How long a ping (an unknown method) is waited for before the script goes on."""
WITHDRAW_AFTER_S = 1.0
"""v2: how long after session/cancel a pending permission request may be answered by the client
itself before the fake agent withdraws it with $/cancel_request."""


class Agent:
    def __init__(self, args: argparse.Namespace, log: IO[str]) -> None:
        self.args = args
        self.log = log
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.answers: dict[str, dict[str, Any]] = {}
        self.answered = threading.Condition()
        self.cancelled = threading.Event()
        self.client_caps: dict[str, Any] = {}
        self.lock = threading.Lock()

    def record(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.log.write(json.dumps({"t": round(time.monotonic(), 4), **entry}) + "\n")
            self.log.flush()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":"))
        self.record({"dir": TO_CLIENT, "line": line})
        with self.lock:
            try:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
            except (OSError, ValueError):  # the client went away: the log says what happened
                self.log.write(json.dumps({"event": "client-gone"}) + "\n")
                self.log.flush()
                os._exit(0)

    def read(self) -> None:
        for raw in sys.stdin.buffer:
            line = raw.rstrip(b"\n").decode("utf-8", errors="surrogateescape")
            self.record({"dir": TO_AGENT, "line": line})
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if "method" not in message and isinstance(message.get("id"), str):
                with self.answered:
                    self.answers[message["id"]] = message
                    self.answered.notify_all()
            elif message.get("method") == "session/cancel":
                self.cancelled.set()
            else:
                self.inbox.put(message)
        self.record({"event": "eof"})
        self.inbox.put(None)

    def call(self, request_id: str, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return self.wait_answer(request_id)

    def wait_answer(self, request_id: str, within: float | None = None) -> dict[str, Any] | None:
        """The answer to our request; None (and a no-answer event, unless `within` is given) if
        none comes within `within` seconds (default: --timeout)."""
        deadline = time.monotonic() + (self.args.timeout if within is None else within)
        with self.answered:
            while request_id not in self.answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    if within is None:
                        self.record({"event": "no-answer", "id": request_id})
                    return None
                self.answered.wait(left)
            return self.answers[request_id]

    def update(self, session_id: str, body: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": body}})

    def reply(self, request_id: object, result: object) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def run(self) -> None:
        threading.Thread(target=self.read, daemon=True).start()
        deadline = time.monotonic() + self.args.timeout * 4
        while time.monotonic() < deadline:
            try:
                message = self.inbox.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                break
            if message is None:
                return
            self.handle(message)
        self.record({"event": "gave-up"})

    def handle(self, message: dict[str, Any]) -> None:
        method, request_id = message.get("method"), message.get("id")
        raw_params = message.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if "id" not in message:
            return
        if self.args.version >= 2:
            self.handle_v2(method, request_id, params)
        elif method == "initialize":
            caps = params.get("clientCapabilities")
            self.client_caps = caps if isinstance(caps, dict) else {}
            self.reply(request_id, {
                "protocolVersion": self.args.version,
                "agentCapabilities": {"loadSession": False, "promptCapabilities": {
                    "image": False, "audio": False, "embeddedContext": False}},
                "authMethods": [],
                "agentInfo": {"name": "acpgen-conform-fake-agent", "version": "1"},
            })
        elif method == "session/new":
            self.files_in(params.get("cwd"))
            self.reply(request_id, {"sessionId": "acpgen-session-1"})
        elif method == "session/prompt":
            session_id = str(params.get("sessionId"))
            self.send({"jsonrpc": "2.0", "method": "_acpgen/notice", "params": {"sessionId": session_id}})
            if self.args.scenario == "cancel":
                self.cancel_turn(request_id, session_id)
            else:
                self.turn(request_id, session_id)
        else:
            self.send({"jsonrpc": "2.0", "id": request_id,
                       "error": {"code": -32601, "message": "Method not found", "data": {"method": method}}})

    def files_in(self, cwd: object) -> None:
        """Read and write inside the cwd the client announced, as a client may refuse any other
        path: the file to read is copied there (dot files, logged as `created` for conform to
        remove). When the cwd is not a writable folder the given paths stay (a refusal is then no
        failure: conform judges it so)."""
        if not isinstance(cwd, str) or not os.path.isabs(cwd) or not os.path.isdir(cwd) or not self.args.read:
            return
        if os.path.dirname(os.path.abspath(self.args.read)) == os.path.abspath(cwd):
            return
        read = os.path.join(cwd, f".acpgen-conform-read-{os.getpid()}.txt")
        write = os.path.join(cwd, f".acpgen-conform-written-{os.getpid()}.txt")
        try:
            with open(self.args.read, encoding="utf-8") as source, open(read, "x", encoding="utf-8") as copy:
                copy.write(source.read())
        except OSError:
            return
        self.record({"event": "created", "path": read})
        self.record({"event": "created", "path": write})
        self.args.read, self.args.write = read, write

    def ping(self, step: str) -> None:
        """An unknown method: the answer (-32601) proves the client lived through the step before.
        A client that answers no unknown method at all is not held up for long: the script goes on
        after PING_WAIT_S (a late answer is still in the log, which is what is judged)."""
        request_id = f"acpgen-ping-{step}"
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "acpgen/unknown_client_method", "params": {"step": step}})
        if self.wait_answer(request_id, within=min(self.args.timeout, PING_WAIT_S)) is None:
            self.record({"event": "ping-unanswered", "id": request_id})

    def turn(self, request_id: object, session_id: str) -> None:
        text = {"type": "text", "text": "acpgen conform: hello"}
        self.update(session_id, {"sessionUpdate": "agent_message_chunk", "content": text,
                                 "acpgenFutureField": {"nested": [1, 2]}, "_meta": {"acpgen": True}})
        self.ping("fields")
        self.update(session_id, {"sessionUpdate": "acpgen_future_update", "payload": {"x": 1}})
        self.ping("variant")
        self.update(session_id, {"sessionUpdate": "tool_call", "toolCallId": "acpgen-call-1",
                                 "title": "A future kind of tool", "kind": "acpgen_future_kind", "status": "pending"})
        self.ping("enum")
        self.update(session_id, {"sessionUpdate": "agent_message_chunk",
                                 "content": {"type": "text", "text": "x" * self.args.large}})
        self.ping("large")
        self.call("acpgen-permission", "session/request_permission", {
            "sessionId": session_id,
            "toolCall": {"toolCallId": "acpgen-call-1", "title": "A future kind of tool"},
            "options": [{"optionId": "acpgen-allow", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "acpgen-reject", "name": "Reject", "kind": "reject_once"}],
        })
        raw_fs = self.client_caps.get("fs")
        fs: dict[str, Any] = raw_fs if isinstance(raw_fs, dict) else {}
        if fs.get("readTextFile") and self.args.read:
            self.call("acpgen-fs-read", "fs/read_text_file", {"sessionId": session_id, "path": self.args.read})
        if fs.get("writeTextFile") and self.args.write:
            self.call("acpgen-fs-write", "fs/write_text_file",
                      {"sessionId": session_id, "path": self.args.write, "content": "written by acpgen conform\n"})
        if self.client_caps.get("terminal") is True:
            created = self.call("acpgen-term-create", "terminal/create",
                                {"sessionId": session_id, "command": sys.executable, "args": ["-c", "print('acpgen')"]})
            result = created.get("result") if created else None
            terminal = result.get("terminalId") if isinstance(result, dict) else None
            if isinstance(terminal, str):
                ids = {"sessionId": session_id, "terminalId": terminal}
                self.call("acpgen-term-wait", "terminal/wait_for_exit", ids)
                self.call("acpgen-term-output", "terminal/output", ids)
                self.call("acpgen-term-release", "terminal/release", ids)
        self.update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "acpgen-call-1", "status": "completed"})
        self.update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "done"}})
        self.reply(request_id, {"stopReason": "end_turn"})

    def cancel_turn(self, request_id: object, session_id: str) -> None:
        """The permission request stays pending while the client cancels; the late update and
        its ping follow once the client answered it (or --timeout passed), so a slow permission
        answer is never taken for a client that broke on the late update."""
        self.update(session_id, {"sessionUpdate": "agent_message_chunk",
                                 "content": {"type": "text", "text": "acpgen conform: cancel me"}})
        self.send({"jsonrpc": "2.0", "id": "acpgen-permission-pending", "method": "session/request_permission",
                   "params": {"sessionId": session_id,
                              "toolCall": {"toolCallId": "acpgen-call-2", "title": "Pending while cancelled"},
                              "options": [{"optionId": "acpgen-allow", "name": "Allow", "kind": "allow_once"}]}})
        if self.cancelled.wait(self.args.timeout):
            self.record({"event": "cancel-received"})
            self.wait_answer("acpgen-permission-pending")
            self.update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "acpgen-call-2", "status": "failed"})
            self.ping("after-cancel")
            self.reply(request_id, {"stopReason": "cancelled"})
        else:
            self.wait_answer("acpgen-permission-pending")
            self.reply(request_id, {"stopReason": "end_turn"})
        self.record({"event": "turn-ended"})


    # -- v2 --------------------------------------------------------------------------------------

    def handle_v2(self, method: object, request_id: object, params: dict[str, Any]) -> None:
        if method == "initialize":
            caps = params.get("capabilities")
            self.client_caps = caps if isinstance(caps, dict) else {}
            self.reply(request_id, {
                "protocolVersion": self.args.version,
                "info": {"name": "acpgen-conform-fake-agent", "version": "1"},
                "capabilities": {"session": {}},
            })
        elif method == "session/new":
            self.reply(request_id, {"sessionId": "acpgen-session-1"})
        elif method == "session/prompt":
            session_id = str(params.get("sessionId"))
            prompt = params.get("prompt") if isinstance(params.get("prompt"), list) else []
            self.reply(request_id, {"messageId": "acpgen-msg-1"})
            self.update(session_id, {"sessionUpdate": "user_message", "messageId": "acpgen-msg-1", "content": prompt})
            self.send({"jsonrpc": "2.0", "method": "_acpgen/notice", "params": {"sessionId": session_id}})
            self.state(session_id, "running")
            if self.args.scenario == "cancel":
                self.cancel_turn_v2(session_id)
            else:
                self.turn_v2(session_id)
        else:
            self.send({"jsonrpc": "2.0", "id": request_id,
                       "error": {"code": -32601, "message": "Method not found", "data": {"method": method}}})

    def state(self, session_id: str, state: str, stop: str | None = None) -> None:
        body: dict[str, Any] = {"sessionUpdate": "state_update", "state": state}
        if stop is not None:
            body["stopReason"] = stop
        self.update(session_id, body)

    def permission_v2(self, session_id: str, call_id: str) -> dict[str, Any]:
        return {"sessionId": session_id, "title": "A future kind of tool",
                "subject": {"type": "tool_call", "toolCall": {"toolCallId": call_id}},
                "options": [{"optionId": "acpgen-allow", "name": "Allow", "kind": "allow_once"},
                            {"optionId": "acpgen-reject", "name": "Reject", "kind": "reject_once"}]}

    def turn_v2(self, session_id: str) -> None:
        reply = "acpgen-reply-1"
        self.update(session_id, {"sessionUpdate": "agent_message_chunk", "messageId": reply,
                                 "content": {"type": "text", "text": "acpgen conform: hello"},
                                 "acpgenFutureField": {"nested": [1, 2]}, "_meta": {"acpgen": True}})
        self.ping("fields")
        self.update(session_id, {"sessionUpdate": "acpgen_future_update", "payload": {"x": 1}})
        self.ping("variant")
        self.update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "acpgen-call-1",
                                 "title": "A future kind of tool", "kind": "acpgen_future_kind", "status": "pending"})
        self.ping("enum")
        self.update(session_id, {"sessionUpdate": "agent_message_chunk", "messageId": reply,
                                 "content": {"type": "text", "text": "x" * self.args.large}})
        self.ping("large")
        self.state(session_id, "requires_action")
        self.call("acpgen-permission", "session/request_permission", self.permission_v2(session_id, "acpgen-call-1"))
        self.state(session_id, "running")
        self.update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "acpgen-call-1", "status": "completed"})
        self.update(session_id, {"sessionUpdate": "agent_message_chunk", "messageId": reply,
                                 "content": {"type": "text", "text": "done"}})
        self.state(session_id, "idle", "end_turn")

    def cancel_turn_v2(self, session_id: str) -> None:
        self.update(session_id, {"sessionUpdate": "agent_message_chunk", "messageId": "acpgen-reply-2",
                                 "content": {"type": "text", "text": "acpgen conform: cancel me"}})
        self.update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "acpgen-call-2",
                                 "title": "Pending while cancelled", "kind": "read", "status": "pending"})
        self.state(session_id, "requires_action")
        self.send({"jsonrpc": "2.0", "id": "acpgen-permission-pending", "method": "session/request_permission",
                   "params": self.permission_v2(session_id, "acpgen-call-2")})
        if self.cancelled.wait(self.args.timeout):
            self.record({"event": "cancel-received"})
            # The schema: the client MAY answer the cancelled work's requests `cancelled` by itself;
            # the agent SHOULD withdraw what is still pending with $/cancel_request. A moment's grace
            # first, so that a client answering by itself is not raced by the withdrawal.
            if self.wait_answer("acpgen-permission-pending", within=WITHDRAW_AFTER_S) is None:
                self.record({"event": "withdrawn", "id": "acpgen-permission-pending"})
                self.send({"jsonrpc": "2.0", "method": "$/cancel_request",
                           "params": {"requestId": "acpgen-permission-pending"}})
                self.wait_answer("acpgen-permission-pending")
            self.update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "acpgen-call-2", "status": "failed"})
            self.ping("after-cancel")
            self.state(session_id, "idle", "cancelled")
        else:
            self.wait_answer("acpgen-permission-pending")
            self.state(session_id, "idle", "end_turn")
        self.record({"event": "turn-ended"})


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m acpgen.kit.fake_agent")
    parser.add_argument("--log", required=True)
    parser.add_argument("--scenario", default="turn", choices=("turn", "cancel"))
    parser.add_argument("--version", type=int, default=1)
    parser.add_argument("--read")
    parser.add_argument("--write")
    parser.add_argument("--large", type=int, default=1 << 20)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    with open(args.log, "w", encoding="utf-8") as log:
        Agent(args, log).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
