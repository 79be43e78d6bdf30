"""The protocol's lifecycle by construction (issue 24): a client's `session/cancel` answers that
session's pending permission requests itself, responses and requests reach handlers after the
notifications sent before them, updates for a session being created are held until its creator
returns, capability gates, observers on every transport, receive timeouts and trace context. Real
connections: stdio-like pipes (`duplex`, a `StreamTransport`) and `memory_pair`, acp_v1 and acp_v2."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.runtime_support import RawPeer, duplex

VERSIONS = ["acp_v1", "acp_v2"]
MESSAGES = Path(__file__).resolve().parents[1] / "fixtures" / "messages"
UPDATE_FIXTURE = {"acp_v1": "SessionNotification", "acp_v2": "UpdateSessionNotification"}


def fixture(version: str, name: str, **changes: Any) -> dict[str, Any]:
    """The first example of `name` in the version's message fixtures, with `changes` applied."""
    value = json.loads((MESSAGES / version.removeprefix("acp_") / f"{name}.json").read_text())[0]
    return {**value, **changes}


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 10))


def package(version: str) -> ModuleType:
    importlib.import_module(f"{version}.telemetry")  # a submodule: `pkg.telemetry` once imported
    return importlib.import_module(version)


def client_over_pipes(pkg: ModuleType, client: Any, **options: Any) -> tuple[Any, RawPeer]:
    """A ClientSideConnection over a stdio-like pipe pair, and the raw agent at the other end."""
    ours, theirs = duplex()
    conn = pkg.ClientSideConnection(client, ours[0], ours[1], **options)
    return conn, RawPeer(*theirs)


def agent_over_pipes(pkg: ModuleType, agent: Any, **options: Any) -> tuple[Any, RawPeer]:
    ours, theirs = duplex()
    conn = pkg.AgentSideConnection(agent, ours[0], ours[1], **options)
    return conn, RawPeer(*theirs)


