#!/usr/bin/env python3
"""An ACP client that speaks v1 or v2, built on the generated `acp_v1` and `acp_v2` packages.

    python examples/client_versions.py [--protocol auto|1|2] [--cwd DIR] [--prompt TEXT] [--cancel] [--json] CMD [ARGS...]

Spawns CMD as an agent and initializes it with `spawn_agent_negotiated`: `auto` (the default)
asks for v2 and falls back to v1 when the agent answers with v1 (or lists only v1 in a -32022);
`1` or `2` speaks only that version. Then one prompt turn in that version's terms:

- v1 (the `ExampleClient` of examples/client.py): `session/prompt` returns the stop reason; the
  client answers permission requests and fs reads.
- v2: `session/prompt` returns the inserted message's id at once; the turn's end is the idle
  `state_update` and its `stopReason`. The client answers permission requests (v2 has no fs
  methods: the agent reads files itself).

With --cancel, session/cancel goes out after the first agent message chunk. With --json the last
line on stdout is a summary: protocol version, stop reason, update kinds (v2 state updates as
`state_update:<state>`), permission requests, v2 message id, problems seen.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import acp_v1
import acp_v2
from client import ExampleClient, Problems


class ExampleV2Client(acp_v2.Client):
    def __init__(self, cancel: bool) -> None:
        self.cancel_after_first = cancel
        self.conn: acp_v2.ClientSideConnection | None = None
        self.updates: list[str] = []
        self.permission_requests = 0
        self.cancel_sent = False
        self.idle = asyncio.Event()
        self.stop_reason: str | None = None

    async def session_update(self, params: acp_v2.UpdateSessionNotification) -> None:
        wire = acp_v2.encode(params.update)
        kind = str(wire.get("sessionUpdate")) if isinstance(wire, dict) else "?"
        if isinstance(params.update, acp_v2.StateUpdateSessionUpdate) and isinstance(wire, dict):
            kind = f"{kind}:{wire.get('state')}"
            if isinstance(params.update.state_update, acp_v2.IdleStateUpdateVariant):
                stop = wire.get("stopReason")
                self.stop_reason = stop if isinstance(stop, str) else None
                self.idle.set()
        self.updates.append(kind)
        if (self.cancel_after_first and not self.cancel_sent and self.conn is not None
                and isinstance(params.update, acp_v2.AgentMessageChunkSessionUpdate)):
            self.cancel_sent = True
            await self.conn.session_cancel(acp_v2.CancelSessionNotification(session_id=params.session_id))

    async def session_request_permission(
        self, params: acp_v2.RequestPermissionRequest
    ) -> acp_v2.RequestPermissionResponse:
        self.permission_requests += 1
        allow = [o for o in params.options if o.kind in ("allow_once", "allow_always")]
        if self.cancel_sent or not allow:
            return acp_v2.RequestPermissionResponse(outcome=acp_v2.CancelledRequestPermissionOutcome())
        return acp_v2.RequestPermissionResponse(
            outcome=acp_v2.SelectedRequestPermissionOutcome(option_id=allow[0].option_id)
        )


async def v1_turn(conn: acp_v1.ClientSideConnection, client: ExampleClient, args: argparse.Namespace) -> dict[str, object]:
    client.conn = conn
    session = await conn.session_new(acp_v1.NewSessionRequest(cwd=args.cwd, mcp_servers=[]))
    result = await conn.session_prompt(
        acp_v1.PromptRequest(session_id=session.session_id, prompt=[acp_v1.TextContentBlock(text=args.prompt)])
    )
    return {"stopReason": str(acp_v1.encode(result.stop_reason)), "updates": client.updates,
            "permissionRequests": client.permission_requests, "fsReads": client.reads}


async def v2_turn(conn: acp_v2.ClientSideConnection, client: ExampleV2Client, args: argparse.Namespace) -> dict[str, object]:
    client.conn = conn
    session = await conn.session_new(acp_v2.NewSessionRequest(cwd=args.cwd))
    ack = await conn.session_prompt(
        acp_v2.PromptRequest(session_id=session.session_id, prompt=[acp_v2.TextContentBlock(text=args.prompt)])
    )
    await asyncio.wait_for(client.idle.wait(), args.timeout)
    return {"stopReason": client.stop_reason, "updates": client.updates,
            "permissionRequests": client.permission_requests, "messageId": ack.message_id}


async def run(args: argparse.Namespace, problems: Problems) -> dict[str, object]:
    v1_client = ExampleClient(cancel=args.cancel, echo=False)
    v2_client = ExampleV2Client(cancel=args.cancel)
    routes = []
    if args.protocol in ("auto", "2"):
        routes.append(acp_v2.client_route(v2_client, acp_v2.InitializeRequest(
            protocol_version=2,
            info=acp_v2.Implementation(name="acpgen-example-client", version=acp_v2.ACPGEN_VERSION),
        )))
    if args.protocol in ("auto", "1"):
        routes.append(acp_v1.client_route(v1_client, acp_v1.InitializeRequest(
            protocol_version=1,
            client_capabilities=acp_v1.ClientCapabilities(
                fs=acp_v1.FileSystemCapabilities(read_text_file=True, write_text_file=True)
            ),
            client_info=acp_v1.Implementation(name="acpgen-example-client", version=acp_v1.ACPGEN_VERSION),
        )))
    summary: dict[str, object] = {"protocolVersion": None, "stopReason": None}
    try:
        async with acp_v2.spawn_agent_negotiated(routes, args.command, *args.args) as negotiated:
            summary["protocolVersion"] = negotiated.version
            summary["tried"] = negotiated.tried
            if isinstance(negotiated.connection, acp_v2.ClientSideConnection):
                summary.update(await v2_turn(negotiated.connection, v2_client, args))
            elif isinstance(negotiated.connection, acp_v1.ClientSideConnection):
                summary.update(await v1_turn(negotiated.connection, v1_client, args))
    except (acp_v1.RequestError, acp_v2.RequestError) as exc:
        problems.seen.append(f"error answer: {exc.code} {exc.message} {json.dumps(exc.data)}")
    except (ConnectionError, acp_v1.ValidationError, acp_v2.ValidationError) as exc:
        problems.seen.append(f"{type(exc).__name__}: {exc}")
    summary["errors"] = problems.seen
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", choices=("auto", "1", "2"), default="auto")
    parser.add_argument("--cwd", default=os.getcwd(), help="the session's working directory")
    parser.add_argument("--prompt", default="read README.md")
    parser.add_argument("--cancel", action="store_true", help="cancel the turn after the first agent message chunk")
    parser.add_argument("--json", action="store_true", help="print only a JSON summary line")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("command")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    args.cwd = os.path.abspath(args.cwd)
    problems = Problems()
    for package in ("acp_v1", "acp_v2"):
        logging.getLogger(package).addHandler(problems)
    try:
        summary = asyncio.run(asyncio.wait_for(run(args, problems), args.timeout))
    except asyncio.TimeoutError:
        problems.seen.append(f"timed out after {args.timeout} s")
        summary = {"stopReason": None, "errors": problems.seen}
    except OSError as exc:
        problems.seen.append(f"could not start {args.command!r}: {exc.strerror or exc}")
        summary = {"stopReason": None, "errors": problems.seen}
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        for key, value in summary.items():
            print(f"{key}: {value}", flush=True)
    expected = "cancelled" if args.cancel else "end_turn"
    return 0 if summary["stopReason"] == expected and not problems.seen else 1


if __name__ == "__main__":
    sys.exit(main())
