"""The agent's and the client's end of a connection, without their typed proxies.

`connections.py` (generated: one typed proxy per method of the other side) subclasses `AgentSide`
and `ClientSide`. This module holds what is the same for every schema: how each end picks its
method tables and its handler, the protocol version check of `initialize` (from `_protocol.py`),
and serving or spawning an agent over stdio. `connections.py` re-exports its public names.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Final, TypeVar

from ._codec import encode_value
from ._protocol import (
    AGENT_CAPABILITIES,
    CLIENT_CAPABILITIES,
    INITIALIZE,
    PROTOCOL_VERSION,
    VERSION_FIELD,
    RequestError,
)
from .interfaces import Agent, Client, UnstableAgent, UnstableClient
from .methods import AGENT_METHODS, CLIENT_METHODS
from .rpc import (
    READ_CHUNK_BYTES,
    Connection,
    ConnectionLimits,
    LineReader,
    LineWriter,
    MessageObserver,
    MessageTransport,
    NonJsonLines,
    as_transport,
    memory_transports,
    stdio_streams,
)

if TYPE_CHECKING:
    from .connections import AgentSideConnection, ClientSideConnection
    from .telemetry import Tracing

__all__ = [
    "SUPPORTED_PROTOCOL_VERSIONS",
    "AgentSide",
    "ClientSide",
    "ProtocolVersionError",
    "check_protocol_version",
    "memory_pair",
    "negotiate_protocol_version",
    "run_agent",
    "spawn_agent",
]

P = TypeVar("P")
T = TypeVar("T")
# The connection class a `to_agent` / `to_client` factory receives: the subclass being built
# (`typing.Self` is Python 3.11+, and the package runs on 3.10 with the standard library only).
_A = TypeVar("_A", bound="AgentSide")
_C = TypeVar("_C", bound="ClientSide")

SUPPORTED_PROTOCOL_VERSIONS: Final[tuple[int, ...]] = tuple(
    v for v in (PROTOCOL_VERSION,) if v is not None
)
"""The `protocolVersion`s this package speaks."""


class ProtocolVersionError(ConnectionError):
    """The agent answered `initialize` with a protocol version this package does not speak."""


def negotiate_protocol_version(requested: object) -> int:
    """What an agent answers `initialize` with: the requested version if supported, else the latest
    supported one (the client then decides whether it can go on). A package built without a known
    protocol version raises RequestError (-32603): it never claims a version it does not know it speaks."""
    supported = SUPPORTED_PROTOCOL_VERSIONS
    if not supported:
        raise RequestError.internal_error(
            "this agent's ACP binding was generated without a protocol version, so it cannot negotiate one "
            "(rebuild it with --protocol-version N, the config key protocol_version, or the release's meta.json)"
        )
    if isinstance(requested, int) and not isinstance(requested, bool) and requested in supported:
        return requested
    return max(supported)


def check_protocol_version(answered: object) -> int:
    """The version an agent answered, if this package speaks it; else ProtocolVersionError."""
    supported = SUPPORTED_PROTOCOL_VERSIONS
    if (
        isinstance(answered, int)
        and not isinstance(answered, bool)
        and (answered in supported or not supported)
    ):
        return answered
    raise ProtocolVersionError(
        f"the agent answered initialize with protocolVersion {answered!r}, which this package does not "
        f"speak (it speaks {', '.join(map(str, supported))}); use a package generated for that version"
    )


def _params(cls: Callable[..., P], params: P | None, fields: dict[str, object]) -> P:
    """What a proxy sends: the params object, or one made from its fields given as keywords."""
    if params is None:
        return cls(**fields)
    if fields:
        raise TypeError(
            f"pass the params object or its fields as keywords, not both (got {sorted(fields)})"
        )
    return params


class AgentSide(Connection):
    """The agent's end: what the client sends goes to the `Agent`; the proxies call the client."""

    _peer_gates = CLIENT_CAPABILITIES
    _own_gates = AGENT_CAPABILITIES
    _interfaces = (Agent, UnstableAgent)

    def __init__(  # noqa: PYI019, RUF100
        self: _A,
        to_agent: Callable[[_A], Agent] | Agent,
        reader: LineReader | MessageTransport,
        writer: LineWriter | None = None,
        *,
        limits: ConnectionLimits | None = None,
        send_cancel_requests: bool = True,
        non_json_lines: NonJsonLines = "answer",
        observers: tuple[MessageObserver, ...] = (),
        check_capabilities: bool = True,
        tracing: Tracing | None = None,
    ) -> None:
        """`to_agent` is the agent, or a function that makes it from this connection (so it can call
        the client). Pass a reader and a writer (stdio, pipes), or a `MessageTransport` alone (as the
        ASGI app in `asgi.py` does). The options are `Connection`'s."""
        self.agent: Agent = to_agent if isinstance(to_agent, Agent) else to_agent(self)
        super().__init__(
            self.agent,
            AGENT_METHODS,
            CLIENT_METHODS,
            as_transport(reader, writer, limits),
            limits=limits,
            send_cancel_requests=send_cancel_requests,
            non_json_lines=non_json_lines,
            observers=observers,
            check_capabilities=check_capabilities,
            tracing=tracing,
        )


