"""Remote agents: a plain ASGI 3 app serving one `/acp` endpoint, Streamable HTTP and WebSocket.

    app = AcpApp(MyAgent)                # one MyAgent(conn) per connection
    # uvicorn my_module:app              (WebSocket; HTTP/1.1 only)
    # hypercorn my_module:app            (HTTP/2 and WebSocket)
    serve_agent(MyAgent, port=8000)      # the simple case: 127.0.0.1, Uvicorn or Hypercorn

The wire follows the ACP transports RFD ("Streamable HTTP & WebSocket Transport"). Streamable HTTP:
POST `initialize` (no connection id) answers 200 with the response and `Acp-Connection-Id`; every
other POST answers 202 and its response arrives on an SSE stream: GET with the connection id is
the connection's stream, GET with `Acp-Session-Id` too is that session's stream (its updates, the
agent's requests about it, answers to its POSTs). DELETE ends the connection. WebSocket: GET with
`Upgrade: websocket`, the 101 carries `Acp-Connection-Id`, JSON-RPC travels in text frames.

Secure by default: a request carrying an `Origin` header not in `allowed_origins` is refused (403),
so a web page cannot drive a local agent (cross-site WebSocket hijacking), and so is one whose
`Host` is malformed (400) or not in `allowed_hosts` (403; loopback names by default: DNS
rebinding); an `authenticate` hook sees every request's headers before any ACP message is handled.
Who is calling (what the hook returned, or without a hook an identity of the connection alone) is
bound to the connection, handed to the agent (`identity_of(conn)`), and owns the sessions it opens:
another identity cannot list, load, resume, fork, prompt or close them. Memory is bounded in bytes:
every client message is weighed (`held_bytes`) and counted until the agent has answered or handled
it, per connection and per server (`Limits`); past a budget a POST gets 429 or 503 with
`Retry-After`, never a wait. Standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import importlib
import ipaddress
import json
import logging
import re
import secrets
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Collection, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

from ._protocol import (
    SESSION_CLOSE,
    SESSION_CREATORS,
    SESSION_FIELD,
    SESSION_FORKS,
    SESSION_LIST,
    SESSION_LIST_FIELD,
    SESSION_OPENERS,
    SESSION_TURN,
)
from .connections import AgentSideConnection
from .interfaces import Agent
from .rpc import ConnectionLimits, MessageObserver, RequestError

__all__ = [
    "CONNECTION_ID_HEADER",
    "SESSION_ID_HEADER",
    "TOO_MANY_SESSIONS",
    "AcpApp",
    "Authenticator",
    "Limits",
    "RequestInfo",
    "bearer_token",
    "held_bytes",
    "identity_of",
    "serve_agent",
]

logger = logging.getLogger(__name__)

CONNECTION_ID_HEADER: Final = "Acp-Connection-Id"
SESSION_ID_HEADER: Final = "Acp-Session-Id"
TOO_MANY_SESSIONS: Final = -32010
"""JSON-RPC error code answering a session/new or session/load past `Limits.max_sessions`."""
NOT_ON_THIS_CONNECTION: Final = -32002
"""ACP's "Resource not found" code, answering a request that names a session its connection does
not hold or its identity does not own (every ACP release has it, though not every schema names it)."""

INITIALIZE_TIMEOUT_S: Final = 30.0
KEEPALIVE_S: Final = 15.0
SSE_CHUNK_BYTES: Final = 64 * 1024
"""Events already waiting when the stream writes are sent together, up to about this size."""
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})
MESSAGE_OVERHEAD: Final = 512
"""What one message costs besides its content (its queue entry, dict, task): `held_bytes` adds it."""
REFINE_ABOVE: Final = 4 * 1024 * 1024
REFINE_QUOTES: Final = 20_000
"""`held_bytes` looks inside strings only in messages over REFINE_ABOVE with at most this many
(unescaped) quotes."""
_JSON_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
RETRY_AFTER_S: Final = 1
ROOM_POLL_S: Final = 0.05
LOG_CHARS: Final = 200
"""How much of a peer's text a log line quotes."""

Scope = MutableMapping[str, Any]
AsgiMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[AsgiMessage]]
Send = Callable[[AsgiMessage], Awaitable[None]]
Tap = Callable[[str, str, bytes], None]
"""`tap(connection_id, "in" | "out", message)` sees every message a connection passes."""

