#!/usr/bin/env python3
"""ACP agent peer on the official Python SDK 1.0.0rc3: a v1 agent (py_agent.py's) and a small v2
agent behind the SDK's `AgentProtocolRouter` (`acp.experimental`), which picks one from the first
`initialize` and refuses a second one on the same connection.

    python py_router_agent.py [--only v1|v2]

Logs `routed v1 (requested N)` / `routed v2 (requested N)` to stderr from each agent's initialize.
The v2 turn: the prompt is answered with its messageId at once, then user_message,
state_update running, agent_message_chunk echoing the prompt, and state_update idle (`end_turn`,
or `cancelled` after session/cancel, which lands in a 200 ms window).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import uuid
from pathlib import Path
from typing import Any

from acp.experimental import AgentProtocolRouter
from acp.experimental.v2 import schema as v2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from py_agent import PeerAgent  # noqa: E402

log = logging.getLogger("py_router_agent")


class RoutedV1Agent(PeerAgent):
    async def initialize(self, protocol_version: int, *args: Any, **kwargs: Any) -> Any:
        log.info("routed v1 (requested %s)", REQUESTED.get("version"))
        return await super().initialize(protocol_version, *args, **kwargs)


REQUESTED: dict[str, int] = {}


def update(session_id: str, wire: dict[str, Any]) -> Any:
    return v2.UpdateSessionNotification.model_validate({"sessionId": session_id, "update": wire}).update


class V2Agent:
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.cancelled: dict[str, asyncio.Event] = {}
        self.turns: set[asyncio.Task[None]] = set()

    async def initialize(self, protocol_version: int, info: Any, capabilities: Any = None, **_: Any) -> Any:
        log.info("routed v2 (requested %s)", REQUESTED.get("version"))
        return v2.InitializeResponse.model_validate(
            {"protocolVersion": 2, "info": {"name": "py_router_agent", "version": "0"}, "capabilities": {}}
        )

    async def new_session(self, cwd: str, **_: Any) -> Any:
        session_id = f"py2-{uuid.uuid4()}"
        self.cancelled[session_id] = asyncio.Event()
        return v2.NewSessionResponse.model_validate({"sessionId": session_id})

    async def cancel_session(self, session_id: str, **_: Any) -> None:
        if event := self.cancelled.get(session_id):
            event.set()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> Any:
        message_id = f"py2-user-{uuid.uuid4()}"
        text = " ".join(getattr(block, "text", "") for block in prompt)
        task = asyncio.ensure_future(self.turn(session_id, message_id, text))
        self.turns.add(task)
        task.add_done_callback(self.turns.discard)
        return v2.PromptResponse.model_validate({"messageId": message_id})

    async def turn(self, session_id: str, message_id: str, text: str) -> None:
        await asyncio.sleep(0)  # after the prompt's answer
        cancelled = self.cancelled[session_id]
        cancelled.clear()
        send = self.conn.session_update
        await send(session_id=session_id, update=update(session_id, {
            "sessionUpdate": "user_message", "messageId": message_id, "content": [{"type": "text", "text": text}]}))
        await send(session_id=session_id, update=update(session_id, {"sessionUpdate": "state_update", "state": "running"}))
        await send(session_id=session_id, update=update(session_id, {
            "sessionUpdate": "agent_message_chunk", "messageId": f"py2-agent-{uuid.uuid4()}",
            "content": {"type": "text", "text": f"py_router_agent got: {text}"}}))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(cancelled.wait(), 0.2)
        stop = "cancelled" if cancelled.is_set() else "end_turn"
        await send(session_id=session_id, update=update(session_id, {
            "sessionUpdate": "state_update", "state": "idle", "stopReason": stop}))


def remember_requested_version(router: AgentProtocolRouter) -> None:
    """Wraps the router's protocol-version reader to log what the client asked for."""
    from acp.experimental import negotiation

    read = negotiation._read_protocol_version

    def reading(params: Any) -> int:
        version = read(params)
        REQUESTED.setdefault("version", version)
        return version

    negotiation._read_protocol_version = reading


async def main(only: str | None) -> int:
    def v1(conn: Any) -> RoutedV1Agent:
        agent = RoutedV1Agent()
        agent.on_connect(conn)
        return agent

    router = AgentProtocolRouter(v1=None if only == "v2" else v1, v2=None if only == "v1" else V2Agent)
    remember_requested_version(router)
    timeout = float(os.environ.get("PEER_TIMEOUT_S", "120"))
    try:
        await asyncio.wait_for(router.run(), timeout)
    except asyncio.TimeoutError:
        log.error("no end of input after %g s", timeout)
        return 3
    return 0


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[py_router_agent] %(message)s")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["v1", "v2"])
    sys.exit(asyncio.run(main(parser.parse_args().only)))
