"""Realistic ACP messages (tests/fixtures/messages) decode and re-encode for every version.

Normalisation applied by the wire semantics, and the only difference allowed here:
"schema defaults materialised": an absent key whose property has a schema `default` comes back
present with that default. So the encoded value must contain the original (recursively), and
encoding is idempotent: decode(encode(x)) encodes to the same value again.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "messages"
PACKAGES = {"v1": "acp_v1", "v2": "acp_v2", "v0_4": "acp_v0_4"}


def cases() -> list[Any]:
    out = []
    for version, package in sorted(PACKAGES.items()):
        for path in sorted((FIXTURES / version).glob("*.json")):
            for index, instance in enumerate(json.loads(path.read_text())):
                out.append(pytest.param(package, path.stem, instance, id=f"{version}-{path.stem}-{index}"))
    return out


def contains(big: Any, small: Any, where: str = "") -> None:
    """`big` holds everything `small` does; extra object keys are allowed (materialised defaults)."""
    if isinstance(small, dict):
        assert isinstance(big, dict), where
        for key, value in small.items():
            assert key in big, f"{where}.{key} was dropped"
            contains(big[key], value, f"{where}.{key}")
    elif isinstance(small, list):
        assert isinstance(big, list) and len(big) == len(small), where
        for index, (b, s) in enumerate(zip(big, small, strict=False)):
            contains(b, s, f"{where}[{index}]")
    else:
        assert type(big) is type(small) and big == small, f"{where}: {big!r} != {small!r}"


@pytest.mark.parametrize(("package", "def_name", "instance"), cases())
def test_fixture_round_trip(package: str, def_name: str, instance: Any) -> None:
    pkg = importlib.import_module(package)
    value = pkg.decode(def_name, instance)
    assert isinstance(value, pkg.TYPES[def_name]) if isinstance(pkg.TYPES[def_name], type) else True
    encoded = pkg.encode(value)
    contains(encoded, instance)
    assert json.loads(json.dumps(encoded)) == encoded
    assert pkg.encode(pkg.decode(def_name, encoded)) == encoded


def test_every_method_has_a_fixture() -> None:
    for version, package in PACKAGES.items():
        pkg = importlib.import_module(package)
        names = {p.stem for p in (FIXTURES / version).glob("*.json")}
        for info in pkg.METHODS:
            assert info.params_def in names, (version, info.method)
            if info.result_def is not None:
                assert info.result_def in names, (version, info.method)
