"""Decode every line of an ACP stdio session, both ways, and say what is wrong with each.

`Observer.feed(direction, line)` takes one raw line as it crossed the pipe and returns what it
was (request, notification, response, error) and the violations found in it, each with the
direction, method, id, JSON path and what was expected. Requests and notifications are decoded by
method and direction (a method the receiving side does not handle is a violation); responses by the
method of the request they answer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from acpgen.kit.bindings import Binding

TO_AGENT: Final = "client->agent"
TO_CLIENT: Final = "agent->client"
DIRECTIONS: Final = (TO_AGENT, TO_CLIENT)


@dataclass(frozen=True)
class Violation:
    """One thing a message got wrong."""

    direction: str
    method: str | None
    id: object
    path: str
    message: str

    def render(self) -> str:
        where = self.method or "?"
        if self.id is not None:
            where += f" (id {json.dumps(self.id)})"
        path = f" at {self.path}" if self.path else ""
        return f"{self.direction} {where}{path}: {self.message}"

    def to_json(self) -> dict[str, object]:
        return {"direction": self.direction, "method": self.method, "id": self.id,
                "path": self.path, "message": self.message}


@dataclass
class Observation:
    """What one line was: kind is request, notification, response, error, or invalid."""

    direction: str
    kind: str
    method: str | None = None
    id: object = None
    message: Any = None
    decoded: object = None
    violations: list[Violation] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "method": self.method, "id": self.id,
                "violations": [v.to_json() for v in self.violations]}


def id_key(value: object) -> str:
    """A key that keeps 1 and "1" apart, as JSON-RPC does."""
    return json.dumps(value)


def valid_id(value: object) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Observer:
    """Stateful: remembers the requests each side sent so that their responses can be decoded."""

    def __init__(self, binding: Binding) -> None:
        self.binding = binding
        self.handlers = {TO_AGENT: binding.agent_methods, TO_CLIENT: binding.client_methods}
        # requests in flight, by the direction they were sent in: id key -> method
        self.pending: dict[str, dict[str, str]] = {TO_AGENT: {}, TO_CLIENT: {}}

    def feed(self, direction: str, line: bytes | str) -> list[Observation]:
        """Everything in one line (a batch array gives one observation per element)."""
        text = line.decode("utf-8") if isinstance(line, bytes) else line
        try:
            message = json.loads(text)
        except (ValueError, RecursionError) as exc:
            obs = Observation(direction, "invalid")
            detail = str(exc) if len(str(exc)) < 200 else str(exc)[:200] + "..."
            obs.violations.append(Violation(direction, None, None, "", f"not a JSON-RPC message: invalid JSON ({detail})"))
            return [obs]
        if isinstance(message, list) and self.binding.protocol_version >= 2 and message:
            return [self.observe(direction, item) for item in message]
        return [self.observe(direction, message)]

    def observe(self, direction: str, message: object) -> Observation:
        if not isinstance(message, dict):
            obs = Observation(direction, "invalid", message=message)
            what = "an array (batches are not part of this protocol version)" if isinstance(message, list) else type(message).__name__
            obs.violations.append(Violation(direction, None, None, "", f"expected a JSON-RPC object, got {what}"))
            return obs
        method = message.get("method")
        has_id = "id" in message
        msg_id = message.get("id")
        if "method" in message:
            kind = "request" if has_id else "notification"
        elif "error" in message:
            kind = "error"
        elif "result" in message:
            kind = "response"
        else:
            kind = "invalid"
        obs = Observation(direction, kind, method if isinstance(method, str) else None, msg_id, message)

        def bad(path: str, text: str) -> None:
            obs.violations.append(Violation(direction, obs.method, msg_id, path, text))

        if message.get("jsonrpc") != "2.0":
            bad("jsonrpc", f'expected "2.0", got {json.dumps(message.get("jsonrpc"))}')
        if has_id and not valid_id(msg_id):
            bad("id", "expected a string, an integer or null")
        if kind in ("request", "notification"):
            self.check_call(obs, message, bad)
        elif kind in ("response", "error"):
            self.check_answer(obs, message, bad)
        else:
            bad("", "a JSON-RPC message needs a method, a result or an error")
        return obs

    def check_call(self, obs: Observation, message: dict[str, Any], bad: Any) -> None:
        method = message.get("method")
        if not isinstance(method, str):
            bad("method", "expected a string")
            return
        if obs.kind == "request" and valid_id(obs.id):
            self.pending[obs.direction][id_key(obs.id)] = method
        receiver = "agent" if obs.direction == TO_AGENT else "client"
        if method.startswith("_"):
            return  # extension: raw JSON by definition
        info = self.handlers[obs.direction].get(method)
        if info is None:
            other = self.handlers[TO_CLIENT if obs.direction == TO_AGENT else TO_AGENT]
            if method in other:
                bad("method", f"{method} is handled by the {'client' if receiver == 'agent' else 'agent'}; "
                              f"the {receiver} does not handle it")
            elif obs.kind == "request":
                bad("method", "no such method in this schema (and not an extension: those start with '_')")
            return
        if "params" in message and not isinstance(message["params"], (dict, list)):
            bad("params", "expected an object")
            return
        if info.notification != (obs.kind == "notification"):
            bad("id", f"{method} is a {'notification' if info.notification else 'request'}; "
                      f"this was sent as a {obs.kind}")
        obs.decoded = self.decode(info.decode_params, message.get("params"), "params", bad)

    def check_answer(self, obs: Observation, message: dict[str, Any], bad: Any) -> None:
        request_direction = TO_CLIENT if obs.direction == TO_AGENT else TO_AGENT
        method = self.pending[request_direction].pop(id_key(obs.id), None) if valid_id(obs.id) else None
        obs.method = method
        if "result" in message and "error" in message:
            bad("", "a response has a result or an error, never both")
        if method is None:
            if obs.kind == "error" and obs.id is None:
                return  # the answer to a line that could not be read (-32700, -32600)
            bad("id", "answers no request in flight (unknown or already answered id)")
            return
        if obs.kind == "error":
            error = message["error"]
            if not isinstance(error, dict):
                bad("error", "expected an object with code and message")
                return
            if not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
                bad("error.code", "expected an integer")
            if not isinstance(error.get("message"), str):
                bad("error.message", "expected a string")
            return
        if method.startswith("_"):
            return
        table = self.handlers[request_direction]
        info = table.get(method)
        if info is None or info.decode_result is None:
            return  # the request itself was already reported
        result = message.get("result")
        if result is None:
            # An empty result may arrive as null (older docs said so); it means {}.
            try:
                info.decode_result({})
                return
            except Exception:
                pass
        obs.decoded = self.decode(info.decode_result, result, "result", bad)

    def decode(self, decoder: Any, data: object, prefix: str, bad: Any) -> object:
        try:
            return decoder(data)
        except self.binding.validation_error as exc:
            path = getattr(exc, "path", "")
            joined = f"{prefix}{'' if not path or path.startswith('[') else '.'}{path}"
            bad(joined, getattr(exc, "message", str(exc)))
        except RecursionError:
            bad(prefix, "nested too deeply to decode")
        return None


def dig(value: object, *keys: str) -> Any:
    """value[k1][k2]... for untrusted JSON: None as soon as a step is not an object or lacks the key."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
