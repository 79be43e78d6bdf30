"""Protocol v2 in the generated runtime, and the version router, over in-memory pipes.

What the schema decides per target (tests of `acpgen.render.protocol` on the real schemas), what
the v2 runtime does differently from v1 (-32022 negotiation, `session/cancel` that leaves the
prompt's answer alone and cancels session tasks, no null ids, error helpers from `ErrorData`),
and each rule of the router (`router.py`, the rules of the TS SDK's `AgentProtocolRouter`)."""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import acp_v1
import acp_v2
import pytest

from acpgen.ir import IrOptions, build_package
from acpgen.load import load_schema
from acpgen.render.codegen import Emitter
from acpgen.render.protocol import protocol_view
from tests.runtime.test_runtime import run
from tests.runtime_support import RawPeer, duplex

ROOT = Path(__file__).resolve().parents[2]
V1_INIT = {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
V2_INIT = {"protocolVersion": 2, "info": {"name": "t", "version": "0"}, "capabilities": {}}


def view(version: str, protocol_version: int, error_codes: dict[str, int] | None = None) -> Any:
    schema = ROOT / "schema" / version / "schema.json"
    loaded, _ = load_schema(schema, schema.with_name("schema.unstable.json"), None, find_companion=False)
    assert loaded is not None
    package, _ = build_package(loaded, IrOptions(package="p", protocol_version=protocol_version,
                                                 error_codes=error_codes or {}))
    assert package is not None
    return protocol_view(package, Emitter(package))


# -- what each schema says ---------------------------------------------------------------------


def test_the_schema_decides_the_rules_per_target() -> None:
    # the v2 target's config links SessionNotFoundErrorData to -32002 (the schema says so only in prose)
    v1, v2 = view("v1", 1), view("v2", 2, {"/$defs/SessionNotFoundErrorData": -32002})
    # v1: no -32022, no error data types; the prompt result carries a stop reason; null ids allowed.
    assert v1.negotiation is None
    assert [h.name for h in v1.helpers] == ["authentication_required", "resource_not_found"]
    assert v1.cancelled_by_session == ("session/prompt",)
    assert v1.null_request_id is True
    # v2: -32022 with its data type; session_not_found from SessionNotFoundErrorData (code -32002,
    # linked by the config); the prompt result is only an acknowledgement; ids never null.
    assert v2.negotiation is not None and (v2.negotiation.method, v2.negotiation.field) == ("initialize", "protocolVersion")
    helpers = {h.name: (h.code, h.data_class, [(a.py, a.ann) for a in h.args]) for h in v2.helpers}
    assert helpers["unsupported_protocol_version"] == (
        -32022, "UnsupportedProtocolVersionErrorData", [("requested", "int"), ("supported", "list[int]")])
    assert helpers["session_not_found"] == (-32002, "SessionNotFoundErrorData", [("session_id", "str")])
    assert helpers["resource_not_found"] == (-32002, "", [])
    assert v2.cancelled_by_session == ()
    assert v2.null_request_id is False
    # without the link there is no helper for that shape (and the build warns: tests/unit/test_protocol_rules.py)
    assert "session_not_found" not in {h.name for h in view("v2", 2).helpers}


def test_error_helpers_follow_each_schema() -> None:
    assert acp_v2.RequestError.session_not_found("s1").to_json() == {
        "code": -32002, "message": "Resource not found", "data": {"sessionId": "s1"}}
    assert acp_v2.RequestError.unsupported_protocol_version(1, [2]).to_json() == {
        "code": -32022, "message": "Unsupported protocol version", "data": {"requested": 1, "supported": [2]}}
    # the schema's codes are protocol facts: _protocol.py (rpc.py is the same runtime in every package)
    assert importlib.import_module("acp_v2._protocol").UNSUPPORTED_PROTOCOL_VERSION == -32022
    assert acp_v1.RequestError.resource_not_found({"uri": "file:///x"}).to_json()["data"] == {"uri": "file:///x"}
    assert not hasattr(acp_v1.RequestError, "session_not_found")
    assert not hasattr(importlib.import_module("acp_v1._protocol"), "UNSUPPORTED_PROTOCOL_VERSION")


# -- the v2 runtime ----------------------------------------------------------------------------


class V2Agent(acp_v2.Agent):
    def __init__(self, conn: acp_v2.AgentSideConnection) -> None:
        self.conn = conn
        self.initialized = 0
        self.turn_cancelled = asyncio.Event()
        self.release = asyncio.Event()

    async def initialize(self, params: acp_v2.InitializeRequest) -> acp_v2.InitializeResponse:
        self.initialized += 1
        return acp_v2.InitializeResponse(protocol_version=2, info=acp_v2.Implementation(name="a", version="0"))

    async def session_prompt(self, params: acp_v2.PromptRequest) -> acp_v2.PromptResponse:
        self.conn.start_session_task(params.session_id, self.turn())
        await self.release.wait()  # the prompt's own handler keeps running after session/cancel
        return acp_v2.PromptResponse(message_id="m1")

    async def turn(self) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.turn_cancelled.set()
            raise


def serve_v2() -> tuple[RawPeer, acp_v2.AgentSideConnection, list[V2Agent]]:
    (a_in, a_out), (b_in, b_out) = duplex()
    agents: list[V2Agent] = []

    def make(conn: acp_v2.AgentSideConnection) -> V2Agent:
        agents.append(V2Agent(conn))
        return agents[-1]

    return RawPeer(b_in, b_out), acp_v2.AgentSideConnection(make, a_in, a_out), agents


def test_v2_agent_answers_a_v1_initialize_with_32022() -> None:
    async def body() -> None:
        peer, conn, agents = serve_v2()
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": V1_INIT})
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32022, "message": "Unsupported protocol version", "data": {"requested": 1, "supported": [2]}}}
        assert agents[0].initialized == 0
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": V2_INIT})  # still open
        assert (await peer.recv())["result"]["protocolVersion"] == 2
        peer.close()
        await conn.wait_closed()

    run(body)


