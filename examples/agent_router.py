#!/usr/bin/env python3
"""One ACP agent process for v1 and v2 clients: the v1 example agent (examples/agent.py) and the
v2 one (examples/agent_v2.py) behind the version router of the generated packages.

    python examples/agent_router.py   # stdin/stdout; the first `initialize` picks the version

A client asking for protocol 2 or later gets the v2 agent, one asking for 1 the v1 agent, and so
does one asking for 0: v1 has no version error, so the v1 agent answers with its own version and
the client decides (a v2-only router would answer -32022). Before that `initialize`, other requests
get -32600 and notifications are ignored; the connection stays open.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import acp_v1
import acp_v2
from agent import ExampleAgent
from agent_v2 import ExampleV2Agent


def main() -> None:
    logging.basicConfig(level=os.environ.get("ACP_EXAMPLE_LOG", "WARNING"), stream=sys.stderr)
    asyncio.run(acp_v2.run_router(acp_v1.agent_route(ExampleAgent), acp_v2.agent_route(ExampleV2Agent)))


if __name__ == "__main__":
    main()