MiB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps, each with its default and its answer (docs/remote.md's table has them all).

    Counts: past `max_connections` a new connection is refused (HTTP 503, or the WebSocket upgrade
    refused with 503); past `max_sessions` on one connection (sessions held plus session/new,
    session/fork and session/load requests not yet answered) an opener is answered with JSON-RPC
    error TOO_MANY_SESSIONS; a connection with no traffic and no open stream for `idle_timeout`
    seconds is freed (its agent is closed, its id then answers 404).

    Bytes: a POST body or WebSocket text frame over `max_message_bytes` gets 413 (WebSocket: closed
    with 1009), and so does one whose parsed size (`held_bytes`) is over `connection_budget`. Each
    client message counts its parsed size from the moment it is accepted until the agent has
    answered it (a request) or handled it (a notification); at most `connection_budget` per
    connection, `inbound_backlog` messages queued per connection, and `server_budget` for the whole
    app (which also counts POST bodies being read and answers queued on streams). Past them a POST
    gets 429 (this connection) or 503 (the server) with `Retry-After`, a WebSocket request is
    answered -32001 (server busy) and the WebSocket reader waits for room before anything else.
    A POST body must arrive within `body_timeout` seconds (408). `stream_backlog` messages or
    `stream_backlog_bytes` bytes may wait on each outgoing stream (then the agent's send waits:
    back-pressure, nothing dropped). The runtime holds up to `notification_backlog` notifications
    (within the byte budget). Who opened a session is remembered for `session_ttl` seconds after
    the last connection holding it ends, for at most `max_known_sessions` sessions (the oldest
    idle are forgotten first; the agent's own check then decides)."""

    max_connections: int = 128
    max_sessions: int = 32
    max_message_bytes: int = 16 * MiB
    idle_timeout: float = 300.0
    stream_backlog: int = 256
    stream_backlog_bytes: int = 8 * MiB
    inbound_backlog: int = 64
    notification_backlog: int = 4096
    connection_budget: int = 32 * MiB
    server_budget: int = 96 * MiB
    body_timeout: float = 30.0
    max_known_sessions: int = 8192
    session_ttl: float = 3600.0


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What the `authenticate` hook sees: the request before any ACP message in it is read."""

    kind: str  # "http" or "websocket"
    method: str  # GET, POST, DELETE (a WebSocket upgrade is a GET)
    path: str
    headers: Mapping[str, str]  # names lower-case; repeated headers joined with ", "
    cookies: Mapping[str, str]
    client: tuple[str, int] | None


Authenticator = Callable[[RequestInfo], Awaitable[object]]
"""Returns who is calling (any hashable value but None) or None to refuse with 401. The value is
bound to the connection (a later request of that connection must authenticate as the same one, else
403), reaches the agent as `identity_of(conn)`, and owns the sessions the connection opens. A hook
that returns one value for everyone makes every caller one identity (they share sessions)."""


def bearer_token(token: str) -> Authenticator:
    """An `authenticate` hook accepting `Authorization: Bearer <token>` (compared in constant time).
    Every holder of the token is one identity, "bearer"."""
    expected = f"Bearer {token}".encode()

    async def check(request: RequestInfo) -> object:
        given = request.headers.get("authorization", "").encode()
        return "bearer" if hmac.compare_digest(given, expected) else None

    return check


class _Outbox:
    """A bounded FIFO of messages: `put` waits while it holds `limit` messages or `max_bytes` bytes
    (an empty box takes any one message), `get` returns None once closed. `account(delta)` hears of
    every byte that comes and goes (the server's budget counts queued answers)."""

    def __init__(self, limit: int, max_bytes: int, account: Callable[[int], None]) -> None:
        self._items: deque[bytes] = deque()
        self._limit = limit
        self._max_bytes = max_bytes
        self._account = account
        self.bytes = 0
        self._readable = asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()
        self.closed = False
        self.attached = False

    def __len__(self) -> int:
        return len(self._items)

    def full(self) -> bool:
        return len(self._items) >= self._limit or (
            bool(self._items) and self.bytes >= self._max_bytes
        )

    async def put(self, item: bytes) -> None:
        while self.full() and not self.closed:
            self._writable.clear()
            await self._writable.wait()
        if self.closed:
            raise ConnectionError("the connection was closed")
        self._add(item, last=True)

    def _add(self, item: bytes, last: bool) -> None:
        if last:
            self._items.append(item)
        else:
            self._items.appendleft(item)
        self.bytes += len(item)
        self._account(len(item))
        self._readable.set()

    def _take(self) -> bytes:
        item = self._items.popleft()
        self.bytes -= len(item)
        self._account(-len(item))
        return item

    async def get(self) -> bytes | None:
        while not self._items:
            if self.closed:
                return None
            self._readable.clear()
            await self._readable.wait()
        if self.closed:
            return None
        item = self._take()
        self._writable.set()
        return item

    def take_ready(self, max_bytes: int) -> list[bytes]:
        """The messages already waiting, up to about `max_bytes` (so one write carries several)."""
        taken: list[bytes] = []
        size = 0
        while self._items and size < max_bytes and not self.closed:
            item = self._take()
            taken.append(item)
            size += len(item)
        if taken:
            self._writable.set()
        return taken

    def unget(self, item: bytes) -> None:
        if not self.closed:
            self._add(item, last=False)

    def close(self) -> None:
        self.closed = True
        self._account(-self.bytes)
        self.bytes = 0
        self._items.clear()
        self._readable.set()
        self._writable.set()


class _StreamFullError(Exception):
    """An answer the app would give a POST found the connection's stream full (nobody reads it)."""


class _RefusedError(Exception):
    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


def _key(request_id: object) -> str | None:
    """The map key of a request id the runtime answers with that id (an integer or a string), else
    None: nothing is remembered for ids the runtime refuses (fractions, booleans, null)."""
    if isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    ):
        return json.dumps(request_id)
    return None


def _session_of(message: Mapping[str, Any]) -> str | None:
    params = message.get("params")
    value = params.get(SESSION_FIELD) if isinstance(params, dict) else None
    return value if isinstance(value, str) else None


def held_bytes(data: bytes) -> int:
    """About how much memory one JSON message takes once parsed (what the runtime holds while it
    waits or is handled): its bytes plus the objects its brackets, commas and strings make.
    `[{},{},...]` parses to ~25 times its size; this errs high, never low, for such shapes. Counted
    without parsing (so a message can be refused before it takes that memory). In a large message
    with few strings (a long text full of commas and brackets), the strings' text is told apart
    from structure (about 50 ms per MiB, only for such messages)."""
    weight = MESSAGE_OVERHEAD + len(data) + _structure(data)
    if (
        weight > REFINE_ABOVE
        and weight > 2 * len(data)
        and data.count(b'"') - data.count(b'\\"') <= REFINE_QUOTES
    ):
        outside = _JSON_STRING.sub(b'""', data)  # each string becomes `""`: its text is not counted
        weight = min(weight, MESSAGE_OVERHEAD + len(data) + _structure(outside))
    return weight


def _structure(data: bytes) -> int:
    return (
        80 * data.count(b"{")
        + 64 * data.count(b"[")
        + 32 * data.count(b",")
        + 24 * data.count(b'"')  # a string object is ~50 bytes besides its text
    )


@dataclass(slots=True)
class _Head:
    """What the app needs of one client message; the parsed message itself is not kept."""

    method: str | None
    key: str | None  # the id as a map key, for ids the runtime answers with (see `_key`)
    request_id: object
    has_id: bool
    session_id: str | None
    kind: str  # "request", "notification" (both reach the agent's handlers) or "other"

    @property
    def is_answer(self) -> bool:
        return self.method is None and self.has_id

    @classmethod
    def of(cls, message: Mapping[str, Any]) -> _Head:
        method = message.get("method")
        method = method if isinstance(method, str) else None
        has_id = "id" in message
        request_id = message.get("id")
        key = _key(request_id) if has_id else None
        kind = "other"
        if method is not None and message.get("jsonrpc") == "2.0":
            if not has_id:
                kind = "notification"  # the runtime queues every such message for its handler
            elif key is not None:
                kind = "request"
        return cls(method, key, request_id, has_id, _session_of(message), kind)


@dataclass(slots=True)
class _Inbound:
    data: bytes
    head: _Head
    weight: int


@dataclass(slots=True)
class _Owner:
    """Who a session belongs to (the identities the agent opened it for: one, unless the agent
    hands the same id to several), how many live connections hold it, when it was last used."""

    identities: set[object]
    holders: int
    used: float


class _Anonymous:
    """The identity of a connection served without an `authenticate` hook: itself alone."""

    __slots__ = ("connection_id",)

    def __init__(self, connection_id: str) -> None:
        self.connection_id = connection_id

    def __repr__(self) -> str:
        return f"<anonymous caller of connection {self.connection_id[:8]}>"


_IDENTITIES: weakref.WeakKeyDictionary[AgentSideConnection, object] = weakref.WeakKeyDictionary()


def identity_of(conn: AgentSideConnection) -> object:
    """Who is calling on a connection `AcpApp` serves: what the `authenticate` hook returned for it,
    or, without a hook, an anonymous identity of that connection alone. None for other connections
    (stdio). Available from inside the agent factory on; an agent that keeps sessions across
    connections scopes them by this value."""
    return _IDENTITIES.get(conn)


class _Remote:
    """One remote connection: its agent, its inbound queue and its outgoing streams."""

    def __init__(
        self,
        app: AcpApp,
        to_agent: Callable[[AgentSideConnection], Agent],
        websocket: bool,
        identity: object,
    ) -> None:
        self.app = app
        self.id = secrets.token_urlsafe(16)
        self.websocket = websocket
        self.identity: object = _Anonymous(self.id) if identity is None else identity
        self.limits = app.limits
        self.inbound: deque[_Inbound] = deque()
        self.inbound_ready = asyncio.Event()
        self.room = asyncio.Event()  # set whenever held bytes go down
        self.held = 0  # estimated bytes of client messages queued here or held by the runtime
        self.charged: dict[str, int] = {}  # request key -> its weight, until answered
        self.notes: deque[tuple[int, int]] = deque()  # (ordinal, weight) of queued notifications
        self.notes_delivered = 0
        self.streams: dict[str | None, _Outbox] = {None: self._outbox()}
        self.sessions: set[str] = set()
        self.routes: dict[str, str] = {}  # request id -> session its answer belongs to
        # request id -> (method, session id, whether it adds a session to the connection)
        self.opening: dict[str, tuple[str, str | None, bool]] = {}
        self.closing: dict[str, str] = {}  # session/close request id -> its session
        self.listing: set[str] = set()  # session/list request ids
        self.waiters: dict[str, asyncio.Future[bytes]] = {}
        self.open_streams = 0
        self.last_active = time.monotonic()
        self.closed = False
        bound = self.identity

        def make(conn: AgentSideConnection) -> Agent:
            _IDENTITIES[conn] = bound
            return to_agent(conn)

        self.conn = AgentSideConnection(
            make,
            _ServerTransport(self),
            limits=ConnectionLimits(notification_backlog=self.limits.notification_backlog),
            observers=app.observers,
        )
        self.watchdog = asyncio.get_running_loop().create_task(self._watch())

    def _outbox(self) -> _Outbox:
        return _Outbox(
            self.limits.stream_backlog, self.limits.stream_backlog_bytes, self.app.account
        )

    # -- the byte budget ----------------------------------------------------------------------

    def charge(self, weight: int) -> None:
        self.held += weight
        self.app.account(weight)

    def release(self, weight: int) -> None:
        if weight:
            self.held -= weight
            self.app.account(-weight)
            self.room.set()

    def settle_notifications(self) -> None:
        """Release the notifications the agent's connection has handled since the last look."""
        handled = self.conn.notifications_handled
        while self.notes and self.notes[0][0] <= handled:
            self.release(self.notes.popleft()[1])

    def refusal(self, weight: int, answer: bool = False) -> tuple[int, str] | None:
        """Why one more message of `weight` cannot be taken now (HTTP status, reason), or None. An
        `answer` (to the agent's request) is not held back by the connection's budget: the requests
        filling it may be the ones waiting for that answer."""
        self.settle_notifications()
        limits = self.limits
        if self.app.held + weight > limits.server_budget:
            return 503, "The server holds too much client data; try again later"
        if not answer and self.held + weight > limits.connection_budget:
            return 429, "This connection's messages are not handled yet; try again later"
        if len(self.inbound) >= limits.inbound_backlog:
            return 429, "This connection has too many messages waiting; try again later"
        return None

    async def wait_for_room(self, weight: int, answer: bool) -> None:
        """Wait until `refusal(weight, answer)` is None (the WebSocket reader does: the socket
        pushes back)."""
        while self.refusal(weight, answer) is not None and not self.closed:
            self.room.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                # Handled notifications are noticed by looking: look again now and then.
                await asyncio.wait_for(self.room.wait(), ROOM_POLL_S)
        if self.closed:
            raise ConnectionError("the connection was closed")

    # -- client -> agent ----------------------------------------------------------------------

    async def deliver(self, head: _Head, data: bytes, weight: int, wait: bool = True) -> None:
        """Queue one client message for the agent (the caller checked `refusal`), unless it names a
        session this connection or its identity may not use, opens one past the cap, or reuses an
        id still being handled: that is answered here, without reaching the agent. `wait=False`
        (a POST): when that answer finds the connection's stream full, raise _StreamFullError."""
        if self.closed:
            raise ConnectionError("the connection was closed")
        self.touch()
        if self.app.tap is not None:
            self.app.tap(self.id, "in", data)
        refusal = self._check(head)
        if refusal is not None:
            if head.has_id:
                await self.answer(head.request_id, refusal, wait)
            return
        self.charge(weight)
        if head.kind == "request" and head.key is not None:
            self.charged[head.key] = weight
        self.inbound.append(_Inbound(data, head, weight))
        self.inbound_ready.set()

    def take(self) -> _Inbound | None:
        """The next message for the agent's connection: its weight moves from "queued here" to
        "held by the runtime" (until answered, or handled for a notification)."""
        if not self.inbound:
            return None
        item = self.inbound.popleft()
        if item.head.kind == "notification":
            self.notes_delivered += 1
            self.notes.append((self.notes_delivered, item.weight))
        elif item.head.kind != "request":
            self.release(item.weight)  # an answer or a bad message: parsed and dropped at once
        self.settle_notifications()
        return item

    def _check(self, head: _Head) -> RequestError | None:
        method, session_id, key = head.method, head.session_id, head.key
        if method is None or head.kind == "other":
            return None  # an answer to the agent (or something the runtime will refuse)
        if key is not None and (key in self.charged or key in self.waiters):
            return RequestError.invalid_request(
                {"message": f"request id {head.request_id!r} is already in use"}
            )
        if session_id is not None and not self.app.may_use(self.identity, session_id):
            return _not_found(session_id, "no session with this id belongs to this caller")
        if method in SESSION_OPENERS:
            joins = method in SESSION_FORKS or session_id not in self.sessions
            if joins and len(self.sessions) + self._joining() >= self.limits.max_sessions:
                return RequestError(
                    TOO_MANY_SESSIONS,
                    "Too many sessions on this connection",
                    {"maxSessions": self.limits.max_sessions},
                )
            if key is not None:
                self.opening[key] = (method, session_id, joins)
            return None
        if method == SESSION_LIST and SESSION_LIST and key is not None:
            self.listing.add(key)
            return None
        if session_id is None:
            return None
        if session_id not in self.sessions:
            return _not_found(
                session_id,
                "this connection holds no such session: create it with session/new or load it "
                "with session/load",
            )
        if key is not None:
            self.routes[key] = session_id
            if method == SESSION_CLOSE and SESSION_CLOSE:
                self.closing[key] = session_id
        return None

    def _joining(self) -> int:
        """Session openers still waiting for their answer that would add a session (counted at
        admission, so concurrent session/new requests cannot pass the cap together)."""
        return sum(1 for _, _, joins in self.opening.values() if joins)

    async def answer(self, request_id: object, error: RequestError, wait: bool = True) -> None:
        data = json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}, separators=(",", ":")
        ).encode()
        stream = self.stream_for(None)
        if not wait and stream.full():
            raise _StreamFullError
        if self.app.tap is not None:
            self.app.tap(self.id, "out", data)
        await stream.put(data)

    async def call(self, head: _Head, data: bytes, weight: int) -> bytes:
        """Deliver a request and wait for its answer instead of streaming it (HTTP `initialize`)."""
        assert head.key is not None
        key = head.key
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        await self.deliver(head, data, weight)
        self.waiters[key] = future
        try:
            return await asyncio.wait_for(future, INITIALIZE_TIMEOUT_S)
        finally:
            self.waiters.pop(key, None)

    # -- agent -> client ----------------------------------------------------------------------

    def stream_for(self, session_id: str | None) -> _Outbox:
        if self.websocket or session_id is None or session_id not in self.sessions:
            return self.streams[None]
        stream = self.streams.get(session_id)
        if stream is None:
            stream = self.streams[session_id] = self._outbox()
        return stream

    async def route(self, data: bytes, message: Mapping[str, Any] | None = None) -> None:
        """Queue one message of the agent's on the stream it belongs to. `message` is `data`
        parsed, when the sender has it (the runtime does): then `data` is not parsed again."""
        if self.closed:
            raise ConnectionError("the remote connection is closed")
        self.touch()
        if message is None:
            message = json.loads(data)
        session_id: str | None
        if "method" in message:
            session_id = _session_of(message)
        else:
            key = _key(message.get("id"))
            session_id = None
            if key is not None:
                self.release(self.charged.pop(key, 0))
                waiter = self.waiters.get(key)
                if waiter is not None and not waiter.done():
                    if self.app.tap is not None:
                        self.app.tap(self.id, "out", data)
                    waiter.set_result(data)
                    return
                session_id = self._answered(key, message)
                if key in self.listing:
                    self.listing.discard(key)
                    data = self._only_own_sessions(message, data)
        del message
        if self.app.tap is not None:
            self.app.tap(self.id, "out", data)
        await self.stream_for(session_id).put(data)

    def _answered(self, key: str, message: Mapping[str, Any]) -> str | None:
        """Bookkeeping for the agent's answer to request `key`; the session whose stream gets it."""
        session_id = self.routes.pop(key, None)
        opened = self.opening.pop(key, None)
        if opened is not None and "result" in message:
            result = message["result"]
            new_id = result.get(SESSION_FIELD) if isinstance(result, dict) else None
            method, named, _ = opened
            if isinstance(new_id, str):
                self.add_session(new_id, created=method in SESSION_CREATORS)
            elif method not in SESSION_CREATORS:
                self.add_session(named)
        closed = self.closing.pop(key, None)
        if closed is not None and "result" in message:
            self.remove_session(closed)  # its answer goes on the connection's stream
            session_id = None
        return session_id

    def _only_own_sessions(self, message: Mapping[str, Any], data: bytes) -> bytes:
        """A session/list answer without the sessions another identity opened (or the runtime does
        not know): a caller lists only its own."""
        result = message.get("result")
        sessions = result.get(SESSION_LIST_FIELD) if isinstance(result, dict) else None
        if not isinstance(sessions, list):
            return data
        kept = [
            s
            for s in sessions
            if isinstance(s, dict)
            and isinstance(s.get(SESSION_FIELD), str)
            and self.app.owns(self.identity, s[SESSION_FIELD])
        ]
        if len(kept) == len(sessions):
            return data
        assert isinstance(result, dict)
        filtered = {**message, "result": {**result, SESSION_LIST_FIELD: kept}}  # theirs unchanged
        return json.dumps(filtered, separators=(",", ":")).encode()

    def add_session(self, session_id: str | None, created: bool = False) -> None:
        if session_id is not None and session_id not in self.sessions:
            self.sessions.add(session_id)
            self.app.hold_session(self.identity, session_id, created)
            self.stream_for(session_id)

    def remove_session(self, session_id: str) -> None:
        if session_id in self.sessions:
            self.sessions.discard(session_id)
            self.app.let_go_session(self.identity, session_id)
        stream = self.streams.pop(session_id, None)
        if stream is not None:
            stream.close()  # its SSE reader, if any, ends

    # -- lifetime -----------------------------------------------------------------------------

    def touch(self) -> None:
        self.last_active = time.monotonic()

    async def _watch(self) -> None:
        idle = self.limits.idle_timeout
        while not self.closed:
            await asyncio.sleep(max(idle - (time.monotonic() - self.last_active), 0.01))
            if self.open_streams == 0 and time.monotonic() - self.last_active >= idle:
                logger.info("connection %s idle for %.1f s: freeing it", self.id[:8], idle)
                self.app.spawn(self.app.drop(self))
                return

    def close_streams(self) -> None:
        if self.closed:
            return
        self.closed = True
        for session_id in list(self.sessions):
            self.remove_session(session_id)
        for stream in self.streams.values():
            stream.close()
        self.inbound.clear()
        self.inbound_ready.set()
        self.room.set()
        self.charged.clear()
        self.notes.clear()
        self.app.account(-self.held)
        self.held = 0
        for waiter in self.waiters.values():
            if not waiter.done():
                waiter.set_exception(ConnectionError("the connection closed"))


