#!/usr/bin/env python3
"""ACP v1 client peer built on the official Python SDK (agent-client-protocol 0.12.1 or 1.0.0rc3,
import acp).

    python py_client.py [--cancel] [--cwd DIR] AGENT_CMD [ARGS...]

Same behaviour, options, environment (PEER_PROMPT, PEER_TRACE, PEER_TIMEOUT_S) and summary line
as ts_client.mjs; see README.md. Validation is the SDK's own (pydantic): the connection methods
validate responses (failures raise), requests from the agent are validated before our handlers
run (a failure makes the SDK answer -32602, seen by the stream observer), and notifications that
fail validation are only logged by the SDK (seen by the logging handler).
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

from acp import RequestError, schema, spawn_agent_process
from acp.connection import StreamDirection, StreamEvent

JSONRPC_ERRORS = {-32700, -32600, -32601, -32602, -32603}


class SdkErrorLog(logging.Handler):
    """Counts every error the SDK logs (e.g. a session/update that failed validation)."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__(logging.ERROR)
        self.errors = errors

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "method=$/" in text:  # protocol-level notification the SDK does not implement
            return
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        self.errors.append(f"sdk: {text}"[:2000])


class PeerClient:
    def __init__(self, summary: dict[str, Any], cancel_mode: bool) -> None:
        self.summary = summary
        self.cancel_mode = cancel_mode
        self.cancel_sent = False
        self.conn: Any = None
        self.process: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.summary["updates"].append(update.session_update)
        if self.cancel_mode and not self.cancel_sent:
            self.cancel_sent = True
            await self.conn.cancel(session_id=session_id)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[schema.PermissionOption], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        self.summary["permissionRequests"] += 1
        allow = next((o for o in options if o.kind in ("allow_once", "allow_always")), None)
        if self.cancel_sent or allow is None:
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> schema.ReadTextFileResponse:
        self.summary["fsReads"].append(path)
        try:
            content = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        except OSError as exc:
            raise RequestError.internal_error({"details": str(exc)}) from None
        if line is not None or limit is not None:
            start = max((line or 1) - 1, 0)
            lines = content.splitlines(keepends=True)
            content = "".join(lines[start : start + limit if limit is not None else None])
        return schema.ReadTextFileResponse(content=content)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> schema.WriteTextFileResponse:
        Path(path).write_text(content, encoding="utf-8")
        return schema.WriteTextFileResponse()


class Observer:
    """Traces messages, notes error answers we sent and responses carrying ids we never sent.

    The SDK silently drops a response whose id matches no pending request (e.g. "0" for 0). Ids
    are compared when the run ends: an outgoing request is observed only after it is written.
    """

    def __init__(self, errors: list[str], trace: bool) -> None:
        self.errors = errors
        self.trace = trace
        self.received: dict[Any, str] = {}  # the agent's request id -> method
        self.sent_ids: list[Any] = []
        self.response_ids: list[Any] = []

    def __call__(self, event: StreamEvent) -> None:
        msg = event.message
        incoming = event.direction == StreamDirection.INCOMING
        if self.trace:
            print(f"[py_client] {'<-' if incoming else '->'} {json.dumps(msg)}", file=sys.stderr)
        if "method" not in msg:  # a response
            if incoming:
                self.response_ids.append(msg.get("id"))
            elif (msg.get("error") or {}).get("code") in JSONRPC_ERRORS:
                method = self.received.get(msg.get("id"))
                error = json.dumps(msg["error"])[:500]
                self.errors.append(f"answered agent's {method} with error {error}")
        elif "id" in msg:  # a request
            if incoming:
                self.received[msg["id"]] = msg["method"]
            else:
                self.sent_ids.append(msg["id"])

    def check_ids(self) -> None:
        for rid in self.response_ids:
            if not any(type(rid) is type(sid) and rid == sid for sid in self.sent_ids):
                self.errors.append(f"response with unknown id {json.dumps(rid)}")


