"""The side-by-side agent on acpgen's acp_v1 (docs/side-by-side.md): streams a message, reports a
tool call, asks permission, reads the file the prompt names, runs `wc -c` on it in the client's
terminal, and replays a session on session/load. session/cancel needs no code: the runtime
cancels the turn and answers `cancelled`."""

import asyncio
import uuid

import acp_v1 as acp


class Agent(acp.Agent):
    def __init__(self, conn: acp.AgentSideConnection) -> None:
        self.conn = conn
        self.history: dict[str, list[str]] = {}

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=acp.negotiate_protocol_version(params.protocol_version),
                                      agent_capabilities=acp.AgentCapabilities(load_session=True))

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        self.history[session_id := uuid.uuid4().hex] = []
        return acp.NewSessionResponse(session_id=session_id)

    async def session_load(self, params: acp.LoadSessionRequest) -> acp.LoadSessionResponse:
        for text in self.history[params.session_id]:
            await self.conn.session_update(session_id=params.session_id, update=chunk(text))
        return acp.LoadSessionResponse()

    async def say(self, session_id: str, text: str) -> None:
        self.history[session_id].append(text)
        await self.conn.session_update(session_id=session_id, update=chunk(text))

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        sid, path = params.session_id, " ".join(b.text for b in params.prompt if isinstance(b, acp.TextContentBlock))
        await self.say(sid, f"Reading {path}")
        await self.conn.session_update(session_id=sid, update=acp.ToolCallSessionUpdate(
            tool_call_id="read", title=f"Read {path}", kind="read", status="pending"))
        answer = await self.conn.session_request_permission(
            session_id=sid, tool_call=acp.ToolCallUpdate(tool_call_id="read"),
            options=[acp.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                     acp.PermissionOption(option_id="no", name="Reject", kind="reject_once")])
        if not (isinstance(answer.outcome, acp.SelectedRequestPermissionOutcome) and answer.outcome.option_id == "yes"):
            await self.say(sid, "Not allowed")
            return acp.PromptResponse(stop_reason="end_turn")
        text = (await self.conn.fs_read_text_file(session_id=sid, path=path, limit=100)).content
        terminal = await self.conn.terminal_create(session_id=sid, command="wc", args=["-c", path])
        await self.conn.terminal_wait_for_exit(session_id=sid, terminal_id=terminal.terminal_id)
        wc = await self.conn.terminal_output(session_id=sid, terminal_id=terminal.terminal_id)
        await self.conn.terminal_release(session_id=sid, terminal_id=terminal.terminal_id)
        await self.conn.session_update(session_id=sid, update=acp.ToolCallUpdateSessionUpdate(
            tool_call_id="read", status="completed",
            content=[acp.ContentToolCallContent(content=acp.TextContentBlock(text=text))]))
        await self.say(sid, f"{len(text)} characters; wc -c: {wc.output.strip()}")
        return acp.PromptResponse(stop_reason="end_turn")


def chunk(text: str) -> acp.AgentMessageChunkSessionUpdate:
    return acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text=text))


if __name__ == "__main__":
    asyncio.run(acp.run_agent(Agent))
