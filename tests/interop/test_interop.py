"""Interop with the official SDKs (tests/peers, pinned): their clients drive examples/agent.py, and
examples/client.py drives their agents. The Python peers run under both Python SDKs: 0.12.1 (the
`test` extra, in this venv) and 1.0.0rc3 (tests/peers/requirements-sdk1.txt, in .venv-sdk1). Every message each peer receives is validated by that
peer's own schemas (zod for TypeScript, pydantic for Python) and reported in its summary line; every
message we receive must decode (our side reports decode problems as runtime warnings, which fail the
test)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "tests" / "peers"
EXAMPLES = ROOT / "examples"
FULL_TURN = ["agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]

# The Python SDK 1.0 pre-release has the import name of 0.12.1, so it lives in a venv of its own.
SDK1_PYTHON = ROOT / ".venv-sdk1" / "bin" / "python"
SDK1_INSTALL = "python3 -m venv .venv-sdk1 && .venv-sdk1/bin/pip install --pre -r tests/peers/requirements-sdk1.txt"
PYTHONS = {"py-0.12.1": sys.executable, "py-1.0.0rc3": str(SDK1_PYTHON)}
CLIENTS = {
    "ts": ["node", str(PEERS / "ts_client.mjs")],
    **{name: [python, str(PEERS / "py_client.py")] for name, python in PYTHONS.items()},
}
AGENTS = {
    "ts": ["node", str(PEERS / "ts_agent.mjs")],
    **{name: [python, str(PEERS / "py_agent.py")] for name, python in PYTHONS.items()},
}
OUR_AGENT = [sys.executable, str(EXAMPLES / "agent.py")]
OUR_CLIENT = [sys.executable, str(EXAMPLES / "client.py"), "--json"]


@pytest.fixture(scope="module", autouse=True)
def peers_installed() -> None:
    if shutil.which("node") is None:
        pytest.fail("node is not on PATH: the TypeScript SDK peers need Node.js 20 or newer")
    if not (PEERS / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        pytest.fail("the TypeScript SDK is not installed: run `npm ci --prefix tests/peers`")
    if not SDK1_PYTHON.exists():
        pytest.fail(f"the Python SDK 1.0.0rc3 peers' venv is missing: run `{SDK1_INSTALL}`")


def test_each_python_peer_runs_the_sdk_version_it_is_named_after() -> None:
    for name, python in PYTHONS.items():
        probe = "import importlib.metadata as m; print(m.version('agent-client-protocol'))"
        version = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=30).stdout.strip()
        assert name == f"py-{version}"


def run_peer(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run(
        command, capture_output=True, text=True, timeout=90, env={**os.environ, **(env or {})}, cwd=cwd
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no summary line\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.returncode, json.loads(lines[-1]), proc.stderr


def our_stderr_is_clean(stderr: str) -> None:
    # Our agent logs runtime problems (a message that did not decode, a failed handler) at WARNING+.
    assert "acp_v1" not in stderr and "Traceback" not in stderr, stderr


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_sdk_client_drives_our_agent_through_a_turn(client: str) -> None:
    rc, summary, stderr = run_peer([*CLIENTS[client], *OUR_AGENT])
    assert summary["errors"] == [], stderr
    assert summary["stopReason"] == "end_turn"
    assert summary["updates"] == FULL_TURN
    assert summary["permissionRequests"] == 1
    assert [Path(p).name for p in summary["fsReads"]] == ["README.md"]
    assert rc == 0
    our_stderr_is_clean(stderr)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_sdk_client_cancels_our_agents_turn(client: str) -> None:
    rc, summary, stderr = run_peer([*CLIENTS[client], "--cancel", *OUR_AGENT], env={"ACP_EXAMPLE_PAUSE_S": "2"})
    assert summary["errors"] == [], stderr
    assert summary["stopReason"] == "cancelled"
    assert summary["updates"] == ["agent_message_chunk"]
    assert summary["fsReads"] == []
    assert rc == 0
    our_stderr_is_clean(stderr)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_sdk_client_sees_a_missing_file_reported_in_the_turn(client: str) -> None:
    rc, summary, stderr = run_peer([*CLIENTS[client], *OUR_AGENT], env={"PEER_PROMPT": "read missing.txt"})
    assert summary["errors"] == [], stderr
    assert (summary["stopReason"], summary["updates"]) == ("end_turn", FULL_TURN)
    assert [Path(p).name for p in summary["fsReads"]] == ["missing.txt"]
    assert rc == 0


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("# A project\n\nread me\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_our_client_completes_a_turn_with_sdk_agent(agent: str, workdir: Path) -> None:
    rc, summary, stderr = run_peer([*OUR_CLIENT, "--cwd", str(workdir), *AGENTS[agent]])
    assert summary["errors"] == [], stderr
    assert summary["stopReason"] == "end_turn"
    assert summary["updates"] == FULL_TURN
    assert summary["permissionRequests"] == 1
    assert summary["fsReads"] == [str(workdir / "README.md")]
    assert rc == 0
    # The SDK agents validate our answers; a rejected one would have failed the turn with -32603.
    assert "invalid" not in stderr.lower(), stderr


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_our_client_reports_missing_file_and_cancels_with_sdk_agent(agent: str, workdir: Path) -> None:
    rc, summary, stderr = run_peer([*OUR_CLIENT, "--cwd", str(workdir), "--prompt", "read missing.txt", *AGENTS[agent]])
    assert (rc, summary["errors"], summary["stopReason"]) == (0, [], "end_turn"), stderr
    assert summary["fsReads"] == [str(workdir / "missing.txt")]
    rc, summary, stderr = run_peer([*OUR_CLIENT, "--cwd", str(workdir), "--cancel", *AGENTS[agent]])
    assert (rc, summary["errors"], summary["stopReason"]) == (0, [], "cancelled"), stderr
    assert summary["updates"][:1] == ["agent_message_chunk"] and "tool_call_update" not in summary["updates"]


def test_our_client_and_our_agent(workdir: Path) -> None:
    rc, summary, stderr = run_peer([*OUR_CLIENT, "--cwd", str(workdir), *OUR_AGENT])
    assert (rc, summary["errors"], summary["stopReason"], summary["updates"]) == (0, [], "end_turn", FULL_TURN), stderr
    rc, summary, stderr = run_peer([*OUR_CLIENT, "--cwd", str(workdir), "--cancel", *OUR_AGENT],
                                   env={"ACP_EXAMPLE_PAUSE_S": "2"})
    assert (rc, summary["errors"], summary["stopReason"], summary["updates"]) == (
        0, [], "cancelled", ["agent_message_chunk"]), stderr
    our_stderr_is_clean(stderr)


def test_example_client_exits_1_when_the_agent_cannot_start(tmp_path: Path) -> None:
    proc = subprocess.run([*OUR_CLIENT, str(tmp_path / "no-such-agent")], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    summary = json.loads(proc.stdout.splitlines()[-1])
    assert summary["stopReason"] is None and "could not start" in summary["errors"][0]
    assert "Traceback" not in proc.stderr


def test_our_agent_runs_a_command_in_our_clients_terminal(workdir: Path) -> None:
    prompt = f"run {sys.executable} -c 'print(40 + 2)'"
    rc, summary, stderr = run_peer([*OUR_CLIENT, "--cwd", str(workdir), "--prompt", prompt, *OUR_AGENT])
    assert (rc, summary["errors"], summary["stopReason"]) == (0, [], "end_turn"), stderr
    assert summary["commands"] == [[sys.executable, "-c", "print(40 + 2)"]]
    # the tool call shows the terminal while it runs, then the output
    assert summary["updates"] == ["agent_message_chunk", "tool_call", "tool_call_update", "tool_call_update",
                                  "agent_message_chunk"]
    proc = subprocess.run([*OUR_CLIENT[:2], "--cwd", str(workdir), "--prompt", prompt, *OUR_AGENT],
                          capture_output=True, text=True, timeout=90)
    assert "update agent_message_chunk: 42" in proc.stdout.splitlines(), proc.stdout
    our_stderr_is_clean(proc.stderr)