def _not_found(session_id: str, why: str) -> RequestError:
    return RequestError(
        NOT_ON_THIS_CONNECTION, "Resource not found", {SESSION_FIELD: session_id, "message": why}
    )


class _ServerTransport:
    """The agent connection's side of a `_Remote`."""

    def __init__(self, remote: _Remote) -> None:
        self._remote = remote

    async def receive(self) -> bytes | None:
        remote = self._remote
        while True:
            item = remote.take()
            if item is not None:
                return item.data
            if remote.closed:
                return None
            remote.inbound_ready.clear()
            await remote.inbound_ready.wait()

    async def send(self, data: bytes) -> None:
        await self._remote.route(data)

    async def send_message(self, data: bytes, message: Mapping[str, Any]) -> None:
        """`send`, given `data` parsed too (the runtime's `_write` passes it): routed without
        parsing it again, a quarter of the server's time per message over WebSocket (measured)."""
        await self._remote.route(data, message)

    def close(self) -> None:
        self._remote.close_streams()


def _headers(scope: Scope) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        if name in headers:
            value = f"{headers[name]}{'; ' if name == 'cookie' else ', '}{value}"
        headers[name] = value
    return headers


def _cookies(header: str) -> dict[str, str]:
    cookies: dict[str, str] = {}
    for part in header.replace(",", ";").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name:
            cookies[name] = value
    return cookies