def test_v2_session_cancel_ends_session_tasks_but_the_prompt_is_still_answered() -> None:
    async def body() -> None:
        peer, conn, agents = serve_v2()
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
                   "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}})
        await asyncio.sleep(0.05)
        peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
        await asyncio.wait_for(agents[0].turn_cancelled.wait(), 5)
        agents[0].release.set()
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"messageId": "m1"}}
        peer.close()
        await conn.wait_closed()

    run(body)


def test_v2_rejects_null_request_ids() -> None:
    async def body() -> None:
        peer, conn, _ = serve_v2()
        peer.send({"jsonrpc": "2.0", "id": None, "method": "initialize", "params": V2_INIT})
        answer = await peer.recv()
        assert answer["id"] is None and answer["error"]["code"] == -32600
        peer.close()
        await conn.wait_closed()

    run(body)


# -- the router --------------------------------------------------------------------------------


class V1Agent(acp_v1.Agent):
    def __init__(self, conn: acp_v1.AgentSideConnection) -> None:
        self.seen: list[dict[str, object]] = []

    async def initialize(self, params: acp_v1.InitializeRequest) -> acp_v1.InitializeResponse:
        wire = params.to_dict()
        self.seen.append(wire)
        return acp_v1.InitializeResponse(protocol_version=1)


class Routed:
    def __init__(self, *versions: int) -> None:
        self.v1: list[V1Agent] = []
        self.v2: list[V2Agent] = []
        routes = []
        if 1 in versions:
            routes.append(acp_v1.agent_route(lambda conn: self.v1.append(V1Agent(conn)) or self.v1[-1]))
        if 2 in versions:
            routes.append(acp_v2.agent_route(lambda conn: self.v2.append(V2Agent(conn)) or self.v2[-1]))
        (a_in, a_out), (b_in, b_out) = duplex()
        self.peer = RawPeer(b_in, b_out)
        self.serving = asyncio.get_running_loop().create_task(acp_v2.AgentRouter(*routes).serve(a_in, a_out))

    async def finish(self) -> None:
        self.peer.close()
        connection = await asyncio.wait_for(self.serving, 5)
        if connection is not None:
            await connection.wait_closed()


def init(request_id: object, params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def test_router_before_initialize() -> None:
    async def body() -> None:
        r = Routed(1, 2)
        r.peer.send([init(1, V2_INIT)])  # a batch: one -32600 with id null
        answer = await r.peer.recv()
        assert (answer["id"], answer["error"]["code"]) == (None, -32600)
        r.peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})  # ignored
        r.peer.send({"jsonrpc": "2.0", "id": 99, "result": {}})  # ignored
        r.peer.send({"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": "/"}})
        assert (await r.peer.recv())["error"]["code"] == -32600
        r.peer.send_line(b"{not json\n")
        assert (await r.peer.recv())["error"]["code"] == -32700
        for bad in ({"protocolVersion": "1"}, {"protocolVersion": -1}, {"protocolVersion": 70000}, None, {"protocolVersion": True}):
            r.peer.send(init(6, bad))
            answer = await r.peer.recv()
            assert (answer["id"], answer["error"]["code"]) == (6, -32602), bad
        r.peer.send(init(8, {"protocolVersion": 2}))  # no `info`: fails under v2, stays unrouted
        answer = await r.peer.recv()
        assert (answer["id"], answer["error"]["code"]) == (8, -32602) and "info" in answer["error"]["data"]["message"]
        r.peer.send(init(None, V2_INIT))  # v2 ids are strings or integers
        answer = await r.peer.recv()
        assert (answer["id"], answer["error"]["code"]) == (None, -32600)
        assert not r.v1 and not r.v2
        r.peer.send(init("ok", V2_INIT))  # and the connection was open all along
        assert (await r.peer.recv())["result"]["protocolVersion"] == 2
        await r.finish()

    run(body)


