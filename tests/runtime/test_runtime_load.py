"""The runtime under load and faults (issue 12): request caps, line limits both ways, framing that
never desynchronises, malformed responses, cancellation that lets CancelledError through, shutdown,
version negotiation, noisy agents, keyword proxies. In-memory pipes where bytes suffice; real
processes (tests/load_agent.py, examples/agent.py) where memory, signals or stdio are the point.
No assertion here is about time; waits are bounded so a regression fails instead of hanging."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import acp_v1 as acp
import pytest

from tests.runtime.test_runtime import (
    INIT,
    PROMPT,
    EchoAgent,
    RecordingClient,
    agent_with_raw_peer,
    chunk,
    request,
    run,
)
from tests.runtime_support import RawPeer, duplex

ROOT = Path(__file__).resolve().parents[2]
LOAD_AGENT = [sys.executable, str(ROOT / "tests" / "load_agent.py")]
EXAMPLE_AGENT = [sys.executable, str(ROOT / "examples" / "agent.py")]
MiB = 1024 * 1024


def new_session(rid: object, cwd: str = "/w") -> dict[str, object]:
    return request(rid, "session/new", {"cwd": cwd, "mcpServers": []})


def client_with_raw_peer(
    client: acp.Client, **options: Any
) -> tuple[acp.ClientSideConnection, RawPeer]:
    (ours_in, ours_out), (peer_in, peer_out) = duplex()
    conn = acp.ClientSideConnection(client, ours_in, ours_out, **options)
    return conn, RawPeer(peer_in, peer_out)


# -- requests in flight ------------------------------------------------------------------------


def test_requests_past_the_caps_are_answered_busy_and_the_backlog_runs_later() -> None:
    async def body() -> None:
        conn, peer, agent = agent_with_raw_peer(limits=acp.ConnectionLimits(max_requests_in_flight=2, request_backlog=3))
        for i in range(10):
            peer.send(new_session(i, f"/w/{i}"))
        busy = [await peer.recv() for _ in range(5)]
        assert [r["id"] for r in busy] == [5, 6, 7, 8, 9]
        assert {r["error"]["code"] for r in busy} == {acp.rpc.SERVER_BUSY}
        assert agent.running == 2  # two run, three wait: none of those is answered yet
        peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}})
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32800, "message": "Request cancelled"}}
        agent.release.set()
        done = [await peer.recv() for _ in range(4)]
        assert sorted(r["id"] for r in done) == [0, 1, 2, 4]
        assert all(r["result"]["sessionId"] == f"session-for-/w/{r['id']}" for r in done)
        assert agent.most_running == 2
        peer.close()
        await conn.wait_closed()

    run(body)


class CallingAgent(EchoAgent):
    """A prompt that reads a file from the client: the handler waits for the peer's answer."""

    async def session_prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        assert self.conn is not None
        read = await self.conn.fs_read_text_file(session_id=params.session_id, path="/f")
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN if read.content == "ok" else acp.StopReason.REFUSAL)


def test_a_handler_that_calls_the_peer_gets_its_answer_while_the_caps_are_full() -> None:
    async def body() -> None:
        (ours_in, ours_out), (peer_in, peer_out) = duplex()
        agent = CallingAgent()
        conn = acp.AgentSideConnection(lambda c: agent, ours_in, ours_out,
                                       limits=acp.ConnectionLimits(max_requests_in_flight=1, request_backlog=1))
        agent.conn = conn
        peer = RawPeer(peer_in, peer_out)
        peer.send(request(1, "session/prompt", PROMPT))
        call = await peer.recv()
        assert call["method"] == "fs/read_text_file"
        for i in range(2, 8):  # the slot and the backlog are full: these are refused or wait
            peer.send(new_session(i))
        answers = [await peer.recv() for _ in range(5)]
        assert {a["error"]["code"] for a in answers} == {acp.rpc.SERVER_BUSY}
        peer.send({"jsonrpc": "2.0", "id": call["id"], "result": {"content": "ok"}})
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}
        agent.release.set()
        assert (await peer.recv())["id"] == 2  # the one that waited in the backlog ran
        peer.close()
        await conn.wait_closed()

    run(body)


