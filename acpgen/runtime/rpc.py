"""JSON-RPC 2.0 over a message transport: the connection both sides share.

The connection moves whole messages (one JSON value each, UTF-8) through a `MessageTransport`;
`StreamTransport` is the stdio one (one message per line over a reader/writer pair, with the line
limit), and `asgi.py` and `remote.py` add WebSocket and Streamable HTTP. Requests are handled
concurrently, at most `ConnectionLimits.max_requests_in_flight` at once; more wait (up to
`ConnectionLimits.request_backlog`), and past that a request is answered at once with -32001
(server busy). Notifications are handled one at a time in the order they arrived (at most
`ConnectionLimits.notification_backlog` wait; then reading pauses, which pushes back on the peer),
and a response is delivered only after every notification received before it has been handled (so
`await conn.session_prompt(...)` returns after the turn's `session/update`s were processed).
Responses and cancellations are never held up behind handlers.

Errors follow JSON-RPC 2.0: -32700 parse error, -32600 invalid request (also a message over the
transport's limit, answered with the request's id when it can be read from the message's start),
-32601 method not found, -32602 invalid params (with the decode path in `data`), -32603 internal
error, -32800 request cancelled. A bad line never ends the connection; end of input does, cleanly.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import json.encoder
import json.scanner
import logging
import os
import re
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Literal, Protocol, TypeVar

from ._codec import JsonValue, ValidationError, encode_value
from ._protocol import (
    CANCEL_REQUEST,
    CANCEL_REQUEST_FIELD,
    CANCELLED_BY_SESSION,
    CANCELLED_RESULTS,
    INITIALIZE,
    NEGOTIATE,
    NULL_REQUEST_ID,
    SESSION_CANCEL,
    SESSION_CREATORS,
    SESSION_FIELD,
    WITHDRAWN_RESULTS,
    RequestError,
)
from .errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    SERVER_BUSY,
)
from .methods import MethodInfo

if TYPE_CHECKING:
    from .telemetry import Tracing

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_LINE_BYTES",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "READ_CHUNK_BYTES",
    "REQUEST_CANCELLED",
    "SERVER_BUSY",
    "CallTimeoutError",
    "CapabilityError",
    "Connection",
    "ConnectionClosedError",
    "ConnectionLimits",
    "FrameError",
    "LineReader",
    "LineWriter",
    "MemoryTransport",
    "MessageObserver",
    "MessageTooLargeError",
    "MessageTransport",
    "NonJsonLines",
    "OversizedMessageError",
    "ProtocolError",
    "RequestError",
    "RequestId",
    "StreamTransport",
    "as_transport",
    "memory_transports",
    "stdio_streams",
]

logger = logging.getLogger(__name__)

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""The default for the longest line (one message) accepted and sent: 64 MiB."""
READ_CHUNK_BYTES: Final = 1024 * 1024
READ_AHEAD_BYTES: Final = 64 * 1024
"""The stdio helpers' read buffer: reading from the peer pauses when 2x this much is buffered."""
PREFIX_BYTES: Final = 4096
"""How much of an over-long line is kept to find its id."""

RequestId = int | str | None
"""A JSON-RPC request id as the wire has it (booleans and fractions are rejected)."""

NonJsonLines = Literal["answer", "skip", "fail"]
"""What to do with a line that is not JSON: answer -32700 (JSON-RPC's rule, the agent side's
default), skip it with a warning (the client side's default: agents that print logs to stdout are
common), or close the connection with an error."""

T = TypeVar("T")

Direction = Literal["in", "out"]
"""Which way a message went: read from the peer, or written to it."""
MessageObserver = Callable[[Direction, JsonValue, "bytes | str"], None]
"""Sees every message a connection reads or writes, on every transport: `observer(direction,
message, raw)` with the parsed JSON-RPC message (None for a line that is not JSON) and its text as
read or written. Called after a message was read (before it is dispatched) and after it was
written; it must not block. An observer that raises is logged and kept."""


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """What one connection holds at most. Memory is about `(max_requests_in_flight +
    request_backlog + notification_backlog)` messages plus one line being read, each at most
    `max_line_bytes`."""

    max_line_bytes: int = MAX_LINE_BYTES
    """The longest line read; a longer one is skipped to its newline and answered -32600."""
    peer_max_line_bytes: int = MAX_LINE_BYTES
    """The longest line sent; a call or notification over it raises MessageTooLargeError, a result
    over it is answered -32603 instead. (The TypeScript SDK reads at most 32 MiB.)"""
    max_requests_in_flight: int = 64
    """Requests from the peer handled at once (a request counts until its answer is written)."""
    request_backlog: int = 256
    """Requests waiting for one of those slots; past that a request is answered -32001."""
    notification_backlog: int = 1024
    """Notifications waiting for their handler; past that reading pauses (see `Connection`)."""
    held_updates: int = 1024
    """Notifications naming a session that is not known yet, held while a call creating a session
    (`session/new`, any of `SESSION_CREATORS`) waits for its answer, so that they reach the handler
    after the caller has the new session's id. Past this many, the oldest held one is handled at
    once (with a warning), in order: nothing is dropped."""
    shutdown_grace: float = 2.0
    """Seconds notification handlers get to finish after the input ends before they are cancelled."""
    receive_timeout: float | None = None
    """Seconds a call waits for the peer's answer (None: no limit); past them the call raises
    CallTimeoutError and the request is cancelled on the peer (`$/cancel_request`, when the schema
    has it and `send_cancel_requests` is on). `Connection.timeout(seconds)` overrides it for the
    calls made inside a `with` block."""


class ProtocolError(RequestError):
    """The peer broke JSON-RPC in answering a call (no result and no error, a malformed error, an
    answer over the line limit): the call fails with this, naming what was wrong."""

    def __init__(self, message: str) -> None:
        super().__init__(INVALID_REQUEST, "Invalid response", {"message": message})


class MessageTooLargeError(ValueError):
    """A message we were about to send is over `ConnectionLimits.peer_max_line_bytes`; nothing was sent."""


class ConnectionClosedError(ConnectionError):
    """The connection ended before the peer answered."""


class CallTimeoutError(TimeoutError):
    """The peer did not answer a call in time (`ConnectionLimits.receive_timeout`,
    `Connection.timeout`): the call stopped waiting, and the request was cancelled on the peer when
    the schema has `$/cancel_request`. A late answer is ignored."""

    def __init__(
        self, method: str, request_id: int, seconds: float, cancelled_on_peer: bool
    ) -> None:
        told = (
            f"the request was cancelled on the peer with {CANCEL_REQUEST}"
            if cancelled_on_peer
            else "the peer was not told (no cancel request in this protocol, or send_cancel_requests=False)"
        )
        super().__init__(
            f"no answer to {method!r} (id {request_id}) within {seconds:g} s; {told}. Raise the "
            "limit with ConnectionLimits(receive_timeout=...) or `with conn.timeout(seconds):`"
        )
        self.method = method
        self.request_id = request_id
        self.seconds = seconds
        self.cancelled_on_peer = cancelled_on_peer


# (connection, seconds) set by `Connection.timeout` for the calls made in its block.
class CapabilityError(RuntimeError):
    """A call or notification the peer did not advertise in the `initialize` exchange: nothing was
    sent. `capability` is the path of the capability that gates `method` (from the schema)."""

    def __init__(self, method: str, capability: tuple[str, ...]) -> None:
        path = ".".join(capability)
        super().__init__(
            f"not sending {method!r}: the peer did not advertise {path} in the initialize "
            f"exchange, so it need not handle it. Check the capability before calling, or set "
            "`check_capabilities=False` on the connection to send it anyway"
        )
        self.method = method
        self.capability = capability


def advertised(init: JsonValue, path: tuple[str, ...]) -> bool:
    """Whether the capability at `path` of an `initialize` params or result is present: `true`, or
    an object (v2's markers, `{}` included); absent, `null` and `false` are not."""
    value: object = init
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value is True or isinstance(value, dict)


