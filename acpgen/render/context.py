"""The template context: IR nodes paired with the source fragments the emitter decided for them."""

from __future__ import annotations

import graphlib
from dataclasses import dataclass
from typing import Any

from acpgen.ir.model import Alias, Enum, Field, Method, Package, Struct, TypeRef, Union_
from acpgen.render.codegen import Decode, Emitter, Helper, decoder_name
from acpgen.render.protocol import protocol_view

UNSTABLE_NOTE = "Unstable: only in the unstable schema; it may change or go away."


@dataclass(frozen=True)
class FieldView:
    f: Field
    ann: str
    local: str
    init_default: str  # the default in the __init__ signature ("" = required)
    init_fill: str  # built in __init__ when the argument is left out (a fresh mutable default)
    default_expr: str
    null_expr: str
    dec: Decode
    fallback: str
    enc: str

    def __getattr__(self, name: str) -> Any:
        return getattr(self.f, name)

    @property
    def may_be_unset(self) -> bool:
        """The attribute itself can hold UNSET (an optional field without a schema default)."""
        return self.init_default == "UNSET" and not self.init_fill

    @property
    def init_ann(self) -> str:
        """The parameter's annotation: UNSET is also accepted where it means "the default"."""
        return f"{self.ann} | Unset" if self.init_fill else self.ann

    @property
    def merge_missing(self) -> bool:
        """Absent and invalid both take the default: one branch (a not-nullable inline check)."""
        return bool(self.default_expr and self.dec.check and self.fallback == self.default_expr
                    and not self.null_expr and not self.f.nullable)


@dataclass(frozen=True)
class StructView:
    s: Struct
    fields: tuple[FieldView, ...]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.s, name)

    @property
    def required_fields(self) -> tuple[FieldView, ...]:
        return tuple(f for f in self.fields if f.required and not f.flatten)

    @property
    def optional_fields(self) -> tuple[FieldView, ...]:
        return tuple(f for f in self.fields if not f.required and not f.flatten)

    @property
    def flat_fields(self) -> tuple[FieldView, ...]:
        return tuple(f for f in self.fields if f.flatten)


@dataclass(frozen=True)
class UnionView:
    u: Union_
    ann: str
    members: tuple[tuple[str, Decode], ...]  # untagged: (label, decode) tried in order
    dispatch: tuple[tuple[str, str], ...]  # tagged: (tag value, decoder callable)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.u, name)


@dataclass(frozen=True)
class MethodView:
    """One method as the interface, proxy and dispatch templates need it."""

    method: Method
    params_type: str  # annotation, e.g. `models.PromptRequest` (`JsonValue` for raw JSON)
    params_decoder: str  # a callable `object -> params`, e.g. `models.PromptRequest.from_dict`
    result_type: str  # annotation; `None` for a notification
    result_decoder: str  # a callable `object -> result`; "" for a notification
    doc: str  # the params type's description
    params_class: bool = False  # the params are one model class, so a proxy also takes its fields as keywords


# x-side values whose methods each side handles (`protocol` methods, such as `$/cancel_request`,
# are handled by both; `both` is v2's spelling of a method either side may receive).
AGENT_SIDES = ("agent", "both", "protocol")
CLIENT_SIDES = ("client", "both", "protocol")


@dataclass(frozen=True)
class AliasView:
    name: str
    ann: str
    description: str
    unstable: bool
    quoted: bool


# Locals in from_dict must not shadow what its body calls.
_BODY_NAMES = frozenset({"type", "isinstance", "len", "data", "cls", "self", "e", "out", "tag", "list",
                         "dict", "str", "int", "float", "bool", "object", "expected", "missing"})


def local_name(py: str) -> str:
    return py + "_" if py in _BODY_NAMES else py


def docstring(text: str, unstable: bool = False) -> str:
    """Schema prose as a docstring body; escaped so any text is safe inside triple quotes."""
    text = text.strip()
    if unstable and "**UNSTABLE**" not in text:
        text = f"{UNSTABLE_NOTE}\n\n{text}" if text else UNSTABLE_NOTE
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text += " "
    return text