# -- 1. session/cancel answers the session's pending permission requests ------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_session_cancel_answers_pending_permission_requests_with_cancelled(version: str) -> None:
    pkg = package(version)

    class ForgetfulClient(pkg.Client):  # type: ignore[name-defined, misc]
        def __init__(self) -> None:
            self.asked: list[str] = []
            self.stopped: list[str] = []

        async def session_request_permission(self, params: Any) -> Any:
            self.asked.append(params.session_id)
            try:
                await asyncio.Event().wait()  # never answers by itself
            except asyncio.CancelledError:
                self.stopped.append(params.session_id)
                raise

    async def main() -> None:
        client = ForgetfulClient()
        conn, agent = client_over_pipes(pkg, client)
        agent.send({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission",
                    "params": fixture(version, "RequestPermissionRequest", sessionId="s1")})
        agent.send({"jsonrpc": "2.0", "id": 8, "method": "session/request_permission",
                    "params": fixture(version, "RequestPermissionRequest", sessionId="other")})
        while len(client.asked) < 2:
            await asyncio.sleep(0.01)
        await conn.session_cancel(session_id="s1")
        first = await agent.recv()
        assert first == {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}
        answer = await agent.recv()
        assert answer == {"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "cancelled"}}}
        assert client.stopped == ["s1"]
        # the other session's request is still the handler's to answer
        with pytest.raises(asyncio.TimeoutError):
            await agent.recv(timeout=0.2)
        await conn.close()

    run(main())


@pytest.mark.parametrize("version", VERSIONS)
def test_a_permission_answer_given_before_the_cancel_is_kept(version: str) -> None:
    pkg = package(version)
    chosen = fixture(version, "RequestPermissionRequest")["options"][0]["optionId"]

    class PromptClient(pkg.Client):  # type: ignore[name-defined, misc]
        async def session_request_permission(self, params: Any) -> Any:
            return pkg.decode("RequestPermissionResponse",
                              {"outcome": {"outcome": "selected", "optionId": chosen}})

    async def main() -> None:
        conn, agent = client_over_pipes(pkg, PromptClient())
        agent.send({"jsonrpc": "2.0", "id": 1, "method": "session/request_permission",
                    "params": fixture(version, "RequestPermissionRequest", sessionId="s1")})
        answer = await agent.recv()
        await conn.session_cancel(session_id="s1")
        assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": chosen}
        assert (await agent.recv())["method"] == "session/cancel"
        with pytest.raises(asyncio.TimeoutError):
            await agent.recv(timeout=0.2)
        await conn.close()

    run(main())


# -- 5. observers and receive timeouts -----------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_observers_see_every_message_in_and_out_over_pipes(version: str) -> None:
    pkg = package(version)
    seen: list[tuple[str, Any, bytes | str]] = []

    async def main() -> None:
        conn, agent = client_over_pipes(
            pkg, pkg.Client(), observers=(lambda d, m, raw: seen.append((d, m, raw)),))
        call = asyncio.ensure_future(conn.call_raw("_vendor/ping", {"n": 1}))
        request = await agent.recv()
        agent.send_line("not json\n")
        agent.send({"jsonrpc": "2.0", "id": request["id"], "result": {"pong": True}})
        assert await call == {"pong": True}
        update = fixture(version, UPDATE_FIXTURE[version])
        agent.send({"jsonrpc": "2.0", "method": "session/update", "params": update})
        await asyncio.sleep(0.05)
        await conn.close()

    run(main())
    assert [(d, m and m.get("method", m.get("id"))) for d, m, _ in seen] == [
        ("out", "_vendor/ping"), ("in", None), ("in", 0), ("in", "session/update")]
    out_raw = seen[0][2]
    assert isinstance(out_raw, bytes) and json.loads(out_raw) == seen[0][1]
    assert seen[1][2] in ("not json", b"not json")
    assert seen[3][1]["params"] == fixture(version, UPDATE_FIXTURE[version])


@pytest.mark.parametrize("version", VERSIONS)
def test_observers_on_memory_pair_and_add_observer_removal(version: str) -> None:
    pkg = package(version)
    seen: list[tuple[str, Any]] = []
    agent_side: list[tuple[str, Any]] = []

    class Agent(pkg.Agent):  # type: ignore[name-defined, misc]
        async def initialize(self, params: Any) -> Any:
            return pkg.decode("InitializeResponse", fixture(version, "InitializeResponse"))

    async def main() -> None:
        async with pkg.memory_pair(Agent(), pkg.Client(),
                                   observers=(lambda d, m, raw: seen.append((d, m)),)) as (a, c):
            remove = a.add_observer(lambda d, m, raw: agent_side.append((d, m)))
            init = pkg.decode("InitializeRequest", fixture(version, "InitializeRequest"))
            await c.initialize(init)
            remove()
            await c.initialize(init)

    run(main())
    assert [(d, "method" in m) for d, m in seen] == [("out", True), ("in", False)] * 2
    assert [(d, m.get("method")) for d, m in agent_side] == [("in", "initialize"), ("out", None)]


@pytest.mark.parametrize("version", VERSIONS)
def test_an_observer_that_raises_is_logged_and_the_message_still_goes(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    pkg = package(version)

    def broken(direction: str, message: Any, raw: bytes | str) -> None:
        raise RuntimeError("observer bug")

    async def main() -> Any:
        conn, agent = client_over_pipes(pkg, pkg.Client(), observers=(broken,))
        call = asyncio.ensure_future(conn.call_raw("_x", {}))
        request = await agent.recv()
        agent.send({"jsonrpc": "2.0", "id": request["id"], "result": {"ok": 1}})
        result = await call
        await conn.close()
        return result

    assert run(main()) == {"ok": 1}
    assert "message observer" in caplog.text and "observer bug" in caplog.text


@pytest.mark.parametrize("version", VERSIONS)
def test_a_call_past_the_receive_timeout_raises_and_is_cancelled_on_the_peer(version: str) -> None:
    pkg = package(version)

    async def main() -> None:
        conn, agent = client_over_pipes(
            pkg, pkg.Client(), limits=pkg.rpc.ConnectionLimits(receive_timeout=0.1))
        with pytest.raises(pkg.rpc.CallTimeoutError) as info:
            await conn.session_new(**_new_session_fields(version))
        assert info.value.method == "session/new" and info.value.cancelled_on_peer
        assert "within 0.1 s" in str(info.value) and "receive_timeout" in str(info.value)
        request = await agent.recv()
        assert request["method"] == "session/new"
        cancel = await agent.recv()
        assert cancel == {"jsonrpc": "2.0", "method": "$/cancel_request",
                          "params": {"requestId": request["id"]}}
        # a late answer is ignored; the per-call override waits longer than the default
        agent.send({"jsonrpc": "2.0", "id": request["id"], "result": {"sessionId": "late"}})
        with conn.timeout(5):
            call = asyncio.ensure_future(conn.call_raw("_slow", {}))
            second = await agent.recv()
            await asyncio.sleep(0.3)
            agent.send({"jsonrpc": "2.0", "id": second["id"], "result": {"done": True}})
            assert await call == {"done": True}
        with conn.timeout(0.05), pytest.raises(TimeoutError):
            await conn.call_raw("_slow", {})
        await conn.close()

    run(main())


def _new_session_fields(version: str) -> dict[str, Any]:
    return {"cwd": "/", "mcp_servers": []} if version == "acp_v1" else {"cwd": "/"}


# -- 2. wire order: responses and requests after the notifications sent before them --------------


def recording_client(pkg: ModuleType, log: list[str], update_delay: float = 0.0) -> Any:
    class Recording(pkg.Client):  # type: ignore[name-defined, misc]
        async def session_update(self, params: Any) -> None:
            await asyncio.sleep(update_delay)  # a handler that takes time (a UI repaint)
            log.append(f"update {params.session_id}")

        async def session_request_permission(self, params: Any) -> Any:
            log.append(f"permission {params.session_id}")
            return pkg.decode("RequestPermissionResponse", {"outcome": {"outcome": "cancelled"}})

    return Recording()


@pytest.mark.parametrize("version", VERSIONS)
def test_a_response_is_delivered_after_every_notification_sent_before_it(version: str) -> None:
    pkg = package(version)
    log: list[str] = []

    async def main() -> None:
        conn, agent = client_over_pipes(pkg, recording_client(pkg, log, 0.001))
        call = asyncio.ensure_future(conn.call_raw("_turn", {}))
        request = await agent.recv()
        for _ in range(20):
            agent.send({"jsonrpc": "2.0", "method": "session/update",
                        "params": fixture(version, UPDATE_FIXTURE[version], sessionId="s1")})
        agent.send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
        await call
        log.append("answer")
        await conn.close()

    run(main())
    assert log == ["update s1"] * 20 + ["answer"]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_request_reaches_its_handler_after_the_notifications_sent_before_it(version: str) -> None:
    """A permission request after the update announcing its tool call: the client's permission
    handler runs once the update was handled (before, the request ran at once, beside it)."""
    pkg = package(version)
    log: list[str] = []

    async def main() -> None:
        conn, agent = client_over_pipes(pkg, recording_client(pkg, log, 0.05))
        agent.send({"jsonrpc": "2.0", "method": "session/update",
                    "params": fixture(version, UPDATE_FIXTURE[version], sessionId="s1")})
        agent.send({"jsonrpc": "2.0", "id": 1, "method": "session/request_permission",
                    "params": fixture(version, "RequestPermissionRequest", sessionId="s1")})
        answer = await agent.recv()
        assert answer["id"] == 1 and answer["result"] == {"outcome": {"outcome": "cancelled"}}
        await conn.close()

    run(main())
    assert log == ["update s1", "permission s1"]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_notification_handler_waiting_for_the_peer_does_not_hold_its_requests(version: str) -> None:
    """The agent answers the update handler's call only after the client answered its permission
    request (sent after the update): the request is not held behind that handler (no deadlock)."""
    pkg = package(version)
    log: list[str] = []

    class Asking(pkg.Client):  # type: ignore[name-defined, misc]
        def __init__(self) -> None:
            self.conn: Any = None

        async def session_update(self, params: Any) -> None:
            log.append("update asks")
            log.append(f"agent said {await self.conn.call_raw('_ask', {})}")

        async def session_request_permission(self, params: Any) -> Any:
            log.append("permission")
            return pkg.decode("RequestPermissionResponse", {"outcome": {"outcome": "cancelled"}})

    async def main() -> None:
        client = Asking()
        conn, agent = client_over_pipes(pkg, client)
        client.conn = conn
        agent.send({"jsonrpc": "2.0", "method": "session/update",
                    "params": fixture(version, UPDATE_FIXTURE[version], sessionId="s1")})
        agent.send({"jsonrpc": "2.0", "id": 1, "method": "session/request_permission",
                    "params": fixture(version, "RequestPermissionRequest", sessionId="s1")})
        ask = await agent.recv()
        assert ask["method"] == "_ask"
        assert (await agent.recv())["id"] == 1  # answered while the update handler waits
        agent.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"n": 1}})
        await asyncio.sleep(0.05)
        await conn.close()

    run(main())
    assert log == ["update asks", "permission", "agent said {'n': 1}"]


