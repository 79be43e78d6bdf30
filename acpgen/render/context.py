"""The template context: IR nodes paired with the source fragments the emitter decided for them.

The views here (and in helpers.py and protocol.py) are plain dataclasses without `__eq__`,
`__hash__` or `__repr__`, and not frozen: templates never compare, hash or assign them, and each
frozen class cost acpgen's start two more compiled methods (0.2 ms a class, 25 classes). The IR they
wrap stays frozen."""

from __future__ import annotations

import functools
import graphlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from acpgen import __version__
from acpgen.ir.model import Alias, Enum, Method, Package, Struct, TypeRef, Union_
from acpgen.ir.naming import BODY_BUILTINS
from acpgen.render.codegen import (
    VALUE_AT,
    Decode,
    Emitter,
    FieldPlan,
    Imports,
    annotation,
    dunder_all_order,
    isort_key,
    with_wire_values,
)
from acpgen.render.helpers import Builder, Permission, Tracker, Updates, helper_facts
from acpgen.render.protocol import ProtocolView, protocol_view
from acpgen.render.text import docstring_body
from acpgen.runtime import EAGER_EXPORTS, LAZY_EXPORTS, PROVENANCE_EXPORTS, ROUTER

UNSTABLE_NOTE = "Unstable: only in the unstable schema; it may change or go away."


# Every word of an expression not after a dot: a name it may use (a keyword or a word inside a string
# literal counts too, which costs nothing).
_WORDS = re.compile(r"(?<![.\w])\w+")


@dataclass(eq=False, repr=False)
class StructView:
    """A struct as models.py.j2 prints it: its field plans, decode statements and annotations."""

    s: Struct
    fields: tuple[FieldPlan, ...]
    decode: tuple[str, ...]  # the statements of from_dict that read the fields
    ann: dict[str, str]  # annotations of the fields the class itself declares
    is_base: bool  # a tag-only variant subclasses it (and has its own copy of its to_dict, the tag first)
    tag_line: str = ""  # `tag: ClassVar[Literal["x"]] = "x"` on a tagged union's variant; "" elsewhere

    def __getattr__(self, name: str) -> Any:
        return getattr(self.s, name)

    @functools.cached_property
    def reads_required(self) -> bool:
        """Whether from_dict reads a required key (and so turns a KeyError into `missing`)."""
        return any(f.f.required and not f.f.flatten for f in self.fields)

    @functools.cached_property
    def required_fields(self) -> tuple[FieldPlan, ...]:
        return tuple(f for f in self.fields if f.f.required and not f.f.flatten)

    @functools.cached_property
    def optional_fields(self) -> tuple[FieldPlan, ...]:
        return tuple(f for f in self.fields if not f.f.required and not f.f.flatten)

    @functools.cached_property
    def literal_fields(self) -> tuple[FieldPlan, ...]:
        """The fields `to_dict` writes in its dict display: the required ones, then the optional
        ones that are always written (never UNSET) up to the first that may be absent. One
        display is cheaper than a store per key, and the wire order stays the fields' order."""
        lead = []
        for f in self.optional_fields:
            if f.may_be_unset:
                break
            lead.append(f)
        return self.required_fields + tuple(lead)

    @functools.cached_property
    def set_values(self) -> dict[str, tuple[str, str]]:
        """Field -> (local, its encode expression) for each optional field `to_dict` writes only
        when it is set, reading the attribute once (`if (meta := self.meta) is not UNSET:`). The
        local is named as from_dict names it, with `_` added while it is a name any expression of
        `to_dict` uses: assigned anywhere in the method, a local hides that name in all of it."""
        exprs = [f.enc for f in self.fields] + [f.enc_at for f in self.tail_fields]
        used = set(_WORDS.findall(" ".join(exprs))) | {"out", "self"}
        values: dict[str, tuple[str, str]] = {}
        for f in self.tail_fields:
            if f.may_be_unset:
                name = f.local
                while name in used:
                    name += "_"
                used.add(name)
                values[f.f.py] = (name, f.enc_at.replace(VALUE_AT, name))
        return values

    @functools.cached_property
    def tail_fields(self) -> tuple[FieldPlan, ...]:
        """The optional fields `to_dict` writes after its dict display, each in its own statement."""
        return self.optional_fields[len(self.literal_fields) - len(self.required_fields):]

    @functools.cached_property
    def flat_fields(self) -> tuple[FieldPlan, ...]:
        return tuple(f for f in self.fields if f.f.flatten)


