"""The conform script's reading of what a session offered: the config value it sets, and the tool
call updates that name no tool call (each from untrusted JSON)."""

from __future__ import annotations

from acpgen.kit.observe import TO_CLIENT, Observation
from acpgen.kit.offers import config_choice, unknown_tool_call_updates


def test_config_choice_picks_another_offered_value() -> None:
    grouped = [{"id": "model", "name": "Model", "type": "select", "currentValue": "a",
                "options": [{"group": "g", "name": "G", "options": [{"value": "a", "name": "A"}, {"value": "b", "name": "B"}]}]}]
    assert config_choice(grouped) == ("model", {"value": "b"})
    assert config_choice([{"id": "fast", "name": "Fast", "type": "boolean", "currentValue": True}]) == (
        "fast", {"type": "boolean", "value": False})
    assert config_choice([{"id": "x", "type": "select", "options": "not a list"}, "junk"]) is None
    assert config_choice(None) is None


def update(session: str, body: dict[str, object]) -> Observation:
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": body}}
    return Observation(TO_CLIENT, "notification", "session/update", None, message)


def test_an_update_must_follow_its_tool_call_in_the_same_session() -> None:
    seen = [update("s1", {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read"}),
            update("s1", {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}),
            update("s2", {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"})]
    assert unknown_tool_call_updates(seen) == ["tool_call_update for 't1' in session 's2', which no tool_call announced"]
    assert unknown_tool_call_updates(seen[:2]) == []
