"""The runtime under faults: fuzzed and mutated JSON-RPC lines, a peer that stops reading, a peer
that floods us, a peer process that dies mid-call. Every case asserts what JSON-RPC 2.0 says the
answer is (or that there is none) and that the connection keeps serving afterwards."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from typing import Any

import acp_v1 as acp
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.runtime.test_runtime import INIT, PROMPT, EchoAgent, RecordingClient, chunk, request, run
from tests.runtime_support import RawPeer, duplex

EXAMPLES = int(os.environ.get("ACPGEN_FUZZ_EXAMPLES", "100"))
# The default run is derandomized (the same examples every time, so CI is reproducible); setting
# ACPGEN_FUZZ_EXAMPLES explores new ones.
DERANDOMIZE = "ACPGEN_FUZZ_EXAMPLES" not in os.environ

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
ids = st.none() | st.integers(min_value=-(2**63), max_value=2**63) | st.text(max_size=10) | st.booleans() | st.floats(allow_nan=False)
methods = st.sampled_from([*sorted(acp.AGENT_METHODS), "_ext/x", "nope", "", "$/progress"]) | st.text(max_size=12)
VALID = [
    request(1, "initialize", INIT),
    request(2, "session/prompt", PROMPT),
    request("s", "session/new", {"cwd": "/", "mcpServers": []}),
    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}},
]


@st.composite
def messages(draw: st.DrawFn) -> Any:
    """JSON-RPC-shaped objects with any member missing, added or of the wrong type."""
    base = dict(draw(st.sampled_from(VALID)))
    for key in draw(st.lists(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]), max_size=3)):
        action = draw(st.sampled_from(["drop", "replace"]))
        if action == "drop":
            base.pop(key, None)
        elif key == "id":
            base[key] = draw(ids)
        elif key == "method":
            base[key] = draw(methods)
        else:
            base[key] = draw(json_values)
    return base


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["message", "value", "bytes", "truncated"]))
    if kind == "message":
        return json.dumps(draw(messages())).encode()
    if kind == "value":
        return json.dumps(draw(json_values)).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=40)).replace(b"\n", b" ")
    text = json.dumps(draw(st.sampled_from(VALID))).encode()
    return text[: draw(st.integers(0, len(text) - 1))]


def expected_reply(line: bytes) -> tuple[bool, object]:
    """(whether JSON-RPC requires an answer, the id it must carry) for one line sent to an agent."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return (True, None) if line.strip() else (False, None)  # -32700; blank lines are skipped
    if not isinstance(message, dict):
        return True, None  # -32600 (batches are not supported by ACP v1)
    if "id" not in message:
        return False, None  # a notification, valid or not, is never answered
    rid = message["id"]
    if isinstance(rid, bool) or not (rid is None or isinstance(rid, (int, str))):
        return True, None
    if message.get("jsonrpc") != "2.0":
        return True, rid
    if "method" not in message and ("result" in message or "error" in message):
        return False, None  # a response to a request we never sent: ignored
    return True, rid


@settings(max_examples=EXAMPLES, deadline=None, derandomize=DERANDOMIZE, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines(), min_size=1, max_size=8))
@example([json.dumps(m).encode() for m in VALID[:2]] + [json.dumps(VALID[3]).encode()])  # answers out of order
def test_fuzzed_lines_are_answered_as_json_rpc_says_and_the_connection_survives(batch: list[bytes]) -> None:
    async def body() -> None:
        (ours_in, ours_out), (peer_in, peer_out) = duplex()
        agent = EchoAgent()
        agent.release.set()  # session/new answers at once
        conn = acp.AgentSideConnection(agent, ours_in, ours_out)
        peer = RawPeer(peer_in, peer_out)
        wanted = []
        for line in batch:
            peer.send_line(line + b"\n")
            needs, rid = expected_reply(line)
            if needs:
                wanted.append(rid)
        probe = "probe-after-fuzz"
        peer.send(request(probe, "initialize", INIT))
        # Requests are answered concurrently, so the probe's answer may overtake others: read until
        # the probe and as many answers as required have come, then make sure nothing else follows.
        replies = []
        probed = False
        while not probed or len(replies) < len(wanted):
            reply = await peer.recv()
            assert reply["jsonrpc"] == "2.0" and ("result" in reply) != ("error" in reply), reply
            if "error" in reply:
                assert isinstance(reply["error"]["code"], int) and isinstance(reply["error"]["message"], str)
            if reply["id"] == probe and not probed:
                probed = True
            else:
                replies.append(reply)
        with pytest.raises(asyncio.TimeoutError):
            extra = await asyncio.wait_for(peer.reader.readline(), 0.02)
            print("unexpected extra answer:", extra)
        # Answers to concurrent requests may come in any order; compare the multisets of ids.
        # A reused id is either answered by its handler or refused as a duplicate: still one answer.
        assert sorted(map(repr, (r["id"] for r in replies))) == sorted(map(repr, wanted)), (batch, replies)
        peer.close()
        await conn.wait_closed()

    run(body)


