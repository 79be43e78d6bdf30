"""What a type looks like on the wire, names aside: the one test of "same JSON" the diff uses."""

from __future__ import annotations

from collections.abc import Mapping

from acpgen.ir.model import Alias, Enum, Node, Struct, TypeRef, Union_


def wire_shape(nodes: Mapping[str, Node], t: TypeRef, seen: frozenset[str] = frozenset()) -> object:
    """What a type looks like on the wire, names aside: aliases resolved, structs as their fields,
    enums as their values, unions as their tag and variants. Two types with the same shape accept
    and produce the same JSON. A type met again inside itself compares by name."""
    c = t.constraints
    limits = (c.minimum, c.maximum, c.min_items, c.min_length)
    if t.kind != "named":
        return (t.kind, t.const, limits, wire_shape(nodes, t.item, seen) if t.item is not None else None)
    node = nodes.get(t.name)
    if node is None or t.name in seen:
        return ("ref", t.name)
    seen = seen | {t.name}
    if isinstance(node, Alias):
        return wire_shape(nodes, node.target, seen)
    if isinstance(node, Struct):
        tag = (node.tag.wire, node.tag.value) if node.tag else None
        fields = sorted((f.wire, f.required, f.nullable, repr(wire_shape(nodes, f.type, seen))) for f in node.fields)
        return ("struct", tag, tuple(fields))
    if isinstance(node, Enum):
        return ("enum", node.base, node.open, tuple(sorted(str(m.value) for m in node.members)))
    if isinstance(node, Union_):
        variants = sorted(repr(wire_shape(nodes, v.type, seen)) for v in node.variants)
        return ("union", node.tag, bool(node.other), tuple(variants))
    return ("ref", t.name)
