"""Real, independently written ACP agents (not test doubles) driven by examples/client.py through
`acpgen inspect`: fast-agent-mcp 0.10.48 (`--model passthrough`, on the Python SDK 0.12.1) and
chuk-acp 0.3.2's echo agent (its own ACP implementation). They are installed from
tests/peers/requirements-agents.txt into .venv-agents (Python >= 3.12; `.ci/run` does it).

Each run gets a minimal environment (PATH, a fresh HOME, LANG: no credential reaches the agent),
its own process group (killed at the end, whatever the agent left running) and a time bound. Every
message of the session is decoded by the generated `acp_v1` and validated against the schema
(tests/interop/wire.py); the list of problems must be exactly what each agent is known to do wrong.
The layer is marked `real_agents` (`-m "not real_agents"` leaves it out); `.ci/run` runs it."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.interop.wire import check_trace

pytestmark = pytest.mark.real_agents

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-agents"
INSTALL = ("python3.12 -m venv .venv-agents && .venv-agents/bin/pip install -r tests/peers/requirements-agents.txt"
           "  (any Python >= 3.12)")
REAL_AGENTS = {
    "fast-agent-mcp-0.10.48": [str(VENV / "bin" / "fast-agent"), "--no-update-check", "acp", "--model", "passthrough"],
    "chuk-acp-0.3.2": [str(VENV / "bin" / "python"), str(VENV / "share" / "chuk-acp" / "examples" / "echo_agent.py")],
}
OUR_CLIENT = [sys.executable, str(ROOT / "examples" / "client.py"), "--json", "--timeout", "40"]
OUR_VERSIONS_CLIENT = [sys.executable, str(ROOT / "examples" / "client_versions.py"), "--json", "--timeout", "40"]
INSPECT = [sys.executable, "-m", "acpgen", "inspect"]
PROMPT = "hello from acpgen"


@pytest.fixture(scope="module", autouse=True)
def agents_installed() -> None:
    programs = {"fast-agent-mcp-0.10.48": REAL_AGENTS["fast-agent-mcp-0.10.48"][0], "chuk-acp-0.3.2": REAL_AGENTS["chuk-acp-0.3.2"][1]}
    missing = [name for name, program in programs.items() if not Path(program).exists()]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed: run `{INSTALL}`")


def minimal_env(home: Path) -> dict[str, str]:
    home.mkdir(exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    if "ACPGEN_CACHE_DIR" in os.environ:
        env["ACPGEN_CACHE_DIR"] = os.environ["ACPGEN_CACHE_DIR"]
    return env


def run_bounded(command: list[str], env: dict[str, str], cwd: Path, timeout: float = 60) -> tuple[int, str, str]:
    """Runs `command` in a process group of its own and kills the whole group when it is done."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return proc.returncode, out, err


