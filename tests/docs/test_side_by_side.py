"""docs/side-by-side.md: its table is what tests/docs/side_by_side.py measures now (lines, `mypy
--strict` on each agent and on each seeded bug), and both agents really run: acpgen's client drives
each through a turn (a streamed message, a tool call, a permission request, a file read, a
terminal), a session/load replaying that turn, and a turn cancelled while permission is pending."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import acp_v1 as acp
import pytest

from tests.docs.side_by_side import (
    AGENTS,
    BUGS,
    PAGE,
    ROOT,
    SDK_PYTHON,
    measure,
    page_table,
    render,
)

needs_sdk = pytest.mark.skipif(
    not SDK_PYTHON.exists() and os.environ.get("CI") != "true",
    reason="the SDK 1.0.0rc3 venv is missing: run scripts/install-test-peers.sh",
)


@needs_sdk
def test_the_pages_table_is_measured(tmp_path: Path) -> None:
    measured = measure(tmp_path)
    table = page_table(PAGE.read_text(encoding="utf-8"))
    assert table == render(measured), (
        "docs/side-by-side.md's table differs from what mypy says now: run `python -m tests.docs.side_by_side --write`"
        f"\nmeasured:\n{render(measured)}")
    assert measured.clean == {"acpgen": [], "sdk": []}, "both agents as written must pass mypy --strict"
    assert len(BUGS) == 6


def test_the_acpgen_agent_is_shorter() -> None:
    from tests.docs.side_by_side import lines_of_code, source

    assert lines_of_code(source("acpgen")) < lines_of_code(source("sdk"))


class DrivingClient(acp.Client):
    """Allows the tool call (or cancels the turn from inside the permission request), serves the
    file and a real terminal, and keeps the text the agent streams."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.updates: list[str] = []
        self.cancel_turn = False
        self.conn: acp.ClientSideConnection | None = None
        self.outputs: dict[str, tuple[str, int]] = {}
        self.commands: list[list[str]] = []

    async def session_update(self, params: acp.SessionNotification) -> None:
        update = params.update
        self.updates.append(type(update).__name__)
        if isinstance(update, acp.AgentMessageChunkSessionUpdate) and isinstance(update.content, acp.TextContentBlock):
            self.texts.append(update.content.text)

    async def session_request_permission(self, params: acp.RequestPermissionRequest) -> acp.RequestPermissionResponse:
        if self.cancel_turn:
            assert self.conn is not None
            await self.conn.session_cancel(session_id=params.session_id)
            return acp.RequestPermissionResponse(outcome=acp.CancelledRequestPermissionOutcome())
        allow = next(o.option_id for o in params.options if o.kind == acp.PermissionOptionKind.ALLOW_ONCE)
        return acp.RequestPermissionResponse(outcome=acp.SelectedRequestPermissionOutcome(option_id=allow))

    async def fs_read_text_file(self, params: acp.ReadTextFileRequest) -> acp.ReadTextFileResponse:
        return acp.ReadTextFileResponse(content=Path(params.path).read_text(encoding="utf-8"))

    async def terminal_create(self, params: acp.CreateTerminalRequest) -> acp.CreateTerminalResponse:
        command = [params.command, *(params.args if isinstance(params.args, list) else [])]
        self.commands.append(command)
        process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
        out, _ = await process.communicate()
        terminal_id = f"t{len(self.outputs)}"
        self.outputs[terminal_id] = (out.decode(), process.returncode or 0)
        return acp.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_wait_for_exit(self, params: acp.WaitForTerminalExitRequest) -> acp.WaitForTerminalExitResponse:
        return acp.WaitForTerminalExitResponse(exit_code=self.outputs[params.terminal_id][1])

    async def terminal_output(self, params: acp.TerminalOutputRequest) -> acp.TerminalOutputResponse:
        return acp.TerminalOutputResponse(output=self.outputs[params.terminal_id][0], truncated=False)

    async def terminal_release(self, params: acp.ReleaseTerminalRequest) -> acp.ReleaseTerminalResponse:
        return acp.ReleaseTerminalResponse()


async def drive(command: list[str], file: Path) -> tuple[DrivingClient, list[str], list[str], str]:
    client = DrivingClient()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated")}
    async with acp.spawn_agent(client, *command, env=env) as conn:
        client.conn = conn
        capabilities = acp.ClientCapabilities(fs=acp.FileSystemCapabilities(read_text_file=True), terminal=True)
        init = await conn.initialize(protocol_version=1, client_capabilities=capabilities)
        assert init.agent_capabilities.load_session is True
        session = await conn.session_new(cwd=str(file.parent), mcp_servers=[])
        turn = await conn.session_prompt(session_id=session.session_id, prompt=[acp.TextContentBlock(text=str(file))])
        assert turn.stop_reason == acp.StopReason.END_TURN
        said = list(client.texts)
        client.texts.clear()
        await conn.session_load(session_id=session.session_id, cwd=str(file.parent), mcp_servers=[])
        replayed = list(client.texts)
        client.cancel_turn = True
        cancelled = await conn.session_prompt(session_id=session.session_id, prompt=[acp.TextContentBlock(text=str(file))])
    return client, said, replayed, acp.StopReason(cancelled.stop_reason).value


@pytest.mark.parametrize("side", ["acpgen", pytest.param("sdk", marks=needs_sdk)])
def test_each_agent_runs_a_turn_a_load_and_a_cancel(side: str, tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("twelve bytes", encoding="utf-8")
    python = sys.executable if side == "acpgen" else str(SDK_PYTHON)
    client, said, replayed, stop = asyncio.run(asyncio.wait_for(
        drive([python, str(AGENTS / f"{side}_agent.py")], file), 60))
    assert said == [f"Reading {file}", f"12 characters; wc -c: 12 {file}"]
    assert client.commands == [["wc", "-c", str(file)]]
    assert replayed == said  # session/load replays the session's messages
    assert "ToolCallSessionUpdate" in client.updates and "ToolCallUpdateSessionUpdate" in client.updates
    assert stop == "cancelled"