_HOST = re.compile(r"(?:\[([0-9a-f:.]+)\]|([a-z0-9._-]+))(?::[0-9]{1,5})?")


def _host_name(host: str) -> str | None:
    """The name in a `Host` header (`name`, `name:port`, `[v6]`, `[v6]:port`), or None when the
    value is anything else (empty, userinfo `a@b`, text after `]`, a non-numeric port)."""
    match = _HOST.fullmatch(host.strip().lower())
    if match is None:
        return None
    return match.group(1) or match.group(2)


class AcpApp:
    """The ASGI 3 application: serve `to_agent` (one agent per connection) on `path`.

    `allowed_origins`: exact `Origin` values (`https://app.example`) allowed besides none at all.
    `allowed_hosts`: the `Host` names (without port) accepted, loopback names by default (a
    DNS-rebinding guard); list your public names when you serve beyond loopback, or pass None to
    accept any. `authenticate`: see Authenticator.
    `cookie`: a (name, value) pair set on the `initialize` answer and the WebSocket 101, e.g. the
    node name a sticky load balancer routes on. `tap`: sees every message (for logs and tests);
    `observers` see every connection's parsed messages, as on every transport (`MessageObserver`).
    """

    def __init__(
        self,
        to_agent: Callable[[AgentSideConnection], Agent],
        *,
        path: str = "/acp",
        allowed_origins: Collection[str] = (),
        allowed_hosts: Collection[str] | None = LOOPBACK_HOSTS,
        authenticate: Authenticator | None = None,
        limits: Limits = Limits(),
        cookie: tuple[str, str] | None = None,
        tap: Tap | None = None,
        observers: tuple[MessageObserver, ...] = (),
    ) -> None:
        self.to_agent = to_agent
        self.observers = observers
        self.path = path
        self.allowed_origins = frozenset(o.lower().rstrip("/") for o in allowed_origins)
        self.allowed_hosts = (
            None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
        )
        self.authenticate = authenticate
        self.limits = limits
        self.cookie = cookie
        self.tap = tap
        self.connections: dict[str, _Remote] = {}
        self.held = 0  # bytes the server budget counts (see Limits)
        self.owners: OrderedDict[str, _Owner] = OrderedDict()  # session id -> who opened it
        self._tasks: set[asyncio.Task[None]] = set()

    # -- the server's budget and who owns which session -----------------------------------------

    def account(self, delta: int) -> None:
        self.held += delta

    def may_use(self, identity: object, session_id: str) -> bool:
        """False when `session_id` is known to belong to another identity."""
        owner = self.owners.get(session_id)
        return owner is None or identity in owner.identities

    def owns(self, identity: object, session_id: str) -> bool:
        owner = self.owners.get(session_id)
        return owner is not None and identity in owner.identities

    def hold_session(self, identity: object, session_id: str, created: bool) -> None:
        """A connection of `identity` now holds `session_id` (the agent created or loaded it)."""
        owner = self.owners.get(session_id)
        if owner is None:
            self._forget_old()
            owner = self.owners[session_id] = _Owner({identity}, 0, time.monotonic())
        elif created:
            # The agent handed this caller an id it had given another: its decision, theirs too.
            owner.identities.add(identity)
        owner.holders += 1
        owner.used = time.monotonic()
        self.owners.move_to_end(session_id)

    def let_go_session(self, identity: object, session_id: str) -> None:
        """A connection of `identity` no longer holds `session_id`."""
        owner = self.owners.get(session_id)
        if owner is None:
            return
        owner.holders = max(owner.holders - 1, 0)
        owner.used = time.monotonic()
        self.owners.move_to_end(session_id)
        if isinstance(identity, _Anonymous):
            # It cannot come back; the entry stays (until forgotten) so nobody else may use it.
            owner.identities.discard(identity)

    def _forget_old(self) -> None:
        """Drop owners of sessions no connection holds, idle past `session_ttl`, and (past
        `max_known_sessions`) the oldest idle ones."""
        now = time.monotonic()
        over = len(self.owners) + 1 - self.limits.max_known_sessions
        for session_id in list(self.owners):
            owner = self.owners[session_id]
            if owner.holders:
                continue
            if now - owner.used < self.limits.session_ttl and over <= 0:
                break  # the rest are newer
            del self.owners[session_id]
            over -= 1

    # -- housekeeping ---------------------------------------------------------------------------

    def spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drop(self, remote: _Remote) -> None:
        """End a connection: its agent connection closes (pending calls fail, handlers are cancelled)."""
        if self.connections.get(remote.id) is remote:
            del self.connections[remote.id]
        remote.watchdog.cancel()
        remote.close_streams()
        await remote.conn.close()

    async def close(self) -> None:
        """End every connection (the app's lifespan shutdown does this)."""
        for remote in list(self.connections.values()):
            await self.drop(remote)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _create(self, websocket: bool, identity: object) -> _Remote:
        if len(self.connections) >= self.limits.max_connections:
            raise _RefusedError(
                503,
                f"Too many connections (cap {self.limits.max_connections}); try again later",
                {"retry-after": "5"},
            )
        try:
            remote = _Remote(self, self.to_agent, websocket, identity)
        except Exception:
            logger.exception("the agent factory failed")
            raise _RefusedError(500, "The agent could not be started") from None
        self.connections[remote.id] = remote
        return remote

    # -- checks before anything else ------------------------------------------------------------

    async def _admit(self, scope: Scope, kind: str) -> tuple[dict[str, str], object]:
        headers = _headers(scope)
        origin = headers.get("origin")
        if origin is not None and origin.lower().rstrip("/") not in self.allowed_origins:
            raise _RefusedError(
                403, f"Origin {origin!r} is not allowed; add it to allowed_origins to accept it"
            )
        if self.allowed_hosts is not None:
            raw = headers.get("host", headers.get(":authority", ""))
            host = _host_name(raw)
            if host is None:
                raise _RefusedError(400, f"Malformed Host header {raw[:LOG_CHARS]!r}")
            if host not in self.allowed_hosts:
                raise _RefusedError(
                    403, f"Host {host!r} is not allowed; add it to allowed_hosts to accept it"
                )
        identity: object = None  # no hook: each connection is its own caller
        if self.authenticate is not None:
            client = scope.get("client")
            info = RequestInfo(
                kind=kind,
                method="GET" if kind == "websocket" else str(scope.get("method", "")),
                path=str(scope.get("path", "")),
                headers=headers,
                cookies=_cookies(headers.get("cookie", "")),
                client=(str(client[0]), int(client[1])) if client else None,
            )
            identity = await self.authenticate(info)
            if identity is None:
                raise _RefusedError(401, "Authentication required", {"www-authenticate": "Bearer"})
        return headers, identity

    def _remote(self, headers: Mapping[str, str], identity: object) -> _Remote:
        connection_id = headers.get(CONNECTION_ID_HEADER.lower())
        if connection_id is None:
            raise _RefusedError(400, f"Missing {CONNECTION_ID_HEADER} header")
        remote = self.connections.get(connection_id)
        if remote is None or remote.websocket:
            raise _RefusedError(
                404, f"Unknown {CONNECTION_ID_HEADER}; start a new connection with initialize"
            )
        if self.authenticate is not None and remote.identity != identity:
            raise _RefusedError(403, "This connection belongs to another caller")
        return remote

    def _session(self, remote: _Remote, headers: Mapping[str, str]) -> str | None:
        session_id = headers.get(SESSION_ID_HEADER.lower())
        if session_id is not None and session_id not in remote.sessions:
            raise _RefusedError(404, f"Unknown {SESSION_ID_HEADER} on this connection")
        return session_id

    # -- ASGI -----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "http":
            try:
                if scope.get("path") != self.path:
                    raise _RefusedError(404, f"Not found; the ACP endpoint is {self.path}")
                await self._http(scope, receive, send)
            except _RefusedError as refused:
                await _respond(send, refused.status, {"error": refused.message}, refused.headers)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers, identity = await self._admit(scope, "http")
        method = scope.get("method")
        if method == "POST":
            await self._post(headers, identity, receive, send)
        elif method == "GET":
            await self._get(headers, identity, receive, send)
        elif method == "DELETE":
            remote = self._remote(headers, identity)
            await self.drop(remote)
            await _respond(send, 202, None)
        else:
            raise _RefusedError(405, "Use POST, GET or DELETE", {"allow": "GET, POST, DELETE"})

    async def _post(
        self, headers: Mapping[str, str], identity: object, receive: Receive, send: Send
    ) -> None:
        if not headers.get("content-type", "").lower().startswith("application/json"):
            raise _RefusedError(415, "Content-Type must be application/json")
        limit = self.limits.max_message_bytes
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            raise _RefusedError(413, f"Body over {limit} bytes")
        reading = _BodyBudget(self)
        try:
            body = await asyncio.wait_for(
                _read_body(receive, limit, reading), self.limits.body_timeout
            )
        except asyncio.TimeoutError:
            raise _RefusedError(
                408, f"The body did not arrive within {self.limits.body_timeout:g} s"
            ) from None
        finally:
            reading.release()
        weight = self._weigh(body)
        if self.held + weight > self.limits.server_budget:
            raise _busy(503, "The server holds too much client data; try again later")
        head = self._parse(body)
        if CONNECTION_ID_HEADER.lower() not in headers and head.method == "initialize":
            await self._initialize(head, body, weight, identity, send)
            return
        remote = self._remote(headers, identity)
        session_id = self._session(remote, headers)
        if head.method in SESSION_TURN and session_id is None:
            raise _RefusedError(400, f"{head.method} needs the {SESSION_ID_HEADER} header")
        if session_id is not None and head.session_id not in (None, session_id):
            raise _RefusedError(400, f"{SESSION_ID_HEADER} does not match params.{SESSION_FIELD}")
        refused = remote.refusal(weight, head.is_answer)
        if refused is not None:
            raise _busy(*refused)
        try:
            await remote.deliver(head, body, weight, wait=False)
        except _StreamFullError:
            raise _busy(
                429, "This connection's stream is full: read it (GET) before sending more"
            ) from None
        except ConnectionError:
            raise _RefusedError(
                404, "The connection ended; start a new one with initialize"
            ) from None
        await _respond(send, 202, None)

    def _weigh(self, body: bytes) -> int:
        weight = held_bytes(body)
        if weight > self.limits.connection_budget:
            raise _RefusedError(
                413,
                f"Parsed, this message would take about {weight} bytes, over the connection's "
                f"budget of {self.limits.connection_budget} bytes",
            )
        return weight

    @staticmethod
    def _parse(body: bytes) -> _Head:
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            raise _RefusedError(400, "The body is not JSON") from None
        if isinstance(message, list):
            raise _RefusedError(501, "Batch requests are not supported")
        if not isinstance(message, dict):
            raise _RefusedError(400, "The body must be a JSON-RPC message (an object)")
        return _Head.of(message)

    async def _initialize(
        self, head: _Head, body: bytes, weight: int, identity: object, send: Send
    ) -> None:
        if head.kind != "request":
            raise _RefusedError(
                400, "initialize must be a JSON-RPC 2.0 request with a string or integer id"
            )
        remote = self._create(False, identity)
        try:
            answer = await remote.call(head, body, weight)
        except (asyncio.TimeoutError, ConnectionError):
            await self.drop(remote)
            raise _RefusedError(504, "The agent did not answer initialize") from None
        extra = {CONNECTION_ID_HEADER.lower(): remote.id, **self._cookie_header()}
        await _respond_raw(send, 200, answer, extra)

    def _cookie_header(self) -> dict[str, str]:
        if self.cookie is None:
            return {}
        name, value = self.cookie
        return {"set-cookie": f"{name}={value}; Path=/; HttpOnly; SameSite=Strict"}

    async def _get(
        self, headers: Mapping[str, str], identity: object, receive: Receive, send: Send
    ) -> None:
        if "text/event-stream" not in headers.get("accept", "") and "*/*" not in headers.get(
            "accept", ""
        ):
            raise _RefusedError(406, "Accept must include text/event-stream")
        remote = self._remote(headers, identity)
        session_id = self._session(remote, headers)
        stream = remote.stream_for(session_id)
        if stream.attached:
            raise _RefusedError(409, "That stream is already open")
        stream.attached = True
        remote.open_streams += 1
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream"),
                        (b"cache-control", b"no-cache"),
                    ],
                }
            )
            await _pump_sse(stream, receive, send)
        finally:
            stream.attached = False
            remote.open_streams -= 1
            remote.touch()

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        try:
            if scope.get("path") != self.path:
                raise _RefusedError(404, f"Not found; the ACP endpoint is {self.path}")
            _, identity = await self._admit(scope, "websocket")
            remote = self._create(True, identity)
        except _RefusedError as refused:
            await _deny_websocket(scope, send, refused)
            return
        accept_headers = [(CONNECTION_ID_HEADER.lower().encode(), remote.id.encode())]
        accept_headers += [(k.encode(), v.encode()) for k, v in self._cookie_header().items()]
        await send({"type": "websocket.accept", "headers": accept_headers})
        writer = asyncio.ensure_future(_pump_websocket(remote.stream_for(None), send))
        try:
            await self._read_websocket(remote, receive, send)
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer
            await self.drop(remote)

    async def _read_websocket(self, remote: _Remote, receive: Receive, send: Send) -> None:
        while not remote.closed:
            frame = await receive()
            if frame["type"] == "websocket.disconnect":
                return
            text = frame.get("text")
            if frame["type"] != "websocket.receive" or text is None:
                continue  # binary frames are ignored, as the RFD says
            data = text.encode("utf-8", "surrogatepass")
            del text, frame
            weight = held_bytes(data)
            if len(data) > self.limits.max_message_bytes or weight > self.limits.connection_budget:
                await send(
                    {
                        "type": "websocket.close",
                        "code": 1009,
                        "reason": f"message over {self.limits.max_message_bytes} bytes, or over "
                        "the connection's budget once parsed",
                    }
                )
                return
            try:
                message = json.loads(data)
            except (ValueError, RecursionError):
                message = None
            # Anything that is not an object is the runtime's to answer (-32700, -32600).
            head = _Head.of(message if isinstance(message, dict) else {})
            del message
            if head.kind == "request" and remote.refusal(weight) is not None:
                # Shed, not wait: a request waiting here could hold up the answer its handler needs.
                await remote.answer(
                    head.request_id,
                    RequestError.server_busy(
                        {"message": "this connection or the server holds too much; try again later"}
                    ),
                )
                continue
            try:
                await remote.wait_for_room(weight, head.is_answer)
                await remote.deliver(head, data, weight)
            except ConnectionError:
                return


