#!/usr/bin/env python3
"""py_agent.py's agent served remotely by the official Python SDK 1.0.0rc3 (.venv-sdk1): its ASGI app
(`acp.http.asgi.create_asgi_app`: Streamable HTTP and WebSocket on /acp) under Uvicorn or Hypercorn
(HTTP/2 cleartext) on 127.0.0.1.

    python py_remote_agent.py [--cancel-window S] uvicorn|hypercorn

Prints `PORT <n>` once it listens, then serves until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import py_agent  # noqa: E402
from acp.http.asgi import create_asgi_app  # noqa: E402


async def serve(server: str) -> None:
    app = create_asgi_app(lambda conn: py_agent.PeerAgent())
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    if server == "uvicorn":
        import uvicorn

        instance = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        await instance.serve(sockets=[sock])
        return
    from hypercorn.asyncio import serve as hypercorn_serve
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.loglevel = "WARNING"
    await hypercorn_serve(app, config)  # type: ignore[arg-type]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cancel-window", type=float, default=0.2)
    parser.add_argument("server", choices=("uvicorn", "hypercorn"))
    args = parser.parse_args()
    py_agent.CANCEL_WINDOW_S = args.cancel_window
    asyncio.run(serve(args.server))
    return 0


if __name__ == "__main__":
    sys.exit(main())
