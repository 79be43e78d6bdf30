"""Protocol facts the schema alone does not carry, each from a stated source or said to be unknown."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from acpgen.diagnostics import Diagnostics
from acpgen.ir.model import (
    Alias,
    CancelAnswer,
    CapabilityGate,
    Enum,
    ErrorCode,
    ErrorShape,
    Field,
    Method,
    Negotiation,
    Node,
    Protocol,
    Rule,
    SessionRules,
    Struct,
    TypeRef,
    Union_,
)
from acpgen.ir.naming import snake

# The params field through which a client asks for a protocol version (ACP's `initialize`).
VERSION_FIELD = "protocolVersion"

VERSION_HINT = ("pass --protocol-version N, set `protocol_version` in the target's [tool.acpgen] table, "
                "or put the release's meta.json beside the schema (or pass --meta)")


def protocol_version(given: int | None, meta: dict[str, Any] | None, meta_file: str,
                     diags: Diagnostics, *, negotiates: str | None) -> int | None:
    """The `protocolVersion` the package speaks: the option or config key, else the meta file's
    `version`; when neither says and the schema has a request that negotiates it, a warning (the
    runtime then refuses to negotiate, never echoes)."""
    stated = None if meta is None else meta.get("version")
    meta_diags = Diagnostics(meta_file or diags.file)
    if stated is not None and (not isinstance(stated, int) or isinstance(stated, bool) or stated < 0):
        meta_diags.warning("bad-meta-version", "/version",
                           f"the meta file's version {stated!r} is not a protocol version (a non-negative integer)",
                           "ignored; " + VERSION_HINT)
        stated = None
    if given is not None and stated is not None and stated != given:
        meta_diags.warning("protocol-version-mismatch", "/version",
                           f"the meta file says version {stated}, the option or config key {given}; "
                           f"the package speaks {given}", "drop one of them, or make them agree")
    diags.items.extend(meta_diags.items)
    if given is not None:
        return given
    if stated is not None:
        return stated
    if negotiates is not None:
        diags.warning("protocol-version-unknown", "",
                      f"no protocol version is known for this schema: the generated agent answers {negotiates!r} "
                      "with an error rather than echo the version asked for", VERSION_HINT)
    return None


# -- protocol rules read from the schema's structure -----------------------------------------------
#
# The schema states JSON-RPC's envelopes as types: a request object (members `id`, `method`), an
# error object (`code`, `message`, `data`). Those member names are JSON-RPC 2.0's own wire contract,
# so they are how the rules below find the types that state the rest: the error-code enum is the
# type of the error object's `code`, the error data shapes the variants of its `data`, the id rule
# the type of the request's `id`. No rule looks a definition up by its `$defs` name or reads
# description text; a rule the schema does not state is absent, with a located warning where the
# schema has the subject but not the statement.

# The codes this runtime answers with itself (acpgen/runtime/errors.py): not the schema's to define.
RUNTIME_CODES = frozenset({-32700, -32600, -32601, -32602, -32603, -32800, -32001})
# The params field by which ACP requests name their session.
SESSION_FIELD = "sessionId"
# The enum value / union tag by which a result says its request was cancelled.
CANCELLED = "cancelled"
ERROR_CODES_HINT = ('link it in the target\'s config: error_codes = { "/$defs/NAME" = CODE } '
                    "(the JSON pointer of the data type, the code it belongs to)")


class _Schema:
    """The IR being built, with the lookups the rules need (aliases followed)."""

    def __init__(self, nodes: Mapping[str, Node], defs: Mapping[str, TypeRef], methods: Sequence[Method]) -> None:
        self.nodes = nodes
        self.defs = defs
        self.methods = methods

    def resolve(self, t: TypeRef) -> TypeRef:
        seen = 0
        while t.kind == "named" and isinstance(self.nodes.get(t.name), Alias) and seen < 64:
            t = self.nodes[t.name].target  # type: ignore[union-attr]
            seen += 1
        return t

    def node(self, t: TypeRef) -> Node | None:
        t = self.resolve(t)
        if t.kind == "nullable" and t.item is not None:
            t = self.resolve(t.item)
        return self.nodes.get(t.name) if t.kind == "named" else None

    def struct(self, def_name: str | None) -> Struct | None:
        t = self.defs.get(def_name or "")
        node = self.node(t) if t is not None else None
        return node if isinstance(node, Struct) else None

    def structs(self) -> list[Struct]:
        return sorted((n for n in self.nodes.values() if isinstance(n, Struct)), key=lambda s: (s.pointer, s.name))


def _field(struct: Struct | None, wire: str, required: bool = True) -> Field | None:
    if struct is None:
        return None
    return next((f for f in struct.fields if f.wire == wire and (f.required or not required)), None)


def _required(struct: Struct) -> list[Field]:
    return [f for f in struct.fields if f.required and not f.flatten]


def error_object(schema: _Schema) -> tuple[Struct, Field, Enum] | None:
    """JSON-RPC's error object (a required int-enum `code` and a `message`), its `code` and enum."""
    for s in schema.structs():
        code, message = _field(s, "code"), _field(s, "message", required=False)
        enum = schema.node(code.type) if code is not None else None
        if code is not None and message is not None and isinstance(enum, Enum) and enum.base == "int":
            return s, code, enum
    return None


