"""StreamTransport's read-ahead (chunks split into lines) against its one-line-at-a-time reading
(`read_ahead=False`, one `readuntil` a line), and as the read loop takes them (`ready_line()`
before `receive`): for the same bytes, fed in any pieces, all give the same lines (bytes or
text), the same oversized-line and not-UTF-8 lines, in the same order, and the same end.
Lines cross chunk boundaries, exceed the chunk but not the limit, exceed the limit, end without a
newline at the end of input; the reader's own buffer is smaller than a line too."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from acp_v1.rpc import ConnectionLimits, FrameError, OversizedMessageError, StreamTransport


class NullWriter:
    def write(self, data: bytes) -> None:
        pass

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


def stream(seed: int) -> bytes:
    rng = random.Random(seed)
    lines: list[bytes] = []
    for _ in range(rng.randint(5, 40)):
        kind = rng.random()
        if kind < 0.5:
            lines.append(b'{"n":"' + b"x" * rng.randint(0, 60) + b'"}')
        elif kind < 0.6:
            lines.append(rng.choice([b"", b"  ", b"\r", b"\t \t"]))
        elif kind < 0.7:
            lines.append(b'{"long":"' + "é".encode() * rng.randint(40, 60) + b'"}')  # over the chunk
        elif kind < 0.8:
            lines.append(b'{"big":"' + b"y" * rng.randint(150, 400) + b'"}')  # over the limit
        elif kind < 0.85:
            lines.append(b'{"bad":"\xff' + b"z" * rng.randint(0, 150) + b'"}')  # not UTF-8
        elif kind < 0.9:
            lines.append(b"not json " + b"w" * rng.randint(0, 30))
        else:
            lines.append(b' {"spaced": 1}\r')
    data = b"\n".join(lines)
    return data if rng.random() < 0.5 else data + b"\n"


async def read_all(data: bytes, cuts: list[int], read_ahead: bool, reader_limit: int,
                   ready_first: bool = False) -> list[Any]:
    """Every line of `data` fed in pieces at `cuts`, as `receive` gives them; `ready_first`: as the
    connection's read loop takes them (`ready_line()` first, `receive` when it has none)."""
    reader = asyncio.StreamReader(limit=reader_limit)
    transport = StreamTransport(reader, NullWriter(), ConnectionLimits(max_line_bytes=200),  # type: ignore[arg-type]
                                read_ahead=read_ahead)
    transport._chunk = min(transport._chunk, 100)  # a chunk smaller than the limit, as 64 KiB is in use

    async def feed() -> None:
        start = 0
        for cut in [*cuts, len(data)]:
            reader.feed_data(data[start:cut])
            start = cut
            await asyncio.sleep(0)
        reader.feed_eof()

    feeder = asyncio.ensure_future(feed())
    seen: list[Any] = []
    while True:
        try:
            line = transport.ready_line() if ready_first else None
            if line is None:
                line = await transport.receive()
        except OversizedMessageError as exc:
            seen.append(("oversized", exc.size, exc.prefix))
            continue
        except FrameError:
            seen.append(("not utf-8",))
            continue
        if line is None:
            break
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError:  # read in one piece: bytes, which the connection answers
                seen.append(("not utf-8",))  # -32700 as it answers a FrameError (pieces)
                continue
        seen.append(("line", line))
    await feeder
    return seen


@pytest.mark.parametrize("seed", range(60))
def test_read_ahead_reads_what_line_at_a_time_reads(seed: int) -> None:
    data = stream(seed)
    rng = random.Random(seed * 7 + 1)
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 30)))) if len(data) > 1 else []
    reader_limit = rng.choice([32, 64, 1 << 20])

    async def three() -> tuple[list[Any], list[Any], list[Any]]:
        return (await read_all(data, cuts, True, reader_limit), await read_all(data, cuts, False, reader_limit),
                await read_all(data, cuts, True, reader_limit, ready_first=True))

    ahead, one_by_one, ready_first = asyncio.run(three())
    assert ahead == one_by_one
    assert ready_first == ahead
    assert any(item[0] == "line" for item in ahead)
