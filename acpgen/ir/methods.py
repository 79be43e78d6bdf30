"""The method table: `x-method`/`x-side` say which method a type belongs to and who handles it;
the routing definitions say whether it is a request, a notification or a result."""

from __future__ import annotations

import ast
import dataclasses
import keyword
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from acpgen.diagnostics import Diagnostics, pointer_join
from acpgen.ir.model import Method
from acpgen.ir.naming import handler_name

# Early releases (0.4.x) route with plain `anyOf` lists under these names; later ones wrap each
# payload in an envelope object with `method` + `params` (or `result`), found structurally.
ROUTING_DEFS = {
    "ClientRequest": "request", "AgentRequest": "request", "ProxyRequest": "request",
    "ClientNotification": "notification", "AgentNotification": "notification",
    "ProxyNotification": "notification", "ProtocolLevelNotification": "notification",
    "ClientResponse": "result", "AgentResponse": "result", "ProxyResponse": "result",
}


def local_refs(node: Any, prefix: str) -> Iterator[str]:
    """`$defs` keys referenced inside anyOf/oneOf/allOf nesting (not through the references)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(prefix):
            yield ref[len(prefix):]
        for key in ("anyOf", "oneOf", "allOf"):
            for member in node.get(key, []) if isinstance(node.get(key), list) else []:
                yield from local_refs(member, prefix)


def envelopes(s: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(s, dict):
        return
    yield s
    for key in ("anyOf", "oneOf"):
        for alt in s.get(key, []) if isinstance(s.get(key), list) else []:
            if isinstance(alt, dict):
                yield alt


def routes(key: str, s: Any, prefix: str) -> Iterator[tuple[str, str]]:
    """(kind, payload def) pairs that one definition routes."""
    found = False
    for env in envelopes(s):
        props = env.get("properties")
        if not isinstance(props, dict):
            continue
        if "method" in props and "params" in props:
            found = True
            kind = "request" if "id" in props else "notification"
            for ref in local_refs(props["params"], prefix):
                yield kind, ref
        if "result" in props:
            found = True
            for ref in local_refs(props["result"], prefix):
                yield "result", ref
    if not found and key in ROUTING_DEFS:
        for ref in local_refs(s, prefix):
            yield ROUTING_DEFS[key], ref


def collect_methods(
    document: Mapping[str, Any],
    defs_key: str,
    diags: Diagnostics,
    stable_methods: set[tuple[str, bool]] | None = None,
    meta: Mapping[str, Any] | None = None,
    meta_file: str = "",
    meta_strict: bool = True,
) -> list[Method]:
    defs = document.get(defs_key, {})
    prefix = f"#/{defs_key}/"
    tagged = {
        key: (s["x-method"], str(s.get("x-side", "")))
        for key, s in defs.items()
        if isinstance(s, dict) and isinstance(s.get("x-method"), str)
    }
    kinds: dict[str, set[str]] = {}
    sources = [("", document), *((key, defs[key]) for key in sorted(defs))]
    for key, schema in sources:
        for kind, ref in routes(key, schema, prefix):
            if ref in tagged:
                kinds.setdefault(ref, set()).add(kind)
    by_method: dict[tuple[str, bool], dict[str, str]] = {}
    results: dict[str, str] = {}

    def claim(table: dict[str, str], slot: str, key: str, what: str, wire: str) -> None:
        """Two definitions routed as the same method's params (or result): one would be dropped."""
        other = table.get(slot)
        if other is not None and other != key:
            first, second = sorted((other, key))
            diags.error(
                "duplicate-method", pointer_join("", defs_key, second),
                f"{second} and {first} ({pointer_join('', defs_key, first)}) are both the {what} of method "
                f"{wire!r}: one method has one {what} type", "fix the x-method of one of them")
            return
        table[slot] = key

    for key, (wire, side) in tagged.items():
        if "x-side" in defs[key] and side not in KNOWN_SIDES:
            diags.warning(
                "unknown-side", pointer_join("", defs_key, key, "x-side"),
                f"x-side {side!r} is none of {', '.join(sorted(KNOWN_SIDES))}: no handler class gets this method",
                "use one of the known values")
        found = kinds.get(key, set())
        if "result" in found:
            claim(results, wire, key, "result", wire)
        for kind in sorted(found - {"result"}):
            claim(by_method.setdefault((wire, kind == "notification"), {}), "params", key,
                  "notification params" if kind == "notification" else "request params", wire)
        if not found:
            diags.warning("unrouted-method-type", pointer_join("", defs_key, key),
                          f"{key} carries x-method {wire!r} but no routing definition mentions it",
                          "it is kept as a type; the method table does not list it")
    methods: list[Method] = []
    for (wire, notification), entry in sorted(by_method.items()):
        params = entry["params"]
        side = tagged[params][1]
        result = None if notification else results.get(wire)
        if not notification and result is None:
            diags.warning("no-result-type", pointer_join("", defs_key, params),
                          f"request {wire!r} has no result type in the routing definitions",
                          "its result is passed through as raw JSON")
        unstable = stable_methods is not None and (wire, notification) not in stable_methods
        description = defs[params].get("description", "") if isinstance(defs[params], dict) else ""
        methods.append(Method(wire, handler_name(wire), side, params, result, notification, unstable, description))
    methods = unique_handlers(methods, defs_key, diags)
    if meta is not None:
        meta_diags = Diagnostics(meta_file or diags.file)
        check_meta(meta, methods, meta_diags)
        if not meta_strict:  # a meta.json found beside the schema (early releases list methods
            # their schema does not annotate): reported, not refused; --meta makes it an error
            meta_diags.items = [dataclasses.replace(d, level="warning") for d in meta_diags.items]
        diags.items.extend(meta_diags.items)  # named after the meta file, whose pointers they hold
    return methods