def data_shapes(schema: _Schema, error: Struct) -> tuple[Union_ | None, list[tuple[str, Struct]]]:
    """The union of the error object's `data` and its titled object variants: (title, struct)."""
    data = _field(error, "data", required=False)
    union = schema.node(data.type) if data is not None else None
    if not isinstance(union, Union_):
        return None, []
    out = []
    for variant in union.variants:
        struct = schema.node(variant.type)
        if isinstance(struct, Struct) and variant.title:
            out.append((variant.title, struct))
    return union, out


def error_codes(enum: Enum) -> tuple[ErrorCode, ...]:
    return tuple(ErrorCode(m.py, int(m.value), m.description, enum.pointer)
                 for m in enum.members if int(m.value) not in RUNTIME_CODES)


def error_shapes(schema: _Schema, error: Struct, codes: Sequence[ErrorCode], links: Mapping[str, int],
                 diags: Diagnostics) -> tuple[ErrorShape, ...]:
    """The titled variants of the error object's `data` that belong to a code: by title (a variant
    titled like the code, `UnsupportedProtocolVersion` for the code titled Unsupported protocol
    version) or by the config's `error_codes` link; any other is a located warning."""
    union, variants = data_shapes(schema, error)
    if union is None:
        return ()
    by_constant = {c.constant: c for c in codes}
    by_value = {c.value: c for c in codes}
    out: list[ErrorShape] = []
    for title, struct in variants:
        name = snake(title)
        owner = by_constant.get(name.upper())
        evidence: tuple[str, ...] = (union.pointer, struct.pointer)
        if owner is not None:
            evidence += (owner.pointer,)
        else:
            linked = links.get(struct.pointer.removeprefix("#"))
            owner = by_value.get(linked) if linked is not None else None
            if owner is None:
                given = "" if linked is None else f" (the config links it to {linked}, which the code enum lacks)"
                diags.warning("error-data-unlinked", struct.pointer,
                              f"the schema does not say which error code the data shape {struct.name} "
                              f"(variant {title!r} of {union.name}) belongs to{given}: no typed helper for it",
                              ERROR_CODES_HINT)
                continue
            evidence += (owner.pointer, f"config:error_codes:{struct.pointer.removeprefix('#')}")
        out.append(ErrorShape(name, owner.value, struct.name, evidence))
    return tuple(out)


def negotiation(schema: _Schema, shapes: Sequence[ErrorShape]) -> Negotiation | None:
    """The request whose params and result both require VERSION_FIELD; it rejects a lower version
    with an error of its own when some code's data shape is exactly `{a version, a list of versions}`
    (of the params field's type)."""
    for m in schema.methods:
        if m.notification or m.side != "agent":
            continue
        params, result = schema.struct(m.params), schema.struct(m.result)
        asked, answered = _field(params, VERSION_FIELD), _field(result, VERSION_FIELD)
        if params is None or result is None or asked is None or answered is None:
            continue
        evidence: tuple[str, ...] = (asked.pointer, answered.pointer)
        rejects = None
        for shape in shapes:
            struct = schema.nodes.get(shape.struct)
            fields = _required(struct) if isinstance(struct, Struct) else []
            kinds = sorted((f.type == asked.type, f.type.kind == "list" and f.type.item == asked.type) for f in fields)
            if kinds == [(False, True), (True, False)]:
                rejects = shape.code
                evidence += tuple(f.pointer for f in fields)
                break
        return Negotiation(m.wire, m.handler, VERSION_FIELD, params.name, result.name, rejects, evidence)
    return None


