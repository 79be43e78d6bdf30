"""Connect to a remote agent over WebSocket or Streamable HTTP (the ACP transports RFD).

    async with connect_agent(MyClient(), "ws://127.0.0.1:8000/acp") as conn:    # or http://...
        await conn.initialize(...)

WebSocket needs the `websockets` package, Streamable HTTP needs `httpx` with HTTP/2 (`pip install
'httpx[http2]'`); each is imported only when used, with a clear error when missing, so the rest of
this package stays standard library only. Cookies are kept in `cookies` (a dict you may pass and
keep: it is read on connect and updated from every `Set-Cookie`), so a sticky load balancer sends a
reconnect to the same agent process. To resume after a dropped connection, connect again (a new
connection, a new `initialize`) and call `session_load` with the session id: in v1 of the RFD,
messages sent while you were away are not replayed; the agent replays the session's history.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import ssl
from collections.abc import AsyncIterator, Callable, Mapping, MutableMapping
from contextlib import AbstractAsyncContextManager
from types import ModuleType
from typing import Any, Final, Protocol

from ._protocol import SESSION_FIELD, SESSION_OPENERS
from .connections import ClientSideConnection
from .interfaces import Client
from .rpc import ConnectionLimits, FrameError, MessageObserver

__all__ = ["RemoteAgentError", "connect_agent"]

logger = logging.getLogger(__name__)

CONNECTION_ID_HEADER: Final = "Acp-Connection-Id"
SESSION_ID_HEADER: Final = "Acp-Session-Id"
MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
INBOX_BACKLOG: Final = 256
BUSY_RETRIES: Final = 8
MAX_RETRY_AFTER_S: Final = 5.0
# Servers end an HTTP/2 connection after so many requests (Hypercorn's keep_alive_max_requests and
# nginx's keepalive_requests: 1000 by default). Hypercorn names the request that reaches its limit
# as the last stream in its GOAWAY and then cannot answer it, so the client cannot tell whether it
# was handled (measured: our client's connection ended at its 1,001st POST). The POSTs move to a
# new HTTP/2 connection every POSTS_PER_CONNECTION, well before such a limit.
POSTS_PER_CONNECTION = 500


# What this module uses of `websockets` and `httpx`, which are imported lazily (so this package
# type-checks and imports without them).


class _Socket(Protocol):
    async def recv(self) -> str | bytes: ...

    async def send(self, message: str) -> None: ...

    async def close(self) -> None: ...


class _Headers(Protocol):
    def get(self, key: str, default: str | None = None) -> str | None: ...

    def get_list(self, key: str) -> list[str]: ...

    def __setitem__(self, key: str, value: str) -> None: ...


class _Response(Protocol):
    status_code: int
    headers: _Headers
    content: bytes

    async def aread(self) -> bytes: ...

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...


class _Request(Protocol):
    headers: _Headers


class _Cookies(Protocol):
    def clear(self) -> None: ...


class _HttpClient(Protocol):
    cookies: _Cookies

    async def post(self, url: str, *, content: bytes, headers: Mapping[str, str]) -> _Response: ...

    async def request(self, method: str, url: str, *, headers: Mapping[str, str]) -> _Response: ...

    def stream(
        self, method: str, url: str, *, headers: Mapping[str, str]
    ) -> AbstractAsyncContextManager[_Response]: ...

    async def aclose(self) -> None: ...


class RemoteAgentError(ConnectionError):
    """The agent's server refused a request: `status` is the HTTP status, `detail` what it said."""

    def __init__(self, status: int, what: str, detail: str) -> None:
        super().__init__(f"HTTP {status} from {what}: {detail or 'no detail'}")
        self.status = status
        self.detail = detail


