"""The protocol facts of the IR (`Package.protocol`, derived in acpgen/ir/protocol.py) as the
templates print them: the error helpers with their annotated arguments, the negotiation's helper,
the cancellation tables. Nothing here reads the schema; every rule comes from the IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from acpgen.ir.model import CapabilityGate, Package, SessionRules, Struct, TypeRef
from acpgen.render.codegen import Emitter

_PRIMITIVE = {"str": "str", "int": "int", "float": "float", "bool": "bool"}


@dataclass(eq=False, repr=False)
class ErrorArg:
    """One argument of an error-data helper: a required field of the data type."""

    py: str
    ann: str


@dataclass(eq=False, repr=False)
class ErrorHelper:
    """`RequestError.<name>(...)`: an ACP error code, with its data built from the schema's type
    for it when the error object's `data` has a shape for the code (`data_class`), else any JSON `data`."""

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


@dataclass(eq=False, repr=False)
class NegotiationView:
    """`initialize` rejects a lower version with an error of its own (v2: -32022 with
    `{requested, supported}`) instead of answering with the agent's version (v1)."""

    method: str  # wire name of the request, e.g. `initialize`
    field: str  # wire name of the requested version, e.g. `protocolVersion`
    helper: str  # the RequestError helper that builds the error


@dataclass(eq=False, repr=False)
class ProtocolView:
    """What `_protocol.py` prints: error codes, negotiation, cancellation and capability gates."""

    codes: tuple[tuple[str, int], ...]  # the schema's codes beyond the runtime's: (constant, value)
    helpers: tuple[ErrorHelper, ...]
    negotiation: NegotiationView | None
    cancelled_by_session: tuple[str, ...]  # requests `session/cancel` cancels
    initialize: str  # wire name of the request that negotiates the version ("" if none)
    initialize_handler: str  # its handler: the interface method, and the proxy that sends it
    version_field: str  # its params field holding the version
    initialize_params: str  # class of its params
    initialize_result: str  # class of its result
    null_request_id: bool  # may a request id be null (v1) or not (v2)
    routable: bool  # an `initialize` with the version, and a protocol version: the router can route
    cancel_request: str  # the notification that cancels one request (`$/cancel_request`)
    cancel_request_field: str  # its param holding the request id
    session_cancel: str  # the notification that cancels a session's turn (`session/cancel`)
    session_field: str  # what names a session in params and results (`sessionId`; "" without sessions)
    sessions: SessionRules  # which requests create, bring in, list and end sessions; the turn's messages
    agent_gates: tuple[CapabilityGate, ...]  # the agent's methods gated by its capabilities
    client_gates: tuple[CapabilityGate, ...]  # the client's methods gated by its capabilities


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


def error_helpers(package: Package, emit: Emitter) -> tuple[ErrorHelper, ...]:
    """A plain helper per code, and one per data shape (replacing its code's plain helper when it
    is named like the code); a shape whose required fields have no simple annotation is left out."""
    codes = package.protocol.error_codes
    plain = {c.constant: ErrorHelper(c.constant.lower(), c.constant, c.value, _message(c.constant), c.description)
             for c in codes}
    by_value = {c.value: c for c in codes}
    shaped: list[ErrorHelper] = []
    for shape in package.protocol.error_shapes:
        struct = package.node(shape.struct)
        owner = by_value[shape.code]
        if not isinstance(struct, Struct):
            continue
        args = tuple(ErrorArg(f.py, _arg_ann(emit, f.type)) for f in struct.fields if f.required)
        if any(not a.ann for a in args):
            continue
        if shape.name.upper() == owner.constant:
            plain.pop(owner.constant, None)
        shaped.append(ErrorHelper(shape.name, owner.constant, owner.value, _message(owner.constant),
                                  struct.description, struct.name, args))
    return tuple(sorted([*plain.values(), *shaped], key=lambda h: h.name))


def protocol_view(package: Package, emit: Emitter) -> ProtocolView:
    facts = package.protocol
    helpers = error_helpers(package, emit)
    n = facts.negotiation
    negotiation = None
    if n is not None and n.rejects_lower is not None and package.protocol_version is not None:
        helper = next((h for h in helpers if h.code == n.rejects_lower and h.data_class), None)
        if helper is not None:
            negotiation = NegotiationView(n.method, n.field, helper.name)
    return ProtocolView(
        codes=tuple((c.constant, c.value) for c in facts.error_codes),
        helpers=helpers,
        negotiation=negotiation,
        cancelled_by_session=facts.cancelled_by_session,
        initialize=n.method if n else "",
        initialize_handler=n.handler if n else "",
        version_field=n.field if n else "",
        initialize_params=n.params if n else "",
        initialize_result=n.result if n else "",
        null_request_id=facts.null_request_id,
        routable=n is not None and package.protocol_version is not None,
        cancel_request=facts.cancel_request,
        cancel_request_field=facts.cancel_request_field,
        session_cancel=facts.session_cancel,
        session_field=facts.session_field,
        sessions=facts.sessions,
        agent_gates=tuple(g for g in facts.capabilities if g.side == "agent"),
        client_gates=tuple(g for g in facts.capabilities if g.side == "client"),
    )
