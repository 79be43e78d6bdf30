"""What `helpers.py.j2` prints: builders for the session update and content block variants, and the
facts its permission helper, tool call tracker, session reducer and fake peers read, all found in the
IR by structure (tags, field types, the methods' params), never by class names.

Builder names come from wire tags in snake case (see `builder_name`), in a fixed order: the variants
of the session update union first, then the unions its variants hold (breadth first, in field
order). A name already taken (by an earlier builder, a Python keyword or builtin, or one of the
module's own names) becomes `<union in snake case>_<name>`; when that is taken too, the variant gets
no builder (the class still builds it). A variant that flattens a tagged union gets, besides its own
builder (which takes that union's value), one builder per variant of it, named by the joined tags
(`state_update_idle_cancelled`).
"""

from __future__ import annotations

import builtins
import keyword
from dataclasses import dataclass
from typing import TypedDict

from acpgen.ir.model import Enum, Field, Method, Package, Struct, TypeRef, Union_
from acpgen.ir.naming import snake
from acpgen.render.codegen import FieldPlan, annotation, dunder_all_order, with_wire_values

# The module's own names, which a builder never takes.
MODULE_NAMES = frozenset({
    "models", "PermissionDecision", "PermissionPolicy", "choose_permission", "ask_permission",
    "ToolCallTracker", "SessionSnapshot", "SessionReducer", "Message", "FakeClient", "FakeAgent", "Answer",
    "UNSET", "Unset", "JsonValue", "Literal", "Callable", "Mapping", "Any", "cast", "dataclass", "field",
    "uuid", "new_id", "TYPE_CHECKING", "AgentSideConnection", "UnstableAgent", "UnstableClient",
    "RequestError",
})
# What a builder's body reads besides its parameters, so no parameter may be named so.
BODY_NAMES = frozenset({"models", "_block"})


@dataclass(frozen=True)
class BuilderParam:
    name: str  # the field's attribute name, the builder's keyword
    ann: str  # its annotation (`models.` before the package's types)
    required: bool  # positional-or-keyword without default; else keyword-only `= UNSET`
    text: bool  # a content block field: a `str` is taken as a text block


@dataclass(frozen=True)
class Builder:
    name: str
    doc: str  # the wire object it builds, for the docstring
    chain: tuple[tuple[str, str], ...]  # (class, flattened field) from the outside in
    cls: str  # the innermost class, called with the params
    params: tuple[BuilderParam, ...]


@dataclass(frozen=True)
class ReducerRule:
    """How the reducer folds one session update variant."""

    cls: str  # the variant classes it applies to, `, `-joined (one branch for equal bodies)
    tag: str
    kind: str  # `chunk` (content appended to a message), `entity` (merged by id), `state`, `latest`
    field: str  # chunk: the content field; entity: the id field; state: the flattened state field
    message_id: str  # chunk: the message id field, "" when none


@dataclass(frozen=True)
class Updates:
    """The notification that carries session updates, as the agent sends it and the client gets it."""

    handler: str  # proxy / interface method (`session_update`)
    params: str  # its params class
    session: str  # the params' session field (attribute)
    update: str  # the params' update field (attribute)
    union: str  # the session update union
    tag: str  # its tag (wire)
    rules: tuple[ReducerRule, ...]
    state_tag: str  # the state union's tag (wire), "" without state updates
    settled: str  # the state that carries a reason (`idle`)
    reason_tag: str  # the reason's tag (wire, `stopReason`)
    background: str  # the states' complete-snapshot list (wire), "" when none


