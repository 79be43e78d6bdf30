"""JSON-RPC errors: the codes the runtime itself answers with, and the error class.

`_protocol.py` (generated) subclasses `JsonRpcError` as the package's `RequestError`, adding the
schema's own codes and their typed helpers (`RequestError.resource_not_found(...)`); the runtime
raises and catches that subclass, so a handler raises one class whatever the code.
"""

from __future__ import annotations

import json
from typing import Final, TypeVar

from ._codec import JsonValue

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "SERVER_BUSY",
    "JsonRpcError",
    "as_json",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
REQUEST_CANCELLED: Final = -32800
"""From LSP's range: a request cancelled by `$/cancel_request` or by `session/cancel`."""
SERVER_BUSY: Final = -32001
"""This runtime's answer when `max_requests_in_flight + request_backlog` requests are already accepted."""

# The class a constructor classmethod is called on (`typing.Self` is Python 3.11+). Its `noqa`
# holds under each rule set the generated code is checked with (PYI019 on or off).
_E = TypeVar("_E", bound="JsonRpcError")

# How much of an error's data `str()` shows.
MAX_DETAIL_CHARS: Final = 2000


class JsonRpcError(Exception):
    """A JSON-RPC error. Raise it from a handler to answer with it; a call the peer answers with an
    error raises it. `str()` shows the message, the code and the data."""

    def __init__(self, code: int, message: str, data: JsonValue = None) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        text = f"{self.message} ({self.code})"
        if self.data is not None:
            try:
                detail = json.dumps(self.data, ensure_ascii=False)
            except (TypeError, ValueError):
                detail = repr(self.data)
            cut = detail if len(detail) <= MAX_DETAIL_CHARS else detail[:MAX_DETAIL_CHARS] + "..."
            text += f": {cut}"
        return text

    @classmethod
    def parse_error(cls: type[_E], data: JsonValue = None) -> _E:  # noqa: PYI019, RUF100
        return cls(PARSE_ERROR, "Parse error", data)

    @classmethod
    def invalid_request(cls: type[_E], data: JsonValue = None) -> _E:  # noqa: PYI019, RUF100
        return cls(INVALID_REQUEST, "Invalid request", data)

    @classmethod
    def method_not_found(cls: type[_E], method: str) -> _E:  # noqa: PYI019, RUF100
        return cls(METHOD_NOT_FOUND, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls: type[_E], data: JsonValue = None) -> _E:  # noqa: PYI019, RUF100
        return cls(INVALID_PARAMS, "Invalid params", data)

    @classmethod
    def internal_error(cls: type[_E], data: JsonValue = None) -> _E:  # noqa: PYI019, RUF100
        return cls(INTERNAL_ERROR, "Internal error", data)

    @classmethod
    def request_cancelled(cls: type[_E], data: JsonValue = None) -> _E:  # noqa: PYI019, RUF100
        return cls(REQUEST_CANCELLED, "Request cancelled", data)

    @classmethod
    def server_busy(cls: type[_E], data: JsonValue = None) -> _E:  # noqa: PYI019, RUF100
        return cls(SERVER_BUSY, "Server busy", data)

    def to_json(self) -> dict[str, JsonValue]:
        """The `error` member of a response."""
        error: dict[str, JsonValue] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def as_json(value: object) -> JsonValue:
    """A model's `to_dict()` as the JSON value it is (typed helpers pass it as error data)."""
    return value  # type: ignore[return-value]
