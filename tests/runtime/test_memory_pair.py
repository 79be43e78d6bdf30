"""`memory_pair`: an agent and a client of a generated package connected in memory, for users' unit
tests: calls both ways, notifications before the answer they precede, errors as RequestError, and
both ends closed on exit."""

from __future__ import annotations

import asyncio

import acp_v1
import pytest
from acp_v1.rpc import memory_transports


class EchoAgent(acp_v1.Agent):
    def __init__(self, conn: acp_v1.AgentSideConnection) -> None:
        self.conn = conn

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        return acp_v1.InitializeResponse(protocol_version=acp_v1.PROTOCOL_VERSION)

    async def session_new(self, params: acp_v1.NewSessionRequest) -> acp_v1.NewSessionResponse:
        return acp_v1.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: acp_v1.PromptRequest) -> acp_v1.PromptResponse:
        read = await self.conn.fs_read_text_file(session_id=params.session_id, path="/notes.txt")
        chunk = acp_v1.AgentMessageChunkSessionUpdate(content=acp_v1.TextContentBlock(text=read.content))
        await self.conn.session_update(session_id=params.session_id, update=chunk)
        return acp_v1.PromptResponse(stop_reason="end_turn")


class NotesClient(acp_v1.Client):
    def __init__(self) -> None:
        self.updates: list[acp_v1.SessionNotification] = []

    async def session_update(self, params: acp_v1.SessionNotification) -> None:
        self.updates.append(params)

    async def fs_read_text_file(self, params: acp_v1.ReadTextFileRequest) -> acp_v1.ReadTextFileResponse:
        if params.path != "/notes.txt":
            raise acp_v1.RequestError.resource_not_found({"path": params.path})
        return acp_v1.ReadTextFileResponse(content="hello from memory")


def test_a_turn_in_memory() -> None:
    client = NotesClient()

    async def main() -> acp_v1.PromptResponse:
        async with acp_v1.memory_pair(EchoAgent, client) as (_agent_end, client_end):
            reads = acp_v1.ClientCapabilities(fs=acp_v1.FileSystemCapabilities(read_text_file=True))
            init = await client_end.initialize(acp_v1.InitializeRequest(protocol_version=1, client_capabilities=reads))
            assert init.protocol_version == 1
            session = await client_end.session_new(cwd="/", mcp_servers=[])
            return await client_end.session_prompt(
                session_id=session.session_id, prompt=[acp_v1.TextContentBlock(text="read my notes")])

    result = asyncio.run(asyncio.wait_for(main(), 10))
    assert result.stop_reason == acp_v1.StopReason.END_TURN
    # the update the agent sent before its answer has reached the client by then
    assert [u.update.content.text for u in client.updates] == ["hello from memory"]  # type: ignore[union-attr]


def test_errors_cross_as_request_errors_and_closing_ends_both() -> None:
    async def main() -> None:
        async with acp_v1.memory_pair(EchoAgent, NotesClient()) as (agent_end, client_end):
            with pytest.raises(acp_v1.RequestError) as info:
                await agent_end.fs_read_text_file(session_id="s1", path="/elsewhere")
            assert info.value.code == -32002
        with pytest.raises(acp_v1.ConnectionClosedError):
            await client_end.session_new(cwd="/", mcp_servers=[])

    asyncio.run(asyncio.wait_for(main(), 10))


def test_a_closed_memory_transport_ends_the_peers_input_and_refuses_sends() -> None:
    async def main() -> None:
        one, two = memory_transports(capacity=2)
        await one.send(b"{}")
        assert await two.receive() == b"{}"
        one.close()
        assert await two.receive() is None
        with pytest.raises(ConnectionResetError):
            await two.send(b"{}")

    asyncio.run(asyncio.wait_for(main(), 5))