@dataclass(frozen=True)
class Permission:
    handler: str  # proxy / interface method (`session_request_permission`)
    request: str
    response: str
    session: str  # the request's session field
    subject: str  # the request's field naming what is asked about (`tool_call`)
    subject_cls: str  # its class
    subject_id: str  # that class's id field
    options: str  # the request's options field
    option_cls: str  # an option's class
    option_id: str  # an option's id field
    option_kind: str  # an option's kind field
    allow: tuple[str, ...]  # the kind enum's wire values starting with `allow`, in schema order
    refuse: tuple[str, ...]  # those starting with `reject`
    outcome: str  # the response's outcome field
    selected: str  # the outcome variant naming an option
    selected_id: str  # its option id field
    cancelled: str  # the outcome variant saying the request was cancelled


@dataclass(frozen=True)
class Tracker:
    start: str  # the variant that starts a tool call (`tool_call`, else the update variant)
    update: str  # the variant that updates it
    id_field: str
    start_fields: tuple[BuilderParam, ...]  # the start variant's optional fields beside id
    update_fields: tuple[BuilderParam, ...]
    status: str  # the status field
    status_ann: str  # its annotation in the update variant
    statuses: tuple[str, ...]  # its wire values


class HelperFacts:
    def __init__(self, package: Package, plans: dict[str, tuple[FieldPlan, ...]]) -> None:
        self.package = package
        self.plans = plans
        self.nodes = package._index
        self.taken: set[str] = set(MODULE_NAMES)
        self.names: set[str] = set()  # names a builder param may shadow in a builder body

    # -- lookups ---------------------------------------------------------------------------------
    def node(self, t: TypeRef) -> object:
        while t.kind == "nullable" and t.item is not None:
            t = t.item
        return self.nodes.get(t.name) if t.kind == "named" else None

    def union(self, t: TypeRef) -> Union_ | None:
        n = self.node(t)
        return n if isinstance(n, Union_) and n.tagged and n.tag else None

    def struct_of(self, def_name: str | None) -> Struct | None:
        ref = dict(self.package.defs).get(def_name or "")
        n = self.node(ref) if ref is not None else None
        return n if isinstance(n, Struct) else None

    def tagged(self, u: Union_) -> list[tuple[str, Struct]]:
        out = []
        for v in u.variants:
            n = self.node(v.type)
            if v.tag_value is not None and isinstance(n, Struct) and n.other_of is None:
                out.append((v.tag_value, n))
        return out

    def variant(self, u: Union_, tag: str) -> Struct | None:
        return next((s for t, s in self.tagged(u) if t == tag), None)

    def enum_values(self, f: Field) -> tuple[str, ...]:
        n = self.node(f.type)
        return tuple(str(m.value) for m in n.members) if isinstance(n, Enum) else ()

    def field(self, s: Struct | None, wire: str) -> Field | None:
        return next((f for f in s.fields if f.wire == wire), None) if s else None

    # -- the session update notification ----------------------------------------------------------
    def update_method(self) -> tuple[Method, Struct, Field, Field] | None:
        """The client-handled notification whose params name a session and hold a tagged union."""
        session = self.package.protocol.session_field
        for m in sorted(self.package.methods, key=lambda m: m.wire):
            s = self.struct_of(m.params)
            if not (m.notification and m.side == "client" and s and session):
                continue
            sf = self.field(s, session)
            uf = next((f for f in s.fields if f.required and not f.flatten and self.union(f.type)), None)
            if sf is not None and uf is not None:
                return m, s, sf, uf
        return None

    # -- builders ----------------------------------------------------------------------------------
    def text_variant(self, u: Union_) -> Struct | None:
        """A union's text block: the variant tagged `text` whose one required field is a string."""
        s = self.variant(u, "text")
        req = [f for f in s.fields if f.required] if s else []
        return s if len(req) == 1 and req[0].type.kind == "str" else None

    def params(self, s: Struct, text_unions: set[str]) -> tuple[BuilderParam, ...] | None:
        plans = self.plans.get(s.name)
        if plans is None:
            return None
        out = []
        for f, plan in zip(s.fields, plans, strict=True):
            if f.flatten:
                if not f.required:
                    continue
            elif not f.required and not plan.may_be_unset:
                continue  # a schema default: left to the class
            if f.py in BODY_NAMES:
                return None
            ann = annotation(self.nodes, f.type, lambda n: n, qualify=lambda n: f"models.{n}")
            ann = with_wire_values(self.nodes, f.type, ann, lambda n: n)
            u = self.union(f.type)
            text = f.required and f.type.kind == "named" and u is not None and u.name in text_unions
            parts = [ann] + (["str"] if text else [])
            if not f.required:
                parts.append("Unset")
            if f.nullable:
                parts.append("None")
            out.append(BuilderParam(f.py, " | ".join(parts), f.required, text))
        return tuple(sorted(out, key=lambda p: not p.required))

    def claim(self, name: str, union: Union_) -> str:
        for candidate in (name, f"{snake(union.name)}_{name}"):
            if (candidate.isidentifier() and not keyword.iskeyword(candidate) and candidate not in self.taken
                    and not hasattr(builtins, candidate)):
                self.taken.add(candidate)
                return candidate
        return ""

    def builders(self, root: Union_ | None) -> tuple[list[Builder], str, set[str]]:
        """Every builder, the text builder's name ("" when none) and the unions taking a str."""
        if root is None:
            return [], "", set()
        order: list[Union_] = []
        queue = [root]
        while queue:
            u = queue.pop(0)
            if u in order:
                continue
            order.append(u)
            for _, s in self.tagged(u):
                for f in s.fields:
                    inner = self.union(f.type.item if f.type.kind == "list" and f.type.item else f.type)
                    if inner is not None and not f.flatten and inner not in order:
                        queue.append(inner)
        text_unions = {u.name for u in order if self.text_variant(u)}
        text_unions = {next(u.name for u in order if u.name in text_unions)} if text_unions else set()
        out: list[Builder] = []
        text_name = ""
        for u in order:
            tags = {t for t, _ in self.tagged(u)}
            for tag, s in self.tagged(u):
                base = snake(tag).rstrip("_")
                short = base[: -len("_chunk")] if base.endswith("_chunk") else base
                if short != base and short in tags:
                    short = base
                made = self.make(u, short, tag, s, (), text_unions, out)
                if made and u.name in text_unions and s is self.text_variant(u) and not text_name:
                    text_name = made
        return out, text_name, text_unions

    def make(self, u: Union_, name: str, tag: str, s: Struct, chain: tuple[tuple[str, str], ...],
             text_unions: set[str], out: list[Builder]) -> str:
        params = self.params(s, text_unions)
        if params is None:
            return ""
        claimed = self.claim(name, u)
        if not claimed:
            return ""
        out.append(Builder(claimed, f"`{u.tag}: {tag}`", chain, s.name, params))
        flat = [f for f in s.fields if f.flatten and f.required]
        rest_required = [f for f in s.fields if f.required and not f.flatten]
        if len(flat) == 1 and not rest_required:
            inner = self.union(flat[0].type)
            if inner is not None:
                for t2, s2 in self.tagged(inner):
                    self.make(u, f"{name}_{snake(t2).rstrip('_')}", f"{tag}` / `{inner.tag}: {t2}", s2,
                              (*chain, (s.name, flat[0].py)), text_unions, out)
        return claimed

    # -- the reducer's rules -------------------------------------------------------------------------
    def rules(self, u: Union_, content: set[str]) -> tuple[ReducerRule, ...]:
        out = []
        # An id shared by the required fields of two or more variants names an entity they update.
        ids: dict[str, int] = {}
        for _, s in self.tagged(u):
            for f in s.fields:
                if f.required and f.wire.endswith("Id"):
                    ids[f.wire] = ids.get(f.wire, 0) + 1
        for tag, s in self.tagged(u):
            req = [f for f in s.fields if f.required and not f.flatten]
            block = next((f for f in req if f.type.kind == "named" and f.type.name in content), None)
            ident = next((f for f in req if ids.get(f.wire, 0) > 1
                          and not isinstance(self.node(f.type), (Struct, Union_))), None)
            flat = [f for f in s.fields if f.flatten and self.union(f.type)]
            if block is not None:
                mid = self.field(s, "messageId")
                out.append(ReducerRule(s.name, tag, "chunk", block.py, mid.py if mid else ""))
            elif flat:
                out.append(ReducerRule(s.name, tag, "state", flat[0].py, ""))
            elif ident is not None:
                out.append(ReducerRule(s.name, tag, "entity", ident.wire, ""))
            else:
                out.append(ReducerRule(s.name, tag, "latest", "", ""))
        merged: list[ReducerRule] = []
        for r in out:  # variants folded alike share one branch
            same = next((i for i, m in enumerate(merged) if r.kind in ("entity", "state")
                         and (m.kind, m.field) == (r.kind, r.field)), None)
            if same is None:
                merged.append(r)
            else:
                m = merged[same]
                merged[same] = ReducerRule(f"{m.cls}, models.{r.cls}", m.tag, m.kind, m.field, m.message_id)
        return tuple(merged)

    def state_facts(self, rules: tuple[ReducerRule, ...]) -> tuple[str, str, str, str]:
        """For a session update variant that flattens a state union: (the state tag's wire name, the
        tag of the state that flattens a union of reasons (`idle`), that union's tag (`stopReason`),
        the wire name of a list the states carry as a complete snapshot (`background`)); "" each
        when absent."""
        rule = next((r for r in rules if r.kind == "state"), None)
        s = self.nodes.get(rule.cls.split(",")[0]) if rule else None
        f = next((f for f in s.fields if f.flatten), None) if isinstance(s, Struct) else None
        u = self.union(f.type) if f else None
        if u is None:
            return "", "", "", ""
        settled = reason = background = ""
        structs = []
        for tag, v in self.tagged(u):
            structs.append(v)
            inner = next((self.union(g.type) for g in v.fields if g.flatten and self.union(g.type)), None)
            if inner is not None and not settled:
                settled, reason = tag, inner.tag
                structs += [x for _, x in self.tagged(inner)]
        for v in structs:
            g = self.field(v, "background")
            if g is not None and g.type.kind == "list" and not background:
                background = g.wire
        return u.tag, settled, reason, background

    def updates(self, found: tuple[Method, Struct, Field, Field] | None, content: set[str]) -> Updates | None:
        if found is None:
            return None
        m, s, sf, uf = found
        u = self.union(uf.type)
        assert u is not None
        rules = self.rules(u, content)
        return Updates(m.handler, s.name, sf.py, uf.py, u.name, u.tag, rules, *self.state_facts(rules))

    # -- permission ------------------------------------------------------------------------------------
    def permission(self) -> Permission | None:
        """A client-handled request whose params hold a list of options with an id and an enum kind,
        and whose result's outcome union has a `selected` variant (with an option id) and a
        `cancelled` one."""
        session = self.package.protocol.session_field
        for m in sorted(self.package.methods, key=lambda m: m.wire):
            req, res = self.struct_of(m.params), self.struct_of(m.result)
            if m.notification or m.side != "client" or req is None or res is None:
                continue
            sf = self.field(req, session)
            opts = next((f for f in req.fields if f.type.kind == "list" and f.type.item is not None
                         and isinstance(self.node(f.type.item), Struct)), None)
            opt = self.node(opts.type.item) if opts and opts.type.item else None
            if sf is None or opts is None or not isinstance(opt, Struct):
                continue
            kind = self.field(opt, "kind")
            oid = next((f for f in opt.fields if f.wire == "optionId"), None)
            outcome = next((f for f in res.fields if f.required and self.union(f.type)), None)
            ou = self.union(outcome.type) if outcome else None
            selected = self.variant(ou, "selected") if ou else None
            cancelled = self.variant(ou, "cancelled") if ou else None
            sel_id = self.field(selected, "optionId")
            subject = next((f for f in req.fields if f.required and f is not sf and f is not opts
                            and isinstance(self.node(f.type), Struct)), None)
            subject_cls = self.node(subject.type) if subject else None
            subject_id = next((f for f in subject_cls.fields if f.required and f.wire.endswith("Id")), None) \
                if isinstance(subject_cls, Struct) else None
            kinds = self.enum_values(kind) if kind else ()
            if (kind is None or not kinds or oid is None or outcome is None or selected is None
                    or cancelled is None or sel_id is None or subject is None or subject_id is None
                    or not isinstance(subject_cls, Struct)
                    or any(f.required for f in cancelled.fields)):
                continue
            return Permission(m.handler, req.name, res.name, sf.py, subject.py, subject_cls.name, subject_id.py,
                              opts.py, opt.name, oid.py, kind.py, tuple(k for k in kinds if k.startswith("allow")),
                              tuple(k for k in kinds if k.startswith("reject")), outcome.py, selected.name, sel_id.py,
                              cancelled.name)
        return None

    # -- tool call tracker ------------------------------------------------------------------------------
    def tracker(self, u: Union_ | None) -> Tracker | None:
        """The `tool_call_update` variant (and `tool_call`, when the schema has it) with an id and a
        status enum naming `in_progress`, `completed` and `failed`."""
        if u is None:
            return None
        update = self.variant(u, "tool_call_update")
        start = self.variant(u, "tool_call") or update
        if update is None or start is None:
            return None
        uid = self.field(update, "toolCallId")
        sid = self.field(start, "toolCallId")
        status = self.field(update, "status")
        statuses = self.enum_values(status) if status else ()
        if uid is None or sid is None or uid.py != sid.py or status is None \
                or not {"pending", "in_progress", "completed", "failed"} <= set(statuses):
            return None
        start_params = self.params(start, set())
        update_params = self.params(update, set())
        if start_params is None or update_params is None:
            return None
        if any(p.required and p.name != uid.py for p in update_params):
            return None
        return Tracker(start.name, update.name, uid.py,
                       tuple(p for p in start_params if p.name not in (uid.py, status.py)),
                       tuple(p for p in update_params if p.name != uid.py and p.name != status.py),
                       status.py, next(p.ann for p in update_params if p.name == status.py), statuses)