@dataclass(eq=False, repr=False)
class UnionView:
    """A union as models.py.j2 prints it: its annotation, decoders and variant classes."""

    u: Union_
    ann: str
    members: tuple[tuple[str, Decode], ...]  # untagged: (label, decode) tried in order
    dispatch: tuple[tuple[str, str], ...]  # tagged: (tag value, decoder callable)
    classes: tuple[str, ...]  # the variant classes when all are object types (what encode accepts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.u, name)

    keys: tuple[tuple[str, ...] | None, ...] = ()  # per member: the wire keys its class keeps (None: all)
    # An untagged union of classes: a value several variants accept decodes as the one that keeps
    # the most of its keys (`widest_variant`), not merely the first; this names its variant table.
    widest: str = ""


@dataclass(eq=False, repr=False)
class MethodView:
    """One method as the interface, proxy and dispatch templates need it."""

    method: Method
    params_type: str  # annotation, e.g. `models.PromptRequest` (`JsonValue` for raw JSON)
    params_decoder: str  # a callable `object -> params`, e.g. `models.PromptRequest.from_dict`
    result_type: str  # annotation; `None` for a notification
    result_decoder: str  # a callable `object -> result`; "" for a notification
    doc: str  # the params type's description
    params_class: bool = False  # the params are one model class, so a proxy also takes its fields as keywords
    result_empty: bool = False  # the result is an object with no required field: `null` decodes as `{}`
    # the params class's fields as the proxy's keyword parameters (`session_id: str`, `meta: ... = ...`),
    # for its typed overload; () when the params are no plain class (raw JSON, flattened unions)
    keywords: tuple[str, ...] = ()
    keyword_names: frozenset[str] = frozenset()  # what the keywords' annotations name besides `models.X`

    @property
    def result_call(self) -> str:
        """The callable that decodes the wire `result` (`null_as_empty` around an empty result's)."""
        return f"null_as_empty({self.result_decoder})" if self.result_empty else self.result_decoder

    @property
    def uses_models(self) -> bool:
        """Whether its annotations name a class of models.py (`models.X`): typed params or result."""
        return bool(self.method.params) or (not self.method.notification and bool(self.method.result))


# The line length isort wraps an import at in the checks of generated code (ruff's default).
IMPORT_WIDTH = 88


def import_statement(module: str, names: tuple[str, ...], indent: str = "") -> str:
    """`from .module import a, b` in isort's order, one name a line in parentheses when too long."""
    ordered = sorted(names, key=isort_key)
    line = f"{indent}from .{module} import {', '.join(ordered)}"
    if len(line) <= IMPORT_WIDTH:
        return line
    return f"{indent}from .{module} import (\n" + "".join(f"{indent}    {n},\n" for n in ordered) + f"{indent})"


