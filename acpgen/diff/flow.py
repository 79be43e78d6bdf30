"""Which way each type travels, from the method table (`x-side`) and the routing definitions."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from acpgen.diff.model import A2C, C2A, RECEIVERS, Who
from acpgen.ir.model import Alias, Node, Package, Struct, TypeRef, Union_

# Routing definitions name the side that *sends* what they route.
ROUTING_SENDERS: dict[str, tuple[str, ...]] = {
    "ClientRequest": (C2A,), "ClientNotification": (C2A,), "ClientResponse": (C2A,),
    "AgentRequest": (A2C,), "AgentNotification": (A2C,), "AgentResponse": (A2C,),
}


def type_refs(t: TypeRef | None) -> Iterator[str]:
    while t is not None:
        if t.kind == "named":
            yield t.name
        t = t.item


def node_refs(node: Node) -> Iterator[str]:
    if isinstance(node, Struct):
        for f in node.fields:
            yield from type_refs(f.type)
    elif isinstance(node, Union_):
        for v in node.variants:
            yield from type_refs(v.type)
    elif isinstance(node, Alias):
        yield from type_refs(node.target)


def method_flow(side: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(params directions, result directions) of a method handled by `side`."""
    if side == "agent":
        return (C2A,), (A2C,)
    if side == "client":
        return (A2C,), (C2A,)
    return (C2A, A2C), (C2A, A2C)


def payload_defs(node: Node, defs: dict[str, str]) -> Iterator[str]:
    """Definitions whose properties a struct took over through `allOf` (a variant's payload):
    they travel wherever the struct does."""
    if not isinstance(node, Struct):
        return
    for f in node.fields:
        parts = f.pointer.split("/")
        if len(parts) > 3 and parts[1] in ("$defs", "definitions"):
            key = parts[2].replace("~1", "/").replace("~0", "~")
            if key in defs and defs[key] != node.name:
                yield defs[key]


def directions(package: Package) -> dict[str, set[str]]:
    """Python type name -> the directions it travels in, from the method table and routing defs."""
    defs = {d: t.name for d, t in package.defs if t.kind == "named"}
    nodes = {n.name: n for n in package.nodes}
    out: dict[str, set[str]] = {}
    pending: list[tuple[str, str]] = []
    for m in package.methods:
        params_dirs, result_dirs = method_flow(m.side)
        pending += [(defs[m.params], d) for d in params_dirs if m.params in defs]
        if m.result is not None and m.result in defs:
            pending += [(defs[m.result], d) for d in result_dirs]
    for def_name, dirs in sorted(ROUTING_SENDERS.items()):
        if def_name in defs:
            pending += [(defs[def_name], d) for d in dirs]
    while pending:
        name, direction = pending.pop()
        seen = out.setdefault(name, set())
        if direction in seen or name not in nodes:
            continue
        seen.add(direction)
        node = nodes[name]
        pending += [(ref, direction) for ref in (*node_refs(node), *payload_defs(node, defs))]
    return out


def who_breaks(dirs: Iterable[str], effects: Iterable[str]) -> Who:
    broken: set[str] = set()
    for direction in dirs:
        sender, receiver = ("clients", "agents") if direction == C2A else ("agents", "clients")
        for effect in effects:
            broken.add(receiver if effect == RECEIVERS else sender)
    if len(broken) == 2:
        return "both"
    if broken:
        return "old clients" if "clients" in broken else "old agents"
    return "nobody"


