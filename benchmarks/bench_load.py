"""Runtime under load: agent memory under a request flood, and the cost of one large message; the
generated acp_v1 runtime vs the official Python SDK, each agent in a child process on a stdio pipe
with its own defaults (benchmarks/load_agent.py).

Flood: after `initialize`, a peer writes --requests requests and never reads an answer: either
`initialize` requests (answered at once) or `session/prompt`s whose handler never returns. The
writer stops when everything is written or when the agent has not taken a byte for 3 s (it stopped
reading, or is too busy to); then the agent's peak RSS (VmHWM) is read. Large message: one `session/prompt` whose
text is --size-mb MB, answered `end_turn`; the agent's peak RSS over its RSS before, divided by
the message size (median of --runs fresh agents). Linux only (/proc).

    python benchmarks/bench_load.py [--requests N] [--size-mb N] [--runs N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import BENCH, median, table, write_json

AGENT = BENCH / "load_agent.py"
IMPLS = ("acpgen", "sdk")
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}


def vm_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def prompt(rid: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "session/prompt",
            "params": {"sessionId": "s", "prompt": [{"type": "text", "text": text}]}}


class Agent:
    def __init__(self, impl: str) -> None:
        self.proc = subprocess.Popen([sys.executable, str(AGENT), impl], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.send(INIT)
        assert json.loads(self.stdout.readline())["id"] == 0

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()

    def kib(self, key: str) -> int:
        return vm_kib(self.proc.pid, key)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def flood(impl: str, kind: str, requests: int, settle: float = 1.0, stall: float = 3.0) -> dict[str, Any]:
    if kind == "initialize":
        lines = [json.dumps({**INIT, "id": i}).encode() + b"\n" for i in range(1, requests + 1)]
    else:
        lines = [json.dumps(prompt(i, "wait")).encode() + b"\n" for i in range(1, requests + 1)]
    data = b"".join(lines)
    agent = Agent(impl)
    baseline = agent.kib("VmRSS")
    written = 0

    def write() -> None:
        nonlocal written
        try:
            for at in range(0, len(data), 64 * 1024):
                agent.stdin.write(data[at:at + 64 * 1024])
                agent.stdin.flush()
                written = min(at + 64 * 1024, len(data))
        except (BrokenPipeError, ValueError):
            pass

    writer = threading.Thread(target=write, daemon=True)
    start = time.perf_counter()
    writer.start()
    last, still = -1, 0.0
    while writer.is_alive() and still < stall and time.perf_counter() - start < 300:
        time.sleep(0.1)
        still = still + 0.1 if written == last else 0.0
        last = written
    time.sleep(settle)  # let the agent work through what it has taken
    peak, now = agent.kib("VmHWM"), agent.kib("VmRSS")
    parked = writer.is_alive()
    taken = written if parked else len(data)
    agent.stop()
    accepted = int(requests * taken / len(data))
    return {"requests": requests, "bytes": len(data), "written_bytes": taken, "requests_written": accepted,
            "all_written": not parked, "baseline_kib": baseline, "peak_kib": peak,
            "rss_kib": now, "growth_kib": peak - baseline,
            "kib_per_request_written": (peak - baseline) / accepted if accepted else 0.0}


def large(impl: str, size_mb: int, runs: int) -> dict[str, Any]:
    text = "x" * (size_mb * 1000 * 1000)
    line = json.dumps(prompt(1, text)).encode() + b"\n"
    del text
    growth, seconds, answers = [], [], []
    for _ in range(runs):
        agent = Agent(impl)
        baseline = agent.kib("VmRSS")
        start = time.perf_counter()
        agent.stdin.write(line)
        agent.stdin.flush()
        answer = json.loads(agent.stdout.readline())
        seconds.append(time.perf_counter() - start)
        growth.append(agent.kib("VmHWM") - baseline)
        answers.append(answer.get("result", answer.get("error")))
        agent.stop()
    return {"size_bytes": len(line), "growth_kib": growth, "median_growth_kib": median(growth),
            "x_size": median(growth) * 1024 / len(line), "seconds": seconds, "median_s": median(seconds),
            "answer": answers[0]}


def run(requests: int, size_mb: int, runs: int, settle: float = 1.0) -> dict[str, object]:
    if not Path("/proc/self/status").exists():
        return {"status": "skipped", "reason": "needs /proc to read RSS"}
    floods = {kind: {impl: flood(impl, kind, requests, settle) for impl in IMPLS} for kind in ("initialize", "prompt")}
    big = {impl: large(impl, size_mb, runs) for impl in IMPLS}
    return {"status": "ok", "requests": requests, "size_mb": size_mb, "runs": runs, "flood": floods, "large": big}


def markdown(data: dict[str, object]) -> str:
    if data.get("status") != "ok":
        return f"Skipped: {data.get('reason')}."
    floods = data["flood"]
    big = data["large"]
    assert isinstance(floods, dict) and isinstance(big, dict)
    rows = []
    for kind, by_impl in floods.items():
        for impl, f in by_impl.items():
            rows.append([f"{kind} flood", impl, f"{f['requests_written']:,} of {f['requests']:,}",
                         "yes" if f["all_written"] else "no: parked (3 s without progress)",
                         f"{f['baseline_kib'] / 1024:.0f}", f"{f['peak_kib'] / 1024:.0f}",
                         f"{f['growth_kib'] / 1024:.1f}"])
    big_rows = [[impl, f"{b['size_bytes'] / 1e6:.0f} MB", f"{b['median_growth_kib'] / 1024:.0f}",
                 f"{b['x_size']:.2f}", f"{b['median_s']:.2f} s", json.dumps(b["answer"])[:60]]
                for impl, b in big.items()]
    a, s = big["acpgen"], big["sdk"]
    return "\n".join([
        f"Request flood: {data['requests']:,} requests written to the agent's stdin, its answers never "
        "read. Peak RSS (VmHWM) of the agent process.",
        "",
        table(["flood", "agent", "requests it took", "all taken", "RSS before MiB", "peak MiB", "growth MiB"], rows),
        "",
        f"One large message: a session/prompt of {data['size_mb']} MB of text; the agent's peak RSS over "
        f"its RSS before (median of {data['runs']} fresh agents).",
        "",
        table(["agent", "line", "growth MiB", "growth / size", "answered in", "answer"], big_rows),
        "",
        f"Memory per large message: acpgen {a['x_size']:.2f}x its size, SDK {s['x_size']:.2f}x.",
    ])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--size-mb", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    write_json(args.json, run(args.requests, args.size_mb, args.runs))


if __name__ == "__main__":
    main()
