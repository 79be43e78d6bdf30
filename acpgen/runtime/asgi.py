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
`Host` is not in `allowed_hosts` (loopback names by default: DNS rebinding); an
`authenticate` hook sees every request's headers before any ACP message is handled; connection ids
carry 128 random bits and a session id is accepted only on the connection that created or loaded
it (and the identity `authenticate` returned must match the one that opened the connection).
Every cap (`Limits`) has a default and a documented answer. Standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import importlib
import ipaddress
import json
import logging
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

from .connections import AgentSideConnection
from .interfaces import Agent
from .rpc import ConnectionLimits, RequestError

__all__ = [
    "CONNECTION_ID_HEADER",
    "SESSION_ID_HEADER",
    "TOO_MANY_SESSIONS",
    "AcpApp",
    "Authenticator",
    "Limits",
    "RequestInfo",
    "bearer_token",
    "serve_agent",
]

logger = logging.getLogger(__name__)

CONNECTION_ID_HEADER: Final = "Acp-Connection-Id"
SESSION_ID_HEADER: Final = "Acp-Session-Id"
TOO_MANY_SESSIONS: Final = -32010
"""JSON-RPC error code answering a session/new or session/load past `Limits.max_sessions`."""
NOT_ON_THIS_CONNECTION: Final = -32002
"""ACP's "Resource not found" code, answering a request that names a session its connection does
not hold (every ACP release has it, though not every schema names it)."""

SESSION_SCOPED: Final = frozenset({"session/prompt", "session/cancel"})
"""Client messages whose POST must carry `Acp-Session-Id` (the RFD's prompt and cancel)."""
SESSION_OPENERS: Final = frozenset(
    {"session/new", "session/load", "session/resume", "session/fork"}
)
SESSION_CLOSE: Final = "session/close"
"""Requests that bring a session onto a connection: their answers go on the connection's stream."""
INITIALIZE_TIMEOUT_S: Final = 30.0
KEEPALIVE_S: Final = 15.0
SSE_CHUNK_BYTES: Final = 64 * 1024
"""Events already waiting when the stream writes are sent together, up to about this size."""
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})

Scope = MutableMapping[str, Any]
AsgiMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[AsgiMessage]]
Send = Callable[[AsgiMessage], Awaitable[None]]
Tap = Callable[[str, str, bytes], None]
"""`tap(connection_id, "in" | "out", message)` sees every message a connection passes."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps, each with its answer: past `max_connections` a new connection is refused (HTTP 503, or
    the WebSocket upgrade refused with 503); past `max_sessions` on one connection a session/new or
    session/load is answered with JSON-RPC error TOO_MANY_SESSIONS; a POST body or WebSocket text
    frame over `max_message_bytes` gets 413 (WebSocket: closed with 1009); a connection with no
    traffic and no open stream for `idle_timeout` seconds is freed (its agent is closed, its id then
    answers 404). `stream_backlog` messages may wait on each outgoing stream (a slow or absent
    reader makes the agent wait: back-pressure, nothing dropped) and `inbound_backlog` client
    messages may wait for the agent's connection (a POST then waits), which itself holds up to
    `notification_backlog` notifications waiting for their handler."""

    max_connections: int = 128
    max_sessions: int = 32
    max_message_bytes: int = 16 * 1024 * 1024
    idle_timeout: float = 300.0
    stream_backlog: int = 256
    inbound_backlog: int = 64
    notification_backlog: int = 4096


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
"""Returns who is calling (any value but None) or None to refuse with 401. The value is bound to
the connection: a later request of that connection must authenticate as the same one (else 403)."""


def bearer_token(token: str) -> Authenticator:
    """An `authenticate` hook accepting `Authorization: Bearer <token>` (compared in constant time)."""
    expected = f"Bearer {token}".encode()

    async def check(request: RequestInfo) -> object:
        given = request.headers.get("authorization", "").encode()
        return "bearer" if hmac.compare_digest(given, expected) else None

    return check


class _Outbox:
    """A bounded FIFO of messages: `put` waits while it is full, `get` returns None once closed."""

    def __init__(self, limit: int) -> None:
        self._items: deque[bytes] = deque()
        self._limit = limit
        self._readable = asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()
        self.closed = False
        self.attached = False

    def __len__(self) -> int:
        return len(self._items)

    async def put(self, item: bytes) -> None:
        while len(self._items) >= self._limit and not self.closed:
            self._writable.clear()
            await self._writable.wait()
        if self.closed:
            raise ConnectionError("the connection was closed")
        self._items.append(item)
        self._readable.set()

    async def get(self) -> bytes | None:
        while not self._items:
            if self.closed:
                return None
            self._readable.clear()
            await self._readable.wait()
        if self.closed:
            return None
        item = self._items.popleft()
        self._writable.set()
        return item

    def take_ready(self, max_bytes: int) -> list[bytes]:
        """The messages already waiting, up to about `max_bytes` (so one write carries several)."""
        taken: list[bytes] = []
        size = 0
        while self._items and size < max_bytes and not self.closed:
            item = self._items.popleft()
            taken.append(item)
            size += len(item)
        if taken:
            self._writable.set()
        return taken

    def unget(self, item: bytes) -> None:
        self._items.appendleft(item)
        self._readable.set()

    def close(self) -> None:
        self.closed = True
        self._items.clear()
        self._readable.set()
        self._writable.set()


