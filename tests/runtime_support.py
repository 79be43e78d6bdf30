"""In-memory byte pipes and a raw JSON-RPC peer for the runtime tests."""

from __future__ import annotations

import asyncio
import json
from typing import Any


class MemoryWriter:
    """Writes into an asyncio.StreamReader: one direction of an in-memory pipe."""

    def __init__(self, target: asyncio.StreamReader) -> None:
        self.target = target
        self.closed = False

    def write(self, data: bytes) -> None:
        if self.closed:
            raise ConnectionResetError("pipe closed")
        self.target.feed_data(data)

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.target.feed_eof()


def pipe() -> tuple[asyncio.StreamReader, MemoryWriter]:
    reader = asyncio.StreamReader(limit=1 << 24)
    return reader, MemoryWriter(reader)


def duplex() -> tuple[tuple[asyncio.StreamReader, MemoryWriter], tuple[asyncio.StreamReader, MemoryWriter]]:
    """Two ends: each is (reader, writer); what one end writes the other reads."""
    a_in, b_out = pipe()
    b_in, a_out = pipe()
    return (a_in, a_out), (b_in, b_out)


class RawPeer:
    """The test's end of a connection: writes raw lines, reads parsed messages."""

    def __init__(self, reader: asyncio.StreamReader, writer: MemoryWriter) -> None:
        self.reader = reader
        self.writer = writer

    def send_line(self, line: bytes | str) -> None:
        self.writer.write(line.encode() if isinstance(line, str) else line)

    def send(self, message: Any) -> None:
        self.send_line(json.dumps(message) + "\n")

    async def recv(self, timeout: float = 5.0) -> Any:
        line = await asyncio.wait_for(self.reader.readline(), timeout)
        assert line, "the connection closed its output"
        assert line.endswith(b"\n")
        return json.loads(line)

    async def recv_eof(self, timeout: float = 5.0) -> None:
        line = await asyncio.wait_for(self.reader.readline(), timeout)
        assert line == b"", f"expected end of output, got {line!r}"

    def close(self) -> None:
        self.writer.close()