_CALL_TIMEOUT: ContextVar[tuple[object, float | None] | None] = ContextVar(
    "acp_call_timeout", default=None
)


class LineReader(Protocol):
    """What the connection reads from: `asyncio.StreamReader` fits. Its own buffer limit (the
    `limit` argument) is how much is read ahead; lines longer than it are read in pieces."""

    async def readuntil(self, separator: bytes = ...) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class LineWriter(Protocol):
    """What the connection writes to: `asyncio.StreamWriter` fits."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


# -- transport seam ---------------------------------------------------------------------------


class FrameError(Exception):
    """A transport could not read one message (cut short, not UTF-8); the connection answers -32700
    and keeps reading."""


class OversizedMessageError(FrameError):
    """One message over the transport's limit, skipped whole: its size and its first `PREFIX_BYTES`
    (enough to find its id). The connection answers it -32600, or fails our call it answers."""

    def __init__(self, size: int, limit: int, prefix: bytes) -> None:
        super().__init__(f"a message of {size} bytes is over the line limit of {limit} bytes")
        self.size = size
        self.limit = limit
        self.prefix = prefix


class MessageTransport(Protocol):
    """What a `Connection` talks through: whole messages in, whole messages out.

    `receive` returns the next message (its UTF-8 JSON text, as bytes or str) or None once the peer
    is gone; it raises FrameError for one unreadable message (OversizedMessageError for one over the
    limit) and ConnectionError when the transport broke. `send` takes one encoded message (no
    trailing newline) and waits while the transport pushes back; it raises ConnectionError when the
    peer is gone. `close` is called once when the connection ends. A transport may also have
    `ready_line()`: the next message it holds already, or None (then `receive` is awaited).
    """

    async def receive(self) -> bytes | str | None: ...

    async def send(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class StreamTransport:
    """Newline-delimited JSON over a reader/writer pair (stdio, a pipe, a socket): one message a
    line, at most `limits.max_line_bytes`. A line is read in pieces of the reader's buffer size; a
    longer one is read to its newline and dropped (OversizedMessageError), so the next line is a line
    whatever the size. A line read in several pieces is decoded piece by piece (returned as str) so
    a large message is not held twice; one that is not UTF-8 is a FrameError once read to its end."""

    def __init__(
        self,
        reader: LineReader,
        writer: LineWriter,
        limits: ConnectionLimits | None = None,
        *,
        read_ahead: bool = True,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self._limit = (limits or ConnectionLimits()).max_line_bytes
        self._eof = False
        # Read ahead: a reader with `read` (a StreamReader) is read in chunks of what it holds, up
        # to READ_AHEAD_BYTES (never more than the line limit, so a line ended within a chunk is
        # within the limit), split into lines here: `_lines` holds the chunk's whole lines, `_rest`
        # the start of the line it did not end, which `_line` completes. One await per chunk
        # instead of one `readuntil` per line (a third of a microsecond against a microsecond a
        # line, measured). `read_ahead=False` (the router, which hands the reader on after the
        # first line) reads exactly one line at a time.
        self._chunk = min(READ_AHEAD_BYTES, self._limit)
        self._read = getattr(reader, "read", None) if read_ahead and self._chunk > 0 else None
        self._lines: list[bytes] = []  # in reverse order: the next line is the last
        self._rest = b""
        # The writer's asyncio transport, when it has one (a StreamWriter): `send_nowait` asks it
        # whether a message can be written without waiting.
        pipe = getattr(writer, "transport", None)
        self._pipe: Any = (
            pipe
            if all(
                callable(getattr(pipe, name, None))
                for name in ("is_closing", "get_write_buffer_size", "get_write_buffer_limits")
            )
            else None
        )

    def ready_line(self) -> bytes | None:
        """The next line of a chunk already read ahead, without awaiting; None when `receive` must
        read (or wait) for it. The read loop takes a chunk's other lines through this after the
        `receive` that read it: one await a chunk instead of one a line."""
        lines = self._lines
        while lines:
            ready = lines.pop()
            if ready[:1] == b"{" or ready.strip():
                return ready
        return None

    async def receive(self) -> bytes | str | None:
        while True:
            ready = self.ready_line()
            if ready is not None:
                return ready
            if self._eof:
                return None
            if self._read is not None and not self._rest:
                try:
                    data = await self._read(self._chunk)
                except ConnectionError:
                    data = b""
                if not data:
                    self._eof = True
                    return None
                lines = data.split(b"\n")
                self._rest = lines.pop()  # b"" when the chunk ended a line
                lines.reverse()
                self._lines = lines
                continue
            # The usual line, read whole and starting with a message: returned at once.
            rest, self._rest = self._rest, b""
            try:
                piece = await self.reader.readuntil(b"\n")
            except (asyncio.LimitOverrunError, asyncio.IncompleteReadError, ConnectionError) as exc:
                line = await self._line(exc, rest)
            else:
                if not rest and piece[:1] == b"{" and len(piece) <= self._limit:
                    return piece[:-1]
                line = await self._line(piece, rest)
            if line is None or line.strip():
                return line

    async def _line(self, first: bytes | BaseException, head: bytes = b"") -> bytes | str | None:
        """The line whose first `readuntil` gave `first` (a piece ended by its newline, or what it
        raised), after `head` (its start, read ahead, within the limit): the pieces of a long line,
        the end of input, an oversized line."""
        parts: list[bytes] = [head] if head else []
        size = len(head)
        prefix = b""
        pending: bytes | BaseException | None = first
        while True:
            try:
                if pending is None:
                    piece = await self.reader.readuntil(b"\n")
                elif isinstance(pending, BaseException):
                    raised, pending = pending, None
                    raise raised
                else:
                    piece, pending = pending, None
                done = True
            except asyncio.LimitOverrunError as exc:
                piece = await self.reader.readexactly(exc.consumed)
                done = False
            except asyncio.IncompleteReadError as exc:  # end of input, maybe after an unended line
                piece, done, self._eof = exc.partial, True, True
            except ConnectionError:
                piece, done, self._eof = b"", True, True
            if done and piece.endswith(b"\n"):
                piece = piece[:-1]
            size += len(piece)
            if size <= self._limit:
                parts.append(piece)
            else:
                for kept in (*parts, piece):  # keep only the start: enough to find an id
                    if len(prefix) < PREFIX_BYTES:
                        prefix += kept[: PREFIX_BYTES - len(prefix)]
                parts = []
            if done:
                break
        if size > self._limit:
            raise OversizedMessageError(size, self._limit, prefix)
        if self._eof and size == 0:
            return None
        if len(parts) == 1:
            return parts[0]
        if len(parts) == 2 and head and size <= self._chunk:
            return head + parts[1]  # a line across two chunks of read-ahead
        try:
            return _decode_pieces(parts)
        except UnicodeDecodeError as exc:
            raise FrameError(str(exc)) from None

    async def send(self, data: bytes) -> None:
        """Write one message and its newline (a large one is not copied to append the newline).
        Each message is written when sent: batching a turn's messages into one write was measured
        slower on two cores (the reader no longer works while the writer encodes)."""
        self._write_line(data)
        await self.writer.drain()

    def _write_line(self, data: bytes) -> None:
        if len(data) < 65536:
            self.writer.write(data + b"\n")
        else:
            self.writer.write(data)
            self.writer.write(b"\n")

    def send_nowait(self, data: bytes) -> bool:
        """Write one message now and return True when `send` would not wait: the transport is open
        and holds no more than its high-water mark (so `drain` returns at once). False, writing
        nothing, otherwise: `send` then writes and waits. Saves `send`'s await on every message of
        a turn (measured: the write path is about a tenth of an agent's time per update)."""
        pipe = self._pipe
        if pipe is None or pipe.is_closing():
            return False
        if pipe.get_write_buffer_size() > pipe.get_write_buffer_limits()[1]:
            return False
        self._write_line(data)
        if pipe.is_closing():  # the write failed (the peer is gone): as `drain` would say
            raise ConnectionResetError("the connection was lost while writing")
        return True

    def close(self) -> None:
        self.writer.close()


class MemoryTransport:
    """One end of an in-memory transport (`memory_transports` makes the pair): whole messages go to
    the other end's queue, at most `capacity` waiting (then `send` waits, as a full pipe makes it).
    Closing an end ends the other's input; sending to a closed end raises ConnectionResetError."""

    def __init__(
        self, inbox: asyncio.Queue[bytes | None], outbox: asyncio.Queue[bytes | None]
    ) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = False
        self.peer: MemoryTransport | None = None

    async def receive(self) -> bytes | str | None:
        if self._closed and self._inbox.empty():
            return None
        return await self._inbox.get()

    async def send(self, data: bytes) -> None:
        if self._closed or (self.peer is not None and self.peer._closed):
            raise ConnectionResetError("the other end of the in-memory transport is closed")
        await self._outbox.put(bytes(data))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for queue in (self._outbox, self._inbox):  # end the peer's input, and a read of our own
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)


