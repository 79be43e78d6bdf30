"""Protocol behaviour the runtime templates take from the schema, per target: the error codes and
their data shapes, how `initialize` negotiates the version, which requests `session/cancel`
cancels, and whether a request id may be null.

Each rule is read from the definitions that state it (`ErrorCode`, `ErrorData`, the params and
result of the methods, `RequestId`), so a new protocol version brings its semantics with its
schema rather than through `if version == 2` in a template.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from acpgen.ir.model import Enum, Package, Struct, TypeRef, Union_
from acpgen.ir.naming import snake
from acpgen.render.codegen import Emitter

# The codes the runtime itself answers with (JSON-RPC 2.0, and -32800 from the LSP range): they
# exist in every target, whatever its schema says, because the connection needs them.
RUNTIME_CODES = {
    "PARSE_ERROR": -32700,
    "INVALID_REQUEST": -32600,
    "METHOD_NOT_FOUND": -32601,
    "INVALID_PARAMS": -32602,
    "INTERNAL_ERROR": -32603,
    "REQUEST_CANCELLED": -32800,
}

_PRIMITIVE = {"str": "str", "int": "int", "float": "float", "bool": "bool"}


@dataclass(frozen=True)
class ErrorArg:
    """One argument of an error-data helper: a required field of the data type."""

    py: str
    ann: str


@dataclass(frozen=True)
class ErrorHelper:
    """`RequestError.<name>(...)`: an ACP error code, with its data built from the schema's type
    for it when `ErrorData` names one (`data_class`), else any JSON `data`."""

    name: str  # classmethod name, e.g. `session_not_found`
    constant: str  # the code's constant, e.g. `RESOURCE_NOT_FOUND`
    code: int
    message: str  # e.g. "Resource not found"
    description: str
    data_class: str = ""  # models class of the data ("" = free JSON data)
    args: tuple[ErrorArg, ...] = ()

    @property
    def data_local(self) -> str:
        """What the helper imports the data class as: its name, unless that is a name the helper's
        body uses (its code's constant, `RequestError`): then a private alias."""
        return "_" + self.data_class if self.data_class in (self.constant, "RequestError") else self.data_class


@dataclass(frozen=True)
class Negotiation:
    """The schema's `initialize` rejects a lower version with an error of its own (v2: -32022
    with `{requested, supported}`) instead of answering with the agent's version (v1)."""

    method: str  # wire name of the request, e.g. `initialize`
    field: str  # wire name of the requested version, e.g. `protocolVersion`
    helper: str  # the RequestError helper that builds the error


@dataclass(frozen=True)
class ProtocolView:
    codes: tuple[tuple[str, int], ...]  # ACP-specific codes: (constant, value), beyond RUNTIME_CODES
    helpers: tuple[ErrorHelper, ...]
    negotiation: Negotiation | None
    cancelled_by_session: tuple[str, ...]  # requests `session/cancel` cancels
    initialize: str  # wire name of the request that negotiates the version ("" if none)
    initialize_handler: str  # its handler: the interface method, and the proxy that sends it
    version_field: str  # its params field holding the version
    initialize_params: str  # class of its params
    initialize_result: str  # class of its result
    null_request_id: bool  # may a request id be null (v1) or not (v2)
    routable: bool  # an `initialize` with the version, and a protocol version: router.py has content


def _message(constant: str) -> str:
    return constant.replace("_", " ").capitalize()


def _arg_ann(emit: Emitter, t: TypeRef) -> str:
    r = emit.resolve(t)
    if r.kind in _PRIMITIVE:
        return _PRIMITIVE[r.kind]
    if r.kind == "list" and r.item is not None:
        item = emit.resolve(r.item)
        if item.kind in _PRIMITIVE:
            return f"list[{_PRIMITIVE[item.kind]}]"
    return ""


def _struct(package: Package, def_name: str | None) -> Struct | None:
    if not def_name:
        return None
    for name, t in package.defs:
        if name == def_name and t.kind == "named":
            node = package.node(t.name)
            return node if isinstance(node, Struct) else None
    return None


def _def_node(package: Package, def_name: str) -> Enum | Union_ | Struct | None:
    for name, t in package.defs:
        if name == def_name and t.kind == "named":
            node = package.node(t.name)
            return node if isinstance(node, (Enum, Union_, Struct)) else None
    return None


def error_helpers(package: Package, emit: Emitter) -> tuple[tuple[tuple[str, int], ...], tuple[ErrorHelper, ...]]:
    """Constants and helpers from `ErrorCode` (an open int enum whose members are named by their
    titles) and `ErrorData` (a union whose titled variants are the data shapes the codes define).

    A data variant belongs to the code of the same name (`UnsupportedProtocolVersion` ->
    `UNSUPPORTED_PROTOCOL_VERSION`) and replaces its plain helper; one without such a code
    (`SessionNotFound`) belongs to the code its description names (`` `-32002` ``)."""
    codes_node = _def_node(package, "ErrorCode")
    if not isinstance(codes_node, Enum) or codes_node.base != "int":
        return (), ()
    members = [(m.py, int(m.value), m.description) for m in codes_node.members]
    by_value = {value: py for py, value, _ in members}
    plain = {py: ErrorHelper(py.lower(), py, value, _message(py), doc)
             for py, value, doc in members if py not in RUNTIME_CODES}
    shaped: list[ErrorHelper] = []
    data_node = _def_node(package, "ErrorData")
    if isinstance(data_node, Union_):
        for variant in data_node.variants:
            if variant.type.kind != "named" or not variant.title:
                continue
            struct = package.node(variant.type.name)
            if not isinstance(struct, Struct):
                continue
            constant = snake(variant.title).upper()
            if constant not in plain:
                named = [int(c) for c in re.findall(r"`(-\d+)`", struct.description)]
                owners = [by_value[c] for c in named if c in by_value and by_value[c] not in RUNTIME_CODES]
                if not owners:
                    continue
                owner = plain[owners[0]]
            else:
                owner = plain.pop(constant)
            args = tuple(ErrorArg(f.py, _arg_ann(emit, f.type)) for f in struct.fields if f.required)
            if any(not a.ann for a in args):
                continue
            shaped.append(ErrorHelper(snake(variant.title), owner.constant, owner.code, owner.message,
                                      struct.description, struct.name, args))
    codes = tuple((py, value) for py, value, _ in members if py not in RUNTIME_CODES)
    helpers = tuple(sorted([*plain.values(), *shaped], key=lambda h: h.name))
    return codes, helpers


def _initialize(package: Package) -> tuple[str, str, str, str, str]:
    """The request whose params and result carry the protocol version (`initialize`): its wire
    name, handler name, version field, params class and result class."""
    for m in package.methods:
        if m.notification or m.side != "agent":
            continue
        params, result = _struct(package, m.params), _struct(package, m.result)
        if params is None or result is None:
            continue
        if any(f.required and f.wire == "protocolVersion" for f in params.fields) and any(
            f.required and f.wire == "protocolVersion" for f in result.fields
        ):
            return m.wire, m.handler, "protocolVersion", params.name, result.name
    return "", "", "", "", ""


def protocol_view(package: Package, emit: Emitter) -> ProtocolView:
    codes, helpers = error_helpers(package, emit)
    method, handler, field, params_class, result_class = _initialize(package)
    negotiation = None
    unsupported = next((h for h in helpers if h.constant == "UNSUPPORTED_PROTOCOL_VERSION"), None)
    if method and unsupported is not None and package.protocol_version is not None:
        negotiation = Negotiation(method, field, unsupported.name)
    # `session/cancel` ends a turn; where the prompt's result reports how the turn stopped (v1's
    # `stopReason`), cancelling the request is how the handler learns it. Where the result only
    # acknowledges the prompt (v2's `messageId`), the turn ends with a session update instead and
    # the request must still be answered, so it is not cancelled.
    cancelled = []
    for m in package.methods:
        if m.notification or m.side != "agent":
            continue
        params, result = _struct(package, m.params), _struct(package, m.result)
        if params is None or result is None:
            continue
        if any(f.wire == "sessionId" for f in params.fields) and any(f.wire == "stopReason" for f in result.fields):
            cancelled.append(m.wire)
    request_id = _def_node(package, "RequestId")
    null_id = True
    if isinstance(request_id, Union_):
        null_id = any(v.type.kind in ("null", "nullable") for v in request_id.variants)
    return ProtocolView(codes, helpers, negotiation, tuple(sorted(set(cancelled))), method, handler, field,
                        params_class, result_class, null_id,
                        bool(method) and package.protocol_version is not None)