def _require(module: str, package: str, why: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{why} needs the {package!r} package: pip install '{package}'") from None


def _keep_cookie(jar: MutableMapping[str, str], set_cookie: str) -> None:
    """Affinity cookies only: the name and value are kept, the attributes are not needed."""
    name, sep, rest = set_cookie.partition("=")
    if sep and name.strip():
        jar[name.strip()] = rest.split(";", 1)[0].strip()


def _cookie_header(jar: Mapping[str, str]) -> str:
    return "; ".join(f"{name}={value}" for name, value in jar.items())


def _retry_after(response: _Response) -> float | None:
    """Seconds to wait before sending again, for a 429 or 503 that says (at most MAX_RETRY_AFTER_S)."""
    if response.status_code not in (429, 503):
        return None
    value = response.headers.get("retry-after") or ""
    if not value.strip().isdigit():
        return None
    return min(float(value), MAX_RETRY_AFTER_S)


def _detail(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    with contextlib.suppress(ValueError, AttributeError):
        error = json.loads(text).get("error")
        if isinstance(error, str):
            return error
    return text[:500]


class _WebSocketTransport:
    """JSON-RPC in WebSocket text frames (binary frames are ignored)."""

    def __init__(self, socket: _Socket, closed_error: type[Exception]) -> None:
        self._socket = socket
        self._closed_error = closed_error

    async def receive(self) -> bytes | None:
        while True:
            try:
                frame = await self._socket.recv()
            except self._closed_error:
                return None
            if isinstance(frame, str):
                return frame.encode()

    async def send(self, data: bytes) -> None:
        try:
            await self._socket.send(data.decode())
        except self._closed_error as exc:
            raise ConnectionError(f"the WebSocket closed: {exc}") from None

    def close(self) -> None:
        pass  # connect_agent closes the socket when its block ends

    async def aclose(self) -> None:
        await self._socket.close()


class _HttpTransport:
    """Streamable HTTP: POST each message, read the agent's on SSE streams (one per connection and
    one per session), DELETE at the end.

    `open_client()` makes an HTTP client; the POSTs share one and every SSE stream gets its own
    (its own TCP connection, still HTTP/2). One HTTP/2 connection cannot carry several streams read
    at once: httpx reads a connection under one lock, so a stream whose events another reader has
    already taken off the socket waits until that reader's next read returns, and when the agent is
    waiting for an answer to what is in those events, nothing more ever arrives (measured: three
    sessions prompted at once on one connection stalled on every run)."""

    def __init__(
        self,
        open_client: Callable[[], _HttpClient],
        url: str,
        headers: Mapping[str, str],
        max_message_bytes: int,
    ) -> None:
        self._open_client = open_client
        self._client = open_client()
        self._posts = 0  # POSTs sent on self._client
        self._unanswered: dict[_HttpClient, int] = {}  # POSTs waiting for their answer, per client
        self._retired: list[_HttpClient] = []  # replaced while POSTs on them wait: closed after
        self._url = url
        self._headers = dict(headers)
        self._max = max_message_bytes
        self._inbox: asyncio.Queue[bytes | FrameError | None] = asyncio.Queue(INBOX_BACKLOG)
        self.connection_id: str | None = None
        self._streams: dict[str | None, asyncio.Task[None]] = {}
        self._answer_session: dict[str, str] = {}  # the agent's request id -> its session
        self._opening: dict[str, str] = {}  # our session/load (resume, fork) id -> its session

    async def receive(self) -> bytes | None:
        item = await self._inbox.get()
        if isinstance(item, FrameError):
            raise item
        return item

    async def send(self, data: bytes) -> None:
        await self.send_message(data, json.loads(data))

    async def send_message(self, data: bytes, message: Mapping[str, Any]) -> None:
        """`send`, given `data` parsed too (the runtime's `_write` passes what it encoded): a
        message is routed (its method, id and session) without being parsed again."""
        headers = {"content-type": "application/json", **self._headers}
        if self.connection_id is None:
            if message.get("method") != "initialize":
                raise ConnectionError(
                    "the first message on a Streamable HTTP connection must be initialize"
                )
            response = await self._post(data, headers)
            self.connection_id = response.headers.get(CONNECTION_ID_HEADER)
            if response.status_code != 200 or not self.connection_id:
                raise RemoteAgentError(
                    response.status_code,
                    f"POST {self._url} (initialize)",
                    _detail(response.content) or f"no {CONNECTION_ID_HEADER}",
                )
            await self._inbox.put(response.content)
            self._open(None)
            return
        headers[CONNECTION_ID_HEADER] = self.connection_id
        session_id = self._session_header(message)
        if session_id is not None:
            headers[SESSION_ID_HEADER] = session_id
        response = await self._post(data, headers)
        if response.status_code not in (200, 202):
            what = message.get("method") or "a response"
            raise RemoteAgentError(
                response.status_code, f"POST {self._url} ({what})", _detail(response.content)
            )
        if response.status_code == 200 and response.content:
            await self._inbox.put(response.content)

    async def _post(self, data: bytes, headers: Mapping[str, str]) -> _Response:
        """POST one message; a 429 or 503 with `Retry-After` (the server is full for now) is
        retried after that many seconds, up to BUSY_RETRIES times."""
        httpx = importlib.import_module("httpx")
        for attempt in range(BUSY_RETRIES + 1):
            client = await self._post_client()
            self._unanswered[client] = self._unanswered.get(client, 0) + 1
            try:
                response = await client.post(self._url, content=data, headers=headers)
            except httpx.HTTPError as exc:
                raise ConnectionError(f"POST {self._url} failed: {exc}") from None
            finally:
                await self._answered(client)
            wait = _retry_after(response)
            if wait is None or attempt == BUSY_RETRIES:
                return response
            logger.debug(
                "POST %s: HTTP %d, retrying in %.1f s", self._url, response.status_code, wait
            )
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    async def _post_client(self) -> _HttpClient:
        """The client for the next POST: a new one (a new HTTP/2 connection) after
        POSTS_PER_CONNECTION; the one it replaces is closed once its POSTs are answered."""
        if self._posts >= POSTS_PER_CONNECTION:
            old, self._client, self._posts = self._client, self._open_client(), 0
            if old in self._unanswered:
                self._retired.append(old)
            else:
                with contextlib.suppress(Exception):
                    await old.aclose()
        self._posts += 1
        return self._client

    async def _answered(self, client: _HttpClient) -> None:
        left = self._unanswered.pop(client) - 1
        if left:
            self._unanswered[client] = left
        elif client in self._retired:
            self._retired.remove(client)
            with contextlib.suppress(Exception):
                await client.aclose()

    def _session_header(self, message: Mapping[str, Any]) -> str | None:
        method = message.get("method")
        if (
            method is None
        ):  # an answer to the agent: it belongs to the session the agent asked about
            return self._answer_session.pop(json.dumps(message.get("id")), None)
        params = message.get("params")
        session_id = params.get(SESSION_FIELD) if isinstance(params, dict) else None
        if not isinstance(session_id, str):
            return None
        if method in SESSION_OPENERS:
            # The session joins this connection when the agent answers; its stream opens then.
            if "id" in message:
                self._opening[json.dumps(message["id"])] = session_id
            return None
        return session_id if session_id in self._streams else None

    def _open(self, session_id: str | None) -> None:
        if session_id not in self._streams:
            self._streams[session_id] = asyncio.ensure_future(self._read_stream(session_id))

    async def _read_stream(self, session_id: str | None) -> None:
        headers = {
            "accept": "text/event-stream",
            CONNECTION_ID_HEADER: self.connection_id or "",
            **self._headers,
        }
        if session_id is not None:
            headers[SESSION_ID_HEADER] = session_id
        client = self._open_client()
        try:
            async with client.stream("GET", self._url, headers=headers) as response:
                if response.status_code != 200:
                    body = await response.aread()
                    logger.warning(
                        "%s",
                        RemoteAgentError(response.status_code, f"GET {self._url}", _detail(body)),
                    )
                    self._streams.pop(session_id, None)
                    return
                await self._read_events(response)
        except (
            Exception
        ) as exc:  # the stream broke (httpx errors, a reset): the connection ends below
            logger.debug("stream %r ended: %s", session_id, exc)
        finally:
            with contextlib.suppress(Exception):
                await client.aclose()
            if session_id is None:
                with contextlib.suppress(asyncio.QueueFull):
                    self._inbox.put_nowait(None)

    async def _read_events(self, response: _Response) -> None:
        """The `data` of each event of an SSE stream, read as bytes (lines end in LF, CRLF or CR;
        `event`, `id`, `retry` and comments are ignored): an event over the message limit is
        skipped and reported without being held, however long its lines are."""
        events = _EventReader(self._max)
        async for chunk in response.aiter_bytes():
            for data, size in events.feed(chunk):
                await self._deliver(data, size)
        for data, size in events.finish():
            await self._deliver(data, size)

    async def _deliver(self, data: bytes, size: int) -> None:
        if size > self._max:
            await self._inbox.put(FrameError(f"an event over {self._max} bytes was skipped"))
            return
        # Only a message with an id matters here (the agent's request, an answer): a notification,
        # most of what a stream carries, is not parsed twice. `\u` may spell a key in escapes.
        if b'"id"' in data or b"\\u" in data:
            with contextlib.suppress(ValueError):
                message = json.loads(data)
                if isinstance(message, dict):
                    self._note_sessions(message)
        await self._inbox.put(data)

    def _note_sessions(self, message: Mapping[str, Any]) -> None:
        """Open a session's stream once the agent's answer put the session on this connection, and
        remember which session each of the agent's requests is about (its answer carries that)."""
        if "method" in message:
            params = message.get("params")
            session_id = params.get(SESSION_FIELD) if isinstance(params, dict) else None
            if "id" in message and isinstance(session_id, str) and session_id in self._streams:
                self._answer_session[json.dumps(message["id"])] = session_id
            return
        opened = self._opening.pop(json.dumps(message.get("id")), None)
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get(SESSION_FIELD), str):
            opened = result[SESSION_FIELD]
        if opened is not None and "result" in message:
            self._open(opened)

    def close(self) -> None:
        pass  # connect_agent ends the streams and the connection when its block ends

    async def aclose(self) -> None:
        for task in self._streams.values():
            task.cancel()
        await asyncio.gather(*self._streams.values(), return_exceptions=True)
        if self.connection_id is not None:
            with contextlib.suppress(Exception):
                await self._client.request(
                    "DELETE",
                    self._url,
                    headers={CONNECTION_ID_HEADER: self.connection_id, **self._headers},
                )
        for client in [*self._retired, self._client]:
            with contextlib.suppress(Exception):
                await client.aclose()
        self._retired.clear()


_BOM = b"\xef\xbb\xbf"


class _EventReader:
    """Server-sent events from chunks of bytes: `feed` returns the `(data, size)` of each event a
    chunk completes (the `data` lines joined by LF; `size` their length, over `limit` when the
    event was too large, whose data is then dropped as it arrives)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._tail = b""  # the start of a line whose end has not arrived
        self._data: list[bytes] = []
        self._size = 0
        self._first = True
        self._dropping = False  # inside a line too long to keep

    def feed(self, chunk: bytes) -> list[tuple[bytes, int]]:
        text = self._tail + chunk
        if self._first:  # a byte order mark that opens the stream is dropped, even cut in two
            if len(text) < 3 and _BOM.startswith(text):
                self._tail = text
                return []
            self._first = False
            text = text.removeprefix(_BOM)
        if b"\r" in text:
            # CR LF and a lone CR end lines too; a CR that ends the chunk waits for what follows
            held = text.endswith(b"\r")
            text = text[:-1] if held else text
            text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n") + (b"\r" if held else b"")
        lines = text.split(b"\n")
        tail = lines.pop()
        events: list[tuple[bytes, int]] = []
        for line in lines:
            if self._dropping:  # the end of a line dropped for its length
                self._dropping = False
            elif not line:
                if self._data or self._size:
                    events.append((b"\n".join(self._data), self._size))
                self._data, self._size = [], 0
            elif line.startswith(b"data"):
                value = line[5:] if line[4:5] == b":" else b"" if len(line) == 4 else None
                if value is None:
                    continue  # another field whose name starts with "data"
                if value[:1] == b" ":
                    value = value[1:]
                self._size += len(value) + (1 if self._data else 0)
                if self._size <= self._limit:
                    self._data.append(value)
                else:
                    self._data = []
        if len(tail) > self._limit + 16:  # longer than any event may be: dropped as it arrives
            if not self._dropping and tail.startswith(b"data") and tail[4:5] == b":":
                self._size, self._data = self._limit + 1, []  # the event is reported too large
            self._dropping = True
            tail = b"\r" if tail.endswith(b"\r") else b""
        self._tail = tail
        return events

    def finish(self) -> list[tuple[bytes, int]]:
        """At the end of the stream: a CR held back as the end of its last line ends it."""
        return self.feed(b"\n") if self._tail.endswith(b"\r") else []


class _Tapped:
    """A transport whose messages are shown to `tap(direction, message)` on their way."""

    def __init__(
        self, inner: _WebSocketTransport | _HttpTransport, tap: Callable[[str, bytes], None]
    ) -> None:
        self._inner = inner
        self._tap = tap

    async def receive(self) -> bytes | None:
        data = await self._inner.receive()
        if data is not None:
            self._tap("in", data)
        return data

    async def send(self, data: bytes) -> None:
        self._tap("out", data)
        await self._inner.send(data)

    async def send_message(self, data: bytes, message: Mapping[str, Any]) -> None:
        self._tap("out", data)
        if isinstance(self._inner, _HttpTransport):
            await self._inner.send_message(data, message)
        else:
            await self._inner.send(data)

    def close(self) -> None:
        self._inner.close()


@contextlib.asynccontextmanager
async def connect_agent(
    to_client: Callable[[ClientSideConnection], Client] | Client,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cookies: MutableMapping[str, str] | None = None,
    http2: bool = True,
    timeout: float = 30.0,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
    tap: Callable[[str, bytes], None] | None = None,
    ssl_context: ssl.SSLContext | None = None,
    limits: ConnectionLimits | None = None,
    observers: tuple[MessageObserver, ...] = (),
) -> AsyncIterator[ClientSideConnection]:
    """Connect to the agent at `url`: `ws://` or `wss://` for WebSocket, `http://` or `https://` for
    Streamable HTTP. `headers` go with every request (e.g. `{"Authorization": "Bearer ..."}`).
    `http2`: HTTP/2 as the RFD requires (over `http://` that is prior knowledge, which Hypercorn
    serves and Uvicorn does not: pass False for an HTTP/1.1-only server). `timeout` bounds connecting
    and each POST, not the streams. A POST answered 429 or 503 with `Retry-After` (the server is
    full for now) is sent again after that many seconds (at most 5 s, up to 8 times). A refused connection raises RemoteAgentError (401, 403, 503...);
    a failure later ends the connection (pending calls raise ConnectionClosedError naming it).
    `tap(direction, message)` sees every message ("in" from the agent, "out" to it), for logs.
    `ssl_context` verifies `wss://` and `https://` servers (default: the system's trusted CAs).
    `limits` (e.g. `receive_timeout`) and `observers` (parsed messages, as on every transport) are
    `ClientSideConnection`'s.
    """
    jar: MutableMapping[str, str] = cookies if cookies is not None else {}
    extra = dict(headers or {})
    transport: _WebSocketTransport | _HttpTransport
    scheme = url.split(":", 1)[0].lower()
    if scheme in ("ws", "wss"):
        websockets = _require("websockets", "websockets", "connect_agent over WebSocket")
        client_module = importlib.import_module("websockets.asyncio.client")
        if jar:
            extra["Cookie"] = _cookie_header(jar)
        try:
            tls = {"ssl": ssl_context} if ssl_context is not None and scheme == "wss" else {}
            socket = await client_module.connect(
                url,
                additional_headers=extra,
                open_timeout=timeout,
                max_size=max_message_bytes,
                compression=None,
                **tls,
            )
        except websockets.InvalidStatus as exc:
            raise RemoteAgentError(
                exc.response.status_code,
                f"WebSocket upgrade at {url}",
                _detail(exc.response.body or b""),
            ) from None
        except (OSError, websockets.InvalidHandshake, asyncio.TimeoutError) as exc:
            raise ConnectionError(f"cannot open a WebSocket to {url}: {exc}") from None
        for value in socket.response.headers.get_all("Set-Cookie"):
            _keep_cookie(jar, value)
        transport = _WebSocketTransport(socket, websockets.ConnectionClosed)
    elif scheme in ("http", "https"):
        httpx = _require("httpx", "httpx[http2]", "connect_agent over Streamable HTTP")
        if http2:
            _require("h2", "httpx[http2]", "connect_agent over HTTP/2")

        async def send_cookies(request: _Request) -> None:
            if jar:
                request.headers["cookie"] = _cookie_header(jar)

        def open_client() -> _HttpClient:
            async def keep_cookies(response: _Response) -> None:
                for value in response.headers.get_list("set-cookie"):
                    _keep_cookie(jar, value)
                client.cookies.clear()  # `jar` is the one store, sent by send_cookies

            client: _HttpClient = httpx.AsyncClient(
                http2=http2,
                http1=not (http2 and scheme == "http"),
                timeout=httpx.Timeout(timeout, read=None),
                verify=ssl_context if ssl_context is not None else True,
                event_hooks={"request": [send_cookies], "response": [keep_cookies]},
            )
            return client

        transport = _HttpTransport(open_client, url, extra, max_message_bytes)
    else:
        raise ValueError(
            f"connect_agent needs a ws://, wss://, http:// or https:// URL, not {url!r}"
        )
    connection = ClientSideConnection(
        to_client,
        transport if tap is None else _Tapped(transport, tap),
        limits=limits,
        observers=observers,
    )
    try:
        yield connection
    finally:
        await connection.close()
        await transport.aclose()
