#!/usr/bin/env python3
"""ACP v1 client peer over the official Python SDK's remote transports (agent-client-protocol
1.0.0rc3 in .venv-sdk1: `acp.ws.create_websocket_stream`, `acp.http.create_http_stream` on httpx2,
HTTP/2 cleartext with prior knowledge), with py_client.py's client.

    python py_remote_client.py [--cancel] [--cwd DIR] ws|http URL

Runs initialize, session/new and one prompt turn; prints py_client.py's summary line (JSON:
stopReason, updates, permissionRequests, fsReads, errors) and exits 0 when it could run.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import py_client  # noqa: E402
from acp import connect_to_agent, schema  # noqa: E402


async def transport(profile: str, url: str) -> Any:
    if profile == "ws":
        from acp.ws import create_websocket_stream

        return await create_websocket_stream(url)
    import httpx2
    from acp.http import create_http_stream

    client = httpx2.AsyncClient(http1=False, http2=True, timeout=httpx2.Timeout(10.0, read=None))
    return create_http_stream(url, client=client)


async def turn(profile: str, url: str, cwd: str, cancel: bool) -> dict[str, Any]:
    summary: dict[str, Any] = {"stopReason": None, "updates": [], "permissionRequests": 0, "fsReads": [],
                               "errors": []}
    logging.getLogger().addHandler(py_client.SdkErrorLog(summary["errors"]))
    peer = py_client.PeerClient(summary, cancel)
    conn = connect_to_agent(peer, await transport(profile, url))
    peer.conn = conn
    try:
        caps = schema.ClientCapabilities(fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True))
        init = await conn.initialize(1, caps, schema.Implementation(name="py_remote_client", version="0"))
        if init.protocol_version != 1:
            summary["errors"].append(f"agent answered protocolVersion {init.protocol_version!r}")
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id,
                                     prompt=[schema.TextContentBlock(type="text", text="read README.md")])
        summary["stopReason"] = response.stop_reason
    except Exception as exc:  # RequestError, pydantic ValidationError, ConnectionError
        summary["errors"].append(f"{type(exc).__name__}: {exc}"[:2000])
    finally:
        await conn.close()
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cancel", action="store_true")
    parser.add_argument("--cwd", default=".")
    parser.add_argument("profile", choices=("ws", "http"))
    parser.add_argument("url")
    args = parser.parse_args()
    summary = asyncio.run(asyncio.wait_for(turn(args.profile, args.url, str(Path(args.cwd).resolve()), args.cancel), 60))
    py_client.print_summary(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
