"""acpgen/runtime/_tables.py straight from acpgen: method tables, the `$defs` lookup, lazy attributes."""

from __future__ import annotations

import sys
import types

import pytest

from acpgen.runtime._tables import MethodInfo, decode_def, lazy_attribute, method_table


def info(method: str, side: str) -> MethodInfo:
    return MethodInfo(method=method, side=side, params=object, params_def="P", result=None, result_def=None,
                      handler=method.replace("/", "_"), notification=True, unstable=False,
                      decode_params=lambda data: data, decode_result=None, empty_result=False)


def test_a_side_table_holds_the_methods_of_its_sides_and_is_read_only() -> None:
    methods = [info("a/x", "agent"), info("c/y", "client"), info("$/z", "protocol")]
    table = method_table(methods, ("agent", "protocol"))
    assert list(table) == ["a/x", "$/z"]
    with pytest.raises(TypeError):
        table["c/y"] = methods[1]  # type: ignore[index]


def test_decode_def_names_an_unknown_definition() -> None:
    assert decode_def({"N": int}, "N", "3") == 3
    with pytest.raises(KeyError, match="no definition named 'M'"):
        decode_def({"N": int}, "M", 1)


def test_lazy_attribute_imports_once_and_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    package = types.ModuleType("lazy_pkg")
    package.__path__ = []
    sub = types.ModuleType("lazy_pkg.sub")
    sub.thing = object()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "lazy_pkg", package)
    monkeypatch.setitem(sys.modules, "lazy_pkg.sub", sub)
    namespace = vars(package)
    assert lazy_attribute(namespace, {"thing": "sub"}, "thing") is sub.thing  # type: ignore[attr-defined]
    assert namespace["thing"] is sub.thing  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="module 'lazy_pkg' has no attribute 'other'"):
        lazy_attribute(namespace, {"thing": "sub"}, "other")