@pytest.mark.parametrize(("versions", "requested", "selected"), [
    ((1, 2), 0, 1), ((1, 2), 1, 1), ((1, 2), 2, 2), ((1, 2), 9, 2), ((1,), 0, 1), ((1,), 1, 1), ((1,), 2, 1),
    ((2,), 5, 2),
])
def test_router_selects_the_highest_version_at_or_below(versions: tuple[int, ...], requested: int, selected: int) -> None:
    async def body() -> None:
        r = Routed(*versions)
        params = dict(V2_INIT if requested >= 2 else V1_INIT, protocolVersion=requested)
        r.peer.send(init(1, params))
        answer = await r.peer.recv()
        assert answer["result"]["protocolVersion"] == selected, answer
        assert (len(r.v1), len(r.v2)) == ((1, 0) if selected == 1 else (0, 1))
        if selected == 1:
            forwarded = r.v1[0].seen[0]
            assert forwarded["protocolVersion"] == 1  # the forwarded initialize asks for the selected version
            assert "info" not in forwarded and "capabilities" not in forwarded  # v2 keys dropped on the way down
        await r.finish()

    run(body)


def test_v2_only_router_answers_v1_with_32022() -> None:
    async def body() -> None:
        r = Routed(2)
        for request_id, version in ((1, 1), (2, 0)):
            r.peer.send(init(request_id, dict(V1_INIT, protocolVersion=version)))
            assert (await r.peer.recv())["error"] == {"code": -32022, "message": "Unsupported protocol version",
                                                      "data": {"requested": version, "supported": [2]}}
        assert not r.v2
        await r.finish()

    run(body)


def test_below_every_version_the_lowest_route_follows_its_own_schema() -> None:
    # v1 (the lowest here) has no version error: the agent answers with a version it supports and
    # the client decides. The v1 spec's rule, which the TS router's -32022 (a v2 rule) would break.
    async def body() -> None:
        r = Routed(1, 2)
        r.peer.send(init(7, dict(V1_INIT, protocolVersion=0)))
        answer = await r.peer.recv()
        assert (answer["id"], answer["result"]["protocolVersion"]) == (7, 1)
        assert (len(r.v1), len(r.v2)) == (1, 0) and r.v1[0].seen[0]["protocolVersion"] == 1
        await r.finish()

    run(body)


@dataclass(frozen=True)
class StubRoute:
    version: int
    rejects_lower: bool


@pytest.mark.parametrize(("routes", "picks"), [
    # (version, rejects a lower request with an error of its own); requested -> selected version
    (((1, False), (2, True)), {0: 1, 1: 1, 2: 2, 9: 2}),
    (((2, True),), {0: None, 1: None, 2: 2, 3: 2}),
    (((1, False),), {0: 1, 1: 1, 5: 1}),
    (((2, True), (3, False)), {0: None, 1: None, 2: 2, 3: 3, 7: 3}),
    (((1, False), (3, False)), {0: 3, 2: 3, 4: 3}),  # v1 everywhere: the latest answers all
])
def test_router_select_per_route_rules(routes: tuple[tuple[int, bool], ...], picks: dict[int, int | None]) -> None:
    router = acp_v2.AgentRouter(*(StubRoute(v, r) for v, r in routes))  # type: ignore[arg-type]
    for requested, expected in picks.items():
        chosen = router.select(requested)
        assert (chosen.version if chosen is not None else None) == expected, requested