def test_a_notification_handler_that_calls_the_peer_does_not_deadlock_a_full_backlog() -> None:
    async def body() -> None:
        client_conn: list[acp.ClientSideConnection] = []

        class AskingClient(RecordingClient):
            async def session_update(self, params: acp.SessionNotification) -> None:
                await super().session_update(params)
                if len(self.seen) == 1:  # the first update asks the agent something
                    await client_conn[0].ext_method("_probe", {})

        client = AskingClient()
        conn, peer = client_with_raw_peer(client, limits=acp.ConnectionLimits(notification_backlog=2))
        client_conn.append(conn)
        for i in range(5):  # more than the backlog while the first handler waits for the agent
            peer.send(chunk("s", str(i)))
        probe = await peer.recv()
        assert probe["method"] == "_probe"
        peer.send({"jsonrpc": "2.0", "id": probe["id"], "result": {}})
        for _ in range(100):
            if len(client.seen) == 5:
                break
            await asyncio.sleep(0.01)
        assert client.seen == ["0", "1", "2", "3", "4"]
        peer.close()
        await conn.wait_closed()

    run(body)


def test_a_notification_flood_while_the_handler_waits_for_a_silent_peer_closes_with_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def body() -> None:
        client_conn: list[acp.ClientSideConnection] = []
        failures: list[BaseException] = []

        class AskingClient(RecordingClient):
            async def session_update(self, params: acp.SessionNotification) -> None:
                await super().session_update(params)
                if len(self.seen) == 1:
                    try:
                        await client_conn[0].ext_method("_probe", {})  # never answered
                    except acp.ConnectionClosedError as exc:
                        failures.append(exc)

        client = AskingClient()
        conn, peer = client_with_raw_peer(client, limits=acp.ConnectionLimits(notification_backlog=2))
        client_conn.append(conn)
        for i in range(10):  # 1 being handled, then 2 x 2 kept: the sixth one is too many
            peer.send(chunk("s", str(i)))
        assert (await peer.recv())["method"] == "_probe"
        await asyncio.wait_for(conn.wait_closed(), 10)
        assert len(failures) == 1 and "notifications wait while the notification handler waits for the peer" in str(failures[0])
        assert client.seen == ["0", "1", "2", "3", "4"]  # what was kept was still handled, in order
        peer.close()

    with caplog.at_level(logging.ERROR, logger="acp_v1"):
        run(body)
    assert "closing the connection: 4 notifications wait" in caplog.text


# -- line limits -------------------------------------------------------------------------------


def test_an_over_long_line_is_skipped_and_answered_with_its_id(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        conn, peer, agent = agent_with_raw_peer(limits=acp.ConnectionLimits(max_line_bytes=1000))
        big = {"sessionId": "s1", "prompt": [{"type": "text", "text": "x" * 5000}]}
        peer.send(request(7, "session/prompt", big))
        answer = await peer.recv()
        assert answer["id"] == 7 and answer["error"]["code"] == -32600
        assert answer["error"]["data"]["limit"] == 1000 and "over the line limit" in answer["error"]["data"]["message"]
        peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x" * 5000}})
        peer.send_line(" " * 5000 + json.dumps(request(8, "initialize", INIT)) + "\n")  # one line: no id in its start
        assert await peer.recv() == {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32600, "message": "Invalid request",
            "data": {"message": f"a message of {5000 + len(json.dumps(request(8, 'initialize', INIT)))} bytes is over "
                     "the line limit of 1000 bytes", "limit": 1000}}}
        peer.send(request(9, "initialize", INIT))  # the next line is read as a line: no desync
        assert (await peer.recv())["id"] == 9
        assert agent.calls == ["initialize"]  # the request hidden at the end of the long line never ran
        peer.close()
        await conn.wait_closed()

    with caplog.at_level(logging.WARNING, logger="acp_v1"):
        run(body)
    assert "dropped a 'session/cancel' notification" in caplog.text


