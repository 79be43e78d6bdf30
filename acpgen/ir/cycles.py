"""Types no finite value can instantiate: a chain of required, non-nullable, non-list/map
references (or aliases) that comes back to where it started.

Recursion through an optional, nullable, list or map field is fine (a tree of nodes); recursion
through required fields is not: decoding such a type can never succeed, and the generated
constructor can never be called. Instantiability is a least fixpoint (a struct needs all its
required references, a union any one variant, an alias its target); each cycle among the types
left over is reported once, with the pointers of the references that form it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from acpgen.diagnostics import Diagnostics
from acpgen.ir.model import Alias, Enum, Node, Struct, Union_

Edge = tuple[str, str]  # (target node name, JSON pointer of the reference)


def required_refs(node: Node) -> tuple[list[Edge], bool]:
    """The references a value of `node` must contain, and whether it needs all (True) or any."""
    if isinstance(node, Struct):
        if node.other_of is not None:
            return [], True
        return [(f.type.name, f.pointer) for f in node.fields
                if f.required and not f.nullable and f.type.kind == "named"], True
    if isinstance(node, Alias):
        return ([(node.target.name, node.pointer)] if node.target.kind == "named" else []), True
    if isinstance(node, Union_):
        refs = [(v.type.name, node.pointer) for v in node.variants]
        if any(v.type.kind != "named" for v in node.variants) or node.other:
            return [], True  # a scalar, list or raw fallback variant always exists
        return refs, False
    assert isinstance(node, Enum)
    return [], True


def uninstantiable(nodes: Mapping[str, Node]) -> set[str]:
    edges = {name: required_refs(node) for name, node in nodes.items()}
    done: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, (refs, needs_all) in edges.items():
            if name in done:
                continue
            targets = [t for t, _ in refs if t in nodes]
            ok = all(t in done for t in targets) if needs_all else any(t in done for t in targets)
            if ok:
                done.add(name)
                changed = True
    return set(nodes) - done


def cycle_from(name: str, nodes: Mapping[str, Node], stuck: set[str], path: list[tuple[str, str]],
               on_path: dict[str, int], visited: set[str]) -> list[tuple[str, str]] | None:
    """Depth-first along required references among `stuck` types until one comes back."""
    on_path[name] = len(path)
    visited.add(name)
    for target, pointer in required_refs(nodes[name])[0]:
        if target not in stuck:
            continue
        path.append((name, pointer))
        if target in on_path:
            return path[on_path[target]:]
        if target not in visited:
            found = cycle_from(target, nodes, stuck, path, on_path, visited)
            if found is not None:
                return found
        path.pop()
    del on_path[name]
    return None


def find_cycles(nodes: Mapping[str, Node], stuck: set[str]) -> Iterable[list[tuple[str, str]]]:
    """Cycles among `stuck` types along their required references, each as [(type, pointer), ...]."""
    reported: set[frozenset[str]] = set()
    for start in sorted(stuck):
        cycle = cycle_from(start, nodes, stuck, [], {}, set())
        if cycle is not None and frozenset(n for n, _ in cycle) not in reported:
            reported.add(frozenset(n for n, _ in cycle))
            yield cycle


def check_required_cycles(nodes: Mapping[str, Node], diags: Diagnostics) -> None:
    stuck = uninstantiable(nodes)
    for cycle in find_cycles(nodes, stuck):
        names = [n for n, _ in cycle] + [cycle[0][0]]
        diags.error(
            "required-cycle", cycle[0][1],
            f"{' -> '.join(names)}: {names[0]} requires itself through "
            f"{' -> '.join(p for _, p in cycle)}, so no finite value of it exists",
            "make one of these references optional (not in `required`), nullable, or an array",
        )
