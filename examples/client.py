#!/usr/bin/env python3
"""An ACP client built on the generated `acp_v1` package (standard library only).

    python examples/client.py [--cwd DIR] [--prompt TEXT] [--cancel] [--json] CMD [ARGS...]

Spawns CMD as an agent, runs initialize (and checks the protocol version the agent answers),
session/new and one session/prompt turn, answers the agent's session/request_permission (first
"allow" option), fs/read_text_file / fs/write_text_file requests (real files under the session
cwd; a missing file is answered with -32002) and terminal/* requests (real processes, output kept
up to the agent's byte limit; a `command` without `args` is a command line, run by /bin/sh), prints every session/update it receives, and exits 0 only if the
turn completed (`end_turn`; with --cancel it sends session/cancel after the first update and
expects `cancelled`). With --json the last line on stdout is a summary for tools: stop reason,
update kinds in order, permission requests, files read, commands run, and every problem seen (an
incoming message that did not decode, an error answer, an early close, noise on the agent's stdout).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from dataclasses import dataclass, field
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


@dataclass
class Terminal:
    """A command the agent runs through terminal/create: its process and its output so far."""

    process: asyncio.subprocess.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    pump: asyncio.Task[None] | None = None

    async def read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(64 * 1024):
            self.output += chunk
            if self.limit is not None and len(self.output) > self.limit:
                del self.output[: len(self.output) - self.limit]  # keep the end, as the spec asks
                while self.output and self.output[0] & 0xC0 == 0x80:  # at a character boundary
                    del self.output[0]
                self.truncated = True

    def exit_status(self) -> acp.TerminalExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return acp.TerminalExitStatus(exit_code=None, signal=signal.Signals(-code).name)
        return acp.TerminalExitStatus(exit_code=code, signal=None)


class ExampleClient(acp.Client):
    def __init__(self, cancel: bool, echo: bool) -> None:
        self.cancel_after_first = cancel
        self.echo = echo
        self.conn: acp.ClientSideConnection | None = None
        self.updates: list[str] = []
        self.permission_requests = 0
        self.reads: list[str] = []
        self.commands: list[list[str]] = []
        self.terminals: dict[str, Terminal] = {}
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

    async def terminal_create(self, params: acp.CreateTerminalRequest) -> acp.CreateTerminalResponse:
        args = params.args if isinstance(params.args, list) else []
        env = dict(os.environ) | {v.name: v.value for v in params.env} if isinstance(params.env, list) else None
        self.commands.append([params.command, *args])
        self.say(f"terminal: {params.command} {' '.join(args)}")
        cwd = params.cwd if isinstance(params.cwd, str) else None
        pipes = asyncio.subprocess
        try:
            if args:
                process = await asyncio.create_subprocess_exec(
                    params.command, *args, stdin=pipes.DEVNULL, stdout=pipes.PIPE, stderr=pipes.STDOUT, env=env, cwd=cwd)
            else:  # a command line without args (`{"command": "cat README.md"}`, as claude-code-acp sends): a shell runs it
                process = await asyncio.create_subprocess_shell(
                    params.command, stdin=pipes.DEVNULL, stdout=pipes.PIPE, stderr=pipes.STDOUT, env=env, cwd=cwd)
        except OSError as exc:
            raise acp.RequestError.internal_error({"message": f"cannot run {params.command!r}: {exc.strerror or exc}"}) from None
        limit = params.output_byte_limit if isinstance(params.output_byte_limit, int) else None
        terminal = Terminal(process, limit)
        terminal.pump = asyncio.create_task(terminal.read())
        terminal_id = f"term-{len(self.commands)}"
        self.terminals[terminal_id] = terminal
        return acp.CreateTerminalResponse(terminal_id=terminal_id)

    def terminal(self, terminal_id: str) -> Terminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            raise acp.RequestError.invalid_params({"path": "terminalId", "message": f"no terminal {terminal_id!r}"})
        return terminal

    async def terminal_output(self, params: acp.TerminalOutputRequest) -> acp.TerminalOutputResponse:
        terminal = self.terminal(params.terminal_id)
        return acp.TerminalOutputResponse(
            output=terminal.output.decode("utf-8", "replace"), truncated=terminal.truncated,
            exit_status=terminal.exit_status(),
        )

    async def terminal_wait_for_exit(self, params: acp.WaitForTerminalExitRequest) -> acp.WaitForTerminalExitResponse:
        terminal = self.terminal(params.terminal_id)
        await terminal.process.wait()
        if terminal.pump is not None:
            await terminal.pump  # all of the output is in before the agent asks for it
        status = terminal.exit_status()
        assert status is not None
        return acp.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def terminal_kill(self, params: acp.KillTerminalRequest) -> acp.KillTerminalResponse:
        terminal = self.terminal(params.terminal_id)
        if terminal.process.returncode is None:
            terminal.process.kill()
        return acp.KillTerminalResponse()

    async def terminal_release(self, params: acp.ReleaseTerminalRequest) -> acp.ReleaseTerminalResponse:
        await self.release(self.terminal(params.terminal_id))
        del self.terminals[params.terminal_id]
        return acp.ReleaseTerminalResponse()

    async def release(self, terminal: Terminal) -> None:
        if terminal.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                terminal.process.kill()
            await terminal.process.wait()
        if terminal.pump is not None:
            terminal.pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await terminal.pump


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
            # initialize raises ProtocolVersionError (and closes) if the agent answers a version
            # this package does not speak.
            init = await conn.initialize(
                protocol_version=max(acp.SUPPORTED_PROTOCOL_VERSIONS),
                client_capabilities=acp.ClientCapabilities(
                    fs=acp.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
                ),
                client_info=acp.Implementation(name="acpgen-example-client", version=acp.ACPGEN_VERSION),
            )
            client.say(f"agent speaks protocol version {init.protocol_version}")
            session = await conn.session_new(cwd=args.cwd, mcp_servers=[])
            client.say(f"session {session.session_id}")
            result = await conn.session_prompt(
                acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text=args.prompt)])
            )
            stop_reason = str(acp.encode(result.stop_reason))
            client.say(f"stop reason: {stop_reason}")
        except acp.RequestError as exc:
            errors.append(f"error answer: {exc}")
        except (acp.ConnectionClosedError, acp.ProtocolVersionError, acp.ValidationError) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            for terminal in client.terminals.values():  # the agent did not release them
                await client.release(terminal)
    return {
        "stopReason": stop_reason,
        "updates": client.updates,
        "permissionRequests": client.permission_requests,
        "fsReads": client.reads,
        "commands": client.commands,
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
