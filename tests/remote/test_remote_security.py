"""The remote endpoint's rules, caps and failure modes (acp_v1.AcpApp under Uvicorn on loopback):
ids, DELETE, cookies, Origin and Host checks, the authentication hook, every cap, many concurrent
connections, a client vanishing mid-turn, and a slow SSE reader (back-pressure, nothing dropped)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.remote.test_remote import init_request, our_app, our_turn, url
from tests.remote_support import Recorder, WireCheck, acp_v1, agent_factory, readme_dir, serving

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
JSON = {"content-type": "application/json"}
LIMIT_S = 20.0


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, LIMIT_S))


async def initialize(http: httpx.AsyncClient, base: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return await http.post(base, json=INIT, headers={**JSON, **(headers or {})})


async def next_event(lines: Any) -> dict[str, Any]:
    """The next `data:` event of an SSE stream read with `aiter_lines()`."""
    async for line in lines:
        if line.startswith("data: "):
            return json.loads(line[6:])  # type: ignore[no-any-return]
    raise AssertionError("the stream ended")


async def raw_session(http: httpx.AsyncClient, base: str, cwd: str) -> tuple[str, str, Any, Any]:
    """initialize + the connection stream + session/new over raw HTTP: (connection id, session id,
    the open stream's response context, its line iterator)."""
    response = await initialize(http, base)
    assert response.status_code == 200, response.text
    cid = response.headers["acp-connection-id"]
    stream = http.stream("GET", base, headers={"accept": "text/event-stream", "acp-connection-id": cid})
    opened = await stream.__aenter__()
    lines = opened.aiter_lines()
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}
    posted = await http.post(base, json=new, headers={**JSON, "acp-connection-id": cid})
    assert posted.status_code == 202
    answer = await next_event(lines)
    assert answer["id"] == 1, answer
    return cid, answer["result"]["sessionId"], stream, lines


# -- ids, DELETE, protocol errors ------------------------------------------------------------------


def test_connection_and_session_ids_are_checked(tmp_path: Path) -> None:
    async def main() -> None:
        app = our_app()
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            cid_a, sid_a, stream_a, _ = await raw_session(http, base, readme_dir(tmp_path))
            cid_b = (await initialize(http, base)).headers["acp-connection-id"]
            assert len(cid_a) >= 22 and cid_a != cid_b  # 16 random bytes, url-safe base64
            prompt = {"jsonrpc": "2.0", "id": 5, "method": "session/prompt",
                      "params": {"sessionId": sid_a, "prompt": [{"type": "text", "text": "hi"}]}}
            # No connection id: 400. An unknown one: 404, for POST, GET and DELETE alike.
            assert (await http.post(base, json=prompt, headers=JSON)).status_code == 400
            bogus = {"acp-connection-id": "x" * 22}
            assert (await http.post(base, json=prompt, headers={**JSON, **bogus})).status_code == 404
            sse = {"accept": "text/event-stream"}
            assert (await http.get(base, headers={**sse, **bogus})).status_code == 404
            assert (await http.delete(base, headers=bogus)).status_code == 404
            # A's session through B's connection: 404 (ids are bound to the connection that made them).
            other = {**JSON, "acp-connection-id": cid_b, "acp-session-id": sid_a}
            refused = await http.post(base, json=prompt, headers=other)
            assert refused.status_code == 404 and "Acp-Session-Id" in refused.json()["error"]
            assert (await http.get(base, headers={**sse, **other})).status_code == 404
            # Session-scoped POST without the session header: 400; header and params disagreeing: 400.
            assert (await http.post(base, json=prompt, headers={**JSON, "acp-connection-id": cid_a})).status_code == 400
            mismatch = {**prompt, "params": {**prompt["params"], "sessionId": "ex-other"}}
            assert (await http.post(base, json=mismatch, headers={**JSON, "acp-connection-id": cid_a,
                                                                   "acp-session-id": sid_a})).status_code == 400
            # Wrong media types, batches, other methods.
            assert (await http.post(base, content=b"{}", headers={"acp-connection-id": cid_a})).status_code == 415
            assert (await http.get(base, headers={"acp-connection-id": cid_a, "accept": "application/json"})).status_code == 406
            # A second reader of an open stream: 409.
            assert (await http.get(base, headers={"acp-connection-id": cid_a, **sse})).status_code == 409
            assert (await http.post(base, json=[INIT], headers=JSON)).status_code == 501
            assert (await http.post(base, content=b"{", headers=JSON)).status_code == 400
            assert (await http.put(base, json=INIT, headers=JSON)).status_code == 405
            assert (await http.post(base.replace("/acp", "/other"), json=INIT, headers=JSON)).status_code == 404
            await stream_a.__aexit__(None, None, None)
            assert set(app.connections) == {cid_a, cid_b}

    run(main())


