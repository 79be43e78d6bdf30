#!/usr/bin/env python3
"""Run the official-SDK peers against each other and print the results (not a pytest test).

    python tests/peers/selfcheck.py [--repeat N] [--verbose]

Every client (ts, py) is paired with every agent (ts, py) in three scenarios: a normal turn, a
turn cancelled after the first session/update, and a turn whose file read fails (missing file).
Run it with the Python that has agent-client-protocol installed (.venv for 0.12.1, .venv-sdk1 for
1.0.0rc3: both pass the 12 runs); the TS peers need `node` on PATH
and `npm ci --prefix tests/peers`. Exit status 0 only if every run passed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CLIENTS = {
    "ts": ["node", str(HERE / "ts_client.mjs")],
    "py": [sys.executable, str(HERE / "py_client.py")],
}
AGENTS = {
    "ts": ["node", str(HERE / "ts_agent.mjs")],
    "py": [sys.executable, str(HERE / "py_agent.py")],
}
FULL_TURN = ["agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]


def expect_turn(file_name: str) -> dict[str, Any]:
    return {
        "stopReason": "end_turn",
        "updates": FULL_TURN,
        "permissionRequests": 1,
        "fsReads": [file_name],
    }


# name -> (client flags, extra environment, expected summary; fsReads compared by file name)
SCENARIOS: dict[str, tuple[list[str], dict[str, str], dict[str, Any]]] = {
    "turn": ([], {}, expect_turn("README.md")),
    # Normally updates == ["agent_message_chunk"]; a cancel that lands after the agent's 200 ms
    # window (slow machine) may also let a tool_call and a permission request through.
    "cancel": (["--cancel"], {}, {"stopReason": "cancelled", "fsReads": []}),
    "missing-file": ([], {"PEER_PROMPT": "read missing.txt"}, expect_turn("missing.txt")),
}


def problems_with(summary: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    found = dict(summary, fsReads=[Path(p).name for p in summary.get("fsReads", [])])
    problems = [
        f"{key}: got {found.get(key)!r}, want {want!r}"
        for key, want in expected.items()
        if found.get(key) != want
    ]
    updates = found.get("updates", [])
    if updates[:1] != ["agent_message_chunk"] or (
        found.get("stopReason") == "cancelled" and "tool_call_update" in updates
    ):
        problems.append(f"unexpected updates {updates!r}")
    return problems + [f"error: {e}" for e in summary.get("errors", [])]


def run_one(client: str, agent: str, scenario: str, verbose: bool) -> bool:
    flags, extra_env, expected = SCENARIOS[scenario]
    command = [*CLIENTS[client], *flags, *AGENTS[agent]]
    env = {**os.environ, **extra_env}
    started = time.monotonic()
    rc: int | None = None
    try:
        proc = subprocess.run(command, env=env, capture_output=True, timeout=60)
        rc, raw_out, raw_err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:  # the peers bound themselves; this is a backstop
        raw_out, raw_err = exc.stdout or b"", exc.stderr or b""
    out, err = raw_out.decode(errors="replace"), raw_err.decode(errors="replace")
    elapsed = time.monotonic() - started
    lines = out.strip().splitlines()
    try:
        summary = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        summary = None
    problems = (
        ["no summary line on stdout"] if summary is None else problems_with(summary, expected)
    )
    if rc != 0:
        problems.insert(0, f"exit status {rc}")
    label = f"{client}_client -> {agent}_agent  {scenario:<12}"
    print(f"{'PASS' if not problems else 'FAIL'}  {label} {elapsed:5.2f}s", flush=True)
    if verbose and summary is not None:
        print(f"      {json.dumps(summary)}")
    if problems:
        for problem in problems:
            print(f"      {problem}")
        for line in err.strip().splitlines()[-15:]:
            print(f"      stderr| {line}")
    return not problems


def prerequisites() -> list[str]:
    missing = []
    if shutil.which("node") is None:
        missing.append("`node` is not on PATH")
    if not (HERE / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        missing.append("TS SDK not installed: run `npm ci --prefix tests/peers`")
    probe = subprocess.run([sys.executable, "-c", "import acp"], capture_output=True)
    if probe.returncode != 0:
        missing.append(
            f"{sys.executable} cannot import acp: pip install agent-client-protocol==0.12.1"
        )
    return missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="run every pairing N times")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every summary line")
    args = parser.parse_args()
    if missing := prerequisites():
        print("\n".join(missing), file=sys.stderr)
        return 2
    started = time.monotonic()
    results = [
        run_one(client, agent, scenario, args.verbose)
        for _ in range(args.repeat)
        for client in CLIENTS
        for agent in AGENTS
        for scenario in SCENARIOS
    ]
    print(f"{sum(results)}/{len(results)} passed in {time.monotonic() - started:.1f}s")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
