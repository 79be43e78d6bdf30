"""Property-based round trips: for every `$defs` entry of every vendored schema (as the build
merges stable and unstable), instances generated from the schema itself must satisfy

    encode(decode(x)) == normalise(x)      (normalisations: tests/wire_semantics.py)

and the encoded value must validate against the same schema, and encode again to itself.

Instances come from hypothesis-jsonschema, each definition from its own shape with its parts
composed (tests/schema_strategies.py). The default run is derandomised with a few examples per
type; ACPGEN_LONG=1 runs many more with a random seed (ACPGEN_EXAMPLES=N sets the count).
"""

from __future__ import annotations

import functools
import importlib
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from acpgen.config import load_config
from acpgen.diagnostics import Diagnostics
from acpgen.load import load_schema
from tests.conftest import ROOT
from tests.schema_strategies import SchemaStrategies
from tests.wire_semantics import WireSemantics

LONG = os.environ.get("ACPGEN_LONG", "") not in ("", "0")
EXAMPLES = int(os.environ.get("ACPGEN_EXAMPLES", "300" if LONG else "4"))


def property_settings(examples: int = EXAMPLES) -> settings:
    return settings(
        max_examples=examples,
        derandomize=not LONG,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
        print_blob=LONG,
    )


@functools.cache
def targets() -> dict[str, Path | tuple[Path, Path]]:
    """Package -> the schema document the build generates it from (the unstable one when merged)."""
    out: dict[str, Any] = {}
    for t in load_config(ROOT / "pyproject.toml", Diagnostics()):
        out[t.package] = t
    return out


@functools.cache
def world(package: str) -> tuple[ModuleType, SchemaStrategies, WireSemantics]:
    t = targets()[package]
    loaded, reports = load_schema(t.schema, t.unstable if t.include_unstable else None, None,
                                  find_companion=t.find_unstable)
    assert loaded is not None, [d.render() for r in reports for d in r.items]
    strategies = SchemaStrategies(loaded.effective.document)
    return importlib.import_module(package), strategies, WireSemantics(strategies)


def cases() -> list[Any]:
    out = []
    for package in sorted(targets()):
        _, strategies, _ = world(package)
        out += [pytest.param(package, name, id=f"{package}-{name}") for name in sorted(strategies.defs)]
    return out


def test_every_definition_is_exercised() -> None:
    for package in targets():
        pkg, strategies, _ = world(package)
        assert set(strategies.defs) == set(pkg.TYPES), package


@pytest.mark.parametrize(("package", "def_name"), cases())
def test_generated_instances_round_trip(package: str, def_name: str) -> None:
    pkg, strategies, wire = world(package)
    validate = strategies.validator(def_name)

    @property_settings()
    @given(strategies.strategy(def_name))
    def round_trip(instance: Any) -> None:
        value = pkg.decode(def_name, instance)
        encoded = pkg.encode(value)
        expected = wire.normalise_def(def_name, instance)
        assert encoded == expected, json.dumps({"instance": instance, "encoded": encoded, "expected": expected},
                                               default=repr)[:4000]
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validate.iter_errors(encoded)]
        assert not errors, errors[:5]
        assert pkg.encode(pkg.decode(def_name, encoded)) == encoded

    round_trip()
