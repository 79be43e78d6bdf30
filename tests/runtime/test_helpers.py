"""`<pkg>.helpers` on the built acp_v1 and acp_v2: builders encode like the hand-nested models, the
permission policy chooses by kind and refuses by default, the tool call tracker and fake client
carry a real turn through `memory_pair`, and the reducer folds real updates into a snapshot."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys

import acp_v0_4
import acp_v1
import acp_v2
from acp_v0_4 import helpers as h04
from acp_v1 import helpers as h1
from acp_v2 import helpers as h2


def test_v1_builders_encode_like_the_nested_models() -> None:
    pairs = [
        (h1.agent_message("hi"), acp_v1.AgentMessageChunkSessionUpdate(content=acp_v1.TextContentBlock(text="hi"))),
        (h1.user_message(h1.image("AAA", "image/png")),
         acp_v1.UserMessageChunkSessionUpdate(content=acp_v1.ImageContentBlock(data="AAA", mime_type="image/png"))),
        (h1.agent_thought("hmm", message_id="m1"),
         acp_v1.AgentThoughtChunkSessionUpdate(content=acp_v1.TextContentBlock(text="hmm"), message_id="m1")),
        (h1.tool_call("c1", "Read", kind="read", status="pending"),
         acp_v1.ToolCallSessionUpdate(tool_call_id="c1", title="Read", kind="read", status="pending")),
        (h1.tool_call_update("c1", status="completed", content=[h1.content("done")]),
         acp_v1.ToolCallUpdateSessionUpdate(tool_call_id="c1", status="completed", content=[
             acp_v1.ContentToolCallContent(content=acp_v1.TextContentBlock(text="done"))])),
        (h1.current_mode_update("code"), acp_v1.CurrentModeUpdateSessionUpdate(current_mode_id="code")),
        (h1.audio("BBB", "audio/wav"), acp_v1.AudioContentBlock(data="BBB", mime_type="audio/wav")),
        (h1.resource_link("n", "file:///a"), acp_v1.ResourceLinkContentBlock(name="n", uri="file:///a")),
    ]
    for built, nested in pairs:
        assert type(built) is type(nested)
        assert built.to_dict() == nested.to_dict()
    assert h1.agent_message("hi").to_dict() == {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}


def test_v2_idle_cancelled_is_one_call() -> None:
    built = h2.state_update_idle_cancelled()
    nested = acp_v2.StateUpdateSessionUpdate(
        state_update=acp_v2.IdleStateUpdateVariant(idle_state_update=acp_v2.CancelledIdleStateUpdate()))
    assert built.to_dict() == nested.to_dict() == {
        "sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}
    # v2 has both `agent_message_chunk` and `agent_message`: the chunk keeps its full tag
    chunk = h2.agent_message_chunk("m1", "hi")
    assert chunk.to_dict() == acp_v2.AgentMessageChunkSessionUpdate(
        message_id="m1", content=acp_v2.TextContentBlock(text="hi")).to_dict()
    assert h2.agent_message("m1").to_dict()["sessionUpdate"] == "agent_message"


def options() -> list[acp_v1.PermissionOption]:
    return [acp_v1.PermissionOption(option_id=k, name=k, kind=k)
            for k in ("allow_once", "allow_always", "reject_once", "reject_always")]


def request(opts: list[acp_v1.PermissionOption]) -> acp_v1.RequestPermissionRequest:
    return acp_v1.RequestPermissionRequest(
        session_id="s1", tool_call=acp_v1.ToolCallUpdate(tool_call_id="c1"), options=opts)


def test_permission_policy_refuses_by_default_and_cancels_when_nothing_fits() -> None:
    opts = options()
    refused = h1.PermissionPolicy().choose(request(opts)).outcome
    assert isinstance(refused, acp_v1.SelectedRequestPermissionOutcome) and refused.option_id == "reject_once"
    allowed = h1.PermissionPolicy.allow().choose(request(opts)).outcome
    assert isinstance(allowed, acp_v1.SelectedRequestPermissionOutcome) and allowed.option_id == "allow_once"
    always = h1.PermissionPolicy(prefer=("allow_always",)).choose(request(opts)).outcome
    assert isinstance(always, acp_v1.SelectedRequestPermissionOutcome) and always.option_id == "allow_always"
    only_allow = [o for o in opts if str(o.kind).startswith("allow")]
    none_fits = h1.PermissionPolicy().choose(request(only_allow))
    assert none_fits.to_dict() == {"outcome": {"outcome": "cancelled"}}


class ToolAgent(acp_v1.Agent):
    def __init__(self, conn: acp_v1.AgentSideConnection) -> None:
        self.conn = conn
        self.decisions: list[str] = []

    async def session_prompt(self, params: acp_v1.PromptRequest) -> acp_v1.PromptResponse:
        calls = h1.ToolCallTracker(self.conn, params.session_id)
        await self.conn.session_update(session_id=params.session_id, update=h1.agent_message("Let me "))
        await self.conn.session_update(session_id=params.session_id, update=h1.agent_message("read it."))
        call = await calls.start("Read notes", kind="read")
        decision = await h1.ask_permission(self.conn, params.session_id, acp_v1.ToolCallUpdate(tool_call_id=call),
                                           options())
        self.decisions.append(decision)
        if decision != "allowed":
            await calls.fail(call, content=[h1.content("refused")])
            return acp_v1.PromptResponse(stop_reason="end_turn")
        read = await self.conn.fs_read_text_file(session_id=params.session_id, path="/notes.txt")
        await calls.update(call, status="in_progress", locations=[acp_v1.ToolCallLocation(path="/notes.txt")])
        await calls.complete(call, content=[h1.content(read.content)])
        return acp_v1.PromptResponse(stop_reason="end_turn")


def run_turn(client: h1.FakeClient) -> tuple[ToolAgent, acp_v1.PromptResponse]:
    agents: list[ToolAgent] = []

    def make(conn: acp_v1.AgentSideConnection) -> ToolAgent:
        agents.append(ToolAgent(conn))
        return agents[0]

    async def main() -> acp_v1.PromptResponse:
        async with acp_v1.memory_pair(make, client) as (_agent_end, client_end):
            return await client_end.session_prompt(session_id="s1", prompt=[h1.text("go")])

    result = asyncio.run(asyncio.wait_for(main(), 10))
    return agents[0], result


def test_a_turn_with_the_fake_client_the_tracker_and_the_reducer() -> None:
    client = h1.FakeClient(
        {"fs/read_text_file": lambda p: acp_v1.ReadTextFileResponse(content=f"notes at {p.path}")},
        permission=h1.PermissionPolicy.allow(),
    )
    agent, result = run_turn(client)
    assert result.stop_reason == "end_turn" and agent.decisions == ["allowed"]
    methods = [m for m, _ in client.calls]
    assert methods.count("session/update") == 5
    assert "session/request_permission" in methods and "fs/read_text_file" in methods
    snap = client.sessions.snapshot("s1")
    assert len(snap.messages) == 1 and snap.messages[0].text == "Let me read it."
    assert snap.messages[0].kind == "agent_message_chunk"
    (call_id, call), = snap.tool_calls.items()
    assert call_id.startswith("call_")
    assert call["status"] == "completed" and call["title"] == "Read notes" and call["kind"] == "read"
    assert call["locations"] == [{"path": "/notes.txt"}]
    assert call["content"] == [{"type": "content", "content": {"type": "text", "text": "notes at /notes.txt"}}]


def test_the_fake_client_refuses_by_default() -> None:
    client = h1.FakeClient()
    agent, _ = run_turn(client)
    assert agent.decisions == ["rejected"]
    call = next(iter(client.sessions.snapshot("s1").tool_calls.values()))
    assert call["status"] == "failed"
    assert "fs/read_text_file" not in [m for m, _ in client.calls]


def test_the_fake_agent_answers_from_its_table_and_records() -> None:
    agent = h1.FakeAgent({"session/new": acp_v1.NewSessionResponse(session_id="s9")})

    async def main() -> tuple[str, str]:
        async with acp_v1.memory_pair(agent, h1.FakeClient()) as (_agent_end, client_end):
            new = await client_end.session_new(cwd="/", mcp_servers=[])
            try:
                await client_end.session_prompt(session_id="s9", prompt=[])
            except acp_v1.RequestError as exc:
                return new.session_id, str(exc.code)
            return new.session_id, ""

    assert asyncio.run(asyncio.wait_for(main(), 10)) == ("s9", "-32601")
    assert [m for m, _ in agent.calls] == ["session/new", "session/prompt"]


def test_v1_reducer_merges_chunks_tool_calls_and_keeps_the_latest_plan() -> None:
    r = h1.SessionReducer()
    for update in [
        h1.user_message("hello"),
        h1.agent_thought("thinking"),
        h1.agent_message("a"), h1.agent_message("b"),
        h1.tool_call("c1", "Edit", status="pending"),
        h1.tool_call_update("c1", status="in_progress"),
        h1.plan([acp_v1.PlanEntry(content="step", priority="high", status="pending")]),
        h1.current_mode_update("code"),
        h1.agent_message("c"),
    ]:
        r.apply(acp_v1.SessionNotification(session_id="s1", update=update))
    snap = r.snapshot("s1")
    assert [(m.kind, m.text) for m in snap.messages] == [
        ("user_message_chunk", "hello"), ("agent_thought_chunk", "thinking"), ("agent_message_chunk", "ab"),
        ("agent_message_chunk", "c")]
    assert snap.tool_calls["c1"]["status"] == "in_progress" and snap.tool_calls["c1"]["title"] == "Edit"
    assert set(snap.latest) == {"plan", "current_mode_update"}
    assert r.snapshot("other").messages == []


def test_v2_reducer_counts_a_turn_end_once_and_keeps_background_snapshots() -> None:
    r = h2.SessionReducer()

    def send(update: acp_v2.SessionUpdate) -> h2.SessionSnapshot:
        return r.apply(acp_v2.UpdateSessionNotification(session_id="s1", update=update))

    send(h2.state_update_running())
    send(h2.agent_message_chunk("m1", "hi"))
    snap = send(h2.state_update_idle_end_turn(background=[]))
    assert snap.state == "idle" and snap.stop_reasons == ["end_turn"] and snap.background == []
    # a resume snapshot repeating the last stop reason is not a new completion
    snap = send(h2.state_update_idle_end_turn())
    assert snap.stop_reasons == ["end_turn"] and snap.background == []
    send(h2.state_update_running())
    snap = send(h2.state_update_idle_cancelled())
    assert snap.stop_reasons == ["end_turn", "cancelled"]
    assert [m.text for m in snap.messages] == ["hi"]


def test_importing_the_package_does_not_import_helpers() -> None:
    code = "import sys, acp_v1, acp_v2; print(any(m.endswith('.helpers') for m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "False"


# -- acp_v2's permission helper, naming, reducer (no variant class named: wire objects and DECODERS) ----

def v2_options(kinds: tuple[str, ...] = ("allow_once", "allow_always", "reject_once", "reject_always"),
               ) -> list[acp_v2.PermissionOption]:
    return [acp_v2.PermissionOption(option_id=f"o-{k}", name=k, kind=k) for k in kinds]


def v2_request(opts: list[acp_v2.PermissionOption]) -> acp_v2.RequestPermissionRequest:
    return acp_v2.RequestPermissionRequest(session_id="s1", title="Run ls", options=opts)


def test_v2_permission_policy_chooses_by_kind_and_refuses_by_default() -> None:
    assert h2.PermissionPolicy().choose(v2_request(v2_options())).to_dict() == {
        "outcome": {"outcome": "selected", "optionId": "o-reject_once"}}
    assert h2.PermissionPolicy.allow().choose(v2_request(v2_options())).to_dict() == {
        "outcome": {"outcome": "selected", "optionId": "o-allow_once"}}
    assert h2.PermissionPolicy().choose(v2_request(v2_options(("allow_once", "allow_always")))).to_dict() == {
        "outcome": {"outcome": "cancelled"}}


SUBJECT = {"type": "tool_call", "toolCall": {"toolCallId": "c1", "title": "ls"}}


class V2Agent(acp_v2.Agent):
    def __init__(self, conn: acp_v2.AgentSideConnection) -> None:
        self.conn = conn
        self.decisions: list[str] = []

    async def session_prompt(self, params: acp_v2.PromptRequest) -> acp_v2.PromptResponse:
        sid = params.session_id
        await self.conn.session_update(session_id=sid, update=h2.state_update_running())
        await self.conn.session_update(session_id=sid, update=h2.tool_call("c1", title="ls", status="pending"))
        decision = await h2.ask_permission(self.conn, sid, "Run ls", v2_options(), description="lists files",
                                           subject=acp_v2.DECODERS["RequestPermissionSubject"](SUBJECT))
        self.decisions.append(decision)
        if decision == "allowed":
            await self.conn.session_update(session_id=sid, update=h2.tool_call_content("c1", h2.content("a.txt")))
            await self.conn.session_update(session_id=sid, update=h2.tool_call_update("c1", status="completed"))
        else:
            await self.conn.session_update(session_id=sid, update=h2.tool_call_update("c1", status="failed"))
        await self.conn.session_update(session_id=sid, update=h2.state_update_idle_end_turn())
        return acp_v2.PromptResponse(message_id="u1")


def run_v2_turn(client: h2.FakeClient) -> V2Agent:
    agents: list[V2Agent] = []

    def make(conn: acp_v2.AgentSideConnection) -> V2Agent:
        agents.append(V2Agent(conn))
        return agents[0]

    async def main() -> None:
        async with acp_v2.memory_pair(make, client) as (_agent_end, client_end):
            await client_end.session_prompt(session_id="s1", prompt=[h2.text("list")])

    asyncio.run(asyncio.wait_for(main(), 10))
    return agents[0]


def test_v2_turn_with_ask_permission_and_the_fake_client() -> None:
    refusing = h2.FakeClient()
    assert run_v2_turn(refusing).decisions == ["rejected"]
    (_, asked), = [(m, p) for m, p in refusing.calls if m == "session/request_permission"]
    assert isinstance(asked, acp_v2.RequestPermissionRequest)
    wire = asked.to_dict()
    assert wire["title"] == "Run ls" and wire["description"] == "lists files" and wire["subject"] == SUBJECT
    assert refusing.sessions.snapshot("s1").tool_calls["c1"]["status"] == "failed"

    allowing = h2.FakeClient(permission=h2.PermissionPolicy.allow())
    assert run_v2_turn(allowing).decisions == ["allowed"]
    snap = allowing.sessions.snapshot("s1")
    assert snap.tool_calls["c1"]["status"] == "completed" and snap.tool_calls["c1"]["title"] == "ls"
    assert snap.tool_calls["c1"]["content"] == [{"type": "content", "content": {"type": "text", "text": "a.txt"}}]
    assert snap.stop_reasons == ["end_turn"]

    cancelling = h2.FakeClient(permission=h2.PermissionPolicy(prefer=("no_such_kind",)))
    assert run_v2_turn(cancelling).decisions == ["cancelled"]


def test_v2_tool_call_builds_the_session_update_and_background_work_is_prefixed() -> None:
    assert h2.tool_call("c1", title="ls").to_dict() == {
        "sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "ls"}
    assert h2.background_work_tool_call("c1").to_dict() == {"type": "tool_call", "toolCallId": "c1"}
    assert h2.terminal("t1").to_dict() == {"sessionUpdate": "terminal_update", "terminalId": "t1"}
    assert h2.tool_call_content_terminal("t1").to_dict() == {"type": "terminal", "terminalId": "t1"}
    # v1 has a `tool_call` variant of its own: the plain name stays with it
    assert h1.tool_call("c1", "ls").to_dict()["sessionUpdate"] == "tool_call"


def v2_fold(*updates: dict[str, object]) -> h2.SessionSnapshot:
    r = h2.SessionReducer()
    snap = r.snapshot("s1")
    for u in updates:
        snap = r.apply(acp_v2.UpdateSessionNotification.from_dict({"sessionId": "s1", "update": u}))
    return snap


def test_v2_reducer_appends_chunks_to_tool_calls_terminals_and_compactions() -> None:
    block = {"type": "content", "content": {"type": "text", "text": "x"}}
    snap = v2_fold(
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "content": [block]},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": block},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c2", "content": block},
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "output": {"data": base64.b64encode(b"ab").decode()}},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": base64.b64encode(b"c").decode()},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": base64.b64encode(b"de").decode()},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k1", "content": {"type": "text", "text": "s"}},
    )
    assert snap.tool_calls["c1"]["content"] == [block, block]
    assert snap.tool_calls["c2"] == {"toolCallId": "c2", "content": [block]}  # a first-seen id starts one
    output = snap.entities["terminalId"]["t1"]["output"]
    assert isinstance(output, dict) and base64.b64decode(output["data"]) == b"abcde"
    assert snap.entities["compactionId"]["k1"]["summary"] == [{"type": "text", "text": "s"}]
    # a tool_call_update with content replaces the collection
    snap = v2_fold({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": block},
                   {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "content": []})
    assert snap.tool_calls["c1"]["content"] == []


def test_null_clears_in_v2_upserts_and_changes_nothing_in_v1_tool_call_updates() -> None:
    snap = v2_fold({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "ls", "kind": "read"},
                   {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": None})
    assert snap.tool_calls["c1"] == {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "kind": "read"}
    r = h1.SessionReducer()
    for u in ({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "ls", "name": "shell"},
              {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": None, "name": None}):
        r.apply(acp_v1.SessionNotification.from_dict({"sessionId": "s1", "update": u}))
    call = r.snapshot("s1").tool_calls["c1"]
    assert call["title"] == "ls" and call["name"] == "shell"


def test_v2_full_messages_reach_the_snapshot_like_chunks() -> None:
    def chunk(mid: str, text: str) -> dict[str, object]:
        return {"sessionUpdate": "agent_message_chunk", "messageId": mid, "content": {"type": "text", "text": text}}

    snap = v2_fold(chunk("m1", "Hel"), chunk("m2", "other"), chunk("m1", "lo"))
    assert [(m.message_id, m.text) for m in snap.messages] == [("m1", "Hello"), ("m2", "other")]
    snap = v2_fold(chunk("m1", "draft"),
                   {"sessionUpdate": "agent_message", "messageId": "m1", "content": [{"type": "text", "text": "Hi"}]},
                   chunk("m1", "!"),
                   {"sessionUpdate": "agent_message", "messageId": "m1"},  # no content: unchanged
                   {"sessionUpdate": "user_message", "messageId": "u1", "content": [{"type": "text", "text": "q"}]})
    assert [(m.kind, m.message_id, m.text) for m in snap.messages] == [
        ("agent_message_chunk", "m1", "Hi!"), ("user_message_chunk", "u1", "q")]
    snap = v2_fold(chunk("m1", "x"), {"sessionUpdate": "agent_message", "messageId": "m1", "content": None})
    assert snap.messages[0].content == []


# -- acp_v0_4's helpers run, not only type-checked -------------------------------------------------------

def test_v0_4_turn_builders_tracker_permission_and_reducer() -> None:
    class Agent04(acp_v0_4.Agent):
        def __init__(self, conn: acp_v0_4.AgentSideConnection) -> None:
            self.conn = conn
            self.decisions: list[str] = []

        async def session_prompt(self, params: acp_v0_4.PromptRequest) -> acp_v0_4.PromptResponse:
            sid = params.session_id
            await self.conn.session_update(session_id=sid, update=h04.agent_message("Work"))
            await self.conn.session_update(session_id=sid, update=h04.agent_message("ing"))
            calls = h04.ToolCallTracker(self.conn, sid)
            call = await calls.start("Edit", kind="edit")
            self.decisions.append(await h04.ask_permission(
                self.conn, sid, acp_v0_4.ToolCallUpdate(tool_call_id=call),
                [acp_v0_4.PermissionOption(option_id=k, name=k, kind=k) for k in ("allow_once", "reject_once")]))
            await calls.complete(call, content=[h04.content("done")])
            return acp_v0_4.PromptResponse(stop_reason="end_turn")

    agents: list[Agent04] = []
    client = h04.FakeClient(permission=h04.PermissionPolicy.allow())

    def make(conn: acp_v0_4.AgentSideConnection) -> Agent04:
        agents.append(Agent04(conn))
        return agents[0]

    async def main() -> None:
        async with acp_v0_4.memory_pair(make, client) as (_agent_end, client_end):
            await client_end.session_prompt(session_id="s1", prompt=[h04.text("go")])

    asyncio.run(asyncio.wait_for(main(), 10))
    assert agents[0].decisions == ["allowed"]
    snap = client.sessions.snapshot("s1")
    assert [m.text for m in snap.messages] == ["Working"]
    (call,) = snap.tool_calls.values()
    assert call["status"] == "completed" and call["title"] == "Edit"
    assert call["content"] == [{"type": "content", "content": {"type": "text", "text": "done"}}]
    assert h04.PermissionPolicy().choose(acp_v0_4.RequestPermissionRequest(
        session_id="s1", tool_call=acp_v0_4.ToolCallUpdate(tool_call_id="c"),
        options=[acp_v0_4.PermissionOption(option_id="a", name="a", kind="allow_once")])).to_dict() == {
        "outcome": {"outcome": "cancelled"}}