def test_delete_ends_the_connection_and_its_agent(tmp_path: Path) -> None:
    async def main() -> None:
        app = our_app()
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            cid, _, stream, lines = await raw_session(http, base, readme_dir(tmp_path))
            remote = app.connections[cid]
            assert (await http.delete(base)).status_code == 400
            assert (await http.delete(base, headers={"acp-connection-id": cid})).status_code == 202
            assert cid not in app.connections and remote.conn.closed
            with pytest.raises(AssertionError, match="the stream ended"):
                await next_event(lines)  # the open SSE stream ends too
            await stream.__aexit__(None, None, None)
            again = await http.post(base, json={"jsonrpc": "2.0", "method": "session/cancel", "params": {}},
                                    headers={**JSON, "acp-connection-id": cid})
            assert again.status_code == 404

    run(main())


# -- cookies ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["ws", "http"])
def test_cookies_are_kept_and_returned(profile: str, tmp_path: Path) -> None:
    async def main() -> list[dict[str, str]]:
        recorder = Recorder(our_app(cookie=("acp-node", "n1")))
        jar: dict[str, str] = {}
        async with serving(recorder, "hypercorn") as port:
            summary = await our_turn(url(port, profile), readme_dir(tmp_path), cookies=jar)
            assert summary["stopReason"] == "end_turn"
            assert jar == {"acp-node": "n1"}
            await our_turn(url(port, profile), readme_dir(tmp_path), cookies=jar)  # a reconnect sends it
        return [headers for _, _, headers, _ in recorder.requests]

    seen = run(main())
    assert "cookie" not in seen[0]  # the first request had none to send
    assert len(seen) >= 2
    assert all(headers.get("cookie") == "acp-node=n1" for headers in seen[1:]), seen


# -- Origin, Host, authentication ------------------------------------------------------------------


def test_cross_origin_requests_and_upgrades_are_refused(tmp_path: Path) -> None:
    async def main() -> None:
        check = WireCheck()
        app = our_app(check, allowed_origins=["https://ide.example"])
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            evil = {"origin": "http://evil.example"}
            refused = await initialize(http, url(port, "http"), evil)
            assert refused.status_code == 403 and "Origin" in refused.json()["error"]
            with pytest.raises(acp_v1.RemoteAgentError) as info:
                await our_turn(url(port, "ws"), readme_dir(tmp_path), headers=evil)
            assert info.value.status == 403 and "Origin" in str(info.value)
            assert check.count == 0 and app.connections == {}
            allowed = await initialize(http, url(port, "http"), {"origin": "https://ide.example"})
            assert allowed.status_code == 200
            summary = await our_turn(url(port, "ws"), readme_dir(tmp_path), headers={"origin": "https://ide.example"})
            assert summary["stopReason"] == "end_turn"

    run(main())


def test_host_allow_list_guards_against_dns_rebinding() -> None:
    async def main() -> None:
        app = our_app(allowed_hosts=["127.0.0.1", "localhost"])
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            refused = await initialize(http, base, {"host": f"rebound.example:{port}"})
            assert refused.status_code == 403 and "Host" in refused.json()["error"]
            assert (await initialize(http, base, {"host": f"localhost:{port}"})).status_code == 200

    run(main())


