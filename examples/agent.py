#!/usr/bin/env python3
"""An ACP agent on stdio, built on the generated `acp_v1` package (standard library only).

    python examples/agent.py          # speaks ACP v1 on stdin/stdout, logs to stderr

It handles initialize, authenticate, session/new, session/load (it advertises `loadSession` and
replays a session's history), session/list, session/close, session/prompt and session/cancel.
A prompt turn streams an agent message chunk, reports a tool call, asks the client for permission,
reads the file through `fs/read_text_file` when the client advertises it (`README.md` in the
session's cwd, or X when the prompt is "read X"), reports the tool call's outcome (a failed read is
reported in the turn, not raised), and ends with `end_turn`, or `cancelled` when the client sends
session/cancel (the runtime cancels the turn's task; the turn catches that and says so).
A prompt "run CMD ARGS..." runs the command in a client terminal instead (`terminal/create`,
`terminal/wait_for_exit`, `terminal/output`, `terminal/release`) when the client advertises
`terminal`, showing the terminal in the tool call. `initialize` answers with
`negotiate_protocol_version` (the requested version if supported, else the latest supported).
Set ACP_EXAMPLE_PAUSE_S (default 0.3) for the pause after the first chunk, the window in which a
cancel lands before any tool call.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import secrets
import shlex
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_v1 as acp

log = logging.getLogger("example-agent")
PAUSE_S = float(os.environ.get("ACP_EXAMPLE_PAUSE_S", "0.3"))


@dataclass
class Session:
    cwd: str
    updated_at: str
    title: str | None = None
    history: list[acp.SessionUpdate] = field(default_factory=list)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def text(value: str) -> acp.TextContentBlock:
    return acp.TextContentBlock(text=value)


class ExampleAgent(acp.Agent):
    def __init__(self, conn: acp.AgentSideConnection, sessions: dict[str, Session] | None = None) -> None:
        """`sessions` may be shared between connections (a remote agent does, so that a client that
        reconnects can resume a session with session/load)."""
        self.conn = conn
        self.client_capabilities: acp.ClientCapabilities | None = None
        self.sessions: dict[str, Session] = sessions if sessions is not None else {}

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        self.client_capabilities = params.client_capabilities
        return acp.InitializeResponse(
            protocol_version=acp.negotiate_protocol_version(params.protocol_version),
            agent_capabilities=acp.AgentCapabilities(
                load_session=True,
                session_capabilities=acp.SessionCapabilities(
                    list=acp.SessionListCapabilities(), close=acp.SessionCloseCapabilities()
                ),
            ),
            auth_methods=[acp.AuthMethodAgent(id="none", name="No sign-in", description="Accepts anyone")],
            agent_info=acp.Implementation(name="acpgen-example-agent", version=acp.ACPGEN_VERSION),
        )

    async def authenticate(self, params: acp.AuthenticateRequest) -> acp.AuthenticateResponse:
        if params.method_id != "none":
            raise acp.RequestError.invalid_params({"path": "methodId", "message": "unknown auth method"})
        return acp.AuthenticateResponse()

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        session_id = f"ex-{secrets.token_urlsafe(16)}"  # 128 random bits: a session id names no one else's
        self.sessions[session_id] = Session(cwd=params.cwd, updated_at=now())
        return acp.NewSessionResponse(session_id=session_id)

    async def session_load(self, params: acp.LoadSessionRequest) -> acp.LoadSessionResponse:
        session = self.sessions.get(params.session_id)
        if session is None:
            raise acp.RequestError.resource_not_found(params.session_id)
        session.cwd = params.cwd
        for update in session.history:  # replay the conversation, as the spec asks
            await self.conn.session_update(session_id=params.session_id, update=update)
        return acp.LoadSessionResponse()

    async def session_list(self, params: acp.ListSessionsRequest) -> acp.ListSessionsResponse:
        cwd = params.cwd if isinstance(params.cwd, str) else None
        return acp.ListSessionsResponse(
            sessions=[
                acp.SessionInfo(session_id=sid, cwd=s.cwd, title=s.title, updated_at=s.updated_at)
                for sid, s in sorted(self.sessions.items())
                if cwd is None or s.cwd == cwd
            ]
        )

    async def session_close(self, params: acp.CloseSessionRequest) -> acp.CloseSessionResponse:
        if self.sessions.pop(params.session_id, None) is None:
            raise acp.RequestError.resource_not_found(params.session_id)
        return acp.CloseSessionResponse()

    async def session_cancel(self, params: acp.CancelNotification) -> None:
        # The runtime has already cancelled the session's prompt task; nothing else is running.
        log.info("session/cancel for %s", params.session_id)

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session = self.sessions.get(params.session_id)
        if session is None:
            raise acp.RequestError.resource_not_found(params.session_id)
        words = " ".join(b.text for b in params.prompt if isinstance(b, acp.TextContentBlock)).strip()
        session.history.append(acp.UserMessageChunkSessionUpdate(content=text(words)))
        session.title = session.title or words[:60]
        session.updated_at = now()
        # Catching the cancellation is optional (the runtime answers a turn that session/cancel
        # cancelled with stopReason "cancelled" either way); catch it to clean up or to log.
        try:
            await self.turn(params.session_id, session, words)
        except asyncio.CancelledError:
            log.info("turn in %s cancelled", params.session_id)
            return acp.PromptResponse(stop_reason=acp.StopReason.CANCELLED)
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    async def update(self, session_id: str, session: Session, update: acp.SessionUpdate) -> None:
        session.history.append(update)
        await self.conn.session_update(session_id=session_id, update=update)

    async def allowed(self, session_id: str, call_id: str, title: str, kind: acp.ToolKind) -> bool:
        """Ask the client; a cancelled answer means the turn was cancelled while asking."""
        answer = await self.conn.session_request_permission(
            session_id=session_id,
            tool_call=acp.ToolCallUpdate(tool_call_id=call_id, title=title, kind=kind, status=acp.ToolCallStatus.PENDING),
            options=[
                acp.PermissionOption(option_id="allow", name="Allow", kind=acp.PermissionOptionKind.ALLOW_ONCE),
                acp.PermissionOption(option_id="reject", name="Reject", kind=acp.PermissionOptionKind.REJECT_ONCE),
            ],
        )
        outcome = answer.outcome
        if isinstance(outcome, acp.CancelledRequestPermissionOutcome):
            raise asyncio.CancelledError  # the client cancelled the turn while asking
        # An unknown outcome is never approval.
        return isinstance(outcome, acp.SelectedRequestPermissionOutcome) and outcome.option_id == "allow"

    async def turn(self, session_id: str, session: Session, words: str) -> None:
        if words.startswith("run "):
            await self.run_command(session_id, session, shlex.split(words[4:]))
            return
        match = re.match(r"read\s+(\S+)", words)
        name = match.group(1) if match else "README.md"
        path = os.path.abspath(os.path.join(session.cwd, name))
        await self.update(session_id, session, acp.AgentMessageChunkSessionUpdate(content=text(f"Reading {name}.")))
        await asyncio.sleep(PAUSE_S)

        call_id = "call_1"
        await self.update(
            session_id,
            session,
            acp.ToolCallSessionUpdate(
                tool_call_id=call_id,
                title=f"Read {name}",
                kind=acp.ToolKind.READ,
                status=acp.ToolCallStatus.PENDING,
                locations=[acp.ToolCallLocation(path=path)],
                raw_input={"path": path},
            ),
        )
        allowed = await self.allowed(session_id, call_id, f"Read {name}", acp.ToolKind.READ)
        fs = self.client_capabilities.fs if self.client_capabilities else None
        if not allowed:
            status, body = acp.ToolCallStatus.FAILED, "Permission denied."
        elif fs is None or not fs.read_text_file:
            status, body = acp.ToolCallStatus.FAILED, "The client cannot read files."
        else:
            try:
                read = await self.conn.fs_read_text_file(session_id=session_id, path=path)
                status, body = acp.ToolCallStatus.COMPLETED, read.content
            except acp.RequestError as exc:
                status, body = acp.ToolCallStatus.FAILED, f"Could not read {name}: {exc.message} ({exc.code})"
        await self.finish_call(session_id, session, call_id, status, body)

    async def finish_call(
        self, session_id: str, session: Session, call_id: str, status: acp.ToolCallStatus, body: str
    ) -> None:
        await self.update(
            session_id,
            session,
            acp.ToolCallUpdateSessionUpdate(
                tool_call_id=call_id,
                status=status,
                content=[acp.ContentToolCallContent(content=text(body))],
            ),
        )
        await self.update(session_id, session, acp.AgentMessageChunkSessionUpdate(content=text(body)))

    async def run_command(self, session_id: str, session: Session, argv: list[str]) -> None:
        """Run `argv` in a client terminal, shown in the tool call while it runs."""
        title = "Run " + shlex.join(argv)
        await self.update(session_id, session, acp.AgentMessageChunkSessionUpdate(content=text(f"Running {shlex.join(argv)}.")))
        call_id = "call_1"
        await self.update(
            session_id,
            session,
            acp.ToolCallSessionUpdate(
                tool_call_id=call_id, title=title, kind=acp.ToolKind.EXECUTE, status=acp.ToolCallStatus.PENDING,
                raw_input={"command": list[acp.JsonValue](argv)},
            ),
        )
        caps = self.client_capabilities
        if not argv:
            status, body = acp.ToolCallStatus.FAILED, "Nothing to run."
        elif not await self.allowed(session_id, call_id, title, acp.ToolKind.EXECUTE):
            status, body = acp.ToolCallStatus.FAILED, "Permission denied."
        elif caps is None or not caps.terminal:
            status, body = acp.ToolCallStatus.FAILED, "The client cannot run commands."
        else:
            status, body = await self.in_terminal(session_id, session, call_id, argv)
        await self.finish_call(session_id, session, call_id, status, body)

    async def in_terminal(
        self, session_id: str, session: Session, call_id: str, argv: list[str]
    ) -> tuple[acp.ToolCallStatus, str]:
        try:
            term = await self.conn.terminal_create(
                session_id=session_id, command=argv[0], args=argv[1:], cwd=session.cwd, output_byte_limit=64 * 1024
            )
        except acp.RequestError as exc:
            return acp.ToolCallStatus.FAILED, f"Could not start {argv[0]}: {exc}"
        terminal_id = term.terminal_id
        try:
            await self.update(
                session_id,
                session,
                acp.ToolCallUpdateSessionUpdate(
                    tool_call_id=call_id,
                    status=acp.ToolCallStatus.IN_PROGRESS,
                    content=[acp.TerminalToolCallContent(terminal_id=terminal_id)],
                ),
            )
            try:
                exited = await self.conn.terminal_wait_for_exit(session_id=session_id, terminal_id=terminal_id)
            except asyncio.CancelledError:
                await self.conn.terminal_kill(session_id=session_id, terminal_id=terminal_id)
                raise
            output = await self.conn.terminal_output(session_id=session_id, terminal_id=terminal_id)
        finally:
            await self.conn.terminal_release(session_id=session_id, terminal_id=terminal_id)
        code = exited.exit_code if isinstance(exited.exit_code, int) else None
        killed_by = exited.signal if isinstance(exited.signal, str) else None
        # Both may be absent: `{}` is a valid answer to terminal/wait_for_exit.
        ended = f"exit code {code}" if code is not None else f"signal {killed_by}" if killed_by else "no exit status reported"
        status = acp.ToolCallStatus.COMPLETED if code == 0 else acp.ToolCallStatus.FAILED
        return status, f"{output.output}({ended}{', output truncated' if output.truncated else ''})"


def main() -> None:
    logging.basicConfig(level=os.environ.get("ACP_EXAMPLE_LOG", "WARNING"), stream=sys.stderr)
    asyncio.run(acp.run_agent(ExampleAgent))


if __name__ == "__main__":
    main()
