#!/usr/bin/env python3
"""ACP v1 agent peer built on the official Python SDK (agent-client-protocol 0.12.1 or 1.0.0rc3,
import ``acp``; it uses only what both have: the schema models, not 0.12's ``acp.helpers``).

Speaks newline-delimited JSON-RPC on stdin/stdout; logs only to stderr. Same behaviour as
ts_agent.mjs. One prompt turn: agent_message_chunk, tool_call (pending),
session/request_permission, fs/read_text_file (only if the client advertised fs.readTextFile),
tool_call_update (completed or failed, with content), agent_message_chunk with what was read (or
the error), stopReason "end_turn". A session/cancel during the turn makes it return "cancelled";
the turn waits CANCEL_WINDOW_S after the first chunk so that a cancel can land. The file read is
"README.md" in the session cwd, or X if the prompt text is "read X".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any

from acp import (
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
)
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    ClientCapabilities,
    ContentToolCallContent,
    Implementation,
    PermissionOption,
    StopReason,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolCallUpdate,
)
from pydantic import ValidationError

CANCEL_WINDOW_S = 0.2
log = logging.getLogger("py_agent")


def message_chunk(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text))


@dataclass
class Session:
    cwd: str
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)


class PeerAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.client_capabilities: ClientCapabilities | None = None
        self.sessions: dict[str, Session] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(load_session=False),
            agent_info=Implementation(name="py_agent", version="0"),
            auth_methods=[],
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = f"py-{uuid.uuid4()}"
        self.sessions[session_id] = Session(cwd=cwd)
        return NewSessionResponse(session_id=session_id)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log.info("session/cancel for %s", session_id)
        if session := self.sessions.get(session_id):
            session.cancelled.set()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError(-32002, "Resource not found", {"sessionId": session_id})
        session.cancelled.clear()
        try:
            return PromptResponse(stop_reason=await self._turn(session_id, session, prompt))
        except ValidationError as exc:  # a client response the SDK could not validate
            raise RequestError.internal_error(
                {"details": f"invalid response from client: {exc}"}
            ) from exc

    async def _turn(self, session_id: str, session: Session, prompt: list[Any]) -> StopReason:
        cancelled = session.cancelled.is_set
        prompt_text = " ".join(b.text for b in prompt if getattr(b, "type", None) == "text").strip()
        match = re.match(r"read\s+(\S+)", prompt_text)
        file = match.group(1) if match else "README.md"
        target = os.path.abspath(os.path.join(session.cwd, file))

        async def update(u: Any) -> None:
            await self.conn.session_update(session_id=session_id, update=u)

        await update(message_chunk(f"py_agent got: {prompt_text}"))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(session.cancelled.wait(), CANCEL_WINDOW_S)
        if cancelled():
            return "cancelled"

        tool_call_id = "call_1"
        await update(
            ToolCallStart(
                session_update="tool_call",
                tool_call_id=tool_call_id,
                title=f"Read {file}",
                kind="read",
                status="pending",
                locations=[ToolCallLocation(path=target)],
                raw_input={"path": target},
            )
        )
        permission = await self.conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(
                tool_call_id=tool_call_id, title=f"Read {file}", kind="read", status="pending"
            ),
            options=[
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        outcome = permission.outcome
        if cancelled() or outcome.outcome == "cancelled":
            return "cancelled"

        status: ToolCallStatus = "completed"
        caps = self.client_capabilities
        if outcome.outcome != "selected" or outcome.option_id != "allow":
            status, body = "failed", f"permission denied ({outcome.model_dump(by_alias=True)})"
        elif not (caps and caps.fs and caps.fs.read_text_file):
            status, body = "failed", "client did not advertise fs.readTextFile"
        else:
            try:
                body = (await self.conn.read_text_file(session_id=session_id, path=target)).content
            except RequestError as exc:
                status, body = "failed", f"read failed: {exc.code} {exc}"
        if cancelled():
            return "cancelled"

        content = ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=body))
        await update(
            ToolCallProgress(
                session_update="tool_call_update", tool_call_id=tool_call_id, status=status, content=[content]
            )
        )
        await update(message_chunk(f"{file}: {body}"))
        return "cancelled" if cancelled() else "end_turn"


def watchdog(timeout: float) -> None:
    log.error("no end of input after %g s, exiting", timeout)
    logging.shutdown()
    os._exit(
        3
    )  # the SDK's receive loop swallows task cancellation, so asyncio.wait_for cannot stop it


async def main() -> int:
    timeout = float(os.environ.get("PEER_TIMEOUT_S", "120"))
    asyncio.get_running_loop().call_later(timeout, watchdog, timeout)
    await run_agent(PeerAgent())
    log.info("input closed, exiting")
    return 0


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[py_agent] %(message)s")
    sys.exit(asyncio.run(main()))