class ClientSide(Connection):
    """The client's end: what the agent sends goes to the `Client`; the proxies call the agent."""

    _peer_gates = AGENT_CAPABILITIES
    _own_gates = CLIENT_CAPABILITIES
    _interfaces = (Client, UnstableClient)

    def __init__(  # noqa: PYI019, RUF100
        self: _C,
        to_client: Callable[[_C], Client] | Client,
        reader: LineReader | MessageTransport,
        writer: LineWriter | None = None,
        *,
        limits: ConnectionLimits | None = None,
        send_cancel_requests: bool = True,
        non_json_lines: NonJsonLines = "skip",
        observers: tuple[MessageObserver, ...] = (),
        check_capabilities: bool = True,
        tracing: Tracing | None = None,
    ) -> None:
        """`to_client` is the client, or a function that makes it from this connection. Lines from
        the agent that are not JSON are skipped with a warning by default (`non_json_lines`)."""
        self.client: Client = to_client if isinstance(to_client, Client) else to_client(self)
        super().__init__(
            self.client,
            CLIENT_METHODS,
            AGENT_METHODS,
            as_transport(reader, writer, limits),
            limits=limits,
            send_cancel_requests=send_cancel_requests,
            non_json_lines=non_json_lines,
            observers=observers,
            check_capabilities=check_capabilities,
            tracing=tracing,
        )

    async def _call(self, method: str, params: object, decode: Callable[[object], T]) -> T:
        result = await super()._call(method, params, decode)
        if INITIALIZE and method == INITIALIZE:
            answered = encode_value(result)
            try:
                check_protocol_version(
                    answered.get(VERSION_FIELD) if isinstance(answered, dict) else None
                )
            except ProtocolVersionError:
                await (
                    self.close()
                )  # the spec: a client that cannot speak the answered version closes
                raise
        return result


async def run_agent(
    to_agent: Callable[[AgentSideConnection], Agent] | Agent,
    *,
    limits: ConnectionLimits | None = None,
    protect_stdout: bool = True,
    handle_signals: bool = True,
    observers: tuple[MessageObserver, ...] = (),
) -> None:
    """Serve one client on this process's stdin/stdout until the client closes stdin, or until
    SIGINT / SIGTERM (`handle_signals`), which close the connection and return without a traceback.

    `protect_stdout`: from here on `print()` and child processes write to stderr, and only the
    protocol writes to the real stdout. `limits`: see `ConnectionLimits`. `observers`: see
    `MessageObserver`.
    """
    from .connections import (
        AgentSideConnection,
    )  # it subclasses AgentSide: imported when first used

    reader, writer = await stdio_streams(protect_stdout=protect_stdout)
    connection = AgentSideConnection(to_agent, reader, writer, limits=limits, observers=observers)
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    closing: list[asyncio.Task[None]] = []
    if handle_signals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(
                    sig, lambda: closing.append(loop.create_task(connection.close()))
                )
            except (
                NotImplementedError,
                RuntimeError,
                ValueError,
            ):  # not the main thread, or Windows
                continue
            installed.append(sig)
    try:
        await connection.wait_closed()
        await asyncio.gather(*closing)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


async def _start_agent(
    command: str,
    args: tuple[str, ...],
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
) -> asyncio.subprocess.Process:
    """`command args...` with stdin and stdout piped to us (stderr inherited), read in chunks of
    READ_CHUNK_BYTES, in a process group of its own (so that `_stop_agent` reaches the processes
    it starts too): how `spawn_agent` and the router's `spawn_agent_negotiated` start an agent."""
    return await asyncio.create_subprocess_exec(
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        limit=READ_CHUNK_BYTES,
        start_new_session=True,
    )


