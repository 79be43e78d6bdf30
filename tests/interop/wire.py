"""Checks a recorded ACP v1 session (an `acpgen inspect --trace` file) message by message: every
message must decode with the generated `acp_v1` (params by method, results by the method of the
request they answer) and validate against the JSON Schema the binding was built from. What the
proxy itself reported (`violations` in the trace) is kept as well, so a test can compare the whole
list with what a peer is known to do wrong."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import acp_v1
import jsonschema
from acp_v1.methods import METHODS

SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "v1" / "schema.unstable.json"
BY_WIRE = {info.method: info for info in METHODS}


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator({"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"})


def check_trace(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The trace's messages (direction and JSON) and every problem found, in order."""
    messages: list[dict[str, Any]] = []
    problems: list[str] = []
    asked: dict[tuple[str, str], str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        direction = record["dir"]
        problems += [f"{v['direction']} {v.get('method')} at {v['path']}: {v['message']}" for v in record.get("violations", [])]
        try:
            message = json.loads(record["line"])
        except ValueError:
            continue  # not JSON: the proxy reported it
        messages.append({"dir": direction, "message": message, "t": record.get("t")})
        problems += _check(direction, message, asked)
    return messages, problems


def _check(direction: str, message: dict[str, Any], asked: dict[tuple[str, str], str]) -> list[str]:
    method = message.get("method")
    if isinstance(method, str):
        info = BY_WIRE.get(method)
        if info is None:
            return [] if method.startswith("_") else [f"{direction} {method}: a method acp_v1 does not know"]
        if "id" in message:
            asked[(direction, json.dumps(message["id"]))] = method
        return _decode_and_validate(
            lambda: info.decode_params(message.get("params")),
            info.params_def, message.get("params"), f"{direction} {method} params")
    back = "agent->client" if direction == "client->agent" else "client->agent"
    request = asked.pop((back, json.dumps(message.get("id"))), None)
    if request is None or "error" in message:
        return []  # an error answer, or an answer to nothing (the proxy reports those)
    info = BY_WIRE[request]
    decode = info.decode_result
    if decode is None or info.result_def is None:
        return []
    return _decode_and_validate(lambda: decode(message.get("result")), info.result_def, message.get("result"),
                                f"{direction} {request} result")


def _decode_and_validate(decode: Any, definition: str, value: Any, where: str) -> list[str]:
    problems = []
    try:
        decoded = decode()
        acp_v1.encode(decoded)
    except Exception as exc:  # any failure to decode is the finding
        problems.append(f"{where}: acp_v1 cannot decode it: {type(exc).__name__}: {exc}")
    problems += [f"{where}: schema: {e.message[:300]} at {list(e.path)}" for e in _validator(definition).iter_errors(value)]
    return problems
