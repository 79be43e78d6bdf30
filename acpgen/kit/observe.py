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
    tolerated: list[Violation] = field(default_factory=list)
    """What decoded only because the schema's leniency annotations (`x-deserialize-skip-invalid-items`,
    `x-deserialize-default-on-error`) dropped an invalid item or replaced an invalid value: the sender
    broke the schema, the receiver may go on."""

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

    def __init__(self, binding: Binding, follow_version: bool = False) -> None:
        self.binding = binding
        self.follow_version = follow_version
        """Decode with the bundled binding of the version the agent answered initialize with (a
        router picks the client's version): for a proxy that sees whatever version is spoken."""
        self.handlers = {TO_AGENT: binding.agent_methods, TO_CLIENT: binding.client_methods}
        # requests in flight, by the direction they were sent in: id key -> method
        self.pending: dict[str, dict[str, str]] = {TO_AGENT: {}, TO_CLIENT: {}}
        self.switched_to: int | None = None
        self.unreadable: dict[str, int] = {TO_AGENT: 0, TO_CLIENT: 0}
        """Lines sent each way that could not be read as a request (bad JSON, no valid id): each
        may be answered once with an error whose id is null, and nothing else may."""

    def feed(self, direction: str, line: bytes | str) -> list[Observation]:
        """Everything in one line (a batch array gives one observation per element)."""
        text = line.decode("utf-8") if isinstance(line, bytes) else line
        try:
            message = json.loads(text)
        except (ValueError, RecursionError) as exc:
            self.unreadable[direction] += 1
            obs = Observation(direction, "invalid")
            detail = str(exc) if len(str(exc)) < 200 else str(exc)[:200] + "..."
            obs.violations.append(Violation(direction, None, None, "", f"not a JSON-RPC message: invalid JSON ({detail})"))
            return [obs]
        if isinstance(message, list) and self.binding.protocol_version >= 2 and message:
            return [self.observe(direction, item) for item in message]
        return [self.observe(direction, message)]

    def observe(self, direction: str, message: object) -> Observation:
        if not isinstance(message, dict):
            self.unreadable[direction] += 1
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
        if kind == "invalid" or (kind == "request" and not (valid_id(msg_id) and isinstance(method, str))):
            self.unreadable[direction] += 1
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
        obs.decoded = self.decode(info.decode_params, message.get("params"), "params", bad, obs)

    def check_answer(self, obs: Observation, message: dict[str, Any], bad: Any) -> None:
        request_direction = TO_CLIENT if obs.direction == TO_AGENT else TO_AGENT
        method = self.pending[request_direction].pop(id_key(obs.id), None) if valid_id(obs.id) else None
        obs.method = method
        if "result" in message and "error" in message:
            bad("", "a response has a result or an error, never both")
        if method is None:
            if obs.kind == "error" and obs.id is None and self.unreadable[request_direction] > 0:
                self.unreadable[request_direction] -= 1
                return  # the answer to a line that could not be read (-32700, -32600)
            if obs.id is None or obs.id == "":
                bad("id", f"answers no request (id {json.dumps(obs.id)}): nothing unreadable was sent to be answered "
                          "with id null, and a notification (such as $/cancel_request) is never answered")
            else:
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
        if self.follow_version and method == "initialize" and obs.direction == TO_CLIENT and self.switch_version(result):
            table = self.handlers[request_direction]
            info = table.get(method)
            if info is None or info.decode_result is None:
                return
        obs.decoded = self.decode(info.decode_result, result, "result", bad, obs)

    def switch_version(self, result: object) -> bool:
        """The agent answered initialize in another protocol version that a bundled binding
        speaks: decode the rest of the session (this answer included) with that binding."""
        from acpgen.kit.bindings import BUNDLED, BindingError, load_binding

        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if (not isinstance(version, int) or isinstance(version, bool) or version == self.binding.protocol_version
                or f"v{version}" not in BUNDLED):
            return False
        try:
            other = load_binding(target=f"v{version}")
        except BindingError:
            return False
        self.binding = other
        self.handlers = {TO_AGENT: other.agent_methods, TO_CLIENT: other.client_methods}
        self.switched_to = version
        return True

    def decode(self, decoder: Any, data: object, prefix: str, bad: Any, obs: Observation | None = None) -> object:
        dropped: list[str] = []
        set_hook = getattr(self.binding.module, "set_skip_hook", None)
        previous = set_hook(lambda owner, index, error: dropped.append(f"item {index} of {owner}: {error}")) if set_hook else None
        try:
            decoded = decoder(data)
            if obs is not None:
                self.tolerated(obs, data, decoded, prefix, dropped)
            return decoded
        except self.binding.validation_error as exc:
            path = getattr(exc, "path", "")
            joined = f"{prefix}{'' if not path or path.startswith('[') else '.'}{path}"
            bad(joined, getattr(exc, "message", str(exc)))
        except RecursionError:
            bad(prefix, "nested too deeply to decode")
        finally:
            if set_hook is not None:
                set_hook(previous)
        return None

    def tolerated(self, obs: Observation, raw: object, decoded: object, prefix: str, dropped: list[str]) -> None:
        """Compare what was sent with what the decoded value encodes back to: an array that lost
        items, or a value that came back as another (its default, null), was tolerated."""
        try:
            again = self.binding.module.encode(decoded)
        except Exception:
            return
        found: list[tuple[str, str]] = []
        differences(raw, again, prefix, found)
        hook_notes = iter(dropped)
        for path, what in found:
            if what.startswith("dropped"):
                what += "".join(f"; {note}" for note in [next(hook_notes, "")] if note)
            obs.tolerated.append(Violation(obs.direction, obs.method, obs.id, path,
                                           f"tolerated by the schema's leniency annotations: {what}"))


def same(a: object, b: object) -> bool:
    """JSON equality (true is not 1; 1.0 is 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def differences(raw: object, again: object, path: str, found: list[tuple[str, str]]) -> None:
    """Where `again` (the decoded value re-encoded) lost what `raw` had. Keys only `raw` has are
    unknown fields (ignored by design), keys only `again` has are schema defaults: neither counts."""
    if isinstance(raw, dict) and isinstance(again, dict):
        for key in raw.keys() & again.keys():
            differences(raw[key], again[key], f"{path}.{key}" if path else str(key), found)
    elif isinstance(raw, list) and isinstance(again, list):
        if len(raw) != len(again):
            found.append((path, f"dropped {len(raw) - len(again)} of {len(raw)} item(s)"))
        else:
            for index, (a, b) in enumerate(zip(raw, again, strict=True)):
                differences(a, b, f"{path}[{index}]", found)
    elif not same(raw, again):
        shown = json.dumps(raw)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        found.append((path, f"{shown} replaced by {json.dumps(again)[:40]}"))


def dig(value: object, *keys: str) -> Any:
    """value[k1][k2]... for untrusted JSON: None as soon as a step is not an object or lacks the key."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