# -- 3. updates for a session being created wait for its creator's answer ------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_updates_for_a_session_not_returned_yet_wait_for_session_new(version: str) -> None:
    pkg = package(version)
    log: list[str] = []

    async def main() -> None:
        conn, agent = client_over_pipes(pkg, recording_client(pkg, log))
        call = asyncio.ensure_future(conn.session_new(**_new_session_fields(version)))
        request = await agent.recv()
        for sid in ("new1", "known", "new1"):
            agent.send({"jsonrpc": "2.0", "method": "session/update",
                        "params": fixture(version, UPDATE_FIXTURE[version], sessionId=sid)})
        agent.send({"jsonrpc": "2.0", "id": request["id"],
                    "result": fixture(version, "NewSessionResponse", sessionId="new1")})
        session = await call
        log.append(f"created {session.session_id}")  # before the held updates are handled
        await asyncio.sleep(0.05)
        await conn.close()

    run(main())
    # every update names a session unknown while session/new waits: all held, in order
    assert log == ["created new1", "update new1", "update known", "update new1"]


@pytest.mark.parametrize("version", VERSIONS)
def test_updates_for_a_session_we_named_are_not_held(version: str) -> None:
    pkg = package(version)
    log: list[str] = []

    async def main() -> None:
        conn, agent = client_over_pipes(pkg, recording_client(pkg, log))
        await conn.session_cancel(session_id="old")  # the client named session "old"
        await agent.recv()
        call = asyncio.ensure_future(conn.session_new(**_new_session_fields(version)))
        request = await agent.recv()
        for sid in ("old", "new2"):
            agent.send({"jsonrpc": "2.0", "method": "session/update",
                        "params": fixture(version, UPDATE_FIXTURE[version], sessionId=sid)})
        while not log:
            await asyncio.sleep(0.01)
        assert log == ["update old"]  # handled while session/new waits; new2 is held
        agent.send({"jsonrpc": "2.0", "id": request["id"],
                    "result": fixture(version, "NewSessionResponse", sessionId="new2")})
        await call
        log.append("created")
        await asyncio.sleep(0.05)
        await conn.close()

    run(main())
    assert log == ["update old", "created", "update new2"]


