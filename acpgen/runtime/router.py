"""One agent process for clients of several protocol versions, and a client for agents of several.

The agent side: `AgentRouter(acp_v1.agent_route(V1Agent), acp_v2.agent_route(V2Agent))` reads a
connection until a valid `initialize` arrives and hands the connection, that `initialize` first,
to the implementation of the version it selects (the rules of the TypeScript SDK's
`AgentProtocolRouter`, except where the selected version's schema says otherwise):

- the highest configured version at or below the requested one; below every configured version,
  the lowest one when its schema answers any version with its own (v1: the client then decides),
  else the version error of the routes that have one (v2: -32022 with `{requested, supported}`);
  when no configured version rejects a lower request with an error of its own, the highest
  configured version takes any request (v1: the agent answers with the latest version it supports);
- an `initialize` for a newer version whose params the selected version cannot read goes to the
  highest lower version that can (a later client written in an older shape);
- before routing, notifications and responses are ignored, other requests get -32600, a batch
  (a JSON array) one -32600 with id null, a line that is not JSON -32700; an `initialize` whose
  version is not a version -32602, one whose params decode under no version it may go to -32602.
  None of these close the connection;
- a request id must suit the selected version (v2 ids are strings or integers);
- an `initialize` for a newer version than the selected one keeps what decodes under the selected
  version; one for the selected version is checked strictly. The forwarded `initialize` asks for
  the selected version;
- the router never re-routes: a repeated `initialize` goes to the selected implementation.

Every generated package has this module and the routes of one package fit the router of any
other, so vendoring the packages of the versions you serve is all it takes.

The client side: `spawn_agent` of each package speaks that version; `spawn_agent_negotiated(
[acp_v2.client_route(...), acp_v1.client_route(...)], command)` asks for the highest version and
falls back to the one the agent answers with (or, after -32022, to the highest it supports).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._codec import JsonValue, ValidationError, encode_value
from ._protocol import (
    INITIALIZE,
    NEGOTIATE,
    NULL_REQUEST_ID,
    PROTOCOL_VERSION,
    VERSION_FIELD,
)
from .connections import AgentSideConnection, ClientSideConnection
from .interfaces import Agent, Client
from .methods import AGENT_METHODS, MethodInfo
from .rpc import (
    FrameError,
    LineReader,
    LineWriter,
    OversizedMessageError,
    StreamTransport,
    stdio_streams,
)
from .sides import _start_agent, _stop_agent

__all__ = [
    "AgentRoute",
    "AgentRouter",
    "ClientRoute",
    "Negotiated",
    "NotRoutableError",
    "agent_route",
    "client_route",
    "run_router",
    "spawn_agent_negotiated",
]

logger = logging.getLogger(__name__)

MAX_PROTOCOL_VERSION = 0xFFFF


class NotRoutableError(TypeError):
    """This package cannot route: its schema has no request carrying the protocol version, or it
    was built without knowing the version it speaks."""


def _initialize() -> tuple[int, MethodInfo]:
    """This package's version and its `initialize` method (what routing reads from the schema)."""
    info = AGENT_METHODS.get(INITIALIZE) if INITIALIZE else None
    version = PROTOCOL_VERSION
    if version is None or info is None or info.decode_result is None:
        raise NotRoutableError(
            "this package has no initialize request carrying a protocol version, or was built without a "
            "protocol version (--protocol-version N, the config key protocol_version, or meta.json)"
        )
    return version, info


class Routed(Protocol):
    """What a route connects: a connection that can be awaited to its end, and closed."""

    async def wait_closed(self) -> None: ...

    async def close(self) -> None: ...


class AgentRoute(Protocol):
    """One protocol version an `AgentRouter` serves (made by a package's `agent_route`)."""

    @property
    def version(self) -> int: ...

    @property
    def rejects_lower(self) -> bool:
        """Its `initialize` answers a lower version with an error (v2), not with its version (v1)."""

    @property
    def null_request_id(self) -> bool: ...

    def unsupported_version(
        self, requested: int, supported: list[int]
    ) -> dict[str, JsonValue] | None:
        """The JSON-RPC error for a version no route serves, if this version defines one."""

    def initialize_params(self, params: dict[str, Any], requested: int) -> Mapping[str, object]:
        """The `initialize` params to forward; raises ValueError when they do not decode."""

    def connect(self, reader: LineReader, writer: LineWriter) -> Routed: ...


