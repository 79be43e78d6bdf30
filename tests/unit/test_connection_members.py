"""CONNECTION_MEMBERS is read from acpgen/runtime/rpc.py and sides.py, not kept by hand."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import acpgen.runtime
from acpgen.ir.methods import CONNECTION_MEMBERS, class_members, runtime_class_members


def test_members_are_the_public_names_of_the_runtime_connection() -> None:
    rpc = importlib.import_module("generated.acp_v1.rpc")
    cls = rpc.Connection
    public = {n for n in vars(cls) if not n.startswith("_")}
    derived = runtime_class_members("rpc.py", "Connection")
    assert public <= derived  # every method and property the class defines
    # set in __init__, not on the class
    assert derived - public == {"limits", "check_capabilities", "peer_initialize", "own_initialize", "tracing",
                                "withdraw_on_cancel"}
    sides = runtime_class_members("sides.py", "AgentSide") | runtime_class_members("sides.py", "ClientSide")
    assert sides == {"agent", "client"}  # the attributes each end adds in __init__
    assert derived | sides == CONNECTION_MEMBERS


def test_a_class_the_module_lacks_has_no_members() -> None:
    assert runtime_class_members("rpc.py", "NoSuchClass") == frozenset()


def test_the_fast_reading_agrees_with_the_ast_on_every_runtime_class() -> None:
    """Builds use `class_members` (no parse); `runtime_class_members` (ast) is the reference."""
    runtime = Path(acpgen.runtime.__file__).parent
    classes = [(path.name, node.name) for path in sorted(runtime.glob("*.py"))
               for node in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(node, ast.ClassDef)]
    assert len(classes) > 20
    for module, cls in classes:
        assert class_members(module, cls) == runtime_class_members(module, cls), (module, cls)
    assert class_members("rpc.py", "NoSuchClass") == frozenset()
