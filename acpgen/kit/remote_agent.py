"""Drive a remote agent (WebSocket or Streamable HTTP, the ACP transports RFD) at the JSON-RPC
level, as `AgentProcess` drives one over stdio.

The transports are the generated package's own (`<binding>.remote`): the WebSocket one carries a
text frame per message; the Streamable HTTP one POSTs each message and reads the agent's on SSE
streams (one per connection, one per session). Every `start` is a new connection, which the RFD
serves with a new agent connection; closing it is what ending stdin is for a process."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from acpgen.kit.bindings import Binding
from acpgen.kit.harness import AgentProcess, Closed, Handler
from acpgen.kit.observe import TO_AGENT, Observer

SCHEMES = ("ws", "wss", "http", "https")


def is_url(text: str) -> bool:
    return text.split(":", 1)[0].lower() in SCHEMES and "://" in text


class NotSendable(Closed):
    """The transport cannot carry this line (Streamable HTTP POSTs JSON bodies only)."""


@dataclass(frozen=True)
class RemoteOptions:
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    http2: bool = True
    """Streamable HTTP over HTTP/2 as the RFD asks (prior knowledge over http://); False for an
    HTTP/1.1-only server."""

    @property
    def profile(self) -> str:
        return "WebSocket" if self.url.lower().startswith("ws") else "Streamable HTTP"


async def reachable(url: str, timeout: float) -> None:
    """Raise `Closed` (saying why) when nothing accepts a TCP connection at the URL's host and port."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme.lower() in ("https", "wss") else 80)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, port), timeout)
    except (OSError, asyncio.TimeoutError) as exc:
        raise Closed(f"cannot connect to {url}: {exc or 'timed out'}") from None
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()


class RemoteAgent(AgentProcess):
    """One connection to a remote agent: send messages, await answers, collect notifications."""

    def __init__(self, observer: Observer, on_request: Handler, timeout: float, binding: Binding,
                 options: RemoteOptions) -> None:
        super().__init__(observer, on_request, timeout)
        self.binding = binding
        self.options = options
        self.transport: Any = None
        self.closed_by_us = False

    async def start(self, command: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        remote = importlib.import_module(f"{self.binding.module.__name__}.remote")
        url, headers = self.options.url, dict(self.options.headers)
        try:
            if url.lower().startswith("ws"):
                websockets = remote._require("websockets", "websockets", "conform agent over WebSocket")
                client = importlib.import_module("websockets.asyncio.client")
                socket = await client.connect(url, additional_headers=headers, open_timeout=self.timeout,
                                              max_size=remote.MAX_MESSAGE_BYTES, compression=None)
                self.transport = remote._WebSocketTransport(socket, websockets.ConnectionClosed)
            else:
                httpx = remote._require("httpx", "httpx[http2]", "conform agent over Streamable HTTP")
                if self.options.http2:
                    remote._require("h2", "httpx[http2]", "conform agent over HTTP/2")
                http2 = self.options.http2
                http1 = not (http2 and url.lower().startswith("http:"))
                timeout = httpx.Timeout(self.timeout, read=None)

                def open_client() -> Any:
                    return httpx.AsyncClient(http2=http2, http1=http1, timeout=timeout)

                self.transport = remote._HttpTransport(open_client, url, headers, remote.MAX_MESSAGE_BYTES)
        except ImportError as exc:
            raise Closed(str(exc)) from None
        except Exception as exc:  # a refused upgrade, no server: the run cannot start
            raise Closed(f"cannot connect to {url}: {exc}") from None
        self.tasks = [asyncio.get_running_loop().create_task(self.read_messages())]

    async def read_messages(self) -> None:
        try:
            while True:
                try:
                    data = await self.transport.receive()
                except Exception as exc:  # FrameError (an oversized event) or a broken stream
                    self.received.noise.append(f"transport: {exc}"[:200])
                    continue
                if data is None:
                    break
                await self.line(data)
        finally:
            self.stdout_closed.set()
            self.changed.set()

    async def send_raw(self, line: bytes) -> None:
        data = line.rstrip(b"\n")
        if self.on_line is not None:
            self.on_line(TO_AGENT, data)
        if self.options.profile != "WebSocket":
            try:
                json.loads(data)
            except ValueError:
                raise NotSendable("Streamable HTTP carries JSON bodies only: a malformed line cannot be sent") from None
        try:
            await self.transport.send(data)
        except Exception as exc:
            raise Closed(f"the connection to {self.options.url} failed: {exc}") from None

    def exit_note(self) -> str:
        return ""

    async def close_stdin(self, wait: float) -> int | None:
        """End the connection (the remote counterpart of closing stdin)."""
        await self.close()
        return 0

    async def close(self) -> None:
        if self.closed_by_us or self.transport is None:
            return
        self.closed_by_us = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.transport.aclose(), 5)

    async def kill(self) -> None:
        await self.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    def stderr_text(self) -> str:
        return ""