def print_summary(summary: dict[str, Any]) -> None:
    print(json.dumps(summary, separators=(",", ":"), ensure_ascii=False), flush=True)


def hard_exit(client: PeerClient, timeout: float) -> None:
    """Backstop in case some await in the SDK swallows the cancellation from asyncio.wait_for."""
    client.summary["errors"].append(f"timeout: run did not finish within {timeout:g} s (hard exit)")
    if client.process is not None and client.process.returncode is None:
        client.process.kill()
    print_summary(client.summary)
    os._exit(1)


async def run(args: argparse.Namespace, client: PeerClient, cwd: str) -> None:
    errors = client.summary["errors"]
    observer = Observer(errors, bool(os.environ.get("PEER_TRACE")))
    capabilities = schema.ClientCapabilities(
        fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False
    )
    prompt_text = os.environ.get("PEER_PROMPT", "read README.md")
    try:
        async with spawn_agent_process(
            client,
            *args.agent,
            env=dict(os.environ),  # the SDK passes only a trimmed environment by default
            transport_kwargs={"stderr": None},  # inherit: the agent's log goes to our stderr
            observers=[observer],
        ) as (conn, process):
            client.process = process
            try:
                info = schema.Implementation(name="py_client", version="0")
                init = await conn.initialize(1, capabilities, info)
                if init.protocol_version != 1:
                    errors.append(f"agent answered protocolVersion {init.protocol_version!r}")
                session = await conn.new_session(cwd=cwd, mcp_servers=[])
                response = await conn.prompt(
                    session_id=session.session_id, prompt=[schema.TextContentBlock(type="text", text=prompt_text)]
                )
                client.summary["stopReason"] = response.stop_reason
            except Exception as exc:  # RequestError, pydantic ValidationError, ConnectionError
                data = getattr(exc, "data", None)
                detail = f" {json.dumps(data)[:500]}" if data is not None else ""
                errors.append(f"{type(exc).__name__}: {exc}{detail}"[:2000])
        # Leaving the context closed the agent's stdin, waited 2 s, then terminated it.
        observer.check_ids()
        if process.returncode != 0:
            errors.append(f"agent exited with {process.returncode}")
    except OSError as exc:
        errors.append(f"cannot start agent: {exc}")


async def bounded_run(args: argparse.Namespace, client: PeerClient, timeout: float) -> None:
    asyncio.get_running_loop().call_later(timeout + 8, hard_exit, client, timeout)
    with tempfile.TemporaryDirectory(prefix="acp-peer-") as temp_dir:
        if args.cwd is None:
            fixture = "# peer fixture\nhello from the ACP peer client\n"
            Path(temp_dir, "README.md").write_text(fixture, encoding="utf-8")
        cwd = os.path.abspath(args.cwd or temp_dir)
        try:
            await asyncio.wait_for(run(args, client, cwd), timeout)
        except asyncio.TimeoutError:
            client.summary["errors"].append(f"timeout: run did not finish within {timeout:g} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cancel", action="store_true", help="cancel after the first session/update"
    )
    parser.add_argument("--cwd", help="session cwd (default: a temp dir with a README.md)")
    parser.add_argument("agent", nargs=argparse.REMAINDER, help="agent command and its arguments")
    args = parser.parse_args()
    if not args.agent:
        parser.error("missing AGENT_CMD")
    summary: dict[str, Any] = {
        "stopReason": None, "updates": [], "permissionRequests": 0, "fsReads": [], "errors": []
    }  # fmt: skip
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="[py_client] %(message)s")
    logging.getLogger().addHandler(SdkErrorLog(summary["errors"]))
    client = PeerClient(summary, args.cancel)
    asyncio.run(bounded_run(args, client, float(os.environ.get("PEER_TIMEOUT_S", "20"))))
    print_summary(summary)
    expected = "cancelled" if args.cancel else "end_turn"
    return 0 if not summary["errors"] and summary["stopReason"] == expected else 1


if __name__ == "__main__":
    sys.exit(main())
