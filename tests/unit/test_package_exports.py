"""PACKAGE_EXPORTS is derived from acpgen/runtime/__init__.py's export tables, the one statement
`__init__.py.j2` prints, and each runtime module's share is checked against its own `__all__`."""

from __future__ import annotations

import importlib

import pytest

import acpgen.runtime as runtime
from acpgen.ir.naming import PACKAGE_EXPORTS


def test_the_reserved_names_are_what_a_built_package_exports_besides_its_models() -> None:
    pkg = importlib.import_module("acp_v1")
    assert set(pkg.__all__) - set(pkg.models.__all__) == PACKAGE_EXPORTS == runtime.package_exports()


def test_a_runtime_module_share_is_read_from_its_source() -> None:
    assert runtime.module_names("remote") == ("RemoteAgentError", "connect_agent")  # its __all__
    assert "UNSET" in (runtime.module_names("_codec") or ())  # no __all__: what it defines
    assert runtime.module_names("connections") is None  # a template's module: checked on built packages


def test_a_name_the_runtime_module_does_not_export_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(runtime.LAZY_EXPORTS, "remote", ("RemoteAgentError", "connect_agent", "no_such_name"))
    with pytest.raises(RuntimeError, match=r"remote.py does not export \['no_such_name'\]"):
        runtime.package_exports()


def test_a_package_that_cannot_route_leaves_the_router_names_out() -> None:
    from acpgen.render.context import InitExports

    routed, plain = InitExports.of(True), InitExports.of(False)
    assert set(routed.all) - set(plain.all) == set(runtime.LAZY_EXPORTS[runtime.ROUTER])
    assert not any("from .router" in s for s in plain.lazy)
