"""The agent side of the prompt-turn benchmark, on stdin/stdout: `acpgen` (generated acp_v1) or `sdk`
(the official Python SDK). Both answer initialize and session/new, and answer every session/prompt
by sending the same session/update notifications (UPDATES.json: wire dicts, turned into each
binding's objects once at start) and then `end_turn`.

    python benchmarks/turn_agent.py acpgen|sdk UPDATES.json
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def acpgen_agent(updates: list[dict[str, Any]]) -> None:
    sys.path.insert(0, str(ROOT / "generated"))
    import acp_v1 as acp

    objects = [acp.decode("SessionUpdate", u) for u in updates]

    class TurnAgent(acp.Agent):
        def __init__(self, conn: acp.AgentSideConnection) -> None:
            self.conn = conn

        async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
            return acp.InitializeResponse(protocol_version=1)

        async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
            return acp.NewSessionResponse(session_id="bench-session")

        async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
            for update in objects:
                await self.conn.session_update(acp.SessionNotification(session_id=params.session_id, update=update))
            return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    asyncio.run(acp.run_agent(TurnAgent))


def sdk_agent(updates: list[dict[str, Any]]) -> None:
    from acp import InitializeResponse, NewSessionResponse, PromptResponse, run_agent
    from acp.schema import SessionNotification

    objects = [SessionNotification.model_validate({"sessionId": "x", "update": u}).update for u in updates]

    class TurnAgent:
        conn: Any = None

        def on_connect(self, conn: Any) -> None:
            self.conn = conn

        async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
            return InitializeResponse(protocol_version=1)

        async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
            return NewSessionResponse(session_id="bench-session")

        async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
            for update in objects:
                await self.conn.session_update(session_id=session_id, update=update)
            return PromptResponse(stop_reason="end_turn")

    asyncio.run(run_agent(TurnAgent()))


if __name__ == "__main__":
    which, path = sys.argv[1], sys.argv[2]
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    {"acpgen": acpgen_agent, "sdk": sdk_agent}[which](data)