def test_missing_or_wrong_token_is_refused_before_any_message(tmp_path: Path) -> None:
    made: list[object] = []
    factory = agent_factory()

    def counting(conn: Any) -> Any:
        made.append(conn)
        return factory(conn)

    async def main() -> None:
        check = WireCheck()
        app = acp_v1.AcpApp(counting, authenticate=acp_v1.bearer_token("s3cret"), tap=check.tap)
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "s3cret"}):
                refused = await initialize(http, base, headers)
                assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
                with pytest.raises(acp_v1.RemoteAgentError) as info:
                    await our_turn(url(port, "ws"), readme_dir(tmp_path), headers=headers)
                assert info.value.status == 401
                with pytest.raises(acp_v1.ConnectionClosedError, match="HTTP 401"):
                    await our_turn(base, readme_dir(tmp_path), headers=headers, http2=False)
            assert check.count == 0 and made == []  # no message read, no agent made
            good = {"authorization": "Bearer s3cret"}
            for profile in ("ws", "http"):
                summary = await our_turn(url(port, profile), readme_dir(tmp_path), headers=good, http2=False)
                assert summary["stopReason"] == "end_turn"
            # The token is checked on every request, not only on initialize.
            cid = (await initialize(http, base, good)).headers["acp-connection-id"]
            late = await http.get(base, headers={"accept": "text/event-stream", "acp-connection-id": cid})
            assert late.status_code == 401

    run(main())


def test_a_connection_is_bound_to_the_identity_that_opened_it() -> None:
    async def who(request: acp_v1.RequestInfo) -> object:
        return request.headers.get("x-user") or None

    async def main() -> None:
        app = our_app(authenticate=who)
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            cid = (await initialize(http, base, {"x-user": "ann"})).headers["acp-connection-id"]
            stolen = await http.delete(base, headers={"acp-connection-id": cid, "x-user": "bob"})
            assert stolen.status_code == 403
            assert (await http.delete(base, headers={"acp-connection-id": cid, "x-user": "ann"})).status_code == 202

    run(main())


# -- caps ------------------------------------------------------------------------------------------


def test_connection_cap(tmp_path: Path) -> None:
    async def main() -> None:
        app = our_app(limits=acp_v1.Limits(max_connections=2))
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            assert (await initialize(http, base)).status_code == 200
            assert (await initialize(http, base)).status_code == 200
            full = await initialize(http, base)
            assert full.status_code == 503 and "Too many connections" in full.json()["error"]
            assert full.headers["retry-after"] == "5"
            with pytest.raises(acp_v1.RemoteAgentError) as info:
                await our_turn(url(port, "ws"), readme_dir(tmp_path))
            assert info.value.status == 503
            assert len(app.connections) == 2

    run(main())


@pytest.mark.parametrize("profile", ["ws", "http"])
def test_session_cap(profile: str, tmp_path: Path) -> None:
    async def main() -> None:
        app = our_app(limits=acp_v1.Limits(max_sessions=2))
        async with serving(app, "hypercorn") as port, acp_v1.connect_agent(acp_v1.Client(), url(port, profile)) as conn:
            await conn.initialize(init_request())
            new = acp_v1.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[])
            first = await conn.session_new(new)
            await conn.session_new(new)
            with pytest.raises(acp_v1.RequestError) as info:
                await conn.session_new(new)
            assert info.value.code == acp_v1.asgi.TOO_MANY_SESSIONS
            assert info.value.data == {"maxSessions": 2}
            # A session already on the connection may still be loaded.
            await conn.session_load(acp_v1.LoadSessionRequest(session_id=first.session_id, cwd=str(tmp_path), mcp_servers=[]))
            # Closing a session frees its place.
            await conn.session_close(acp_v1.CloseSessionRequest(session_id=first.session_id))
            await conn.session_new(new)

    run(main())


