#!/usr/bin/env python3
"""Record the JSON-RPC messages of real interop runs as a corpus (for benchmarks and tests).

    python scripts/record_interop.py [--out tests/fixtures/interop/v1.jsonl]

Runs the official-SDK clients (tests/peers, traced with PEER_TRACE=1) against examples/agent.py and
against the SDK agents, in three scenarios (a full turn, a cancelled turn, a failed file read), and
writes one JSON line per message: {"run", "direction" ("client->agent" or "agent->client"),
"message"}. Needs node and `npm ci --prefix tests/peers`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "tests" / "peers"
CLIENTS = {"ts_client": ["node", str(PEERS / "ts_client.mjs")], "py_client": [sys.executable, str(PEERS / "py_client.py")]}
AGENTS = {
    "example_agent": [sys.executable, str(ROOT / "examples" / "agent.py")],
    "ts_agent": ["node", str(PEERS / "ts_agent.mjs")],
    "py_agent": [sys.executable, str(PEERS / "py_agent.py")],
}
SCENARIOS = {"turn": ([], {}), "cancel": (["--cancel"], {}), "missing": ([], {"PEER_PROMPT": "read missing.txt"})}


def record(client: str, agent: str, scenario: str) -> list[dict[str, object]]:
    flags, env = SCENARIOS[scenario]
    proc = subprocess.run(
        [*CLIENTS[client], *flags, *AGENTS[agent]],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, **env, "PEER_TRACE": "1"},
    )
    if proc.returncode != 0:
        raise SystemExit(f"{client} x {agent} ({scenario}) failed:\n{proc.stdout}\n{proc.stderr}")
    run = f"{client}/{agent}/{scenario}"
    out = []
    for line in proc.stderr.splitlines():
        prefix = f"[{client}] "
        if not line.startswith(prefix):
            continue
        arrow, _, payload = line[len(prefix):].partition(" ")
        if arrow not in ("->", "<-") or not payload.startswith("{"):
            continue
        direction = "client->agent" if arrow == "->" else "agent->client"
        message, _ = json.JSONDecoder().raw_decode(payload)
        out.append({"run": run, "direction": direction, "message": message})
    # The session cwd is a temporary folder of this machine: record it as /project.
    cwds = {r["message"]["params"]["cwd"] for r in out  # type: ignore[index]
            if r["message"].get("method") == "session/new"}  # type: ignore[union-attr]
    text = json.dumps(out)
    for cwd in sorted(cwds, key=len, reverse=True):
        text = text.replace(json.dumps(cwd)[1:-1], "/project")
    return json.loads(text)  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "interop" / "v1.jsonl")
    args = parser.parse_args()
    records = [r for c in CLIENTS for a in AGENTS for s in SCENARIOS for r in record(c, a, s)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records), encoding="utf-8")
    print(f"{len(records)} messages -> {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
