"""The scale story on loopback: two agent processes (examples/remote_agent.py, started with the
docs/remote.md's Hypercorn and Uvicorn commands), a sticky router that sends a client back to the node named
by its `acp-node` cookie, and a session resumed with session/load after the connection dropped."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.remote.test_remote import init_request
from tests.remote_support import ROOT, acp_v1

LIMIT_S = 30.0
TOKEN = "sticky-t0ken"  # one caller across reconnects: the identity that owns the session


def listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


@pytest.fixture
def nodes() -> Iterator[dict[str, int]]:
    """Node "a" under Hypercorn and node "b" under Uvicorn; name -> port. Both are stopped after."""
    commands = {
        "a": lambda fd: [sys.executable, "-m", "hypercorn", "examples/remote_agent:app", "--bind", f"fd://{fd}"],
        "b": lambda fd: [sys.executable, "-m", "uvicorn", "--app-dir", "examples", "remote_agent:app", "--fd", str(fd),
                         "--log-level", "warning"],
    }
    processes: list[subprocess.Popen[bytes]] = []
    ports: dict[str, int] = {}
    try:
        for name, command in commands.items():
            sock = listening_socket()
            ports[name] = sock.getsockname()[1]
            env = {**os.environ, "ACP_NODE": name, "ACP_EXAMPLE_PAUSE_S": "0.05", "ACP_TOKEN": TOKEN}
            processes.append(subprocess.Popen(command(sock.fileno()), cwd=ROOT, env=env, pass_fds=[sock.fileno()]))
            sock.close()  # the server process holds its own copy
        yield ports
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


class Recording(acp_v1.Client):
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.updates: list[str] = []

    async def session_update(self, params: acp_v1.SessionNotification) -> None:
        wire = acp_v1.encode(params.update)
        self.updates.append(str(wire["sessionUpdate"]) if isinstance(wire, dict) else "?")

    async def session_request_permission(self, params: acp_v1.RequestPermissionRequest) -> acp_v1.RequestPermissionResponse:
        return acp_v1.RequestPermissionResponse(outcome=acp_v1.SelectedRequestPermissionOutcome(option_id="allow"))

    async def fs_read_text_file(self, params: acp_v1.ReadTextFileRequest) -> acp_v1.ReadTextFileResponse:
        return acp_v1.ReadTextFileResponse(content=Path(params.path).read_text())


class StickyRouter:
    """What a load balancer with cookie affinity does: a new client goes to the next node in turn,
    a client with an `acp-node` cookie goes back to that node."""

    def __init__(self, ports: dict[str, int], profile: str) -> None:
        self.ports = ports
        self.scheme = "ws" if profile == "ws" else "http"
        self.turn = 0

    def url(self, cookies: dict[str, str]) -> str:
        node = cookies.get("acp-node")
        if node is None:
            node = sorted(self.ports)[self.turn % len(self.ports)]
            self.turn += 1
        return f"{self.scheme}://127.0.0.1:{self.ports[node]}/acp"


@pytest.mark.parametrize("profile", ["ws", "http"])
def test_a_session_resumes_on_reconnect_through_a_sticky_router(nodes: dict[str, int], profile: str, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("resumable\n")
    # Uvicorn speaks HTTP/1.1 only; the token makes the reconnect the same caller.
    options: dict[str, Any] = {"http2": False, "headers": {"Authorization": f"Bearer {TOKEN}"}}

    async def main() -> None:
        router = StickyRouter(nodes, profile)
        jar: dict[str, str] = {}
        client = Recording(tmp_path)
        prompt = [acp_v1.TextContentBlock(text="read README.md")]
        async with acp_v1.connect_agent(client, router.url(jar), cookies=jar, **options) as conn:
            init = await conn.initialize(init_request())
            assert init.agent_capabilities is not None and init.agent_capabilities.load_session is True
            session = await conn.session_new(acp_v1.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[]))
            first = await conn.session_prompt(acp_v1.PromptRequest(session_id=session.session_id, prompt=prompt))
            assert first.stop_reason == "end_turn"
        node = jar["acp-node"]
        assert node in nodes
        turn = list(client.updates)
        # The connection is gone. Reconnect: the cookie takes us back to the same node, where the
        # session is loaded (its history replayed) and the conversation goes on.
        client.updates.clear()
        async with acp_v1.connect_agent(client, router.url(jar), cookies=jar, **options) as conn:
            await conn.initialize(init_request())
            await conn.session_load(acp_v1.LoadSessionRequest(session_id=session.session_id, cwd=str(tmp_path), mcp_servers=[]))
            replayed = list(client.updates)
            again = await conn.session_prompt(acp_v1.PromptRequest(session_id=session.session_id, prompt=prompt))
            assert again.stop_reason == "end_turn"
        assert replayed == ["user_message_chunk", *turn]
        assert jar["acp-node"] == node
        # Without affinity the other node does not know the session: that is why the router is sticky.
        other = {"acp-node": next(n for n in nodes if n != node)}
        async with acp_v1.connect_agent(acp_v1.Client(), router.url(other), cookies=other, **options) as conn:
            await conn.initialize(init_request())
            with pytest.raises(acp_v1.RequestError) as info:
                await conn.session_load(acp_v1.LoadSessionRequest(session_id=session.session_id, cwd=str(tmp_path), mcp_servers=[]))
            assert info.value.code == -32002

    asyncio.run(asyncio.wait_for(main(), LIMIT_S))