def test_a_line_read_in_pieces_decodes_exactly_and_bad_utf8_is_one_parse_error() -> None:
    async def body() -> None:
        from tests.runtime_support import MemoryWriter

        ours_in = asyncio.StreamReader(limit=1000)  # lines longer than this are read in pieces
        peer_in = asyncio.StreamReader(limit=1 << 20)
        conn = acp.AgentSideConnection(EchoAgent(), ours_in, MemoryWriter(peer_in))
        peer = RawPeer(peer_in, MemoryWriter(ours_in))
        text = "é€😀a" * 2000  # multi-byte characters cut at every piece boundary
        peer.send(request(1, "_echo", {"t": text}))
        assert (await peer.recv())["result"] == {"echo": {"t": text}}
        peer.send_line(b'{"jsonrpc":"2.0","id":2,"method":"_echo","params":{"t":"' + b"\xff" * 5000 + b'"}}\n')
        answer = await peer.recv()
        assert (answer["id"], answer["error"]["code"]) == (None, -32700)
        assert "can't decode byte 0xff" in answer["error"]["data"]["message"]
        peer.send(request(3, "_echo", {"t": "after"}))
        assert (await peer.recv())["result"] == {"echo": {"t": "after"}}
        peer.close()
        await conn.wait_closed()

    run(body)


def test_an_over_long_answer_fails_our_call_with_a_protocol_error() -> None:
    async def body() -> None:
        conn, peer = client_with_raw_peer(acp.Client(), limits=acp.ConnectionLimits(max_line_bytes=1000))
        call = asyncio.ensure_future(conn.initialize(protocol_version=1, client_capabilities=acp.ClientCapabilities()))
        sent = await peer.recv()
        peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"protocolVersion": 1, "x": "y" * 5000}})
        with pytest.raises(acp.ProtocolError, match=r"'initialize' \(id 0\): a message of \d+ bytes is over"):
            await asyncio.wait_for(call, 5)
        peer.close()
        await conn.wait_closed()

    run(body)


def test_the_writer_refuses_lines_over_the_peer_limit(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        limits = acp.ConnectionLimits(peer_max_line_bytes=1000)
        (ours_in, ours_out), (peer_in, peer_out) = duplex()
        agent = EchoAgent()
        conn = acp.AgentSideConnection(agent, ours_in, ours_out, limits=limits)
        peer = RawPeer(peer_in, peer_out)
        update = acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text="x" * 2000))
        with pytest.raises(acp.MessageTooLargeError, match=r"'session/update' notification is 2\d+ bytes, over the peer's line limit of 1000"):
            await conn.session_update(session_id="s", update=update)
        with pytest.raises(acp.MessageTooLargeError, match="'fs/read_text_file' request"):
            await conn.fs_read_text_file(session_id="s", path="/" + "p" * 2000)
        assert not conn._pending  # the refused call left nothing waiting
        peer.send(request(1, "_echo", {"blob": "z" * 2000}))  # our answer would be too long for the peer
        answer = await peer.recv()
        assert answer["id"] == 1 and answer["error"]["code"] == -32603
        assert "over the peer's line limit of 1000 bytes" in answer["error"]["data"]["message"]
        with pytest.raises(asyncio.TimeoutError):  # nothing else was written: the refused messages never left
            await asyncio.wait_for(peer.reader.readline(), 0.05)
        peer.close()
        await conn.wait_closed()

    run(body)


