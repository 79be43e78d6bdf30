"""rpc.py's JSON fast paths against the standard library: `_encode` (the C encoder made once,
without the cycle check) gives `json.dumps(..., ensure_ascii=False, separators=(",", ":"),
allow_nan=False)`'s text or its error, and `_loads` (the C scanner made once) gives `json.loads`'s
value or its error, for every input here: values of every JSON type, the strings and numbers JSON
gets wrong most often, str / int / float subclasses (enums), cycles, depth, lines with trailing
whitespace, extra data, truncation and noise."""

from __future__ import annotations

import contextlib
import enum
import json
import math
from typing import Any

import acp_v1.rpc as rpc
import pytest


class Colour(str, enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    ONE = 1


class Ratio(float):
    pass


def reference_dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = {"a": [value]}
    return value


def cyclic_dict() -> Any:
    value: dict[str, Any] = {"x": 1}
    value["self"] = value
    return value


def cyclic_list() -> Any:
    value: list[Any] = [1]
    value.append({"back": value})
    return value


VALUES: list[Any] = [
    {}, [], "", 0, -0.0, 1.5, 1e300, 2**70, -(2**63), True, False, None,
    {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"x": [1, 2.0, None]}}},
    {"text": "naïve ☃ 𝄞 \u2028 \u0000 \x7f \\ \" / \n\t"},
    {"lone": "\ud800"},  # _encode keeps it; _dumps then falls back to ASCII escapes
    {"k": Colour.RED, "n": Level.ONE, "r": Ratio(0.25)},
    {1: "int key", 2.5: "float key", None: "null key"}, {False: "bool key"},
    nested(50),
    [math.inf], {"nan": math.nan}, [-math.inf],
    {"obj": object()}, [b"bytes"], {("tuple",): 1},
    cyclic_dict(), cyclic_list(),
    nested(100_000),
]


def outcome(call: Any, value: Any) -> tuple[str, str]:
    try:
        return "ok", call(value)
    except RecursionError:
        return "RecursionError", ""
    except Exception as exc:  # the error and its message must be the same
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_encode_gives_json_dumps_text_or_error(value: Any) -> None:
    assert outcome(rpc._encode, value) == outcome(reference_dumps, value)


def test_dumps_sends_lone_surrogates_escaped() -> None:
    assert rpc._dumps({"lone": "\ud800é"}) == b'{"lone":"\\ud800\\u00e9"}'
    assert rpc._dumps({"ok": "é"}) == '{"ok":"é"}'.encode()


LINES: list[bytes] = [
    b'{}', b'{"a":1}', b'{"a":1} ', b'{"a":1}\r', b'{"a":1}\t \r', b'{"a":1}{"b":2}', b'{"a":1} x',
    b'{"a":', b'{"a":1', b'{', b'{"a":tru}', b'{"a":NaN}', b'{"a":Infinity,"b":-Infinity}',
    b'{"a":1e400}', b'{"a":12345678901234567890123}', b'{"a":"\\ud800"}', b'{"a":"\\u00e9\xc3\xa9"}',
    b'{"a":"\xff"}', b'{"a":"\xed\xa0\x80"}', b'{\x00}', b'{"a":"x\ny"}', b'{"a":"tab\tin"}',
    b'{"dup":1,"dup":2}', b'{ "spaced" : [ 1 , 2 ] }', b'[1,2]', b' {"a":1}', b'"text"', b'12', b'',
    b'{"a":' * 100_000 + b'1' + b'}' * 100_000,
    b'\xef\xbb\xbf{"bom":1}',
]


@pytest.mark.parametrize("line", LINES, ids=range(len(LINES)))
def test_loads_gives_json_loads_value_or_error(line: bytes) -> None:
    got, want = outcome(rpc._loads, line), outcome(json.loads, line)
    assert got[0] == want[0]
    if got[0] == "ok":
        assert repr(got[1]) == repr(want[1])  # NaN != NaN; repr compares exactly
    elif got[0] != "RecursionError":
        assert got[1] == want[1]
    try:
        text = line.decode("utf-8", "surrogatepass") if line[:1] == b"{" else None
    except UnicodeDecodeError:
        text = None
    if text is not None and not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert outcome(rpc._loads, text)[0] == got[0]  # a str line (read in pieces): the same


NOTIFICATION_LINES: list[bytes] = [
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{}}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}} \r',
    b'{"jsonrpc":"2.0","method":"session/update"}',
    b'{"method":"session/update","jsonrpc":"2.0","params":null}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{},"id":3}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{},"id":null}',
    b'{"jsonrpc":"1.0","method":"session/update","params":{}}',
    b'{"method":"session/update","params":{}}',
    b'{"jsonrpc":"2.0","method":7,"params":{}}',
    b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}',
    b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}',
    b'{"jsonrpc":"2.0","id":1,"result":{}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"t":"\\u00e9\xc3\xa9"}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"t":"\\ud800"}}',
]


@pytest.mark.parametrize("line", LINES + NOTIFICATION_LINES, ids=range(len(LINES) + len(NOTIFICATION_LINES)))
def test_take_notification_parses_as_loads_does(line: bytes) -> None:
    """The read loop's notification path (its own inline copy of `_loads`'s usual case) against
    `_loads`: a line `_loads` cannot read is left unread (the full path answers it), a well-formed
    notification is queued with the params `_loads` reads, anything else comes back as `_loads`
    reads it; the same for the line as text (a line read in pieces)."""
    import asyncio

    from acp_v1 import Client, ClientSideConnection
    from acp_v1.rpc import memory_transports

    async def take(item: bytes | str) -> tuple[object, list[Any]]:
        _, end = memory_transports()
        conn = ClientSideConnection(Client(), end)
        try:
            taken = conn._take_notification(item)
            return taken, list(conn._backlog.items)
        finally:
            await conn.close()

    texts: list[bytes | str] = [line]
    with contextlib.suppress(UnicodeDecodeError):
        texts.append(line.decode("utf-8", "surrogatepass"))
    for item in texts:
        taken, queued = asyncio.run(take(item))
        want = outcome(rpc._loads, item)
        if item[:1] not in (b"{", "{") or want[0] != "ok":
            assert taken is rpc._UNREAD and queued == []
            continue
        message = want[1]
        well_formed = (isinstance(message, dict) and "id" not in message and message.get("jsonrpc") == "2.0"
                       and isinstance(message.get("method"), str)
                       and message["method"] not in (rpc.CANCEL_REQUEST, rpc.SESSION_CANCEL))
        if well_formed:
            assert taken is rpc._TAKEN
            assert repr(queued) == repr([(message["method"], message.get("params"))])
        else:
            assert repr(taken) == repr(message) and queued == []