# The values of `x-side` the releases use (agent, client and both get handlers, protocol both
# classes, proxy none).
KNOWN_SIDES = frozenset({"agent", "client", "both", "protocol", "proxy"})

def runtime_class_members(module: str, cls: str) -> frozenset[str]:
    """The public names a class of acpgen/runtime/MODULE defines (methods, properties, class-level
    annotations, `self.x = ...` in `__init__`), read with ast: the runtime is never imported here.
    The reference for `class_members`, which every build uses (tests/unit/test_connection_members.py)."""
    source = (Path(__file__).resolve().parent.parent / "runtime" / module).read_text(encoding="utf-8")
    names: set[str] = set()
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.ClassDef) and node.name == cls):
            continue
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(item.name)
                if item.name == "__init__":
                    names.update(t.attr for sub in ast.walk(item) if isinstance(sub, (ast.Assign, ast.AnnAssign))
                                 for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target])
                                 if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                 and t.value.id == "self")
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                names.add(item.target.id)
    return frozenset(n for n in names if not n.startswith("_"))


# The runtime's layout, which `ruff format` fixes: a class body is indented four spaces, its
# methods' bodies eight, and a docstring's lines are inside a statement that opens with quotes.
_MEMBER = re.compile(r"^    (?:async[ \t]+)?def[ \t]+(\w+)|^    (\w+)[ \t]*:(?!=)|^ {8,}self\.(\w+)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)


def class_members(module: str, cls: str) -> frozenset[str]:
    """`runtime_class_members` without parsing the module (a quarter of acpgen's import time): the
    class body is the lines after `class CLS` up to the next unindented line, with its strings
    blanked; `self.x` counts only inside `__init__`. tests/unit/test_connection_members.py checks
    that the two agree on every class of the runtime."""
    source = (Path(__file__).resolve().parent.parent / "runtime" / module).read_text(encoding="utf-8")
    start = re.search(rf"^class {re.escape(cls)}\b[^\n]*\n", source, re.M)
    if start is None:
        return frozenset()
    end = re.compile(r"^[^\s#]", re.M).search(source, start.end())
    body = re.sub(r'"""(?:[^"\\]|\\.|"(?!""))*"""', '""', source[start.end(): end.start() if end else len(source)])
    names: set[str] = set()
    in_init = False
    for m in _MEMBER.finditer(body):
        if m.group(1) is not None:
            names.add(m.group(1))
            in_init = m.group(1) == "__init__"
        elif m.group(2) is not None:
            in_init = False
            if not keyword.iskeyword(m.group(2)):  # `else:` of a class-level `if`
                names.add(m.group(2))
        elif in_init:
            names.add(m.group(3))
    return frozenset(n for n in names if not n.startswith("_"))


# What the generated connection and interface classes define besides the handlers and proxies: a
# handler or proxy of that name would override them. Derived from the runtime the proxies subclass:
# acpgen/runtime/rpc.py's `Connection` and sides.py's `AgentSide` / `ClientSide` (`agent`, `client`).
# tests/corpus/test_schema_safety.py checks this set against a built package.
CONNECTION_MEMBERS = (class_members("rpc.py", "Connection") | class_members("sides.py", "AgentSide")
                      | class_members("sides.py", "ClientSide"))


def handling_classes(side: str) -> tuple[str, ...]:
    """The interface (and connection) classes a method of this `x-side` gets a handler on: the
    agent's for agent, both and protocol methods, the client's for client, both and protocol ones."""
    if side in ("both", "protocol"):
        return ("agent", "client")
    return (side,) if side in ("agent", "client") else ()  # other sides (proxy) get no handler class


def unique_handlers(methods: list[Method], defs_key: str, diags: Diagnostics) -> list[Method]:
    """Handler names that neither shadow the connection's own members (a trailing `_`, with a
    warning) nor each other (`a/b` and `a_b`: the later in wire order gets `_2`, with a warning
    naming both)."""
    taken: dict[str, dict[str, Method]] = {}  # handling class -> handler name -> method

    def holder(name: str, groups: tuple[str, ...]) -> Method | None:
        return next((taken[g][name] for g in groups if name in taken.get(g, {})), None)

    out: list[Method] = []
    for m in methods:
        groups = handling_classes(m.side)
        name = m.handler + "_" if m.handler in CONNECTION_MEMBERS else m.handler
        if name != m.handler and not any(o.wire == m.wire for o in out):
            diags.warning(
                "handler-renamed", pointer_join("", defs_key, m.params),
                f"method {m.wire!r} maps to the handler name {m.handler!r}, which the connection classes use "
                f"themselves; its handler and proxy are named {name!r}",
                "implement that name on your Agent / Client; rename the wire method if you control the schema",
            )
        other = holder(name, groups)
        if other is not None:
            number = 2
            while holder(f"{name}_{number}", groups) is not None:
                number += 1
            diags.warning(
                "handler-suffixed", pointer_join("", defs_key, m.params),
                f"methods {other.wire!r} ({pointer_join('', defs_key, other.params)}) and {m.wire!r} both map to "
                f"the handler name {name!r}; {m.wire!r} is handled by {name}_{number}",
                "rename one of the wire methods if you control the schema",
            )
            name = f"{name}_{number}"
        for g in groups:
            taken.setdefault(g, {})[name] = m
        out.append(dataclasses.replace(m, handler=name) if name != m.handler else m)
    return out


def check_meta(meta: Mapping[str, Any], methods: list[Method], diags: Diagnostics) -> None:
    """A user-supplied meta.json must agree with what the schema says."""
    known = {m.wire for m in methods}
    for table in ("agentMethods", "clientMethods", "protocolMethods"):
        listed = meta.get(table, {})
        if not isinstance(listed, dict):
            diags.error("bad-meta", f"/{table}", f"{table} must be an object of name -> wire method")
            continue
        for key, wire in sorted(listed.items()):
            if wire not in known:
                diags.error("meta-unknown-method", f"/{table}/{key}",
                            f"meta lists method {wire!r} that no x-method in the schema defines",
                            "use the meta.json published with the same schema release")
