"""acpgen/runtime/errors.py straight from acpgen: the JSON-RPC codes and the error base class."""

from __future__ import annotations

import importlib

import pytest

from acpgen.runtime import errors


class Schema(errors.JsonRpcError):
    """Stands in for a package's `RequestError` (its schema's helpers are added in a subclass)."""


@pytest.mark.parametrize(
    ("make", "code", "message"),
    [
        (lambda: Schema.parse_error(), -32700, "Parse error"),
        (lambda: Schema.invalid_request(), -32600, "Invalid request"),
        (lambda: Schema.invalid_params({"path": "/x"}), -32602, "Invalid params"),
        (lambda: Schema.internal_error(), -32603, "Internal error"),
        (lambda: Schema.request_cancelled(), -32800, "Request cancelled"),
        (lambda: Schema.server_busy(), -32001, "Server busy"),
    ],
)
def test_constructors_build_the_subclass_they_are_called_on(make, code: int, message: str) -> None:  # type: ignore[no-untyped-def]
    error = make()
    assert type(error) is Schema and error.code == code and error.message == message


def test_method_not_found_names_the_method_and_to_json_omits_absent_data() -> None:
    assert Schema.method_not_found("x/y").to_json() == {
        "code": -32601, "message": "Method not found", "data": {"method": "x/y"}}
    assert errors.JsonRpcError(1, "m").to_json() == {"code": 1, "message": "m"}
    assert errors.JsonRpcError(1, "m", 0).to_json() == {"code": 1, "message": "m", "data": 0}


def test_str_shows_message_code_and_data_cut_at_the_limit() -> None:
    assert str(errors.JsonRpcError(-1, "Boom")) == "Boom (-1)"
    assert str(errors.JsonRpcError(-1, "Boom", {"a": "é"})) == 'Boom (-1): {"a": "é"}'
    long = str(errors.JsonRpcError(-1, "Boom", "x" * (errors.MAX_DETAIL_CHARS + 50)))
    assert long.endswith("...") and len(long) == len("Boom (-1): ") + errors.MAX_DETAIL_CHARS + 3
    unserialisable = errors.JsonRpcError(-1, "Boom", {1, 2})  # type: ignore[arg-type]
    assert str(unserialisable) == "Boom (-1): {1, 2}"  # repr when it is not JSON


def test_a_package_raises_its_subclass_with_the_runtime_codes() -> None:
    pkg = importlib.import_module("acp_v2")
    assert issubclass(pkg.RequestError, pkg.errors.JsonRpcError)
    assert type(pkg.RequestError.internal_error()) is pkg.RequestError
    assert pkg.rpc.INTERNAL_ERROR == errors.INTERNAL_ERROR == -32603
