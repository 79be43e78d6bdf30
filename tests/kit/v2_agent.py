#!/usr/bin/env python3
"""A minimal ACP v2 (draft) agent on the generated `acp_v2` runtime, for `acpgen conform agent
--target v2`: initialize, session/new and session/prompt (acknowledged with a message id, one
agent message chunk streamed first)."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))

import acp_v2 as acp


class V2Agent(acp.Agent):
    def __init__(self, conn: acp.AgentSideConnection) -> None:
        self.conn = conn
        self.sessions: set[str] = set()

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(
            protocol_version=min(params.protocol_version, 2),
            info=acp.Implementation(name="acpgen-v2-test-agent", version="0"),
            capabilities=acp.AgentCapabilities(),
        )

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        session_id = f"v2-{uuid.uuid4()}"
        self.sessions.add(session_id)
        return acp.NewSessionResponse(session_id=session_id)

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        if params.session_id not in self.sessions:
            raise acp.RequestError.resource_not_found(params.session_id)
        return acp.PromptResponse(message_id=f"m-{uuid.uuid4()}")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(V2Agent))