def _busy(status: int, message: str) -> _RefusedError:
    return _RefusedError(status, message, {"retry-after": str(RETRY_AFTER_S)})


class _BodyBudget:
    """Counts a POST body being read against the server's budget (released once it is read)."""

    def __init__(self, app: AcpApp) -> None:
        self._app = app
        self.size = 0

    def add(self, size: int) -> None:
        self.size += size
        self._app.account(size)
        if self._app.held > self._app.limits.server_budget:
            raise _busy(503, "The server holds too much client data; try again later")

    def release(self) -> None:
        self._app.account(-self.size)
        self.size = 0


async def _read_body(receive: Receive, limit: int, budget: _BodyBudget) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _RefusedError(400, "The client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _RefusedError(413, f"Body over {limit} bytes")
        budget.add(len(chunk))
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _respond(
    send: Send, status: int, body: object, headers: Mapping[str, str] | None = None
) -> None:
    data = b"" if body is None else json.dumps(body).encode()
    await _respond_raw(send, status, data, headers)


async def _respond_raw(
    send: Send, status: int, data: bytes, headers: Mapping[str, str] | None = None
) -> None:
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    raw += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": data})


async def _deny_websocket(scope: Scope, send: Send, refused: _RefusedError) -> None:
    if "websocket.http.response" in scope.get("extensions", {}):
        data = json.dumps({"error": refused.message}).encode()
        headers = [(b"content-type", b"application/json")]
        headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in refused.headers.items()]
        await send(
            {"type": "websocket.http.response.start", "status": refused.status, "headers": headers}
        )
        await send({"type": "websocket.http.response.body", "body": data})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": refused.message[:120]})


