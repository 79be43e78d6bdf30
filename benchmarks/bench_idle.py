"""Memory per idle connection: the agent side of N connections, each past `initialize` and
`session/new`, then left idle; the generated acp_v1 runtime against the official SDK's.

Each binding runs in a fresh process of the same interpreter (`--worker`): it imports everything,
opens N socket pairs, puts the binding's agent connection on one end of each, and writes the two
requests on the other end as a client would (raw JSON lines, the same bytes for both), reading
both answers. The figures are the growth of the process's RSS (from /proc, after `gc.collect()`)
and of the Python heap (tracemalloc, traced in a second process so it does not weigh on the RSS
figure), divided by N. Linux only (reads /proc).

    python benchmarks/bench_idle.py [--connections N] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import socket
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import GENERATED, sdk_version, table, write_json

BINDINGS = ("acpgen", "sdk")
REQUESTS = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
    b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}\n'
)


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def acpgen_connect() -> Any:
    sys.path.insert(0, str(GENERATED))
    import acp_v1 as acp

    class IdleAgent(acp.Agent):
        async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
            return acp.InitializeResponse(protocol_version=1)

        async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
            return acp.NewSessionResponse(session_id="idle-session")

    def connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Any:
        return acp.AgentSideConnection(lambda conn: IdleAgent(), reader, writer)

    return connect


def sdk_connect() -> Any:
    from acp import AgentSideConnection, InitializeResponse, NewSessionResponse

    class IdleAgent:
        async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
            return InitializeResponse(protocol_version=1)

        async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
            return NewSessionResponse(session_id="idle-session")

    def connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Any:
        return AgentSideConnection(lambda conn: IdleAgent(), writer, reader)

    return connect


async def open_idle(binding: str, n: int, trace: bool) -> dict[str, float]:
    connect = {"acpgen": acpgen_connect, "sdk": sdk_connect}[binding]()
    loop = asyncio.get_running_loop()
    kept: list[Any] = []
    # One connection before measuring: first-use costs (lazy imports, caches) are not per connection.
    for count in (1, n):
        ends: list[socket.socket] = []
        for _ in range(count):
            ours, theirs = socket.socketpair()
            theirs.setblocking(False)
            reader, writer = await asyncio.open_connection(sock=ours)
            kept.append((connect(reader, writer), reader, writer))
            ends.append(theirs)
        for end in ends:
            await loop.sock_sendall(end, REQUESTS)
        for end in ends:
            got = b""
            while got.count(b"\n") < 2:
                chunk = await loop.sock_recv(end, 65536)
                if not chunk:
                    raise RuntimeError(f"{binding}: the connection closed before answering")
                got += chunk
            if b'"error"' in got or b"idle-session" not in got:
                raise RuntimeError(f"{binding}: unexpected answers {got[:300]!r}")
        kept.extend(ends)
        await asyncio.sleep(0.05)
        gc.collect()
        if count == 1:
            base_rss, base_heap = rss_kib(), tracemalloc.get_traced_memory()[0] if trace else 0
    return {"rss_kib_per_connection": (rss_kib() - base_rss) / n,
            "heap_kib_per_connection": ((tracemalloc.get_traced_memory()[0] - base_heap) / 1024 / n) if trace else 0.0}


def worker(binding: str, n: int, trace: bool) -> None:
    if trace:
        tracemalloc.start()
    print(json.dumps(asyncio.run(open_idle(binding, n, trace))))


def measure(binding: str, n: int, trace: bool) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--worker", binding, "--connections", str(n)] + (["--trace"] if trace else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"{binding} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def run(n: int, runs: int) -> dict[str, Any]:
    rss: dict[str, list[float]] = {b: [] for b in BINDINGS}
    for _ in range(runs):
        for binding in BINDINGS:
            rss[binding].append(measure(binding, n, trace=False)["rss_kib_per_connection"])
    heap = {b: measure(b, n, trace=True)["heap_kib_per_connection"] for b in BINDINGS}
    rows = {b: {"rss_kib": sorted(rss[b])[len(rss[b]) // 2], "heap_kib": heap[b]} for b in BINDINGS}
    return {"connections": n, "runs": runs, "sdk": sdk_version(), "rows": rows,
            "x_sdk_rss": rows["sdk"]["rss_kib"] / rows["acpgen"]["rss_kib"] if rows["acpgen"]["rss_kib"] > 0 else None,
            "x_sdk_heap": rows["sdk"]["heap_kib"] / rows["acpgen"]["heap_kib"] if rows["acpgen"]["heap_kib"] > 0 else None}


def markdown(data: dict[str, Any]) -> str:
    rows = [[b, f"{r['rss_kib']:.1f}", f"{r['heap_kib']:.1f}"] for b, r in data["rows"].items()]
    out = [f"{data['connections']} idle agent connections over socket pairs, each past `initialize` and "
           f"`session/new`; SDK {data['sdk']}. RSS growth per connection (median of {data['runs']} processes) "
           "and Python heap growth per connection (tracemalloc, one more process).", "",
           table(["binding", "RSS KiB / connection", "heap KiB / connection"], rows)]
    if data.get("x_sdk_rss"):
        out.append(f"\nSDK / acpgen: RSS {data['x_sdk_rss']:.2f}x, heap {data['x_sdk_heap']:.2f}x.")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--worker", choices=BINDINGS)
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.connections, args.trace)
        return
    data = run(args.connections, args.runs)
    print(markdown(data))
    write_json(args.json, data)


if __name__ == "__main__":
    main()
