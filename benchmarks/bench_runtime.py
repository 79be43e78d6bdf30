"""Runtime: prompt turns with 100 session/update notifications each, client <-> agent over a pipe:
the generated acp_v1 runtime on both ends vs the official Python SDK on both ends.

One turn = the client sends session/prompt; the agent (turn_agent.py, a child process on a stdio
pipe) sends 100 session/update notifications and answers `end_turn`; the turn ends when the client
has the answer and has handled all 100 notifications. The updates are the realistic
session/update messages of tests/fixtures/messages/v1 that both bindings round-trip unchanged
(cycled to 100), built into objects once at agent start, so a turn measures the runtimes and the
codecs: encode, write, read, parse, decode, dispatch. Each implementation runs --turns turns per
round, after initialize, session/new and 3 warm-up turns; rounds alternate between the two, and
the figure is the median of turns per second over --rounds rounds.

A turn's time splits into what every turn costs (the prompt's round trip: both processes waking,
the request dispatched, the answer) and what each update adds. The same measurement with one
update a turn (--short-turns turns per round, other agent processes, 0 to skip) gives both: a turn
of n updates = its one-update turn + (n - 1) x the time an update adds. That shows the ratio a
turn of many updates tends to, and how fast acpgen's updates must be for a target at n updates.

    python benchmarks/bench_runtime.py [--rounds N] [--turns N] [--updates N] [--short-turns N] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import BENCH, GENERATED, ROOT, WORK, median, sdk_version, table, write_json

AGENT = BENCH / "turn_agent.py"
Turn = Callable[[], Awaitable[None]]


def update_corpus(count: int) -> list[dict[str, Any]]:
    """`count` session updates, cycling over the fixture updates both bindings round-trip exactly."""
    sys.path.insert(0, str(GENERATED))
    import acp_v1
    from acp.schema import SessionNotification

    usable = []
    for item in json.loads((ROOT / "tests" / "fixtures" / "messages" / "v1" / "SessionNotification.json").read_text()):
        try:
            ours = acp_v1.encode(acp_v1.decode("SessionNotification", item))
            sdk = SessionNotification.model_validate(item).model_dump(mode="json", by_alias=True, exclude_unset=True)
        except Exception:  # the SDK does not know this (newer) update kind
            continue
        if ours == item and sdk == item:
            usable.append(item["update"])
    return [usable[i % len(usable)] for i in range(count)]


class Counter:
    def __init__(self) -> None:
        self.seen = 0
        self.target = 0
        self.done = asyncio.Event()

    def expect(self, n: int) -> None:
        self.target += n
        self.done.clear()
        if self.seen >= self.target:
            self.done.set()

    def hit(self) -> None:
        self.seen += 1
        if self.seen >= self.target:
            self.done.set()


@asynccontextmanager
async def acpgen_session(updates: Path, n_updates: int) -> AsyncIterator[Turn]:
    sys.path.insert(0, str(GENERATED))
    import acp_v1 as acp

    counter = Counter()

    class TurnClient(acp.Client):
        async def session_update(self, params: acp.SessionNotification) -> None:
            counter.hit()

    async with acp.spawn_agent(TurnClient(), sys.executable, str(AGENT), "acpgen", str(updates)) as conn:
        await conn.initialize(acp.InitializeRequest(protocol_version=1))
        session = await conn.session_new(acp.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
        prompt = acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="go")])

        async def turn() -> None:
            counter.expect(n_updates)
            result = await conn.session_prompt(prompt)
            assert result.stop_reason == acp.StopReason.END_TURN
            await counter.done.wait()

        yield turn


@asynccontextmanager
async def sdk_session(updates: Path, n_updates: int) -> AsyncIterator[Turn]:
    from acp import schema, spawn_agent_process

    counter = Counter()

    class TurnClient:
        def on_connect(self, conn: Any) -> None:
            pass

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            counter.hit()

    async with spawn_agent_process(TurnClient(), sys.executable, str(AGENT), "sdk", str(updates),
                                   transport_kwargs={"stderr": None}) as (conn, _process):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(ROOT), mcp_servers=[])
        blocks = [schema.TextContentBlock(type="text", text="go")]  # SDK 0.12 and 1.0 (no text_block there)

        async def turn() -> None:
            counter.expect(n_updates)
            result = await conn.prompt(session_id=session.session_id, prompt=blocks)
            assert result.stop_reason == "end_turn"
            await counter.done.wait()

        yield turn


async def measure(rounds: int, turns: int, n_updates: int, updates: Path) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {"acpgen": [], "sdk": []}
    async with acpgen_session(updates, n_updates) as ours, sdk_session(updates, n_updates) as theirs:
        sides = {"acpgen": ours, "sdk": theirs}
        for turn in sides.values():
            for _ in range(3):
                await turn()
        for _ in range(rounds):
            for name, turn in sides.items():
                start = time.perf_counter()
                for _ in range(turns):
                    await turn()
                rates[name].append(turns / (time.perf_counter() - start))
    return rates


def split_turn(long: dict[str, float], short: dict[str, float], n_updates: int, target: float = 4) -> dict[str, Any]:
    """Per implementation, from the median turns per second of turns of `n_updates` updates (`long`)
    and of one update (`short`): the one-update turn and the time each further update adds (both
    in ms); the ratio of the latter (SDK / acpgen); and the time an acpgen update may add for
    acpgen to be `target` times the SDK's rate at `n_updates` (given acpgen's one-update turn)."""
    split: dict[str, Any] = {}
    for name in long:
        one, whole = 1000 / short[name], 1000 / long[name]
        split[name] = {"one_update_turn_ms": one, "per_update_ms": (whole - one) / (n_updates - 1)}
    ours, theirs = split["acpgen"], split["sdk"]
    split["x_sdk_per_update"] = theirs["per_update_ms"] / ours["per_update_ms"]
    split["x_sdk_one_update"] = theirs["one_update_turn_ms"] / ours["one_update_turn_ms"]
    split["target"] = target
    split["per_update_ms_for_target"] = (1000 / long["sdk"] / target - ours["one_update_turn_ms"]) / (n_updates - 1)
    return split


def run(rounds: int, turns: int, n_updates: int, short_turns: int = 0) -> dict[str, object]:
    updates = WORK / "runtime" / "updates.json"
    updates.parent.mkdir(parents=True, exist_ok=True)
    corpus = update_corpus(n_updates)
    updates.write_text(json.dumps(corpus), encoding="utf-8")
    rates = asyncio.run(measure(rounds, turns, n_updates, updates))
    paired = [a / b for a, b in zip(rates["acpgen"], rates["sdk"], strict=True)]
    kinds = sorted({u["sessionUpdate"] for u in corpus})
    result: dict[str, object] = {
        "status": "ok", "sdk_version": sdk_version(), "rounds": rounds, "turns": turns, "updates_per_turn": n_updates,
        "update_kinds": kinds, "rates": rates,
        "turns_per_s": {k: median(v) for k, v in rates.items()},
        "x_sdk": median(rates["acpgen"]) / median(rates["sdk"]), "x_sdk_paired": median(paired)}
    if short_turns > 0 and n_updates > 1:
        one = WORK / "runtime" / "one-update.json"
        one.write_text(json.dumps(corpus[:1]), encoding="utf-8")
        short = asyncio.run(measure(rounds, short_turns, 1, one))
        short_tps = {k: median(v) for k, v in short.items()}
        result.update(short_turns=short_turns, short_rates=short, short_turns_per_s=short_tps,
                      split=split_turn(result["turns_per_s"], short_tps, n_updates))  # type: ignore[arg-type]
    return result


def markdown(data: dict[str, object]) -> str:
    if data.get("status") != "ok":
        return f"Skipped: {data.get('reason')}."
    tps = data["turns_per_s"]
    assert isinstance(tps, dict)
    n = data["updates_per_turn"]
    rows = [[name, f"{rate:.1f}", f"{rate * float(n):.0f}", f"{1000 / rate:.1f} ms"] for name, rate in tps.items()]
    return "\n".join([
        f"SDK: agent-client-protocol {data.get('sdk_version', '?')}. "
        f"{data['rounds']} alternating rounds of {data['turns']} turns per implementation, {n} "
        f"session/update notifications per turn (kinds: {', '.join(data['update_kinds'])}), agent in a "
        "child process on a stdio pipe; median turns per second.",
        "",
        table(["both ends", "turns/s", "notifications/s", "per turn"], rows),
        "",
        f"acpgen / SDK throughput: **{data['x_sdk']:.2f}** (paired per round: {data['x_sdk_paired']:.2f}; target >= 4 against SDK 0.12.1, issue 26).",
        *split_markdown(data),
    ])


def split_markdown(data: dict[str, Any]) -> list[str]:
    split = data.get("split")
    if not isinstance(split, dict):
        return []
    n = data["updates_per_turn"]
    rows = [[name, f"{split[name]['one_update_turn_ms']:.3f} ms", f"{split[name]['per_update_ms'] * 1000:.2f} µs"]
            for name in ("acpgen", "sdk")]
    return [
        "",
        f"Where a turn's time goes: the same measurement with one update a turn ({data['short_turns']} turns a "
        f"round, other agent processes), and what each of the other {n - 1} updates adds:",
        "",
        table(["both ends", "turn with 1 update", "each further update"], rows),
        "",
        f"SDK / acpgen: {split['x_sdk_one_update']:.2f} for the one-update turn, {split['x_sdk_per_update']:.2f} per "
        f"update (the ratio turns of many updates tend to). For {split['target']:g}x the SDK's rate at {n} updates, "
        f"given acpgen's one-update turn, an acpgen update may add at most {split['per_update_ms_for_target'] * 1000:.2f} µs.",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--updates", type=int, default=100)
    parser.add_argument("--short-turns", type=int, default=300,
                        help="turns a round with one update each (the split of a turn's time); 0: skip")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    write_json(args.json, run(args.rounds, args.turns, args.updates, args.short_turns))


if __name__ == "__main__":
    main()