def _signal_group(process: asyncio.subprocess.Process, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signum)  # its group id is its pid (a session of its own)
        elif process.returncode is None:
            process.kill()  # no process groups (Windows): the agent alone


async def _stop_agent(process: asyncio.subprocess.Process, exit_timeout: float) -> None:
    """End an agent `_start_agent` started, its stdin closed already: it gets `exit_timeout`
    seconds to exit, then SIGTERM and 3 seconds more, then SIGKILL. Whatever is left of its
    process group (children that hold its stdout, as npm launchers leave) is killed in every case,
    so that waiting for the process never waits on pipes it does not hold."""
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            process.stdin.close()
    kill = getattr(signal, "SIGKILL", signal.SIGTERM)
    for signum, timeout in ((None, exit_timeout), (signal.SIGTERM, 3.0), (kill, 5.0)):
        if signum is not None:
            _signal_group(process, signum)
        if await _exited(process, timeout):
            break
    _signal_group(process, kill)
    # The pipes' other ends are gone with the group: read stdout to its end so that the transport
    # closes while the loop runs (not later, as "Event loop is closed" noise). A process that left
    # the group may still hold it: a second at most.
    with contextlib.suppress(asyncio.TimeoutError, OSError):
        if process.stdout is not None:
            await asyncio.wait_for(_drain(process.stdout), 1.0)
        await asyncio.wait_for(process.wait(), 1.0)


async def _drain(reader: asyncio.StreamReader) -> None:
    while await reader.read(READ_CHUNK_BYTES):
        pass


async def _exited(process: asyncio.subprocess.Process, timeout: float) -> bool:
    """Whether the agent process itself exits within `timeout` seconds. Read off its return code:
    `Process.wait()` also waits for its pipes to close (Python 3.12+), which a child it left
    behind may hold open."""
    deadline = asyncio.get_running_loop().time() + timeout
    while process.returncode is None:
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


@contextlib.asynccontextmanager
async def spawn_agent(
    to_client: Callable[[ClientSideConnection], Client] | Client,
    command: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    exit_timeout: float = 0.5,
    limits: ConnectionLimits | None = None,
    non_json_lines: NonJsonLines = "skip",
    observers: tuple[MessageObserver, ...] = (),
) -> AsyncIterator[ClientSideConnection]:
    """Start `command args...` as an agent (its stderr is inherited) and connect to its stdio.

    The agent runs in a process group of its own. On exit its stdin is closed; it gets
    `exit_timeout` seconds to exit (default 0.5: agents exit at the end of their input; npm
    launchers that keep a child do not), then SIGTERM and 3 seconds more, then SIGKILL; what is left of
    its process group is killed in every case (no orphan keeps its pipes open).
    `limits`, `non_json_lines` and `observers` are `ClientSideConnection`'s.
    """
    from .connections import ClientSideConnection

    process = await _start_agent(command, args, env, cwd)
    assert process.stdin is not None and process.stdout is not None
    connection = ClientSideConnection(
        to_client,
        process.stdout,
        process.stdin,
        limits=limits,
        non_json_lines=non_json_lines,
        observers=observers,
    )
    try:
        yield connection
    finally:
        await connection.close()
        await _stop_agent(process, exit_timeout)


@contextlib.asynccontextmanager
async def memory_pair(
    to_agent: Callable[[AgentSideConnection], Agent] | Agent,
    to_client: Callable[[ClientSideConnection], Client] | Client,
    *,
    limits: ConnectionLimits | None = None,
    observers: tuple[MessageObserver, ...] = (),
) -> AsyncIterator[tuple[AgentSideConnection, ClientSideConnection]]:
    """An agent and a client connected in memory, for unit tests: yields (the agent's end, the
    client's end); call the agent through the second (`await client_end.initialize(...)`) and the
    client through the first. Messages are encoded, decoded and dispatched as over stdio (the same
    checks, the same order); nothing is spawned. Both ends are closed on exit. `observers` see the
    client end's messages (`MessageObserver`).

        async with memory_pair(lambda conn: MyAgent(conn), MyClient()) as (agent_end, client_end):
            await client_end.initialize(InitializeRequest(protocol_version=PROTOCOL_VERSION))
    """
    from .connections import AgentSideConnection, ClientSideConnection

    agent_transport, client_transport = memory_transports()
    agent_end = AgentSideConnection(to_agent, agent_transport, limits=limits)
    client_end = ClientSideConnection(
        to_client, client_transport, limits=limits, observers=observers
    )
    try:
        yield agent_end, client_end
    finally:
        await client_end.close()
        await agent_end.close()
