"""Invalid messages: valid instances (generated as in test_property.py) mutated at a random
location (wrong type, null, bool for int, huge int, very long string, deep nesting, unknown or
non-string key, missing required key, unknown tag or enum value) must either decode, where the
wire semantics say so (the mutant is still valid, or a default-on-error / skip-invalid-items /
default-on-null property absorbs it), or raise the package's ValidationError whose path points at
the mutated location (or at the untagged union that contains it). Never another exception.
"""

from __future__ import annotations

import copy
import os
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.corpus.test_property import LONG, property_settings, targets, world
from tests.wire_semantics import Oracle, Path_, dotted

MUTANTS = int(os.environ.get("ACPGEN_MUTANTS", "3000" if LONG else "150"))
DEEP = 2000
FORBIDDEN = (KeyError, TypeError, AttributeError, RecursionError, IndexError)


def locations(value: Any, path: Path_ = ()) -> list[Path_]:
    out = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            out += locations(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += locations(item, (*path, index))
    return out


def deep(depth: int, leaf: Any = 0) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def replacements(value: Any) -> list[tuple[str, Any]]:
    """(mutation, new value) pairs that apply to `value`."""
    out: list[tuple[str, Any]] = [
        (f"wrong type {type(v).__name__}", v) for v in (0, "x", True, None, [], {}, 1.5)
        if type(v) is not type(value)
    ]
    out += [("deep nesting", deep(DEEP)), ("deep object", {"a": deep(DEEP)})]
    if isinstance(value, bool) or value is None:
        return out
    if isinstance(value, int):
        out += [("bool for int", True), ("huge int", 2**80), ("huge negative int", -(2**80)), ("float for int", float(value))]
    if isinstance(value, str):
        out += [("unknown tag or enum value", "__acpgen_unknown__"), ("very long string", "x" * 1_000_000),
                ("empty string", "")]
    return out


def mutate(data: st.DataObject, instance: Any) -> tuple[str, Any, Path_, bool]:
    """(description, mutant, mutated path, whether a key was removed)."""
    path = data.draw(st.sampled_from(locations(instance)), label="location")
    mutant = copy.deepcopy(instance)
    parent: Any = None
    target = mutant
    for segment in path:
        parent, target = target, target[segment]
    choices: list[tuple[str, Any]] = replacements(target)
    if isinstance(target, dict):
        choices += [("unknown key", "__unknown_key__"), ("non-string key", "__int_key__")]
        if target:
            choices += [("missing key", "__missing__")]
    # Draw the mutation's name only: hypothesis keeps drawn values for its report, and a value
    # nested 2,000 deep is too deep for repr().
    kind = data.draw(st.sampled_from([k for k, _ in choices]), label="mutation")
    new = dict(choices)[kind]
    if new == "__unknown_key__":
        target["__acpgen_unknown_key__"] = 1
        return kind, mutant, path, False
    if new == "__int_key__":
        target[1] = "x"
        return kind, mutant, path, False
    if new == "__missing__":
        key = data.draw(st.sampled_from(sorted(target)), label="removed key")
        del target[key]
        return f"missing key {key!r}", mutant, (*path, key), True
    if parent is None:
        return kind, new, path, False
    parent[path[-1]] = new
    return kind, mutant, path, False


@pytest.mark.parametrize("package", sorted(targets()))
def test_mutated_messages_decode_or_fail_with_a_path(package: str) -> None:
    pkg, strategies, _ = world(package)
    oracle = Oracle(strategies)
    names = sorted(strategies.defs)

    @property_settings(MUTANTS)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(names), label="definition")
        instance = data.draw(strategies.strategy(name), label="instance")
        kind, mutant, path, removed = mutate(data, instance)
        try:
            valid: bool | None = oracle.validator(name).is_valid(mutant)
        except RecursionError:
            valid = None  # too deep for jsonschema itself; the decoder must still not crash
        frames = oracle.trail(name, instance, path)
        lenient = oracle.lenient(frames, value_is_null=not removed and path_value(mutant, path) is None,
                                 missing_key=removed)
        where = f"{kind} at {dotted(path) or '<root>'} of {name}"
        try:
            pkg.decode(name, mutant)
        except pkg.ValidationError as error:
            assert valid is not True, f"{where}: a valid message was rejected: {error}"
            assert not lenient, f"{where}: should have been absorbed (default-on-error / skip / null default): {error}"
            expected = dotted(oracle.error_path(frames, path))
            if isinstance(path_value(mutant, path) if not removed else None, dict) and error.message == "required key is missing":
                # An object put where another object belongs lacks that object's required keys.
                key = error.path[len(expected) + 1 if expected else 0:]
                if error.path == (f"{expected}.{key}" if expected else key) and key and not set(key) & set(".["):
                    expected = error.path
            if kind.startswith("deep") and error.path.startswith(expected):
                expected = error.path  # the nested value fails somewhere inside itself
            assert error.path == expected, f"{where}: error path {error.path!r}, expected {expected!r} ({error})"
        except FORBIDDEN as error:
            raise AssertionError(f"{where}: {type(error).__name__} escaped the decoder: {error}") from error
        else:
            assert valid is not False or lenient, f"{where}: an invalid message was accepted"

    check()


def path_value(value: Any, path: Path_) -> Any:
    for segment in path:
        value = value[segment]
    return value