class ContextBuilder:
    def __init__(self, package: Package) -> None:
        self.package = package
        self.emit = Emitter(package)

    def union_ann(self, u: Union_) -> str:
        names = list(dict.fromkeys(self.emit.ann(v.type) for v in u.variants))
        return " | ".join(sorted(names, key=lambda n: n == "None"))

    def field_view(self, f: Field, owner: str) -> FieldView:
        e = self.emit
        if f.flatten:
            dec = e.decode(f.type)
            return FieldView(f, e.ann(f.type), local_name(f.py), "", "", "", "", dec, "", f"self.{f.py}.to_dict()")
        dec = e.decode_skipping(f.type) if f.skip_invalid_items else e.decode(f.type)
        if f.skip_invalid_items and dec.call.startswith("_dec_skip_"):
            dec = Decode(call=dec.call.replace("({x})", f"({{x}}, {owner + '.' + f.py!r})"))
        default_expr = e.default_expr(f) if f.has_default else ""
        null_expr = ""
        if f.default_on_null:
            r = e.resolve(f.type)
            null_expr = default_expr or ("[]" if r.kind == "list" else "{}" if r.kind in ("map", "object") else "None")
        fallback = e.fallback(f) if f.default_on_error else ""
        enc = e.encode(f.type, f"self.{f.py}")
        if f.nullable and enc != f"self.{f.py}":
            enc = f"None if self.{f.py} is None else {enc}"
        return FieldView(f, e.field_ann(f), local_name(f.py), *e.init_default(f), default_expr,
                         null_expr, dec, fallback, enc)

    def struct_view(self, s: Struct) -> StructView:
        return StructView(s, tuple(self.field_view(f, s.name) for f in s.fields))

    def union_view(self, u: Union_) -> UnionView:
        e = self.emit
        ann = self.union_ann(u)
        members = tuple((e.ann(v.type), e.decode(v.type)) for v in u.variants)
        dispatch = tuple(
            (v.tag_value, e.decode(v.type).call.replace("({x})", "")) for v in u.variants if v.tag_value is not None
        )
        return UnionView(u, ann, members, dispatch)

    def aliases(self) -> list[AliasView]:
        """Type aliases (plain and union) in an order where each follows what it names."""
        e = self.emit
        views: dict[str, AliasView] = {}
        deps: dict[str, set[str]] = {}
        for node in self.package.nodes:
            if isinstance(node, Alias):
                ann = e.ann(node.target)
                refs = self.refs(node.target)
            elif isinstance(node, Union_):
                ann = self.union_ann(node)
                refs = set().union(*(self.refs(v.type) for v in node.variants))
            else:
                continue
            views[node.name] = AliasView(node.name, ann, node.description, node.unstable, False)
            deps[node.name] = refs
        alias_names = set(views)
        sorter = graphlib.TopologicalSorter({n: sorted(deps[n] & alias_names - {n}) for n in sorted(views)})
        try:
            order = list(sorter.static_order())
        except graphlib.CycleError as exc:
            cyclic = set(exc.args[1])
            for name in cyclic:
                views[name] = AliasView(name, views[name].ann, views[name].description, views[name].unstable, True)
            rest = {n: sorted(deps[n] & alias_names - cyclic - {n}) for n in sorted(views) if n not in cyclic}
            order = list(graphlib.TopologicalSorter(rest).static_order()) + sorted(cyclic)
        # Self-recursive aliases need a quoted right-hand side.
        for name in order:
            if name in deps[name]:
                v = views[name]
                views[name] = AliasView(name, v.ann, v.description, v.unstable, True)
        return [views[n] for n in order]

    def refs(self, t: TypeRef) -> set[str]:
        if t.kind == "named":
            return {t.name}
        return self.refs(t.item) if t.item is not None else set()

    def method_view(self, m: Method) -> MethodView:
        types = dict(self.package.defs)

        def typed(def_name: str | None) -> tuple[str, str]:
            if not def_name:
                return "JsonValue", "decode_any"
            t = types[def_name]
            call = self.decoder_callable(t)
            return f"models.{self.emit.node(t).name}", call if call.startswith("decode_") else f"models.{call}"

        params_type, params_decoder = typed(m.params)
        result_type, result_decoder = ("None", "") if m.notification else typed(m.result)
        params_class = False
        if m.params:
            t = self.emit.resolve(types[m.params])
            params_class = t.kind == "named" and isinstance(self.emit.node(t), Struct)
        return MethodView(m, params_type, params_decoder, result_type, result_decoder, m.description, params_class)

    def cancelled_results(self, views: list[MethodView]) -> list[tuple[str, str, str]]:
        """(method, result field, value) for each request whose result can itself say it was
        cancelled: a required field whose enum has the member `cancelled` (`session/prompt`'s
        `stopReason` in ACP). A turn cancelled by `session/cancel` is answered with that result."""
        out: list[tuple[str, str, str]] = []
        types = dict(self.package.defs)
        for v in views:
            m = v.method
            if m.notification or not m.result or m.result not in types:
                continue
            result = self.emit.resolve(types[m.result])
            if result.kind != "named" or not isinstance(self.emit.node(result), Struct):
                continue
            for f in self.emit.node(result).fields:  # type: ignore[union-attr]
                t = self.emit.resolve(f.type)
                node = self.emit.node(t) if t.kind == "named" else None
                if f.required and isinstance(node, Enum) and any(mb.value == "cancelled" for mb in node.members):
                    out.append((m.wire, f.wire, "cancelled"))
                    break
        return sorted(out)

    def decoder_callable(self, t: TypeRef) -> str:
        """A callable `object -> value` for the registry; scalars use the shared checkers."""
        e = self.emit
        r = e.resolve(t)
        if r.kind == "any":
            return "decode_any"
        if r.kind in ("str", "int", "float", "bool", "null", "object") and not r.constraints:
            return f"decode_{r.kind}"
        dec = e.decode(t)
        if dec.call and dec.call.endswith("({x})") and "(" not in dec.call[:-5]:
            return dec.call[:-5]
        name = decoder_name(e.key(r))
        if name not in e.helpers:
            e.helpers[name] = Helper(name, "scalar", e.ann(r), dec)
        return name

    def context(self) -> dict[str, Any]:
        p = self.package
        structs = [self.struct_view(n) for n in p.nodes if isinstance(n, Struct)]
        enums = [n for n in p.nodes if isinstance(n, Enum)]
        unions = [self.union_view(n) for n in p.nodes if isinstance(n, Union_)]
        aliases = self.aliases()
        registry = [(def_name, self.emit.node(t).name, self.decoder_callable(t)) for def_name, t in p.defs]
        methods: list[Method] = list(p.methods)
        helpers = sorted(self.emit.helpers.values(), key=lambda h: h.name)
        views = [self.method_view(m) for m in methods]
        return {
            "method_views": views,
            "agent_sides": AGENT_SIDES,
            "client_sides": CLIENT_SIDES,
            "agent_methods": [v for v in views if v.method.side in AGENT_SIDES],
            "client_methods": [v for v in views if v.method.side in CLIENT_SIDES],
            "cancelled_results": self.cancelled_results(views),
            "codec_decoders": sorted(
                {d for v in views for d in (v.params_decoder, v.result_decoder) if d.startswith("decode_")}
            ),
            "result_codec_decoders": sorted(
                {v.result_decoder for v in views if v.method.side in AGENT_SIDES + CLIENT_SIDES}
                - {""}
                - {v.result_decoder for v in views if not v.result_decoder.startswith("decode_")}
            ),
            "keep_unknown": bool(dict(p.options).get("keep_unknown")),
            "package": p,
            "structs": structs,
            "enums": enums,
            "enum_checks": {e.name: self.emit.scalar(e.other) for e in enums
                            if e.other is not None and e.other.kind in ("int", "str") and e.other.constraints},
            "unions": unions,
            "aliases": aliases,
            "helpers": helpers,
            "registry": registry,
            "methods": methods,
            "unstable_types": sorted(d for d, t in p.defs if self.emit.node(t).unstable),
            "protocol": protocol_view(p, self.emit),
        }
