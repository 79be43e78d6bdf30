"""Compare two IR packages node by node; every change gets its wire and source verdict."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from acpgen.diff.flow import directions, method_flow, who_breaks
from acpgen.diff.model import (
    A2C,
    ABSENT,
    C2A,
    CHANGE_KINDS,
    MISREADS,
    OTHER_DEFAULT,
    RECEIVERS,
    REJECTS,
    SENDERS,
    Change,
    Outcome,
    Site,
)
from acpgen.diff.outcome import Reading, Receiver, default_takes, outcomes_of, reads
from acpgen.diff.shape import wire_shape
from acpgen.ir.methods import ROUTING_DEFS
from acpgen.ir.model import (
    Alias,
    Enum,
    EnumMember,
    Field,
    Method,
    Node,
    Package,
    Struct,
    TypeRef,
    Union_,
)
from acpgen.render.codegen import annotation


def type_str(t: TypeRef) -> str:
    """A type expression as the generated annotation spells it (names as they are)."""
    return annotation({}, t)


def constraint_effects(old: TypeRef, new: TypeRef) -> tuple[set[str], list[str]]:
    """Tighter limits reject what old senders send; looser ones let new senders send what old
    receivers reject. Walks list items and nullable wrappers too."""
    effects: set[str] = set()
    notes: list[str] = []
    o: TypeRef | None = old
    n: TypeRef | None = new
    while o is not None and n is not None:
        oc, nc = o.constraints, n.constraints
        for label, a, b, lower in (
            ("minimum", oc.minimum, nc.minimum, True), ("maximum", oc.maximum, nc.maximum, False),
            ("minItems", oc.min_items, nc.min_items, True), ("minLength", oc.min_length, nc.min_length, True),
        ):
            if a == b:
                continue
            notes.append(f"{label} {a if a is not None else 'none'} -> {b if b is not None else 'none'}")
            if a is None:
                tighter = True
            elif b is None:
                tighter = False
            else:
                tighter = b > a if lower else b < a
            effects.add(SENDERS if tighter else RECEIVERS)
        o, n = o.item, n.item
    return effects, notes


def accepts_null(f: Field) -> bool:
    return f.nullable or f.type.kind in ("any", "null")


def type_change_effects(old: TypeRef, new: TypeRef) -> list[str]:
    """Any JSON value is the one type change whose direction is known: to it widens (new senders
    may send what old receivers reject), from it narrows (old senders may send what new receivers
    reject). Every other change is taken to break both."""
    if new.kind == "any":
        return [RECEIVERS]
    if old.kind == "any":
        return [SENDERS]
    return [SENDERS, RECEIVERS]


def python_type(nodes: Mapping[str, Node], t: TypeRef) -> str:
    """The annotation with aliases resolved at every level: what a type checker sees."""
    return annotation(nodes, t, resolve_aliases=True)


def widening_note(old: TypeRef, new: TypeRef) -> str:
    if new.kind == "any":
        return ": widened to any JSON value"
    if old.kind == "any":
        return ": narrowed from any JSON value"
    return ""


def same_shared_entries(old: object, new: object) -> bool:
    """Two object defaults that agree on every key they share."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    return all(same_shared_entries(old[k], new[k]) or old[k] == new[k] for k in set(old) & set(new))


def default_json(f: Field) -> str:
    return json.dumps(f.default, sort_keys=True) if f.has_default else "none"


def default_repr(f: Field) -> str:
    """The default for a message: JSON, cut short when long (the comparison uses all of it)."""
    text = default_json(f)
    return text if len(text) <= 60 else text[:57] + "..."


# -- the comparison ------------------------------------------------------------------------------


