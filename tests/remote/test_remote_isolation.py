"""What one client must not do to another (issue 22's attack families, loopback only, bounded):
reach another identity's sessions, poison the server with lone surrogates or odd ids, or make it
hold memory without bound (waiting POSTs, drip-fed bodies, pending session/new, DELETE races).
Identity cases run under Hypercorn and Uvicorn; the memory bounds themselves are measured by
benchmarks/bench_flood.py (RSS), here they are asserted as the app's own byte counts."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.remote.test_remote import init_request, our_app, url
from tests.remote_support import acp_v1, agent_factory, serving

from acp_v1 import asgi  # isort: skip

JSON = {"content-type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
LIMIT_S = 20.0
PROFILES = [("uvicorn", "ws"), ("uvicorn", "http"), ("hypercorn", "ws"), ("hypercorn", "http")]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, LIMIT_S))


async def by_user(request: acp_v1.RequestInfo) -> object:
    return request.headers.get("x-user") or None


def connect(port: int, server: str, profile: str, user: str) -> Any:
    return acp_v1.connect_agent(acp_v1.Client(), url(port, profile), headers={"x-user": user},
                                http2=server == "hypercorn")


async def refused(call: Any) -> acp_v1.RequestError:
    with pytest.raises(acp_v1.RequestError) as info:
        await call
    return info.value


# -- identity ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("server", "profile"), PROFILES)
def test_an_identity_reaches_only_its_own_sessions(server: str, profile: str, tmp_path: Path) -> None:
    """Bob, on his own connection, cannot list, load, resume, prompt or close Alice's session, even
    though the agent shares one unscoped store between connections: the runtime refuses (-32002)."""
    seen: list[object] = []
    factory = agent_factory(sessions={})

    def make(conn: Any) -> Any:
        seen.append(asgi.identity_of(conn))
        return factory(conn)

    async def main() -> None:
        app = acp_v1.AcpApp(make, authenticate=by_user)
        async with serving(app, server) as port, connect(port, server, profile, "alice") as alice, \
                connect(port, server, profile, "bob") as bob:
            await alice.initialize(init_request())
            await bob.initialize(init_request())
            assert seen == ["alice", "bob"]  # the hook's value reaches the agent
            cwd = str(tmp_path)
            mine = await alice.session_new(acp_v1.NewSessionRequest(cwd=cwd, mcp_servers=[]))
            sid = mine.session_id
            await bob.session_new(acp_v1.NewSessionRequest(cwd=cwd, mcp_servers=[]))
            listed = await bob.session_list(acp_v1.ListSessionsRequest())
            assert sid not in [s.session_id for s in listed.sessions] and len(listed.sessions) == 1
            load = acp_v1.LoadSessionRequest(session_id=sid, cwd=cwd, mcp_servers=[])
            bob.check_capabilities = False  # resume is not advertised: the server must refuse it anyway
            for attempt in (
                lambda: bob.session_load(load),
                lambda: bob.session_resume(acp_v1.ResumeSessionRequest(session_id=sid, cwd=cwd)),
                lambda: bob.session_close(acp_v1.CloseSessionRequest(session_id=sid)),
            ):
                error = await refused(attempt())
                assert error.code == -32002 and error.data["sessionId"] == sid, error
            own = await alice.session_list(acp_v1.ListSessionsRequest())
            assert [s.session_id for s in own.sessions] == [sid]
            if profile == "ws":
                prompt = acp_v1.PromptRequest(session_id=sid, prompt=[])
                assert (await refused(bob.session_prompt(prompt))).code == -32002
            # Over Streamable HTTP a prompt needs an Acp-Session-Id of the connection's own (else
            # 400/404, test_remote_security.py): bob has none to send for alice's session.
            await alice.session_close(acp_v1.CloseSessionRequest(session_id=sid))

    run(main())


def test_without_a_hook_each_connection_is_its_own_caller(tmp_path: Path) -> None:
    async def main() -> None:
        app = our_app(sessions={})
        async with serving(app, "uvicorn") as port:
            async with acp_v1.connect_agent(acp_v1.Client(), url(port, "ws")) as a:
                await a.initialize(init_request())
                sid = (await a.session_new(acp_v1.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[]))).session_id
            # A has gone; a new connection (no hook: a new caller) can neither list nor load it.
            async with acp_v1.connect_agent(acp_v1.Client(), url(port, "ws")) as b:
                await b.initialize(init_request())
                assert (await b.session_list(acp_v1.ListSessionsRequest())).sessions == []
                load = acp_v1.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
                assert (await refused(b.session_load(load))).code == -32002

    run(main())


def test_the_example_store_is_scoped_by_caller_and_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import remote_agent

    monkeypatch.setattr(remote_agent, "MAX_SESSIONS", 3)

    async def main() -> None:
        remote_agent.STORE = remote_agent.Store()
        app = acp_v1.AcpApp(remote_agent.make_agent, authenticate=by_user)
        async with serving(app, "uvicorn") as port:
            for user in ("alice", "bob"):
                async with connect(port, "uvicorn", "ws", user) as conn:
                    await conn.initialize(init_request())
                    for _ in range(remote_agent.MAX_SESSIONS + 2):
                        new = await conn.session_new(acp_v1.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[]))
                        await conn.session_close(acp_v1.CloseSessionRequest(session_id=new.session_id))
                    await conn.session_new(acp_v1.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[]))
        assert set(remote_agent.STORE.callers) == {"alice", "bob"}
        assert all(len(sessions) == 1 for sessions in remote_agent.STORE.callers.values())

    run(main())


def test_the_example_store_is_bounded_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    import remote_agent

    monkeypatch.setattr(remote_agent, "STORE_BYTES", 300_000)
    monkeypatch.setattr(remote_agent, "MAX_HISTORY_BYTES", 100_000)
    store = remote_agent.Store()
    chunk = acp_v1.UserMessageChunkSessionUpdate(content=acp_v1.TextContentBlock(text="x" * 30_000))
    for caller in range(4):
        sessions = store.of(caller)
        for n in range(3):
            sessions[f"{caller}-{n}"] = remote_agent.Session(cwd=".", updated_at="")
            for _ in range(5):  # 150 KB a session, over its 100 KB
                sessions[f"{caller}-{n}"].history.append(chunk)
    assert store.bytes <= 300_000
    assert store.bytes == sum(s.history.bytes for c in store.callers.values() for s in c.values())  # type: ignore[attr-defined]
    assert all(len(s.history) == 3 for c in store.callers.values() for s in c.values())  # the last 100 KB
    assert "3-2" in store.callers[3] and 0 not in store.callers  # the oldest callers' sessions went first
    store.callers[3].pop("3-2")
    assert store.bytes == sum(s.history.bytes for c in store.callers.values() for s in c.values())  # type: ignore[attr-defined]


# -- nothing one client sends poisons the server -------------------------------------------------------


def test_a_lone_surrogate_is_kept_as_an_escape_and_breaks_nothing(tmp_path: Path) -> None:
    """A prompt with `\\ud800` (escaped: the only way JSON can carry one) is taken; session/list
    still answers, and the title comes back as the same escape; an id `"\\ud800"` is answered."""
    import websockets

    async def main() -> None:
        app = our_app(sessions={}, authenticate=lambda request: _same())
        async with serving(app, "hypercorn") as port, websockets.connect(url(port, "ws")) as ws:
            await ws.send(json.dumps(INIT))
            assert json.loads(await ws.recv())["id"] == 0
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new",
                                      "params": {"cwd": str(tmp_path), "mcpServers": []}}))
            sid = json.loads(await ws.recv())["result"]["sessionId"]
            prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                      "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "run LONE"}]}}
            await ws.send(json.dumps(prompt).replace("LONE", "\\ud800"))
            await ws.send('{"jsonrpc":"2.0","id":"\\udfff","method":"session/list","params":{}}')
            answers: dict[Any, Any] = {}
            while "\udfff" not in answers:
                raw = await asyncio.wait_for(ws.recv(), 5)
                message = json.loads(raw)
                if "id" in message and "method" not in message:
                    answers[message["id"]] = (message, raw)
            listed, raw = answers["\udfff"]
            assert listed["result"]["sessions"][0]["title"] == "run \ud800"  # lossless
            assert "\\ud800" in raw and "\\udfff" in raw  # sent as escapes, valid UTF-8 on the wire
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            answer = await http.post(url(port, "http"), content=b'{"jsonrpc":"2.0","id":"\\ud800",'
                                     b'"method":"initialize","params":{"protocolVersion":1}}', headers=JSON)
            assert answer.status_code == 200 and answer.json()["id"] == "\ud800"

    run(main())


async def _same() -> object:
    return "one"


def test_odd_ids_leave_nothing_behind(tmp_path: Path) -> None:
    """Fractional, boolean and object ids are answered -32600 (id null) and remembered nowhere."""
    import websockets

    async def main() -> None:
        app = our_app(sessions={})
        async with serving(app, "uvicorn") as port, websockets.connect(url(port, "ws")) as ws:
            await ws.send(json.dumps(INIT))
            await ws.recv()
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new",
                                      "params": {"cwd": str(tmp_path), "mcpServers": []}}))
            sid = json.loads(await ws.recv())["result"]["sessionId"]
            (remote,) = app.connections.values()
            odd: list[Any] = [0.5 + i for i in range(40)] + [True, {"a": 1}, [2]]
            for request_id in odd:
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/set_mode",
                                          "params": {"sessionId": sid, "modeId": "x"}}))
            for _ in odd:
                answer = json.loads(await asyncio.wait_for(ws.recv(), 5))
                assert answer["id"] is None and answer["error"]["code"] == -32600
            assert remote.routes == {} and remote.opening == {} and remote.charged == {}
            assert remote.held == 0

    run(main())


def test_an_id_less_error_is_logged_truncated(caplog: pytest.LogCaptureFixture) -> None:
    import websockets

    async def main() -> None:
        app = our_app()
        async with serving(app, "uvicorn") as port, websockets.connect(url(port, "ws")) as ws:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "x" * 300_000}}))
            await ws.send(json.dumps(INIT))
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["id"] == 0

    with caplog.at_level(logging.WARNING):
        run(main())
    (line,) = [r.getMessage() for r in caplog.records if "not tied to a request" in r.getMessage()]
    assert len(line) < 400


# -- memory bounded in bytes ---------------------------------------------------------------------------


def test_posts_past_the_budget_are_refused_not_held(tmp_path: Path) -> None:
    """Nobody reads the answers (no SSE stream): once the agent's connection stops taking messages,
    every further POST is answered 429 at once (with Retry-After), and the server budget gives 503;
    nothing waits, and DELETE gives the bytes back."""

    async def main() -> None:
        limits = acp_v1.Limits(inbound_backlog=4, stream_backlog=2, connection_budget=256 * 1024,
                               server_budget=400 * 1024)
        app = our_app(limits=limits)
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            cid = (await http.post(base, json=INIT, headers=JSON)).headers["acp-connection-id"]
            headers = {**JSON, "acp-connection-id": cid}
            statuses = []
            for i in range(400):
                ask = {"jsonrpc": "2.0", "id": 10 + i, "method": "session/list", "params": {"pad": [{}] * 1000}}
                answer = await http.post(base, json=ask, headers=headers)
                statuses.append(answer.status_code)
                if answer.status_code == 429:
                    assert answer.headers["retry-after"] == "1"
                    break
            assert statuses[-1] == 429 and set(statuses[:-1]) == {202}
            assert app.held <= limits.server_budget
            (remote,) = app.connections.values()
            assert remote.held <= limits.connection_budget
            # A second connection meets the server's budget: 503.
            other = (await http.post(base, json=INIT, headers=JSON)).headers["acp-connection-id"]
            big = {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {"pad": [{}] * 2000}}
            full = await http.post(base, json=big, headers={**JSON, "acp-connection-id": other})
            assert full.status_code == 503 and full.headers["retry-after"] == "1"
            # DELETE while messages wait: a clean 202, then 404 for the id; the bytes come back.
            assert (await http.delete(base, headers={"acp-connection-id": cid})).status_code == 202
            late = await http.post(base, json=big, headers=headers)
            assert late.status_code == 404
            assert app.held < 64 * 1024
            # One message that would parse to more than a connection's budget: 413 before parsing.
            huge = {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {"pad": [{}] * 20_000}}
            too_big = await http.post(base, json=huge, headers={**JSON, "acp-connection-id": other})
            assert too_big.status_code == 413 and "budget" in too_big.json()["error"]

    run(main())


class Gated(acp_v1.Agent):
    """Its extension method waits for `gate`: requests stay held by the runtime until it opens."""

    def __init__(self, conn: acp_v1.AgentSideConnection, gate: asyncio.Event) -> None:
        self.gate = gate

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        return acp_v1.InitializeResponse(protocol_version=1)

    async def ext_method(self, method: str, params: object) -> object:
        await self.gate.wait()
        return {}


def test_websocket_requests_past_the_budget_are_shed() -> None:
    """Held requests count until answered; past the budget a request is answered -32001 at once
    (the reader never waits on a request), and every request gets exactly one answer."""
    import websockets

    async def main() -> None:
        gate = asyncio.Event()
        limits = acp_v1.Limits(connection_budget=256 * 1024)
        app = acp_v1.AcpApp(lambda conn: Gated(conn, gate), limits=limits)
        async with serving(app, "hypercorn") as port, websockets.connect(url(port, "ws")) as ws:
            await ws.send(json.dumps(INIT))
            await ws.recv()
            (remote,) = app.connections.values()
            pad = [{}] * 500  # about 60 KB once parsed, by held_bytes
            for i in range(30):
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "_wait", "params": {"pad": pad}}))
            busy = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(30 - 256 // 60)]
            assert {a["error"]["code"] for a in busy} == {-32001}
            assert remote.held <= limits.connection_budget and len(remote.charged) == 256 // 60
            gate.set()
            done = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(256 // 60)]
            assert all(a["result"] == {} for a in done)
            assert remote.held == 0 and remote.charged == {}

    run(main())


@pytest.mark.parametrize("server", ["uvicorn", "hypercorn"])
def test_a_drip_fed_body_times_out(server: str) -> None:
    async def main() -> None:
        app = our_app(limits=acp_v1.Limits(body_timeout=0.5))
        async with serving(app, server) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(f"POST /acp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                         "Content-Length: 1000\r\n\r\n{".encode())
            await writer.drain()
            for _ in range(3):
                await asyncio.sleep(0.2)
                writer.write(b" ")  # a byte now and then: never the whole body
                await writer.drain()
            status = await asyncio.wait_for(reader.readline(), 5)
            writer.close()
            assert status.split()[1] == b"408", status
            assert app.held == 0

    run(main())


def test_max_sessions_counts_pending_session_new(tmp_path: Path) -> None:
    import websockets

    async def main() -> None:
        app = our_app(limits=acp_v1.Limits(max_sessions=2))
        async with serving(app, "uvicorn") as port, websockets.connect(url(port, "ws")) as ws:
            await ws.send(json.dumps(INIT))
            await ws.recv()
            for i in range(12):  # all sent before any is answered
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "session/new",
                                          "params": {"cwd": str(tmp_path), "mcpServers": []}}))
            answers = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(12)]
            assert sum("result" in a for a in answers) == 2
            assert sum(a.get("error", {}).get("code") == asgi.TOO_MANY_SESSIONS for a in answers) == 10
            (remote,) = app.connections.values()
            assert len(remote.sessions) == 2

    run(main())


@pytest.mark.parametrize("host", ["localhost:{port}@attacker.example", "[::1]attacker.example", "",
                                  "localhost:port", "127.0.0.1:{port}/x"])
def test_malformed_host_headers_are_refused(host: str) -> None:
    async def main() -> None:
        app = our_app()
        async with serving(app, "uvicorn") as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            body = json.dumps(INIT).encode()
            writer.write(f"POST /acp HTTP/1.1\r\nHost: {host.format(port=port)}\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
            status = await asyncio.wait_for(reader.readline(), 5)
            writer.close()
            assert status.split()[1] in (b"400", b"403"), status
            assert app.connections == {}

    run(main())


def test_a_refused_post_never_waits_on_a_full_stream(tmp_path: Path) -> None:
    """Answers the app gives itself (here: -32002 for a session not on the connection) go on the
    connection's stream; when nobody reads it and it is full, the POST gets 429 instead of waiting."""

    async def main() -> None:
        app = our_app(limits=acp_v1.Limits(stream_backlog=3))
        async with serving(app, "uvicorn") as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            cid = (await http.post(base, json=INIT, headers=JSON)).headers["acp-connection-id"]
            statuses = []
            for i in range(6):
                stray = {"jsonrpc": "2.0", "id": i + 1, "method": "session/set_mode",
                         "params": {"sessionId": "ex-not-here", "modeId": "m"}}
                answer = await asyncio.wait_for(http.post(base, json=stray, headers={**JSON, "acp-connection-id": cid}), 3)
                statuses.append(answer.status_code)
            assert statuses == [202, 202, 202, 429, 429, 429]
            (remote,) = app.connections.values()
            assert len(remote.streams[None]) == 3

    run(main())