class _RefusedError(Exception):
    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


def _key(request_id: object) -> str:
    return json.dumps(request_id)


def _session_of(message: Mapping[str, Any]) -> str | None:
    params = message.get("params")
    value = params.get("sessionId") if isinstance(params, dict) else None
    return value if isinstance(value, str) else None


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
        self.identity = identity
        self.limits = app.limits
        self.inbound = _Outbox(self.limits.inbound_backlog)
        self.streams: dict[str | None, _Outbox] = {None: _Outbox(self.limits.stream_backlog)}
        self.sessions: set[str] = set()
        self.routes: dict[str, str] = {}  # request id -> session its answer belongs to
        self.opening: dict[str, tuple[str, str | None]] = {}  # request id -> (method, session id)
        self.closing: dict[str, str] = {}  # session/close request id -> its session
        self.waiters: dict[str, asyncio.Future[bytes]] = {}
        self.open_streams = 0
        self.last_active = time.monotonic()
        self.closed = False
        self.conn = AgentSideConnection(
            to_agent,
            _ServerTransport(self),
            limits=ConnectionLimits(notification_backlog=self.limits.notification_backlog),
        )
        self.watchdog = asyncio.get_running_loop().create_task(self._watch())

    # -- client -> agent ----------------------------------------------------------------------

    async def deliver(self, message: Mapping[str, Any], data: bytes) -> None:
        """Hand one client message to the agent (waits while the agent is behind), unless it names a
        session this connection does not hold or opens one past the cap: that is answered here."""
        self.touch()
        if self.app.tap is not None:
            self.app.tap(self.id, "in", data)
        refusal = self._check(message)
        if refusal is None:
            await self.inbound.put(data)
        elif "id" in message:
            await self.answer(message.get("id"), refusal)

    def _check(self, message: Mapping[str, Any]) -> RequestError | None:
        method = message.get("method")
        session_id = _session_of(message)
        if not isinstance(method, str):
            return None  # an answer to the agent (or something the runtime will refuse)
        key = _key(message.get("id")) if "id" in message else None
        if method in SESSION_OPENERS:
            if len(self.sessions) >= self.limits.max_sessions and session_id not in self.sessions:
                return RequestError(
                    TOO_MANY_SESSIONS,
                    "Too many sessions on this connection",
                    {"maxSessions": self.limits.max_sessions},
                )
            if key is not None:
                self.opening[key] = (method, session_id)
            return None
        if session_id is None:
            return None
        if session_id not in self.sessions:
            return RequestError(
                NOT_ON_THIS_CONNECTION,
                "Resource not found",
                {
                    "sessionId": session_id,
                    "message": "this connection holds no such session: create it with session/new or load it with session/load",
                },
            )
        if key is not None:
            self.routes[key] = session_id
            if method == SESSION_CLOSE:
                self.closing[key] = session_id
        return None

    async def answer(self, request_id: object, error: RequestError) -> None:
        data = json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}, separators=(",", ":")
        ).encode()
        if self.app.tap is not None:
            self.app.tap(self.id, "out", data)
        await self.stream_for(None).put(data)

    async def call(self, message: Mapping[str, Any], data: bytes) -> bytes:
        """Deliver a request and wait for its answer instead of streaming it (HTTP `initialize`)."""
        key = _key(message.get("id"))
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.waiters[key] = future
        try:
            await self.deliver(message, data)
            return await asyncio.wait_for(future, INITIALIZE_TIMEOUT_S)
        finally:
            self.waiters.pop(key, None)

    # -- agent -> client ----------------------------------------------------------------------

    def stream_for(self, session_id: str | None) -> _Outbox:
        if self.websocket or session_id is None or session_id not in self.sessions:
            return self.streams[None]
        stream = self.streams.get(session_id)
        if stream is None:
            stream = self.streams[session_id] = _Outbox(self.limits.stream_backlog)
        return stream

    async def route(self, data: bytes) -> None:
        if self.closed:
            raise ConnectionError("the remote connection is closed")
        self.touch()
        message = json.loads(data)
        if self.app.tap is not None:
            self.app.tap(self.id, "out", data)
        session_id: str | None
        if "method" in message:
            session_id = _session_of(message)
        else:
            key = _key(message.get("id"))
            waiter = self.waiters.get(key)
            if waiter is not None and not waiter.done():
                waiter.set_result(data)
                return
            session_id = self.routes.pop(key, None)
            opened = self.opening.pop(key, None)
            if opened is not None and "result" in message:
                result = message["result"]
                new_id = result.get("sessionId") if isinstance(result, dict) else None
                self.add_session(new_id if isinstance(new_id, str) else opened[1])
            closed = self.closing.pop(key, None)
            if closed is not None and "result" in message:
                self.remove_session(closed)  # its answer goes on the connection's stream
                session_id = None
        await self.stream_for(session_id).put(data)

    def add_session(self, session_id: str | None) -> None:
        if session_id is not None:
            self.sessions.add(session_id)
            self.stream_for(session_id)

    def remove_session(self, session_id: str) -> None:
        self.sessions.discard(session_id)
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
        self.closed = True
        for stream in self.streams.values():
            stream.close()
        self.inbound.close()
        for waiter in self.waiters.values():
            if not waiter.done():
                waiter.set_exception(ConnectionError("the connection closed"))