@dataclass(eq=False, repr=False)
class InitExports:
    """What `__init__.py` re-exports (acpgen/runtime/__init__.py's tables; the router's names only
    when the package can route), in the order each place prints them."""

    eager: tuple[str, ...]  # import statements of what is imported with the package (and `lazy_attribute`)
    lazy: tuple[str, ...]  # the same (indented) for what is imported on first use, under TYPE_CHECKING
    table: tuple[tuple[str, str], ...]  # (name, module) of the lazy names, sorted by name
    all: tuple[str, ...]  # every name, in the order ruff wants an `__all__` in

    @staticmethod
    def of(routable: bool) -> InitExports:
        lazy = {m: names for m, names in LAZY_EXPORTS.items() if routable or m != ROUTER}
        names = [n for table in (EAGER_EXPORTS, lazy) for ns in table.values() for n in ns]
        eager = {**EAGER_EXPORTS, "_tables": ("lazy_attribute",)}  # and what its `__getattr__` calls
        return InitExports(tuple(import_statement(m, ns) for m, ns in sorted(eager.items())),
                           tuple(import_statement(m, ns, "    ") for m, ns in sorted(lazy.items())),
                           tuple(sorted((n, m) for m, ns in lazy.items() for n in ns)),
                           tuple(dunder_all_order([*names, *PROVENANCE_EXPORTS])))


# x-side values whose methods each side handles (`protocol` methods, such as `$/cancel_request`,
# are handled by both; `both` is v2's spelling of a method either side may receive).
AGENT_SIDES = ("agent", "both", "protocol")
CLIENT_SIDES = ("client", "both", "protocol")


@dataclass(eq=False, repr=False)
class AliasView:
    """An alias as models.py.j2 prints it."""

    name: str
    ann: str
    description: str
    unstable: bool
    quoted: bool


# Locals in from_dict must not shadow what its body calls.
_BODY_NAMES = frozenset({"type", "isinstance", "len", "data", "cls", "self", "e", "out", "tag", "list",
                         "dict", "str", "int", "float", "bool", "object", "expected", "missing"})


UNION_CHUNK = 50


def balanced_union(names: list[str]) -> str:
    """`A | B | ...`; a long union is grouped in parentheses (chunks of UNION_CHUNK, recursively),
    since Python compiles a flat chain of N `|` into an N-deep tree and fails past ~1000 operands."""
    if len(names) <= UNION_CHUNK:
        return " | ".join(names)
    chunks = [names[i:i + UNION_CHUNK] for i in range(0, len(names), UNION_CHUNK)]
    return balanced_union([f"({' | '.join(chunk)})" for chunk in chunks])


def body_names_taken(package: Package) -> frozenset[str]:
    """The names class bodies use that a field of the package takes (`list`, `str`, `field`): the
    models module imports them under private aliases (codegen.Imports)."""
    return frozenset(f.py for n in package.nodes if isinstance(n, Struct) for f in n.fields) & (BODY_BUILTINS | {"field"})


def local_name(py: str, module_names: frozenset[str] = frozenset()) -> str:
    """The local a field is decoded into: never a name the body calls, nor a class of the module
    (a property `日本` of type `日本` would otherwise shadow the class it is decoded with)."""
    out = py + "_" if py in _BODY_NAMES else py
    while out in module_names:
        out += "_"
    return out


def docstring(text: str, unstable: bool = False) -> str:
    """Schema prose as a docstring body; escaped so any text is safe inside triple quotes."""
    text = text.strip()
    if unstable and "**UNSTABLE**" not in text:
        text = f"{UNSTABLE_NOTE}\n\n{text}" if text else UNSTABLE_NOTE
    return docstring_body(text)