def test_our_client_retries_after_429(tmp_path: Path) -> None:
    """connect_agent over Streamable HTTP waits `Retry-After` and sends again: every call completes."""

    async def main() -> None:
        gate = asyncio.Event()
        limits = acp_v1.Limits(connection_budget=100 * 1024)
        app = acp_v1.AcpApp(lambda conn: Gated(conn, gate), limits=limits)
        async with serving(app, "hypercorn") as port, acp_v1.connect_agent(acp_v1.Client(), url(port, "http")) as conn:
            await conn.initialize(init_request())
            pad = [{}] * 300  # about 35 KB by held_bytes: two fit in the budget, the rest get 429
            calls = [asyncio.ensure_future(conn.ext_method("_wait", {"pad": pad, "i": i})) for i in range(5)]
            await asyncio.sleep(0.5)
            (remote,) = app.connections.values()
            assert len(remote.charged) == 2 and not any(c.done() for c in calls)
            gate.set()
            assert await asyncio.wait_for(asyncio.gather(*calls), 15) == [{}] * 5

    run(main())


def test_stdio_sends_a_lone_surrogate_as_an_escape() -> None:
    """The same rule on every transport: the runtime's encoder (stdio included) escapes a message
    holding a lone surrogate instead of failing to encode it."""
    from acp_v1.rpc import _dumps

    data = _dumps({"jsonrpc": "2.0", "id": "\ud800", "result": {"title": "é \udfff"}})
    assert data.decode("ascii") and json.loads(data) == {"jsonrpc": "2.0", "id": "\ud800", "result": {"title": "é \udfff"}}
    assert _dumps({"text": "é"}) == '{"text":"é"}'.encode()  # anything else stays UTF-8


