"""The side-by-side agent on the official Python SDK, agent-client-protocol 1.0.0rc3
(docs/side-by-side.md): the same behaviour as acpgen_agent.py. The SDK does not cancel a turn on
session/cancel, so the agent keeps each turn's task and cancels it itself."""

import asyncio
import uuid
from typing import Any

from acp import run_agent
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AllowedOutcome,
    ContentToolCallContent,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)


class Agent:
    def __init__(self) -> None:
        self.history: dict[str, list[str]] = {}
        self.turns: dict[str, asyncio.Task[PromptResponse]] = {}

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=min(protocol_version, 1),
                                  agent_capabilities=AgentCapabilities(load_session=True))

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self.history[session_id := uuid.uuid4().hex] = []
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        for text in self.history[session_id]:
            await self.conn.session_update(session_id=session_id, update=chunk(text))
        return LoadSessionResponse()

    async def say(self, session_id: str, text: str) -> None:
        self.history[session_id].append(text)
        await self.conn.session_update(session_id=session_id, update=chunk(text))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if turn := self.turns.get(session_id):
            turn.cancel()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        turn = self.turns[session_id] = asyncio.ensure_future(self.turn(session_id, prompt))
        try:
            return await turn
        except asyncio.CancelledError:
            if not turn.cancelled():
                raise
            return PromptResponse(stop_reason="cancelled")
        finally:
            self.turns.pop(session_id, None)

    async def turn(self, sid: str, prompt: list[Any]) -> PromptResponse:
        path = " ".join(b.text for b in prompt if isinstance(b, TextContentBlock))
        await self.say(sid, f"Reading {path}")
        await self.conn.session_update(session_id=sid, update=ToolCallStart(
            session_update="tool_call", tool_call_id="read", title=f"Read {path}", kind="read", status="pending"))
        answer = await self.conn.request_permission(
            session_id=sid, tool_call=ToolCallUpdate(tool_call_id="read"),
            options=[PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                     PermissionOption(option_id="no", name="Reject", kind="reject_once")])
        if not (isinstance(answer.outcome, AllowedOutcome) and answer.outcome.option_id == "yes"):
            await self.say(sid, "Not allowed")
            return PromptResponse(stop_reason="end_turn")
        text = (await self.conn.read_text_file(session_id=sid, path=path, limit=100)).content
        terminal = await self.conn.create_terminal(session_id=sid, command="wc", args=["-c", path])
        await self.conn.wait_for_terminal_exit(session_id=sid, terminal_id=terminal.terminal_id)
        wc = await self.conn.terminal_output(session_id=sid, terminal_id=terminal.terminal_id)
        await self.conn.release_terminal(session_id=sid, terminal_id=terminal.terminal_id)
        await self.conn.session_update(session_id=sid, update=ToolCallProgress(
            session_update="tool_call_update", tool_call_id="read", status="completed",
            content=[ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))]))
        await self.say(sid, f"{len(text)} characters; wc -c: {wc.output.strip()}")
        return PromptResponse(stop_reason="end_turn")


def chunk(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text))


if __name__ == "__main__":
    # run_agent takes acp.interfaces.Agent, a Protocol of every method (about 40): an agent that
    # implements only its own does not match it.
    asyncio.run(run_agent(Agent()))  # type: ignore[arg-type]
