"""CONNECTION_MEMBERS is read from acpgen/runtime/rpc.py and sides.py, not kept by hand."""

from __future__ import annotations

import importlib

from acpgen.ir.methods import CONNECTION_MEMBERS, runtime_class_members


def test_members_are_the_public_names_of_the_runtime_connection() -> None:
    rpc = importlib.import_module("generated.acp_v1.rpc")
    cls = rpc.Connection
    public = {n for n in vars(cls) if not n.startswith("_")}
    derived = runtime_class_members("rpc.py", "Connection")
    assert public <= derived  # every method and property the class defines
    # set in __init__, not on the class
    assert derived - public == {"limits", "check_capabilities", "peer_initialize", "own_initialize", "tracing"}
    sides = runtime_class_members("sides.py", "AgentSide") | runtime_class_members("sides.py", "ClientSide")
    assert sides == {"agent", "client"}  # the attributes each end adds in __init__
    assert derived | sides == CONNECTION_MEMBERS


def test_a_class_the_module_lacks_has_no_members() -> None:
    assert runtime_class_members("rpc.py", "NoSuchClass") == frozenset()
