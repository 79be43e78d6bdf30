"""What a v1 session offered and announced, read from the agent's untrusted JSON: a config value
to set (session/new's configOptions), and the tool call updates that name no announced tool call."""

from __future__ import annotations

from typing import Any

from acpgen.kit.observe import Observation, dig


def config_choice(options: object) -> tuple[str, dict[str, Any]] | None:
    """A config option to set and its params' value part: another value of the first select (or
    boolean) option than its current one."""
    for option in options if isinstance(options, list) else []:
        if not isinstance(option, dict) or not isinstance(option.get("id"), str):
            continue
        if option.get("type") == "boolean" and isinstance(option.get("currentValue"), bool):
            return option["id"], {"type": "boolean", "value": not option["currentValue"]}
        if option.get("type") == "select":
            values: list[object] = []
            for entry in option.get("options") or []:
                group = entry.get("options") if isinstance(entry, dict) else None
                for item in group if isinstance(group, list) else [entry]:
                    if isinstance(item, dict) and isinstance(item.get("value"), str):
                        values.append(item["value"])
            if values:
                return option["id"], {"value": next((v for v in values if v != option.get("currentValue")), values[0])}
    return None


def unknown_tool_call_updates(observations: list[Observation]) -> list[str]:
    """Each `tool_call_update` whose tool call no earlier `tool_call` of its session announced (the
    schema: "An update to an existing tool call")."""
    announced: set[tuple[object, object]] = set()
    unknown: list[str] = []
    for obs in observations:
        if obs.method != "session/update" or obs.kind != "notification" or obs.violations:
            continue
        sid = dig(obs.message, "params", "sessionId")
        kind = dig(obs.message, "params", "update", "sessionUpdate")
        call = dig(obs.message, "params", "update", "toolCallId")
        if kind == "tool_call":
            announced.add((sid, call))
        elif kind == "tool_call_update" and (sid, call) not in announced:
            unknown.append(f"tool_call_update for {call!r} in session {sid!r}, which no tool_call announced")
    return unknown