@dataclass
class Differ:
    old: Package
    new: Package
    changes: list[Change] = field(default_factory=list)
    done: set[str] = field(default_factory=set)  # node names already compared or reported

    def __post_init__(self) -> None:
        self.old_nodes = {n.name: n for n in self.old.nodes}
        self.new_nodes = {n.name: n for n in self.new.nodes}
        self.old_defs = {d: t.name for d, t in self.old.defs if t.kind == "named"}
        self.new_defs = {d: t.name for d, t in self.new.defs if t.kind == "named"}
        old_dirs, new_dirs = directions(self.old), directions(self.new)
        self.old_rx, self.new_rx = Receiver(self.old), Receiver(self.new)
        self.dirs = {name: old_dirs.get(name, set()) | new_dirs.get(name, set())
                     for name in set(old_dirs) | set(new_dirs)}

    def run(self) -> list[Change]:
        self.methods()
        self.types()
        self.protocol_rules()
        order = {kind: i for i, kind in enumerate(CHANGE_KINDS)}
        return sorted(self.changes, key=lambda c: (not c.kind.startswith("method-"), c.path,
                                                   order.get(c.kind, len(order)), c.detail))

    def dirs_of(self, *names: str) -> tuple[str, ...]:
        found: set[str] = set()
        for name in names:
            found |= self.dirs.get(name, set())
        return tuple(d for d in (C2A, A2C) if d in found)

    def add(self, kind: str, path: str, detail: str, dirs: tuple[str, ...], effects: Iterable[str] = (),
            source: bool = False, unstable: bool = False, site: Site | None = None) -> None:
        """One change; a wire-breaking one gets the outcome at `site` on each receiving side
        (without a site, the message is rejected where `path` says)."""
        effects = tuple(effects)
        breaks = who_breaks(dirs, effects)
        outcomes: tuple[Outcome, ...] = ()
        if breaks != "nobody":
            site = site or Site("outcome", path, path, REJECTS)
            outcomes = outcomes_of(site, self.old_rx, self.new_rx, dirs, effects)
        self.changes.append(Change(kind, path, detail, breaks, source, dirs, unstable, outcomes, site))

    # -- protocol rules ------------------------------------------------------------------

    def protocol_rules(self) -> None:
        """The rules acpgen/ir/protocol.py reads from each schema (error codes and their data shapes,
        negotiation, id and cancellation rules). A rule removed or changed breaks peers of both sides
        that follow the old one (the runtime acts on it, not the codecs: no decoder outcome); one added
        breaks nobody. A code or data shape removed also takes its `RequestError` helper away."""
        old = {r.key: r for r in self.old.protocol.rules}
        new = {r.key: r for r in self.new.protocol.rules}
        both = (C2A, A2C)
        for key in sorted(set(old) | set(new)):
            o, n = old.get(key), new.get(key)
            helper = key.startswith(("error-code/", "error-data/"))
            if o is None and n is not None:
                self.changes.append(Change("protocol-rule-added", key, f"now {n.value!r} ({rule_evidence(n.evidence)})",
                                           "nobody", False, both))
            elif n is None and o is not None:
                self.changes.append(Change("protocol-rule-removed", key,
                                           f"was {o.value!r} ({rule_evidence(o.evidence)}); the new schema no longer states it",
                                           "both", helper, both))
            elif o is not None and n is not None and o.value != n.value:
                self.changes.append(Change("protocol-rule-changed", key,
                                           f"{o.value!r} -> {n.value!r} ({rule_evidence(n.evidence)})",
                                           "both", helper, both))

    # -- methods -------------------------------------------------------------------------

    def methods(self) -> None:
        olds = group_methods(self.old.methods)
        news = group_methods(self.new.methods)
        for wire in sorted(set(olds) | set(news)):
            old_list, new_list = olds.get(wire, []), news.get(wire, [])
            if len(old_list) == 1 and len(new_list) == 1:
                self.method_pair(old_list[0], new_list[0])
                continue
            for notification in (False, True):
                o = next((m for m in old_list if m.notification == notification), None)
                n = next((m for m in new_list if m.notification == notification), None)
                if o and n:
                    self.method_pair(o, n)
                elif o:
                    self.method_removed(o)
                elif n:
                    self.method_added(n)

    @staticmethod
    def method_dirs(m: Method) -> tuple[str, ...]:
        """A method's own direction: the way its params travel (caller -> handler)."""
        params_dirs, _ = method_flow(m.side)
        return tuple(d for d in (C2A, A2C) if d in params_dirs)

    def method_added(self, m: Method) -> None:
        kind = "notification" if m.notification else "request"
        self.add("method-added", m.wire, f"new {kind} handled by {side_name(m.side)} (`{m.handler}`)",
                 self.method_dirs(m), unstable=m.unstable)

    def method_removed(self, m: Method) -> None:
        kind = "notification" if m.notification else "request"
        callers = caller_name(m.side)
        self.add("method-removed", m.wire,
                 f"{kind} no longer handled by {side_name(m.side)}; {callers} that still send it get "
                 f"{'no handler' if m.notification else 'method not found'}; handler `{m.handler}` is gone",
                 self.method_dirs(m), [SENDERS], source=True, unstable=m.unstable,
                 site=Site("outcome", f"{m.wire} (method not found)", f"{m.wire} (method not found)", REJECTS))

    def method_pair(self, o: Method, n: Method) -> None:
        dirs = tuple(d for d in (C2A, A2C) if d in set(method_flow(o.side)[0]) | set(method_flow(n.side)[0]))
        unstable = n.unstable
        if o.notification != n.notification:
            before, after = ("notification", "request") if o.notification else ("request", "notification")
            self.add("method-notification-changed", n.wire,
                     f"was a {before}, now a {after}: one side waits for a response the other never sends",
                     dirs, [SENDERS, RECEIVERS], source=True, unstable=unstable)
        if o.side != n.side:
            self.add("method-side-changed", n.wire,
                     f"handled by {side_name(o.side)} before, by {side_name(n.side)} now",
                     (C2A, A2C), [SENDERS, RECEIVERS], source=True, unstable=unstable)
        self.method_type("params", n.wire, o.params, n.params, unstable)
        if (o.result or "") != (n.result or "") and not (o.notification or n.notification):
            self.method_type("result", n.wire, o.result or "", n.result or "", unstable)

    def method_type(self, role: str, wire: str, old_def: str, new_def: str, unstable: bool) -> None:
        if old_def == new_def:
            return
        old_name, new_name = self.old_defs.get(old_def, ""), self.new_defs.get(new_def, "")
        self.add(f"method-{role}-changed", wire,
                 f"{role} type `{old_name or 'raw JSON'}` -> `{new_name or 'raw JSON'}`; the handler's signature changes",
                 self.dirs_of(old_name, new_name), source=True, unstable=unstable)
        o, n = self.old_nodes.get(old_name), self.new_nodes.get(new_name)
        if o is None or n is None:
            return
        renamed = old_name not in self.new_nodes and new_name not in self.old_nodes
        path = new_name if renamed else f"{wire} {role}"
        self.compare(path, o, n, self.dirs_of(old_name, new_name))

    # -- types ---------------------------------------------------------------------------

    def types(self) -> None:
        # Private helper structs (`_<Union>Common`, checked by an open union's fallback) are not
        # types of the protocol; what they hold is compared as the union's variants' fields.
        names = sorted(n for n in set(self.old_nodes) | set(self.new_nodes) if not n.startswith("_"))
        # Unions first: they pair up their variants (also ones renamed) before those are seen alone.
        unions = [n for n in names if isinstance(self.old_nodes.get(n), Union_) and isinstance(self.new_nodes.get(n), Union_)]
        # Then the types both sides have (their fields pair up types that were renamed), then the rest.
        both = [n for n in names if n in self.old_nodes and n in self.new_nodes and n not in set(unions)]
        rest = [n for n in names if n not in set(unions) | set(both)]
        for name in unions + both + rest:
            if name in self.done:
                continue
            o, n = self.old_nodes.get(name), self.new_nodes.get(name)
            if (o is None or is_routing(o)) and (n is None or is_routing(n)):
                continue  # JSON-RPC plumbing: what it routes is compared as methods
            if o is not None and n is not None:
                self.compare(name, o, n, self.dirs_of(name))
            elif is_variant(o) or is_variant(n):
                continue  # reported by its union as a variant added or removed
            elif n is not None:
                self.add("type-added", name, f"new {node_kind(n)}", self.dirs_of(name), unstable=n.unstable)
            elif o is not None:
                self.add("type-removed", name, f"{node_kind(o)} removed from the generated package",
                         self.dirs_of(name), source=True, unstable=o.unstable)

    def compare(self, path: str, o: Node, n: Node, dirs: tuple[str, ...]) -> None:
        self.done.update((o.name, n.name))
        if isinstance(o, Struct) and isinstance(n, Struct):
            self.structs(path, o, n, dirs)
        elif isinstance(o, Enum) and isinstance(n, Enum):
            self.enums(path, o, n, dirs)
        elif isinstance(o, Union_) and isinstance(n, Union_):
            self.unions(path, o, n, dirs)
        elif isinstance(o, Alias) and isinstance(n, Alias):
            self.aliases(path, o, n, dirs)
        else:
            self.add("type-kind-changed", path, f"{node_kind(o)} -> {node_kind(n)}", dirs,
                     [SENDERS, RECEIVERS], source=True, unstable=n.unstable, site=Site("type", o.name, n.name))

    # structs

    def structs(self, path: str, o: Struct, n: Struct, dirs: tuple[str, ...]) -> None:
        old_fields = {field_key(f): f for f in o.fields}
        new_fields = {field_key(f): f for f in n.fields}
        for tag, fields in ((n.tag, old_fields), (o.tag, new_fields)):
            if tag is not None and tag.wire in fields and tag.wire not in set(old_fields) & set(new_fields):
                del fields[tag.wire]  # a variant's tag became a field or the reverse: the tag is compared by its union
        renamed = wire_renames(old_fields, new_fields)
        for key in sorted(set(old_fields) | set(new_fields)):
            of, nf = old_fields.get(key), new_fields.get(key)
            where = f"{path}.{key}"
            owner = (o.name, n.name)
            if key in renamed:
                self.field_wire_renamed(where, old_fields[renamed[key]], new_fields[key], owner, dirs)
            elif key in renamed.values():
                continue
            elif of is None and nf is not None:
                self.field_added(where, nf, owner, dirs)
            elif nf is None and of is not None:
                self.field_removed(where, of, owner, dirs)
            elif of is not None and nf is not None:
                self.field_changed(where, of, nf, owner, dirs)

    def field_added(self, where: str, f: Field, owner: tuple[str, str], dirs: tuple[str, ...]) -> None:
        if f.required:
            # A required field is a required constructor argument, schema default or not.
            self.add("field-added", where,
                     f"new required field `{f.py}: {type_str(f.type)}`: old senders do not send it; "
                     "the constructor requires it", dirs, [SENDERS], source=True, unstable=f.unstable,
                     site=Site("missing", *owner, f.wire))
        else:
            self.add("field-added", where, f"new optional field `{f.py}: {type_str(f.type)}`",
                     dirs, unstable=f.unstable)

    def field_removed(self, where: str, f: Field, owner: tuple[str, str], dirs: tuple[str, ...]) -> None:
        if f.required:
            self.add("field-removed", where,
                     f"required field `{f.py}` removed: new senders omit it, old receivers require it",
                     dirs, [RECEIVERS], source=True, unstable=f.unstable, site=Site("missing", *owner, f.wire))
        else:
            self.add("field-removed", where, f"optional field `{f.py}` removed (receivers ignore it if sent)",
                     dirs, source=True, unstable=f.unstable)

    def field_wire_renamed(self, where: str, o: Field, n: Field, owner: tuple[str, str], dirs: tuple[str, ...]) -> None:
        """The same attribute under another wire key: code that sets it now sends the new key, which
        receivers of the other version do not know (they ignore it)."""
        detail = (f"wire key `{o.wire}` -> `{n.wire}` under the same attribute `{n.py}`: code that sets `{n.py}` "
                  f"now sends `{n.wire}`; receivers of the other version ignore the key they do not know")
        if o.required or n.required:
            self.add("field-wire-renamed", where, detail + " and reject the message without the one they require",
                     dirs, [SENDERS, RECEIVERS], unstable=n.unstable, site=Site("missing", *owner, n.wire))
        else:
            self.add("field-wire-renamed", where, detail + ", so the value is lost",
                     dirs, [SENDERS, RECEIVERS], unstable=n.unstable,
                     site=Site("outcome", f"{owner[0]}.{o.wire}", f"{owner[1]}.{n.wire}", ABSENT))
        self.field_changed(where, replace(o, wire=n.wire), n, owner, dirs)

    def field_changed(self, where: str, o: Field, n: Field, owner: tuple[str, str], dirs: tuple[str, ...]) -> None:
        unstable = n.unstable
        value = Site("value", *owner, n.wire)
        missing = Site("missing", *owner, n.wire)
        self.annotations(where, o, n, dirs)
        if o.py != n.py:
            self.add("field-renamed", where, f"attribute `{o.py}` -> `{n.py}` (same wire name)", dirs,
                     source=True, unstable=unstable)
        if o.required != n.required:
            if o.required:
                self.add("field-required-changed", where,
                         "required -> optional: new senders may omit it, old receivers require it",
                         dirs, [RECEIVERS], source=not n.has_default, unstable=unstable, site=missing)
            else:
                self.add("field-required-changed", where,
                         "optional -> required: old senders may omit it, new receivers require it; "
                         "the constructor requires it",
                         dirs, [SENDERS], source=True, unstable=unstable, site=missing)
        if accepts_null(o) != accepts_null(n):
            if accepts_null(n):
                self.add("field-nullable-changed", where, "now nullable: new senders may send null, old receivers reject it",
                         dirs, [RECEIVERS], source=True, unstable=unstable, site=value)
            else:
                self.add("field-nullable-changed", where, "no longer nullable: old senders may send null, new receivers reject it",
                         dirs, [SENDERS], source=True, unstable=unstable, site=value)
        old_type, new_type = type_str(o.type), type_str(n.type)
        if old_type != new_type and self.same_wire(o.type, n.type):
            source = python_type(self.old_nodes, o.type) != python_type(self.new_nodes, n.type)
            self.add("field-type-changed", where, f"type `{old_type}` -> `{new_type}`: same JSON on the wire",
                     dirs, source=source, unstable=unstable)
        elif old_type != new_type and self.renamed_pair(o.type, n.type):
            self.add("field-type-changed", where, f"type `{old_type}` -> `{new_type}`: the class is renamed; "
                     f"changes in its fields are listed under `{new_type}`", dirs, source=True, unstable=unstable)
            if new_type not in self.done:
                self.compare(new_type, self.old_nodes[old_type], self.new_nodes[new_type],
                             self.dirs_of(old_type, new_type) or dirs)
        elif old_type != new_type:
            self.add("field-type-changed", where, f"type `{old_type}` -> `{new_type}`{widening_note(o.type, n.type)}",
                     dirs, type_change_effects(o.type, n.type), source=True, unstable=unstable, site=value)
        else:
            effects, notes = constraint_effects(o.type, n.type)
            if notes:
                self.add("field-constraints-changed", where, "; ".join(notes), dirs, sorted(effects),
                         unstable=unstable, site=value)
        if default_json(o) != default_json(n) and not (o.required and n.required):
            self.field_default(where, o, n, dirs)

    def field_default(self, where: str, o: Field, n: Field, dirs: tuple[str, ...]) -> None:
        detail = f"default {default_repr(o)} -> {default_repr(n)}"
        if o.has_default and n.has_default and same_shared_entries(o.default, n.default):
            self.add("field-default-changed", where,
                     f"{detail}: only keys added or removed, each covered by the nested type's own changes",
                     dirs, unstable=n.unstable)
        elif o.has_default and n.has_default:
            self.add("field-default-changed", where,
                     f"{detail}: an absent key means {default_repr(o)} to old receivers and {default_repr(n)} to new ones",
                     dirs, [SENDERS, RECEIVERS], unstable=n.unstable, site=Site("outcome", where, where, OTHER_DEFAULT))
        elif o.has_default:
            self.add("field-default-changed", where, f"{detail}: an absent key now decodes to UNSET",
                     dirs, source=not n.required, unstable=n.unstable)
        else:
            self.add("field-default-changed", where, f"{detail}: an absent key now decodes to the default",
                     dirs, unstable=n.unstable)

    def annotations(self, where: str, o: Field, n: Field, dirs: tuple[str, ...]) -> None:
        """Leniency annotations apply to receiving only: adding one makes new receivers more
        tolerant, removing one makes them stricter; neither changes what a valid sender sends."""
        for name, before, after, tolerant, strict in (
            ("x-deserialize-default-on-error", o.default_on_error, n.default_on_error,
             "new receivers replace a value they cannot decode by its fallback instead of rejecting the message",
             "new receivers reject a value they cannot decode (old ones replaced it by its fallback)"),
            ("x-deserialize-skip-invalid-items", o.skip_invalid_items, n.skip_invalid_items,
             "new receivers drop a list item they cannot decode instead of failing the list",
             "new receivers fail on a list item they cannot decode (old ones dropped it)"),
        ):
            if before != after:
                verdict = f"more tolerant receivers: {tolerant}" if after else f"stricter receivers: {strict}"
                self.add("annotation-added" if after else "annotation-removed", where,
                         f"`{name}` {'added' if after else 'removed'}; {verdict}", dirs, unstable=n.unstable)

    # enums

    def enums(self, path: str, o: Enum, n: Enum, dirs: tuple[str, ...]) -> None:
        unstable = n.unstable
        site = Site("type", o.name, n.name)
        if o.base != n.base:
            self.add("enum-base-changed", path, f"{o.base} values -> {n.base} values", dirs,
                     [SENDERS, RECEIVERS], source=True, unstable=unstable, site=site)
            return
        if o.open != n.open:
            if n.open:
                self.add("enum-openness-changed", path,
                         f"closed -> open: new senders may send any {n.base}, old receivers accept only the listed values; "
                         f"the annotation gains `| {n.base}`", dirs, [RECEIVERS], source=True, unstable=unstable, site=site)
            else:
                self.add("enum-openness-changed", path,
                         "open -> closed: new receivers reject values they do not list", dirs, [SENDERS],
                         source=True, unstable=unstable, site=site)
        old_members = {m.value: m for m in o.members}
        new_members = {m.value: m for m in n.members}
        for value in sorted(set(old_members) | set(new_members), key=repr):
            om, nm = old_members.get(value), new_members.get(value)
            if om is None and nm is not None:
                self.enum_value_added(path, o, n, nm, dirs)
            elif nm is None and om is not None:
                if n.open:
                    detail = f"value {value!r} removed (open enum: receivers still accept it); member `{om.py}` is gone"
                    effects: list[str] = []
                else:
                    detail = f"value {value!r} removed from a closed enum: old senders may send it, new receivers reject it"
                    effects = [SENDERS]
                self.add("enum-value-removed", path, detail, dirs, effects, source=True, unstable=om.unstable,
                         site=replace(site, value=value))
            elif om is not None and nm is not None and om.py != nm.py:
                self.add("enum-member-renamed", path, f"member for {value!r}: `{om.py}` -> `{nm.py}`", dirs,
                         source=True, unstable=nm.unstable)

    def enum_value_added(self, path: str, o: Enum, n: Enum, m: EnumMember, dirs: tuple[str, ...]) -> None:
        if o.open:
            self.add("enum-value-added", path, f"value {m.value!r} added to an open enum (old receivers keep it as a plain value)",
                     dirs, unstable=m.unstable)
        else:
            self.add("enum-value-added", path,
                     f"value {m.value!r} added to a closed enum: new senders may send it, old receivers reject it",
                     dirs, [RECEIVERS], unstable=m.unstable, site=Site("type", o.name, n.name, value=m.value))

    # unions

    def unions(self, path: str, o: Union_, n: Union_, dirs: tuple[str, ...]) -> None:
        if o.tag != n.tag:
            self.union_retagged(path, o, n, dirs)
            return
        if bool(o.schema_other) != bool(n.schema_other):
            self.union_openness(path, o, n, dirs)
        old_variants, new_variants = variant_map(o), variant_map(n)
        gone, came = sorted(set(old_variants) - set(new_variants)), sorted(set(new_variants) - set(old_variants))
        if not n.tag and len(gone) == 1 and len(came) == 1 and self.both_structs(old_variants[gone[0]], new_variants[came[0]]):
            # An untagged union is told apart by shape, not by name: one struct variant swapped for
            # another is the same variant under a new class name, compared field by field.
            new_variants[gone[0]] = new_variants.pop(came[0])
        for key in sorted(set(old_variants) | set(new_variants)):
            ov, nv = old_variants.get(key), new_variants.get(key)
            label = variant_label(key, o.tag)
            if ov is None and nv is not None:
                self.variant_added(path, label, key, o, n, nv, dirs)
            elif nv is None and ov is not None:
                self.variant_removed(path, label, key, o, n, ov, dirs)
            elif ov is not None and nv is not None:
                self.variant_pair(path, label, ov, nv, dirs)

    def union_openness(self, path: str, o: Union_, n: Union_, dirs: tuple[str, ...]) -> None:
        if n.schema_other:
            self.add("union-openness-changed", path,
                     f"closed -> open (`{n.schema_other}` keeps unknown tags): new senders may send tags old receivers reject",
                     dirs, [RECEIVERS], unstable=n.unstable, site=self.unknown_tag_site(o, n, n.schema_other, new_sends=True))
        else:
            self.add("union-openness-changed", path,
                     "open -> closed: new receivers reject tags they do not list", dirs, [SENDERS],
                     source=True, unstable=n.unstable, site=self.unknown_tag_site(o, n, o.schema_other, new_sends=False))

    def unknown_tag_site(self, o: Union_, n: Union_, sent: str, new_sends: bool) -> Site:
        """What the receiving union does with an object the sender's union holds as `sent`."""
        if not (n.tag if new_sends else o.tag):  # an untagged receiver: tried variant by variant
            readings = self.readings(sent, new_sends, o, n)
            taken = [r for r in readings if r[0] in ("variant", "default")]
            if taken:
                union = o.name if new_sends else n.name
                return Site("outcome", f"{union} as `{taken[0][1]}`", f"{union} as `{taken[0][1]}`", MISREADS)
            return Site("type", o.name, n.name)
        return Site("tag", o.name, n.name, sent=sent)

    def readings(self, sent: str, new_sends: bool, o: Union_, n: Union_) -> list[Reading]:
        sender, receiver = (self.new_nodes, self.old_nodes) if new_sends else (self.old_nodes, self.new_nodes)
        node = sender.get(sent)
        if node is None:
            return [("rejects", "not an object")]
        return reads(sender, node, receiver, o if new_sends else n)

    def union_retagged(self, path: str, o: Union_, n: Union_, dirs: tuple[str, ...]) -> None:
        """Tag changed (or tagged <-> untagged): each side's variants are read by the other side's
        union as its decoder would; variants read both ways pair up and are compared field by field,
        the others are listed as removed or added with what the receivers make of them."""
        old_names = [v.type.name for v in o.variants if v.type.kind == "named" and v.type.name != o.other]
        new_names = [v.type.name for v in n.variants if v.type.kind == "named" and v.type.name != n.other]
        old_reads = {name: self.readings(name, False, o, n) for name in old_names}
        new_reads = {name: self.readings(name, True, o, n) for name in new_names}

        def taken(readings: list[Reading]) -> set[str]:
            return {r[1] for r in readings if r[0] in ("variant", "default")}

        pairs = [(a, b) for a in old_names for b in new_names if b in taken(old_reads[a]) and a in taken(new_reads[b])]
        paired_old, paired_new = {a for a, _ in pairs}, {b for _, b in pairs}

        def misread(readings: list[Reading], counterparts: set[str], tagged: bool) -> bool:
            """Rejected, taken by a default variant for a tag it does not list, or read as a
            variant that stands for another one: an unpaired variant read as some other variant of
            an untagged union is that union's own way to hold it."""
            return any(kind == "rejects" or (kind == "default" and tagged) or (kind == "variant" and what in counterparts)
                       for kind, what in readings)

        bad_old = [a for a in old_names if a not in paired_old and misread(old_reads[a], paired_new, bool(n.tag))]
        bad_new = [b for b in new_names if b not in paired_new and misread(new_reads[b], paired_old, bool(o.tag))]
        effects = [*([SENDERS] if bad_old else []), *([RECEIVERS] if bad_new else [])]
        read = "; ".join(f"`{a}` -> {describe_readings(old_reads[a])}" for a in old_names)
        self.add("union-tag-changed", path,
                 f"{describe_tag(o)} -> {describe_tag(n)}; the new union reads the old variants' objects as: {read}",
                 dirs, effects, source=True, unstable=n.unstable,
                 site=Site("type", o.name, n.name))
        if bool(o.schema_other) != bool(n.schema_other):
            self.union_openness(path, o, n, dirs)
        for a in old_names:
            if a in paired_old:
                continue
            effect = [SENDERS] if a in bad_old else []
            self.add("variant-removed", path, f"variant `{a}` removed: new receivers read its objects as "
                     f"{describe_readings(old_reads[a])}", dirs, effect, source=a not in self.new_nodes,
                     unstable=n.unstable, site=self.reading_site(o, n, a, old_reads[a], new_sends=False))
        for b in new_names:
            if b in paired_new:
                continue
            effect = [RECEIVERS] if b in bad_new else []
            self.add("variant-added", path, f"variant `{b}` added: old receivers read its objects as "
                     f"{describe_readings(new_reads[b])}", dirs, effect, unstable=n.unstable,
                     site=self.reading_site(o, n, b, new_reads[b], new_sends=True))
        for a, b in pairs:
            if a != b:
                self.add("variant-renamed", path, f"variant `{a}` -> `{b}`: each side reads the other's objects", dirs,
                         source=True, unstable=n.unstable)
            if b not in self.done:
                self.compare(b, self.old_nodes[a], self.new_nodes[b], self.dirs_of(a, b) or dirs)

    def reading_site(self, o: Union_, n: Union_, sent: str, readings: list[Reading], new_sends: bool) -> Site:
        union = o.name if new_sends else n.name
        taken = [r for r in readings if r[0] in ("variant", "default")]
        if taken and not any(r[0] == "rejects" for r in readings):
            return Site("outcome", f"{union} as `{taken[0][1]}`", f"{union} as `{taken[0][1]}`", MISREADS)
        return Site("type", o.name, n.name)

    def both_structs(self, ov: tuple[TypeRef, bool], nv: tuple[TypeRef, bool]) -> bool:
        return isinstance(self.old_nodes.get(ov[0].name), Struct) and isinstance(self.new_nodes.get(nv[0].name), Struct)

    def variant_added(self, path: str, label: str, key: str, o: Union_, n: Union_, v: tuple[TypeRef, bool],
                      dirs: tuple[str, ...]) -> None:
        t, unstable = v
        unstable = unstable or (t.name in self.new_nodes and self.new_nodes[t.name].unstable)
        cls = f" (`{type_str(t)}`)" if o.tag else ""
        if key == DEFAULT_KEY:
            self.add("variant-added", path, f"new default variant{cls}: new senders omit the tag `{o.tag}`, old receivers reject that",
                     dirs, [RECEIVERS], unstable=unstable, site=Site("type", o.name, n.name))
        elif o.schema_other:
            self.add("variant-added", path, f"{label} added{cls}; the union is open, old receivers keep it as `{o.schema_other}`",
                     dirs, unstable=unstable)
        else:
            site = self.unknown_tag_site(o, n, t.name, new_sends=True)
            self.add("variant-added", path, f"{label} added{cls} to a closed union: old receivers "
                     f"{self.unknown_tag_verdict(o, site)}", dirs, [RECEIVERS], unstable=unstable, site=site)

    def variant_removed(self, path: str, label: str, key: str, o: Union_, n: Union_, v: tuple[TypeRef, bool],
                        dirs: tuple[str, ...]) -> None:
        t, unstable = v
        unstable = unstable or (t.name in self.old_nodes and self.old_nodes[t.name].unstable)
        gone = f"; class `{t.name}` is gone" if t.kind == "named" and t.name not in self.new_nodes else ""
        if key == DEFAULT_KEY:
            self.add("variant-removed", path, f"default variant removed: old senders that omit the tag `{n.tag}` are rejected{gone}",
                     dirs, [SENDERS], source=bool(gone), unstable=unstable, site=Site("type", o.name, n.name))
        elif n.schema_other:
            self.add("variant-removed", path, f"{label} removed; the union is open, new receivers keep it as `{n.schema_other}`{gone}",
                     dirs, source=bool(gone), unstable=unstable)
        else:
            site = self.unknown_tag_site(o, n, t.name, new_sends=False)
            self.add("variant-removed", path, f"{label} removed: old senders may send it, new receivers "
                     f"{self.unknown_tag_verdict(n, site)}{gone}", dirs, [SENDERS], source=bool(gone),
                     unstable=unstable, site=site)

    def unknown_tag_verdict(self, receiving: Union_, site: Site) -> str:
        """How a closed union's receivers take a tag they do not list: rejected, or read as the
        default variant when that variant takes the object (it does not forbid the tag key)."""
        if site.kind == "tag":
            new_side = receiving.name == site.new and receiving is self.new_nodes.get(site.new)
            receiver, sender = (self.new_nodes, self.old_nodes) if new_side else (self.old_nodes, self.new_nodes)
            if default_takes(receiver, receiving.name, sender, site.sent):
                return (f"read it as the default variant `{receiving.default}` (which does not forbid the tag "
                        f"`{receiving.tag}`): a silent misreading")
        return "reject it"

    def variant_pair(self, path: str, label: str, ov: tuple[TypeRef, bool], nv: tuple[TypeRef, bool], dirs: tuple[str, ...]) -> None:
        old_name, new_name = type_str(ov[0]), type_str(nv[0])
        if old_name != new_name:
            self.add("variant-renamed", path, f"{label}: class `{old_name}` -> `{new_name}`", dirs,
                     source=True, unstable=nv[1])
        o, n = self.old_nodes.get(old_name), self.new_nodes.get(new_name)
        if o is not None and n is not None and new_name not in self.done:
            self.compare(new_name, o, n, self.dirs_of(old_name, new_name) or dirs)

    # aliases

    def renamed_pair(self, old: TypeRef, new: TypeRef) -> bool:
        """A field whose struct (or enum, union) type changed its name only: the old name is gone
        and the new one is new, so the two are compared as one type."""
        if old.kind != "named" or new.kind != "named":
            return False
        o, n = self.old_nodes.get(old.name), self.new_nodes.get(new.name)
        return (o is not None and n is not None and type(o) is type(n) and not isinstance(o, Alias)
                and old.name not in self.new_nodes and new.name not in self.old_nodes)

    def same_wire(self, old: TypeRef, new: TypeRef) -> bool:
        return wire_shape(self.old_nodes, old) == wire_shape(self.new_nodes, new)

    def aliases(self, path: str, o: Alias, n: Alias, dirs: tuple[str, ...]) -> None:
        old_type, new_type = type_str(o.target), type_str(n.target)
        if old_type != new_type and self.same_wire(o.target, n.target):
            source = python_type(self.old_nodes, o.target) != python_type(self.new_nodes, n.target)
            self.add("alias-target-changed", path, f"`{old_type}` -> `{new_type}`: same JSON on the wire", dirs,
                     source=source, unstable=n.unstable)
            return
        if old_type != new_type:
            self.add("alias-target-changed", path, f"`{old_type}` -> `{new_type}`{widening_note(o.target, n.target)}",
                     dirs, type_change_effects(o.target, n.target), source=True, unstable=n.unstable)
            return
        effects, notes = constraint_effects(o.target, n.target)
        if notes:
            self.add("alias-constraints-changed", path, "; ".join(notes), dirs, sorted(effects), unstable=n.unstable)