# -- every call ends ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "raises", "match"),
    [
        ({}, acp.ProtocolError, r"answer to 'session/new' \(id 0\) has neither a result nor an error"),
        ({"error": "no"}, acp.ProtocolError, r"has a malformed error"),
        ({"result": {"sessionId": "s"}, "error": {"code": 1, "message": "m"}}, acp.RequestError, r"^m \(1\)$"),
    ],
)
def test_malformed_answers_end_the_call(answer: dict[str, Any], raises: type[Exception], match: str,
                                        caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        conn, peer = client_with_raw_peer(acp.Client())
        call = asyncio.ensure_future(conn.session_new(cwd="/", mcp_servers=[]))
        sent = await peer.recv()
        peer.send({"jsonrpc": "2.0", "id": sent["id"], **answer})
        with pytest.raises(raises, match=match):
            await asyncio.wait_for(call, 5)
        peer.close()
        await conn.wait_closed()

    with caplog.at_level(logging.WARNING, logger="acp_v1"):
        run(body)
    assert ("has both a result and an error; taken as the error" in caplog.text) == ("result" in answer)


# -- cancellation ------------------------------------------------------------------------------


def test_a_prompt_whose_handler_lets_cancellation_through_answers_cancelled() -> None:
    async def body() -> None:
        conn, peer, _ = agent_with_raw_peer(limits=acp.ConnectionLimits(max_requests_in_flight=1))
        wait = {"sessionId": "s1", "prompt": [{"type": "text", "text": "wait-uncaught"}]}
        peer.send(request(1, "session/prompt", wait))
        peer.send(request(2, "session/prompt", wait))  # waits for the slot
        peer.send(request(3, "session/prompt", {**wait, "sessionId": "s2"}))
        await asyncio.sleep(0.05)
        peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
        answers = sorted([await peer.recv() for _ in range(2)], key=lambda a: a["id"])
        assert answers == [{"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}},
                           {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}}]
        peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}})
        assert await peer.recv() == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32800, "message": "Request cancelled"}}
        peer.close()
        await conn.wait_closed()

    run(body)
    assert acp.rpc.CANCELLED_RESULTS == {"session/prompt": {"stopReason": "cancelled"}}  # from the schema's StopReason


# -- version negotiation -----------------------------------------------------------------------


def test_version_negotiation_helpers() -> None:
    assert acp.SUPPORTED_PROTOCOL_VERSIONS == (1,)
    assert [acp.negotiate_protocol_version(v) for v in (0, 1, 2, 99, True, "1")] == [1, 1, 1, 1, 1, 1]
    assert acp.check_protocol_version(1) == 1
    with pytest.raises(acp.ProtocolVersionError, match="protocolVersion 0, which this package does not speak"):
        acp.check_protocol_version(0)


def test_the_client_refuses_an_agent_answering_an_unsupported_version() -> None:
    async def body() -> None:
        conn, peer = client_with_raw_peer(acp.Client())
        call = asyncio.ensure_future(conn.initialize(protocol_version=1, client_capabilities=acp.ClientCapabilities()))
        sent = await peer.recv()
        peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"protocolVersion": 7}})
        with pytest.raises(acp.ProtocolVersionError, match="protocolVersion 7"):
            await asyncio.wait_for(call, 5)
        assert conn.closed  # the spec: the client closes the connection
        await conn.wait_closed()

    run(body)


def test_the_example_agent_answers_a_version_it_supports() -> None:
    proc = subprocess.run(EXAMPLE_AGENT, input=json.dumps(request(1, "initialize", {**INIT, "protocolVersion": 0})) + "\n",
                          capture_output=True, text=True, timeout=60)
    answer = json.loads(proc.stdout.splitlines()[0])
    assert answer["result"]["protocolVersion"] == 1, answer


# -- noisy agents, stray prints ----------------------------------------------------------------