# -- the pieces, without a server ----------------------------------------------------------------------


@pytest.mark.parametrize(("host", "name"), [
    ("127.0.0.1", "127.0.0.1"), ("localhost:8000", "localhost"), ("[::1]", "::1"), ("[::1]:8000", "::1"),
    ("Agent.Example:443", "agent.example"), ("", None), ("localhost:8000@attacker.example", None),
    ("[::1]attacker.example", None), ("localhost:", None), ("localhost:80:80", None), ("a b", None),
    ("user@localhost", None), ("localhost:123456", None),
])
def test_host_parsing_is_strict(host: str, name: str | None) -> None:
    assert asgi._host_name(host) == name


def test_held_bytes_errs_high_for_many_small_objects() -> None:
    import sys

    body = b'{"pad":[' + b"{}," * 9999 + b"{}]}"
    parsed = json.loads(body)
    real = sys.getsizeof(parsed["pad"]) + sum(sys.getsizeof(item) for item in parsed["pad"])
    assert asgi.held_bytes(body) >= real > 20 * len(body)  # ~25x the bytes, counted high
    text = json.dumps({"text": "x" * 100_000}).encode()
    assert asgi.held_bytes(text) < 2 * len(text)  # a long string is about its size


def test_session_owners_expire_and_stay_bounded() -> None:
    app = acp_v1.AcpApp(lambda conn: acp_v1.Agent(), limits=acp_v1.Limits(max_known_sessions=3, session_ttl=60))
    for i in range(5):
        app.hold_session("ann", f"s{i}", created=True)
    app.let_go_session("ann", "s0")
    app.let_go_session("ann", "s1")
    app.hold_session("bob", "s5", created=True)  # over the cap: idle owners are forgotten, oldest first
    assert list(app.owners) == ["s2", "s3", "s4", "s5"]  # the held ones stay, even past the cap
    assert not app.may_use("bob", "s2") and app.may_use("ann", "s2") and app.may_use("bob", "s0")
    assert app.owns("bob", "s5") and not app.owns("ann", "s5") and not app.owns("ann", "s0")