class ContextBuilder:
    def __init__(self, package: Package) -> None:
        self.package = package
        self.emit = Emitter(package, Imports(frozenset(n.name for n in package.nodes) | body_names_taken(package)))
        self.module_names = frozenset(n.name for n in package.nodes)
        self.bases = {n.base for n in package.nodes if isinstance(n, Struct) and n.base}
        # The default variant (no tag on the wire) of each tagged union, by class name.
        self.defaults = {n.default for n in package.nodes if isinstance(n, Union_) and n.tag and n.default}
        self.plans: dict[str, tuple[FieldPlan, ...]] = {}  # struct name -> its field plans (struct_view)

    def union_ann(self, u: Union_) -> str:
        names = sorted(dict.fromkeys(self.emit.ann(v.type) for v in u.variants), key=lambda n: n == "None")
        return balanced_union(names)

    def struct_view(self, s: Struct) -> StructView:
        e = self.emit
        plans = tuple(e.field_plan(f, s.name, local_name(f.py, self.module_names), e.private.hook(f.hook) if f.hook else "") for f in s.fields)
        self.plans[s.name] = plans
        statements = tuple(line for p in plans for line in e.decode_statements(p))
        if any(f.required and not f.flatten for f in s.fields):
            e.use("missing")
        return StructView(s, plans, statements, {p.f.py: p.ann for p in plans}, s.name in self.bases, self.tag_line(s))

    def tag_line(self, s: Struct) -> str:
        """The `tag` class attribute of a tagged union's variant (naming.py, "Tags"): its value
        typed as its `Literal`, or `None` on the default variant (unless the class is also the
        payload of a tagged variant, whose `tag` then overrides it); "" elsewhere."""
        e = self.emit
        if s.tag is not None:
            value = repr(s.tag.value)
            return f"tag: {e.use('ClassVar')}[{e.use('Literal')}[{value}]] = {value}"
        if s.name in self.defaults and s.name not in self.bases and not s.other_of:
            return f"tag: {e.use('ClassVar')}[None] = None"
        return ""

    def is_tagged_subclass(self, t: TypeRef) -> bool:
        node = self.package.node(t.name) if t.kind == "named" else None
        return isinstance(node, Struct) and bool(node.base)

    def union_view(self, u: Union_) -> UnionView:
        e = self.emit
        members: list[tuple[str, Decode]] = []
        for v in u.variants:
            dec = e.decode(v.type)
            members.append((e.ann(v.type), dec))
            if dec.check is None and dec.call is None:
                break  # a variant that accepts any value: the ones after it can never be reached
        # A tag-only subclass is decoded without checking the tag again (the dispatch did).
        dispatch = tuple(
            (v.tag_value, f"{v.type.name}._decode_untagged" if self.is_tagged_subclass(v.type) else call.callee)
            for v in u.variants if v.tag_value is not None and (call := e.decode(v.type).call) is not None
        )
        classes = e.struct_variants(u)
        widest = not u.tag and len(classes) >= 2 and all(dec.call for _, dec in members)
        return UnionView(u, self.union_ann(u), tuple(members), dispatch, classes,
                         tuple(self.kept_keys(v.type) for v in u.variants[:len(members)]),
                         e.private.variants_table(u.name) if widest else "")

    def kept_keys(self, t: TypeRef) -> tuple[str, ...] | None:
        """The wire keys a value of this class keeps (its fields and tag), sorted; None when it
        keeps every key (extra keys kept, or a flattened union whose keys vary)."""
        r = self.emit.resolve(t)
        node = self.emit.node(r) if r.kind == "named" else None
        keep_unknown = bool(dict(self.package.options).get("keep_unknown"))
        if not isinstance(node, Struct) or node.keeps_extra or keep_unknown or any(f.flatten for f in node.fields):
            return None
        return tuple(sorted({f.wire for f in node.fields} | ({node.tag.wire} if node.tag else set())))

    def aliases(self) -> list[AliasView]:
        """Type aliases (plain and union) in an order where each follows what it names."""
        e = self.emit
        views: dict[str, AliasView] = {}
        deps: dict[str, set[str]] = {}
        for node in self.package.nodes:
            if isinstance(node, Alias):
                ann = e.ann(node.target)
                description = node.description
                refs = self.refs(node.target)
            elif isinstance(node, Union_):
                ann = self.union_ann(node)
                description = "\n\n".join([node.description] + [
                    f"`{v.type.name}`{f' ({v.title})' if v.title else ''}: {v.description}"
                    for v in node.variants if v.description
                ]).strip()
                refs = set().union(*(self.refs(v.type) for v in node.variants))
            else:
                continue
            views[node.name] = AliasView(node.name, ann, description, node.unstable, False)
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
        # An alias of `null` is `None` at run time, and `None | None` raises TypeError: a union
        # naming one is quoted (mypy reads the string; nothing evaluates it on import).
        null_aliases = {n for n, v in views.items() if v.ann == "None"}
        for name in order:
            if views[name].ann in null_aliases:
                null_aliases.add(name)
        unions = {n.name for n in self.package.nodes if isinstance(n, Union_)}
        # An alias naming itself or one defined after it (a cycle: JSONValue -> JSONObject ->
        # JSONValue, or JSONArray beside that cycle) needs a quoted right-hand side.
        position = {name: index for index, name in enumerate(order)}
        for name in order:
            later = {d for d in deps[name] & alias_names if position[d] >= position[name]}
            if later or (name in unions and deps[name] & null_aliases):
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
        result_empty = not m.notification and m.result is not None and self.accepts_empty(types[m.result])
        keywords, names = self.keywords(types[m.params]) if params_class else ((), frozenset[str]())
        return MethodView(m, params_type, params_decoder, result_type, result_decoder, m.description, params_class,
                          result_empty, keywords, names)

    def keywords(self, t: TypeRef) -> tuple[tuple[str, ...], frozenset[str]]:
        """The params class's constructor keywords as `connections.py` prints them: its fields
        (attribute names, annotations with `models.` before the package's types; `= ...` for those
        with a default), and the other names those annotations use. () for a class with a flattened
        union (its keywords are its variants')."""
        node = self.emit.node(self.emit.resolve(t))
        assert isinstance(node, Struct)
        if any(f.flatten for f in node.fields) or dict(self.package.options).get("keep_unknown"):
            return (), frozenset()
        names: set[str] = set()

        def use(name: str) -> str:
            names.add(name)
            return name

        out = []
        plans = self.plans.get(node.name)
        if plans is None:  # the models' views are made first; without them, no keywords
            return (), frozenset()
        for f, plan in zip(node.fields, plans, strict=True):
            ann = annotation(self.package._index, f.type, use, qualify=lambda n: f"models.{n}")
            ann = with_wire_values(self.package._index, f.type, ann, use)
            parts = [] if ann == "None" else [ann]
            if plan.may_be_unset:
                parts.append(use("Unset"))
            if f.nullable or ann == "None":
                parts.append("None")
            out.append(f"{f.py}: {' | '.join(parts)}" + (" = ..." if plan.class_default else ""))
        return tuple(out), frozenset(names)

    def accepts_empty(self, t: TypeRef) -> bool:
        """Whether `t` is an object type that `{}` satisfies: no required field and no tag, here or
        in what it flattens."""
        t = self.emit.resolve(t)
        node = self.emit.node(t) if t.kind == "named" else None
        if not isinstance(node, Struct) or node.tag is not None:
            return False
        return all(not f.required if not f.flatten else self.accepts_empty(f.type) for f in node.fields)

    def decoder_callable(self, t: TypeRef) -> str:
        return self.emit.decoder_callable(t)

    def public(self) -> list[str]:
        """models.py's `__all__` (what the package re-exports): its public classes, a class named
        like one of the package's own exports under the name the package exports it as."""
        exported = dict(self.package.export_aliases)
        return dunder_all_order(exported.get(n.name, n.name) for n in self.package.nodes if not n.name.startswith("_"))

    def hook_imports(self) -> list[str]:
        """Import lines for the user functions the `hooks` config key routes raw values through."""
        names = self.emit.private
        targets = sorted({f.hook for n in self.package.nodes if isinstance(n, Struct) for f in n.fields if f.hook})
        return [f"from {t.split(':')[0]} import {t.split(':')[1]} as {names.hook(t)}" for t in targets]

    def contexts(self, command: str = "") -> dict[str, TemplateContext]:
        """What each template receives (templates/README.md lists it), made here only: template
        name -> its context. Views several templates print (the method views) are built once."""
        p = self.package
        header: dict[str, Any] = {
            "package": p,
            "acpgen_version": __version__,
            "sources": ", ".join(f"{s.file} (sha256 {s.sha256})" for s in p.sources),
            "command": command,
        }
        # The order the emitter sees the IR in: the model views, the registry's decoders, the
        # helpers they made, then the method views (the output depends on it).
        ordered = sorted((n for n in p.nodes if isinstance(n, Struct)), key=lambda n: bool(n.base))
        structs = [self.struct_view(n) for n in ordered]
        enums = [n for n in p.nodes if isinstance(n, Enum)]
        unions = [self.union_view(n) for n in p.nodes if isinstance(n, Union_)]
        aliases = self.aliases()
        registry = [(def_name, self.emit.node(t).name, self.decoder_callable(t)) for def_name, t in p.defs]
        helpers = sorted(self.emit.helpers.values(), key=lambda h: h.name)
        views = [self.method_view(m) for m in p.methods]
        agent_methods = [v for v in views if v.method.side in AGENT_SIDES]
        client_methods = [v for v in views if v.method.side in CLIENT_SIDES]
        handled = [v for v in views if v.method.side in AGENT_SIDES + CLIENT_SIDES]
        protocol = protocol_view(p, self.emit)
        return {
            "header.j2": HeaderContext(**header),
            "__init__.py.j2": InitContext(
                **header,
                init_exports=InitExports.of(protocol.routable),
                init_imports=Imports(frozenset(n.name for n in p.nodes)),
                source_pairs=tuple((s.file, s.sha256) for s in p.sources),
            ),
            "_protocol.py.j2": ProtocolContext(
                **header,
                protocol=protocol,
                cancelled_results=[(a.method, a.field, a.value) for a in p.protocol.cancelled_results],
                withdrawn_results=[(a.method, a.field, a.value) for a in p.protocol.withdrawn_results],
            ),
            "_registry.py.j2": RegistryContext(
                **header,
                imports="",
                registry=[(d, py, call if call.startswith("decode_") else f"models.{call}") for d, py, call in registry],
                unstable_types=sorted(d for d, t in p.defs if self.emit.node(t).unstable),
            ),
            "_schemas.py.j2": SchemasContext(
                **header, checked_schema=json.loads(p.checked_schema) if p.checked_schema else {}
            ),
            "connections.py.j2": ConnectionsContext(
                **header,
                agent_methods=agent_methods,
                client_methods=client_methods,
                result_codec_decoders=sorted(
                    {v.result_decoder for v in handled if v.result_decoder.startswith("decode_")}
                    | ({"null_as_empty"} if any(v.result_empty for v in handled) else set())
                ),
                keyword_names=sorted({n for v in handled for n in v.keyword_names}),
            ),
            "interfaces.py.j2": InterfacesContext(**header, agent_methods=agent_methods, client_methods=client_methods),
            "helpers.py.j2": HelpersContext(
                **header, imports="", agent_methods=agent_methods, client_methods=client_methods,
                **helper_facts(p, self.plans)
            ),
            "methods.py.j2": MethodsContext(
                **header,
                methods=list(p.methods),
                method_views=views,
                agent_sides=AGENT_SIDES,
                client_sides=CLIENT_SIDES,
                codec_decoders=sorted(
                    {d for v in views for d in (v.params_decoder, v.result_decoder) if d.startswith("decode_")}
                    | ({"null_as_empty"} if any(v.result_empty for v in views) else set())
                ),
                def_class={def_name: ref.name for def_name, ref in p.defs},
            ),
            "models.py.j2": ModelsContext(
                **header,
                structs=structs,
                enums=enums,
                enum_checks={e.name: self.emit.scalar(e.other) for e in enums
                             if e.other is not None and e.other.kind in ("int", "str") and e.other.constraints},
                unions=unions,
                aliases=aliases,
                helpers=helpers,
                public=self.public(),
                export_aliases=p.export_aliases,
                hook_imports=self.hook_imports(),
                keep_unknown=bool(dict(p.options).get("keep_unknown")),
                imports=self.emit.imports,
                use=self.emit.imports.use,
            ),
        }