@pytest.mark.parametrize("version", VERSIONS)
def test_held_updates_past_the_bound_are_handled_in_order_with_a_warning(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    pkg = package(version)
    log: list[str] = []

    async def main() -> None:
        conn, agent = client_over_pipes(pkg, recording_client(pkg, log),
                                        limits=pkg.rpc.ConnectionLimits(held_updates=2))
        call = asyncio.ensure_future(conn.session_new(**_new_session_fields(version)))
        request = await agent.recv()
        for sid in ("a", "b", "c", "d"):
            agent.send({"jsonrpc": "2.0", "method": "session/update",
                        "params": fixture(version, UPDATE_FIXTURE[version], sessionId=sid)})
        while len(log) < 2:
            await asyncio.sleep(0.01)
        assert log == ["update a", "update b"]  # the two past the bound, oldest first
        agent.send({"jsonrpc": "2.0", "id": request["id"],
                    "result": fixture(version, "NewSessionResponse", sessionId="x")})
        await call
        await asyncio.sleep(0.05)
        await conn.close()

    run(main())
    assert log == ["update a", "update b", "update c", "update d"]
    assert "ConnectionLimits.held_updates" in caplog.text


@pytest.mark.parametrize("version", VERSIONS)
def test_a_failed_session_new_releases_what_it_held(version: str) -> None:
    pkg = package(version)
    log: list[str] = []

    async def main() -> None:
        conn, agent = client_over_pipes(pkg, recording_client(pkg, log))
        call = asyncio.ensure_future(conn.session_new(**_new_session_fields(version)))
        request = await agent.recv()
        agent.send({"jsonrpc": "2.0", "method": "session/update",
                    "params": fixture(version, UPDATE_FIXTURE[version], sessionId="z")})
        agent.send({"jsonrpc": "2.0", "id": request["id"],
                    "error": {"code": -32603, "message": "no"}})
        with pytest.raises(pkg.RequestError):
            await call
        await asyncio.sleep(0.05)
        await conn.close()

    run(main())
    assert log == ["update z"]


# -- 4. capability gates ---------------------------------------------------------------------------


def test_the_agent_refuses_to_call_a_client_method_the_client_did_not_advertise() -> None:
    pkg = package("acp_v1")

    class Agent(pkg.Agent):  # type: ignore[name-defined, misc]
        async def initialize(self, params: Any) -> Any:
            return pkg.decode("InitializeResponse", {"protocolVersion": 1})

    async def main() -> None:
        conn, client = agent_over_pipes(pkg, Agent())
        client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}})
        await client.recv()
        with pytest.raises(pkg.rpc.CapabilityError) as info:
            await conn.fs_write_text_file(session_id="s", path="/a", content="x")
        assert info.value.capability == ("clientCapabilities", "fs", "writeTextFile")
        assert "clientCapabilities.fs.writeTextFile" in str(info.value)
        assert "check_capabilities=False" in str(info.value)
        with pytest.raises(pkg.rpc.CapabilityError):
            await conn.terminal_create(session_id="s", command="ls")
        # the advertised one goes out; nothing was sent for the refused ones
        read = asyncio.ensure_future(conn.fs_read_text_file(session_id="s", path="/a"))
        request = await client.recv()
        assert request["method"] == "fs/read_text_file"
        client.send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": "a"}})
        assert (await read).content == "a"
        # the opt-out
        conn.check_capabilities = False
        write = asyncio.ensure_future(conn.fs_write_text_file(session_id="s", path="/a", content="x"))
        assert (await client.recv())["method"] == "fs/write_text_file"
        write.cancel()
        await conn.close()

    run(main())