def _as_object(value: object) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise ValueError("initialize params must encode as a JSON object")
    return value


@dataclass(frozen=True)
class _AgentRoute:
    connect: Callable[[LineReader, LineWriter], Routed]
    version: int
    info: MethodInfo
    rejects_lower: bool = NEGOTIATE is not None
    null_request_id: bool = NULL_REQUEST_ID

    def unsupported_version(
        self, requested: int, supported: list[int]
    ) -> dict[str, JsonValue] | None:
        return None if NEGOTIATE is None else NEGOTIATE[3](requested, supported).to_json()

    def initialize_params(self, params: dict[str, Any], requested: int) -> Mapping[str, object]:
        asked = {**params, VERSION_FIELD: self.version}
        if requested <= self.version:
            try:
                self.info.decode_params(asked)
            except (ValidationError, RecursionError) as exc:
                raise ValueError(str(exc)) from None
            return asked
        # Written for a newer version: keep each key that decodes under this one.
        kept: dict[str, object] = {VERSION_FIELD: self.version}
        for key, value in params.items():
            if key == VERSION_FIELD:
                continue
            with contextlib.suppress(ValidationError, RecursionError):
                self.info.decode_params({**kept, key: value})
                kept[key] = value
        try:
            return _as_object(encode_value(self.info.decode_params(kept)))
        except ValidationError as exc:
            raise ValueError(str(exc)) from None


def agent_route(
    to_agent: Callable[[AgentSideConnection], Agent] | Agent,
    *,
    connect: Callable[[LineReader, LineWriter], Routed] | None = None,
) -> AgentRoute:
    """This package's protocol version for an `AgentRouter` (NotRoutableError when it has none).

    `to_agent` as for `AgentSideConnection`; `connect(reader, writer)` makes the connection when
    it needs options (default: `AgentSideConnection(to_agent, reader, writer)`)."""
    version, info = _initialize()
    if connect is None:

        def connect(reader: LineReader, writer: LineWriter) -> Routed:
            connection: Routed = AgentSideConnection(to_agent, reader, writer)
            return connection

    return _AgentRoute(connect, version, info)


class _Replay:
    """A reader that gives `first` back before reading on."""

    def __init__(self, first: bytes, reader: LineReader) -> None:
        self._first: bytes | None = first
        self._reader = reader

    async def readuntil(self, separator: bytes = b"\n") -> bytes:
        if self._first is not None:
            line, self._first = self._first, None
            return line
        return await self._reader.readuntil(separator)

    async def readexactly(self, n: int) -> bytes:
        return await self._reader.readexactly(n)


def _error(code: int, message: str, data: JsonValue = None) -> dict[str, JsonValue]:
    error: dict[str, JsonValue] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return error