def test_every_byte_counted_is_given_back(tmp_path: Path) -> None:
    """After real turns over both profiles (and a connection dropped mid-way), the app holds nothing."""
    from tests.remote.test_remote import our_turn
    from tests.remote_support import readme_dir

    async def main() -> None:
        app = our_app()
        async with serving(app, "hypercorn") as port:
            for profile in ("ws", "http"):
                summary = await our_turn(url(port, profile), readme_dir(tmp_path))
                assert summary["stopReason"] == "end_turn"
            await asyncio.sleep(0.1)
            assert app.connections == {} and app.held == 0

    run(main())


def test_held_bytes_tells_text_from_structure_in_large_messages() -> None:
    """A long text full of commas and brackets (a pasted CSV) is about its size, not refused."""
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
                       "params": {"prompt": [{"type": "text", "text": 'a,"b",[c],{d}\\\n' * 400_000}]}}).encode()
    assert asgi.held_bytes(text) < 1.1 * len(text)
    pad = b'{"pad":[' + b"{}," * 2_000_000 + b"{}]}"  # the same size of real structure stays counted
    assert asgi.held_bytes(pad) > 25 * len(pad)


@pytest.mark.parametrize("server", ["uvicorn", "hypercorn"])
def test_delete_among_concurrent_posts_is_clean(server: str, caplog: pytest.LogCaptureFixture) -> None:
    """No 500 and no traceback when DELETE lands while POSTs of the same connection are in flight
    (and nobody reads the stream, so the agent's connection is backed up)."""

    async def main() -> set[int]:
        app = our_app(limits=acp_v1.Limits(stream_backlog=2))
        async with serving(app, server) as port, httpx.AsyncClient(timeout=5) as http:
            base = url(port, "http")
            cid = (await http.post(base, json=INIT, headers=JSON)).headers["acp-connection-id"]
            headers = {**JSON, "acp-connection-id": cid}

            async def post(i: int) -> int:
                ask = {"jsonrpc": "2.0", "id": i + 1, "method": "session/list", "params": {"pad": [{}] * 200}}
                return (await http.post(base, json=ask, headers=headers)).status_code

            posts = [asyncio.ensure_future(post(i)) for i in range(30)]
            await asyncio.sleep(0.05)
            deleted = await http.delete(base, headers={"acp-connection-id": cid})
            statuses = set(await asyncio.gather(*posts))
            assert deleted.status_code == 202 and app.connections == {} and app.held == 0
        return statuses

    with caplog.at_level(logging.WARNING):
        statuses = run(main())
    assert statuses <= {202, 404, 429}, statuses
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