class HelperFields(TypedDict):
    exports: list[str]
    builders: list[Builder]
    text_builder: str
    text_union: str
    text_class: str
    text_field: str
    updates: Updates | None
    permission: Permission | None
    tracker: Tracker | None


def helper_facts(package: Package, plans: dict[str, tuple[FieldPlan, ...]]) -> HelperFields:
    facts = HelperFacts(package, plans)
    found = facts.update_method()
    root = facts.union(found[3].type) if found else None
    builders, text, text_unions = facts.builders(root)
    text_cls = next((b for b in builders if b.name == text), None)
    updates, permission, tracker = facts.updates(found, text_unions), facts.permission(), facts.tracker(root)
    names = [b.name for b in builders] + ["FakeAgent", "FakeClient"]
    names += ["Message", "SessionReducer", "SessionSnapshot"] if updates else []
    names += ["PermissionDecision", "PermissionPolicy", "ask_permission"] if permission else []
    names += ["ToolCallTracker"] if tracker else []
    return {
        "exports": dunder_all_order(names),
        "builders": list(builders),
        "text_builder": text,
        "text_union": next(iter(text_unions), ""),
        "text_class": text_cls.cls if text_cls else "",
        "text_field": text_cls.params[0].name if text_cls else "",
        "updates": updates,
        "permission": permission,
        "tracker": tracker,
    }


__all__ = ["Builder", "BuilderParam", "Permission", "ReducerRule", "Tracker", "Updates", "helper_facts"]