def test_a_peer_that_stops_reading_pushes_back_on_our_writes() -> None:
    async def body() -> None:
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(write_fd, "wb"))
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        (ours_in, _), (_, peer_out) = duplex()
        conn = acp.AgentSideConnection(EchoAgent(), ours_in, writer)
        sent = 0

        async def flood() -> None:
            nonlocal sent
            text = "x" * 1000
            while True:
                await conn.session_update(acp.SessionNotification(
                    session_id="s", update=acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text=text))))
                sent += 1

        task = asyncio.ensure_future(flood())
        await asyncio.sleep(0.5)
        stalled_at = sent
        await asyncio.sleep(0.3)
        # Nobody reads the pipe: the sender is parked in drain(), and what waits in memory is bounded
        # by the pipe (64 KiB here) plus the transport's high-water mark, not by the flood.
        assert sent == stalled_at and sent < 1000, sent
        assert transport.get_write_buffer_size() < 256 * 1024
        # Start reading: the sender resumes.
        reader = asyncio.StreamReader(limit=1 << 20)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb"))
        for _ in range(stalled_at + 50):
            line = await asyncio.wait_for(reader.readline(), 5)
            assert json.loads(line)["method"] == "session/update"
        assert sent > stalled_at
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        peer_out.close()
        await conn.wait_closed()
        reader.feed_eof()

    run(body)


def test_a_flood_of_notifications_is_bounded_by_the_backlog() -> None:
    async def body() -> None:
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        ours_in = asyncio.StreamReader(limit=1 << 20)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(ours_in), os.fdopen(read_fd, "rb"))
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(write_fd, "wb"))
        peer_writer = asyncio.StreamWriter(transport, protocol, None, loop)
        (_, ours_out), _ = duplex()
        gate = asyncio.Event()

        class SlowClient(RecordingClient):
            async def session_update(self, params: acp.SessionNotification) -> None:
                await gate.wait()
                await super().session_update(params)

        client = SlowClient()
        conn = acp.ClientSideConnection(client, ours_in, ours_out, limits=acp.ConnectionLimits(notification_backlog=10))
        total = 20_000

        async def flood() -> None:
            for i in range(total):
                peer_writer.write(json.dumps(chunk("s", str(i))).encode() + b"\n")
                await peer_writer.drain()

        sender = asyncio.ensure_future(flood())
        await asyncio.sleep(0.5)
        # Our side stopped reading (backlog full, handler blocked): the peer is parked in drain().
        assert not sender.done()
        assert transport.get_write_buffer_size() > 0
        gate.set()
        await asyncio.wait_for(sender, 30)
        peer_writer.close()
        await conn.wait_closed()
        assert client.seen == [str(i) for i in range(total)]

    run(body)


def test_an_agent_process_that_dies_mid_call_ends_pending_calls() -> None:
    script = "import sys; sys.stdin.readline(); sys.exit(3)"  # reads the request, exits unanswered

    async def body() -> None:
        async with acp.spawn_agent(acp.Client(), sys.executable, "-c", script) as conn:
            with pytest.raises(acp.ConnectionClosedError, match=r"'initialize' \(id 0\)"):
                await conn.initialize(acp.InitializeRequest(protocol_version=1, client_capabilities=acp.ClientCapabilities()))
            await conn.wait_closed()

    run(body)