def _dumps(message: Mapping[str, object]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _is_id(value: object) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


@dataclass(frozen=True)
class _Reply:
    id: JsonValue
    error: dict[str, JsonValue] | None  # None: ignore the message


@dataclass(frozen=True)
class _Route:
    route: AgentRoute
    message: dict[str, Any]


class AgentRouter:
    """Routes each connection to the implementation of the protocol version its client asks for."""

    def __init__(self, *routes: AgentRoute) -> None:
        versions = [r.version for r in routes]
        if not routes or len(set(versions)) != len(versions):
            raise ValueError(f"give one route per protocol version (got versions {versions})")
        self.routes: tuple[AgentRoute, ...] = tuple(sorted(routes, key=lambda r: r.version))

    @property
    def versions(self) -> list[int]:
        return [r.version for r in self.routes]

    def select(self, requested: int) -> AgentRoute | None:
        """The route for a client that asks for `requested`, or None (the version error then).

        Each route's schema has its say: a route whose `initialize` answers any version with its
        own (v1) takes what no route at or below serves; one whose schema has a version error
        (v2: -32022) leaves a lower request unserved."""
        if not any(r.rejects_lower for r in self.routes):
            return self.routes[-1]  # v1 everywhere: the latest version answers every request
        below = [r for r in self.routes if r.version <= requested]
        if below:
            return below[-1]
        lowest = self.routes[0]
        return None if lowest.rejects_lower else lowest

    def decide(self, line: bytes | str) -> _Reply | _Route:
        """What to do with one line received before routing."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError) as exc:
            return _Reply(None, _error(-32700, "Parse error", {"message": str(exc)}))
        if isinstance(message, list):
            return _Reply(
                None,
                _error(
                    -32600, "Invalid request", {"message": "JSON-RPC batches are not supported"}
                ),
            )
        if not isinstance(message, dict):
            return _Reply(
                None,
                _error(-32600, "Invalid request", {"message": "a message must be a JSON object"}),
            )
        method = message.get("method")
        if "method" not in message and (
            "id" in message or "result" in message or "error" in message
        ):
            return _Reply(None, None)  # a response: nothing awaits it yet
        if message.get("jsonrpc") == "2.0" and isinstance(method, str) and "id" not in message:
            return _Reply(None, None)  # a notification before initialization
        if (
            message.get("jsonrpc") != "2.0"
            or not isinstance(method, str)
            or not _is_id(message.get("id"))
        ):
            return _Reply(
                None,
                _error(
                    -32600,
                    "Invalid request",
                    {"message": "the first message must be an initialize request"},
                ),
            )
        request_id = message["id"]
        if method != INITIALIZE:
            return _Reply(
                request_id,
                _error(
                    -32600, "Invalid request", {"message": "the first request must be initialize"}
                ),
            )
        params = message.get("params")
        requested = params.get(VERSION_FIELD) if isinstance(params, dict) else None
        if not (
            isinstance(requested, int)
            and not isinstance(requested, bool)
            and 0 <= requested <= MAX_PROTOCOL_VERSION
        ):
            return _Reply(
                request_id,
                _error(
                    -32602,
                    "Invalid params",
                    {"message": f"initialize.{VERSION_FIELD} must be a valid ACP protocol version"},
                ),
            )
        assert isinstance(params, dict)
        route = self.select(requested)
        if route is None:
            for candidate in reversed(self.routes):
                error = candidate.unsupported_version(requested, self.versions)
                if error is not None:
                    return _Reply(request_id, error)
            return _Reply(
                request_id,
                _error(
                    -32602,
                    "Invalid params",
                    {"message": f"unsupported protocol version {requested}"},
                ),
            )
        if request_id is None and not route.null_request_id:
            return _Reply(
                None,
                _error(
                    -32600,
                    "Invalid request",
                    {
                        "message": f"protocol version {route.version} request ids must be strings or integers"
                    },
                ),
            )
        try:
            forwarded = route.initialize_params(params, requested)
        except ValueError as exc:
            fallback = self._fallback(route, params, requested, request_id)
            if fallback is None:
                return _Reply(
                    request_id,
                    _error(
                        -32602, "Invalid params", {"message": f"invalid initialize params: {exc}"}
                    ),
                )
            route, forwarded = fallback
        return _Route(route, {**message, "params": forwarded})

    def _fallback(
        self, selected: AgentRoute, params: dict[str, Any], requested: int, request_id: JsonValue
    ) -> tuple[AgentRoute, Mapping[str, object]] | None:
        """For a request newer than `selected` whose params it cannot read (a client of a later
        version, written in an older shape): the highest lower route that reads them."""
        if requested <= selected.version:
            return None  # asked for exactly this version: its params are checked strictly
        for route in reversed([r for r in self.routes if r.version < selected.version]):
            if request_id is None and not route.null_request_id:
                continue
            with contextlib.suppress(ValueError):
                return route, route.initialize_params(params, requested)
        return None

    async def serve(self, reader: LineReader, writer: LineWriter) -> Routed | None:
        """Read until a valid `initialize`, then connect its route and return the connection (None
        when the input ended first; the writer is closed then)."""
        # The framing and line limit the connection will use, one line at a time (no read-ahead:
        # the reader goes on to the route's connection).
        lines = StreamTransport(reader, writer, read_ahead=False)
        while True:
            try:
                line = await lines.receive()
            except OversizedMessageError as exc:
                await self._send(
                    writer,
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": _error(-32600, "Invalid request", {"message": str(exc)}),
                    },
                )
                continue
            except FrameError as exc:
                await self._send(
                    writer,
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": _error(-32700, "Parse error", {"message": str(exc)}),
                    },
                )
                continue
            except ConnectionError:
                line = None
            if line is None:
                with contextlib.suppress(Exception):
                    writer.close()
                return None
            if not line.strip():
                continue
            decision = self.decide(line)
            if isinstance(decision, _Route):
                return decision.route.connect(_Replay(_dumps(decision.message), reader), writer)
            if decision.error is not None:
                await self._send(
                    writer, {"jsonrpc": "2.0", "id": decision.id, "error": decision.error}
                )

    @staticmethod
    async def _send(writer: LineWriter, message: Mapping[str, object]) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            writer.write(_dumps(message))
            await writer.drain()


async def run_router(*routes: AgentRoute) -> None:
    """Serve one client on this process's stdin/stdout through `AgentRouter(*routes)`."""
    reader, writer = await stdio_streams()
    connection = await AgentRouter(*routes).serve(reader, writer)
    if connection is not None:
        await connection.wait_closed()


# -- the client side ---------------------------------------------------------------------------


class ClientRoute(Protocol):
    """One protocol version a client speaks (made by a package's `client_route`)."""

    @property
    def version(self) -> int: ...

    def initialize_params(self) -> Mapping[str, object]: ...

    def decode_result(self, result: JsonValue) -> object:
        """The agent's `initialize` result read as this version's (raises `ValidationError`)."""

    def open(self, reader: LineReader, writer: LineWriter) -> Routed:
        """This version's connection on an initialized stream."""


@dataclass(frozen=True)
class _ClientRoute:
    connect: Callable[[LineReader, LineWriter], ClientSideConnection]
    initialize: object
    version: int
    info: MethodInfo

    def initialize_params(self) -> Mapping[str, object]:
        return {**_as_object(encode_value(self.initialize)), VERSION_FIELD: self.version}

    def decode_result(self, result: JsonValue) -> object:
        assert self.info.decode_result is not None  # a request (checked by _initialize)
        return self.info.decode_result(result)

    def open(self, reader: LineReader, writer: LineWriter) -> Routed:
        connection: Routed = self.connect(reader, writer)
        return connection


def client_route(
    to_client: Callable[[ClientSideConnection], Client] | Client,
    initialize: object,
    *,
    connect: Callable[[LineReader, LineWriter], ClientSideConnection] | None = None,
) -> ClientRoute:
    """This package's protocol version for `spawn_agent_negotiated`: the client, the params of
    `initialize` to send (this package's params class of that request), and optionally how to make
    the connection (default: `ClientSideConnection(to_client, reader, writer)`)."""
    version, info = _initialize()
    if isinstance(info.params, type) and not isinstance(initialize, info.params):
        raise TypeError(
            f"initialize must be a {info.params.__name__}, not {type(initialize).__name__}"
        )
    if connect is None:

        def connect(reader: LineReader, writer: LineWriter) -> ClientSideConnection:
            return ClientSideConnection(to_client, reader, writer)

    return _ClientRoute(connect, initialize, version, info)


@dataclass
class Negotiated:
    """The outcome of `spawn_agent_negotiated`: the version the agent speaks, the connection of
    that version's package (its typed proxies) and the agent's `initialize` result."""

    version: int
    connection: Routed
    initialize_result: object
    tried: list[int] = field(default_factory=list)


class NegotiationError(ConnectionError):
    """No version both sides speak; the agent's last answer is in `answer`."""

    def __init__(self, message: str, answer: JsonValue = None) -> None:
        super().__init__(message)
        self.answer = answer


async def negotiate(
    routes: Sequence[ClientRoute], reader: LineReader, writer: LineWriter, max_lines: int = 10_000
) -> Negotiated:
    """Ask for the highest version of `routes`; settle on the one the agent answers with.

    `initialize` is sent once per connection, except after an error answer (which leaves the
    connection uninitialized):
    - an answer with a lower version the routes share is that version's result (v1 agents answer
      any request with their own version): the connection goes on in that version;
    - an answer whose version no route speaks raises `NegotiationError` (the spec: the client
      closes the connection);
    - an answer that claims a version but does not read as that version's result (agents that
      echo the requested version over a result of their own older shape) goes on in the highest
      lower version whose result it reads as, with a warning; when none, `NegotiationError` names
      what did not read;
    - an error answer listing the versions the agent supports (-32022) asks again for the highest
      of them the routes share; any other error raises `NegotiationError`.
    Up to `max_lines` lines that are not the answer (notifications, requests) are skipped per
    attempt."""
    by_version = {r.version: r for r in routes}
    if not by_version:
        raise ValueError("give at least one client route")
    route = by_version[max(by_version)]
    tried: list[int] = []
    for attempt in range(len(by_version)):
        tried.append(route.version)
        probe_id = f"negotiate-{attempt}"
        probe = {
            "jsonrpc": "2.0",
            "id": probe_id,
            "method": INITIALIZE,
            "params": route.initialize_params(),
        }
        writer.write(_dumps(probe))
        await writer.drain()
        answer = await _answer(reader, probe_id, max_lines)
        if "error" in answer:
            error = answer["error"]
            data = error.get("data") if isinstance(error, dict) else None
            supported = data.get("supported") if isinstance(data, dict) else None
            shared = sorted(
                v
                for v in (supported if isinstance(supported, list) else [])
                if isinstance(v, int) and v in by_version and v not in tried
            )
            if not shared:
                raise NegotiationError(
                    f"the agent refused protocol version {route.version}: {error}", answer
                )
            route = by_version[shared[-1]]
            continue
        result = answer.get("result")
        answered = result.get(VERSION_FIELD) if isinstance(result, dict) else None
        chosen = (
            by_version.get(answered)
            if isinstance(answered, int) and not isinstance(answered, bool)
            else None
        )
        if chosen is None:
            raise NegotiationError(
                f"the agent answered protocol version {answered!r}, which no route speaks", answer
            )
        problems: list[str] = []
        for candidate in [
            r for v, r in sorted(by_version.items(), reverse=True) if v <= chosen.version
        ]:
            try:
                response = candidate.decode_result(result)
            except ValidationError as exc:
                problems.append(f"as v{candidate.version}: {exc}")
                continue
            if candidate is not chosen:
                logger.warning(
                    "the agent answered protocol version %d with a result that does not read as "
                    "one (%s); going on in version %d, whose result it reads as",
                    chosen.version,
                    problems[0],
                    candidate.version,
                )
            return Negotiated(candidate.version, candidate.open(reader, writer), response, tried)
        raise NegotiationError(
            f"the agent answered protocol version {answered} with an initialize result that no "
            f"route reads ({'; '.join(problems)})",
            answer,
        )
    raise NegotiationError(f"no shared protocol version (tried {tried})")


async def _answer(reader: LineReader, probe_id: str, max_lines: int) -> dict[str, Any]:
    for _ in range(max_lines):
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            line = exc.partial
        except asyncio.LimitOverrunError as exc:
            raise NegotiationError(
                f"the agent wrote a line over {exc.consumed} bytes during initialize"
            ) from None
        if not line:
            raise NegotiationError("the agent closed the connection during initialize")
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if (
            isinstance(message, dict)
            and message.get("id") == probe_id
            and ("result" in message or "error" in message)
        ):
            return message
    raise NegotiationError(f"no answer to initialize within {max_lines} lines")


@contextlib.asynccontextmanager
async def spawn_agent_negotiated(
    routes: Sequence[ClientRoute],
    command: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    exit_timeout: float = 0.5,
) -> AsyncIterator[Negotiated]:
    """Start `command args...` as an agent and initialize it with the highest version of `routes`
    both sides speak (see `negotiate`). The connection is initialized already."""
    process = await _start_agent(command, args, env, cwd)
    assert process.stdin is not None and process.stdout is not None
    negotiated: Negotiated | None = None
    try:
        negotiated = await negotiate(routes, process.stdout, process.stdin)
        yield negotiated
    finally:
        if negotiated is not None:
            await negotiated.connection.close()
        await _stop_agent(process, exit_timeout)
