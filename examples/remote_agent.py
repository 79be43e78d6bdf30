#!/usr/bin/env python3
"""The example agent (agent.py) served remotely on one `/acp` endpoint: WebSocket and Streamable HTTP.

    hypercorn examples/remote_agent:app --bind 127.0.0.1:8000      # HTTP/2 (h2c) and WebSocket
    uvicorn --app-dir examples remote_agent:app --port 8000         # WebSocket (and HTTP/1.1)
    python examples/remote_agent.py --port 8000 [--server uvicorn]  # the same through serve_agent

Each connection gets its own ExampleAgent; they share one session store, so a client that reconnects
resumes its session with session/load. Environment: ACP_TOKEN (if set, every request must carry
`Authorization: Bearer $ACP_TOKEN`), ACP_NODE (if set, sent as the cookie `acp-node`, which a sticky
load balancer can route on), ACP_ALLOWED_ORIGINS (comma-separated `Origin` values to accept).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_v1 as acp
from agent import ExampleAgent, Session

SESSIONS: dict[str, Session] = {}
TOKEN = os.environ.get("ACP_TOKEN")
NODE = os.environ.get("ACP_NODE")


AUTHENTICATE = acp.bearer_token(TOKEN) if TOKEN else None
COOKIE = ("acp-node", NODE) if NODE else None
ORIGINS = [origin for origin in os.environ.get("ACP_ALLOWED_ORIGINS", "").split(",") if origin]


def make_agent(conn: acp.AgentSideConnection) -> ExampleAgent:
    return ExampleAgent(conn, SESSIONS)


app = acp.AcpApp(make_agent, authenticate=AUTHENTICATE, cookie=COOKIE, allowed_origins=ORIGINS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--server", choices=["hypercorn", "uvicorn"], default="hypercorn")
    args = parser.parse_args()
    logging.basicConfig(level=os.environ.get("ACP_EXAMPLE_LOG", "WARNING"), stream=sys.stderr)
    acp.serve_agent(make_agent, host=args.host, port=args.port, server=args.server,
                    authenticate=AUTHENTICATE, cookie=COOKIE, allowed_origins=ORIGINS)


if __name__ == "__main__":
    main()
