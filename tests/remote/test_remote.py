"""Remote transports (asgi.py, remote.py of acp_v1): our agent served by Uvicorn and Hypercorn on
loopback, driven by our client and by the official Python SDK's WebSocket and Streamable HTTP
clients; our client against the SDK's ASGI app. Every message our app passes is validated against
the v1 schema (WireCheck); the SDK validates what it receives with its own pydantic models."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.remote_support import Recorder, WireCheck, acp_v1, agent_factory, readme_dir, serving

TURN_S = 20.0
FULL_TURN = ["agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]


def our_app(check: WireCheck | None = None, **options: Any) -> acp_v1.AcpApp:
    return acp_v1.AcpApp(agent_factory(options.pop("pause", 0.05), options.pop("sessions", None)),
                         tap=check.tap if check else None, **options)


def init_request() -> Any:
    return acp_v1.InitializeRequest(
        protocol_version=1,
        client_capabilities=acp_v1.ClientCapabilities(fs=acp_v1.FileSystemCapabilities(read_text_file=True)),
        client_info=acp_v1.Implementation(name="test-client", version="0"),
    )


async def our_turn(url: str, cwd: str, *, cancel: bool = False, **connect: Any) -> dict[str, Any]:
    """initialize, session/new and one prompt turn with examples/client.py's client, over `url`."""
    import client as example_client

    peer = example_client.ExampleClient(cancel=cancel, echo=False)
    async with acp_v1.connect_agent(lambda conn: peer, url, **connect) as conn:
        peer.conn = conn
        init = await conn.initialize(init_request())
        session = await conn.session_new(acp_v1.NewSessionRequest(cwd=cwd, mcp_servers=[]))
        result = await conn.session_prompt(
            acp_v1.PromptRequest(session_id=session.session_id, prompt=[acp_v1.TextContentBlock(text="read README.md")])
        )
    return {"protocol": init.protocol_version, "stopReason": str(acp_v1.encode(result.stop_reason)),
            "updates": peer.updates, "permissions": peer.permission_requests, "reads": peer.reads,
            "session": session.session_id}


def url(port: int, profile: str) -> str:
    return f"{'ws' if profile == 'ws' else 'http'}://127.0.0.1:{port}/acp"


# (server, profile): WebSocket under Uvicorn, HTTP/2 (h2c) and WebSocket under Hypercorn.
SERVED = [("uvicorn", "ws"), ("hypercorn", "http"), ("hypercorn", "ws")]


@pytest.mark.parametrize(("server", "profile"), SERVED)
def test_our_client_and_agent_complete_a_turn(server: str, profile: str, tmp_path: Path) -> None:
    check = WireCheck()

    async def main() -> dict[str, Any]:
        recorder = Recorder(our_app(check))
        async with serving(recorder, server) as port:
            summary = await asyncio.wait_for(our_turn(url(port, profile), readme_dir(tmp_path)), TURN_S)
        summary["http_versions"] = {v for _, _, _, v in recorder.requests}
        return summary

    summary = asyncio.run(main())
    assert summary["stopReason"] == "end_turn"
    assert summary["updates"] == FULL_TURN
    assert summary["permissions"] == 1
    assert [Path(p).name for p in summary["reads"]] == ["README.md"]
    if profile == "http":
        assert summary["http_versions"] == {"2"}  # Streamable HTTP over HTTP/2, as the RFD requires
    assert check.problems == []
    assert check.count >= 12