def test_the_v2_client_refuses_agent_methods_the_agent_did_not_advertise() -> None:
    pkg = package("acp_v2")

    async def main() -> None:
        conn, agent = client_over_pipes(pkg, pkg.Client())
        init = asyncio.ensure_future(conn.initialize(pkg.decode("InitializeRequest", fixture("acp_v2", "InitializeRequest"))))
        request = await agent.recv()
        answer = fixture("acp_v2", "InitializeResponse")
        answer["capabilities"] = {"session": {"delete": None}}  # the baseline session methods only
        agent.send({"jsonrpc": "2.0", "id": request["id"], "result": answer})
        await init
        assert conn.peer_initialize["capabilities"] == {"session": {"delete": None}}
        with pytest.raises(pkg.rpc.CapabilityError) as info:
            await conn.session_fork(session_id="s", cwd="/")
        assert info.value.capability == ("capabilities", "session", "fork")
        with pytest.raises(pkg.rpc.CapabilityError):
            await conn.session_delete(session_id="s")  # null is not advertised
        new = asyncio.ensure_future(conn.session_new(cwd="/"))
        assert (await agent.recv())["method"] == "session/new"  # baseline: advertised by `session`
        new.cancel()
        await conn.close()

    run(main())


def test_a_v2_agent_without_session_capabilities_gets_no_session_new() -> None:
    pkg = package("acp_v2")

    async def main() -> None:
        conn, agent = client_over_pipes(pkg, pkg.Client())
        init = asyncio.ensure_future(conn.initialize(pkg.decode("InitializeRequest", fixture("acp_v2", "InitializeRequest"))))
        request = await agent.recv()
        agent.send({"jsonrpc": "2.0", "id": request["id"],
                    "result": {**fixture("acp_v2", "InitializeResponse"), "capabilities": {}}})
        await init
        with pytest.raises(pkg.rpc.CapabilityError, match=r"capabilities\.session"):
            await conn.session_new(cwd="/")
        await conn.close()

    run(main())


