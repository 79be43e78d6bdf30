"""The generated JSON-RPC runtime (rpc.py, connections.py, interfaces.py) of acp_v1, driven over
in-memory pipes: by a raw peer that writes exact bytes, and generated agent <-> generated client."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
from asyncio.streams import FlowControlMixin
from collections.abc import Awaitable, Callable
from typing import Any

import acp_v1 as acp
import pytest

from tests.runtime_support import RawPeer, duplex

PROMPT = {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}


def run(test: Callable[[], Awaitable[None]]) -> None:
    """Run a test coroutine; fail on any error the loop saw that nobody retrieved, and on any task
    still alive at the end (asyncio reports both only through the exception handler / logs)."""
    problems: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, ctx: problems.append(str(ctx.get("message"))))
        await asyncio.wait_for(test(), 60)
        await asyncio.sleep(0)
        alive = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert not alive, f"tasks still running: {alive}"

    # "exception was never retrieved" is reported when the future is collected, so a full collection
    # follows the run. What is alive before the run is not its garbage: frozen, it is left out of the
    # collection's scan (which costs time in proportion to everything alive in the process: a test
    # process that ran other files first holds their modules and caches), while everything the run
    # creates, its loop and every future, is collected.
    gc.freeze()
    asyncio.run(main())
    gc.collect()
    assert not problems, problems


class EchoAgent(acp.Agent):
    """Answers what the tests need and records the calls."""

    def __init__(self, conn: acp.AgentSideConnection | None = None) -> None:
        self.conn = conn
        self.calls: list[str] = []
        self.release = asyncio.Event()
        self.running = 0
        self.most_running = 0
        self.cancelled: list[str] = []
        self.ext: list[tuple[str, object]] = []

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        self.calls.append("initialize")
        return acp.InitializeResponse(protocol_version=1, agent_capabilities=acp.AgentCapabilities(), auth_methods=[])

    async def session_new(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        # Used as the "slow concurrent request": waits for `release`, reports the cwd back.
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await self.release.wait()
        finally:
            self.running -= 1
        return acp.NewSessionResponse(session_id=f"session-for-{params.cwd}")

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        first = params.prompt[0]
        words = first.text if isinstance(first, acp.TextContentBlock) else ""
        if words == "boom":
            raise RuntimeError("the handler failed")
        if words == "missing":
            raise acp.RequestError.resource_not_found({"uri": "file:///nowhere"})
        if words == "wait":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.append(params.session_id)
                return acp.PromptResponse(stop_reason=acp.StopReason.CANCELLED)
        if words == "wait-uncaught":
            await asyncio.Event().wait()
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    async def session_cancel(self, params: acp.CancelNotification) -> None:
        self.calls.append(f"cancel {params.session_id}")

    async def ext_method(self, method: str, params: acp.JsonValue) -> acp.JsonValue:
        if method == "_echo":
            return {"echo": params}
        return await super().ext_method(method, params)

    async def ext_notification(self, method: str, params: acp.JsonValue) -> None:
        self.ext.append((method, params))


def agent_with_raw_peer(
    agent: EchoAgent | None = None, limits: acp.ConnectionLimits | None = None
) -> tuple[acp.AgentSideConnection, RawPeer, EchoAgent]:
    (ours_in, ours_out), (peer_in, peer_out) = duplex()
    impl = agent or EchoAgent()
    conn = acp.AgentSideConnection(impl, ours_in, ours_out, limits=limits)
    return conn, RawPeer(peer_in, peer_out), impl


def request(rid: object, method: str, params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


INIT = {"protocolVersion": 1, "clientCapabilities": {}}


# -- tables and interfaces -------------------------------------------------------------------


def test_method_tables_follow_x_side_and_routing() -> None:
    import json as _json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "schema" / "v1"
    defs: dict[str, Any] = {}
    for name in ("schema.json", "schema.unstable.json"):
        defs.update(_json.loads((root / name).read_text())["$defs"])
    handled = {"agent": set(), "client": set()}
    for schema in defs.values():
        side, method = schema.get("x-side"), schema.get("x-method")
        if side in handled and method:
            handled[side].add(method)
        if side == "protocol":
            handled["agent"].add(method)
            handled["client"].add(method)
    assert set(acp.AGENT_METHODS) == handled["agent"]
    assert set(acp.CLIENT_METHODS) == handled["client"]

    prompt = acp.AGENT_METHODS["session/prompt"]
    assert (prompt.params, prompt.result, prompt.handler, prompt.notification, prompt.unstable) == (
        acp.PromptRequest, acp.PromptResponse, "session_prompt", False, False,
    )
    update = acp.CLIENT_METHODS["session/update"]
    assert (update.params, update.result, update.notification) == (acp.SessionNotification, None, True)
    assert acp.AGENT_METHODS["session/fork"].unstable is True
    # mcp/message: a request the client handles and a notification the agent handles.
    assert acp.CLIENT_METHODS["mcp/message"].notification is False
    assert acp.AGENT_METHODS["mcp/message"].notification is True
    cancel = acp.AGENT_METHODS["$/cancel_request"]
    assert cancel is acp.CLIENT_METHODS["$/cancel_request"] and cancel.notification
    assert not any(m.startswith("proxy/") for m in [*acp.AGENT_METHODS, *acp.CLIENT_METHODS])


def test_interfaces_have_one_async_method_per_handled_method() -> None:
    for table, stable, unstable in (
        (acp.AGENT_METHODS, acp.Agent, acp.UnstableAgent),
        (acp.CLIENT_METHODS, acp.Client, acp.UnstableClient),
    ):
        for wire, info in table.items():
            if info.side == "protocol":
                continue  # handled by the runtime itself
            owner = unstable if info.unstable else stable
            assert info.handler in vars(owner), (wire, owner)
            assert asyncio.iscoroutinefunction(getattr(owner, info.handler))
            if info.unstable:
                assert not hasattr(stable, info.handler), wire


# -- a raw peer against the agent side --------------------------------------------------------


def test_ids_are_echoed_exactly_and_bad_ids_rejected() -> None:
    async def body() -> None:
        conn, peer, _ = agent_with_raw_peer()
        for rid in (0, 7, 2**53 + 1, "abc", "7", None, ""):
            peer.send(request(rid, "initialize", INIT))
            reply = await peer.recv()
            assert "result" in reply and reply["id"] == rid and type(reply["id"]) is type(rid)
        for bad in (True, False, 1.5, [1], {"a": 1}):
            peer.send(request(bad, "initialize", INIT))
            reply = await peer.recv()
            assert reply == {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": "Invalid request",
                "data": {"message": "id must be a string, an integer or null"}}}
        peer.close()
        await conn.wait_closed()
        await peer.recv_eof()

    run(body)


def test_malformed_lines_get_errors_and_the_connection_keeps_working() -> None:
    async def body() -> None:
        conn, peer, _ = agent_with_raw_peer()
        cases: list[tuple[bytes, int]] = [
            (b"{not json\n", -32700),
            (b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": \n', -32700),
            (b"\xff\xfe\n", -32700),
            (b"[]\n", -32600),
            (json.dumps([request(1, "initialize", INIT), request(2, "initialize", INIT)]).encode() + b"\n", -32600),
            (b"42\n", -32600),
            (b'"hello"\n', -32600),
            (b"null\n", -32600),
        ]
        for line, code in cases:
            peer.send_line(line)
            reply = await peer.recv()
            assert reply["id"] is None and reply["error"]["code"] == code, (line, reply)
        peer.send_line(b"\n   \n")  # blank lines are skipped silently
        peer.send({"id": 3, "method": "initialize", "params": INIT})  # no jsonrpc member
        assert (await peer.recv())["error"]["code"] == -32600
        peer.send({"jsonrpc": "2.0", "id": 4, "method": 12})
        assert (await peer.recv()) ["error"] == {"code": -32600, "message": "Invalid request",
                                                  "data": {"message": "method must be a string"}}
        peer.send({"jsonrpc": "2.0", "id": 5})
        assert (await peer.recv())["error"]["code"] == -32600
        peer.send(request(6, "initialize", INIT))
        reply = await peer.recv()
        assert reply["id"] == 6 and reply["result"]["protocolVersion"] == 1
        peer.close()
        await conn.wait_closed()

    run(body)


def test_unknown_methods_and_extensions() -> None:
    async def body() -> None:
        conn, peer, agent = agent_with_raw_peer()
        peer.send(request(1, "session/nonexistent", {}))
        assert (await peer.recv())["error"] == {"code": -32601, "message": "Method not found",
                                                "data": {"method": "session/nonexistent"}}
        # Unknown notifications (plain, `$/`, `_`) are ignored: nothing comes back for them.
        peer.send({"jsonrpc": "2.0", "method": "session/nonexistent", "params": {}})
        peer.send({"jsonrpc": "2.0", "method": "$/progress", "params": {}})
        peer.send({"jsonrpc": "2.0", "method": "_vendor/ping", "params": {"n": 1}})
        peer.send(request(2, "_echo", {"n": [1, 2]}))
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 2, "result": {"echo": {"n": [1, 2]}}}
        peer.send(request(3, "_unknown/thing", None))
        assert (await peer.recv())["error"]["code"] == -32601
        # A method the agent only knows as a notification, sent as a request: not found.
        peer.send(request(4, "session/cancel", {"sessionId": "s"}))
        assert (await peer.recv())["error"]["code"] == -32601
        # A stable method the agent does not override, and an unstable one: -32601, no fake success.
        peer.send(request(5, "session/load", {"sessionId": "s", "cwd": "/", "mcpServers": []}))
        assert (await peer.recv())["error"] == {"code": -32601, "message": "Method not found",
                                                "data": {"method": "session/load"}}
        peer.send(request(6, "session/fork", {"sessionId": "s", "cwd": "/"}))
        assert (await peer.recv())["error"]["code"] == -32601
        # A client-side method sent to the agent.
        peer.send(request(7, "fs/read_text_file", {"sessionId": "s", "path": "/x"}))
        assert (await peer.recv())["error"]["code"] == -32601
        assert agent.ext == [("_vendor/ping", {"n": 1})]
        peer.close()
        await conn.wait_closed()

    run(body)


def test_invalid_params_name_the_path_and_handler_errors_are_answered() -> None:
    async def body() -> None:
        conn, peer, _ = agent_with_raw_peer()
        peer.send(request(1, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text"}]}))
        reply = await peer.recv()
        assert reply["id"] == 1 and reply["error"]["code"] == -32602
        assert reply["error"]["data"]["path"] == "prompt[0].text"
        peer.send(request(2, "session/prompt", {"prompt": []}))
        assert (await peer.recv())["error"]["data"]["path"] == "sessionId"
        peer.send(request(3, "session/prompt", None))
        assert (await peer.recv())["error"]["code"] == -32602
        peer.send(request(4, "initialize", {"protocolVersion": True, "clientCapabilities": {}}))
        assert (await peer.recv())["error"]["data"]["path"] == "protocolVersion"
        peer.send(request(5, "session/prompt", dict(PROMPT, prompt=[{"type": "text", "text": "boom"}])))
        reply = await peer.recv()
        assert reply["error"] == {"code": -32603, "message": "Internal error",
                                  "data": {"message": "RuntimeError: the handler failed"}}
        peer.send(request(6, "session/prompt", dict(PROMPT, prompt=[{"type": "text", "text": "missing"}])))
        assert (await peer.recv())["error"] == {"code": -32002, "message": "Resource not found",
                                                "data": {"uri": "file:///nowhere"}}
        peer.send_line(b'{"jsonrpc":"2.0","id":7,"method":"_echo","params":' + b"[" * 50_000 + b"]" * 50_000 + b"}\n")
        reply = await peer.recv()
        assert reply["id"] is None and reply["error"]["code"] == -32700  # json refuses the depth
        peer.send(request(8, "session/prompt", PROMPT))
        assert (await peer.recv()) == {"jsonrpc": "2.0", "id": 8, "result": {"stopReason": "end_turn"}}
        peer.close()
        await conn.wait_closed()

    run(body)


def test_a_thousand_concurrent_requests() -> None:
    async def body() -> None:
        conn, peer, agent = agent_with_raw_peer(limits=acp.ConnectionLimits(max_requests_in_flight=1000))
        for i in range(1000):
            peer.send(request(i, "session/new", {"cwd": f"/w/{i}", "mcpServers": []}))
        while agent.running < 1000:
            await asyncio.sleep(0.01)
        assert agent.most_running == 1000  # all in flight at once: handled concurrently
        agent.release.set()
        replies = [await peer.recv() for _ in range(1000)]
        assert sorted(r["id"] for r in replies) == list(range(1000))
        assert all(r["result"]["sessionId"] == f"session-for-/w/{r['id']}" for r in replies)
        peer.close()
        await conn.wait_closed()

    run(body)


class RecordingClient(acp.Client):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def session_update(self, params: acp.SessionNotification) -> None:
        update = params.update
        assert isinstance(update, acp.AgentMessageChunkSessionUpdate)
        assert isinstance(update.content, acp.TextContentBlock)
        if len(self.seen) % 97 == 0:
            await asyncio.sleep(0)  # a handler that yields must not let the next one overtake it
        self.seen.append(update.content.text)


def chunk(session: str, text: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {
        "sessionId": session, "update": {"sessionUpdate": "agent_message_chunk",
                                         "content": {"type": "text", "text": text}}}}


def test_ten_thousand_notifications_arrive_in_order_before_the_response_behind_them() -> None:
    async def body() -> None:
        (ours_in, ours_out), (peer_in, peer_out) = duplex()
        client = RecordingClient()
        conn = acp.ClientSideConnection(client, ours_in, ours_out)
        peer = RawPeer(peer_in, peer_out)
        call = asyncio.ensure_future(conn.session_prompt(acp.PromptRequest(session_id="s", prompt=[])))
        sent = await peer.recv()
        assert sent == {"jsonrpc": "2.0", "id": 0, "method": "session/prompt",
                        "params": {"sessionId": "s", "prompt": []}}
        for i in range(10_000):
            peer.send(chunk("s", str(i)))
        peer.send({"jsonrpc": "2.0", "id": 0, "result": {"stopReason": "end_turn"}})
        result = await call
        # The response is delivered only after every notification received before it.
        assert len(client.seen) == 10_000
        assert client.seen == [str(i) for i in range(10_000)]
        assert result.stop_reason is acp.StopReason.END_TURN
        peer.close()
        await conn.wait_closed()

    run(body)


def test_session_cancel_and_cancel_request_cancel_work_in_flight() -> None:
    async def body() -> None:
        conn, peer, agent = agent_with_raw_peer()
        wait = dict(PROMPT, prompt=[{"type": "text", "text": "wait"}])
        peer.send(request(1, "session/prompt", wait))
        peer.send(request(2, "session/prompt", dict(wait, sessionId="other")))
        await asyncio.sleep(0.05)
        peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
        # The handler caught the cancellation and ended its turn as cancelled.
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}}
        assert agent.cancelled == ["s1"]
        # $/cancel_request cancels one request by id; a handler that does not catch it: -32800.
        peer.send(request("x", "session/prompt", dict(PROMPT, prompt=[{"type": "text", "text": "wait-uncaught"}])))
        await asyncio.sleep(0.05)
        peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "x"}})
        assert await peer.recv() == {"jsonrpc": "2.0", "id": "x", "error": {"code": -32800, "message": "Request cancelled"}}
        peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 2}})
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}}
        assert agent.calls == ["cancel s1"]
        peer.close()
        await conn.wait_closed()

    run(body)


def test_responses_are_decoded_by_the_method_of_the_request() -> None:
    async def body() -> None:
        conn, peer, _ = agent_with_raw_peer()
        read = asyncio.ensure_future(conn.fs_read_text_file(acp.ReadTextFileRequest(session_id="s", path="/a")))
        perm = asyncio.ensure_future(conn.session_request_permission(acp.RequestPermissionRequest(
            session_id="s", tool_call=acp.ToolCallUpdate(tool_call_id="c"), options=[])))
        first, second = await peer.recv(), await peer.recv()
        assert (first["method"], first["id"], second["method"], second["id"]) == (
            "fs/read_text_file", 0, "session/request_permission", 1)
        # Answer out of order; each result is decoded as its own method's result type.
        peer.send({"jsonrpc": "2.0", "id": 1, "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}})
        peer.send({"jsonrpc": "2.0", "id": 0, "result": {"content": "text"}})
        assert (await read) == acp.ReadTextFileResponse(content="text")
        outcome = (await perm).outcome
        assert isinstance(outcome, acp.SelectedRequestPermissionOutcome) and outcome.option_id == "ok"

        failing = asyncio.ensure_future(conn.fs_read_text_file(acp.ReadTextFileRequest(session_id="s", path="/b")))
        sent = await peer.recv()
        peer.send({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32002, "message": "Resource not found"}})
        with pytest.raises(acp.RequestError) as error:
            await failing
        assert (error.value.code, error.value.message) == (-32002, "Resource not found")

        bad = asyncio.ensure_future(conn.fs_read_text_file(acp.ReadTextFileRequest(session_id="s", path="/c")))
        sent = await peer.recv()
        peer.send({"jsonrpc": "2.0", "id": 99, "result": {}})  # an id we never sent: ignored
        peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": 5}})
        with pytest.raises(acp.ValidationError) as invalid:
            await bad
        assert invalid.value.path == "content"
        peer.close()
        await conn.wait_closed()

    run(body)


def test_a_cancelled_call_tells_the_peer() -> None:
    async def body() -> None:
        conn, peer, _ = agent_with_raw_peer()
        call = asyncio.ensure_future(conn.fs_read_text_file(acp.ReadTextFileRequest(session_id="s", path="/a")))
        sent = await peer.recv()
        call.cancel()
        assert await peer.recv() == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": sent["id"]}}
        peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": "late"}})  # ignored
        with pytest.raises(asyncio.CancelledError):
            await call
        peer.close()
        await conn.wait_closed()

    run(body)


def test_peer_closing_mid_request_fails_pending_calls_cleanly() -> None:
    async def body() -> None:
        conn, peer, agent = agent_with_raw_peer()
        peer.send(request(1, "session/prompt", dict(PROMPT, prompt=[{"type": "text", "text": "wait"}])))
        call = asyncio.ensure_future(conn.fs_read_text_file(acp.ReadTextFileRequest(session_id="s", path="/a")))
        assert (await peer.recv())["method"] == "fs/read_text_file"
        peer.close()
        with pytest.raises(acp.ConnectionClosedError, match="fs/read_text_file"):
            await call
        await conn.wait_closed()
        assert conn.closed and agent.cancelled == ["s1"]
        # The in-flight handler was cancelled; what it answered still went out, then our output closed.
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}}
        await peer.recv_eof()
        with pytest.raises(acp.ConnectionClosedError):
            await conn.fs_read_text_file(acp.ReadTextFileRequest(session_id="s", path="/a"))

    run(body)


def test_close_from_our_side() -> None:
    async def body() -> None:
        conn, peer, _ = agent_with_raw_peer()
        call = asyncio.ensure_future(conn.fs_read_text_file(acp.ReadTextFileRequest(session_id="s", path="/a")))
        await peer.recv()
        await conn.close()
        with pytest.raises(acp.ConnectionClosedError):
            await call
        await peer.recv_eof()

    run(body)


def test_invalid_notification_params_are_logged_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        (ours_in, ours_out), (peer_in, peer_out) = duplex()
        client = RecordingClient()
        conn = acp.ClientSideConnection(client, ours_in, ours_out)
        peer = RawPeer(peer_in, peer_out)
        peer.send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}})
        peer.send(chunk("s", "after"))
        peer.close()
        await conn.wait_closed()
        assert client.seen == ["after"]

    with caplog.at_level(logging.WARNING, logger="acp_v1.rpc"):
        run(body)
    assert any("update: required key is missing" in r.getMessage() for r in caplog.records), caplog.text


# -- generated agent <-> generated client -----------------------------------------------------


class TurnAgent(acp.Agent):
    def __init__(self, conn: acp.AgentSideConnection) -> None:
        self.conn = conn

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=1, agent_capabilities=acp.AgentCapabilities(), auth_methods=[])

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        for i in range(100):
            await self.conn.session_update(acp.SessionNotification(
                session_id=params.session_id,
                update=acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text=str(i)))))
        answer = await self.conn.fs_read_text_file(acp.ReadTextFileRequest(session_id=params.session_id, path="/f"))
        await self.conn.session_update(acp.SessionNotification(
            session_id=params.session_id,
            update=acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text=answer.content))))
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)


class TurnClient(RecordingClient):
    async def fs_read_text_file(self, params: acp.ReadTextFileRequest) -> acp.ReadTextFileResponse:
        return acp.ReadTextFileResponse(content=f"contents of {params.path}")


def test_generated_agent_and_client_play_turns() -> None:
    async def body() -> None:
        (a_in, a_out), (c_in, c_out) = duplex()
        agent_conn = acp.AgentSideConnection(TurnAgent, a_in, a_out)
        client = TurnClient()
        conn = acp.ClientSideConnection(client, c_in, c_out)
        reads = acp.ClientCapabilities(fs=acp.FileSystemCapabilities(read_text_file=True))  # the agent reads /f
        init = await conn.initialize(acp.InitializeRequest(protocol_version=1, client_capabilities=reads))
        assert init.protocol_version == 1
        results = await asyncio.gather(*(
            conn.session_prompt(acp.PromptRequest(session_id=f"s{i}", prompt=[])) for i in range(5)))
        assert all(r.stop_reason is acp.StopReason.END_TURN for r in results)
        assert len(client.seen) == 5 * 101 and client.seen.count("contents of /f") == 5
        with pytest.raises(acp.RequestError) as error:
            await conn.session_new(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        assert error.value.code == -32601
        await conn.close()
        await agent_conn.wait_closed()

    run(body)


def test_cancel_requests_can_be_turned_off() -> None:
    async def body() -> None:
        (ours_in, ours_out), (peer_in, peer_out) = duplex()
        conn = acp.AgentSideConnection(EchoAgent(), ours_in, ours_out, send_cancel_requests=False)
        peer = RawPeer(peer_in, peer_out)
        call = asyncio.ensure_future(conn.fs_read_text_file(acp.ReadTextFileRequest(session_id="s", path="/a")))
        await peer.recv()
        call.cancel()
        peer.send(request(1, "initialize", INIT))
        assert (await peer.recv())["id"] == 1  # the next thing out is this answer, not a $/cancel_request
        peer.close()
        await conn.wait_closed()
        with pytest.raises(asyncio.CancelledError):
            await call

    run(body)



async def os_pipe_pair() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A StreamReader and a StreamWriter over one OS pipe, as the stdio helpers build them: the
    writer has an asyncio transport, so the connection writes without awaiting (`send_nowait`)
    and the reader is read ahead in chunks."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb"))
    transport, protocol = await loop.connect_write_pipe(FlowControlMixin, os.fdopen(write_fd, "wb"))
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def test_turns_over_os_pipes_use_the_direct_write_and_read_ahead() -> None:
    async def body() -> None:
        a_in, c_out = await os_pipe_pair()
        c_in, a_out = await os_pipe_pair()
        seen: list[tuple[str, object]] = []
        agent_conn = acp.AgentSideConnection(TurnAgent, a_in, a_out)
        client = TurnClient()
        conn = acp.ClientSideConnection(client, c_in, c_out, observers=(lambda d, m, raw: seen.append((d, m)),))
        assert conn._send_nowait is not None and agent_conn._send_nowait is not None
        reads = acp.ClientCapabilities(fs=acp.FileSystemCapabilities(read_text_file=True))
        await conn.initialize(acp.InitializeRequest(protocol_version=1, client_capabilities=reads))
        results = await asyncio.gather(*(
            conn.session_prompt(acp.PromptRequest(session_id=f"s{i}", prompt=[])) for i in range(5)))
        assert all(r.stop_reason is acp.StopReason.END_TURN for r in results)
        assert len(client.seen) == 5 * 101 and client.seen.count("contents of /f") == 5
        updates = [m for d, m in seen if d == "in" and isinstance(m, dict) and m.get("method") == "session/update"]
        assert len(updates) == 5 * 101  # each observed once, in whichever path it took
        await conn.close()
        await agent_conn.wait_closed()

    run(body)


def test_a_write_to_a_vanished_reader_raises_connection_closed() -> None:
    async def body() -> None:
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        os.close(read_fd)  # the peer is gone: the first write fails with EPIPE
        transport, protocol = await loop.connect_write_pipe(FlowControlMixin, os.fdopen(write_fd, "wb"))
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        conn = acp.AgentSideConnection(EchoAgent(), asyncio.StreamReader(), writer)
        with pytest.raises(acp.ConnectionClosedError):
            await conn.session_update(acp.SessionNotification(
                session_id="s", update=acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text="x"))))
        await conn.close()

    run(body)
