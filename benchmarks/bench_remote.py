"""Remote runtime: prompt turns with 100 session/update notifications each over WebSocket and over
Streamable HTTP (HTTP/2 cleartext), the generated acp_v1 (AcpApp + connect_agent) on both ends vs
the official Python SDK (`create_asgi_app` + `create_websocket_stream` / `create_http_stream`) on
both ends.

The agent (turn_server.py) runs in a child process under Hypercorn on 127.0.0.1; the client runs
here. One turn = session/prompt, 100 session/update notifications (the fixture updates of
bench_runtime.py), `end_turn`; a turn ends when the client has the answer and has handled every
notification. Per profile and implementation: one connection, initialize, session/new, 3 warm-up
turns, then --turns turns per round; rounds alternate between the implementations, and the figure
is the median turns per second over --rounds rounds. As in bench_runtime.py, the same measurement
with one update a turn (--short-turns turns a round, other server processes; 0 to skip) splits a
turn's time into what every turn costs and what each update adds.

    python benchmarks/bench_remote.py [--rounds N] [--turns N] [--updates N] [--short-turns N] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import BENCH, GENERATED, ROOT, WORK, median, sdk_version, table, write_json
from bench_runtime import Counter, split_turn, update_corpus

SERVER = BENCH / "turn_server.py"
PROFILES = ("ws", "http")
Turn = Callable[[], Awaitable[None]]


@contextlib.contextmanager
def server(which: str, updates: Path) -> Iterator[int]:
    """turn_server.py in a child process on an ephemeral loopback port; stopped on exit."""
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as Hypercorn does for its own binds
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(SERVER), which, str(updates), str(sock.fileno())],
                               pass_fds=[sock.fileno()], cwd=ROOT)
    sock.close()
    try:
        yield port
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def url(profile: str, port: int) -> str:
    return f"{'ws' if profile == 'ws' else 'http'}://127.0.0.1:{port}/acp"


@contextlib.asynccontextmanager
async def acpgen_session(profile: str, port: int, n_updates: int) -> AsyncIterator[Turn]:
    sys.path.insert(0, str(GENERATED))
    import acp_v1 as acp

    counter = Counter()

    class TurnClient(acp.Client):
        async def session_update(self, params: acp.SessionNotification) -> None:
            counter.hit()

    async with acp.connect_agent(TurnClient(), url(profile, port)) as conn:
        await conn.initialize(acp.InitializeRequest(protocol_version=1))
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
        prompt = acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="go")])

        async def turn() -> None:
            counter.expect(n_updates)
            result = await conn.session_prompt(prompt)
            assert result.stop_reason == acp.StopReason.END_TURN
            await counter.done.wait()

        yield turn


def http_client_module() -> Any:
    """The HTTP client the installed SDK's `create_http_stream` takes: httpx (0.12) or httpx2 (1.0)."""
    import importlib

    from acp.http import client as sdk_http

    return importlib.import_module("httpx2" if hasattr(sdk_http, "httpx2") else "httpx")


@contextlib.asynccontextmanager
async def sdk_session(profile: str, port: int, n_updates: int) -> AsyncIterator[Turn]:
    from acp import connect_to_agent, schema
    from acp.http import create_http_stream
    from acp.ws import create_websocket_stream

    counter = Counter()

    class TurnClient:
        def on_connect(self, conn: Any) -> None:
            pass

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            counter.hit()

    if profile == "ws":
        transport = await create_websocket_stream(url(profile, port))
    else:
        httpx = http_client_module()  # SDK 0.12: httpx; SDK 1.0: httpx2
        client = httpx.AsyncClient(http1=False, http2=True, timeout=httpx.Timeout(30.0, read=None))
        transport = create_http_stream(url(profile, port), client=client)
    conn = connect_to_agent(TurnClient(), transport)
    try:
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(ROOT), mcp_servers=[])
        blocks = [schema.TextContentBlock(type="text", text="go")]  # SDK 0.12 and 1.0 (no text_block there)

        async def turn() -> None:
            counter.expect(n_updates)
            result = await conn.prompt(session_id=session.session_id, prompt=blocks)
            assert result.stop_reason == "end_turn"
            await counter.done.wait()

        yield turn
    finally:
        await conn.close()


