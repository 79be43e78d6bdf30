"""What `helpers.py.j2` prints: builders for the session update and content block variants, and the
facts its permission helper, tool call tracker, session reducer and fake peers read, all found in the
IR by structure (tags, field types, the methods' params), never by class names.

Builder names come from wire tags in snake case (see `builders`), claimed in rank order: the
variants of the session update union first (with the builders of the unions they flatten), then
its entity names (a variant tagged `<x>_update` that requires `<x>Id`, when no variant is tagged
`<x>`, also gets the builder `<x>`: v2's `tool_call_update` "creates or updates" a tool call, so
`tool_call` builds it), then the unions its variants hold (breadth first, in field order). A name
already taken (by an earlier builder, a Python keyword or builtin, or one of the module's own
names) becomes `<union in snake case>_<name>`; when that is taken too, the variant gets no builder
(the class still builds it). A variant that flattens a tagged union gets, besides its own builder
(which takes that union's value), one builder per variant of it, named by the joined tags
(`state_update_idle_cancelled`)."""

from __future__ import annotations

import builtins
import keyword
from dataclasses import dataclass, replace
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
# `ask_permission`'s own parameters and locals, which no request field may be named.
ASK_NAMES = frozenset({"conn", "session_id", "options", "response", "outcome", "option", "models"})


@dataclass(eq=False, repr=False)
class BuilderParam:
    """One parameter of a generated builder."""

    name: str  # the field's attribute name, the builder's keyword
    ann: str  # its annotation (`models.` before the package's types)
    required: bool  # positional-or-keyword without default; else keyword-only `= UNSET`
    text: bool  # a content block field: a `str` is taken as a text block


@dataclass(eq=False, repr=False)
class Builder:
    """A helpers.py function that builds one wire object from its fields."""

    name: str
    doc: str  # the wire object it builds, for the docstring
    chain: tuple[tuple[str, str], ...]  # (class, flattened field) from the outside in
    cls: str  # the innermost class, called with the params
    params: tuple[BuilderParam, ...]


@dataclass(eq=False, repr=False)
class ReducerRule:
    """How the reducer folds one session update variant."""

    cls: str  # the variant classes it applies to, `, `-joined (one branch for equal bodies)
    tag: str
    # `chunk` (a content block appended to a message), `message` (a message upsert: its content
    # replaces the message's), `entity` (merged by id), `append` (a chunk appended to an entity's
    # field), `state`, `latest`
    kind: str
    field: str  # chunk / message: the content field; entity / append: the id (wire); state: the flattened field
    message_id: str  # chunk / message: the message id field, "" when none
    label: str = ""  # chunk / message: the `Message.kind` (the chunk's tag)
    clears: bool = False  # entity: `null` clears a key (else it changes nothing)
    target: str = ""  # append: the entity's key (wire) appended to
    nested: str = ""  # append: the key inside `target` holding the value, "" when `target` is a list
    payload: str = ""  # append: the chunk's field (wire) appended
    mode: str = ""  # append: `list` (one item more), `base64` (bytes joined) or `str`


@dataclass(eq=False, repr=False)
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


@dataclass(eq=False, repr=False)
class Permission:
    """The permission request's names that `PermissionPolicy` and `ask_permission` use."""

    handler: str  # proxy / interface method (`session_request_permission`)
    request: str
    response: str
    session: str  # the request's session field
    fields: tuple[BuilderParam, ...]  # the request's other fields, required first (`ask_permission`'s)
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