def memory_transports(capacity: int = 64) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected in-memory transports (for tests: an agent and a client in one process)."""
    one: asyncio.Queue[bytes | None] = asyncio.Queue(capacity)
    two: asyncio.Queue[bytes | None] = asyncio.Queue(capacity)
    first, second = MemoryTransport(one, two), MemoryTransport(two, one)
    first.peer, second.peer = second, first
    return first, second


def as_transport(
    reader: LineReader | MessageTransport,
    writer: LineWriter | None,
    limits: ConnectionLimits | None = None,
) -> MessageTransport:
    """A reader and a writer become a `StreamTransport`; a transport alone (writer None) is kept."""
    if writer is not None:
        return StreamTransport(reader, writer, limits)  # type: ignore[arg-type]
    if not callable(getattr(reader, "send", None)):
        raise TypeError("pass a reader and a writer, or a MessageTransport alone")
    return reader  # type: ignore[return-value]


def _decode_pieces(parts: list[bytes]) -> str:
    """The pieces of one long line as text; each piece is dropped once decoded."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    texts: list[str] = []
    parts.reverse()
    while parts:
        texts.append(decoder.decode(parts.pop()))
    texts.append(decoder.decode(b"", final=True))
    return "".join(texts)


_HEAD_MEMBER = re.compile(rb'\s*"(jsonrpc|id|method)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+|null)\s*,')
_NEXT_KEY = re.compile(rb'\s*"(\w+)"\s*:')


def _scan_head(prefix: bytes) -> tuple[dict[str, object], str]:
    """The leading `jsonrpc`/`id`/`method` members of a truncated JSON object (the SDKs write them
    first), and the name of the member after them (`params`, `result`, `error`)."""
    found: dict[str, object] = {}
    start = prefix.find(b"{")
    if start < 0 or prefix[:start].strip():
        return found, ""
    pos = start + 1
    while match := _HEAD_MEMBER.match(prefix, pos):
        with contextlib.suppress(ValueError):
            found[match.group(1).decode()] = json.loads(match.group(2))
        pos = match.end()
    following = _NEXT_KEY.match(prefix, pos)
    return found, following.group(1).decode() if following else ""


@dataclass(slots=True)
class _Pending:
    method: str
    future: asyncio.Future[JsonValue]
    from_worker: bool  # called by a notification handler: its answer cannot wait behind it


@dataclass(slots=True)
class _InFlight:
    method: str
    session_id: object
    params: JsonValue
    task: asyncio.Task[None] | None = None  # None while it waits for a slot
    by_session_cancel: bool = False
    barrier: asyncio.Future[None] | None = None  # set once the notifications before it are handled


_SKIP: Final = object()
_TAKEN: Final = object()  # _take_notification queued the notification
_UNREAD: Final = object()  # _take_notification left the line to _receive


class _FatalError(Exception):
    """Ends the connection: the reason goes to every pending call."""


@dataclass(slots=True)
class _Backlog:
    """Notifications waiting for the worker; `room` is set whenever the reader may add one."""

    items: deque[tuple[str, JsonValue]] = field(default_factory=deque)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    room: asyncio.Event = field(default_factory=asyncio.Event)
    stopped: bool = False


def _valid_id(value: object) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


def _dumps(message: Mapping[str, object]) -> bytes:
    """One message as UTF-8 JSON, without the newline. Text is sent as UTF-8, except in a message
    holding a lone surrogate (which only an escape such as `\\ud800` in what the peer sent can
    make): that message is sent with every non-ASCII character escaped, so it round-trips unchanged
    instead of failing to encode."""
    text = _encode(message)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode("ascii")


# What `json.dumps` with these arguments would build for every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ENCODE = _ENCODER.encode
_DECODER = json.JSONDecoder()
_DECODE = _DECODER.decode
# The C encoder and scanner that `encode` and `decode` build or call on every call, made once: a
# third of the time of encoding a message, a quarter of decoding one (measured on the session
# updates of the turn benchmark). Without the `_json` accelerator they are None and the two
# functions below are `_ENCODE` and `_DECODE`.
_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_encode_text = getattr(json.encoder, "c_encode_basestring", None)
_make_scanner = getattr(json.scanner, "c_make_scanner", None)
_C_ENCODE: Callable[[object, int], list[str]] | None = (
    _make_encoder(None, _ENCODER.default, _encode_text, None, ":", ",", False, False, False)
    if _make_encoder is not None and _encode_text is not None
    else None
)
_C_SCAN: Callable[[str, int], tuple[object, int]] | None = (
    _make_scanner(_DECODER) if _make_scanner is not None else None
)


def _encode(value: object) -> str:
    """`_ENCODE(value)`: the same text, or the same error. The C encoder is called without the
    check for circular references (`_ENCODE` keeps it): a value that recurses too deeply is encoded
    again by `_ENCODE`, which tells a cycle (ValueError) from depth (RecursionError)."""
    if _C_ENCODE is None:
        return _ENCODE(value)
    try:
        return "".join(_C_ENCODE(value, 0))
    except RecursionError:
        return _ENCODE(value)


def _loads(line: bytes | str) -> object:
    """`json.loads(line)`, without its encoding detection for the usual line (UTF-8 starting with
    `{`) nor its whitespace matching when the value ends the line: the same value, or the same
    error, either way (anything else is decoded again by `json.loads`, which says what is wrong)."""
    if isinstance(line, bytes) and line[:1] == b"{" and line[1:2] != b"\x00":
        text = line.decode("utf-8", "surrogatepass")
        if _C_SCAN is not None:
            try:
                value, end = _C_SCAN(text, 0)
            except (ValueError, StopIteration):
                return json.loads(line)
            if end == len(text):
                return value
        return _DECODE(text)
    return json.loads(line)