def turn(agent: str, tmp_path: Path, *client_args: str, client: list[str] = OUR_CLIENT, prompt: str = PROMPT,
         agent_args: tuple[str, ...] = ()) -> tuple[int, dict[str, Any], list[dict[str, Any]], list[str], str]:
    """One session of `client` with `agent` behind `acpgen inspect`: exit status, the client's
    summary, the traced messages and every problem in them. `{work}` in `prompt` is the session cwd."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# A project\n", encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    command = [*client, "--cwd", str(work), "--prompt", prompt.replace("{work}", str(work)), *client_args, *INSPECT,
               "--trace", str(trace), "--report", str(tmp_path / "report.txt"), "--", *REAL_AGENTS[agent], *agent_args]
    rc, out, err = run_bounded(command, minimal_env(tmp_path / "home"), work)
    summary = json.loads(out.splitlines()[-1]) if out.strip() else {}
    messages, problems = check_trace(trace)
    return rc, summary, messages, problems, err


def updates_text(messages: list[dict[str, Any]]) -> list[str]:
    texts = []
    for record in messages:
        message = record["message"]
        if message.get("method") == "session/update":
            content = message["params"]["update"].get("content")
            if isinstance(content, dict) and content.get("type") == "text":
                texts.append(content["text"])
    return texts


def test_our_client_completes_a_turn_with_chuk(tmp_path: Path) -> None:
    rc, summary, messages, problems, err = turn("chuk-acp-0.3.2", tmp_path)
    assert (rc, summary.get("stopReason"), summary.get("errors")) == (0, "end_turn", []), err
    assert problems == [], problems
    assert summary["updates"] == ["agent_message_chunk"]
    assert updates_text(messages) == [f"Echo: You said '{PROMPT}'"]
    ours = [r["message"]["method"] for r in messages if r["dir"] == "client->agent" and "method" in r["message"]]
    assert ours == ["initialize", "session/new", "session/prompt"]
    answered = [r["message"] for r in messages if r["dir"] == "agent->client" and "result" in r["message"]]
    assert len(answered) == 3 and answered[-1]["result"]["stopReason"] == "end_turn"


def agent_requests(messages: list[dict[str, Any]]) -> list[str]:
    return [r["message"]["method"] for r in messages if r["dir"] == "agent->client" and "id" in r["message"]
            and "method" in r["message"]]


# fast-agent's passthrough model echoes a prompt, or calls one tool when the prompt says so.
def test_fast_agent_reads_a_file_through_our_client_after_asking_permission(tmp_path: Path) -> None:
    prompt = '***CALL_TOOL read_text_file {"path": "{work}/README.md"}'
    rc, summary, messages, problems, err = turn("fast-agent-mcp-0.10.48", tmp_path, prompt=prompt)
    assert (rc, summary.get("stopReason"), summary.get("errors"), problems) == (0, "end_turn", [], []), err
    assert summary["fsReads"] == [str(tmp_path / "work" / "README.md")] and summary["permissionRequests"] == 1
    assert agent_requests(messages) == ["session/request_permission", "fs/read_text_file"]
    assert {"tool_call", "tool_call_update", "agent_message_chunk"} <= set(summary["updates"])
    assert updates_text(messages)[-1] == "# A project\n"


def test_fast_agent_runs_a_command_in_our_clients_terminal(tmp_path: Path) -> None:
    prompt = '***CALL_TOOL execute {"command": "echo hi && echo there"}'
    rc, summary, messages, problems, err = turn("fast-agent-mcp-0.10.48", tmp_path, prompt=prompt, agent_args=("--shell",))
    assert (rc, summary.get("stopReason"), summary.get("errors"), problems) == (0, "end_turn", [], []), err
    assert summary["commands"] == [["/bin/sh", "-lc", "echo hi && echo there"]]  # it wraps a command line itself
    assert agent_requests(messages) == ["session/request_permission", "terminal/create", "terminal/wait_for_exit",
                                        "terminal/output", "terminal/release"]
    assert any("hi\nthere" in text for text in updates_text(messages))


def test_chuk_answers_the_cancel_notification_with_an_error(tmp_path: Path) -> None:
    # The echo turn ends before our session/cancel arrives; chuk-acp then answers the notification
    # (JSON-RPC: "The Server MUST NOT reply to a Notification") with id "" and -32603.
    rc, summary, messages, problems, err = turn("chuk-acp-0.3.2", tmp_path, "--cancel")
    assert summary.get("stopReason") == "end_turn" and rc == 1, err  # we expected `cancelled`
    stray = [r["message"] for r in messages if r["dir"] == "agent->client" and r["message"].get("id") == ""]
    assert stray == [{"jsonrpc": "2.0", "id": "",
                      "error": {"code": -32603, "message": "Unknown method: session/cancel"}}]
    assert len(problems) == 1 and problems[0].startswith('agent->client None at id: answers no request (id "")')


def test_fast_agent_ends_a_cancelled_turn_with_cancelled(tmp_path: Path) -> None:
    rc, summary, _, problems, err = turn("fast-agent-mcp-0.10.48", tmp_path, "--cancel")
    assert (rc, summary.get("stopReason"), summary.get("errors"), problems) == (0, "cancelled", [], []), err


def test_chuk_answers_v1_to_a_v2_initialize_and_our_client_continues_with_v1(tmp_path: Path) -> None:
    rc, summary, _, problems, err = turn("chuk-acp-0.3.2", tmp_path, client=OUR_VERSIONS_CLIENT)
    assert (rc, summary.get("protocolVersion"), summary.get("tried"), summary.get("stopReason")) == (0, 1, [2], "end_turn"), err
    assert (summary["errors"], summary["updates"], problems) == ([], ["agent_message_chunk"], [])


def test_our_client_initializes_chuk_once_when_it_answers_v1_to_v2(tmp_path: Path) -> None:
    _, _, messages, _, _ = turn("chuk-acp-0.3.2", tmp_path, client=OUR_VERSIONS_CLIENT)
    assert [r["message"].get("method") for r in messages].count("initialize") == 1


def test_fast_agent_claims_v2_with_a_v1_body_and_our_client_still_completes_a_turn(tmp_path: Path) -> None:
    # fast-agent echoes the requested version over a v1 result: the client goes on in v1, once
    # initialized, and reports the agent's fault (so the example exits 1, as for any peer's fault).
    rc, summary, messages, _, err = turn("fast-agent-mcp-0.10.48", tmp_path, client=OUR_VERSIONS_CLIENT)
    assert (summary.get("protocolVersion"), summary.get("tried"), summary.get("stopReason")) == (1, [2], "end_turn"), err
    assert summary["errors"] == [
        "the agent answered protocol version 2 with a result that does not read as one (as v2: info: required key "
        "is missing); going on in version 1, whose result it reads as"], err
    assert [r["message"].get("method") for r in messages].count("initialize") == 1
    assert rc == 1


def probe(agent: str, home: Path) -> tuple[int | None, list[dict[str, Any]]]:
    """Sends a line that is not JSON, then `initialize` asking for protocol version 99 (which no
    agent speaks). Returns the version answered and every other message received meanwhile."""
    proc = subprocess.Popen(REAL_AGENTS[agent], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=minimal_env(home), cwd=home, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None
    others: list[dict[str, Any]] = []
    version = None
    backstop = threading.Timer(40, os.killpg, (proc.pid, signal.SIGKILL))  # a read that never ends sees EOF
    backstop.start()
    try:
        proc.stdin.write(b"{not json\n")
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                     "params": {"protocolVersion": 99, "clientCapabilities": {}}}).encode() + b"\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.5 if version is not None else 1)
            if not ready:
                if version is not None:
                    break  # half a second of quiet after the answer
                continue
            line = proc.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if message.get("id") == 1 and "result" in message:
                version = message["result"]["protocolVersion"]
            else:
                others.append(message)
    finally:
        backstop.cancel()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return version, others


# What each agent answers (InitializeResponse.protocolVersion: "The protocol version the client
# specified if supported by the agent, or the latest protocol version supported by the agent.") and
# whether it answers a line that is not JSON with -32700 (JSON-RPC 2.0: "Parse error").
KNOWN_PROBE = {
    "fast-agent-mcp-0.10.48": (99, []),  # echoes the unknown version; no -32700
    "chuk-acp-0.3.2": (1, []),  # answers its own version; no -32700
}


@pytest.mark.parametrize("agent", sorted(REAL_AGENTS))
def test_real_agent_version_negotiation_and_parse_errors(agent: str, tmp_path: Path) -> None:
    assert probe(agent, tmp_path) == KNOWN_PROBE[agent]