def test_a_newer_initialize_in_an_older_shape_goes_to_the_version_that_reads_it() -> None:
    async def body() -> None:
        r = Routed(1, 2)  # v1 params asking for a future version: v2 cannot read them (no `info`)
        r.peer.send(init(1, dict(V1_INIT, protocolVersion=1001)))
        answer = await r.peer.recv()
        assert answer["result"]["protocolVersion"] == 1, answer
        assert (len(r.v1), len(r.v2)) == (1, 0)
        forwarded = r.v1[0].seen[0]  # what v1 reads of it, defaults filled in
        assert (forwarded["protocolVersion"], forwarded["clientInfo"]) == (1, V1_INIT["clientInfo"])
        await r.finish()
        r = Routed(1, 2)  # the same version in v2's shape stays with v2
        r.peer.send(init(1, dict(V2_INIT, protocolVersion=1001)))
        assert (await r.peer.recv())["result"]["protocolVersion"] == 2
        assert (len(r.v1), len(r.v2)) == (0, 1)
        await r.finish()
        r = Routed(1, 2)  # asked for exactly v2: checked strictly, never handed down
        r.peer.send(init(1, dict(V1_INIT, protocolVersion=2)))
        assert (await r.peer.recv())["error"]["code"] == -32602
        assert not r.v1 and not r.v2
        await r.finish()

    run(body)


def test_router_never_reroutes_a_repeated_initialize() -> None:
    async def body() -> None:
        r = Routed(1, 2)
        r.peer.send(init(1, V2_INIT))
        assert (await r.peer.recv())["result"]["protocolVersion"] == 2
        r.peer.send(init(2, V1_INIT))  # the v2 implementation answers it (with -32022), not v1
        assert (await r.peer.recv())["error"]["code"] == -32022
        r.peer.send(init(3, V2_INIT))
        assert (await r.peer.recv())["result"]["protocolVersion"] == 2
        assert (len(r.v1), len(r.v2), r.v2[0].initialized) == (0, 1, 2)
        await r.finish()

    run(body)


def test_router_input_ending_before_initialize() -> None:
    async def body() -> None:
        r = Routed(1, 2)
        r.peer.close()
        assert await asyncio.wait_for(r.serving, 5) is None
        await r.peer.recv_eof()

    run(body)


def test_router_refuses_two_routes_for_one_version() -> None:
    with pytest.raises(ValueError, match="one route per protocol version"):
        acp_v2.AgentRouter(acp_v2.agent_route(acp_v2.Agent()), acp_v2.agent_route(acp_v2.Agent()))


VENDORED_SCRIPT = r"""
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])
import vend_one, vend_two

class Pipe:
    def __init__(self): self.reader = asyncio.StreamReader()
    def write(self, data): self.reader.feed_data(data)
    async def drain(self): pass
    def close(self): self.reader.feed_eof()

class One(vend_one.Agent):
    async def initialize(self, params):
        return vend_one.InitializeResponse(protocol_version=1)

class Two(vend_two.Agent):
    async def initialize(self, params):
        return vend_two.InitializeResponse(protocol_version=2, info=vend_two.Implementation(name="two", version="0"))

async def main():
    answers = []
    for version in (0, 1, 2, 3):
        to_agent, to_client = Pipe(), Pipe()
        # vend_one's router with a route from each package: routes fit any package's router.
        router = vend_one.AgentRouter(vend_one.agent_route(One()), vend_two.agent_route(Two()))
        serving = asyncio.ensure_future(router.serve(to_agent.reader, to_client))
        params = {"protocolVersion": version, "info": {"name": "c", "version": "0"}}
        to_agent.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode() + b"\n")
        answers.append(json.loads(await asyncio.wait_for(to_client.reader.readline(), 5)))
        to_agent.close()
        connection = await serving
        if connection is not None:
            await connection.wait_closed()
    print(json.dumps(answers))

asyncio.run(main())
"""