class Asking(acp_v1.Agent):
    """Its extension method asks the client (an extension request) and returns the answer's size."""

    def __init__(self, conn: acp_v1.AgentSideConnection) -> None:
        self.conn = conn

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        return acp_v1.InitializeResponse(protocol_version=1)

    async def ext_method(self, method: str, params: object) -> object:
        answer = await self.conn.ext_method("_question", {})
        return {"size": len(json.dumps(answer))}


class Answering(acp_v1.Client):
    async def ext_method(self, method: str, params: object) -> object:
        return {"text": "x" * 20_000}


@pytest.mark.parametrize("profile", ["http", "ws"])
def test_answers_to_the_agent_pass_a_full_connection_budget(profile: str) -> None:
    """The requests that fill a connection's budget may be waiting for the client's answers: those
    answers are not held back by that budget (else both sides would wait)."""

    async def main() -> None:
        limits = acp_v1.Limits(connection_budget=80 * 1024)
        app = acp_v1.AcpApp(Asking, limits=limits)
        async with serving(app, "hypercorn") as port, acp_v1.connect_agent(Answering(), url(port, profile)) as conn:
            await conn.initialize(init_request())
            pad = [{}] * 300  # ~35 KB each by held_bytes: two fill most of the budget
            calls = [conn.ext_method("_ask", {"pad": pad, "i": i}) for i in range(2)]
            results = await asyncio.wait_for(asyncio.gather(*calls), 5)
            assert [r["size"] for r in results] == [len(json.dumps({"text": "x" * 20_000}))] * 2

    run(main())


