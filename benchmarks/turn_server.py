"""The server side of the remote prompt-turn benchmark: a prompt-turn agent served by Hypercorn
(HTTP/2 cleartext and WebSocket on one port) as `acpgen` (the generated acp_v1 AcpApp) or `sdk`
(the official Python SDK's `create_asgi_app`). Both answer initialize and session/new, and answer
every session/prompt with the same session/update notifications (UPDATES.json) and `end_turn`.

    python benchmarks/turn_server.py acpgen|sdk UPDATES.json FD     # FD: a listening socket
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def acpgen_app(updates: list[dict[str, Any]]) -> Any:
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

    return acp.AcpApp(TurnAgent)


def sdk_app(updates: list[dict[str, Any]]) -> Any:
    from acp import InitializeResponse, NewSessionResponse, PromptResponse
    from acp.http.asgi import create_asgi_app
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

    return create_asgi_app(lambda conn: TurnAgent())


async def serve(app: Any, fd: int) -> None:
    from hypercorn.asyncio import serve as hypercorn_serve
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"fd://{fd}"]
    config.accesslog = None
    config.loglevel = "WARNING"
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await hypercorn_serve(app, config, shutdown_trigger=stop.wait)


if __name__ == "__main__":
    which, path, fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    asyncio.run(serve({"acpgen": acpgen_app, "sdk": sdk_app}[which](data), fd))