@pytest.mark.parametrize("tapped", [False, True])
def test_our_http_client_routes_what_it_sends_without_parsing_it_again(
    tapped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runtime hands the Streamable HTTP transport each message parsed (`send_message`), with
    a tap too: `send`, which parses the bytes, is never reached, and the turn (a session-scoped
    prompt and an answer to the agent's permission request) is routed as before."""
    from acp_v1 import remote

    sent: list[Any] = []

    async def refuse(self: Any, data: bytes) -> None:
        raise AssertionError("send parsed a message the runtime had parsed")

    original = remote._HttpTransport.send_message

    async def record(self: Any, data: bytes, message: Any) -> None:
        sent.append(message)
        await original(self, data, message)

    monkeypatch.setattr(remote._HttpTransport, "send", refuse)
    monkeypatch.setattr(remote._HttpTransport, "send_message", record)
    taps: list[str] = []

    async def main() -> dict[str, Any]:
        async with serving(our_app(), "hypercorn") as port:
            options = {"tap": lambda direction, data: taps.append(direction)} if tapped else {}
            return await asyncio.wait_for(our_turn(url(port, "http"), readme_dir(tmp_path), **options), TURN_S)

    summary = asyncio.run(main())
    assert summary["stopReason"] == "end_turn" and summary["permissions"] == 1
    assert [m.get("method") for m in sent][:3] == ["initialize", "session/new", "session/prompt"]
    assert any("result" in m for m in sent)  # the answer to session/request_permission
    assert (taps.count("out") == len(sent)) if tapped else taps == []


async def turns_on_one_connection(url: str, cwd: str, turns: int) -> list[str]:
    """initialize, session/new, then `turns` prompt turns (each also answers a permission request)."""
    import client as example_client

    peer = example_client.ExampleClient(cancel=False, echo=False)
    stops = []
    async with acp_v1.connect_agent(lambda conn: peer, url) as conn:
        peer.conn = conn
        await conn.initialize(init_request())
        session = await conn.session_new(acp_v1.NewSessionRequest(cwd=cwd, mcp_servers=[]))
        for _ in range(turns):
            result = await conn.session_prompt(acp_v1.PromptRequest(
                session_id=session.session_id, prompt=[acp_v1.TextContentBlock(text="read README.md")]))
            stops.append(str(acp_v1.encode(result.stop_reason)))
    return stops


@pytest.mark.parametrize("posts_per_connection", [3, 1000])
def test_posts_move_to_a_new_connection_before_the_servers_request_limit(
    posts_per_connection: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hypercorn ends an HTTP/2 connection after keep_alive_max_requests (1000 by default) with a
    # GOAWAY naming the request that reached the limit, which it then cannot answer. The client
    # moves its POSTs to a new connection every POSTS_PER_CONNECTION: here every 3 against a limit
    # of 5. Without that (1000), the POST past the limit fails and ends the connection.
    monkeypatch.setattr(importlib.import_module("acp_v1.remote"), "POSTS_PER_CONNECTION", posts_per_connection)

    async def main() -> list[str]:
        recorder = Recorder(our_app(pause=0))
        async with serving(recorder, "hypercorn", keep_alive_max_requests=5) as port:
            return await asyncio.wait_for(turns_on_one_connection(url(port, "http"), readme_dir(tmp_path), 6), TURN_S)

    if posts_per_connection > 5:
        with pytest.raises(acp_v1.ConnectionClosedError, match=r"POST \S+ failed"):
            asyncio.run(main())
    else:
        assert asyncio.run(main()) == ["end_turn"] * 6  # 14 POSTs: initialize, session/new, 6 prompts, 6 permissions


def test_posts_on_new_connections_reach_the_sdk_agent_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The SDK's app keys a connection by its header, not by the TCP connection a POST comes on.
    import py_agent
    from acp.http.asgi import create_asgi_app

    py_agent.CANCEL_WINDOW_S = 0.2
    monkeypatch.setattr(importlib.import_module("acp_v1.remote"), "POSTS_PER_CONNECTION", 2)

    recorder = Recorder(create_asgi_app(lambda conn: py_agent.PeerAgent()))

    async def main() -> list[str]:
        async with serving(recorder, "hypercorn") as port:
            return await asyncio.wait_for(turns_on_one_connection(url(port, "http"), readme_dir(tmp_path), 3), TURN_S)

    assert asyncio.run(main()) == ["end_turn"] * 3
    posts = [peer for method, peer in recorder.peers if method == "POST"]
    assert len(posts) >= 8 and len(set(posts)) == (len(posts) + 1) // 2  # two POSTs per TCP connection


def test_posts_on_new_connections_reach_the_sdk1_agent_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.import_module("acp_v1.remote"), "POSTS_PER_CONNECTION", 2)
    with sdk1_agent("hypercorn", 0.2) as port:
        stops = asyncio.run(asyncio.wait_for(turns_on_one_connection(url(port, "http"), readme_dir(tmp_path), 3), TURN_S))
    assert stops == ["end_turn"] * 3


def test_serve_agent_lets_a_connection_carry_any_number_of_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    # For clients that keep one HTTP/2 connection (the SDK's): Hypercorn's own limit is 1000.
    import hypercorn.asyncio

    seen: list[Any] = []

    async def serve(app: Any, config: Any) -> None:
        seen.append(config)

    asgi = importlib.import_module("acp_v1.asgi")
    monkeypatch.setattr(hypercorn.asyncio, "serve", serve)
    monkeypatch.setattr(asgi, "_hypercorn_declines_deflate", lambda: None)
    acp_v1.serve_agent(agent_factory(), port=0, server="hypercorn")
    assert len(seen) == 1 and seen[0].keep_alive_max_requests >= 2**31


async def concurrent_turns(url: str, cwd: str, sessions: int) -> list[str]:
    """One connection, `sessions` sessions prompted at once; each turn asks a permission and reads a
    file, so the agent waits on answers to requests it sent on every session's stream."""
    import client as example_client

    peer = example_client.ExampleClient(cancel=False, echo=False)
    async with acp_v1.connect_agent(lambda conn: peer, url) as conn:
        peer.conn = conn
        await conn.initialize(init_request())
        ids = [(await conn.session_new(cwd=cwd, mcp_servers=[])).session_id for _ in range(sessions)]
        results = await asyncio.gather(*(conn.session_prompt(
            session_id=i, prompt=[acp_v1.TextContentBlock(text="read README.md")]) for i in ids))
    assert peer.permission_requests == sessions
    return [str(acp_v1.encode(r.stop_reason)) for r in results]


@pytest.mark.parametrize(("server", "profile"), SERVED)
def test_sessions_prompted_at_once_on_one_connection_all_end(server: str, profile: str, tmp_path: Path) -> None:
    """Over Streamable HTTP every SSE stream has its own HTTP/2 connection: when they shared one,
    httpx's read lock left a stream's events unread while another stream's reader waited on the
    socket, and these turns stalled on 10 runs in 10."""

    async def main() -> list[list[str]]:
        recorder = Recorder(our_app())
        async with serving(recorder, server) as port:
            runs = [await asyncio.wait_for(concurrent_turns(url(port, profile), readme_dir(tmp_path), 3), TURN_S)
                    for _ in range(3)]
        if profile == "http":
            assert {v for _, _, _, v in recorder.requests} == {"2"}
        return runs

    assert asyncio.run(main()) == [["end_turn"] * 3] * 3


def test_concurrent_turns_while_posts_move_between_connections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every POST on a new connection: prompts still waiting for their turn keep the connections
    # they came on (closed once answered) while permission answers go out on new ones.
    monkeypatch.setattr(importlib.import_module("acp_v1.remote"), "POSTS_PER_CONNECTION", 1)

    async def main() -> list[str]:
        recorder = Recorder(our_app())
        async with serving(recorder, "hypercorn") as port:
            stops = await asyncio.wait_for(concurrent_turns(url(port, "http"), readme_dir(tmp_path), 3), TURN_S)
        posts = [peer for method, peer in recorder.peers if method == "POST"]
        assert len(set(posts)) == len(posts)  # one TCP connection each
        return stops

    assert asyncio.run(main()) == ["end_turn"] * 3


# -- the official Python SDK (agent-client-protocol[http] 0.12.1) as the other end -----------------


async def sdk_turn(transport: Any, cwd: str, *, cancel: bool = False) -> dict[str, Any]:
    """tests/peers/py_client.py's client over an SDK remote transport: initialize, session/new, a turn."""
    import py_client
    from acp import connect_to_agent, schema, text_block

    summary: dict[str, Any] = {"stopReason": None, "updates": [], "permissionRequests": 0, "fsReads": [], "errors": []}
    log = py_client.SdkErrorLog(summary["errors"])  # what the SDK failed to validate, it logs
    logging.getLogger().addHandler(log)
    peer = py_client.PeerClient(summary, cancel)
    conn = connect_to_agent(peer, transport)
    peer.conn = conn
    try:
        caps = schema.ClientCapabilities(fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True))
        init = await conn.initialize(1, caps, schema.Implementation(name="py_client", version="0"))
        assert init.protocol_version == 1
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("read README.md")])
        summary["stopReason"] = response.stop_reason
    finally:
        await conn.close()
        logging.getLogger().removeHandler(log)
    return summary