async def measure(profile: str, ports: dict[str, int], rounds: int, turns: int, n_updates: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {"acpgen": [], "sdk": []}
    async with acpgen_session(profile, ports["acpgen"], n_updates) as ours, \
            sdk_session(profile, ports["sdk"], n_updates) as theirs:
        sides = {"acpgen": ours, "sdk": theirs}
        for turn in sides.values():
            for _ in range(3):
                await turn()
        for _ in range(rounds):
            for name, turn in sides.items():
                start = time.perf_counter()
                for _ in range(turns):
                    await asyncio.wait_for(turn(), 60)
                rates[name].append(turns / (time.perf_counter() - start))
    return rates


def run(rounds: int, turns: int, n_updates: int, short_turns: int = 0) -> dict[str, object]:
    try:
        import hypercorn  # noqa: F401
        import websockets  # noqa: F401
        from acp.http import create_http_stream  # noqa: F401
    except ImportError as exc:
        return {"status": "skipped", "reason": f"{exc.name} is not installed (pip install -e '.[test]')"}
    updates = WORK / "remote" / "updates.json"
    updates.parent.mkdir(parents=True, exist_ok=True)
    corpus = update_corpus(n_updates)
    updates.write_text(json.dumps(corpus), encoding="utf-8")
    result: dict[str, object] = {"status": "ok", "sdk_version": sdk_version(), "rounds": rounds, "turns": turns,
                                 "updates_per_turn": n_updates}
    with server("acpgen", updates) as ours, server("sdk", updates) as theirs:
        for profile in PROFILES:
            rates = asyncio.run(measure(profile, {"acpgen": ours, "sdk": theirs}, rounds, turns, n_updates))
            paired = [a / b for a, b in zip(rates["acpgen"], rates["sdk"], strict=True)]
            result[profile] = {"rates": rates, "turns_per_s": {k: median(v) for k, v in rates.items()},
                               "x_sdk": median(rates["acpgen"]) / median(rates["sdk"]), "x_sdk_paired": median(paired)}
    if short_turns > 0 and n_updates > 1:
        one = WORK / "remote" / "one-update.json"
        one.write_text(json.dumps(corpus[:1]), encoding="utf-8")
        result["short_turns"] = short_turns
        with server("acpgen", one) as ours, server("sdk", one) as theirs:
            for profile in PROFILES:
                short = asyncio.run(measure(profile, {"acpgen": ours, "sdk": theirs}, rounds, short_turns, 1))
                figures = result[profile]
                assert isinstance(figures, dict)
                figures["short_rates"] = short
                figures["short_turns_per_s"] = {k: median(v) for k, v in short.items()}
                figures["split"] = split_turn(figures["turns_per_s"], figures["short_turns_per_s"], n_updates)
    return result


def markdown(data: dict[str, object]) -> str:
    if data.get("status") != "ok":
        return f"Skipped: {data.get('reason')}."
    n = data["updates_per_turn"]
    rows = []
    for profile in PROFILES:
        figures = data[profile]
        assert isinstance(figures, dict)
        label = "WebSocket" if profile == "ws" else "Streamable HTTP (HTTP/2)"
        for name, rate in figures["turns_per_s"].items():
            rows.append([label, name, f"{rate:.1f}", f"{rate * float(n):.0f}", f"{1000 / rate:.1f} ms"])
        rows.append([label, "acpgen / SDK", f"**{figures['x_sdk']:.2f}**", "", f"paired: {figures['x_sdk_paired']:.2f}"])
    lines = [
        f"SDK: agent-client-protocol {data.get('sdk_version', '?')}. "
        f"{data['rounds']} alternating rounds of {data['turns']} turns per implementation, {n} "
        "session/update notifications per turn; agent under Hypercorn in a child process on 127.0.0.1, "
        "client in the benchmark process, one connection each; median turns per second.",
        "",
        table(["profile", "both ends", "turns/s", "notifications/s", "per turn"], rows),
    ]
    split_rows = []
    for profile in PROFILES:
        split = data[profile].get("split") if isinstance(data[profile], dict) else None  # type: ignore[union-attr]
        if not isinstance(split, dict):
            continue
        label = "WebSocket" if profile == "ws" else "Streamable HTTP (HTTP/2)"
        split_rows += [[label, name, f"{split[name]['one_update_turn_ms']:.3f} ms",
                        f"{split[name]['per_update_ms'] * 1000:.2f} µs"] for name in ("acpgen", "sdk")]
        split_rows.append([label, "SDK / acpgen", f"{split['x_sdk_one_update']:.2f}", f"{split['x_sdk_per_update']:.2f}"])
        split_rows.append([label, f"acpgen's limit for {split['target']:g}x at {n}", "",
                           f"{split['per_update_ms_for_target'] * 1000:.2f} µs"])
    if split_rows:
        lines += ["", f"Where a turn's time goes: the same measurement with one update a turn ({data['short_turns']} "
                  f"turns a round, other server processes), and what each of the other {n - 1} updates adds; the last "
                  "row of a profile is the most an acpgen update may add for the target, given acpgen's one-update turn:",
                  "", table(["profile", "both ends", "turn with 1 update", "each further update"], split_rows)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--updates", type=int, default=100)
    parser.add_argument("--short-turns", type=int, default=100,
                        help="turns a round with one update each (the split of a turn's time); 0: skip")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    write_json(args.json, run(args.rounds, args.turns, args.updates, args.short_turns))


if __name__ == "__main__":
    main()