class _ServerTransport:
    """The agent connection's side of a `_Remote`."""

    def __init__(self, remote: _Remote) -> None:
        self._remote = remote

    async def receive(self) -> bytes | None:
        return await self._remote.inbound.get()

    async def send(self, data: bytes) -> None:
        await self._remote.route(data)

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


def _host_name(host: str) -> str:
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class AcpApp:
    """The ASGI 3 application: serve `to_agent` (one agent per connection) on `path`.

    `allowed_origins`: exact `Origin` values (`https://app.example`) allowed besides none at all.
    `allowed_hosts`: the `Host` names (without port) accepted, loopback names by default (a
    DNS-rebinding guard); list your public names when you serve beyond loopback, or pass None to
    accept any. `authenticate`: see Authenticator.
    `cookie`: a (name, value) pair set on the `initialize` answer and the WebSocket 101, e.g. the
    node name a sticky load balancer routes on. `tap`: sees every message (for logs and tests).
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
    ) -> None:
        self.to_agent = to_agent
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
        self._tasks: set[asyncio.Task[None]] = set()

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
            host = _host_name(headers.get("host", "").lower())
            if host and host not in self.allowed_hosts:
                raise _RefusedError(
                    403, f"Host {host!r} is not allowed; add it to allowed_hosts to accept it"
                )
        identity: object = True
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
        if remote.identity != identity:
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
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.limits.max_message_bytes:
            raise _RefusedError(413, f"Body over {self.limits.max_message_bytes} bytes")
        body = await _read_body(receive, self.limits.max_message_bytes)
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            raise _RefusedError(400, "The body is not JSON") from None
        if isinstance(message, list):
            raise _RefusedError(501, "Batch requests are not supported")
        if not isinstance(message, dict):
            raise _RefusedError(400, "The body must be a JSON-RPC message (an object)")
        method = message.get("method")
        if (
            CONNECTION_ID_HEADER.lower() not in headers
            and method == "initialize"
            and "id" in message
        ):
            remote = self._create(False, identity)
            try:
                answer = await remote.call(message, body)
            except (asyncio.TimeoutError, ConnectionError):
                await self.drop(remote)
                raise _RefusedError(504, "The agent did not answer initialize") from None
            extra = {CONNECTION_ID_HEADER.lower(): remote.id, **self._cookie_header()}
            await _respond_raw(send, 200, answer, extra)
            return
        remote = self._remote(headers, identity)
        session_id = self._session(remote, headers)
        if method in SESSION_SCOPED and session_id is None:
            raise _RefusedError(400, f"{method} needs the {SESSION_ID_HEADER} header")
        if session_id is not None and _session_of(message) not in (None, session_id):
            raise _RefusedError(400, f"{SESSION_ID_HEADER} does not match params.sessionId")
        await remote.deliver(message, body)
        await _respond(send, 202, None)

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
            data = text.encode()
            if len(data) > self.limits.max_message_bytes:
                await send(
                    {
                        "type": "websocket.close",
                        "code": 1009,
                        "reason": f"message over {self.limits.max_message_bytes} bytes",
                    }
                )
                return
            try:
                message = json.loads(data)
            except (ValueError, RecursionError):
                message = None
            # Anything that is not an object is the runtime's to answer (-32700, -32600).
            await remote.deliver(message if isinstance(message, dict) else {}, data)


async def _read_body(receive: Receive, limit: int) -> bytes:
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
    Binds loopback unless told otherwise. The other options are `AcpApp`'s.
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
        )
    elif server == "hypercorn":
        config = importlib.import_module("hypercorn.config").Config()
        config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
        config.certfile, config.keyfile = certfile, keyfile
        serve = importlib.import_module("hypercorn.asyncio").serve
        asyncio.run(serve(app, config))
    else:
        raise ValueError(f"server must be 'hypercorn' or 'uvicorn', not {server!r}")