async def sdk_transport(profile: str, port: int) -> Any:
    if profile == "ws":
        from acp.ws import create_websocket_stream

        return await create_websocket_stream(url(port, "ws"))
    import httpx
    from acp.http import create_http_stream

    # HTTP/2 with prior knowledge over cleartext (h2c), which Hypercorn serves.
    client = httpx.AsyncClient(http1=False, http2=True, timeout=httpx.Timeout(10.0, read=None))
    return create_http_stream(url(port, "http"), client=client)


# The SDK's WebSocket client against Uvicorn, its Streamable HTTP client against Hypercorn (HTTP/2).
SDK_CLIENTS = [("uvicorn", "ws"), ("hypercorn", "http")]


@pytest.mark.parametrize("cancel", [False, True], ids=["full", "cancelled"])
@pytest.mark.parametrize(("server", "profile"), SDK_CLIENTS)
def test_sdk_client_drives_our_agent(server: str, profile: str, cancel: bool, tmp_path: Path) -> None:
    check = WireCheck()

    async def main() -> tuple[dict[str, Any], set[str]]:
        recorder = Recorder(our_app(check, pause=1.0 if cancel else 0.05))
        async with serving(recorder, server) as port:
            transport = await sdk_transport(profile, port)
            summary = await asyncio.wait_for(sdk_turn(transport, readme_dir(tmp_path), cancel=cancel), TURN_S)
        return summary, {v for _, _, _, v in recorder.requests}

    summary, versions = asyncio.run(main())
    assert summary["errors"] == []
    if cancel:
        assert summary["stopReason"] == "cancelled"
        assert summary["updates"] == ["agent_message_chunk"]
        assert summary["fsReads"] == []
        assert "session/cancel" in check.methods
    else:
        assert summary["stopReason"] == "end_turn"
        assert summary["updates"] == FULL_TURN
        assert summary["permissionRequests"] == 1
        assert [Path(p).name for p in summary["fsReads"]] == ["README.md"]
    if profile == "http":
        assert versions == {"2"}
    assert check.problems == []