def test_message_size_cap(tmp_path: Path) -> None:
    async def main() -> None:
        app = our_app(limits=acp_v1.Limits(max_message_bytes=4096))
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            cid = (await initialize(http, base)).headers["acp-connection-id"]
            big = {"jsonrpc": "2.0", "method": "_note", "params": {"pad": "x" * 5000}}
            too_big = await http.post(base, json=big, headers={**JSON, "acp-connection-id": cid})
            assert too_big.status_code == 413 and "4096" in too_big.json()["error"]
            import websockets

            async with websockets.connect(url(port, "ws"), max_size=None) as ws:
                await ws.send(json.dumps(big))
                with pytest.raises(websockets.ConnectionClosed) as info:
                    await asyncio.wait_for(ws.recv(), 5)
                assert info.value.rcvd is not None and info.value.rcvd.code == 1009
            await asyncio.sleep(0.1)
            assert list(app.connections) == [cid]  # the WebSocket's connection was freed

    run(main())


def test_idle_connections_are_freed(tmp_path: Path) -> None:
    async def main() -> None:
        app = our_app(limits=acp_v1.Limits(idle_timeout=0.3))
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            cid = (await initialize(http, base)).headers["acp-connection-id"]
            remote = app.connections[cid]
            for _ in range(50):
                if cid not in app.connections:
                    break
                await asyncio.sleep(0.05)
            assert cid not in app.connections and remote.conn.closed
            gone = await http.get(base, headers={"accept": "text/event-stream", "acp-connection-id": cid})
            assert gone.status_code == 404

    run(main())


# -- load and failure ------------------------------------------------------------------------------


def test_many_concurrent_connections(tmp_path: Path) -> None:
    check = WireCheck()

    async def main() -> list[dict[str, Any]]:
        app = our_app(check)
        async with serving(app, "hypercorn") as port:
            cwd = readme_dir(tmp_path)
            turns = [our_turn(url(port, "ws" if i % 2 else "http"), cwd) for i in range(24)]
            summaries = await asyncio.gather(*turns)
            assert app.connections == {}  # every client closed (WebSocket) or DELETEd (HTTP)
        return summaries

    summaries = run(main())
    assert [s["stopReason"] for s in summaries] == ["end_turn"] * 24
    assert len({s["session"] for s in summaries}) == 24
    assert check.problems == []


VANISHING_CLIENT = """
import asyncio, sys
sys.path.insert(0, sys.argv[2])
import acp_v1

class Vanishing(acp_v1.Client):
    async def session_update(self, params):
        print("turn started", flush=True)

async def main():
    async with acp_v1.connect_agent(Vanishing(), sys.argv[1], http2=False) as conn:
        await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
        session = await conn.session_new(acp_v1.NewSessionRequest(cwd=".", mcp_servers=[]))
        await conn.session_prompt(acp_v1.PromptRequest(session_id=session.session_id, prompt=[]))

asyncio.run(asyncio.wait_for(main(), 30))
"""


@pytest.mark.parametrize("profile", ["ws", "http"])
def test_a_client_vanishing_mid_turn_frees_its_state(profile: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="example-agent")

    async def main() -> None:
        app = our_app(pause=30.0, limits=acp_v1.Limits(idle_timeout=0.3))
        async with serving(app, "uvicorn") as port:
            generated = str(Path(acp_v1.__file__).parent.parent)
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", VANISHING_CLIENT, url(port, profile), generated, stdout=asyncio.subprocess.PIPE
            )
            try:
                assert process.stdout is not None
                line = await asyncio.wait_for(process.stdout.readline(), 10)
                assert line == b"turn started\n"
                (remote,) = app.connections.values()
                (prompt,) = [t for t in remote.conn._tasks if not t.done()]  # the turn, paused
                process.kill()  # no DELETE, no close frame: the client is just gone
            finally:
                if process.returncode is None:
                    process.kill()
                await process.wait()
            for _ in range(100):
                if not app.connections and prompt.done():
                    break
                await asyncio.sleep(0.05)
            assert app.connections == {} and remote.conn.closed
            assert prompt.done()  # the turn (paused for 30 s) ended: it was cancelled
        assert any(r.getMessage().startswith("turn in ex-") and r.getMessage().endswith("cancelled") for r in caplog.records)

    run(main())


