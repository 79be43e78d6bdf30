#!/usr/bin/env python3
"""ACP v2 client peer built on the official Python SDK 1.0.0rc3's experimental v2 API
(`acp.experimental.v2`, schema tag schema-v2.0.0-alpha.5).

    python py_v2_client.py [--cancel] [--cwd DIR] AGENT_CMD [ARGS...]

Same turn and summary line as ts_v2_client.mjs without --all-methods: initialize (protocolVersion
2), session/new, one session/prompt (answered with a messageId), the agent's permission requests
answered with the first allow option, session/update collected until an idle state_update. With
--cancel it sends session/cancel after the first agent_message_chunk and expects `cancelled`.
Validation is the SDK's own (pydantic): results of our requests (failures raise), the agent's
requests (the SDK answers -32602, seen by the observer) and notifications (failures are logged).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from acp.connection import StreamDirection, StreamEvent
from acp.experimental import v2
from acp.experimental.v2 import schema
from acp.transports import spawn_stdio_transport

JSONRPC_ERRORS = {-32700, -32600, -32601, -32602, -32603}


class SdkErrorLog(logging.Handler):
    def __init__(self, errors: list[str]) -> None:
        super().__init__(logging.ERROR)
        self.errors = errors

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        self.errors.append(f"sdk: {text}"[:2000])


class PeerClient:
    def __init__(self, summary: dict[str, Any], cancel_mode: bool) -> None:
        self.summary = summary
        self.cancel_mode = cancel_mode
        self.cancel_sent = False
        self.conn: Any = None
        self.idle: asyncio.Future[dict[str, Any]] | None = None

    async def request_permission(self, session_id: str, title: str, options: list[Any], **_: Any) -> Any:
        self.summary["permissionRequests"] += 1
        allow = next((o for o in options if o.kind in ("allow_once", "allow_always")), None)
        if self.cancel_sent or allow is None:
            return schema.RequestPermissionResponse(outcome=schema.CancelledPermissionOutcome())
        return schema.RequestPermissionResponse.model_validate(
            {"outcome": {"outcome": "selected", "optionId": allow.option_id}}
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        pass  # the observer records the wire form, in order


class Observer:
    def __init__(self, client: PeerClient, errors: list[str], trace: bool) -> None:
        self.client, self.errors, self.trace = client, errors, trace
        self.received: dict[Any, str] = {}
        self.sent_ids: list[Any] = []
        self.response_ids: list[Any] = []

    def __call__(self, event: StreamEvent) -> None:
        msg = event.message
        incoming = event.direction == StreamDirection.INCOMING
        if self.trace:
            print(f"[py_v2_client] {'<-' if incoming else '->'} {json.dumps(msg)}", file=sys.stderr)
        if "method" not in msg:
            if incoming:
                self.response_ids.append(msg.get("id"))
            elif (msg.get("error") or {}).get("code") in JSONRPC_ERRORS:
                self.errors.append(f"answered agent's {self.received.get(msg.get('id'))} with error {json.dumps(msg['error'])[:500]}")
        elif "id" in msg:
            if incoming:
                self.received[msg["id"]] = msg["method"]
            else:
                self.sent_ids.append(msg["id"])
        elif incoming and msg["method"] == "session/update":
            update = (msg.get("params") or {}).get("update") or {}
            kind = update.get("sessionUpdate")
            state = update.get("state")
            self.client.summary["updates"].append(f"{kind}:{state}" if kind == "state_update" else kind)
            client = self.client
            if kind == "agent_message_chunk" and client.cancel_mode and not client.cancel_sent:
                client.cancel_sent = True
                asyncio.ensure_future(client.conn.cancel_session(session_id=msg["params"]["sessionId"]))
            if kind == "state_update" and state == "idle" and client.idle is not None and not client.idle.done():
                client.idle.set_result(update)

    def check_ids(self) -> None:
        for rid in self.response_ids:
            if not any(type(rid) is type(sid) and rid == sid for sid in self.sent_ids):
                self.errors.append(f"response with unknown id {json.dumps(rid)}")


async def run(args: argparse.Namespace, client: PeerClient, cwd: str) -> None:
    errors = client.summary["errors"]
    observer = Observer(client, errors, bool(os.environ.get("PEER_TRACE")))
    async with spawn_stdio_transport(args.agent[0], *args.agent[1:], env=dict(os.environ), stderr=None) as (
        reader, writer, process,
    ):
        conn = v2.connect_to_agent(client, writer, reader, observers=[observer])
        client.conn = conn
        client.idle = asyncio.get_running_loop().create_future()
        try:
            init = await conn.initialize(
                protocol_version=2, info=schema.Implementation(name="py_v2_client", version="0"),
                capabilities=schema.ClientCapabilities(),
            )
            client.summary["protocolVersion"] = init.protocol_version
            session = await conn.new_session(cwd=cwd, mcp_servers=[])
            prompt = os.environ.get("PEER_PROMPT", "read README.md")
            answer = await conn.prompt(session_id=session.session_id, prompt=[schema.TextContentBlock(text=prompt)])
            client.summary["messageId"] = answer.message_id
            idle = await client.idle
            client.summary["stopReason"] = idle.get("stopReason")
        except Exception as exc:  # RequestError, pydantic ValidationError, ConnectionError
            data = getattr(exc, "data", None)
            detail = f" {json.dumps(data)[:500]}" if data is not None else ""
            errors.append(f"{type(exc).__name__}: {exc}{detail}"[:2000])
        finally:
            await conn.close()
    observer.check_ids()
    if process.returncode not in (0, None):
        errors.append(f"agent exited with {process.returncode}")


async def bounded_run(args: argparse.Namespace, client: PeerClient, timeout: float) -> None:
    with tempfile.TemporaryDirectory(prefix="acp-peer-") as temp_dir:
        if args.cwd is None:
            Path(temp_dir, "README.md").write_text("# peer fixture\nhello from the ACP peer client\n", encoding="utf-8")
        try:
            await asyncio.wait_for(run(args, client, os.path.abspath(args.cwd or temp_dir)), timeout)
        except asyncio.TimeoutError:
            client.summary["errors"].append(f"timeout: run did not finish within {timeout:g} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cancel", action="store_true", help="cancel after the first agent_message_chunk")
    parser.add_argument("--cwd", help="session cwd (default: a temp dir with a README.md)")
    parser.add_argument("agent", nargs=argparse.REMAINDER, help="agent command and its arguments")
    args = parser.parse_args()
    if not args.agent:
        parser.error("missing AGENT_CMD")
    summary: dict[str, Any] = {"protocolVersion": None, "messageId": None, "stopReason": None, "updates": [],
                               "permissionRequests": 0, "errors": []}
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="[py_v2_client] %(message)s")
    logging.getLogger().addHandler(SdkErrorLog(summary["errors"]))
    client = PeerClient(summary, args.cancel)
    asyncio.run(bounded_run(args, client, float(os.environ.get("PEER_TIMEOUT_S", "20"))))
    print(json.dumps(summary, separators=(",", ":"), ensure_ascii=False), flush=True)
    expected = "cancelled" if args.cancel else "end_turn"
    return 0 if not summary["errors"] and summary["stopReason"] == expected else 1


if __name__ == "__main__":
    sys.exit(main())