@pytest.mark.parametrize("version", VERSIONS)
def test_unhandled_capabilities_names_what_the_agent_advertises_without_a_handler(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    pkg = package(version)
    advertised = fixture(version, "InitializeResponse")

    class HalfAgent(pkg.Agent):  # type: ignore[name-defined, misc]
        async def initialize(self, params: Any) -> Any:
            return pkg.decode("InitializeResponse", advertised)

        async def session_list(self, params: Any) -> Any:
            raise pkg.RequestError.internal_error()

    async def main() -> list[tuple[str, str]]:
        async with pkg.memory_pair(HalfAgent(), pkg.Client()) as (agent_end, client_end):
            assert agent_end.unhandled_capabilities() == []  # nothing advertised yet
            await client_end.initialize(pkg.decode("InitializeRequest", fixture(version, "InitializeRequest")))
            return agent_end.unhandled_capabilities()  # type: ignore[no-any-return]

    found = {m: p for p, m in run(main())}
    gates = pkg._protocol.AGENT_CAPABILITIES
    # every gated method the fixture advertises, except the one HalfAgent implements
    expected = {m: ".".join(p) for m, p in gates.items()
                if pkg.rpc.advertised(advertised, p) and m != "session/list"}
    assert found == expected and expected
    if version == "acp_v1":
        assert found["session/load"] == "agentCapabilities.loadSession"
        assert "session/list" not in found  # advertised and implemented
    for method in found:
        assert repr(method) in caplog.text  # warned at initialize
    assert "HalfAgent does not implement" in caplog.text


# -- 6. trace context and OpenTelemetry ------------------------------------------------------------


def probing_pair(pkg: ModuleType, version: str, seen: dict[str, Any]) -> tuple[Any, Any]:
    """An agent whose initialize calls the client's `_probe` extension, and a client recording
    what reaches it."""

    class Agent(pkg.Agent):  # type: ignore[name-defined, misc]
        def __init__(self, conn: Any) -> None:
            self.conn = conn

        async def initialize(self, params: Any) -> Any:
            seen["agent params"] = pkg.encode(params)
            seen["agent context"] = pkg.telemetry.current_trace()
            await self.conn.call_raw("_probe", {"n": 1})
            return pkg.decode("InitializeResponse", fixture(version, "InitializeResponse"))

        async def session_list(self, params: Any) -> Any:
            raise pkg.RequestError.resource_not_found()

    class Client(pkg.Client):  # type: ignore[name-defined, misc]
        async def ext_method(self, method: str, params: Any) -> Any:
            seen[method] = params
            return {}

    return Agent, Client()


@pytest.mark.parametrize("version", VERSIONS)
def test_traceparent_propagates_through_meta_with_the_stdlib_fallback(version: str) -> None:
    pkg = package(version)
    seen: dict[str, Any] = {}
    agent, client = probing_pair(pkg, version, seen)

    async def main() -> None:
        async with pkg.memory_pair(agent, client) as (agent_end, client_end):
            tracing = pkg.telemetry.Tracing(opentelemetry=False)
            assert not tracing.uses_opentelemetry
            agent_end.tracing = client_end.tracing = tracing
            await client_end.initialize(pkg.decode("InitializeRequest", fixture(version, "InitializeRequest")))

    run(main())
    sent = pkg.telemetry.TraceContext.parse(seen["agent params"]["_meta"]["traceparent"])
    assert sent is not None and sent == seen["agent context"]
    # the agent's call made while handling continues the trace with a span of its own
    probe = pkg.telemetry.TraceContext.parse(seen["_probe"]["_meta"]["traceparent"])
    assert probe is not None and probe.trace_id == sent.trace_id and probe.span_id != sent.span_id
    assert seen["_probe"]["n"] == 1


def test_trace_context_parsing_follows_w3c() -> None:
    parse = package("acp_v1").telemetry.TraceContext.parse
    good = parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "k=v")
    assert good is not None and good.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736" and good.state == "k=v"
    assert good.traceparent == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    for bad in ("00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-xyz", 7, None):
        assert parse(bad) is None