class FloodAgent(acp_v1.Agent):
    """Streams `count` session updates of `size` bytes each in one turn."""

    sent = 0

    def __init__(self, conn: acp_v1.AgentSideConnection, count: int, size: int) -> None:
        self.conn, self.count, self.size = conn, count, size

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        return acp_v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: acp_v1.NewSessionRequest) -> acp_v1.NewSessionResponse:
        return acp_v1.NewSessionResponse(session_id="flood-" + "0" * 22)

    async def session_prompt(self, params: acp_v1.PromptRequest) -> acp_v1.PromptResponse:
        for i in range(self.count):
            chunk = acp_v1.AgentMessageChunkSessionUpdate(content=acp_v1.TextContentBlock(text=f"{i:06d}" + "x" * self.size))
            await self.conn.session_update(acp_v1.SessionNotification(session_id=params.session_id, update=chunk))
            FloodAgent.sent = i + 1
        return acp_v1.PromptResponse(stop_reason=acp_v1.StopReason.END_TURN)


def test_a_slow_sse_reader_pushes_back_on_the_agent(tmp_path: Path) -> None:
    count, backlog = 400, 8
    FloodAgent.sent = 0

    async def main() -> None:
        app = acp_v1.AcpApp(lambda conn: FloodAgent(conn, count, 4096), limits=acp_v1.Limits(stream_backlog=backlog))
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=10) as http:
            base = url(port, "http")
            cid, sid, stream, _ = await raw_session(http, base, str(tmp_path))
            prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": sid, "prompt": []}}
            headers = {**JSON, "acp-connection-id": cid, "acp-session-id": sid}
            assert (await http.post(base, json=prompt, headers=headers)).status_code == 202
            await asyncio.sleep(0.5)  # nobody reads the session's stream yet
            outbox = app.connections[cid].streams[sid]
            assert len(outbox) == backlog and FloodAgent.sent <= backlog  # the agent waits; nothing dropped
            peak = 0
            seen: list[int] = []
            session_headers = {"accept": "text/event-stream", "acp-connection-id": cid, "acp-session-id": sid}
            async with http.stream("GET", base, headers=session_headers) as reader:
                lines = reader.aiter_lines()
                while True:
                    event = await next_event(lines)
                    peak = max(peak, len(outbox))
                    if "result" in event:
                        assert event["id"] == 2 and event["result"]["stopReason"] == "end_turn"
                        break
                    seen.append(int(event["params"]["update"]["content"]["text"][:6]))
                    if len(seen) % 50 == 0:
                        await asyncio.sleep(0.05)  # a slow reader
            assert seen == list(range(count))  # every update, in order
            assert peak <= backlog
            await stream.__aexit__(None, None, None)

    run(main())


def test_bad_messages_never_end_a_connection() -> None:
    async def main() -> None:
        import websockets

        app = our_app()
        async with serving(app, "uvicorn") as port, websockets.connect(url(port, "ws")) as ws:
            for bad in ("{not json", "[1, 2]", "42", json.dumps({"jsonrpc": "2.0", "id": 3, "method": 7})):
                await ws.send(bad)
                answer = json.loads(await asyncio.wait_for(ws.recv(), 5))
                assert answer["error"]["code"] in (-32700, -32600), answer
            await ws.send(b"binary frames are ignored")
            await ws.send(json.dumps(INIT))
            answer = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert answer["id"] == 0 and answer["result"]["protocolVersion"] == 1
            assert len(app.connections) == 1

    run(main())