async def _wait_disconnect(receive: Receive) -> bytes | None:
    while (await receive())["type"] != "http.disconnect":
        pass
    return None


async def _pump_sse(stream: _Outbox, receive: Receive, send: Send) -> None:
    gone: asyncio.Future[bytes | None] = asyncio.ensure_future(_wait_disconnect(receive))
    item: asyncio.Future[bytes | None] | None = None
    try:
        while True:
            if item is None:
                item = asyncio.ensure_future(stream.get())
            done, _ = await asyncio.wait(
                {item, gone}, timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED
            )
            if item in done:
                data, item = item.result(), None
                if data is None:
                    break
                if gone.done():
                    stream.unget(data)  # not delivered: the next GET gets it
                    break
                batch = [data, *stream.take_ready(SSE_CHUNK_BYTES)]
                body = b"".join(b"data: " + one + b"\n\n" for one in batch)
                await send({"type": "http.response.body", "body": body, "more_body": True})
            elif gone in done:
                break
            else:
                await send(
                    {"type": "http.response.body", "body": b": keepalive\n\n", "more_body": True}
                )
    finally:
        for task in (item, gone):
            if task is not None and not task.done():
                task.cancel()
        if item is not None and item.done() and not item.cancelled() and item.result() is not None:
            stream.unget(item.result())  # type: ignore[arg-type]
    with contextlib.suppress(Exception):
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _pump_websocket(stream: _Outbox, send: Send) -> None:
    while (data := await stream.get()) is not None:
        await send({"type": "websocket.send", "text": data.decode()})
    # The connection was freed (idle, or the app is shutting down): say so and close the socket.
    await send(
        {
            "type": "websocket.close",
            "code": 1001,
            "reason": "connection closed by the agent's server",
        }
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _hypercorn_declines_deflate() -> None:
    """Hypercorn accepts WebSocket permessage-deflate whenever a client offers it and inflates what
    arrives before its message-size check (the app never sees it), and has no setting to turn it
    off: in the process `serve_agent` runs, its handshake declines the offer instead."""
    names = vars(importlib.import_module("hypercorn.protocol.ws_stream"))
    offered = names["PerMessageDeflate"]
    if not getattr(offered, "acp_declined", False):
        names["PerMessageDeflate"] = type(
            "DeclinedPerMessageDeflate",
            (offered,),
            {"acp_declined": True, "accept": lambda self, offer: None},
        )


def serve_agent(
    to_agent: Callable[[AgentSideConnection], Agent],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    server: str = "hypercorn",
    certfile: str | None = None,
    keyfile: str | None = None,
    allowed_origins: Collection[str] = (),
    allowed_hosts: Collection[str] | None = LOOPBACK_HOSTS,
    authenticate: Authenticator | None = None,
    limits: Limits = Limits(),
    cookie: tuple[str, str] | None = None,
) -> None:
    """Serve `to_agent` on http://host:port/acp until interrupted (blocking).

    `server` is "hypercorn" (HTTP/2 and WebSocket; `pip install hypercorn`) or "uvicorn"
    (WebSocket and HTTP/1.1; `pip install 'uvicorn[standard]'`); `certfile`/`keyfile` turn on TLS.
    Binds loopback unless told otherwise. The other options are `AcpApp`'s. The server is set up so
    that what it holds before the app sees it stays small: WebSocket messages up to
    `limits.max_message_bytes`, one frame read ahead of the app, no permessage-deflate (Hypercorn
    inflates before its own size check and has no setting for it, so in this process its handshake
    is made to decline the offer).
    """
    if authenticate is None and not _is_loopback(host):
        logger.warning(
            "serving on %s without an authenticate hook: anyone who reaches it can drive the agent",
            host,
        )
    app = AcpApp(
        to_agent,
        allowed_origins=allowed_origins,
        allowed_hosts=allowed_hosts,
        authenticate=authenticate,
        limits=limits,
        cookie=cookie,
    )
    try:
        module = importlib.import_module(server)
    except ImportError:
        raise ImportError(
            f"serve_agent(server={server!r}) needs the {server!r} package: pip install {server}"
        ) from None
    if server == "uvicorn":
        module.run(
            app,
            host=host,
            port=port,
            ssl_certfile=certfile,
            ssl_keyfile=keyfile,
            log_level="warning",
            ws_max_size=limits.max_message_bytes,
            ws_max_queue=1,  # frames read ahead of the app, outside its budget
            ws_per_message_deflate=False,  # what is inflated is outside the app's budget too
            h11_max_incomplete_event_size=64 * 1024,
        )
    elif server == "hypercorn":
        config = importlib.import_module("hypercorn.config").Config()
        config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
        config.certfile, config.keyfile = certfile, keyfile
        config.websocket_max_message_size = limits.max_message_bytes
        config.max_app_queue_size = 1  # frames read ahead of the app, outside its budget
        # Hypercorn ends an HTTP/2 connection after 1000 requests and cannot answer the one that
        # reaches the limit: a long ACP session over Streamable HTTP (one connection, a POST per
        # message) would lose that message. Our client moves to a new connection every 500 POSTs
        # (remote.POSTS_PER_CONNECTION); other clients need the server not to do this.
        config.keep_alive_max_requests = 2**31
        _hypercorn_declines_deflate()
        serve = importlib.import_module("hypercorn.asyncio").serve
        asyncio.run(serve(app, config))
    else:
        raise ValueError(f"server must be 'hypercorn' or 'uvicorn', not {server!r}")
