"""Drive an agent process over stdio at the JSON-RPC level, seeing every byte it writes.

Unlike the generated runtime (which hides bad lines and answers for you), the harness keeps each
line the agent wrote, decodes it with an `Observer`, and lets a script send anything, including
lines that are not JSON. Requests the agent sends are answered by `on_request`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from acpgen.kit.observe import TO_AGENT, TO_CLIENT, Observation, Observer, id_key

READ_CHUNK = 1 << 16
STDERR_KEEP = 16 * 1024


class Timeout(Exception):
    """The agent did not answer in time."""


class Closed(Exception):
    """The agent's stdout ended (it exited or closed it) before the answer."""


class WrongId(Closed):
    """An answer arrived with an id no request carries while one was awaited."""


Handler = Callable[["AgentProcess", Observation], Awaitable[tuple[object, dict[str, Any] | None]]]
"""Answers an agent's request: (result, None) or (None, error object)."""


@dataclass
class Received:
    """Everything the agent wrote, in order."""

    observations: list[Observation] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)


class AgentProcess:
    """One running agent: send messages, await answers, collect notifications."""

    def __init__(self, observer: Observer, on_request: Handler, timeout: float) -> None:
        self.observer = observer
        self.on_request = on_request
        self.timeout = timeout
        self.proc: asyncio.subprocess.Process | None = None
        self.received = Received()
        self.waiters: dict[str, asyncio.Future[Observation]] = {}
        self.changed = asyncio.Event()
        self.next_id = 1
        self.stderr_tail = bytearray()
        self.stdout_closed = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []
        self.on_line: Callable[[str, bytes], None] | None = None
        self.orphans: list[Observation] = []
        self.strays: list[Observation] = []
        """Answers with id null or "" that no request awaited: what an agent sends when it answers a
        notification (JSON-RPC forbids it). Kept apart from `orphans`, so they never end a wait."""
        self.other_version: int | None = None
        """Set when the agent answered initialize in another protocol version than the observer's."""

    async def start(self, command: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env={**os.environ, **(env or {})}, cwd=cwd,
            start_new_session=True,  # its own process group: its children end with it
        )
        loop = asyncio.get_running_loop()
        self.tasks = [loop.create_task(self.read_stdout()), loop.create_task(self.read_stderr())]

    # -- sending ---------------------------------------------------------------------------------

    async def send_raw(self, line: bytes) -> None:
        """Write one line as is (it should end with a newline)."""
        assert self.proc is not None and self.proc.stdin is not None
        if self.on_line is not None:
            self.on_line(TO_AGENT, line.rstrip(b"\n"))
        try:
            self.proc.stdin.write(line)
            await self.proc.stdin.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise Closed(f"the agent stopped reading its stdin: {exc}") from exc

    async def send(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        self.observer.feed(TO_AGENT, text)
        await self.send_raw(text.encode("utf-8") + b"\n")

    async def notify(self, method: str, params: object) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def new_id(self) -> int:
        value = self.next_id
        self.next_id += 1
        return value

    def expect(self, request_id: object) -> asyncio.Future[Observation]:
        """A future for the next answer carrying this id (such as null after a malformed line)."""
        future: asyncio.Future[Observation] = asyncio.get_running_loop().create_future()
        self.waiters[id_key(request_id)] = future
        return future

    async def start_request(self, method: str, params: object, request_id: object = None) -> asyncio.Future[Observation]:
        """Send a request; the future resolves with the observation of its answer."""
        rid = self.new_id() if request_id is None else request_id
        future: asyncio.Future[Observation] = asyncio.get_running_loop().create_future()
        self.waiters[id_key(rid)] = future
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return future

    async def wait_answer(self, future: asyncio.Future[Observation], what: str, timeout: float | None = None) -> Observation:
        orphans = len(self.orphans)
        await self.wait_for(lambda: future.done() or len(self.orphans) > orphans, timeout or self.timeout)
        if future.done():
            return future.result()
        if len(self.orphans) > orphans:
            stray = self.orphans[orphans]
            raise WrongId(f"waiting for the answer to {what}, got one with id {stray.id!r}, which no request carries")
        if self.stdout_closed.is_set():
            raise Closed(f"the agent closed its stdout before answering {what}{self.exit_note()}")
        raise Timeout(f"no answer to {what} within {timeout or self.timeout:g} s")

    async def request(self, method: str, params: object, request_id: object = None,
                      timeout: float | None = None) -> Observation:
        future = await self.start_request(method, params, request_id)
        return await self.wait_answer(future, method, timeout)

    def exit_note(self) -> str:
        if self.proc is not None and self.proc.returncode is not None:
            return f" (it exited with status {self.proc.returncode})"
        return ""

    # -- receiving -------------------------------------------------------------------------------

    async def read_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        buffer = bytearray()
        try:
            while True:
                chunk = await self.proc.stdout.read(READ_CHUNK)
                if not chunk:
                    break
                buffer += chunk
                while (end := buffer.find(b"\n")) >= 0:
                    line = bytes(buffer[:end])
                    del buffer[: end + 1]
                    await self.line(line)
            if buffer.strip():
                await self.line(bytes(buffer))
        finally:
            self.stdout_closed.set()
            self.changed.set()

    async def read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(READ_CHUNK):
            self.stderr_tail += chunk
            del self.stderr_tail[:-STDERR_KEEP]

    async def line(self, line: bytes) -> None:
        if self.on_line is not None:
            self.on_line(TO_CLIENT, line)
        if not line.strip():
            return
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            self.received.noise.append(repr(line[:200]))
            return
        for obs in self.observer.feed(TO_CLIENT, text):
            self.received.observations.append(obs)
            if obs.kind == "invalid" and not isinstance(obs.message, (dict, list)):
                self.received.noise.append(text[:200])
            if obs.kind in ("response", "error") or (obs.kind == "invalid" and isinstance(obs.message, dict)):
                future = self.waiters.pop(id_key(obs.id), None)
                if future is not None and not future.done():
                    future.set_result(obs)
                elif obs.id is None or obs.id == "":
                    self.strays.append(obs)
                else:
                    self.orphans.append(obs)
            elif obs.kind == "request":
                asyncio.get_running_loop().create_task(self.answer(obs))
        self.changed.set()

    async def answer(self, obs: Observation) -> None:
        try:
            result, error = await self.on_request(self, obs)
        except Exception as exc:  # the script failed: still answer, so the agent is not stuck
            result, error = None, {"code": -32603, "message": f"conform script error: {exc}"}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": obs.id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        with contextlib.suppress(Closed):
            await self.send(message)

    async def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until predicate() holds (checked after every received line) or the timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0 or self.stdout_closed.is_set():
                return predicate()
            self.changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.changed.wait(), remaining)
        return True

    # -- ending ----------------------------------------------------------------------------------

    async def close_stdin(self, wait: float) -> int | None:
        """Close the agent's stdin and wait for it to exit; None if it did not within `wait` s."""
        assert self.proc is not None and self.proc.stdin is not None
        with contextlib.suppress(Exception):
            self.proc.stdin.close()
        try:
            return await asyncio.wait_for(self.proc.wait(), wait)
        except asyncio.TimeoutError:
            return None

    async def kill(self) -> None:
        if self.proc is not None:
            # the whole group, also when the agent itself has exited but left children behind
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), 5)
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    def stderr_text(self) -> str:
        return bytes(self.stderr_tail).decode("utf-8", "replace")