def test_the_client_skips_noise_and_escape_codes_from_an_agent(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        async with acp.spawn_agent(acp.Client(), *LOAD_AGENT, "noisy") as conn:
            first = await asyncio.wait_for(conn.initialize(protocol_version=1, client_capabilities=acp.ClientCapabilities()), 30)
            second = await asyncio.wait_for(conn.initialize(protocol_version=1, client_capabilities=acp.ClientCapabilities()), 30)
            assert first.protocol_version == second.protocol_version == 1

    with caplog.at_level(logging.WARNING, logger="acp_v1"):
        run(body)
    assert "skipped a line that is not JSON: 'Starting agent v1.2.3...'" in caplog.text
    assert "skipped 7 bytes of noise before a message" in caplog.text


def test_the_client_can_be_told_to_fail_on_noise() -> None:
    async def body() -> None:
        async with acp.spawn_agent(acp.Client(), *LOAD_AGENT, "noisy", non_json_lines="fail") as conn:
            with pytest.raises(acp.ConnectionClosedError, match="the peer wrote a line that is not JSON: 'Starting agent"):
                await asyncio.wait_for(conn.initialize(protocol_version=1, client_capabilities=acp.ClientCapabilities()), 30)

    run(body)


def test_run_agent_keeps_print_off_the_protocol_stream() -> None:
    proc = subprocess.run([*LOAD_AGENT, "print"], input=json.dumps(request(1, "initialize", INIT)) + "\n",
                          capture_output=True, text=True, timeout=60)
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == [1]
    assert "hello from a careless agent" in proc.stderr
    assert proc.returncode == 0


# -- ergonomics --------------------------------------------------------------------------------


def test_proxies_take_keywords_and_request_error_shows_its_data() -> None:
    async def body() -> None:
        (a_in, a_out), (c_in, c_out) = duplex()
        client = RecordingClient()
        agent_conn = acp.AgentSideConnection(EchoAgent(), a_in, a_out)
        client_conn = acp.ClientSideConnection(client, c_in, c_out)
        text = acp.TextContentBlock(text="by keyword")
        await agent_conn.session_update(session_id="s", update=acp.AgentMessageChunkSessionUpdate(content=text))
        with pytest.raises(TypeError, match="not both"):
            await agent_conn.session_update(acp.SessionNotification(session_id="s", update=acp.AgentMessageChunkSessionUpdate(content=text)), session_id="t")
        with pytest.raises(acp.RequestError) as caught:
            await client_conn.session_prompt(session_id="s1", prompt=[acp.TextContentBlock(text="missing")])
        assert str(caught.value) == 'Resource not found (-32002): {"uri": "file:///nowhere"}'
        assert client.seen == ["by keyword"]
        c_out.close()
        a_out.close()
        await asyncio.gather(agent_conn.wait_closed(), client_conn.wait_closed())

    run(body)


# -- processes: memory, shutdown, signals -------------------------------------------------------


def vm_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {key} for {pid}")


needs_proc = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc")


def start(command: list[str], **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **env})


def initialized(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(request(0, "initialize", INIT)).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0


def finish(proc: subprocess.Popen[bytes]) -> str:
    """Close the agent's stdin, wait for it to exit (bounded), return its stderr."""
    assert proc.stdin is not None and proc.stderr is not None
    with_output = proc.communicate(timeout=60)
    return with_output[1].decode()


@needs_proc
def test_a_request_flood_that_never_reads_its_answers_keeps_the_agent_bounded() -> None:
    total = 30_000
    prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "p" * 400}]}
    data = b"".join(json.dumps(request(i, "session/prompt", prompt)).encode() + b"\n" for i in range(1, total + 1))
    proc = start([*LOAD_AGENT, "stuck"])
    try:
        initialized(proc)
        baseline = vm_kib(proc.pid, "VmRSS")
        written = 0

        def write() -> None:
            nonlocal written
            assert proc.stdin is not None
            for at in range(0, len(data), 64 * 1024):
                proc.stdin.write(data[at:at + 64 * 1024])
                proc.stdin.flush()
                written = at + 64 * 1024

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        last, still = -1, 0
        for _ in range(600):  # until the writer is parked: the agent stopped reading
            time.sleep(0.05)
            still = still + 1 if written == last else 0
            last = written
            if still >= 20 or not writer.is_alive():
                break
        stalled_at = written
        stalled_rss = vm_kib(proc.pid, "VmRSS")
        assert writer.is_alive() and stalled_at < len(data) // 2, (stalled_at, len(data))
        # Now read the answers: the agent reads on; everything past the caps is answered busy.
        assert proc.stdout is not None
        busy = 0
        for _ in range(total):
            answer = json.loads(proc.stdout.readline())
            assert answer["error"]["code"] == acp.rpc.SERVER_BUSY, answer
            busy += 1
            if busy == total - 64 - 256:
                break
        writer.join(60)
        peak = vm_kib(proc.pid, "VmHWM")
        stderr = finish(proc)
    finally:
        proc.kill()
        proc.wait()
    print(f"flood: {total} prompts of {len(data) // total} B; writer parked after {stalled_at} B; "
          f"RSS baseline {baseline} KiB, parked {stalled_rss} KiB, peak {peak} KiB; {busy} answered busy")
    # 64 running + 256 waiting prompts, a 2 MiB read buffer: tens of MiB at most, never the flood.
    assert peak - baseline < 48 * 1024, (baseline, peak)
    assert "Traceback" not in stderr, stderr


