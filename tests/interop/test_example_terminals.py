"""What real peers send to the examples' terminal code (issue 23): claude-code-acp asks
examples/client.py for `terminal/create` with a command line and no `args`; a client may answer
examples/agent.py's `terminal/wait_for_exit` with `{}` (both fields are optional)."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import acp_v1 as acp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str) -> ModuleType:
    module_name = f"acpgen_example_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


async def run_in_client_terminal(wire_params: dict[str, Any], cwd: Path) -> tuple[acp.WaitForTerminalExitResponse, str, list[list[str]]]:
    client = example("client").ExampleClient(cancel=False, echo=False)
    params = {"sessionId": "s", "cwd": str(cwd), **wire_params}
    created = await client.terminal_create(acp.CreateTerminalRequest.from_dict(params))
    ids = {"sessionId": "s", "terminalId": created.terminal_id}
    exited = await asyncio.wait_for(client.terminal_wait_for_exit(acp.WaitForTerminalExitRequest.from_dict(ids)), 20)
    output = await client.terminal_output(acp.TerminalOutputRequest.from_dict(ids))
    await client.terminal_release(acp.ReleaseTerminalRequest.from_dict(ids))
    return exited, output.output, client.commands


def test_example_client_runs_a_command_line_without_args_in_a_shell(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hello\n", encoding="utf-8")
    exited, output, commands = asyncio.run(run_in_client_terminal({"command": "cat README.md && echo done"}, tmp_path))
    assert (exited.exit_code, output, commands) == (0, "hello\ndone\n", [["cat README.md && echo done"]])
    exited, output, _ = asyncio.run(run_in_client_terminal({"command": "exit 3"}, tmp_path))
    assert (exited.exit_code, output) == (3, "")


def test_example_client_runs_a_program_with_args_without_a_shell(tmp_path: Path) -> None:
    # With args, the command is a program: `&&` is an argument, not shell syntax.
    wire = {"command": sys.executable, "args": ["-c", "import sys; print(sys.argv[1:])", "a b", "&&", "$HOME"]}
    exited, output, commands = asyncio.run(run_in_client_terminal(wire, tmp_path))
    assert (exited.exit_code, output) == (0, "['a b', '&&', '$HOME']\n")
    assert commands == [[sys.executable, *wire["args"]]]


class TerminalClientStub:
    """The client side of examples/agent.py's terminal calls, answering with wire JSON."""

    def __init__(self, wait_for_exit: dict[str, Any]) -> None:
        self.wait_for_exit = wait_for_exit
        self.calls: list[str] = []

    async def session_update(self, **_: Any) -> None:
        self.calls.append("session/update")

    async def terminal_create(self, **_: Any) -> acp.CreateTerminalResponse:
        self.calls.append("terminal/create")
        return acp.CreateTerminalResponse.from_dict({"terminalId": "t1"})

    async def terminal_wait_for_exit(self, **_: Any) -> acp.WaitForTerminalExitResponse:
        self.calls.append("terminal/wait_for_exit")
        return acp.WaitForTerminalExitResponse.from_dict(self.wait_for_exit)

    async def terminal_output(self, **_: Any) -> acp.TerminalOutputResponse:
        self.calls.append("terminal/output")
        return acp.TerminalOutputResponse.from_dict({"output": "out\n", "truncated": False})

    async def terminal_release(self, **_: Any) -> acp.ReleaseTerminalResponse:
        self.calls.append("terminal/release")
        return acp.ReleaseTerminalResponse()


def agent_reports(wait_for_exit: dict[str, Any]) -> tuple[str, str, list[str]]:
    agent_module = example("agent")
    stub = TerminalClientStub(wait_for_exit)
    agent = agent_module.ExampleAgent(stub)  # type: ignore[arg-type]
    session = agent_module.Session(cwd="/", updated_at="2026-01-01T00:00:00Z")
    status, body = asyncio.run(agent.in_terminal("s", session, "call_1", ["true"]))
    return str(acp.encode(status)), body, stub.calls


def test_example_agent_says_no_exit_status_when_wait_for_exit_answers_empty() -> None:
    status, body, calls = agent_reports({})
    assert body == "out\n(no exit status reported)"
    assert "UNSET" not in body and "None" not in body
    assert status == "failed"  # success is not claimed without an exit code
    assert calls == ["terminal/create", "session/update", "terminal/wait_for_exit", "terminal/output", "terminal/release"]


def test_example_agent_reports_exit_code_and_signal() -> None:
    assert agent_reports({"exitCode": 0})[:2] == ("completed", "out\n(exit code 0)")
    assert agent_reports({"exitCode": None, "signal": "SIGKILL"})[:2] == ("failed", "out\n(signal SIGKILL)")
    assert agent_reports({"exitCode": 2, "signal": None})[:2] == ("failed", "out\n(exit code 2)")
