"""Servers, peers and a schema checker for the remote-transport tests (loopback only, bounded).

`serving(app, "uvicorn" | "hypercorn")` runs an ASGI app in this event loop on 127.0.0.1 with an
ephemeral port and stops it when the block ends. `WireCheck` validates every JSON-RPC message a tap
sees against the v1 schema, pairing each response with the request it answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
from collections.abc import AsyncIterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "tests" / "peers"))

import acp_v1  # noqa: E402
from acp_v1.methods import METHODS  # noqa: E402

SERVE_TIMEOUT_S = 10.0


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    return sock


@contextlib.asynccontextmanager
async def serving(app: Any, server: str, certfile: Path | None = None, keyfile: Path | None = None,
                  **hypercorn_config: Any) -> AsyncIterator[int]:
    """Serve `app` with Uvicorn or Hypercorn on 127.0.0.1:<ephemeral> (TLS with a certificate;
    `hypercorn_config` sets Hypercorn's Config attributes); yields the port."""
    sock = _listening_socket()
    port = sock.getsockname()[1]
    stop = asyncio.Event()
    if server == "uvicorn":
        import uvicorn

        tls = {"ssl_certfile": str(certfile), "ssl_keyfile": str(keyfile)} if certfile else {}
        config = uvicorn.Config(app, log_level="warning", lifespan="on", ws="websockets-sansio", **tls)
        instance = uvicorn.Server(config)
        instance.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        task = asyncio.ensure_future(instance.serve(sockets=[sock]))
        for _ in range(200):
            if instance.started or task.done():
                break
            await asyncio.sleep(0.025)
    else:
        from hypercorn.asyncio import serve
        from hypercorn.config import Config

        config = Config()
        config.bind = [f"fd://{sock.detach()}"]
        config.loglevel = "WARNING"
        config.accesslog = None
        config.graceful_timeout = 1.0
        if certfile:
            config.certfile, config.keyfile = str(certfile), str(keyfile)
        for name, value in hypercorn_config.items():
            assert hasattr(config, name), name
            setattr(config, name, value)
        task = asyncio.ensure_future(serve(app, config, shutdown_trigger=stop.wait))
        await asyncio.sleep(0.2)
    try:
        assert not task.done(), f"{server} did not start: {task.exception() if task.done() else ''}"
        yield port
    finally:
        if server == "uvicorn":
            instance.should_exit = True
        stop.set()
        try:
            await asyncio.wait_for(task, SERVE_TIMEOUT_S)
        except asyncio.TimeoutError:
            task.cancel()
        with contextlib.suppress(OSError):
            sock.close()


@cache
def _schema() -> dict[str, Any]:
    return json.loads((ROOT / "schema" / "v1" / "schema.unstable.json").read_text())


@cache
def _validator(name: str) -> Any:
    schema = _schema()
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    return jsonschema.Draft202012Validator(root)


BY_WIRE = {info.method: info for info in METHODS}


class WireCheck:
    """Validates messages against the schema; a response is checked against the result type of the
    request it answers (requests are remembered per connection and direction)."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.count = 0
        self.methods: list[str] = []
        self._asked: dict[tuple[str, str, str], str] = {}

    def tap(self, connection: str, direction: str, data: bytes) -> None:
        self.count += 1
        try:
            message = json.loads(data)
        except ValueError as exc:
            self.problems.append(f"{direction}: not JSON: {exc}")
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.problems.append(f"{direction}: not a JSON-RPC 2.0 object: {data[:200]!r}")
            return
        method = message.get("method")
        if isinstance(method, str):
            self.methods.append(method)
            info = BY_WIRE.get(method)
            if info is None:
                self.problems.append(f"{direction}: unknown method {method!r}")
                return
            if "id" in message:
                self._asked[(connection, direction, json.dumps(message["id"]))] = method
            self._check(info.params_def, message.get("params"), f"{direction} {method} params")
            return
        asked = self._asked.pop((connection, "out" if direction == "in" else "in", json.dumps(message.get("id"))), None)
        if "error" in message:
            error = message["error"]
            if not (isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str)):
                self.problems.append(f"{direction}: malformed error {error!r}")
            return
        if asked is None:
            self.problems.append(f"{direction}: response to an unknown request {message.get('id')!r}")
            return
        result_def = BY_WIRE[asked].result_def
        if result_def is not None:
            self._check(result_def, message.get("result"), f"{direction} {asked} result")

    def _check(self, name: str, value: Any, where: str) -> None:
        errors = sorted(_validator(name).iter_errors(value), key=lambda e: list(e.path))
        for error in errors[:3]:
            self.problems.append(f"{where}: {error.message[:300]} at {list(error.path)}")


class Recorder:
    """An ASGI middleware that records each request's method, path and headers."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, str, dict[str, str], str]] = []
        self.peers: list[tuple[str, object]] = []  # (method, the client's address: its TCP connection)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
            self.requests.append((scope.get("method", "WS"), scope["path"], headers, scope.get("http_version", "")))
            self.peers.append((scope.get("method", "WS"), tuple(scope.get("client") or ())))
        await self.app(scope, receive, send)


def agent_factory(pause: float = 0.05, sessions: dict[str, Any] | None = None) -> Any:
    """Our example agent (examples/agent.py), one per connection."""
    import agent as example

    example.PAUSE_S = pause
    return lambda conn: example.ExampleAgent(conn, sessions)


def readme_dir(tmp_path: Path) -> str:
    (tmp_path / "README.md").write_text("# remote\nhello over the wire\n", encoding="utf-8")
    return str(tmp_path)


__all__ = ["WireCheck", "acp_v1", "serving"]