@needs_proc
def test_a_150_mib_line_of_spaces_is_one_bad_line_not_a_desync() -> None:
    proc = start([*LOAD_AGENT, "stuck"])
    try:
        initialized(proc)
        baseline = vm_kib(proc.pid, "VmRSS")

        def write() -> None:
            assert proc.stdin is not None
            block = b" " * MiB
            for _ in range(150):
                proc.stdin.write(block)
            proc.stdin.write(json.dumps(request(1, "initialize", INIT)).encode() + b"\n")
            proc.stdin.write(json.dumps(request(2, "initialize", INIT)).encode() + b"\n")
            proc.stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        assert proc.stdout is not None
        first, second = json.loads(proc.stdout.readline()), json.loads(proc.stdout.readline())
        writer.join(60)
        peak = vm_kib(proc.pid, "VmHWM")
        stderr = finish(proc)
    finally:
        proc.kill()
        proc.wait()
    assert first["id"] is None and first["error"]["code"] == -32600
    assert first["error"]["data"]["message"].startswith(f"a message of {150 * MiB + len(json.dumps(request(1, 'initialize', INIT)))} bytes")
    assert second["id"] == 2 and "result" in second  # the request at the end of the long line never ran
    print(f"150 MiB line: RSS baseline {baseline} KiB, peak {peak} KiB")
    assert peak - baseline < 100 * 1024  # at most the 64 MiB line limit is ever held, not the line
    assert "Traceback" not in stderr


def test_a_stuck_notification_handler_does_not_keep_the_agent_alive() -> None:
    proc = start([*LOAD_AGENT, "stuck"])
    try:
        initialized(proc)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}).encode() + b"\n")
        stderr = finish(proc)  # closes stdin; raises TimeoutExpired if the agent hangs
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0
    assert "a notification handler was still running 0.5 s after the input ended; cancelled it" in stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_run_agent_without_a_traceback(sig: signal.Signals) -> None:
    proc = start([*LOAD_AGENT, "stuck"])
    try:
        initialized(proc)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(request(1, "session/prompt", PROMPT)).encode() + b"\n")  # mid-turn
        proc.stdin.flush()
        time.sleep(0.2)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    stderr = err.decode()
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr


def test_end_of_input_mid_turn_is_not_an_error_log(tmp_path: Path) -> None:
    proc = start(EXAMPLE_AGENT, ACP_EXAMPLE_PAUSE_S="0")
    try:
        initialized(proc)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(new_session(1, str(tmp_path))).encode() + b"\n")
        proc.stdin.flush()
        session = json.loads(proc.stdout.readline())["result"]["sessionId"]
        proc.stdin.write(json.dumps(request(2, "session/prompt", {**PROMPT, "sessionId": session})).encode() + b"\n")
        proc.stdin.flush()
        for _ in range(10):  # updates, then the permission request the turn waits on
            message = json.loads(proc.stdout.readline())
            if message.get("method") == "session/request_permission":
                break
        else:
            raise AssertionError("the turn never asked for permission")
        stderr = finish(proc)  # the client quits mid-turn
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0
    assert "ERROR" not in stderr and "Traceback" not in stderr, stderr
