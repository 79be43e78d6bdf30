"""The Streamable HTTP client reads SSE streams as bytes (acpgen/runtime/remote.py `_EventReader`):
every way of cutting a stream into chunks gives the events a whole-stream reading gives, with
LF, CRLF or CR line ends, comments, other fields, multi-line data and events over the limit."""

from __future__ import annotations

import random

import pytest
from acp_v1.remote import _EventReader


def whole_stream(stream: bytes, limit: int) -> list[tuple[bytes, int]]:
    """The reference: the stream's lines at once (a leading byte order mark dropped), each event's
    data lines joined by LF; an event whose data is over `limit` has no data and a size over it."""
    text = stream.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    events: list[tuple[bytes, int]] = []
    data: list[bytes] = []
    for line in text.split(b"\n")[:-1]:  # what follows the last line end is not a line yet
        if not line:
            if data:
                joined = b"\n".join(data)
                events.append((joined, len(joined)) if len(joined) <= limit else (b"", limit + 1))
            data = []
        elif line == b"data" or line.startswith(b"data:"):
            value = line[5:]
            data.append(value[1:] if value[:1] == b" " else value)
    return events


def read(stream: bytes, cuts: list[int], limit: int) -> list[tuple[bytes, int]]:
    reader = _EventReader(limit)
    events: list[tuple[bytes, int]] = []
    for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        events += reader.feed(stream[a:b])
    events += reader.finish()
    return [(data, size) if size <= limit else (b"", limit + 1) for data, size in events]


def random_stream(rng: random.Random) -> bytes:
    parts = [b"\xef\xbb\xbf"] if rng.random() < 0.2 else []
    for _ in range(rng.randint(1, 12)):
        end = rng.choice([b"\n", b"\r\n", b"\r"])
        for _ in range(rng.randint(0, 3)):
            kind = rng.random()
            if kind < 0.6:
                payload = rng.choice([b'{"jsonrpc":"2.0","method":"session/update","params":{"x":1}}',
                                      b"x" * rng.randint(0, 90), b"\xc3\xa9t\xc3\xa9 \\u00e9", b""])
                parts.append(rng.choice([b"data: ", b"data:", b"data:  "]) + payload + end)
            elif kind < 0.7:
                parts.append(b"data" + end)
            elif kind < 0.8:
                parts.append(b": keep-alive" + end)
            elif kind < 0.85:
                parts.append(rng.choice([b"event: message", b"id: 7", b"retry: 10", b"database: no"]) + end)
            elif kind < 0.9:
                parts.append(rng.choice([b": ", b"event: "]) + b"c" * rng.randint(100, 400) + end)
            else:
                parts.append(b"data: " + b"y" * rng.randint(100, 400) + end)
        parts.append(end)
    return b"".join(parts)


@pytest.mark.parametrize("seed", range(60))
def test_any_chunking_reads_what_the_whole_stream_holds(seed: int) -> None:
    rng = random.Random(seed)
    stream = random_stream(rng)
    limit = rng.choice([64, 128, 10_000])
    expected = whole_stream(stream, limit)
    for _ in range(10):
        cuts = sorted(rng.sample(range(1, len(stream)), min(len(stream) - 1, rng.randint(0, 40))))
        assert read(stream, cuts, limit) == expected, (stream, cuts)
    assert read(stream, list(range(1, len(stream))), limit) == expected  # a byte at a time


def test_a_line_longer_than_the_limit_is_not_held() -> None:
    reader = _EventReader(100)
    events = reader.feed(b"data: " + b"z" * 50)
    for _ in range(1000):
        events += reader.feed(b"z" * 1000)
        assert len(reader._tail) <= 1000 + 116  # never the whole line
    events += reader.feed(b"\n\ndata: after\n\n")
    assert [size > 100 for _, size in events] == [True, False]
    assert events[1][0] == b"after"


def test_a_cr_at_the_end_of_a_chunk_waits_for_its_lf() -> None:
    reader = _EventReader(100)
    assert reader.feed(b"data: a\r") == []
    assert reader.feed(b"\ndata: b\r\n\r\n") == [(b"a\nb", 3)]