def request_id(schema: _Schema) -> tuple[bool, TypeRef | None, tuple[str, ...]]:
    """Whether a request id may be null, from the type of JSON-RPC's request object's `id` (no
    such object: JSON-RPC's own rule, it may)."""
    for s in schema.structs():
        id_field, method = _field(s, "id", required=False), _field(s, "method", required=False)
        if id_field is None or method is None:
            continue
        t = schema.resolve(id_field.type)
        node = schema.node(t)
        nullable = id_field.nullable or t.kind in ("null", "nullable", "any") or (
            isinstance(node, Union_) and any(schema.resolve(v.type).kind in ("null", "nullable") for v in node.variants))
        return nullable, id_field.type, (id_field.pointer,)
    return True, None, ()


def cancel_request(schema: _Schema, id_type: TypeRef | None) -> tuple[str, str, tuple[str, ...]]:
    """The protocol notification whose one required param is a request id (`$/cancel_request`),
    and that param's wire name."""
    if id_type is None:
        return "", "", ()
    for m in schema.methods:
        params = schema.struct(m.params)
        fields = _required(params) if params is not None else []
        if m.notification and m.side == "protocol" and len(fields) == 1 and fields[0].type == id_type:
            return m.wire, fields[0].wire, (fields[0].pointer,)
    return "", "", ()


def session_cancel(schema: _Schema, diags: Diagnostics) -> tuple[str, tuple[str, ...]]:
    """The agent's notification whose one required param is the session (`session/cancel`)."""
    found = []
    for m in schema.methods:
        params = schema.struct(m.params)
        fields = _required(params) if params is not None else []
        if m.notification and m.side == "agent" and [f.wire for f in fields] == [SESSION_FIELD]:
            found.append((m.wire, (fields[0].pointer,)))
    if len(found) > 1:
        diags.warning("session-cancel-ambiguous", found[1][1][0],
                      f"notifications {', '.join(w for w, _ in found)} each take only {SESSION_FIELD}: the schema does "
                      "not say which cancels a turn; none is treated as session/cancel",
                      "give the others another required param")
        return "", ()
    return found[0] if found else ("", ())


def cancel_answers(schema: _Schema) -> tuple[tuple[CancelAnswer, ...], tuple[CancelAnswer, ...]]:
    """Requests whose result can say they were cancelled: a required result field whose enum has
    the value `cancelled` (`session/prompt`'s `stopReason`: the answer when `session/cancel` ends
    the turn), or whose tagged union has a variant tagged `cancelled` that needs nothing else
    (`session/request_permission`'s outcome: the answer however the request is withdrawn)."""
    cancelled: list[CancelAnswer] = []
    withdrawn: list[CancelAnswer] = []
    for m in schema.methods:
        result = None if m.notification else schema.struct(m.result)
        for f in _required(result) if result is not None else []:
            node = schema.node(f.type)
            if isinstance(node, Enum) and any(mb.value == CANCELLED for mb in node.members):
                cancelled.append(CancelAnswer(m.wire, f.wire, "", f.pointer))
                break
            if isinstance(node, Union_) and node.tag and any(
                v.tag_value == CANCELLED and isinstance(variant := schema.node(v.type), Struct)
                and not any(x.required and x.wire != node.tag for x in variant.fields)
                for v in node.variants
            ):
                withdrawn.append(CancelAnswer(m.wire, f.wire, node.tag, f.pointer))
                break
    return tuple(sorted(dict.fromkeys(cancelled), key=_answer_key)), tuple(sorted(dict.fromkeys(withdrawn), key=_answer_key))


