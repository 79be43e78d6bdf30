#!/usr/bin/env python3
"""An ACP client built on the generated `acp_v1` package (standard library only).

    python examples/client.py [--cwd DIR] [--prompt TEXT] [--cancel] [--json] CMD [ARGS...]

Spawns CMD as an agent, runs initialize, session/new and one session/prompt turn, answers the
agent's session/request_permission (first "allow" option) and fs/read_text_file /
fs/write_text_file requests (real files under the session cwd; a missing file is answered with
-32002), prints every session/update it receives, and exits 0 only if the turn completed
(`end_turn`; with --cancel it sends session/cancel after the first update and expects
`cancelled`). With --json the last line on stdout is a summary for tools: stop reason, update
kinds in order, permission requests, files read, and every problem seen (an incoming message that
did not decode, an error answer, an early close).
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

import acp_v1 as acp


class Problems(logging.Handler):
    """Collects what the runtime logs at WARNING or above (such as a notification that did not decode)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(record.getMessage())


class ExampleClient(acp.Client):
    def __init__(self, cancel: bool, echo: bool) -> None:
        self.cancel_after_first = cancel
        self.echo = echo
        self.conn: acp.ClientSideConnection | None = None
        self.updates: list[str] = []
        self.permission_requests = 0
        self.reads: list[str] = []
        self.cancel_sent = False

    def say(self, line: str) -> None:
        if self.echo:
            print(line, flush=True)

    async def session_update(self, params: acp.SessionNotification) -> None:
        update = params.update
        wire = acp.encode(update)
        kind = str(wire.get("sessionUpdate")) if isinstance(wire, dict) else "?"
        self.updates.append(kind)
        self.say(f"update {kind}: {describe(update)}")
        if self.cancel_after_first and not self.cancel_sent and self.conn is not None:
            self.cancel_sent = True
            await self.conn.session_cancel(acp.CancelNotification(session_id=params.session_id))

    async def session_request_permission(
        self, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        self.permission_requests += 1
        self.say(f"permission asked for {params.tool_call.title or params.tool_call.tool_call_id}")
        allow = [o for o in params.options if o.kind in ("allow_once", "allow_always")]
        if self.cancel_sent or not allow:
            return acp.RequestPermissionResponse(outcome=acp.CancelledRequestPermissionOutcome())
        return acp.RequestPermissionResponse(outcome=acp.SelectedRequestPermissionOutcome(option_id=allow[0].option_id))

    async def fs_read_text_file(self, params: acp.ReadTextFileRequest) -> acp.ReadTextFileResponse:
        self.reads.append(params.path)
        try:
            content = Path(params.path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise acp.RequestError.resource_not_found(params.path) from None
        except OSError as exc:
            raise acp.RequestError.internal_error({"message": str(exc)}) from None
        if isinstance(params.line, int) or isinstance(params.limit, int):
            lines = content.splitlines(keepends=True)
            start = max((params.line if isinstance(params.line, int) else 1) - 1, 0)
            end = start + params.limit if isinstance(params.limit, int) else None
            content = "".join(lines[start:end])
        return acp.ReadTextFileResponse(content=content)

    async def fs_write_text_file(self, params: acp.WriteTextFileRequest) -> acp.WriteTextFileResponse:
        Path(params.path).write_text(params.content, encoding="utf-8")
        return acp.WriteTextFileResponse()


def describe(update: acp.SessionUpdate) -> str:
    """One line about an update: its text (first line, shortened), or its title and status."""
    wire = acp.encode(update)
    if not isinstance(wire, dict):
        return "-"
    content = wire.get("content")
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        first = content["text"].strip().splitlines()[:1]
        line = first[0] if first else ""
        return line if len(line) <= 80 else line[:77] + "..."
    return " ".join(str(wire[k]) for k in ("title", "status") if isinstance(wire.get(k), str)) or "-"


async def run(args: argparse.Namespace, problems: Problems) -> dict[str, object]:
    client = ExampleClient(cancel=args.cancel, echo=not args.json)
    stop_reason: str | None = None
    errors = problems.seen
    async with acp.spawn_agent(lambda conn: client, args.command, *args.args) as conn:
        client.conn = conn
        try:
            init = await conn.initialize(
                acp.InitializeRequest(
                    protocol_version=acp.PROTOCOL_VERSION or 1,
                    client_capabilities=acp.ClientCapabilities(
                        fs=acp.FileSystemCapabilities(read_text_file=True, write_text_file=True)
                    ),
                    client_info=acp.Implementation(name="acpgen-example-client", version=acp.ACPGEN_VERSION),
                )
            )
            client.say(f"agent speaks protocol version {init.protocol_version}")
            session = await conn.session_new(acp.NewSessionRequest(cwd=args.cwd, mcp_servers=[]))
            client.say(f"session {session.session_id}")
            result = await conn.session_prompt(
                acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text=args.prompt)])
            )
            stop_reason = str(acp.encode(result.stop_reason))
            client.say(f"stop reason: {stop_reason}")
        except acp.RequestError as exc:
            errors.append(f"error answer: {exc.code} {exc.message} {json.dumps(exc.data)}")
        except (acp.ConnectionClosedError, acp.ValidationError) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    return {
        "stopReason": stop_reason,
        "updates": client.updates,
        "permissionRequests": client.permission_requests,
        "fsReads": client.reads,
        "errors": errors,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", default=os.getcwd(), help="the session's working directory")
    parser.add_argument("--prompt", default="read README.md")
    parser.add_argument("--cancel", action="store_true", help="cancel the turn after the first update")
    parser.add_argument("--json", action="store_true", help="print only a JSON summary line")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("command")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    args.cwd = os.path.abspath(args.cwd)
    problems = Problems()
    logging.getLogger("acp_v1").addHandler(problems)
    try:
        summary = asyncio.run(asyncio.wait_for(run(args, problems), args.timeout))
    except asyncio.TimeoutError:
        problems.seen.append(f"timed out after {args.timeout} s")
        summary = {"stopReason": None, "errors": problems.seen}
    except OSError as exc:  # the agent command could not be started
        problems.seen.append(f"could not start {args.command!r}: {exc.strerror or exc}")
        summary = {"stopReason": None, "errors": problems.seen}
    if args.json:
        print(json.dumps(summary), flush=True)
    else:
        for problem in problems.seen:
            print(f"problem: {problem}", flush=True)
    expected = "cancelled" if args.cancel else "end_turn"
    return 0 if summary["stopReason"] == expected and not problems.seen else 1


if __name__ == "__main__":
    sys.exit(main())
