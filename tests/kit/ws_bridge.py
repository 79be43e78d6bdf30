#!/usr/bin/env python3
"""Serve a stdio agent over WebSocket for the kit's remote tests: each connection starts the
command and carries its lines as text frames, both ways (no Acp-Connection-Id: the kit does not
need one). Ends its agents with their connections.

    python ws_bridge.py PORT -- CMD [ARGS]..."""

from __future__ import annotations

import asyncio
import contextlib
import sys

from websockets.asyncio.server import ServerConnection, serve


async def bridge(socket: ServerConnection, command: list[str]) -> None:
    agent = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE,
                                                 stdout=asyncio.subprocess.PIPE, limit=1 << 26)
    assert agent.stdin is not None and agent.stdout is not None

    async def to_agent() -> None:
        assert agent.stdin is not None
        async for frame in socket:
            if isinstance(frame, str):
                agent.stdin.write(frame.encode() + b"\n")
                await agent.stdin.drain()
        agent.stdin.close()

    async def to_client() -> None:
        assert agent.stdout is not None
        while line := await agent.stdout.readline():
            await socket.send(line.rstrip(b"\n").decode("utf-8", "replace"))

    try:
        await asyncio.gather(to_agent(), to_client())
    except Exception:
        pass
    finally:
        with contextlib.suppress(ProcessLookupError):
            agent.kill()
        await agent.wait()


async def main() -> None:
    port, command = int(sys.argv[1]), sys.argv[3:]
    async with serve(lambda socket: bridge(socket, command), "127.0.0.1", port, max_size=1 << 26):
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
