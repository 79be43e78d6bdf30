"""The runtime every generated package carries: ordinary Python, linted, typed and tested here.

A build copies each module below the provenance header into the package (`acpgen.render.OUTPUTS`
says which), so the output stays one self-contained folder with no dependency on acpgen. The
modules import their schema-shaped neighbours (`.connections`, `.interfaces`, `.methods`,
`._protocol`) by relative import: they run only inside a generated package, never from here.

`EAGER_EXPORTS` and `LAZY_EXPORTS` are the one statement of what a package's `__init__` re-exports
from each of its modules: `templates/__init__.py.j2` prints its imports, its lazy table and its
`__all__` from them, and `acpgen.ir.naming.PACKAGE_EXPORTS` (the names a model cannot take at
package level) is derived from them. A name of a runtime module must be in that module's
`__all__` (`package_exports` checks, reading the source; tests check the generated modules').
"""

from __future__ import annotations

from pathlib import Path

# Imported with the package (codecs and method tables: no asyncio).
EAGER_EXPORTS: dict[str, tuple[str, ...]] = {
    "_codec": (
        "UNSET",
        "JsonValue",
        "SkipHook",
        "Unset",
        "ValidationError",
        "encode_value",
        "replace",
        "set_skip_hook",
    ),
    "_registry": ("DECODERS", "TYPES", "UNSTABLE_TYPES", "decode", "encode"),
    "methods": ("AGENT_METHODS", "CLIENT_METHODS", "METHODS", "MethodInfo"),
}
# Imported on first use (the runtime: asyncio and all). `router` only where the package can route.
LAZY_EXPORTS: dict[str, tuple[str, ...]] = {
    "asgi": ("AcpApp", "Limits", "bearer_token", "serve_agent"),
    "connections": (
        "SUPPORTED_PROTOCOL_VERSIONS",
        "AgentSideConnection",
        "ClientSideConnection",
        "ProtocolVersionError",
        "check_protocol_version",
        "memory_pair",
        "negotiate_protocol_version",
        "run_agent",
        "spawn_agent",
    ),
    "interfaces": ("Agent", "Client", "UnstableAgent", "UnstableClient"),
    "remote": ("RemoteAgentError", "connect_agent"),
    "router": (
        "AgentRouter",
        "agent_route",
        "client_route",
        "run_router",
        "spawn_agent_negotiated",
    ),
    "rpc": (
        "ConnectionClosedError",
        "ConnectionLimits",
        "MessageTooLargeError",
        "ProtocolError",
        "RequestError",
    ),
}
ROUTER = "router"
# Defined by `__init__` itself: the provenance of the build.
PROVENANCE_EXPORTS = ("ACPGEN_VERSION", "PROTOCOL_VERSION", "SCHEMA_SOURCES", "SCHEMA_TITLE")


def module_names(module: str) -> tuple[str, ...] | None:
    """What acpgen/runtime/MODULE.py exports, read from its source: its `__all__`, or (a module
    without one) the names it defines at top level. None: no such module (a generated one)."""
    import ast  # the tests ask; a build does not

    path = Path(__file__).resolve().parent / f"{module}.py"
    if not path.is_file():
        return None
    defined: list[str] = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.append(node.name)
            continue
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if (
            "__all__" in names
            and isinstance(node, (ast.Assign, ast.AnnAssign))
            and node.value is not None
        ):
            return tuple(ast.literal_eval(node.value))
        defined += names
    return tuple(defined)


def package_exports(check: bool = True) -> frozenset[str]:
    """Every name a generated package exports besides its models; each runtime module's share is
    checked against that module's own `__all__` (reading the sources: the tests check, a build
    does not pay for it)."""
    for module, names in {**EAGER_EXPORTS, **LAZY_EXPORTS}.items() if check else ():
        stated = module_names(module)
        missing = sorted(set(names) - set(stated or ()))
        if stated is not None and missing:
            raise RuntimeError(
                f"acpgen/runtime/{module}.py does not export {missing} (its __all__)"
            )
    return frozenset(
        n for names in (*EAGER_EXPORTS.values(), *LAZY_EXPORTS.values()) for n in names
    ) | frozenset(PROVENANCE_EXPORTS)