DEFAULT_KEY = "(default)"


def rule_evidence(evidence: tuple[str, ...]) -> str:
    """Where the schema states a rule: its first pointers, `#`-prefixed as a reader looks them up."""
    shown = [e if e.startswith("config:") else f"#{e}" for e in evidence[:2]]
    more = f" and {len(evidence) - 2} more" if len(evidence) > 2 else ""
    return "stated at " + ", ".join(shown) + more if shown else "JSON-RPC's default"


def group_methods(methods: Iterable[Method]) -> dict[str, list[Method]]:
    out: dict[str, list[Method]] = {}
    for m in methods:
        out.setdefault(m.wire, []).append(m)
    return out


def side_name(side: str) -> str:
    return {"agent": "the agent", "client": "the client", "protocol": "both sides", "both": "both sides"}.get(
        side, f"the {side} side")


def caller_name(side: str) -> str:
    return {"agent": "old clients", "client": "old agents"}.get(side, "old peers")


def is_routing(node: Node) -> bool:
    """A node defined under one of the routing definitions (ClientRequest, AgentResponse, ...)."""
    parts = node.pointer.split("/")
    return len(parts) > 2 and parts[1] in ("$defs", "definitions") and parts[2] in ROUTING_DEFS


def is_variant(node: Node | None) -> bool:
    return isinstance(node, Struct) and bool(node.union)