@pytest.mark.parametrize("cancel", [False, True], ids=["full", "cancelled"])
@pytest.mark.parametrize(("server", "profile"), SDK_CLIENTS)
def test_our_client_drives_the_sdk_agent(server: str, profile: str, cancel: bool, tmp_path: Path) -> None:
    import py_agent
    from acp.http.asgi import create_asgi_app

    check = WireCheck()
    py_agent.CANCEL_WINDOW_S = 1.0 if cancel else 0.2

    async def main() -> dict[str, Any]:
        async with serving(create_asgi_app(lambda conn: py_agent.PeerAgent()), server) as port:
            return await asyncio.wait_for(
                our_turn(url(port, profile), readme_dir(tmp_path), cancel=cancel, tap=lambda d, m: check.tap("c", d, m)),
                TURN_S,
            )

    summary = asyncio.run(main())
    if cancel:
        assert summary["stopReason"] == "cancelled"
        assert summary["updates"] == ["agent_message_chunk"]
        assert summary["reads"] == []
    else:
        assert summary["stopReason"] == "end_turn"
        assert summary["updates"] == FULL_TURN
        assert summary["permissions"] == 1
        assert [Path(p).name for p in summary["reads"]] == ["README.md"]
    assert check.problems == []
    assert check.count >= 6


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (made with the openssl command)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed: no certificate to serve TLS with")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.mark.parametrize("scheme", ["https", "wss"])
def test_tls_through_the_servers_own_options(scheme: str, certificate: tuple[Path, Path], tmp_path: Path) -> None:
    cert, key = certificate
    trusted = ssl.create_default_context(cafile=str(cert))

    async def main() -> tuple[dict[str, Any], set[str]]:
        recorder = Recorder(our_app())
        async with serving(recorder, "hypercorn", cert, key) as port:
            address = f"{scheme}://127.0.0.1:{port}/acp"
            with pytest.raises(ConnectionError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
                await our_turn(address, readme_dir(tmp_path))  # not trusted by default: refused
            summary = await our_turn(address, readme_dir(tmp_path), ssl_context=trusted)
        return summary, {v for _, _, _, v in recorder.requests}

    summary, versions = asyncio.run(asyncio.wait_for(main(), TURN_S))
    assert summary["stopReason"] == "end_turn"
    if scheme == "https":
        assert versions == {"2"}  # HTTP/2 negotiated by ALPN


MISSING = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
sys.modules[sys.argv[2]] = None  # as if the package were not installed
import acp_v1

async def main():
    async with acp_v1.connect_agent(acp_v1.Client(), sys.argv[3]):
        pass

try:
    asyncio.run(main())
except ImportError as exc:
    print(exc)
"""


@pytest.mark.parametrize(("module", "address", "hint"), [
    ("websockets", "ws://127.0.0.1:9/acp", "pip install 'websockets'"),
    ("httpx", "http://127.0.0.1:9/acp", "pip install 'httpx[http2]'"),
    ("h2", "http://127.0.0.1:9/acp", "pip install 'httpx[http2]'"),
])
def test_a_missing_optional_package_is_named(module: str, address: str, hint: str) -> None:
    generated = str(Path(acp_v1.__file__).parent.parent)
    out = subprocess.run([sys.executable, "-c", MISSING, generated, module, address],
                         capture_output=True, text=True, timeout=60)
    assert hint in out.stdout and "Traceback" not in out.stderr, (out.stdout, out.stderr)


# -- the official Python SDK 1.0.0rc3's remote clients (.venv-sdk1: httpx2, websockets 17) -----------


@pytest.mark.parametrize("cancel", [False, True], ids=["full", "cancelled"])
@pytest.mark.parametrize(("server", "profile"), [("uvicorn", "ws"), ("hypercorn", "http"), ("hypercorn", "ws")])
def test_sdk1_remote_client_drives_our_agent(server: str, profile: str, cancel: bool, tmp_path: Path) -> None:
    import json

    from tests.interop.test_interop import PEERS, SDK1_PYTHON

    if not SDK1_PYTHON.exists():
        pytest.fail("the Python SDK 1.0 is not installed: run `bash scripts/install-test-peers.sh`")
    check = WireCheck()

    async def main() -> tuple[int, str, str, set[str]]:
        recorder = Recorder(our_app(check, pause=1.0 if cancel else 0.05))
        async with serving(recorder, server) as port:
            proc = await asyncio.create_subprocess_exec(
                str(SDK1_PYTHON), str(PEERS / "py_remote_client.py"), *(["--cancel"] if cancel else []),
                "--cwd", readme_dir(tmp_path), profile, url(port, profile),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode(), {v for _, _, _, v in recorder.requests}

    rc, out, err, versions = asyncio.run(main())
    assert rc == 0 and out.strip(), err[-3000:]
    summary = json.loads(out.splitlines()[-1])
    assert summary["errors"] == [], err[-3000:]
    if cancel:
        assert (summary["stopReason"], summary["fsReads"]) == ("cancelled", [])
        assert "session/cancel" in check.methods
    else:
        assert (summary["stopReason"], summary["updates"], summary["permissionRequests"]) == ("end_turn", FULL_TURN, 1)
        assert [Path(p).name for p in summary["fsReads"]] == ["README.md"]
    if profile == "http":
        assert versions == {"2"}
    assert check.problems == []


@contextlib.contextmanager
def sdk1_agent(server: str, cancel_window: float) -> Iterator[int]:
    """The SDK 1.0 agent's remote server (tests/interop/peers/py_remote_agent.py, in the SDK 1.0
    environment) under `server`; yields its port and stops it after."""
    from tests.interop.test_interop import PEERS, SDK1_PYTHON

    if not SDK1_PYTHON.exists():
        pytest.fail("the Python SDK 1.0 is not installed: run `bash scripts/install-test-peers.sh`")
    proc = subprocess.Popen([str(SDK1_PYTHON), str(PEERS / "py_remote_agent.py"), "--cancel-window",
                             str(cancel_window), server], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("PORT "), line
        yield int(line.split()[1])
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("cancel", [False, True], ids=["full", "cancelled"])
@pytest.mark.parametrize(("server", "profile"), [("uvicorn", "ws"), ("hypercorn", "http"), ("hypercorn", "ws")])
def test_our_client_drives_the_sdk1_agent(server: str, profile: str, cancel: bool, tmp_path: Path) -> None:
    check = WireCheck()
    with sdk1_agent(server, 1.0 if cancel else 0.2) as port:
        summary = asyncio.run(asyncio.wait_for(
            our_turn(url(port, profile), readme_dir(tmp_path), cancel=cancel, tap=lambda d, m: check.tap("c", d, m)),
            TURN_S))
    if cancel:
        assert (summary["stopReason"], summary["updates"], summary["reads"]) == ("cancelled", ["agent_message_chunk"], [])
    else:
        assert (summary["stopReason"], summary["updates"], summary["permissions"]) == ("end_turn", FULL_TURN, 1)
        assert [Path(p).name for p in summary["reads"]] == ["README.md"]
    assert check.problems == []
    assert check.count >= 6