@dataclass(eq=False, repr=False)
class TemplateContext:
    """What every template receives: the IR, and the provenance `header.j2` prints. Each module
    template's context adds what that template prints (a user template overriding it receives the
    same); `variables()` is the mapping Jinja renders with."""

    package: Package
    acpgen_version: str
    sources: str  # `schema.json (sha256 ...), ...`, for headers and docstrings
    command: str  # the command that regenerates the package

    def variables(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


HeaderContext = TemplateContext


@dataclass(eq=False, repr=False)
class InitContext(TemplateContext):
    """The variables of `__init__.py.j2`."""

    init_exports: InitExports
    init_imports: Imports
    source_pairs: tuple[tuple[str, str], ...]


@dataclass(eq=False, repr=False)
class ProtocolContext(TemplateContext):
    """The variables of `_protocol.py.j2`."""

    protocol: ProtocolView
    cancelled_results: list[tuple[str, str, str | dict[str, str]]]  # (method, field, value)
    withdrawn_results: list[tuple[str, str, str | dict[str, str]]]


@dataclass(eq=False, repr=False)
class RegistryContext(TemplateContext):
    """The variables of `_registry.py.j2`."""

    imports: str  # the import block, found in the rendered body (see `render_with_imports`)
    registry: list[tuple[str, str, str]]  # ($defs name, class name, decoder)
    unstable_types: list[str]


@dataclass(eq=False, repr=False)
class SchemasContext(TemplateContext):
    """The variables of `_schemas.py.j2`: the checked schema it embeds."""

    checked_schema: dict[str, Any]


@dataclass(eq=False, repr=False)
class InterfacesContext(TemplateContext):
    """The variables of `interfaces.py.j2`."""

    agent_methods: list[MethodView]
    client_methods: list[MethodView]


@dataclass(eq=False, repr=False)
class ConnectionsContext(InterfacesContext):
    """The variables of `connections.py.j2`."""

    result_codec_decoders: list[str]
    keyword_names: list[str]  # what the proxies' keyword annotations name besides `models.X` (`Unset`)


@dataclass(eq=False, repr=False)
class MethodsContext(TemplateContext):
    """The variables of `methods.py.j2`."""

    methods: list[Method]
    method_views: list[MethodView]
    agent_sides: tuple[str, ...]
    client_sides: tuple[str, ...]
    codec_decoders: list[str]
    def_class: dict[str, str]


@dataclass(eq=False, repr=False)
class ModelsContext(TemplateContext):
    """The variables of `models.py.j2`."""

    structs: list[StructView]
    enums: list[Enum]
    enum_checks: dict[str, Any]
    unions: list[UnionView]
    aliases: list[AliasView]
    helpers: list[Any]
    public: list[str]
    export_aliases: tuple[tuple[str, str], ...]
    hook_imports: list[str]
    keep_unknown: bool
    imports: Imports
    use: Callable[[str], str]


@dataclass(eq=False, repr=False)
class HelpersContext(InterfacesContext):
    """The variables of `helpers.py.j2`."""

    imports: str  # the import block, found in the rendered body (see `render_with_imports`)
    exports: list[str]  # helpers.py's `__all__`
    builders: list[Builder]
    text_builder: str  # the builder of the text block ("" when none)
    text_union: str  # the union a `str` stands for a text block of
    text_class: str
    text_field: str
    updates: Updates | None
    permission: Permission | None
    tracker: Tracker | None
