#!/usr/bin/env python3
"""What `acpgen inspect` adds to a session: round-trip latency and bulk throughput, direct vs
through the proxy (same agent, same messages, same run).

    python benchmarks/bench_inspect.py [--rounds N] [--update-bytes B] [--bulk N] [--json FILE]

The agent is a tiny stdio program: for each session/prompt it writes one session/update of
`--update-bytes` text and then the prompt's result. A round trip is prompt sent -> result read.
The bulk run asks for `--bulk` updates in one turn and times until the result arrives."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

AGENT = r'''
import json, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    msg = json.loads(line)
    p = msg["params"]
    n, size = p["_meta"]["updates"], p["_meta"]["bytes"]
    chunk = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": p["sessionId"], "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x" * size}}}}
    data = (json.dumps(chunk) + "\n").encode()
    for _ in range(n):
        out.write(data)
    out.write((json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"stopReason": "end_turn"}}) + "\n").encode())
    out.flush()
'''


def session(command: list[str], rounds: int, size: int, bulk: int) -> tuple[list[float], float]:
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None

    def turn(request_id: int, updates: int) -> float:
        prompt = {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": {
            "sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}], "_meta": {"updates": updates, "bytes": size}}}
        start = time.perf_counter()
        proc.stdin.write((json.dumps(prompt) + "\n").encode())  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        while True:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise SystemExit("the agent ended early")
            if b'"result"' in line[:60] or line.startswith(b'{"jsonrpc": "2.0", "id"'):
                return time.perf_counter() - start

    turn(0, 1)  # warm up
    latencies = [turn(i, 1) for i in range(1, rounds + 1)]
    bulk_seconds = turn(rounds + 1, bulk)
    proc.stdin.close()
    proc.wait(30)
    return latencies, bulk_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--update-bytes", type=int, default=1024)
    parser.add_argument("--bulk", type=int, default=5000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    agent = [sys.executable, "-c", AGENT]
    inspect = [sys.executable, "-m", "acpgen", "inspect", "--report", "/dev/null", "--", *agent]
    figures: dict[str, dict[str, float]] = {}
    for name, command in (("direct", agent), ("inspect", inspect)):
        latencies, bulk = session(command, args.rounds, args.update_bytes, args.bulk)
        ordered = sorted(latencies)
        figures[name] = {
            "median_ms": statistics.median(latencies) * 1000,
            "p95_ms": ordered[int(len(ordered) * 0.95) - 1] * 1000,
            "bulk_s": bulk,
            "bulk_mib_per_s": args.bulk * (args.update_bytes + 120) / bulk / 2**20,
        }
    figures["ratio"] = {k: figures["inspect"][k] / figures["direct"][k] for k in ("median_ms", "p95_ms", "bulk_s")}
    result = {"command": " ".join(sys.argv), "rounds": args.rounds, "update_bytes": args.update_bytes,
              "bulk_updates": args.bulk, "figures": figures}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