def test_router_works_from_vendored_packages_of_any_name(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.acpgen.targets.vend_one]\n"
        f"schema = {json.dumps(str(ROOT / 'schema' / 'v1' / 'schema.json'))}\n"
        'output = "pkgs/vend_one"\nprotocol_version = 1\n\n'
        "[tool.acpgen.targets.vend_two]\n"
        f"schema = {json.dumps(str(ROOT / 'schema' / 'v2' / 'schema.json'))}\n"
        'output = "pkgs/vend_two"\nprotocol_version = 2\n',
        encoding="utf-8",
    )
    build = subprocess.run([sys.executable, "-m", "acpgen", "build", "-q"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    run_it = subprocess.run([sys.executable, "-c", VENDORED_SCRIPT, str(tmp_path / "pkgs")], capture_output=True,
                            text=True, timeout=60)
    assert run_it.returncode == 0, run_it.stderr
    zero, one, two, three = json.loads(run_it.stdout)
    assert [a["result"]["protocolVersion"] for a in (zero, one, two, three)] == [1, 1, 2, 2]


# -- the client route calls `initialize` by its handler name -------------------------------------


def handshake_schema(wire: str) -> dict[str, Any]:
    version = {"type": "integer", "format": "uint16"}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {
        "HelloRequest": {"type": "object", "x-method": wire, "x-side": "agent",
                         "properties": {"protocolVersion": version}, "required": ["protocolVersion"]},
        "HelloResponse": {"type": "object", "x-method": wire, "x-side": "agent",
                          "properties": {"protocolVersion": version}, "required": ["protocolVersion"]},
        "ClientRequest": {"anyOf": [{"$ref": "#/$defs/HelloRequest"}]},
        "AgentResponse": {"anyOf": [{"$ref": "#/$defs/HelloResponse"}]},
    }}


@pytest.mark.parametrize(("wire", "handler"), [("close", "close_"), ("acp/startSession", "acp_start_session")])
def test_negotiation_initializes_through_the_wire_name(tmp_path: Path, wire: str, handler: str) -> None:
    # `close` is a connection member, so its proxy is `close_`; a camelCase wire name is snake_cased.
    # Negotiation sends the request by its wire name and the agent's dispatch finds the handler.
    import importlib
    import uuid

    from acpgen.config import Target
    from acpgen.pipeline import build

    package = "handshake_" + uuid.uuid4().hex[:8]
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(handshake_schema(wire)), encoding="utf-8")
    result = build(Target(name=package, schema=schema, output=tmp_path / package, package=package,
                          include_unstable=False, find_unstable=False, protocol_version=1, command="test"))
    assert result.ok, [d.render() for d in result.diagnostics]
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.invalidate_caches()
        pkg = importlib.import_module(package)
    finally:
        sys.path.remove(str(tmp_path))
    assert pkg.AGENT_METHODS[wire].handler == handler

    async def answer(self: object, params: Any) -> Any:
        return pkg.HelloResponse(protocol_version=1)

    agent = type("HandshakeAgent", (pkg.Agent,), {handler: answer})()

    async def body() -> None:
        (a_in, a_out), (b_in, b_out) = duplex()
        serving = pkg.AgentSideConnection(agent, a_in, a_out)
        route = pkg.client_route(pkg.Client(), pkg.HelloRequest(protocol_version=1))
        negotiated = await pkg.router.negotiate([route], b_in, b_out)  # the request by its wire name
        assert negotiated.initialize_result == pkg.HelloResponse(protocol_version=1)
        await negotiated.connection.close()
        await serving.wait_closed()

    run(body)


# -- a withdrawn request is answered with the result that says so ---------------------------------

PERMISSION_PARAMS = {
    1: {"sessionId": "s1", "toolCall": {"toolCallId": "t1"},
        "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]},
    2: {"sessionId": "s1", "title": "Run it?", "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]},
}


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("before_handler", [False, True], ids=["while-handled", "before-handled"])
def test_a_permission_request_withdrawn_by_cancel_request_is_answered_cancelled(version: int, before_handler: bool) -> None:
    """v2: "The client answers a request the agent cancels with `$/cancel_request` with this
    [cancelled] outcome". The generated client answers it so however the handler was cancelled;
    other requests still get -32800."""
    pkg: Any = acp_v1 if version == 1 else acp_v2
    started = asyncio.Event()

    class WaitingClient(pkg.Client):  # type: ignore[misc,name-defined]
        async def session_request_permission(self, params: Any) -> Any:
            started.set()
            await asyncio.Event().wait()  # the user never answers

        async def fs_read_text_file(self, params: Any) -> Any:
            started.set()
            await asyncio.Event().wait()

    async def body() -> None:
        assert pkg.rpc.WITHDRAWN_RESULTS == {"session/request_permission": {"outcome": {"outcome": "cancelled"}}}
        (a_in, a_out), (b_in, b_out) = duplex()
        peer = RawPeer(b_in, b_out)
        conn = pkg.ClientSideConnection(WaitingClient(), a_in, a_out)
        peer.send({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": PERMISSION_PARAMS[version]})
        if before_handler:  # both lines arrive in one read: the cancel is handled before the task's first step
            peer.send_line(json.dumps({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}}) + "\n")
        else:
            await asyncio.wait_for(started.wait(), 5)
            peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}})
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "cancelled"}}}
        if version == 1:  # a request whose result cannot say so still gets -32800
            started.clear()
            peer.send({"jsonrpc": "2.0", "id": 8, "method": "fs/read_text_file", "params": {"sessionId": "s1", "path": "/a"}})
            await asyncio.wait_for(started.wait(), 5)
            peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 8}})
            answer = await peer.recv()
            assert answer["id"] == 8 and answer["error"]["code"] == -32800, answer
        peer.close()
        await conn.wait_closed()

    run(body)