def test_a_traceparent_the_caller_set_is_kept() -> None:
    pkg = package("acp_v1")
    mine = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    async def main() -> Any:
        conn, agent = client_over_pipes(pkg, pkg.Client(), tracing=pkg.telemetry.Tracing(opentelemetry=False))
        call = asyncio.ensure_future(conn.call_raw("_x", {"_meta": {"traceparent": mine, "k": 1}}))
        request = await agent.recv()
        call.cancel()
        await conn.close()
        return request

    assert run(main())["params"]["_meta"] == {"traceparent": mine, "k": 1}


@pytest.mark.parametrize("version", VERSIONS)
def test_opentelemetry_spans_per_request_with_parents_across_the_connection(version: str) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind, StatusCode

    pkg = package(version)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    seen: dict[str, Any] = {}
    agent, client = probing_pair(pkg, version, seen)

    async def main() -> None:
        async with pkg.memory_pair(agent, client) as (agent_end, client_end):
            tracing = pkg.telemetry.Tracing(opentelemetry=True, tracer=provider.get_tracer("test"))
            assert tracing.uses_opentelemetry
            agent_end.tracing = client_end.tracing = tracing
            await client_end.initialize(pkg.decode("InitializeRequest", fixture(version, "InitializeRequest")))
            with pytest.raises(pkg.RequestError):
                await client_end.call_raw("session/list", {})

    run(main())
    spans = {(s.name, s.kind): s for s in exporter.get_finished_spans()}
    call, handled = spans[("initialize", SpanKind.CLIENT)], spans[("initialize", SpanKind.SERVER)]
    probe_call, probe_handled = spans[("_probe", SpanKind.CLIENT)], spans[("_probe", SpanKind.SERVER)]
    trace_id = call.context.trace_id
    assert {s.context.trace_id for s in (handled, probe_call, probe_handled)} == {trace_id}
    assert handled.parent.span_id == call.context.span_id  # across the connection, via _meta
    assert probe_call.parent.span_id == handled.context.span_id  # the handler's own call
    assert probe_handled.parent.span_id == probe_call.context.span_id
    assert call.attributes["rpc.method"] == "initialize" and call.attributes["acp.outcome"] == "ok"
    assert call.attributes["rpc.jsonrpc.request_id"] == "0"
    failed = spans[("session/list", SpanKind.SERVER)]
    assert failed.attributes["acp.outcome"] == "error -32002" and failed.status.status_code is StatusCode.ERROR
    assert spans[("session/list", SpanKind.CLIENT)].attributes["acp.outcome"] == "error -32002"
    header = seen["agent params"]["_meta"]["traceparent"]
    assert header.split("-")[1] == format(trace_id, "032x")


def test_without_tracing_neither_telemetry_nor_opentelemetry_is_imported() -> None:
    import subprocess
    import sys

    from tests.conftest import GENERATED

    code = (
        "import asyncio, sys, acp_v1\n"
        "async def main():\n"
        "    async with acp_v1.memory_pair(acp_v1.Agent(), acp_v1.Client()) as (a, c):\n"
        "        try:\n"
        "            await c.initialize(protocol_version=1)\n"
        "        except acp_v1.RequestError:\n"
        "            pass\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if 'telemetry' in m))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(GENERATED)}, timeout=60)
    assert out.stdout.strip() == "[]"
