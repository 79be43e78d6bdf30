"""What a deployed receiver really does with a message a wire-breaking change makes it fail on.

A failure (a value the decoder cannot take, a required key missing) rises from the changed type
towards the message, along every path from a method's params or result down to that type. The
first field on the way that carries a leniency annotation stops it, as the generated decoder does:
`x-deserialize-skip-invalid-items` on a list drops the item the failure is in,
`x-deserialize-default-on-error` replaces the field's value by its fallback. A failure that reaches
the message rejects it. A tag a closed union does not list goes to its default variant first (the
decoder tries it): when that variant takes the sent object, the receiver misreads it silently.

Reading one union's objects with another union (`reads`) follows the generated decoders too: a
tagged union dispatches on the tag (unknown: the open fallback, else the default variant, else an
error), an untagged one takes the first variant that accepts the object; a struct accepts an object
that has its required keys with values of the same wire shape and ignores other keys.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from acpgen.diff.flow import directions, method_flow
from acpgen.diff.model import (
    A2C,
    C2A,
    DEFAULTS,
    DROPS,
    KEEPS,
    MISREADS,
    OUTCOMES,
    REJECTS,
    Outcome,
    Site,
)
from acpgen.diff.shape import wire_shape
from acpgen.ir.methods import ROUTING_DEFS
from acpgen.ir.model import Alias, Enum, Field, Node, Package, Struct, TypeRef, Union_


@dataclass(frozen=True)
class Edge:
    parent: str
    field: Field | None  # None: a union variant, an alias target or a payload taken over
    via_list: bool  # the child is (inside) an item of the field's list


def named_refs(t: TypeRef) -> Iterator[tuple[str, bool]]:
    via_list = False
    item: TypeRef | None = t
    while item is not None:
        if item.kind == "list":
            via_list = True
        if item.kind == "named":
            yield item.name, via_list
        item = item.item


def is_routing(node: Node) -> bool:
    parts = node.pointer.split("/")
    return len(parts) > 2 and parts[1] in ("$defs", "definitions") and parts[2] in ROUTING_DEFS


class Receiver:
    """One package seen as the receiving side: who holds each type, and which types are messages."""

    def __init__(self, package: Package) -> None:
        self.nodes: dict[str, Node] = {n.name: n for n in package.nodes}
        self.dirs = directions(package)
        defs = {d: t.name for d, t in package.defs if t.kind == "named"}
        self.parents: dict[str, list[Edge]] = {}
        for node in package.nodes:
            if is_routing(node):
                continue  # JSON-RPC plumbing: what it routes is a message of its own
            if isinstance(node, Struct):
                for f in node.fields:
                    for name, via_list in named_refs(f.type):
                        self.parents.setdefault(name, []).append(Edge(node.name, f, via_list))
                for f in node.fields:  # a payload definition whose properties this struct took over
                    parts = f.pointer.split("/")
                    if len(parts) > 3 and parts[1] in ("$defs", "definitions"):
                        payload = defs.get(parts[2].replace("~1", "/").replace("~0", "~"))
                        if payload and payload != node.name:
                            edge = Edge(node.name, None, False)
                            if edge not in self.parents.setdefault(payload, []):
                                self.parents[payload].append(edge)
            elif isinstance(node, Union_):
                for v in node.variants:
                    for name, _ in named_refs(v.type):
                        self.parents.setdefault(name, []).append(Edge(node.name, None, False))
            elif isinstance(node, Alias):
                for name, _ in named_refs(node.target):
                    self.parents.setdefault(name, []).append(Edge(node.name, None, False))
        self.roots: dict[tuple[str, str], list[str]] = {}
        for m in package.methods:
            params_dirs, result_dirs = method_flow(m.side)
            for role, def_name, dirs in (("params", m.params, params_dirs), ("result", m.result, result_dirs)):
                if def_name and def_name in defs:
                    label = m.wire if m.notification else f"{m.wire} {role}"
                    for d in dirs:
                        self.roots.setdefault((defs[def_name], d), []).append(label)

    def climb(self, name: str, direction: str, found: dict[str, set[str]], seen: set[str]) -> None:
        """A value of type `name` fails: where each path up to a message stops it."""
        if name in seen:
            return
        seen.add(name)
        roots = self.roots.get((name, direction), [])
        for label in roots:
            found.setdefault(REJECTS, set()).add(label)
        edges = [e for e in self.parents.get(name, []) if direction in self.dirs.get(e.parent, set())]
        if not edges and not roots:
            # Held by nothing a method of this version sends this way: only a message of the
            # other version carries it, and that message is rejected.
            carried = direction in self.dirs.get(name, set())
            found.setdefault(REJECTS, set()).add(name if carried else f"{name}, which this version does not send this way")
        for e in edges:
            f = e.field
            if f is not None and e.via_list and f.skip_invalid_items:
                found.setdefault(DROPS, set()).add(f"{e.parent}.{f.wire}")
            elif f is not None and f.default_on_error:
                found.setdefault(DEFAULTS, set()).add(f"{e.parent}.{f.wire}")
            else:
                self.climb(e.parent, direction, found, seen)

    def fails(self, name: str, direction: str) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        self.climb(name, direction, found, set())
        return found

    def field(self, struct: str, wire: str) -> Field | None:
        node = self.nodes.get(struct)
        if isinstance(node, Struct):
            return next((f for f in node.fields if f.wire == wire), None)
        return None


def outcome_places(site: Site, receiver: Receiver, sender: Receiver, direction: str, new_side: bool) -> dict[str, set[str]]:
    """Outcome -> the places it happens, for one direction, in the receiving package."""
    name = site.new if new_side else site.old
    if site.kind == "outcome":
        return {site.wire: {name}}
    if site.kind == "missing":
        return receiver.fails(name, direction)
    if site.kind == "value":
        f = receiver.field(name, site.wire)
        if f is not None and f.default_on_error:
            return {DEFAULTS: {f"{name}.{site.wire}"}}
        return receiver.fails(name, direction)
    if site.kind == "tag":
        default = default_takes(receiver.nodes, name, sender.nodes, site.sent)
        union = receiver.nodes.get(name)
        if default and isinstance(union, Union_) and union.kept_other:
            return {KEEPS: {f"{name} as `{union.other}`"}}
        if default:
            return {MISREADS: {f"{name} as `{default}`"}}
        return receiver.fails(name, direction)
    return receiver.fails(name, direction)


def default_takes(receiver: Mapping[str, Node], union_name: str, sender: Mapping[str, Node], sent_name: str) -> str:
    """The default variant of the receiving union when it takes the objects of `sent_name` (whose
    tag that union does not list): its decoder tries the default before it gives up."""
    union, sent = receiver.get(union_name), sender.get(sent_name)
    if isinstance(union, Union_) and union.default and not union.schema_other and isinstance(sent, Struct):
        default = receiver.get(union.default)
        if isinstance(default, Struct) and accepts(sender, sent, receiver, default):
            return union.default
    return ""


def receivers_label(direction: str, new_side: bool) -> str:
    side = "agents" if direction == C2A else "clients"
    return f"{'new' if new_side else 'old'} {side}"


def outcomes_of(site: Site, old: Receiver, new: Receiver, dirs: tuple[str, ...],
                effects: tuple[str, ...]) -> tuple[Outcome, ...]:
    """The outcome for every direction and effect: `receivers` (new senders, old receivers: the old
    package decodes) and `senders` (old senders, new receivers: the new package decodes)."""
    out: list[Outcome] = []
    for direction in (C2A, A2C):
        if direction not in dirs:
            continue
        for effect in ("senders", "receivers"):
            if effect not in effects:
                continue
            new_side = effect == "senders"
            receiver, sender = (new, old) if new_side else (old, new)
            places = outcome_places(site, receiver, sender, direction, new_side)
            for outcome in OUTCOMES:
                if outcome in places:
                    out.append(Outcome(receivers_label(direction, new_side), outcome, tuple(sorted(places[outcome]))))
    return tuple(out)


# -- reading an object with another package's types ----------------------------------------------


def resolve(nodes: Mapping[str, Node], t: TypeRef) -> TypeRef:
    """A type with its aliases followed (constraints of the outermost kept apart by the caller)."""
    seen: set[str] = set()
    while t.kind == "named" and isinstance(nodes.get(t.name), Alias) and t.name not in seen:
        seen.add(t.name)
        node = nodes[t.name]
        assert isinstance(node, Alias)
        t = node.target
    return t


def sent_values(nodes: Mapping[str, Node], t: TypeRef) -> tuple[str, ...] | None:
    """The string values a field of this type can hold when they are a fixed few (a const, an enum)."""
    t = resolve(nodes, t)
    if t.kind == "literal" and isinstance(t.const, str):
        return (t.const,)
    node = nodes.get(t.name) if t.kind == "named" else None
    if isinstance(node, Enum) and not node.open:
        return tuple(str(m.value) for m in node.members)
    return None


def takes_value(nodes: Mapping[str, Node], t: TypeRef, value: str) -> bool:
    """Whether a field of this type decodes the string `value`."""
    t = resolve(nodes, t)
    if t.kind in ("str", "any"):
        return t.kind == "any" or not t.constraints.min_length or len(value) >= t.constraints.min_length
    if t.kind == "nullable" and t.item is not None:
        return takes_value(nodes, t.item, value)
    if t.kind == "literal":
        return t.const == value
    node = nodes.get(t.name) if t.kind == "named" else None
    if isinstance(node, Enum):
        return node.base == "str" and (node.open or value in {str(m.value) for m in node.members})
    return False


Pairs = set[tuple[str, str]]


def limits_cover(sent: TypeRef, taken: TypeRef) -> bool:
    """The receiver's limits let through every value within the sender's."""
    s, t = sent.constraints, taken.constraints
    for low, a, b in ((True, s.minimum, t.minimum), (False, s.maximum, t.maximum),
                      (True, s.min_items, t.min_items), (True, s.min_length, t.min_length)):
        if b is None:
            continue
        if a is None or (a < b if low else a > b):
            return False
    return True


def type_accepts(sender: Mapping[str, Node], sent: TypeRef, receiver: Mapping[str, Node], taken: TypeRef,
                 seen: Pairs) -> bool:
    """Whether a receiver decoding `taken` takes every value a sender holding `sent` may send."""
    if not limits_cover(sent, taken):
        return False
    st, tt = resolve(sender, sent), resolve(receiver, taken)
    if (st is not sent or tt is not taken) and not limits_cover(st, tt):
        return False
    if tt.kind == "any":
        return True
    if st.kind == "nullable" and st.item is not None:
        return tt.kind == "nullable" and tt.item is not None and type_accepts(sender, st.item, receiver, tt.item, seen)
    if tt.kind == "nullable" and tt.item is not None:
        return type_accepts(sender, st, receiver, tt.item, seen)
    values = sent_values(sender, st)
    if values is not None and all(takes_value(receiver, tt, v) for v in values):
        return True
    if st.kind in ("list", "map") and st.item is not None:
        return tt.kind == st.kind and tt.item is not None and type_accepts(sender, st.item, receiver, tt.item, seen)
    if st.kind != "named" or tt.kind != "named":
        return st.kind == tt.kind or (st.kind, tt.kind) == ("int", "float") or (
            tt.kind == "object" and st.kind == "named" and isinstance(sender.get(st.name), Struct))
    if (st.name, tt.name) in seen:
        return True  # met again inside itself: assumed, as a decoder recursing would
    seen = seen | {(st.name, tt.name)}
    s_node, t_node = sender.get(st.name), receiver.get(tt.name)
    if isinstance(s_node, Struct) and isinstance(t_node, Struct):
        return accepts(sender, s_node, receiver, t_node, seen)
    if isinstance(s_node, Enum) and isinstance(t_node, Enum):
        return s_node.base == t_node.base and (t_node.open or (
            not s_node.open and {m.value for m in s_node.members} <= {m.value for m in t_node.members}))
    if isinstance(s_node, Union_) and isinstance(t_node, Union_):
        if repr(wire_shape(sender, st)) == repr(wire_shape(receiver, tt)):
            return True
        variants = [sender.get(v.type.name) for v in s_node.variants if v.type.kind == "named"]
        if len(variants) != len(s_node.variants) or (s_node.other and not t_node.other):
            return False
        return all(v is not None and all(r[0] != "rejects" for r in reads(sender, v, receiver, t_node, seen))
                   for v in variants)
    if isinstance(s_node, Struct) and isinstance(t_node, Union_):
        return all(r[0] != "rejects" for r in reads(sender, s_node, receiver, t_node, seen))
    return False


def accepts(sender: Mapping[str, Node], sent: Struct, receiver: Mapping[str, Node], target: Struct,
            seen: Pairs | None = None) -> bool:
    """Whether `target.from_dict` takes every object `sent` describes: each of its required keys is
    always sent, and each key both have holds a value the target's field takes (or the target
    replaces a bad one by its fallback). Keys the target does not know are ignored."""
    sent_fields = {f.wire: f for f in sent.fields}
    for f in target.fields:
        if sent.tag is not None and f.wire == sent.tag.wire:
            if not (f.default_on_error or takes_value(receiver, f.type, sent.tag.value)):
                return False
            continue
        sf = sent_fields.get(f.wire)
        if sf is None:
            if f.required:
                return False
            continue
        if f.required and not sf.required:
            return False
        if f.default_on_error:
            continue
        if sf.nullable and not f.nullable and f.type.kind not in ("null", "any", "nullable"):
            return False
        if not type_accepts(sender, sf.type, receiver, f.type, seen or set()):
            return False
    return True


def tag_values(nodes: Mapping[str, Node], sent: Struct, tag: str) -> tuple[str | None, ...]:
    """The values the key `tag` has on the objects `sent` describes (None: absent)."""
    if sent.tag is not None and sent.tag.wire == tag:
        return (sent.tag.value,)
    f = next((f for f in sent.fields if f.wire == tag), None)
    if f is None:
        return (None,)
    values = sent_values(nodes, f.type)
    if values is None:
        return (None,) if not f.required else ("",)  # some string the union cannot know in advance
    return (*values, *(() if f.required else (None,)))


Reading = tuple[Literal["variant", "default", "other", "rejects"], str]


def reads(sender: Mapping[str, Node], sent: Node, receiver: Mapping[str, Node], union: Union_,
          seen: Pairs | None = None) -> list[Reading]:
    """What the receiving union's decoder makes of the objects `sent` describes: one reading per tag
    value the sender may put on them."""
    if not isinstance(sent, Struct):
        return [("rejects", "not an object")]
    if not union.tag:
        for v in union.variants:
            node = receiver.get(v.type.name) if v.type.kind == "named" else None
            if isinstance(node, Struct) and accepts(sender, sent, receiver, node, seen or set()):
                return [("variant", node.name)]
            if v.type.kind in ("object", "any") or (v.type.kind == "map"):
                return [("variant", v.type.kind)]
        return [("rejects", "no variant takes it")]
    out: list[Reading] = []
    dispatch = {v.tag_value: v.type.name for v in union.variants if v.tag_value is not None}
    for value in tag_values(sender, sent, union.tag):
        if value is not None and value in dispatch:
            node = receiver.get(dispatch[value])
            ok = isinstance(node, Struct) and accepts(sender, sent, receiver, node, seen or set())
            out.append(("variant", dispatch[value]) if ok else ("rejects", f"tag {value!r} with another payload"))
        elif value is not None and union.other and not union.kept_other:
            out.append(("other", union.other))
        elif value is not None and union.kept_other and default_takes(receiver, union.name, sender, sent.name):
            out.append(("other", union.other))  # kept whole: the default variant takes it
        elif union.default:
            node = receiver.get(union.default)
            ok = isinstance(node, Struct) and accepts(sender, sent, receiver, node, seen or set())
            out.append(("default", union.default) if ok else ("rejects", "the default variant does not take it"))
        else:
            out.append(("rejects", "unknown tag" if value is not None else f"no `{union.tag}`"))
    return out