def session_rules(schema: _Schema, session_cancel: str, cancelled_by_session: Sequence[str]
                  ) -> tuple[SessionRules, list[Rule]]:
    """How the agent's requests treat sessions, read from their params and results (SESSION_FIELD
    is the session's name everywhere):
    - a creator's result requires SESSION_FIELD; a fork is a creator whose params require it too;
    - an opener is a creator, or a request requiring SESSION_FIELD and another param a creator
      without one requires (`session/load`'s and `session/resume`'s `cwd`, as `session/new`);
    - the listing request's result requires a list of objects that each require SESSION_FIELD (the
      listing field holds it);
    - the close request is `session/close` when its params are the session alone (four requests of
      v1 take only the session; their names, not their shapes, tell them apart);
    - the turn is the session cancel notification, the requests it cancels, and the requests whose
      required params are the session and one list (the turn's input: `session/prompt`, whose v2
      result no longer says how the turn stopped)."""
    requests = [m for m in schema.methods if m.side == "agent" and not m.notification]
    rules: list[Rule] = []

    def required_params(m: Method) -> list[Field]:
        params = schema.struct(m.params)
        return _required(params) if params is not None else []

    def session_param(m: Method) -> Field | None:
        return next((f for f in required_params(m) if f.wire == SESSION_FIELD), None)

    creators: list[Method] = []
    for m in requests:
        named = _field(schema.struct(m.result), SESSION_FIELD)
        if named is not None:
            creators.append(m)
            rules.append(Rule(f"session/creates/{m.wire}", True, (named.pointer,)))
    forks = [m for m in creators if session_param(m) is not None]
    rules += [Rule(f"session/forks/{m.wire}", True, tuple(f.pointer for f in required_params(m)
                                                          if f.wire == SESSION_FIELD)) for m in forks]
    fresh = {f.wire for m in creators if session_param(m) is None for f in required_params(m)}
    openers = [m.wire for m in creators]
    for m in requests:
        if m in creators or session_param(m) is None:
            continue
        shared = [f for f in required_params(m) if f.wire in fresh]
        if shared:
            openers.append(m.wire)
            rules.append(Rule(f"session/opens/{m.wire}", True, tuple(f.pointer for f in shared)))
    listing = listing_field = ""
    for m in requests:
        result = schema.struct(m.result)
        for f in _required(result) if result is not None else []:
            t = schema.resolve(f.type)
            item = schema.node(t.item) if t.kind == "list" and t.item is not None else None
            if isinstance(item, Struct) and _field(item, SESSION_FIELD) is not None and not listing:
                listing, listing_field = m.wire, f.wire
                rules.append(Rule("session/lists", m.wire, (f.pointer,)))
    close = ""
    for m in requests:
        if m.wire == "session/close" and [f.wire for f in required_params(m)] == [SESSION_FIELD]:
            close = m.wire
            rules.append(Rule("session/closes", m.wire, (required_params(m)[0].pointer,)))
    turn = [session_cancel] if session_cancel else []
    turn += [w for w in cancelled_by_session if w not in turn]
    for m in requests:
        fields = required_params(m)
        lists = [f for f in fields if schema.resolve(f.type).kind == "list"]
        if [f.wire for f in fields if f not in lists] == [SESSION_FIELD] and len(lists) == 1:
            turn += [m.wire] if m.wire not in turn else []
            rules.append(Rule(f"session/turn/{m.wire}", True, (lists[0].pointer,)))
    return SessionRules(tuple(sorted(m.wire for m in creators)), tuple(sorted(openers)),
                        tuple(sorted(m.wire for m in forks)), close, listing, listing_field,
                        tuple(sorted(turn))), rules


# A capability field's description names the methods it gates: "Whether the agent supports
# `session/load`", "Whether the Client support all `terminal/*` methods", "mean the agent does not
# support the `session/*` methods", "supports `session/archive` and `session/unarchive`".
_GATE_SENTENCE = re.compile(
    r"\b(?:whether|mean) the (?:agent|client) (?:does not )?supports? (?:the |all )?"
    r"(`[\w/*$]+`(?:(?:,| and| or)+ `[\w/*$]+`)*)",
    re.IGNORECASE,
)


def capability_gates(schema: _Schema, initialize: str) -> tuple[CapabilityGate, ...]:
    """The methods each side handles only when it advertised a capability in `initialize`: the
    client's capabilities are in its params, the agent's in its result; a capability field whose
    description says the side supports a method (see `_GATE_SENTENCE`; `prefix/*` is every method
    of that side under `prefix/`) gates it. A method gated at several depths keeps the deepest
    field (`session.fork` under `session`): the deeper one present implies the others."""
    method = next((m for m in schema.methods if m.wire == initialize and not m.notification), None)
    if method is None:
        return ()
    handled_by = method.side
    caller = "client" if handled_by == "agent" else "agent"
    gates: dict[tuple[str, str], CapabilityGate] = {}
    for side, root in ((caller, schema.struct(method.params)), (handled_by, schema.struct(method.result))):
        side_methods = sorted(m.wire for m in schema.methods if m.side == side)

        def visit(struct: Struct, path: tuple[str, ...], seen: frozenset[str], side: str = side,
                  side_methods: list[str] = side_methods) -> None:
            for f in struct.fields:
                here = (*path, f.wire)
                found = _GATE_SENTENCE.search(" ".join(f.description.split()))
                for name in re.findall(r"`([^`]+)`", found.group(1)) if found else ():
                    named = ([w for w in side_methods if w.startswith(name[:-1])] if name.endswith("/*")
                             else [name] if name in side_methods else [])
                    for wire in named:
                        old = gates.get((side, wire))
                        if old is None or len(old.path) < len(here):
                            gates[(side, wire)] = CapabilityGate(wire, side, here, f.pointer)
                inner = schema.node(f.type)
                if isinstance(inner, Struct) and inner.pointer not in seen and len(here) < 6:
                    visit(inner, here, seen | {inner.pointer})

        if root is not None:
            visit(root, (), frozenset({root.pointer}))
    return tuple(sorted(gates.values(), key=lambda g: (g.side, g.method)))