def test_serve_agent_runs_the_example_on_loopback(tmp_path: Path) -> None:
    """`python examples/remote_agent.py --port N` (serve_agent with Uvicorn), token required."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    env = {**os.environ, "ACP_TOKEN": "t0ken"}
    command = [sys.executable, "examples/remote_agent.py", "--port", str(port), "--server", "uvicorn"]
    process = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[2], env=env)

    async def main() -> dict[str, Any]:
        for _ in range(100):  # until it listens
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.1)
        with pytest.raises(acp_v1.RemoteAgentError) as info:
            await our_turn(url(port, "ws"), readme_dir(tmp_path))
        assert info.value.status == 401
        return await our_turn(url(port, "ws"), readme_dir(tmp_path), headers={"Authorization": "Bearer t0ken"})  # type: ignore[no-any-return]

    try:
        summary = run(main())
    finally:
        process.terminate()
        process.wait(10)
    assert summary["stopReason"] == "end_turn"


def test_a_session_is_bound_to_its_connection_over_websocket_too(tmp_path: Path) -> None:
    async def everyone(request: acp_v1.RequestInfo) -> object:
        return "me"  # the application says: every caller is one identity

    async def main() -> None:
        for hook in (None, everyone):
            app = our_app(sessions={}, authenticate=hook)  # one store for every connection
            async with serving(app, "uvicorn") as port, \
                    acp_v1.connect_agent(acp_v1.Client(), url(port, "ws")) as a, \
                    acp_v1.connect_agent(acp_v1.Client(), url(port, "ws")) as b:
                await a.initialize(init_request())
                await b.initialize(init_request())
                session = await a.session_new(acp_v1.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[]))
                with pytest.raises(acp_v1.RequestError) as info:
                    await b.session_prompt(acp_v1.PromptRequest(session_id=session.session_id, prompt=[]))
                assert info.value.code == -32002 and info.value.data["sessionId"] == session.session_id
                load = acp_v1.LoadSessionRequest(session_id=session.session_id, cwd=str(tmp_path), mcp_servers=[])
                if hook is None:
                    # Without a hook each connection is its own caller: A's session is not B's to load.
                    with pytest.raises(acp_v1.RequestError) as info:
                        await b.session_load(load)
                    assert info.value.code == -32002
                else:
                    # One identity: session/load is how a session joins another connection.
                    await b.session_load(load)
                    await b.session_close(acp_v1.CloseSessionRequest(session_id=session.session_id))

    run(main())


def test_an_idle_websocket_is_closed() -> None:
    async def main() -> None:
        import websockets

        app = our_app(limits=acp_v1.Limits(idle_timeout=0.3))
        async with serving(app, "uvicorn") as port, websockets.connect(url(port, "ws")) as ws:
            with pytest.raises(websockets.ConnectionClosed) as info:
                await asyncio.wait_for(ws.recv(), 5)
            assert info.value.rcvd is not None and info.value.rcvd.code == 1001
            assert app.connections == {}

    run(main())


class Stuck(acp_v1.Agent):
    """Its extension-notification handler waits for `gate`: the runtime's notification backlog fills."""

    handled = 0

    def __init__(self, conn: acp_v1.AgentSideConnection, gate: asyncio.Event) -> None:
        self.gate = gate

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        return acp_v1.InitializeResponse(protocol_version=1)

    async def ext_notification(self, method: str, params: object) -> None:
        await self.gate.wait()
        Stuck.handled += 1


def test_inbound_backlog_makes_the_client_wait_and_loses_nothing() -> None:
    backlog = 2
    runtime_backlog = 8  # the agent connection's own notification backlog
    total = runtime_backlog + 1 + backlog + 20  # more than the agent's side can hold
    Stuck.handled = 0

    async def main() -> None:
        import websockets

        gate = asyncio.Event()
        limits = acp_v1.Limits(inbound_backlog=backlog, notification_backlog=runtime_backlog)
        app = acp_v1.AcpApp(lambda conn: Stuck(conn, gate), limits=limits)
        async with serving(app, "uvicorn") as port, websockets.connect(url(port, "ws")) as ws:
            await ws.send(json.dumps(INIT))
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["id"] == 0
            (remote,) = app.connections.values()

            async def flood() -> None:
                for i in range(total):
                    await ws.send(json.dumps({"jsonrpc": "2.0", "method": "_slow", "params": {"i": i}}))

            sender = asyncio.ensure_future(flood())
            for _ in range(200):
                if len(remote.inbound) == backlog:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)
            assert len(remote.inbound) == backlog and Stuck.handled == 0  # full, and held there
            gate.set()
            await asyncio.wait_for(sender, 30)
            for _ in range(600):
                if Stuck.handled == total:
                    break
                await asyncio.sleep(0.05)
            assert Stuck.handled == total  # every notification handled once the agent caught up

    run(main())