# A launcher as npm's leave them: it starts the real agent as a child that inherits its stdout,
# writes the child's pid to a file, and exits at the end of its input (or, with a tail, ignores
# SIGTERM and stays); the child ignores end of input (and, when stubborn, SIGTERM too) and would
# hold the pipe open for a minute.
LAUNCHER = """
import pathlib, signal, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", {child!r}], stdin=subprocess.DEVNULL)
pathlib.Path({pid_file!r}).write_text(str(child.pid))
sys.stdin.read()
{launcher_tail}
"""
CHILD = "import signal, time\n{handler}\ntime.sleep(60)"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie is dead already (its parent, gone, leaves it to init)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(("launcher_tail", "stubborn", "exit_timeout", "within"), [
    # the launcher exits at the end of input: its child is killed at once, not after exit_timeout
    ("", False, 10.0, 5.0),
    # nothing exits: exit_timeout 1 + SIGTERM's 3 + SIGKILL (bounded generously: a loaded machine)
    ("signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)", True, 1.0, 15.0),
])
def test_spawn_agent_leaves_no_process_and_never_waits_on_a_childs_pipe(
    tmp_path: Any, launcher_tail: str, stubborn: bool, exit_timeout: float, within: float
) -> None:
    pid_file = tmp_path / "child.pid"
    handler = "signal.signal(signal.SIGTERM, signal.SIG_IGN)" if stubborn else ""
    script = LAUNCHER.format(child=CHILD.format(handler=handler), pid_file=str(pid_file), launcher_tail=launcher_tail)
    seen: dict[str, float] = {}

    async def body() -> None:
        loop = asyncio.get_running_loop()
        async with acp.spawn_agent(acp.Client(), sys.executable, "-c", script, exit_timeout=exit_timeout):
            while not pid_file.exists() or not pid_file.read_text():
                await asyncio.sleep(0.02)
            seen["start"] = loop.time()
        seen["took"] = loop.time() - seen["start"]

    run(body)
    child = int(pid_file.read_text())
    assert seen["took"] < within, seen
    for _ in range(50):  # SIGKILL is delivered asynchronously
        if not _alive(child):
            break
        time.sleep(0.02)
    assert not _alive(child), f"the agent's child {child} outlived spawn_agent"


def test_a_response_to_no_request_of_ours_is_a_warning_and_a_late_one_is_not(caplog: pytest.LogCaptureFixture) -> None:
    # chuk-acp answers notifications with id "": that is the peer's fault, worth a warning; an
    # answer to a request we stopped waiting for (cancelled) is normal and stays at DEBUG.
    async def body() -> None:
        (ours_in, ours_out), (peer_in, peer_out) = duplex()
        conn = acp.ClientSideConnection(RecordingClient(), ours_in, ours_out)
        peer = RawPeer(peer_in, peer_out)
        call = asyncio.ensure_future(conn.session_prompt(acp.PromptRequest(session_id="s", prompt=[])))
        assert (await peer.recv())["id"] == 0
        call.cancel()
        await asyncio.sleep(0.01)
        for stray in (0, "", 7):
            peer.send({"jsonrpc": "2.0", "id": stray, "result": {"stopReason": "end_turn"}})
        peer.send(chunk("s", "still served"))
        await asyncio.sleep(0.05)
        peer.close()
        await conn.wait_closed()

    with caplog.at_level(logging.DEBUG, logger="acp_v1"):
        run(body)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [m.split(": ", 1)[0] for m in warned] == [
        "ignoring a response to no request of ours (id '')",
        "ignoring a response to no request of ours (id 7)",
    ]
    assert any(r.getMessage() == "ignoring a late response to request 0" for r in caplog.records if r.levelno == logging.DEBUG)


def test_close_right_after_construction_closes_the_output() -> None:
    # Its reading task is cancelled before it ever ran; close() still ends everything.
    async def body() -> None:
        (ours_in, ours_out), (peer_in, _) = duplex()
        conn = acp.ClientSideConnection(acp.Client(), ours_in, ours_out)
        await conn.close()
        assert ours_out.closed
        await asyncio.wait_for(conn.wait_closed(), 1)
        assert await peer_in.read() == b""

    run(body)


def test_call_raw_reaches_a_method_the_schema_does_not_name() -> None:
    # Real agents have methods the schema lacks (claude-*'s session/set_model): the raw call sends
    # them verbatim and returns the raw result; an error answer is a RequestError as usual.
    async def body() -> None:
        (ours_in, ours_out), (peer_in, peer_out) = duplex()
        conn = acp.ClientSideConnection(acp.Client(), ours_in, ours_out)
        peer = RawPeer(peer_in, peer_out)
        call = asyncio.ensure_future(conn.call_raw("session/set_model", {"sessionId": "s", "modelId": "m"}))
        sent = await peer.recv()
        assert sent == {"jsonrpc": "2.0", "id": 0, "method": "session/set_model",
                        "params": {"sessionId": "s", "modelId": "m"}}
        peer.send({"jsonrpc": "2.0", "id": 0, "result": {"ok": [1]}})
        assert await call == {"ok": [1]}
        failing = asyncio.ensure_future(conn.call_raw("nope", None))
        peer.send({"jsonrpc": "2.0", "id": (await peer.recv())["id"], "error": {"code": -32601, "message": "no"}})
        with pytest.raises(acp.RequestError) as raised:
            await failing
        assert raised.value.code == -32601
        await conn.notify_raw("session/poke", {"x": 1})
        assert await peer.recv() == {"jsonrpc": "2.0", "method": "session/poke", "params": {"x": 1}}
        peer.close()
        await conn.wait_closed()

    run(body)