def _answer_key(a: CancelAnswer) -> tuple[str, str]:
    return a.method, a.field


def negotiating_method(nodes: Mapping[str, Node], defs: Mapping[str, TypeRef], methods: Sequence[Method]) -> str | None:
    """The request whose params have VERSION_FIELD (ACP: `initialize`), if the schema has one:
    what `protocol_version` warns about when no version is known."""
    schema = _Schema(nodes, defs, methods)
    for m in methods:
        if not m.notification and _field(schema.struct(m.params), VERSION_FIELD, required=False) is not None:
            return m.wire
    return None


def derive_protocol(nodes: Mapping[str, Node], defs: Mapping[str, TypeRef], methods: Sequence[Method],
                    links: Mapping[str, int], diags: Diagnostics) -> Protocol:
    """Every protocol rule the schema states, each with the pointers that state it."""
    schema = _Schema(nodes, defs, methods)
    rules: list[Rule] = []
    codes: tuple[ErrorCode, ...] = ()
    shapes: tuple[ErrorShape, ...] = ()
    found = error_object(schema)
    data_pointers: set[str] = set()
    if found is not None:
        error, code_field, enum = found
        codes = error_codes(enum)
        shapes = error_shapes(schema, error, codes, links, diags)
        data_pointers = {struct.pointer.removeprefix("#") for _, struct in data_shapes(schema, error)[1]}
        rules += [Rule(f"error-code/{c.value}", c.constant, (code_field.pointer, c.pointer)) for c in codes]
        rules += [Rule(f"error-data/{s.struct}", s.code, s.evidence) for s in shapes]
    for pointer, code in sorted(links.items()):
        if pointer not in data_pointers:
            diags.warning("config-unused-link", "", f"error_codes links {pointer} to {code}, but no data shape of "
                          "the schema's error object has that pointer", "fix or remove the link")
    negotiated = negotiation(schema, shapes)
    if negotiated is not None:
        rules.append(Rule(f"negotiation/{negotiated.method}", negotiated.field, negotiated.evidence))
        if negotiated.rejects_lower is not None:
            rules.append(Rule("negotiation/rejects-lower", negotiated.rejects_lower, negotiated.evidence))
    null_id, id_type, id_evidence = request_id(schema)
    rules.append(Rule("request-id/null", null_id, id_evidence))
    cancel, cancel_field, cancel_evidence = cancel_request(schema, id_type)
    if cancel:
        rules.append(Rule("cancel/request", cancel, cancel_evidence))
    session, session_evidence = session_cancel(schema, diags)
    if session:
        rules.append(Rule("cancel/session", session, session_evidence))
    cancelled, withdrawn = cancel_answers(schema)
    carries_session = {m.wire for m in methods if _field(schema.struct(m.params), SESSION_FIELD, required=False)}
    by_session = tuple(sorted({a.method for a in cancelled if a.method in carries_session})) if session else ()
    rules += [Rule(f"cancelled-result/{a.method}", f"{a.field}={a.value}", (a.pointer,)) for a in cancelled]
    rules += [Rule(f"withdrawn-result/{a.method}", f"{a.field}={json.dumps(a.value, sort_keys=True)}", (a.pointer,))
              for a in withdrawn]
    rules += [Rule(f"cancelled-by-session/{m}", True, (next(a.pointer for a in cancelled if a.method == m),))
              for m in by_session]
    sessions, lifecycle = session_rules(schema, session, by_session)
    rules += lifecycle
    # The runtime names sessions by SESSION_FIELD in any message when the schema has sessions.
    session_field = SESSION_FIELD if session or sessions.creators else ""
    gates = capability_gates(schema, negotiated.method) if negotiated is not None else ()
    rules += [Rule(f"capability/{g.side}/{g.method}", ".".join(g.path), (g.pointer,)) for g in gates]
    return Protocol(codes, shapes, negotiated, null_id, cancel, cancel_field, session,
                    session_field, cancelled, withdrawn, by_session, sessions, gates,
                    tuple(sorted(rules, key=lambda r: r.key)))