def node_kind(node: Node) -> str:
    if isinstance(node, Struct):
        return "struct"
    if isinstance(node, Enum):
        return f"{'open' if node.open else 'closed'} enum"
    if isinstance(node, Union_):
        openness = "open " if node.schema_other else ""
        return f"{openness}tagged union (tag `{node.tag}`)" if node.tag else "untagged union"
    return f"alias of `{type_str(node.target)}`"


def describe_readings(readings: list[Reading]) -> str:
    words = {"variant": "`{}`", "default": "the default variant `{}`", "other": "unknown (kept as `{}`)",
             "rejects": "nothing: rejected ({})"}
    return " or ".join(sorted({words[kind].format(what) for kind, what in readings}))


def wire_renames(old_fields: dict[str, Field], new_fields: dict[str, Field]) -> dict[str, str]:
    """New wire key -> old wire key, for a key that only one side has under an attribute name the
    other side uses for a key only it has."""
    gone = {f.py: key for key, f in old_fields.items() if key not in new_fields}
    came = {f.py: key for key, f in new_fields.items() if key not in old_fields}
    return {came[py]: gone[py] for py in sorted(set(gone) & set(came))}


def describe_tag(u: Union_) -> str:
    return f"tagged by `{u.tag}`" if u.tag else "untagged"


def field_key(f: Field) -> str:
    return f.wire or f"(flattened {type_str(f.type)})"


def variant_map(u: Union_) -> dict[str, tuple[TypeRef, bool]]:
    """Variants by what identifies them on the wire: the tag value, the default, or (untagged) the type."""
    out: dict[str, tuple[TypeRef, bool]] = {}
    for v in u.variants:
        name = v.type.name if v.type.kind == "named" else ""
        if u.other and name == u.other:
            continue
        if v.tag_value is not None:
            key = v.tag_value
        elif u.tag and name == u.default:
            key = DEFAULT_KEY
        else:
            key = type_str(v.type)
        out[key] = (v.type, v.unstable)
    return out


def variant_label(key: str, tag: str) -> str:
    if key == DEFAULT_KEY:
        return "default variant"
    return f"variant `{tag}: {key}`" if tag else f"variant `{key}`"


def diff_packages(old: Package, new: Package) -> list[Change]:
    return Differ(old, new).run()