@dataclass(eq=False, repr=False)
class Tracker:
    """The tool-call update names that `ToolCallTracker` uses."""

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

    def claim(self, name: str, union: Union_, *, fallback: bool = True) -> str:
        """`name` if free, else (with `fallback`) `<union in snake case>_<name>` if free, else ""."""
        for candidate in (name, f"{snake(union.name)}_{name}")[: 2 if fallback else 1]:
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
        out, text_name = self.named(order, text_unions)
        if text_unions and not text_name:  # the text block got no builder: a `str` stands for none
            self.taken = set(MODULE_NAMES)
            text_unions = set()
            out, text_name = self.named(order, text_unions)
        return out, text_name, text_unions

    def named(self, order: list[Union_], text_unions: set[str]) -> tuple[list[Builder], str]:
        """The builders of the unions in rank order, and the text block's builder ("" when none)."""
        out: list[Builder] = []
        text_name = ""
        for rank, u in enumerate(order):
            tags = {t for t, _ in self.tagged(u)}
            for tag, s in self.tagged(u):
                base = snake(tag).rstrip("_")
                short = base[: -len("_chunk")] if base.endswith("_chunk") else base
                if short != base and short in tags:
                    short = base
                made = self.make(u, short, tag, s, (), text_unions, out)
                if made and u.name in text_unions and s is self.text_variant(u) and not text_name:
                    text_name = made
            if rank == 0:  # the session update union's entity names rank before any other union
                for name, tag, s in self.entity_names(u):
                    self.make(u, name, tag, s, (), text_unions, out, fallback=False)
        return out, text_name

    def entity_names(self, u: Union_) -> list[tuple[str, str, Struct]]:
        """(`<x>`, tag, variant) for each variant tagged `<x>_update` that requires the entity id
        `<x>Id` (an id two or more variants require, see `entity_ids`), when no variant of `u` is
        tagged `<x>`: the variant creates the entity as well as updating it, as v2's
        `tool_call_update` ("A tool call has been created or updated")."""
        tags = {snake(t).rstrip("_") for t, _ in self.tagged(u)}
        ids = self.entity_ids(u)
        out = []
        for tag, s in self.tagged(u):
            base = snake(tag).rstrip("_")
            stem = base.removesuffix("_update")
            if stem == base or not stem or stem in tags:
                continue
            if any(f.required and ids.get(f.wire, 0) > 1 and snake(f.wire) == f"{stem}_id" for f in s.fields):
                out.append((stem, tag, s))
        return out

    def make(self, u: Union_, name: str, tag: str, s: Struct, chain: tuple[tuple[str, str], ...],
             text_unions: set[str], out: list[Builder], *, fallback: bool = True) -> str:
        params = self.params(s, text_unions)
        if params is None:
            return ""
        claimed = self.claim(name, u, fallback=fallback)
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
    def entity_ids(self, u: Union_) -> dict[str, int]:
        """An id (a required `...Id` field) shared by two or more variants names an entity they update."""
        ids: dict[str, int] = {}
        for _, s in self.tagged(u):
            for f in s.fields:
                if f.required and f.wire.endswith("Id"):
                    ids[f.wire] = ids.get(f.wire, 0) + 1
        return ids

    def append_target(self, u: Union_, chunk: Struct, ident: Field, payload: Field) -> tuple[str, str, str] | None:
        """Where a chunk of an entity goes: (the entity's key, the key inside it or "", the mode).

        The rule is the v2 schema's: "Tool-call content chunks append one `ToolCallContent` item to
        the current content for the matching `toolCallId`" (/$defs/ToolCallContentChunk/description),
        "A chunk of bytes appended to an agent-owned terminal's output" (/$defs/TerminalOutputChunk)
        with "Independently base64-encoded terminal output bytes" (/$defs/TerminalOutputChunk/
        properties/data/description), "A content block appended to a compaction's summary"
        (/$defs/CompactionSummaryChunk/description). By structure: another variant with the same id
        holds a list of the payload's type (the one of the payload's name first, else the only
        one: `content`, `summary`), else one object holding a field of the payload's name and type
        (`output.data`), joined as bytes when both are base64."""
        lists: list[Field] = []
        nested: list[tuple[Field, Field]] = []
        for _, s in self.tagged(u):
            if s is chunk or self.field(s, ident.wire) is None:
                continue
            for f in s.fields:
                if f.type.kind == "list" and f.type.item == payload.type:
                    lists.append(f)
                inner = self.node(f.type)
                g = self.field(inner, payload.wire) if isinstance(inner, Struct) else None
                if g is not None and g.required and g.type == payload.type and g.type.kind == "str":
                    nested.append((f, g))
        same = [f for f in lists if f.wire == payload.wire]
        if same or len({f.wire for f in lists}) == 1:
            return (same or lists)[0].wire, "", "list"
        if len({(f.wire, g.wire) for f, g in nested}) == 1:
            f, g = nested[0]
            return f.wire, g.wire, "base64" if payload.encoding == g.encoding == "base64" else "str"
        return None

    def rule(self, u: Union_, tag: str, s: Struct, content: set[str], ids: dict[str, int]) -> ReducerRule:
        req = [f for f in s.fields if f.required and not f.flatten]
        block = next((f for f in req if f.type.kind == "named" and f.type.name in content), None)
        ident = next((f for f in req if ids.get(f.wire, 0) > 1
                      and not isinstance(self.node(f.type), (Struct, Union_))), None)
        flat = [f for f in s.fields if f.flatten and self.union(f.type)]
        mid = self.field(s, "messageId")
        if ident is not None and ident is not mid and len(req) == 2:
            payload = next(f for f in req if f is not ident)
            target = self.append_target(u, s, ident, payload)
            if target is not None:
                return ReducerRule(s.name, tag, "append", ident.wire, "", target=target[0], nested=target[1],
                                   payload=payload.wire, mode=target[2])
        if block is not None and (ident is None or ident is mid):
            return ReducerRule(s.name, tag, "chunk", block.py, mid.py if mid else "", label=tag)
        # A message upsert: "When an `agent_message` update includes `content`, that array replaces
        # any content previously accumulated for the message, including content from earlier
        # chunks. Later chunks with the same `messageId` append to the current content."
        # (/$defs/AgentMessage/description; UserMessage and AgentThought say the same)
        whole = next((f for f in s.fields if not f.required and f.type.kind == "list" and f.type.item is not None
                      and f.type.item.kind == "named" and f.type.item.name in content), None)
        if mid is not None and mid.required and block is None and whole is not None:
            return ReducerRule(s.name, tag, "message", whole.py, mid.py, label=tag)
        if flat:
            return ReducerRule(s.name, tag, "state", flat[0].py, "")
        if ident is not None:
            return ReducerRule(s.name, tag, "entity", ident.wire, "")
        return ReducerRule(s.name, tag, "latest", "", "")

    def rules(self, u: Union_, content: set[str]) -> tuple[ReducerRule, ...]:
        ids = self.entity_ids(u)
        out = [self.rule(u, tag, s, content, ids) for tag, s in self.tagged(u)]
        # A message upsert's `Message.kind` is its chunk's tag (`agent_message` -> `agent_message_chunk`)
        # when the union has that chunk, so chunks and upserts of one message meet in one Message.
        chunks = {r.tag for r in out if r.kind == "chunk"}
        out = [replace(r, label=f"{r.tag}_chunk") if r.kind == "message" and f"{r.tag}_chunk" in chunks else r
               for r in out]
        # `null` in an entity update: an entity that one variant both creates and updates (an upsert)
        # has patch semantics, "`null` clears or unsets the value" (/$defs/ToolCallUpdate/description
        # in v2; /$defs/TerminalUpdate, /$defs/CompactionUpdate in v1 and v2 say the same); one with a
        # separate start variant (v1's `tool_call` beside `tool_call_update`) leaves the value:
        # "Omitting it or sending `null` both mean that the existing name is left unchanged"
        # (/$defs/ToolCallUpdate/properties/name/description in v1).
        updaters: dict[str, int] = {}
        for r in out:
            if r.kind == "entity":
                updaters[r.field] = updaters.get(r.field, 0) + 1
        out = [replace(r, clears=updaters[r.field] == 1) if r.kind == "entity" else r for r in out]
        merged: list[ReducerRule] = []
        for r in out:  # variants folded alike share one branch
            same = next((i for i, m in enumerate(merged) if r.kind in ("entity", "state")
                         and (m.kind, m.field, m.clears) == (r.kind, r.field, r.clears)), None)
            if same is None:
                merged.append(r)
            else:
                merged[same] = replace(merged[same], cls=f"{merged[same].cls}, models.{r.cls}")
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
        """A client-handled request whose params name a session and hold a list of options with an
        id and an enum kind, and whose result's outcome union has a `selected` variant (with an
        option id) and a `cancelled` one without required fields. The request's other fields
        (v1's required `toolCall`; v2's required `title` and optional `subject` union) become
        `ask_permission`'s parameters as they are."""
        session = self.package.protocol.session_field
        for m in sorted(self.package.methods, key=lambda m: m.wire):
            req, res = self.struct_of(m.params), self.struct_of(m.result)
            if m.notification or m.side != "client" or req is None or res is None:
                continue
            sf = self.field(req, session)
            opts = next((f for f in req.fields if f.required and f.type.kind == "list" and f.type.item is not None
                         and isinstance(self.node(f.type.item), Struct)), None)
            opt = self.node(opts.type.item) if opts and opts.type.item else None
            if sf is None or opts is None or not isinstance(opt, Struct):
                continue
            kind = self.field(opt, "kind")
            oid = self.field(opt, "optionId")
            outcome = next((f for f in res.fields if f.required and self.union(f.type)), None)
            ou = self.union(outcome.type) if outcome else None
            selected = self.variant(ou, "selected") if ou else None
            cancelled = self.variant(ou, "cancelled") if ou else None
            sel_id = self.field(selected, "optionId")
            kinds = self.enum_values(kind) if kind else ()
            params = self.params(req, set())
            if (kind is None or not kinds or oid is None or outcome is None or selected is None
                    or cancelled is None or sel_id is None or params is None
                    or any(f.required for f in cancelled.fields)):
                continue
            fields = tuple(p for p in params if p.name not in (sf.py, opts.py))
            if {p.name for p in fields} & ASK_NAMES:
                continue
            return Permission(m.handler, req.name, res.name, sf.py, fields, opts.py, opt.name, oid.py, kind.py,
                              tuple(k for k in kinds if k.startswith("allow")),
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