class Connection:
    """One end of a JSON-RPC connection: dispatches what the peer sends to `handler` through
    `methods` (wire name -> MethodInfo) and calls the peer's `peer_methods`.

    `limits` bounds what the connection holds (see `ConnectionLimits`). The reader never waits for a request
    handler: a request beyond the in-flight and backlog caps is answered -32001 at once, and
    responses are delivered while handlers run, so a handler that calls the peer always gets its
    answer. Reading pauses only while writing to the peer is blocked (a peer that does not read
    its answers) or while `notification_backlog` notifications wait (unless the notification
    handler itself is waiting for the peer: then up to twice that many are kept, and past that the
    connection is closed with an error rather than deadlock).

    `send_cancel_requests`: when a call is cancelled, tell the peer with `$/cancel_request` (if the
    schema has it). `non_json_lines`: see `NonJsonLines`. `observers`: see `MessageObserver` (more
    can be added with `add_observer`). `check_capabilities`: after `initialize`, a call or
    notification gated by a capability the peer did not advertise raises CapabilityError instead
    of being sent. `tracing`: see `telemetry.py` (off by default).

    It starts reading at once, so create it inside a running event loop. `await wait_closed()`
    returns when the input ends (or `close()` is called); calls still pending then raise
    ConnectionClosedError. Use the side classes (`AgentSideConnection`, `ClientSideConnection`) rather
    than this class directly.
    """

    _peer_gates: Mapping[str, tuple[str, ...]] = {}
    """The peer's methods gated by its capabilities (the sides set `_protocol.py`'s tables)."""
    _own_gates: Mapping[str, tuple[str, ...]] = {}
    """Ours, gated by the capabilities we advertise."""
    _interfaces: tuple[type, ...] = ()
    """The interface classes whose own methods answer -32601 (a handler that does not override one
    does not handle it)."""

    def __init__(
        self,
        handler: object,
        methods: Mapping[str, MethodInfo],
        peer_methods: Mapping[str, MethodInfo],
        transport: MessageTransport,
        *,
        limits: ConnectionLimits | None = None,
        send_cancel_requests: bool = True,
        non_json_lines: NonJsonLines = "answer",
        observers: tuple[MessageObserver, ...] = (),
        check_capabilities: bool = True,
        tracing: Tracing | None = None,
    ) -> None:
        self.limits = limits or ConnectionLimits()
        self.tracing = tracing
        """Trace context in `params._meta` and OpenTelemetry spans (`telemetry.Tracing`); None: off."""
        self._observers: list[MessageObserver] = list(observers)
        self.check_capabilities = check_capabilities
        """Refuse (CapabilityError) to send a method the peer did not advertise (see
        `_protocol.py`'s AGENT_CAPABILITIES / CLIENT_CAPABILITIES); set it False to send anyway."""
        self.withdraw_on_cancel = True
        """After sending `session/cancel`, answer that session's pending `WITHDRAWN_RESULTS` requests
        (`session/request_permission`: outcome `cancelled`) ourselves; False leaves them to their
        handlers (a test of how a peer copes with a client that answers late)."""
        self.peer_initialize: JsonValue = None
        """The peer's side of the `initialize` exchange as it came (the client's params or the
        agent's result, holding its capabilities); None until it happened."""
        self.own_initialize: JsonValue = None
        """Our side of it (the params we sent or the result we answered)."""
        self._handler = handler
        self._send_cancel_requests = send_cancel_requests
        self._non_json_lines = non_json_lines
        self._methods = methods
        # What `_notification_call` needs of each notification it hands to the handler.
        self._notification_plans: dict[str, tuple[Callable[[object], object], str]] = {
            name: (info.decode_params, info.handler)
            for name, info in methods.items()
            if info.notification and name != CANCEL_REQUEST
        }
        self._peer_methods = peer_methods
        self._transport = transport
        self._next_id = 0
        self._pending: dict[int, _Pending] = {}
        self._in_flight: dict[object, _InFlight] = {}  # running
        self._waiting: dict[object, _InFlight] = {}  # accepted, waiting for a slot (oldest first)
        self._session_tasks: dict[object, set[asyncio.Task[None]]] = {}
        self._backlog = _Backlog()
        self._backlog.room.set()
        self._received = 0  # notifications queued so far
        self._handled = 0  # notifications handled so far
        self._worker_calls = 0  # calls the notification handler is waiting on
        self._deferred: deque[tuple[int, Callable[[], None]]] = deque()
        self._barriers: set[asyncio.Future[None]] = set()  # requests waiting for notifications
        self._creating = 0  # our calls creating a session that wait for their answer
        self._known_sessions: set[str] = set()  # sessions we named or that a creator returned
        self._held: deque[tuple[str, JsonValue]] = deque()  # notifications for unknown sessions
        self._released: deque[tuple[str, JsonValue]] = deque()  # held ones to handle now
        self._warned_held = False
        self._write_lock = asyncio.Lock()
        # A transport that can write without waiting (StreamTransport.send_nowait) is written to
        # directly while nothing waits to write.
        self._send_nowait: Callable[[bytes], bool] | None = getattr(transport, "send_nowait", None)
        # A transport that reads what it sends (the ASGI app routes by method, id and session)
        # takes the message parsed as well (`send_message(data, message)`).
        self._send_message: Callable[[bytes, Mapping[str, object]], Awaitable[None]] | None = (
            getattr(transport, "send_message", None)
        )
        self._closing = False
        self._close_reason = ""
        self._tasks: set[asyncio.Task[None]] = set()
        self._done = asyncio.Event()
        loop = asyncio.get_running_loop()
        self._worker = loop.create_task(self._handle_notifications())
        self._main = loop.create_task(self._read_loop())

    # -- public -------------------------------------------------------------------------------

    @property
    def notifications_handled(self) -> int:
        """How many notifications from the peer have been handled (or dropped) so far, in the
        order they arrived: a transport that counts what the connection holds reads it."""
        return self._handled

    @property
    def closed(self) -> bool:
        """True once the input ended or `close()` was called."""
        return self._closing

    async def wait_closed(self) -> None:
        """Wait until the peer ends the input (or `close()` is called) and everything has stopped."""
        await self._done.wait()

    async def close(self) -> None:
        """Stop reading, fail pending calls with ConnectionClosedError, cancel request handlers (the
        notification handler gets `ConnectionLimits.shutdown_grace`), close the writer."""
        if not self._main.done():
            self._main.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._main
        if not self._done.is_set():  # cancelled before it ever ran: its `finally` never did
            await self._shutdown()

    def start_session_task(
        self, session_id: str, work: Coroutine[Any, Any, None]
    ) -> asyncio.Task[None]:
        """Run `work` as a task of session `session_id` (a turn that outlives the request that
        started it): `session/cancel` for that session cancels it, and so does closing the
        connection. The task must report its own end (v2: an idle `state_update`)."""
        task = self._spawn(work)
        tasks = self._session_tasks.setdefault(session_id, set())
        tasks.add(task)

        def forget(done: asyncio.Task[None]) -> None:
            tasks.discard(done)
            if not tasks and self._session_tasks.get(session_id) is tasks:
                del self._session_tasks[session_id]

        task.add_done_callback(forget)
        return task

    def cancel_session_tasks(self, session_id: str) -> None:
        """Cancel the tasks `start_session_task` runs for `session_id` (what `session/cancel` does)."""
        for task in list(self._session_tasks.get(session_id, ())):
            task.cancel()

    def unhandled_capabilities(self, initialize: JsonValue = None) -> list[tuple[str, str]]:
        """The capabilities advertised in `initialize` (default: what this end sent or answered in
        the exchange) whose method this end's handler does not implement, as (capability path,
        method) pairs, e.g. `[("agentCapabilities.loadSession", "session/load")]`: the peer will
        call them and get -32601. An agent warns about them when it answers `initialize`."""
        init = self.own_initialize if initialize is None else initialize
        found = []
        for method, path in self._own_gates.items():
            info = self._methods.get(method)
            if info is not None and advertised(init, path) and not self._implements(info.handler):
                found.append((".".join(path), method))
        return found

    def _implements(self, name: str) -> bool:
        own = getattr(type(self._handler), name, None)
        if own is None:
            return getattr(self._handler, name, None) is not None
        return not any(own is getattr(base, name, None) for base in self._interfaces)

    def add_observer(self, observer: MessageObserver) -> Callable[[], None]:
        """Have `observer` see every message read and written from now on (see `MessageObserver`);
        returns a function that removes it."""
        self._observers.append(observer)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._observers.remove(observer)

        return remove

    @contextlib.contextmanager
    def timeout(self, seconds: float | None) -> Iterator[None]:
        """Calls to the peer made on this connection inside the `with` block wait at most `seconds`
        for their answer (None: no limit), instead of `ConnectionLimits.receive_timeout`:

            with conn.timeout(5):
                await conn.initialize(...)   # CallTimeoutError after 5 s without an answer
        """
        token = _CALL_TIMEOUT.set((self, seconds))
        try:
            yield
        finally:
            _CALL_TIMEOUT.reset(token)

    async def ext_method(self, method: str, params: JsonValue) -> JsonValue:
        """Call the peer's extension method (its name starts with `_`); the result is raw JSON."""
        if not method.startswith("_"):
            raise ValueError(f"extension methods start with '_': {method!r}")
        return await self._call(method, params, _identity)

    async def ext_notification(self, method: str, params: JsonValue) -> None:
        """Send the peer an extension notification (its name starts with `_`)."""
        if not method.startswith("_"):
            raise ValueError(f"extension notifications start with '_': {method!r}")
        await self._notify(method, params)

    async def call_raw(self, method: str, params: JsonValue) -> JsonValue:
        """Call any method of the peer by its wire name, params and result raw JSON: for methods
        this package's schema does not name (a peer's newer or unstable method, such as
        `session/set_model`). Nothing is encoded, decoded or checked beyond JSON-RPC; errors
        arrive as `RequestError`. Methods the schema names have typed proxies: prefer those."""
        return await self._call(method, params, _identity)

    async def notify_raw(self, method: str, params: JsonValue) -> None:
        """Send the peer any notification by its wire name, params raw JSON (see `call_raw`)."""
        await self._notify(method, params)

    # -- calling the peer ---------------------------------------------------------------------

    async def _call(self, method: str, params: object, decode: Callable[[object], T]) -> T:
        if self._closing:
            raise ConnectionClosedError(f"cannot call {method!r}: the connection is closed")
        if self.peer_initialize is not None and self.check_capabilities:
            self._check_advertised(method)
        request_id = self._next_id
        encoded = encode_value(params)
        finish = None
        if self.tracing is not None:
            encoded, finish = self.tracing.call(method, request_id, encoded)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": encoded}
        data = _dumps(message)
        self._check_size(data, f"the {method!r} request")
        self._next_id += 1
        future: asyncio.Future[JsonValue] = asyncio.get_running_loop().create_future()
        from_worker = asyncio.current_task() is self._worker
        self._pending[request_id] = _Pending(method, future, from_worker)
        if from_worker:
            self._worker_calls += 1
            self._backlog.room.set()
            for barrier in self._barriers:  # the peer may answer only after those requests
                if not barrier.done():
                    barrier.set_result(None)
            self._barriers.clear()
        creating = method in SESSION_CREATORS
        if creating:
            self._creating += 1
        else:
            self._know_session(message["params"])
        timeout = self._call_timeout()
        outcome = "closed"
        try:
            await self._write(data, message)
            del data, message
            if timeout is None:
                raw = await future
            else:
                try:
                    raw = await asyncio.wait_for(future, timeout)
                except asyncio.TimeoutError:
                    outcome = "timeout"
                    told = self._cancel_on_peer(request_id)
                    raise CallTimeoutError(method, request_id, timeout, told) from None
            outcome = "ok"
            if creating:
                self._know_session(raw)
            if method == INITIALIZE and INITIALIZE:
                self.own_initialize, self.peer_initialize = _identity(encode_value(params)), raw
        except asyncio.CancelledError:
            outcome = "cancelled"
            self._cancel_on_peer(request_id)
            raise
        except RequestError as error:
            outcome = f"error {error.code}"
            raise
        finally:
            if finish is not None:
                finish(outcome)
            self._pending.pop(request_id, None)
            if from_worker:
                self._worker_calls -= 1
            if creating:
                self._creating -= 1
                self._release_held()
        return decode(raw)

    def _know_session(self, fields: object) -> None:
        session_id = fields.get(SESSION_FIELD) if isinstance(fields, dict) else None
        if isinstance(session_id, str):
            self._known_sessions.add(session_id)

    def _holds(self, params: JsonValue) -> bool:
        """Whether a notification waits for a session creator's answer: it names a session that
        we have not named and no creator has returned, while a creator waits."""
        session_id = params.get(SESSION_FIELD) if isinstance(params, dict) else None
        return isinstance(session_id, str) and session_id not in self._known_sessions

    def _release_held(self) -> None:
        """Called when a creator's caller has its answer: held notifications whose session is now
        known (all of them once no creator waits) are handled next, in the order they came."""
        if not self._held:
            return
        keep: deque[tuple[str, JsonValue]] = deque()
        for item in self._held:
            if self._creating and self._holds(item[1]):
                keep.append(item)
            else:
                self._released.append(item)
        self._held = keep
        self._backlog.ready.set()

    def _check_advertised(self, method: str) -> None:
        path = self._peer_gates.get(method)
        if path is not None and not advertised(self.peer_initialize, path):
            raise CapabilityError(method, path)

    def _call_timeout(self) -> float | None:
        scoped = _CALL_TIMEOUT.get()
        if scoped is not None and scoped[0] is self:
            return scoped[1]
        return self.limits.receive_timeout

    def _cancel_on_peer(self, request_id: int) -> bool:
        """Stop waiting for `request_id` and tell the peer (`$/cancel_request`) if we may."""
        if (
            self._pending.pop(request_id, None) is not None
            and self._send_cancel_requests
            and CANCEL_REQUEST in self._peer_methods
        ):
            self._spawn(self._notify_quietly(CANCEL_REQUEST, {CANCEL_REQUEST_FIELD: request_id}))
            return True
        return False

    async def _notify(self, method: str, params: object) -> None:
        if self._closing:
            raise ConnectionClosedError(f"cannot send {method!r}: the connection is closed")
        if self.peer_initialize is not None and self.check_capabilities:
            self._check_advertised(method)
        encoded = encode_value(params)
        if self.tracing is not None:
            encoded = self.tracing.call(method, None, encoded)[0]
        message = {"jsonrpc": "2.0", "method": method, "params": encoded}
        data = _dumps(message)
        self._check_size(data, f"the {method!r} notification")
        await self._write(data, message)
        self._know_session(message["params"])
        if method == SESSION_CANCEL and self.withdraw_on_cancel:
            self._withdraw_for_session(message["params"])

    def _withdraw_for_session(self, params: object) -> None:
        """After we sent `session/cancel`: the peer's requests for that session that our handler
        has not answered yet and whose result can say they were withdrawn (`WITHDRAWN_RESULTS`, as
        `session/request_permission`'s `cancelled` outcome) are answered so now, their handlers
        cancelled: a handler that forgets cannot wedge the session."""
        session_id = params.get(SESSION_FIELD) if isinstance(params, dict) else None
        if session_id is None:
            return
        for rid, entry in [*self._in_flight.items(), *self._waiting.items()]:
            if entry.method in WITHDRAWN_RESULTS and entry.session_id == session_id:
                self._cancel_entry(rid, entry, True)

    async def _notify_quietly(self, method: str, params: JsonValue) -> None:
        with contextlib.suppress(ConnectionError):
            await self._notify(method, params)

    # -- writing ------------------------------------------------------------------------------

    async def _write(self, data: bytes, message: Mapping[str, object]) -> None:
        send_nowait = self._send_nowait
        if send_nowait is not None and not self._write_lock.locked():
            try:
                sent = send_nowait(data)
            except (ConnectionError, RuntimeError) as exc:
                raise ConnectionClosedError(f"the peer stopped reading: {exc}") from exc
            if sent:
                if self._observers:
                    self._observe("out", message, data)
                return
        async with self._write_lock:
            try:
                if self._send_message is not None:
                    await self._send_message(data, message)
                else:
                    await self._transport.send(data)
            except (ConnectionError, RuntimeError) as exc:
                raise ConnectionClosedError(f"the peer stopped reading: {exc}") from exc
        if self._observers:
            self._observe("out", message, data)

    def _observe(self, direction: Direction, message: object, raw: bytes | str) -> None:
        for observer in tuple(self._observers):
            try:
                observer(direction, message, raw)  # type: ignore[arg-type]
            except Exception:
                logger.exception("message observer %r failed", observer)

    def _check_size(self, data: bytes, what: str) -> None:
        """Raise MessageTooLargeError if one message is over the peer's limit."""
        limit = self.limits.peer_max_line_bytes
        if len(data) > limit:
            raise MessageTooLargeError(
                f"{what} is {len(data)} bytes, over the peer's line limit of {limit} bytes "
                "(ConnectionLimits.peer_max_line_bytes); nothing was sent"
            )

    async def _reply(self, request_id: RequestId, result: object) -> None:
        message = {"jsonrpc": "2.0", "id": request_id, "result": result}
        try:
            data = _dumps(message)
            self._check_size(data, f"the result of request {request_id!r}")
        except (TypeError, ValueError) as exc:  # not JSON, or too large for the peer
            logger.error("cannot answer request %r with its result: %s", request_id, exc)
            await self._reply_error(
                request_id,
                RequestError.internal_error({"message": f"the result could not be sent: {exc}"}),
            )
            return
        try:
            await self._write(data, message)
        except ConnectionClosedError as exc:
            logger.debug("could not answer request %r: %s", request_id, exc)

    async def _reply_error(self, request_id: RequestId, error: RequestError) -> None:
        try:
            message = {"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}
            data = _dumps(message)
            if len(data) > self.limits.peer_max_line_bytes:
                logger.warning(
                    "error data for request %r is over the peer's line limit; sent without it",
                    request_id,
                )
                message = {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": error.code, "message": error.message},
                }
                data = _dumps(message)
            await self._write(data, message)
        except (ConnectionClosedError, TypeError, ValueError) as exc:
            logger.debug("could not send error for request %r: %s", request_id, exc)

    # -- reading ------------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        ready_line: Callable[[], bytes | None] | None = getattr(self._transport, "ready_line", None)
        try:
            while True:
                line: bytes | str | None
                try:
                    line = ready_line() if ready_line is not None else None
                    if line is None:
                        line = await self._transport.receive()
                except OversizedMessageError as exc:
                    await self._on_oversized(exc)
                    continue
                except FrameError as exc:  # read to its end: answered like a short bad line
                    await self._reply_error(None, RequestError.parse_error({"message": str(exc)}))
                    continue
                except ConnectionError:
                    break
                if line is None:
                    break
                taken = self._take_notification(line)
                if taken is _UNREAD:
                    await self._receive(line)
                elif taken is not _TAKEN:
                    await self._route(taken)
                del taken
                del line  # a large message is not kept while the next one is read
        except _FatalError as exc:
            self._close_reason = str(exc)
            logger.error("closing the connection: %s", exc)
        finally:
            await self._shutdown()

    async def _on_oversized(self, line: OversizedMessageError) -> None:
        head, following = _scan_head(line.prefix)
        limit = line.limit
        problem = str(line)
        request_id = head.get("id")
        answer = (
            isinstance(request_id, int)
            and "method" not in head
            and following in ("result", "error")
        )
        pending = (
            self._pending.pop(request_id, None) if answer and isinstance(request_id, int) else None
        )
        if pending is not None:
            logger.warning("the answer to %r (id %r): %s", pending.method, request_id, problem)
            self._settle(
                pending,
                ProtocolError(f"the answer to {pending.method!r} (id {request_id}): {problem}"),
            )
        elif "method" in head and "id" not in head:
            logger.warning("dropped a %r notification: %s", head["method"], problem)
        else:
            rid = (
                request_id if isinstance(request_id, (int, str)) and _valid_id(request_id) else None
            )
            await self._reply_error(
                rid, RequestError.invalid_request({"message": problem, "limit": limit})
            )

    def _parse(self, line: bytes | str) -> object:
        try:
            return _loads(line)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, too deep
            if self._non_json_lines == "answer":
                raise
            start = line.find("{") if isinstance(line, str) else line.find(b"{")
            if start > 0:  # escape codes or a log line glued before a frame
                with contextlib.suppress(ValueError, RecursionError):
                    message = json.loads(line[start:])
                    logger.warning(
                        "skipped %d bytes of noise before a message: %r", start, line[:start][:80]
                    )
                    return message
            shown = line[:120] if isinstance(line, str) else line[:120].decode("utf-8", "replace")
            if self._non_json_lines == "fail":
                raise _FatalError(
                    f"the peer wrote a line that is not JSON: {shown!r} ({exc})"
                ) from None
            logger.warning("skipped a line that is not JSON: %r", shown)
            return _SKIP

    def _take_notification(self, line: bytes | str) -> object:
        """The read loop's path for what a client reads most: a well-formed notification line (a
        JSON object from `{`, "jsonrpc" "2.0", a string method, no id, not a cancel) goes to the
        notification backlog here, without awaiting, when the backlog has room: `_TAKEN`. Another
        JSON object or array is returned parsed (and observed), for `_route`; `_UNREAD` (nothing
        done) sends the line the whole way, `_receive`: not from `{`, not JSON, a full backlog."""
        backlog = self._backlog
        if len(backlog.items) >= self.limits.notification_backlog:
            return _UNREAD
        # `_loads`'s usual case inline (one call fewer a line): UTF-8 from `{`, the object ending
        # the line. A JSON text from `{` is an object (a dict), whichever way it is read.
        message: Any
        try:
            if type(line) is bytes and line[:1] == b"{" and line[1:2] != b"\x00" and _C_SCAN:
                text = line.decode("utf-8", "surrogatepass")
                message, end = _C_SCAN(text, 0)
                if end != len(text):
                    message = _loads(line)
            elif line[:1] in (b"{", "{"):
                message = _loads(line)
            else:
                return _UNREAD
        except (ValueError, RecursionError, StopIteration):
            return _UNREAD  # `_receive` parses it again and answers as it should
        if self._observers:
            self._observe("in", message, line)
        if (
            "id" in message
            or type(method := message.get("method")) is not str
            or message.get("jsonrpc") != "2.0"
            or method in (CANCEL_REQUEST, SESSION_CANCEL)
        ):
            return message
        self._received += 1
        backlog.items.append((method, message.get("params")))
        backlog.ready.set()
        return _TAKEN

    async def _receive(self, line: bytes | str) -> None:
        try:
            message = self._parse(line)
        except (ValueError, RecursionError) as exc:
            if self._observers:
                self._observe("in", None, line)
            await self._reply_error(None, RequestError.parse_error({"message": str(exc)}))
            return
        if self._observers:
            self._observe("in", None if message is _SKIP else message, line)
        if message is not _SKIP:
            await self._route(message)

    async def _route(self, message: object) -> None:
        """One parsed message (observed already): checked, then answered, settled or queued."""
        if isinstance(message, list):
            await self._reply_error(
                None, RequestError.invalid_request({"message": "batch requests are not supported"})
            )
            return
        if not isinstance(message, dict):
            await self._reply_error(
                None, RequestError.invalid_request({"message": "a message must be a JSON object"})
            )
            return
        has_id = "id" in message
        request_id = message.get("id")
        if has_id and not _valid_id(request_id):
            await self._reply_error(
                None,
                RequestError.invalid_request(
                    {"message": "id must be a string, an integer or null"}
                ),
            )
            return
        if message.get("jsonrpc") != "2.0":
            if has_id:
                await self._reply_error(
                    request_id, RequestError.invalid_request({"message": 'jsonrpc must be "2.0"'})
                )
            return
        method = message.get("method")
        if has_id and request_id is None and isinstance(method, str) and not NULL_REQUEST_ID:
            await self._reply_error(
                None,
                RequestError.invalid_request(
                    {"message": "request ids must be strings or integers"}
                ),
            )
            return
        if method is None and "method" not in message:
            if has_id and (
                "result" in message or "error" in message or request_id in self._pending
            ):
                self._on_response(request_id, message)
            elif has_id:
                await self._reply_error(
                    request_id,
                    RequestError.invalid_request(
                        {"message": "a message needs a method, a result or an error"}
                    ),
                )
            return
        if not isinstance(method, str):
            if has_id:
                await self._reply_error(
                    request_id, RequestError.invalid_request({"message": "method must be a string"})
                )
            return
        params = message.get("params")
        del message
        if has_id:
            await self._accept_request(request_id, method, params)
        else:
            await self._enqueue_notification(method, params)

    def _on_response(self, request_id: object, message: dict[str, Any]) -> None:
        pending = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if pending is None:
            if request_id is None and isinstance(message.get("error"), dict):
                logger.warning(
                    "the peer reported an error not tied to a request: %.200r", message["error"]
                )
            elif (
                isinstance(request_id, int)
                and not isinstance(request_id, bool)
                and 0 <= request_id < self._next_id
            ):
                # ours (ids count up from 0), answered after we stopped waiting (cancelled)
                logger.debug("ignoring a late response to request %r", request_id)
            else:
                logger.warning(
                    "ignoring a response to no request of ours (id %.100r): %.200r",
                    request_id,
                    message,
                )
            return
        where = f"the answer to {pending.method!r} (id {request_id})"
        outcome: RequestError | JsonValue
        if "error" in message:
            if "result" in message:
                logger.warning("%s has both a result and an error; taken as the error", where)
            error = message["error"]
            if (
                isinstance(error, dict)
                and isinstance(error.get("code"), int)
                and isinstance(error.get("message"), str)
            ):
                outcome = RequestError(error["code"], error["message"], error.get("data"))
            else:
                outcome = ProtocolError(
                    f"{where} has a malformed error (it needs an integer code and a string message): {error!r:.200}"
                )
        elif "result" in message:
            outcome = message["result"]
        else:
            outcome = ProtocolError(f"{where} has neither a result nor an error")
        self._settle(pending, outcome)

    def _settle(self, pending: _Pending, outcome: RequestError | JsonValue) -> None:
        future = pending.future

        def deliver() -> None:
            if future.done():
                return
            if isinstance(outcome, RequestError):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

        if pending.from_worker or self._handled >= self._received:
            deliver()
        else:
            self._deferred.append((self._received, deliver))

    # -- handling what the peer sends ---------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _accept_request(self, request_id: RequestId, method: str, params: JsonValue) -> None:
        if request_id in self._in_flight or request_id in self._waiting:
            self._spawn(
                self._reply_error(
                    request_id,
                    RequestError.invalid_request(
                        {"message": f"request id {request_id!r} is already in use"}
                    ),
                )
            )
            return
        session_id = (
            params.get(SESSION_FIELD) if isinstance(params, dict) and SESSION_FIELD else None
        )
        entry = _InFlight(method, session_id, params)
        if self._handled < self._received and self._worker_calls == 0:
            # Handled after the notifications read before it (a permission request after the
            # tool call update it is about), unless the notification handler waits for the peer.
            entry.barrier = self._barrier(self._received)
        if len(self._in_flight) < self.limits.max_requests_in_flight:
            self._start(request_id, entry)
        elif len(self._waiting) < self.limits.request_backlog:
            self._waiting[request_id] = entry
        else:
            # Awaited: a peer that floods requests and does not read its answers stops being read.
            await self._reply_error(
                request_id,
                RequestError.server_busy(
                    {
                        "message": f"{len(self._in_flight)} requests are being handled and {len(self._waiting)} wait; try again later",
                    }
                ),
            )

    def _barrier(self, mark: int) -> asyncio.Future[None]:
        """A future set once `mark` notifications have been handled."""
        barrier: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._barriers.add(barrier)

        def reached() -> None:
            self._barriers.discard(barrier)
            if not barrier.done():
                barrier.set_result(None)

        self._deferred.append((mark, reached))
        return barrier

    def _start(self, request_id: RequestId, entry: _InFlight) -> None:
        params, entry.params = entry.params, None
        entry.task = self._spawn(self._handle_request(request_id, entry, params))
        self._in_flight[request_id] = entry
        entry.task.add_done_callback(lambda _task: self._request_done(request_id, entry))

    def _request_done(self, request_id: RequestId, entry: _InFlight) -> None:
        if self._in_flight.get(request_id) is entry:
            del self._in_flight[request_id]
        if self._closing:
            return
        if entry.task is not None and entry.task.cancelled():
            # Cancelled before its handler ever ran: the request still gets its one answer.
            self._spawn(self._answer_cancelled(request_id, entry))
        while self._waiting and len(self._in_flight) < self.limits.max_requests_in_flight:
            next_id = next(iter(self._waiting))
            self._start(next_id, self._waiting.pop(next_id))  # type: ignore[arg-type]

    async def _answer_cancelled(self, request_id: RequestId, entry: _InFlight) -> None:
        result = WITHDRAWN_RESULTS.get(entry.method)
        if result is None and entry.by_session_cancel:
            result = CANCELLED_RESULTS.get(entry.method)
        if result is not None:
            await self._reply(request_id, dict(result))
        else:
            await self._reply_error(request_id, RequestError.request_cancelled())

    async def _handle_request(
        self, request_id: RequestId, entry: _InFlight, params: JsonValue
    ) -> None:
        if self.tracing is None:
            await self._answer(request_id, entry, params, _no_outcome)
        else:
            with self.tracing.handle(entry.method, request_id, params) as finish:
                await self._answer(request_id, entry, params, finish)

    async def _answer(
        self,
        request_id: RequestId,
        entry: _InFlight,
        params: JsonValue,
        finish: Callable[[str], None],
    ) -> None:
        method = entry.method
        try:
            if entry.barrier is not None:
                await entry.barrier
                entry.barrier = None
            result = await self._dispatch_request(method, params)
        except RequestError as error:
            finish(f"error {error.code}")
            await self._reply_error(request_id, error)
        except asyncio.CancelledError:
            finish("cancelled")
            if self._closing:
                raise
            await self._answer_cancelled(request_id, entry)
        except ConnectionClosedError as exc:
            if self._closing:
                logger.debug("handler of %r stopped: the connection closed (%s)", method, exc)
            else:
                logger.exception("handler of %r failed", method)
                await self._reply_error(
                    request_id,
                    RequestError.internal_error({"message": f"{type(exc).__name__}: {exc}"}),
                )
        except Exception as exc:
            finish(f"error {INTERNAL_ERROR}")
            logger.exception("handler of %r failed", method)
            await self._reply_error(
                request_id, RequestError.internal_error({"message": f"{type(exc).__name__}: {exc}"})
            )
        else:
            finish("ok")
            await self._reply(request_id, result)

    async def _dispatch_request(self, method: str, params: JsonValue) -> object:
        info = self._methods.get(method)
        if info is None or info.notification:
            ext = getattr(self._handler, "ext_method", None) if method.startswith("_") else None
            if ext is None:
                raise RequestError.method_not_found(method)
            return encode_value(await ext(method, params))
        handler = getattr(self._handler, info.handler, None)
        if handler is None:
            raise RequestError.method_not_found(method)
        if NEGOTIATE is not None and method == NEGOTIATE[0] and isinstance(params, dict):
            requested = params.get(NEGOTIATE[1])
            if (
                isinstance(requested, int)
                and not isinstance(requested, bool)
                and 0 <= requested < NEGOTIATE[2]
            ):
                raise NEGOTIATE[3](requested, [NEGOTIATE[2]])
        try:
            value = info.decode_params(params)
        except ValidationError as exc:
            raise RequestError.invalid_params({"path": exc.path, "message": exc.message}) from None
        except RecursionError:
            raise RequestError.invalid_params(
                {"path": "", "message": "nested too deeply"}
            ) from None
        initialize = params if method == INITIALIZE and INITIALIZE else None
        del params
        result = await handler(value)
        if result is None and info.empty_result:
            return {}  # an empty result is `{}` on the wire, whatever the handler returned for it
        encoded = encode_value(result)
        if initialize is not None:
            self.peer_initialize, self.own_initialize = initialize, _identity(encoded)
            self._warn_unhandled()
        return encoded

    def _warn_unhandled(self) -> None:
        for path, method in self.unhandled_capabilities():
            logger.warning(
                "%s is advertised in the initialize answer, but %s does not implement %r (%s): "
                "the peer will call it and get -32601; implement it or stop advertising it",
                path,
                type(self._handler).__name__,
                method,
                self._methods[method].handler,
            )

    async def _enqueue_notification(self, method: str, params: JsonValue) -> None:
        backlog, cap = self._backlog, self.limits.notification_backlog
        if method in (CANCEL_REQUEST, SESSION_CANCEL):
            self._cancel_now(method, params)  # never held up behind a full backlog
        while len(backlog.items) >= cap and self._worker_calls == 0:
            backlog.room.clear()
            await backlog.room.wait()
        if len(backlog.items) >= 2 * cap:
            raise _FatalError(
                f"{len(backlog.items)} notifications wait while the notification handler waits for the peer "
                "(ConnectionLimits.notification_backlog)"
            )
        self._received += 1
        backlog.items.append((method, params))
        backlog.ready.set()

    async def _handle_notifications(self) -> None:
        backlog = self._backlog
        items, ready, room = backlog.items, backlog.ready, backlog.room
        released = self._released
        deferred = self._deferred
        call_for = self._notification_call
        while True:
            while not items and not released:
                if backlog.stopped:
                    return
                ready.clear()
                await ready.wait()
            if released:  # counted as handled when they were held
                await self._handle_released()
                continue
            method, params = items.popleft()
            room.set()
            if self._creating and SESSION_FIELD and self._holds(params):
                self._hold(method, params)
                del params
                self._count_handled()
                continue
            call = None
            try:
                call = call_for(method, params)
                if call is not None:
                    await call
            except asyncio.CancelledError:
                if self._closing:
                    raise
            except ConnectionClosedError as exc:
                if not self._closing:
                    logger.exception("handler of notification %r failed", method)
                else:
                    logger.debug(
                        "handler of notification %r stopped: the connection closed (%s)",
                        method,
                        exc,
                    )
            except Exception:
                logger.exception("handler of notification %r failed", method)
            finally:
                del params, call
                # `_count_handled`, inline: the usual notification has nothing deferred to it.
                self._handled += 1
                if deferred and deferred[0][0] <= self._handled:
                    self._run_deferred()

    def _count_handled(self) -> None:
        self._handled += 1
        self._run_deferred()

    def _run_deferred(self) -> None:
        """What waited for the notifications counted so far (`_deferred`: answers and barriers)."""
        while self._deferred and self._deferred[0][0] <= self._handled:
            self._deferred.popleft()[1]()

    def _hold(self, method: str, params: JsonValue) -> None:
        self._held.append((method, params))
        if len(self._held) > self.limits.held_updates:
            if not self._warned_held:
                self._warned_held = True
                logger.warning(
                    "more than %d notifications for sessions not created yet are held "
                    "(ConnectionLimits.held_updates); handling the oldest without waiting",
                    self.limits.held_updates,
                )
            self._released.append(self._held.popleft())

    async def _handle_released(self) -> None:
        method, params = self._released.popleft()
        try:
            call = self._notification_call(method, params)
            if call is not None:
                await call
        except asyncio.CancelledError:
            if self._closing:
                raise
        except Exception:
            logger.exception("handler of notification %r failed", method)

    def _notification_call(self, method: str, params: JsonValue) -> Awaitable[None] | None:
        """The handler's call for one notification, to await (None: nothing to call, or its params
        did not decode, which is logged). Not a coroutine itself: one fewer per notification."""
        plan = self._notification_plans.get(method)
        if plan is not None:  # a notification of the schema with a handler method
            decode, name = plan
            try:
                value = decode(params)
            except (ValidationError, RecursionError) as exc:
                logger.warning("ignoring notification %r with invalid params: %s", method, exc)
                return None
            handler = getattr(self._handler, name, None)
            return None if handler is None else handler(value)
        info = self._methods.get(method)
        if info is None or not info.notification:
            ext = (
                getattr(self._handler, "ext_notification", None) if method.startswith("_") else None
            )
            if ext is not None:
                return ext(method, params)  # type: ignore[no-any-return]
            logger.debug("ignoring notification %r", method)
            return None
        try:
            value = info.decode_params(params)
        except (ValidationError, RecursionError) as exc:
            logger.warning("ignoring notification %r with invalid params: %s", method, exc)
            return None
        if method == CANCEL_REQUEST:
            return None
        handler = getattr(self._handler, info.handler, None)
        return None if handler is None else handler(value)

    def _cancel_now(self, method: str, params: JsonValue) -> None:
        """`$/cancel_request` and `session/cancel` act when read, ahead of queued notifications."""
        info = self._methods.get(method)
        if info is None or not info.notification:
            return
        try:
            info.decode_params(params)
        except (ValidationError, RecursionError):
            return  # reported when the worker gets to it
        fields = params if isinstance(params, dict) else {}
        if method == CANCEL_REQUEST:
            request_id = fields.get(CANCEL_REQUEST_FIELD)
            if _valid_id(request_id):
                self._cancel_entry(
                    request_id,
                    self._in_flight.get(request_id) or self._waiting.get(request_id),
                    False,
                )
        else:
            session_id = fields.get(SESSION_FIELD)
            for rid, entry in [*self._in_flight.items(), *self._waiting.items()]:
                if entry.method in CANCELLED_BY_SESSION and entry.session_id == session_id:
                    self._cancel_entry(rid, entry, True)
            if isinstance(session_id, str):
                self.cancel_session_tasks(session_id)

    def _cancel_entry(self, request_id: object, entry: _InFlight | None, by_session: bool) -> None:
        if entry is None:
            return
        entry.by_session_cancel = by_session
        if entry.task is not None:
            entry.task.cancel()
        elif self._waiting.pop(request_id, None) is entry:
            self._spawn(self._answer_cancelled(request_id, entry))  # type: ignore[arg-type]

    # -- ending -------------------------------------------------------------------------------

    async def _shutdown(self) -> None:
        self._closing = True
        reason = self._close_reason or "the connection closed"
        for request_id, pending in list(self._pending.items()):
            if not pending.future.done():
                pending.future.set_exception(
                    ConnectionClosedError(
                        f"{reason} before {pending.method!r} (id {request_id}) was answered"
                    )
                )
        self._pending.clear()
        self._waiting.clear()
        # Notifications already received are still handled (and the responses queued behind them
        # delivered), for at most `shutdown_grace` seconds; then the worker is cancelled.
        self._released.extend(self._held)
        self._held.clear()
        self._backlog.stopped = True
        self._backlog.ready.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._worker), self.limits.shutdown_grace)
        except asyncio.TimeoutError:
            logger.warning(
                "a notification handler was still running %.1f s after the input ended; cancelled it",
                self.limits.shutdown_grace,
            )
        except (asyncio.CancelledError, Exception):
            pass
        for deferred in self._deferred:
            deferred[1]()
        self._deferred.clear()
        if not self._worker.done():
            self._worker.cancel()
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(self._worker, *tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            self._transport.close()
        self._done.set()


def _no_outcome(outcome: str) -> None:
    return None


def _identity(value: object) -> JsonValue:
    return value  # type: ignore[return-value]


class _SyncWriter:
    """Blocking writes to a file that cannot be used as an asyncio pipe (a terminal or a file)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        self._stream.write(data)
        self._stream.flush()

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._stream.flush()


async def stdio_streams(
    limit: int = READ_CHUNK_BYTES, *, protect_stdout: bool = False
) -> tuple[LineReader, LineWriter]:
    """This process's stdin and stdout as an asyncio reader and writer. `limit` is the read buffer
    (reading pauses at twice it; longer lines are still read, in pieces).

    `protect_stdout`: the protocol keeps a private copy of stdout, and file descriptor 1 (so
    `print()`, and the output of child processes) goes to stderr from then on: stray output can no
    longer corrupt the protocol stream.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    except (ValueError, OSError):
        # stdin is a regular file or a terminal: feed it from a thread.
        stdin: Any = sys.stdin.buffer

        def pump() -> None:
            while chunk := stdin.read1(limit):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
            loop.call_soon_threadsafe(reader.feed_eof)

        threading.Thread(target=pump, name="acp-stdin", daemon=True).start()
    out: BinaryIO = sys.stdout.buffer
    if protect_stdout:
        sys.stdout.flush()
        out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    writer: LineWriter
    try:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    except (ValueError, OSError):
        writer = _SyncWriter(out)
    return reader, writer
