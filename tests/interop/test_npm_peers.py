"""Real ACP peers from npm, installed from tests/peers/agents-npm (package-lock.json pins them;
`bash scripts/install-test-peers.sh` runs `npm ci` there):

- codex-acp 0.16.0 (Rust, on the `agent-client-protocol` crate, behind a node launcher whose child
  keeps stdout open after the end of input), driven by examples/client.py through `acpgen inspect`,
  its model API pointed at tests/peers/llm_standin.py on loopback (a scripted Responses API stream):
  a whole turn offline, and the client exits soon after the turn ends with no process left;
- acpx 0.19.1 (the headless CLI client, TypeScript) driving examples/agent.py through `acpgen
  inspect`, and judged by `acpgen conform client`;
- acp-factory 0.1.14 (a client library on the TS SDK 0.18; tests/peers/factory-npm, apart because it
  wants an older codex-acp as an optional peer) through tests/peers/factory-npm/factory_client.mjs.

Every traced message is decoded by the generated `acp_v1` and validated against the schema
(tests/interop/wire.py). Marked `real_agents` with the Python agents' layer; `.ci/run` runs it."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_real_agents import INSPECT, minimal_env, run_bounded
from tests.interop.wire import check_trace

pytestmark = pytest.mark.real_agents

ROOT = Path(__file__).resolve().parents[2]
NPM = ROOT / "tests" / "peers" / "agents-npm" / "node_modules" / ".bin"
CODEX = NPM / "codex-acp"
ACPX = NPM / "acpx"
FACTORY = ROOT / "tests" / "peers" / "factory-npm"
STANDIN = ROOT / "tests" / "peers" / "llm_standin.py"
REPLY = "Hello from the stand-in model."


@pytest.fixture(scope="module", autouse=True)
def npm_peers_installed() -> None:
    missing = [p.name for p in (CODEX, ACPX, FACTORY / "node_modules" / "acp-factory") if not p.exists()]
    if missing:
        pytest.fail(f"{', '.join(missing)} not installed: run `bash scripts/install-test-peers.sh`")


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """The LLM stand-in on a free loopback port, and the file it logs every request to."""
    log = tmp_path_factory.mktemp("standin") / "requests.jsonl"
    proc = subprocess.Popen([sys.executable, str(STANDIN), "--port", "0", "--text", REPLY, "--log", str(log)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("PORT "), line
        yield int(line.split()[1]), log
    finally:
        proc.kill()
        proc.wait()


def codex_home(tmp_path: Path, port: int) -> Path:
    """A CODEX_HOME whose config points codex at the stand-in: no login, no retries, no updates."""
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(f"""model = "standin"
model_provider = "standin"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.standin]
name = "standin"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
requires_openai_auth = false
request_max_retries = 0
stream_max_retries = 0
""", encoding="utf-8")
    return home


def traced(tmp_path: Path, command: list[str], env: dict[str, str], timeout: float = 90
           ) -> tuple[int, str, str, list[dict[str, Any]], list[str], float]:
    start = time.monotonic()
    rc, out, err = run_bounded(command, env, tmp_path / "work", timeout)
    elapsed = time.monotonic() - start
    messages, problems = check_trace(tmp_path / "trace.jsonl")
    return rc, out, err, messages, problems, elapsed


def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# A project\n", encoding="utf-8")
    return work


def test_codex_acp_completes_a_turn_against_the_stand_in_and_our_client_exits_at_once(
        tmp_path: Path, standin: tuple[int, Path]) -> None:
    port, log = standin
    work = workdir(tmp_path)
    env = minimal_env(tmp_path / "home")
    env["PATH"] = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"  # node for the launcher
    env["CODEX_HOME"] = str(codex_home(tmp_path, port))
    client = [sys.executable, str(ROOT / "examples" / "client.py"), "--json", "--timeout", "60", "--cwd", str(work),
              "--prompt", "say hello"]
    command = [*client, *INSPECT, "--trace", str(tmp_path / "trace.jsonl"), "--", str(CODEX)]
    rc, out, err, messages, problems, elapsed = traced(tmp_path, command, env)
    summary = json.loads(out.splitlines()[-1]) if out.strip() else {}
    assert (rc, summary.get("stopReason"), summary.get("errors")) == (0, "end_turn", []), err[-3000:]
    assert problems == [], problems
    texts = [r["message"]["params"]["update"]["content"]["text"] for r in messages
             if r["message"].get("method") == "session/update"
             and r["message"]["params"]["update"].get("sessionUpdate") == "agent_message_chunk"]
    assert REPLY in texts
    asked = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert any(a["path"].endswith("/responses") for a in asked)  # the turn went through the stand-in
    # the launcher's child keeps stdout open: spawn_agent ends the group instead of waiting for it
    # (before: 5 s per pipe, then a kill); the whole session, codex start-up included, stays short
    assert elapsed < 20, elapsed
    # From the prompt's answer (proxy time; the proxy starts after the client) to the client's exit:
    # measured 1.0 s, the proxy's own start-up included (before: 5 s per pipe, then a kill).
    turn_end = max(float(r["t"]) for r in messages
                   if r["dir"] == "agent->client" and "stopReason" in json.dumps(r["message"]))
    assert elapsed - turn_end < 4, (elapsed, turn_end)
    print(f"codex session {elapsed:.2f} s, exit {elapsed - turn_end:.2f} s after the turn's end")


def test_acpx_runs_a_turn_with_our_agent(tmp_path: Path) -> None:
    work = workdir(tmp_path)
    env = minimal_env(tmp_path / "home")
    env["PATH"] = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    agent = [*INSPECT, "--trace", str(tmp_path / "trace.jsonl"), "--", sys.executable, str(ROOT / "examples" / "agent.py")]
    command = [str(ACPX), "--approve-all", "--format", "json", "--cwd", str(work), "--timeout", "60",
               f"--agent={subprocess.list2cmdline(agent)}", "exec", "read README.md"]
    rc, out, err, messages, problems, _ = traced(tmp_path, command, env)
    assert rc == 0, (out[-2000:], err[-2000:])
    assert problems == [], problems
    sent = [r["message"].get("method") for r in messages if r["dir"] == "client->agent"]
    assert sent[:3] == ["initialize", "session/new", "session/prompt"], sent
    answers = [r["message"] for r in messages if r["dir"] == "agent->client" and "result" in r["message"]]
    assert any(isinstance(a["result"], dict) and a["result"].get("stopReason") == "end_turn" for a in answers)


def test_conform_client_passes_acpx(tmp_path: Path) -> None:
    env = minimal_env(tmp_path / "home")
    env["PATH"] = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    workdir(tmp_path)
    report = tmp_path / "acpx.json"
    command = [sys.executable, "-m", "acpgen", "conform", "client", "--timeout", "15", "--json", str(report), "--",
               str(ACPX), "--approve-all", "--format", "json", "--agent={agent}", "exec", "hello from acpgen"]
    rc, out, err = run_bounded(command, env, tmp_path / "work", 240)
    assert report.exists(), (out[-2000:], err[-2000:])
    result = json.loads(report.read_text(encoding="utf-8"))
    failed = sorted(c["id"] for c in result["checks"] if c["status"] == "fail")
    assert (rc, failed) == (0, []), out[-3000:]
    with contextlib.suppress(KeyError):
        assert result["ok"] is True


def factory_run(tmp_path: Path, *options: str, pause: str = "0.3") -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    work = workdir(tmp_path)
    env = minimal_env(tmp_path / "home")
    env["PATH"] = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    env["ACP_EXAMPLE_PAUSE_S"] = pause
    command = ["node", str(FACTORY / "factory_client.mjs"), *options, "--cwd", str(work), "--prompt", "read README.md",
               "--", *INSPECT, "--trace", str(tmp_path / "trace.jsonl"), "--", sys.executable,
               str(ROOT / "examples" / "agent.py")]
    rc, out, err, messages, problems, _ = traced(tmp_path, command, env)
    assert rc == 0 and out.strip(), (out[-2000:], err[-2000:])
    return json.loads(out.splitlines()[-1]), messages, problems


def wire_updates(messages: list[dict[str, Any]]) -> list[str]:
    return [r["message"]["params"]["update"]["sessionUpdate"] for r in messages
            if r["message"].get("method") == "session/update"]


def test_acp_factory_runs_a_turn_and_may_lose_the_update_sent_just_before_the_answer(tmp_path: Path) -> None:
    summary, messages, problems = factory_run(tmp_path)
    assert (summary["errors"], problems) == ([], [])
    answers = [r["message"]["result"] for r in messages if r["dir"] == "agent->client" and "result" in r["message"]]
    assert answers[-1] == {"stopReason": "end_turn"}
    # On the wire: four updates, the last one right before the prompt's answer (the agent sends the
    # turn's updates before answering). acp-factory's `prompt()` races the answer against its next
    # update and drops the update of a `next()` that lost the race: when the two arrive together its
    # caller gets three (3 of 3 runs on a quiet machine; 4 in a CI run under load). Never more, never
    # out of order.
    wire = wire_updates(messages)
    assert wire == ["agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    assert summary["updates"] in (wire, wire[:3]), summary["updates"]


def test_acp_factory_cancels_our_agents_turn(tmp_path: Path) -> None:
    summary, messages, problems = factory_run(tmp_path, "--cancel", pause="1.0")
    assert (summary["errors"], problems, summary["updates"]) == ([], [], ["agent_message_chunk"])
    sent = [r["message"].get("method") for r in messages if r["dir"] == "client->agent"]
    assert "session/cancel" in sent
    answers = [r["message"]["result"] for r in messages if r["dir"] == "agent->client" and "result" in r["message"]]
    assert answers[-1] == {"stopReason": "cancelled"}


def test_conform_agent_finds_what_codex_acp_does_wrong(tmp_path: Path, standin: tuple[int, Path]) -> None:
    # Its own faults, each a failed check: it answers notifications it does not know (JSON-RPC 2.0:
    # "The Server MUST NOT reply to a Notification") with -32601 and id null, and it takes the
    # string "1.0.0" as a protocolVersion (the schema's ProtocolVersion is an integer, uint16).
    work = workdir(tmp_path)
    env = minimal_env(tmp_path / "home")
    env["PATH"] = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    env["CODEX_HOME"] = str(codex_home(tmp_path, standin[0]))
    report = tmp_path / "codex.json"
    command = [sys.executable, "-m", "acpgen", "conform", "agent", "--timeout", "20", "--json", str(report), "--",
               str(CODEX)]
    rc, out, _ = run_bounded(command, env, work, 240)
    result = json.loads(report.read_text(encoding="utf-8"))
    failed = {c["id"]: str(c.get("detail") or "") for c in result["checks"] if c["status"] == "fail"}
    assert sorted(failed) == ["init.version.invalid", "messages.valid", "rpc.notification_unanswered"], out[-3000:]
    assert "accepted protocolVersion '1.0.0'" in failed["init.version.invalid"]
    assert "-32601" in failed["rpc.notification_unanswered"]
    assert rc == 1  # MUST failures
