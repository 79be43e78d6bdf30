#!/usr/bin/env python3
"""An ACP v2 agent on stdio, built on the generated `acp_v2` package (standard library only).

    python examples/agent_v2.py       # speaks ACP v2 on stdin/stdout, logs to stderr

It handles every stable v2 agent method: initialize, auth/login, auth/logout, session/new,
session/list, session/resume, session/close, session/delete, session/set_config_option,
session/prompt, session/cancel, tool_call/cancel and terminal/cancel.

A v2 prompt is answered as soon as the message is inserted (`messageId`); the turn runs on as a
session task (`conn.start_session_task`) and reports itself with session updates: `state_update`
running, an agent message chunk, a tool call, a permission request (the state says
`requires_action` meanwhile), the file read from the session's cwd (`README.md`, or X when the
prompt is "read X"; v2 clients have no fs methods, so the agent reads it itself), the tool
call's outcome, and `state_update` idle with `stopReason: end_turn`. A `session/cancel` cancels
the session task; the turn then ends with idle `stopReason: cancelled` (and a permission request
still open is withdrawn with `$/cancel_request`). The prompt request is never answered -32800.
ACP_EXAMPLE_PAUSE_S (default 0.3) is the pause after the first chunk, where a cancel lands.

As the v2 schema requires: a prompt with content other than text and resource links (the baseline;
nothing more is advertised) is refused with -32602 before insertion; `session/resume` refuses a
`replayFrom` cursor other than `start` with -32602; `session/close` of a session whose turn is
running cancels the turn and lets its idle `cancelled` update out before answering.
`acpgen conform agent --protocol v2 -- python examples/agent_v2.py` checks all of it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_v2 as acp

log = logging.getLogger("example-agent-v2")
PAUSE_S = float(os.environ.get("ACP_EXAMPLE_PAUSE_S", "0.3"))
MODES = {"fast": "Fast", "careful": "Careful"}


def idle(stop: acp.IdleStateUpdate | None = None) -> acp.IdleStateUpdateVariant:
    """An idle state, with the stop reason of the turn it ends (none: no turn ended)."""
    return acp.IdleStateUpdateVariant(idle_state_update=stop if stop is not None else acp.NoneIdleStateUpdate())


@dataclass
class Session:
    cwd: str
    updated_at: str
    title: str | None = None
    mode: str = "fast"
    history: list[acp.SessionUpdate] = field(default_factory=list)
    last_idle: acp.IdleStateUpdateVariant = field(default_factory=idle)
    turn: asyncio.Task[None] | None = None


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def text(value: str) -> acp.TextContentBlock:
    return acp.TextContentBlock(text=value)


def config_options(session: Session) -> list[acp.SessionConfigOption]:
    return [
        acp.SelectSessionConfigOption(
            config_id="mode",
            name="Mode",
            current_value=session.mode,
            options=[acp.SessionConfigSelectOption(value=v, name=n) for v, n in MODES.items()],
        )
    ]


class ExampleV2Agent(acp.Agent):
    def __init__(self, conn: acp.AgentSideConnection) -> None:
        self.conn = conn
        self.sessions: dict[str, Session] = {}
        self.logged_in = False

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        # A lower version never gets here: the runtime answers it with -32022 from the schema.
        log.info("initialize from %s %s", params.info.name, params.info.version)
        return acp.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION or 2,
            info=acp.Implementation(name="acpgen-example-agent-v2", version=acp.ACPGEN_VERSION),
            capabilities=acp.AgentCapabilities(session=acp.SessionCapabilities(delete=acp.SessionDeleteCapabilities())),
            auth_methods=[acp.AgentAuthMethod(method_id="none", name="No sign-in", description="Accepts anyone")],
        )

    async def auth_login(self, params: acp.LoginAuthRequest) -> acp.LoginAuthResponse:
        if params.method_id != "none":
            raise acp.RequestError.invalid_params({"path": "methodId", "message": "unknown auth method"})
        self.logged_in = True
        return acp.LoginAuthResponse()

    async def auth_logout(self, params: acp.LogoutAuthRequest) -> acp.LogoutAuthResponse:
        self.logged_in = False
        return acp.LogoutAuthResponse()

    def session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError.session_not_found(session_id)
        return session

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        session_id = f"ex2-{uuid.uuid4()}"
        session = self.sessions[session_id] = Session(cwd=params.cwd, updated_at=now())
        return acp.NewSessionResponse(session_id=session_id, config_options=config_options(session))

    async def session_list(self, params: acp.ListSessionsRequest) -> acp.ListSessionsResponse:
        cwd = params.cwd if isinstance(params.cwd, str) else None
        return acp.ListSessionsResponse(
            sessions=[
                acp.SessionInfo(session_id=sid, cwd=s.cwd, title=s.title, updated_at=s.updated_at)
                for sid, s in sorted(self.sessions.items())
                if cwd is None or s.cwd == cwd
            ]
        )

    async def session_resume(self, params: acp.ResumeSessionRequest) -> acp.ResumeSessionResponse:
        session = self.session(params.session_id)
        if params.replay_from not in (acp.UNSET, None) and not isinstance(params.replay_from, acp.StartReplayFrom):
            # The schema: an unsupported cursor is rejected, never replaced by another one.
            raise acp.RequestError.invalid_params({"path": "replayFrom", "message": "only {\"type\": \"start\"} is supported"})
        session.cwd = params.cwd
        if params.replay_from not in (acp.UNSET, None):
            for update in session.history:  # replay from the start: the only cursor this agent keeps
                await self.send(params.session_id, update)
        # The current state goes out after any replay and before the response.
        await self.send(params.session_id, acp.StateUpdateSessionUpdate(state_update=session.last_idle))
        return acp.ResumeSessionResponse(config_options=config_options(session))

    async def session_close(self, params: acp.CloseSessionRequest) -> acp.CloseSessionResponse:
        session = self.session(params.session_id)
        self.conn.cancel_session_tasks(params.session_id)
        if session.turn is not None and not session.turn.done():
            # A running turn ends first: its idle `cancelled` update goes out before this answer.
            await asyncio.wait({session.turn})
        del self.sessions[params.session_id]
        return acp.CloseSessionResponse()

    async def session_delete(self, params: acp.DeleteSessionRequest) -> acp.DeleteSessionResponse:
        self.conn.cancel_session_tasks(params.session_id)
        self.sessions.pop(params.session_id, None)  # deleting an unknown session is not an error
        return acp.DeleteSessionResponse()

    async def session_set_config_option(
        self, params: acp.SetSessionConfigOptionRequest
    ) -> acp.SetSessionConfigOptionResponse:
        if not isinstance(params, acp.IdSetSessionConfigOptionRequest):
            raise acp.RequestError.invalid_params({"path": "type", "message": "only select options exist here"})
        session = self.session(params.session_id)
        if params.config_id != "mode" or params.value not in MODES:
            raise acp.RequestError.invalid_params({"path": "value", "message": "unknown option or value"})
        session.mode = params.value
        return acp.SetSessionConfigOptionResponse(config_options=config_options(session))

    async def tool_call_cancel(self, params: acp.CancelToolCallRequest) -> acp.CancelToolCallResponse:
        # No tool call of this agent advertises `capabilities.cancel`.
        raise acp.RequestError.invalid_params({"toolCallId": params.tool_call_id})

    async def terminal_cancel(self, params: acp.CancelTerminalRequest) -> acp.CancelTerminalResponse:
        raise acp.RequestError.invalid_params({"terminalId": params.terminal_id})

    async def session_cancel(self, params: acp.CancelSessionNotification) -> None:
        # The runtime has already cancelled the session's tasks; the turn reports its end.
        log.info("session/cancel for %s", params.session_id)

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session = self.session(params.session_id)
        unsupported = sorted({b.tag for b in params.prompt
                              if not isinstance(b, (acp.TextContentBlock, acp.ResourceLinkContentBlock))})
        if unsupported:
            # Only the baseline content is advertised; anything else is refused before insertion.
            raise acp.RequestError.invalid_params({"path": "prompt", "message": f"unsupported content: {', '.join(unsupported)}"})
        message_id = f"msg-{uuid.uuid4()}"
        words = " ".join(b.text for b in params.prompt if isinstance(b, acp.TextContentBlock)).strip()
        session.title = session.title or words[:60]
        session.updated_at = now()
        # Inserted: echo the user message, start the turn, acknowledge with the message id.
        await self.update(params.session_id, acp.UserMessageSessionUpdate(message_id=message_id, content=params.prompt))
        session.turn = self.conn.start_session_task(params.session_id, self.turn(params.session_id, words))
        return acp.PromptResponse(message_id=message_id)

    async def send(self, session_id: str, update: acp.SessionUpdate) -> None:
        await self.conn.session_update(acp.UpdateSessionNotification(session_id=session_id, update=update))

    async def update(self, session_id: str, update: acp.SessionUpdate) -> None:
        self.sessions[session_id].history.append(update)
        await self.send(session_id, update)

    async def state(self, session_id: str, state: acp.StateUpdate) -> None:
        if isinstance(state, acp.IdleStateUpdateVariant):
            self.sessions[session_id].last_idle = state
        await self.send(session_id, acp.StateUpdateSessionUpdate(state_update=state))

    async def turn(self, session_id: str, words: str) -> None:
        try:
            await self.state(session_id, acp.RunningStateUpdateVariant())
            await self.work(session_id, words)
        except asyncio.CancelledError:
            log.info("turn in %s cancelled", session_id)
            stop: acp.IdleStateUpdate = acp.CancelledIdleStateUpdate()
        except Exception as exc:  # the turn failed: say so in the idle update rather than nowhere
            log.exception("turn in %s failed", session_id)
            stop = acp.ErrorIdleStateUpdate(error=acp.Error(code=acp.ErrorCode.INTERNAL_ERROR, message=str(exc)))
        else:
            stop = acp.EndTurnIdleStateUpdate()
        if session_id in self.sessions and not self.conn.closed:
            await self.state(session_id, idle(stop))

    async def work(self, session_id: str, words: str) -> None:
        session = self.sessions[session_id]
        reply = f"msg-{uuid.uuid4()}"
        match = re.match(r"read\s+(\S+)", words)
        name = match.group(1) if match else "README.md"
        path = os.path.abspath(os.path.join(session.cwd, name))
        await self.update(session_id, acp.AgentMessageChunkSessionUpdate(message_id=reply, content=text(f"Reading {name}.")))
        await asyncio.sleep(PAUSE_S)

        call_id = "call_1"
        await self.update(
            session_id,
            acp.ToolCallUpdateSessionUpdate(
                tool_call_id=call_id,
                title=f"Read {name}",
                kind=acp.ToolKind.READ,
                status=acp.ToolCallStatus.PENDING,
                locations=[acp.ToolCallLocation(path=path)],
                raw_input={"path": path},
            ),
        )
        await self.state(session_id, acp.RequiresActionStateUpdateVariant())
        answer = await self.conn.session_request_permission(
            acp.RequestPermissionRequest(
                session_id=session_id,
                title=f"Read {name}",
                subject=acp.ToolCallRequestPermissionSubject(tool_call=acp.ToolCallUpdate(tool_call_id=call_id)),
                options=[
                    acp.PermissionOption(option_id="allow", name="Allow", kind=acp.PermissionOptionKind.ALLOW_ONCE),
                    acp.PermissionOption(option_id="reject", name="Reject", kind=acp.PermissionOptionKind.REJECT_ONCE),
                ],
            )
        )
        outcome = answer.outcome
        if isinstance(outcome, acp.CancelledRequestPermissionOutcome):
            raise asyncio.CancelledError  # the client cancelled the turn while asking
        await self.state(session_id, acp.RunningStateUpdateVariant())
        if not (isinstance(outcome, acp.SelectedRequestPermissionOutcome) and outcome.option_id == "allow"):
            status, body = acp.ToolCallStatus.FAILED, "Permission denied."  # an unknown outcome is never approval
        else:
            try:
                body = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
                status = acp.ToolCallStatus.COMPLETED
            except OSError as exc:
                status, body = acp.ToolCallStatus.FAILED, f"Could not read {name}: {exc.strerror}"
        await self.update(
            session_id,
            acp.ToolCallUpdateSessionUpdate(
                tool_call_id=call_id, status=status, content=[acp.ContentToolCallContent(content=text(body))]
            ),
        )
        await self.update(session_id, acp.AgentMessageChunkSessionUpdate(message_id=reply, content=text(body)))


def main() -> None:
    logging.basicConfig(level=os.environ.get("ACP_EXAMPLE_LOG", "WARNING"), stream=sys.stderr)
    asyncio.run(acp.run_agent(ExampleV2Agent))


if __name__ == "__main__":
    main()