class SameId(acp_v1.Agent):
    """Hands every caller the same session id (a demo agent's shortcut): its decision to share."""

    def __init__(self, conn: acp_v1.AgentSideConnection) -> None:
        pass

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        return acp_v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: acp_v1.NewSessionRequest) -> acp_v1.NewSessionResponse:
        return acp_v1.NewSessionResponse(session_id="the-one")

    async def session_prompt(self, params: acp_v1.PromptRequest) -> acp_v1.PromptResponse:
        return acp_v1.PromptResponse(stop_reason=acp_v1.StopReason.END_TURN)


def test_an_id_the_agent_hands_to_several_callers_is_theirs() -> None:
    async def main() -> None:
        app = acp_v1.AcpApp(SameId)
        async with serving(app, "uvicorn") as port:
            new = acp_v1.NewSessionRequest(cwd="/", mcp_servers=[])
            prompt = acp_v1.PromptRequest(session_id="the-one", prompt=[])
            async with acp_v1.connect_agent(acp_v1.Client(), url(port, "ws")) as a, \
                    acp_v1.connect_agent(acp_v1.Client(), url(port, "ws")) as b:
                for conn in (a, b):
                    await conn.initialize(init_request())
                    assert (await conn.session_new(new)).session_id == "the-one"
                for conn in (a, b):
                    assert (await conn.session_prompt(prompt)).stop_reason == "end_turn"
                assert len(app.owners["the-one"].identities) == 2
            await asyncio.sleep(0.1)
            assert app.owners["the-one"].identities == set()  # anonymous callers do not come back

    run(main())
