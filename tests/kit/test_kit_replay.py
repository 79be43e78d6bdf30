"""acpgen replay: a session recorded with `acpgen inspect --trace` replays against the same agent
with no difference (ids and session ids remapped, the agent's requests answered from the
recording), and differences in shape are reported with their JSON path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENT = [sys.executable, str(ROOT / "examples" / "agent.py")]
ACPGEN = [sys.executable, "-m", "acpgen"]


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("replay")
    (work / "README.md").write_text("# replayed\n", encoding="utf-8")
    path = work / "trace.jsonl"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "client.py"), "--json", "--cwd", str(work),
         *ACPGEN, "inspect", "--trace", str(path), "--", *AGENT],
        capture_output=True, text=True, timeout=120, env={**os.environ, "ACP_EXAMPLE_PAUSE_S": "0"})
    assert result.returncode == 0, result.stderr
    return path


def replay(trace: Path, *agent: str, timeout: str = "20") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ACPGEN, "replay", str(trace), "--timeout", timeout, "--", *agent],
                          capture_output=True, text=True, timeout=180, cwd=ROOT,
                          env={**os.environ, "ACP_EXAMPLE_PAUSE_S": "0"})


def test_replay_reproduces_a_recorded_session_against_the_example_agent(trace: Path) -> None:
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    session_ids = {json.loads(r["line"])["result"]["sessionId"] for r in records
                   if r.get("method") == "session/new" and r["kind"] == "response"}
    assert len(session_ids) == 1  # the replayed agent hands out another one: it must be remapped
    result = replay(trace, *AGENT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "match the trace in shape" in result.stdout


def test_replay_reports_where_another_agent_differs(trace: Path) -> None:
    faulty = [sys.executable, str(ROOT / "tests" / "kit" / "faulty_agent.py"), "wrong_field_type"]
    # (replay waits --timeout for the messages that differ: a short one keeps the test short)
    result = replay(trace, *faulty, timeout="5")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith("agent notification session/update:agent_message_chunk #1: "
                               "params.update.content.text: recorded string, now number") for line in lines), lines
    assert any(line.startswith("answer to initialize (recorded id 0): result.agentCapabilities") for line in lines), lines


def test_replay_refuses_a_file_that_is_not_a_trace(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-trace.jsonl"
    bad.write_text('{"hello": 1}\n', encoding="utf-8")
    result = replay(bad, *AGENT)
    assert result.returncode == 2
    assert "line 1 is not a trace record" in result.stderr and "Traceback" not in result.stderr


AGENT_V2 = [sys.executable, str(ROOT / "examples" / "agent_v2.py")]


@pytest.fixture(scope="module")
def trace_v2(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A v2 session of examples/agent_v2.py (the v2 client of examples/client_versions.py) recorded
    through `acpgen inspect --protocol v2`."""
    work = tmp_path_factory.mktemp("replay-v2")
    (work / "README.md").write_text("# replayed v2\n", encoding="utf-8")
    path, report = work / "trace.jsonl", work / "violations.txt"
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "client_versions.py"), "--protocol", "2", "--json", "--cwd", str(work),
         *ACPGEN, "inspect", "--protocol", "v2", "--trace", str(path), "--report", str(report), "--", *AGENT_V2],
        capture_output=True, text=True, timeout=120, env={**os.environ, "ACP_EXAMPLE_PAUSE_S": "0"})
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.splitlines()[-1])
    assert summary["protocolVersion"] == 2 and summary["stopReason"] == "end_turn" and not summary["errors"], summary
    return path, report


def test_inspect_records_a_clean_v2_session(trace_v2: tuple[Path, Path]) -> None:
    path, report = trace_v2
    assert not report.is_file() or report.read_text().strip() == "", report.read_text()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    kinds = {(r["dir"], r.get("method"), r["kind"]) for r in records}
    assert ("client->agent", "session/prompt", "request") in kinds
    assert ("agent->client", "session/prompt", "response") in kinds  # decoded as the prompt's answer
    assert ("agent->client", "session/request_permission", "request") in kinds
    updates = [json.loads(r["line"])["params"]["update"] for r in records if r.get("method") == "session/update"]
    assert {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"} in updates
    assert not [r for r in records if r.get("violations")]


def test_replay_reproduces_a_v2_session(trace_v2: tuple[Path, Path]) -> None:
    path, _ = trace_v2
    result = subprocess.run([*ACPGEN, "replay", "--protocol", "v2", str(path), "--timeout", "20", "--", *AGENT_V2],
                            capture_output=True, text=True, timeout=180, cwd=ROOT, env={**os.environ, "ACP_EXAMPLE_PAUSE_S": "0"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "match the trace in shape" in result.stdout
    # an agent that does not echo the prompt as a user_message update differs where it should
    faulty = [sys.executable, str(ROOT / "tests" / "kit" / "faulty_agent_v2.py"), "no_user_message"]
    # (replay waits --timeout for the user_message that never comes: a short one keeps the test short)
    result = subprocess.run([*ACPGEN, "replay", "--protocol", "v2", str(path), "--timeout", "5", "--", *faulty],
                            capture_output=True, text=True, timeout=180, cwd=ROOT, env={**os.environ, "ACP_EXAMPLE_PAUSE_S": "0"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "session/update:user_message: 1 recorded, 0 now" in result.stdout, result.stdout
